//! Python's numeric tower, reduced to what the calculator needs: exact integers (machine word
//! fast path, bounded big integers beyond it) and IEEE doubles, with CPython's rules for mixing
//! them, its signs for `//` and `%`, its rounding, and its float repr.
//!
//! Where CPython would quietly produce `inf`/`nan`, or an integer whose size is only bounded by
//! memory, we return an error instead: the calculator answers a model, and neither is an answer.

use std::cmp::Ordering;
use std::fmt::Write;
use std::sync::OnceLock;

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{FromPrimitive, One, Signed, ToPrimitive, Zero};

/// Largest number of decimal digits an integer result may have.
pub const MAX_INT_DIGITS: usize = 1000;

/// A calculator value. `Big` only ever holds integers that do not fit an `i64`, so equal values
/// have one representation and the fast path is taken whenever possible.
#[derive(Clone, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    Big(Box<BigInt>),
    Float(f64),
}

/// Why an arithmetic operation has no (acceptable) result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathError {
    DivisionByZero,
    /// Argument outside the function's domain (`sqrt(-1)`, `log(0)`).
    Domain,
    /// A float result (or an integer converted to float) beyond the double range.
    Overflow,
    /// An integer result with more than [`MAX_INT_DIGITS`] digits.
    TooLarge,
    /// A negative number raised to a fractional power: Python gives a complex number.
    Complex,
    /// `round(x, n)` with a non-integer `n`.
    NotInteger,
}

pub(super) type MathResult = Result<Number, MathError>;

fn ten_pow_limit() -> &'static BigUint {
    static LIMIT: OnceLock<BigUint> = OnceLock::new();
    LIMIT.get_or_init(|| num_traits::pow(BigUint::from(10u32), MAX_INT_DIGITS))
}

/// Bit length above which an integer certainly has more than MAX_INT_DIGITS digits
/// (10^1000 < 2^3322); at or below 3321 bits it certainly has at most that many.
const MAX_INT_BITS: u64 = 3322;

pub(super) fn normalize(b: BigInt) -> MathResult {
    if let Some(i) = b.to_i64() {
        return Ok(Number::Int(i));
    }
    let bits = b.bits();
    if bits > MAX_INT_BITS + 1 || (bits >= MAX_INT_BITS && b.magnitude() >= ten_pow_limit()) {
        return Err(MathError::TooLarge);
    }
    Ok(Number::Big(Box::new(b)))
}

impl Number {
    pub fn from_big(b: BigInt) -> MathResult {
        normalize(b)
    }

    fn is_int(&self) -> bool {
        !matches!(self, Number::Float(_))
    }

    pub(super) fn to_big(&self) -> BigInt {
        match self {
            Number::Int(i) => BigInt::from(*i),
            Number::Big(b) => (**b).clone(),
            Number::Float(_) => unreachable_float(),
        }
    }

    fn bits(&self) -> u64 {
        match self {
            Number::Int(i) => 64 - i.unsigned_abs().leading_zeros() as u64,
            Number::Big(b) => b.bits(),
            Number::Float(_) => 0,
        }
    }

    /// The value as a double, rounded half-to-even like CPython's `float(int)`.
    pub fn to_f64(&self) -> Result<f64, MathError> {
        match self {
            Number::Int(i) => Ok(*i as f64),
            Number::Big(b) => {
                // Doubles end below 2^1024; anything longer cannot round into range.
                if b.bits() > 1024 {
                    return Err(MathError::Overflow);
                }
                let v = ratio_to_f64(b.magnitude(), &BigUint::one())?;
                Ok(if b.sign() == Sign::Minus { -v } else { v })
            }
            Number::Float(f) => Ok(*f),
        }
    }

    /// `str(value)` in Python.
    pub fn render(&self) -> String {
        match self {
            Number::Int(i) => i.to_string(),
            Number::Big(b) => b.to_string(),
            Number::Float(f) => float_repr(*f),
        }
    }

    /// The value as JSON: a number where JSON can carry it exactly, else the decimal string.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Number::Int(i) => serde_json::Value::from(*i),
            Number::Big(b) => match b.to_u64() {
                Some(u) => serde_json::Value::from(u),
                None => serde_json::Value::String(b.to_string()),
            },
            Number::Float(f) => serde_json::Value::from(*f),
        }
    }
}

// Floats are dispatched before any integer-only helper is reached; keeping the arm total avoids
// a panic path in release builds.
fn unreachable_float() -> BigInt {
    debug_assert!(false, "integer helper called with a float");
    BigInt::zero()
}

pub(super) fn float(x: f64) -> MathResult {
    if x.is_finite() {
        Ok(Number::Float(x))
    } else {
        Err(MathError::Overflow)
    }
}

fn pow2(w: i64) -> f64 {
    if w >= -1022 {
        f64::from_bits(((w + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (w + 1074))
    }
}

/// `n / d` correctly rounded (half to even) to a double, subnormals included.
/// This is what CPython's int true division and int-to-float conversion produce.
pub fn ratio_to_f64(n: &BigUint, d: &BigUint) -> Result<f64, MathError> {
    if d.is_zero() {
        return Err(MathError::DivisionByZero);
    }
    if n.is_zero() {
        return Ok(0.0);
    }
    // Scale so the integer quotient has 55 or 56 bits: enough for 53 bits plus a rounding bit,
    // with the remainder acting as the sticky bit.
    let s = 55 - (n.bits() as i64 - d.bits() as i64);
    let (q, sticky) = if d.is_one() && s < 0 {
        // Integer to float: a shift, no division.
        let shift = (-s) as u64;
        (
            n >> shift as usize,
            n.trailing_zeros().is_some_and(|t| t < shift),
        )
    } else if s >= 0 {
        let (q, r) = (n << s as usize).div_rem(d);
        (q, !r.is_zero())
    } else {
        let (q, r) = n.div_rem(&(d << (-s) as usize));
        (q, !r.is_zero())
    };
    let q = q.to_u64().unwrap_or(u64::MAX);
    let qbits = 64 - q.leading_zeros() as i64;
    let top = qbits - 1 - s;
    if top > 1023 {
        return Err(MathError::Overflow);
    }
    let low = (top - 52).max(-1074);
    let drop = (low + s) as u32;
    if drop >= 64 {
        return Ok(0.0);
    }
    let kept = q >> drop;
    let rem = q & ((1u64 << drop) - 1);
    let half = 1u64 << (drop - 1);
    let up = rem > half || (rem == half && (sticky || kept & 1 == 1));
    let m = kept + u64::from(up);
    let v = m as f64 * pow2(low);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(MathError::Overflow)
    }
}

/// Python's `repr(float)`: shortest round-trip digits, positional for exponents in [-4, 16),
/// scientific with a signed two-digit exponent otherwise.
pub fn float_repr(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let mut sci = format!("{:e}", x.abs());
    // Shortest round-trip digits are not unique when the exact value lies halfway between two
    // candidates; CPython then takes the correctly rounded (half-to-even) one, which Rust's
    // fixed-precision formatting yields. Two candidates of n digits can both round-trip only
    // when n-digit spacing is below the double spacing (2^-52 relative), i.e. for n >= 16.
    let sig = sci.find('e').unwrap_or(sci.len()) - usize::from(sci.contains('.'));
    if sig >= 16 {
        let rounded = format!("{:.*e}", sig - 1, x.abs());
        if rounded != sci && rounded.parse::<f64>() == Ok(x.abs()) {
            sci = rounded;
        }
    }
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    // At most 17 significant digits: collect them on the stack.
    let mut buf = [0u8; 32];
    let mut len = 0;
    for b in mant.bytes().filter(|b| b.is_ascii_digit()).take(buf.len()) {
        buf[len] = b;
        len += 1;
    }
    let digits = std::str::from_utf8(&buf[..len]).unwrap_or("0");
    let mut out = String::with_capacity(len + 24);
    if x < 0.0 {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        // Writing into a String cannot fail.
        let _ = write!(out, "{e}");
    }
    out
}

pub fn neg(a: &Number) -> MathResult {
    match a {
        Number::Int(i) => match i.checked_neg() {
            Some(v) => Ok(Number::Int(v)),
            None => normalize(-BigInt::from(*i)),
        },
        Number::Big(b) => normalize(-(**b).clone()),
        Number::Float(f) => Ok(Number::Float(-f)),
    }
}

pub fn abs(a: &Number) -> MathResult {
    match a {
        Number::Int(i) if *i >= 0 => Ok(a.clone()),
        Number::Big(b) if b.sign() != Sign::Minus => Ok(a.clone()),
        Number::Float(f) => Ok(Number::Float(f.abs())),
        _ => neg(a),
    }
}

fn both_f64(a: &Number, b: &Number) -> Result<(f64, f64), MathError> {
    Ok((a.to_f64()?, b.to_f64()?))
}

pub fn add(a: &Number, b: &Number) -> MathResult {
    match (a, b) {
        (Number::Int(x), Number::Int(y)) => match x.checked_add(*y) {
            Some(v) => Ok(Number::Int(v)),
            None => normalize(BigInt::from(*x) + y),
        },
        _ if a.is_int() && b.is_int() => normalize(a.to_big() + b.to_big()),
        _ => {
            let (x, y) = both_f64(a, b)?;
            float(x + y)
        }
    }
}

pub fn sub(a: &Number, b: &Number) -> MathResult {
    match (a, b) {
        (Number::Int(x), Number::Int(y)) => match x.checked_sub(*y) {
            Some(v) => Ok(Number::Int(v)),
            None => normalize(BigInt::from(*x) - y),
        },
        _ if a.is_int() && b.is_int() => normalize(a.to_big() - b.to_big()),
        _ => {
            let (x, y) = both_f64(a, b)?;
            float(x - y)
        }
    }
}

pub fn mul(a: &Number, b: &Number) -> MathResult {
    match (a, b) {
        (Number::Int(x), Number::Int(y)) => match x.checked_mul(*y) {
            Some(v) => Ok(Number::Int(v)),
            None => normalize(BigInt::from(*x) * y),
        },
        _ if a.is_int() && b.is_int() => {
            // Refuse before multiplying: the product of two in-bound numbers can be twice as long.
            if a.bits() + b.bits() > MAX_INT_BITS + 2 && !is_zero(a) && !is_zero(b) {
                return Err(MathError::TooLarge);
            }
            normalize(a.to_big() * b.to_big())
        }
        _ => {
            let (x, y) = both_f64(a, b)?;
            float(x * y)
        }
    }
}

fn is_zero(a: &Number) -> bool {
    matches!(a, Number::Int(0))
}

/// `/`: always a float, correctly rounded for integers of any size.
pub fn true_div(a: &Number, b: &Number) -> MathResult {
    const EXACT: u64 = 1 << 53;
    match (a, b) {
        (Number::Int(x), Number::Int(y))
            if x.unsigned_abs() <= EXACT && y.unsigned_abs() <= EXACT =>
        {
            if *y == 0 {
                return Err(MathError::DivisionByZero);
            }
            float(*x as f64 / *y as f64)
        }
        _ if a.is_int() && b.is_int() => {
            let (x, y) = (a.to_big(), b.to_big());
            if y.is_zero() {
                return Err(MathError::DivisionByZero);
            }
            let v = ratio_to_f64(x.magnitude(), y.magnitude())?;
            Ok(Number::Float(
                if (x.sign() == Sign::Minus) != (y.sign() == Sign::Minus) {
                    -v
                } else {
                    v
                },
            ))
        }
        _ => {
            let (x, y) = both_f64(a, b)?;
            if y == 0.0 {
                return Err(MathError::DivisionByZero);
            }
            float(x / y)
        }
    }
}

/// CPython's float divmod: the remainder takes the divisor's sign, the quotient is floored and
/// snapped to the nearest integer to undo the rounding error of `(x - mod) / y`.
fn float_divmod(x: f64, y: f64) -> (f64, f64) {
    let mut m = x % y;
    let mut div = (x - m) / y;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m += y;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(y);
    }
    let floordiv = if div != 0.0 {
        let mut f = div.floor();
        if div - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        0.0f64.copysign(x / y)
    };
    (floordiv, m)
}

pub fn floor_div(a: &Number, b: &Number) -> MathResult {
    match (a, b) {
        (_, Number::Int(0)) => Err(MathError::DivisionByZero),
        (Number::Int(x), Number::Int(y)) => match (x.checked_div(*y), x.checked_rem(*y)) {
            (Some(q), Some(r)) => Ok(Number::Int(if r != 0 && ((r < 0) != (*y < 0)) {
                q - 1
            } else {
                q
            })),
            _ => normalize(BigInt::from(*x).div_floor(&BigInt::from(*y))),
        },
        _ if a.is_int() && b.is_int() => normalize(a.to_big().div_floor(&b.to_big())),
        _ => {
            let (x, y) = both_f64(a, b)?;
            if y == 0.0 {
                return Err(MathError::DivisionByZero);
            }
            float(float_divmod(x, y).0)
        }
    }
}

pub fn modulo(a: &Number, b: &Number) -> MathResult {
    match (a, b) {
        (_, Number::Int(0)) => Err(MathError::DivisionByZero),
        (Number::Int(x), Number::Int(y)) => {
            let r = x.checked_rem(*y).unwrap_or(0);
            Ok(Number::Int(if r != 0 && ((r < 0) != (*y < 0)) {
                r + y
            } else {
                r
            }))
        }
        _ if a.is_int() && b.is_int() => normalize(a.to_big().mod_floor(&b.to_big())),
        _ => {
            let (x, y) = both_f64(a, b)?;
            if y == 0.0 {
                return Err(MathError::DivisionByZero);
            }
            float(float_divmod(x, y).1)
        }
    }
}

/// CPython's `float.__pow__`, minus the results we refuse (complex, inf).
fn float_pow(x: f64, y: f64) -> MathResult {
    if y == 0.0 || x == 1.0 {
        return Ok(Number::Float(1.0));
    }
    if x == 0.0 && y < 0.0 {
        return Err(MathError::DivisionByZero);
    }
    if x < 0.0 && y != y.floor() {
        // CPython computes the complex power, which overflows when its magnitude does.
        return Err(if (-x).powf(y).is_finite() {
            MathError::Complex
        } else {
            MathError::Overflow
        });
    }
    float(x.powf(y))
}

pub fn pow(a: &Number, b: &Number) -> MathResult {
    if !(a.is_int() && b.is_int()) {
        let (x, y) = both_f64(a, b)?;
        return float_pow(x, y);
    }
    let negative_exp = match b {
        Number::Int(e) => *e < 0,
        Number::Big(e) => e.sign() == Sign::Minus,
        Number::Float(_) => false,
    };
    if negative_exp {
        let (x, y) = both_f64(a, b)?;
        return float_pow(x, y);
    }
    // Trivial bases first: their powers stay small whatever the exponent.
    match a {
        Number::Int(0) => return Ok(Number::Int(if is_zero(b) { 1 } else { 0 })),
        Number::Int(1) => return Ok(Number::Int(1)),
        Number::Int(-1) => {
            let odd = match b {
                Number::Int(e) => e & 1 == 1,
                Number::Big(e) => e.is_odd(),
                Number::Float(_) => false,
            };
            return Ok(Number::Int(if odd { -1 } else { 1 }));
        }
        _ => {}
    }
    let exp = match b {
        Number::Int(e) => *e as u64,
        _ => return Err(MathError::TooLarge),
    };
    if exp == 0 {
        return Ok(Number::Int(1));
    }
    // |a| >= 2 here, so the result has at least exp * (bits(a) - 1) + 1 bits.
    if exp.saturating_mul(a.bits() - 1) > MAX_INT_BITS + 1 {
        return Err(MathError::TooLarge);
    }
    let exp = exp as u32; // bounded by MAX_INT_BITS above
    if let Number::Int(x) = a {
        if let Some(v) = x.checked_pow(exp) {
            return Ok(Number::Int(v));
        }
    }
    normalize(num_traits::pow(a.to_big(), exp as usize))
}

/// Exact comparison across ints and floats, as Python compares them.
pub fn compare(a: &Number, b: &Number) -> Ordering {
    match (a, b) {
        (Number::Int(x), Number::Int(y)) => x.cmp(y),
        (Number::Float(x), Number::Float(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Number::Float(_), _) => compare(b, a).reverse(),
        (_, Number::Float(y)) => {
            let fl = y.floor();
            let fl_int = BigInt::from_f64(fl).unwrap_or_default();
            match a.to_big().cmp(&fl_int) {
                Ordering::Equal if fl != *y => Ordering::Less,
                o => o,
            }
        }
        _ => a.to_big().cmp(&b.to_big()),
    }
}

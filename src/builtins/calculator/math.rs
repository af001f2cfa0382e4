//! The calculator's functions (`round`, `log`, `sqrt`, ...) with CPython's `math`/builtin
//! semantics: `round` ties to even on the exact binary value, `log` of an integer too large for
//! a double goes through frexp as CPython does, `floor`/`ceil`/`round(x)` return integers.

use std::cmp::Ordering;

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{FromPrimitive, One, ToPrimitive};

use super::number::{
    float, normalize, ratio_to_f64, MathError, MathResult, Number, MAX_INT_DIGITS,
};

fn float_to_int(f: f64) -> MathResult {
    match BigInt::from_f64(f) {
        Some(b) => normalize(b),
        None => Err(MathError::Overflow),
    }
}

pub fn floor(a: &Number) -> MathResult {
    match a {
        Number::Float(f) => float_to_int(f.floor()),
        _ => Ok(a.clone()),
    }
}

pub fn ceil(a: &Number) -> MathResult {
    match a {
        Number::Float(f) => float_to_int(f.ceil()),
        _ => Ok(a.clone()),
    }
}

/// `round(x)`: an int, ties to even.
pub fn round0(a: &Number) -> MathResult {
    match a {
        Number::Float(f) => float_to_int(f.round_ties_even()),
        _ => Ok(a.clone()),
    }
}

fn round_half_even_div(n: &BigInt, d: &BigInt) -> BigInt {
    let (q, r) = n.div_mod_floor(d);
    let twice: BigInt = r << 1;
    match twice.cmp(d) {
        Ordering::Greater => q + 1,
        Ordering::Equal if q.is_odd() => q + 1,
        _ => q,
    }
}

/// `round(x, n)`: same type as `x`; ties go to even on the exact binary value of a float, as
/// CPython does (so `round(2.675, 2)` is 2.67).
pub fn round_n(a: &Number, n: &Number) -> MathResult {
    let digits: i64 = match n {
        Number::Int(i) => *i,
        // CPython clamps an oversized ndigits; only its sign matters from here on.
        Number::Big(b) => {
            if b.sign() == Sign::Minus {
                i64::MIN
            } else {
                i64::MAX
            }
        }
        Number::Float(_) => return Err(MathError::NotInteger),
    };
    match a {
        Number::Float(x) => round_float(*x, digits),
        _ if digits >= 0 => Ok(a.clone()),
        _ => {
            let k = digits.unsigned_abs();
            if k > MAX_INT_DIGITS as u64 + 1 {
                return Ok(Number::Int(0));
            }
            let p = num_traits::pow(BigInt::from(10u32), k as usize);
            normalize(round_half_even_div(&a.to_big(), &p) * p)
        }
    }
}

fn round_float(x: f64, digits: i64) -> MathResult {
    // Beyond these CPython returns x unchanged, or a zero of x's sign.
    if digits > 323 || x == 0.0 {
        return Ok(Number::Float(x));
    }
    if digits < -308 {
        return Ok(Number::Float(0.0 * x));
    }
    let bits = x.abs().to_bits();
    let (exp_field, frac) = ((bits >> 52) as i64, bits & ((1u64 << 52) - 1));
    let (mant, exp2) = if exp_field == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_field - 1075)
    };
    // |x| * 10^digits = mant * 2^exp2 * 10^digits, rounded to an integer q; result q / 10^digits.
    let p = num_traits::pow(BigInt::from(10u32), digits.unsigned_abs() as usize);
    let mut num = BigInt::from(mant);
    let mut den = BigInt::one();
    if exp2 >= 0 {
        num <<= exp2 as usize;
    } else {
        den <<= (-exp2) as usize;
    }
    if digits >= 0 {
        num *= &p;
    } else {
        den *= &p;
    }
    let q = round_half_even_div(&num, &den);
    let (n, d) = if digits >= 0 {
        (q, p)
    } else {
        (q * p, BigInt::one())
    };
    let v = ratio_to_f64(n.magnitude(), d.magnitude())?;
    Ok(Number::Float(if x < 0.0 { -v } else { v }))
}

fn log_positive(a: &Number) -> Result<f64, MathError> {
    match a {
        Number::Float(f) => {
            if *f > 0.0 {
                Ok(f.ln())
            } else {
                Err(MathError::Domain)
            }
        }
        _ => {
            let b = a.to_big();
            if b.sign() != Sign::Plus {
                return Err(MathError::Domain);
            }
            match a.to_f64() {
                Ok(f) => Ok(f.ln()),
                // Too large for a double: CPython splits it as m * 2^e (frexp) and adds the logs.
                Err(_) => {
                    let (m, e) = frexp_big(b.magnitude());
                    Ok(m.ln() + std::f64::consts::LN_2 * e as f64)
                }
            }
        }
    }
}

/// `n = m * 2^e` with m in [0.5, 1) rounded half-to-even to 53 bits (CPython `_PyLong_Frexp`).
fn frexp_big(n: &BigUint) -> (f64, i64) {
    let bits = n.bits();
    let shift = bits.saturating_sub(55);
    let top = (n >> shift as usize).to_u64().unwrap_or(0);
    let sticky = n.trailing_zeros().is_some_and(|t| t < shift);
    let drop = (64 - top.leading_zeros() as i64 - 53).max(0) as u32;
    let (kept, rem) = (top >> drop, top & ((1u64 << drop) - 1));
    let half = if drop > 0 { 1u64 << (drop - 1) } else { 0 };
    let up = drop > 0 && (rem > half || (rem == half && (sticky || kept & 1 == 1)));
    let m = kept + u64::from(up);
    let mut x = m as f64 / (1u64 << 53) as f64;
    let mut e = bits as i64;
    if x >= 1.0 {
        x *= 0.5;
        e += 1;
    }
    (x, e)
}

/// `math.log(x)` / `math.log(x, base)`.
pub fn log(a: &Number, base: Option<&Number>) -> MathResult {
    let num = log_positive(a)?;
    match base {
        None => float(num),
        Some(b) => {
            let den = log_positive(b)?;
            if den == 0.0 {
                return Err(MathError::DivisionByZero);
            }
            float(num / den)
        }
    }
}

pub fn sqrt(a: &Number) -> MathResult {
    let x = a.to_f64()?;
    if x < 0.0 {
        return Err(MathError::Domain);
    }
    float(x.sqrt())
}

pub fn exp(a: &Number) -> MathResult {
    float(a.to_f64()?.exp())
}

pub fn sin(a: &Number) -> MathResult {
    float(a.to_f64()?.sin())
}

pub fn cos(a: &Number) -> MathResult {
    float(a.to_f64()?.cos())
}

pub fn tan(a: &Number) -> MathResult {
    float(a.to_f64()?.tan())
}

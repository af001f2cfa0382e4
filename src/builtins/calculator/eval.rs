//! Names, functions and operators of the calculator, on top of the numeric tower in `number`.

use super::math;
use super::number::{self, Number};
use super::CalcError;

/// What an expression can denote while it is being evaluated.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Num(Number),
    /// A function name not (yet) called: only valid as a callee.
    Func(Func),
    /// The result of a failed step; the failure itself is recorded by the parser.
    Poison,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Sqrt,
    Abs,
    Round,
    Log,
    Sin,
    Cos,
    Tan,
    Exp,
    Floor,
    Ceil,
    Min,
    Max,
}

/// Every function, in the order the description and error messages list them.
pub const FUNCTIONS: [Func; 12] = [
    Func::Sqrt,
    Func::Abs,
    Func::Round,
    Func::Log,
    Func::Sin,
    Func::Cos,
    Func::Tan,
    Func::Exp,
    Func::Floor,
    Func::Ceil,
    Func::Min,
    Func::Max,
];

pub const CONSTANTS: [&str; 2] = ["pi", "e"];

pub fn func_name(f: Func) -> &'static str {
    match f {
        Func::Sqrt => "sqrt",
        Func::Abs => "abs",
        Func::Round => "round",
        Func::Log => "log",
        Func::Sin => "sin",
        Func::Cos => "cos",
        Func::Tan => "tan",
        Func::Exp => "exp",
        Func::Floor => "floor",
        Func::Ceil => "ceil",
        Func::Min => "min",
        Func::Max => "max",
    }
}

/// Accepted argument counts (min, max) and the prompt key phrasing them for the arity error.
fn arity(f: Func) -> (usize, usize, &'static str) {
    match f {
        Func::Round | Func::Log => (1, 2, "calculator.arity.one_or_two"),
        Func::Min | Func::Max => (2, usize::MAX, "calculator.arity.at_least_two"),
        _ => (1, 1, "calculator.arity.exactly_one"),
    }
}

pub fn lookup(name: &str) -> Result<Value, CalcError> {
    let v = match name {
        "pi" => Value::Num(Number::Float(std::f64::consts::PI)),
        "e" => Value::Num(Number::Float(std::f64::consts::E)),
        _ => match FUNCTIONS.iter().find(|f| func_name(**f) == name) {
            Some(f) => Value::Func(*f),
            None => return Err(CalcError::UnknownName(name.to_string())),
        },
    };
    Ok(v)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
}

fn num(v: &Value) -> Result<Option<&Number>, CalcError> {
    match v {
        Value::Num(n) => Ok(Some(n)),
        Value::Func(f) => Err(CalcError::NotANumber(func_name(*f))),
        Value::Poison => Ok(None),
    }
}

pub fn binary(op: BinOp, a: &Value, b: &Value) -> Result<Value, CalcError> {
    let (Some(x), Some(y)) = (num(a)?, num(b)?) else {
        return Ok(Value::Poison);
    };
    let r = match op {
        BinOp::Add => number::add(x, y),
        BinOp::Sub => number::sub(x, y),
        BinOp::Mul => number::mul(x, y),
        BinOp::Div => number::true_div(x, y),
        BinOp::FloorDiv => number::floor_div(x, y),
        BinOp::Mod => number::modulo(x, y),
        BinOp::Pow => number::pow(x, y),
    };
    r.map(Value::Num).map_err(CalcError::Math)
}

pub fn unary(negate: bool, a: &Value) -> Result<Value, CalcError> {
    let Some(x) = num(a)? else {
        return Ok(Value::Poison);
    };
    if negate {
        number::neg(x).map(Value::Num).map_err(CalcError::Math)
    } else {
        Ok(Value::Num(x.clone()))
    }
}

pub fn call(f: Func, args: &[Value]) -> Result<Value, CalcError> {
    let (lo, hi, expected) = arity(f);
    if args.len() < lo || args.len() > hi {
        return Err(CalcError::Arity {
            name: func_name(f),
            expected,
            given: args.len(),
        });
    }
    let mut nums = Vec::with_capacity(args.len());
    for a in args {
        match num(a)? {
            Some(n) => nums.push(n),
            None => return Ok(Value::Poison),
        }
    }
    let x = nums[0];
    let r = match f {
        Func::Sqrt => math::sqrt(x),
        Func::Abs => number::abs(x),
        Func::Round => match nums.get(1) {
            None => math::round0(x),
            Some(n) => math::round_n(x, n),
        },
        Func::Log => math::log(x, nums.get(1).copied()),
        Func::Sin => math::sin(x),
        Func::Cos => math::cos(x),
        Func::Tan => math::tan(x),
        Func::Exp => math::exp(x),
        Func::Floor => math::floor(x),
        Func::Ceil => math::ceil(x),
        // Python keeps the first of equal extremes (min(1, 1.0) is 1).
        Func::Min => Ok(nums
            .iter()
            .skip(1)
            .fold(x, |m, n| if number::compare(n, m).is_lt() { n } else { m })
            .clone()),
        Func::Max => Ok(nums
            .iter()
            .skip(1)
            .fold(x, |m, n| if number::compare(n, m).is_gt() { n } else { m })
            .clone()),
    };
    r.map(Value::Num).map_err(CalcError::Math)
}

//! `calculator`: arithmetic with Python's semantics, parsed by our own code (no eval) and bounded
//! so that any input is answered in about a millisecond with bounded memory.
//!
//! Layout: `lexer` (tokens, Python literal spelling), `parser` (recursive descent that evaluates as
//! it parses), `eval` (names, functions, operators), `number` (ints/floats the way CPython does them),
//! `math` (the functions).

mod eval;
mod lexer;
mod math;
mod number;
mod parser;

use std::collections::HashMap;

use serde_json::Value;

use crate::error::ConfigError;
use crate::prompts::Prompts;
use crate::response::ToolResponse;
use crate::schema::ToolParameter;
use crate::tool::{NativeTool, ToolSpec};

pub use lexer::SyntaxKind;
/// Python's `repr(float)`, also used where rendered schemas quote a value as Python would.
pub(crate) use number::float_repr;
pub use number::{MathError, Number, MAX_INT_DIGITS};

/// Bounds on the input. Together with [`MAX_INT_DIGITS`] they keep every evaluation to about a
/// millisecond: the number of steps is bounded by `max_nodes`, and the cost of one step by the
/// integer size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Characters, after trimming surrounding whitespace.
    pub max_len: usize,
    /// Nesting of parentheses, unary signs and exponents.
    pub max_depth: usize,
    /// Numbers, names, operators and calls.
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_len: 1000,
            max_depth: 100,
            max_nodes: 250,
        }
    }
}

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq)]
pub enum CalcError {
    Empty,
    NotText,
    TooLong {
        max: usize,
    },
    TooDeep {
        max: usize,
    },
    TooComplex {
        max: usize,
    },
    /// `column` is 1-based, in characters of the expression as given.
    Syntax {
        column: usize,
        kind: SyntaxKind,
    },
    Math(MathError),
    UnknownName(String),
    /// A number was called like a function; the name when it was a named constant.
    NotCallable(Option<String>),
    /// A function was used as a number.
    NotANumber(&'static str),
    /// `expected` is the prompt key phrasing the accepted argument count.
    Arity {
        name: &'static str,
        expected: &'static str,
        given: usize,
    },
}

/// Evaluates `expr` with the given bounds.
pub fn evaluate(expr: &str, limits: Limits) -> Result<Number, CalcError> {
    let text = expr.trim();
    if text.is_empty() {
        return Err(CalcError::Empty);
    }
    // Byte length bounds character count from above; count characters only when it matters.
    if text.len() > limits.max_len
        && (text.len() > 4 * limits.max_len || text.chars().count() > limits.max_len)
    {
        return Err(CalcError::TooLong {
            max: limits.max_len,
        });
    }
    let lead = expr.len() - expr.trim_start().len();
    let syntax = |e: lexer::SyntaxError| {
        let column = expr[..lead + e.offset].chars().count() + 1;
        CalcError::Syntax {
            column,
            kind: e.kind,
        }
    };
    let parser = match parser::Parser::new(text, limits) {
        Ok(p) => p,
        Err(parser::Abort::Syntax(e)) => return Err(syntax(e)),
        Err(parser::Abort::Limit(e)) => return Err(e),
    };
    match parser.run() {
        Ok(n) => Ok(n),
        Err(Ok(e)) => Err(e),
        Err(Err(e)) => Err(syntax(e)),
    }
}

/// Default English texts; every key can be overridden through `prompts=`.
pub const PROMPTS: &[(&str, &str)] = &[
    (
        "calculator.description",
        "Evaluate an arithmetic expression exactly as Python would and return the result. \
         Operators: + - * / // % ** (power, right-associative; -2**2 is -4), unary + and -, parentheses. \
         Functions: sqrt(x), abs(x), round(x[, n]) (ties to even), log(x[, base]) (natural log by default), \
         sin(x), cos(x), tan(x) (radians), exp(x), floor(x), ceil(x), min(a, b, ...), max(a, b, ...). \
         Constants: pi, e. Integers are exact (up to {max_digits} digits); / always gives a float. \
         Limits: {max_length} characters, {max_depth} levels of nesting, {max_nodes} numbers, operators and calls.",
    ),
    ("calculator.param.expression", "The expression to evaluate, e.g. (1+2)*3, 2**10 or sqrt(16)"),
    ("calculator.empty", "Error: the expression must not be empty"),
    ("calculator.not_text", "Error: the expression must be a string"),
    ("calculator.too_long", "Error: expression too long (over {max} characters)"),
    ("calculator.too_deep", "Error: expression nested too deeply (over {max} levels)"),
    ("calculator.too_complex", "Error: expression too complex (over {max} numbers, operators and calls)"),
    ("calculator.syntax", "Error: invalid syntax at column {column}: {detail}"),
    ("calculator.syntax.unexpected_char", "unexpected character {char}"),
    ("calculator.syntax.operator", "unsupported operator '{op}'"),
    ("calculator.syntax.caret", "unsupported operator '^' (use ** for powers)"),
    ("calculator.syntax.bad_number", "invalid number literal"),
    ("calculator.syntax.imaginary", "complex numbers are not supported"),
    ("calculator.syntax.unexpected_token", "unexpected {token}"),
    ("calculator.syntax.unexpected_end", "the expression ends too early"),
    ("calculator.syntax.unclosed", "'(' was never closed"),
    ("calculator.syntax.unmatched", "unmatched ')'"),
    ("calculator.syntax.keyword", "keyword arguments are not supported"),
    ("calculator.div_zero", "Error: division by zero"),
    ("calculator.domain", "Error: math domain error"),
    ("calculator.overflow", "Error: numeric result out of range (beyond the float range)"),
    ("calculator.too_large", "Error: integer result too large (over {max} digits)"),
    ("calculator.complex", "Error: the result would be a complex number (negative number raised to a fractional power)"),
    ("calculator.round_digits", "Error: round() needs an integer number of digits"),
    ("calculator.unknown_name", "Error: unknown name '{name}'; available: {available}"),
    ("calculator.not_callable", "Error: '{name}' is not a function and cannot be called"),
    ("calculator.not_callable_value", "Error: a number is not a function and cannot be called"),
    ("calculator.not_a_number", "Error: '{name}' is a function; call it with arguments, e.g. {name}(2)"),
    ("calculator.arity", "Error: {name}() takes {expected} ({given} given)"),
    ("calculator.arity.exactly_one", "exactly 1 argument"),
    ("calculator.arity.one_or_two", "1 or 2 arguments"),
    ("calculator.arity.at_least_two", "at least 2 arguments"),
];

/// The `calculator` built-in tool.
pub struct CalculatorTool {
    spec: ToolSpec,
    prompts: Prompts,
    limits: Limits,
}

impl CalculatorTool {
    /// `overrides` maps prompt keys of [`PROMPTS`] to replacement templates; unknown keys are refused.
    pub fn new(overrides: Option<HashMap<String, String>>) -> Result<Self, ConfigError> {
        let prompts = Prompts::new(PROMPTS, overrides)?;
        let limits = Limits::default();
        let description = prompts.fmt(
            "calculator.description",
            &[
                ("max_digits", &MAX_INT_DIGITS.to_string()),
                ("max_length", &limits.max_len.to_string()),
                ("max_depth", &limits.max_depth.to_string()),
                ("max_nodes", &limits.max_nodes.to_string()),
            ],
        );
        let param = ToolParameter::new(
            "expression",
            "string",
            prompts.fmt("calculator.param.expression", &[]),
        );
        let spec = ToolSpec::new("calculator", description, vec![param]);
        Ok(CalculatorTool {
            spec,
            prompts,
            limits,
        })
    }

    /// Evaluates one expression into the response the model sees.
    pub fn evaluate(&self, expr: &str) -> ToolResponse {
        match evaluate(expr, self.limits) {
            Ok(n) => ToolResponse::ok(n.render()).with_data(n.to_json()),
            Err(e) => ToolResponse::error(self.message(&e)),
        }
    }

    /// The user-facing text for an error, through the prompts.
    pub fn message(&self, e: &CalcError) -> String {
        let p = &self.prompts;
        match e {
            CalcError::Empty => p.fmt("calculator.empty", &[]),
            CalcError::NotText => p.fmt("calculator.not_text", &[]),
            CalcError::TooLong { max } => {
                p.fmt("calculator.too_long", &[("max", &max.to_string())])
            }
            CalcError::TooDeep { max } => {
                p.fmt("calculator.too_deep", &[("max", &max.to_string())])
            }
            CalcError::TooComplex { max } => {
                p.fmt("calculator.too_complex", &[("max", &max.to_string())])
            }
            CalcError::Syntax { column, kind } => {
                let detail = match kind {
                    SyntaxKind::UnexpectedChar(c) => p.fmt(
                        "calculator.syntax.unexpected_char",
                        &[("char", &format!("{c:?}"))],
                    ),
                    SyntaxKind::UnsupportedOperator(op) if op == "^" => {
                        p.fmt("calculator.syntax.caret", &[])
                    }
                    SyntaxKind::UnsupportedOperator(op) => {
                        p.fmt("calculator.syntax.operator", &[("op", op)])
                    }
                    SyntaxKind::BadNumber => p.fmt("calculator.syntax.bad_number", &[]),
                    SyntaxKind::Imaginary => p.fmt("calculator.syntax.imaginary", &[]),
                    SyntaxKind::UnexpectedToken(t) => {
                        p.fmt("calculator.syntax.unexpected_token", &[("token", t)])
                    }
                    SyntaxKind::UnexpectedEnd => p.fmt("calculator.syntax.unexpected_end", &[]),
                    SyntaxKind::Unclosed => p.fmt("calculator.syntax.unclosed", &[]),
                    SyntaxKind::Unmatched => p.fmt("calculator.syntax.unmatched", &[]),
                    SyntaxKind::KeywordArgument => p.fmt("calculator.syntax.keyword", &[]),
                };
                p.fmt(
                    "calculator.syntax",
                    &[("column", &column.to_string()), ("detail", &detail)],
                )
            }
            CalcError::Math(m) => match m {
                MathError::DivisionByZero => p.fmt("calculator.div_zero", &[]),
                MathError::Domain => p.fmt("calculator.domain", &[]),
                MathError::Overflow => p.fmt("calculator.overflow", &[]),
                MathError::TooLarge => p.fmt(
                    "calculator.too_large",
                    &[("max", &MAX_INT_DIGITS.to_string())],
                ),
                MathError::Complex => p.fmt("calculator.complex", &[]),
                MathError::NotInteger => p.fmt("calculator.round_digits", &[]),
            },
            CalcError::UnknownName(name) => {
                let available: Vec<&str> = eval::CONSTANTS
                    .iter()
                    .copied()
                    .chain(eval::FUNCTIONS.iter().map(|f| eval::func_name(*f)))
                    .collect();
                p.fmt(
                    "calculator.unknown_name",
                    &[("name", name), ("available", &available.join(", "))],
                )
            }
            CalcError::NotCallable(Some(name)) => {
                p.fmt("calculator.not_callable", &[("name", name)])
            }
            CalcError::NotCallable(None) => p.fmt("calculator.not_callable_value", &[]),
            CalcError::NotANumber(name) => p.fmt("calculator.not_a_number", &[("name", name)]),
            CalcError::Arity {
                name,
                expected,
                given,
            } => {
                let expected = p.fmt(expected, &[]);
                p.fmt(
                    "calculator.arity",
                    &[
                        ("name", name),
                        ("expected", &expected),
                        ("given", &given.to_string()),
                    ],
                )
            }
        }
    }
}

impl NativeTool for CalculatorTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: &Value) -> ToolResponse {
        match args.get("expression") {
            Some(Value::String(s)) => self.evaluate(s),
            None | Some(Value::Null) => ToolResponse::error(self.message(&CalcError::Empty)),
            Some(_) => ToolResponse::error(self.message(&CalcError::NotText)),
        }
    }

    /// Bounded to about a millisecond, so it runs inline rather than on a worker thread.
    fn blocks(&self) -> bool {
        false
    }
}

#[cfg(test)]
#[path = "calculator/tests.rs"]
mod tests;

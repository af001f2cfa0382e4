//! Recursive-descent parser that evaluates as it parses (no tree is built).
//!
//! Python's grammar, restricted to arithmetic:
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/' | '//' | '%') unary)*
//! unary   := ('+' | '-') unary | power
//! power   := primary ['**' unary]          (right-associative, binds tighter than unary minus)
//! primary := atom ('(' [expr (',' expr)* [',']] ')')*
//! atom    := NUMBER | NAME | '(' expr ')'
//! ```
//! Parsing order is Python's evaluation order, so the first evaluation error met is the one
//! CPython would raise. That error is recorded and parsing continues without computing anything,
//! because a syntax error anywhere in the expression takes precedence (Python compiles first).
//! Depth is checked before every recursive step, so hostile nesting cannot overflow the stack.

use super::eval::{self, Func, Value};
use super::lexer::{Lexer, SyntaxError, SyntaxKind, Tok};
use super::number::Number;
use super::{CalcError, Limits};

const OPEN_SLOTS: usize = 128;

pub struct Parser<'a> {
    lexer: Lexer<'a>,
    tok: Tok<'a>,
    at: usize,
    depth: usize,
    nodes: usize,
    /// Offsets of the parentheses still open, so running out of input can point at the `(`.
    /// A fixed array (no allocation per call); nesting beyond it is counted but not recorded.
    open: [usize; OPEN_SLOTS],
    open_len: usize,
    limits: Limits,
    /// First evaluation error, in evaluation order.
    failed: Option<CalcError>,
}

/// Parser-level failure: stops parsing at once.
pub enum Abort {
    Syntax(SyntaxError),
    Limit(CalcError),
}

impl From<SyntaxError> for Abort {
    fn from(e: SyntaxError) -> Self {
        Abort::Syntax(e)
    }
}

type PResult<T> = Result<T, Abort>;

fn describe(tok: &Tok<'_>) -> String {
    match tok {
        Tok::Num(_) => "number".into(),
        Tok::Name(n) => format!("name '{n}'"),
        Tok::Plus => "'+'".into(),
        Tok::Minus => "'-'".into(),
        Tok::Star => "'*'".into(),
        Tok::DoubleStar => "'**'".into(),
        Tok::Slash => "'/'".into(),
        Tok::DoubleSlash => "'//'".into(),
        Tok::Percent => "'%'".into(),
        Tok::LParen => "'('".into(),
        Tok::RParen => "')'".into(),
        Tok::Comma => "','".into(),
        Tok::Assign => "'='".into(),
        Tok::End => "end of input".into(),
    }
}

impl<'a> Parser<'a> {
    pub fn new(text: &'a str, limits: Limits) -> PResult<Self> {
        let mut lexer = Lexer::new(text);
        let (at, tok) = lexer.next_token()?;
        Ok(Parser {
            lexer,
            tok,
            at,
            depth: 0,
            nodes: 0,
            open: [0; OPEN_SLOTS],
            open_len: 0,
            limits,
            failed: None,
        })
    }

    /// Parses and evaluates the whole input.
    pub fn run(mut self) -> Result<Number, Result<CalcError, SyntaxError>> {
        let value = match self.expr() {
            Ok(v) => v,
            Err(Abort::Syntax(e)) => return Err(Err(e)),
            Err(Abort::Limit(e)) => return Err(Ok(e)),
        };
        if !matches!(self.tok, Tok::End) {
            let kind = if matches!(self.tok, Tok::RParen) {
                SyntaxKind::Unmatched
            } else {
                SyntaxKind::UnexpectedToken(describe(&self.tok))
            };
            return Err(Err(SyntaxError {
                offset: self.at,
                kind,
            }));
        }
        if let Some(e) = self.failed {
            return Err(Ok(e));
        }
        match value {
            Value::Num(n) => Ok(n),
            Value::Func(f) => Err(Ok(CalcError::NotANumber(f.name()))),
            // A poisoned value always comes with a recorded error; stay total anyway.
            Value::Poison => Err(Ok(CalcError::Math(super::number::MathError::Domain))),
        }
    }

    fn bump(&mut self) -> PResult<()> {
        let (at, tok) = self.lexer.next_token()?;
        self.at = at;
        self.tok = tok;
        Ok(())
    }

    fn node(&mut self) -> PResult<()> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(Abort::Limit(CalcError::TooComplex {
                max: self.limits.max_nodes,
            }));
        }
        Ok(())
    }

    fn unexpected(&self) -> Abort {
        let kind = match self.tok {
            Tok::End if self.open_len > 0 => {
                let offset = self.open[self.open_len.min(OPEN_SLOTS) - 1];
                return Abort::Syntax(SyntaxError {
                    offset,
                    kind: SyntaxKind::Unclosed,
                });
            }
            Tok::End => SyntaxKind::UnexpectedEnd,
            Tok::RParen if self.open_len == 0 => SyntaxKind::Unmatched,
            _ => SyntaxKind::UnexpectedToken(describe(&self.tok)),
        };
        Abort::Syntax(SyntaxError {
            offset: self.at,
            kind,
        })
    }

    /// Applies an evaluation step unless an earlier step already failed.
    fn apply(&mut self, f: impl FnOnce() -> Result<Value, CalcError>) -> Value {
        if self.failed.is_some() {
            return Value::Poison;
        }
        match f() {
            Ok(v) => v,
            Err(e) => {
                self.failed = Some(e);
                Value::Poison
            }
        }
    }

    fn expr(&mut self) -> PResult<Value> {
        let mut lhs = self.term()?;
        loop {
            let op = match self.tok {
                Tok::Plus => eval::BinOp::Add,
                Tok::Minus => eval::BinOp::Sub,
                _ => return Ok(lhs),
            };
            self.bump()?;
            let rhs = self.term()?;
            self.node()?;
            lhs = self.apply(|| eval::binary(op, &lhs, &rhs));
        }
    }

    fn term(&mut self) -> PResult<Value> {
        let mut lhs = self.unary()?;
        loop {
            let op = match self.tok {
                Tok::Star => eval::BinOp::Mul,
                Tok::Slash => eval::BinOp::Div,
                Tok::DoubleSlash => eval::BinOp::FloorDiv,
                Tok::Percent => eval::BinOp::Mod,
                _ => return Ok(lhs),
            };
            self.bump()?;
            let rhs = self.unary()?;
            self.node()?;
            lhs = self.apply(|| eval::binary(op, &lhs, &rhs));
        }
    }

    fn unary(&mut self) -> PResult<Value> {
        self.depth += 1;
        if self.depth > self.limits.max_depth {
            return Err(Abort::Limit(CalcError::TooDeep {
                max: self.limits.max_depth,
            }));
        }
        let v = match self.tok {
            Tok::Minus | Tok::Plus => {
                let negate = matches!(self.tok, Tok::Minus);
                self.bump()?;
                let v = self.unary()?;
                self.node()?;
                self.apply(|| eval::unary(negate, &v))
            }
            _ => self.power()?,
        };
        self.depth -= 1;
        Ok(v)
    }

    fn power(&mut self) -> PResult<Value> {
        let base = self.primary()?;
        if !matches!(self.tok, Tok::DoubleStar) {
            return Ok(base);
        }
        self.bump()?;
        let exp = self.unary()?;
        self.node()?;
        Ok(self.apply(|| eval::binary(eval::BinOp::Pow, &base, &exp)))
    }

    fn primary(&mut self) -> PResult<Value> {
        // Remember a bare name so that `pi(2)` can say which name is not a function.
        let mut name = match self.tok {
            Tok::Name(n) => Some(n),
            _ => None,
        };
        let mut v = self.atom()?;
        while matches!(self.tok, Tok::LParen) {
            v = self.call(v, name.take())?;
        }
        Ok(v)
    }

    fn atom(&mut self) -> PResult<Value> {
        match std::mem::replace(&mut self.tok, Tok::End) {
            Tok::Num(n) => {
                self.bump()?;
                self.node()?;
                Ok(self.apply(|| n.map(Value::Num).map_err(CalcError::Math)))
            }
            Tok::Name(name) => {
                self.bump()?;
                self.node()?;
                Ok(self.apply(|| eval::lookup(name)))
            }
            Tok::LParen => {
                self.push_open();
                self.bump()?;
                let v = self.expr()?;
                self.close()?;
                Ok(v)
            }
            other => {
                self.tok = other;
                Err(self.unexpected())
            }
        }
    }

    fn push_open(&mut self) {
        if self.open_len < OPEN_SLOTS {
            self.open[self.open_len] = self.at;
        }
        self.open_len += 1;
    }

    fn close(&mut self) -> PResult<()> {
        if !matches!(self.tok, Tok::RParen) {
            return Err(self.unexpected());
        }
        self.open_len -= 1;
        self.bump()
    }

    fn call(&mut self, callee: Value, name: Option<&str>) -> PResult<Value> {
        self.push_open();
        self.bump()?;
        let mut args: Vec<Value> = Vec::new();
        while !matches!(self.tok, Tok::RParen) {
            if let Tok::Name(_) = self.tok {
                let mut ahead = self.lexer.clone();
                if let Ok((_, Tok::Assign)) = ahead.next_token() {
                    return Err(Abort::Syntax(SyntaxError {
                        offset: self.at,
                        kind: SyntaxKind::KeywordArgument,
                    }));
                }
            }
            args.push(self.expr()?);
            match self.tok {
                Tok::Comma => self.bump()?,
                Tok::RParen => break,
                _ => return Err(self.unexpected()),
            }
        }
        self.close()?;
        self.node()?;
        Ok(self.apply(|| match callee {
            Value::Func(f) => eval::call(f, &args),
            Value::Num(_) => Err(CalcError::NotCallable(name.map(str::to_string))),
            Value::Poison => Ok(Value::Poison),
        }))
    }
}

impl Func {
    pub fn name(self) -> &'static str {
        eval::func_name(self)
    }
}

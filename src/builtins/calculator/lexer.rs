//! Tokens of the calculator grammar, read on demand (no token vector is built). Number literals
//! follow Python's spelling rules: `1_000`, `0x1f`, `0o17`, `0b101`, `.5`, `1.`, `1e-3`; a leading
//! zero on a decimal integer, a stray underscore or a letter glued to a number is a syntax error.

use num_bigint::BigUint;
use num_traits::ToPrimitive;

use super::number::{MathError, Number, MAX_INT_DIGITS};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok<'a> {
    /// A literal; an out-of-range literal is an evaluation error, reported only if parsing succeeds.
    Num(Result<Number, MathError>),
    Name(&'a str),
    Plus,
    Minus,
    Star,
    DoubleStar,
    Slash,
    DoubleSlash,
    Percent,
    LParen,
    RParen,
    Comma,
    Assign,
    End,
}

/// What is wrong at a position of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyntaxKind {
    UnexpectedChar(char),
    /// An operator Python has but the calculator does not (`^`, `<<`, `==`, ...).
    UnsupportedOperator(String),
    BadNumber,
    Imaginary,
    /// A token that cannot stand here; the payload describes it for the message.
    UnexpectedToken(String),
    UnexpectedEnd,
    /// An opening parenthesis without its `)`.
    Unclosed,
    /// A `)` without its `(`.
    Unmatched,
    KeywordArgument,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset into the (trimmed) expression.
    pub offset: usize,
    pub kind: SyntaxKind,
}

#[derive(Clone)]
pub struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

fn is_digit(b: u8, radix: u32) -> bool {
    (b as char).is_digit(radix)
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        Lexer { text, pos: 0 }
    }

    fn byte(&self, at: usize) -> u8 {
        self.text.as_bytes().get(at).copied().unwrap_or(0)
    }

    fn error(&self, offset: usize, kind: SyntaxKind) -> SyntaxError {
        SyntaxError { offset, kind }
    }

    /// The next token and its byte offset.
    pub fn next_token(&mut self) -> Result<(usize, Tok<'a>), SyntaxError> {
        while matches!(self.byte(self.pos), b' ' | b'\t' | b'\n' | b'\r' | 0x0c) {
            self.pos += 1;
        }
        let start = self.pos;
        let b = self.byte(start);
        if start >= self.text.len() {
            return Ok((start, Tok::End));
        }
        if b.is_ascii_digit() || (b == b'.' && self.byte(start + 1).is_ascii_digit()) {
            return self.number().map(|t| (start, t));
        }
        if is_ident_start(b) {
            while is_ident(self.byte(self.pos)) {
                self.pos += 1;
            }
            return Ok((start, Tok::Name(&self.text[start..self.pos])));
        }
        let next = self.byte(start + 1);
        let (tok, len) = match b {
            b'+' => (Tok::Plus, 1),
            b'-' => (Tok::Minus, 1),
            b'*' if next == b'*' => (Tok::DoubleStar, 2),
            b'*' => (Tok::Star, 1),
            b'/' if next == b'/' => (Tok::DoubleSlash, 2),
            b'/' => (Tok::Slash, 1),
            b'%' => (Tok::Percent, 1),
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b',' => (Tok::Comma, 1),
            b'=' if next != b'=' => (Tok::Assign, 1),
            b'=' | b'<' | b'>' | b'!' | b'^' | b'&' | b'|' | b'~' | b'@' => {
                let two = matches!(
                    (b, next),
                    (b'=' | b'<' | b'>' | b'!', b'=') | (b'<', b'<') | (b'>', b'>')
                );
                let op = &self.text[start..start + if two { 2 } else { 1 }];
                return Err(self.error(start, SyntaxKind::UnsupportedOperator(op.to_string())));
            }
            _ => {
                let c = self.text[start..].chars().next().unwrap_or('\u{fffd}');
                return Err(self.error(start, SyntaxKind::UnexpectedChar(c)));
            }
        };
        self.pos += len;
        Ok((start, tok))
    }

    /// Digits of `radix` with single underscores between them. Returns whether any were read.
    fn digits(&mut self, radix: u32) -> Result<bool, SyntaxError> {
        let mut any = false;
        loop {
            let b = self.byte(self.pos);
            if is_digit(b, radix) {
                any = true;
                self.pos += 1;
            } else if b == b'_' && any && is_digit(self.byte(self.pos + 1), radix) {
                self.pos += 1;
            } else if b == b'_' {
                return Err(self.error(self.pos, SyntaxKind::BadNumber));
            } else {
                return Ok(any);
            }
        }
    }

    fn number(&mut self) -> Result<Tok<'a>, SyntaxError> {
        let start = self.pos;
        let radix = match (self.byte(start), self.byte(start + 1) | 0x20) {
            (b'0', b'x') => 16,
            (b'0', b'o') => 8,
            (b'0', b'b') => 2,
            _ => 10,
        };
        if radix != 10 {
            self.pos += 2;
            // Python allows one underscore right after the prefix: 0x_ff.
            if self.byte(self.pos) == b'_' && is_digit(self.byte(self.pos + 1), radix) {
                self.pos += 1;
            }
            let any = self.digits(radix)?;
            if !any || is_ident(self.byte(self.pos)) || self.byte(self.pos).is_ascii_digit() {
                return Err(self.error(start, SyntaxKind::BadNumber));
            }
            let digits: Vec<u8> = self.text.as_bytes()[start + 2..self.pos]
                .iter()
                .copied()
                .filter(|b| *b != b'_')
                .collect();
            return Ok(Tok::Num(big_literal(&digits, radix)));
        }
        self.digits(10)?;
        let mut is_float = false;
        if self.byte(self.pos) == b'.' {
            is_float = true;
            self.pos += 1;
            self.digits(10)?;
        }
        if self.byte(self.pos) | 0x20 == b'e' {
            let mut at = self.pos + 1;
            if matches!(self.byte(at), b'+' | b'-') {
                at += 1;
            }
            if self.byte(at).is_ascii_digit() {
                is_float = true;
                self.pos = at;
                self.digits(10)?;
            } else {
                return Err(self.error(start, SyntaxKind::BadNumber));
            }
        }
        let after = self.byte(self.pos);
        if after | 0x20 == b'j' {
            return Err(self.error(start, SyntaxKind::Imaginary));
        }
        if is_ident(after) {
            return Err(self.error(start, SyntaxKind::BadNumber));
        }
        let raw = &self.text[start..self.pos];
        // Underscores are rare; copy only when there are some.
        let owned;
        let clean = if raw.contains('_') {
            owned = raw.replace('_', "");
            owned.as_str()
        } else {
            raw
        };
        if is_float {
            return match clean.parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(Tok::Num(Ok(Number::Float(f)))),
                Ok(_) => Ok(Tok::Num(Err(MathError::Overflow))),
                Err(_) => Err(self.error(start, SyntaxKind::BadNumber)),
            };
        }
        let bytes = clean.as_bytes();
        if bytes.len() > 1 && bytes[0] == b'0' && bytes.iter().any(|b| *b != b'0') {
            return Err(self.error(start, SyntaxKind::BadNumber));
        }
        if bytes.len() <= 18 {
            // At most 18 digits: fits an i64 without overflow checks.
            let v = bytes
                .iter()
                .fold(0i64, |acc, b| acc * 10 + i64::from(b - b'0'));
            return Ok(Tok::Num(Ok(Number::Int(v))));
        }
        Ok(Tok::Num(big_literal(bytes, 10)))
    }
}

fn big_literal(digits: &[u8], radix: u32) -> Result<Number, MathError> {
    // Reject before converting: a literal's cost grows with its length.
    let bits_per_digit = match radix {
        16 => 4,
        8 => 3,
        2 => 1,
        _ => 4,
    };
    let significant = digits.iter().skip_while(|b| **b == b'0').count();
    if (radix == 10 && significant > MAX_INT_DIGITS)
        || significant * bits_per_digit > 4 * MAX_INT_DIGITS
    {
        return Err(MathError::TooLarge);
    }
    match BigUint::parse_bytes(digits, radix) {
        Some(v) => match v.to_i64() {
            Some(i) => Ok(Number::Int(i)),
            None => Number::from_big(v.into()),
        },
        None => Ok(Number::Int(0)),
    }
}

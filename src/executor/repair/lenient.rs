//! A tolerant reader for the JSON a model almost wrote: trailing commas, single-quoted strings,
//! unquoted keys, Python and JavaScript literals, comments, line breaks inside strings, and
//! closing brackets missing at the very end. It is only used after strict parsing failed.
//!
//! It never guesses: a bare word other than a known literal, a missing comma or colon, a
//! string that is not closed, a key without a value are faults, not repairs. One pass, one
//! byte at a time (linear time), nesting bounded like `serde_json`'s, no panics.

use serde_json::{Map, Number, Value};

/// Deeper than this is refused, as `serde_json` does (128 levels).
pub const MAX_DEPTH: usize = 128;

/// One kind of repair the reader made (each is reported once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    Fence,
    Prose,
    TrailingComma,
    SingleQuotes,
    UnquotedKey,
    /// A Python or JavaScript literal and what it became: (`True`, `true`).
    Literal(&'static str, &'static str),
    Comment,
    LineBreakInString,
    /// The brackets added at the end, in order (`]}`).
    Closed(String),
    DoubleEncoded,
}

/// Why the text could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Not JSON, even leniently.
    Invalid,
    /// The text ends early: inside a string, after a key or a colon, or where closing brackets
    /// would be needed and may not be added.
    Incomplete,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

/// Reads one value from `text` starting at byte `start`. `may_close`: closing brackets missing
/// at the end may be added (the model ended its reply itself). Returns the value and the byte
/// where it ended.
pub fn read_value(
    text: &str,
    start: usize,
    may_close: bool,
    fixes: &mut Vec<Fix>,
) -> Result<(Value, usize), Fault> {
    let mut reader = Reader {
        s: text.as_bytes(),
        text,
        pos: start,
        may_close,
        fixes,
        open: Vec::new(),
        closed: false,
    };
    let value = reader.value()?;
    Ok((value, reader.pos))
}

struct Reader<'a, 'f> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
    may_close: bool,
    fixes: &'f mut Vec<Fix>,
    /// The closing bracket of every container being read, innermost last.
    open: Vec<u8>,
    /// The end was reached inside containers and they were closed.
    closed: bool,
}

/// Adds `fix` unless it was recorded already.
pub fn note(fixes: &mut Vec<Fix>, fix: Fix) {
    if !fixes.contains(&fix) {
        fixes.push(fix);
    }
}

impl Reader<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn note(&mut self, fix: Fix) {
        note(self.fixes, fix);
    }

    /// Skips whitespace and comments.
    fn skip(&mut self) -> Result<(), Fault> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.s.get(self.pos + 1) == Some(&b'/') => {
                    self.note(Fix::Comment);
                    while let Some(c) = self.peek() {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some(b'/') if self.s.get(self.pos + 1) == Some(&b'*') => {
                    self.note(Fix::Comment);
                    let rest = &self.text[self.pos + 2..];
                    match rest.find("*/") {
                        Some(end) => self.pos += 2 + end + 2,
                        None => return Err(Fault::Incomplete),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// The end came where the innermost container may be closed: closes every open one when
    /// that is allowed.
    fn close_at_end(&mut self) -> Result<(), Fault> {
        if !self.may_close {
            return Err(Fault::Incomplete);
        }
        if !self.closed {
            self.closed = true;
            let brackets: String = self.open.iter().rev().map(|&b| b as char).collect();
            self.note(Fix::Closed(brackets));
        }
        Ok(())
    }

    fn value(&mut self) -> Result<Value, Fault> {
        self.skip()?;
        match self.peek() {
            None => Err(Fault::Incomplete),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(q @ (b'"' | b'\'')) => self.string(q).map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(c) if is_word_start(c) => self.literal(),
            Some(_) => Err(Fault::Invalid),
        }
    }

    fn enter(&mut self, close: u8) -> Result<(), Fault> {
        if self.open.len() >= MAX_DEPTH {
            return Err(Fault::TooDeep);
        }
        self.open.push(close);
        self.pos += 1;
        Ok(())
    }

    /// After an item: a comma (perhaps trailing), the closing bracket, or the end.
    /// Returns true when the container is over.
    fn after_item(&mut self, close: u8) -> Result<bool, Fault> {
        self.skip()?;
        match self.peek() {
            None => self.close_at_end().map(|()| true),
            Some(c) if c == close => {
                self.pos += 1;
                Ok(true)
            }
            Some(b',') => {
                self.pos += 1;
                self.skip()?;
                match self.peek() {
                    Some(c) if c == close => {
                        self.note(Fix::TrailingComma);
                        self.pos += 1;
                        Ok(true)
                    }
                    None => {
                        self.note(Fix::TrailingComma);
                        self.close_at_end().map(|()| true)
                    }
                    Some(_) => Ok(false),
                }
            }
            Some(_) => Err(Fault::Invalid),
        }
    }

    /// Right after an opening bracket: whether the container is already over (closed at once,
    /// or at the end of the text).
    fn empty(&mut self, close: u8) -> Result<bool, Fault> {
        self.skip()?;
        let over = match self.peek() {
            None => {
                self.close_at_end()?;
                true
            }
            Some(c) if c == close => {
                self.pos += 1;
                true
            }
            Some(_) => false,
        };
        if over {
            self.open.pop();
        }
        Ok(over)
    }

    fn object(&mut self) -> Result<Value, Fault> {
        self.enter(b'}')?;
        let mut map = Map::new();
        if self.empty(b'}')? {
            return Ok(Value::Object(map));
        }
        loop {
            self.skip()?;
            let key = match self.peek() {
                None => return Err(Fault::Incomplete),
                Some(q @ (b'"' | b'\'')) => self.string(q)?,
                Some(c) if is_word_start(c) => {
                    self.note(Fix::UnquotedKey);
                    self.word().to_owned()
                }
                Some(_) => return Err(Fault::Invalid),
            };
            self.skip()?;
            match self.peek() {
                None => return Err(Fault::Incomplete),
                Some(b':') => self.pos += 1,
                Some(_) => return Err(Fault::Invalid),
            }
            let value = self.value()?;
            map.insert(key, value);
            if self.after_item(b'}')? {
                break;
            }
        }
        self.open.pop();
        Ok(Value::Object(map))
    }

    fn array(&mut self) -> Result<Value, Fault> {
        self.enter(b']')?;
        let mut items = Vec::new();
        if self.empty(b']')? {
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            if self.after_item(b']')? {
                break;
            }
        }
        self.open.pop();
        Ok(Value::Array(items))
    }

    fn word(&mut self) -> &str {
        let start = self.pos;
        while self.peek().is_some_and(is_word_char) {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    fn literal(&mut self) -> Result<Value, Fault> {
        let (value, fix) = match self.word() {
            "true" => (Value::Bool(true), None),
            "false" => (Value::Bool(false), None),
            "null" => (Value::Null, None),
            "True" => (Value::Bool(true), Some(Fix::Literal("True", "true"))),
            "False" => (Value::Bool(false), Some(Fix::Literal("False", "false"))),
            "None" => (Value::Null, Some(Fix::Literal("None", "null"))),
            "undefined" => (Value::Null, Some(Fix::Literal("undefined", "null"))),
            // A bare word is never taken for a string: that would be a guess.
            _ => return Err(Fault::Invalid),
        };
        if let Some(fix) = fix {
            self.note(fix);
        }
        Ok(value)
    }

    /// A number exactly as JSON writes it (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    fn number(&mut self) -> Result<Value, Fault> {
        let end = number_end(self.s, self.pos).ok_or(Fault::Invalid)?;
        let slice = &self.text[self.pos..end];
        self.pos = end;
        if self.peek().is_some_and(is_word_char) {
            return Err(Fault::Invalid); // `12abc`, `1.5.2`
        }
        match serde_json::from_str::<Number>(slice) {
            Ok(n) => Ok(Value::Number(n)),
            Err(_) => Err(Fault::Invalid), // out of f64 range
        }
    }

    /// A string in double or single quotes, with JSON's escapes (and `\'`). A raw line break
    /// is kept as the character it is; a string the text ends inside is never completed.
    fn string(&mut self, quote: u8) -> Result<String, Fault> {
        if quote == b'\'' {
            self.note(Fix::SingleQuotes);
        }
        self.pos += 1;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(c) = self.peek() {
                if c == quote || c == b'\\' || c < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.text[start..self.pos]);
            match self.peek() {
                None => return Err(Fault::Incomplete),
                Some(c) if c == quote => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(c @ (b'\n' | b'\r' | b'\t')) => {
                    self.note(Fix::LineBreakInString);
                    out.push(c as char);
                    self.pos += 1;
                }
                Some(_) => return Err(Fault::Invalid),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), Fault> {
        let Some(&c) = self.s.get(self.pos + 1) else {
            return Err(Fault::Incomplete);
        };
        self.pos += 2;
        let ch = match c {
            b'"' => '"',
            b'\'' => '\'',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.hex4()?;
                if (0xD800..0xDC00).contains(&first) {
                    if self.s.get(self.pos) != Some(&b'\\')
                        || self.s.get(self.pos + 1) != Some(&b'u')
                    {
                        return Err(self.fault_if_end(2));
                    }
                    self.pos += 2;
                    let second = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&second) {
                        return Err(Fault::Invalid);
                    }
                    let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                    char::from_u32(code).ok_or(Fault::Invalid)?
                } else {
                    char::from_u32(first).ok_or(Fault::Invalid)?
                }
            }
            _ => return Err(Fault::Invalid),
        };
        out.push(ch);
        Ok(())
    }

    /// Incomplete when fewer than `need` bytes remain, else invalid.
    fn fault_if_end(&self, need: usize) -> Fault {
        if self.pos + need > self.s.len() {
            Fault::Incomplete
        } else {
            Fault::Invalid
        }
    }

    fn hex4(&mut self) -> Result<u32, Fault> {
        let Some(digits) = self.s.get(self.pos..self.pos + 4) else {
            return Err(Fault::Incomplete);
        };
        let mut code = 0u32;
        for &d in digits {
            let v = (d as char).to_digit(16).ok_or(Fault::Invalid)?;
            code = code * 16 + v;
        }
        self.pos += 4;
        Ok(code)
    }
}

fn is_word_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$'
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// Where a JSON number starting at `start` ends, or None when none starts there.
pub fn number_end(s: &[u8], start: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        let from = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    let mut i = start;
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    i = match s.get(i) {
        Some(b'0') => i + 1,
        Some(b'1'..=b'9') => digits(i)?,
        _ => return None,
    };
    if s.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

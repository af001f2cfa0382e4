//! An incremental parser of server-sent events (the `text/event-stream` format): bytes go in
//! as the network delivers them, split anywhere (inside a line, inside a UTF-8 character),
//! and whole events come out.

/// One event: its `event:` name (empty when none was sent) and its `data:` lines joined by
/// newlines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    pub event: String,
    pub data: String,
}

/// The most a single line may hold before the stream is refused (a server that never sends a
/// newline must not fill the memory).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

#[derive(Debug, Default)]
pub struct Parser {
    line: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    /// The previous chunk ended in `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl Parser {
    /// Feeds `chunk`; finished events are appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> Result<(), String> {
        let mut rest = chunk;
        if self.after_cr && rest.first() == Some(&b'\n') {
            rest = &rest[1..];
        }
        self.after_cr = false;
        while let Some(at) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..at]);
            let ending = rest[at];
            rest = &rest[at + 1..];
            if ending == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    _ => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            self.line_done(&String::from_utf8_lossy(&line), out);
        }
        self.line.extend_from_slice(rest);
        if self.line.len() > MAX_LINE {
            return Err(format!(
                "a server-sent event line is longer than {MAX_LINE} bytes"
            ));
        }
        Ok(())
    }

    /// The end of the body: an event not yet closed by a blank line is still delivered.
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&String::from_utf8_lossy(&line), out);
        }
        self.dispatch(out);
    }

    fn line_done(&mut self, line: &str, out: &mut Vec<Event>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return; // a comment (keep-alive)
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {} // id, retry and unknown fields mean nothing to a model stream
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        if self.has_data {
            out.push(Event {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
            });
        } else {
            self.event.clear();
        }
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_pieces(text: &str, piece: usize) -> Vec<Event> {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        for chunk in text.as_bytes().chunks(piece) {
            parser.feed(chunk, &mut out).unwrap();
        }
        parser.finish(&mut out);
        out
    }

    #[test]
    fn events_come_out_whole_however_the_bytes_are_split() {
        let text =
            "event: message_start\ndata: {\"a\":\ndata:\"é\"}\n x: y\n\n: ping\n\ndata: [DONE]\r\n\r\n";
        let expected = vec![
            Event {
                event: "message_start".into(),
                data: "{\"a\":\n\"é\"}".into(),
            },
            Event {
                event: String::new(),
                data: "[DONE]".into(),
            },
        ];
        for piece in 1..=text.len() {
            assert_eq!(parse_in_pieces(text, piece), expected, "pieces of {piece}");
        }
    }

    #[test]
    fn an_unterminated_last_event_is_delivered_and_empty_ones_are_not() {
        let out = parse_in_pieces("event: x\n\ndata: tail", 4);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data, "tail");
        assert_eq!(out[0].event, "");
    }

    #[test]
    fn carriage_returns_alone_end_lines() {
        let out = parse_in_pieces("data: a\rdata: b\r\r", 1);
        assert_eq!(out[0].data, "a\nb");
    }
}

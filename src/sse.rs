//! What is put in front of the `sse-stream` crate, the one parser of server-sent events here
//! (the MCP streamable-HTTP transport's streams and the model client's): the crate reads a
//! stream of bytes, so that stream is where its reading is extended.
//!
//! - [`bounded`] ends a stream at an event over a size (the crate holds a line, and an event,
//!   however long it grows).
//! - [`model_events`] adds what a model's stream needs beyond the crate ([`Fields`]): the
//!   standard has a reader ignore a field it does not know, a line without a colon, `id` and
//!   `retry` lines it cannot read and a second `event` line, where the crate refuses each (and
//!   ends the stream); a last event the body ends without its empty line is still delivered
//!   (the crate drops it); an event without data is none.
//!
//! Decisions where the standard and the model client part: in an event with two `event`
//! lines the first one names it (the standard takes the last; a model server never sends
//! two), and a stream that is not UTF-8 ends with the crate's error (the bytes are not
//! replaced).

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use sse_stream::{Error, Sse, SseStream};

/// `bytes`, ended with an error at the first event of more than `max` bytes (measured by
/// [`EventSize`]); after an error nothing more is read. The error's text is the one rmcp's own
/// limiter gives.
pub fn bounded<S, E>(bytes: S, max: usize) -> impl Stream<Item = Result<Bytes, std::io::Error>>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut size = EventSize::default();
    bytes.scan(false, move |ended, chunk| {
        let chunk = chunk.map_err(std::io::Error::other).and_then(|chunk| {
            let too_large = || format!("SSE event exceeded the maximum size of {max} bytes");
            match size.observe(&chunk, max) {
                true => Ok(chunk),
                false => Err(std::io::Error::other(too_large())),
            }
        });
        // After an error nothing more is read.
        let stop = std::mem::replace(ended, chunk.is_err());
        std::future::ready((!stop).then_some(chunk))
    })
}

/// The events of a model's stream read from `bytes` (see the module documentation): each with
/// its data, its name if it has one. An error of `bytes` comes out as [`Error::Body`] holding
/// a [`std::io::Error`] whose source is `bytes`' own error; the reader stops at the first error.
pub fn model_events<S, E>(bytes: S, max: usize) -> BoxStream<'static, Result<Sse, Error>>
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut fields = Fields::default();
    let lines = bounded(bytes, max)
        .map(Some)
        .chain(futures::stream::iter([None]))
        .scan(false, move |failed, chunk| {
            let next = match chunk {
                Some(chunk) => {
                    *failed |= chunk.is_err();
                    Some(chunk.map(|c| fields.keep(&c)))
                }
                // A body that ended well: its last line and event are ended (two empty lines
                // add no event); after an error nothing is.
                None => (!*failed).then(|| Ok(Bytes::from_static(b"\n\n"))),
            };
            std::future::ready(next)
        });
    SseStream::from_bytes_stream(lines)
        .filter(|event| std::future::ready(!matches!(event, Ok(Sse { data: None, .. }))))
        .boxed()
}

/// The longest field name kept, with its colon (`event:`).
const HEAD: usize = 6;

/// What a line is, once its start is read.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// Its field is not known yet (its start is held).
    #[default]
    Head,
    Keep,
    Skip,
}

/// Holds a stream of bytes to the lines a model's stream needs, in the form the crate reads:
/// `data` and `event` lines and the empty lines that end events, each ended by `\n`. Every
/// other line goes (comments, `id`, `retry`, fields the standard does not know); a `data` or
/// `event` line without a colon is that field with an empty value, as the standard reads it.
#[derive(Default)]
pub struct Fields {
    /// The start of the line while its field is not known (at most [`HEAD`] bytes).
    head: Vec<u8>,
    line: Line,
    /// The event being read has its `event` line.
    named: bool,
    /// The previous chunk ended in `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl Fields {
    /// The kept part of the next chunk of the stream.
    pub fn keep(&mut self, mut chunk: &[u8]) -> Bytes {
        let mut out = Vec::with_capacity(chunk.len() + HEAD);
        if chunk.is_empty() {
            return Bytes::new();
        }
        if std::mem::take(&mut self.after_cr) && chunk[0] == b'\n' {
            chunk = &chunk[1..];
        }
        while !chunk.is_empty() {
            let Some(at) = memchr::memchr2(b'\n', b'\r', chunk) else {
                self.part(chunk, &mut out);
                break;
            };
            self.part(&chunk[..at], &mut out);
            let end = chunk[at];
            chunk = &chunk[at + 1..];
            if end == b'\r' {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            self.line_end(&mut out);
        }
        out.into()
    }

    /// Takes part of a line (no line end in it).
    fn part(&mut self, part: &[u8], out: &mut Vec<u8>) {
        match self.line {
            Line::Keep => out.extend_from_slice(part),
            Line::Skip => {}
            Line::Head => {
                let colon = memchr::memchr(b':', part);
                let upto = colon.map_or(part.len(), |at| at + 1);
                let room = HEAD - self.head.len();
                self.head.extend_from_slice(&part[..upto.min(room)]);
                if colon.is_some() && upto <= room {
                    let name = &self.head[..self.head.len() - 1];
                    self.line = match kept(&mut self.named, name) {
                        true => Line::Keep,
                        false => Line::Skip,
                    };
                    if self.line == Line::Keep {
                        out.extend_from_slice(&self.head);
                        out.extend_from_slice(&part[upto..]);
                    }
                } else if self.head.len() == HEAD {
                    self.line = Line::Skip; // no kept name is that long
                }
            }
        }
    }

    /// A line ended.
    fn line_end(&mut self, out: &mut Vec<u8>) {
        match self.line {
            Line::Keep => out.push(b'\n'),
            Line::Skip => {}
            Line::Head if self.head.is_empty() => {
                out.push(b'\n'); // the empty line that ends an event
                self.named = false;
            }
            Line::Head => {
                // A line without a colon: the field it names, with an empty value.
                let name = std::mem::take(&mut self.head);
                if kept(&mut self.named, &name) {
                    out.extend_from_slice(&name);
                    out.extend_from_slice(b":\n");
                }
            }
        }
        self.head.clear();
        self.line = Line::Head;
    }
}

/// Whether a line of field `name` is kept (of `event` lines, the event's first only; `named`:
/// the event has had one).
fn kept(named: &mut bool, name: &[u8]) -> bool {
    match name {
        b"data" => true,
        b"event" => !std::mem::replace(named, true),
        _ => false,
    }
}

/// The size of the event being received: the bytes of its lines so far (line ends, `\n`, `\r`
/// or `\r\n`, not counted); an empty line ends it. A comment line (starting with `:`) counts
/// while it arrives (the parser holds it) and is taken off once ended, as in rmcp's limiter.
#[derive(Default)]
pub struct EventSize {
    event: usize,
    line: usize,
    comment: bool,
    after_cr: bool,
}

impl EventSize {
    /// Takes the next chunk of the stream; false once an event is over `max` bytes.
    pub fn observe(&mut self, mut chunk: &[u8], max: usize) -> bool {
        while let Some(&first) = chunk.first() {
            let at = memchr::memchr2(b'\n', b'\r', chunk).unwrap_or(chunk.len());
            if at > 0 {
                if self.line == 0 {
                    self.comment = first == b':';
                }
                (self.line, self.event, self.after_cr) = (self.line + at, self.event + at, false);
                if self.event > max {
                    return false;
                }
            }
            let Some(&end) = chunk.get(at) else {
                break;
            };
            // A line ended, unless this is the `\n` of a `\r\n`.
            if !(end == b'\n' && std::mem::take(&mut self.after_cr)) {
                if self.comment {
                    self.event -= self.line;
                }
                if self.line == 0 {
                    self.event = 0;
                }
                (self.line, self.comment, self.after_cr) = (0, false, end == b'\r');
            }
            chunk = &chunk[at + 1..];
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    /// The events of `text` given to [`model_events`] in pieces of `piece` bytes.
    fn parse_in_pieces(text: &str, piece: usize) -> Vec<(String, String)> {
        let chunks: Vec<Result<Bytes, std::io::Error>> = text
            .as_bytes()
            .chunks(piece)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        let events = model_events(futures::stream::iter(chunks), 1 << 20);
        let events = events.collect::<Vec<_>>().now_or_never().unwrap();
        events
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                (e.event.unwrap_or_default(), e.data.unwrap())
            })
            .collect()
    }

    fn event(name: &str, data: &str) -> (String, String) {
        (name.to_string(), data.to_string())
    }

    #[test]
    fn events_come_out_whole_however_the_bytes_are_split() {
        let text =
            "event: message_start\ndata: {\"a\":\ndata:\"é\"}\n x: y\n\n: ping\n\ndata: [DONE]\r\n\r\n";
        let expected = vec![
            event("message_start", "{\"a\":\n\"é\"}"),
            event("", "[DONE]"),
        ];
        for piece in 1..=text.len() {
            assert_eq!(parse_in_pieces(text, piece), expected, "pieces of {piece}");
        }
    }

    #[test]
    fn an_unterminated_last_event_is_delivered_and_empty_ones_are_not() {
        let out = parse_in_pieces("event: x\n\ndata: tail", 4);
        assert_eq!(out, vec![event("", "tail")]);
        for end in ["\r", "\n", "\r\n", "\n\n"] {
            let out = parse_in_pieces(&format!("data: tail{end}"), 1);
            assert_eq!(out, vec![event("", "tail")], "{end:?}");
        }
    }

    #[test]
    fn carriage_returns_alone_end_lines() {
        let out = parse_in_pieces("data: a\rdata: b\r\r", 1);
        assert_eq!(out, vec![event("", "a\nb")]);
    }

    /// What the crate alone would refuse, ending the stream: fields it does not know, lines
    /// without a colon, `id`/`retry` lines it cannot read, two `event` lines.
    #[test]
    fn lines_the_standard_ignores_do_not_end_the_stream() {
        let text = "retry: soon\nid: 1\nid: 2\nfoo: bar\nlonger_field: x\nevent\ndata\n\n\
                    event: a\nevent: b\ndatum: no\ndata: 1\nevent_: x\n\n";
        for piece in 1..=text.len() {
            let out = parse_in_pieces(text, piece);
            assert_eq!(
                out,
                vec![event("", ""), event("a", "1")],
                "pieces of {piece}"
            );
        }
    }

    /// After an error of the body, the event it cut is not delivered; an empty chunk between
    /// the `\r` and `\n` of one line end does not split it.
    #[test]
    fn an_event_cut_by_an_error_is_dropped_and_empty_chunks_change_nothing() {
        let chunks = [
            Ok(Bytes::from_static(b"data: a\r")),
            Ok(Bytes::new()),
            Ok(Bytes::from_static(b"\ndata: b\n\ndata: cut")),
            Err(std::io::Error::other("connection reset")),
        ];
        let events = model_events(futures::stream::iter(chunks), 1 << 20);
        let out = events.collect::<Vec<_>>().now_or_never().unwrap();
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0].as_ref().unwrap().data.as_deref(), Some("a\nb"));
        assert!(out[1]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("connection reset"));
    }

    #[test]
    fn an_event_over_the_bound_ends_the_stream_with_an_error() {
        let chunks = [Ok::<_, std::io::Error>(Bytes::from(format!(
            "data: {}\n",
            "x".repeat(30)
        )))];
        let events = model_events(futures::stream::iter(chunks), 20);
        let out = events.collect::<Vec<_>>().now_or_never().unwrap();
        let err = out[0].as_ref().unwrap_err().to_string();
        assert!(
            err.contains("SSE event exceeded the maximum size of 20 bytes"),
            "{err}"
        );
        assert_eq!(out.len(), 1, "nothing is read after the error");
    }

    #[test]
    fn an_event_is_measured_up_to_its_empty_line_whatever_the_line_ends() {
        for end in ["\n", "\r", "\r\n"] {
            let mut size = EventSize::default();
            let event = format!("data: 12345{end}data: 678{end}{end}");
            assert!(size.observe(event.as_bytes(), 20), "{end:?}");
            assert_eq!(size.event, 0, "{end:?}: the empty line ends the event");
            assert!(!size.observe(b"data: 123456789012345", 20), "{end:?}");
        }
        // Split anywhere, even between the \r and \n of one line end.
        let mut size = EventSize::default();
        for piece in ["data: 1234", "5\r", "\ndata", ": 678\r", "\n", "\r", "\n"] {
            assert!(size.observe(piece.as_bytes(), 20));
        }
        assert_eq!((size.event, size.line), (0, 0));
        assert!(size.observe(b"data: 12345678901234", 20));
        assert!(!size.observe(b"5", 20));
        // Comment lines (keep-alives) are not part of any event once they end, however many;
        // one still arriving counts, since the parser holds it.
        let mut size = EventSize::default();
        let comments = format!(
            ":{}\n:{}\r\ndata: 1234567890\n",
            "p".repeat(15),
            "q".repeat(15)
        );
        assert!(size.observe(comments.as_bytes(), 20));
        assert!(size.observe(b":", 20) && size.observe(b"xx\n", 20));
        assert_eq!(size.event, 16);
        let mut size = EventSize::default();
        assert!(size.observe(b":0123456789", 20));
        assert!(
            !size.observe(b"0123456789", 20),
            "a comment line of 21 bytes still arriving"
        );
        // A line starting with ':' later in a line is no comment.
        let mut size = EventSize::default();
        assert!(!size.observe(b"data: 12345678901234:5678", 20));
    }
}

//! `read_file(file_path, offset, limit)`: a page of a text file with line numbers.
//!
//! The file is streamed, never loaded whole: skipping to `offset` counts newlines in a fixed
//! buffer (a 2 GB file costs no more memory than a small one), and a page stops at `limit`
//! lines or `max_read_bytes` of output, whichever comes first, saying which offset to read on
//! from. Lines longer than `max_line_chars` are cut. A file whose first 8 KiB hold a NUL byte
//! is binary and refused with its kind (PNG, PDF, ELF, ...). Carriage returns before newlines
//! and a UTF-8 byte-order mark are not shown (edits keep them); bytes that are not UTF-8 are
//! shown as `\xNN`, so nothing is lost or silently replaced.

use super::Workspace;
use crate::response::ToolResponse;
use serde_json::{json, Value};
use std::fs::File;
use std::io::Read;

const SNIFF_BYTES: usize = 8192;
const BUF_BYTES: usize = 256 * 1024;

/// Lines of a file read through a fixed buffer.
pub(super) struct Lines {
    file: File,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
}

impl Lines {
    pub fn new(file: File) -> Lines {
        Lines {
            file,
            buf: vec![0; BUF_BYTES],
            pos: 0,
            len: 0,
            eof: false,
        }
    }

    /// Reads more bytes after the unconsumed ones; false at end of file.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.buf.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        loop {
            match self.file.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.len += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The first bytes of the file, without consuming them.
    pub fn head(&mut self, n: usize) -> std::io::Result<&[u8]> {
        while self.len - self.pos < n && self.fill()? {}
        Ok(&self.buf[self.pos..self.len.min(self.pos + n)])
    }

    /// The next line (without its newline) into `out`, keeping at most `keep` bytes of it.
    /// Returns None at end of file.
    pub fn next(&mut self, keep: usize, out: &mut Vec<u8>) -> std::io::Result<Option<()>> {
        out.clear();
        let mut any = false;
        loop {
            if self.pos == self.len && !self.fill()? {
                return Ok(any.then_some(()));
            }
            any = true;
            let avail = &self.buf[self.pos..self.len];
            let (chunk, done) = match memchr::memchr(b'\n', avail) {
                Some(i) => (&avail[..i], i + 1),
                None => (avail, avail.len()),
            };
            let room = keep.saturating_sub(out.len());
            out.extend_from_slice(&chunk[..chunk.len().min(room)]);
            let found = done > chunk.len();
            self.pos += done;
            if found {
                return Ok(Some(()));
            }
        }
    }

    pub fn at_end(&mut self) -> std::io::Result<bool> {
        Ok(self.pos == self.len && !self.fill()?)
    }
}

/// The kind of a binary file, from its first bytes; None for text.
pub(super) fn binary_kind(head: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG", "PNG image"),
        (b"\xFF\xD8\xFF", "JPEG image"),
        (b"GIF8", "GIF image"),
        (b"%PDF", "PDF document"),
        (b"PK\x03\x04", "ZIP archive"),
        (b"\x1F\x8B", "gzip archive"),
        (b"\x7FELF", "ELF executable"),
        (b"SQLite format 3\0", "SQLite database"),
        (b"\xFD7zXZ\0", "xz archive"),
        (b"BZh", "bzip2 archive"),
        (b"\x28\xB5\x2F\xFD", "zstd archive"),
    ];
    if !head.contains(&0) && !MAGIC[..4].iter().any(|(m, _)| head.starts_with(m)) {
        return None;
    }
    Some(
        MAGIC
            .iter()
            .find(|(m, _)| head.starts_with(m))
            .map(|(_, k)| *k)
            .unwrap_or("binary data"),
    )
}

/// Text for bytes that may not be UTF-8: invalid bytes become `\xNN`. Also says whether any was.
pub(super) fn lossless(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02X}"));
                }
            }
            (out, true)
        }
    }
}

pub(super) fn run(ws: &Workspace, args: &Value) -> ToolResponse {
    let p = &ws.prompts;
    let rel = match ws.path(args, "file_path", false) {
        Ok(rel) => rel,
        Err(resp) => return resp,
    };
    let shown = rel.shown();
    let offset = match ws.count_arg(args, "offset", 1) {
        Ok(n) => n.max(1),
        Err(resp) => return resp,
    };
    let limit = match ws.count_arg(args, "limit", ws.opts.read_lines) {
        Ok(0) => return ws.bad_arg("limit", "a positive integer", &json!(0)),
        Ok(n) => n,
        Err(resp) => return resp,
    };
    let (fd, st) = match ws.root.open_file(&rel) {
        Ok(pair) => pair,
        Err(r) => return ws.refusal(&shown, r),
    };
    let io_fail = |e: std::io::Error| {
        let errno = nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(nix::libc::EIO));
        ToolResponse::error(ws.io_text("reading", &shown, errno))
    };
    let mut lines = Lines::new(File::from(fd));
    let head = match lines.head(SNIFF_BYTES) {
        Ok(h) => h,
        Err(e) => return io_fail(e),
    };
    if let Some(kind) = binary_kind(head) {
        return ToolResponse::error(p.fmt(
            "workspace.msg.read.binary",
            &[
                ("path", &shown),
                ("kind", kind),
                ("size", &st.st_size.to_string()),
            ],
        ));
    }
    let bom = head.starts_with(b"\xEF\xBB\xBF");
    ws.seen.record(super::freshness::run_of(args), &shown, &st);
    if head.is_empty() {
        return ToolResponse::ok(p.fmt("workspace.msg.read.empty", &[("path", &shown)]))
            .with_data(json!({"path": shown, "lines": 0}));
    }
    let keep = ws.opts.max_line_chars.saturating_mul(4).saturating_add(4);
    let mut line = Vec::new();
    let mut n: u64 = 0;
    while n + 1 < offset {
        match lines.next(0, &mut line) {
            Ok(Some(())) => n += 1,
            Ok(None) => {
                return ToolResponse::error(p.fmt(
                    "workspace.msg.read.past_end",
                    &[
                        ("offset", &offset.to_string()),
                        ("path", &shown),
                        ("lines", &n.to_string()),
                    ],
                ))
            }
            Err(e) => return io_fail(e),
        }
    }
    let mut out = String::new();
    let mut any_invalid = false;
    let mut shown_lines = 0u64;
    let mut footer = None;
    loop {
        if shown_lines == limit {
            match lines.at_end() {
                Ok(true) => {}
                Ok(false) => footer = Some(("workspace.msg.read.more", n + 1)),
                Err(e) => return io_fail(e),
            }
            break;
        }
        match lines.next(keep, &mut line) {
            Ok(Some(())) => {}
            Ok(None) => break,
            Err(e) => return io_fail(e),
        }
        let mut bytes = &line[..];
        if n == 0 && bom {
            bytes = &bytes[3..];
        }
        if let Some(stripped) = bytes.strip_suffix(b"\r") {
            bytes = stripped;
        }
        let (mut text, invalid) = lossless(bytes);
        any_invalid |= invalid;
        if let Some((at, _)) = text.char_indices().nth(ws.opts.max_line_chars) {
            text.truncate(at);
            text.push_str(&p.fmt(
                "workspace.msg.read.long_line",
                &[("max", &ws.opts.max_line_chars.to_string())],
            ));
        } else if line.len() >= keep {
            text.push_str(&p.fmt(
                "workspace.msg.read.long_line",
                &[("max", &ws.opts.max_line_chars.to_string())],
            ));
        }
        let numbered = format!("{:>6}\t{}\n", n + 1, text);
        if shown_lines > 0 && out.len() + numbered.len() > ws.opts.max_read_bytes {
            footer = Some(("workspace.msg.read.byte_cap", n + 1));
            break;
        }
        out.push_str(&numbered);
        n += 1;
        shown_lines += 1;
    }
    if shown_lines == 0 {
        return ToolResponse::error(p.fmt(
            "workspace.msg.read.past_end",
            &[
                ("offset", &offset.to_string()),
                ("path", &shown),
                ("lines", &n.to_string()),
            ],
        ));
    }
    let mut data = json!({"path": shown, "offset": offset, "lines": shown_lines});
    if any_invalid {
        out.push_str(&p.fmt("workspace.msg.read.invalid_utf8", &[]));
        out.push('\n');
        data["invalid_utf8"] = json!(true);
    }
    if let Some((key, next)) = footer {
        out.push_str(&p.fmt(
            key,
            &[
                ("next", &next.to_string()),
                ("max", &ws.opts.max_read_bytes.to_string()),
            ],
        ));
        data["next_offset"] = json!(next);
    } else if out.ends_with('\n') {
        out.pop();
    }
    ToolResponse::ok(out).with_data(data)
}

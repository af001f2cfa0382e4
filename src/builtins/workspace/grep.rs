//! `grep`: ripgrep's own crates in process. `grep-regex` compiles the pattern (Rust regex
//! syntax, or a literal with `fixed_strings`), `grep-searcher` searches each file (line by
//! line, context lines, binary files skipped at their first NUL byte, a UTF-8/UTF-16 BOM sniffed
//! as ripgrep does), and the `ignore` walker (see `walk.rs`) picks the files in parallel, with
//! ripgrep's `-g` globs and `--type` definitions.
//!
//! Output follows `rg --no-heading --with-filename --sort path` exactly: `path:line:text` for
//! matches, `path-line-text` for context lines, `--` between separated groups, `path` in
//! files_with_matches mode and `path:count` (matching lines) in count mode; so results are
//! sorted by path and the same on every call. `head_limit` caps output lines (files, counts)
//! and `max_output_bytes` the text; the model is told how many it did not see.

use super::walk::{relative, sort_paths, walker, Batch, DirCache};
use super::Workspace;
use crate::response::ToolResponse;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::WalkState;
use serde_json::{json, Value};
use std::sync::Mutex;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Content,
    Files,
    Count,
}

/// What one file contributed: its output lines (content mode) and its matching-line count.
struct FileHits {
    lines: Vec<String>,
    count: u64,
}

struct Collect<'a> {
    shown: &'a str,
    mode: Mode,
    numbers: bool,
    max_chars: usize,
    hits: FileHits,
}

impl Collect<'_> {
    fn line(&mut self, sep: char, number: Option<u64>, bytes: &[u8]) {
        let mut body = bytes;
        if let Some(b) = body.strip_suffix(b"\n") {
            body = b;
        }
        let mut text = String::from_utf8_lossy(body).into_owned();
        if let Some((at, _)) = text.char_indices().nth(self.max_chars) {
            text.truncate(at);
            text.push('…');
        }
        let line = match (self.numbers, number) {
            (true, Some(n)) => format!("{}{sep}{n}{sep}{text}", self.shown),
            _ => format!("{}{sep}{text}", self.shown),
        };
        self.hits.lines.push(line);
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.hits.count += 1;
        match self.mode {
            Mode::Files => return Ok(false),
            Mode::Count => {}
            Mode::Content => self.line(':', mat.line_number(), mat.bytes()),
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        if self.mode == Mode::Content {
            self.line('-', ctx.line_number(), ctx.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, std::io::Error> {
        if self.mode == Mode::Content {
            self.hits.lines.push("--".into());
        }
        Ok(true)
    }
}

fn opt_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

pub(super) fn run(ws: &Workspace, args: &Value) -> ToolResponse {
    let p = &ws.prompts;
    let pattern = match args.get("pattern") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        Some(Value::String(_)) => {
            return ToolResponse::error(p.fmt("workspace.msg.empty_path", &[("param", "pattern")]))
        }
        other => return ws.bad_arg("pattern", "a string", other.unwrap_or(&Value::Null)),
    };
    let mode = match args
        .get("output_mode")
        .and_then(Value::as_str)
        .map(str::trim)
    {
        None | Some("files_with_matches") => Mode::Files,
        Some("content") => Mode::Content,
        Some("count") => Mode::Count,
        Some(other) => {
            return ToolResponse::error(p.fmt(
                "workspace.msg.grep.bad_mode",
                &[("mode", &crate::builtins::cli::tokenize::py_repr_str(other))],
            ))
        }
    };
    let flags = (|| {
        Ok::<_, ToolResponse>((
            ws.bool_arg(args, "-i", false)?,
            ws.bool_arg(args, "-n", true)?,
            ws.count_arg(args, "-A", 0)?,
            ws.count_arg(args, "-B", 0)?,
            ws.count_arg(args, "-C", 0)?,
            ws.bool_arg(args, "fixed_strings", false)?,
            ws.bool_arg(args, "hidden", false)?,
            ws.count_arg(args, "head_limit", ws.opts.max_entries)?,
        ))
    })();
    let (insensitive, numbers, after, before, around, fixed, hidden, limit) = match flags {
        Ok(f) => f,
        Err(resp) => return resp,
    };
    let (after, before) = if around > 0 && after == 0 && before == 0 {
        (around, around)
    } else {
        (after, before)
    };
    let rel = match ws.path(args, "path", true) {
        Ok(rel) => rel,
        Err(resp) => return resp,
    };
    let shown_base = rel.shown();
    let matcher = match RegexMatcherBuilder::new()
        .case_insensitive(insensitive)
        .fixed_strings(fixed)
        .line_terminator(Some(b'\n'))
        .build(pattern)
    {
        Ok(m) => m,
        Err(e) => {
            return ToolResponse::error(
                p.fmt("workspace.msg.grep.bad_pattern", &[("err", &e.to_string())]),
            )
        }
    };
    let mut searcher_builder = SearcherBuilder::new();
    searcher_builder
        .line_number(true)
        .before_context(before.min(1000) as usize)
        .after_context(after.min(1000) as usize)
        .binary_detection(BinaryDetection::quit(b'\x00'));
    let searcher_builder = &searcher_builder;
    let max_chars = ws.opts.max_line_chars;
    let search =
        |searcher: &mut Searcher, cache: &mut DirCache<'_>, shown: &str| -> Option<FileHits> {
            let (file, _) = cache.open(shown).ok()?;
            let mut sink = Collect {
                shown,
                mode,
                numbers,
                max_chars,
                hits: FileHits {
                    lines: Vec::new(),
                    count: 0,
                },
            };
            searcher.search_file(&matcher, &file, &mut sink).ok()?;
            (sink.hits.count > 0).then_some(sink.hits)
        };
    let found: Mutex<Vec<(String, FileHits)>> = Mutex::new(Vec::new());
    // A path naming a file searches that file alone (globs and types do not filter it, as in rg).
    let single = !rel.is_root()
        && ws
            .root
            .open_parent(&rel, false)
            .is_ok_and(|(parent, name)| ws.root.stat_regular(&parent, name).is_ok());
    if single {
        let mut cache = DirCache::new(&ws.root);
        if let Some(hits) = search(&mut searcher_builder.build(), &mut cache, &shown_base) {
            found
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((shown_base.clone(), hits));
        }
    } else {
        if let Err(r) = ws.root.open_dir(&rel.parts, false) {
            return ws.refusal(&shown_base, r);
        }
        let base = rel
            .parts
            .iter()
            .fold(ws.root.path.clone(), |acc, c| acc.join(c));
        let mut builder = walker(&ws.root.path, &base, hidden, &ws.deny);
        if let Some(g) = opt_str(args, "glob") {
            let mut ob = OverrideBuilder::new(&ws.root.path);
            let built = ob.add(g).and_then(|ob| ob.build());
            match built {
                Ok(o) => {
                    builder.overrides(o);
                }
                Err(e) => {
                    return ToolResponse::error(p.fmt(
                        "workspace.msg.glob.bad_pattern",
                        &[
                            ("pattern", &crate::builtins::cli::tokenize::py_repr_str(g)),
                            ("err", &e.to_string()),
                        ],
                    ))
                }
            }
        }
        if let Some(t) = opt_str(args, "type") {
            let mut tb = TypesBuilder::new();
            tb.add_defaults();
            tb.select(t);
            match tb.build() {
                Ok(types) => {
                    builder.types(types);
                }
                Err(_) => {
                    return ToolResponse::error(p.fmt(
                        "workspace.msg.grep.bad_type",
                        &[("type", &crate::builtins::cli::tokenize::py_repr_str(t))],
                    ))
                }
            }
        }
        let root_path = &ws.root.path;
        builder.build_parallel().run(|| {
            let search = &search;
            let mut batch = Batch::new(&found);
            let mut cache = DirCache::new(&ws.root);
            let mut searcher = searcher_builder.build();
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    if let Some(rel) = relative(root_path, entry.path()) {
                        if let Some(hits) = search(&mut searcher, &mut cache, rel) {
                            batch.items.push((rel.to_string(), hits));
                        }
                    }
                }
                WalkState::Continue
            })
        });
    }
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    sort_paths(&mut found);
    render(
        ws,
        pattern,
        &shown_base,
        mode,
        before + after > 0,
        limit.max(1) as usize,
        found,
    )
}

fn render(
    ws: &Workspace,
    pattern: &str,
    base: &str,
    mode: Mode,
    context: bool,
    limit: usize,
    found: Vec<(String, FileHits)>,
) -> ToolResponse {
    let p = &ws.prompts;
    if found.is_empty() {
        return ToolResponse::ok(p.fmt(
            "workspace.msg.grep.none",
            &[
                (
                    "pattern",
                    &crate::builtins::cli::tokenize::py_repr_str(pattern),
                ),
                ("path", base),
            ],
        ))
        .with_data(json!({"files": 0, "matches": 0}));
    }
    let files = found.len();
    let matches: u64 = found.iter().map(|(_, h)| h.count).sum();
    let mut lines: Vec<String> = Vec::new();
    for (i, (path, hits)) in found.into_iter().enumerate() {
        match mode {
            Mode::Files => lines.push(path),
            Mode::Count => lines.push(format!("{path}:{}", hits.count)),
            Mode::Content => {
                if context && i > 0 {
                    lines.push("--".into());
                }
                lines.extend(hits.lines);
            }
        }
    }
    let total = lines.len();
    let mut out = String::new();
    let mut shown = 0;
    let mut byte_capped = false;
    for line in lines.iter().take(limit) {
        if out.len() + line.len() + 1 > ws.opts.max_output_bytes && shown > 0 {
            byte_capped = true;
            break;
        }
        out.push_str(line);
        out.push('\n');
        shown += 1;
    }
    if shown < total {
        let key = if byte_capped {
            "workspace.msg.byte_capped"
        } else {
            "workspace.msg.capped"
        };
        out.push_str(&p.fmt(
            key,
            &[
                ("shown", &shown.to_string()),
                ("total", &total.to_string()),
                ("max", &ws.opts.max_output_bytes.to_string()),
            ],
        ));
    } else {
        out.pop();
    }
    ToolResponse::ok(out).with_data(json!({
        "files": files,
        "matches": matches,
        "lines": total,
        "shown": shown,
        "truncated": shown < total,
    }))
}

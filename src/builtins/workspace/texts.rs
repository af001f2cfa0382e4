//! Every text the model reads from the workspace tools: descriptions, parameter docs, results
//! and errors. Overridable per key with `prompts=`.

pub const PROMPTS: &[(&str, &str)] = &[
    (
        "workspace.instructions",
        "You have file tools confined to the workspace {root}. Paths are relative to it (an absolute path must lie inside it). Read a file with read_file before you edit or overwrite it; if it changed on disk since, read it again. Prefer grep and glob to find code, edit_file for small changes and write_file only for new files or full rewrites.",
    ),
    // ls
    ("workspace.desc.ls", "List a directory of the workspace: names, kinds and sizes, sorted by name. Symbolic links are shown, never followed."),
    ("workspace.param.ls.path", "Directory relative to the workspace root; default the root itself"),
    // read_file
    (
        "workspace.desc.read_file",
        "Read a text file of the workspace with line numbers (cat -n style). Reads up to `limit` lines from line `offset` (1-based); a long file is read in pages: the result says which offset to read on from. Binary files are refused; bytes that are not UTF-8 are shown as \\xNN.",
    ),
    ("workspace.param.read_file.file_path", "File path relative to the workspace root"),
    ("workspace.param.read_file.offset", "Line number to start reading from (1-based); default 1"),
    ("workspace.param.read_file.limit", "Maximum number of lines to read; default {limit}"),
    // write_file
    (
        "workspace.desc.write_file",
        "Write a file of the workspace, replacing it whole (atomically: readers see the old or the new file, never half). An existing file must have been read with read_file first; its permissions are kept. Missing parent directories are created only with create_dirs=true.",
    ),
    ("workspace.param.write_file.file_path", "File path relative to the workspace root"),
    ("workspace.param.write_file.content", "The complete new content of the file"),
    ("workspace.param.write_file.create_dirs", "Create missing parent directories; default false"),
    // edit_file
    (
        "workspace.desc.edit_file",
        "Replace an exact string in a file of the workspace. old_string must match the file exactly (whitespace and indentation included) and occur exactly once, unless replace_all=true. Read the file first. The file's line endings and byte-order mark are kept. The result shows the changed lines.",
    ),
    ("workspace.param.edit.file_path", "File path relative to the workspace root"),
    ("workspace.param.edit.old_string", "The exact text to replace (without the line-number prefix read_file shows)"),
    ("workspace.param.edit.new_string", "The text to put in its place (must differ from old_string)"),
    ("workspace.param.edit.replace_all", "Replace every occurrence instead of requiring exactly one; default false"),
    // multi_edit
    (
        "workspace.desc.multi_edit",
        "Apply several exact-string edits to one file of the workspace, in order, all or nothing: if any edit fails, the file is left unchanged. Each edit works like edit_file on the result of the previous ones.",
    ),
    ("workspace.param.multi_edit.edits", "The edits, applied in order: objects with old_string, new_string and optional replace_all"),
    // glob
    (
        "workspace.desc.glob",
        "Find files of the workspace whose path matches a glob pattern (e.g. **/*.py or src/**/*.ts), relative to `path`. Respects .gitignore; hidden files are skipped unless hidden=true. Returns paths relative to the workspace root, sorted.",
    ),
    ("workspace.param.glob.pattern", "Glob pattern matched against paths relative to `path` (* stays within a directory, ** crosses directories)"),
    ("workspace.param.glob.path", "Directory to search, relative to the workspace root; default the root"),
    ("workspace.param.hidden", "Include hidden files and directories (names starting with a dot); default false"),
    // grep
    (
        "workspace.desc.grep",
        "Search file contents of the workspace with a regular expression (ripgrep syntax) or a fixed string. Respects .gitignore and skips hidden and binary files. output_mode: files_with_matches (default: file paths), content (matching lines as path:line:text, with context lines as path-line-text) or count (path:number of matching lines).",
    ),
    ("workspace.param.grep.pattern", "Regular expression (Rust regex syntax, like ripgrep) or, with fixed_strings=true, a literal string"),
    ("workspace.param.grep.path", "File or directory to search, relative to the workspace root; default the root"),
    ("workspace.param.grep.glob", "Only search files whose path matches this glob (ripgrep -g), e.g. *.py or !*_test.go"),
    ("workspace.param.grep.type", "Only search files of this type (ripgrep --type), e.g. py, rust, js, md"),
    ("workspace.param.grep.output_mode", "content, files_with_matches (default) or count"),
    ("workspace.param.grep.i", "Case-insensitive search"),
    ("workspace.param.grep.n", "Show line numbers in content mode; default true"),
    ("workspace.param.grep.A", "Lines of context after each match (content mode)"),
    ("workspace.param.grep.B", "Lines of context before each match (content mode)"),
    ("workspace.param.grep.C", "Lines of context before and after each match (content mode)"),
    ("workspace.param.grep.fixed_strings", "Treat the pattern as a literal string, not a regular expression"),
    ("workspace.param.grep.head_limit", "Show at most this many output lines (content), files or counts; default {limit}"),
    // shared results and errors
    ("workspace.msg.empty_path", "Error: {param} must not be empty"),
    ("workspace.msg.outside", "Error: {path} is outside the workspace; only paths under {root} are accessible (use a path relative to it, without ..)"),
    ("workspace.msg.bad_path", "Error: path {path} is not accepted (no control or invisible characters, at most 64 levels and 4096 bytes)"),
    ("workspace.msg.secret", "Error: {path} may hold secrets (it matches the workspace's deny list: {pattern}); refused"),
    ("workspace.msg.not_found", "Error: {path} does not exist in the workspace"),
    ("workspace.msg.not_dir", "Error: {path} is not a directory"),
    ("workspace.msg.is_dir", "Error: {path} is a directory; use ls to list it"),
    ("workspace.msg.symlink", "Error: {path} is or goes through a symbolic link; links are not followed in the workspace"),
    ("workspace.msg.special", "Error: {path} is a {kind}, not a regular file; refused"),
    ("workspace.msg.hardlink", "Error: {path} has several hard links (one may be outside the workspace); refused"),
    ("workspace.msg.other_device", "Error: {path} is on another file system than the workspace (a mount point); refused"),
    ("workspace.msg.io", "Error: {action} {path} failed: {err}"),
    ("workspace.msg.bad_arg", "Error: {param} must be {what}, got {got}"),
    // ls
    ("workspace.msg.ls.header", "{path} ({n} entries):"),
    ("workspace.msg.ls.empty", "{path} is empty"),
    ("workspace.msg.ls.capped", "…({more} more entries not shown)"),
    ("workspace.msg.ls.not_utf8", "Names not in UTF-8, left out: {n} (no tool can be given them as a path)"),
    // read_file
    ("workspace.msg.read.binary", "Error: {path} is a binary file ({kind}, {size} bytes); read_file shows text only"),
    ("workspace.msg.read.empty", "(file {path} is empty)"),
    ("workspace.msg.read.past_end", "Error: offset {offset} is past the end of {path}, which has {lines} lines"),
    ("workspace.msg.read.more", "…(more lines follow; read on with offset={next})"),
    ("workspace.msg.read.byte_cap", "…(output capped at {max} bytes; read on with offset={next}, or a smaller limit)"),
    ("workspace.msg.read.long_line", "…(line cut at {max} characters)"),
    ("workspace.msg.read.invalid_utf8", "(bytes that are not valid UTF-8 are shown as \\xNN)"),
    // write_file, edit_file, multi_edit
    ("workspace.msg.write.missing_parent", "Error: the directory of {path} does not exist; pass create_dirs=true to create it"),
    ("workspace.msg.write.not_read", "Error: {path} already exists and has not been read in this run; read it with read_file first, then write it"),
    ("workspace.msg.write.stale", "Error: {path} changed on disk since you last read it; read it again with read_file before changing it"),
    ("workspace.msg.write.created", "Created {path} ({bytes} bytes, {lines} lines)."),
    ("workspace.msg.write.replaced", "Wrote {path} ({bytes} bytes, {lines} lines), replacing its previous content."),
    ("workspace.msg.edit.same", "Error: old_string and new_string are identical; nothing to change"),
    ("workspace.msg.edit.empty_old", "Error: old_string must not be empty (use write_file to create a file)"),
    ("workspace.msg.edit.too_large", "Error: {path} is {size} bytes, more than edit_file handles ({max} bytes)"),
    ("workspace.msg.edit.not_text", "Error: {path} is not valid UTF-8 text; edit_file edits text files only"),
    ("workspace.msg.edit.not_found", "Error: old_string was not found in {path}. The closest lines are:\n{closest}\nRead the file again and copy the text exactly, including whitespace."),
    ("workspace.msg.edit.not_found_bare", "Error: old_string was not found in {path}. Read the file again and copy the text exactly, including whitespace."),
    ("workspace.msg.edit.ambiguous", "Error: old_string occurs {n} times in {path} (at lines {lines}); add surrounding lines to make it unique, or pass replace_all=true"),
    ("workspace.msg.edit.done", "Edited {path}: {n} replacement(s).\n{diff}"),
    ("workspace.msg.multi.failed", "Error: edit {index} of {count} failed; no edit was applied. {reason}"),
    ("workspace.msg.multi.bad_edit", "Error: edits[{index}] must be an object with string old_string and new_string (and optional boolean replace_all)"),
    ("workspace.msg.multi.empty", "Error: edits must hold at least one edit"),
    ("workspace.msg.multi.done", "Edited {path}: {count} edits, {n} replacement(s).\n{diff}"),
    // glob and grep
    ("workspace.msg.glob.bad_pattern", "Error: invalid glob pattern {pattern}: {err}"),
    ("workspace.msg.glob.none", "No files match {pattern} under {path}"),
    ("workspace.msg.capped", "…(showing {shown} of {total}; narrow the search or raise head_limit)"),
    ("workspace.msg.byte_capped", "…(output capped at {max} bytes; narrow the search)"),
    ("workspace.msg.grep.bad_pattern", "Error: invalid regular expression: {err}"),
    ("workspace.msg.grep.bad_type", "Error: unknown file type {type}; use a ripgrep type name such as py, rust, js, ts, go, java, c, cpp, md, json, yaml"),
    ("workspace.msg.grep.bad_mode", "Error: output_mode must be content, files_with_matches or count, got {mode}"),
    ("workspace.msg.grep.none", "No matches for {pattern} under {path}"),
];

//! Splitting a model-written command line into argv without ever involving a shell.
//!
//! The rules are POSIX quoting as Python's `shlex` (posix mode) applies them: single quotes keep
//! everything literally, double quotes honour `\"` and `\\` only, an unquoted backslash takes the
//! next character literally, blanks and tabs separate words, `''` is an empty word. Nothing is
//! expanded. Because no shell runs, anything a shell would have interpreted is refused instead of
//! being passed on with a different meaning than the model expected:
//! - unquoted operators `; & | < > ( )` (runs such as `&&`, `>>`, `2>&1` are reported as one
//!   operator), unquoted backticks, `$(`, `${` and `$NAME`, and unquoted newlines;
//! - an unquoted `#` at the start of a word (a shell would drop the rest of the line as a comment;
//!   we refuse rather than truncate silently). A `#` inside a word (`a#b`) is literal, as in a shell;
//! - control characters (except tab, and newline inside quotes) and Unicode formatting characters
//!   that can make the command shown for confirmation differ from what runs (bidi overrides,
//!   zero-width characters).

/// Why a command line was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenizeError {
    /// The command holds only whitespace.
    Empty,
    /// Quoting is broken (`No closing quotation`, `No escaped character`).
    Parse(&'static str),
    /// Unquoted shell syntax, in order of appearance, deduplicated.
    Operators(Vec<String>),
    /// An unquoted `#` at the start of a word.
    Comment,
    /// A control or invisible formatting character anywhere in the command.
    Control,
}

const OPERATOR_CHARS: &[char] = &[';', '&', '|', '<', '>', '(', ')'];

/// Characters refused anywhere, quoted or not: they either cannot be passed to `execve` (NUL) or
/// can disguise the command in a confirmation prompt.
pub(crate) fn is_disguising_char(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}'
        | '\u{061c}' | '\u{feff}'
        // Spaces other than ASCII space and tab: they look like word breaks but are not.
        | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}'
        | '\u{205f}' | '\u{3000}')
}

/// Tokenize `command`; see the module documentation for the rules.
pub fn tokenize(command: &str) -> Result<Vec<String>, TokenizeError> {
    if command.chars().any(is_disguising_char) {
        return Err(TokenizeError::Control);
    }
    let chars: Vec<char> = command.chars().collect();
    let mut tokens: Vec<String> = Vec::new();
    let mut operators: Vec<String> = Vec::new();
    let mut comment = false;
    let mut cur = String::new();
    let mut in_word = false;
    let mut i = 0;

    let push_op = |ops: &mut Vec<String>, op: String| {
        if !ops.contains(&op) {
            ops.push(op);
        }
    };

    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => {
                if in_word {
                    tokens.push(std::mem::take(&mut cur));
                    in_word = false;
                }
                i += 1;
            }
            '\n' => {
                push_op(&mut operators, "\n".to_string());
                if in_word {
                    tokens.push(std::mem::take(&mut cur));
                    in_word = false;
                }
                i += 1;
            }
            '\'' => {
                in_word = true;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(TokenizeError::Parse("No closing quotation")),
                        Some('\'') => {
                            i += 1;
                            break;
                        }
                        Some(&ch) => {
                            cur.push(ch);
                            i += 1;
                        }
                    }
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(TokenizeError::Parse("No closing quotation")),
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some('\\') => match chars.get(i + 1) {
                            None => return Err(TokenizeError::Parse("No closing quotation")),
                            Some(&next @ ('"' | '\\')) => {
                                cur.push(next);
                                i += 2;
                            }
                            // shlex keeps the backslash before any other character.
                            Some(&next) => {
                                cur.push('\\');
                                cur.push(next);
                                i += 2;
                            }
                        },
                        Some(&ch) => {
                            cur.push(ch);
                            i += 1;
                        }
                    }
                }
            }
            '\\' => match chars.get(i + 1) {
                None => return Err(TokenizeError::Parse("No escaped character")),
                // A shell would treat backslash-newline as a line continuation; refuse rather
                // than guess.
                Some('\n') => {
                    push_op(&mut operators, "\n".to_string());
                    i += 2;
                }
                Some(&next) => {
                    in_word = true;
                    cur.push(next);
                    i += 2;
                }
            },
            '#' if !in_word => {
                comment = true;
                in_word = true;
                cur.push('#');
                i += 1;
            }
            '`' => {
                push_op(&mut operators, "`".to_string());
                in_word = true;
                cur.push('`');
                i += 1;
            }
            '$' => {
                let next = chars.get(i + 1).copied();
                let expands = match next {
                    Some('(') => Some("$("),
                    Some('{') => Some("${"),
                    Some(n) if n.is_ascii_alphanumeric() || "_?!#@*$-".contains(n) => Some("$"),
                    _ => None,
                };
                if let Some(op) = expands {
                    push_op(&mut operators, op.to_string());
                    if op != "$" {
                        // Skip the bracket so it is not reported a second time as `(`.
                        i += 1;
                    }
                }
                in_word = true;
                cur.push('$');
                i += 1;
            }
            c if OPERATOR_CHARS.contains(&c) => {
                let start = i;
                while i < chars.len() && OPERATOR_CHARS.contains(&chars[i]) {
                    i += 1;
                }
                push_op(&mut operators, chars[start..i].iter().collect());
                if in_word {
                    tokens.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
                i += 1;
            }
        }
    }
    if in_word {
        tokens.push(cur);
    }
    if !operators.is_empty() {
        return Err(TokenizeError::Operators(operators));
    }
    if comment {
        return Err(TokenizeError::Comment);
    }
    if tokens.is_empty() {
        return Err(TokenizeError::Empty);
    }
    Ok(tokens)
}

/// Python `repr()` of a list of strings, for messages that list offending tokens
/// (`['|', '>']`), so the texts match what users of the reference implementation know.
pub fn py_repr_list(items: &[String]) -> String {
    let parts: Vec<String> = items.iter().map(|s| py_repr_str(s)).collect();
    format!("[{}]", parts.join(", "))
}

/// Python `repr()` of a str (quote choice and escapes as CPython does for printable text).
pub fn py_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Vec<String> {
        tokenize(s).unwrap_or_else(|e| panic!("{s:?}: {e:?}"))
    }
    fn ops(s: &str) -> Vec<String> {
        match tokenize(s) {
            Err(TokenizeError::Operators(o)) => o,
            other => panic!("{s:?}: expected operators, got {other:?}"),
        }
    }

    #[test]
    fn quoting_follows_posix_shlex() {
        assert_eq!(ok("git status"), ["git", "status"]);
        assert_eq!(ok("  ls\t-la  "), ["ls", "-la"]);
        assert_eq!(ok(r"echo c\ d"), ["echo", "c d"]);
        assert_eq!(ok(r#"echo "a b" 'c d'"#), ["echo", "a b", "c d"]);
        assert_eq!(
            ok(r#"echo "a\"b" "x\y" 'p\q'"#),
            ["echo", "a\"b", "x\\y", "p\\q"]
        );
        assert_eq!(ok("echo '' \"\""), ["echo", "", ""]);
        assert_eq!(ok("echo a'b'\"c\""), ["echo", "abc"]);
        assert_eq!(ok("echo 'a;b|c&d>e<f(g)'"), ["echo", "a;b|c&d>e<f(g)"]);
        assert_eq!(
            ok(r"echo \; \| \& \> \#x"),
            ["echo", ";", "|", "&", ">", "#x"]
        );
        assert_eq!(
            ok("echo '$(id)' \"`id`\" '$HOME'"),
            ["echo", "$(id)", "`id`", "$HOME"]
        );
        assert_eq!(ok("echo \"line1\nline2\""), ["echo", "line1\nline2"]);
        assert_eq!(
            ok("echo a#b price$ $ 5$"),
            ["echo", "a#b", "price$", "$", "5$"]
        );
        assert_eq!(ok("grep -r '#include' ."), ["grep", "-r", "#include", "."]);
        assert_eq!(ok("ls *.py ~ {a,b}"), ["ls", "*.py", "~", "{a,b}"]);
    }

    #[test]
    fn every_unquoted_operator_is_refused() {
        for (cmd, expected) in [
            ("ls; rm -rf /", vec![";"]),
            ("ls & rm x", vec!["&"]),
            ("ls | sh", vec!["|"]),
            ("ls && rm x", vec!["&&"]),
            ("ls || rm x", vec!["||"]),
            ("cat < /etc/shadow", vec!["<"]),
            ("ls > out", vec![">"]),
            ("ls >> out", vec![">>"]),
            ("ls 2>&1", vec![">&"]),
            ("ls>out", vec![">"]),
            ("(ls)", vec!["(", ")"]),
            ("echo $(id)", vec!["$(", ")"]),
            ("echo `id`", vec!["`"]),
            ("echo ${HOME}", vec!["${"]),
            ("echo $HOME", vec!["$"]),
            ("echo $1 $?", vec!["$"]),
            ("ls\nrm x", vec!["\n"]),
            ("ls \\\nrm", vec!["\n"]),
            ("ls |& cat", vec!["|&"]),
            ("cat <<EOF", vec!["<<"]),
            ("a;b|c", vec![";", "|"]),
        ] {
            assert_eq!(ops(cmd), expected, "{cmd:?}");
        }
    }

    #[test]
    fn hash_is_literal_inside_words_and_refused_at_word_start() {
        assert_eq!(tokenize("echo a #comment"), Err(TokenizeError::Comment));
        assert_eq!(tokenize("#ls"), Err(TokenizeError::Comment));
        assert_eq!(ok("echo a#b"), ["echo", "a#b"]);
        assert_eq!(ok("echo '#x' \"#y\" \\#z"), ["echo", "#x", "#y", "#z"]);
    }

    #[test]
    fn broken_quoting_and_empty_input() {
        assert_eq!(
            tokenize("echo 'abc"),
            Err(TokenizeError::Parse("No closing quotation"))
        );
        assert_eq!(
            tokenize("echo \"abc"),
            Err(TokenizeError::Parse("No closing quotation"))
        );
        assert_eq!(
            tokenize("echo abc\\"),
            Err(TokenizeError::Parse("No escaped character"))
        );
        assert_eq!(tokenize("   "), Err(TokenizeError::Empty));
        assert_eq!(tokenize(""), Err(TokenizeError::Empty));
    }

    #[test]
    fn disguising_characters_are_refused_even_quoted() {
        for s in [
            "ls\r",
            "ls 'a\0b'",
            "ls \u{202e}fdp.exe",
            "l\u{200b}s",
            "ls \u{1b}[2K",
            "ls '\u{85}'",
            "git push\u{a0}--force",
            "ls\u{3000}-la",
            "echo '\u{2028}'",
        ] {
            assert_eq!(tokenize(s), Err(TokenizeError::Control), "{s:?}");
        }
        assert_eq!(ok("echo 'héllo' ＄（x）；"), ["echo", "héllo", "＄（x）；"]);
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(py_repr_list(&["|".into(), "\n".into()]), "['|', '\\n']");
        assert_eq!(py_repr_str("it's"), "\"it's\"");
        assert_eq!(py_repr_str("a'b\"c"), "'a\\'b\"c'");
    }
}

//! Just enough of a sed script parser to find the commands that run programs or write files:
//! `e`, `w`/`W`, and the `e`/`w` flags of `s`. Addresses, regexes, `y` and text arguments are
//! skipped with their own delimiter and escape rules so that letters inside them do not count.

pub fn runs_or_writes(script: &str) -> bool {
    let c: Vec<char> = script.chars().collect();
    let mut i = 0;
    loop {
        while i < c.len() && (c[i].is_whitespace() || c[i] == ';' || c[i] == '}') {
            i += 1;
        }
        if i >= c.len() {
            return false;
        }
        i = skip_address(&c, i);
        while i < c.len() && c[i].is_whitespace() {
            i += 1;
        }
        if i < c.len() && c[i] == ',' {
            i = skip_address(&c, i + 1);
        }
        while i < c.len() && (c[i].is_whitespace() || c[i] == '!') {
            i += 1;
        }
        let Some(&cmd) = c.get(i) else { return false };
        i += 1;
        match cmd {
            'e' | 'w' | 'W' => return true,
            '{' => {}
            '#' | 'a' | 'i' | 'c' | 'r' | 'R' => i = skip_line(&c, i),
            ':' | 'b' | 't' | 'T' | 'v' | 'q' | 'Q' | 'l' | 'L' => {
                while i < c.len() && c[i] != ';' && c[i] != '\n' && c[i] != '}' {
                    i += 1;
                }
            }
            's' => {
                let Some(&delim) = c.get(i) else { return false };
                i = skip_delimited(&c, i + 1, delim);
                i = skip_delimited(&c, i, delim);
                while i < c.len() && c[i] != ';' && c[i] != '\n' && c[i] != '}' {
                    if c[i] == 'e' || c[i] == 'w' || c[i] == 'W' {
                        return true;
                    }
                    i += 1;
                }
            }
            'y' => {
                let Some(&delim) = c.get(i) else { return false };
                i = skip_delimited(&c, i + 1, delim);
                i = skip_delimited(&c, i, delim);
            }
            // Commands without arguments.
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            // Anything else is a syntax error for sed; be conservative.
            _ => return true,
        }
    }
}

fn skip_line(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i] != '\n' {
        if c[i] == '\\' {
            i += 1;
        }
        i += 1;
    }
    i
}

/// Skip past the next unescaped `delim` (regex, replacement, or `y` part).
fn skip_delimited(c: &[char], mut i: usize, delim: char) -> usize {
    while i < c.len() {
        if c[i] == '\\' {
            i += 2;
            continue;
        }
        if c[i] == delim {
            return i + 1;
        }
        i += 1;
    }
    i
}

fn skip_address(c: &[char], mut i: usize) -> usize {
    match c.get(i) {
        Some(d) if d.is_ascii_digit() || *d == '+' || *d == '~' => {
            i += 1;
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '~') {
                i += 1;
            }
        }
        Some('$') => i += 1,
        Some('/') => {
            i = skip_delimited(c, i + 1, '/');
            while i < c.len() && (c[i] == 'I' || c[i] == 'M') {
                i += 1;
            }
        }
        Some('\\') => {
            if let Some(&d) = c.get(i + 1) {
                i = skip_delimited(c, i + 2, d);
                while i < c.len() && (c[i] == 'I' || c[i] == 'M') {
                    i += 1;
                }
            }
        }
        _ => {}
    }
    i
}

#[cfg(test)]
mod tests {
    use super::runs_or_writes;

    #[test]
    fn finds_execution_and_writes_but_not_letters_in_regexes() {
        for s in [
            "e id",
            "1e id",
            "$e",
            "/x/e id",
            "s/a/b/e",
            "s/a/b/w /tmp/x",
            "s|a|b|gw out",
            "w out",
            "1,5W x",
            "p;e id",
            ":a;e id",
            "/re/!e",
            "2~3e",
            "s/a/b/;e",
            "y/abc/xyz/;w f",
            "{e id\n}",
        ] {
            assert!(runs_or_writes(s), "{s:?}");
        }
        for s in [
            "s/hello/world/",
            "s/e/w/g",
            "1,5p",
            "/error/d",
            "s|/etc|/tmp|g",
            "y/ew/we/",
            "$!N;P;D",
            "10q",
            "/^#/d",
            "s/a\\/e/b/",
            "a hello e world",
            "i\\\nwrite",
            "=",
            "s/x/y/2",
            ":a;N;ba",
        ] {
            assert!(!runs_or_writes(s), "{s:?}");
        }
    }
}

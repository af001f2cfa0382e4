//! Network clients: downloaders must not write or upload local files, ssh must not run local
//! commands or open tunnels.

use super::{long_values, plain, short_values, NONE};

/// curl's long options that take a value. The first eight are those whose value may name a
/// local file for curl to read and send (`@file`, `name=@file`, `name=<file`, a cookie file).
const CURL_VALUED: &[&str] = &[
    "--data",
    "--data-binary",
    "--data-urlencode",
    "--data-ascii",
    "--json",
    "--form",
    "--cookie",
    "--write-out",
    "--header",
    "--user-agent",
    "--url",
    "--request",
    "--user",
    "--proxy",
    "--max-time",
];
const CURL_FILE_VALUED: &[&str] = CURL_VALUED.split_at(8).0;

pub(super) fn curl_hits(args: &[String]) -> Vec<String> {
    let opts = plain(
        "oODKTcn",
        "AbCdeEFHmPQrtuUwxXyYz",
        &[
            "--output",
            "--remote-name",
            "--remote-name-all",
            "--dump-header",
            "--trace",
            "--trace-ascii",
            "--config",
            "--libcurl",
            "--cookie-jar",
            "--output-dir",
            "--stderr",
            "--etag-save",
            "--hsts",
            "--alt-svc",
            "--create-dirs",
            "--upload-file",
            "--netrc",
            "--netrc-file",
            "--netrc-optional",
        ],
        CURL_VALUED,
    );
    let (mut hits, _) = opts.scan(args);
    // Values that make curl read (and send) a local file.
    let reads_file = |flag: char, v: &str| match flag {
        'd' | 'w' => v.starts_with('@') || v.contains("=@"),
        'F' => v.contains("=@") || v.contains("=<"),
        'b' => !v.contains('='),
        _ => false,
    };
    let mut values: Vec<String> = short_values(args, "AbCdeEFHmPQrtuUwxXyYz")
        .into_iter()
        .filter(|(c, v)| reads_file(*c, v))
        .map(|(_, v)| v.to_string())
        .collect();
    let long = long_values(args, CURL_FILE_VALUED);
    for (name, v) in long {
        let flag = match name {
            "--form" => 'F',
            "--cookie" => 'b',
            _ => 'd',
        };
        if reads_file(flag, v) {
            values.push(v.to_string());
        }
    }
    hits.extend(values);
    hits.extend(
        args.iter()
            .filter(|a| a.to_ascii_lowercase().starts_with("file:"))
            .cloned(),
    );
    hits
}

pub(super) fn wget_hits(args: &[String]) -> Vec<String> {
    let mut hits = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let next = args.get(i + 1).map(String::as_str);
        let refused = if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, next),
            };
            match name {
                "output-document" => value != Some("-"),
                "output-file" | "append-output" | "execute" | "config" | "post-file"
                | "body-file" | "use-askpass" | "directory-prefix" => true,
                _ => false,
            }
        } else if a.starts_with('-') && a.len() > 1 {
            let letters: Vec<char> = a.chars().skip(1).collect();
            let mut bad = false;
            for (j, ch) in letters.iter().enumerate() {
                let attached: String = letters[j + 1..].iter().collect();
                let value = if attached.is_empty() {
                    next
                } else {
                    Some(attached.as_str())
                };
                match ch {
                    'O' => {
                        bad = value != Some("-");
                        break;
                    }
                    'o' | 'a' | 'e' | 'P' => {
                        bad = true;
                        break;
                    }
                    'i' | 't' | 'T' | 'w' | 'Q' | 'U' | 'B' | 'l' | 'A' | 'R' | 'D' | 'X' | 'I' => {
                        break
                    }
                    _ => {}
                }
            }
            bad
        } else {
            false
        };
        if refused {
            hits.push(a.clone());
        }
        i += 1;
    }
    hits
}

pub(super) fn ssh_hits(args: &[String]) -> Vec<String> {
    let mut hits = plain("FS", "BbcDEeIiJLlmOopQRWw", &[], NONE).scan(args).0;
    let risky = |v: &str| {
        let v = v.to_ascii_lowercase();
        [
            "proxycommand",
            "localcommand",
            "knownhostscommand",
            "pkcs11provider",
            "securitykeyprovider",
            "match",
            "include",
            "proxyusefdpass",
        ]
        .iter()
        .any(|k| v.contains(k))
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-o" {
            if args.get(i + 1).is_some_and(|v| risky(v)) {
                hits.push(args[i + 1].clone());
            }
            i += 2;
            continue;
        }
        if a.starts_with("-o") && risky(a) {
            hits.push(a.clone());
        }
        // Port forwarding and tunnels expose local services to the remote side.
        if matches!(a.as_str(), "-R" | "-L" | "-D" | "-w") || (a.starts_with("-R") && a.len() > 2) {
            hits.push(a.clone());
        }
        i += 1;
    }
    hits
}

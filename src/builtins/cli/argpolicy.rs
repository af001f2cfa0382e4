//! The default dangerous-argument gate.
//!
//! Rules are scoped to the program they belong to (by the basename of the listed name and of the
//! pinned executable, versions stripped: `python3.11` is `python`, `vim.basic` is `vim`), so an
//! option that is harmless elsewhere passes (`ls -T`, `sort -T`, `tar -T`, `git -C` is the only
//! `-C` refused). Options are read the way the program's own parser reads them: short flags may be
//! bundled (`-xIcmd`, `-sSLo`), a value may be attached or in the next argument, and for
//! interpreters scanning stops at the script name, so `python3 script.py -c` passes.
//!
//! The gate refuses what turns an allow-listed program into something else: inline code for
//! interpreters and scripting tools, programs that launch other programs, hooks that run commands
//! (git, tar, rsync, ssh, sort, zip, editors, pagers, make), and downloaders' and readers' flags
//! that write or upload local files. It is defence in depth, not a sandbox.

/// Offending arguments, or None when the command may run.
pub fn check(names: &[&str], args: &[String]) -> Option<Vec<String>> {
    for name in names {
        let family = family_of(name);
        let hits = match family {
            Some(f) => hits_for(f, args),
            None => Vec::new(),
        };
        if !hits.is_empty() {
            return Some(hits);
        }
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Shell,
    Python,
    Perl,
    Ruby,
    Node,
    Deno,
    Php,
    Lua,
    Julia,
    R,
    Awk,
    Sed,
    Find,
    Git,
    Curl,
    Wget,
    Tar,
    Rsync,
    Ssh,
    Launcher,
    Sort,
    Zip,
    Vim,
    Pager,
    Man,
    Make,
    Multicall,
}

fn family_of(name: &str) -> Option<Family> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let base = base.split('.').next().unwrap_or(base);
    let base = base.trim_end_matches(|c: char| c.is_ascii_digit());
    Some(match base {
        "sh" | "bash" | "rbash" | "zsh" | "dash" | "ksh" | "mksh" | "pdksh" | "fish" | "csh"
        | "tcsh" | "ash" | "yash" => Family::Shell,
        "python" | "pypy" => Family::Python,
        "perl" => Family::Perl,
        "ruby" | "jruby" => Family::Ruby,
        "node" | "nodejs" | "bun" => Family::Node,
        "deno" => Family::Deno,
        "php" | "php-cli" => Family::Php,
        "lua" | "luajit" => Family::Lua,
        "julia" => Family::Julia,
        "R" | "Rscript" => Family::R,
        "awk" | "gawk" | "mawk" | "nawk" | "original-awk" => Family::Awk,
        "sed" | "gsed" => Family::Sed,
        "find" | "gfind" | "bfs" => Family::Find,
        "git" => Family::Git,
        "curl" => Family::Curl,
        "wget" => Family::Wget,
        "tar" | "gtar" | "bsdtar" => Family::Tar,
        "rsync" => Family::Rsync,
        "ssh" | "scp" | "sftp" => Family::Ssh,
        "env" | "xargs" | "nice" | "nohup" | "timeout" | "stdbuf" | "setsid" | "chroot"
        | "sudo" | "doas" | "su" | "runuser" | "time" | "taskset" | "ionice" | "chrt" | "flock"
        | "strace" | "ltrace" | "gdb" | "watch" | "unshare" | "nsenter" | "script" | "parallel"
        | "sg" | "newgrp" | "pkexec" | "firejail" | "systemd-run" | "setpriv" | "prlimit"
        | "numactl" | "valgrind" | "catchsegv" | "expect" | "dbus-launch" | "ssh-agent"
        | "fakeroot" | "proot" | "bwrap" | "capsh" | "cgexec" => Family::Launcher,
        "sort" | "gsort" => Family::Sort,
        "zip" => Family::Zip,
        "vi" | "vim" | "nvim" | "view" | "ex" | "gvim" | "rvim" | "vimdiff" => Family::Vim,
        "less" | "more" | "most" => Family::Pager,
        "man" => Family::Man,
        "make" | "gmake" => Family::Make,
        "busybox" | "toybox" => Family::Multicall,
        _ => return None,
    })
}

/// How one program parses its options.
struct Options {
    /// Short letters refused wherever they appear in a bundle.
    refused: &'static str,
    /// Short letters that take a value (the rest of the bundle, or the next argument).
    valued: &'static str,
    /// Long options refused (matched before any `=`).
    refused_long: &'static [&'static str],
    /// Long options that take the next argument as a value when written without `=`.
    valued_long: &'static [&'static str],
    /// Option parsing ends at the first operand (script name) as for interpreters.
    stop_at_operand: bool,
    /// `+x` is an option too (shells).
    plus_options: bool,
}

impl Options {
    /// Scan `args`; return the offending ones and the index where operands start.
    fn scan(&self, args: &[String]) -> (Vec<String>, Vec<usize>) {
        let mut hits = Vec::new();
        let mut operands = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if a == "--" {
                operands.extend(i + 1..args.len());
                break;
            }
            if let Some(long) = a.strip_prefix("--") {
                let (name, has_value) = match long.split_once('=') {
                    Some((n, _)) => (n, true),
                    None => (long, false),
                };
                let name = format!("--{name}");
                if self.refused_long.contains(&name.as_str()) {
                    hits.push(a.clone());
                } else if !has_value && self.valued_long.contains(&name.as_str()) {
                    i += 1;
                }
                i += 1;
                continue;
            }
            let is_option =
                a.len() > 1 && (a.starts_with('-') || (self.plus_options && a.starts_with('+')));
            if is_option {
                let letters: Vec<char> = a.chars().skip(1).collect();
                for (j, ch) in letters.iter().enumerate() {
                    if self.refused.contains(*ch) {
                        hits.push(a.clone());
                        break;
                    }
                    if self.valued.contains(*ch) {
                        if j + 1 == letters.len() {
                            i += 1;
                        }
                        break;
                    }
                }
                i += 1;
                continue;
            }
            operands.push(i);
            if self.stop_at_operand {
                operands.extend(i + 1..args.len());
                break;
            }
            i += 1;
        }
        (hits, operands)
    }
}

const NONE: &[&str] = &[];

/// Values of value-taking short options, read as getopt does: the rest of the bundle after the
/// letter, or else the next argument (`-sd @f` and `-sd@f` both give `('d', "@f")`).
fn short_values<'a>(args: &'a [String], valued: &str) -> Vec<(char, &'a str)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            break;
        }
        if a.len() > 1 && a.starts_with('-') && !a.starts_with("--") {
            for (at, ch) in a[1..].char_indices() {
                if valued.contains(ch) {
                    let rest = &a[1 + at + ch.len_utf8()..];
                    if rest.is_empty() {
                        if let Some(next) = args.get(i + 1) {
                            out.push((ch, next.as_str()));
                        }
                        i += 1;
                    } else {
                        out.push((ch, rest));
                    }
                    break;
                }
            }
        }
        i += 1;
    }
    out
}

/// Values of the long options `names` (`--name=value` or `--name value`).
fn long_values<'a>(args: &'a [String], names: &[&str]) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            break;
        }
        if let Some((name, value)) = a.split_once('=').filter(|(n, _)| names.contains(n)) {
            out.push((name, value));
        } else if names.contains(&a) {
            if let Some(next) = args.get(i + 1) {
                out.push((a, next.as_str()));
            }
            i += 1;
        }
        i += 1;
    }
    out
}

fn interp(
    refused: &'static str,
    valued: &'static str,
    refused_long: &'static [&'static str],
) -> Options {
    Options {
        refused,
        valued,
        refused_long,
        valued_long: NONE,
        stop_at_operand: true,
        plus_options: false,
    }
}

fn plain(
    refused: &'static str,
    valued: &'static str,
    refused_long: &'static [&'static str],
    valued_long: &'static [&'static str],
) -> Options {
    Options {
        refused,
        valued,
        refused_long,
        valued_long,
        stop_at_operand: false,
        plus_options: false,
    }
}

fn hits_for(family: Family, args: &[String]) -> Vec<String> {
    match family {
        Family::Shell => {
            let opts = Options {
                refused: "c",
                valued: "oO",
                refused_long: &["--command", "--init-command"],
                valued_long: &["--rcfile", "--init-file"],
                stop_at_operand: true,
                plus_options: true,
            };
            opts.scan(args).0
        }
        Family::Python => interp("cm", "WXQ", NONE).scan(args).0,
        Family::Perl => interp("eEMmd", "Il0CDx", NONE).scan(args).0,
        Family::Ruby => interp("e", "CEFIKrTWx0", NONE).scan(args).0,
        Family::Node => {
            interp(
                "epri",
                "",
                &[
                    "--eval",
                    "--print",
                    "--require",
                    "--import",
                    "--loader",
                    "--experimental-loader",
                    "--inspect",
                    "--inspect-brk",
                    "--inspect-port",
                    "--inspect-wait",
                    "--interactive",
                ],
            )
            .scan(args)
            .0
        }
        Family::Deno => {
            let (mut hits, operands) = plain("e", "", &["--eval"], NONE).scan(args);
            if let Some(&first) = operands.first() {
                if matches!(args[first].as_str(), "eval" | "repl") {
                    hits.push(args[first].clone());
                }
            }
            hits
        }
        Family::Php => {
            interp(
                "rBREdSa",
                "cfFzt",
                &[
                    "--run",
                    "--process-begin",
                    "--process-code",
                    "--process-end",
                    "--define",
                    "--interactive",
                ],
            )
            .scan(args)
            .0
        }
        Family::Lua => interp("e", "l", NONE).scan(args).0,
        Family::Julia => interp("eE", "JLCOpt", &["--eval", "--print"]).scan(args).0,
        Family::R => plain("e", "", &["--expr"], NONE).scan(args).0,
        Family::Awk => awk_hits(args),
        Family::Sed => sed_hits(args),
        Family::Find => args
            .iter()
            .filter(|a| {
                matches!(
                    a.as_str(),
                    "-exec"
                        | "-execdir"
                        | "-ok"
                        | "-okdir"
                        | "-delete"
                        | "-fprint"
                        | "-fprint0"
                        | "-fprintf"
                        | "-fls"
                )
            })
            .cloned()
            .collect(),
        Family::Git => git::hits(args),
        Family::Curl => net::curl_hits(args),
        Family::Wget => net::wget_hits(args),
        Family::Tar => tar_hits(args),
        Family::Rsync => {
            plain(
                "eM",
                "BfT",
                &[
                    "--rsh",
                    "--rsync-path",
                    "--remote-option",
                    "--daemon",
                    "--config",
                ],
                NONE,
            )
            .scan(args)
            .0
        }
        Family::Ssh => net::ssh_hits(args),
        Family::Launcher => {
            // A launcher with an operand runs another program; only NAME=VALUE (env) is data.
            args.iter()
                .filter(|a| {
                    let op = !a.starts_with('-') && !is_assignment(a);
                    op || a.starts_with("-S") || a.starts_with("--split-string")
                })
                .cloned()
                .collect()
        }
        Family::Sort => {
            plain("o", "kStT", &["--compress-program", "--output"], NONE)
                .scan(args)
                .0
        }
        Family::Zip => args
            .iter()
            .filter(|a| {
                a.as_str() == "-TT" || a.starts_with("-TT") || a.starts_with("--unzip-command")
            })
            .cloned()
            .collect(),
        Family::Vim => args
            .iter()
            .filter(|a| {
                a.starts_with('+')
                    || a.starts_with("-c")
                    || a.starts_with("-S")
                    || a.starts_with("--cmd")
            })
            .cloned()
            .collect(),
        Family::Pager => args
            .iter()
            .filter(|a| a.starts_with('+'))
            .cloned()
            .collect(),
        Family::Man => {
            plain("PHC", "", &["--pager", "--html", "--config-file"], NONE)
                .scan(args)
                .0
        }
        Family::Make => {
            let (mut hits, operands) = plain(
                "fCE",
                "IjlWo",
                &["--file", "--makefile", "--directory", "--eval"],
                &[
                    "--include-dir",
                    "--jobs",
                    "--load-average",
                    "--what-if",
                    "--old-file",
                    "--assume-old",
                ],
            )
            .scan(args);
            // Any variable assignment can redefine a command a recipe runs (CC=..., SHELL=...).
            hits.extend(
                operands
                    .into_iter()
                    .filter(|&i| args[i].contains('='))
                    .map(|i| args[i].clone()),
            );
            hits
        }
        Family::Multicall => match args.first() {
            Some(applet) if !applet.starts_with('-') => {
                check(&[applet.as_str()], &args[1..]).unwrap_or_default()
            }
            _ => Vec::new(),
        },
    }
}

fn is_assignment(a: &str) -> bool {
    match a.split_once('=') {
        Some((name, _)) => {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

fn tar_hits(args: &[String]) -> Vec<String> {
    let mut hits: Vec<String> = plain(
        "IF",
        "fCTXbgHKLNVA",
        &[
            "--to-command",
            "--use-compress-program",
            "--checkpoint-action",
            "--info-script",
            "--new-volume-script",
            "--rsh-command",
            "--rmt-command",
        ],
        NONE,
    )
    .scan(args)
    .0;
    // Old-style first argument: a bundle of letters without a dash (`tar xIf ...`).
    if let Some(first) = args.first() {
        if !first.starts_with('-')
            && first.chars().all(|c| c.is_ascii_alphabetic())
            && first.contains(['I', 'F'])
        {
            hits.push(first.clone());
        }
    }
    hits
}

fn awk_hits(args: &[String]) -> Vec<String> {
    let opts = plain(
        "lodp",
        "FvfeEi",
        &["--load", "--dump-variables", "--pretty-print", "--profile"],
        &[
            "--field-separator",
            "--assign",
            "--file",
            "--source",
            "--exec",
            "--include",
        ],
    );
    let (mut hits, operands) = opts.scan(args);
    let shorts = short_values(args, "FvfeEi");
    let longs = long_values(args, &["--file", "--exec", "--source"]);
    let from_file = shorts.iter().any(|(c, _)| *c == 'f' || *c == 'E')
        || longs.iter().any(|(n, _)| *n != "--source");
    let mut programs: Vec<&str> = shorts
        .iter()
        .filter(|(c, _)| *c == 'e')
        .map(|(_, v)| *v)
        .collect();
    programs.extend(
        longs
            .iter()
            .filter(|(n, _)| *n == "--source")
            .map(|(_, v)| *v),
    );
    if !from_file && programs.is_empty() {
        if let Some(&first) = operands.first() {
            programs.push(args[first].as_str());
        }
    }
    for p in programs {
        if awk_program_is_risky(p) && !hits.iter().any(|h| h.as_str() == p) {
            hits.push(p.to_string());
        }
    }
    hits
}

/// awk runs commands through system(), pipes (`print | "cmd"`, `"cmd" | getline`), and writes
/// files with `>`/`>>` redirections; gawk loads native extensions with @load.
fn awk_program_is_risky(program: &str) -> bool {
    if program.contains("system") || program.contains('|') || program.contains("@load") {
        return true;
    }
    let chars: Vec<char> = program.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c != '>' {
            continue;
        }
        // A redirection target follows: a string, a variable or a parenthesised expression.
        // Comparisons against numbers or fields (`$3 > 100`, `NR > $2`) pass.
        let mut j = i + 1;
        if chars.get(j) == Some(&'>') {
            j += 1;
        }
        if chars.get(j) == Some(&'=') {
            continue;
        }
        while chars.get(j).is_some_and(|c| c.is_whitespace()) {
            j += 1;
        }
        if chars
            .get(j)
            .is_some_and(|&n| n == '"' || n == '(' || n == '_' || n.is_alphabetic())
        {
            return true;
        }
    }
    false
}

mod git;
mod net;
mod sed;

fn sed_hits(args: &[String]) -> Vec<String> {
    let (mut hits, operands) = plain(
        "i",
        "efl",
        &["--in-place"],
        &["--expression", "--file", "--line-length"],
    )
    .scan(args);
    let shorts = short_values(args, "efl");
    let longs = long_values(args, &["--expression", "--file"]);
    let explicit = shorts.iter().any(|(c, _)| *c == 'e' || *c == 'f') || !longs.is_empty();
    let mut scripts: Vec<&str> = shorts
        .iter()
        .filter(|(c, _)| *c == 'e')
        .map(|(_, v)| *v)
        .collect();
    scripts.extend(
        longs
            .iter()
            .filter(|(n, _)| *n == "--expression")
            .map(|(_, v)| *v),
    );
    if !explicit {
        if let Some(&first) = operands.first() {
            scripts.push(args[first].as_str());
        }
    }
    for script in scripts {
        if sed::runs_or_writes(script) && !hits.iter().any(|h| h.as_str() == script) {
            hits.push(script.to_string());
        }
    }
    hits
}

#[cfg(test)]
mod tests;

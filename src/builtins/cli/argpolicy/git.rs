//! git's options and subcommand flags that run other programs or hooks (`-c core.pager=...`,
//! `--upload-pack`, `-C` into another repository, ...).

pub fn hits(args: &[String]) -> Vec<String> {
    let mut hits = Vec::new();
    // Global options come before the subcommand; -C/--git-dir/--work-tree are refused because
    // pointing git at a directory the model prepared runs that repository's hooks and config.
    let global_refused = [
        "-c",
        "-C",
        "--config-env",
        "--exec-path",
        "--git-dir",
        "--work-tree",
    ];
    let mut sub_at = None;
    for (i, a) in args.iter().enumerate() {
        if !a.starts_with('-') {
            sub_at = Some(i);
            break;
        }
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        if global_refused.contains(&name) || (a.starts_with("-c") && !a.starts_with("--")) {
            hits.push(a.clone());
        }
    }
    let Some(sub_at) = sub_at else { return hits };
    let sub = args[sub_at].as_str();
    let rest = &args[sub_at + 1..];
    for a in rest {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        let lower = a.to_ascii_lowercase();
        let refused = matches!(
            name,
            "--upload-pack" | "--receive-pack" | "--exec" | "--extcmd" | "--template"
        ) || lower.contains("sshcommand")
            || lower.starts_with("ext::")
            || lower.starts_with("fd::")
            || match sub {
                "clone" => {
                    matches!(name, "-c" | "--config" | "-u")
                        || (a.starts_with("-c") && !a.starts_with("--"))
                }
                "fetch" | "pull" | "ls-remote" | "archive" => name == "-u",
                "rebase" => name == "-x" || a.starts_with("-x"),
                "difftool" => name == "-x",
                "grep" => name == "-O" || a.starts_with("-O") || name == "--open-files-in-pager",
                "send-email" => matches!(
                    name,
                    "--sendmail-cmd" | "--smtp-server" | "--to-cmd" | "--cc-cmd"
                ),
                _ => false,
            };
        if refused {
            hits.push(a.clone());
        }
    }
    let read_only_config = rest.iter().any(|a| {
        matches!(
            a.as_str(),
            "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "get" | "list"
        )
    });
    let always_refused_sub = match sub {
        "config" => !read_only_config,
        "filter-branch" => true,
        "bisect" => rest.first().is_some_and(|r| r == "run"),
        "submodule" => rest.iter().any(|r| r == "foreach"),
        _ => false,
    };
    if always_refused_sub && hits.is_empty() {
        hits.push(sub.to_string());
    }
    hits
}

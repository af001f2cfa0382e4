//! The deny list: files that commonly hold secrets, refused by every workspace tool.
//!
//! Each pattern is a glob matched against every tail of the workspace-relative path, so a
//! pattern matches at any depth: `.ssh` refuses `.ssh` and everything under it wherever it is,
//! `*.pem` any PEM file, `.git/config` every repository's config. `*` does not cross `/`.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The default deny list (`Workspace(deny=...)` replaces it; `deny=[]` turns it off).
pub const DEFAULT_DENY: &[&str] = &[
    ".env",
    ".env.*",
    ".envrc",
    ".ssh",
    ".git/config",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".aws",
    ".docker/config.json",
    ".kube/config",
];

pub(super) struct DenyList {
    patterns: Vec<String>,
    set: GlobSet,
    /// For a walked entry whose ancestors already passed: the patterns without `/` matched
    /// against its name alone, the others against the path's tails (`**/PATTERN`).
    names: GlobSet,
    tails: GlobSet,
    /// The last components of `tails`, so that most entries skip the path match.
    tail_names: GlobSet,
}

impl DenyList {
    pub fn new(patterns: &[String]) -> Result<DenyList, String> {
        let mut builder = GlobSetBuilder::new();
        let mut names = GlobSetBuilder::new();
        let mut tails = GlobSetBuilder::new();
        let mut tail_names = GlobSetBuilder::new();
        for p in patterns {
            let p = p.trim().trim_start_matches('/').trim_end_matches('/');
            if p.is_empty() {
                return Err("deny patterns must not be empty".into());
            }
            let glob = |form: &str, separator: bool| {
                GlobBuilder::new(form)
                    .literal_separator(separator)
                    .build()
                    .map_err(|e| format!("invalid deny pattern {p:?}: {e}"))
            };
            let tail = glob(&format!("**/{p}"), true)?;
            builder.add(tail.clone());
            builder.add(glob(&format!("**/{p}/**"), true)?);
            if p.contains('/') {
                tails.add(tail);
                // A class or an alternation may hold a `/`, and `**` matches any name: then
                // every name may end a match.
                let last = p.rsplit('/').next().unwrap_or(p);
                let plain = !p.contains(['[', '{']) && !last.contains("**");
                match glob(last, false) {
                    Ok(g) if plain => tail_names.add(g),
                    _ => tail_names.add(glob("*", false)?),
                };
            } else {
                // A name holds no `/`, so whether `*` may match one changes nothing, and without
                // that rule globset matches `id_rsa*` or `.env.*` as a prefix, not a regex.
                names.add(glob(p, false)?);
            }
        }
        let built = |b: GlobSetBuilder| b.build().map_err(|e| e.to_string());
        Ok(DenyList {
            patterns: patterns.to_vec(),
            set: built(builder)?,
            names: built(names)?,
            tails: built(tails)?,
            tail_names: built(tail_names)?,
        })
    }

    /// Whether the walker must skip the entry named `name`, given that no ancestor of it was
    /// denied: the same answer as [`DenyList::matched`] for its workspace-relative path, which
    /// `rel` gives when a pattern with a `/` could match (None: not UTF-8, not skipped), at a
    /// fraction of the cost (it runs once per entry of every walk).
    pub fn prunes<'p>(&self, name: &str, rel: impl FnOnce() -> Option<&'p str>) -> bool {
        self.names.is_match(name)
            || (self.tail_names.is_match(name) && rel().is_some_and(|r| self.tails.is_match(r)))
    }

    /// The pattern a workspace-relative path matches, if any.
    pub fn matched(&self, rel: &str) -> Option<&str> {
        if self.patterns.is_empty() {
            return None;
        }
        self.set
            .matches(rel)
            .first()
            .map(|i| self.patterns[i / 2].as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walked entry is skipped exactly when its whole path is denied.
    fn prunes_as_matched(list: &DenyList, paths: &[&str]) {
        for p in paths {
            let name = p.rsplit('/').next().unwrap();
            assert_eq!(
                list.prunes(name, || Some(p)),
                list.matched(p).is_some(),
                "{p}"
            );
        }
    }

    #[test]
    fn walked_entries_get_the_answer_of_the_whole_path_match() {
        let list = DenyList::new(
            &["conf/*.yml", "a/{b,c/d}", "x/**", "[.]cfg/k", "*.tmp"].map(String::from),
        )
        .unwrap();
        prunes_as_matched(
            &list,
            &[
                "conf/app.yml",
                "deep/conf/app.yml",
                "conf/app.yaml",
                "a/b",
                "q/a/c/d",
                "a/c",
                "x/y",
                "z/x",
                "v/.cfg/k",
                "ccfg/k",
                "n.tmp",
                "n.tmp.py",
            ],
        );
        assert!(
            !list.prunes("app.yml", || None),
            "a path that is not UTF-8 is not skipped"
        );
    }

    #[test]
    fn defaults_match_secrets_at_any_depth_and_nothing_else() {
        let list = DenyList::new(
            &DEFAULT_DENY
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
        )
        .unwrap();
        for p in [
            ".env",
            "app/.env.local",
            ".ssh",
            "home/.ssh/known_hosts",
            ".git/config",
            "vendor/x/.git/config",
            "certs/server.pem",
            "id_rsa",
            "keys/id_ed25519.pub",
        ] {
            assert!(list.matched(p).is_some(), "{p}");
        }
        for p in [
            "src/env.py",
            "environment.md",
            ".gitignore",
            "id.py",
            "src/ssh.rs",
            ".git/HEAD",
        ] {
            assert_eq!(list.matched(p), None, "{p}");
        }
        assert_eq!(list.matched("a/b.pem"), Some("*.pem"));
        prunes_as_matched(
            &list,
            &[
                ".env",
                "app/.env.local",
                "home/.ssh",
                ".git/config",
                "vendor/x/.git/config",
                "a/.docker/config.json",
                "certs/server.pem",
                "keys/id_ed25519.pub",
                "src/env.py",
                ".git/HEAD",
                "x/config",
                "docker/config.json",
            ],
        );
        assert!(DenyList::new(&[]).unwrap().matched(".env").is_none());
        assert!(DenyList::new(&["a[".into()]).is_err());
    }
}

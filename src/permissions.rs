//! Which tools an agent may call, judged on two dimensions: the tool name and its origin.
//!
//! The origin is the trust root: a remote server picks its tools' names (it can call a malicious
//! tool `search` to ride on an allowlist entry) but the origin is stamped by the framework
//! (`builtin`, `mcp:{namespace}`), so origin rules cannot be dodged by renaming.
//!
//! Rule: deny wins, then an allowlist restricts. `None` for an allowlist means "this dimension
//! sets no allowlist"; an empty set is an allowlist that admits nothing.

use std::collections::BTreeSet;
use std::fmt;

/// Allow and deny lists over tool names and origins. Immutable once built: the agent caches
/// decisions per (name, origin) for the duration of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPermissions {
    allow: Option<BTreeSet<String>>,
    deny: BTreeSet<String>,
    allow_origins: Option<BTreeSet<String>>,
    deny_origins: BTreeSet<String>,
}

/// Why a tool was refused. The `Display` text is what the model reads (inside the agent's
/// "not allowed to call" message), so it names the rule that fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    NameDenied { name: String },
    OriginDenied { name: String, origin: String },
    NotAllowed { name: String },
    NotAllowedWithOrigin { name: String, origin: String },
}

impl Denial {
    /// Stable identifier of the rule, for traces and prompt overrides.
    pub fn kind(&self) -> &'static str {
        match self {
            Denial::NameDenied { .. } => "deny",
            Denial::OriginDenied { .. } => "deny_origins",
            Denial::NotAllowed { .. } | Denial::NotAllowedWithOrigin { .. } => "not_allowed",
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denial::NameDenied { name } => write!(f, "tool '{name}' is on the deny list"),
            Denial::OriginDenied { name, origin } => {
                write!(
                    f,
                    "tool '{name}' origin '{origin}' is on the deny_origins list"
                )
            }
            Denial::NotAllowed { name } => write!(f, "tool '{name}' is not on the allow list"),
            Denial::NotAllowedWithOrigin { name, origin } => write!(
                f,
                "tool '{name}' (origin '{origin}') is not on the allow list or allow_origins"
            ),
        }
    }
}

fn to_set<I, S>(items: I) -> BTreeSet<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    items.into_iter().map(Into::into).collect()
}

impl ToolPermissions {
    /// Build from the four lists. `allow`/`allow_origins` of `None` enable no allowlist on that
    /// dimension; `Some(empty)` enables one that admits nothing.
    pub fn new<A, D, AO, DO, S>(
        allow: Option<A>,
        deny: D,
        allow_origins: Option<AO>,
        deny_origins: DO,
    ) -> Self
    where
        A: IntoIterator<Item = S>,
        D: IntoIterator<Item = S>,
        AO: IntoIterator<Item = S>,
        DO: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ToolPermissions {
            allow: allow.map(to_set),
            deny: to_set(deny),
            allow_origins: allow_origins.map(to_set),
            deny_origins: to_set(deny_origins),
        }
    }

    /// Permissions that admit every tool.
    pub fn allow_all() -> Self {
        Self::default()
    }

    pub fn allow(&self) -> Option<&BTreeSet<String>> {
        self.allow.as_ref()
    }
    pub fn deny(&self) -> &BTreeSet<String> {
        &self.deny
    }
    pub fn allow_origins(&self) -> Option<&BTreeSet<String>> {
        self.allow_origins.as_ref()
    }
    pub fn deny_origins(&self) -> &BTreeSet<String> {
        &self.deny_origins
    }

    /// True when an allowlist is enabled on either dimension.
    pub fn has_allowlist(&self) -> bool {
        self.allow.is_some() || self.allow_origins.is_some()
    }

    /// True when no rule can refuse anything (lets callers skip the gate entirely).
    pub fn is_unrestricted(&self) -> bool {
        !self.has_allowlist() && self.deny.is_empty() && self.deny_origins.is_empty()
    }

    /// Decide for a tool. `origin` is `None` when only a name is known (e.g. a name the model
    /// made up): then only the name rules can admit it, and origin rules cannot.
    pub fn check(&self, name: &str, origin: Option<&str>) -> Result<(), Denial> {
        if self.deny.contains(name) {
            return Err(Denial::NameDenied {
                name: name.to_owned(),
            });
        }
        if let Some(origin) = origin {
            if self.deny_origins.contains(origin) {
                return Err(Denial::OriginDenied {
                    name: name.to_owned(),
                    origin: origin.to_owned(),
                });
            }
        }
        if !self.has_allowlist() {
            return Ok(());
        }
        let by_name = self.allow.as_ref().is_some_and(|a| a.contains(name));
        let by_origin = match (&self.allow_origins, origin) {
            (Some(allowed), Some(origin)) => allowed.contains(origin),
            _ => false,
        };
        if by_name || by_origin {
            return Ok(());
        }
        match (&self.allow_origins, origin) {
            (Some(_), Some(origin)) => Err(Denial::NotAllowedWithOrigin {
                name: name.to_owned(),
                origin: origin.to_owned(),
            }),
            _ => Err(Denial::NotAllowed {
                name: name.to_owned(),
            }),
        }
    }

    pub fn is_allowed(&self, name: &str, origin: Option<&str>) -> bool {
        self.check(name, origin).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perms(
        allow: Option<&[&str]>,
        deny: &[&str],
        allow_origins: Option<&[&str]>,
        deny_origins: &[&str],
    ) -> ToolPermissions {
        ToolPermissions::new(
            allow.map(|a| a.to_vec()),
            deny.to_vec(),
            allow_origins.map(|a| a.to_vec()),
            deny_origins.to_vec(),
        )
    }

    #[test]
    fn default_allows_everything() {
        let p = ToolPermissions::allow_all();
        assert!(p.is_unrestricted());
        assert!(p.is_allowed("shell", Some("builtin")));
        assert!(p.is_allowed("anything", None));
    }

    #[test]
    fn deny_wins_over_allow() {
        let p = perms(Some(&["shell", "calculator"]), &["shell"], None, &[]);
        assert_eq!(
            p.check("shell", Some("builtin")).unwrap_err().to_string(),
            "tool 'shell' is on the deny list"
        );
        assert!(p.is_allowed("calculator", Some("builtin")));
    }

    #[test]
    fn deny_wins_over_allow_origins() {
        let p = perms(None, &["shell"], Some(&["builtin"]), &[]);
        let d = p.check("shell", Some("builtin")).unwrap_err();
        assert_eq!(d.kind(), "deny");
        assert!(p.is_allowed("calculator", Some("builtin")));
    }

    #[test]
    fn deny_origins_refuses_whole_server() {
        let p = perms(Some(&["calc_add"]), &[], None, &["mcp:calc"]);
        let d = p.check("calc_add", Some("mcp:calc")).unwrap_err();
        assert_eq!(
            d.to_string(),
            "tool 'calc_add' origin 'mcp:calc' is on the deny_origins list"
        );
        assert_eq!(d.kind(), "deny_origins");
    }

    #[test]
    fn none_allowlist_means_no_restriction_but_empty_denies_all() {
        let open = perms(None, &[], None, &[]);
        assert!(open.is_allowed("x", Some("builtin")));
        let closed = perms(Some(&[]), &[], None, &[]);
        assert!(!closed.is_unrestricted());
        assert_eq!(
            closed.check("x", Some("builtin")).unwrap_err().to_string(),
            "tool 'x' is not on the allow list"
        );
        let closed_origins = perms(None, &[], Some(&[]), &[]);
        assert_eq!(
            closed_origins
                .check("x", Some("builtin"))
                .unwrap_err()
                .to_string(),
            "tool 'x' (origin 'builtin') is not on the allow list or allow_origins"
        );
    }

    #[test]
    fn allowlists_are_a_union_of_the_two_dimensions() {
        let p = perms(Some(&["search"]), &[], Some(&["builtin"]), &[]);
        assert!(p.is_allowed("search", Some("mcp:web")));
        assert!(p.is_allowed("calculator", Some("builtin")));
        assert!(!p.is_allowed("fetch", Some("mcp:web")));
    }

    #[test]
    fn spoofed_name_cannot_use_origin_allowlist() {
        // A remote tool named like a builtin is still judged by its stamped origin.
        let p = perms(None, &[], Some(&["builtin"]), &[]);
        assert!(!p.is_allowed("search", Some("mcp:evil")));
        assert!(p.is_allowed("search", Some("builtin")));
    }

    #[test]
    fn unknown_origin_only_matches_name_rules() {
        let p = perms(None, &[], Some(&["builtin"]), &["mcp:x"]);
        assert_eq!(
            p.check("ghost", None).unwrap_err().to_string(),
            "tool 'ghost' is not on the allow list"
        );
        let by_name = perms(Some(&["ghost"]), &[], Some(&["builtin"]), &[]);
        assert!(by_name.is_allowed("ghost", None));
    }

    #[test]
    fn matching_is_exact() {
        let p = perms(Some(&["calc"]), &["Shell"], None, &[]);
        assert!(!p.is_allowed("calculator", None));
        assert!(!p.is_allowed("calc ", None));
        assert!(!p.is_allowed("shell", None)); // not on allow list (case-sensitive deny did not fire)
        assert_eq!(p.check("shell", None).unwrap_err().kind(), "not_allowed");
    }
}

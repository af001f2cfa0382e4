//! Gates 2-5 for a call whose tool was found: permissions, validation, the confirmation
//! decision, and how the call may run (its timeout, whether it may join a parallel batch).

use super::messages;
use super::status::CallStatus;
use crate::permissions::ToolPermissions;

/// A call refused by a gate: its status and the text the model reads instead of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub status: CallStatus,
    pub text: String,
}

impl Refusal {
    pub fn new(status: CallStatus, text: String) -> Refusal {
        Refusal { status, text }
    }
}

/// The tool a call names, with the call's arguments: what the gates ask of it. The binding
/// implements it over a registry entry and the tool object.
pub trait CallTarget {
    /// The tool's real name (a call may have used its wire name).
    fn name(&self) -> &str;
    /// Where the tool came from (`builtin`, `local`, `mcp:<server>`), for origin permissions.
    fn origin(&self) -> Option<&str>;
    /// Validates the call's arguments against the tool's schema; `Err` is the model's text.
    fn validate(&mut self) -> Result<(), String>;
    /// Whether these (valid) arguments need a person's approval. `Err` is the failure of the
    /// tool's own rule, as `Type: message`.
    fn needs_confirmation(&mut self) -> Result<bool, String>;
    /// The tool's own timeout in seconds, if it has one.
    fn timeout(&self) -> Option<f64>;
    /// Whether the tool may run beside other calls of the same response.
    fn supports_parallel(&self) -> bool;
}

/// What the agent's configuration says about every call.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings<'a> {
    pub permissions: Option<&'a ToolPermissions>,
    /// The agent's `tool_timeout`, for tools without their own.
    pub default_timeout: Option<f64>,
    /// The run has a numeric cap: calls run one at a time so each admission is exact.
    pub serial: bool,
}

/// A call that passed the gates: built once, then run and finished with its outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prepared {
    /// A person must approve it before it runs.
    pub confirm: bool,
    pub timeout: Option<f64>,
    /// It may run beside the adjacent parallel calls of its response.
    pub parallel: bool,
}

/// Runs gates 3-4 on a found tool: permissions first, so a denied tool's schema is never
/// consulted, then validation. A direct call by the program (`execute_tool`) stops here: the
/// program is the one calling, so there is nobody to ask and no batch to plan.
pub fn admit<T: CallTarget>(
    target: &mut T,
    permissions: Option<&ToolPermissions>,
) -> Result<(), Refusal> {
    if let Some(perms) = permissions {
        if let Err(denial) = perms.check(target.name(), target.origin()) {
            return Err(Refusal::new(
                CallStatus::Denied,
                messages::denied(&denial.to_string()),
            ));
        }
    }
    target
        .validate()
        .map_err(|text| Refusal::new(CallStatus::Invalid, text))
}

/// Runs gates 3-5 on a found tool: [`admit`], then the confirmation decision, so nobody is
/// asked about (and no rule sees) a malformed call. A rule that fails refuses the call: it
/// must never wave one through.
pub fn prepare<T: CallTarget>(
    target: &mut T,
    settings: &Settings<'_>,
) -> Result<Prepared, Refusal> {
    admit(target, settings.permissions)?;
    let confirm = target.needs_confirmation().map_err(|problem| {
        Refusal::new(
            CallStatus::NotConfirmed,
            messages::confirmation_rule_failed(target.name(), &problem),
        )
    })?;
    Ok(Prepared {
        confirm,
        timeout: target.timeout().or(settings.default_timeout),
        parallel: !confirm && !settings.serial && target.supports_parallel(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Fake {
        origin: Option<&'static str>,
        invalid: Option<&'static str>,
        rule: Option<Result<bool, &'static str>>,
        timeout: Option<f64>,
        parallel: bool,
        asked: bool,
        validated: bool,
    }

    impl CallTarget for Fake {
        fn name(&self) -> &str {
            "tool"
        }
        fn origin(&self) -> Option<&str> {
            self.origin
        }
        fn validate(&mut self) -> Result<(), String> {
            self.validated = true;
            self.invalid.map_or(Ok(()), |t| Err(t.to_owned()))
        }
        fn needs_confirmation(&mut self) -> Result<bool, String> {
            self.asked = true;
            self.rule.unwrap_or(Ok(false)).map_err(str::to_owned)
        }
        fn timeout(&self) -> Option<f64> {
            self.timeout
        }
        fn supports_parallel(&self) -> bool {
            self.parallel
        }
    }

    fn deny(names: &[&str], origins: &[&str]) -> ToolPermissions {
        ToolPermissions::new(
            None::<Vec<String>>,
            names.iter().map(|s| s.to_string()),
            None::<Vec<String>>,
            origins.iter().map(|s| s.to_string()),
        )
    }

    #[test]
    fn a_denied_tool_is_refused_before_anything_reads_the_call() {
        let perms = deny(&["tool"], &[]);
        let settings = Settings {
            permissions: Some(&perms),
            ..Settings::default()
        };
        let mut t = Fake {
            invalid: Some("bad"),
            ..Fake::default()
        };
        let r = prepare(&mut t, &settings).unwrap_err();
        assert_eq!(r.status, CallStatus::Denied);
        assert!(r.text.starts_with("(not allowed to call: "), "{}", r.text);
        assert!(!t.validated && !t.asked);
    }

    #[test]
    fn origins_are_checked_too() {
        let perms = deny(&[], &["mcp:fs"]);
        let settings = Settings {
            permissions: Some(&perms),
            ..Settings::default()
        };
        let mut t = Fake {
            origin: Some("mcp:fs"),
            ..Fake::default()
        };
        assert_eq!(
            prepare(&mut t, &settings).unwrap_err().status,
            CallStatus::Denied
        );
        let mut t = Fake {
            origin: Some("local"),
            ..Fake::default()
        };
        assert!(prepare(&mut t, &settings).is_ok());
    }

    #[test]
    fn an_invalid_call_is_refused_before_anyone_is_asked() {
        let mut t = Fake {
            invalid: Some("Error: x"),
            rule: Some(Ok(true)),
            ..Fake::default()
        };
        let r = prepare(&mut t, &Settings::default()).unwrap_err();
        assert_eq!(r, Refusal::new(CallStatus::Invalid, "Error: x".into()));
        assert!(!t.asked);
    }

    #[test]
    fn a_direct_call_is_validated_but_nobody_is_asked() {
        let mut t = Fake {
            rule: Some(Ok(true)),
            ..Fake::default()
        };
        assert_eq!(admit(&mut t, None), Ok(()));
        assert!(t.validated && !t.asked);
        let mut bad = Fake {
            invalid: Some("Error: x"),
            ..Fake::default()
        };
        assert_eq!(
            admit(&mut bad, None),
            Err(Refusal::new(CallStatus::Invalid, "Error: x".into()))
        );
    }

    #[test]
    fn a_failing_rule_refuses_the_call() {
        let mut t = Fake {
            rule: Some(Err("ValueError: no")),
            ..Fake::default()
        };
        let r = prepare(&mut t, &Settings::default()).unwrap_err();
        assert_eq!(r.status, CallStatus::NotConfirmed);
        assert_eq!(
            r.text,
            "Error: tool 'tool' could not decide whether the call needs confirmation (ValueError: no); it was not executed."
        );
    }

    #[test]
    fn confirmation_and_caps_keep_a_call_out_of_parallel_batches() {
        let mut t = Fake {
            parallel: true,
            ..Fake::default()
        };
        assert!(prepare(&mut t, &Settings::default()).unwrap().parallel);
        let mut t = Fake {
            parallel: true,
            rule: Some(Ok(true)),
            ..Fake::default()
        };
        let p = prepare(&mut t, &Settings::default()).unwrap();
        assert!(p.confirm && !p.parallel);
        let serial = Settings {
            serial: true,
            ..Settings::default()
        };
        let mut t = Fake {
            parallel: true,
            ..Fake::default()
        };
        assert!(!prepare(&mut t, &serial).unwrap().parallel);
    }

    #[test]
    fn the_tool_timeout_wins_over_the_agent_default() {
        let settings = Settings {
            default_timeout: Some(5.0),
            ..Settings::default()
        };
        let mut own = Fake {
            timeout: Some(0.5),
            ..Fake::default()
        };
        assert_eq!(prepare(&mut own, &settings).unwrap().timeout, Some(0.5));
        let mut none = Fake::default();
        assert_eq!(prepare(&mut none, &settings).unwrap().timeout, Some(5.0));
    }
}

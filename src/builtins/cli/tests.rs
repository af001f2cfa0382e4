use super::*;
use crate::response::ToolStatus;

fn tool(names: &[&str]) -> CliTool {
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    CliTool::new(&names, CliOptions::default()).unwrap()
}

fn call(t: &CliTool, cmd: &str) -> ToolResponse {
    t.call(&json!({ "command": cmd }))
}

#[test]
fn spec_matches_the_guide() {
    let t = tool(&["ls", "echo"]);
    let s = t.spec();
    assert_eq!(s.name, "shell");
    assert!(s.requires_confirmation && s.external_content && !s.supports_parallel);
    assert_eq!(s.parameters.len(), 1);
    assert_eq!(s.parameters[0].name, "command");
    assert!(
        s.description.contains("Allowed commands: echo, ls."),
        "{}",
        s.description
    );
    assert!(tool(&[])
        .spec()
        .description
        .contains("Allowed commands: (none)."));
}

#[test]
fn construction_pins_programs_and_refuses_bad_settings() {
    let t = tool(&["sh"]);
    let (name, pinned) = &t.programs()[0];
    assert_eq!(name, "sh");
    assert!(pinned.is_absolute());
    let err = CliTool::new(&["no-such-program-xyz".into()], CliOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("'no-such-program-xyz' was not found"), "{err}");
    for (opts, needle) in [
        (
            CliOptions {
                timeout: 0.0,
                ..Default::default()
            },
            "timeout must be positive, got 0.0",
        ),
        (
            CliOptions {
                timeout: f64::NAN,
                ..Default::default()
            },
            "timeout must be positive",
        ),
        (
            CliOptions {
                timeout: 1e300,
                ..Default::default()
            },
            "too large",
        ),
        (
            CliOptions {
                max_output_chars: 0,
                ..Default::default()
            },
            "max_output_chars must be a positive integer",
        ),
        (
            CliOptions {
                cwd: Some("/nonexistent".into()),
                ..Default::default()
            },
            "is not an existing directory",
        ),
        (
            CliOptions {
                env: Some(vec![("A=B".into(), "x".into())]),
                ..Default::default()
            },
            "invalid",
        ),
    ] {
        let err = CliTool::new(&["echo".into()], opts)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains(needle), "{err}");
    }
    let mut bad = HashMap::new();
    bad.insert("tool.msg.shell.nope".to_string(), "x".to_string());
    assert!(CliTool::new(
        &[],
        CliOptions {
            prompts: Some(bad),
            ..Default::default()
        }
    )
    .is_err());
}

#[test]
fn success_output_and_exit_codes() {
    let t = tool(&["echo", "sh", "false", "printf"]);
    let r = call(&t, "echo hello 'big world'");
    assert_eq!(r.status, ToolStatus::Success);
    assert_eq!(r.text, "[exit code 0]\nstdout:\nhello big world");
    assert_eq!(r.data, Some(json!({"returncode": 0})));
    let r = call(&t, "false");
    assert_eq!(r.status, ToolStatus::Error);
    assert_eq!(r.text, "[exit code 1]\n(no output)");
    let r = call(&t, "printf '  indented\\n\\n'");
    assert_eq!(r.text, "[exit code 0]\nstdout:\n  indented");
}

#[test]
fn refusals_come_with_clear_messages() {
    let t = tool(&["echo", "sh", "python3"]);
    let r = call(&t, "echo a | sh");
    assert_eq!(r.status, ToolStatus::Error);
    assert!(
        r.text
            .starts_with("Error: shell operators ['|'] are not supported: no shell runs"),
        "{}",
        r.text
    );
    assert!(r.text.contains("quoted text is passed literally"));
    assert!(call(&t, "echo a #b").text.contains("unquoted '#'"));
    assert_eq!(call(&t, "   ").text, "Error: the command is empty");
    assert_eq!(
        call(&t, "echo 'x").text,
        "Error: failed to parse the command (No closing quotation)"
    );
    assert_eq!(
        call(&t, "rm -rf /").text,
        "Error: command 'rm' is not on the allow-list; allowed commands: echo, python3, sh"
    );
    assert_eq!(call(&t, "/bin/echo x").status, ToolStatus::Error);
    let r = call(&t, "sh -c id");
    assert!(
        r.text.starts_with("Error: argument ['-c'] is high-risk"),
        "{}",
        r.text
    );
    assert!(call(&t, "python3 -c 'print(1)'").text.contains("['-c']"));
    assert!(call(&t, "echo a\u{202e}b")
        .text
        .contains("control or invisible"));
    assert_eq!(t.call(&json!({})).text, "Error: the command is empty");
    let long = format!("echo {}", "x".repeat(MAX_COMMAND_CHARS));
    assert_eq!(
        call(&t, &long).text,
        "Error: the command is too long (over 100000 characters)"
    );
    assert!(t.call(&json!({"command": 5})).is_error());
}

#[test]
fn a_custom_policy_replaces_the_gate() {
    let opts = CliOptions {
        arg_policy: Some(Box::new(|argv: &[String]| {
            Ok(argv
                .iter()
                .any(|a| a == "forbidden")
                .then(|| "no forbidden words".to_string()))
        })),
        ..Default::default()
    };
    let t = CliTool::new(&["sh".into(), "echo".into()], opts).unwrap();
    assert_eq!(
        call(&t, "sh -c 'echo via-sh'").text,
        "[exit code 0]\nstdout:\nvia-sh"
    );
    assert_eq!(call(&t, "echo forbidden").text, "no forbidden words");
    let failing = CliOptions {
        arg_policy: Some(Box::new(|_: &[String]| Err("boom".into()))),
        ..Default::default()
    };
    let t = CliTool::new(&["echo".into()], failing).unwrap();
    assert_eq!(
        call(&t, "echo x").text,
        "Error: the argument policy failed (boom); the command was not run"
    );
}

#[test]
fn argv0_is_the_listed_name_and_env_is_minimal() {
    let opts = CliOptions {
        env: Some(vec![("ONLY".into(), "1".into())]),
        ..Default::default()
    };
    let t = CliTool::new(
        &["sh".into(), "env".into()],
        CliOptions {
            arg_policy: Some(Box::new(|_: &[String]| Ok(None))),
            ..opts
        },
    )
    .unwrap();
    let r = call(&t, "sh -c 'echo $0'");
    assert_eq!(r.text, "[exit code 0]\nstdout:\nsh");
    let r = call(&t, "env");
    assert_eq!(r.text, "[exit code 0]\nstdout:\nONLY=1");
}

#[test]
fn floods_timeouts_and_binary_output_are_bounded() {
    let t = CliTool::new(
        &["yes".into(), "sleep".into(), "head".into()],
        CliOptions {
            max_output_chars: 100,
            timeout: 0.5,
            ..Default::default()
        },
    )
    .unwrap();
    let start = std::time::Instant::now();
    let r = call(&t, "yes");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(r.status, ToolStatus::Partial);
    assert!(
        r.text.starts_with("[exit code -9]\nstdout:\ny\ny\n"),
        "{}",
        r.text
    );
    assert!(r
        .text
        .ends_with("\n…(output truncated, over 100 characters)"));
    assert_eq!(r.data, Some(json!({"returncode": -9, "truncated": true})));
    let r = call(&t, "sleep 5");
    assert_eq!(r.status, ToolStatus::Error);
    assert_eq!(
        r.text,
        "Error: command timed out (>0.5s) and was terminated\n(no output)"
    );
    assert_eq!(r.data, Some(json!({"returncode": -9, "timed_out": true})));
    let r = call(&t, "head -c 5000 /dev/urandom");
    assert!(r.text.chars().count() < 300, "{}", r.text.len());
    assert_eq!(r.status, ToolStatus::Partial);
}

#[test]
fn cut_multibyte_text_shows_no_broken_character() {
    let t = CliTool::new(
        &["printf".into()],
        CliOptions {
            max_output_chars: 3,
            ..Default::default()
        },
    )
    .unwrap();
    let r = call(&t, "printf 'ééééééééé'");
    // The cap may be noticed before or after printf exits by itself (exit code 0 or -9).
    assert!(
        r.text
            .ends_with("\nstdout:\nééé\n…(output truncated, over 3 characters)"),
        "{}",
        r.text
    );
    assert_eq!(r.status, ToolStatus::Partial);
}

#[test]
fn an_interrupted_call_kills_the_command_and_returns_none() {
    let t = tool(&["sleep"]);
    let started = std::time::Instant::now();
    let mut asked = 0;
    let resp = t.call_interruptible(&json!({ "command": "sleep 30" }), &mut || {
        asked += 1;
        asked == 3
    });
    assert!(resp.is_none());
    assert_eq!(asked, 3);
    // The 30 s command was killed and reaped before the call returned.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn an_uninterrupted_call_returns_the_commands_response() {
    let t = tool(&["echo"]);
    let resp = t
        .call_interruptible(&json!({ "command": "echo hi" }), &mut || false)
        .unwrap();
    assert_eq!(resp.status, ToolStatus::Success);
    assert!(resp.text.ends_with("stdout:\nhi"), "{}", resp.text);
    assert!(t.awaitable());
}

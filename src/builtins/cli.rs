//! CLITool: run one allow-listed local program, without a shell, bounded in time and output.
//!
//! Decisions (the guide is silent on these; the reference implementation's weaknesses are fixed):
//! - Programs are resolved to absolute real paths at construction; a missing one is a
//!   `ConfigError` then. argv[0] stays the name the user listed (multi-call binaries work).
//! - The command line is split by [`tokenize`] (POSIX quoting, nothing expanded). Unquoted shell
//!   syntax is refused; an unquoted `#` at a word start is refused, never treated as a comment.
//! - The default argument gate is [`argpolicy`]; a custom policy replaces it entirely and sees
//!   argv with argv[0] as listed.
//! - The child gets exactly the configured environment, stdin from /dev/null, and runs in a new
//!   session and process group under a reaping supervisor ([`process`]).
//! - Result: `[exit code N]` then `stdout:`/`stderr:` sections (trailing whitespace trimmed,
//!   leading kept). Exit 0 is success; a non-zero exit is an **error** response that still
//!   carries the output (the command failed by its own account); output cut at the cap is
//!   partial. A timeout or cancellation is an error that keeps the output captured so far.
//!   Background processes still holding the output after the command exits are killed after a
//!   short grace and the result says so; nothing the command started outlives the call (see
//!   [`process`]).
//! - Linux only: the supervisor relies on PR_SET_CHILD_SUBREAPER, clone and close_range.

pub mod argpolicy;
pub mod process;
pub mod tokenize;

use crate::error::ConfigError;
use crate::prompts::Prompts;
use crate::response::ToolResponse;
use crate::schema::ToolParameter;
use crate::tool::{NativeTool, ToolSpec};
use process::{CancelToken, Ending, Limits, SpawnError, SpawnPlan};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokenize::{py_repr_list, TokenizeError};

pub const PROMPTS: &[(&str, &str)] = &[
    (
        "tool.desc.shell",
        "Run one allow-listed local command and return its output. Allowed commands: {allowed}. Accepts only a single command (with args); no pipes / redirection / multiple commands; high-risk, needs confirmation before running.",
    ),
    (
        "tool.param.shell.command",
        "The single command to run (with args), e.g. 'git status'. The program must be on the allow-list; no pipes / redirection / multiple commands. Quotes group words; no shell runs, so nothing is expanded.",
    ),
    ("tool.msg.shell.empty_cmd", "Error: the command is empty"),
    ("tool.msg.shell.too_long", "Error: the command is too long (over {max} characters)"),
    ("tool.msg.shell.parse_failed", "Error: failed to parse the command ({err})"),
    (
        "tool.msg.shell.operator",
        "Error: shell operators {bad} are not supported: no shell runs this command, so pipes / redirection / multiple commands / subshells / substitution / variables are unavailable; send a single command only (quoted text is passed literally)",
    ),
    (
        "tool.msg.shell.comment",
        "Error: an unquoted '#' at the start of a word would begin a shell comment, but no shell runs; quote it (e.g. '#1') to pass it literally, or remove the rest of the line",
    ),
    (
        "tool.msg.shell.control_char",
        "Error: the command contains control or invisible formatting characters; they are refused so that the command shown for confirmation is exactly the command that runs",
    ),
    ("tool.msg.shell.not_allowed", "Error: command '{program}' is not on the allow-list; allowed commands: {allowed}"),
    (
        "tool.msg.shell.dangerous_arg",
        "Error: argument {bad} is high-risk (arbitrary code execution / data exfiltration / reverse shell) and is rejected by default; have the app configure arg_policy to allow it if truly needed",
    ),
    ("tool.msg.shell.policy_failed", "Error: the argument policy failed ({err}); the command was not run"),
    ("tool.msg.shell.exit_code", "[exit code {code}]"),
    ("tool.msg.shell.no_output", "(no output)"),
    ("tool.msg.shell.truncated", "\n…(output truncated, over {max} characters)"),
    ("tool.msg.shell.timeout", "Error: command timed out (>{timeout}s) and was terminated"),
    ("tool.msg.shell.cancelled", "Error: command was cancelled and terminated"),
    ("tool.msg.shell.background_killed", "(processes the command left running in the background were terminated)"),
    ("tool.msg.shell.cmd_not_found", "Error: command '{program}' not found"),
    ("tool.msg.shell.unrunnable", "Error: cannot run command '{program}' ({err})"),
];

/// A replacement for the default argument gate: receives argv (argv[0] as listed); `Ok(Some)`
/// refuses with that text, `Err` refuses because the policy itself failed.
pub type ArgPolicyFn = dyn Fn(&[String]) -> Result<Option<String>, String> + Send + Sync;

/// Construction options; `Default` matches the guide's defaults.
pub struct CliOptions {
    pub timeout: f64,
    pub max_output_chars: usize,
    pub cwd: Option<PathBuf>,
    pub env: Option<Vec<(String, String)>>,
    pub arg_policy: Option<Box<ArgPolicyFn>>,
    pub prompts: Option<HashMap<String, String>>,
}

impl Default for CliOptions {
    fn default() -> Self {
        CliOptions {
            timeout: 10.0,
            max_output_chars: 4000,
            cwd: None,
            env: None,
            arg_policy: None,
            prompts: None,
        }
    }
}

pub struct CliTool {
    spec: ToolSpec,
    prompts: Prompts,
    /// Listed name -> pinned executable, sorted by name.
    programs: Vec<(String, PathBuf)>,
    allowed_text: String,
    env: Vec<CString>,
    cwd: Option<CString>,
    limits: Limits,
    timeout_text: String,
    max_output_chars: usize,
    arg_policy: Option<Box<ArgPolicyFn>>,
}

/// Grace for descendants that keep the pipes open after the command exits.
const PIPE_GRACE: Duration = Duration::from_millis(200);
/// Bytes kept per stream per output character allowed (UTF-8 needs up to 4 per character).
const BYTES_PER_CHAR: usize = 4;
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Longest command line accepted: Linux refuses a single argument over 128 KiB anyway, and a
/// bound keeps tokenizing a hostile multi-megabyte string cheap.
pub const MAX_COMMAND_CHARS: usize = 100_000;

fn invalid(msg: String) -> ConfigError {
    ConfigError::Invalid(msg)
}

/// Python's `str(float)` for the values a timeout takes (`10.0`, `0.5`, `2.25`).
pub fn py_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e16 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Pin `name` to an absolute real path. Names with a slash are taken as paths; bare names are
/// searched in `path_var`, ignoring relative entries (a relative PATH entry would resolve
/// against whatever the working directory is).
fn resolve_program(name: &str, path_var: &str) -> Option<PathBuf> {
    let candidate = if name.contains('/') {
        let p = PathBuf::from(name);
        let p = if p.is_absolute() {
            p
        } else {
            std::env::current_dir().ok()?.join(p)
        };
        is_executable(&p).then_some(p)
    } else {
        path_var
            .split(':')
            .filter(|dir| dir.starts_with('/'))
            .map(|dir| Path::new(dir).join(name))
            .find(|p| is_executable(p))
    }?;
    std::fs::canonicalize(candidate).ok()
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

impl CliTool {
    pub fn new(allowed_commands: &[String], opts: CliOptions) -> Result<CliTool, ConfigError> {
        if !(opts.timeout.is_finite() && opts.timeout > 0.0) {
            return Err(invalid(format!(
                "timeout must be positive, got {}",
                py_float(opts.timeout)
            )));
        }
        let timeout = Duration::try_from_secs_f64(opts.timeout).map_err(|_| {
            invalid(format!(
                "timeout is too large, got {}",
                py_float(opts.timeout)
            ))
        })?;
        if opts.max_output_chars == 0 {
            return Err(invalid(
                "max_output_chars must be a positive integer, got 0".into(),
            ));
        }
        let max_bytes = opts
            .max_output_chars
            .checked_mul(BYTES_PER_CHAR)
            .ok_or_else(|| {
                invalid(format!(
                    "max_output_chars is too large, got {}",
                    opts.max_output_chars
                ))
            })?;

        let env_pairs: Vec<(String, String)> = match opts.env {
            Some(pairs) => pairs,
            None => ["PATH", "HOME", "LANG"]
                .iter()
                .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
                .collect(),
        };
        let mut env = Vec::with_capacity(env_pairs.len());
        for (k, v) in &env_pairs {
            if k.is_empty() || k.contains('=') || k.contains('\0') || v.contains('\0') {
                return Err(invalid(format!(
                    "env entry {k:?} is invalid: names must be non-empty without '=' or NUL, values without NUL"
                )));
            }
            env.push(
                CString::new(format!("{k}={v}")).map_err(|_| invalid("env contains NUL".into()))?,
            );
        }
        let path_var = env_pairs
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| DEFAULT_PATH.to_string());

        let mut programs: Vec<(String, PathBuf)> = Vec::new();
        for name in allowed_commands {
            if name.is_empty() || name.contains('\0') || name.chars().any(char::is_whitespace) {
                return Err(invalid(format!(
                    "allowed command {name:?} is not a program name"
                )));
            }
            if programs.iter().any(|(n, _)| n == name) {
                continue;
            }
            let pinned = resolve_program(name, &path_var).ok_or_else(|| {
                invalid(format!(
                    "allowed command '{name}' was not found as an executable (searched PATH={path_var}); install it, give its absolute path, or remove it from allowed_commands"
                ))
            })?;
            programs.push((name.clone(), pinned));
        }
        programs.sort_by(|a, b| a.0.cmp(&b.0));

        let cwd = match opts.cwd {
            None => None,
            Some(dir) => {
                let real = std::fs::canonicalize(&dir)
                    .ok()
                    .filter(|p| p.is_dir())
                    .ok_or_else(|| {
                        invalid(format!(
                            "cwd {} is not an existing directory",
                            dir.display()
                        ))
                    })?;
                use std::os::unix::ffi::OsStrExt;
                Some(
                    CString::new(real.as_os_str().as_bytes())
                        .map_err(|_| invalid("cwd contains NUL".into()))?,
                )
            }
        };

        let prompts = Prompts::new(PROMPTS, opts.prompts)?;
        let names: Vec<&str> = programs.iter().map(|(n, _)| n.as_str()).collect();
        let allowed_text = if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        };
        let description = prompts.fmt("tool.desc.shell", &[("allowed", &allowed_text)]);
        let mut spec = ToolSpec::new(
            "shell",
            description,
            vec![ToolParameter::new(
                "command",
                "string",
                prompts.get("tool.param.shell.command"),
            )],
        );
        spec.requires_confirmation = true;
        spec.external_content = true;
        spec.supports_parallel = false;

        Ok(CliTool {
            spec,
            prompts,
            programs,
            allowed_text,
            env,
            cwd,
            limits: Limits {
                timeout,
                max_bytes,
                grace: PIPE_GRACE,
            },
            timeout_text: py_float(opts.timeout),
            max_output_chars: opts.max_output_chars,
            arg_policy: opts.arg_policy,
        })
    }

    /// The pinned executables, by listed name.
    pub fn programs(&self) -> &[(String, PathBuf)] {
        &self.programs
    }

    /// Check a command line and build what would run, or the error response for the model.
    pub fn plan(&self, command: &str) -> Result<SpawnPlan, ToolResponse> {
        let p = &self.prompts;
        if command.len() > MAX_COMMAND_CHARS && command.chars().count() > MAX_COMMAND_CHARS {
            return Err(ToolResponse::error(p.fmt(
                "tool.msg.shell.too_long",
                &[("max", &MAX_COMMAND_CHARS.to_string())],
            )));
        }
        let tokens = tokenize::tokenize(command).map_err(|e| {
            ToolResponse::error(match e {
                TokenizeError::Empty => p.fmt("tool.msg.shell.empty_cmd", &[]),
                TokenizeError::Parse(err) => p.fmt("tool.msg.shell.parse_failed", &[("err", err)]),
                TokenizeError::Operators(ops) => {
                    p.fmt("tool.msg.shell.operator", &[("bad", &py_repr_list(&ops))])
                }
                TokenizeError::Comment => p.fmt("tool.msg.shell.comment", &[]),
                TokenizeError::Control => p.fmt("tool.msg.shell.control_char", &[]),
            })
        })?;
        let program = &tokens[0];
        let Some((_, pinned)) = self.programs.iter().find(|(n, _)| n == program) else {
            return Err(ToolResponse::error(p.fmt(
                "tool.msg.shell.not_allowed",
                &[("program", program), ("allowed", &self.allowed_text)],
            )));
        };
        match &self.arg_policy {
            Some(policy) => match policy(&tokens) {
                Ok(None) => {}
                Ok(Some(reason)) => return Err(ToolResponse::error(reason)),
                Err(err) => {
                    return Err(ToolResponse::error(
                        p.fmt("tool.msg.shell.policy_failed", &[("err", &err)]),
                    ))
                }
            },
            None => {
                let real = pinned.to_string_lossy();
                if let Some(bad) =
                    argpolicy::check(&[basename(program), basename(&real)], &tokens[1..])
                {
                    return Err(ToolResponse::error(p.fmt(
                        "tool.msg.shell.dangerous_arg",
                        &[("bad", &py_repr_list(&bad))],
                    )));
                }
            }
        }
        use std::os::unix::ffi::OsStrExt;
        let to_c = |s: &[u8]| {
            CString::new(s)
                .map_err(|_| ToolResponse::error(p.fmt("tool.msg.shell.control_char", &[])))
        };
        Ok(SpawnPlan {
            path: to_c(pinned.as_os_str().as_bytes())?,
            argv: tokens
                .iter()
                .map(|t| to_c(t.as_bytes()))
                .collect::<Result<_, _>>()?,
            env: self.env.clone(),
            cwd: self.cwd.clone(),
        })
    }

    /// Validate and run `command`; `cancel` stops it from another thread.
    pub fn run(&self, command: &str, cancel: Option<&CancelToken>) -> ToolResponse {
        let plan = match self.plan(command) {
            Ok(plan) => plan,
            Err(resp) => return resp,
        };
        let p = &self.prompts;
        let program = plan
            .argv
            .first()
            .map(|a| a.to_string_lossy().into_owned())
            .unwrap_or_default();
        let outcome = match process::run(&plan, &self.limits, cancel) {
            Ok(o) => o,
            Err(SpawnError::Exec(nix::errno::Errno::ENOENT)) => {
                return ToolResponse::error(
                    p.fmt("tool.msg.shell.cmd_not_found", &[("program", &program)]),
                );
            }
            Err(SpawnError::Exec(e) | SpawnError::Setup(e)) => {
                return ToolResponse::error(p.fmt(
                    "tool.msg.shell.unrunnable",
                    &[("program", &program), ("err", e.desc())],
                ));
            }
            Err(SpawnError::Chdir(e)) => {
                let err = format!("cannot enter the working directory: {}", e.desc());
                return ToolResponse::error(p.fmt(
                    "tool.msg.shell.unrunnable",
                    &[("program", &program), ("err", &err)],
                ));
            }
        };

        let (out, out_cut) = self.decode(&outcome.stdout, outcome.stdout_truncated);
        let (err, err_cut) = self.decode(&outcome.stderr, outcome.stderr_truncated);
        let truncated = out_cut || err_cut;
        let code = outcome.exit.map(|e| e.returncode());
        let mut lines: Vec<String> = Vec::new();
        let mut data = Map::new();
        match outcome.ending {
            Ending::Timeout => {
                lines.push(p.fmt("tool.msg.shell.timeout", &[("timeout", &self.timeout_text)]));
                data.insert("timed_out".into(), json!(true));
            }
            Ending::Cancelled => {
                lines.push(p.fmt("tool.msg.shell.cancelled", &[]));
                data.insert("cancelled".into(), json!(true));
            }
            Ending::Exited | Ending::Overflow => {
                let shown = code.map_or_else(|| "?".to_string(), |c| c.to_string());
                lines.push(p.fmt("tool.msg.shell.exit_code", &[("code", &shown)]));
            }
        }
        data.insert("returncode".into(), code.map_or(Value::Null, |c| json!(c)));
        if truncated {
            data.insert("truncated".into(), json!(true));
        }
        if outcome.stragglers_killed {
            data.insert("background_killed".into(), json!(true));
            lines.push(p.fmt("tool.msg.shell.background_killed", &[]));
        }
        if !out.is_empty() {
            lines.push(format!("stdout:\n{out}"));
        }
        if !err.is_empty() {
            lines.push(format!("stderr:\n{err}"));
        }
        if out.is_empty() && err.is_empty() {
            lines.push(p.fmt("tool.msg.shell.no_output", &[]));
        }
        let text = lines.join("\n");
        let resp = match outcome.ending {
            Ending::Timeout | Ending::Cancelled => ToolResponse::error(text),
            // We killed it for talking too much: the output is incomplete, not a failure.
            Ending::Overflow => ToolResponse::partial(text),
            Ending::Exited if code != Some(0) => ToolResponse::error(text),
            Ending::Exited if truncated => ToolResponse::partial(text),
            Ending::Exited => ToolResponse::ok(text),
        };
        resp.with_data(Value::Object(data))
    }

    /// Lossy UTF-8 text of a captured stream, cut to `max_output_chars` with the marker.
    fn decode(&self, bytes: &[u8], byte_cut: bool) -> (String, bool) {
        let mut bytes = bytes;
        if byte_cut {
            // Do not show a replacement character for a sequence the cap split in half.
            if let Err(e) = std::str::from_utf8(bytes) {
                if e.error_len().is_none() {
                    bytes = &bytes[..e.valid_up_to()];
                }
            }
        }
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end();
        let mut cut = byte_cut;
        let mut shown: String = match text.char_indices().nth(self.max_output_chars) {
            Some((at, _)) => {
                cut = true;
                text[..at].to_string()
            }
            None => text.to_string(),
        };
        if cut {
            shown.push_str(&self.prompts.fmt(
                "tool.msg.shell.truncated",
                &[("max", &self.max_output_chars.to_string())],
            ));
        }
        (shown, cut)
    }
}

impl NativeTool for CliTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: &Value) -> ToolResponse {
        self.call_cancellable(args, None)
    }

    /// The command runs on a scoped helper thread while the caller's thread asks `interrupted`
    /// every [`INTERRUPT_POLL`]: a pending Ctrl-C kills the command's process group (and reaps
    /// it) at once instead of waiting for the command or its timeout.
    fn call_interruptible(
        &self,
        args: &Value,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Option<ToolResponse> {
        let token = match CancelToken::new() {
            Ok(token) => token,
            // No pipe to spare: run uninterruptibly rather than fail the call.
            Err(_) => return Some(self.call(args)),
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let _ = tx.send(self.call_cancellable(args, Some(&token)));
            });
            let outcome = loop {
                match rx.recv_timeout(INTERRUPT_POLL) {
                    Ok(resp) => break Some(resp),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        if interrupted() {
                            token.cancel();
                            break None;
                        }
                    }
                    // The worker panicked: its panic is re-raised below.
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break None,
                }
            };
            // On cancellation the run kills and reaps the group before the worker returns.
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
            outcome
        })
    }

    /// A command can be awaited without holding a worker thread and, above all, cancelled:
    /// cancelling the awaiting task kills its process group (see `CLITool.arun`).
    fn awaitable(&self) -> bool {
        true
    }
}

/// How often a blocking call checks whether its caller was interrupted (Ctrl-C).
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

impl CliTool {
    /// `call` with a token that stops the command from another thread (the async binding
    /// cancels it when the awaiting task is cancelled).
    pub fn call_cancellable(&self, args: &Value, cancel: Option<&CancelToken>) -> ToolResponse {
        match args.get("command") {
            Some(Value::String(cmd)) => self.run(cmd, cancel),
            None | Some(Value::Null) => {
                ToolResponse::error(self.prompts.fmt("tool.msg.shell.empty_cmd", &[]))
            }
            Some(_) => ToolResponse::error(self.prompts.fmt(
                "tool.msg.shell.parse_failed",
                &[("err", "command must be a string")],
            )),
        }
    }
}

#[cfg(test)]
mod tests;

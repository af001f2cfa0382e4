//! The stdio transport: the server as a child process in its own process group.
//!
//! The server is started by our own `tokio::process::Command` (a process group of its own, a
//! minimal environment, a guard that kills the group if this process dies) and its pipes are
//! handed to rmcp as a [`LineTransport`], which reads the server's output through a
//! [`LineGuard`].

use super::line_guard::{LineGuard, MAX_MESSAGE_BYTES};
use super::sanitize::sanitize;
use super::stdio_transport::LineTransport;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdout, Command};

/// Last bytes of the server's stderr kept for error messages.
const STDERR_TAIL_BYTES: usize = 4096;
/// Variables passed on from our environment when the caller does not replace them; the rest
/// (API keys, tokens) is not handed to an untrusted server.
pub const INHERITED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
];

/// How the server is started.
#[derive(Debug, Clone, Default)]
pub struct StdioConfig {
    pub command: String,
    pub args: Vec<String>,
    /// Added on top of [`INHERITED_ENV`].
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
}

/// The running child. Dropping it kills the whole process group.
pub struct ChildProcess {
    child: Option<Child>,
    pgid: Option<i32>,
    /// See [`spawn_group_guard`]; `None` when it could not be started.
    guard: Option<Child>,
    /// The process that started the server (a forked child does not kill it).
    owner: u32,
    stderr_tail: Arc<Mutex<VecDeque<u8>>>,
    /// The stderr drain task; it ends when every holder of the pipe's write end is gone.
    stderr_drain: Option<tokio::task::JoinHandle<()>>,
}

impl ChildProcess {
    /// Spawns the server and returns it with the stdio pair for rmcp (must run inside a tokio
    /// runtime: the stderr drain and the stdin writer are tasks on it).
    pub fn spawn(cfg: &StdioConfig) -> std::io::Result<(ChildProcess, LineTransport<ChildStdout>)> {
        let mut cmd = Command::new(&cfg.command);
        cmd.args(&cfg.args).env_clear();
        for key in INHERITED_ENV {
            if let Ok(v) = std::env::var(key) {
                cmd.env(key, v);
            }
        }
        cmd.envs(cfg.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &cfg.cwd {
            cmd.current_dir(dir);
        }
        // Own process group: closing the client can kill everything the server started.
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        // If this process dies without closing the client (os._exit, SIGKILL), the kernel
        // kills the server too: a server that ignores the end of its input would otherwise run
        // on. The signal follows the thread that forks, here a tokio worker of the runtime,
        // which lives as long as the process. (What the server started is not covered.)
        use nix::libc::{self, c_ulong, PR_SET_PDEATHSIG, SIGKILL};
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(PR_SET_PDEATHSIG, SIGKILL as c_ulong, 0, 0, 0);
                if libc::getppid() != parent {
                    libc::_exit(1); // the parent died before the request took hold
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("the server's pipes are missing"));
        };
        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_BYTES)));
        let stderr_drain = child.stderr.take().map(|mut stderr| {
            // Drained continuously (a full pipe would block the server) into a small ring.
            let tail = stderr_tail.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                while let Ok(n @ 1..) = stderr.read(&mut buf).await {
                    if let Ok(mut t) = tail.lock() {
                        t.extend(&buf[..n]);
                        let excess = t.len().saturating_sub(STDERR_TAIL_BYTES);
                        t.drain(..excess);
                    }
                }
            })
        });
        let pgid = child.id().and_then(|p| i32::try_from(p).ok());
        let guard = pgid.and_then(spawn_group_guard);
        Ok((
            ChildProcess {
                child: Some(child),
                pgid,
                guard,
                owner: std::process::id(),
                stderr_tail,
                stderr_drain,
            },
            LineTransport::new(LineGuard::new(stdout, MAX_MESSAGE_BYTES), stdin),
        ))
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// The last few KiB the server wrote to stderr, cleaned for display, once the drain has
    /// read everything (waiting at most `wait`: a grandchild may hold the pipe open). Call after
    /// [`ChildProcess::shutdown`]; without the wait, a server that printed its error and exited
    /// could be reported before its words were read.
    pub async fn final_stderr_tail(&mut self, wait: Duration) -> String {
        if let Some(drain) = self.stderr_drain.take() {
            let _ = tokio::time::timeout(wait, drain).await;
        }
        let ring = self.stderr_tail.lock();
        let mut ring = ring.map(|t| t.clone()).unwrap_or_default();
        let text = String::from_utf8_lossy(ring.make_contiguous());
        sanitize(&text, STDERR_TAIL_BYTES).text.trim().to_string()
    }

    /// Kills the server's process group, then its guard (which is no longer needed: killed
    /// before its input closes, it never acts on a group id that may be reused).
    fn kill_group(&mut self) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        if let Some(guard) = &mut self.guard {
            let _ = guard.start_kill();
        }
    }

    /// Call after rmcp closed the server's stdin: gives the server `grace` to exit on its own,
    /// then kills its process group (anything it left behind included) and reaps it.
    pub async fn shutdown(&mut self, grace: Duration) {
        if let Some(mut child) = self.child.take() {
            let exited = tokio::time::timeout(grace, child.wait()).await.is_ok();
            self.kill_group();
            if !exited {
                let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            }
            if let Some(mut guard) = self.guard.take() {
                let _ = tokio::time::timeout(Duration::from_secs(2), guard.wait()).await;
            }
        }
    }
}

/// Starts a process that kills the server's whole process group if this process dies without
/// closing the client (`os._exit`, SIGKILL, a crash): `PR_SET_PDEATHSIG` only reaches the
/// server itself, not what it started. The guard is `/bin/sh` blocked reading a pipe whose write
/// end is held by this process (close-on-exec, so no server inherits it); the kernel closes the
/// pipe when this process dies, `read` returns, and the guard kills the group.
///
/// The guard runs inside the server's group, so that group's id stays taken while the guard
/// lives and can never name another program's group when it fires (a child forked from this
/// process holds the pipe too, and may outlive the server by long), and a normal close, which
/// kills the group, ends the guard with it. Signals sent to this process's own group (Ctrl-C
/// in a terminal) reach neither. Best effort: without `/bin/sh` there is no guard, and the
/// server is still killed by `PR_SET_PDEATHSIG`.
fn spawn_group_guard(pgid: i32) -> Option<Child> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(r#"read _; kill -s KILL -- "-$0" 2>/dev/null"#)
        .arg(pgid.to_string())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(pgid)
        .kill_on_drop(true);
    cmd.spawn().ok()
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // In a child forked from the process that started the server (os.fork,
        // multiprocessing), the server is the parent's: leave it running, and do not let the
        // process handles kill it (and the guard) as they drop.
        if std::process::id() != self.owner {
            std::mem::forget(self.child.take());
            std::mem::forget(self.guard.take());
            return;
        }
        if self.child.is_some() {
            self.kill_group();
        }
    }
}

//! Running one command with bounded time and output, leaving nothing behind.
//!
//! Layout of a run (P = this process, S = a supervisor forked from P, C = the command):
//! - S starts a new session, becomes a *child subreaper* and starts C (clone with CLONE_VM |
//!   CLONE_VFORK, so the host's memory is copied once per run, not twice). C puts itself in its own
//!   process group (S does the same from its side, so the group exists before P learns C's pid),
//!   connects stdin to /dev/null and stdout/stderr to two pipes read by P, and execs the program.
//! - Every descendant of C that loses its parent is re-parented to S, never to init, so S can
//!   reap all of them: orphan zombies do not pile up even when PID 1 does not reap (containers).
//! - P never signals a pid it did not create and has not yet reaped: it asks S (its own child) to
//!   kill C's group with SIGUSR1, and S only does so while C is still unreaped (waitid WNOWAIT), so
//!   the group id cannot have been recycled.
//! - S reports to P over a status pipe: C's pid, exec/chdir failures (written by C), C's exit
//!   status, and finally "all reaped". P tells S to finish by closing a control pipe; S then kills
//!   C's group, then every process still in its session or re-parented to it (descendants that
//!   left the group with setpgid/setsid), and reaps until no descendant remains.
//! - P keeps reading the pipes for a short grace after C exits (a background child may still be
//!   writing), then finishes: a finished command never turns into a timeout because something
//!   it started holds the pipes.
//!
//! The code between fork and exec runs in a copy of a multi-threaded process, so it only makes
//! raw async-signal-safe system calls: no allocation, no locks, no panics.

use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::libc::{self, c_char};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::waitpid;
use nix::unistd::{pipe2, Pid};
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What to run: the pinned executable, the argv shown to it (argv[0] is the listed name) and the
/// complete environment.
pub struct SpawnPlan {
    pub path: CString,
    pub argv: Vec<CString>,
    pub env: Vec<CString>,
    pub cwd: Option<CString>,
}

/// Bounds of one run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Duration,
    /// Bytes kept per stream; exceeding it kills the group.
    pub max_bytes: usize,
    /// How long after C exits P keeps reading pipes that descendants still hold open.
    pub grace: Duration,
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// C exited by itself.
    Exited,
    /// The deadline passed while C was running; the group was killed.
    Timeout,
    /// A stream exceeded `max_bytes`; the group was killed.
    Overflow,
    /// The caller cancelled; the group was killed.
    Cancelled,
}

/// How C ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitInfo {
    Code(i32),
    Signal(i32),
}

impl ExitInfo {
    /// Shell-style single number: the exit code, or minus the signal (as Python's returncode).
    pub fn returncode(self) -> i32 {
        match self {
            ExitInfo::Code(c) => c,
            ExitInfo::Signal(s) => -s,
        }
    }
}

#[derive(Debug)]
pub struct Outcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub exit: Option<ExitInfo>,
    pub ending: Ending,
    /// Descendants still held the output pipes after C exited and were killed.
    pub stragglers_killed: bool,
    /// Pid of the command, which is also its process-group id.
    pub pid: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpawnError {
    /// execve failed in C (ENOENT, EACCES, E2BIG, ...).
    Exec(Errno),
    /// chdir to the configured working directory failed in C.
    Chdir(Errno),
    /// Pipes, fork or the supervisor failed.
    Setup(Errno),
}

/// Lets another thread (or an async task being dropped) stop a run: the run loop polls the
/// token's pipe, so cancellation takes effect at once rather than at the next timeout tick.
pub struct CancelToken {
    flag: AtomicBool,
    read: OwnedFd,
    write: OwnedFd,
}

impl CancelToken {
    pub fn new() -> Result<CancelToken, Errno> {
        let (read, write) = pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
        Ok(CancelToken {
            flag: AtomicBool::new(false),
            read,
            write,
        })
    }
    pub fn cancel(&self) {
        if !self.flag.swap(true, Ordering::SeqCst) {
            // One byte makes the read end readable for good; a full pipe is impossible here.
            let _ = nix::unistd::write(&self.write, &[1u8]);
        }
    }
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

const TAG_PID: i32 = 1;
const TAG_EXEC_ERR: i32 = 2;
const TAG_CHDIR_ERR: i32 = 3;
const TAG_EXIT: i32 = 4;
const TAG_SIGNALED: i32 = 5;
const TAG_SETUP_ERR: i32 = 6;
const TAG_DONE: i32 = 7;

/// After P closes the control pipe, how long S may take to kill and reap everything before P
/// gives up on it (only a descendant that escaped the group into its own session can delay it).
const REAP_WAIT: Duration = Duration::from_secs(2);
const READ_CHUNK: usize = 65536;

/// Everything the forked code needs, prepared before fork so nothing is allocated after it.
struct ChildCtx {
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
    cwd: *const c_char,
    devnull: RawFd,
    out_w: RawFd,
    err_w: RawFd,
    status_w: RawFd,
    ctl_r: RawFd,
    parent: libc::pid_t,
    /// Top of a stack for C, which S starts with clone(CLONE_VM | CLONE_VFORK): C borrows S's
    /// memory until it execs, so only one process image is ever copied per run.
    child_stack_top: *mut libc::c_void,
}

/// C runs only its setup code on this stack (a few system calls) before exec.
const CHILD_STACK_BYTES: usize = 64 * 1024;

/// Move a descriptor above 0..2 so dup2 onto stdio in the child cannot clobber another one.
fn above_stdio(fd: OwnedFd) -> Result<OwnedFd, Errno> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    let raw = fcntl(fd.as_fd(), FcntlArg::F_DUPFD_CLOEXEC(3))?;
    // SAFETY: fcntl returned a fresh descriptor that nothing else owns.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) })
}

fn cloexec_pipe() -> Result<(OwnedFd, OwnedFd), Errno> {
    let (r, w) = pipe2(OFlag::O_CLOEXEC)?;
    Ok((above_stdio(r)?, above_stdio(w)?))
}

/// Run `plan` to completion within `limits`. Output is capped while it is read.
pub fn run(
    plan: &SpawnPlan,
    limits: &Limits,
    cancel: Option<&CancelToken>,
) -> Result<Outcome, SpawnError> {
    let (out_r, out_w) = cloexec_pipe().map_err(SpawnError::Setup)?;
    let (err_r, err_w) = cloexec_pipe().map_err(SpawnError::Setup)?;
    let (status_r, status_w) = cloexec_pipe().map_err(SpawnError::Setup)?;
    let (ctl_r, ctl_w) = cloexec_pipe().map_err(SpawnError::Setup)?;
    let devnull = nix::fcntl::open(
        "/dev/null",
        OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .and_then(above_stdio)
    .map_err(SpawnError::Setup)?;

    let mut argv_ptrs: Vec<*const c_char> = plan.argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const c_char> = plan.env.iter().map(|a| a.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    // Allocated before the fork: S must not allocate. 16-byte aligned top, stack grows down.
    let mut child_stack = vec![0u128; CHILD_STACK_BYTES / 16];
    // SAFETY: one past the end of the allocation, used only as the initial stack pointer.
    let child_stack_top =
        unsafe { child_stack.as_mut_ptr().add(child_stack.len()) }.cast::<libc::c_void>();
    let ctx = ChildCtx {
        path: plan.path.as_ptr(),
        argv: argv_ptrs.as_ptr(),
        envp: env_ptrs.as_ptr(),
        cwd: plan.cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        devnull: devnull.as_raw_fd(),
        out_w: out_w.as_raw_fd(),
        err_w: err_w.as_raw_fd(),
        status_w: status_w.as_raw_fd(),
        ctl_r: ctl_r.as_raw_fd(),
        // SAFETY: getpid has no preconditions.
        parent: unsafe { libc::getpid() },
        child_stack_top,
    };

    // S must start with SIGUSR1 blocked so a kill request that arrives before its handler is
    // installed is held, not fatal.
    let supervisor = {
        // SAFETY: plain libc calls on locally owned signal sets; fork's child only runs
        // `supervise`, which is restricted to async-signal-safe calls.
        unsafe {
            let mut block: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut block);
            libc::sigaddset(&mut block, libc::SIGUSR1);
            libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
            let pid = libc::fork();
            if pid == 0 {
                child::supervise(&ctx);
            }
            let fork_errno = Errno::last();
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            if pid < 0 {
                return Err(SpawnError::Setup(fork_errno));
            }
            Pid::from_raw(pid)
        }
    };
    drop((out_w, err_w, status_w, ctl_r, devnull));
    for fd in [&out_r, &err_r, &status_r] {
        let _ = fcntl(fd.as_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK));
    }
    let mut run = Running {
        supervisor,
        reaped: false,
        ctl_w: Some(ctl_w),
        kill_sent: false,
        killed_at: None,
        supervisor_done: false,
        gave_up: false,
    };
    let result = collect(&mut run, &out_r, &err_r, &status_r, limits, cancel);
    run.finish_and_reap();
    result
}

/// P's handle on S; dropping it without a clean finish still kills and reaps.
struct Running {
    supervisor: Pid,
    reaped: bool,
    ctl_w: Option<OwnedFd>,
    kill_sent: bool,
    killed_at: Option<Instant>,
    /// S reported that everything is reaped, or closed the status pipe (exited).
    supervisor_done: bool,
    /// The run loop stopped waiting for S (a descendant escaped the group).
    gave_up: bool,
}

impl Running {
    fn request_kill(&mut self) {
        if !self.kill_sent {
            self.kill_sent = true;
            self.killed_at = Some(Instant::now());
            let _ = kill(self.supervisor, Signal::SIGUSR1);
        }
    }
    fn release(&mut self) {
        self.ctl_w = None;
    }
    fn finish_and_reap(&mut self) {
        if self.reaped {
            return;
        }
        self.release();
        if !self.supervisor_done && !self.gave_up {
            // Abnormal exit from the run loop: give S the usual time to kill and reap.
            let until = Instant::now() + REAP_WAIT;
            while Instant::now() < until {
                match waitpid(self.supervisor, Some(nix::sys::wait::WaitPidFlag::WNOHANG)) {
                    Ok(nix::sys::wait::WaitStatus::StillAlive) | Err(Errno::EINTR) => {}
                    _ => {
                        self.reaped = true;
                        return;
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            self.gave_up = true;
        }
        if self.gave_up && !self.supervisor_done {
            // Only a descendant that left the group keeps S waiting; give up on it.
            let _ = kill(self.supervisor, Signal::SIGKILL);
        }
        // S has said it is done (or was just killed): it is exiting, so this wait is short.
        while let Err(Errno::EINTR) = waitpid(self.supervisor, None) {}
        self.reaped = true;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.reaped {
            self.request_kill();
            self.finish_and_reap();
        }
    }
}

struct Stream<'a> {
    fd: &'a OwnedFd,
    buf: Vec<u8>,
    open: bool,
    truncated: bool,
}

impl Stream<'_> {
    /// Read what is available; returns true when the byte cap was crossed by this read.
    fn pump(&mut self, cap: usize, scratch: &mut [u8]) -> bool {
        let mut crossed = false;
        loop {
            match nix::unistd::read(self.fd, scratch) {
                Ok(0) => {
                    self.open = false;
                    return crossed;
                }
                Ok(n) => {
                    let room = cap.saturating_sub(self.buf.len());
                    if n > room {
                        self.buf.extend_from_slice(&scratch[..room]);
                        if !self.truncated {
                            self.truncated = true;
                            crossed = true;
                        }
                    } else {
                        self.buf.extend_from_slice(&scratch[..n]);
                    }
                    if n < scratch.len() {
                        return crossed;
                    }
                }
                Err(Errno::EINTR) => continue,
                Err(Errno::EAGAIN) => return crossed,
                Err(_) => {
                    self.open = false;
                    return crossed;
                }
            }
        }
    }
}

fn remaining(until: Instant, now: Instant) -> Duration {
    until.saturating_duration_since(now)
}

fn collect(
    run: &mut Running,
    out_r: &OwnedFd,
    err_r: &OwnedFd,
    status_r: &OwnedFd,
    limits: &Limits,
    cancel: Option<&CancelToken>,
) -> Result<Outcome, SpawnError> {
    let start = Instant::now();
    let deadline = start + limits.timeout;
    let mut out = Stream {
        fd: out_r,
        buf: Vec::new(),
        open: true,
        truncated: false,
    };
    let mut err = Stream {
        fd: err_r,
        buf: Vec::new(),
        open: true,
        truncated: false,
    };
    let mut scratch = vec![0u8; READ_CHUNK];
    let mut status_buf: Vec<u8> = Vec::new();
    let mut status_open = true;
    let mut exit: Option<ExitInfo> = None;
    let mut exited_at: Option<Instant> = None;
    let mut failure: Option<SpawnError> = None;
    let mut done = false;
    let mut ending = Ending::Exited;
    let mut released_at: Option<Instant> = None;
    let mut stragglers = false;
    let mut pid: Option<i32> = None;

    loop {
        let now = Instant::now();
        if !run.kill_sent && exit.is_none() {
            if cancel.is_some_and(|c| c.is_cancelled()) {
                ending = Ending::Cancelled;
                run.request_kill();
            } else if now >= deadline {
                ending = Ending::Timeout;
                run.request_kill();
            }
        }
        if let (Some(at), None) = (exited_at, released_at) {
            let pipes_open = out.open || err.open;
            let cancelled = cancel.is_some_and(|c| c.is_cancelled());
            if !pipes_open
                || now >= at + limits.grace
                || run.kill_sent
                || cancelled
                || failure.is_some()
            {
                stragglers = pipes_open && !run.kill_sent && failure.is_none();
                run.release();
                released_at = Some(now);
            }
        }
        if done || !status_open {
            run.supervisor_done = true;
            // S has reaped everything (or died); drain what the pipes still hold and stop.
            if out.open && out.pump(limits.max_bytes, &mut scratch) && exit.is_none() {
                ending = Ending::Overflow;
            }
            if err.open && err.pump(limits.max_bytes, &mut scratch) && exit.is_none() {
                ending = Ending::Overflow;
            }
            break;
        }
        if let Some(at) = released_at {
            if now >= at + REAP_WAIT {
                run.gave_up = true;
                break;
            }
        }
        if let (Some(at), None) = (run.killed_at, exit) {
            // C did not die within REAP_WAIT of SIGKILL (uninterruptible sleep): stop waiting.
            if now >= at + REAP_WAIT {
                run.gave_up = true;
                break;
            }
        }

        let mut wait = if released_at.is_some() {
            remaining(released_at.map_or(now, |a| a + REAP_WAIT), now)
        } else if let Some(at) = exited_at {
            remaining(at + limits.grace, now)
        } else if run.kill_sent {
            REAP_WAIT
        } else {
            remaining(deadline, now)
        };
        wait = wait.max(Duration::from_millis(1));
        let ms = wait.as_millis().min(i32::MAX as u128) as i32;

        // nix's poll wrapper needs its "poll" feature; the raw call keeps the feature set to
        // process/signal/fs (shared with rmcp's process-wrap).
        let mut fds: [libc::pollfd; 4] = [libc::pollfd {
            fd: -1,
            events: libc::POLLIN,
            revents: 0,
        }; 4];
        if out.open {
            fds[0].fd = out.fd.as_raw_fd();
        }
        if err.open {
            fds[1].fd = err.fd.as_raw_fd();
        }
        fds[2].fd = status_r.as_raw_fd();
        if let Some(c) = cancel.filter(|_| !run.kill_sent) {
            fds[3].fd = c.read.as_raw_fd();
        }
        // SAFETY: fds is a valid array of 4 pollfd; negative fds are ignored by poll.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), 4, ms) };
        if rc < 0 {
            let e = Errno::last();
            if e != Errno::EINTR {
                return Err(SpawnError::Setup(e));
            }
        }
        let ready = |i: usize| fds[i].fd >= 0 && fds[i].revents != 0;
        let (out_ready, err_ready, status_ready) = (ready(0), ready(1), ready(2));
        if out_ready && out.pump(limits.max_bytes, &mut scratch) && !run.kill_sent && exit.is_none()
        {
            ending = Ending::Overflow;
            run.request_kill();
        }
        if err_ready && err.pump(limits.max_bytes, &mut scratch) && !run.kill_sent && exit.is_none()
        {
            ending = Ending::Overflow;
            run.request_kill();
        }
        if status_ready {
            loop {
                let mut rec = [0u8; 64];
                match nix::unistd::read(status_r, &mut rec) {
                    Ok(0) => {
                        status_open = false;
                        break;
                    }
                    Ok(n) => status_buf.extend_from_slice(&rec[..n]),
                    Err(Errno::EINTR) => continue,
                    Err(_) => break,
                }
            }
            while status_buf.len() >= 8 {
                let tag = i32::from_ne_bytes([
                    status_buf[0],
                    status_buf[1],
                    status_buf[2],
                    status_buf[3],
                ]);
                let val = i32::from_ne_bytes([
                    status_buf[4],
                    status_buf[5],
                    status_buf[6],
                    status_buf[7],
                ]);
                status_buf.drain(..8);
                match tag {
                    TAG_PID => pid = Some(val),
                    TAG_EXEC_ERR => failure = Some(SpawnError::Exec(Errno::from_raw(val))),
                    TAG_CHDIR_ERR => failure = Some(SpawnError::Chdir(Errno::from_raw(val))),
                    TAG_SETUP_ERR => failure = Some(SpawnError::Setup(Errno::from_raw(val))),
                    TAG_EXIT | TAG_SIGNALED => {
                        exit = Some(if tag == TAG_EXIT {
                            ExitInfo::Code(val)
                        } else {
                            ExitInfo::Signal(val)
                        });
                        exited_at = Some(Instant::now());
                    }
                    TAG_DONE => done = true,
                    _ => {}
                }
            }
        }
    }
    if let Some(f) = failure {
        return Err(f);
    }
    if exit.is_none() && ending == Ending::Exited {
        // S vanished without reporting (killed from outside): say so rather than invent a code.
        return Err(SpawnError::Setup(Errno::ECHILD));
    }
    Ok(Outcome {
        stdout: out.buf,
        stderr: err.buf,
        stdout_truncated: out.truncated,
        stderr_truncated: err.truncated,
        exit,
        ending,
        stragglers_killed: stragglers,
        pid,
    })
}

mod child;

#[cfg(test)]
mod tests;

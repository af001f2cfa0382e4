//! The code that runs in the forked supervisor (S) and command (C). It executes in a copy of a
//! multi-threaded process, so it only makes raw async-signal-safe system calls: no allocation,
//! no locks, no panics.

use super::{
    ChildCtx, TAG_CHDIR_ERR, TAG_DONE, TAG_EXEC_ERR, TAG_EXIT, TAG_PID, TAG_SETUP_ERR, TAG_SIGNALED,
};
use nix::libc::{self, c_int};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

/// Pid of C inside S (each S is its own process, so this static is private to it).
static SUPERVISED_PID: AtomicI32 = AtomicI32::new(0);

extern "C" fn kill_group_on_request(_: c_int) {
    let pid = SUPERVISED_PID.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe; pid is C, which S has not reaped yet.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
}

unsafe fn report(fd: RawFd, tag: i32, val: i32) {
    // SAFETY: called only in a freshly forked child (or for `report`/`errno`, from such code);
    // every call below is a raw async-signal-safe system call on descriptors and pointers
    // prepared before the fork.
    unsafe {
        let mut rec = [0u8; 8];
        let (a, b) = rec.split_at_mut(4);
        a.copy_from_slice(&tag.to_ne_bytes());
        b.copy_from_slice(&val.to_ne_bytes());
        loop {
            let n = libc::write(fd, rec.as_ptr().cast(), 8);
            if n >= 0 || *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
    }
}

unsafe fn errno() -> i32 {
    // SAFETY: called only in a freshly forked child (or for `report`/`errno`, from such code);
    // every call below is a raw async-signal-safe system call on descriptors and pointers
    // prepared before the fork.
    unsafe { *libc::__errno_location() }
}

unsafe fn reset_signals() {
    // SAFETY: called only in a freshly forked child (or for `report`/`errno`, from such code);
    // every call below is a raw async-signal-safe system call on descriptors and pointers
    // prepared before the fork.
    unsafe {
        for sig in 1..65 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
    }
}

unsafe fn close_all_but(keep_a: RawFd, keep_b: RawFd) {
    // SAFETY: called only in a freshly forked child (or for `report`/`errno`, from such code);
    // every call below is a raw async-signal-safe system call on descriptors and pointers
    // prepared before the fork.
    unsafe {
        let (lo, hi) = if keep_a < keep_b {
            (keep_a, keep_b)
        } else {
            (keep_b, keep_a)
        };
        let close_range = |first: RawFd, last: RawFd| {
            if first <= last {
                libc::syscall(
                    libc::SYS_close_range,
                    first as libc::c_uint,
                    last as libc::c_uint,
                    0 as libc::c_uint,
                );
            }
        };
        close_range(3, lo - 1);
        close_range(lo + 1, hi - 1);
        if hi < RawFd::MAX {
            libc::syscall(
                libc::SYS_close_range,
                (hi + 1) as libc::c_uint,
                libc::c_uint::MAX,
                0 as libc::c_uint,
            );
        }
    }
}

/// Body of S. Never returns.
pub(super) unsafe fn supervise(ctx: &ChildCtx) -> ! {
    // SAFETY: called only in a freshly forked child (or for `report`/`errno`, from such code);
    // every call below is a raw async-signal-safe system call on descriptors and pointers
    // prepared before the fork.
    unsafe {
        reset_signals();
        libc::setsid();
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::getppid() != ctx.parent {
            libc::_exit(1);
        }
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) != 0 {
            report(ctx.status_w, TAG_SETUP_ERR, errno());
            libc::_exit(1);
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = kill_group_on_request as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = 0; // no SA_RESTART: waits below must wake up and re-check.
        libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut());

        // SIGUSR1 is still blocked here (inherited from P), so S's handler cannot run on C's
        // side of the shared memory; C resets it before unblocking.
        let pid = libc::clone(
            exec_entry,
            ctx.child_stack_top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (ctx as *const ChildCtx).cast_mut().cast(),
        );
        if pid < 0 {
            report(ctx.status_w, TAG_SETUP_ERR, errno());
            libc::_exit(1);
        }
        SUPERVISED_PID.store(pid, Ordering::SeqCst);
        libc::setpgid(pid, pid);
        // S must not hold the write ends of the output pipes, or P would never see EOF.
        libc::close(ctx.out_w);
        libc::close(ctx.err_w);
        libc::close(ctx.devnull);
        close_all_but(ctx.status_w, ctx.ctl_r);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        report(ctx.status_w, TAG_PID, pid);

        // Wait for C without reaping it, so its pid (= the group id) stays reserved while P may
        // still ask for the group to be killed.
        let mut info: libc::siginfo_t = std::mem::zeroed();
        loop {
            let r = libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            );
            if r == 0 || errno() != libc::EINTR {
                break;
            }
        }
        let status = info.si_status();
        if info.si_code == libc::CLD_EXITED {
            report(ctx.status_w, TAG_EXIT, status);
        } else {
            report(ctx.status_w, TAG_SIGNALED, status);
        }

        // Wait until P is done reading (it closes the control pipe, or dies).
        let mut byte = 0u8;
        loop {
            let n = libc::read(ctx.ctl_r, (&mut byte as *mut u8).cast(), 1);
            if n < 0 && errno() == libc::EINTR {
                continue;
            }
            break;
        }
        libc::kill(-pid, libc::SIGKILL);
        // Descendants that left the group (setpgid, setsid) survive killpg. Every survivor
        // has a topmost living ancestor that is, by now, a child of S (dead parents re-parent
        // their children to the subreaper), so "S has no children" means nothing is left and
        // the common case needs no /proc scan. Otherwise give the killed a moment to die, then
        // sweep S's session and children until none is alive.
        let me = libc::getpid();
        let mut rounds = 0;
        loop {
            let r = loop {
                let r = libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG);
                if r <= 0 {
                    break r;
                }
            };
            if r < 0 {
                if errno() == libc::EINTR {
                    continue;
                }
                break; // ECHILD: everything is reaped
            }
            rounds += 1;
            if rounds > 2000 {
                break;
            }
            if rounds > 5 {
                kill_descendants(me);
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 1_000_000,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
        loop {
            let r = libc::waitpid(-1, std::ptr::null_mut(), 0);
            if r < 0 && errno() != libc::EINTR {
                break;
            }
        }
        report(ctx.status_w, TAG_DONE, 0);
        libc::_exit(0);
    }
}

/// SIGKILL every live process that is in S's session (S is its leader, so the session id is
/// `me`) or is a child of S, found by scanning /proc with raw getdents64/openat/read.
/// Returns how many were signalled; 0 also when /proc cannot be read.
unsafe fn kill_descendants(me: libc::pid_t) -> usize {
    // SAFETY: raw system calls on stack buffers; see `supervise`.
    unsafe {
        let proc_fd = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if proc_fd < 0 {
            return 0;
        }
        let mut killed = 0;
        let mut dents = [0u8; 4096];
        loop {
            let n = libc::syscall(
                libc::SYS_getdents64,
                proc_fd,
                dents.as_mut_ptr(),
                dents.len(),
            );
            if n <= 0 {
                break;
            }
            let mut off = 0usize;
            while off + 19 < n as usize {
                // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name (NUL-terminated)
                let reclen = u16::from_ne_bytes([dents[off + 16], dents[off + 17]]) as usize;
                if reclen < 20 || off + reclen > n as usize {
                    break;
                }
                let name = &dents[off + 19..off + reclen];
                off += reclen;
                let Some(pid) = parse_pid(name) else { continue };
                if pid == me {
                    continue;
                }
                let mut path = [0u8; 32];
                let len = name
                    .iter()
                    .position(|&b| b == 0)
                    .unwrap_or(name.len())
                    .min(20);
                path[..len].copy_from_slice(&name[..len]);
                path[len..len + 6].copy_from_slice(b"/stat\0");
                let fd = libc::openat(
                    proc_fd,
                    path.as_ptr().cast(),
                    libc::O_RDONLY | libc::O_CLOEXEC,
                );
                if fd < 0 {
                    continue;
                }
                let mut stat = [0u8; 512];
                let got = libc::read(fd, stat.as_mut_ptr().cast(), stat.len());
                libc::close(fd);
                if got <= 0 {
                    continue;
                }
                if let Some((state, ppid, session)) = parse_stat(&stat[..got as usize]) {
                    if state != b'Z' && state != b'X' && (session == me || ppid == me) {
                        libc::kill(pid, libc::SIGKILL);
                        killed += 1;
                    }
                }
            }
        }
        libc::close(proc_fd);
        killed
    }
}

/// A /proc entry name that is a pid.
fn parse_pid(name: &[u8]) -> Option<libc::pid_t> {
    let mut pid: libc::pid_t = 0;
    let mut digits = 0;
    for &b in name {
        if b == 0 {
            break;
        }
        if !b.is_ascii_digit() || digits >= 10 {
            return None;
        }
        pid = pid
            .checked_mul(10)?
            .checked_add((b - b'0') as libc::pid_t)?;
        digits += 1;
    }
    (digits > 0).then_some(pid)
}

/// State, ppid and session from /proc/<pid>/stat ("pid (comm) S ppid pgrp session ...").
fn parse_stat(stat: &[u8]) -> Option<(u8, libc::pid_t, libc::pid_t)> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let mut fields = stat.get(close + 2..)?.split(|&b| b == b' ');
    let state = *fields.next()?.first()?;
    let ppid = parse_pid(fields.next()?)?;
    let _pgrp = fields.next()?;
    let session = parse_pid(fields.next()?)?;
    Some((state, ppid, session))
}

extern "C" fn exec_entry(arg: *mut libc::c_void) -> c_int {
    // SAFETY: `arg` is the ChildCtx S passed to clone; it lives in memory C shares with S, and
    // S is suspended (CLONE_VFORK) until C execs or exits.
    unsafe { exec_command(&*(arg as *const ChildCtx)) }
}

/// Body of C. Never returns.
unsafe fn exec_command(ctx: &ChildCtx) -> ! {
    // SAFETY: called only in a freshly forked child (or for `report`/`errno`, from such code);
    // every call below is a raw async-signal-safe system call on descriptors and pointers
    // prepared before the fork.
    unsafe {
        libc::setpgid(0, 0);
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        libc::signal(libc::SIGUSR1, libc::SIG_DFL);
        if libc::dup2(ctx.devnull, 0) < 0
            || libc::dup2(ctx.out_w, 1) < 0
            || libc::dup2(ctx.err_w, 2) < 0
        {
            report(ctx.status_w, TAG_SETUP_ERR, errno());
            libc::_exit(127);
        }
        if !ctx.cwd.is_null() && libc::chdir(ctx.cwd) != 0 {
            report(ctx.status_w, TAG_CHDIR_ERR, errno());
            libc::_exit(127);
        }
        // Descriptors the host application left inheritable must not reach the command.
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 4;
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        );
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve(ctx.path, ctx.argv, ctx.envp);
        report(ctx.status_w, TAG_EXEC_ERR, errno());
        libc::_exit(127);
    }
}

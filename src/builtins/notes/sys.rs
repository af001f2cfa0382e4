//! The two system calls the notes tool makes directly: nix's wrappers need a feature we do not
//! build (geteuid) or take ownership of the descriptor (flock).

use nix::errno::Errno;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

pub(super) fn effective_uid() -> nix::libc::uid_t {
    // SAFETY: geteuid has no preconditions (nix's wrapper needs its "user" feature).
    unsafe { nix::libc::geteuid() }
}

/// flock(2) on a descriptor (nix's wrapper takes ownership of the fd; we keep ours).
pub(super) fn flock(fd: &OwnedFd, op: nix::libc::c_int) -> Result<(), Errno> {
    loop {
        // SAFETY: fd is a valid open descriptor for the duration of the call.
        let r = unsafe { nix::libc::flock(fd.as_fd().as_raw_fd(), op) };
        if r == 0 {
            return Ok(());
        }
        let e = Errno::last();
        if e != Errno::EINTR {
            return Err(e);
        }
    }
}

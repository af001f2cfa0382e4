//! The limits of an isolated tool's worker process, set in the worker before any tool runs.
//!
//! A worker is a process of its own group (so stopping it stops whatever it started) with an
//! address-space limit (`RLIMIT_AS`), a file-descriptor limit (`RLIMIT_NOFILE`) and, per call,
//! a CPU-time limit (`RLIMIT_CPU`) counted from what the worker has used so far: the soft limit
//! sends SIGXCPU, which ends the worker, and the hard limit one second later is SIGKILL.
//! The pool that starts, stops and replaces workers is on the Python side
//! (`agentmaker.isolation`), which hosts the tools.

use nix::sys::resource::{getrusage, setrlimit, Resource, UsageWho};
use nix::unistd::setsid;

/// Why the worker could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("could not set up the worker process: {what}: {source}")]
pub struct LimitError {
    what: &'static str,
    source: nix::Error,
}

fn set(resource: Resource, what: &'static str, value: u64) -> Result<(), LimitError> {
    setrlimit(resource, value, value).map_err(|source| LimitError { what, source })
}

/// Makes this process a worker: the leader of a new process group (session), killed when its
/// parent (the fork server, which ends with the host) ends, with the memory (MiB) and
/// open-file limits given.
pub fn enter_worker(memory_mb: Option<u64>, open_files: Option<u64>) -> Result<(), LimitError> {
    // A forked child is never a group leader, so this only fails when the process already
    // leads one: then it is already apart from its parent's group.
    let _ = setsid();
    #[cfg(target_os = "linux")]
    {
        let parent = nix::unistd::getppid();
        nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL).map_err(|source| {
            LimitError {
                what: "parent-death signal",
                source,
            }
        })?;
        if nix::unistd::getppid() != parent {
            // The parent ended before the signal was armed.
            std::process::exit(0);
        }
    }
    if let Some(mb) = memory_mb {
        set(
            Resource::RLIMIT_AS,
            "memory limit",
            mb.saturating_mul(1024 * 1024),
        )?;
    }
    if let Some(n) = open_files {
        set(Resource::RLIMIT_NOFILE, "open-files limit", n)?;
    }
    Ok(())
}

/// Allows the next call `seconds` of CPU time on top of what this process has used (the
/// limit's unit is a whole second, so the call gets between `seconds` and one second more).
pub fn limit_cpu(seconds: f64) -> Result<(), LimitError> {
    let usage = getrusage(UsageWho::RUSAGE_SELF).map_err(|source| LimitError {
        what: "CPU usage",
        source,
    })?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    let used = secs(usage.user_time()) + secs(usage.system_time());
    let soft = (used + seconds.max(0.0)).ceil().max(1.0) as u64;
    setrlimit(Resource::RLIMIT_CPU, soft, soft + 1).map_err(|source| LimitError {
        what: "CPU limit",
        source,
    })
}

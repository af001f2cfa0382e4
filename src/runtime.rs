//! The process's tokio runtime, which a forked child does not inherit.
//!
//! `fork()` copies only the calling thread, so a runtime started before it has no worker
//! threads in the child: anything spawned there never runs, and its timers never fire. A
//! Python program that used agentmaker and then forked (`os.fork`, `multiprocessing`'s default
//! start method on Linux before Python 3.14) hung for ever on its first MCP client or async
//! shell call in the child, whatever its timeout. [`ProcessRuntime`] hands out one runtime per
//! process: in the child of a fork it starts a new one. The parent's runtime is left as it is
//! (freeing it would wait for threads that do not exist in the child), as are objects made
//! before the fork: clients and calls of the parent stay the parent's.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use tokio::runtime::Runtime;

static FORKS: AtomicU64 = AtomicU64::new(0);
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Runs in the child of every fork.
extern "C" fn forked_child() {
    FORKS.fetch_add(1, Ordering::Release);
}

/// Changes in the child of every fork made after this was first called: two calls that return
/// the same value ran in the same process.
pub fn fork_generation() -> u64 {
    if !WATCHING.load(Ordering::Acquire) {
        // Registered before the flag is set, so no fork can fall between the two unseen.
        // Threads racing here may each register: a fork then bumps the count more than once,
        // which still tells the processes apart. (Never a lock here: a fork while another
        // thread held it would leave the child waiting on it.)
        // SAFETY: registers a handler that only increments an atomic.
        unsafe {
            nix::libc::pthread_atfork(None, None, Some(forked_child));
        }
        WATCHING.store(true, Ordering::Release);
    }
    FORKS.load(Ordering::Acquire)
}

/// The process's one tokio runtime, started on first use; a forked child starts its own.
/// Everything in the crate that runs async work (the binding, MCP clients and servers, the
/// model client, `search`) runs it here.
///
/// It has one worker thread unless `TOKIO_WORKER_THREADS` asks for more (tokio reads it). The
/// runtime only carries bytes between Python and pipes, sockets and child processes: its tasks
/// parse, copy and hand over, and never hold a worker for long (blocking work goes to tokio's
/// blocking pool; the tools themselves run in Python). A second worker bought no parallelism
/// there, only hand-offs: one MCP call wakes several tasks in turn (the call, rmcp's service
/// loop, the transport's writer, the task rmcp spawns per send), and with two workers tokio
/// hands some of them to the idle one, a cross-thread wake-up each time. On a 2-core VM
/// (`benches/bench_mcp.py`'s server, the two builds' batches interleaved) one worker took an
/// MCP round trip from 51 to 44 µs awaited and from 37 to 32 µs sync (first quartiles of 50
/// batches), with 1.4-1.9 voluntary context switches per call in the process instead of
/// 3.1-3.3; 200-call bursts were no slower (median 7.4 ms against 7.7 ms).
pub fn shared() -> std::io::Result<&'static Runtime> {
    static RUNTIME: ProcessRuntime = ProcessRuntime::new(|| {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
            builder.worker_threads(1);
        }
        builder.thread_name("agentmaker").enable_all().build()
    });
    RUNTIME.get()
}

struct Entry {
    generation: u64,
    runtime: Runtime,
}

/// One runtime per process, built by `build` on first use in each process (see the module
/// documentation). Lock-free, so a fork cannot leave it locked.
pub struct ProcessRuntime {
    current: AtomicPtr<Entry>,
    build: fn() -> std::io::Result<Runtime>,
}

impl ProcessRuntime {
    pub const fn new(build: fn() -> std::io::Result<Runtime>) -> ProcessRuntime {
        ProcessRuntime {
            current: AtomicPtr::new(std::ptr::null_mut()),
            build,
        }
    }

    /// This process's runtime, started now if there is none yet.
    pub fn get(&'static self) -> std::io::Result<&'static Runtime> {
        let generation = fork_generation();
        loop {
            let current = self.current.load(Ordering::Acquire);
            // SAFETY: an installed entry is never freed (see below).
            if let Some(entry) = unsafe { current.as_ref() } {
                if entry.generation == generation {
                    return Ok(&entry.runtime);
                }
            }
            let fresh = Box::into_raw(Box::new(Entry {
                generation,
                runtime: (self.build)()?,
            }));
            match self
                .current
                .compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // The entry it replaced (the parent's, in a forked child) is leaked with its
                // runtime, whose threads do not exist here.
                // SAFETY: just installed; installed entries live for the rest of the process.
                Ok(_) => return Ok(unsafe { &(*fresh).runtime }),
                Err(_) => {
                    // Another thread installed one first: this one was never shared.
                    // SAFETY: `fresh` came from Box::into_raw above and nobody else saw it.
                    let lost = unsafe { Box::from_raw(fresh) };
                    lost.runtime.shutdown_background();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The child of a fork gets a runtime of its own that runs tasks and timers; the parent
    /// keeps its own. (On the process runtime itself, so what is tested is what runs.)
    #[test]
    fn a_forked_child_gets_a_runtime_that_runs() {
        let parent = shared().unwrap();
        assert_eq!(parent.block_on(async { 1 + 1 }), 2);
        assert!(std::ptr::eq(parent, shared().unwrap()));
        // SAFETY: the child only uses the runtime and exits with `_exit`.
        let pid = unsafe { nix::libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = match shared() {
                Ok(rt) if !std::ptr::eq(rt, parent) => {
                    let spawned = rt.spawn(async {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        7
                    });
                    match rt.block_on(async {
                        tokio::time::timeout(Duration::from_secs(5), spawned).await
                    }) {
                        Ok(Ok(7)) => 0,
                        _ => 2,
                    }
                }
                Ok(_) => 3,
                Err(_) => 4,
            };
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { nix::libc::_exit(code) };
        }
        let mut status = 0;
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            // SAFETY: waits for our own child.
            let done = unsafe { nix::libc::waitpid(pid, &mut status, nix::libc::WNOHANG) };
            if done == pid {
                break;
            }
            if std::time::Instant::now() > deadline {
                // SAFETY: our own child.
                unsafe { nix::libc::kill(pid, nix::libc::SIGKILL) };
                panic!("the child's runtime did not run its task");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(nix::libc::WIFEXITED(status));
        assert_eq!(nix::libc::WEXITSTATUS(status), 0);
        assert!(std::ptr::eq(parent, shared().unwrap()));
    }
}

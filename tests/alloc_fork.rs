//! The extension's allocator (`agentmaker::alloc::SplitAlloc`) across `fork()`: the child of a
//! fork must never wait on a mimalloc lock that another thread of the parent held at the fork
//! (mimalloc has no fork handling of its own), and must keep using and freeing the blocks it
//! inherited. This binary runs with `SplitAlloc` as its global allocator, as the extension does.

use agentmaker::alloc::SplitAlloc;
use nix::libc;
use std::alloc::{GlobalAlloc, Layout};
use std::os::raw::c_void;
use std::time::{Duration, Instant};

#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOC: SplitAlloc = SplitAlloc;
// With the `python` feature the library itself installs `SplitAlloc` as the global allocator.
#[cfg(feature = "python")]
static ALLOC: SplitAlloc = SplitAlloc;

extern "C" {
    fn mi_is_in_heap_region(p: *const c_void) -> bool;
    fn mi_option_get(option: std::os::raw::c_int) -> std::os::raw::c_long;
}

/// mimalloc's `mi_option_destroy_on_exit`: above 1, its exit hook does nothing.
const MI_OPTION_DESTROY_ON_EXIT: std::os::raw::c_int = 22;

fn from_mimalloc<T>(p: *const T) -> bool {
    // SAFETY: a read-only look-up in mimalloc's page map.
    unsafe { mi_is_in_heap_region(p as *const c_void) }
}

/// Forks; the child runs `child` and exits with its status at once (no destructors, no
/// test harness). Returns the child's exit status, or None if it had not exited after
/// `patience` (it is killed then).
fn in_child(child: impl FnOnce() -> i32, patience: Duration) -> Option<i32> {
    // SAFETY: the child only runs `child`, which calls async-signal-safe functions and the
    // allocator (whose child mode is the point of these tests), then `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = child();
        // SAFETY: ends the child without running anything of the parent's.
        unsafe { libc::_exit(code) };
    }
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waits for our own child.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            return Some(if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128
            });
        }
        if start.elapsed() > patience {
            // SAFETY: our own child, which is stuck.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn a_forked_child_allocates_from_the_system_and_keeps_what_it_inherited() {
    let inherited: Vec<u8> = (0..200u8).collect();
    let grown = vec![7u8; 100];
    assert!(
        from_mimalloc(inherited.as_ptr()),
        "small blocks come from mimalloc before a fork"
    );
    let status = in_child(
        move || {
            let mut checks = 0;
            // A new small block comes from the system allocator.
            let fresh = vec![1u8; 64];
            checks |= i32::from(from_mimalloc(fresh.as_ptr()));
            // Inherited blocks keep their contents, grow (within and past the small sizes)
            // and are freed without trouble.
            if inherited.iter().enumerate().any(|(i, b)| *b != i as u8) {
                checks |= 2;
            }
            let mut grown = grown;
            grown.extend_from_slice(&[8u8; 1000]);
            grown.extend_from_slice(&vec![9u8; 100_000]);
            if grown[..100].iter().any(|b| *b != 7) || grown[1099] != 8 || grown[101_099] != 9 {
                checks |= 4;
            }
            let mut shrunk = grown;
            shrunk.truncate(10);
            shrunk.shrink_to_fit();
            if shrunk != [7u8; 10] {
                checks |= 8;
            }
            drop(inherited);
            drop(shrunk);
            drop(fresh);
            // mimalloc's exit hook, which would collect its heaps, is off in the child.
            // SAFETY: reads an option.
            if unsafe { mi_option_get(MI_OPTION_DESTROY_ON_EXIT) } != 2 {
                checks |= 16;
            }
            checks
        },
        Duration::from_secs(10),
    );
    assert_eq!(status, Some(0), "child checks failed (bit mask) or hung");
    // The parent still allocates from mimalloc, and runs mimalloc's exit hook.
    let after = Box::new([0u8; 64]);
    assert!(from_mimalloc(after.as_ptr()));
    // SAFETY: reads an option.
    assert!(unsafe { mi_option_get(MI_OPTION_DESTROY_ON_EXIT) } < 2);
}

fn churn() {
    let blocks: Vec<Vec<u8>> = (0..8).map(|i| vec![i as u8; 32 + i * 100]).collect();
    std::hint::black_box(blocks);
}

extern "C" fn churn_thread(_: *mut c_void) -> *mut c_void {
    churn();
    std::ptr::null_mut()
}

/// Threads start and exit in the parent (each takes a process-wide mimalloc lock as it starts
/// allocating and as it exits) while it forks; each child starts a thread that allocates.
/// Without the child's switch to the system allocator, a child hung on that lock within 14 to
/// 1,888 forks (2026-11-30).
#[test]
fn forking_while_threads_start_and_exit_never_leaves_a_child_stuck() {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churners: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::thread::spawn(churn).join();
                }
            })
        })
        .collect();
    let mut stuck = None;
    for i in 0..1500 {
        let status = in_child(
            || {
                churn();
                // A raw thread: std's own thread start-up is not fork-safe either.
                let mut thread: libc::pthread_t = 0;
                // SAFETY: starts and joins a thread running `churn_thread`.
                unsafe {
                    if libc::pthread_create(
                        &mut thread,
                        std::ptr::null(),
                        churn_thread,
                        std::ptr::null_mut(),
                    ) != 0
                    {
                        return 3;
                    }
                    libc::pthread_join(thread, std::ptr::null_mut());
                }
                0
            },
            Duration::from_secs(5),
        );
        if status != Some(0) {
            stuck = Some((i, status));
            break;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    churners.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(
        stuck, None,
        "(fork number, child status; None = stuck for 5 s)"
    );
}

#[test]
fn small_and_large_blocks_keep_their_alignment_in_a_child() {
    let status = in_child(
        || {
            let mut bad = 0;
            for (size, align) in [(1, 8192), (100, 64), (70_000, 4096), (10, 1 << 20)] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: allocated and freed with the same layout.
                unsafe {
                    let p = ALLOC.alloc_zeroed(layout);
                    if p.is_null() || p as usize % align != 0 || *p != 0 {
                        bad += 1;
                    }
                    ALLOC.dealloc(p, layout);
                }
            }
            bad
        },
        Duration::from_secs(10),
    );
    assert_eq!(status, Some(0));
}

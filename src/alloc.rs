//! The extension's Rust heap: mimalloc for small blocks, the system allocator for large ones.
//!
//! Only the Rust side of the extension allocates through this (Python objects come from
//! Python's own allocator). Measured in a 200-call MCP burst (schedstat, alternating runs,
//! 2026-11-30): with glibc's malloc for everything, the loop thread spent 8.6-10.8 µs per call
//! and the tokio thread 3.3-3.6 µs; a fifth of it was malloc, free and `malloc_consolidate`,
//! plus arena-lock waits where one thread frees what the other allocated (an answer is parsed
//! on a tokio thread and dropped on the loop thread). mimalloc keeps per-thread heaps and frees
//! across threads without a lock.
//!
//! Memory is held to what glibc alone takes (the peak of each hostile-answer test in
//! tests/test_mcp.py is within 5 MB of it, and lower in some):
//! - large blocks stay with glibc: mimalloc grows a large buffer by copying it and keeps freed
//!   segments for reuse, and with mimalloc for everything the peak memory of reading a hostile
//!   100 MB answer went from 91 to 148 MB. glibc serves such blocks with `mmap`, grows them
//!   with `mremap` and returns them to the system when freed;
//! - mimalloc is told (before its first allocation from here) to return freed pages at once
//!   rather than after a second, and not to commit its arenas up front, which added 13 MB to
//!   every process.
//!
//! Which allocator owns a block follows from its size alone, and Rust hands `dealloc` and
//! `realloc` the same layout the block was allocated with, so a block is always freed by the
//! allocator that made it. A `realloc` across [`LARGE`] moves the block between the two.
//!
//! After `fork()` (`os.fork`, `multiprocessing`'s default start method on Linux) the child
//! allocates every block from the system allocator. mimalloc does not prepare for a fork, and
//! a thread takes one of its process-wide locks while it starts using mimalloc or exits: a
//! fork at that moment left the child's first new thread waiting on that lock for ever (a
//! stress test hung within 14 to 1,888 forks; glibc resets its own locks around a fork). The
//! child never enters mimalloc again, so it cannot wait on anything the fork froze. A small
//! block from before the fork that the child frees is left where it is, as the parent's copy of
//! the memory already holds it: the child keeps at most what it inherited.

use std::alloc::{GlobalAlloc, Layout, System};
use std::os::raw::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicU8, Ordering};

/// Blocks of at least this many bytes come from the system allocator.
const LARGE: usize = 64 * 1024;

/// mimalloc's option numbers (`mi_option_e` in mimalloc.h, the same in its v2 and v3: the
/// enum keeps retired entries so the numbers never move).
const MI_OPTION_ARENA_EAGER_COMMIT: c_int = 4;
const MI_OPTION_PURGE_DELAY: c_int = 15;
/// Above 1, mimalloc's exit hook does nothing (`_mi_auto_process_done`).
const MI_OPTION_DESTROY_ON_EXIT: c_int = 22;

extern "C" {
    // In the static library the mimalloc crate links (libmimalloc-sys builds all of it).
    fn mi_option_set(option: c_int, value: c_long);
    /// Whether `p` lies in memory mimalloc manages (a lock-free look-up in its page map).
    fn mi_is_in_heap_region(p: *const c_void) -> bool;
}

/// Where small blocks come from: nobody has looked yet, being set up, mimalloc, or (in the
/// child of a fork) the system allocator.
const UNSET: u8 = 0;
const SETTING_UP: u8 = 1;
const MIMALLOC: u8 = 2;
const FORKED: u8 = 3;

static STATE: AtomicU8 = AtomicU8::new(UNSET);

/// Whether small blocks come from mimalloc (false in the child of a fork).
#[inline]
fn small_from_mimalloc() -> bool {
    match STATE.load(Ordering::Acquire) {
        MIMALLOC => true,
        FORKED => false,
        _ => set_up(),
    }
}

/// The first caller sets mimalloc's options and the fork handler up; a caller racing it uses
/// mimalloc at once (its block is merely allocated before the options apply). A fork before
/// the handler is registered leaves the child on mimalloc, which is safe in the extension:
/// its first allocation happens while its module is imported, before any thread of its own
/// exists, so no other thread is inside mimalloc then.
#[cold]
fn set_up() -> bool {
    if STATE
        .compare_exchange(UNSET, SETTING_UP, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        // SAFETY: mi_option_set stores into mimalloc's option table, which mimalloc reads
        // when it next needs the option; pthread_atfork registers a handler that only stores
        // to an atomic.
        unsafe {
            mi_option_set(MI_OPTION_PURGE_DELAY, 0);
            mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
            nix::libc::pthread_atfork(None, None, Some(forked_child));
        }
        // A fork between the registration and here already made this FORKED in the child.
        let _ = STATE.compare_exchange(SETTING_UP, MIMALLOC, Ordering::AcqRel, Ordering::Acquire);
    }
    STATE.load(Ordering::Acquire) != FORKED
}

/// Runs in the child of every fork (single-threaded at that point). mimalloc's exit hook would
/// collect the heaps at the child's exit, so it is turned off too.
extern "C" fn forked_child() {
    STATE.store(FORKED, Ordering::Release);
    // SAFETY: a plain store into mimalloc's option table.
    unsafe { mi_option_set(MI_OPTION_DESTROY_ON_EXIT, 2) };
}

/// The global allocator of the Python extension (`src/py.rs`); see the module documentation.
pub struct SplitAlloc;

fn small(size: usize) -> bool {
    size < LARGE
}

/// Frees a small block in the child of a fork: the system allocator's own are freed, blocks
/// mimalloc made before the fork are left alone.
///
/// # Safety
/// `ptr` and `layout` describe a live block of this allocator.
unsafe fn forked_dealloc(ptr: *mut u8, layout: Layout) {
    // SAFETY: the look-up only reads mimalloc's page map; a block it does not know came from
    // the system allocator (in this child), with this layout.
    unsafe {
        if !mi_is_in_heap_region(ptr as *const c_void) {
            System.dealloc(ptr, layout)
        }
    }
}

// SAFETY: every method forwards to an allocator that upholds the `GlobalAlloc` contract. It
// picks that allocator from the block's size, which the caller passes unchanged for the
// block's lifetime (the layout it was allocated with, or the new size after a `realloc`), and,
// in the child of a fork, from the block's address for small blocks.
unsafe impl GlobalAlloc for SplitAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is forwarded unchanged.
        unsafe {
            if small(layout.size()) && small_from_mimalloc() {
                mimalloc::MiMalloc.alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe {
            if small(layout.size()) && small_from_mimalloc() {
                mimalloc::MiMalloc.alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `layout` is the one `ptr` was allocated with, so its size names the
        // allocator that made it (and in a forked child, its address does for a small one).
        unsafe {
            if !small(layout.size()) {
                System.dealloc(ptr, layout)
            } else if small_from_mimalloc() {
                mimalloc::MiMalloc.dealloc(ptr, layout)
            } else {
                forked_dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` and `layout` describe a live block of the allocator its size names;
        // within one allocator the call is forwarded; otherwise a block of the new size is made
        // by `alloc`, the common prefix copied and the old block freed by `dealloc`.
        unsafe {
            match (small(layout.size()), small(new_size)) {
                (true, true) if small_from_mimalloc() => {
                    mimalloc::MiMalloc.realloc(ptr, layout, new_size)
                }
                (false, false) => System.realloc(ptr, layout, new_size),
                _ => {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn mi_option_get(option: c_int) -> c_long;
    }

    #[test]
    fn mimalloc_is_set_up_before_its_first_block() {
        let layout = Layout::from_size_align(32, 8).unwrap();
        // SAFETY: allocated and freed with the same layout.
        unsafe {
            let p = SplitAlloc.alloc(layout);
            assert!(!p.is_null());
            SplitAlloc.dealloc(p, layout);
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), 0);
            assert_eq!(mi_option_get(MI_OPTION_ARENA_EAGER_COMMIT), 0);
        }
    }

    #[test]
    fn blocks_move_between_the_allocators_with_their_contents() {
        let a = SplitAlloc;
        // SAFETY: each block is used within its size and freed with its current layout.
        unsafe {
            let layout = Layout::from_size_align(100, 8).unwrap();
            let p = a.alloc(layout);
            for i in 0..100 {
                *p.add(i) = i as u8;
            }
            // small -> large -> larger -> small, the prefix kept at every step
            let p = a.realloc(p, layout, LARGE * 2);
            assert!((0..100).all(|i| *p.add(i) == i as u8));
            *p.add(LARGE * 2 - 1) = 7;
            let big = Layout::from_size_align(LARGE * 2, 8).unwrap();
            let p = a.realloc(p, big, LARGE * 3);
            assert!((0..100).all(|i| *p.add(i) == i as u8));
            assert_eq!(*p.add(LARGE * 2 - 1), 7);
            let bigger = Layout::from_size_align(LARGE * 3, 8).unwrap();
            let p = a.realloc(p, bigger, 50);
            assert!((0..50).all(|i| *p.add(i) == i as u8));
            a.dealloc(p, Layout::from_size_align(50, 8).unwrap());

            let z = Layout::from_size_align(LARGE + 1, 4096).unwrap();
            let q = a.alloc_zeroed(z);
            assert_eq!(q as usize % 4096, 0);
            assert!((0..LARGE + 1).all(|i| *q.add(i) == 0));
            a.dealloc(q, z);
        }
    }
}

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
//! tests/test_mcp.py is within 1 MB of it):
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

use std::alloc::{GlobalAlloc, Layout, System};
use std::os::raw::{c_int, c_long};
use std::sync::atomic::{AtomicBool, Ordering};

/// Blocks of at least this many bytes come from the system allocator.
const LARGE: usize = 64 * 1024;

/// mimalloc's option numbers (`mi_option_e` in mimalloc.h, the same in its v2 and v3: the
/// enum keeps retired entries so the numbers never move).
const MI_OPTION_ARENA_EAGER_COMMIT: c_int = 4;
const MI_OPTION_PURGE_DELAY: c_int = 15;

extern "C" {
    // In the static library the mimalloc crate links (libmimalloc-sys builds all of it).
    fn mi_option_set(option: c_int, value: c_long);
}

static CONFIGURED: AtomicBool = AtomicBool::new(false);

/// mimalloc, set up on first use (see the module documentation).
#[inline]
fn mimalloc() -> mimalloc::MiMalloc {
    if !CONFIGURED.load(Ordering::Relaxed) {
        configure();
    }
    mimalloc::MiMalloc
}

#[cold]
fn configure() {
    // SAFETY: plain stores into mimalloc's option table; two threads racing here store the
    // same values.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
    }
    CONFIGURED.store(true, Ordering::Relaxed);
}

/// The global allocator of the Python extension (`src/py.rs`); see the module documentation.
pub struct SplitAlloc;

fn small(size: usize) -> bool {
    size < LARGE
}

// SAFETY: every method forwards to an allocator that upholds the `GlobalAlloc` contract, and
// picks it from the block's size, which the caller passes unchanged for the block's lifetime
// (the layout it was allocated with, or the new size after a `realloc`).
unsafe impl GlobalAlloc for SplitAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is forwarded unchanged.
        unsafe {
            if small(layout.size()) {
                mimalloc().alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe {
            if small(layout.size()) {
                mimalloc().alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `layout` is the one `ptr` was allocated with, so its size names the
        // allocator that made it.
        unsafe {
            if small(layout.size()) {
                mimalloc().dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` and `layout` describe a live block of the allocator its size names;
        // within one allocator the call is forwarded; across, a block of the new size is made
        // by the other one, the common prefix copied and the old block freed by its owner.
        unsafe {
            match (small(layout.size()), small(new_size)) {
                (true, true) => mimalloc().realloc(ptr, layout, new_size),
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

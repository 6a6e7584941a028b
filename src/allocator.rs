//! The process's allocator: mimalloc for small blocks, the system's for large ones.
//!
//! A run allocates and frees a great many small blocks (parsed goldens, requests, replies,
//! scores), which mimalloc serves with a fifth less CPU than glibc's malloc (a third less than
//! musl's, in the static release binary). But mimalloc keeps freed memory a while to serve the
//! next request from it, and replies of megabytes then add up: 100 replies of 10 MB at
//! `--concurrency 16` peaked at 212 MB with mimalloc alone, 106 MB with glibc alone. glibc
//! maps each block past its mmap threshold (1 MiB, set in `main`) on its own and unmaps it when
//! freed, as musl does past 128 KiB, so blocks that large go to them: split, 142 MB.

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// Blocks of at least this many bytes go to the system allocator: glibc's mmap threshold.
pub const LARGE: usize = 1024 * 1024;

pub struct Split;

fn is_large(size: usize) -> bool {
    size >= LARGE
}

// SAFETY: each block is freed and resized by the allocator that made it, told apart by its size,
// which the caller passes unchanged to `dealloc` and `realloc`; a block changing sides is
// copied into a new one.
unsafe impl GlobalAlloc for Split {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_large(layout.size()) {
            unsafe { System.alloc(layout) }
        } else {
            unsafe { MiMalloc.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_large(layout.size()) {
            unsafe { System.alloc_zeroed(layout) }
        } else {
            unsafe { MiMalloc.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_large(layout.size()) {
            unsafe { System.dealloc(ptr, layout) }
        } else {
            unsafe { MiMalloc.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (is_large(layout.size()), is_large(new_size)) {
            (true, true) => unsafe { System.realloc(ptr, layout, new_size) },
            (false, false) => unsafe { MiMalloc.realloc(ptr, layout, new_size) },
            _ => {
                // SAFETY: the caller guarantees `new_size`, rounded to the alignment, fits.
                let new_layout =
                    unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
                let moved = unsafe { self.alloc(new_layout) };
                if !moved.is_null() {
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                moved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Grows a block from small to large and back, through every path of `realloc`, and checks
    /// that its bytes survive each move.
    #[test]
    fn a_block_keeps_its_bytes_across_the_two_allocators() {
        let sizes = [64, LARGE - 1, LARGE, 3 * LARGE, LARGE + 1, LARGE - 1, 16];
        let mut layout = Layout::from_size_align(sizes[0], 64).unwrap();
        // SAFETY: sizes are non-zero; every call passes the layout the block was made with.
        unsafe {
            let mut block = Split.alloc_zeroed(layout);
            assert!(!block.is_null());
            for &size in &sizes[1..] {
                let kept = layout.size().min(size);
                for i in 0..kept {
                    *block.add(i) = (i % 251) as u8;
                }
                block = Split.realloc(block, layout, size);
                assert!(!block.is_null());
                assert_eq!(block as usize % 64, 0, "alignment kept at {size} bytes");
                for i in 0..kept {
                    assert_eq!(
                        *block.add(i),
                        (i % 251) as u8,
                        "byte {i} after {size} bytes"
                    );
                }
                layout = Layout::from_size_align(size, 64).unwrap();
            }
            Split.dealloc(block, layout);
        }
    }
}

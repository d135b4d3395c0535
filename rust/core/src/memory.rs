//! Hints to the CPU about memory a loop will read soon.
//!
//! At 100k messages the work of an export is small and its memory large: every message, and
//! every Python object a request is checked against, is somewhere of its own, and reading
//! them one after the other waits for each in turn. Asking for the memory of an item a few
//! items ahead lets those waits overlap.

/// Asks for the `lines` cache lines (64 bytes each) from `at`. A hint only: it reads nothing
/// the program sees, cannot fault, and does nothing on targets without one.
#[inline(always)]
pub fn prefetch<T>(at: *const T, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let at = at as *const i8;
        for line in 0..lines {
            // SAFETY: a prefetch instruction never faults, whatever the address.
            unsafe { _mm_prefetch(at.wrapping_add(line * 64), _MM_HINT_T0) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (at, lines);
}

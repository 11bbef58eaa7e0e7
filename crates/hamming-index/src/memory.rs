//! Memory for the big sorted tables: asked to be backed by 2 MiB pages.
//!
//! A query touches one random spot in each of ten or more tables of hundreds of megabytes.
//! With 4 KiB pages nearly every such touch also misses the TLB, and the page walk costs about
//! as much as the cache miss itself. On Linux with transparent huge pages in `madvise` mode
//! (the common default), the tables' allocations are advised with `MADV_HUGEPAGE` before they
//! are first written, so the kernel backs them with 2 MiB pages as they fill. Elsewhere, or
//! when the kernel declines, they are ordinary memory: nothing but speed depends on it.

/// Allocations smaller than this are left alone (they hold no whole 2 MiB page).
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `capacity` items, its memory advised for huge pages before
/// anything is written to it.
pub(crate) fn huge_vec<T>(capacity: usize) -> Vec<T> {
    let vec: Vec<T> = Vec::with_capacity(capacity);
    advise_huge_pages(vec.as_ptr().cast::<u8>(), capacity * size_of::<T>());
    vec
}

/// `len` copies of `value` in memory advised for huge pages.
pub(crate) fn huge_filled<T: Clone>(len: usize, value: T) -> Vec<T> {
    let mut vec = huge_vec(len);
    vec.resize(len, value);
    vec
}

/// `len` zero words, their memory advised for huge pages and left untouched: the system
/// hands it out as it is first written, a 2 MiB page at a time where it can instead of a
/// 4 KiB one, so a large bitmap whose bits are set at random costs a few hundred page faults
/// instead of one per 4 KiB (used by the crawl's filter of stored sentence keys).
pub fn zeroed_huge_words(len: usize) -> Vec<u64> {
    // Zeroed by the allocator (fresh pages from the system for a large allocation), not
    // written here.
    let vec = vec![0u64; len];
    advise_huge_pages(vec.as_ptr().cast::<u8>(), len * size_of::<u64>());
    vec
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *const u8, bytes: usize) {
    if bytes < HUGE_PAGE {
        return;
    }
    // Only whole, aligned 2 MiB pages inside the allocation can be huge.
    let first = (start as usize).next_multiple_of(HUGE_PAGE);
    let end = (start as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: [first, end) lies inside the live allocation the caller just made, and
        // MADV_HUGEPAGE changes only how the kernel backs those pages, never their contents.
        // A failure (no THP support) leaves ordinary pages, which is fine.
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *const u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn zeroed_huge_words_are_zero_and_writable() {
        // 8 MiB: whole 2 MiB pages inside, advised.
        let mut words = super::zeroed_huge_words(1 << 20);
        assert_eq!(words.len(), 1 << 20);
        assert!(words.iter().all(|&w| w == 0));
        words[(1 << 20) - 1] = 7;
        words[12345] |= 1 << 9;
        assert_eq!(words.iter().filter(|&&w| w != 0).count(), 2);
    }
}

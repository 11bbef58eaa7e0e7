//! Prefetch hints: cache lines asked for ahead of use, so that the probes of many tables (or
//! of many queries) wait on memory together instead of one after another.

/// A hint to load `item`'s cache line. Unlike a load, a prefetch retires at once, so the
/// processor can have one outstanding for every table of a query instead of stalling on the
/// first miss once its reorder window is full.
#[inline]
pub(crate) fn prefetch<T>(item: &T) {
    prefetch_address(std::ptr::from_ref(item));
}

/// [`prefetch`] of any address, which need not point at anything: a walk that may or may not
/// read an item fetches its line either way instead of branching.
#[inline]
pub(crate) fn prefetch_address<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults and changes no memory, whatever the
    // address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Runs of up to this many items have every cache line fetched by [`prefetch_lines`].
pub(crate) const FETCHED_RUN: usize = 256;

/// Asks for the cache lines of `items` to be brought into cache, without waiting for them:
/// all of them for a run of up to [`FETCHED_RUN`] items, the first one of a longer run.
#[inline(always)]
pub(crate) fn prefetch_lines<T>(items: &[T]) {
    match items.first() {
        Some(first) if items.len() > FETCHED_RUN => prefetch(first),
        _ => prefetch_every_line(items),
    }
}

/// Asks for every cache line of `items` to be brought into cache, without waiting for them.
#[inline(always)]
pub(crate) fn prefetch_every_line<T>(items: &[T]) {
    let (Some(first), Some(last)) = (items.first(), items.last()) else {
        return;
    };
    // Even two items may straddle two lines. A run longer than a line gets one prefetch per
    // line from the first item on, and the last item's line may lie beyond those.
    prefetch(first);
    prefetch(last);
    let per_line = (64 / size_of::<T>()).max(1);
    if items.len() > per_line {
        for item in items.iter().step_by(per_line).skip(1) {
            prefetch(item);
        }
    }
}

/// How many probes ahead a batch walk fetches a table's memory: enough to cover a cache miss
/// with the probes in between.
pub(crate) const PREFETCH_STRIDE: usize = 16;

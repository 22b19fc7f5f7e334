//! A sort for the mapper's short lists that cannot panic.

/// Sorts `v` ascending in O(n log n): a heapsort. The standard library's
/// sorts can panic on an order that is not total (`panic_on_ord_violation`),
/// and the broker module's build test holds that no export reaches a panic
/// (`host/tests/module_structure.rs`); a heapsort has no such path. The
/// mapper sorts only short lists (a mapped PID's holders, a source's
/// declared regions).
pub(crate) fn heapsort<T: Ord>(v: &mut [T]) {
    heapsort_by(v, |a, b| a < b)
}

/// [`heapsort`] by `less`, a strict weak order.
pub(crate) fn heapsort_by<T>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let sift_down = |v: &mut [T], mut root: usize, end: usize| loop {
        // Within the slice, so that no index below can be out of it.
        let end = end.min(v.len());
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && less(&v[child], &v[child + 1]) {
            child += 1;
        }
        if !less(&v[root], &v[child]) {
            return;
        }
        v.swap(root, child);
        root = child;
    };
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift_down(v, root, n);
    }
    let mut end = n;
    while end > 1 {
        end -= 1;
        if let Some(heap) = v.get_mut(..=end) {
            heap.swap(0, end);
        }
        sift_down(v, 0, end);
    }
}

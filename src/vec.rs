//! `Vec::insert` and `Vec::remove` without their index assertions, for
//! code the broker module runs, which reaches no panic
//! (`docs/RELIABILITY.md`): a push or a pop and a rotation of the tail.

/// Inserts `x` at position `i`, shifting the elements from there up; at
/// the end when `i` is past it.
pub fn insert_at<T>(v: &mut Vec<T>, i: usize, x: T) {
    v.push(x);
    match v.get_mut(i..) {
        Some(tail) if !tail.is_empty() => tail.rotate_right(1),
        _ => {}
    }
}

/// Removes the element at position `i`, shifting the rest down; `None`
/// (and nothing changed) when there is none.
pub fn remove_at<T>(v: &mut Vec<T>, i: usize) -> Option<T> {
    match v.get_mut(i..) {
        Some(tail) if !tail.is_empty() => tail.rotate_left(1),
        _ => return None,
    }
    v.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn they_are_vec_insert_and_remove() {
        for len in 0..5usize {
            for i in 0..=len {
                let mut a: Vec<usize> = (0..len).collect();
                let mut b = a.clone();
                insert_at(&mut a, i, 99);
                b.insert(i, 99);
                assert_eq!(a, b, "insert at {i} of {len}");
            }
            for i in 0..len {
                let mut a: Vec<usize> = (0..len).collect();
                let mut b = a.clone();
                assert_eq!(remove_at(&mut a, i), Some(b.remove(i)));
                assert_eq!(a, b, "remove at {i} of {len}");
            }
            let mut a: Vec<usize> = (0..len).collect();
            assert_eq!(remove_at(&mut a, len), None);
            assert_eq!(a.len(), len);
            insert_at(&mut a, len + 3, 7);
            assert_eq!(a.last(), Some(&7), "past the end: at the end");
        }
    }
}

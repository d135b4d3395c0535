//! A Fenwick (binary indexed) tree of `u64`: point updates, prefix sums and the search for the
//! first prefix reaching a target, each O(log n). The transcript keeps one over its chunk
//! lengths (position → chunk) and one per encoding over its chunk token sums (token windows).

#[derive(Debug, Clone, Default)]
pub struct Fenwick {
    /// 1-based: `tree[i]` holds the sum of the `i & -i` values ending at `i`.
    tree: Vec<u64>,
}

impl Fenwick {
    /// O(n) construction from the values.
    pub fn build(values: impl IntoIterator<Item = u64>) -> Fenwick {
        let mut tree = vec![0];
        tree.extend(values);
        let n = tree.len();
        for i in 1..n {
            let parent = i + (i & i.wrapping_neg());
            if parent < n {
                tree[parent] = tree[parent].wrapping_add(tree[i]);
            }
        }
        Fenwick { tree }
    }

    pub fn len(&self) -> usize {
        self.tree.len().saturating_sub(1)
    }

    /// Add `delta` (two's complement for a decrease) to value `i`.
    pub fn add(&mut self, i: usize, delta: u64) {
        let mut k = i + 1;
        while k < self.tree.len() {
            self.tree[k] = self.tree[k].wrapping_add(delta);
            k += k & k.wrapping_neg();
        }
    }

    /// Sum of the first `k` values.
    pub fn prefix(&self, k: usize) -> u64 {
        let mut k = k.min(self.len());
        let mut s = 0u64;
        while k > 0 {
            s = s.wrapping_add(self.tree[k]);
            k &= k - 1;
        }
        s
    }

    /// The largest `k` with `prefix(k) <= target`, and that prefix (values are non-negative).
    pub fn last_prefix_at_most(&self, target: u64) -> (usize, u64) {
        let n = self.len();
        let mut pos = 0;
        let mut acc = 0u64;
        let mut step = if n == 0 {
            0
        } else {
            1usize << (usize::BITS - 1 - n.leading_zeros())
        };
        while step > 0 {
            let next = pos + step;
            if next <= n && acc + self.tree[next] <= target {
                pos = next;
                acc += self.tree[next];
            }
            step >>= 1;
        }
        (pos, acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_a_plain_prefix_sum() {
        let mut vals: Vec<u64> = (0..300u64).map(|i| (i * 7919) % 13).collect();
        let mut f = Fenwick::build(vals.iter().copied());
        for round in 0..300usize {
            let i = (round * 31) % vals.len();
            let new = (round as u64 * 17) % 11;
            f.add(i, new.wrapping_sub(vals[i]));
            vals[i] = new;
            for k in [0, 1, i, i + 1, vals.len()] {
                assert_eq!(f.prefix(k), vals[..k.min(vals.len())].iter().sum::<u64>());
            }
            for target in [0, 5, 100, 1000, u64::MAX / 2] {
                let (k, s) = f.last_prefix_at_most(target);
                let plain = (0..=vals.len())
                    .rev()
                    .find(|&k| vals[..k].iter().sum::<u64>() <= target)
                    .unwrap();
                assert_eq!(
                    (k, s),
                    (plain, vals[..plain].iter().sum::<u64>()),
                    "target {target}"
                );
            }
        }
        assert_eq!(Fenwick::build([]).last_prefix_at_most(3), (0, 0));
    }
}

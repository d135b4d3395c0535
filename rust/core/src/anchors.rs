//! Named anchors: end-iterators into the transcript, kept in list order with non-decreasing
//! indices. The shifting rules are in docs/guide.md (Anchors).

use crate::error::{Error, ErrorKind, Result};

pub const DEFAULT_ANCHORS: [&str; 3] = ["system_prompt", "tools", "messages"];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anchors {
    list: Vec<(String, usize)>,
}

impl Anchors {
    pub fn default_set() -> Anchors {
        Anchors {
            list: DEFAULT_ANCHORS.iter().map(|n| (n.to_string(), 0)).collect(),
        }
    }

    /// Anchors as given (a decoder checks them with `validate`).
    pub fn from_list(list: Vec<(String, usize)>) -> Anchors {
        Anchors { list }
    }

    pub fn list(&self) -> &[(String, usize)] {
        &self.list
    }

    pub fn get(&self, name: &str) -> Option<usize> {
        self.list.iter().find(|(n, _)| n == name).map(|(_, i)| *i)
    }

    pub fn position(&self, name: &str) -> Result<usize> {
        self.list
            .iter()
            .position(|(n, _)| n == name)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::UnknownAnchor,
                    format!("unknown anchor point: {name}"),
                )
            })
    }

    pub fn index_at(&self, k: usize) -> usize {
        self.list[k].1
    }

    /// `[start, end)` positions of the partition that ends at anchor `name`.
    pub fn partition(&self, name: &str) -> Option<(usize, usize)> {
        let k = self.list.iter().position(|(n, _)| n == name)?;
        let start = if k == 0 { 0 } else { self.list[k - 1].1 };
        Some((start, self.list[k].1))
    }

    pub fn add(
        &mut self,
        name: &str,
        index: usize,
        len: usize,
        after_existing: bool,
    ) -> Result<()> {
        if self.list.iter().any(|(n, _)| n == name) {
            return Err(Error::bad_argument(format!(
                "Anchor point already exists: {name}"
            )));
        }
        if index > len {
            return Err(Error::out_of_range(format!(
                "anchor index {} is outside [0, {len}]",
                if index == usize::MAX {
                    "(too large)".to_string()
                } else {
                    index.to_string()
                }
            )));
        }
        let at = self
            .list
            .iter()
            .position(|(_, i)| {
                if after_existing {
                    *i > index
                } else {
                    *i >= index
                }
            })
            .unwrap_or(self.list.len());
        self.list.insert(at, (name.to_string(), index));
        Ok(())
    }

    /// After an insert at anchor `k`: that anchor and every later one move up by 1.
    pub fn shift_from(&mut self, k: usize) {
        for a in &mut self.list[k..] {
            a.1 += 1;
        }
    }

    /// After an insert at position `p` that is not an anchor: anchors at `p` or later move up.
    pub fn shift_at_or_after(&mut self, p: usize) {
        for a in &mut self.list {
            if a.1 >= p {
                a.1 += 1;
            }
        }
    }

    /// After `first..=last` became one message.
    pub fn collapse(&mut self, first: usize, last: usize) {
        for a in &mut self.list {
            if a.1 > last {
                a.1 -= last - first;
            } else if a.1 > first {
                a.1 = first + 1;
            }
        }
    }

    /// After `first..=last` was removed: anchors inside move to `first`, later ones back.
    pub fn remove(&mut self, first: usize, last: usize) {
        for a in &mut self.list {
            if a.1 > last {
                a.1 -= last - first + 1;
            } else if a.1 > first {
                a.1 = first;
            }
        }
    }

    /// Anchors of a subsequence: each index becomes the number of kept positions before it.
    /// `kept` is sorted.
    pub fn project(&self, kept: &[usize]) -> Anchors {
        Anchors {
            list: self
                .list
                .iter()
                .map(|(n, i)| (n.clone(), kept.partition_point(|p| p < i)))
                .collect(),
        }
    }

    /// Names unique, indices non-decreasing and within `[0, len]`; an error is undecodable
    /// input at the offending entry's index.
    pub fn validate(&self, len: usize) -> Result<()> {
        let mut prev = 0;
        for (k, (n, i)) in self.list.iter().enumerate() {
            if self.list[..k].iter().any(|(m, _)| m == n) {
                return Err(Error::undecodable(format!("duplicate anchor {n:?}")).at_index(k));
            }
            if *i > len {
                return Err(Error::undecodable(format!(
                    "anchor {n:?} at {i} is outside the {len}-message transcript"
                ))
                .at_index(k));
            }
            if *i < prev {
                return Err(
                    Error::undecodable(format!("anchor {n:?} at {i} is out of order")).at_index(k),
                );
            }
            prev = *i;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_orders_ties_by_after_existing() {
        let mut a = Anchors::default_set();
        a.add("start", 0, 0, true).unwrap();
        assert_eq!(a.list().last().unwrap().0, "start");
        a.add("first", 0, 0, false).unwrap();
        assert_eq!(a.list()[0].0, "first");
        let kind = |r: Result<()>| r.map_err(|e| e.kind()).err();
        assert_eq!(
            kind(a.add("start", 0, 0, true)),
            Some(ErrorKind::BadArgument)
        );
        assert_eq!(kind(a.add("x", 1, 0, true)), Some(ErrorKind::OutOfRange));
    }

    #[test]
    fn collapse_moves_inside_and_after() {
        let mut a = Anchors::from_list(vec![
            ("a".into(), 1),
            ("b".into(), 3),
            ("c".into(), 6),
            ("d".into(), 8),
        ]);
        a.collapse(1, 5);
        let idx: Vec<usize> = a.list().iter().map(|x| x.1).collect();
        assert_eq!(idx, vec![1, 2, 2, 4]);
    }

    #[test]
    fn remove_moves_inside_to_first_and_after_back() {
        let mut a = Anchors::from_list(vec![
            ("a".into(), 1),
            ("b".into(), 3),
            ("c".into(), 6),
            ("d".into(), 8),
        ]);
        a.remove(1, 5);
        let idx: Vec<usize> = a.list().iter().map(|x| x.1).collect();
        assert_eq!(idx, vec![1, 1, 1, 3]);
    }
}

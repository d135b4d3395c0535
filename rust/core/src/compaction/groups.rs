//! Call groups: what a cut must never split. A group is the turn that makes calls — a run of
//! consecutive assistant messages, which every exporter sends as one assistant turn — and every
//! later message answering one of its calls. A message's calls and answers are the message's
//! own (`Message::found_calls`, `Message::answers`); an answer meets the latest call with its id
//! made before it.

use crate::context::{Context, MessageHandle};
use crate::message::Role;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// The turn: first and last position of the run of assistant messages.
    pub turn: (usize, usize),
    /// Positions of the messages answering its calls, ascending.
    pub answers: Vec<usize>,
}

impl Group {
    pub fn lo(&self) -> usize {
        self.turn.0
    }

    pub fn hi(&self) -> usize {
        self.answers
            .last()
            .map_or(self.turn.1, |&a| a.max(self.turn.1))
    }

    pub fn holds(&self, p: usize) -> bool {
        (self.turn.0..=self.turn.1).contains(&p) || self.answers.binary_search(&p).is_ok()
    }

    /// Every position in the group, ascending.
    pub fn members(&self) -> impl Iterator<Item = usize> + '_ {
        let turn = self.turn.0..=self.turn.1;
        turn.chain(
            self.answers
                .iter()
                .copied()
                .filter(move |&a| a > self.turn.1),
        )
    }
}

impl<H: MessageHandle> Context<H> {
    /// The groups of the turns that start in `[from, to)`, with their answers from anywhere
    /// after them. Past `to` the scan goes on only while a turn runs on or a call made before
    /// `to` is still unanswered (its answer may sit in the kept suffix), so a transcript whose
    /// calls are answered where they are made is read up to `to` and no further.
    ///
    /// The same pass collects the positions before `to` whose metadata has `"pinned": true`.
    pub(crate) fn call_groups(&self, from: usize, to: usize) -> (Vec<Group>, Vec<usize>) {
        let mut groups: Vec<Group> = Vec::new();
        let mut marked = Vec::new();
        // Call id → the group of the latest call made with it.
        let mut by_id: HashMap<String, usize> = HashMap::new();
        let mut open: HashSet<String> = HashSet::new();
        // The run of assistant messages being read: (its start, its group if it calls).
        let mut run: Option<(usize, Option<usize>)> = None;
        // Sequential over the fold: no search per position.
        for (p, seq) in (from..).zip(self.transcript().iter_from(from)) {
            let running = run.is_some();
            if p >= to && open.is_empty() && !running {
                break;
            }
            let m = self.handle(seq).message();
            if p < to && m.metadata.get("pinned") == Some(&Value::Bool(true)) {
                marked.push(p);
            }
            if m.role == Role::Assistant {
                let (start, group) = run.get_or_insert((p, None));
                if p >= to && *start >= to {
                    // A turn that starts in the kept suffix is not ours to read.
                    run = None;
                    if open.is_empty() {
                        break;
                    }
                    continue;
                }
                let calls = m.found_calls();
                if !calls.is_empty() && group.is_none() {
                    groups.push(Group {
                        turn: (*start, p),
                        answers: Vec::new(),
                    });
                    *group = Some(groups.len() - 1);
                }
                if let Some(g) = *group {
                    groups[g].turn.1 = p;
                    for c in calls {
                        by_id.insert(c.id.to_string(), g);
                        open.insert(c.id.to_string());
                    }
                }
                continue;
            }
            run = None;
            for id in m.answers() {
                if let Some(&g) = by_id.get(&id) {
                    if groups[g].turn.1 < p {
                        if groups[g].answers.last() != Some(&p) {
                            groups[g].answers.push(p);
                        }
                        open.remove(&id);
                    }
                }
            }
        }
        (groups, marked)
    }
}

/// The latest clean cut at or before `s`: one no group straddles (a group straddles a cut
/// when it starts before it and ends at or after it). `groups` ascend by start, so one pass
/// from the last is enough: the cut only moves back, onto a group's start, and a group that
/// starts later can never straddle it again.
pub(crate) fn clean_cut(groups: &[Group], mut s: usize) -> usize {
    for g in groups.iter().rev() {
        if g.lo() < s && s <= g.hi() {
            s = g.lo();
        }
    }
    s
}

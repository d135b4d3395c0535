//! The answers a request's source gives, in order, and which one each call meets: the first
//! answer to its id in a message at or after the end of its turn that no other call met.

use super::AnswerSrc;
use crate::message::{part_call_id, part_type, Content, Message, Role};
use rustc_hash::FxHashMap as HashMap;

/// One answer of the source.
pub struct Entry<'a> {
    /// The message (index into `Plan::msgs`) it is in.
    pub at: usize,
    pub src: AnswerSrc<'a>,
    /// The call id it answers.
    pub id: &'a str,
    met: bool,
    /// The next answer to the same id (`NONE`: the last), once `Given::chain` is made.
    next: u32,
}

const NONE: u32 = u32::MAX;

/// How many answers after a turn's end are looked through before the chains by id are
/// asked: answers mostly come right after their calls, and in their order.
const NEAR: usize = 8;

#[derive(Default)]
pub struct Given<'a> {
    list: Vec<Entry<'a>>,
    /// The first answer in a message at or after the end of the turn being met.
    from: usize,
    /// The first answer of the message `unmet_in` looks at next.
    cursor: usize,
    /// For each id, the first answer to it not yet known met or too early; made the first
    /// time an answer is not near its turn (most requests never need it).
    chain: Option<HashMap<&'a str, u32>>,
}

impl<'a> Given<'a> {
    /// The answers message `i` gives: a tool message's `tool_call_id`, or a user message's
    /// `tool_result` parts.
    pub fn gather(&mut self, m: &'a Message, i: usize) {
        let mut add = |id, src| {
            self.list.push(Entry {
                at: i,
                src,
                id,
                met: false,
                next: NONE,
            })
        };
        match (m.role, &m.content) {
            (Role::Tool, _) => {
                if let Some(id) = m.tool_call_id.as_deref() {
                    add(id, AnswerSrc::Tool(m));
                }
            }
            (Role::User, Content::Parts(parts)) => {
                for p in parts.iter().filter(|p| part_type(p) == Some("tool_result")) {
                    if let Some(id) = part_call_id(p) {
                        add(id, AnswerSrc::Part(p));
                    }
                }
            }
            _ => {}
        }
    }

    pub fn at(&self, g: u32) -> &Entry<'a> {
        &self.list[g as usize]
    }

    /// The answer call `id` meets, of those in messages at `turn_end` or later (`turn_end`
    /// never goes back between calls), marked met; `None` when there is none.
    pub fn meet(&mut self, id: &str, turn_end: usize) -> Option<u32> {
        let list = &mut self.list;
        while self.from < list.len() && list[self.from].at < turn_end {
            self.from += 1;
        }
        // In order, so the first found near is the first there is.
        let near = self.from..(self.from + NEAR).min(list.len());
        if let Some(g) = near.clone().find(|&g| !list[g].met && list[g].id == id) {
            list[g].met = true;
            return Some(g as u32);
        }
        if near.end == list.len() {
            return None;
        }
        let chain = self.chain.get_or_insert_with(|| chain(list));
        let head = chain.get_mut(id)?;
        // Answers before the turn's end are too early for this call and every later one;
        // met answers are met for good: both are passed once.
        while *head != NONE && (list[*head as usize].at < turn_end || list[*head as usize].met) {
            *head = list[*head as usize].next;
        }
        let g = *head;
        (g != NONE).then(|| {
            list[g as usize].met = true;
            g
        })
    }

    /// The answers in message `i` that no call met (`i` only grows between calls; asked
    /// after every turn before it is planned).
    pub fn unmet_in(&mut self, i: usize) -> impl Iterator<Item = &Entry<'a>> {
        while self.cursor < self.list.len() && self.list[self.cursor].at < i {
            self.cursor += 1;
        }
        let start = self.cursor;
        while self.cursor < self.list.len() && self.list[self.cursor].at == i {
            self.cursor += 1;
        }
        self.list[start..self.cursor].iter().filter(|e| !e.met)
    }
}

/// Links each answer to the next with its id; the first of each id, by id.
fn chain<'a>(list: &mut [Entry<'a>]) -> HashMap<&'a str, u32> {
    let mut first: HashMap<&'a str, u32> =
        HashMap::with_capacity_and_hasher(list.len(), Default::default());
    let mut last: Vec<u32> = Vec::with_capacity(list.len());
    for g in 0..list.len() {
        let id = list[g].id;
        match first.get(id) {
            Some(&f) => {
                let tail = last[f as usize];
                list[tail as usize].next = g as u32;
                last[f as usize] = g as u32;
            }
            None => {
                first.insert(id, g as u32);
            }
        }
        last.push(g as u32);
    }
    first
}

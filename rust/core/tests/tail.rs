//! `shown_tail(k)` is the last `k` of `messages`, with or without an overlay.
use ctxfold_core::{Content, Context, Message, Role};
use std::sync::Arc;

type Ctx = Context<Arc<Message>>;

fn ids(v: &[Arc<Message>]) -> Vec<String> {
    v.iter().map(|m| format!("{}:{}", m.id, m.text())).collect()
}

#[test]
fn the_tail_is_the_end_of_messages() {
    for lead_system in [false, true] {
        for overlay in [None, Some("ov")] {
            for n in [0usize, 1, 2, 5, 1100] {
                let mut c = Ctx::new("c".into(), ctxfold_core::now());
                for i in 0..n {
                    let role = if i == 0 && lead_system {
                        Role::System
                    } else {
                        Role::User
                    };
                    c.append(
                        Arc::new(Message::new(role, Content::Text(format!("m{i}")))),
                        "messages",
                        None,
                    )
                    .unwrap();
                }
                c.set_overlay(overlay.map(String::from));
                let all = c.messages();
                for k in [0usize, 1, 2, 3, 6, 600, 2000] {
                    let want = &all[all.len().saturating_sub(k)..];
                    assert_eq!(
                        ids(&c.shown_tail(k)),
                        ids(want),
                        "n={n} k={k} overlay={overlay:?} sys={lead_system}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_range_is_that_slice_of_messages() {
    for lead_system in [false, true] {
        for overlay in [None, Some("ov")] {
            for n in [0usize, 1, 2, 5, 1100] {
                let mut c = Ctx::new("c".into(), ctxfold_core::now());
                for i in 0..n {
                    let role = if i == 0 && lead_system {
                        Role::System
                    } else {
                        Role::User
                    };
                    c.append(
                        Arc::new(Message::new(role, Content::Text(format!("m{i}")))),
                        "messages",
                        None,
                    )
                    .unwrap();
                }
                c.set_overlay(overlay.map(String::from));
                let all = c.messages();
                for start in [0usize, 1, 2, 3, 513, 1099, 1101, 3000] {
                    for stop in [0usize, 1, 2, 4, 6, 600, 1100, 1101, 5000] {
                        let (a, b) = (start.min(all.len()), stop.min(all.len()));
                        let want = if a < b { &all[a..b] } else { &all[..0] };
                        assert_eq!(
                            ids(&c.shown_range(start, stop)),
                            ids(want),
                            "n={n} {start}..{stop} overlay={overlay:?} sys={lead_system}"
                        );
                    }
                }
            }
        }
    }
}

//! Windows, forks, dynamic messages, removal and history at the level of the core: budget
//! edges, the special messages, the overlay wherever it lands, and the log kept whole.

use ctxfold_core::{Content, Context, Encoding, EventType, Kind, Message, Role};
use std::sync::Arc;

type Ctx = Context<Arc<Message>>;
const CL: Encoding = Encoding::Cl100kBase;

fn msg(role: Role, text: &str) -> Arc<Message> {
    Arc::new(Message::new(role, Content::Text(text.to_string())))
}

fn special(kind: Kind, role: Role, text: &str, hooks: &[&str]) -> Arc<Message> {
    let mut m = Message::new(role, Content::Text(text.to_string()));
    m.kind = kind;
    m.hook_ids = hooks.iter().map(|h| ctxfold_core::hook_id(h)).collect();
    Arc::new(m)
}

fn texts(ctx: &mut Ctx) -> Vec<String> {
    ctx.messages().iter().map(|h| h.text()).collect()
}

/// A context with a system prompt and tool definitions in their slots, then `n` turns.
fn agent(n: usize) -> Ctx {
    let mut ctx = Ctx::default();
    let sp = special(Kind::SystemPrompt, Role::System, "You are terse.", &["mem"]);
    let td = special(
        Kind::ToolDefinitions,
        Role::Tool,
        "",
        &["tool_list", "tool_filter"],
    );
    ctx.append(sp, "system_prompt", None).unwrap();
    ctx.append(td, "tools", None).unwrap();
    for i in 0..n {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        let text = format!("turn {i} ") + &"word ".repeat(i % 7);
        ctx.append(msg(role, &text), "messages", None).unwrap();
    }
    ctx
}

/// The window's total as its child shows it, and the kept non-special texts.
fn window(ctx: &mut Ctx, budget: u64) -> Option<(u64, Vec<String>)> {
    let mut w = ctx.rolling_token_window(budget, CL).unwrap()?;
    let total = w.total_tokens(CL).unwrap();
    let kept = w
        .messages()
        .iter()
        .filter(|h| h.kind == Kind::Plain && !h.id.starts_with("overlay-"))
        .map(|h| h.text())
        .collect();
    Some((total, kept))
}

#[test]
fn every_budget_is_kept_and_the_suffix_is_the_longest() {
    let mut ctx = agent(60);
    let total = ctx.total_tokens(CL).unwrap();
    let plain: Vec<String> = texts(&mut ctx)[2..].to_vec();
    assert_eq!(
        window(&mut ctx, total),
        None,
        "everything fits: nothing to window"
    );
    let mut last_len = 0;
    for budget in 0..total {
        let (t, kept) = window(&mut ctx, budget).expect("something has to go");
        if !kept.is_empty() {
            assert!(t <= budget, "budget {budget}: {t}");
        }
        assert_eq!(kept[..], plain[plain.len() - kept.len()..]);
        assert!(kept.len() >= last_len, "a bigger budget never keeps less");
        last_len = kept.len();
    }
}

#[test]
fn the_specials_are_carried_even_when_they_alone_exceed_the_budget() {
    let mut ctx = agent(10);
    let mut w = ctx.rolling_token_window(1, CL).unwrap().unwrap();
    let kinds: Vec<Kind> = w.messages().iter().map(|h| h.kind).collect();
    assert_eq!(kinds, [Kind::SystemPrompt, Kind::ToolDefinitions]);
    let mut s = ctx.rolling_sequence_window(0).unwrap().unwrap();
    assert_eq!(s.messages().len(), 2);
    assert!(ctx.rolling_sequence_window(10).unwrap().is_none());
    assert!(ctx.rolling_sequence_window(-1).is_err());
}

#[test]
fn the_overlay_counts_wherever_it_lands_in_the_child() {
    // No specials; a summary (system) in the middle becomes the child's head, and the
    // overlay is appended to it there rather than prepended.
    let mut ctx = Ctx::default();
    ctx.append(msg(Role::User, &"start ".repeat(30)), "messages", None)
        .unwrap();
    ctx.append(
        msg(Role::System, "[summary] ".repeat(4).as_str()),
        "messages",
        None,
    )
    .unwrap();
    for i in 0..12 {
        ctx.append(
            msg(Role::User, &format!("q{i} {}", "w ".repeat(i))),
            "messages",
            None,
        )
        .unwrap();
    }
    ctx.set_overlay(Some("Answer in French. ".repeat(5)));
    let total = ctx.total_tokens(CL).unwrap();
    for budget in 0..total {
        if let Some((t, kept)) = window(&mut ctx, budget) {
            if !kept.is_empty() {
                assert!(t <= budget, "budget {budget}: child shows {t}");
            }
        }
    }
}

#[test]
fn windows_never_begin_with_a_tool_result() {
    let mut ctx = Ctx::default();
    for i in 0..30 {
        let m = if i % 3 == 2 {
            let mut t = Message::new(Role::Tool, Content::Text(format!("result {i}")));
            t.tool_call_id = Some(format!("c{i}"));
            Arc::new(t)
        } else {
            msg(Role::Assistant, &format!("step {i}"))
        };
        ctx.append(m, "messages", None).unwrap();
    }
    for count in 0..30 {
        if let Some(mut w) = ctx.rolling_sequence_window(count).unwrap() {
            assert!(w.messages().first().is_none_or(|h| h.role != Role::Tool));
        }
    }
    let total = ctx.total_tokens(CL).unwrap();
    for budget in (0..total).step_by(3) {
        if let Some(mut w) = ctx.rolling_token_window(budget, CL).unwrap() {
            assert!(w.messages().first().is_none_or(|h| h.role != Role::Tool));
        }
    }
}

#[test]
fn forks_share_messages_and_keep_anchors() {
    let mut ctx = agent(20);
    ctx.add_anchor("pin", 10, true).unwrap();
    let parent_msgs = ctx.messages();
    let mut child = ctx.fork_insert_sequence(None, None, Some(-5), None);
    let kept = child.messages();
    assert!(
        Arc::ptr_eq(&kept[0], &parent_msgs[0]),
        "the specials are carried"
    );
    assert!(Arc::ptr_eq(
        kept.last().unwrap(),
        parent_msgs.last().unwrap()
    ));
    assert_eq!(child.origin_context_id(), Some(ctx.id()));
    assert!(ctx.children().iter().any(|c| c == child.id()));
    assert!(child
        .events()
        .iter()
        .all(|e| e.kind != EventType::Materialize));
    assert!(child.anchors().get("pin").is_some());
}

#[test]
fn dynamic_messages_resolve_and_history_remembers_the_bindings() {
    let mut ctx = agent(4);
    let before = ctx.next_seq();
    let tools = r#"[{"name": "search"}, {"name": "shell"}]"#;
    ctx.materialize(&[
        ("mem".into(), "remember".into()),
        ("tool_list".into(), tools.into()),
        ("tool_filter".into(), r#"["sea.*"]"#.into()),
    ])
    .unwrap();
    let shown = ctx.messages();
    assert_eq!(shown[0].text(), "You are terse.\n\nremember");
    match &shown[1].content {
        Content::Parts(p) => assert_eq!(p.len(), 1),
        other => panic!("tool definitions resolve into parts, got {other:?}"),
    }
    assert!(ctx
        .materialize(&[("tool_filter".into(), "[\"(\"]".into())])
        .is_err());
    assert_eq!(
        ctx.messages_at(before as i64).unwrap()[0].text(),
        "You are terse."
    );
    assert_eq!(ctx.changed_since(before as i64).unwrap(), 0);
    assert_eq!(ctx.materialize(&[]).unwrap(), None);
}

#[test]
fn removal_keeps_the_log_and_history_sees_through_it() {
    let mut ctx = agent(10);
    let seq = ctx.next_seq();
    let all = ctx.messages();
    ctx.remove_range(4, 6).unwrap().unwrap();
    assert_eq!(ctx.len(), 9);
    assert_eq!(ctx.messages_at(seq as i64).unwrap(), all);
    assert_eq!(ctx.changed_since(seq as i64).unwrap(), 4);
    assert!(ctx.remove_range(3, 2).is_err());
    assert!(ctx.remove_range(-1, 2).is_err());
    assert!(ctx.remove_range(0, 99).unwrap().is_none());
    ctx.clear().unwrap().unwrap();
    assert_eq!(ctx.len(), 0);
    assert!(ctx.clear().unwrap().is_none());
    let bytes = ctx.to_json_bytes(&Default::default()).unwrap();
    let mut back = Ctx::load_bytes(&bytes).unwrap().context;
    assert_eq!(back.messages_at(seq as i64).unwrap(), all);
    assert!(back.messages().is_empty());
}

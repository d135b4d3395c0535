//! Compaction at the level of the core: where a plan's range starts and ends, call groups kept
//! whole, pins, the compare-and-swap, the record, and the cheaper tier.

use ctxfold_core::{ClearOptions, Plan, PlanOptions, Summary};
use ctxfold_core::{Content, Context, Encoding, ErrorKind, EventType, Kind, Message, Role};
use serde_json::{json, Map, Value};
use std::sync::Arc;

type Ctx = Context<Arc<Message>>;
type H = Arc<Message>;
const CL: Encoding = Encoding::Cl100kBase;

fn text(role: Role, t: &str) -> Message {
    Message::new(role, Content::Text(t.to_string()))
}

fn msg(role: Role, t: &str) -> H {
    Arc::new(text(role, t))
}

fn call(id: &str) -> Map<String, Value> {
    json!({"id": id, "name": "lookup", "arguments": "{}"})
        .as_object()
        .unwrap()
        .clone()
}

fn calling(ids: &[&str]) -> H {
    let mut m = text(Role::Assistant, "calling");
    m.tool_calls = ids.iter().map(|id| call(id)).collect();
    Arc::new(m)
}

fn answer(id: &str, t: &str) -> H {
    let mut m = text(Role::Tool, t);
    m.tool_call_id = Some(id.to_string());
    Arc::new(m)
}

fn words(n: usize) -> String {
    "word ".repeat(n)
}

fn add(ctx: &mut Ctx, h: H) {
    ctx.append(h, "messages", None).unwrap();
}

fn opts(max_tokens: u64) -> PlanOptions {
    PlanOptions {
        max_tokens,
        keep_tokens: None,
        keep_last: None,
        encoding: CL,
        pinned: Vec::new(),
    }
}

fn plan(ctx: &mut Ctx, o: &PlanOptions) -> Option<Plan<H>> {
    ctx.plan_compaction(o).unwrap()
}

/// A system prompt in its slot, then `n` user/assistant pairs of about 50 tokens each.
/// `chat(n)`, then a user message (so that a turn added next starts a run of its own).
fn asked(n: usize) -> Ctx {
    let mut ctx = chat(n);
    add(&mut ctx, msg(Role::User, "go on"));
    ctx
}

fn chat(n: usize) -> Ctx {
    let mut ctx = Ctx::default();
    let mut sp = text(Role::System, "You are terse.");
    sp.kind = Kind::SystemPrompt;
    ctx.append(Arc::new(sp), "system_prompt", None).unwrap();
    for i in 0..n {
        add(&mut ctx, msg(Role::User, &format!("q{i} {}", words(40))));
        add(
            &mut ctx,
            msg(Role::Assistant, &format!("a{i} {}", words(40))),
        );
    }
    ctx
}

fn summarize(ctx: &mut Ctx, p: &Plan<H>) -> Vec<u64> {
    ctx.apply_plan(p, Summary::Text("the summary".into()))
        .unwrap()
}

#[test]
fn a_context_that_fits_needs_no_plan() {
    let mut ctx = chat(3);
    let total = ctx.total_tokens(CL).unwrap();
    assert!(plan(&mut ctx, &opts(total)).is_none());
    assert!(plan(&mut ctx, &opts(total - 1)).is_some());
}

#[test]
fn the_range_runs_from_after_the_head_to_the_kept_suffix() {
    let mut ctx = chat(10);
    let total = ctx.total_tokens(CL).unwrap();
    let p = plan(&mut ctx, &opts(total / 2)).unwrap();
    assert_eq!(p.first(), 1, "the system prompt stays");
    let kept: u64 = (p.last() + 1..ctx.len())
        .map(|i| ctxfold_core::message_tokens(ctx.raw_at(i).unwrap(), CL).unwrap())
        .sum();
    assert!(kept <= total / 4, "the suffix fits keep_tokens");
    // The longest such suffix: one more message would not fit.
    let one_more = ctxfold_core::message_tokens(ctx.raw_at(p.last()).unwrap(), CL).unwrap();
    assert!(kept + one_more > total / 4);
    assert_eq!(p.messages.len(), p.last());
    assert_eq!(p.based_on, ctx.next_seq());
    let before: u64 = p
        .messages
        .iter()
        .map(|h| ctxfold_core::message_tokens(h, CL).unwrap())
        .sum();
    assert_eq!(p.tokens_before, before);
}

#[test]
fn keep_last_keeps_that_many() {
    let mut ctx = chat(10);
    let o = PlanOptions {
        keep_last: Some(4),
        ..opts(100)
    };
    let p = plan(&mut ctx, &o).unwrap();
    assert_eq!((p.first(), p.last()), (1, ctx.len() - 5));
}

#[test]
fn a_cut_inside_a_call_group_grows_the_kept_suffix_back() {
    let mut ctx = asked(4);
    let turn = ctx.len();
    add(&mut ctx, msg(Role::Assistant, "thinking about it"));
    add(&mut ctx, calling(&["c1", "c2"]));
    add(&mut ctx, answer("c1", &words(100)));
    add(&mut ctx, answer("c2", &words(100)));
    add(&mut ctx, msg(Role::Assistant, "done"));
    // keep_last 2 would cut between the two answers: the suffix grows back to the turn.
    let o = PlanOptions {
        keep_last: Some(2),
        ..opts(100)
    };
    let p = plan(&mut ctx, &o).unwrap();
    assert_eq!(p.last(), turn - 1);
}

#[test]
fn interleaved_groups_are_all_kept_whole() {
    let mut ctx = asked(2);
    let first = ctx.len();
    add(&mut ctx, calling(&["a"]));
    add(&mut ctx, msg(Role::User, "meanwhile"));
    add(&mut ctx, calling(&["b"]));
    add(&mut ctx, answer("b", "b done"));
    add(&mut ctx, answer("a", "a done"));
    add(&mut ctx, msg(Role::User, &words(50)));
    let o = PlanOptions {
        keep_last: Some(3),
        ..opts(10)
    };
    // Cutting before "b done" splits b, and then a, whose answer comes last.
    let p = plan(&mut ctx, &o).unwrap();
    assert_eq!(p.last(), first - 1);
}

#[test]
fn tool_use_parts_and_results_are_a_group_too() {
    let mut ctx = asked(2);
    let turn = ctx.len();
    let mut m = text(Role::Assistant, "");
    m.content = Content::Parts(vec![
        json!({"type": "thinking", "text": "hm", "signature": "s"})
            .as_object()
            .unwrap()
            .clone(),
        json!({"type": "tool_use", "call_id": "u1", "name": "f", "arguments": {}})
            .as_object()
            .unwrap()
            .clone(),
    ]);
    add(&mut ctx, Arc::new(m));
    let mut r = text(Role::User, "");
    r.content = Content::Parts(vec![
        json!({"type": "tool_result", "call_id": "u1", "content": "ok"})
            .as_object()
            .unwrap()
            .clone(),
    ]);
    add(&mut ctx, Arc::new(r));
    let o = PlanOptions {
        keep_last: Some(1),
        ..opts(10)
    };
    assert_eq!(plan(&mut ctx, &o).unwrap().last(), turn - 1);
}

#[test]
fn a_dangling_call_is_summarized_with_its_turn() {
    let mut ctx = asked(2);
    add(&mut ctx, calling(&["never"]));
    let end = ctx.len();
    add(&mut ctx, msg(Role::User, "next"));
    let o = PlanOptions {
        keep_last: Some(1),
        ..opts(10)
    };
    assert_eq!(plan(&mut ctx, &o).unwrap().last(), end - 1);
}

#[test]
fn nothing_to_compact_when_the_whole_tail_is_one_group() {
    let mut ctx = Ctx::default();
    add(&mut ctx, calling(&["x"]));
    add(&mut ctx, answer("x", &words(300)));
    let o = PlanOptions {
        keep_last: Some(1),
        ..opts(10)
    };
    assert!(plan(&mut ctx, &o).is_none());
}

#[test]
fn pins_split_the_range_and_keep_their_group() {
    let mut ctx = asked(6);
    // Position 5 pinned by its caller; a call group pinned by a message of it.
    let mut marked = text(Role::Assistant, &words(30));
    marked.tool_calls = vec![call("p")];
    marked.metadata.insert("pinned".into(), Value::Bool(true));
    let at = ctx.len();
    add(&mut ctx, Arc::new(marked));
    add(&mut ctx, answer("p", "pinned answer"));
    for i in 0..6 {
        add(
            &mut ctx,
            msg(Role::User, &format!("later {i} {}", words(40))),
        );
    }
    let o = PlanOptions {
        keep_last: Some(2),
        pinned: vec![5],
        ..opts(10)
    };
    let p = plan(&mut ctx, &o).unwrap();
    assert_eq!(p.ranges, vec![(1, 4), (6, at - 1), (at + 2, ctx.len() - 3)]);
    assert_eq!(p.messages.len(), 4 + (at - 6) + (ctx.len() - 3 - at - 1));
    let before = ctx.raw_messages();
    let seqs = summarize(&mut ctx, &p);
    assert_eq!(seqs.len(), 3);
    let r = &ctx.compactions()[0];
    assert_eq!(
        (r.first, r.last),
        (p.first(), p.last()),
        "the record spans the ranges"
    );
    let now: Vec<String> = ctx.raw_messages().iter().map(|h| h.text()).collect();
    assert_eq!(now[1], "the summary");
    assert_eq!(now[2], before[5].text());
    assert_eq!(now[3], before[at].text());
    assert_eq!(now[4], "pinned answer");
    assert_eq!(now.len(), 1 + 1 + 1 + 2 + 2);
    // The originals: the fold just before the compaction's first event.
    let then = ctx.messages_at(seqs[0] as i64).unwrap();
    assert_eq!(then.len(), before.len());
    assert_eq!(ctx.events()[seqs[1] as usize].kind, EventType::Remove);
}

#[test]
fn an_earlier_summary_stays_and_later_ones_are_summarized_again() {
    let mut ctx = chat(10);
    let o = PlanOptions {
        keep_last: Some(4),
        ..opts(10)
    };
    let p = plan(&mut ctx, &o).unwrap();
    summarize(&mut ctx, &p);
    assert_eq!(ctx.len(), 6);
    for i in 0..6 {
        add(
            &mut ctx,
            msg(Role::User, &format!("more {i} {}", words(30))),
        );
    }
    let p = plan(&mut ctx, &o).unwrap();
    assert_eq!(p.first(), 2, "the leading summary stays");
    let mut summary = text(Role::Assistant, "a second summary");
    summary.metadata.insert("compaction".into(), json!({}));
    ctx.apply_plan(&p, Summary::Message(Arc::new(summary)))
        .unwrap();
    add(&mut ctx, msg(Role::User, &words(200)));
    // The second summary sits after the first: it is summarized again next time.
    let p = plan(&mut ctx, &o).unwrap();
    assert_eq!(p.first(), 2);
    assert_eq!(p.messages[0].text(), "a second summary");
    assert_eq!(ctx.compactions().len(), 2);
}

#[test]
fn leading_system_messages_stay() {
    let mut ctx = Ctx::default();
    add(&mut ctx, msg(Role::System, "rules"));
    add(&mut ctx, msg(Role::Developer, "more rules"));
    for i in 0..6 {
        add(&mut ctx, msg(Role::User, &format!("u{i} {}", words(40))));
    }
    let o = PlanOptions {
        keep_last: Some(2),
        ..opts(10)
    };
    assert_eq!(plan(&mut ctx, &o).unwrap().ranges, vec![(2, 5)]);
}

#[test]
fn the_plan_counts_the_overlay() {
    let mut ctx = chat(3);
    let total = ctx.total_tokens(CL).unwrap();
    assert!(plan(&mut ctx, &opts(total)).is_none());
    ctx.set_overlay(Some("today is Tuesday".into()));
    assert!(plan(&mut ctx, &opts(total)).is_some());
}

#[test]
fn apply_is_a_compare_and_swap() {
    let mut ctx = chat(10);
    let o = PlanOptions {
        keep_last: Some(4),
        ..opts(10)
    };
    // Appends meanwhile survive, after the summary.
    let p = plan(&mut ctx, &o).unwrap();
    add(&mut ctx, msg(Role::User, "appended meanwhile"));
    summarize(&mut ctx, &p);
    assert_eq!(
        ctx.raw_messages().last().unwrap().text(),
        "appended meanwhile"
    );
    assert_eq!(ctx.len(), 1 + 1 + 4 + 1);

    // A replace inside the range (or before it) is a conflict, and nothing is written.
    let mut ctx = chat(10);
    let p = plan(&mut ctx, &o).unwrap();
    ctx.replace_range(3, 3, msg(Role::User, "edited")).unwrap();
    let n = ctx.next_seq();
    let e = ctx.apply_plan(&p, Summary::Text("s".into())).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e:?}");
    assert_eq!(ctx.next_seq(), n);

    // An edit after the range is kept.
    let mut ctx = chat(10);
    let p = plan(&mut ctx, &o).unwrap();
    let after = ctx.len() - 1;
    ctx.replace_range(after as i64, after as i64, msg(Role::User, "edited later"))
        .unwrap();
    summarize(&mut ctx, &p);
    assert_eq!(ctx.raw_messages().last().unwrap().text(), "edited later");
}

#[test]
fn the_record_is_in_the_event_and_on_the_summary() {
    let mut ctx = chat(10);
    let o = PlanOptions {
        keep_last: Some(4),
        ..opts(10)
    };
    let p = plan(&mut ctx, &o).unwrap();
    let seqs = summarize(&mut ctx, &p);
    assert_eq!(seqs.len(), 1);
    let e = &ctx.events()[seqs[0] as usize];
    let r = e.data.get("compaction").unwrap();
    let tokens_after = ctxfold_core::message_tokens(ctx.raw_at(1).unwrap(), CL).unwrap();
    assert_eq!(
        r,
        &json!({"based_on": p.based_on, "first": 1, "last": p.last(),
                "tokens_before": p.tokens_before, "tokens_after": tokens_after,
                "encoding": "cl100k_base"})
    );
    assert_eq!(ctx.raw_at(1).unwrap().metadata.get("compaction"), Some(r));
    assert_eq!(ctx.raw_at(1).unwrap().role, Role::Assistant);
    let recs = ctx.compactions();
    assert_eq!(
        (recs[0].seq, recs[0].first, recs[0].last),
        (seqs[0], 1, p.last())
    );
}

#[test]
fn an_empty_summary_writes_nothing() {
    let mut ctx = chat(10);
    let p = plan(
        &mut ctx,
        &PlanOptions {
            keep_last: Some(4),
            ..opts(10)
        },
    )
    .unwrap();
    let n = ctx.next_seq();
    let e = ctx.apply_plan(&p, Summary::Text("  ".into())).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArgument);
    assert_eq!(ctx.next_seq(), n);
}

#[test]
fn a_plan_applies_to_its_own_context_only() {
    let mut ctx = chat(10);
    let p = plan(
        &mut ctx,
        &PlanOptions {
            keep_last: Some(2),
            ..opts(10)
        },
    )
    .unwrap();
    let mut other = chat(10);
    let n = other.next_seq();
    let e = other.apply_plan(&p, Summary::Text("s".into())).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArgument);
    assert_eq!(other.next_seq(), n);
}

#[test]
fn a_pin_outside_the_transcript_is_refused() {
    let mut ctx = chat(2);
    let o = PlanOptions {
        pinned: vec![99],
        ..opts(10)
    };
    let e = ctx.plan_compaction(&o).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfRange);
}

fn clear(keep_last: usize, min_tokens: u64, exclude: &[&str]) -> ClearOptions {
    ClearOptions {
        keep_last,
        min_tokens,
        exclude_tools: exclude.iter().map(|s| s.to_string()).collect(),
        placeholder: "[cleared]".into(),
        encoding: CL,
    }
}

#[test]
fn clearing_tool_results_keeps_the_pairing() {
    let mut ctx = asked(1);
    for i in 0..4 {
        add(&mut ctx, calling(&[&format!("c{i}")]));
        add(&mut ctx, answer(&format!("c{i}"), &words(20 + i)));
    }
    // A tool_result part beside text: only the part is replaced.
    let mut m = text(Role::User, "");
    m.content = Content::Parts(vec![
        json!({"type": "text", "text": "here"})
            .as_object()
            .unwrap()
            .clone(),
        json!({"type": "tool_result", "call_id": "c0", "content": words(30)})
            .as_object()
            .unwrap()
            .clone(),
    ]);
    let part_at = ctx.len();
    add(&mut ctx, Arc::new(m));
    let mut skip = text(Role::Assistant, "");
    skip.tool_calls = vec![json!({"id": "k", "name": "keep_me", "arguments": "{}"})
        .as_object()
        .unwrap()
        .clone()];
    add(&mut ctx, Arc::new(skip));
    add(&mut ctx, answer("k", &words(50)));
    let seqs = ctx.clear_tool_results(&clear(2, 0, &["keep_me"])).unwrap();
    // Five results count (the excluded one does not): the first three are cleared.
    assert_eq!(seqs.len(), 3);
    let raw = ctx.raw_messages();
    let cleared: Vec<usize> = (0..raw.len())
        .filter(|&i| raw[i].text() == "[cleared]")
        .collect();
    assert_eq!(cleared.len(), 3);
    for &i in &cleared {
        assert!(raw[i].tool_call_id.is_some());
    }
    let part = ctx.raw_at(part_at).unwrap();
    assert_eq!(part.text(), "here", "the part alone is cleared");
    assert_eq!(
        ctx.raw_messages().last().unwrap().text(),
        words(50).as_str()
    );
    // Again: nothing more to clear.
    assert!(ctx
        .clear_tool_results(&clear(2, 0, &["keep_me"]))
        .unwrap()
        .is_empty());
    // min_tokens spares small results.
    let mut ctx2 = chat(1);
    add(&mut ctx2, calling(&["s"]));
    add(&mut ctx2, answer("s", "tiny"));
    assert!(ctx2
        .clear_tool_results(&clear(0, 50, &[]))
        .unwrap()
        .is_empty());
}

#[test]
fn with_both_limits_the_kept_suffix_meets_both() {
    let mut ctx = chat(10);
    let by_tokens = plan(
        &mut ctx,
        &PlanOptions {
            keep_tokens: Some(200),
            ..opts(100)
        },
    )
    .unwrap();
    let both = PlanOptions {
        keep_tokens: Some(200),
        keep_last: Some(10),
        ..opts(100)
    };
    assert_eq!(plan(&mut ctx, &both).unwrap().last(), by_tokens.last());
    let both = PlanOptions {
        keep_tokens: Some(200),
        keep_last: Some(1),
        ..opts(100)
    };
    assert_eq!(plan(&mut ctx, &both).unwrap().last(), ctx.len() - 2);
}

#[test]
fn a_turn_of_several_assistant_messages_is_one_group() {
    let mut ctx = asked(2);
    let turn = ctx.len();
    add(&mut ctx, msg(Role::Assistant, "let me think"));
    add(&mut ctx, msg(Role::Assistant, &words(50)));
    add(&mut ctx, calling(&["c"]));
    add(&mut ctx, answer("c", "ok"));
    // Cutting between the turn's messages would send half a turn.
    let o = PlanOptions {
        keep_last: Some(3),
        ..opts(10)
    };
    assert_eq!(plan(&mut ctx, &o).unwrap().last(), turn - 1);
}

#[test]
fn an_answer_far_into_the_kept_suffix_keeps_its_call() {
    let mut ctx = asked(3);
    let turn = ctx.len();
    add(&mut ctx, calling(&["slow"]));
    for i in 0..5 {
        add(&mut ctx, msg(Role::User, &format!("meanwhile {i}")));
    }
    add(&mut ctx, answer("slow", "finally"));
    let o = PlanOptions {
        keep_last: Some(3),
        ..opts(10)
    };
    assert_eq!(plan(&mut ctx, &o).unwrap().last(), turn - 1);
}

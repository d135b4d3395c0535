//! The core on its own, at the level of a whole Context: the fold, anchor shifting, range
//! shadowing, and that replaying the log (through the codec) gives the same fold.

use ctxfold_core::{Content, Context, EventType, Message, Role};
use std::sync::Arc;

type Ctx = Context<Arc<Message>>;

fn msg(role: Role, text: &str) -> Arc<Message> {
    Arc::new(Message::new(role, Content::Text(text.to_string())))
}

fn texts(ctx: &mut Ctx) -> Vec<String> {
    ctx.messages().iter().map(|h| h.text()).collect()
}

fn anchors(ctx: &Ctx) -> Vec<(String, usize)> {
    ctx.anchors().list().to_vec()
}

fn a(list: &[(&str, usize)]) -> Vec<(String, usize)> {
    list.iter().map(|(n, i)| (n.to_string(), *i)).collect()
}

/// Replaying the log from scratch (a save and a load) must give the same fold and anchors.
fn replays_to_itself(ctx: &mut Ctx) {
    let bytes = ctx.to_json_bytes(&Default::default()).unwrap();
    let mut back = Ctx::load_bytes(&bytes).unwrap().context;
    assert_eq!(back.messages(), ctx.messages());
    assert_eq!(anchors(&back), anchors(ctx));
    assert_eq!(back.events().len(), ctx.events().len());
}

#[test]
fn appends_fold_in_anchor_order_and_shift_later_anchors() {
    let mut ctx = Ctx::default();
    ctx.append(msg(Role::User, "u1"), "messages", None).unwrap();
    ctx.append(msg(Role::System, "sys"), "system_prompt", None)
        .unwrap();
    ctx.append(msg(Role::System, "tools"), "tools", None)
        .unwrap();
    ctx.append(msg(Role::Assistant, "a1"), "messages", None)
        .unwrap();
    assert_eq!(texts(&mut ctx), ["sys", "tools", "u1", "a1"]);
    assert_eq!(
        anchors(&ctx),
        a(&[("system_prompt", 1), ("tools", 2), ("messages", 4)])
    );
    // The same message object comes back: nothing is copied on the way in or out.
    let shown = ctx.messages();
    assert!(Arc::ptr_eq(&shown[3], ctx.raw_at(3).unwrap()));
    assert!(ctx.append(msg(Role::User, "x"), "nowhere", None).is_err());
    replays_to_itself(&mut ctx);
}

#[test]
fn a_new_anchor_in_the_middle_takes_inserts_there() {
    let mut ctx = Ctx::default();
    for i in 0..6 {
        ctx.append(msg(Role::User, &format!("m{i}")), "messages", None)
            .unwrap();
    }
    ctx.add_anchor("pin", 3, true).unwrap();
    assert!(
        ctx.add_anchor("pin", 2, true).is_err(),
        "duplicate names are refused"
    );
    assert!(
        ctx.add_anchor("far", 99, true).is_err(),
        "an index past the end is refused"
    );
    ctx.append(msg(Role::User, "pinned"), "pin", None).unwrap();
    assert_eq!(
        texts(&mut ctx),
        ["m0", "m1", "m2", "pinned", "m3", "m4", "m5"]
    );
    assert_eq!(
        anchors(&ctx),
        a(&[
            ("system_prompt", 0),
            ("tools", 0),
            ("pin", 4),
            ("messages", 7)
        ])
    );
    replays_to_itself(&mut ctx);
}

#[test]
fn replacing_a_range_shadows_it_without_losing_anything() {
    let mut ctx = Ctx::default();
    for i in 0..2000 {
        ctx.append(msg(Role::User, &format!("m{i}")), "messages", None)
            .unwrap();
    }
    ctx.add_anchor("mid", 1500, true).unwrap();
    let first_time = ctx.raw_at(10).unwrap().created_at;
    ctx.replace_range(10, 1700, msg(Role::System, "summary"))
        .unwrap()
        .unwrap();
    let shown = texts(&mut ctx);
    assert_eq!(shown.len(), 2000 - 1690);
    assert_eq!(&shown[9..12], ["m9", "summary", "m1701"]);
    // Inside the range the anchor sits just after the replacement; after it, it moves down.
    assert_eq!(
        anchors(&ctx),
        a(&[
            ("system_prompt", 0),
            ("tools", 0),
            ("mid", 11),
            ("messages", 310)
        ])
    );
    // The replacement inherits the first shadowed message's time; the originals stay in the log.
    assert_eq!(ctx.raw_at(10).unwrap().created_at, first_time);
    assert_eq!(ctx.events().len(), 2001);
    assert!(ctx.events()[..2000]
        .iter()
        .all(|e| e.kind == EventType::UserMessage));

    // A range covering the earlier replacement and ending at the last message.
    let last = ctx.len() - 1;
    ctx.replace_range(5, last as i64, msg(Role::System, "all of it"))
        .unwrap()
        .unwrap();
    assert_eq!(texts(&mut ctx), ["m0", "m1", "m2", "m3", "m4", "all of it"]);
    assert_eq!(
        anchors(&ctx),
        a(&[
            ("system_prompt", 0),
            ("tools", 0),
            ("mid", 6),
            ("messages", 6)
        ])
    );

    // Out of range is refused without a change; descending is an error.
    assert!(ctx
        .replace_range(3, 99, msg(Role::User, "x"))
        .unwrap()
        .is_none());
    assert!(ctx.replace_range(3, 2, msg(Role::User, "x")).is_err());
    assert_eq!(ctx.events().len(), 2002);
    replays_to_itself(&mut ctx);
}

#[test]
fn bookkeeping_events_change_nothing_in_the_fold() {
    let mut ctx = Ctx::default();
    ctx.append(msg(Role::User, "hi"), "messages", None).unwrap();
    ctx.log_event(EventType::TurnEnd, Default::default())
        .unwrap();
    assert!(ctx
        .log_event(EventType::UserMessage, Default::default())
        .is_err());
    assert_eq!(texts(&mut ctx), ["hi"]);
    assert_eq!(ctx.events().len(), 2);
    replays_to_itself(&mut ctx);
}

//! Provider input built from a stored history (SPEC §5, P1–P4; D1–D7 through [`Deduper`]).

use crate::dedupe::{ConflictPolicy, Decision, Deduper};
use crate::envelope::{read_block, Verdict};
use crate::json::{Value, WStr};

/// ST1: the replay channel.
pub const REPLAY_CHANNEL: &str = "openai-reasoning-encrypted";

/// A diagnostic with its location (§12: message index and block index, from 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub message_index: usize,
    pub block_index: usize,
}

impl Diagnostic {
    pub fn to_value(&self) -> Value {
        Value::obj(vec![
            ("code", Value::str(self.code)),
            ("message_index", Value::int(self.message_index as u64)),
            ("block_index", Value::int(self.block_index as u64)),
        ])
    }
}

/// Why a request could not be built.
#[derive(Debug, PartialEq, Eq)]
pub enum BuildError {
    /// D3's strict policy: a registry code.
    Reject(&'static str),
    /// The input is not a history at all (a broken case, answered `error`).
    Broken(String),
}

/// The provider input of one message (P2 step 1 and step 2, kept apart for the planner).
#[derive(Clone, Debug, Default)]
pub struct MessageInput {
    /// The message's replay items that are sent (resumable, right issuer, not duplicates).
    pub replay: Vec<Value>,
    /// The message's own items, as sent (D7 applied).
    pub own: Vec<Value>,
}

/// The result of P2 over a whole history.
#[derive(Clone, Debug, Default)]
pub struct Built {
    pub messages: Vec<MessageInput>,
    pub diagnostics: Vec<Diagnostic>,
    pub exact_count: u64,
    pub conflict_count: u64,
}

impl Built {
    /// P2: the request `input`: per message, its replay items then its own items.
    pub fn input(&self) -> Vec<Value> {
        self.messages.iter().flat_map(|m| m.replay.iter().chain(m.own.iter()).cloned()).collect()
    }
}

/// P2: a text block is an object whose `type` is `"text"` and whose `text` is a string (other
/// members ignored).
pub fn text_of_block(block: &Value) -> Option<&WStr> {
    if block.is_object() && matches!(block.get("type"), Some(t) if t.is_str("text")) {
        block.get("text").and_then(Value::as_wstr)
    } else {
        None
    }
}

/// P4: the provider a message records: its `provider` member when that is a non-empty string.
pub fn recorded_provider(message: &Value) -> Option<&WStr> {
    match message.get("provider") {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}

/// The blocks of a channel of a message, when the channel is an array.
pub fn channel<'a>(message: &'a Value, name: &str) -> Option<&'a Vec<Value>> {
    message.get("channels").and_then(|c| c.get(name)).and_then(Value::as_array)
}

/// P4/PROTOCOL: `history.provider`, when present and not `null`, must be a non-empty string.
pub fn history_provider(history: &Value) -> Result<Option<WStr>, BuildError> {
    match history.get("provider") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(BuildError::Broken("history.provider is not a non-empty string".into())),
    }
}

/// The messages of a history object.
pub fn history_messages(history: &Value) -> Result<&Vec<Value>, BuildError> {
    match history.get("messages") {
        Some(Value::Array(m)) => Ok(m),
        _ => Err(BuildError::Broken("history.messages is not an array".into())),
    }
}

/// P2, P4, D1–D7: builds the provider input of a history for `target`, message by message.
pub fn build(
    messages: &[Value],
    history_provider: Option<&WStr>,
    target: &WStr,
    policy: ConflictPolicy,
) -> Result<Built, BuildError> {
    let mut built = Built::default();
    let mut dedupe = Deduper::new();
    for (mi, message) in messages.iter().enumerate() {
        if !message.is_object() {
            return Err(BuildError::Broken(format!("message {mi} is not an object")));
        }
        let mut out = MessageInput::default();
        let is_assistant = matches!(message.get("role"), Some(r) if r.is_str("assistant"));
        if let Some(blocks) = channel(message, REPLAY_CHANNEL) {
            for (bi, block) in blocks.iter().enumerate() {
                let diag = |code| Diagnostic { code, message_index: mi, block_index: bi };
                // P2: a replay channel of a message that is not the assistant's is not read.
                if !is_assistant {
                    built.diagnostics.push(diag("replay_channel_misplaced"));
                    continue;
                }
                // P2: a block that is not a text block.
                let Some(text) = text_of_block(block) else {
                    built.diagnostics.push(diag("block_not_text"));
                    continue;
                };
                // P4 order: verdict (E6), then issuer, then deduplication.
                let item = match read_block(text.as_bytes()) {
                    Verdict::Resumable(item) => item,
                    Verdict::Code(code) => {
                        built.diagnostics.push(diag(code));
                        continue;
                    }
                };
                let issuer = recorded_provider(message).or(history_provider).unwrap_or(target);
                if issuer != target {
                    built.diagnostics.push(diag("replay_provider_mismatch"));
                    continue;
                }
                match dedupe.decide(issuer, &item) {
                    Decision::Keep => out.replay.push(item),
                    Decision::DropDuplicate => built.diagnostics.push(diag("dedupe_exact_duplicate")),
                    Decision::KeepConflict => {
                        if policy == ConflictPolicy::Reject {
                            return Err(BuildError::Reject("dedupe_id_ciphertext_conflict"));
                        }
                        built.diagnostics.push(diag("dedupe_id_ciphertext_conflict"));
                        out.replay.push(item);
                    }
                }
            }
        }
        // P2 step 2: the message's own items, exactly as stored (D7 for xai).
        match message.get("items") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for it in items {
                    out.own.push(own_item_for_target(it, target));
                }
            }
            Some(_) => return Err(BuildError::Broken(format!("message {mi}: items is not an array"))),
        }
        built.messages.push(out);
    }
    built.exact_count = dedupe.exact_count;
    built.conflict_count = dedupe.conflict_count;
    Ok(built)
}

/// D7: to `xai`, an own item of type `message` with role `assistant` is sent without its `id`;
/// to any other provider every own item is sent unchanged.
fn own_item_for_target(item: &Value, target: &WStr) -> Value {
    if target.eq_str("xai")
        && matches!(item.get("type"), Some(t) if t.is_str("message"))
        && matches!(item.get("role"), Some(r) if r.is_str("assistant"))
    {
        if let Value::Object(m) = item {
            return Value::Object(m.iter().filter(|(k, _)| !k.eq_str("id")).cloned().collect());
        }
    }
    item.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::canonical_text;
    use crate::json::{parse_value, ParseOptions};

    fn item(id: &str, c: &str) -> Value {
        Value::obj(vec![
            ("type", Value::str("reasoning")),
            ("id", Value::str(id)),
            ("summary", Value::Array(vec![])),
            ("encrypted_content", Value::str(c)),
        ])
    }

    fn block(text: &str) -> Value {
        Value::obj(vec![("type", Value::str("text")), ("text", Value::str(text))])
    }

    fn assistant(blocks: Vec<Value>, provider: Option<&str>, items: Vec<Value>) -> Value {
        let mut m = vec![
            ("role", Value::str("assistant")),
            ("channels", Value::obj(vec![(REPLAY_CHANNEL, Value::Array(blocks))])),
            ("items", Value::Array(items)),
        ];
        if let Some(p) = provider {
            m.push(("provider", Value::str(p)));
        }
        Value::obj(m)
    }

    fn codes(b: &Built) -> Vec<(&'static str, usize, usize)> {
        b.diagnostics.iter().map(|d| (d.code, d.message_index, d.block_index)).collect()
    }

    #[test]
    fn p2_replay_items_before_own_items_and_bad_blocks_reported() {
        let own = parse_value(br#"{"type":"message","role":"assistant","id":"m1","content":"hi"}"#, ParseOptions::STRICT).unwrap().0;
        let msgs = vec![
            Value::obj(vec![("role", Value::str("user")), ("channels", Value::obj(vec![(REPLAY_CHANNEL, Value::Array(vec![block("x")]))]))]),
            assistant(
                vec![block(&canonical_text(&item("a", "x"))), block("{}"), Value::str("raw"), block(&canonical_text(&item("b", "y")))],
                None,
                vec![own.clone()],
            ),
        ];
        let b = build(&msgs, None, &WStr::from("openai"), ConflictPolicy::Keep).unwrap();
        assert_eq!(b.input(), vec![item("a", "x"), item("b", "y"), own]);
        assert_eq!(
            codes(&b),
            [("replay_channel_misplaced", 0, 0), ("envelope_member_missing", 1, 1), ("block_not_text", 1, 2)]
        );
    }

    #[test]
    fn p4_issuer_and_dedupe_order() {
        let t = canonical_text(&item("a", "x"));
        let msgs = vec![
            assistant(vec![block(&t)], Some("xai"), vec![]),
            assistant(vec![block(&t)], None, vec![]),
            assistant(vec![block(&t)], Some("openai"), vec![]),
            assistant(vec![block(&canonical_text(&item("a", "z")))], Some(""), vec![]),
        ];
        let b = build(&msgs, Some(&WStr::from("openai")), &WStr::from("openai"), ConflictPolicy::Keep).unwrap();
        assert_eq!(b.input(), vec![item("a", "x"), item("a", "z")]);
        assert_eq!(
            codes(&b),
            [("replay_provider_mismatch", 0, 0), ("dedupe_exact_duplicate", 2, 0), ("dedupe_id_ciphertext_conflict", 3, 0)]
        );
        assert_eq!((b.exact_count, b.conflict_count), (1, 1));
        assert_eq!(
            build(&msgs, None, &WStr::from("openai"), ConflictPolicy::Reject).unwrap_err(),
            BuildError::Reject("dedupe_id_ciphertext_conflict")
        );
        // A history that records no provider replays whole to any target.
        let b = build(&msgs[1..2], None, &WStr::from("codex"), ConflictPolicy::Keep).unwrap();
        assert_eq!(b.input().len(), 1);
    }

    #[test]
    fn d7_xai_drops_assistant_message_ids_only() {
        let own = parse_value(br#"[{"type":"message","role":"assistant","id":"m1","content":"hi"},{"type":"function_call","id":"fc","call_id":"c"}]"#, ParseOptions::STRICT).unwrap().0;
        let msgs = vec![assistant(vec![], None, own.as_array().unwrap().clone())];
        let b = build(&msgs, None, &WStr::from("xai"), ConflictPolicy::Keep).unwrap();
        let input = b.input();
        assert!(input[0].get("id").is_none());
        assert!(input[1].get("id").is_some());
        let b = build(&msgs, None, &WStr::from("openai"), ConflictPolicy::Keep).unwrap();
        assert!(b.input()[0].get("id").is_some());
    }
}

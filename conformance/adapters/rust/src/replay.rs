//! Provider input built from a history (SPEC §5, P1–P4; D1–D7 through [`Deduper`]; the items
//! form of CL3).

use crate::dedupe::{ConflictPolicy, Decision, Deduper};
use crate::envelope::{read_block, Verdict};
use crate::history::{
    channel, has_role, item_type_is, items, recorded_provider, text_of_block, History, HistoryForm, REPLAY_CHANNEL,
};
use crate::json::{Value, WStr};
use crate::providers::ProviderNames;

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

/// D3's strict policy rejected the request (`dedupe_id_ciphertext_conflict`).
#[derive(Debug, PartialEq, Eq)]
pub struct ConflictRejected;

/// The request's target (P4, D7): its provider name and that name's issuer.
pub struct Target<'n> {
    pub names: &'n ProviderNames,
    pub issuer: WStr,
}

impl<'n> Target<'n> {
    /// P4: the target provider name is mapped to its issuer once.
    pub fn new(names: &'n ProviderNames, provider: &WStr) -> Target<'n> {
        Target { names, issuer: names.issuer_of(provider) }
    }
}

/// The result of P2 over a whole history: per message, its items in the order they are sent.
#[derive(Clone, Debug, Default)]
pub struct Built {
    pub messages: Vec<Vec<Value>>,
    pub diagnostics: Vec<Diagnostic>,
    pub exact_count: u64,
    pub conflict_count: u64,
}

impl Built {
    /// P2: the request `input`: every item of a message before any item of the next.
    pub fn input(&self) -> Vec<Value> {
        self.messages.iter().flatten().cloned().collect()
    }
}

/// A replay item's decision in order (P4): its issuer, then deduplication (§6).
struct Replayer<'t, 'n> {
    target: &'t Target<'n>,
    history_issuer: Option<WStr>,
    policy: ConflictPolicy,
    dedupe: Deduper,
    diagnostics: Vec<Diagnostic>,
}

impl Replayer<'_, '_> {
    /// P4: the issuer of a message's replay items: the message's recorded provider, else the
    /// history's, else (unknown) the target's, each name mapped to its issuer once.
    fn issuer_of(&self, message: &Value) -> WStr {
        match recorded_provider(message) {
            Some(p) => self.target.names.issuer_of(p),
            None => self.history_issuer.clone().unwrap_or_else(|| self.target.issuer.clone()),
        }
    }

    /// P4 then D1–D3: whether a resumable replay item is sent; a diagnostic when it is not, or
    /// when it is kept despite a conflict.
    fn decide(&mut self, issuer: &WStr, item: &Value, at: Diagnostic) -> Result<bool, ConflictRejected> {
        if *issuer != self.target.issuer {
            self.diagnostics.push(Diagnostic { code: "replay_provider_mismatch", ..at });
            return Ok(false);
        }
        match self.dedupe.decide(issuer, item) {
            Decision::Keep => Ok(true),
            Decision::DropDuplicate => {
                self.diagnostics.push(Diagnostic { code: "dedupe_exact_duplicate", ..at });
                Ok(false)
            }
            Decision::KeepConflict => {
                if self.policy == ConflictPolicy::Reject {
                    return Err(ConflictRejected);
                }
                self.diagnostics.push(Diagnostic { code: "dedupe_id_ciphertext_conflict", ..at });
                Ok(true)
            }
        }
    }

    /// P2 step 1 (channels form): an assistant message's replay blocks, in channel order; a
    /// replay channel on any other message is not read, each block `replay_channel_misplaced`.
    fn replay_blocks(&mut self, mi: usize, message: &Value, out: &mut Vec<Value>) -> Result<(), ConflictRejected> {
        let Some(blocks) = channel(message, REPLAY_CHANNEL) else { return Ok(()) };
        let assistant = has_role(message, "assistant");
        let issuer = self.issuer_of(message);
        for (bi, block) in blocks.iter().enumerate() {
            let at = Diagnostic { code: "", message_index: mi, block_index: bi };
            if !assistant {
                self.diagnostics.push(Diagnostic { code: "replay_channel_misplaced", ..at });
                continue;
            }
            let Some(text) = text_of_block(block) else {
                self.diagnostics.push(Diagnostic { code: "block_not_text", ..at });
                continue;
            };
            // P4's order: the verdict (E6) first; a block that is not resumable keeps its code.
            match read_block(text.as_bytes()) {
                Verdict::Resumable(item) => {
                    if self.decide(&issuer, &item, at)? {
                        out.push(item);
                    }
                }
                Verdict::Code(code) => self.diagnostics.push(Diagnostic { code, ..at }),
            }
        }
        Ok(())
    }
}

/// P2, P4, D1–D7, CL3: builds the provider input of a history for a target, message by
/// message, or D3's strict rejection.
pub fn build(history: &History, target: &Target, policy: ConflictPolicy) -> Result<Built, ConflictRejected> {
    let history_issuer = history.provider.as_ref().map(|p| target.names.issuer_of(p));
    let mut r = Replayer { target, history_issuer, policy, dedupe: Deduper::new(), diagnostics: Vec::new() };
    let mut messages = Vec::with_capacity(history.messages.len());
    for (mi, message) in history.messages.iter().enumerate() {
        let mut out = Vec::new();
        match history.form {
            HistoryForm::Channels => {
                r.replay_blocks(mi, message, &mut out)?;
                // P2 step 2: the message's own items, in order, exactly as stored (D7).
                out.extend(items(message).iter().map(|it| own_item_for_target(it, target)));
            }
            HistoryForm::Items => {
                // CL3: an assistant message's reasoning items are sent where they stand.
                let assistant = has_role(message, "assistant");
                let issuer = r.issuer_of(message);
                for (ii, it) in items(message).iter().enumerate() {
                    if assistant && item_type_is(it, "reasoning") {
                        let at = Diagnostic { code: "", message_index: mi, block_index: ii };
                        if r.decide(&issuer, it, at)? {
                            out.push(it.clone());
                        }
                    } else {
                        out.push(own_item_for_target(it, target));
                    }
                }
            }
        }
        messages.push(out);
    }
    Ok(Built {
        messages,
        diagnostics: r.diagnostics,
        exact_count: r.dedupe.exact_count,
        conflict_count: r.dedupe.conflict_count,
    })
}

/// D7: when the target's issuer is `xai`, an own item of type `message` with role `assistant`
/// is sent without its `id`; to any other issuer every own item is sent unchanged.
fn own_item_for_target(item: &Value, target: &Target) -> Value {
    if target.issuer.eq_str("xai") && item_type_is(item, "message") && has_role(item, "assistant") {
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

    fn j(s: &str) -> Value {
        parse_value(s.as_bytes(), ParseOptions::STRICT).unwrap().0
    }

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

    fn run(
        msgs: &[Value],
        provider: Option<&str>,
        target: &str,
        policy: ConflictPolicy,
    ) -> Result<Built, ConflictRejected> {
        let names = ProviderNames::registry_only();
        let history = History { form: HistoryForm::Channels, provider: provider.map(WStr::from), messages: msgs };
        build(&history, &Target::new(&names, &WStr::from(target)), policy)
    }

    fn codes(b: &Built) -> Vec<(&'static str, usize, usize)> {
        b.diagnostics.iter().map(|d| (d.code, d.message_index, d.block_index)).collect()
    }

    #[test]
    fn p2_replay_items_before_own_items_and_bad_blocks_reported() {
        let own = j(r#"{"type":"message","role":"assistant","id":"m1","content":"hi"}"#);
        let msgs = vec![
            Value::obj(vec![
                ("role", Value::str("user")),
                ("channels", Value::obj(vec![(REPLAY_CHANNEL, Value::Array(vec![block("x")]))])),
            ]),
            assistant(
                vec![
                    block(&canonical_text(&item("a", "x"))),
                    block("{}"),
                    Value::str("raw"),
                    block(&canonical_text(&item("b", "y"))),
                ],
                None,
                vec![own.clone()],
            ),
        ];
        let b = run(&msgs, None, "openai", ConflictPolicy::Keep).unwrap();
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
        let b = run(&msgs, Some("openai"), "openai", ConflictPolicy::Keep).unwrap();
        assert_eq!(b.input(), vec![item("a", "x"), item("a", "z")]);
        assert_eq!(
            codes(&b),
            [
                ("replay_provider_mismatch", 0, 0),
                ("dedupe_exact_duplicate", 2, 0),
                ("dedupe_id_ciphertext_conflict", 3, 0)
            ]
        );
        assert_eq!((b.exact_count, b.conflict_count), (1, 1));
        assert_eq!(run(&msgs, None, "openai", ConflictPolicy::Reject).unwrap_err(), ConflictRejected);
        // A history that records no provider replays whole to any target.
        let b = run(&msgs[1..2], None, "codex", ConflictPolicy::Keep).unwrap();
        assert_eq!(b.input().len(), 1);
    }

    #[test]
    fn p4_route_names_are_compared_as_their_issuers() {
        let t = canonical_text(&item("a", "x"));
        let msgs = vec![
            assistant(vec![block(&t)], Some("responses"), vec![]),
            assistant(vec![block(&t)], Some("openai"), vec![]),
        ];
        let b = run(&msgs, None, "openai.responses", ConflictPolicy::Keep).unwrap();
        assert_eq!(b.input(), vec![item("a", "x")]);
        assert_eq!(codes(&b), [("dedupe_exact_duplicate", 1, 0)]);
        let b = run(&msgs, None, "codexresponses", ConflictPolicy::Keep).unwrap();
        assert_eq!(codes(&b), [("replay_provider_mismatch", 0, 0), ("replay_provider_mismatch", 1, 0)]);
    }

    #[test]
    fn cl3_items_form_sends_reasoning_where_it_stands() {
        let msgs = vec![j(r#"{"role":"assistant","items":[
            {"type":"reasoning","id":"a","summary":[],"encrypted_content":"x"},
            {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
            {"type":"reasoning","id":"a","summary":[],"encrypted_content":"x"},
            {"type":"reasoning","id":"b","summary":[],"encrypted_content":"y"}]}"#)];
        let names = ProviderNames::registry_only();
        let history = History { form: HistoryForm::Items, provider: None, messages: &msgs };
        let b = build(&history, &Target::new(&names, &WStr::from("openai")), ConflictPolicy::Keep).unwrap();
        let types: Vec<String> =
            b.input().iter().map(|i| i.get("type").unwrap().as_str().unwrap().to_string()).collect();
        assert_eq!(types, ["reasoning", "function_call", "reasoning"]);
        assert_eq!(codes(&b), [("dedupe_exact_duplicate", 0, 2)]);
    }

    #[test]
    fn d7_xai_drops_assistant_message_ids_only() {
        let own = j(
            r#"[{"type":"message","role":"assistant","id":"m1","content":"hi"},{"type":"function_call","id":"fc","call_id":"c"}]"#,
        );
        let msgs = vec![assistant(vec![], None, own.as_array().unwrap().clone())];
        let input = run(&msgs, None, "xai", ConflictPolicy::Keep).unwrap().input();
        assert!(input[0].get("id").is_none());
        assert!(input[1].get("id").is_some());
        assert!(run(&msgs, None, "openai", ConflictPolicy::Keep).unwrap().input()[0].get("id").is_some());
    }
}

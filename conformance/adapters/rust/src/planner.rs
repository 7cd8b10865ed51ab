//! Reasoning-effort configuration updates and `prompt_cache_key` continuity (SPEC §9: F1–F12,
//! K1–K4, and P5 for `store`/`include`).

use crate::dedupe::ConflictPolicy;
use crate::envelope::parse_ijson;
use crate::json::{Value, WStr};
use crate::replay::{build, text_of_block, BuildError, Diagnostic};

/// §9.1: the channel of cache-state records.
pub const CACHE_CHANNEL: &str = "fast-agent-responses-cache-state";
/// §9.1: the channel of staged tool media.
pub const TOOL_MEDIA_CHANNEL: &str = "fast-agent-tool-media-message";
/// §9.1: the allowed efforts of an update-capable model.
pub const ALLOWED_EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];
/// §9.1: the default update-capable registry.
pub const DEFAULT_UPDATE_CAPABLE: &str = "gpt-6-astra";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Sse,
    WebSocket,
    WebSocketContinuation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Responses,
    Compact,
}

/// F11: the inputs of a plan.
pub struct PlanInput<'a> {
    pub messages: &'a [Value],
    pub history_provider: Option<WStr>,
    /// The configured model (any JSON value; F8 rejects a non-string).
    pub model: &'a Value,
    /// The configured desired effort (`None` for `null`).
    pub desired_effort: Option<&'a Value>,
    pub instance_key: &'a Value,
    /// The request's overrides (`None` when absent or `null`).
    pub metadata: Option<&'a Value>,
    pub transport: Transport,
    pub endpoint: Endpoint,
    pub target_provider: WStr,
    pub update_capable: Vec<WStr>,
}

/// §9.1: a structurally valid cache-state record (F6 structure check passed).
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub model: WStr,
    pub key: WStr,
    pub effort: Option<WStr>,
}

/// F6: what an assistant message's cache-state channel holds.
#[derive(Clone, Debug, PartialEq)]
pub enum RecordRead {
    /// Absent channel, an empty array, or a message that is not the assistant's.
    None,
    /// A malformed record: not an array, several blocks, a block that is not text, or a text
    /// that is not one I-JSON object of exactly `model`, `key`, `effort` with their types.
    Malformed,
    Structured(Record),
}

/// F6: reads the record of one message (only assistant messages carry records), checking its
/// structure only.
pub fn read_record(message: &Value) -> RecordRead {
    if !matches!(message.get("role"), Some(r) if r.is_str("assistant")) {
        return RecordRead::None;
    }
    let Some(ch) = message.get("channels").and_then(|c| c.get(CACHE_CHANNEL)) else {
        return RecordRead::None;
    };
    let blocks = match ch {
        Value::Array(b) if b.is_empty() => return RecordRead::None,
        Value::Array(b) => b,
        _ => return RecordRead::Malformed,
    };
    if blocks.len() != 1 {
        return RecordRead::Malformed;
    }
    let Some(text) = text_of_block(&blocks[0]) else { return RecordRead::Malformed };
    let Ok(v) = parse_ijson(text.as_bytes()) else { return RecordRead::Malformed };
    match structured_record(&v) {
        Some(r) => RecordRead::Structured(r),
        None => RecordRead::Malformed,
    }
}

/// F6 / schema `cache-state-record.v1`: exactly `model` (string), `key` (non-empty string) and
/// `effort` (string or `null`).
fn structured_record(v: &Value) -> Option<Record> {
    let m = v.as_object()?;
    if m.len() != 3 {
        return None;
    }
    let model = v.get("model")?.as_wstr()?.clone();
    let key = v.get("key")?.as_wstr().filter(|k| !k.is_empty())?.clone();
    let effort = match v.get("effort")? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        _ => return None,
    };
    Some(Record { model, key, effort })
}

/// §9.1 "valid for model M": the effort is an allowed effort for an update-capable `M`, and
/// `null` for any other `M`.
pub fn effort_valid_for(record: &Record, update_capable: bool) -> bool {
    match &record.effort {
        Some(e) => update_capable && is_allowed_effort(e),
        None => !update_capable,
    }
}

pub fn is_allowed_effort(e: &WStr) -> bool {
    ALLOWED_EFFORTS.iter().any(|a| e.eq_str(a))
}

/// §9.1: a genuine user turn: role `user`, an own `message` item with role `user` and non-empty
/// content, no tool-result item, and no tool-media channel holding a block.
pub fn is_genuine_user_turn(message: &Value) -> bool {
    if !matches!(message.get("role"), Some(r) if r.is_str("user")) {
        return false;
    }
    let items: &[Value] = message.get("items").and_then(Value::as_array).map(|v| v.as_slice()).unwrap_or(&[]);
    let has_user_message = items.iter().any(|it| {
        item_type_is(it, "message")
            && matches!(it.get("role"), Some(r) if r.is_str("user"))
            && match it.get("content") {
                Some(Value::String(s)) => !s.is_empty(),
                Some(Value::Array(a)) => !a.is_empty(),
                _ => false,
            }
    });
    let has_tool_result =
        items.iter().any(|it| item_type_is(it, "function_call_output") || item_type_is(it, "custom_tool_call_output"));
    let stages_media = matches!(
        message.get("channels").and_then(|c| c.get(TOOL_MEDIA_CHANNEL)),
        Some(Value::Array(a)) if !a.is_empty()
    );
    has_user_message && !has_tool_result && !stages_media
}

fn item_type_is(item: &Value, t: &str) -> bool {
    item.is_object() && matches!(item.get("type"), Some(x) if x.is_str(t))
}

/// F7: native compaction: an own item of type `compaction` or `compaction_trigger`.
fn carries_compaction(message: &Value) -> bool {
    message
        .get("items")
        .and_then(Value::as_array)
        .is_some_and(|items| items.iter().any(|it| item_type_is(it, "compaction") || item_type_is(it, "compaction_trigger")))
}

/// F2: the configuration update item.
pub fn update_item(effort: &WStr) -> Value {
    Value::obj(vec![
        ("type", Value::str("configuration_update")),
        ("reasoning", Value::obj(vec![("effort", Value::String(effort.clone()))])),
    ])
}

/// The outcome of a plan.
#[derive(Debug, PartialEq)]
pub enum PlanOutcome {
    /// F8: one code.
    Reject(&'static str),
    /// F11: `{"request", "record", "diagnostics"}`.
    Plan(Value),
}

/// A member present and not `null` (F8: an explicit `null` counts as absent).
fn opt<'v>(obj: Option<&'v Value>, name: &str) -> Option<&'v Value> {
    obj.and_then(|o| o.get_non_null(name))
}

/// K1/F8: 32 lowercase hexadecimal digits.
fn is_instance_key(v: &Value) -> bool {
    match v.as_wstr() {
        Some(s) => s.as_bytes().len() == 32 && s.as_bytes().iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
        None => false,
    }
}

/// F8: the checks before planning, in the order of the table (all rows but the last).
fn check_f8(p: &PlanInput, requested: &Value, uc: bool, governs: bool, desired: Option<&Value>) -> Result<(), &'static str> {
    let md = p.metadata;
    let eb = opt(md, "extra_body");
    // Row 1: the requested model is a string.
    if !matches!(requested, Value::String(_)) {
        return Err("plan_model_invalid");
    }
    // Row 2: metadata.prompt_cache_key, and the instance key (K1).
    if let Some(k) = opt(md, "prompt_cache_key") {
        if !matches!(k, Value::String(s) if !s.is_empty()) {
            return Err("plan_cache_key_invalid");
        }
    }
    if !is_instance_key(p.instance_key) {
        return Err("plan_cache_key_invalid");
    }
    // Row 3: extra_body is an object.
    if let Some(e) = eb {
        if !e.is_object() {
            return Err("plan_extra_body_invalid");
        }
    }
    // Row 4: a model boundary (F12: no model is update-capable for other targets).
    if let Some(m) = opt(eb, "model") {
        let other_uc = governs && matches!(m, Value::String(s) if p.update_capable.contains(s));
        if other_uc || uc {
            return Err("plan_model_boundary");
        }
    }
    if uc {
        // Row 5.
        if opt(eb, "reasoning").is_some() || opt(eb, "prompt_cache_key").is_some() {
            return Err("plan_extra_body_override");
        }
        // Row 6: looked up in metadata and in extra_body.
        for src in [md, eb] {
            if opt(src, "input").is_some() || opt(src, "previous_response_id").is_some() {
                return Err("plan_raw_input_override");
            }
        }
        // Row 7.
        for src in [md, eb] {
            if let Some(t) = opt(src, "truncation") {
                if !t.is_str("disabled") {
                    return Err("plan_auto_context_management");
                }
            }
            if let Some(cm) = opt(src, "context_management") {
                let empty = matches!(cm, Value::Array(a) if a.is_empty()) || matches!(cm, Value::Object(o) if o.is_empty());
                if !empty {
                    return Err("plan_auto_context_management");
                }
            }
        }
        // Row 8: reasoning.mode (metadata only), multi_agent (both).
        if let Some(mode) = opt(opt(md, "reasoning"), "mode") {
            if !mode.is_str("standard") {
                return Err("plan_mode_unsupported");
            }
        }
        for src in [md, eb] {
            if let Some(ma) = opt(src, "multi_agent") {
                if !ma.is_object() {
                    return Err("plan_mode_unsupported");
                }
                if let Some(en) = ma.get_non_null("enabled") {
                    if !matches!(en, Value::Bool(false)) {
                        return Err("plan_mode_unsupported");
                    }
                }
            }
        }
        // Row 9: metadata.reasoning (null included) must be an object; the desired effort
        // must be an allowed effort.
        if let Some(r) = md.and_then(|m| m.get("reasoning")) {
            if !r.is_object() {
                return Err("plan_effort_invalid");
            }
        }
        if !matches!(desired, Some(Value::String(e)) if is_allowed_effort(e)) {
            return Err("plan_effort_invalid");
        }
    } else if let Some(r) = opt(md, "reasoning") {
        // Row 10.
        if !r.is_object() {
            return Err("plan_effort_invalid");
        }
    }
    Ok(())
}

/// §9.3: the effective effort.
#[derive(Clone, Debug)]
enum Effective {
    Known(WStr),
    /// After native compaction (F7): unknown, with the remembered effort.
    Unknown(WStr),
}

impl Effective {
    fn value(&self) -> &WStr {
        match self {
            Effective::Known(e) | Effective::Unknown(e) => e,
        }
    }
}

/// F1–F12, K1–K4, P5: computes a plan or the code of F8. `Err` is a broken case.
pub fn plan(p: &PlanInput) -> Result<PlanOutcome, String> {
    let md = p.metadata;
    // F11: the requested model.
    let requested_v = opt(md, "model").unwrap_or(p.model);
    // F12: Part II governs OpenAI Responses and Codex only.
    let governs = p.target_provider.eq_str("openai") || p.target_provider.eq_str("codex");
    let uc = governs && matches!(requested_v, Value::String(s) if p.update_capable.contains(s));
    // §9.1: the desired effort: metadata.reasoning.effort when set, else the configured one.
    let md_reasoning = opt(md, "reasoning").filter(|r| r.is_object());
    let desired = opt(md_reasoning, "effort").or(p.desired_effort.filter(|v| !v.is_null()));
    if let Err(code) = check_f8(p, requested_v, uc, governs, desired) {
        return Ok(PlanOutcome::Reject(code));
    }
    let requested = requested_v.as_wstr().cloned().unwrap_or_default();

    // P2/P4/D1–D7 over the whole history (F9: whatever the transport).
    let built = match build(p.messages, p.history_provider.as_ref(), &p.target_provider, ConflictPolicy::Keep) {
        Ok(b) => b,
        Err(BuildError::Reject(c)) => return Ok(PlanOutcome::Reject(c)),
        Err(BuildError::Broken(m)) => return Err(m),
    };

    // F6: records (not read at all for other target providers, F12).
    let n = p.messages.len();
    let mut valid: Vec<Option<Record>> = vec![None; n];
    let mut malformed = vec![false; n];
    if governs {
        for (i, m) in p.messages.iter().enumerate() {
            match read_record(m) {
                RecordRead::None => {}
                RecordRead::Malformed => malformed[i] = true,
                RecordRead::Structured(r) if r.model == requested => {
                    if effort_valid_for(&r, uc) {
                        valid[i] = Some(r);
                    } else {
                        malformed[i] = true;
                    }
                }
                RecordRead::Structured(_) => {} // another model's record: ignored entirely (F5)
            }
        }
    }

    // K2 (F12: the instance key for other target providers).
    let instance_key = p.instance_key.as_wstr().cloned().unwrap_or_default();
    let key = if !governs {
        instance_key
    } else if let Some(Value::String(k)) = opt(md, "prompt_cache_key") {
        k.clone()
    } else if let Some(r) = valid.iter().rev().flatten().next() {
        r.key.clone()
    } else {
        instance_key
    };

    // F2: stored configuration updates are never sent by a plan; F10/F12: no other model
    // gets updates.
    let mut per_message: Vec<Vec<Value>> = Vec::with_capacity(n);
    let mut any_update = false;
    let desired_str = desired.and_then(Value::as_wstr).cloned().unwrap_or_default();
    // F1: the baseline: the first valid record's effort, else the desired effort.
    let baseline = valid.iter().flatten().find_map(|r| r.effort.clone()).unwrap_or_else(|| desired_str.clone());
    let mut state = Effective::Known(baseline.clone());
    let genuine: Vec<bool> = p.messages.iter().map(is_genuine_user_turn).collect();
    // F3/F5 look-ahead, linear: the nearest later message that is an assistant message or a
    // genuine user turn.
    let mut next_event: Vec<Option<usize>> = vec![None; n];
    let mut nearest = None;
    for i in (0..n).rev() {
        next_event[i] = nearest;
        let is_assistant = matches!(p.messages[i].get("role"), Some(r) if r.is_str("assistant"));
        if is_assistant || genuine[i] {
            nearest = Some(i);
        }
    }
    for (i, mi) in built.messages.iter().enumerate() {
        let mut items: Vec<Value> = mi.replay.clone();
        let own: Vec<Value> = mi.own.iter().filter(|it| !item_type_is(it, "configuration_update")).cloned().collect();
        let mut update: Option<WStr> = None;
        if uc && genuine[i] {
            // F3/F5: the turn's effort, or `None` for "keeps the effective effort".
            let turn_effort: Option<WStr> = match next_event[i] {
                None => Some(desired_str.clone()),
                Some(j) if genuine[j] => None,
                Some(j) => valid[j].as_ref().and_then(|r| r.effort.clone()),
            };
            // F2/F7, §9.3.
            match &state {
                Effective::Known(x) => {
                    if let Some(e) = turn_effort {
                        if &e != x {
                            update = Some(e);
                        }
                    }
                }
                Effective::Unknown(remembered) => update = Some(turn_effort.unwrap_or_else(|| remembered.clone())),
            }
            if let Some(e) = &update {
                state = Effective::Known(e.clone());
            }
        }
        let mut inserted = false;
        for it in own {
            if !inserted {
                if let Some(e) = &update {
                    let first_user_message = item_type_is(&it, "message") && matches!(it.get("role"), Some(r) if r.is_str("user"));
                    if first_user_message {
                        items.push(update_item(e));
                        inserted = true;
                        any_update = true;
                    }
                }
            }
            items.push(it);
        }
        // F7: the compaction takes effect after the message's own update.
        if uc && carries_compaction(&p.messages[i]) {
            state = Effective::Unknown(state.value().clone());
        }
        per_message.push(items);
    }

    // F8 last row, on the full input.
    if uc && p.endpoint == Endpoint::Compact && any_update {
        return Ok(PlanOutcome::Reject("plan_compact_with_updates"));
    }

    // F9: a WebSocket continuation sends the messages after the last assistant message.
    let mut previous_response_id = None;
    let mut first_sent = 0;
    if p.endpoint == Endpoint::Responses && p.transport == Transport::WebSocketContinuation {
        let last_assistant =
            p.messages.iter().rposition(|m| matches!(m.get("role"), Some(r) if r.is_str("assistant")));
        if let Some(la) = last_assistant {
            if let Some(Value::String(rid)) = p.messages[la].get("response_id") {
                if !rid.is_empty() {
                    previous_response_id = Some(rid.clone());
                    first_sent = la + 1;
                }
            }
        }
    }
    let input: Vec<Value> = per_message[first_sent..].iter().flatten().cloned().collect();

    // F11: request.reasoning: effort as F1/F10 give it, and every other member of
    // metadata.reasoning unchanged.
    let effort: Option<Value> = if uc { Some(Value::String(baseline)) } else { desired.cloned() };
    let mut reasoning: Vec<(WStr, Value)> = Vec::new();
    if let Some(e) = effort {
        reasoning.push((WStr::from("effort"), e));
    }
    if let Some(Value::Object(m)) = md_reasoning {
        for (k, v) in m.iter().filter(|(k, _)| !k.eq_str("effort")) {
            // A repeated member counts by its last value.
            match reasoning.iter_mut().find(|(rk, _)| rk == k) {
                Some(slot) => slot.1 = v.clone(),
                None => reasoning.push((k.clone(), v.clone())),
            }
        }
    }

    let mut request = vec![
        (WStr::from("model"), Value::String(requested.clone())),
        (WStr::from("store"), Value::Bool(false)),
        (WStr::from("include"), Value::Array(vec![Value::str("reasoning.encrypted_content")])),
    ];
    if !reasoning.is_empty() {
        request.push((WStr::from("reasoning"), Value::Object(reasoning)));
    }
    request.push((WStr::from("prompt_cache_key"), Value::String(key.clone())));
    request.push((WStr::from("input"), Value::Array(input)));
    if let Some(rid) = previous_response_id {
        request.push((WStr::from("previous_response_id"), Value::String(rid)));
    }

    // F11: the record (F10: effort null for other models; F12: none for other targets).
    let record = if !governs {
        Value::Null
    } else {
        let effort = if uc { Value::String(state.value().clone()) } else { Value::Null };
        Value::obj(vec![("model", Value::String(requested)), ("key", Value::String(key)), ("effort", effort)])
    };

    // F11: P2's diagnostics, then each message's cache_state_invalid (block index 0).
    let mut diagnostics: Vec<Value> = Vec::new();
    let mut d = built.diagnostics.iter().peekable();
    for (i, bad) in malformed.iter().enumerate() {
        while let Some(x) = d.next_if(|x: &&Diagnostic| x.message_index == i) {
            diagnostics.push(x.to_value());
        }
        if *bad {
            diagnostics.push(Diagnostic { code: "cache_state_invalid", message_index: i, block_index: 0 }.to_value());
        }
    }
    diagnostics.extend(d.map(Diagnostic::to_value));

    Ok(PlanOutcome::Plan(Value::obj(vec![
        ("request", Value::Object(request)),
        ("record", record),
        ("diagnostics", Value::Array(diagnostics)),
    ])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value, ParseOptions};

    const KEY: &str = "0123456789abcdef0123456789abcdef";

    fn j(s: &str) -> Value {
        parse_value(s.as_bytes(), ParseOptions::STRICT).unwrap().0
    }

    fn user(text: &str) -> Value {
        j(&format!(r#"{{"role":"user","items":[{{"type":"message","role":"user","content":"{text}"}}]}}"#))
    }

    fn assistant(effort: Option<&str>, model: &str) -> Value {
        let rec = match effort {
            Some(e) => format!(r#"{{\"model\":\"{model}\",\"key\":\"k1\",\"effort\":\"{e}\"}}"#),
            None => return j(r#"{"role":"assistant","items":[{"type":"message","role":"assistant","content":"a"}]}"#),
        };
        j(&format!(
            r#"{{"role":"assistant","items":[{{"type":"message","role":"assistant","content":"a"}}],"channels":{{"{CACHE_CHANNEL}":[{{"type":"text","text":"{rec}"}}]}}}}"#
        ))
    }

    fn tool_result() -> Value {
        j(r#"{"role":"user","items":[{"type":"function_call_output","call_id":"c","output":"x"}]}"#)
    }

    fn compaction() -> Value {
        j(r#"{"role":"assistant","items":[{"type":"compaction","encrypted_content":"z"}]}"#)
    }

    struct Case {
        messages: Vec<Value>,
        desired: Value,
        metadata: Option<Value>,
        transport: Transport,
        endpoint: Endpoint,
        target: &'static str,
    }

    impl Case {
        fn new(messages: Vec<Value>, desired: &str) -> Case {
            Case {
                messages,
                desired: Value::str(desired),
                metadata: None,
                transport: Transport::Sse,
                endpoint: Endpoint::Responses,
                target: "openai",
            }
        }

        fn run(&self, model: &str) -> PlanOutcome {
            let model = Value::str(model);
            let key = Value::str(KEY);
            plan(&PlanInput {
                messages: &self.messages,
                history_provider: None,
                model: &model,
                desired_effort: Some(&self.desired),
                instance_key: &key,
                metadata: self.metadata.as_ref(),
                transport: self.transport,
                endpoint: self.endpoint,
                target_provider: WStr::from(self.target),
                update_capable: vec![WStr::from(DEFAULT_UPDATE_CAPABLE)],
            })
            .unwrap()
        }

        fn output(&self, model: &str) -> Value {
            match self.run(model) {
                PlanOutcome::Plan(v) => v,
                PlanOutcome::Reject(c) => panic!("rejected {c}"),
            }
        }
    }

    /// The input as a compact list: `u`/`a`/`t`/`c` per own item kind, `update(e)` for updates.
    fn shape(out: &Value) -> Vec<String> {
        out.get("request").unwrap().get("input").unwrap().as_array().unwrap().iter().map(|it| {
            match it.get("type").and_then(Value::as_str) {
                Some("configuration_update") => format!("update({})", it.get("reasoning").unwrap().get("effort").unwrap().as_str().unwrap()),
                Some("message") => it.get("role").unwrap().as_str().unwrap()[..1].to_string(),
                Some("function_call_output") => "t".into(),
                Some(other) => other.into(),
                None => "?".into(),
            }
        }).collect()
    }

    fn effort_of(out: &Value) -> Option<&str> {
        out.get("request").unwrap().get("reasoning").and_then(|r| r.get("effort")).and_then(Value::as_str)
    }

    #[test]
    fn section_9_4_first_example() {
        let c = Case::new(vec![user("u1"), assistant(Some("low"), "gpt-6-astra"), user("u2"), assistant(Some("high"), "gpt-6-astra"), user("u3")], "low");
        let out = c.output("gpt-6-astra");
        assert_eq!(effort_of(&out), Some("low"));
        assert_eq!(shape(&out), ["u", "a", "update(high)", "u", "a", "update(low)", "u"]);
        assert_eq!(out.get("record").unwrap().get("effort").unwrap().as_str(), Some("low"));
        assert_eq!(out.get("request").unwrap().get("prompt_cache_key").unwrap().as_str(), Some("k1"));
    }

    #[test]
    fn section_9_4_tool_loop_example() {
        let c = Case::new(vec![user("u1"), assistant(Some("low"), "gpt-6-astra"), tool_result()], "high");
        let out = c.output("gpt-6-astra");
        assert_eq!(shape(&out), ["u", "a", "t"]);
        assert_eq!(out.get("record").unwrap().get("effort").unwrap().as_str(), Some("low"));
        let mut msgs = c.messages.clone();
        msgs.push(assistant(Some("low"), "gpt-6-astra"));
        msgs.push(user("u2"));
        let out = Case::new(msgs, "high").output("gpt-6-astra");
        assert_eq!(shape(&out), ["u", "a", "t", "a", "update(high)", "u"]);
    }

    #[test]
    fn section_9_4_compaction_example() {
        let c = Case::new(vec![user("u1"), assistant(Some("low"), "gpt-6-astra"), compaction(), user("u2")], "low");
        assert_eq!(shape(&c.output("gpt-6-astra")), ["u", "a", "compaction", "update(low)", "u"]);
    }

    #[test]
    fn f9_example_over_sse_and_continuation() {
        // Efforts low → high → high (tool turn) → low.
        let mut h = vec![user("u1")];
        let mut a1 = assistant(Some("low"), "gpt-6-astra");
        let with_rid = |m: &mut Value, rid: &str| {
            if let Value::Object(o) = m {
                o.push((WStr::from("response_id"), Value::str(rid)));
            }
        };
        with_rid(&mut a1, "r1");
        h.push(a1);
        h.push(user("u2"));
        let mut a2 = assistant(Some("high"), "gpt-6-astra");
        with_rid(&mut a2, "r2");
        h.push(a2);
        h.push(tool_result());
        let mut a3 = assistant(Some("high"), "gpt-6-astra");
        with_rid(&mut a3, "r3");
        h.push(a3);
        h.push(user("u3"));
        let sse = Case::new(h.clone(), "low");
        assert_eq!(shape(&sse.output("gpt-6-astra")), ["u", "a", "update(high)", "u", "a", "t", "a", "update(low)", "u"]);
        let mut ws = Case::new(h, "low");
        ws.transport = Transport::WebSocketContinuation;
        let out = ws.output("gpt-6-astra");
        assert_eq!(shape(&out), ["update(low)", "u"]);
        assert_eq!(out.get("request").unwrap().get("previous_response_id").unwrap().as_str(), Some("r3"));
        ws.endpoint = Endpoint::Compact;
        assert_eq!(ws.run("gpt-6-astra"), PlanOutcome::Reject("plan_compact_with_updates"));
    }

    /// The updates of a plan's input, in order.
    fn updates(out: &Value) -> Vec<String> {
        shape(out).into_iter().filter(|s| s.starts_with("update(")).map(|s| s[7..s.len() - 1].to_string()).collect()
    }

    #[test]
    fn f9_informative_example_all_four_requests() {
        // Efforts low → high → high (tool turn) → low; each request's history ends with the
        // messages of the earlier requests and their responses.
        let rid = |mut m: Value, id: &str| {
            if let Value::Object(o) = &mut m {
                o.push((WStr::from("response_id"), Value::str(id)));
            }
            m
        };
        let a = |e: &str, id: &str| rid(assistant(Some(e), "gpt-6-astra"), id);
        let histories = [
            (vec![user("u1")], "low"),
            (vec![user("u1"), a("low", "r1"), user("u2")], "high"),
            (vec![user("u1"), a("low", "r1"), user("u2"), a("high", "r2"), tool_result()], "high"),
            (vec![user("u1"), a("low", "r1"), user("u2"), a("high", "r2"), tool_result(), a("high", "r3"), user("u3")], "low"),
        ];
        let mut sse = Vec::new();
        let mut ws = Vec::new();
        for (h, desired) in histories {
            let mut c = Case::new(h, desired);
            sse.push(updates(&c.output("gpt-6-astra")));
            c.transport = Transport::WebSocketContinuation;
            ws.push(updates(&c.output("gpt-6-astra")));
        }
        let v = |x: &[&[&str]]| x.iter().map(|u| u.iter().map(|s| s.to_string()).collect::<Vec<_>>()).collect::<Vec<_>>();
        assert_eq!(sse, v(&[&[], &["high"], &["high"], &["high", "low"]]));
        assert_eq!(ws, v(&[&[], &["high"], &[], &["low"]]));
    }

    #[test]
    fn k3_explicit_keys_persist_through_records() {
        let rec = |key: &str| {
            j(&format!(
                r#"{{"role":"assistant","channels":{{"{CACHE_CHANNEL}":[{{"type":"text","text":"{{\"model\":\"gpt-6-astra\",\"key\":\"{key}\",\"effort\":\"low\"}}"}}]}}}}"#
            ))
        };
        let key_of = |c: &Case| c.output("gpt-6-astra").get("request").unwrap().get("prompt_cache_key").unwrap().as_str().unwrap().to_string();
        let mut c = Case::new(vec![user("u1")], "low");
        c.metadata = Some(j(r#"{"prompt_cache_key":"A"}"#));
        assert_eq!(key_of(&c), "A");
        let mut c = Case::new(vec![user("u1"), rec("A"), user("u2")], "low");
        c.metadata = Some(j(r#"{"prompt_cache_key":"B"}"#));
        assert_eq!(key_of(&c), "B");
        let c = Case::new(vec![user("u1"), rec("A"), user("u2"), rec("B"), user("u3")], "low");
        assert_eq!(key_of(&c), "B");
        // Clearing: an empty history gets the instance key and the desired effort, no update.
        let c = Case::new(vec![user("u1")], "high");
        let out = c.output("gpt-6-astra");
        assert_eq!(key_of(&c), KEY);
        assert_eq!(effort_of(&out), Some("high"));
        assert!(updates(&out).is_empty());
    }

    #[test]
    fn f5_missing_and_foreign_records_keep_the_effort() {
        let c = Case::new(vec![user("u1"), assistant(Some("high"), "other-model"), user("u2"), user("u3")], "medium");
        let out = c.output("gpt-6-astra");
        assert_eq!(effort_of(&out), Some("medium"));
        assert_eq!(shape(&out), ["u", "a", "u", "u"]);
        assert_eq!(out.get("diagnostics").unwrap().as_array().unwrap().len(), 0);
    }

    #[test]
    fn f6_malformed_records_are_reported_and_ignored() {
        let bad = j(&format!(r#"{{"role":"assistant","channels":{{"{CACHE_CHANNEL}":null}}}}"#));
        let disallowed = assistant(Some("minimal"), "gpt-6-astra");
        let user_record = j(&format!(r#"{{"role":"user","channels":{{"{CACHE_CHANNEL}":"junk"}}}}"#));
        let c = Case::new(vec![user("u1"), bad, user_record, disallowed, user("u2")], "low");
        let out = c.output("gpt-6-astra");
        let diags: Vec<(String, u64)> = out.get("diagnostics").unwrap().as_array().unwrap().iter()
            .map(|d| (d.get("code").unwrap().as_str().unwrap().to_string(), d.get("message_index").unwrap().as_f64().unwrap() as u64))
            .collect();
        assert_eq!(diags, [("cache_state_invalid".to_string(), 1), ("cache_state_invalid".to_string(), 3)]);
        assert_eq!(effort_of(&out), Some("low"));
    }

    #[test]
    fn f8_rejections_in_table_order() {
        let mut c = Case::new(vec![user("u1")], "low");
        c.metadata = Some(j(r#"{"model":5}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_model_invalid"));
        c.metadata = Some(j(r#"{"prompt_cache_key":""}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_cache_key_invalid"));
        c.metadata = Some(j(r#"{"extra_body":[]}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_extra_body_invalid"));
        c.metadata = Some(j(r#"{"extra_body":{"model":"gpt-4o"}}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_model_boundary"));
        c.metadata = Some(j(r#"{"extra_body":{"reasoning":{}}}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_extra_body_override"));
        c.metadata = Some(j(r#"{"input":[]}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_raw_input_override"));
        c.metadata = Some(j(r#"{"extra_body":{"truncation":"auto"}}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_auto_context_management"));
        c.metadata = Some(j(r#"{"context_management":[{"type":"compaction"}]}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_auto_context_management"));
        c.metadata = Some(j(r#"{"multi_agent":{"enabled":true}}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_mode_unsupported"));
        c.metadata = Some(j(r#"{"reasoning":null}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_effort_invalid"));
        c.metadata = Some(j(r#"{"reasoning":{"effort":"minimal"}}"#));
        assert_eq!(c.run("gpt-6-astra"), PlanOutcome::Reject("plan_effort_invalid"));
        // Nulls ask for nothing.
        c.metadata = Some(j(r#"{"model":null,"prompt_cache_key":null,"extra_body":null,"truncation":null,"multi_agent":null,"input":null,"context_management":{}}"#));
        assert!(matches!(c.run("gpt-6-astra"), PlanOutcome::Plan(_)));
        // Other models: only rows 1–4 and 10.
        c.metadata = Some(j(r#"{"reasoning":null,"truncation":"auto"}"#));
        assert!(matches!(c.run("gpt-4o"), PlanOutcome::Plan(_)));
        c.metadata = Some(j(r#"{"reasoning":"high"}"#));
        assert_eq!(c.run("gpt-4o"), PlanOutcome::Reject("plan_effort_invalid"));
    }

    #[test]
    fn f10_f12_other_models_and_targets() {
        let mut c = Case::new(vec![user("u1"), assistant(Some("high"), "gpt-6-astra"), user("u2")], "low");
        c.metadata = Some(j(r#"{"reasoning":{"summary":"auto","effort":"medium"}}"#));
        let out = c.output("gpt-4o");
        assert_eq!(effort_of(&out), Some("medium"));
        assert_eq!(out.get("request").unwrap().get("reasoning").unwrap().get("summary").unwrap().as_str(), Some("auto"));
        assert_eq!(shape(&out), ["u", "a", "u"]);
        assert!(out.get("record").unwrap().get("effort").unwrap().is_null());
        c.target = "xai";
        c.metadata = Some(j(r#"{"prompt_cache_key":"explicit"}"#));
        let out = c.output("gpt-6-astra");
        assert_eq!(shape(&out), ["u", "a", "u"]);
        assert!(out.get("record").unwrap().is_null());
        assert_eq!(out.get("request").unwrap().get("prompt_cache_key").unwrap().as_str(), Some(KEY));
    }

    #[test]
    fn f2_stored_updates_are_not_sent() {
        let stored = j(r#"{"role":"user","items":[{"type":"configuration_update","reasoning":{"effort":"max"}},{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}]}"#);
        let c = Case::new(vec![stored], "low");
        assert_eq!(shape(&c.output("gpt-6-astra")), ["u"]);
    }

    #[test]
    fn genuine_user_turns() {
        assert!(is_genuine_user_turn(&user("x")));
        assert!(!is_genuine_user_turn(&user("")));
        assert!(!is_genuine_user_turn(&tool_result()));
        let staged = j(&format!(r#"{{"role":"user","items":[{{"type":"message","role":"user","content":"x"}}],"channels":{{"{TOOL_MEDIA_CHANNEL}":[{{}}]}}}}"#));
        assert!(!is_genuine_user_turn(&staged));
        let empty_media = j(&format!(r#"{{"role":"user","items":[{{"type":"message","role":"user","content":"x"}}],"channels":{{"{TOOL_MEDIA_CHANNEL}":[]}}}}"#));
        assert!(is_genuine_user_turn(&empty_media));
    }
}

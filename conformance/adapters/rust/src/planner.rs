//! Reasoning-effort configuration updates and `prompt_cache_key` continuity (SPEC §9: F1–F7,
//! F9–F12, K1–K4; the rejections of F8 are [`crate::overrides`]), and the `store` and
//! `include` members every request sends (P5).

use crate::cache_state::{effort_valid_for, read_record, Record, RecordRead};
use crate::dedupe::ConflictPolicy;
use crate::history::{has_role, item_type_is, items, History, TOOL_MEDIA_CHANNEL};
use crate::json::{Value, WStr};
use crate::overrides::{self, member};
use crate::providers::ProviderNames;
use crate::replay::{build, Diagnostic, Target};

/// F9, F11: the transport of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Sse,
    WebSocket,
    WebSocketContinuation,
}

/// P5, F11: the endpoint a request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// The Responses endpoint (`responses`).
    Responses,
    /// The standalone compact endpoint (`compact`).
    Compact,
}

/// F11: the inputs of a plan.
pub struct PlanInput<'a> {
    pub history: History<'a>,
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
    /// P4: the registry extended by the caller's provider-name mapping.
    pub names: ProviderNames,
    /// P5: whether the requested model returns reasoning (the caller's declaration; default
    /// true).
    pub reasoning_model: bool,
    /// §9.1: the update-capable registry.
    pub update_capable: Vec<WStr>,
}

/// The outcome of a plan.
#[derive(Debug, PartialEq)]
pub enum PlanOutcome {
    /// F8: one code.
    Reject(&'static str),
    /// F11: `{"request", "record", "diagnostics"}`.
    Plan(Value),
}

/// P5: the `store` and `include` members of a request to `endpoint`: for the Responses
/// endpoint `store: false` and, unless the caller declares that the model returns no
/// reasoning, an `include` holding `"reasoning.encrypted_content"`; for the compact endpoint
/// neither member.
pub fn store_and_include(endpoint: Endpoint, reasoning_model: bool) -> Vec<(&'static str, Value)> {
    match endpoint {
        Endpoint::Compact => Vec::new(),
        Endpoint::Responses if !reasoning_model => vec![("store", Value::Bool(false))],
        Endpoint::Responses => vec![
            ("store", Value::Bool(false)),
            ("include", Value::Array(vec![Value::str("reasoning.encrypted_content")])),
        ],
    }
}

/// F12: Part II governs the target providers whose issuer is `openai` or `codex`.
pub fn governs(target_issuer: &WStr) -> bool {
    target_issuer.eq_str("openai") || target_issuer.eq_str("codex")
}

/// §9.1: a genuine user turn: role `user`, an own `message` item with role `user` and non-empty
/// content (a non-empty string or array), no tool-result item, and no tool-media channel
/// holding a block; every other user message is a tool-result continuation.
pub fn is_genuine_user_turn(message: &Value) -> bool {
    let own = items(message);
    let has_user_message = own.iter().any(|it| {
        item_type_is(it, "message")
            && has_role(it, "user")
            && match it.get("content") {
                Some(Value::String(s)) => !s.is_empty(),
                Some(Value::Array(a)) => !a.is_empty(),
                _ => false,
            }
    });
    let has_tool_result =
        own.iter().any(|it| item_type_is(it, "function_call_output") || item_type_is(it, "custom_tool_call_output"));
    let stages_media = matches!(
        message.get("channels").and_then(|c| c.get(TOOL_MEDIA_CHANNEL)),
        Some(Value::Array(a)) if !a.is_empty()
    );
    has_role(message, "user") && has_user_message && !has_tool_result && !stages_media
}

/// F7: native compaction: an own item of type `compaction` or `compaction_trigger`.
fn carries_compaction(message: &Value) -> bool {
    items(message).iter().any(|it| item_type_is(it, "compaction") || item_type_is(it, "compaction_trigger"))
}

/// F2: the configuration update item.
pub fn update_item(effort: &WStr) -> Value {
    Value::obj(vec![
        ("type", Value::str("configuration_update")),
        ("reasoning", Value::obj(vec![("effort", Value::String(effort.clone()))])),
    ])
}

/// §9.3: the effective effort.
#[derive(Clone, Debug)]
enum Effective {
    Known(WStr),
    /// After native compaction (F7): unknown, with the remembered effort.
    Unknown(WStr),
}

impl Effective {
    /// The effective effort, or the remembered one when it is unknown (F11's record).
    fn value(&self) -> &WStr {
        match self {
            Effective::Known(e) | Effective::Unknown(e) => e,
        }
    }
}

/// F6: each message's record valid for the requested model, and the messages whose record is
/// reported `cache_state_invalid`. Records of other models are ignored entirely (F5).
fn records_for(history: &History, requested: &WStr, update_capable: bool) -> (Vec<Option<Record>>, Vec<bool>) {
    let n = history.messages.len();
    let (mut valid, mut malformed) = (vec![None; n], vec![false; n]);
    for (i, m) in history.messages.iter().enumerate() {
        match read_record(m, history.form) {
            RecordRead::None => {}
            RecordRead::Malformed => malformed[i] = true,
            RecordRead::Structured(r) if r.model == *requested => {
                if effort_valid_for(&r, update_capable) {
                    valid[i] = Some(r);
                } else {
                    malformed[i] = true;
                }
            }
            RecordRead::Structured(_) => {}
        }
    }
    (valid, malformed)
}

/// F1–F7: the update each message gets before its first user message item (`None`: none),
/// and the effective effort at the end. `valid` are the records valid for the requested model.
fn updates(
    messages: &[Value],
    valid: &[Option<Record>],
    baseline: &WStr,
    desired: &WStr,
) -> (Vec<Option<WStr>>, Effective) {
    let n = messages.len();
    let genuine: Vec<bool> = messages.iter().map(is_genuine_user_turn).collect();
    // F3/F5's look-ahead, in linear time: the nearest later message that is an assistant
    // message or a genuine user turn.
    let mut next_event = vec![None; n];
    let mut nearest = None;
    for i in (0..n).rev() {
        next_event[i] = nearest;
        if has_role(&messages[i], "assistant") || genuine[i] {
            nearest = Some(i);
        }
    }
    let mut state = Effective::Known(baseline.clone());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut update = None;
        if genuine[i] {
            // F3: the effort of the record of the first assistant message after the turn, when
            // valid; the desired effort for the last turn; F5: `None` keeps the effective
            // effort (no valid record, or another genuine turn first).
            let turn_effort = match next_event[i] {
                None => Some(desired.clone()),
                Some(j) if genuine[j] => None,
                Some(j) => valid[j].as_ref().and_then(|r| r.effort.clone()),
            };
            update = match (&state, turn_effort) {
                // F2: an update only for a changed effort.
                (Effective::Known(x), Some(e)) if e != *x => Some(e),
                (Effective::Known(_), _) => None,
                // F7: after native compaction the next genuine turn always gets one.
                (Effective::Unknown(remembered), e) => Some(e.unwrap_or_else(|| remembered.clone())),
            };
            if let Some(e) = &update {
                state = Effective::Known(e.clone());
            }
        }
        // F7: a compaction takes effect after its message's own update.
        if carries_compaction(&messages[i]) {
            state = Effective::Unknown(state.value().clone());
        }
        out.push(update);
    }
    (out, state)
}

/// F2: a message's items as a plan sends them: stored configuration updates left out, and the
/// message's update, if any, immediately before its first own `message` item with role `user`.
fn with_update(message_items: &[Value], update: Option<&WStr>) -> Vec<Value> {
    let mut out = Vec::with_capacity(message_items.len() + 1);
    let mut pending = update;
    for it in message_items.iter().filter(|it| !item_type_is(it, "configuration_update")) {
        if let Some(e) = pending {
            if item_type_is(it, "message") && has_role(it, "user") {
                out.push(update_item(e));
                pending = None;
            }
        }
        out.push(it.clone());
    }
    out
}

/// F9: where a WebSocket continuation's input starts (the message after the last assistant
/// message) and its `previous_response_id`, when that message carries its response id.
fn continuation(messages: &[Value]) -> Option<(usize, WStr)> {
    let last = messages.iter().rposition(|m| has_role(m, "assistant"))?;
    match messages[last].get("response_id") {
        Some(Value::String(rid)) if !rid.is_empty() => Some((last + 1, rid.clone())),
        _ => None,
    }
}

/// F11: `request.reasoning`: `effort` as given (absent when `None`), and every member of
/// `metadata.reasoning` other than `effort`, unchanged.
fn request_reasoning(effort: Option<Value>, metadata_reasoning: Option<&Value>) -> Vec<(WStr, Value)> {
    let mut reasoning: Vec<(WStr, Value)> = effort.map(|e| (WStr::from("effort"), e)).into_iter().collect();
    for (k, v) in metadata_reasoning.and_then(Value::as_object).into_iter().flatten() {
        if k.eq_str("effort") {
            continue;
        }
        // A repeated member counts by its last value.
        match reasoning.iter_mut().find(|(rk, _)| rk == k) {
            Some(slot) => slot.1 = v.clone(),
            None => reasoning.push((k.clone(), v.clone())),
        }
    }
    reasoning
}

/// F11: P2's diagnostics, then a `cache_state_invalid` (block index 0) for each malformed
/// record, in message order; within one message, those of P2 first.
fn merged_diagnostics(replay: &[Diagnostic], malformed: &[bool]) -> Vec<Value> {
    let mut out = Vec::with_capacity(replay.len());
    let mut d = replay.iter().peekable();
    for (i, bad) in malformed.iter().enumerate() {
        while let Some(x) = d.next_if(|x| x.message_index == i) {
            out.push(x.to_value());
        }
        if *bad {
            out.push(Diagnostic { code: "cache_state_invalid", message_index: i, block_index: 0 }.to_value());
        }
    }
    out.extend(d.map(Diagnostic::to_value));
    out
}

/// F1–F12, K1–K4, P5: computes a plan, or the code of F8.
pub fn plan(p: &PlanInput) -> PlanOutcome {
    let md = p.metadata;
    let target = Target::new(&p.names, &p.target_provider);
    let governed = governs(&target.issuer);
    // F11: the requested model; §9.1 with F12: update-capable only for a governed target.
    let requested_value = member(md, "model").unwrap_or(p.model);
    let uc = governed && matches!(requested_value, Value::String(s) if p.update_capable.contains(s));
    // §9.1: the desired effort: `metadata.reasoning.effort` when set, else the configured one.
    let metadata_reasoning = member(md, "reasoning").filter(|r| r.is_object());
    let desired = member(metadata_reasoning, "effort").or(p.desired_effort.filter(|v| !v.is_null()));
    let request = overrides::Request {
        metadata: md,
        requested_model: requested_value,
        instance_key: p.instance_key,
        desired_effort: desired,
        governs: governed,
        update_capable: &p.update_capable,
    };
    if let Err(code) = overrides::check(&request) {
        return PlanOutcome::Reject(code);
    }
    let requested = requested_value.as_wstr().cloned().unwrap_or_default();

    // P2, P4, §6 over the whole history, whatever the transport (F9). The keep policy never
    // rejects.
    let Ok(built) = build(&p.history, &target, ConflictPolicy::Keep) else {
        return PlanOutcome::Reject("dedupe_id_ciphertext_conflict");
    };
    // F6; F12: the records of another target are not read.
    let n = p.history.messages.len();
    let (valid, malformed) =
        if governed { records_for(&p.history, &requested, uc) } else { (vec![None; n], vec![false; n]) };

    // K2; F12: another target's key is the instance key, whatever the metadata holds.
    let instance_key = p.instance_key.as_wstr().cloned().unwrap_or_default();
    let key = match member(md, "prompt_cache_key") {
        _ if !governed => instance_key,
        Some(Value::String(k)) => k.clone(),
        _ => valid.iter().rev().flatten().next().map_or(instance_key, |r| r.key.clone()),
    };

    // F1: the baseline: the first valid record's effort, else the desired effort.
    let desired_text = desired.and_then(Value::as_wstr).cloned().unwrap_or_default();
    let baseline = valid.iter().flatten().find_map(|r| r.effort.clone()).unwrap_or_else(|| desired_text.clone());
    // F2–F7 for an update-capable model; F10 and F12: no update for any other.
    let (message_updates, end_state) = if uc {
        updates(p.history.messages, &valid, &baseline, &desired_text)
    } else {
        (vec![None; n], Effective::Known(baseline.clone()))
    };
    let per_message: Vec<Vec<Value>> =
        built.messages.iter().zip(&message_updates).map(|(its, u)| with_update(its, u.as_ref())).collect();

    // F8's last row, decided on the full input.
    if uc && p.endpoint == Endpoint::Compact && message_updates.iter().any(Option::is_some) {
        return PlanOutcome::Reject("plan_compact_with_updates");
    }
    // F9: a WebSocket continuation sends the messages after the last assistant message; the
    // compact endpoint ignores the transport and always gets the full replay (F8).
    let (first_sent, previous_response_id) = match (p.endpoint, p.transport) {
        (Endpoint::Responses, Transport::WebSocketContinuation) => match continuation(p.history.messages) {
            Some((first, rid)) => (first, Some(rid)),
            None => (0, None),
        },
        _ => (0, None),
    };
    let input: Vec<Value> = per_message[first_sent..].iter().flatten().cloned().collect();

    // F11: the request fields.
    let effort = if uc { Some(Value::String(baseline)) } else { desired.cloned() };
    let reasoning = request_reasoning(effort, metadata_reasoning);
    let mut fields: Vec<(WStr, Value)> = vec![(WStr::from("model"), Value::String(requested.clone()))];
    fields.extend(store_and_include(p.endpoint, p.reasoning_model).into_iter().map(|(k, v)| (WStr::from(k), v)));
    if !reasoning.is_empty() {
        // F11's SHOULD: a `reasoning` with no member is omitted.
        fields.push((WStr::from("reasoning"), Value::Object(reasoning)));
    }
    fields.push((WStr::from("prompt_cache_key"), Value::String(key.clone())));
    fields.push((WStr::from("input"), Value::Array(input)));
    if let Some(rid) = previous_response_id {
        fields.push((WStr::from("previous_response_id"), Value::String(rid)));
    }

    // F11: the record (F10: effort null for other models; F12: none for another target).
    let record = if governed {
        let effort = if uc { Value::String(end_state.value().clone()) } else { Value::Null };
        Value::obj(vec![("model", Value::String(requested)), ("key", Value::String(key)), ("effort", effort)])
    } else {
        Value::Null
    };
    PlanOutcome::Plan(Value::obj(vec![
        ("request", Value::Object(fields)),
        ("record", record),
        ("diagnostics", Value::Array(merged_diagnostics(&built.diagnostics, &malformed))),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache_state::DEFAULT_UPDATE_CAPABLE;
    use crate::history::{HistoryForm, CACHE_CHANNEL};
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
                history: History { form: HistoryForm::Channels, provider: None, messages: &self.messages },
                model: &model,
                desired_effort: Some(&self.desired),
                instance_key: &key,
                metadata: self.metadata.as_ref(),
                transport: self.transport,
                endpoint: self.endpoint,
                target_provider: WStr::from(self.target),
                names: ProviderNames::registry_only(),
                reasoning_model: true,
                update_capable: vec![WStr::from(DEFAULT_UPDATE_CAPABLE)],
            })
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
        out.get("request")
            .unwrap()
            .get("input")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|it| match it.get("type").and_then(Value::as_str) {
                Some("configuration_update") => {
                    format!("update({})", it.get("reasoning").unwrap().get("effort").unwrap().as_str().unwrap())
                }
                Some("message") => it.get("role").unwrap().as_str().unwrap()[..1].to_string(),
                Some("function_call_output") => "t".into(),
                Some(other) => other.into(),
                None => "?".into(),
            })
            .collect()
    }

    fn effort_of(out: &Value) -> Option<&str> {
        out.get("request").unwrap().get("reasoning").and_then(|r| r.get("effort")).and_then(Value::as_str)
    }

    #[test]
    fn section_9_4_first_example() {
        let c = Case::new(
            vec![
                user("u1"),
                assistant(Some("low"), "gpt-6-astra"),
                user("u2"),
                assistant(Some("high"), "gpt-6-astra"),
                user("u3"),
            ],
            "low",
        );
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
        assert_eq!(
            shape(&sse.output("gpt-6-astra")),
            ["u", "a", "update(high)", "u", "a", "t", "a", "update(low)", "u"]
        );
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
            (
                vec![
                    user("u1"),
                    a("low", "r1"),
                    user("u2"),
                    a("high", "r2"),
                    tool_result(),
                    a("high", "r3"),
                    user("u3"),
                ],
                "low",
            ),
        ];
        let mut sse = Vec::new();
        let mut ws = Vec::new();
        for (h, desired) in histories {
            let mut c = Case::new(h, desired);
            sse.push(updates(&c.output("gpt-6-astra")));
            c.transport = Transport::WebSocketContinuation;
            ws.push(updates(&c.output("gpt-6-astra")));
        }
        let v =
            |x: &[&[&str]]| x.iter().map(|u| u.iter().map(|s| s.to_string()).collect::<Vec<_>>()).collect::<Vec<_>>();
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
        let key_of = |c: &Case| {
            c.output("gpt-6-astra")
                .get("request")
                .unwrap()
                .get("prompt_cache_key")
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        };
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
        let diags: Vec<(String, u64)> = out
            .get("diagnostics")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d.get("code").unwrap().as_str().unwrap().to_string(),
                    d.get("message_index").unwrap().as_f64().unwrap() as u64,
                )
            })
            .collect();
        assert_eq!(diags, [("cache_state_invalid".to_string(), 1), ("cache_state_invalid".to_string(), 3)]);
        assert_eq!(effort_of(&out), Some("low"));
    }

    #[test]
    fn f10_f12_other_models_and_targets() {
        let mut c = Case::new(vec![user("u1"), assistant(Some("high"), "gpt-6-astra"), user("u2")], "low");
        c.metadata = Some(j(r#"{"reasoning":{"summary":"auto","effort":"medium"}}"#));
        let out = c.output("gpt-4o");
        assert_eq!(effort_of(&out), Some("medium"));
        assert_eq!(
            out.get("request").unwrap().get("reasoning").unwrap().get("summary").unwrap().as_str(),
            Some("auto")
        );
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
    fn p5_store_and_include_per_endpoint_and_model() {
        let request = |c: &Case, model: &str| c.output(model).get("request").unwrap().clone();
        let mut c = Case::new(vec![user("u1")], "low");
        let r = request(&c, "gpt-6-astra");
        assert_eq!(r.get("store"), Some(&Value::Bool(false)));
        assert_eq!(r.get("include"), Some(&Value::Array(vec![Value::str("reasoning.encrypted_content")])));
        c.endpoint = Endpoint::Compact;
        let r = request(&c, "gpt-4o");
        assert!(r.get("store").is_none() && r.get("include").is_none());
        assert_eq!(store_and_include(Endpoint::Responses, false), [("store", Value::Bool(false))]);
    }

    #[test]
    fn f12_route_names_are_governed_by_their_issuer() {
        let mut c = Case::new(vec![user("u1"), assistant(Some("high"), "gpt-6-astra"), user("u2")], "low");
        c.target = "responses";
        assert_eq!(shape(&c.output("gpt-6-astra")), ["u", "a", "update(low)", "u"]);
        c.target = "codexresponses";
        assert_eq!(effort_of(&c.output("gpt-6-astra")), Some("high"));
        c.target = "xai";
        assert!(updates(&c.output("gpt-6-astra")).is_empty());
    }

    #[test]
    fn cl3_items_form_records_are_read_as_channel_records() {
        let msgs = vec![
            user("u1"),
            j(
                r#"{"role":"assistant","items":[{"type":"message","role":"assistant","content":"a"}],"model":"gpt-6-astra","effort":"high","prompt_cache_key":"k9"}"#,
            ),
            user("u2"),
        ];
        let model = Value::str("gpt-6-astra");
        let key = Value::str(KEY);
        let desired = Value::str("low");
        let out = plan(&PlanInput {
            history: History { form: HistoryForm::Items, provider: None, messages: &msgs },
            model: &model,
            desired_effort: Some(&desired),
            instance_key: &key,
            metadata: None,
            transport: Transport::Sse,
            endpoint: Endpoint::Responses,
            target_provider: WStr::from("openai"),
            names: ProviderNames::registry_only(),
            reasoning_model: true,
            update_capable: vec![WStr::from(DEFAULT_UPDATE_CAPABLE)],
        });
        let PlanOutcome::Plan(out) = out else { panic!("{out:?}") };
        assert_eq!(effort_of(&out), Some("high"));
        assert_eq!(shape(&out), ["u", "a", "update(low)", "u"]);
        assert_eq!(out.get("request").unwrap().get("prompt_cache_key").unwrap().as_str(), Some("k9"));
    }

    #[test]
    fn f2_stored_updates_are_not_sent() {
        let stored = j(
            r#"{"role":"user","items":[{"type":"configuration_update","reasoning":{"effort":"max"}},{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}]}"#,
        );
        let c = Case::new(vec![stored], "low");
        assert_eq!(shape(&c.output("gpt-6-astra")), ["u"]);
    }

    #[test]
    fn genuine_user_turns() {
        assert!(is_genuine_user_turn(&user("x")));
        assert!(!is_genuine_user_turn(&user("")));
        assert!(!is_genuine_user_turn(&tool_result()));
        let staged = j(&format!(
            r#"{{"role":"user","items":[{{"type":"message","role":"user","content":"x"}}],"channels":{{"{TOOL_MEDIA_CHANNEL}":[{{}}]}}}}"#
        ));
        assert!(!is_genuine_user_turn(&staged));
        let empty_media = j(&format!(
            r#"{{"role":"user","items":[{{"type":"message","role":"user","content":"x"}}],"channels":{{"{TOOL_MEDIA_CHANNEL}":[]}}}}"#
        ));
        assert!(is_genuine_user_turn(&empty_media));
    }
}

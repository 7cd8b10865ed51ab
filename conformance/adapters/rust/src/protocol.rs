//! The conformance adapter protocol, version 1 (PROTOCOL.md): JSON lines over stdin/stdout,
//! one reply line per `run` request, flushed; `start` handshake; `stop` or end of file exits.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::cache_state::DEFAULT_UPDATE_CAPABLE;
use crate::capture::capture;
use crate::dedupe::{dedupe_entries, ConflictPolicy};
use crate::defaults::default_request;
use crate::envelope::{read_block, Verdict};
use crate::export::{export, ExportMode};
use crate::history::History;
use crate::json::{parse_value, ParseOptions, Value, WStr, MAX_DEPTH};
use crate::planner::{plan, Endpoint, PlanInput, PlanOutcome, Transport};
use crate::providers::{ProviderNames, DEFAULT_PROVIDER};
use crate::redaction::redact;
use crate::replay::{build, ConflictRejected, Target};
use crate::scan::scan;
use crate::telemetry::count;
use crate::validate::{validate, HistoryText, ValidateOptions};

/// The operations announced in the handshake (SPEC §13's conformance classes).
pub const OPERATIONS: [&str; 11] =
    ["read", "capture", "replay", "dedupe", "redact", "telemetry", "plan", "defaults", "validate", "export", "scan"];

/// CL4: the history forms `replay` and `plan` read (PROTOCOL `history_formats`).
pub const HISTORY_FORMATS: [&str; 2] = ["channels", "items"];

/// CL4: what this implementation records about a reasoning item's issuer: the provider of its
/// message (P4), in either history form.
pub const PROVENANCE: &str = "message";

/// PROTOCOL "What the runner checks": a reply line may be at most 16 MiB.
const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// The protocol's request lines: RFC 8259, lone-surrogate escapes kept (PROTOCOL "Lone
/// surrogates"), duplicate members kept (lookups take the last).
const REQUEST_PARSE: ParseOptions =
    ParseOptions { lenient_tokens: false, max_depth: MAX_DEPTH, detect_duplicates: false };

/// What an operation answers.
pub enum Reply {
    Output(Value),
    Reject(&'static str),
}

/// A failure that is not a verdict: an `error` reply.
pub type OpResult = Result<Reply, String>;

/// A `text`-like input member: characters, or the bytes of its `X_base64` form.
pub enum TextArg {
    Chars(WStr),
    Bytes(Vec<u8>),
}

impl TextArg {
    /// The bytes an implementation reads: WTF-8 for characters, raw otherwise.
    pub fn bytes(&self) -> &[u8] {
        match self {
            TextArg::Chars(s) => s.as_bytes(),
            TextArg::Bytes(b) => b,
        }
    }

    /// As characters: bytes that are not UTF-8 decode with U+FFFD.
    pub fn to_wstr(&self) -> WStr {
        match self {
            TextArg::Chars(s) => s.clone(),
            TextArg::Bytes(b) => WStr::from(String::from_utf8_lossy(b).into_owned()),
        }
    }
}

/// The `input` object of a run request, with its `X_base64` members decoded (PROTOCOL "Byte
/// members").
pub struct Input {
    value: Value,
    bytes: HashMap<Vec<u8>, Vec<u8>>,
}

impl Input {
    pub fn new(value: Value) -> Result<Input, String> {
        let mut bytes = HashMap::new();
        if let Value::Object(m) = &value {
            for (k, v) in m {
                if let Some(base) = k.as_bytes().strip_suffix(b"_base64") {
                    let Value::String(s) = v else { return Err(format!("{k:?} is not a string")) };
                    let decoded = crate::base64::decode(s.as_bytes()).ok_or_else(|| format!("{k:?} is not base64"))?;
                    bytes.insert(base.to_vec(), decoded);
                }
            }
        } else {
            return Err("input is not an object".into());
        }
        Ok(Input { value, bytes })
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.value.get(name)
    }

    fn required(&self, name: &str) -> Result<&Value, String> {
        self.get(name).ok_or_else(|| format!("input.{name} is missing"))
    }

    /// A string member or its `_base64` form.
    pub fn text(&self, name: &str) -> Result<TextArg, String> {
        if let Some(b) = self.bytes.get(name.as_bytes()) {
            return Ok(TextArg::Bytes(b.clone()));
        }
        match self.get(name) {
            Some(Value::String(s)) => Ok(TextArg::Chars(s.clone())),
            Some(_) => Err(format!("input.{name} is not a string")),
            None => Err(format!("input.{name} is missing")),
        }
    }

    fn opt_text(&self, name: &str) -> Result<Option<TextArg>, String> {
        if self.bytes.contains_key(name.as_bytes()) || self.get(name).is_some_and(|v| !v.is_null()) {
            self.text(name).map(Some)
        } else {
            Ok(None)
        }
    }
}

fn conflict_policy(options: Option<&Value>) -> Result<ConflictPolicy, String> {
    match options.and_then(|o| o.get_non_null("conflict_policy")) {
        None => Ok(ConflictPolicy::Keep),
        Some(v) if v.is_str("keep") => Ok(ConflictPolicy::Keep),
        Some(v) if v.is_str("reject") => Ok(ConflictPolicy::Reject),
        Some(_) => Err("options.conflict_policy is not keep or reject".into()),
    }
}

/// `read`: E1–E6, P1.
fn op_read(input: &Input) -> OpResult {
    Ok(match read_block(input.text("text")?.bytes()) {
        Verdict::Resumable(item) => Reply::Output(Value::obj(vec![("item", item)])),
        Verdict::Code(c) => Reply::Reject(c),
    })
}

/// `capture`: C1–C4.
fn op_capture(input: &Input) -> OpResult {
    let item = input.required("output_item")?;
    let source = input.text("source")?.to_wstr();
    Ok(match capture(item, &source) {
        Ok(text) => Reply::Output(Value::obj(vec![("envelope_text", Value::str(&text))])),
        Err(c) => Reply::Reject(c),
    })
}

/// P4: the caller's provider-name mapping (`provider_names`, as for `replay`, `plan` and
/// `validate`), extending the registry of §18.2.
fn provider_names(input: &Input) -> Result<ProviderNames, String> {
    ProviderNames::with_mapping(input.get("provider_names"))
}

/// `replay`: P1–P4, D1–D7, T1, CL3.
fn op_replay(input: &Input) -> OpResult {
    let history = History::from_value(input.required("history")?)?;
    let provider = match input.required("target")?.get("provider") {
        Some(Value::String(p)) => p.clone(),
        _ => return Err("target.provider is not a string".into()),
    };
    let policy = conflict_policy(input.get("options"))?;
    let names = provider_names(input)?;
    match build(&history, &Target::new(&names, &provider), policy) {
        Ok(b) => {
            let input_items = b.input();
            let counters = count(&input_items, b.exact_count, b.conflict_count);
            Ok(Reply::Output(Value::obj(vec![
                ("input", Value::Array(input_items)),
                ("diagnostics", Value::Array(b.diagnostics.iter().map(|d| d.to_value()).collect())),
                ("counters", counters.to_value()),
            ])))
        }
        Err(ConflictRejected) => Ok(Reply::Reject("dedupe_id_ciphertext_conflict")),
    }
}

/// `dedupe`: D1–D6.
fn op_dedupe(input: &Input) -> OpResult {
    let Some(Value::Array(entries)) = input.get("entries") else { return Err("input.entries is not an array".into()) };
    let mut list = Vec::with_capacity(entries.len());
    for e in entries {
        let provider = match e.get("provider") {
            Some(Value::String(p)) => p.clone(),
            _ => return Err("entry.provider is not a string".into()),
        };
        let item = e.get("item").ok_or("entry.item is missing")?.clone();
        list.push((provider, item));
    }
    let policy = conflict_policy(input.get("options"))?;
    Ok(match dedupe_entries(&list, policy) {
        Ok((decisions, exact, conflicts)) => Reply::Output(Value::obj(vec![
            ("decisions", Value::Array(decisions.into_iter().map(|d| Value::str(d.name())).collect())),
            (
                "counters",
                Value::obj(vec![
                    ("replay_deduplicated_exact_count", Value::int(exact)),
                    ("replay_id_ciphertext_conflict_count", Value::int(conflicts)),
                ]),
            ),
        ])),
        Err(c) => Reply::Reject(c),
    })
}

/// `redact`: R1–R2.
fn op_redact(input: &Input) -> OpResult {
    let payload = input.required("payload")?;
    Ok(Reply::Output(Value::obj(vec![("payload", redact(payload))])))
}

/// `telemetry`: T1–T2.
fn op_telemetry(input: &Input) -> OpResult {
    let items = match input.required("request")?.get("input") {
        Some(Value::Array(a)) => a.as_slice(),
        None | Some(Value::Null) => &[],
        Some(_) => return Err("request.input is not an array".into()),
    };
    let dedupe = input.get("dedupe");
    let counter = |name: &str| -> Result<u64, String> {
        match dedupe.and_then(|d| d.get_non_null(name)) {
            None => Ok(0),
            Some(v) if v.is_count() => Ok(v.as_f64().unwrap_or(0.0) as u64),
            Some(_) => Err(format!("dedupe.{name} is not a count")),
        }
    };
    let c = count(items, counter("replay_deduplicated_exact_count")?, counter("replay_id_ciphertext_conflict_count")?);
    Ok(Reply::Output(Value::obj(vec![("counters", c.to_value())])))
}

/// `plan`: F1–F12, K1–K4, P5, CL3.
fn op_plan(input: &Input) -> OpResult {
    let history = History::from_value(input.required("history")?)?;
    let null = Value::Null;
    let transport = match input.get("transport") {
        None | Some(Value::Null) => Transport::Sse,
        Some(v) if v.is_str("sse") => Transport::Sse,
        Some(v) if v.is_str("websocket") => Transport::WebSocket,
        Some(v) if v.is_str("websocket_continuation") => Transport::WebSocketContinuation,
        Some(_) => return Err("input.transport is unknown".into()),
    };
    let endpoint = match input.get("endpoint") {
        None | Some(Value::Null) => Endpoint::Responses,
        Some(v) if v.is_str("responses") => Endpoint::Responses,
        Some(v) if v.is_str("compact") => Endpoint::Compact,
        Some(_) => return Err("input.endpoint is unknown".into()),
    };
    let target_provider = match input.get("target_provider") {
        None | Some(Value::Null) => WStr::from(DEFAULT_PROVIDER),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err("input.target_provider is not a string".into()),
    };
    let update_capable = match input.get("update_capable_models") {
        None | Some(Value::Null) => vec![WStr::from(DEFAULT_UPDATE_CAPABLE)],
        Some(Value::Array(a)) => a.iter().filter_map(|m| m.as_wstr().cloned()).collect(),
        Some(_) => return Err("input.update_capable_models is not an array".into()),
    };
    let metadata = match input.get("metadata") {
        None | Some(Value::Null) => None,
        Some(m @ Value::Object(_)) => Some(m),
        Some(_) => return Err("input.metadata is not an object".into()),
    };
    // P5: without the caller's declaration, the model returns reasoning.
    let reasoning_model = match input.get("reasoning_model") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("input.reasoning_model is not a boolean".into()),
    };
    let p = PlanInput {
        history,
        model: input.get("model").unwrap_or(&null),
        desired_effort: input.get("desired_effort").filter(|v| !v.is_null()),
        instance_key: input.get("instance_key").unwrap_or(&null),
        metadata,
        transport,
        endpoint,
        target_provider,
        names: provider_names(input)?,
        reasoning_model,
        update_capable,
    };
    Ok(match plan(&p) {
        PlanOutcome::Plan(v) => Reply::Output(v),
        PlanOutcome::Reject(c) => Reply::Reject(c),
    })
}

/// `defaults`: P5, probed: the request fields sent with no configuration at all.
fn op_defaults(input: &Input) -> OpResult {
    let model = input.text("model")?.to_wstr();
    // The request is the same for every target provider (P5, K1); the member is still required.
    input.text("target_provider")?;
    Ok(Reply::Output(Value::obj(vec![("request", default_request(&model))])))
}

/// H4: an octal mode string such as `"0644"`.
fn mode(v: Option<&Value>) -> Result<Option<u32>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let t = s.as_str().unwrap_or("");
            u32::from_str_radix(t.trim_start_matches("0o"), 8).map(Some).map_err(|_| format!("mode {t:?} is not octal"))
        }
        Some(_) => Err("a mode is not a string".into()),
    }
}

/// `validate`: H1–H4, ST3.
fn op_validate(input: &Input) -> OpResult {
    let text = input.text("history_text")?;
    let provider = match input.opt_text("provider")? {
        Some(p) => p.to_wstr(),
        None => WStr::from(DEFAULT_PROVIDER),
    };
    let modes = input.get("modes");
    let file_name = input.opt_text("file_name")?.map(|t| t.to_wstr());
    let opts = ValidateOptions {
        provider,
        names: provider_names(input)?,
        file_mode: mode(modes.and_then(|m| m.get("file")))?,
        directory_mode: mode(modes.and_then(|m| m.get("directory")))?,
        file_name: file_name.as_ref(),
    };
    let history = match &text {
        TextArg::Chars(s) => HistoryText::Chars(s),
        TextArg::Bytes(b) => HistoryText::Bytes(b),
    };
    Ok(Reply::Output(validate(history, &opts).to_value()))
}

/// `export`: H2, H6.
fn op_export(input: &Input) -> OpResult {
    let history = input.required("history")?;
    let mode = match input.get("mode") {
        Some(m) if m.is_str("resumable") => ExportMode::Resumable,
        Some(m) if m.is_str("redacted") => ExportMode::Redacted,
        _ => return Err("input.mode is not resumable or redacted".into()),
    };
    let drop_display = match input.get("drop_display_reasoning") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("input.drop_display_reasoning is not a boolean".into()),
    };
    Ok(match export(history, mode, drop_display) {
        Ok(h) => Reply::Output(Value::obj(vec![("history", h)])),
        Err(c) => Reply::Reject(c),
    })
}

/// `scan`: H8.
fn op_scan(input: &Input) -> OpResult {
    let text = input.text("text")?;
    let findings = scan(text.bytes())
        .into_iter()
        .map(|f| {
            Value::obj(vec![
                ("line", Value::int(f.line as u64)),
                ("code", Value::str(f.code.name())),
                ("sha256_prefix", Value::str(&f.sha256_prefix)),
            ])
        })
        .collect();
    Ok(Reply::Output(Value::obj(vec![("findings", Value::Array(findings))])))
}

/// Runs one operation.
pub fn run_operation(operation: &str, input: Value) -> OpResult {
    let input = Input::new(input)?;
    match operation {
        "read" => op_read(&input),
        "capture" => op_capture(&input),
        "replay" => op_replay(&input),
        "dedupe" => op_dedupe(&input),
        "redact" => op_redact(&input),
        "telemetry" => op_telemetry(&input),
        "plan" => op_plan(&input),
        "defaults" => op_defaults(&input),
        "validate" => op_validate(&input),
        "export" => op_export(&input),
        "scan" => op_scan(&input),
        other => Err(format!("unknown operation {other:?}")),
    }
}

/// The handshake reply.
pub fn handshake() -> Value {
    Value::obj(vec![
        ("protocol", Value::int(1)),
        (
            "implementation",
            Value::obj(vec![
                ("name", Value::str("reasoning-replay-rs")),
                ("version", Value::str(env!("CARGO_PKG_VERSION"))),
                ("language", Value::str("rust")),
                ("homepage", Value::str("conformance/adapters/rust")),
                ("operations", Value::Array(OPERATIONS.iter().map(|o| Value::str(o)).collect())),
                ("history_formats", Value::Array(HISTORY_FORMATS.iter().map(|f| Value::str(f)).collect())),
                ("provenance", Value::str(PROVENANCE)),
            ]),
        ),
    ])
}

fn error_reply(seq: &Value, message: &str) -> Value {
    Value::obj(vec![("seq", seq.clone()), ("error", Value::obj(vec![("message", Value::str(message))]))])
}

/// The `seq` of a line that could not be parsed (too deep for this parser, say), found by
/// its text `"seq":<digits>`, so that the error reply still carries it.
fn seq_lexeme(line: &[u8]) -> Option<String> {
    let key = b"\"seq\"";
    let at = line.windows(key.len()).position(|w| w == key)? + key.len();
    let rest = &line[at..];
    let rest = &rest[rest.iter().position(|b| !crate::json::is_ws(*b))?..];
    let rest = rest.strip_prefix(b":")?;
    let rest = &rest[rest.iter().position(|b| !crate::json::is_ws(*b))?..];
    let digits: Vec<u8> = rest.iter().copied().take_while(u8::is_ascii_digit).collect();
    (!digits.is_empty()).then(|| String::from_utf8_lossy(&digits).into_owned())
}

/// Answers one request line; `None` for `stop` (exit without replying).
pub fn handle_line(line: &[u8]) -> Option<Vec<u8>> {
    let zero = Value::int(0);
    let request = match parse_value(line, REQUEST_PARSE) {
        Ok((v, _)) => v,
        Err(e) => {
            let seq = seq_lexeme(line).map(Value::Number).unwrap_or(zero);
            return Some(error_reply(&seq, &format!("request line is not JSON: {e:?}")).to_compact());
        }
    };
    let reply = match request.get("cmd") {
        Some(c) if c.is_str("start") => handshake(),
        Some(c) if c.is_str("stop") => return None,
        Some(c) if c.is_str("run") => {
            // PROTOCOL: copy `seq` unchanged (its lexeme is kept as received).
            let seq = request.get("seq").cloned().unwrap_or(zero);
            let operation = request.get("operation").and_then(Value::as_str).unwrap_or("").to_string();
            let input = request.get("input").cloned().unwrap_or(Value::Null);
            let result = catch_unwind(AssertUnwindSafe(|| run_operation(&operation, input)));
            let body = match result {
                Ok(Ok(Reply::Output(v))) => ("output", v),
                Ok(Ok(Reply::Reject(code))) => ("reject", Value::obj(vec![("code", Value::str(code))])),
                Ok(Err(message)) => ("error", Value::obj(vec![("message", Value::str(&message))])),
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "panic".into());
                    ("error", Value::obj(vec![("message", Value::str(&format!("internal failure: {message}")))]))
                }
            };
            let reply = Value::obj(vec![("seq", seq.clone()), body]);
            let bytes = reply.to_compact();
            if bytes.len() + 1 > MAX_REPLY_BYTES {
                return Some(error_reply(&seq, "reply would exceed 16 MiB").to_compact());
            }
            return Some(bytes);
        }
        _ => error_reply(request.get("seq").unwrap_or(&zero), "unknown cmd"),
    };
    Some(reply.to_compact())
}

/// Serves requests in order, one reply line each, flushed, until `stop` or end of file.
pub fn serve(input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
    let mut input = input;
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        while matches!(line.last(), Some(b'\n') | Some(b'\r')) {
            line.pop();
        }
        if line.iter().all(|b| crate::json::is_ws(*b)) {
            continue;
        }
        match handle_line(&line) {
            None => return Ok(()),
            Some(mut reply) => {
                reply.push(b'\n');
                output.write_all(&reply)?;
                output.flush()?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(line: &str) -> String {
        String::from_utf8(handle_line(line.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn unparsable_lines_keep_their_seq() {
        assert_eq!(seq_lexeme(br#"{"cmd":"run", "seq" : 42,"input":{"payload":[[[["#), Some("42".into()));
        assert!(ask(r#"{"cmd":"run","seq":8,"input":[}"#).starts_with(r#"{"seq":8,"error""#));
    }

    #[test]
    fn handshake_and_stop() {
        let r = ask(r#"{"cmd":"start","protocol":1}"#);
        assert!(r.starts_with(r#"{"protocol":1,"implementation":{"name":"reasoning-replay-rs","#));
        assert!(r.contains(r#""defaults","validate""#), "{r}");
        assert!(r.ends_with(r#""history_formats":["channels","items"],"provenance":"message"}}"#), "{r}");
        assert!(handle_line(br#"{"cmd":"stop"}"#).is_none());
    }

    #[test]
    fn examples_of_the_protocol() {
        assert_eq!(
            ask(
                r#"{"cmd":"run","seq":1,"id":"read/grammar/bare-word","operation":"read","input":{"text":"reasoning"}}"#
            ),
            r#"{"seq":1,"reject":{"code":"json_malformed"}}"#
        );
        assert_eq!(
            ask(
                r#"{"cmd":"run","seq":2,"id":"read/bom/bytes-bom-only","operation":"read","input":{"text_base64":"77u/"}}"#
            ),
            r#"{"seq":2,"reject":{"code":"json_malformed"}}"#
        );
        assert_eq!(
            ask(
                r#"{"cmd":"run","seq":17,"id":"read/version/boolean-true","operation":"read","input":{"text":"{\"schema\":\"fast-agent.openai-responses.reasoning-replay\",\"version\":true,\"item\":{}}"}}"#
            ),
            r#"{"seq":17,"reject":{"code":"envelope_version_invalid"}}"#
        );
    }

    #[test]
    fn lone_surrogates_reach_the_implementation() {
        assert_eq!(
            ask(r#"{"cmd":"run","seq":3,"id":"x","operation":"read","input":{"text":"{}\ud800"}}"#),
            r#"{"seq":3,"reject":{"code":"json_invalid_unicode"}}"#
        );
        assert_eq!(
            ask(r#"{"cmd":"run","seq":4,"id":"x","operation":"redact","input":{"payload":["x\ud800"]}}"#),
            r#"{"seq":4,"output":{"payload":["x\ud800"]}}"#
        );
    }

    #[test]
    fn defaults_sends_store_false_and_asks_for_the_ciphertext() {
        let r = ask(
            r#"{"cmd":"run","seq":7,"id":"x","operation":"defaults","input":{"model":"gpt-6-astra","target_provider":"openai"}}"#,
        );
        assert!(r.starts_with(r#"{"seq":7,"output":{"request":{"model":"gpt-6-astra","store":false,"include":["reasoning.encrypted_content"],"prompt_cache_key":""#), "{r}");
    }

    #[test]
    fn broken_input_is_an_error_reply() {
        let r = ask(r#"{"cmd":"run","seq":5,"id":"x","operation":"read","input":{}}"#);
        assert!(r.starts_with(r#"{"seq":5,"error":{"message":"#));
        let r = ask(
            r#"{"cmd":"run","seq":6,"id":"x","operation":"replay","input":{"history":{"messages":[],"provider":5},"target":{"provider":"openai","transport":"sse"}}}"#,
        );
        assert!(r.starts_with(r#"{"seq":6,"error""#));
    }

    #[test]
    fn serve_answers_each_line_in_order() {
        let input = b"{\"cmd\":\"start\",\"protocol\":1}\r\n\n{\"cmd\":\"run\",\"seq\":9,\"id\":\"t\",\"operation\":\"telemetry\",\"input\":{\"request\":{\"input\":[]}}}\n{\"cmd\":\"stop\"}\n{\"cmd\":\"start\",\"protocol\":1}\n";
        let mut out = Vec::new();
        serve(&input[..], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[1].starts_with(r#"{"seq":9,"output":{"counters":{"reasoning_replay_item_count":0,"#));
    }
}

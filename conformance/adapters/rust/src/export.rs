//! Exports of history files (SPEC H2, H6): resumable exports, redacted exports, and the text
//! redaction of H6 step 2.

use std::collections::HashMap;
use std::ops::Range;

use crate::envelope::{parse_ijson, read_block, Verdict, REDACTED_SCHEMA};
use crate::history::{channel, text_of_block, DISPLAY_CHANNEL, REPLAY_CHANNEL};
use crate::history_file::has_history_shape;
use crate::json::{escape_body, quote, Node, NodeKind, Value, WStr};
use crate::redaction::{
    diagnostic_view, is_pair_value, is_reasoning_object, is_replacement, is_sensitive, is_view, pair_name, replacement,
    Redactor, StringMap,
};
use crate::textforms::{decodings, read_gap, RunKind, MAX_DECODINGS};
use crate::textscan::{gaps, read_text, Fragment, Piece, Reading};

/// H6: the top-level member holding the export marker.
pub const MARKER: &str = "reasoning_replay_export";
pub const RESUMABLE_WARNING: &str =
    "This file contains resumable encrypted provider reasoning state (bearer-capable). Keep it private.";
pub const REDACTED_NOTE: &str = "Reasoning replay state was removed; this history is not resumable.";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportMode {
    Resumable,
    Redacted,
}

/// H6: exports a history (H1 shape, else `history_malformed`).
pub fn export(history: &Value, mode: ExportMode, drop_display: bool) -> Result<Value, &'static str> {
    if !has_history_shape(history) {
        return Err("history_malformed");
    }
    let members = history.as_object().map(|m| m.as_slice()).unwrap_or(&[]);
    // H6 step 5: the marker is the last member, replacing any earlier one.
    let mut out: Vec<(WStr, Value)> = match mode {
        ExportMode::Resumable => members.iter().filter(|(k, _)| !k.eq_str(MARKER)).cloned().collect(),
        ExportMode::Redacted => redact_top(members, drop_display, &mut TextRedactor::default()),
    };
    let marker = match mode {
        ExportMode::Resumable => Value::obj(vec![
            ("mode", Value::str("resumable")),
            ("warning", Value::str(RESUMABLE_WARNING)),
            ("display_reasoning", Value::str(if duplicates_display(history) { "duplicated" } else { "none" })),
        ]),
        ExportMode::Redacted => Value::obj(vec![("mode", Value::str("redacted")), ("note", Value::str(REDACTED_NOTE))]),
    };
    out.push((WStr::from(MARKER), marker));
    Ok(Value::Object(out))
}

/// H6 resumable: `display_reasoning` is `"duplicated"` when one assistant message has both a
/// display channel holding a block and a replay channel holding a resumable block.
fn duplicates_display(history: &Value) -> bool {
    let messages = history.get("messages").and_then(Value::as_array).map(|m| m.as_slice()).unwrap_or(&[]);
    messages.iter().any(|m| {
        matches!(m.get("role"), Some(r) if r.is_str("assistant"))
            && channel(m, DISPLAY_CHANNEL).is_some_and(|d| !d.is_empty())
            && channel(m, REPLAY_CHANNEL).is_some_and(|blocks| {
                blocks
                    .iter()
                    .filter_map(text_of_block)
                    .any(|t| matches!(read_block(t.as_bytes()), Verdict::Resumable(_)))
            })
    })
}

/// H6 step 1: the top-level object member by member (R2 rule 2, never taken for a reasoning
/// item); `messages` message by message.
fn redact_top(members: &[(WStr, Value)], drop_display: bool, texts: &mut TextRedactor) -> Vec<(WStr, Value)> {
    let pair = Redactor { strings: texts, nesting_rule: true }.pair_of(members);
    members
        .iter()
        .filter(|(k, _)| !k.eq_str(MARKER))
        .map(|(k, v)| match v {
            Value::Array(msgs) if k.eq_str("messages") => {
                let out = msgs.iter().map(|m| redact_message(m, drop_display, texts)).collect();
                (texts.map(k), Value::Array(out))
            }
            _ => Redactor { strings: texts, nesting_rule: true }.member(k, v, 0, pair.as_ref()),
        })
        .collect()
}

/// H6 step 1: a message (inside the top-level object and `messages`: depth 2) member by member,
/// its `channels` object member by member.
fn redact_message(m: &Value, drop_display: bool, texts: &mut TextRedactor) -> Value {
    let Value::Object(members) = m else { return Redactor { strings: texts, nesting_rule: true }.value(m, 2) };
    let pair = Redactor { strings: texts, nesting_rule: true }.pair_of(members);
    let mut out = Vec::with_capacity(members.len());
    for (k, v) in members {
        match v {
            Value::Object(channels) if k.eq_str("channels") => {
                out.push((texts.map(k), Value::Object(redact_channels(channels, drop_display, texts))));
            }
            _ => out.push(Redactor { strings: texts, nesting_rule: true }.member(k, v, 2, pair.as_ref())),
        }
    }
    Value::Object(out)
}

/// H6 step 1: a message's `channels` object (inside three containers) member by member; the
/// replay channel's blocks as step 3 says; the display channel dropped when asked.
fn redact_channels(channels: &[(WStr, Value)], drop_display: bool, texts: &mut TextRedactor) -> Vec<(WStr, Value)> {
    let pair = Redactor { strings: texts, nesting_rule: true }.pair_of(channels);
    let mut out = Vec::with_capacity(channels.len());
    for (name, blocks) in channels {
        if drop_display && name.eq_str(DISPLAY_CHANNEL) {
            continue;
        }
        match blocks {
            Value::Array(bs) if name.eq_str(REPLAY_CHANNEL) => {
                let redacted = bs.iter().map(|b| redact_replay_block(b, texts)).collect();
                out.push((texts.map(name), Value::Array(redacted)));
            }
            _ => out.push(Redactor { strings: texts, nesting_rule: true }.member(name, blocks, 3, pair.as_ref())),
        }
    }
    out
}

/// H2: the compact text of a redacted record.
fn record_text(was: &str, view: Value) -> WStr {
    Value::obj(vec![
        ("schema", Value::str(REDACTED_SCHEMA)),
        ("version", Value::int(1)),
        ("was", Value::str(was)),
        ("view", view),
    ])
    .to_compact_wstr()
}

/// H2: the view of a block's reasoning item: the envelope's `item` when it has one (an
/// object), else the block's object itself when it has an `encrypted_content` member, else
/// `null`. A text that is not one I-JSON text (E6 steps 1–5) denotes no value, so it has no
/// item to view.
fn block_item_view(text: &WStr) -> Value {
    let Ok(v) = parse_ijson(text.as_bytes()) else { return Value::Null };
    match v.get("item") {
        Some(item @ Value::Object(_)) => diagnostic_view(item),
        _ if v.is_object() && v.has("encrypted_content") => diagnostic_view(&v),
        _ => Value::Null,
    }
}

/// H6 step 3: a replay block (inside five containers) → a text block holding its redacted
/// record; a redacted record keeps its text, text-redacted.
fn redact_replay_block(b: &Value, texts: &mut TextRedactor) -> Value {
    let Some(text) = text_of_block(b) else {
        let rec = texts.map(&record_text("block_not_text", Value::Null));
        return Value::obj(vec![("type", Value::str("text")), ("text", Value::String(rec))]);
    };
    let new_text = match read_block(text.as_bytes()) {
        Verdict::Code("redacted_record") => texts.map(text),
        Verdict::Code(code) => texts.map(&record_text(code, block_item_view(text))),
        Verdict::Resumable(_) => texts.map(&record_text("resumable", block_item_view(text))),
    };
    let members = b.as_object().map(|m| m.as_slice()).unwrap_or(&[]);
    let pair = Redactor { strings: texts, nesting_rule: true }.pair_of(members);
    let out = members
        .iter()
        .map(|(k, v)| {
            if k.eq_str("text") {
                (k.clone(), Value::String(new_text.clone()))
            } else {
                Redactor { strings: texts, nesting_rule: true }.member(k, v, 5, pair.as_ref())
            }
        })
        .collect();
    Value::Object(out)
}

/// H6 step 2: text redaction, memoised (the same text always redacts the same way).
#[derive(Default)]
pub struct TextRedactor {
    memo: HashMap<(usize, WStr), WStr>,
    /// How many decodings (H8 text forms) deep the text being redacted is.
    depth: usize,
}

impl StringMap for TextRedactor {
    fn map(&mut self, s: &WStr) -> WStr {
        self.redact_text(s)
    }
}

/// An edit of a text: the span `[start, end)` replaced by the bytes.
type Edit = (usize, usize, Vec<u8>);

/// H6 step 2: the text marker: the compact text of `{"redacted": "text", "bytes": N, "sha256":
/// hex}`, `N` and the digest those of the original text's UTF-8.
fn text_marker(t: &WStr) -> WStr {
    Value::obj(vec![
        ("redacted", Value::str("text")),
        ("bytes", Value::int(t.utf8_len() as u64)),
        ("sha256", Value::str(&t.sha256_hex())),
    ])
    .to_compact_wstr()
}

/// H6 step 2: the replacement of a ciphertext by its shape (its UTF-8 length and digest).
fn ciphertext_shape_marker(run: &WStr) -> Vec<u8> {
    format!("[redacted encrypted_content bytes={} sha256={}]", run.utf8_len(), run.sha256_hex()).into_bytes()
}

/// H6 step 2: what the value of a sensitive assignment becomes (kept when it already is).
const ASSIGNMENT_MARKER: &[u8] = b"[redacted]";

impl TextRedactor {
    /// H6 step 2: redacts a text. When a decoding of the result would be changed by text
    /// redaction, or text redaction of the result would change it again (an edit made a broken
    /// text readable), the whole text is replaced by its text marker.
    pub fn redact_text(&mut self, t: &WStr) -> WStr {
        let key = (self.depth, t.clone());
        if let Some(r) = self.memo.get(&key) {
            return r.clone();
        }
        let once = self.edit_pass(t);
        let result = if self.a_decoding_changes(&once) || (once != *t && self.edit_pass(&once) != once) {
            text_marker(t)
        } else {
            once
        };
        self.memo.insert(key, result.clone());
        result
    }

    /// Whether text redaction changes a text decoded from the one being redacted (one decoding
    /// deeper; H8 reads at most 4 decodings deep).
    fn decoded_changes(&mut self, decoded: &WStr) -> bool {
        if self.depth >= MAX_DECODINGS {
            return false;
        }
        self.depth += 1;
        let changed = self.redact_text(decoded) != *decoded;
        self.depth -= 1;
        changed
    }

    /// H6 step 2: whether a percent or HTML decoding of one of the text's gaps would be changed
    /// by text redaction.
    fn a_decoding_changes(&mut self, t: &WStr) -> bool {
        let src = t.as_bytes();
        let reading = read_text(src);
        gaps(&reading, src.len()).into_iter().any(|g| decodings(&src[g]).iter().any(|d| self.decoded_changes(d)))
    }

    /// One pass of edits over a text read as H8 reads it; every other character is kept.
    fn edit_pass(&mut self, t: &WStr) -> WStr {
        let src = t.as_bytes();
        let mut edits: Vec<Edit> = Vec::new();
        let reading = read_text(src);
        match &reading {
            Reading::Whole(node) => self.edit_node(node, src, &mut edits),
            Reading::Pieces(pieces) => {
                for p in pieces {
                    match p {
                        Piece::Value(node) => self.edit_node(node, src, &mut edits),
                        Piece::Fragment(f) => edits.push(fragment_edit(f)),
                    }
                }
                for gap in gaps(&reading, src.len()) {
                    self.edit_gap(src, gap, &mut edits);
                }
            }
        }
        if edits.is_empty() {
            return t.clone();
        }
        edits.sort_by_key(|e| e.0);
        let mut out = Vec::with_capacity(src.len());
        let mut cursor = 0;
        for (s, e, rep) in edits {
            out.extend_from_slice(&src[cursor..s]);
            out.extend_from_slice(&rep);
            cursor = e;
        }
        out.extend_from_slice(&src[cursor..]);
        WStr::from_wtf8(out)
    }

    /// H6 step 2, in a gap (H8 text forms): the value of each sensitive assignment becomes
    /// `[redacted]`, each ciphertext by its shape its shape marker, and each base64 run whose
    /// decoded text redaction would change becomes `[redacted]`.
    fn edit_gap(&mut self, src: &[u8], gap: Range<usize>, edits: &mut Vec<Edit>) {
        let forms = read_gap(&src[gap.clone()]);
        for a in &forms.assignments {
            let (s, e) = (gap.start + a.value.start, gap.start + a.value.end);
            if &src[s..e] != ASSIGNMENT_MARKER {
                edits.push((s, e, ASSIGNMENT_MARKER.to_vec()));
            }
        }
        for run in &forms.runs {
            let (s, e) = (gap.start + run.span.start, gap.start + run.span.end);
            match &run.kind {
                RunKind::Ciphertext => {
                    edits.push((s, e, ciphertext_shape_marker(&WStr::from_wtf8(src[s..e].to_vec()))))
                }
                RunKind::Encoded(text) => {
                    if self.decoded_changes(text) {
                        edits.push((s, e, ASSIGNMENT_MARKER.to_vec()));
                    }
                }
            }
        }
    }

    /// H6 step 2: R2 without rule 4 on one value where it stands, as edits of its text.
    fn edit_node(&mut self, node: &Node, src: &[u8], edits: &mut Vec<Edit>) {
        match &node.kind {
            NodeKind::Object(members) => {
                let v = node.to_value(src);
                if is_reasoning_object(&v) {
                    if is_view(&v) {
                        // A view is left as it is; the strings it keeps are text-redacted.
                        for m in members {
                            self.edit_node(&m.value, src, edits);
                        }
                    } else {
                        // An object with a repeated member is never a view; its view counts each
                        // member by its last value.
                        let view = Redactor { strings: self, nesting_rule: false }.value(&diagnostic_view(&v), 0);
                        edits.push((node.start, node.end, view.to_compact()));
                    }
                    return;
                }
                // R2 rule 2, on the names and strings as text redaction keeps them.
                let names: Vec<WStr> = members.iter().map(|m| self.redact_text(&m.name)).collect();
                let strings: Vec<Value> = members
                    .iter()
                    .map(|m| match &m.value.kind {
                        NodeKind::Str(s) => Value::String(self.redact_text(s)),
                        _ => Value::Null,
                    })
                    .collect();
                let pair = pair_name(names.iter().zip(strings.iter())).cloned();
                for (m, name) in members.iter().zip(names) {
                    if name != m.name {
                        edits.push((m.name_start, m.name_end, quote(&name)));
                    }
                    let replaced_as =
                        if is_sensitive(&name) { Some(name) } else { pair.clone().filter(|_| is_pair_value(&name)) };
                    match replaced_as {
                        Some(as_name) => {
                            let value = m.value.to_value(src);
                            if !is_replacement(&value, &as_name) {
                                edits.push((m.value.start, m.value.end, replacement(&as_name, &value).to_compact()));
                            }
                        }
                        None => self.edit_node(&m.value, src, edits),
                    }
                }
            }
            NodeKind::Array(items) => {
                for n in items {
                    self.edit_node(n, src, edits);
                }
            }
            NodeKind::Str(s) => {
                let r = self.redact_text(s);
                if r != *s {
                    edits.push((node.start, node.end, quote(&r)));
                }
            }
            _ => {}
        }
    }
}

/// H6 step 2: a fragment's value, from its opening quote to its closing quote (to the end of
/// the text when unterminated), becomes the compact text of its R2 replacement
/// (`{"redacted": "encrypted_content"}` when unterminated or it does not unescape), escaped
/// for the fragment's escape level.
fn fragment_edit(f: &Fragment) -> Edit {
    let rep = match (&f.value, f.terminated) {
        (Some(v), true) => replacement(&WStr::from("encrypted_content"), &Value::String(v.clone())),
        _ => Value::obj(vec![("redacted", Value::str("encrypted_content"))]),
    };
    let mut text = rep.to_compact();
    for _ in 0..f.level {
        let mut esc = Vec::with_capacity(text.len() * 2);
        escape_body(&text, &mut esc);
        text = esc;
    }
    (f.start, f.end, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::canonical_text;
    use crate::json::{parse_value, ParseOptions};
    use crate::scan::scan;

    fn j(s: &str) -> Value {
        parse_value(s.as_bytes(), ParseOptions::STRICT).unwrap().0
    }

    fn text(v: &Value) -> String {
        String::from_utf8(v.to_compact()).unwrap()
    }

    fn tr(s: &str) -> String {
        TextRedactor::default().redact_text(&WStr::from(s)).to_string_lossy()
    }

    const C16: &str = "0123456789abcdef";

    fn item() -> Value {
        Value::obj(vec![
            ("type", Value::str("reasoning")),
            ("id", Value::str("rs_1")),
            (
                "summary",
                Value::Array(vec![Value::obj(vec![("type", Value::str("summary_text")), ("text", Value::str("S"))])]),
            ),
            ("encrypted_content", Value::str(C16)),
        ])
    }

    #[test]
    fn text_redaction_keeps_unchanged_texts_exactly() {
        for t in ["plain words", "{ \"a\" : 1.50e3 }", "[1, 2,\t3]", "\"\\u0041\"", "NaN"] {
            assert_eq!(tr(t), t);
        }
    }

    #[test]
    fn text_redaction_edits_only_the_spans() {
        assert_eq!(
            tr("{ \"api_key\" : \"k\", \"n\": 1.50 }"),
            "{ \"api_key\" : {\"redacted\":\"api_key\"}, \"n\": 1.50 }"
        );
        let t = format!("before {{\"encrypted_content\": \"{C16}\"}} after");
        let r = tr(&t);
        assert!(r.starts_with(
            "before {\"encrypted_content\": {\"redacted\":\"encrypted_content\",\"bytes\":16,\"sha256\":\""
        ));
        assert!(r.ends_with("\"}} after"), "{r}");
        // Strings inside values are texts too.
        let nested = format!("{{\"log\":\"{{\\\"encrypted_content\\\":\\\"{C16}\\\"}}\"}}");
        let r = tr(&nested);
        assert!(!r.contains(C16), "{r}");
        assert!(scan(r.as_bytes()).is_empty());
    }

    #[test]
    fn text_redaction_of_fragments() {
        let t = format!("x=\"{{\\\"encrypted_content\\\":\\\"{C16}\\\"\" y");
        let r = tr(&t);
        assert!(
            r.starts_with(
                "x=\"{\\\"encrypted_content\\\":{\\\"redacted\\\":\\\"encrypted_content\\\",\\\"bytes\\\":16,"
            ),
            "{r}"
        );
        assert!(!r.contains(C16));
        let r = tr("{\"encrypted_content\": \"abc");
        assert_eq!(r, "{\"encrypted_content\": {\"redacted\":\"encrypted_content\"}");
        // Idempotent.
        assert_eq!(tr(&r), r);
    }

    const FERNET: &str =
        "gAAAAABpM0YjZk4yMrZw3XDI1AWFaKb9T0NQq7LndK6zaRB-FK1PbhZhaZk4yMrZw3XDI1AWFaKb9T0NQq7LndK6zaRB_FK1PbhZha==";

    #[test]
    fn h6_sensitive_assignments_become_redacted_and_stay_so() {
        for (text, expected) in [
            ("config {'api_key': 'sk-1', 'model': 'gpt-5'}", "config {'api_key': '[redacted]', 'model': 'gpt-5'}"),
            ("openai:\n  api_key: sk-1\n", "openai:\n  api_key: [redacted]\n"),
            ("<config><api_key>sk-1</api_key></config>", "<config><api_key>[redacted]</api_key></config>"),
            ("GET https://h/v1?model=m&api_key=sk-1&x=1", "GET https://h/v1?model=m&api_key=[redacted]&x=1"),
            ("curl -H \"Authorization: Bearer sk-1\" https://h", "curl -H \"Authorization: [redacted]\" https://h"),
        ] {
            assert_eq!(tr(text), expected);
            assert_eq!(tr(expected), expected, "idempotent");
        }
    }

    #[test]
    fn h6_ciphertexts_by_shape_and_encoded_texts() {
        let marker = format!(
            "[redacted encrypted_content bytes={} sha256={}]",
            FERNET.len(),
            crate::sha256::hex_digest(FERNET.as_bytes())
        );
        assert_eq!(tr(&format!("state {FERNET} end")), format!("state {marker} end"));
        // `{"api_key": "k"}` in base64: the run becomes `[redacted]`.
        assert_eq!(tr("cfg=eyJhcGlfa2V5IjogImsifQ=="), "cfg=[redacted]");
        // A decoding of the result that redaction would change: the whole text's marker.
        let t = "body=%7B%22api_key%22%3A%20%22k%22%7D";
        let r = tr(t);
        assert!(r.starts_with("{\"redacted\":\"text\",\"bytes\":37,\"sha256\":\""), "{r}");
        assert!(scan(r.as_bytes()).is_empty());
    }

    #[test]
    fn text_redaction_views_reasoning_objects() {
        let r = tr(&text(&item()));
        assert!(r.starts_with("{\"type\":\"reasoning\",\"id\":\"rs_1\",\"fields\":["), "{r}");
        assert_eq!(tr(&r), r);
    }

    #[test]
    fn redacted_export_replaces_replay_blocks_and_marks() {
        let env = canonical_text(&item());
        let h = Value::obj(vec![
            ("api_key", Value::str("secret")),
            (
                "messages",
                Value::Array(vec![Value::obj(vec![
                    ("role", Value::str("assistant")),
                    ("content", Value::Array(vec![])),
                    (
                        "channels",
                        Value::obj(vec![
                            (
                                REPLAY_CHANNEL,
                                Value::Array(vec![
                                    Value::obj(vec![("type", Value::str("text")), ("text", Value::str(&env))]),
                                    Value::int(5),
                                ]),
                            ),
                            (
                                "reasoning",
                                Value::Array(vec![Value::obj(vec![
                                    ("type", Value::str("text")),
                                    ("text", Value::str("S")),
                                ])]),
                            ),
                        ]),
                    ),
                ])]),
            ),
            (MARKER, Value::str("old")),
        ]);
        let out = export(&h, ExportMode::Redacted, true).unwrap();
        let s = text(&out);
        assert!(!s.contains(C16));
        assert!(scan(s.as_bytes()).is_empty());
        assert!(s.starts_with("{\"api_key\":{\"redacted\":\"api_key\"},\"messages\":"));
        assert!(s.ends_with(&format!("\"{MARKER}\":{{\"mode\":\"redacted\",\"note\":\"{REDACTED_NOTE}\"}}}}")));
        let blocks = out.get("messages").unwrap().as_array().unwrap()[0].get("channels").unwrap();
        assert!(blocks.get("reasoning").is_none());
        let b = blocks.get(REPLAY_CHANNEL).unwrap().as_array().unwrap();
        let t0 = b[0].get("text").unwrap().as_str().unwrap();
        assert!(t0.starts_with(&format!("{{\"schema\":\"{REDACTED_SCHEMA}\",\"version\":1,\"was\":\"resumable\",\"view\":{{\"type\":\"reasoning\",\"id\":\"rs_1\"")));
        assert_eq!(read_block(t0.as_bytes()).code(), Some("redacted_record"));
        assert_eq!(
            text(&b[1]),
            format!(
                "{{\"type\":\"text\",\"text\":{}}}",
                String::from_utf8(quote(&WStr::from(
                    format!(
                        "{{\"schema\":\"{REDACTED_SCHEMA}\",\"version\":1,\"was\":\"block_not_text\",\"view\":null}}"
                    )
                    .as_str()
                )))
                .unwrap()
            )
        );
        // Exporting a redacted export again changes nothing but the marker (already last).
        let again = export(&out, ExportMode::Redacted, true).unwrap();
        assert_eq!(again, out);
    }

    #[test]
    fn resumable_export_marker() {
        let env = canonical_text(&item());
        let mk = |role: &str| {
            j(&format!(
                r#"{{"messages":[{{"role":"{role}","content":[],"channels":{{"reasoning":[{{"type":"text","text":""}}],"{REPLAY_CHANNEL}":[{{"type":"text","text":{}}}]}}}}]}}"#,
                String::from_utf8(quote(&WStr::from(env.as_str()))).unwrap()
            ))
        };
        let out = export(&mk("assistant"), ExportMode::Resumable, true).unwrap();
        assert_eq!(
            text(out.get(MARKER).unwrap()),
            format!(
                "{{\"mode\":\"resumable\",\"warning\":\"{RESUMABLE_WARNING}\",\"display_reasoning\":\"duplicated\"}}"
            )
        );
        assert!(out.get("messages").unwrap().as_array().unwrap()[0]
            .get("channels")
            .unwrap()
            .get("reasoning")
            .is_some());
        let out = export(&mk("user"), ExportMode::Resumable, false).unwrap();
        assert!(out.get(MARKER).unwrap().get("display_reasoning").unwrap().is_str("none"));
        assert_eq!(export(&j("{\"messages\":{}}"), ExportMode::Resumable, false), Err("history_malformed"));
    }
}

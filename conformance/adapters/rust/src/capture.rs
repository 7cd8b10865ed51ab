//! Capture and writing (SPEC §4, C1–C5): a completed provider output item → canonical envelope.
//! C5: only items of E2's contract are captured; another contract's item is refused with C2's
//! code, never adapted.

use crate::envelope::{read_block, Verdict, SCHEMA};
use crate::json::{write_compact, Value, WStr};

/// C1: the four source names this specification knows.
pub const SOURCES: [&str; 4] =
    ["response.output_item.done", "response.completed", "response.incomplete", "response.output_item.added"];

/// C1–C4: captures `output_item` from `source`, returning the canonical envelope text or the
/// code of the first failing check (order: source, `capture_not_reasoning`, status, then the
/// fields in the order of E6 step 13).
pub fn capture(output_item: &Value, source: &WStr) -> Result<String, &'static str> {
    // C1: the source.
    if !SOURCES.iter().any(|s| source.eq_str(s)) {
        return Err("capture_source_unknown");
    }
    if source.eq_str("response.output_item.added") {
        return Err("capture_not_completed");
    }
    // C2: an object of type "reasoning".
    if !output_item.is_object() || !matches!(output_item.get("type"), Some(t) if t.is_str("reasoning")) {
        return Err("capture_not_reasoning");
    }
    // C1: status absent, null or "completed".
    match output_item.get("status") {
        None | Some(Value::Null) => {}
        Some(s) if s.is_str("completed") => {}
        Some(_) => return Err("capture_not_completed"),
    }
    let item = allowlisted_item(output_item)?;
    let text = canonical_text(&item);
    // C4: check the output with the reader before storing it.
    match read_block(text.as_bytes()) {
        Verdict::Resumable(_) => Ok(text),
        Verdict::Code(c) => Err(c),
    }
}

/// C2: copies only the members of E2, checking each in the order of E6 step 13.
fn allowlisted_item(o: &Value) -> Result<Value, &'static str> {
    let id = match o.get("id") {
        Some(Value::String(s)) if !s.is_empty() && !s.has_surrogate() => s.clone(),
        _ => return Err("item_id_invalid"),
    };
    let summary = match o.get("summary") {
        Some(Value::Array(parts)) => copy_parts(parts, "summary_text").ok_or("item_summary_invalid")?,
        _ => return Err("item_summary_invalid"),
    };
    let ciphertext = match o.get("encrypted_content") {
        Some(Value::String(s)) if !s.is_empty() && !s.has_surrogate() => s.clone(),
        _ => return Err("item_ciphertext_invalid"),
    };
    // C2: content absent, null or [] is omitted; otherwise it must be valid parts.
    let content = match o.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::Array(parts)) if parts.is_empty() => None,
        Some(Value::Array(parts)) => Some(copy_parts(parts, "reasoning_text").ok_or("item_content_invalid")?),
        Some(_) => return Err("item_content_invalid"),
    };
    // C3: member order type, id, summary, encrypted_content, content.
    let mut members = vec![
        (WStr::from("type"), Value::str("reasoning")),
        (WStr::from("id"), Value::String(id)),
        (WStr::from("summary"), Value::Array(summary)),
        (WStr::from("encrypted_content"), Value::String(ciphertext)),
    ];
    if let Some(c) = content {
        members.push((WStr::from("content"), Value::Array(c)));
    }
    Ok(Value::Object(members))
}

/// C2: each part an object with the given `type` and a string `text` holding no lone
/// surrogate; other members dropped; order and text kept exactly.
fn copy_parts(parts: &[Value], part_type: &str) -> Option<Vec<Value>> {
    parts
        .iter()
        .map(|p| {
            if !p.is_object() || !matches!(p.get("type"), Some(t) if t.is_str(part_type)) {
                return None;
            }
            match p.get("text") {
                Some(Value::String(t)) if !t.has_surrogate() => {
                    Some(Value::obj(vec![("type", Value::str(part_type)), ("text", Value::String(t.clone()))]))
                }
                _ => None,
            }
        })
        .collect()
}

/// C3: the canonical bytes of an envelope holding `item` (members in order, no whitespace,
/// `version` written `1`, RFC 8785 string escaping).
pub fn canonical_text(item: &Value) -> String {
    let env = Value::obj(vec![("schema", Value::str(SCHEMA)), ("version", Value::int(1)), ("item", item.clone())]);
    let mut out = Vec::new();
    write_compact(&env, &mut out);
    // The item holds no lone surrogate (C2), so the bytes are UTF-8.
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value, ParseOptions};

    fn cap(item: &str, source: &str) -> Result<String, &'static str> {
        let (v, _) = parse_value(item.as_bytes(), ParseOptions::STRICT).unwrap();
        capture(&v, &WStr::from(source))
    }

    #[test]
    fn section_15_example_is_181_bytes() {
        let item = r#"{"id": "rs_1", "type": "reasoning", "status": "completed", "content": null,
 "summary": [{"type": "summary_text", "text": "é", "annotations": []}],
 "encrypted_content": "c", "new_sdk_field": 7}"#;
        let text = cap(item, "response.output_item.done").unwrap();
        assert_eq!(
            text,
            r#"{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],"encrypted_content":"c"}}"#
        );
        assert_eq!(text.len(), 181);
    }

    #[test]
    fn c1_sources_and_status() {
        let ok = r#"{"type":"reasoning","id":"a","summary":[],"encrypted_content":"c"}"#;
        for s in ["response.output_item.done", "response.completed", "response.incomplete"] {
            assert!(cap(ok, s).is_ok());
        }
        assert_eq!(cap(ok, "response.output_item.added"), Err("capture_not_completed"));
        assert_eq!(cap(ok, "response.done"), Err("capture_source_unknown"));
        // Source precedes everything.
        assert_eq!(cap("5", "response.done"), Err("capture_source_unknown"));
        let st = |s: &str| ok.replace("\"summary\"", &format!("\"status\":{s},\"summary\""));
        assert!(cap(&st("null"), "response.completed").is_ok());
        assert_eq!(cap(&st("\"in_progress\""), "response.completed"), Err("capture_not_completed"));
        assert_eq!(cap(&st("7"), "response.completed"), Err("capture_not_completed"));
        // Status precedes fields.
        assert_eq!(
            cap(r#"{"type":"reasoning","status":"incomplete"}"#, "response.completed"),
            Err("capture_not_completed")
        );
    }

    #[test]
    fn c2_allowlist_and_field_codes() {
        assert_eq!(cap("[]", "response.completed"), Err("capture_not_reasoning"));
        assert_eq!(cap(r#"{"type":"message"}"#, "response.completed"), Err("capture_not_reasoning"));
        assert_eq!(
            cap(r#"{"type":"reasoning","summary":[],"encrypted_content":"c"}"#, "response.completed"),
            Err("item_id_invalid")
        );
        assert_eq!(
            cap(r#"{"type":"reasoning","id":"a","encrypted_content":""}"#, "response.completed"),
            Err("item_summary_invalid")
        );
        assert_eq!(
            cap(
                r#"{"type":"reasoning","id":"a","summary":[{"type":"x","text":""}],"encrypted_content":"c"}"#,
                "response.completed"
            ),
            Err("item_summary_invalid")
        );
        assert_eq!(
            cap(r#"{"type":"reasoning","id":"a","summary":[],"encrypted_content":""}"#, "response.completed"),
            Err("item_ciphertext_invalid")
        );
        assert_eq!(
            cap(
                r#"{"type":"reasoning","id":"a","summary":[],"encrypted_content":"c","content":{}}"#,
                "response.completed"
            ),
            Err("item_content_invalid")
        );
        let t = cap(
            r#"{"type":"reasoning","id":"a","summary":[{"text":" a ","type":"summary_text","x":1},{"type":"summary_text","text":"b"}],"encrypted_content":"c","content":[{"type":"reasoning_text","text":"r","y":2}]}"#,
            "response.completed",
        )
        .unwrap();
        assert!(t.ends_with(r#""summary":[{"type":"summary_text","text":" a "},{"type":"summary_text","text":"b"}],"encrypted_content":"c","content":[{"type":"reasoning_text","text":"r"}]}}"#));
    }

    #[test]
    fn c2_lone_surrogates_are_refused_with_the_field_code() {
        let base =
            r#"{"type":"reasoning","id":"a","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"c"}"#;
        assert_eq!(cap(&base.replace("\"a\"", "\"\\ud800\""), "response.completed"), Err("item_id_invalid"));
        assert_eq!(cap(&base.replace("\"s\"", "\"\\udfff\""), "response.completed"), Err("item_summary_invalid"));
        assert_eq!(cap(&base.replace("\"c\"", "\"c\\ud800\""), "response.completed"), Err("item_ciphertext_invalid"));
    }

    #[test]
    fn c3_escapes_only_what_rfc8785_escapes() {
        let t = cap(
            "{\"type\":\"reasoning\",\"id\":\"a\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"\\u007f\\u2028\\u0001\\\"\\/\"}],\"encrypted_content\":\"c\"}",
            "response.completed",
        )
        .unwrap();
        assert!(t.contains("\"text\":\"\u{7f}\u{2028}\\u0001\\\"/\""), "{t}");
    }
}

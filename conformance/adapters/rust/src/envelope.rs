//! The strict envelope reader (SPEC §3, E1–E6; P1 for its output).

use crate::json::{parse_document, ParseError, ParseOptions, Value};

/// E1: the schema name of a version-1 envelope.
pub const SCHEMA: &str = "fast-agent.openai-responses.reasoning-replay";
/// H2: the schema name of a redacted record.
pub const REDACTED_SCHEMA: &str = "fast-agent.openai-responses.reasoning-replay.redacted";
/// E4.1: the longest text a reader accepts, in UTF-8 bytes.
pub const MAX_TEXT_BYTES: usize = 16 * 1024 * 1024;
/// E4.1: the deepest nesting a reader accepts.
pub const MAX_NESTING: usize = 32;

/// E2: the members an item may have.
pub const ITEM_MEMBERS: [&str; 5] = ["type", "id", "summary", "encrypted_content", "content"];

/// E4.2: every block gets a verdict: resumable (with its replay item, P1) or one code.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Resumable(Value),
    Code(&'static str),
}

impl Verdict {
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Verdict::Code(c) => Some(c),
            Verdict::Resumable(_) => None,
        }
    }
}

/// E4.1: the nesting depth of a text, defined for every text by one left-to-right scan: outside
/// a string literal `[`/`{` open a level and `]`/`}` close one when one is open; a `"` outside a
/// literal starts one, which ends at the next unescaped `"` or at the end of the text; a
/// backslash inside a literal escapes the next character, whatever it is. Non-ASCII bytes
/// (valid UTF-8 or not) never matter, so scanning bytes is exact.
pub fn nesting_depth(text: &[u8]) -> usize {
    let (mut level, mut max) = (0usize, 0usize);
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if in_string {
            match c {
                b'\\' => i += 1, // escapes the next character (a non-ASCII byte cannot matter)
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    level += 1;
                    max = max.max(level);
                }
                b']' | b'}' => level = level.saturating_sub(1),
                _ => {}
            }
        }
        i += 1;
    }
    max
}

/// E6 steps 1–5 (E4, E4.1): decides whether `text` is one I-JSON text and returns its value.
/// `text` is either raw bytes (checked as UTF-8) or the WTF-8 form of a text given as
/// characters, where a lone surrogate makes the bytes invalid UTF-8 (step 2 either way), and
/// its 3 WTF-8 bytes equal the 3 bytes of U+FFFD (U1), so `text.len()` is the measured length.
pub fn parse_ijson(text: &[u8]) -> Result<Value, &'static str> {
    // Step 1, E4.1: limits, before anything else.
    if text.len() > MAX_TEXT_BYTES || nesting_depth(text) > MAX_NESTING {
        return Err("limit_exceeded");
    }
    // Step 2: encoding, wherever the bad byte or surrogate is.
    let Ok(s) = std::str::from_utf8(text) else {
        return Err("json_invalid_unicode");
    };
    // Step 3: grammar (a byte-order mark is never JSON whitespace).
    if s.starts_with('\u{FEFF}') {
        return Err("json_malformed");
    }
    let (node, flags) = match parse_document(s.as_bytes(), ParseOptions::STRICT) {
        Ok(r) => r,
        Err(ParseError::Syntax(_)) | Err(ParseError::TooDeep) => return Err("json_malformed"),
    };
    // Step 4: an escaped lone surrogate anywhere.
    if flags.lone_surrogate_escape {
        return Err("json_invalid_unicode");
    }
    // Step 5: duplicate members at any depth.
    if flags.duplicate_member {
        return Err("json_duplicate_member");
    }
    Ok(node.to_value(s.as_bytes()))
}

/// E6: the verdict of one block text, checks applied in order, the first failure giving the
/// code. A resumable block yields its replay item exactly as stored (P1).
pub fn read_block(text: &[u8]) -> Verdict {
    let value = match parse_ijson(text) {
        Ok(v) => v,
        Err(code) => return Verdict::Code(code),
    };
    match check_envelope(&value) {
        Ok(()) => Verdict::Resumable(value.get("item").cloned().unwrap_or(Value::Null)),
        Err(code) => Verdict::Code(code),
    }
}

/// E6 steps 6–13 on the value a text denotes.
pub fn check_envelope(v: &Value) -> Result<(), &'static str> {
    // Step 6: value kind.
    let Some(members) = v.as_object() else {
        return Err("json_not_object");
    };
    // Step 7: legacy forms (E5).
    let Some(schema) = v.get("schema") else {
        if v.has("encrypted_content") {
            let minimal =
                members.iter().all(|(k, _)| k.eq_str("type") || k.eq_str("id") || k.eq_str("encrypted_content"));
            return Err(if minimal { "legacy_minimal_record" } else { "raw_sdk_snapshot" });
        }
        return Err("envelope_member_missing");
    };
    // Step 8: schema name (H2's redacted record first).
    if schema.is_str(REDACTED_SCHEMA) {
        return Err("redacted_record");
    }
    if !schema.is_str(SCHEMA) {
        return Err("envelope_schema_unknown");
    }
    // Step 9: version, by value as binary64 (E1); a boolean is not a number.
    match v.get("version") {
        None => return Err("envelope_member_missing"),
        Some(Value::Number(_)) => {
            if v.get("version").and_then(Value::as_f64) != Some(1.0) {
                return Err("envelope_version_unsupported");
            }
        }
        Some(_) => return Err("envelope_version_invalid"),
    }
    // Step 10: envelope members.
    let Some(item) = v.get("item") else {
        return Err("envelope_member_missing");
    };
    if members.iter().any(|(k, _)| !(k.eq_str("schema") || k.eq_str("version") || k.eq_str("item"))) {
        return Err("envelope_member_unknown");
    }
    check_item(item)
}

/// E6 steps 11–13 (E2): the item of an envelope.
pub fn check_item(item: &Value) -> Result<(), &'static str> {
    // Step 11.
    let Some(members) = item.as_object() else {
        return Err("item_not_object");
    };
    // Step 12.
    if members.iter().any(|(k, _)| !ITEM_MEMBERS.iter().any(|m| k.eq_str(m))) {
        return Err("item_member_unknown");
    }
    // Step 13, in order: type, id, summary, encrypted_content, content.
    if !matches!(item.get("type"), Some(t) if t.is_str("reasoning")) {
        return Err("item_type_invalid");
    }
    if !is_non_empty_string(item.get("id")) {
        return Err("item_id_invalid");
    }
    match item.get("summary") {
        Some(Value::Array(parts)) if parts.iter().all(|p| is_part(p, "summary_text")) => {}
        _ => return Err("item_summary_invalid"),
    }
    if !is_non_empty_string(item.get("encrypted_content")) {
        return Err("item_ciphertext_invalid");
    }
    match item.get("content") {
        None => {}
        Some(Value::Array(parts)) if !parts.is_empty() && parts.iter().all(|p| is_part(p, "reasoning_text")) => {}
        Some(_) => return Err("item_content_invalid"),
    }
    Ok(())
}

/// E2: `id` and `encrypted_content` are non-empty strings.
fn is_non_empty_string(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(s)) if !s.is_empty())
}

/// E2: a part is an object with exactly `type` (the given string) and `text` (a string).
fn is_part(p: &Value, part_type: &str) -> bool {
    match p.as_object() {
        Some(m) => {
            m.len() == 2
                && matches!(p.get("type"), Some(t) if t.is_str(part_type))
                && matches!(p.get("text"), Some(Value::String(_)))
                && m.iter().all(|(k, _)| k.eq_str("type") || k.eq_str("text"))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> Option<&'static str> {
        read_block(text.as_bytes()).code()
    }

    const ITEM: &str =
        r#"{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],"encrypted_content":"c"}"#;

    fn env(item: &str) -> String {
        format!(r#"{{"schema":"{SCHEMA}","version":1,"item":{item}}}"#)
    }

    #[test]
    fn section_15_example_is_resumable_and_replays_its_item() {
        let v = read_block(env(ITEM).as_bytes());
        let Verdict::Resumable(item) = v else { panic!("{v:?}") };
        assert_eq!(String::from_utf8(item.to_compact()).unwrap(), ITEM);
    }

    #[test]
    fn e1_version_by_value() {
        for ver in ["1", "1.0", "1e0", "10e-1", "1.0000000000000000001"] {
            let t = format!(r#"{{"schema":"{SCHEMA}","version":{ver},"item":{ITEM}}}"#);
            assert_eq!(code(&t), None, "{ver}");
        }
        for (ver, c) in [
            ("true", "envelope_version_invalid"),
            ("\"1\"", "envelope_version_invalid"),
            ("null", "envelope_version_invalid"),
            ("2", "envelope_version_unsupported"),
            ("1.5", "envelope_version_unsupported"),
            ("1e400", "envelope_version_unsupported"),
        ] {
            let t = format!(r#"{{"schema":"{SCHEMA}","version":{ver},"item":{ITEM}}}"#);
            assert_eq!(code(&t), Some(c), "{ver}");
        }
    }

    #[test]
    fn e4_1_depth_examples() {
        assert_eq!(nesting_depth(b"1"), 0);
        assert_eq!(nesting_depth(b"{}"), 1);
        assert_eq!(nesting_depth(env(ITEM).as_bytes()), 4);
        assert_eq!(nesting_depth(b"x[["), 2);
        assert_eq!(nesting_depth(b"\"[["), 0);
        assert_eq!(nesting_depth(b"]]][["), 2);
        assert_eq!(nesting_depth(b"\"\\\"[\"["), 1);
    }

    #[test]
    fn e4_1_limit_replaces_every_other_code() {
        let deep33 = "[".repeat(33) + &"]".repeat(33);
        assert_eq!(code(&deep33), Some("limit_exceeded"));
        let deep32 = "[".repeat(32) + &"]".repeat(32);
        assert_eq!(code(&deep32), Some("json_not_object"));
        assert_eq!(code(&("NaN ".to_string() + &"{".repeat(40))), Some("limit_exceeded"));
        let mut big = vec![b' '; MAX_TEXT_BYTES - 2];
        big.splice(0..0, b"{}".iter().copied());
        assert_eq!(read_block(&big).code(), Some("envelope_member_missing"));
        big.push(b' ');
        assert_eq!(read_block(&big).code(), Some("limit_exceeded"));
    }

    #[test]
    fn e6_text_checks_in_order() {
        assert_eq!(read_block(&[0xEF, 0xBB, 0xBF]).code(), Some("json_malformed"));
        assert_eq!(read_block(b"\xEF\xBB\xBF{}").code(), Some("json_malformed"));
        assert_eq!(read_block(b"{\"a\":\"\xff\"} trailing").code(), Some("json_invalid_unicode"));
        assert_eq!(code(""), Some("json_malformed"));
        assert_eq!(code("reasoning"), Some("json_malformed"));
        assert_eq!(code("{} {}"), Some("json_malformed"));
        assert_eq!(code("NaN"), Some("json_malformed"));
        // Grammar (step 3) precedes the lone-surrogate escape (step 4) wherever they are.
        assert_eq!(code("[\"\\ud800\", NaN]"), Some("json_malformed"));
        assert_eq!(code("{\"a\":\"\\udc00\",\"a\":1}"), Some("json_invalid_unicode"));
        assert_eq!(code("{\"a\":1,\"a\":1}"), Some("json_duplicate_member"));
        assert_eq!(code("[]"), Some("json_not_object"));
        // Noncharacters are accepted (E4).
        let t = env(&ITEM.replace("é", "\u{FDD0}\u{FFFF}\u{10FFFF}"));
        assert_eq!(code(&t), None);
    }

    #[test]
    fn e6_surrogate_in_characters_is_invalid_unicode() {
        let mut wtf8 = env(ITEM).into_bytes();
        wtf8.extend_from_slice(&[0xED, 0xA0, 0x80]); // a raw lone surrogate after the value
        assert_eq!(read_block(&wtf8).code(), Some("json_invalid_unicode"));
    }

    #[test]
    fn e5_legacy_forms() {
        assert_eq!(code(r#"{"type":"reasoning","id":"a","encrypted_content":"c"}"#), Some("legacy_minimal_record"));
        assert_eq!(code(r#"{"encrypted_content":"c"}"#), Some("legacy_minimal_record"));
        assert_eq!(code(r#"{"id":"a","encrypted_content":"c","summary":[]}"#), Some("raw_sdk_snapshot"));
        assert_eq!(code(r#"{"id":"a"}"#), Some("envelope_member_missing"));
    }

    #[test]
    fn e6_envelope_and_item_checks() {
        let redacted = format!(r#"{{"schema":"{REDACTED_SCHEMA}","version":1,"was":"resumable","view":null}}"#);
        assert_eq!(code(&redacted), Some("redacted_record"));
        assert_eq!(code(r#"{"schema":"x","version":1,"item":{}}"#), Some("envelope_schema_unknown"));
        assert_eq!(code(&format!(r#"{{"schema":"{SCHEMA}","item":{{}}}}"#)), Some("envelope_member_missing"));
        assert_eq!(code(&format!(r#"{{"schema":"{SCHEMA}","version":1}}"#)), Some("envelope_member_missing"));
        assert_eq!(
            code(&format!(r#"{{"schema":"{SCHEMA}","version":1,"item":{ITEM},"status":"x"}}"#)),
            Some("envelope_member_unknown")
        );
        assert_eq!(code(&env("[]")), Some("item_not_object"));
        assert_eq!(code(&env(&ITEM.replace("\"id\"", "\"status\":\"completed\",\"id\""))), Some("item_member_unknown"));
        assert_eq!(code(&env(&ITEM.replace("\"reasoning\"", "\"message\""))), Some("item_type_invalid"));
        assert_eq!(code(&env(&ITEM.replace("\"rs_1\"", "\"\""))), Some("item_id_invalid"));
        assert_eq!(code(&env(&ITEM.replace("\"é\"}", "\"é\",\"x\":1}"))), Some("item_summary_invalid"));
        assert_eq!(code(&env(&ITEM.replace("\"c\"", "\"\""))), Some("item_ciphertext_invalid"));
        assert_eq!(code(&env(&ITEM.replace("\"c\"}", "\"c\",\"content\":null}"))), Some("item_content_invalid"));
        assert_eq!(code(&env(&ITEM.replace("\"c\"}", "\"c\",\"content\":[]}"))), Some("item_content_invalid"));
        let with_content = ITEM.replace("\"c\"}", "\"c\",\"content\":[{\"type\":\"reasoning_text\",\"text\":\"\"}]}");
        assert_eq!(code(&env(&with_content)), None);
        // Type precedes id: both wrong gives the type's code.
        assert_eq!(code(&env(r#"{"summary":[],"encrypted_content":""}"#)), Some("item_type_invalid"));
    }
}

//! Redaction for diagnostics (SPEC §7, R1–R2): the diagnostic view of a reasoning item and
//! `redact(value)`. The exporter (H6) reuses R2 with a string map (each kept string replaced by
//! its text redaction); the `redact` operation uses the identity map.

use std::collections::BTreeSet;

use crate::json::{Value, WStr};
use crate::telemetry::parts_and_bytes;

/// R2 rule 4: an array or object inside this many arrays and objects is replaced.
pub const NESTING_LIMIT: usize = 256;

/// R2: a member name is sensitive when its normal form contains one of these.
const SENSITIVE_FRAGMENTS: [&str; 11] = [
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "privatekey",
    "apikey",
    "accesskey",
    "credential",
    "cookie",
    "encryptedcontent",
];

/// R1: the members of a diagnostic view, in order.
pub const VIEW_MEMBERS: [&str; 9] = [
    "type",
    "id",
    "fields",
    "encrypted_content_bytes",
    "encrypted_content_sha256",
    "summary_parts",
    "summary_bytes",
    "content_parts",
    "content_bytes",
];

/// Maps each string that R2 keeps (values and member names); H6 step 1 uses text redaction.
pub trait StringMap {
    fn map(&mut self, s: &WStr) -> WStr;
}

/// The identity map of plain R2.
pub struct Identity;

impl StringMap for Identity {
    fn map(&mut self, s: &WStr) -> WStr {
        s.clone()
    }
}

/// R2: a member name's normal form: ASCII letters lowercased, and every character that is not
/// an ASCII letter or digit removed (a non-ASCII letter is removed, never folded).
pub fn normal_form(name: &WStr) -> Vec<u8> {
    name.as_bytes().iter().filter(|b| b.is_ascii_alphanumeric()).map(u8::to_ascii_lowercase).collect()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// R2: a name is sensitive when its normal form contains one of the fragments.
pub fn is_sensitive(name: &WStr) -> bool {
    let n = normal_form(name);
    SENSITIVE_FRAGMENTS.iter().any(|f| contains(&n, f.as_bytes()))
}

/// R2: the name of a **name/value pair**: an object with a member whose normal form is `name`
/// or `key` and whose value is a string that is a sensitive name (the last such member
/// counts). `members` are the object's member names and values as R2 decides on them.
pub fn pair_name<'v>(members: impl Iterator<Item = (&'v WStr, &'v Value)>) -> Option<&'v WStr> {
    members
        .filter(|(k, _)| matches!(normal_form(k).as_slice(), b"name" | b"key"))
        .filter_map(|(_, v)| v.as_wstr().filter(|s| is_sensitive(s)))
        .last()
}

/// R2: a member of a name/value pair that is replaced as the value of a member of the pair's
/// name would be: one whose normal form is `value`.
pub fn is_pair_value(name: &WStr) -> bool {
    normal_form(name) == b"value"
}

/// R2 rule 1: an object whose `type` member is the string `"reasoning"`.
pub fn is_reasoning_object(v: &Value) -> bool {
    v.is_object() && matches!(v.get("type"), Some(t) if t.is_str("reasoning"))
}

/// 64 lowercase hexadecimal digits.
pub fn is_sha256_hex(v: &Value) -> bool {
    match v.as_wstr() {
        Some(s) => s.as_bytes().len() == 64 && s.as_bytes().iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
        None => false,
    }
}

/// R1: the diagnostic view of an object (defined for every object whose `type` is
/// `"reasoning"`, canonical or not). A repeated member counts by its last value.
pub fn diagnostic_view(item: &Value) -> Value {
    let fields: BTreeSet<&WStr> = item.as_object().map(|m| m.iter().map(|(k, _)| k).collect()).unwrap_or_default();
    let (ec_bytes, ec_sha) = match item.get("encrypted_content") {
        Some(Value::String(s)) => (Value::int(s.utf8_len() as u64), Value::str(&s.sha256_hex())),
        _ => (Value::Null, Value::Null),
    };
    let (sp, sb) = parts_and_bytes(item.get("summary"));
    let (cp, cb) = parts_and_bytes(item.get("content"));
    Value::obj(vec![
        ("type", Value::str("reasoning")),
        ("id", item.get("id").filter(|v| matches!(v, Value::String(_))).cloned().unwrap_or(Value::Null)),
        ("fields", Value::Array(fields.into_iter().map(|k| Value::String(k.clone())).collect())),
        ("encrypted_content_bytes", ec_bytes),
        ("encrypted_content_sha256", ec_sha),
        ("summary_parts", Value::int(sp)),
        ("summary_bytes", Value::int(sb)),
        ("content_parts", Value::int(cp)),
        ("content_bytes", Value::int(cb)),
    ])
}

/// R2 rule 1: the value already is a view: exactly the members of a view, each of its form.
pub fn is_view(v: &Value) -> bool {
    let Some(m) = v.as_object() else { return false };
    if m.len() != VIEW_MEMBERS.len() || v.has_duplicate_members() {
        return false;
    }
    if !VIEW_MEMBERS.iter().all(|name| v.has(name)) {
        return false;
    }
    let g = |n: &str| v.get(n).unwrap_or(&Value::Null);
    g("type").is_str("reasoning")
        && matches!(g("id"), Value::String(_) | Value::Null)
        && matches!(g("fields"), Value::Array(a) if a.iter().all(|f| matches!(f, Value::String(_))))
        && (g("encrypted_content_bytes").is_null() || g("encrypted_content_bytes").is_count())
        && (g("encrypted_content_sha256").is_null() || is_sha256_hex(g("encrypted_content_sha256")))
        && ["summary_parts", "summary_bytes", "content_parts", "content_bytes"].iter().all(|n| g(n).is_count())
}

/// R2: the value already is a replacement for member `name`: exactly `{"redacted": name}`, or
/// exactly `{"redacted": "encrypted_content", "bytes": count, "sha256": 64 hex}`.
pub fn is_replacement(v: &Value, name: &WStr) -> bool {
    let Some(m) = v.as_object() else { return false };
    if v.has_duplicate_members() {
        return false;
    }
    let redacted = v.get("redacted");
    if m.len() == 1 {
        return matches!(redacted, Some(Value::String(s)) if s == name);
    }
    m.len() == 3
        && matches!(redacted, Some(r) if r.is_str("encrypted_content"))
        && matches!(v.get("bytes"), Some(b) if b.is_count())
        && matches!(v.get("sha256"), Some(h) if is_sha256_hex(h))
}

/// R2: the replacement of a sensitive member's value: the ciphertext object for a string value
/// of a member whose normal form is exactly `encryptedcontent`, else `{"redacted": name}`.
pub fn replacement(name: &WStr, value: &Value) -> Value {
    match value {
        Value::String(s) if normal_form(name) == b"encryptedcontent" => Value::obj(vec![
            ("redacted", Value::str("encrypted_content")),
            ("bytes", Value::int(s.utf8_len() as u64)),
            ("sha256", Value::str(&s.sha256_hex())),
        ]),
        _ => Value::obj(vec![("redacted", Value::String(name.clone()))]),
    }
}

/// R2 with a string map (`Identity` for plain R2) and optional rule 4.
pub struct Redactor<'m> {
    pub strings: &'m mut dyn StringMap,
    /// R2 rule 4 applies (H6 step 2 redacts texts "without rule 4").
    pub nesting_rule: bool,
}

impl Redactor<'_> {
    /// R2: redacts `v`, which lies inside `depth` arrays and objects.
    pub fn value(&mut self, v: &Value, depth: usize) -> Value {
        match v {
            // Rule 4.
            Value::Array(_) | Value::Object(_) if self.nesting_rule && depth >= NESTING_LIMIT => {
                Value::obj(vec![("redacted", Value::str("nesting"))])
            }
            // Rule 1.
            Value::Object(_) if is_reasoning_object(v) => {
                let view = if is_view(v) { v.clone() } else { diagnostic_view(v) };
                self.view_strings(view)
            }
            // Rule 2.
            Value::Object(m) => Value::Object(self.members(m, depth)),
            // Rule 3.
            Value::Array(a) => Value::Array(a.iter().map(|e| self.value(e, depth + 1)).collect()),
            Value::String(s) => Value::String(self.strings.map(s)),
            _ => v.clone(),
        }
    }

    /// R2 rule 2: an object member by member, never taken for a reasoning item (H6 step 1
    /// redacts the top-level object, each message and each `channels` object this way).
    /// `depth` is the number of containers around the object.
    pub fn members(&mut self, m: &[(WStr, Value)], depth: usize) -> Vec<(WStr, Value)> {
        let pair = self.pair_of(m);
        m.iter().map(|(k, x)| self.member(k, x, depth, pair.as_ref())).collect()
    }

    /// R2 rule 2: the name of the object's name/value pair, decided on the names and strings
    /// as this redaction keeps them (H6 step 1: decided on the name so redacted).
    pub fn pair_of(&mut self, m: &[(WStr, Value)]) -> Option<WStr> {
        let mapped: Vec<(WStr, Value)> = m
            .iter()
            .map(|(k, x)| {
                let v = match x {
                    Value::String(s) => Value::String(self.strings.map(s)),
                    _ => Value::Null,
                };
                (self.strings.map(k), v)
            })
            .collect();
        pair_name(mapped.iter().map(|(k, v)| (k, v))).cloned()
    }

    /// R2 rule 2 for one member of an object lying inside `depth` containers, whose
    /// name/value pair (if it is one) has the name `pair`: a sensitive member, or the value
    /// member of a pair, gets its replacement (never descended into, so rule 4 does not apply
    /// to it); every other member is redacted recursively.
    pub fn member(&mut self, name: &WStr, x: &Value, depth: usize, pair: Option<&WStr>) -> (WStr, Value) {
        let name = self.strings.map(name);
        let replaced_as =
            if is_sensitive(&name) { Some(name.clone()) } else { pair.filter(|_| is_pair_value(&name)).cloned() };
        match replaced_as {
            Some(as_name) => {
                let kept = if is_replacement(x, &as_name) { x.clone() } else { replacement(&as_name, x) };
                (name, kept)
            }
            None => {
                let r = self.value(x, depth + 1);
                (name, r)
            }
        }
    }

    /// The strings a view keeps (its `id` and `fields`) go through the string map.
    fn view_strings(&mut self, view: Value) -> Value {
        let Value::Object(m) = view else { return view };
        Value::Object(
            m.into_iter()
                .map(|(k, x)| {
                    let x = match (k.as_bytes(), x) {
                        (b"id", Value::String(s)) => Value::String(self.strings.map(&s)),
                        (b"fields", Value::Array(a)) => Value::Array(
                            a.into_iter()
                                .map(|f| match f {
                                    Value::String(s) => Value::String(self.strings.map(&s)),
                                    other => other,
                                })
                                .collect(),
                        ),
                        (_, x) => x,
                    };
                    (k, x)
                })
                .collect(),
        )
    }
}

/// R2: `redact(value)`, the `redact` operation.
pub fn redact(v: &Value) -> Value {
    Redactor { strings: &mut Identity, nesting_rule: true }.value(v, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value, ParseOptions};

    fn j(s: &str) -> Value {
        parse_value(s.as_bytes(), ParseOptions::STRICT).unwrap().0
    }

    fn text(v: &Value) -> String {
        String::from_utf8(v.to_compact()).unwrap()
    }

    #[test]
    fn r2_sensitive_names_from_the_spec() {
        for n in [
            "api_key",
            "x-api-key",
            "api.key",
            "private key",
            "apiKey",
            "OpenAI-Api-Key",
            "auth_token",
            "token_value",
            "tokenId",
            "auth_header",
            "authentication",
            "authInfo",
            "oauth_state",
            "tokens",
            "client_secret",
            "Authorization",
            "Set-Cookie",
            "encryptedContent",
            "author",
            "authority",
            "max_output_tokens",
            "input_tokens",
            "tokenizer",
        ] {
            assert!(is_sensitive(&WStr::from(n)), "{n}");
        }
        for n in ["prompt_cache_key", "keyword", "key", "api1key", "to\u{212A}en_count"] {
            assert!(!is_sensitive(&WStr::from(n)), "{n}");
        }
    }

    #[test]
    fn r2_name_value_pairs() {
        let v = redact(&j(
            r#"[{"name":"Authorization","value":"Bearer x"},{"name":"model","value":"x"},{"Key":"client_secret","Value":"s","value":"t"},{"name":"encrypted_content","value":"abc"},{"name":"password","value":{"nested":["p"]}}]"#,
        ));
        assert_eq!(
            text(&v),
            r#"[{"name":"Authorization","value":{"redacted":"Authorization"}},{"name":"model","value":"x"},{"Key":"client_secret","Value":{"redacted":"client_secret"},"value":{"redacted":"client_secret"}},{"name":"encrypted_content","value":{"redacted":"encrypted_content","bytes":3,"sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}},{"name":"password","value":{"redacted":"password"}}]"#
        );
        assert_eq!(redact(&v), v);
    }

    #[test]
    fn r1_view_of_a_reasoning_item() {
        let v = redact(&j(
            r#"{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"},"x"],"encrypted_content":"abc","status":"completed"}"#,
        ));
        assert_eq!(
            text(&v),
            r#"{"type":"reasoning","id":"rs_1","fields":["encrypted_content","id","status","summary","type"],"encrypted_content_bytes":3,"encrypted_content_sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad","summary_parts":2,"summary_bytes":2,"content_parts":0,"content_bytes":0}"#
        );
        // R2 rule 1: a view is left as it is, so redacting twice changes nothing.
        assert_eq!(redact(&v), v);
        let odd = redact(&j(r#"{"type":"reasoning","id":5,"encrypted_content":null,"content":"x"}"#));
        assert_eq!(
            text(&odd),
            r#"{"type":"reasoning","id":null,"fields":["content","encrypted_content","id","type"],"encrypted_content_bytes":null,"encrypted_content_sha256":null,"summary_parts":0,"summary_bytes":0,"content_parts":0,"content_bytes":0}"#
        );
    }

    #[test]
    fn r2_replacements_and_idempotence() {
        let v = redact(&j(
            r#"{"api_key":"k","Encrypted-Content":"abc","encrypted_content":5,"nested":{"token":{"a":1}},"list":[{"password":"p"}],"max_output_tokens":10}"#,
        ));
        assert_eq!(
            text(&v),
            r#"{"api_key":{"redacted":"api_key"},"Encrypted-Content":{"redacted":"encrypted_content","bytes":3,"sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},"encrypted_content":{"redacted":"encrypted_content"},"nested":{"token":{"redacted":"token"}},"list":[{"password":{"redacted":"password"}}],"max_output_tokens":{"redacted":"max_output_tokens"}}"#
        );
        assert_eq!(redact(&v), v);
        // A replacement of the wrong shape is replaced.
        assert_eq!(text(&redact(&j(r#"{"api_key":{"redacted":"other"}}"#))), r#"{"api_key":{"redacted":"api_key"}}"#);
    }

    #[test]
    fn r2_rule_4_nesting() {
        let deep = "[".repeat(300) + &"]".repeat(300);
        let r = text(&redact(&j(&deep)));
        assert_eq!(r, "[".repeat(256) + r#"{"redacted":"nesting"}"# + &"]".repeat(256));
        let shallow = "[".repeat(256) + &"]".repeat(256);
        assert_eq!(text(&redact(&j(&shallow))), shallow);
    }

    #[test]
    fn r2_scalars_unchanged() {
        for s in ["1", "1.0", "\"x\"", "null", "true", "[1,\"a\"]"] {
            assert_eq!(text(&redact(&j(s))), s);
        }
    }
}

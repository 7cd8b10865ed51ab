//! Per-request telemetry counters (SPEC §8, T1–T2).

use crate::json::Value;

/// T1: the counters of one request. Only counts: never ciphertext or text (T2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub item_count: u64,
    pub encrypted_bytes: u64,
    pub summary_parts: u64,
    pub summary_bytes: u64,
    pub content_parts: u64,
    pub content_bytes: u64,
    pub deduplicated_exact: u64,
    pub id_ciphertext_conflict: u64,
}

/// T1: UTF-8 length of a string member (U1), 0 when missing or not a string.
fn str_bytes(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::String(s)) => s.utf8_len() as u64,
        _ => 0,
    }
}

/// T1: (parts, bytes) of a summary or content array: parts counted when it is an array, bytes
/// summed over the string `text` of its object parts.
pub fn parts_and_bytes(v: Option<&Value>) -> (u64, u64) {
    match v {
        Some(Value::Array(parts)) => (parts.len() as u64, parts.iter().map(|p| str_bytes(p.get("text"))).sum()),
        _ => (0, 0),
    }
}

/// T1: counts every element of `input` that is an object whose `type` is `"reasoning"`, whether
/// it came from a replay block or is a message's own item.
pub fn count(input: &[Value], deduplicated_exact: u64, id_ciphertext_conflict: u64) -> Counters {
    let mut c = Counters { deduplicated_exact, id_ciphertext_conflict, ..Counters::default() };
    for item in input {
        if !item.is_object() || !matches!(item.get("type"), Some(t) if t.is_str("reasoning")) {
            continue;
        }
        c.item_count += 1;
        c.encrypted_bytes += str_bytes(item.get("encrypted_content"));
        let (sp, sb) = parts_and_bytes(item.get("summary"));
        let (cp, cb) = parts_and_bytes(item.get("content"));
        c.summary_parts += sp;
        c.summary_bytes += sb;
        c.content_parts += cp;
        c.content_bytes += cb;
    }
    c
}

impl Counters {
    /// T1: exactly these nine members (schema `replay-telemetry.v1`).
    pub fn to_value(&self) -> Value {
        Value::obj(vec![
            ("reasoning_replay_item_count", Value::int(self.item_count)),
            ("reasoning_replay_encrypted_bytes", Value::int(self.encrypted_bytes)),
            ("reasoning_replay_summary_parts", Value::int(self.summary_parts)),
            ("reasoning_replay_summary_bytes", Value::int(self.summary_bytes)),
            ("reasoning_replay_content_parts", Value::int(self.content_parts)),
            ("reasoning_replay_content_bytes", Value::int(self.content_bytes)),
            ("replay_deduplicated_exact_count", Value::int(self.deduplicated_exact)),
            ("replay_id_ciphertext_conflict_count", Value::int(self.id_ciphertext_conflict)),
            ("canonical_schema_version", Value::int(1)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value, ParseOptions};

    #[test]
    fn t1_counts_reasoning_items_only() {
        let (input, _) = parse_value(
            r#"[{"type":"reasoning","id":"a","summary":[{"type":"summary_text","text":"é"},{"type":"summary_text","text":"ab"}],"encrypted_content":"\ud800x","content":[{"type":"reasoning_text","text":"xyz"}]},
                {"type":"reasoning","summary":"x","encrypted_content":5,"content":[1,{"text":7}]},
                {"type":"message","content":"ignored"}, "reasoning"]"#
                .as_bytes(),
            ParseOptions::LENIENT,
        )
        .unwrap();
        let c = count(input.as_array().unwrap(), 2, 1);
        assert_eq!(
            c,
            Counters {
                item_count: 2,
                encrypted_bytes: 4,
                summary_parts: 2,
                summary_bytes: 4,
                content_parts: 3,
                content_bytes: 3,
                deduplicated_exact: 2,
                id_ciphertext_conflict: 1,
            }
        );
    }
}

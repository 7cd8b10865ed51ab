//! Cache-state records (SPEC §9.1 "Cache-state record", F6): what an assistant message stores
//! of the request that produced it, in either history form (CL3).

use crate::envelope::parse_ijson;
use crate::history::{has_role, text_of_block, HistoryForm, CACHE_CHANNEL};
use crate::json::{Value, WStr};

/// §9.1: the allowed efforts of an update-capable model.
pub const ALLOWED_EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];
/// §9.1: the update-capable registry when the caller supplies none.
pub const DEFAULT_UPDATE_CAPABLE: &str = "gpt-6-astra";

/// §9.1: a record whose structure F6 accepts.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub model: WStr,
    pub key: WStr,
    pub effort: Option<WStr>,
}

/// F6: what a message holds as a record.
#[derive(Clone, Debug, PartialEq)]
pub enum RecordRead {
    /// No record: a message that is not the assistant's, an absent channel or an empty array
    /// (in the items form: none of the record members).
    None,
    /// A malformed record (F6: reported `cache_state_invalid`, treated as absent).
    Malformed,
    Structured(Record),
}

/// F6: reads a message's record, checking its structure only. Only assistant messages carry
/// records; the channel (or the members) of any other message is never read.
pub fn read_record(message: &Value, form: HistoryForm) -> RecordRead {
    if !has_role(message, "assistant") {
        return RecordRead::None;
    }
    match form {
        HistoryForm::Channels => channel_record(message),
        HistoryForm::Items => items_record(message),
    }
}

/// F6 in the channels form: the channel `fast-agent-responses-cache-state`.
fn channel_record(message: &Value) -> RecordRead {
    match message.get("channels").and_then(|c| c.get(CACHE_CHANNEL)) {
        None => RecordRead::None,
        Some(Value::Array(blocks)) => match blocks.as_slice() {
            [] => RecordRead::None,
            // F6: one text block whose text is one I-JSON object (E4).
            [block] => match text_of_block(block).map(|t| parse_ijson(t.as_bytes())) {
                Some(Ok(v)) => structured(&v),
                _ => RecordRead::Malformed,
            },
            _ => RecordRead::Malformed,
        },
        // F6: a channel present with a value that is not an array is a malformed record.
        Some(_) => RecordRead::Malformed,
    }
}

/// CL3: in the items form the record is the members `model`, `effort` and `prompt_cache_key`
/// (the record `{"model": model, "key": prompt_cache_key, "effort": effort}`), absent when
/// the message has none of them.
fn items_record(message: &Value) -> RecordRead {
    let members: Vec<(&str, Value)> = [("model", "model"), ("key", "prompt_cache_key"), ("effort", "effort")]
        .into_iter()
        .filter_map(|(field, member)| message.get(member).map(|v| (field, v.clone())))
        .collect();
    if members.is_empty() {
        return RecordRead::None;
    }
    structured(&Value::obj(members))
}

/// F6 / schema `cache-state-record.v1`: exactly `model` (a string), `key` (a non-empty string)
/// and `effort` (a string or `null`).
fn structured(v: &Value) -> RecordRead {
    let record = || -> Option<Record> {
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
    };
    record().map_or(RecordRead::Malformed, RecordRead::Structured)
}

/// §9.1 "valid for model M", given the structure: the effort is an allowed effort for an
/// update-capable `M`, and `null` for any other `M`.
pub fn effort_valid_for(record: &Record, update_capable: bool) -> bool {
    match &record.effort {
        Some(e) => update_capable && is_allowed_effort(e),
        None => !update_capable,
    }
}

/// §9.1: one of the allowed efforts of an update-capable model.
pub fn is_allowed_effort(e: &WStr) -> bool {
    ALLOWED_EFFORTS.iter().any(|a| e.eq_str(a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value, ParseOptions};

    fn j(s: &str) -> Value {
        parse_value(s.as_bytes(), ParseOptions::STRICT).unwrap().0
    }

    fn with_channel(role: &str, channel: &str) -> Value {
        j(&format!(r#"{{"role":"{role}","channels":{{"{CACHE_CHANNEL}":{channel}}}}}"#))
    }

    #[test]
    fn f6_only_assistant_messages_carry_records() {
        assert_eq!(read_record(&with_channel("user", "null"), HistoryForm::Channels), RecordRead::None);
        assert_eq!(read_record(&with_channel("assistant", "null"), HistoryForm::Channels), RecordRead::Malformed);
        assert_eq!(read_record(&with_channel("assistant", "[]"), HistoryForm::Channels), RecordRead::None);
    }

    #[test]
    fn f6_structure_is_checked_first() {
        let ok = r#"[{"type":"text","text":"{\"model\":\"m\",\"key\":\"k\",\"effort\":null}"}]"#;
        let r = read_record(&with_channel("assistant", ok), HistoryForm::Channels);
        assert_eq!(r, RecordRead::Structured(Record { model: WStr::from("m"), key: WStr::from("k"), effort: None }));
        for bad in [
            r#"[{"type":"text","text":"{\"model\":\"m\",\"key\":\"\",\"effort\":null}"}]"#,
            r#"[{"type":"text","text":"{\"model\":\"m\",\"key\":\"k\",\"effort\":1}"}]"#,
            r#"[{"type":"text","text":"{\"model\":\"m\",\"key\":\"k\",\"effort\":null,\"x\":1}"}]"#,
            r#"[{"type":"text","text":"{\"model\":\"m\",\"model\":\"m\",\"key\":\"k\",\"effort\":null}"}]"#,
            r#"[{"type":"text","text":"x"},{"type":"text","text":"y"}]"#,
            r#"[{"type":"image"}]"#,
        ] {
            assert_eq!(
                read_record(&with_channel("assistant", bad), HistoryForm::Channels),
                RecordRead::Malformed,
                "{bad}"
            );
        }
    }

    #[test]
    fn cl3_items_form_records_are_the_three_members() {
        let m = j(r#"{"role":"assistant","items":[],"model":"m","effort":"low","prompt_cache_key":"k"}"#);
        let expected = Record { model: WStr::from("m"), key: WStr::from("k"), effort: Some(WStr::from("low")) };
        assert_eq!(read_record(&m, HistoryForm::Items), RecordRead::Structured(expected));
        assert_eq!(read_record(&j(r#"{"role":"assistant","items":[]}"#), HistoryForm::Items), RecordRead::None);
        assert_eq!(read_record(&j(r#"{"role":"assistant","model":"m"}"#), HistoryForm::Items), RecordRead::Malformed);
        assert_eq!(read_record(&j(r#"{"role":"user","model":"m"}"#), HistoryForm::Items), RecordRead::None);
    }

    #[test]
    fn section_9_1_validity_for_a_model() {
        let rec = |e: Option<&str>| Record { model: WStr::from("m"), key: WStr::from("k"), effort: e.map(WStr::from) };
        assert!(effort_valid_for(&rec(Some("xhigh")), true));
        assert!(!effort_valid_for(&rec(Some("minimal")), true));
        assert!(!effort_valid_for(&rec(None), true));
        assert!(effort_valid_for(&rec(None), false));
        assert!(!effort_valid_for(&rec(Some("low")), false));
    }
}

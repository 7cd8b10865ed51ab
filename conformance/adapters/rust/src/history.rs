//! A history as a request builder takes it (SPEC P2, and the two history forms of CL3).
//!
//! P2: an ordered list of messages, optionally with the history's provider (P4); each message
//! has a `role`, optionally the `provider` that produced it, its channels and its own provider
//! input items. CL3: in the *channels form* replay blocks are in the channel
//! `openai-reasoning-encrypted` and the cache-state record in `fast-agent-responses-cache-state`;
//! in the *items form* (`"form": "items"`, PROTOCOL.md "History forms") an assistant message's
//! reasoning items stand among its items, already read, and its record is its members `model`,
//! `effort` and `prompt_cache_key`.

use crate::json::{Value, WStr};

/// ST1: the replay channel.
pub const REPLAY_CHANNEL: &str = "openai-reasoning-encrypted";
/// ST2: the display channel.
pub const DISPLAY_CHANNEL: &str = "reasoning";
/// §9.1: the channel of cache-state records.
pub const CACHE_CHANNEL: &str = "fast-agent-responses-cache-state";
/// §9.1: the channel of staged tool media.
pub const TOOL_MEDIA_CHANNEL: &str = "fast-agent-tool-media-message";

/// CL3: the form a history is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryForm {
    Channels,
    Items,
}

/// P2: a history, in either form of CL3.
#[derive(Clone, Debug)]
pub struct History<'a> {
    pub form: HistoryForm,
    /// P4: the history's provider, for the messages that record none.
    pub provider: Option<WStr>,
    pub messages: &'a [Value],
}

impl<'a> History<'a> {
    /// Reads the `history` input of `replay` and `plan`. `Err` is a broken case: a value that
    /// is not a history in either form (PROTOCOL: `history.provider`, when present and not
    /// `null`, is a non-empty string; any other value is a broken case).
    pub fn from_value(history: &'a Value) -> Result<History<'a>, String> {
        let form = match history.get("form") {
            None | Some(Value::Null) => HistoryForm::Channels,
            Some(f) if f.is_str("items") => HistoryForm::Items,
            Some(_) => return Err("history.form is not \"items\"".into()),
        };
        let provider = match history.get("provider") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(_) => return Err("history.provider is not a non-empty string".into()),
        };
        let messages = match history.get("messages") {
            Some(Value::Array(m)) => m.as_slice(),
            _ => return Err("history.messages is not an array".into()),
        };
        for (i, m) in messages.iter().enumerate() {
            if !m.is_object() {
                return Err(format!("history.messages[{i}] is not an object"));
            }
            match m.get("items") {
                None | Some(Value::Null) | Some(Value::Array(_)) => {}
                Some(_) => return Err(format!("history.messages[{i}].items is not an array")),
            }
        }
        Ok(History { form, provider, messages })
    }
}

/// The `role` of a message is `role`.
pub fn has_role(message: &Value, role: &str) -> bool {
    matches!(message.get("role"), Some(r) if r.is_str(role))
}

/// P2: a message's own provider input items (in the items form, with its reasoning items
/// among them).
pub fn items(message: &Value) -> &[Value] {
    message.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// P4: the provider a message records: its `provider` member when that is a non-empty string
/// (any other value, `null`, `""` or an absent member records none).
pub fn recorded_provider(message: &Value) -> Option<&WStr> {
    match message.get("provider") {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}

/// The blocks of a channel of a message, when the channel is an array.
pub fn channel<'a>(message: &'a Value, name: &str) -> Option<&'a Vec<Value>> {
    message.get("channels").and_then(|c| c.get(name)).and_then(Value::as_array)
}

/// P2: a text block is an object whose `type` is `"text"` and whose `text` is a string (other
/// members ignored); its text.
pub fn text_of_block(block: &Value) -> Option<&WStr> {
    if block.is_object() && matches!(block.get("type"), Some(t) if t.is_str("text")) {
        block.get("text").and_then(Value::as_wstr)
    } else {
        None
    }
}

/// An item (an object) whose `type` is `t`.
/// SPEC §1.2 "Item of type T": its `type` member is the string T; an item with no `type` member
/// and a `role` member is of type `message` (the Responses API's short form of a message).
pub fn item_type_is(item: &Value, t: &str) -> bool {
    if !item.is_object() {
        return false;
    }
    match item.get("type") {
        Some(x) => x.is_str(t),
        None => t == "message" && item.get("role").is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value, ParseOptions};

    fn j(s: &str) -> Value {
        parse_value(s.as_bytes(), ParseOptions::STRICT).unwrap().0
    }

    #[test]
    fn an_item_with_a_role_and_no_type_is_a_message() {
        assert!(item_type_is(&j(r#"{"role":"user","content":"hi"}"#), "message"));
        assert!(!item_type_is(&j(r#"{"role":"user","content":"hi"}"#), "function_call"));
        assert!(!item_type_is(&j(r#"{"content":"hi"}"#), "message"));
        assert!(!item_type_is(&j(r#"{"type":"function_call","role":"user"}"#), "message"));
    }

    #[test]
    fn both_forms_are_read_and_broken_histories_refused() {
        let h = j(r#"{"messages":[],"provider":"responses"}"#);
        let read = History::from_value(&h).unwrap();
        assert_eq!((read.form, read.provider), (HistoryForm::Channels, Some(WStr::from("responses"))));
        let h = j(r#"{"form":"items","messages":[{"role":"user","items":[]}]}"#);
        assert_eq!(History::from_value(&h).unwrap().form, HistoryForm::Items);
        for bad in [
            r#"{"messages":{}}"#,
            r#"{"messages":[],"provider":""}"#,
            r#"{"messages":[5]}"#,
            r#"{"form":"x","messages":[]}"#,
        ] {
            assert!(History::from_value(&j(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn p4_only_a_non_empty_string_records_a_provider() {
        assert_eq!(recorded_provider(&j(r#"{"provider":"xai"}"#)), Some(&WStr::from("xai")));
        for m in [r#"{"provider":""}"#, r#"{"provider":null}"#, r#"{"provider":5}"#, r#"{}"#] {
            assert_eq!(recorded_provider(&j(m)), None, "{m}");
        }
    }

    #[test]
    fn p2_text_blocks_ignore_other_members() {
        assert!(text_of_block(&j(r#"{"type":"text","text":"x","annotations":[]}"#)).is_some());
        for b in [r#"{"type":"text"}"#, r#"{"type":"image","text":"x"}"#, r#""x""#, r#"{"type":"text","text":5}"#] {
            assert!(text_of_block(&j(b)).is_none(), "{b}");
        }
    }
}

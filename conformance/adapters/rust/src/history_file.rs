//! History files (SPEC H1): the shape of a file in fast-agent's saved-history form.

use crate::json::Value;

/// H1: whether a value has the shape of a history file: a top-level object whose `messages` is
/// an array of objects, each with `role` `"user"` or `"assistant"` and `content` an array, and
/// `tool_calls` and `tool_results` objects and `channels` an object of arrays when present. An
/// optional member set to `null` is absent. Other members are ignored.
pub fn has_history_shape(v: &Value) -> bool {
    let Some(Value::Array(messages)) = v.get("messages") else { return false };
    if !v.is_object() {
        return false;
    }
    messages.iter().all(|m| {
        m.is_object()
            && matches!(m.get("role"), Some(r) if r.is_str("user") || r.is_str("assistant"))
            && matches!(m.get("content"), Some(Value::Array(_)))
            && m.get_non_null("tool_calls").is_none_or(Value::is_object)
            && m.get_non_null("tool_results").is_none_or(Value::is_object)
            && match m.get_non_null("channels") {
                None => true,
                Some(Value::Object(ch)) => ch.iter().all(|(_, blocks)| matches!(blocks, Value::Array(_))),
                Some(_) => false,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value, ParseOptions};

    fn shaped(s: &str) -> bool {
        has_history_shape(&parse_value(s.as_bytes(), ParseOptions::STRICT).unwrap().0)
    }

    #[test]
    fn h1_shape_of_a_history_file() {
        assert!(shaped(
            r#"{"messages":[{"role":"user","content":[]},{"role":"assistant","content":[],"channels":{"reasoning":[]},"x":1}]}"#
        ));
        for bad in [
            r#"{"messages":{}}"#,
            r#"[]"#,
            r#"{"messages":[{"role":"tool","content":[]}]}"#,
            r#"{"messages":[{"role":"user"}]}"#,
            r#"{"messages":[{"role":"user","content":[],"channels":{"reasoning":{}}}]}"#,
            r#"{"messages":[{"role":"user","content":[],"tool_calls":[]}]}"#,
        ] {
            assert!(!shaped(bad), "{bad}");
        }
    }

    #[test]
    fn h1_an_optional_member_set_to_null_is_absent() {
        assert!(shaped(
            r#"{"messages":[{"role":"assistant","content":[],"channels":null,"tool_calls":null,"tool_results":null}]}"#
        ));
    }
}

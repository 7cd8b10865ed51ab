//! The rejections a plan makes before planning (SPEC F8), on the request's overrides
//! (`metadata`, `metadata.extra_body`) and the keys.

use crate::cache_state::is_allowed_effort;
use crate::json::{Value, WStr};

/// What F8's rows are decided on.
pub struct Request<'a> {
    /// The request's override object (`None` when absent or `null`).
    pub metadata: Option<&'a Value>,
    /// The requested model (`metadata.model`, else the configured model), any JSON value.
    pub requested_model: &'a Value,
    pub instance_key: &'a Value,
    /// §9.1: the desired effort (`None` when absent).
    pub desired_effort: Option<&'a Value>,
    /// F12: whether Part II governs the target (its issuer is `openai` or `codex`).
    pub governs: bool,
    /// §9.1: the update-capable registry (F12: none is update-capable for another target).
    pub update_capable: &'a [WStr],
}

impl Request<'_> {
    /// §9.1 with F12: a model is update-capable when it is in the registry and the target is
    /// one Part II governs.
    fn is_update_capable(&self, model: &Value) -> bool {
        self.governs && matches!(model, Value::String(s) if self.update_capable.contains(s))
    }
}

/// F8: a member present and not `null` (an explicit `null` counts as absent).
pub fn member<'v>(object: Option<&'v Value>, name: &str) -> Option<&'v Value> {
    object.and_then(|o| o.get_non_null(name))
}

/// K1: 32 lowercase hexadecimal digits.
fn is_instance_key_form(v: &Value) -> bool {
    v.as_wstr().is_some_and(|s| {
        s.as_bytes().len() == 32 && s.as_bytes().iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// F8: the checks in the order of the table (the last row, on the planned input, is the
/// planner's); the first that fails gives the code.
pub fn check(r: &Request) -> Result<(), &'static str> {
    let md = r.metadata;
    let eb = member(md, "extra_body");
    let uc = r.is_update_capable(r.requested_model);
    // The requested model is not a string.
    if !matches!(r.requested_model, Value::String(_)) {
        return Err("plan_model_invalid");
    }
    // `metadata.prompt_cache_key` is not a non-empty string; or the instance key can be the
    // key sent (K2: a governed target without an explicit key; F12: any other target, always)
    // and is not 32 lowercase hex digits.
    let explicit_key = member(md, "prompt_cache_key");
    if explicit_key.is_some_and(|k| !matches!(k, Value::String(s) if !s.is_empty())) {
        return Err("plan_cache_key_invalid");
    }
    let instance_key_sendable = !r.governs || explicit_key.is_none();
    if instance_key_sendable && !is_instance_key_form(r.instance_key) {
        return Err("plan_cache_key_invalid");
    }
    if eb.is_some_and(|e| !e.is_object()) {
        return Err("plan_extra_body_invalid");
    }
    // `extra_body.model` switches into or out of an update-capable model.
    if let Some(m) = member(eb, "model") {
        if uc || r.is_update_capable(m) {
            return Err("plan_model_boundary");
        }
    }
    if uc {
        check_update_capable(md, eb, r.desired_effort)
    } else if member(md, "reasoning").is_some_and(|x| !x.is_object()) {
        Err("plan_effort_invalid")
    } else {
        Ok(())
    }
}

/// F8's rows that apply to an update-capable model, in order. `truncation`,
/// `context_management`, `multi_agent`, `input` and `previous_response_id` are looked up in
/// `metadata` and in `extra_body`; `reasoning` only in `metadata`.
fn check_update_capable(md: Option<&Value>, eb: Option<&Value>, desired: Option<&Value>) -> Result<(), &'static str> {
    if member(eb, "reasoning").is_some() || member(eb, "prompt_cache_key").is_some() {
        return Err("plan_extra_body_override");
    }
    let both = [md, eb];
    if both.iter().any(|o| member(*o, "input").is_some() || member(*o, "previous_response_id").is_some()) {
        return Err("plan_raw_input_override");
    }
    for o in both {
        if member(o, "truncation").is_some_and(|t| !t.is_str("disabled")) {
            return Err("plan_auto_context_management");
        }
        let empty = |cm: &Value| {
            matches!(cm, Value::Array(a) if a.is_empty()) || matches!(cm, Value::Object(m) if m.is_empty())
        };
        if member(o, "context_management").is_some_and(|cm| !empty(cm)) {
            return Err("plan_auto_context_management");
        }
    }
    if member(member(md, "reasoning"), "mode").is_some_and(|m| !m.is_str("standard")) {
        return Err("plan_mode_unsupported");
    }
    for o in both {
        if let Some(ma) = member(o, "multi_agent") {
            let enabled = ma.get_non_null("enabled");
            if !ma.is_object() || enabled.is_some_and(|e| !matches!(e, Value::Bool(false))) {
                return Err("plan_mode_unsupported");
            }
        }
    }
    // `metadata.reasoning` present and not an object (`null` included: a request-level `null`
    // would erase the baseline); or the desired effort absent or not allowed.
    if md.and_then(|m| m.get("reasoning")).is_some_and(|x| !x.is_object()) {
        return Err("plan_effort_invalid");
    }
    if !matches!(desired, Some(Value::String(e)) if is_allowed_effort(e)) {
        return Err("plan_effort_invalid");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value, ParseOptions};

    const KEY: &str = "0123456789abcdef0123456789abcdef";

    fn j(s: &str) -> Value {
        parse_value(s.as_bytes(), ParseOptions::STRICT).unwrap().0
    }

    fn checked(metadata: &str, model: &str, instance_key: &str, governs: bool) -> Result<(), &'static str> {
        let md = j(metadata);
        let model = j(model);
        let key = j(instance_key);
        let desired = md.get("reasoning").and_then(|r| r.get_non_null("effort")).cloned().unwrap_or(Value::str("low"));
        let registry = [WStr::from("gpt-6-astra")];
        check(&Request {
            metadata: Some(&md),
            requested_model: &model,
            instance_key: &key,
            desired_effort: Some(&desired),
            governs,
            update_capable: &registry,
        })
    }

    #[test]
    fn f8_rows_in_table_order() {
        let k = format!("\"{KEY}\"");
        let astra = "\"gpt-6-astra\"";
        assert_eq!(checked(r#"{"prompt_cache_key":""}"#, "5", &k, true), Err("plan_model_invalid"));
        assert_eq!(checked(r#"{"prompt_cache_key":""}"#, astra, &k, true), Err("plan_cache_key_invalid"));
        assert_eq!(checked(r#"{"extra_body":[]}"#, astra, &k, true), Err("plan_extra_body_invalid"));
        assert_eq!(checked(r#"{"extra_body":{"model":"gpt-4o"}}"#, astra, &k, true), Err("plan_model_boundary"));
        assert_eq!(
            checked(r#"{"extra_body":{"model":"gpt-6-astra"}}"#, "\"gpt-4o\"", &k, true),
            Err("plan_model_boundary")
        );
        assert_eq!(checked(r#"{"extra_body":{"reasoning":{}}}"#, astra, &k, true), Err("plan_extra_body_override"));
        assert_eq!(checked(r#"{"input":[]}"#, astra, &k, true), Err("plan_raw_input_override"));
        assert_eq!(
            checked(r#"{"extra_body":{"truncation":"auto"}}"#, astra, &k, true),
            Err("plan_auto_context_management")
        );
        assert_eq!(
            checked(r#"{"context_management":[{"type":"compaction"}]}"#, astra, &k, true),
            Err("plan_auto_context_management")
        );
        assert_eq!(checked(r#"{"multi_agent":{"enabled":true}}"#, astra, &k, true), Err("plan_mode_unsupported"));
        assert_eq!(checked(r#"{"reasoning":null}"#, astra, &k, true), Err("plan_effort_invalid"));
        assert_eq!(checked(r#"{"reasoning":{"effort":"minimal"}}"#, astra, &k, true), Err("plan_effort_invalid"));
    }

    #[test]
    fn f8_nulls_ask_for_nothing() {
        let md = r#"{"model":null,"prompt_cache_key":null,"extra_body":null,"truncation":null,"multi_agent":null,"input":null,"context_management":{}}"#;
        assert_eq!(checked(md, "\"gpt-6-astra\"", &format!("\"{KEY}\""), true), Ok(()));
        // Other models: rows 1–4 and `metadata.reasoning` that is not an object.
        assert_eq!(
            checked(r#"{"reasoning":null,"truncation":"auto"}"#, "\"gpt-4o\"", &format!("\"{KEY}\""), true),
            Ok(())
        );
        assert_eq!(
            checked(r#"{"reasoning":"high"}"#, "\"gpt-4o\"", &format!("\"{KEY}\""), true),
            Err("plan_effort_invalid")
        );
    }

    #[test]
    fn f8_the_instance_key_is_checked_only_where_it_can_be_sent() {
        let astra = "\"gpt-6-astra\"";
        assert_eq!(checked(r#"{}"#, astra, "5", true), Err("plan_cache_key_invalid"));
        assert_eq!(checked(r#"{}"#, astra, "\"ABC\"", true), Err("plan_cache_key_invalid"));
        assert_eq!(checked(r#"{"prompt_cache_key":"mine"}"#, astra, "5", true), Ok(()));
        // F12: another target sends the instance key whatever the explicit key.
        assert_eq!(checked(r#"{"prompt_cache_key":"mine"}"#, astra, "5", false), Err("plan_cache_key_invalid"));
        // F12: no model is update-capable for another target.
        assert_eq!(
            checked(r#"{"extra_body":{"model":"gpt-6-astra"},"input":[]}"#, astra, &format!("\"{KEY}\""), false),
            Ok(())
        );
    }
}

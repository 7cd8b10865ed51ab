//! Display consistent with replay (SPEC ST3): the display text of a reasoning item, and
//! whether a message's display channel is consistent with its replay items.

use crate::history::text_of_block;
use crate::json::{Value, WStr};

/// ST3: the trimmed characters (Python's `str.strip()` whitespace).
fn is_trim_char(c: u32) -> bool {
    matches!(c, 0x09..=0x0D | 0x1C..=0x20 | 0x85 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000)
}

/// ST3: a text with its leading and trailing trimmed characters removed.
fn trim(cps: &[u32]) -> &[u32] {
    let start = cps.iter().position(|&c| !is_trim_char(c)).unwrap_or(cps.len());
    let end = cps.iter().rposition(|&c| !is_trim_char(c)).map_or(start, |e| e + 1);
    &cps[start..end.max(start)]
}

/// ST3: the body of a trimmed text: what follows the closing `**` of a leading `**…**` heading
/// when that `**` is at character index 3 or more and is followed by U+000A or U+000D; else the
/// text itself.
fn body(t: &[u32]) -> &[u32] {
    let star = '*' as u32;
    if t.len() >= 2 && t[0] == star && t[1] == star {
        if let Some(k) = (2..t.len().saturating_sub(1)).find(|&k| t[k] == star && t[k + 1] == star) {
            if k >= 3 && matches!(t.get(k + 2), Some(0x0A) | Some(0x0D)) {
                return &t[k + 2..];
            }
        }
    }
    t
}

/// ST3: the display text of a reasoning item, from its `summary` parts only (its `content`
/// parts never give display text): each part's `text` trimmed; the trimmed texts that are empty,
/// or whose body, trimmed, is `<!-- -->`, dropped; the trimmed texts left (never their bodies)
/// joined with two U+000A. `None` when no text is left.
pub fn display_text(item: &Value) -> Option<WStr> {
    let parts: Vec<Vec<u32>> = item
        .get("summary")
        .and_then(Value::as_array)
        .map(|parts| {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_wstr)).map(WStr::code_points).collect()
        })
        .unwrap_or_default();
    let placeholder: Vec<u32> = "<!-- -->".chars().map(|c| c as u32).collect();
    let kept: Vec<&[u32]> =
        parts.iter().map(|p| trim(p)).filter(|t| !t.is_empty() && trim(body(t)) != placeholder.as_slice()).collect();
    if kept.is_empty() {
        return None;
    }
    let mut out = WStr::new();
    for (i, t) in kept.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        for &c in t.iter() {
            out.push_cp(c);
        }
    }
    Some(out)
}

/// ST3: the display texts of the replay items, in order, are a subsequence of the texts of the
/// display channel's text blocks.
pub fn display_consistent(items: &[Value], display_blocks: &[Value]) -> bool {
    let shown: Vec<&WStr> = display_blocks.iter().filter_map(text_of_block).collect();
    let mut next = 0;
    for want in items.iter().filter_map(display_text) {
        match shown[next..].iter().position(|s| **s == want) {
            Some(k) => next += k + 1,
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value, quote, ParseOptions};

    fn j(s: &str) -> Value {
        parse_value(s.as_bytes(), ParseOptions::STRICT).unwrap().0
    }

    fn item(id: &str, c: &str, summary: &[&str]) -> Value {
        let parts = summary
            .iter()
            .map(|t| Value::obj(vec![("type", Value::str("summary_text")), ("text", Value::str(t))]))
            .collect();
        Value::obj(vec![
            ("type", Value::str("reasoning")),
            ("id", Value::str(id)),
            ("summary", Value::Array(parts)),
            ("encrypted_content", Value::str(c)),
        ])
    }

    fn block_json(text: &str) -> String {
        format!(r#"{{"type":"text","text":{}}}"#, String::from_utf8(quote(&WStr::from(text))).unwrap())
    }

    #[test]
    fn st3_display_text() {
        assert_eq!(display_text(&item("a", "c", &["  Hello ", "", "\u{3000}"])), Some(WStr::from("Hello")));
        assert_eq!(display_text(&item("a", "c", &["**Title**\n<!-- -->", "b"])), Some(WStr::from("b")));
        assert_eq!(display_text(&item("a", "c", &[" <!-- --> "])), None);
        assert_eq!(display_text(&item("a", "c", &["**T**\nbody", "x"])), Some(WStr::from("**T**\nbody\n\nx")));
        // `**` at index 2 is not a heading: the text is its own body.
        assert_eq!(display_text(&item("a", "c", &["****\n<!-- -->"])), Some(WStr::from("****\n<!-- -->")));
        // Content parts never give display text.
        let with_content = j(
            r#"{"type":"reasoning","summary":[{"type":"summary_text","text":""}],"content":[{"type":"reasoning_text","text":" r "}]}"#,
        );
        assert_eq!(display_text(&with_content), None);
    }

    #[test]
    fn st3_subsequence_with_other_blocks() {
        let items = vec![item("a", "c", &["one"]), item("b", "c", &[]), item("c", "c", &["two"])];
        let blocks = |texts: &[&str]| -> Vec<Value> { texts.iter().map(|t| j(&block_json(t))).collect() };
        assert!(display_consistent(&items, &blocks(&["streamed", "one", "x", "two"])));
        assert!(!display_consistent(&items, &blocks(&["two", "one"])));
        assert!(!display_consistent(&items, &blocks(&["one"])));
        assert!(display_consistent(&items[1..2], &blocks(&[])));
    }
}

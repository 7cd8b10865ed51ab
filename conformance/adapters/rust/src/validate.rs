//! Stored-history validation (SPEC H3: what a validator reports; H4: permission findings).

use crate::cache_state::{effort_valid_for, read_record, RecordRead, DEFAULT_UPDATE_CAPABLE};
use crate::dedupe::{Decision, Deduper};
use crate::display::display_consistent;
use crate::envelope::{read_block, Verdict};
use crate::history::{
    channel, has_role, recorded_provider, text_of_block, HistoryForm, DISPLAY_CHANNEL, REPLAY_CHANNEL,
};
use crate::history_file::has_history_shape;
use crate::json::{parse_document, ParseOptions, Value, WStr};
use crate::providers::ProviderNames;

/// H3: the severity of a code.
pub fn severity(code: &str) -> &'static str {
    match code {
        "legacy_minimal_record"
        | "raw_sdk_snapshot"
        | "dedupe_exact_duplicate"
        | "dedupe_id_ciphertext_conflict"
        | "block_not_text"
        | "replay_channel_misplaced"
        | "display_replay_mismatch" => "warning",
        "redacted_record" => "note",
        _ => "error",
    }
}

/// One finding of H3 (the file path is the caller's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub code: &'static str,
    pub location: Option<(usize, usize)>,
    /// The position in H3's list, ordering the findings of one block.
    rank: u8,
}

impl Finding {
    fn file(code: &'static str) -> Finding {
        Finding { code, location: None, rank: 0 }
    }

    pub fn to_value(&self) -> Value {
        let mut m = vec![("code", Value::str(self.code)), ("severity", Value::str(severity(self.code)))];
        if let Some((mi, bi)) = self.location {
            m.push(("message_index", Value::int(mi as u64)));
            m.push(("block_index", Value::int(bi as u64)));
        }
        Value::obj(m)
    }
}

/// The history text handed to the validator.
pub enum HistoryText<'a> {
    /// Bytes (from `history_text_base64`): must be UTF-8.
    Bytes(&'a [u8]),
    /// Characters (WTF-8): must hold no surrogate code point, which has no UTF-8.
    Chars(&'a WStr),
}

impl HistoryText<'_> {
    /// H3: the text has no UTF-8 (`history_unreadable`), checked before any grammar: bytes that
    /// are not UTF-8, or characters that hold a surrogate code point, inside a string or outside
    /// one (as E6 step 2 says of a block). An *escaped* lone surrogate (`\ud800`) is six ASCII
    /// characters, so it is not one: H1 accepts it.
    fn is_unreadable(&self) -> bool {
        match self {
            HistoryText::Bytes(b) => std::str::from_utf8(b).is_err(),
            HistoryText::Chars(s) => s.has_surrogate(),
        }
    }
}

/// Options of one validation.
pub struct ValidateOptions<'a> {
    /// H3: the file's provider (messages that record none, and the target).
    pub provider: WStr,
    /// P4: the registry of §18.2 extended by the validator's provider-name mapping.
    pub names: ProviderNames,
    /// H4: the file's and its directory's permission bits, when known.
    pub file_mode: Option<u32>,
    pub directory_mode: Option<u32>,
    pub file_name: Option<&'a WStr>,
}

/// H3: the report of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub findings: Vec<Finding>,
    pub resumable: u64,
    pub legacy: u64,
    pub redacted: u64,
    pub malformed: u64,
    pub replays_as_stored: bool,
    pub provider_mismatch: u64,
}

impl Report {
    pub fn to_value(&self) -> Value {
        Value::obj(vec![
            ("findings", Value::Array(self.findings.iter().map(Finding::to_value).collect())),
            (
                "counts",
                Value::obj(vec![
                    ("resumable", Value::int(self.resumable)),
                    ("legacy", Value::int(self.legacy)),
                    ("redacted", Value::int(self.redacted)),
                    ("malformed", Value::int(self.malformed)),
                ]),
            ),
            ("replays_as_stored", Value::Bool(self.replays_as_stored)),
            ("provider_mismatch", Value::int(self.provider_mismatch)),
        ])
    }
}

/// H4: group or other permission bits set.
fn too_open(mode: Option<u32>) -> bool {
    mode.is_some_and(|m| m & 0o077 != 0)
}

/// H3/H4: validates one history file. Never fails: a broken file is a finding (E4.2).
pub fn validate(text: HistoryText, opts: &ValidateOptions) -> Report {
    let mut report = Report::default();
    // File-level findings first: unreadable/malformed, then permissions (file, directory).
    let is_session_metadata = opts.file_name.is_some_and(|n| n.eq_str("session.json"));
    let mut history = None;
    if !is_session_metadata {
        let bytes: &[u8] = match &text {
            HistoryText::Bytes(b) => b,
            HistoryText::Chars(s) => s.as_bytes(),
        };
        if text.is_unreadable() {
            report.findings.push(Finding::file("history_unreadable"));
        } else {
            // H1: one JSON text every parser reads as one value: RFC 8259's grammar (no
            // byte-order mark, no `NaN`, no trailing data) and no member named twice at any
            // depth; an escaped lone surrogate is accepted.
            match parse_document(bytes, ParseOptions::STRICT) {
                Ok((node, flags)) if !flags.duplicate_member => {
                    let v = node.to_value(bytes);
                    if has_history_shape(&v) {
                        history = Some(v);
                    } else {
                        report.findings.push(Finding::file("history_malformed"));
                    }
                }
                _ => report.findings.push(Finding::file("history_malformed")),
            }
        }
    }
    if too_open(opts.file_mode) {
        report.findings.push(Finding::file("file_mode_too_open"));
    }
    if too_open(opts.directory_mode) {
        report.findings.push(Finding::file("directory_mode_too_open"));
    }
    match history {
        Some(h) => check_messages(&h, opts, &mut report),
        None => report.replays_as_stored = is_session_metadata,
    }
    report
}

/// H3: the block-level findings, counts and replay verdict of a history of H1's shape.
fn check_messages(history: &Value, opts: &ValidateOptions, report: &mut Report) {
    let messages = history.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut located: Vec<Finding> = Vec::new();
    let mut dedupe = Deduper::new();
    let mut as_stored = true;
    let registry = [WStr::from(DEFAULT_UPDATE_CAPABLE)];
    let file_issuer = opts.names.issuer_of(&opts.provider);
    for (mi, m) in messages.iter().enumerate() {
        let at = |code, bi, rank| Finding { code, location: Some((mi, bi)), rank };
        let is_assistant = has_role(m, "assistant");
        let blocks: &[Value] = channel(m, REPLAY_CHANNEL).map(|b| b.as_slice()).unwrap_or(&[]);
        if !is_assistant {
            // A replay channel on another message is not read: each of its blocks, whatever it
            // is, is `replay_channel_misplaced`, counted nowhere, and never replayed.
            for bi in 0..blocks.len() {
                located.push(at("replay_channel_misplaced", bi, 0));
                as_stored = false;
            }
            continue;
        }
        // P4: a block's issuer is its message's recorded provider's, else the file's.
        let issuer = recorded_provider(m).map_or_else(|| file_issuer.clone(), |p| opts.names.issuer_of(p));
        let mut items = Vec::new();
        let mut all_resumable = true;
        for (bi, block) in blocks.iter().enumerate() {
            let Some(text) = text_of_block(block) else {
                located.push(at("block_not_text", bi, 0));
                report.malformed += 1;
                all_resumable = false;
                continue;
            };
            let item = match read_block(text.as_bytes()) {
                Verdict::Resumable(item) => item,
                Verdict::Code(code) => {
                    located.push(at(code, bi, 0));
                    match code {
                        "legacy_minimal_record" | "raw_sdk_snapshot" => report.legacy += 1,
                        "redacted_record" => report.redacted += 1,
                        _ => report.malformed += 1,
                    }
                    all_resumable = false;
                    continue;
                }
            };
            report.resumable += 1;
            // H3: a block that would not replay to the file's provider takes no part in the
            // file's deduplication.
            if issuer != file_issuer {
                report.provider_mismatch += 1;
            } else {
                match dedupe.decide(&issuer, &item) {
                    Decision::Keep => {}
                    Decision::DropDuplicate => located.push(at("dedupe_exact_duplicate", bi, 2)),
                    Decision::KeepConflict => located.push(at("dedupe_id_ciphertext_conflict", bi, 2)),
                }
            }
            items.push(item);
        }
        // F6, checked against the record's own model.
        match read_record(m, HistoryForm::Channels) {
            RecordRead::None => {}
            RecordRead::Malformed => located.push(at("cache_state_invalid", 0, 1)),
            RecordRead::Structured(r) => {
                if !effort_valid_for(&r, registry.contains(&r.model)) {
                    located.push(at("cache_state_invalid", 0, 1));
                }
            }
        }
        // ST3: checked when the display channel holds a block and the replay channel holds at
        // least one block, every one resumable.
        if let Some(display) = channel(m, DISPLAY_CHANNEL) {
            if !display.is_empty() && !blocks.is_empty() && all_resumable && !display_consistent(&items, display) {
                located.push(at("display_replay_mismatch", 0, 3));
            }
        }
    }
    located.sort_by_key(|f| (f.location, f.rank));
    if report.resumable != blocks_total(&messages) || report.provider_mismatch > 0 || dedupe.exact_count > 0 {
        as_stored = false;
    }
    report.replays_as_stored = as_stored;
    report.findings.extend(located);
}

/// The number of replay blocks of the assistant messages.
fn blocks_total(messages: &[Value]) -> u64 {
    messages
        .iter()
        .filter(|m| has_role(m, "assistant"))
        .map(|m| channel(m, REPLAY_CHANNEL).map_or(0, |b| b.len() as u64))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::canonical_text;
    use crate::json::quote;

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

    fn run(history: &str) -> Report {
        let w = WStr::from(history);
        validate(
            HistoryText::Chars(&w),
            &ValidateOptions {
                provider: WStr::from("openai"),
                names: ProviderNames::registry_only(),
                file_mode: None,
                directory_mode: None,
                file_name: None,
            },
        )
    }

    fn codes(r: &Report) -> Vec<(&'static str, Option<(usize, usize)>)> {
        r.findings.iter().map(|f| (f.code, f.location)).collect()
    }

    #[test]
    fn h3_findings_counts_and_order() {
        let ok = canonical_text(&item("a", "c", &["S"]));
        let h = format!(
            r#"{{"messages":[
              {{"role":"user","content":[],"channels":{{"{REPLAY_CHANNEL}":[{}]}}}},
              {{"role":"assistant","content":[],"channels":{{"{REPLAY_CHANNEL}":[{},{},{},"x",{}],
                 "fast-agent-responses-cache-state":[{{"type":"text","text":"nope"}}],
                 "reasoning":[{{"type":"text","text":"other"}}]}}}},
              {{"role":"assistant","provider":"xai","content":[],"channels":{{"{REPLAY_CHANNEL}":[{}]}}}}
            ]}}"#,
            block_json("{}"),
            block_json(&ok),
            block_json(&ok),
            block_json(r#"{"id":"a","encrypted_content":"c"}"#),
            block_json(&canonical_text(&item("a", "d", &[]))),
            block_json(&ok),
        );
        let r = run(&h);
        assert_eq!(
            codes(&r),
            [
                ("replay_channel_misplaced", Some((0, 0))),
                ("cache_state_invalid", Some((1, 0))),
                ("dedupe_exact_duplicate", Some((1, 1))),
                ("legacy_minimal_record", Some((1, 2))),
                ("block_not_text", Some((1, 3))),
                ("dedupe_id_ciphertext_conflict", Some((1, 4))),
            ]
        );
        assert_eq!((r.resumable, r.legacy, r.redacted, r.malformed, r.provider_mismatch), (4, 1, 0, 1, 1));
        assert!(!r.replays_as_stored);
    }

    #[test]
    fn h3_display_mismatch_and_clean_history() {
        let ok = canonical_text(&item("a", "c", &["Shown"]));
        let h = |display: &str| {
            format!(
                r#"{{"messages":[{{"role":"assistant","content":[],"channels":{{"reasoning":[{}],"{REPLAY_CHANNEL}":[{}]}}}}]}}"#,
                block_json(display),
                block_json(&ok)
            )
        };
        let r = run(&h("Shown"));
        assert!(r.findings.is_empty());
        assert!(r.replays_as_stored);
        let r = run(&h("Other"));
        assert_eq!(codes(&r), [("display_replay_mismatch", Some((0, 0)))]);
        assert_eq!(r.findings[0].to_value().get("severity").unwrap().as_str(), Some("warning"));
    }

    #[test]
    fn h3_a_misplaced_replay_channel_is_reported_per_block_and_counted_nowhere() {
        let ok = canonical_text(&item("a", "c", &["S"]));
        let h = format!(
            r#"{{"messages":[{{"role":"user","content":[],"channels":{{"{REPLAY_CHANNEL}":[{},{{"type":"image"}}]}}}}]}}"#,
            block_json(&ok)
        );
        let r = run(&h);
        assert_eq!(codes(&r), [("replay_channel_misplaced", Some((0, 0))), ("replay_channel_misplaced", Some((0, 1)))]);
        assert_eq!(r.findings[0].to_value().get("severity").unwrap().as_str(), Some("warning"));
        assert_eq!((r.resumable, r.legacy, r.redacted, r.malformed), (0, 0, 0, 0));
        assert!(!r.replays_as_stored);
    }

    #[test]
    fn h1_a_member_named_twice_at_any_depth_is_no_history() {
        for h in [
            r#"{"messages":[],"messages":[]}"#,
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"x","text":"y"}]}]}"#,
        ] {
            assert_eq!(codes(&run(h)), [("history_malformed", None)], "{h}");
        }
        // An escaped lone surrogate is JSON every parser reads alike: accepted.
        assert!(run(r#"{"messages":[{"role":"user","content":[{"type":"text","text":"\ud800"}]}]}"#)
            .findings
            .is_empty());
    }

    /// The characters of `text` with the surrogate code point `cp` put where `@` stands.
    fn with_surrogate(text: &str, cp: u32) -> WStr {
        let (before, after) = text.split_once('@').unwrap();
        let mut w = WStr::from(before);
        w.push_cp(cp);
        w.push_str(after);
        w
    }

    fn run_chars(history: &WStr) -> Report {
        validate(
            HistoryText::Chars(history),
            &ValidateOptions {
                provider: WStr::from("openai"),
                names: ProviderNames::registry_only(),
                file_mode: None,
                directory_mode: None,
                file_name: None,
            },
        )
    }

    #[test]
    fn h3_a_surrogate_code_point_in_a_string_is_unreadable() {
        let w =
            with_surrogate(r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hello @"}]}]}"#, 0xD800);
        let r = run_chars(&w);
        assert_eq!(codes(&r), [("history_unreadable", None)]);
        assert_eq!((r.resumable, r.malformed, r.replays_as_stored), (0, 0, false));
    }

    #[test]
    fn h3_a_surrogate_code_point_outside_strings_is_unreadable_before_any_grammar() {
        let w = with_surrogate(r#"@{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#, 0xDC00);
        assert_eq!(codes(&run_chars(&w)), [("history_unreadable", None)]);
    }

    #[test]
    fn h3_an_astral_character_is_no_surrogate() {
        let w = with_surrogate(r#"{"messages":[{"role":"user","content":[{"type":"text","text":"@"}]}]}"#, 0x1F600);
        assert!(run_chars(&w).findings.is_empty());
    }

    #[test]
    fn h3_file_level_findings() {
        let r = run("{\"messages\": 5}");
        assert_eq!(codes(&r), [("history_malformed", None)]);
        assert!(!r.replays_as_stored);
        let r = run("not json");
        assert_eq!(codes(&r), [("history_malformed", None)]);
        let bad = [0xffu8];
        let r = validate(
            HistoryText::Bytes(&bad),
            &ValidateOptions {
                provider: WStr::from("openai"),
                names: ProviderNames::registry_only(),
                file_mode: Some(0o644),
                directory_mode: Some(0o755),
                file_name: None,
            },
        );
        assert_eq!(
            codes(&r),
            [("history_unreadable", None), ("file_mode_too_open", None), ("directory_mode_too_open", None)]
        );
        let ok = validate(
            HistoryText::Chars(&WStr::from("{\"messages\":[]}")),
            &ValidateOptions {
                provider: WStr::from("openai"),
                names: ProviderNames::registry_only(),
                file_mode: Some(0o600),
                directory_mode: Some(0o700),
                file_name: None,
            },
        );
        assert!(ok.findings.is_empty() && ok.replays_as_stored);
    }
}

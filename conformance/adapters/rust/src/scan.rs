//! Leak scanning (SPEC H8): replay material found outside history files.

use std::collections::HashSet;

use crate::envelope::SCHEMA;
use crate::json::{Node, NodeKind, WStr};
use crate::redaction::normal_form;
use crate::sha256::hex_digest;
use crate::textforms::{decodings, read_gap, RunKind, MAX_DECODINGS};
use crate::textscan::{gaps, is_colon_space, read_text, Fragment, Piece, Reading};

/// H8: a string value of a member named `encrypted_content` (and an assignment's value, and a
/// fragment's value that does not read) is reported from this many characters.
pub const MIN_CIPHERTEXT_CHARS: usize = 16;
/// H8: a file is text when no NUL byte is in its first 8 KiB (and it is UTF-8).
const NUL_WINDOW: usize = 8 * 1024;

/// H8: what a finding reports (the value itself never).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingCode {
    ReplayMaterialExposed,
    ScanFileNotText,
}

impl FindingCode {
    pub fn name(self) -> &'static str {
        match self {
            FindingCode::ReplayMaterialExposed => "replay_material_exposed",
            FindingCode::ScanFileNotText => "scan_file_not_text",
        }
    }
}

/// H8: one finding: its line (from 1), its code and the first 12 hex digits of the digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanFinding {
    pub line: usize,
    pub code: FindingCode,
    pub sha256_prefix: String,
}

/// A finding inside one text read from the file: where it stands (a byte offset of that text)
/// and the full digest.
#[derive(Clone, Debug)]
struct Found {
    at: usize,
    digest: String,
}

/// H8: a file's contents as text: the byte-order mark's encoding, else UTF-8 with no NUL byte
/// in the first 8 KiB. `None` in the second member when the file is not text; it is then read
/// all the same as UTF-8 with U+FFFD for what is not.
fn file_text(bytes: &[u8]) -> (WStr, bool) {
    if let Some((text, ok)) = by_byte_order_mark(bytes) {
        return (text, ok);
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => (WStr::from(s), !bytes[..bytes.len().min(NUL_WINDOW)].contains(&0)),
        Err(_) => (WStr::from(String::from_utf8_lossy(bytes).into_owned()), false),
    }
}

/// H8: a file that starts with a byte-order mark (UTF-8, UTF-16 or UTF-32) is read in that
/// encoding, without the mark; whether its bytes are what the encoding allows.
fn by_byte_order_mark(b: &[u8]) -> Option<(WStr, bool)> {
    let units = |body: &[u8], width: usize, big: bool| -> Vec<u32> {
        body.chunks(width)
            .map(|c| {
                let mut v = 0u32;
                for k in 0..c.len() {
                    let byte = if big { c[k] } else { c[c.len() - 1 - k] } as u32;
                    v = (v << 8) | byte;
                }
                v
            })
            .collect()
    };
    let decode_utf16 = |body: &[u8], big: bool| -> (WStr, bool) {
        let u: Vec<u16> = units(body, 2, big).into_iter().map(|x| x as u16).collect();
        let text: String = char::decode_utf16(u.iter().copied()).map(|r| r.unwrap_or('\u{FFFD}')).collect();
        let ok = body.len().is_multiple_of(2) && char::decode_utf16(u).all(|r| r.is_ok());
        (WStr::from(text), ok)
    };
    let decode_utf32 = |body: &[u8], big: bool| -> (WStr, bool) {
        let u = units(body, 4, big);
        let text: String = u.iter().map(|&cp| char::from_u32(cp).unwrap_or('\u{FFFD}')).collect();
        let ok = body.len().is_multiple_of(4) && u.iter().all(|&cp| char::from_u32(cp).is_some());
        (WStr::from(text), ok)
    };
    if let Some(body) = b.strip_prefix(&[0x00, 0x00, 0xFE, 0xFF]) {
        Some(decode_utf32(body, true))
    } else if let Some(body) = b.strip_prefix(&[0xFF, 0xFE, 0x00, 0x00]) {
        Some(decode_utf32(body, false))
    } else if let Some(body) = b.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        let ok = std::str::from_utf8(body).is_ok();
        Some((WStr::from(String::from_utf8_lossy(body).into_owned()), ok))
    } else if let Some(body) = b.strip_prefix(&[0xFE, 0xFF]) {
        Some(decode_utf16(body, true))
    } else {
        b.strip_prefix(&[0xFF, 0xFE]).map(|body| decode_utf16(body, false))
    }
}

/// H8: scans one file's contents. A file that is not text is first a `scan_file_not_text`
/// finding (line 1, the digest of its bytes). A file that is one JSON value is read as that
/// value (a finding's line is where its value starts); any other file line by line, a line that
/// ends with a fragment's name (and colon) read together with the lines after it up to its
/// value. Findings in line order, then in order of appearance.
pub fn scan(bytes: &[u8]) -> Vec<ScanFinding> {
    let (text, is_text) = file_text(bytes);
    let mut out = Vec::new();
    if !is_text {
        let prefix = hex_digest(bytes)[..12].to_string();
        out.push(ScanFinding { line: 1, code: FindingCode::ScanFileNotText, sha256_prefix: prefix });
    }
    let t = text.as_bytes();
    let line_of =
        |base: usize, text: &[u8], at: usize| base + text[..at.min(text.len())].iter().filter(|&&c| c == b'\n').count();
    let mut found: Vec<(usize, Found)> = Vec::new();
    if matches!(read_text(t), Reading::Whole(_)) {
        found.extend(text_findings(t, None, 0, &HashSet::new()).into_iter().map(|f| (line_of(1, t, f.at), f)));
    } else {
        for (first_line, group) in line_groups(t) {
            let group = group.as_slice();
            let fs = text_findings(group, None, 0, &HashSet::new());
            found.extend(fs.into_iter().map(|f| (line_of(first_line, group, f.at), f)));
        }
    }
    // Stable: within a line, in order of appearance.
    found.sort_by_key(|(line, f)| (*line, f.at));
    out.extend(found.into_iter().map(|(line, f)| ScanFinding {
        line,
        code: FindingCode::ReplayMaterialExposed,
        sha256_prefix: f.digest[..12].to_string(),
    }));
    out
}

/// H8: the file's lines (numbered from 1), a line that ends with a fragment's name (and colon)
/// joined with the lines after it up to its value.
fn line_groups(t: &[u8]) -> Vec<(usize, Vec<u8>)> {
    let lines: Vec<&[u8]> = t.split(|&c| c == b'\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let first = i;
        let mut group = lines[i].to_vec();
        while awaits_value(&group) && i + 1 < lines.len() {
            i += 1;
            group.push(b'\n');
            group.extend_from_slice(lines[i]);
        }
        out.push((first + 1, group));
        i += 1;
    }
    out
}

/// Whether a text ends with an `encrypted_content` fragment's name (any ASCII case, at its
/// escape level), and perhaps its colon, with only whitespace after: its value is on a later
/// line.
fn awaits_value(t: &[u8]) -> bool {
    const NAME: &[u8] = b"encrypted_content";
    let trim = |mut e: usize| {
        while e > 0 && is_colon_space(t[e - 1]) {
            e -= 1;
        }
        e
    };
    let mut end = trim(t.len());
    if end > 0 && t[end - 1] == b':' {
        end = trim(end - 1);
    }
    // The closing quote of the name, with its backslashes.
    if end == 0 || t[end - 1] != b'"' {
        return false;
    }
    let close = end - 1;
    let slashes = t[..close].iter().rev().take_while(|&&c| c == b'\\').count();
    let name_end = close - slashes;
    if name_end < NAME.len() + 1 + slashes || !t[name_end - NAME.len()..name_end].eq_ignore_ascii_case(NAME) {
        return false;
    }
    let open = name_end - NAME.len() - 1;
    t[open] == b'"' && t[open - slashes..open].iter().all(|&c| c == b'\\')
}

/// H8: reads a text and returns its findings. `anchor`: where the findings of a text read
/// inside another (a string, a decoded text) stand in the outer text; `shown`: the digests
/// the texts it was decoded from showed (not reported twice).
fn text_findings(t: &[u8], anchor: Option<usize>, depth: usize, shown: &HashSet<String>) -> Vec<Found> {
    let at = |pos: usize| anchor.unwrap_or(pos);
    let reading = read_text(t);
    let mut direct = Vec::new();
    let mut decoded: Vec<(usize, WStr)> = Vec::new();
    match &reading {
        Reading::Whole(node) => value_findings(node, t, anchor, depth, shown, &mut direct),
        Reading::Pieces(pieces) => {
            for p in pieces {
                match p {
                    Piece::Value(node) => value_findings(node, t, anchor, depth, shown, &mut direct),
                    Piece::Fragment(f) => {
                        direct.extend(fragment_finding(f, t).map(|digest| Found { at: at(f.start), digest }))
                    }
                }
            }
            for gap in gaps(&reading, t.len()) {
                let forms = read_gap(&t[gap.clone()]);
                // Assignments whose name's normal form is exactly `encryptedcontent`: their
                // values of at least 16 characters, as they stand.
                for a in forms.assignments.iter().filter(|a| a.holds_ciphertext()) {
                    let value = WStr::from_wtf8(t[gap.start + a.value.start..gap.start + a.value.end].to_vec());
                    if value.char_count() >= MIN_CIPHERTEXT_CHARS {
                        direct.push(Found { at: at(gap.start + a.value.start), digest: value.sha256_hex() });
                    }
                }
                for run in &forms.runs {
                    let start = gap.start + run.span.start;
                    match &run.kind {
                        RunKind::Ciphertext => {
                            let shape = WStr::from_wtf8(t[start..gap.start + run.span.end].to_vec());
                            direct.push(Found { at: at(start), digest: shape.sha256_hex() });
                        }
                        RunKind::Encoded(text) => decoded.push((start, text.clone())),
                    }
                }
                decoded.extend(decodings(&t[gap.clone()]).into_iter().map(|d| (gap.start, d)));
            }
        }
    }
    // What decoded texts hold, at most 4 decodings deep, less what was already shown.
    if depth < MAX_DECODINGS && !decoded.is_empty() {
        let mut seen = shown.clone();
        seen.extend(direct.iter().map(|f| f.digest.clone()));
        for (pos, text) in decoded {
            let inner = text_findings(text.as_bytes(), Some(at(pos)), depth + 1, &seen);
            direct.extend(inner.into_iter().filter(|f| !seen.contains(&f.digest)));
        }
    }
    direct
}

/// H8: the findings of a JSON value read in a text (the whole text, or a value embedded in it):
/// when it is an envelope, one finding, its digest over its JSON text without surrounding
/// whitespace, and its members are not reported again; else those of its members and elements.
fn value_findings(
    node: &Node,
    src: &[u8],
    anchor: Option<usize>,
    depth: usize,
    shown: &HashSet<String>,
    out: &mut Vec<Found>,
) {
    if is_envelope(node) {
        let span = WStr::from_wtf8(src[node.start..node.end].to_vec());
        out.push(Found { at: anchor.unwrap_or(node.start), digest: hex_digest(&span.to_utf8_lossy()) });
    } else {
        node_findings(node, anchor, depth, shown, out);
    }
}

/// H8: the findings inside a value that is read: `encrypted_content` member values, and what its
/// strings (member names included) hold, each read again as a text. An object nested inside it
/// is no envelope, whatever it holds: its members are read as those of any value.
fn node_findings(node: &Node, anchor: Option<usize>, depth: usize, shown: &HashSet<String>, out: &mut Vec<Found>) {
    let at = |pos: usize| anchor.unwrap_or(pos);
    match &node.kind {
        NodeKind::Object(members) => {
            for m in members {
                out.extend(text_findings(m.name.as_bytes(), Some(at(m.name_start)), depth, shown));
                if is_ciphertext_name(&m.name) {
                    if let NodeKind::Str(s) = &m.value.kind {
                        if s.char_count() >= MIN_CIPHERTEXT_CHARS {
                            out.push(Found { at: at(m.value.start), digest: s.sha256_hex() });
                            continue;
                        }
                    }
                }
                node_findings(&m.value, anchor, depth, shown, out);
            }
        }
        NodeKind::Array(items) => items.iter().for_each(|n| node_findings(n, anchor, depth, shown, out)),
        // Each string is read again as a text.
        NodeKind::Str(s) => out.extend(text_findings(s.as_bytes(), Some(at(node.start)), depth, shown)),
        _ => {}
    }
}

/// H8: a fragment's finding: its unescaped value when it reads (at least 16 characters); when
/// it has no closing quote or does not unescape, its characters from after the opening quote to
/// its end, when they are at least 16.
fn fragment_finding(f: &Fragment, t: &[u8]) -> Option<String> {
    let value = match (&f.value, f.terminated) {
        (Some(v), true) => v.clone(),
        _ => WStr::from_wtf8(t[f.body.clone()].to_vec()),
    };
    (value.char_count() >= MIN_CIPHERTEXT_CHARS).then(|| value.sha256_hex())
}

/// H8: a member whose name's normal form (R2) is exactly `encryptedcontent`.
fn is_ciphertext_name(name: &WStr) -> bool {
    normal_form(name) == b"encryptedcontent"
}

/// H8: an envelope (when it is a text or a value embedded in one): an object whose `schema` is
/// exactly the E1 name and which holds a non-empty `encrypted_content` string (at any depth
/// inside it).
fn is_envelope(node: &Node) -> bool {
    matches!(node.get("schema").map(|s| &s.kind), Some(NodeKind::Str(s)) if s.eq_str(SCHEMA)) && holds_ciphertext(node)
}

/// H8: whether a value holds, at any depth, a member whose name's normal form is exactly
/// `encryptedcontent` with a non-empty string value.
fn holds_ciphertext(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Object(members) => members.iter().any(|m| {
            (is_ciphertext_name(&m.name) && matches!(&m.value.kind, NodeKind::Str(s) if !s.is_empty()))
                || holds_ciphertext(&m.value)
        }),
        NodeKind::Array(items) => items.iter().any(holds_ciphertext),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::canonical_text;
    use crate::json::{quote, Value};

    const C16: &str = "0123456789abcdef";

    fn digest(s: &str) -> String {
        hex_digest(s.as_bytes())[..12].to_string()
    }

    #[test]
    fn member_values_of_16_characters() {
        let t = format!("{{\"encrypted_content\":\"{C16}\"}}\n{{\"ENCRYPTED_CONTENT\":\"short\"}}\n{{\"x\":{{\"Encrypted_Content\":\"{C16}\",\"encrypted_content\":\"{C16}\"}}}}");
        let f = scan(t.as_bytes());
        assert_eq!(
            f,
            [
                ScanFinding { line: 1, code: FindingCode::ReplayMaterialExposed, sha256_prefix: digest(C16) },
                ScanFinding { line: 3, code: FindingCode::ReplayMaterialExposed, sha256_prefix: digest(C16) },
                ScanFinding { line: 3, code: FindingCode::ReplayMaterialExposed, sha256_prefix: digest(C16) },
            ]
        );
    }

    #[test]
    fn envelope_text_in_a_string_is_one_finding() {
        let item = Value::obj(vec![
            ("type", Value::str("reasoning")),
            ("id", Value::str("rs")),
            ("summary", Value::Array(vec![])),
            ("encrypted_content", Value::str("c")),
        ]);
        let env = canonical_text(&item);
        let line =
            format!("{{\"text\":{}}}", String::from_utf8(quote(&WStr::from(format!("  {env} ").as_str()))).unwrap());
        assert_eq!(
            scan(line.as_bytes()),
            [ScanFinding { line: 1, code: FindingCode::ReplayMaterialExposed, sha256_prefix: digest(&env) }]
        );
    }

    #[test]
    fn h8_an_envelope_object_nested_in_a_value_is_no_envelope() {
        let env = format!(
            r#"{{"schema":"{SCHEMA}","version":1,"item":{{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"{C16}"}}}}"#
        );
        // A text, or a value embedded in one, that is an envelope: one finding over its text.
        assert_eq!(scan(env.as_bytes()), [exposed(1, &env)]);
        assert_eq!(scan(format!("INFO sent {env} ok").as_bytes()), [exposed(1, &env)]);
        // Nested in a value: its members are read as any value's, so its ciphertext is the
        // finding, and a short one is none.
        assert_eq!(scan(format!(r#"{{"log":{env}}}"#).as_bytes()), [exposed(1, C16)]);
        assert_eq!(scan(format!("INFO [1,{env}]").as_bytes()), [exposed(1, C16)]);
        let short = env.replace(C16, "short");
        assert!(scan(format!(r#"{{"log":{short}}}"#).as_bytes()).is_empty());
        assert_eq!(scan(short.as_bytes()), [exposed(1, &short)]);
    }

    #[test]
    fn h8_a_line_ending_in_a_fragment_name_and_vertical_tab_awaits_its_value() {
        let t = format!("INFO \"encrypted_content\"\u{b}:\u{b}\n    \"{C16}\" (cut)\n");
        assert_eq!(scan(t.as_bytes()), [exposed(2, C16)]);
    }

    #[test]
    fn fragments_in_log_lines_and_replacements_ignored() {
        let t = format!("INFO payload=\"{{\\\"encrypted_content\\\":\\\"{C16}\\\"\" more\n{{\"encrypted_content\":{{\"redacted\":\"encrypted_content\",\"bytes\":16,\"sha256\":\"00\"}}}}");
        assert_eq!(
            scan(t.as_bytes()),
            [ScanFinding { line: 1, code: FindingCode::ReplayMaterialExposed, sha256_prefix: digest(C16) }]
        );
    }

    #[test]
    fn lengths_count_unescaped_characters() {
        let fifteen_escaped = "\\u00e9".repeat(15);
        let t = format!("{{\"encrypted_content\":\"{fifteen_escaped}\"}}");
        assert!(scan(t.as_bytes()).is_empty());
        let t = format!("{{\"encrypted_content\":\"{fifteen_escaped}x\"}}");
        assert_eq!(scan(t.as_bytes()).len(), 1);
    }

    fn exposed(line: usize, value: &str) -> ScanFinding {
        ScanFinding { line, code: FindingCode::ReplayMaterialExposed, sha256_prefix: digest(value) }
    }

    const FERNET: &str =
        "gAAAAABpM0YjZk4yMrZw3XDI1AWFaKb9T0NQq7LndK6zaRB-FK1PbhZhaZk4yMrZw3XDI1AWFaKb9T0NQq7LndK6zaRB_FK1PbhZha==";

    #[test]
    fn h8_a_file_that_is_not_text_is_a_finding_and_read_all_the_same() {
        let t = format!("log\0 line\nREPLAY={FERNET}\n");
        let f = scan(t.as_bytes());
        assert_eq!(f[0], ScanFinding { line: 1, code: FindingCode::ScanFileNotText, sha256_prefix: digest(&t) });
        assert_eq!(f[1..], [exposed(2, FERNET)]);
        // Bytes that are not UTF-8 are not text; a byte-order mark makes UTF-16 text.
        assert_eq!(scan(b"a\xff").len(), 1);
        let utf16: Vec<u8> = [0xFF, 0xFE].into_iter().chain("x".encode_utf16().flat_map(u16::to_le_bytes)).collect();
        assert!(scan(&utf16).is_empty());
    }

    #[test]
    fn h8_text_forms_outside_json() {
        for (text, line) in [
            (format!("item {{'encrypted_content': '{FERNET}'}}"), 1),
            (format!("type: reasoning\nencrypted_content: {FERNET}\n"), 2),
            (format!("<item><encrypted_content>{FERNET}</encrypted_content></item>"), 1),
            (format!("Encrypted-Content: {FERNET}"), 1),
            (format!("replaying state {FERNET} for rs_1"), 1),
        ] {
            assert_eq!(scan(text.as_bytes()), [exposed(line, FERNET)], "{text}");
        }
    }

    #[test]
    fn h8_decoded_texts_are_read_and_not_reported_twice() {
        let json = format!("{{\"encrypted_content\": \"{FERNET}\"}}");
        let percent: String = json.bytes().map(|b| format!("%{b:02X}")).collect();
        assert_eq!(scan(format!("body={percent}").as_bytes()), [exposed(1, FERNET)]);
        let html = json.replace('"', "&quot;");
        assert_eq!(scan(html.as_bytes()), [exposed(1, FERNET)]);
    }

    #[test]
    fn h8_a_value_on_a_later_line_and_a_cut_value() {
        let t = format!("{{\"type\": \"reasoning\",\n \"encrypted_content\"\n   : \"{C16}\",\n");
        assert_eq!(scan(t.as_bytes()), [exposed(3, C16)]);
        let t = format!("INFO \"encrypted_content\":\n    \"{C16}\" (cut)\n");
        assert_eq!(scan(t.as_bytes()), [exposed(2, C16)]);
        let t = format!("DEBUG {{\"encrypted_content\":\"{C16}\n");
        assert_eq!(scan(t.as_bytes()), [exposed(1, C16)]);
    }

    #[test]
    fn h8_a_file_that_is_one_json_value_gives_the_line_of_each_value() {
        let t = format!("{{\n  \"a\": 1,\n  \"encrypted_content\":\n    \"{C16}\"\n}}\n");
        assert_eq!(scan(t.as_bytes()), [exposed(4, C16)]);
    }
}

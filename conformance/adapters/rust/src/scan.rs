//! Leak scanning (SPEC H8): replay material found outside history files.

use crate::envelope::SCHEMA;
use crate::json::{Node, NodeKind, WStr};
use crate::sha256::hex_digest;
use crate::textscan::{read_text, Piece, Reading};

/// H8: a string value of a member named `encrypted_content` is reported from this many
/// characters (after JSON unescaping).
pub const MIN_CIPHERTEXT_CHARS: usize = 16;

/// H8: one finding: the line (from 1) and the first 12 hex digits of the digest. The code is
/// always `replay_material_exposed`; the value itself is never shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanFinding {
    pub line: usize,
    pub sha256_prefix: String,
}

/// H8: scans one file's contents line by line, findings in line order, then in order of
/// appearance on the line.
pub fn scan(text: &[u8]) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let mut digests = Vec::new();
        scan_text(line, &mut digests);
        out.extend(digests.into_iter().map(|d| ScanFinding { line: i + 1, sha256_prefix: d[..12].to_string() }));
    }
    out
}

/// H8: reads a text (a line, or a string found in one) and collects the digests of its
/// findings in order of appearance.
fn scan_text(text: &[u8], out: &mut Vec<String>) {
    match read_text(text) {
        Reading::Whole(node) => scan_node(&node, text, out),
        Reading::Pieces(pieces) => {
            for p in pieces {
                match p {
                    Piece::Value(node) => scan_node(&node, text, out),
                    Piece::Fragment(f) => {
                        if let (true, Some(v)) = (f.terminated, &f.value) {
                            if v.char_count() >= MIN_CIPHERTEXT_CHARS {
                                out.push(v.sha256_hex());
                            }
                        }
                    }
                }
            }
        }
    }
}

fn is_ciphertext_name(name: &WStr) -> bool {
    name.as_bytes().eq_ignore_ascii_case(b"encrypted_content")
}

/// H8: an envelope: an object whose `schema` is exactly the E1 name and which holds a
/// non-empty `encrypted_content` string (at any depth inside it).
fn is_envelope(node: &Node) -> bool {
    matches!(node.get("schema").map(|s| &s.kind), Some(NodeKind::Str(s)) if s.eq_str(SCHEMA)) && holds_ciphertext(node)
}

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

fn scan_node(node: &Node, src: &[u8], out: &mut Vec<String>) {
    match &node.kind {
        NodeKind::Object(members) => {
            if is_envelope(node) {
                // One finding, digest over its JSON text; its members are not reported again.
                let span = WStr::from_wtf8(src[node.start..node.end].to_vec());
                out.push(hex_digest(&span.to_utf8_lossy()));
                return;
            }
            for m in members {
                scan_text(m.name.as_bytes(), out);
                if is_ciphertext_name(&m.name) {
                    if let NodeKind::Str(s) = &m.value.kind {
                        if s.char_count() >= MIN_CIPHERTEXT_CHARS {
                            out.push(s.sha256_hex());
                            continue;
                        }
                    }
                }
                scan_node(&m.value, src, out);
            }
        }
        NodeKind::Array(items) => items.iter().for_each(|n| scan_node(n, src, out)),
        // Each string is read again as a text.
        NodeKind::Str(s) => scan_text(s.as_bytes(), out),
        _ => {}
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
                ScanFinding { line: 1, sha256_prefix: digest(C16) },
                ScanFinding { line: 3, sha256_prefix: digest(C16) },
                ScanFinding { line: 3, sha256_prefix: digest(C16) },
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
        let line = format!("{{\"text\":{}}}", String::from_utf8(quote(&WStr::from(format!("  {env} ").as_str()))).unwrap());
        assert_eq!(scan(line.as_bytes()), [ScanFinding { line: 1, sha256_prefix: digest(&env) }]);
    }

    #[test]
    fn fragments_in_log_lines_and_replacements_ignored() {
        let t = format!("INFO payload=\"{{\\\"encrypted_content\\\":\\\"{C16}\\\"\" more\n{{\"encrypted_content\":{{\"redacted\":\"encrypted_content\",\"bytes\":16,\"sha256\":\"00\"}}}}");
        assert_eq!(scan(t.as_bytes()), [ScanFinding { line: 1, sha256_prefix: digest(C16) }]);
    }

    #[test]
    fn lengths_count_unescaped_characters() {
        let fifteen_escaped = "\\u00e9".repeat(15);
        let t = format!("{{\"encrypted_content\":\"{fifteen_escaped}\"}}");
        assert!(scan(t.as_bytes()).is_empty());
        let t = format!("{{\"encrypted_content\":\"{fifteen_escaped}x\"}}");
        assert_eq!(scan(t.as_bytes()).len(), 1);
    }
}

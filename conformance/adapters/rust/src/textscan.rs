//! How a text is read for leak scans and text redaction (SPEC H8, "How a text ... is read";
//! H6 step 2 reads texts "as the leak scan reads it").
//!
//! A text that is one lenient JSON value between JSON whitespace is read as that value.
//! Any other text is searched left to right for embedded values (at each `{` or `[`, the value
//! that reads from there) and for `encrypted_content` member fragments outside them, at any
//! escape level; after 64 places where no value reads, only fragments are searched for.

use std::ops::Range;

use crate::json::{parse_document, parse_value_at, unescape_body, Node, ParseOptions, WStr};

/// H8: after this many places at which no value reads, only fragments are searched for.
pub const MAX_FAILED_PLACES: usize = 64;

/// H8: an `encrypted_content` member fragment at escape level `level` (inside `level` JSON
/// strings, each quote preceded by 2^level − 1 backslashes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fragment {
    pub level: u32,
    /// Where the fragment starts: its name's opening quote (with that quote's backslashes).
    pub name_start: usize,
    /// The value's span: from its opening quote (with that quote's backslashes) to its closing
    /// quote, or to the end of the text when it is unterminated.
    pub start: usize,
    pub end: usize,
    /// The value's characters between its quotes, as they stand (to the end of the text when
    /// it is unterminated).
    pub body: Range<usize>,
    pub terminated: bool,
    /// The value unescaped `level + 1` times; `None` when unterminated or it does not unescape.
    pub value: Option<WStr>,
}

#[derive(Clone, Debug)]
pub enum Piece {
    /// An embedded value (spans relative to the text).
    Value(Node),
    Fragment(Fragment),
}

#[derive(Clone, Debug)]
pub enum Reading {
    /// The text is one value between JSON whitespace.
    Whole(Node),
    /// Embedded values and fragments, left to right.
    Pieces(Vec<Piece>),
}

/// H8: lenient reading: RFC 8259 with duplicate members, escaped lone surrogates, `NaN`,
/// `Infinity` and `-Infinity`.
pub const LENIENT: ParseOptions = ParseOptions::LENIENT;

/// H8: reads a text (WTF-8 bytes).
pub fn read_text(text: &[u8]) -> Reading {
    if let Ok((node, _)) = parse_document(text, LENIENT) {
        return Reading::Whole(node);
    }
    let mut pieces = Vec::new();
    let mut failed = 0usize;
    let mut region_start = 0usize;
    let mut i = 0usize;
    while i < text.len() {
        let c = text[i];
        if (c == b'{' || c == b'[') && failed < MAX_FAILED_PLACES {
            match parse_value_at(text, i, LENIENT) {
                Ok((node, _)) => {
                    i = node.end;
                    region_start = i;
                    pieces.push(Piece::Value(node));
                    continue;
                }
                Err(_) => failed += 1,
            }
        }
        if c == b'"' {
            if let Some(f) = fragment_at(text, i, region_start) {
                i = f.end;
                region_start = i;
                pieces.push(Piece::Fragment(f));
                continue;
            }
        }
        i += 1;
    }
    Reading::Pieces(pieces)
}

/// The escape level of a quote preceded by a run of `run` backslashes: the last 2^k − 1 of them
/// escape the quote, the pairs before them are escaped backslashes (so k = ctz(run + 1)).
pub fn quote_level(run: usize) -> u32 {
    (run as u64 + 1).trailing_zeros()
}

/// The number of backslashes right before `pos`, not counting any before `floor`.
pub fn backslashes_before(text: &[u8], pos: usize, floor: usize) -> usize {
    let mut n = 0;
    while pos > floor + n && text[pos - 1 - n] == b'\\' {
        n += 1;
    }
    n
}

/// `2^level − 1` backslashes followed by a quote, at `pos`.
fn quote_token_at(text: &[u8], pos: usize, level: u32) -> Option<usize> {
    let n = (1usize << level) - 1;
    let end = pos.checked_add(n)?;
    if end < text.len() && text[pos..end].iter().all(|&b| b == b'\\') && text[end] == b'"' {
        Some(end + 1)
    } else {
        None
    }
}

const NAME: &[u8] = b"encrypted_content";

/// H8: the spaces allowed around a fragment's colon, at every escape level: U+0009 to U+000D and
/// U+0020 (a vertical tab and a form feed too, which JSON's whitespace leaves out).
pub fn is_colon_space(c: u8) -> bool {
    matches!(c, b'\t'..=b'\r' | b' ')
}

/// H8: the gaps of a text read as pieces: its parts outside the embedded values and fragments
/// (the whole text when none is found). A text read whole has none.
pub fn gaps(reading: &Reading, len: usize) -> Vec<Range<usize>> {
    let Reading::Pieces(pieces) = reading else { return Vec::new() };
    let mut out = Vec::new();
    let mut at = 0;
    for p in pieces {
        let (start, end) = match p {
            Piece::Value(n) => (n.start, n.end),
            Piece::Fragment(f) => (f.name_start, f.end),
        };
        if start > at {
            out.push(at..start);
        }
        at = end;
    }
    if at < len {
        out.push(at..len);
    }
    out
}

/// H8: a fragment whose name's opening quote is at `q`.
pub fn fragment_at(text: &[u8], q: usize, floor: usize) -> Option<Fragment> {
    let level = quote_level(backslashes_before(text, q, floor));
    if level > 16 {
        return None;
    }
    let name_end = q + 1 + NAME.len();
    if name_end > text.len() || !text[q + 1..name_end].eq_ignore_ascii_case(NAME) {
        return None;
    }
    let mut p = quote_token_at(text, name_end, level)?;
    while p < text.len() && is_colon_space(text[p]) {
        p += 1;
    }
    if text.get(p) != Some(&b':') {
        return None;
    }
    p += 1;
    while p < text.len() && is_colon_space(text[p]) {
        p += 1;
    }
    let start = p;
    let body_start = quote_token_at(text, p, level)?;
    // The closing quote: the next quote of exactly this level (r − b a multiple of 2(b + 1):
    // the last b backslashes escape it, the pairs before them are escaped backslashes), or one
    // preceded by no backslash, which ends the JSON string around the fragment at every level.
    let mut j = body_start;
    while j < text.len() {
        let run = if text[j] == b'"' { Some(backslashes_before(text, j, body_start)) } else { None };
        if let Some(r) = run.filter(|&r| r == 0 || quote_level(r) == level) {
            // A bare quote inside an escaped fragment is not JSON there: the value ends before
            // it and does not unescape (its characters as they stand are the finding).
            let bare_in_escaped = r == 0 && level > 0;
            let body_end = if bare_in_escaped { j } else { j - ((1usize << level) - 1) };
            let mut value =
                if bare_in_escaped { None } else { Some(WStr::from_wtf8(text[body_start..body_end].to_vec())) };
            for _ in 0..=level {
                value = value.and_then(|v| unescape_body(v.as_bytes()));
            }
            let name_start = q - ((1usize << level) - 1);
            return Some(Fragment {
                level,
                name_start,
                start,
                end: j + 1,
                body: body_start..body_end,
                terminated: true,
                value,
            });
        }
        j += 1;
    }
    let name_start = q - ((1usize << level) - 1);
    Some(Fragment {
        level,
        name_start,
        start,
        end: text.len(),
        body: body_start..text.len(),
        terminated: false,
        value: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frags(t: &str) -> Vec<Fragment> {
        match read_text(t.as_bytes()) {
            Reading::Whole(_) => vec![],
            Reading::Pieces(p) => p
                .into_iter()
                .filter_map(|p| match p {
                    Piece::Fragment(f) => Some(f),
                    _ => None,
                })
                .collect(),
        }
    }

    #[test]
    fn whole_values_are_lenient() {
        for t in [" {\"a\":1,\"a\":2} ", "NaN", "[-Infinity]", "\"\\ud800\"", "1"] {
            assert!(matches!(read_text(t.as_bytes()), Reading::Whole(_)), "{t}");
        }
    }

    #[test]
    fn embedded_values_and_fragments() {
        let t = "log {\"a\":1} then [2] and \"Encrypted_Content\": \"abc\" end";
        let Reading::Pieces(p) = read_text(t.as_bytes()) else { panic!() };
        assert_eq!(p.len(), 3);
        let f = frags(t);
        assert_eq!(f[0].level, 0);
        assert_eq!(f[0].value, Some(WStr::from("abc")));
        assert_eq!(&t[f[0].start..f[0].end], "\"abc\"");
    }

    #[test]
    fn fragments_at_escape_levels() {
        let t = r#"x="{\"encrypted_content\":\"a\\\"b\"" tail"#;
        let f = frags(t);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].level, 1);
        assert_eq!(f[0].value, Some(WStr::from("a\"b")));
        let t2 = r#"y \\\"encrypted_content\\\":\\\"zz\\\" "#;
        let f = frags(t2);
        assert_eq!(f[0].level, 2);
        assert_eq!(f[0].value, Some(WStr::from("zz")));
    }

    #[test]
    fn h8_spaces_u0009_to_u000d_and_u0020_around_the_colon_at_every_level() {
        for t in [
            "a \"encrypted_content\" \t:\u{b} \"abc\" b",
            "a \"encrypted_content\"\u{c}\r\n:\u{b}\"abc\" b",
            r#"a \"encrypted_content\"  :  \"abc\" b"#,
        ] {
            let f = frags(t);
            assert_eq!(f.len(), 1, "{t:?}");
            assert_eq!(f[0].value, Some(WStr::from("abc")), "{t:?}");
        }
        // Other characters around the colon (U+00A0, a letter) are no fragment.
        assert!(frags("a \"encrypted_content\" x: \"abc\" b").is_empty());
        assert!(frags("a \"encrypted_content\"\u{a0}: \"abc\" b").is_empty());
    }

    #[test]
    fn h8_a_quote_with_no_backslash_ends_an_escaped_fragment_and_does_not_unescape() {
        let t = r#"note \"encrypted_content\": \"gAAAA-0123" then \"more\" text"#;
        let f = frags(t);
        assert_eq!(f.len(), 1);
        assert!(f[0].terminated);
        assert_eq!(f[0].value, None);
        assert_eq!(&t[f[0].body.clone()], "gAAAA-0123");
        assert_eq!(&t[f[0].start..f[0].end], r#"\"gAAAA-0123""#);
        // At level 0 that quote is the closing quote itself: the value unescapes.
        let f = frags(r#"note "encrypted_content": "gAAAA-0123" then"#);
        assert_eq!(f[0].value, Some(WStr::from("gAAAA-0123")));
        // A quote of a deeper level is an escaped quote of the value: it does not end it.
        let f = frags(r#"note \"encrypted_content\": \"a\\\"b\" end"#);
        assert_eq!(f[0].value, Some(WStr::from("a\"b")));
    }

    #[test]
    fn unterminated_fragment_runs_to_the_end() {
        let t = "{\"encrypted_content\": \"abc";
        let f = frags(t);
        assert_eq!(f.len(), 1);
        assert!(!f[0].terminated);
        assert_eq!(f[0].end, t.len());
    }

    #[test]
    fn value_search_stops_after_64_failures() {
        let t = "{".repeat(70) + "x [1]";
        let Reading::Pieces(p) = read_text(t.as_bytes()) else { panic!() };
        assert!(p.is_empty());
        let t = "{".repeat(10) + "x [1]";
        let Reading::Pieces(p) = read_text(t.as_bytes()) else { panic!() };
        assert_eq!(p.len(), 1);
    }
}

//! Text forms that are not JSON (SPEC H8 "Text forms"): how a gap of a text is read for
//! assignments of sensitive names, base64 runs (ciphertexts by their shape, or encoded texts)
//! and percent- and HTML-encoded texts. The leak scan (H8) reports what they hold; redacted
//! exports (H6 step 2) redact it.

use std::ops::Range;

use crate::json::{unescape_body, WStr};
use crate::redaction::{is_sensitive, normal_form};
use crate::textscan::{backslashes_before, is_colon_space};

/// H8: decoded texts are read again at most this many decodings deep.
pub const MAX_DECODINGS: usize = 4;
/// H8: a base64 run is read as a text from this many characters.
const MIN_ENCODED_RUN: usize = 16;
/// H8: the Fernet prefix of OpenAI's `encrypted_content`, and the shortest Fernet token.
const FERNET_PREFIX: &[u8] = b"gAAAAA";
const MIN_FERNET_RUN: usize = 100;
/// H8: a mixed run is a ciphertext by its shape from this many characters.
const MIN_MIXED_RUN: usize = 200;

/// H8: one assignment of a sensitive name in a gap: its name as read and its value's span
/// (between its quotes for a quoted value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub name: WStr,
    pub value: Range<usize>,
}

impl Assignment {
    /// H8: an assignment whose value is reported: its name's normal form is exactly
    /// `encryptedcontent`.
    pub fn holds_ciphertext(&self) -> bool {
        normal_form(&self.name) == b"encryptedcontent"
    }
}

/// H8: what a base64 run is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// A run of at least 16 characters that decodes to UTF-8 text: that text, read again.
    Encoded(WStr),
    /// A ciphertext by its shape.
    Ciphertext,
}

/// H8: a base64 run of a gap (with its padding), outside the values of sensitive assignments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub span: Range<usize>,
    pub kind: RunKind,
}

/// H8: the text forms of one gap, spans relative to the gap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GapForms {
    pub assignments: Vec<Assignment>,
    pub runs: Vec<Run>,
}

/// H8: reads a gap as a text that begins and ends there.
pub fn read_gap(gap: &[u8]) -> GapForms {
    let assignments = assignments(gap);
    let runs = base64_runs(gap, &assignments);
    GapForms { assignments, runs }
}

// ---------------------------------------------------------------------------------------------
// Assignments: a name, then a separator, then a value.

/// A bare name's characters: ASCII letters, digits, `_`, `-` and `.`.
fn is_bare(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

fn is_quote(c: u8) -> bool {
    c == b'"' || c == b'\''
}

fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn is_line_break(c: u8) -> bool {
    c == b'\n' || c == b'\r'
}

/// How a name was written, which decides its separator and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NameForm {
    /// A double- or single-quoted string, or a bare run (`option`: it starts with `-`).
    Plain { option: bool },
    /// An XML start tag: its value is the element's text, with no separator.
    XmlTag,
}

/// A name read at a position: what it says, where it ends, how it was written.
struct Name {
    text: WStr,
    end: usize,
    form: NameForm,
}

/// H8: the name that starts at `i`, if one does.
fn name_at(t: &[u8], i: usize) -> Option<Name> {
    match t[i] {
        b'"' => double_quoted_name(t, i),
        b'\'' => single_quoted_name(t, i),
        b'<' => xml_tag_name(t, i),
        c if is_bare(c) && (i == 0 || !is_bare(t[i - 1])) => bare_name(t, i),
        _ => None,
    }
}

/// A double-quoted string on one line, JSON-unescaped when it unescapes.
fn double_quoted_name(t: &[u8], i: usize) -> Option<Name> {
    let mut j = i + 1;
    while j < t.len() {
        match t[j] {
            b'"' => {
                let body = &t[i + 1..j];
                let text = unescape_body(body).unwrap_or_else(|| WStr::from_wtf8(body.to_vec()));
                return Some(Name { text, end: j + 1, form: NameForm::Plain { option: false } });
            }
            b'\\' if j + 1 < t.len() && !is_line_break(t[j + 1]) => j += 2,
            c if is_line_break(c) => return None,
            _ => j += 1,
        }
    }
    None
}

/// A single-quoted string without `\` or a line break.
fn single_quoted_name(t: &[u8], i: usize) -> Option<Name> {
    let len = t[i + 1..].iter().position(|&c| c == b'\'' || c == b'\\' || is_line_break(c))?;
    let j = i + 1 + len;
    (t[j] == b'\'').then(|| Name {
        text: WStr::from_wtf8(t[i + 1..j].to_vec()),
        end: j + 1,
        form: NameForm::Plain { option: false },
    })
}

/// An XML start tag `<name …>`; its end is after the `>`.
fn xml_tag_name(t: &[u8], i: usize) -> Option<Name> {
    let first = *t.get(i + 1)?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let name_end = i + 1 + t[i + 1..].iter().position(|&c| !(is_bare(c) || c == b':')).unwrap_or(t.len() - i - 1);
    let close = name_end + t[name_end..].iter().position(|&c| c == b'>' || c == b'<')?;
    let attributes_ok = close == name_end || t[name_end].is_ascii_whitespace();
    if t[close] != b'>' || !attributes_ok || t[close - 1] == b'/' {
        return None;
    }
    Some(Name { text: WStr::from_wtf8(t[i + 1..name_end].to_vec()), end: close + 1, form: NameForm::XmlTag })
}

/// A bare run of name characters not preceded by one, which may be followed by backslashes and
/// a quote (the end of an escaped name).
fn bare_name(t: &[u8], i: usize) -> Option<Name> {
    let run_end = i + t[i..].iter().position(|&c| !is_bare(c)).unwrap_or(t.len() - i);
    let slashes = t[run_end..].iter().take_while(|&&c| c == b'\\').count();
    let end = match t.get(run_end + slashes) {
        Some(&q) if is_quote(q) => run_end + slashes + 1,
        _ => run_end,
    };
    let text = WStr::from_wtf8(t[i..run_end].to_vec());
    Some(Name { text, end, form: NameForm::Plain { option: t[i] == b'-' } })
}

/// The separator after a name ending at `p`: `:` or `=` with spaces and tabs around, or, after a
/// command-line option, spaces or tabs alone. Returns where the value starts and whether the
/// separator was a colon.
fn separator(t: &[u8], p: usize, form: NameForm) -> Option<(usize, bool)> {
    let blanks = t[p..].iter().take_while(|&&c| is_blank(c)).count();
    let after = p + blanks;
    match t.get(after) {
        Some(&c @ (b':' | b'=')) => {
            let v = after + 1 + t[after + 1..].iter().take_while(|&&c| is_blank(c)).count();
            Some((v, c == b':'))
        }
        _ if blanks > 0 && form == (NameForm::Plain { option: true }) => Some((after, false)),
        _ => None,
    }
}

/// The value starting at `v`: its span (between its quotes when quoted) and where the search
/// goes on after it.
fn value_at(t: &[u8], v: usize, colon: bool) -> (Range<usize>, usize) {
    // Quoted when a quote follows, after any number b of backslashes (b = 2^k − 1 at escape
    // level k): it ends as a fragment's does, at the next quote of the same character preceded
    // by a run of r backslashes with r − b a multiple of 2(b + 1) (its b, and escaped pairs of
    // the value), or by none, which ends the string around it at every level.
    let slashes = t[v..].iter().take_while(|&&c| c == b'\\').count();
    if let Some(&q) = t.get(v + slashes) {
        if is_quote(q) {
            let body_start = v + slashes + 1;
            let closes = |r: usize| r == 0 || (r >= slashes && (r - slashes) % (2 * (slashes + 1)) == 0);
            let close = (body_start..t.len()).find(|&j| t[j] == q && closes(backslashes_before(t, j, body_start)));
            return match close {
                Some(j) => {
                    let r = backslashes_before(t, j, body_start);
                    (body_start..j - if r == 0 { 0 } else { slashes }, j + 1)
                }
                None => (body_start..t.len(), t.len()),
            };
        }
    }
    // Bare: up to a line break or one of the stop characters (after a separator other than
    // `:`, spaces and tabs too), spaces and tabs at its end left out.
    let stops = |c: u8| is_line_break(c) || b"\"'`<>{}[](),;&".contains(&c) || (!colon && is_blank(c));
    let end = v + t[v..].iter().position(|&c| stops(c)).unwrap_or(t.len() - v);
    let trimmed = v + t[v..end].iter().rposition(|&c| !is_blank(c)).map_or(0, |k| k + 1);
    (v..trimmed, end)
}

/// H8: a YAML block scalar header at `v` (`|` or `>`, then a chomping indicator `-` or `+` and
/// an indentation digit in either order, each optional, then an optional comment after spaces
/// or tabs) that ends its line: where it ends.
fn block_scalar_header(t: &[u8], v: usize) -> Option<usize> {
    if !matches!(t.get(v), Some(b'|' | b'>')) {
        return None;
    }
    let chomping = |c: &u8| matches!(c, b'-' | b'+');
    let digit = |c: &u8| (b'1'..=b'9').contains(c);
    let mut p = v + 1;
    if t.get(p).is_some_and(chomping) {
        p += 1 + usize::from(t.get(p + 1).is_some_and(digit));
    } else if t.get(p).is_some_and(digit) {
        p += 1 + usize::from(t.get(p + 1).is_some_and(chomping));
    }
    let blanks = t[p..].iter().take_while(|&&c| is_blank(c)).count();
    let mut end = p + blanks;
    if blanks > 0 && t.get(end) == Some(&b'#') {
        end += t[end..].iter().position(|&c| is_line_break(c)).unwrap_or(t.len() - end);
    }
    (end == t.len() || is_line_break(t[end])).then_some(end)
}

/// H8: where the value of an assignment whose name starts at `name_start` and whose value is a
/// block scalar header ending at `header_end` ends: at the end of the last of the lines after
/// it more indented (leading spaces) than the assignment's line, blank lines (spaces and tabs
/// only) among them; at the header's end when there is none.
fn block_scalar_end(t: &[u8], name_start: usize, header_end: usize) -> usize {
    let indentation = |line: &[u8]| line.iter().take_while(|&&c| c == b' ').count();
    let line_start = t[..name_start].iter().rposition(|&c| is_line_break(c)).map_or(0, |k| k + 1);
    let own = indentation(&t[line_start..name_start]);
    let mut end = header_end;
    let mut p = header_end;
    while p < t.len() {
        p += if t[p..].starts_with(b"\r\n") { 2 } else { 1 };
        let line_end = p + t[p..].iter().position(|&c| is_line_break(c)).unwrap_or(t.len() - p);
        let line = &t[p..line_end];
        p = line_end;
        if line.iter().all(|&c| is_blank(c)) {
            continue;
        }
        if indentation(line) <= own {
            break;
        }
        end = line_end;
    }
    end
}

/// The element text of an XML element whose start tag ends at `p`: up to the next `<`, trimmed
/// of spaces (U+0009 to U+000D, U+0020), unless nothing else is left; and where the search goes
/// on after it (the `<`).
fn element_text(t: &[u8], p: usize) -> Option<(Range<usize>, usize)> {
    let end = p + t[p..].iter().position(|&c| c == b'<').unwrap_or(t.len() - p);
    let start = p + t[p..end].iter().position(|&c| !is_colon_space(c))?;
    let last = p + t[p..end].iter().rposition(|&c| !is_colon_space(c))?;
    Some((start..last + 1, end))
}

/// H8 rule 1: the search for assignments, left to right: a name that is not sensitive, or is a
/// view's measure (`encrypted_content_bytes`, `encrypted_content_sha256` in normal form), is
/// passed over at its first character; a sensitive name with a non-empty value consumes it.
pub fn assignments(t: &[u8]) -> Vec<Assignment> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if let Some(found) = sensitive_assignment_at(t, i) {
            i = found.1.max(i + 1);
            out.push(found.0);
        } else {
            i += 1;
        }
    }
    out
}

/// A sensitive assignment whose name starts at `i`, and where the search goes on after it.
fn sensitive_assignment_at(t: &[u8], i: usize) -> Option<(Assignment, usize)> {
    let name = name_at(t, i)?;
    let nf = normal_form(&name.text);
    if !is_sensitive(&name.text) || nf == b"encryptedcontentbytes" || nf == b"encryptedcontentsha256" {
        return None;
    }
    let (value, next) = match name.form {
        NameForm::XmlTag => element_text(t, name.end)?,
        NameForm::Plain { .. } => {
            let (v, colon) = separator(t, name.end, name.form)?;
            match block_scalar_header(t, v).filter(|_| colon) {
                Some(header_end) => {
                    let end = block_scalar_end(t, i, header_end);
                    (v..end, end)
                }
                None => value_at(t, v, colon),
            }
        }
    };
    (!value.is_empty()).then_some((Assignment { name: name.text, value }, next))
}

// ---------------------------------------------------------------------------------------------
// Base64 runs.

/// A base64 run's characters: `A`–`Z`, `a`–`z`, `0`–`9`, `+`, `/`, `-`, `_`.
fn is_run_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_')
}

/// H8 rule 2: the maximal runs of a gap, each with at most two `=` after it, outside the
/// values of sensitive assignments; those that are encoded texts or ciphertexts by their shape.
fn base64_runs(t: &[u8], assignments: &[Assignment]) -> Vec<Run> {
    let excluded = |j: usize| assignments.iter().any(|a| a.value.contains(&j));
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if !is_run_char(t[i]) || excluded(i) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < t.len() && is_run_char(t[end]) && !excluded(end) {
            end += 1;
        }
        let mut padded = end;
        while padded < t.len() && padded - end < 2 && t[padded] == b'=' && !excluded(padded) {
            padded += 1;
        }
        if let Some(kind) = run_kind(&t[i..end], &t[i..padded]) {
            out.push(Run { span: i..padded, kind });
        }
        i = padded;
    }
    out
}

/// H8 rule 2: a run of at least 16 characters that decodes to UTF-8 text is that text; any
/// other run is a ciphertext by its shape when it starts with `gAAAAA` and has at least 100
/// characters, or has at least 200 and holds an upper-case letter, a lower-case letter and a
/// digit.
fn run_kind(data: &[u8], run: &[u8]) -> Option<RunKind> {
    if run.len() >= MIN_ENCODED_RUN {
        if let Some(text) = decode_base64_any(data).and_then(|b| String::from_utf8(b).ok()) {
            return Some(RunKind::Encoded(WStr::from(text)));
        }
    }
    let fernet = run.starts_with(FERNET_PREFIX) && run.len() >= MIN_FERNET_RUN;
    let mixed = run.len() >= MIN_MIXED_RUN
        && run.iter().any(u8::is_ascii_uppercase)
        && run.iter().any(u8::is_ascii_lowercase)
        && run.iter().any(u8::is_ascii_digit);
    (fernet || mixed).then_some(RunKind::Ciphertext)
}

/// H8 rule 2: base64, or base64url when the run holds `-` or `_` (not both alphabets); padding
/// optional (`data` is the run without it); a length that is not 1 more than a multiple of 4.
fn decode_base64_any(data: &[u8]) -> Option<Vec<u8>> {
    let url = data.iter().any(|&c| c == b'-' || c == b'_');
    let standard = data.iter().any(|&c| c == b'+' || c == b'/');
    if (url && standard) || data.len() % 4 == 1 {
        return None;
    }
    let sextet = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' | b'-' => 62,
            _ => 63, // `/` or `_`
        }
    };
    let mut out = Vec::with_capacity(data.len() / 4 * 3 + 2);
    for chunk in data.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (k, &c)| acc | (sextet(c) << (18 - 6 * k)));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// Encoded texts.

fn hex_value(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// H8 rule 3: a text holding a percent escape (`%` and two hexadecimal digits), percent-decoded
/// (`+` kept): the text's UTF-8 (a lone surrogate as U+FFFD, §1.1) with each escape's byte in its
/// place, read as UTF-8 with U+FFFD for what is not; `None` when it holds none.
pub fn percent_decoded(t: &[u8]) -> Option<WStr> {
    let escape_at = |i: usize| -> Option<u8> {
        if t[i] != b'%' {
            return None;
        }
        Some(hex_value(*t.get(i + 1)?)? << 4 | hex_value(*t.get(i + 2)?)?)
    };
    if !(0..t.len()).any(|i| escape_at(i).is_some()) {
        return None;
    }
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        match escape_at(i) {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            // A lone surrogate (WTF-8: 0xED then 0xA0 to 0xBF) is U+FFFD in the text's UTF-8.
            None if t[i] == 0xED && t.get(i + 1).is_some_and(|&c| c >= 0xA0) => {
                out.extend_from_slice("\u{FFFD}".as_bytes());
                i += 3;
            }
            None => {
                out.push(t[i]);
                i += 1;
            }
        }
    }
    Some(WStr::from(String::from_utf8_lossy(&out).into_owned()))
}

/// One HTML character reference at `i`: the character and the reference's length.
fn html_reference_at(t: &[u8], i: usize) -> Option<(u32, usize)> {
    if t[i] != b'&' {
        return None;
    }
    let rest = &t[i..];
    for (name, c) in [("&quot;", '"'), ("&amp;", '&'), ("&lt;", '<'), ("&gt;", '>'), ("&apos;", '\'')] {
        if rest.starts_with(name.as_bytes()) {
            return Some((c as u32, name.len()));
        }
    }
    let semi = rest.iter().take(12).position(|&c| c == b';')?;
    let digits = std::str::from_utf8(&rest[2..semi]).ok().filter(|_| rest.get(1) == Some(&b'#'))?;
    let (radix, digits) = match digits.strip_prefix('x').or_else(|| digits.strip_prefix('X')) {
        Some(hex) => (16, hex),
        None => (10, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let cp = u32::from_str_radix(digits, radix).ok().filter(|&cp| char::from_u32(cp).is_some())?;
    Some((cp, semi + 1))
}

/// H8 rule 3: a text holding an HTML character reference (`&quot;`, `&amp;`, `&lt;`, `&gt;`,
/// `&apos;`, `&#N;`, `&#xH;`), with them decoded; `None` when it holds none.
pub fn html_decoded(t: &[u8]) -> Option<WStr> {
    if !(0..t.len()).any(|i| html_reference_at(t, i).is_some()) {
        return None;
    }
    let mut out = WStr::new();
    let mut i = 0;
    while i < t.len() {
        match html_reference_at(t, i) {
            Some((cp, len)) => {
                out.push_cp(cp);
                i += len;
            }
            None => {
                let len = utf8_len(t[i]).min(t.len() - i);
                let mut bytes = out.into_bytes();
                bytes.extend_from_slice(&t[i..i + len]);
                out = WStr::from_wtf8(bytes);
                i += len;
            }
        }
    }
    Some(out)
}

/// The length of the (WTF-8) sequence a lead byte starts.
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// H8 rule 3: the texts a gap is read again as: percent-decoded, and HTML-decoded.
pub fn decodings(gap: &[u8]) -> Vec<WStr> {
    percent_decoded(gap).into_iter().chain(html_decoded(gap)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(t: &str) -> Vec<(String, String)> {
        assignments(t.as_bytes()).iter().map(|a| (a.name.to_string_lossy(), t[a.value.clone()].to_string())).collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn h8_assignment_names_in_every_form() {
        assert_eq!(values("config {'api_key': 'sk-1', 'model': 'gpt-5'}"), pairs(&[("api_key", "sk-1")]));
        assert_eq!(values("{ apiKey: 'sk-1', model: 'x' }"), pairs(&[("apiKey", "sk-1")]));
        assert_eq!(values("openai:\n  api_key: sk-1 \n"), pairs(&[("api_key", "sk-1")]));
        assert_eq!(values("<config><api_key>sk-1</api_key></config>"), pairs(&[("api_key", "sk-1")]));
        assert_eq!(values("GET https://h/v1?model=gpt&api_key=sk-1&x=1"), pairs(&[("api_key", "sk-1")]));
        assert_eq!(values("Authorization: Bearer sk-1"), pairs(&[("Authorization", "Bearer sk-1")]));
        assert_eq!(values("OPENAI_API_KEY=sk-1 next"), pairs(&[("OPENAI_API_KEY", "sk-1")]));
        assert_eq!(
            values("curl -H \"Authorization: Bearer sk-1\" https://h"),
            pairs(&[("Authorization", "Bearer sk-1")])
        );
        assert_eq!(values("run --api-key  sk-1 -v"), pairs(&[("--api-key", "sk-1")]));
        assert_eq!(values("\"api\\u005fkey\": \"sk-1\""), pairs(&[("api_key", "sk-1")]));
        assert_eq!(values("x=\"{\\\"token\\\": \\\"t-1\\\"}\""), pairs(&[("token", "t-1")]));
    }

    #[test]
    fn h8_what_is_passed_over() {
        assert!(values("encrypted_content_bytes: 40, encrypted_content_sha256: ab").is_empty());
        assert!(values("model: gpt-5, author").is_empty());
        assert!(values("api_key: [redacted]").is_empty(), "an empty bare value is no value");
        assert!(values("<api_key>  </api_key>").is_empty(), "a blank element has no value");
    }

    #[test]
    fn h8_base64_runs_and_shapes() {
        let fernet = format!("gAAAAAB{}", "x".repeat(93));
        let forms = read_gap(format!("state {fernet} end").as_bytes());
        assert_eq!(forms.runs, [Run { span: 6..106, kind: RunKind::Ciphertext }]);
        assert!(read_gap(format!("state {}", &fernet[..99]).as_bytes()).runs.is_empty());
        let mixed = "Ab1".repeat(67);
        assert_eq!(read_gap(mixed.as_bytes()).runs[0].kind, RunKind::Ciphertext);
        // `{"api_key": "k"}` in base64 is a text, read again.
        let forms = read_gap(b"cfg=eyJhcGlfa2V5IjogImsifQ==");
        assert_eq!(forms.runs, [Run { span: 4..28, kind: RunKind::Encoded(WStr::from("{\"api_key\": \"k\"}")) }]);
        // A 64-hex digest is no ciphertext; runs inside a sensitive value are not read.
        assert!(read_gap("0123456789abcdef".repeat(4).as_bytes()).runs.iter().all(|r| r.kind != RunKind::Ciphertext));
        assert!(read_gap(format!("encrypted_content: {fernet}").as_bytes()).runs.is_empty());
    }

    #[test]
    fn h8_quoted_values_end_as_fragments_do() {
        // A quote with no backslash ends an escaped value at every level.
        assert_eq!(values(r#"cfg="{\"api_key\": \"sk-1" plus \"n\""#), pairs(&[("api_key", "sk-1")]));
        // Any number of backslashes opens a quoted value; it ends after as many (plus pairs).
        assert_eq!(values(r#"api_key: \\"sk-1\\" tail"#), pairs(&[("api_key", "sk-1")]));
    }

    #[test]
    fn h8_xml_element_text_is_trimmed_of_spaces() {
        assert_eq!(values("<api_key>\n  sk-1 \u{b}</api_key>"), pairs(&[("api_key", "sk-1")]));
        assert!(values("<token>\u{b}\u{c}</token>").is_empty(), "spaces only are blank");
    }

    #[test]
    fn h8_percent_decoding_reads_what_is_not_utf8_as_u_fffd() {
        assert_eq!(percent_decoded(b"a%E9b"), Some(WStr::from("a\u{FFFD}b")));
        // A lone surrogate (WTF-8) is one U+FFFD, as in the text's UTF-8.
        assert_eq!(percent_decoded(b"%41\xED\xA0\x80"), Some(WStr::from("A\u{FFFD}")));
    }

    #[test]
    fn h8_encoded_texts() {
        assert_eq!(percent_decoded(b"a%22b+c%zz"), Some(WStr::from("a\"b+c%zz")));
        assert_eq!(percent_decoded(b"100%"), None);
        assert_eq!(html_decoded(b"&quot;x&quot; &amp;&#65;&#x42;&lt;"), Some(WStr::from("\"x\" &AB<")));
        assert_eq!(html_decoded(b"a & b"), None);
    }
}

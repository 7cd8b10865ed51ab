//! JSON for this specification: strings that can hold lone surrogates (U1), numbers kept as
//! their exact lexemes (H6 step 4), duplicate members kept (E4, H8), byte spans of every value
//! (H6 step 2 edits texts in place), and the compact serialisation of C3 / H6 step 4.
//!
//! Two layers:
//! - [`Node`]: a parsed value with the byte span of every value and member name in its source.
//!   Produced by [`parse_value_at`] / [`parse_document`], strict (RFC 8259) or lenient (H8:
//!   `NaN`, `Infinity`, `-Infinity` accepted).
//! - [`Value`]: a plain value tree (no spans) used by the operations.

use std::collections::HashSet;
use std::fmt;

/// A JSON string as WTF-8 bytes: UTF-8, except that a lone surrogate (U+D800..U+DFFF not part of
/// a pair) is encoded as its 3-byte generalised UTF-8 form (SPEC U1; PROTOCOL "Lone surrogates").
/// Invariant: never two encoded surrogates forming a pair. Byte order equals code-point order.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct WStr(Vec<u8>);

impl WStr {
    pub fn new() -> WStr {
        WStr(Vec::new())
    }

    /// Wraps bytes that are already WTF-8 (or UTF-8).
    pub fn from_wtf8(bytes: Vec<u8>) -> WStr {
        WStr(bytes)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The string as `&str` when it holds no lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// True when the string holds a lone surrogate (it is not a sequence of scalar values).
    pub fn has_surrogate(&self) -> bool {
        self.as_str().is_none()
    }

    /// U1: the UTF-8 bytes of the string with each lone surrogate replaced by U+FFFD.
    pub fn to_utf8_lossy(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.0.len());
        let b = &self.0;
        let mut i = 0;
        while i < b.len() {
            if b[i] == 0xED && i + 2 < b.len() && (0xA0..=0xBF).contains(&b[i + 1]) {
                out.extend_from_slice("\u{FFFD}".as_bytes());
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        out
    }

    /// U1: UTF-8 byte length, a lone surrogate counting as U+FFFD (3 bytes, as in WTF-8).
    pub fn utf8_len(&self) -> usize {
        self.0.len()
    }

    /// U1: lowercase hex SHA-256 of the UTF-8 bytes, lone surrogates as U+FFFD.
    pub fn sha256_hex(&self) -> String {
        crate::sha256::hex_digest(&self.to_utf8_lossy())
    }

    /// The code points of the string (a lone surrogate yields its surrogate code point).
    pub fn code_points(&self) -> Vec<u32> {
        decode_wtf8(&self.0)
    }

    pub fn char_count(&self) -> usize {
        self.0.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
    }

    /// Appends a code point, pairing a low surrogate with a preceding lone high surrogate so
    /// that the WTF-8 invariant holds.
    pub fn push_cp(&mut self, cp: u32) {
        if (0xDC00..=0xDFFF).contains(&cp) {
            let n = self.0.len();
            if n >= 3 && self.0[n - 3] == 0xED && (0xA0..=0xAF).contains(&self.0[n - 2]) {
                let hi = 0xD000 | ((self.0[n - 2] as u32 & 0x3F) << 6) | (self.0[n - 1] as u32 & 0x3F);
                self.0.truncate(n - 3);
                let c = 0x10000 + ((hi - 0xD800) << 10) + (cp - 0xDC00);
                encode_cp(c, &mut self.0);
                return;
            }
        }
        encode_cp(cp, &mut self.0);
    }

    pub fn push_str(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    pub fn eq_str(&self, s: &str) -> bool {
        self.0 == s.as_bytes()
    }

    /// The string for messages and keys: lossy, lone surrogates as U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        String::from_utf8(self.to_utf8_lossy()).unwrap_or_default()
    }
}

impl From<&str> for WStr {
    fn from(s: &str) -> WStr {
        WStr(s.as_bytes().to_vec())
    }
}

impl From<String> for WStr {
    fn from(s: String) -> WStr {
        WStr(s.into_bytes())
    }
}

impl fmt::Debug for WStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", String::from_utf8_lossy(&quote(self)))
    }
}

/// Encodes one code point (surrogates included) as generalised UTF-8.
pub fn encode_cp(cp: u32, out: &mut Vec<u8>) {
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.push(0xC0 | (cp >> 6) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    } else if cp < 0x10000 {
        out.push(0xE0 | (cp >> 12) as u8);
        out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    } else {
        out.push(0xF0 | (cp >> 18) as u8);
        out.push(0x80 | ((cp >> 12) & 0x3F) as u8);
        out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    }
}

/// Decodes generalised UTF-8 (assumed well-formed apart from surrogates) into code points.
/// Invalid bytes decode as U+FFFD.
pub fn decode_wtf8(b: &[u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let (len, init) = if c < 0x80 {
            (1, c as u32)
        } else if c >= 0xF0 {
            (4, (c & 0x07) as u32)
        } else if c >= 0xE0 {
            (3, (c & 0x0F) as u32)
        } else if c >= 0xC0 {
            (2, (c & 0x1F) as u32)
        } else {
            (1, 0xFFFD)
        };
        if len == 1 || i + len > b.len() {
            out.push(if c < 0x80 { c as u32 } else { 0xFFFD });
            i += 1;
            continue;
        }
        let mut cp = init;
        let mut ok = true;
        for k in 1..len {
            let cb = b[i + k];
            if cb & 0xC0 != 0x80 {
                ok = false;
                break;
            }
            cp = (cp << 6) | (cb & 0x3F) as u32;
        }
        if ok {
            out.push(cp);
            i += len;
        } else {
            out.push(0xFFFD);
            i += 1;
        }
    }
    out
}

/// A plain JSON value. Objects keep member order and duplicate members; numbers keep their
/// lexeme exactly as written (H6 step 4).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(String),
    String(WStr),
    Array(Vec<Value>),
    Object(Vec<(WStr, Value)>),
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::String(WStr::from(s))
    }

    pub fn int(n: u64) -> Value {
        Value::Number(n.to_string())
    }

    /// Builds an object from `(name, value)` pairs, in order.
    pub fn obj(members: Vec<(&str, Value)>) -> Value {
        Value::Object(members.into_iter().map(|(k, v)| (WStr::from(k), v)).collect())
    }

    /// The value of member `name`; with duplicate members, the last one (as most parsers do).
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.iter().rev().find(|(k, _)| k.eq_str(name)).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Like [`Value::get`], treating an explicit `null` as absent.
    pub fn get_non_null(&self, name: &str) -> Option<&Value> {
        self.get(name).filter(|v| !v.is_null())
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_wstr(&self) -> Option<&WStr> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The string when it is a string holding no lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        self.as_wstr().and_then(|s| s.as_str())
    }

    pub fn is_str(&self, s: &str) -> bool {
        matches!(self, Value::String(w) if w.eq_str(s))
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Vec<(WStr, Value)>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// E1: a number read as IEEE 754 binary64 (RFC 7493 §2.2).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(lex) => lexeme_f64(lex),
            _ => None,
        }
    }

    /// R2: a *count* is a number whose value is a whole number >= 0.
    pub fn is_count(&self) -> bool {
        match self.as_f64() {
            Some(f) => f.is_finite() && f >= 0.0 && f.fract() == 0.0,
            None => false,
        }
    }

    /// True when a member name occurs twice in this object (not recursive).
    pub fn has_duplicate_members(&self) -> bool {
        match self {
            Value::Object(m) => {
                let mut seen = HashSet::new();
                m.iter().any(|(k, _)| !seen.insert(k.as_bytes()))
            }
            _ => false,
        }
    }

    /// Compact text (C3 string escaping, H6 step 4).
    pub fn to_compact(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_compact(self, &mut out);
        out
    }

    pub fn to_compact_wstr(&self) -> WStr {
        WStr::from_wtf8(self.to_compact())
    }
}

/// Reads a number lexeme as binary64 (`NaN`/`Infinity` of lenient texts included).
pub fn lexeme_f64(lex: &str) -> Option<f64> {
    match lex {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => lex.parse::<f64>().ok(),
    }
}

/// C3 / H6 step 4: a JSON string literal with only `"`, `\` and U+0000..U+001F escaped (short
/// forms where they exist, else `\u00xx` lowercase), every other character raw UTF-8, and a lone
/// surrogate written `\udxxx` (lowercase).
pub fn quote(s: &WStr) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.0.len() + 2);
    quote_into(s.as_bytes(), &mut out);
    out
}

/// Escapes string content (without the surrounding quotes), as [`quote`] does.
pub fn escape_body(b: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x09 => out.extend_from_slice(b"\\t"),
            0x0A => out.extend_from_slice(b"\\n"),
            0x0C => out.extend_from_slice(b"\\f"),
            0x0D => out.extend_from_slice(b"\\r"),
            0x00..=0x1F => out.extend_from_slice(format!("\\u{:04x}", c).as_bytes()),
            0xED if i + 2 < b.len() && (0xA0..=0xBF).contains(&b[i + 1]) => {
                let cp = 0xD000 | ((b[i + 1] as u32 & 0x3F) << 6) | (b[i + 2] as u32 & 0x3F);
                out.extend_from_slice(format!("\\u{:04x}", cp).as_bytes());
                i += 3;
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
}

fn quote_into(b: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    escape_body(b, out);
    out.push(b'"');
}

/// Writes the compact text of a value: no whitespace, members in order, numbers as written.
pub fn write_compact(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(lex) => out.extend_from_slice(lex.as_bytes()),
        Value::String(s) => quote_into(s.as_bytes(), out),
        Value::Array(a) => {
            out.push(b'[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_compact(e, out);
            }
            out.push(b']');
        }
        Value::Object(m) => {
            out.push(b'{');
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                quote_into(k.as_bytes(), out);
                out.push(b':');
                write_compact(e, out);
            }
            out.push(b'}');
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

/// A parsed value with its byte span `[start, end)` in the source.
#[derive(Clone, Debug)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: NodeKind,
}

#[derive(Clone, Debug)]
pub enum NodeKind {
    Null,
    Bool(bool),
    /// The lexeme is `src[start..end]`.
    Number,
    Str(WStr),
    Array(Vec<Node>),
    Object(Vec<MemberNode>),
}

#[derive(Clone, Debug)]
pub struct MemberNode {
    pub name: WStr,
    pub name_start: usize,
    pub name_end: usize,
    pub value: Node,
}

impl Node {
    /// Converts to a plain value; `src` supplies number lexemes.
    pub fn to_value(&self, src: &[u8]) -> Value {
        match &self.kind {
            NodeKind::Null => Value::Null,
            NodeKind::Bool(b) => Value::Bool(*b),
            NodeKind::Number => Value::Number(String::from_utf8_lossy(&src[self.start..self.end]).into_owned()),
            NodeKind::Str(s) => Value::String(s.clone()),
            NodeKind::Array(a) => Value::Array(a.iter().map(|n| n.to_value(src)).collect()),
            NodeKind::Object(m) => {
                Value::Object(m.iter().map(|mm| (mm.name.clone(), mm.value.to_value(src))).collect())
            }
        }
    }

    /// The last member named `name` (a repeated member counts by its last value, H6 step 2).
    pub fn get(&self, name: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Object(m) => m.iter().rev().find(|mm| mm.name.eq_str(name)).map(|mm| &mm.value),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ParseOptions {
    /// H8: accept `NaN`, `Infinity` and `-Infinity` as numbers.
    pub lenient_tokens: bool,
    /// Deepest nesting this parser holds; deeper texts fail with [`ParseError::TooDeep`].
    pub max_depth: usize,
    /// Record whether an object repeats a member name (E6 step 5).
    pub detect_duplicates: bool,
}

impl ParseOptions {
    pub const STRICT: ParseOptions =
        ParseOptions { lenient_tokens: false, max_depth: MAX_DEPTH, detect_duplicates: true };
    pub const LENIENT: ParseOptions =
        ParseOptions { lenient_tokens: true, max_depth: MAX_DEPTH, detect_duplicates: false };
}

/// The deepest nesting any parser here holds (bounded recursion; see NOTES.md).
pub const MAX_DEPTH: usize = 200_000;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseFlags {
    /// E6 step 4: some string or member name escapes a lone surrogate.
    pub lone_surrogate_escape: bool,
    /// E6 step 5: some object has two members of one name.
    pub duplicate_member: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    Syntax(usize),
    TooDeep,
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    opts: ParseOptions,
    flags: ParseFlags,
}

pub fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// Parses exactly one value optionally surrounded by JSON whitespace (RFC 8259 `JSON-text`).
pub fn parse_document(src: &[u8], opts: ParseOptions) -> Result<(Node, ParseFlags), ParseError> {
    let mut p = Parser { src, pos: 0, opts, flags: ParseFlags::default() };
    p.skip_ws();
    let node = p.value(0)?;
    p.skip_ws();
    if p.pos != src.len() {
        return Err(ParseError::Syntax(p.pos));
    }
    Ok((node, p.flags))
}

/// Parses one value starting exactly at `pos` (no leading whitespace); returns it and its end.
pub fn parse_value_at(src: &[u8], pos: usize, opts: ParseOptions) -> Result<(Node, ParseFlags), ParseError> {
    let mut p = Parser { src, pos, opts, flags: ParseFlags::default() };
    let node = p.value(0)?;
    Ok((node, p.flags))
}

/// Parses a document into a plain value.
pub fn parse_value(src: &[u8], opts: ParseOptions) -> Result<(Value, ParseFlags), ParseError> {
    let (n, f) = parse_document(src, opts)?;
    Ok((n.to_value(src), f))
}

impl<'a> Parser<'a> {
    fn err<T>(&self) -> Result<T, ParseError> {
        Err(ParseError::Syntax(self.pos))
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if is_ws(c) {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn eat_lit(&mut self, lit: &[u8]) -> bool {
        if self.src[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, ParseError> {
        let start = self.pos;
        let kind = match self.peek() {
            None => return self.err(),
            Some(b'{') => self.object(depth + 1)?,
            Some(b'[') => self.array(depth + 1)?,
            Some(b'"') => NodeKind::Str(self.string()?),
            Some(b't') if self.eat_lit(b"true") => NodeKind::Bool(true),
            Some(b'f') if self.eat_lit(b"false") => NodeKind::Bool(false),
            Some(b'n') if self.eat_lit(b"null") => NodeKind::Null,
            Some(b'N') if self.opts.lenient_tokens && self.eat_lit(b"NaN") => NodeKind::Number,
            Some(b'I') if self.opts.lenient_tokens && self.eat_lit(b"Infinity") => NodeKind::Number,
            Some(b'-') if self.opts.lenient_tokens && self.eat_lit(b"-Infinity") => NodeKind::Number,
            Some(c) if c == b'-' || c.is_ascii_digit() => {
                self.number()?;
                NodeKind::Number
            }
            _ => return self.err(),
        };
        Ok(Node { start, end: self.pos, kind })
    }

    fn number(&mut self) -> Result<(), ParseError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(c) if c.is_ascii_digit() => {
                while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                    self.pos += 1;
                }
            }
            _ => return self.err(),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                return self.err();
            }
            while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(), Some(b'e') | Some(b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+') | Some(b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                return self.err();
            }
            while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        if self.pos + 4 > self.src.len() {
            return self.err();
        }
        let mut v = 0u32;
        for k in 0..4 {
            let d = match self.src[self.pos + k] {
                c @ b'0'..=b'9' => c - b'0',
                c @ b'a'..=b'f' => c - b'a' + 10,
                c @ b'A'..=b'F' => c - b'A' + 10,
                _ => {
                    self.pos += k;
                    return self.err();
                }
            };
            v = v * 16 + d as u32;
        }
        self.pos += 4;
        Ok(v)
    }

    /// A string literal; the cursor is on the opening quote.
    fn string(&mut self) -> Result<WStr, ParseError> {
        self.pos += 1;
        let mut out = WStr::new();
        loop {
            // Copy a run of plain bytes at once.
            let run_start = self.pos;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            if self.pos > run_start {
                out.0.extend_from_slice(&self.src[run_start..self.pos]);
            }
            match self.peek() {
                None => return self.err(),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let Some(e) = self.peek() else { return self.err() };
                    self.pos += 1;
                    match e {
                        b'"' => out.0.push(b'"'),
                        b'\\' => out.0.push(b'\\'),
                        b'/' => out.0.push(b'/'),
                        b'b' => out.0.push(0x08),
                        b'f' => out.0.push(0x0C),
                        b'n' => out.0.push(b'\n'),
                        b'r' => out.0.push(b'\r'),
                        b't' => out.0.push(b'\t'),
                        b'u' => {
                            let u = self.hex4()?;
                            if (0xD800..=0xDBFF).contains(&u) {
                                // A pair only when a low-surrogate escape follows at once.
                                let save = self.pos;
                                if self.eat_lit(b"\\u") {
                                    let lo = self.hex4()?;
                                    if (0xDC00..=0xDFFF).contains(&lo) {
                                        let c = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                                        encode_cp(c, &mut out.0);
                                        continue;
                                    }
                                }
                                self.pos = save;
                                self.flags.lone_surrogate_escape = true;
                                out.push_cp(u);
                            } else if (0xDC00..=0xDFFF).contains(&u) {
                                self.flags.lone_surrogate_escape = true;
                                out.push_cp(u);
                            } else {
                                encode_cp(u, &mut out.0);
                            }
                        }
                        _ => {
                            self.pos -= 1;
                            return self.err();
                        }
                    }
                }
                Some(_) => return self.err(), // a control character
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<NodeKind, ParseError> {
        if depth > self.opts.max_depth {
            return Err(ParseError::TooDeep);
        }
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(NodeKind::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(NodeKind::Array(items));
                }
                _ => return self.err(),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<NodeKind, ParseError> {
        if depth > self.opts.max_depth {
            return Err(ParseError::TooDeep);
        }
        self.pos += 1;
        let mut members: Vec<MemberNode> = Vec::new();
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(NodeKind::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return self.err();
            }
            let name_start = self.pos;
            let name = self.string()?;
            let name_end = self.pos;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return self.err();
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth)?;
            if self.opts.detect_duplicates && !seen.insert(name.0.clone()) {
                self.flags.duplicate_member = true;
            }
            members.push(MemberNode { name, name_start, name_end, value });
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(NodeKind::Object(members));
                }
                _ => return self.err(),
            }
        }
    }
}

/// JSON-unescapes a string body (the text between the quotes of a literal), as the string
/// grammar of RFC 8259 does; lone surrogate escapes are kept. `None` when it does not unescape
/// (a bad escape, a raw `"` or a control character).
pub fn unescape_body(body: &[u8]) -> Option<WStr> {
    let mut lit = Vec::with_capacity(body.len() + 2);
    lit.push(b'"');
    lit.extend_from_slice(body);
    lit.push(b'"');
    let mut p = Parser { src: &lit, pos: 0, opts: ParseOptions::LENIENT, flags: ParseFlags::default() };
    match p.string() {
        Ok(s) if p.pos == lit.len() => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<(Value, ParseFlags), ParseError> {
        parse_value(s.as_bytes(), ParseOptions::STRICT)
    }

    #[test]
    fn parses_rfc8259_values_and_keeps_lexemes() {
        let (v, _) = parse(" {\"a\":[1,1.0,1e0,-0,true,null,\"x\"]} ").unwrap();
        assert_eq!(String::from_utf8(v.to_compact()).unwrap(), "{\"a\":[1,1.0,1e0,-0,true,null,\"x\"]}");
    }

    #[test]
    fn rejects_non_json() {
        for t in ["", "NaN", "Infinity", "01", "1.", "[1,]", "{\"a\"}", "'a'", "[1] x", "\"\t\""] {
            assert!(parse(t).is_err(), "{t:?}");
        }
        assert!(parse_value(b"NaN", ParseOptions::LENIENT).is_ok());
        assert!(parse_value(b"-Infinity", ParseOptions::LENIENT).is_ok());
    }

    #[test]
    fn flags_lone_surrogates_and_duplicates() {
        let (_, f) = parse("[\"\\ud800\"]").unwrap();
        assert!(f.lone_surrogate_escape);
        let (v, f) = parse("\"\\ud83d\\ude00\"").unwrap();
        assert!(!f.lone_surrogate_escape);
        assert_eq!(v.as_str(), Some("😀"));
        let (_, f) = parse("{\"a\":1,\"\\u0061\":2}").unwrap();
        assert!(f.duplicate_member);
    }

    #[test]
    fn lone_surrogate_round_trips_and_hashes_as_fffd() {
        let (v, _) = parse("\"x\\ud800\"").unwrap();
        let s = v.as_wstr().unwrap();
        assert!(s.has_surrogate());
        assert_eq!(String::from_utf8(v.to_compact()).unwrap(), "\"x\\ud800\"");
        // U1: x\ud800 and x\ufffd have one digest and one byte count.
        assert_eq!(s.sha256_hex(), WStr::from("x\u{FFFD}").sha256_hex());
        assert_eq!(s.utf8_len(), 4);
    }

    #[test]
    fn c3_escaping() {
        let s = WStr::from("a\"\\\u{1}\u{8}\u{7f}\u{2028}é\n");
        assert_eq!(String::from_utf8(quote(&s)).unwrap(), "\"a\\\"\\\\\\u0001\\b\u{7f}\u{2028}é\\n\"");
    }

    #[test]
    fn depth_limit() {
        // Deep recursion needs the large stack the adapter runs on.
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn(|| {
                let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
                assert_eq!(parse(&deep).unwrap_err(), ParseError::TooDeep);
                let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
                assert!(parse(&ok).is_ok());
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn code_point_order_of_wtf8() {
        let a = WStr::from("\u{D7FF}");
        let mut b = WStr::new();
        b.push_cp(0xD800);
        let c = WStr::from("\u{E000}");
        assert!(a < b && b < c);
    }
}

/*
 * _canonical: read an envelope text laid out exactly as SPEC §4 C3 writes it, fast.
 *
 * This is the optional accelerator of reader._read_canonical, which stays the readable statement
 * of what it does and the fallback where this module is not built. It follows the canonical
 * layout (fixed member order, no whitespace, SPEC §4 C3) and decodes every string literal by the
 * JSON string grammar (RFC 8259 §7), refusing what SPEC §3 E4 refuses in a string: raw control
 * characters, bad escapes, and surrogates, raw or escaped alone (SPEC §3 E6 steps 2 and 4).
 *
 * It only ever accepts. For any text that departs from the layout or breaks a rule it returns
 * None, and the reader then reads the text the general way, which gives the code. A text it
 * accepts is one JSON value, with no whitespace, no member twice and depth 4, so SPEC §3 E4 holds
 * by construction, and its value is a canonical envelope (SPEC §3 E1, E2).
 *
 * A str is read from its internal buffer as it is stored (one, two or four bytes a character),
 * without transcoding it. Bytes are read the same way, their literals decoded as UTF-8 by
 * CPython's strict decoder, which refuses invalid UTF-8 and encoded surrogates (SPEC §3 E4).
 *
 * It accepts exactly the texts _read_canonical accepts, so that the two can be compared text by
 * text (tests/test_canonical_accelerator.py). That includes two limits of the Python path on the
 * ciphertext, which it reads as an ASCII literal: a raw non-ASCII character or a \" escape in it
 * sends the text the general way (both are legal, and neither occurs in real ciphertexts).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* The fixed pieces of the layout (SPEC §4 C3); each literal's opening quote ends its head. */
static const char HEAD[] =
    "{\"schema\":\"fast-agent.openai-responses.reasoning-replay\",\"version\":1,"
    "\"item\":{\"type\":\"reasoning\",\"id\":\"";
static const char SUMMARY_HEAD[] = ",\"summary\":[";
static const char SUMMARY_PART_HEAD[] = "{\"type\":\"summary_text\",\"text\":\"";
static const char CIPHERTEXT_HEAD[] = ",\"encrypted_content\":\"";
static const char CONTENT_HEAD[] = ",\"content\":[";
static const char CONTENT_PART_HEAD[] = "{\"type\":\"reasoning_text\",\"text\":\"";
static const char TAIL[] = "}}";

#define LENGTH(literal) ((Py_ssize_t)(sizeof(literal) - 1))

/* The text being read: a str's characters as stored, or a bytes object's bytes (kind 1). */
typedef struct {
    int kind;          /* 1, 2 or 4 bytes a character */
    const void *data;
    Py_ssize_t length; /* in characters (in bytes for bytes) */
    int utf8;          /* bytes: characters from 0x80 up are UTF-8 code units, not characters */
} Text;

static inline Py_UCS4
char_at(const Text *t, Py_ssize_t i)
{
    switch (t->kind) {
    case 1:
        return ((const Py_UCS1 *)t->data)[i];
    case 2:
        return ((const Py_UCS2 *)t->data)[i];
    default:
        return ((const Py_UCS4 *)t->data)[i];
    }
}

/* Whether the ASCII piece `s` of `n` characters stands at `i`. */
static int
starts_with(const Text *t, Py_ssize_t i, const char *s, Py_ssize_t n)
{
    if (i < 0 || n > t->length - i) {
        return 0;
    }
    if (t->kind == 1) {
        return memcmp((const char *)t->data + i, s, (size_t)n) == 0;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (char_at(t, i + k) != (Py_UCS4)(unsigned char)s[k]) {
            return 0;
        }
    }
    return 1;
}

#define STARTS_WITH(t, i, piece) starts_with((t), (i), (piece), LENGTH(piece))

/* --- scanning a literal ------------------------------------------------------------------- */

/*
 * A character that ends a run of plain characters in a string literal: the closing quote, a
 * backslash, a control character (RFC 8259 §7 requires it escaped), or a surrogate (never a
 * Unicode scalar value, SPEC §3 E6 step 2; kind 1 holds none).
 */
#define ENDS_RUN(c)                                                                         \
    ((c) < 0x20 || (c) == '"' || (c) == '\\' || ((c) >= 0xD800 && (c) <= 0xDFFF))

/*
 * span_ucsN: the index of the first character from `i` (below `n`) that ends a run, or `n`. ORs
 * into *bits a value whose highest bit is that of the greatest character passed over, which
 * tells the kind a string of them needs (see max_char).
 *
 * Most of a text is the long ciphertext, one plain run, so with SSE2 (every x86-64) runs are
 * tested 16 bytes at a time; the last characters, and other machines, go one at a time.
 */
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif

static Py_ssize_t
span_ucs1(const Py_UCS1 *s, Py_ssize_t i, Py_ssize_t n, Py_UCS4 *bits)
{
    Py_UCS4 seen = 0;
#ifdef HAVE_SSE2
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i last_control = _mm_set1_epi8(0x1F);
    __m128i block_seen = _mm_setzero_si128();
    for (; n - i >= 16; i += 16) {
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i stop = _mm_or_si128(_mm_cmpeq_epi8(c, quote), _mm_cmpeq_epi8(c, backslash));
        /* min(c, 0x1F) == c: c is a control character */
        stop = _mm_or_si128(stop, _mm_cmpeq_epi8(_mm_min_epu8(c, last_control), c));
        if (_mm_movemask_epi8(stop)) {
            break;
        }
        block_seen = _mm_or_si128(block_seen, c);
    }
    if (_mm_movemask_epi8(block_seen)) { /* a byte from 0x80 up */
        seen = 0x80;
    }
#endif
    for (; i < n && !ENDS_RUN(s[i]); i++) {
        seen |= s[i];
    }
    *bits |= seen;
    return i;
}

static Py_ssize_t
span_ucs2(const Py_UCS2 *s, Py_ssize_t i, Py_ssize_t n, Py_UCS4 *bits)
{
    Py_UCS4 seen = 0;
#ifdef HAVE_SSE2
    const __m128i quote = _mm_set1_epi16('"'), backslash = _mm_set1_epi16('\\');
    const __m128i last_control = _mm_set1_epi16(0x1F), zero = _mm_setzero_si128();
    const __m128i surrogate_bits = _mm_set1_epi16((short)0xF800);
    const __m128i surrogate = _mm_set1_epi16((short)0xD800);
    __m128i block_seen = zero;
    for (; n - i >= 8; i += 8) {
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i stop = _mm_or_si128(_mm_cmpeq_epi16(c, quote), _mm_cmpeq_epi16(c, backslash));
        /* c - 0x1F saturates to 0: c is a control character */
        stop = _mm_or_si128(stop, _mm_cmpeq_epi16(_mm_subs_epu16(c, last_control), zero));
        stop = _mm_or_si128(stop,
                            _mm_cmpeq_epi16(_mm_and_si128(c, surrogate_bits), surrogate));
        if (_mm_movemask_epi8(stop)) {
            break;
        }
        block_seen = _mm_or_si128(block_seen, c);
    }
    block_seen = _mm_or_si128(block_seen, _mm_srli_si128(block_seen, 8));
    block_seen = _mm_or_si128(block_seen, _mm_srli_si128(block_seen, 4));
    block_seen = _mm_or_si128(block_seen, _mm_srli_si128(block_seen, 2));
    seen = (Py_UCS4)_mm_extract_epi16(block_seen, 0);
#endif
    for (; i < n && !ENDS_RUN(s[i]); i++) {
        seen |= s[i];
    }
    *bits |= seen;
    return i;
}

static Py_ssize_t
span_ucs4(const Py_UCS4 *s, Py_ssize_t i, Py_ssize_t n, Py_UCS4 *bits)
{
    Py_UCS4 seen = 0;
    for (; i < n && !ENDS_RUN(s[i]); i++) {
        seen |= s[i];
    }
    *bits |= seen;
    return i;
}

static Py_ssize_t
span(const Text *t, Py_ssize_t i, Py_ssize_t n, Py_UCS4 *bits)
{
    switch (t->kind) {
    case 1:
        return span_ucs1((const Py_UCS1 *)t->data, i, n, bits);
    case 2:
        return span_ucs2((const Py_UCS2 *)t->data, i, n, bits);
    default:
        return span_ucs4((const Py_UCS4 *)t->data, i, n, bits);
    }
}

/* The greatest character a string may hold given the OR of its characters: the OR has the
 * same bit length as the greatest character, which is all PyUnicode_New needs to know. */
static Py_UCS4
max_char(Py_UCS4 bits)
{
    if (bits < 0x80) {
        return 0x7F;
    }
    if (bits < 0x100) {
        return 0xFF;
    }
    if (bits < 0x10000) {
        return 0xFFFF;
    }
    return 0x10FFFF;
}

/* The value of four hexadecimal digits from `i`, or -1. */
static long
hex4(const Text *t, Py_ssize_t i)
{
    long value = 0;
    if (t->length - i < 4) {
        return -1;
    }
    for (int k = 0; k < 4; k++) {
        Py_UCS4 c = char_at(t, i + k);
        int digit;
        if (c >= '0' && c <= '9') {
            digit = (int)(c - '0');
        }
        else if (c >= 'a' && c <= 'f') {
            digit = (int)(c - 'a' + 10);
        }
        else if (c >= 'A' && c <= 'F') {
            digit = (int)(c - 'A' + 10);
        }
        else {
            return -1;
        }
        value = value * 16 + digit;
    }
    return value;
}

/*
 * The escape at `i` (a backslash): stores the character it stands for in *cp and returns the
 * index just after it, or -1 for an invalid escape. A \uXXXX high surrogate must be followed by
 * a \uXXXX low surrogate, and the pair stands for one character; any other escaped surrogate is
 * a lone one (SPEC §3 E4, E6 step 4).
 */
static Py_ssize_t
read_escape(const Text *t, Py_ssize_t i, Py_UCS4 *cp)
{
    if (t->length - i < 2) {
        return -1;
    }
    switch (char_at(t, i + 1)) {
    case '"':
        *cp = '"';
        return i + 2;
    case '\\':
        *cp = '\\';
        return i + 2;
    case '/':
        *cp = '/';
        return i + 2;
    case 'b':
        *cp = '\b';
        return i + 2;
    case 'f':
        *cp = '\f';
        return i + 2;
    case 'n':
        *cp = '\n';
        return i + 2;
    case 'r':
        *cp = '\r';
        return i + 2;
    case 't':
        *cp = '\t';
        return i + 2;
    case 'u':
        break;
    default:
        return -1;
    }
    long unit = hex4(t, i + 2);
    if (unit < 0) {
        return -1;
    }
    if (unit < 0xD800 || unit > 0xDFFF) {
        *cp = (Py_UCS4)unit;
        return i + 6;
    }
    if (unit > 0xDBFF || !starts_with(t, i + 6, "\\u", 2)) {
        return -1; /* a lone low surrogate, or a high one not followed by an escape */
    }
    long low = hex4(t, i + 8);
    if (low < 0xDC00 || low > 0xDFFF) {
        return -1;
    }
    *cp = 0x10000 + (((Py_UCS4)unit - 0xD800) << 10) + ((Py_UCS4)low - 0xDC00);
    return i + 12;
}

/* --- making a string of a literal ------------------------------------------------------ */

/* Copies the characters [from, to) of a str into `out` at `at`, converting their width. */
static void
copy_chars(PyObject *out, Py_ssize_t at, const Text *t, Py_ssize_t from, Py_ssize_t to)
{
    int out_kind = PyUnicode_KIND(out);
    void *out_data = PyUnicode_DATA(out);
    Py_ssize_t n = to - from;
    if (out_kind == t->kind) {
        memcpy((char *)out_data + at * out_kind, (const char *)t->data + from * t->kind,
               (size_t)(n * out_kind));
        return;
    }
#define CONVERT(OUT, IN)                                                                    \
    do {                                                                                    \
        OUT *dst = (OUT *)out_data + at;                                                    \
        const IN *src = (const IN *)t->data + from;                                         \
        for (Py_ssize_t k = 0; k < n; k++) {                                                \
            dst[k] = (OUT)src[k];                                                           \
        }                                                                                   \
    } while (0)
    /* Narrowing only loses bits the literal does not use: max_char chose the kind. */
    switch (out_kind * 8 + t->kind) {
    case 1 * 8 + 2:
        CONVERT(Py_UCS1, Py_UCS2);
        break;
    case 1 * 8 + 4:
        CONVERT(Py_UCS1, Py_UCS4);
        break;
    case 2 * 8 + 1:
        CONVERT(Py_UCS2, Py_UCS1);
        break;
    case 2 * 8 + 4:
        CONVERT(Py_UCS2, Py_UCS4);
        break;
    case 4 * 8 + 1:
        CONVERT(Py_UCS4, Py_UCS1);
        break;
    default:
        CONVERT(Py_UCS4, Py_UCS2);
        break;
    }
#undef CONVERT
}

/*
 * The value of a str's literal [from, to) (between its quotes), once it is known to be valid:
 * `length` characters whose OR is `bits`. Runs between escapes are copied, escapes decoded.
 */
static PyObject *
str_value(const Text *t, Py_ssize_t from, Py_ssize_t to, Py_ssize_t length, Py_UCS4 bits)
{
    PyObject *out = PyUnicode_New(length, max_char(bits));
    if (out == NULL) {
        return NULL;
    }
    if (length == to - from) { /* no escape: one run */
        copy_chars(out, 0, t, from, to);
        return out;
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t i = from; i < to;) {
        Py_UCS4 ignored = 0;
        Py_ssize_t run_end = span(t, i, to, &ignored); /* the next escape, or `to` */
        copy_chars(out, at, t, i, run_end);
        at += run_end - i;
        i = run_end;
        if (i < to) {
            Py_UCS4 cp = 0;
            i = read_escape(t, i, &cp); /* valid: the literal has been read once already */
            PyUnicode_WRITE(PyUnicode_KIND(out), PyUnicode_DATA(out), at, cp);
            at++;
        }
    }
    return out;
}

/* Appends the UTF-8 encoding of the scalar value `cp` at `out`; returns the end. */
static char *
put_utf8(char *out, Py_UCS4 cp)
{
    if (cp < 0x80) {
        *out++ = (char)cp;
    }
    else if (cp < 0x800) {
        *out++ = (char)(0xC0 | (cp >> 6));
        *out++ = (char)(0x80 | (cp & 0x3F));
    }
    else if (cp < 0x10000) {
        *out++ = (char)(0xE0 | (cp >> 12));
        *out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *out++ = (char)(0x80 | (cp & 0x3F));
    }
    else {
        *out++ = (char)(0xF0 | (cp >> 18));
        *out++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *out++ = (char)(0x80 | (cp & 0x3F));
    }
    return out;
}

/* A str of UTF-8 bytes, or NULL with no exception set if they are not valid UTF-8 (which the
 * strict decoder checks, refusing encoded surrogates too: SPEC §3 E4, E6 step 2). */
static PyObject *
decode_utf8(const char *bytes, Py_ssize_t n, Py_UCS4 bits)
{
    if (bits < 0x80) { /* ASCII: nothing to decode */
        PyObject *out = PyUnicode_New(n, 0x7F);
        if (out != NULL) {
            memcpy(PyUnicode_DATA(out), bytes, (size_t)n);
        }
        return out;
    }
    PyObject *out = PyUnicode_DecodeUTF8(bytes, n, NULL);
    if (out == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear();
    }
    return out;
}

/*
 * The value of a bytes literal [from, to), once it is known to be well formed: the raw bytes
 * with every escape replaced by the UTF-8 of its character (never longer than the escape), then
 * decoded as UTF-8. `bits` is the OR of the raw bytes and escaped characters.
 */
static PyObject *
bytes_value(const Text *t, Py_ssize_t from, Py_ssize_t to, int escaped, Py_UCS4 bits)
{
    const char *raw = (const char *)t->data;
    if (!escaped) {
        return decode_utf8(raw + from, to - from, bits);
    }
    char small[1024];
    Py_ssize_t size = to - from;
    char *buffer = size <= (Py_ssize_t)sizeof(small) ? small : PyMem_Malloc((size_t)size);
    if (buffer == NULL) {
        return PyErr_NoMemory();
    }
    char *out = buffer;
    for (Py_ssize_t i = from; i < to;) {
        Py_UCS4 ignored = 0;
        Py_ssize_t run_end = span(t, i, to, &ignored);
        memcpy(out, raw + i, (size_t)(run_end - i));
        out += run_end - i;
        i = run_end;
        if (i < to) {
            Py_UCS4 cp = 0;
            i = read_escape(t, i, &cp);
            out = put_utf8(out, cp);
        }
    }
    PyObject *value = decode_utf8(buffer, out - buffer, bits);
    if (buffer != small) {
        PyMem_Free(buffer);
    }
    return value;
}

/* --- following the layout ------------------------------------------------------------ */

/*
 * The text is read in two passes. The first follows the layout and checks every literal,
 * noting where each is; only a text that passes it all gets its strings made, by the second.
 * Texts that depart from the layout late (an unknown member after the ciphertext, an empty
 * content) thus cost one scan, and no allocation.
 */

/* A string literal that the first pass found valid. */
typedef struct {
    Py_ssize_t from, to; /* its characters, between its quotes */
    Py_ssize_t length;   /* characters in its value (str only: bytes are decoded as UTF-8) */
    Py_UCS4 bits;        /* the OR of its characters, raw and escaped */
    int escaped;         /* whether it has an escape */
} Literal;

/* The literals of a text in order: id, summary texts, ciphertext, content texts. */
typedef struct {
    Literal *items;
    Py_ssize_t count, capacity;
    Literal inline_items[12]; /* enough for most texts: more go to the heap */
} Literals;

static void
literals_init(Literals *found)
{
    found->items = found->inline_items;
    found->count = 0;
    found->capacity = (Py_ssize_t)(sizeof(found->inline_items) / sizeof(Literal));
}

static void
literals_free(Literals *found)
{
    if (found->items != found->inline_items) {
        PyMem_Free(found->items);
    }
}

/* A new slot at the end, or NULL with MemoryError set. */
static Literal *
literals_push(Literals *found)
{
    if (found->count == found->capacity) {
        Py_ssize_t capacity = found->capacity * 2;
        Literal *items = PyMem_Malloc((size_t)capacity * sizeof(Literal));
        if (items == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        memcpy(items, found->items, (size_t)found->count * sizeof(Literal));
        literals_free(found);
        found->items = items;
        found->capacity = capacity;
    }
    return &found->items[found->count++];
}

/* How a step of the first pass ended. */
typedef enum { FAILED = -1, REFUSED = 0, FOUND = 1 } Step;

/* What a literal may hold beyond the JSON string grammar. */
enum { ANY_STRING = 0, CIPHERTEXT = 1 };

/*
 * Checks the string literal whose opening quote is just before *at, notes it in `found`, and
 * advances *at past its closing quote. REFUSED if it is unterminated or invalid by SPEC §3 E4 (a
 * raw control character or surrogate, a bad escape, an escaped lone surrogate); bytes are
 * checked to be UTF-8 by the second pass, when they are decoded.
 *
 * A CIPHERTEXT literal is also refused if it holds a raw non-ASCII character or a \" escape, as
 * in _read_canonical (see the top of this file).
 */
static Step
scan_literal(const Text *t, Py_ssize_t *at, int rule, Literals *found)
{
    Py_ssize_t from = *at, i = from;
    Py_ssize_t saved = 0; /* characters the escapes take beyond the one each stands for */
    Py_UCS4 raw_bits = 0, bits = 0;
    int escaped = 0;
    for (;;) {
        i = span(t, i, t->length, &raw_bits);
        if (i == t->length) {
            return REFUSED; /* unterminated */
        }
        Py_UCS4 c = char_at(t, i);
        if (c == '"') {
            break;
        }
        if (c != '\\') {
            return REFUSED; /* a raw control character or surrogate */
        }
        Py_UCS4 cp = 0;
        Py_ssize_t next = read_escape(t, i, &cp);
        if (next < 0 || (rule == CIPHERTEXT && next == i + 2 && cp == '"')) {
            return REFUSED;
        }
        bits |= cp;
        saved += next - i - 1;
        escaped = 1;
        i = next;
    }
    if (rule == CIPHERTEXT && raw_bits >= 0x80) {
        return REFUSED;
    }
    Literal *literal = literals_push(found);
    if (literal == NULL) {
        return FAILED;
    }
    literal->from = from;
    literal->to = i;
    literal->length = i - from - saved;
    literal->bits = bits | raw_bits;
    literal->escaped = escaped;
    *at = i + 1;
    return FOUND;
}

/*
 * Checks a part array written canonically from *at (just after its '['), noting the texts of
 * its parts and counting them in *count; advances *at past its ']'. An empty array is taken
 * only if `may_be_empty`.
 */
static Step
scan_parts(const Text *t, Py_ssize_t *at, const char *part_head, Py_ssize_t head_length,
           int may_be_empty, Literals *found, Py_ssize_t *count)
{
    Py_ssize_t i = *at;
    *count = 0;
    if (i < t->length && char_at(t, i) == ']') {
        *at = i + 1;
        return may_be_empty ? FOUND : REFUSED;
    }
    for (;;) {
        if (!starts_with(t, i, part_head, head_length)) {
            return REFUSED;
        }
        i += head_length;
        Step step = scan_literal(t, &i, ANY_STRING, found);
        if (step != FOUND) {
            return step;
        }
        ++*count;
        if (STARTS_WITH(t, i, "}]")) {
            *at = i + 2;
            return FOUND;
        }
        if (!STARTS_WITH(t, i, "},")) {
            return REFUSED;
        }
        i += 2;
    }
}

/*
 * The first pass: whether the whole text is an envelope laid out as SPEC §4 C3 writes it, its
 * literals noted in `found`. *content_count is -1 when the item has no content.
 */
static Step
scan_envelope(const Text *t, Literals *found, Py_ssize_t *summary_count,
              Py_ssize_t *content_count)
{
    Py_ssize_t i = LENGTH(HEAD);
    Step step;
    if (!STARTS_WITH(t, 0, HEAD)) {
        return REFUSED;
    }
    if ((step = scan_literal(t, &i, ANY_STRING, found)) != FOUND) {
        return step;
    }
    if (!STARTS_WITH(t, i, SUMMARY_HEAD)) {
        return REFUSED;
    }
    i += LENGTH(SUMMARY_HEAD);
    step = scan_parts(t, &i, SUMMARY_PART_HEAD, LENGTH(SUMMARY_PART_HEAD), 1, found,
                      summary_count);
    if (step != FOUND) {
        return step;
    }
    if (!STARTS_WITH(t, i, CIPHERTEXT_HEAD)) {
        return REFUSED;
    }
    i += LENGTH(CIPHERTEXT_HEAD);
    if ((step = scan_literal(t, &i, CIPHERTEXT, found)) != FOUND) {
        return step;
    }
    *content_count = -1;
    if (STARTS_WITH(t, i, CONTENT_HEAD)) {
        /* SPEC §3 E2, E3: content, when present, is a non-empty array. */
        i += LENGTH(CONTENT_HEAD);
        step = scan_parts(t, &i, CONTENT_PART_HEAD, LENGTH(CONTENT_PART_HEAD), 0, found,
                          content_count);
        if (step != FOUND) {
            return step;
        }
    }
    if (t->length - i != LENGTH(TAIL) || !STARTS_WITH(t, i, TAIL)) {
        return REFUSED;
    }
    /* SPEC §3 E2: a non-empty id and ciphertext (an escape is never empty). */
    const Literal *id = &found->items[0], *ciphertext = &found->items[1 + *summary_count];
    if (id->to == id->from || ciphertext->to == ciphertext->from) {
        return REFUSED;
    }
    return FOUND;
}

/* The second pass: the value of a literal; NULL with no exception set for bytes that are not
 * UTF-8, NULL with an exception set if memory runs out. */
static PyObject *
make_value(const Text *t, const Literal *literal)
{
    if (t->utf8) {
        return bytes_value(t, literal->from, literal->to, literal->escaped, literal->bits);
    }
    return str_value(t, literal->from, literal->to, literal->length, literal->bits);
}

/* A tuple of the values of `count` literals from `first`. */
static PyObject *
make_tuple(const Text *t, const Literal *first, Py_ssize_t count)
{
    PyObject *tuple = PyTuple_New(count);
    if (tuple == NULL) {
        return NULL;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *value = make_value(t, &first[k]);
        if (value == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, k, value);
    }
    return tuple;
}

/*
 * (id, summary texts, ciphertext, content texts or None) of an envelope laid out as SPEC §4 C3
 * writes it; NULL with no exception set for any other text.
 */
static PyObject *
read_envelope(const Text *t)
{
    Literals found;
    Py_ssize_t summary_count = 0, content_count = -1;
    PyObject *fields = NULL;
    literals_init(&found);
    if (scan_envelope(t, &found, &summary_count, &content_count) != FOUND) {
        literals_free(&found);
        return NULL;
    }
    const Literal *literal = found.items;
    fields = PyTuple_New(4);
    if (fields == NULL) {
        goto done;
    }
    PyObject *value = make_value(t, literal++);
    if (value == NULL) {
        goto fail;
    }
    PyTuple_SET_ITEM(fields, 0, value);
    if ((value = make_tuple(t, literal, summary_count)) == NULL) {
        goto fail;
    }
    PyTuple_SET_ITEM(fields, 1, value);
    literal += summary_count;
    if ((value = make_value(t, literal++)) == NULL) {
        goto fail;
    }
    PyTuple_SET_ITEM(fields, 2, value);
    value = content_count < 0 ? Py_NewRef(Py_None) : make_tuple(t, literal, content_count);
    if (value == NULL) {
        goto fail;
    }
    PyTuple_SET_ITEM(fields, 3, value);
    goto done;
fail:
    Py_CLEAR(fields); /* the items it does not hold yet are NULL, which it skips */
done:
    literals_free(&found);
    return fields;
}

static PyObject *
read_canonical(PyObject *module, PyObject *text)
{
    Text t;
    (void)module;
    if (PyUnicode_Check(text)) {
        t.kind = PyUnicode_KIND(text);
        t.data = PyUnicode_DATA(text);
        t.length = PyUnicode_GET_LENGTH(text);
        t.utf8 = 0;
    }
    else if (PyBytes_Check(text)) {
        t.kind = 1;
        t.data = PyBytes_AS_STRING(text);
        t.length = PyBytes_GET_SIZE(text);
        t.utf8 = 1;
    }
    else {
        PyErr_Format(PyExc_TypeError, "read_canonical() takes str or bytes, not %.100s",
                     Py_TYPE(text)->tp_name);
        return NULL;
    }
    PyObject *result = read_envelope(&t);
    if (result == NULL && !PyErr_Occurred()) {
        Py_RETURN_NONE;
    }
    return result;
}

PyDoc_STRVAR(read_canonical_doc,
             "read_canonical(text, /)\n--\n\n"
             "The fields (id, summary, encrypted_content, content) of an envelope text laid out\n"
             "as SPEC §4 C3 writes it, or None for any other text. The same texts as\n"
             "reader._read_canonical; bytes must be valid UTF-8 as well.");

static PyMethodDef methods[] = {
    {"read_canonical", read_canonical, METH_O, read_canonical_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
#if PY_VERSION_HEX >= 0x030C0000
    /* No state: safe in any interpreter. */
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "reasoning_replay._canonical",
    .m_doc = "The canonical envelope layout (SPEC §4 C3), read in C: reader._read_canonical's "
             "accelerator.",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC
PyInit__canonical(void)
{
    return PyModuleDef_Init(&module_def);
}

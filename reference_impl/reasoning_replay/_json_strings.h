/*
 * _json_strings.h: JSON string literals (RFC 8259 §7) read in C, for the accelerators of the
 * reader and of history files.
 *
 * Shared by _canonical.c, _strict.c and _history.c, each of which includes it once (every
 * function here is static). A text is read as it is stored: a str's characters at one, two or
 * four bytes each, without transcoding, or a bytes object's bytes, whose literals are decoded as
 * UTF-8 by CPython's strict decoder. A literal is refused for what SPEC §3 E4 refuses in a string: a raw
 * control character, a bad escape, a surrogate, raw or escaped alone (SPEC §3 E6 steps 2 and 4),
 * and, for bytes, invalid UTF-8.
 *
 * Built on the limited API (Py_LIMITED_API, one abi3 module for every CPython from 3.11;
 * hatch_build.py), a str's storage cannot be read: a str is read as its UTF-8 form instead
 * (PyUnicode_AsUTF8AndSize, which is the storage itself for an ASCII str and a copy cached in the
 * str otherwise), exactly as bytes are, and a str that has no UTF-8 form (a lone surrogate) is
 * left to the caller's Python path (text_of returns -1).
 */

#ifndef REASONING_REPLAY_JSON_STRINGS_H
#define REASONING_REPLAY_JSON_STRINGS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define LENGTH(literal) ((Py_ssize_t)(sizeof(literal) - 1))

/* What the limited API offers as functions only. */
#ifdef Py_LIMITED_API
#define TUPLE_SET_ITEM PyTuple_SetItem
#define DICT_SIZE PyDict_Size
#else
#define TUPLE_SET_ITEM PyTuple_SET_ITEM
#define DICT_SIZE PyDict_GET_SIZE
#endif

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

/* RFC 8259 §2: the first index from `i` that is not insignificant whitespace (space, tab, line
 * feed, carriage return), or the length. */
static inline Py_ssize_t
whitespace_end(const Text *t, Py_ssize_t i)
{
    while (i < t->length) {
        Py_UCS4 c = char_at(t, i);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            break;
        }
        i++;
    }
    return i;
}

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
 * tested 16 bytes at a time, and the block that ends one says where (the first bit of its mask):
 * short runs, between the escapes of a text written with many, cost a block each too. The last
 * characters, and other machines, go one at a time.
 */
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define HAVE_SSE2 1

/* The index of the lowest set bit of a mask that has one. */
static inline int
lowest_bit(unsigned mask)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctz(mask);
#else
    int k = 0;
    while (!(mask & 1u)) {
        mask >>= 1;
        k++;
    }
    return k;
#endif
}
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
        unsigned found = (unsigned)_mm_movemask_epi8(stop);
        if (found) {
            int before = lowest_bit(found); /* the run's characters in this block */
            if ((unsigned)_mm_movemask_epi8(c) & ((1u << before) - 1)) {
                seen = 0x80;
            }
            i += before;
            n = i; /* the run ends here: the loop below has nothing left to pass over */
            break;
        }
        block_seen = _mm_or_si128(block_seen, c);
    }
    if (_mm_movemask_epi8(block_seen)) { /* a byte from 0x80 up */
        seen |= 0x80;
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
        unsigned found = (unsigned)_mm_movemask_epi8(stop);
        if (found) {
            int before = lowest_bit(found) / 2; /* two mask bits a character */
            for (int k = 0; k < before; k++) {
                seen |= s[i + k];
            }
            i += before;
            n = i; /* the run ends here */
            break;
        }
        block_seen = _mm_or_si128(block_seen, c);
    }
    block_seen = _mm_or_si128(block_seen, _mm_srli_si128(block_seen, 8));
    block_seen = _mm_or_si128(block_seen, _mm_srli_si128(block_seen, 4));
    block_seen = _mm_or_si128(block_seen, _mm_srli_si128(block_seen, 2));
    seen |= (Py_UCS4)_mm_extract_epi16(block_seen, 0);
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

#ifndef Py_LIMITED_API /* only str_value makes a str of its own characters */
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
#endif

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

#ifndef Py_LIMITED_API /* there every text is read as UTF-8 (see the top of this file) */

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

#endif /* Py_LIMITED_API */

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
#ifndef Py_LIMITED_API
    if (bits < 0x80) { /* ASCII: nothing to decode */
        PyObject *out = PyUnicode_New(n, 0x7F);
        if (out != NULL) {
            memcpy(PyUnicode_DATA(out), bytes, (size_t)n);
        }
        return out;
    }
#else
    (void)bits; /* the decoder's own ASCII path is what is left */
#endif
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

/* --- a literal --------------------------------------------------------------------------- */

/* A string literal that scan_string found valid. */
typedef struct {
    Py_ssize_t from, to; /* its characters, between its quotes */
    Py_ssize_t length;   /* characters in its value (for bytes, only when all ASCII as written) */
    Py_UCS4 raw_bits;    /* the OR of its characters as written */
    Py_UCS4 bits;        /* the OR of its characters, raw and escaped */
    int escaped;         /* whether it has an escape */
    int escaped_quote;   /* whether it has the escape \" */
} Literal;

/*
 * Checks the string literal whose opening quote is just before *at, describes it in *literal,
 * and advances *at past its closing quote. Returns 0, *at unchanged, if it is unterminated or
 * holds a raw control character or surrogate, a bad escape, or an escaped lone surrogate.
 */
static int
scan_string(const Text *t, Py_ssize_t *at, Literal *literal)
{
    Py_ssize_t from = *at, i = from;
    Py_ssize_t saved = 0; /* characters the escapes take beyond the one each stands for */
    Py_UCS4 raw_bits = 0, bits = 0;
    int escaped = 0, escaped_quote = 0;
    for (;;) {
        i = span(t, i, t->length, &raw_bits);
        if (i == t->length) {
            return 0; /* unterminated */
        }
        Py_UCS4 c = char_at(t, i);
        if (c == '"') {
            break;
        }
        if (c != '\\') {
            return 0; /* a raw control character or surrogate */
        }
        Py_UCS4 cp = 0;
        Py_ssize_t next = read_escape(t, i, &cp);
        if (next < 0) {
            return 0;
        }
        escaped_quote |= next == i + 2 && cp == '"';
        bits |= cp;
        saved += next - i - 1;
        escaped = 1;
        i = next;
    }
    literal->from = from;
    literal->to = i;
    literal->length = i - from - saved;
    literal->raw_bits = raw_bits;
    literal->bits = bits | raw_bits;
    literal->escaped = escaped;
    literal->escaped_quote = escaped_quote;
    *at = i + 1;
    return 1;
}

/* The value of a literal scan_string found valid; NULL with no exception set for bytes that are
 * not UTF-8, NULL with an exception set if memory runs out. */
static PyObject *
string_value(const Text *t, const Literal *literal)
{
#ifdef Py_LIMITED_API
    return bytes_value(t, literal->from, literal->to, literal->escaped, literal->bits);
#else
    /* Bytes that are all ASCII as written are one character each, as a str's are: the string
     * is made straight from them, escapes decoded, with no UTF-8 between (what a writer that
     * escapes every other character, as json.dumps does by default, stores). */
    if (t->utf8 && literal->raw_bits >= 0x80) {
        return bytes_value(t, literal->from, literal->to, literal->escaped, literal->bits);
    }
    return str_value(t, literal->from, literal->to, literal->length, literal->bits);
#endif
}

/* --- how reading a text went --------------------------------------------------------------- */

/* How a step of reading ended: the text has what is read (FOUND), departs from it (REFUSED), or
 * memory ran out (FAILED, an exception set). */
typedef enum { FAILED = -1, REFUSED = 0, FOUND = 1 } Step;

/* --- the module around it ------------------------------------------------------------------ */

/* Reads the str or bytes argument of `function` into *t: 1, or 0 with TypeError set for any
 * other type, or -1 (no exception set) for a str the limited API cannot read. */
static int
text_of(PyObject *text, Text *t, const char *function)
{
    if (PyUnicode_Check(text)) {
#ifdef Py_LIMITED_API
        Py_ssize_t size = 0;
        const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
        if (utf8 == NULL) { /* a lone surrogate: UnicodeEncodeError */
            PyErr_Clear();
            return -1;
        }
        t->kind = 1;
        t->data = utf8;
        t->length = size;
        t->utf8 = 1;
#else
        t->kind = PyUnicode_KIND(text);
        t->data = PyUnicode_DATA(text);
        t->length = PyUnicode_GET_LENGTH(text);
        t->utf8 = 0;
#endif
        return 1;
    }
    if (PyBytes_Check(text)) {
        t->kind = 1;
        t->data = PyBytes_AsString(text);
        t->length = PyBytes_Size(text);
        t->utf8 = 1;
        return 1;
    }
    PyErr_Format(PyExc_TypeError, "%s() takes str or bytes, not %R", function,
                 (PyObject *)Py_TYPE(text));
    return 0;
}

/* An accelerator module keeps no state: it is safe in any interpreter, and without the GIL. */
static PyModuleDef_Slot accelerator_slots[] = {
#if PY_VERSION_HEX >= 0x030C0000 && (!defined(Py_LIMITED_API) || Py_LIMITED_API >= 0x030C0000)
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000 && (!defined(Py_LIMITED_API) || Py_LIMITED_API >= 0x030D0000)
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

#endif /* REASONING_REPLAY_JSON_STRINGS_H */

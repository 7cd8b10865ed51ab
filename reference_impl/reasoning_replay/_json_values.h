/*
 * _json_values.h: JSON values (RFC 8259) read in C by the rules of SPEC §3 E4, for the reader's
 * and the history files' accelerators (_strict.c, _history.c), each of which includes it once.
 *
 * parse_value makes the value Python's json makes of a text (dict, list, str, int, float, bool,
 * None; an integer literal of over 640 characters as the float it denotes, as record.jsontext.
 * parse_json_int does), stopping at an array or object opened deeper than the parser's depth
 * (SPEC §3 E4.1's 32 for a block text) and noting a member named twice; the token helpers below it read an object member by member,
 * comparing names and constant strings as written when they have no escape and by the string
 * they stand for otherwise. Strings are read by _json_strings.h.
 */

#ifndef REASONING_REPLAY_JSON_VALUES_H
#define REASONING_REPLAY_JSON_VALUES_H

#include "_json_strings.h"

#include <stdint.h>

#define MAX_DEPTH 32         /* SPEC §3 E4.1; jsontext.MAX_DEPTH */
#define MAX_DEPTH_LIMIT 1000 /* the deepest a caller may ask for: a C call a level */
#define MAX_INT_LENGTH 640   /* jsontext._MAX_INT_DIGITS: longer integer literals are floats */

/* Why a parse stopped before the end of the value. */
typedef enum {
    UNDECIDED, /* the text breaks a rule this parser leaves to the statement (record.jsontext) */
    TOO_DEEP,  /* limit_exceeded (SPEC §3 E6 step 1) */
    ERROR,     /* a Python exception is set (memory) */
} Stop;

typedef struct {
    const Text *t;
    Py_ssize_t at;
    int max_depth; /* MAX_DEPTH for a block text; a history file's reader passes its own */
    int duplicate; /* an object named a member twice (SPEC §3 E6 step 5) */
    Stop stop;     /* why parse_value returned NULL */
} Parser;

static PyObject *parse_value(Parser *p, int depth);

static PyObject *
stop(Parser *p, Stop why)
{
    p->stop = why;
    return NULL;
}

/* RFC 8259 §2: insignificant whitespace is space, tab, line feed and carriage return. */
static void
skip_whitespace(Parser *p)
{
    p->at = whitespace_end(p->t, p->at);
}

/* The character at the parser's position, or 0 at the end (a NUL is never valid there). */
static Py_UCS4
current(const Parser *p)
{
    return p->at < p->t->length ? char_at(p->t, p->at) : 0;
}

static int
is_digit(Py_UCS4 c)
{
    return c >= '0' && c <= '9';
}

/* A string literal whose opening quote is at the parser's position. */
static PyObject *
parse_string(Parser *p)
{
    Literal literal;
    p->at++;
    if (!scan_string(p->t, &p->at, &literal)) {
        return stop(p, UNDECIDED);
    }
    PyObject *value = string_value(p->t, &literal);
    if (value == NULL) {
        return stop(p, PyErr_Occurred() ? ERROR : UNDECIDED); /* bytes that are not UTF-8 */
    }
    return value;
}

/* The value of the number literal [from, to), known to match the grammar (so it is ASCII). */
static PyObject *
number_value(const Parser *p, Py_ssize_t from, Py_ssize_t to, int integer)
{
    char small[64];
    Py_ssize_t n = to - from;
    char *digits = n < (Py_ssize_t)sizeof(small) ? small : PyMem_Malloc((size_t)n + 1);
    if (digits == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        digits[k] = (char)char_at(p->t, from + k);
    }
    digits[n] = '\0';
    PyObject *value;
    if (integer && n <= MAX_INT_LENGTH) {
        value = PyLong_FromString(digits, NULL, 10);
    }
    else {
        /* Out of range is ±inf, as float() makes it: no exception (overflow_exception NULL). */
        double number = PyOS_string_to_double(digits, NULL, NULL);
        value = number == -1.0 && PyErr_Occurred() ? NULL : PyFloat_FromDouble(number);
    }
    if (digits != small) {
        PyMem_Free(digits);
    }
    return value;
}

/* The character at i, or 0 at the end. */
static Py_UCS4
char_or_end(const Text *t, Py_ssize_t i)
{
    return i < t->length ? char_at(t, i) : 0;
}

/* The first index from i that is not a digit. */
static Py_ssize_t
digits_end(const Text *t, Py_ssize_t i)
{
    while (is_digit(char_or_end(t, i))) {
        i++;
    }
    return i;
}

/*
 * RFC 8259 §6: the end of the number literal -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from
 * `i`, or -1 if none starts there; *integer says whether it has no fraction and no exponent.
 */
static Py_ssize_t
number_end(const Text *t, Py_ssize_t i, int *integer)
{
    *integer = 1;
    if (char_or_end(t, i) == '-') {
        i++;
    }
    if (char_or_end(t, i) == '0') {
        i++;
    }
    else if (is_digit(char_or_end(t, i))) {
        i = digits_end(t, i);
    }
    else {
        return -1;
    }
    if (char_or_end(t, i) == '.') {
        *integer = 0;
        if (!is_digit(char_or_end(t, ++i))) {
            return -1;
        }
        i = digits_end(t, i);
    }
    if (char_or_end(t, i) == 'e' || char_or_end(t, i) == 'E') {
        *integer = 0;
        i++;
        if (char_or_end(t, i) == '+' || char_or_end(t, i) == '-') {
            i++;
        }
        if (!is_digit(char_or_end(t, i))) {
            return -1;
        }
        i = digits_end(t, i);
    }
    return i;
}

/* A number literal from the parser's position (number_end). */
static PyObject *
parse_number(Parser *p)
{
    int integer;
    Py_ssize_t from = p->at, to = number_end(p->t, from, &integer);
    if (to < 0) {
        return stop(p, UNDECIDED);
    }
    p->at = to;
    PyObject *value = number_value(p, from, to, integer);
    return value == NULL ? stop(p, ERROR) : value;
}

/* `true`, `false` or `null` at the parser's position, as `value`. */
static PyObject *
parse_literal_name(Parser *p, const char *name, Py_ssize_t length, PyObject *value)
{
    if (!starts_with(p->t, p->at, name, length)) {
        return stop(p, UNDECIDED);
    }
    p->at += length;
    return Py_NewRef(value);
}

/* An object whose '{' is at the parser's position, opened at depth `depth`. */
static PyObject *
parse_object(Parser *p, int depth)
{
    PyObject *object = PyDict_New();
    if (object == NULL) {
        return stop(p, ERROR);
    }
    p->at++;
    skip_whitespace(p);
    if (current(p) == '}') {
        p->at++;
        return object;
    }
    for (;;) {
        if (current(p) != '"') {
            goto fail_undecided;
        }
        PyObject *name = parse_string(p);
        if (name == NULL) {
            goto fail;
        }
        skip_whitespace(p);
        if (current(p) != ':') {
            Py_DECREF(name);
            goto fail_undecided;
        }
        p->at++;
        PyObject *member = parse_value(p, depth);
        if (member == NULL) {
            Py_DECREF(name);
            goto fail;
        }
        Py_ssize_t size = DICT_SIZE(object);
        int failed = PyDict_SetItem(object, name, member);
        Py_DECREF(name);
        Py_DECREF(member);
        if (failed) {
            p->stop = ERROR;
            goto fail;
        }
        if (DICT_SIZE(object) == size) { /* the name was there already */
            p->duplicate = 1;
        }
        skip_whitespace(p);
        if (current(p) == '}') {
            p->at++;
            return object;
        }
        if (current(p) != ',') {
            goto fail_undecided;
        }
        p->at++;
        skip_whitespace(p);
    }
fail_undecided:
    p->stop = UNDECIDED;
fail:
    Py_DECREF(object);
    return NULL;
}

/* An array whose '[' is at the parser's position, opened at depth `depth`. */
static PyObject *
parse_array(Parser *p, int depth)
{
    PyObject *array = PyList_New(0);
    if (array == NULL) {
        return stop(p, ERROR);
    }
    p->at++;
    skip_whitespace(p);
    if (current(p) == ']') {
        p->at++;
        return array;
    }
    for (;;) {
        PyObject *element = parse_value(p, depth);
        if (element == NULL) {
            goto fail;
        }
        int failed = PyList_Append(array, element);
        Py_DECREF(element);
        if (failed) {
            p->stop = ERROR;
            goto fail;
        }
        skip_whitespace(p);
        if (current(p) == ']') {
            p->at++;
            return array;
        }
        if (current(p) != ',') {
            p->stop = UNDECIDED;
            goto fail;
        }
        p->at++;
    }
fail:
    Py_DECREF(array);
    return NULL;
}

/* The value at the parser's position (after any whitespace), inside `depth` open arrays and
 * objects; NULL with p->stop saying why. */
static PyObject *
parse_value(Parser *p, int depth)
{
    skip_whitespace(p);
    switch (current(p)) {
    case '{':
    case '[':
        if (depth + 1 > p->max_depth) {
            return stop(p, TOO_DEEP);
        }
        /* Each level is one C call: at most max_depth + 1 deep (MAX_DEPTH_LIMIT at most), so
         * the C stack is safe. */
        return current(p) == '{' ? parse_object(p, depth + 1) : parse_array(p, depth + 1);
    case '"':
        return parse_string(p);
    case 't':
        return parse_literal_name(p, "true", 4, Py_True);
    case 'f':
        return parse_literal_name(p, "false", 5, Py_False);
    case 'n':
        return parse_literal_name(p, "null", 4, Py_None);
    default:
        return parse_number(p);
    }
}

/* --- an object, member by member ------------------------------------------------------------ */

/* A member name, without escapes. */
typedef struct {
    const char *name;
    Py_ssize_t length;
} Name;

#define NAME(literal) {(literal), LENGTH(literal)}

/* Whether the string a literal stands for is exactly `name`: 1 or 0, or -1 if memory ran out
 * (an exception set). */
static int
literal_is(const Text *t, const Literal *literal, const Name *name)
{
    if (!literal->escaped) {
        return literal->to - literal->from == name->length &&
               starts_with(t, literal->from, name->name, name->length);
    }
    if (literal->to - literal->from < name->length) { /* an escape is longer than its character */
        return 0;
    }
    PyObject *value = string_value(t, literal); /* NULL, no exception: bytes that are not UTF-8 */
    if (value == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int equal = PyUnicode_CompareWithASCIIString(value, name->name) == 0;
    Py_DECREF(value);
    return equal;
}

/* A string literal from *at (its opening quote, after any whitespace), in *literal; advances
 * *at past it. 0 if there is none, or it is not valid (scan_string). */
static int
read_literal(const Text *t, Py_ssize_t *at, Literal *literal)
{
    Py_ssize_t i = whitespace_end(t, *at);
    if (i >= t->length || char_at(t, i) != '"') {
        return 0;
    }
    i++;
    if (!scan_string(t, &i, literal)) {
        return 0;
    }
    *at = i;
    return 1;
}

/* The character at i after any whitespace, or 0 at the end; *at is moved to it. */
static Py_UCS4
next_token(const Text *t, Py_ssize_t *at)
{
    *at = whitespace_end(t, *at);
    return *at < t->length ? char_at(t, *at) : 0;
}

/*
 * Whether n bytes are UTF-8 (RFC 3629, as CPython's strict decoder reads it: no overlong form, no
 * surrogate, nothing past U+10FFFF, nothing cut short). ASCII runs go eight bytes at a time.
 */
static int
is_utf8(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        if (n - i >= 8) {
            uint64_t block;
            memcpy(&block, s + i, 8);
            if (!(block & 0x8080808080808080ULL)) {
                i += 8;
                continue;
            }
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        /* The sequence's length and the range of its second byte (Unicode 3.9, table 3-7). */
        Py_ssize_t more;
        unsigned char low = 0x80, high = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            low = c == 0xE0 ? 0xA0 : 0x80;
            high = c == 0xED ? 0x9F : 0xBF; /* no surrogate */
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            low = c == 0xF0 ? 0x90 : 0x80;
            high = c == 0xF4 ? 0x8F : 0xBF; /* nothing past U+10FFFF */
        }
        else {
            return 0;
        }
        if (n - i <= more || s[i + 1] < low || s[i + 1] > high) {
            return 0;
        }
        for (Py_ssize_t k = 2; k <= more; k++) {
            if ((s[i + k] & 0xC0) != 0x80) {
                return 0;
            }
        }
        i += more + 1;
    }
    return 1;
}

/* Whether a literal scan_string found valid stands for a string: a str's always does; bytes
 * must be UTF-8 (escapes are ASCII, so the raw bytes between the quotes are checked whole). */
static int
literal_is_text(const Text *t, const Literal *literal)
{
    return !t->utf8 || literal->raw_bits < 0x80 ||
           is_utf8((const unsigned char *)t->data + literal->from, literal->to - literal->from);
}

#define NOT_A_MEMBER (-1) /* not a member name and ':', or a name read already */
#define OUT_OF_MEMORY (-2)
#define OTHER_NAME (-3) /* a valid name none of those asked for */

/*
 * One member name of an object from *at, with the ':' after it: which of `names` it is, or
 * OTHER_NAME; NOT_A_MEMBER if there is no name and ':' there or it is one of `names` already in
 * *seen (a duplicate); OUT_OF_MEMORY (an exception set). Marks it in *seen and advances *at past
 * the ':'.
 */
static int
read_member_name(const Text *t, Py_ssize_t *at, const Name *names, int count, unsigned *seen)
{
    Literal literal;
    if (!read_literal(t, at, &literal)) {
        return NOT_A_MEMBER;
    }
    int found = OTHER_NAME;
    for (int k = 0; k < count && found == OTHER_NAME; k++) {
        int equal = literal_is(t, &literal, &names[k]);
        if (equal < 0) {
            return OUT_OF_MEMORY;
        }
        if (equal) {
            if (*seen & (1u << k)) {
                return NOT_A_MEMBER;
            }
            found = k;
        }
    }
    if ((found == OTHER_NAME && !literal_is_text(t, &literal)) || next_token(t, at) != ':') {
        return NOT_A_MEMBER;
    }
    if (found != OTHER_NAME) {
        *seen |= 1u << found;
    }
    ++*at;
    return found;
}

/* After an object's member: 1 for ',' (another member follows), 0 for its '}' (advanced past),
 * -1 for anything else. */
static int
member_follows(const Text *t, Py_ssize_t *at)
{
    Py_UCS4 c = next_token(t, at);
    ++*at;
    return c == ',' ? 1 : c == '}' ? 0 : -1;
}

#endif /* REASONING_REPLAY_JSON_VALUES_H */

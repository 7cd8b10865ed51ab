/*
 * _strict: parse a JSON text by the rules of SPEC §3 E4, in one pass: record.jsontext.parse_strict_statement's
 * accelerator.
 *
 * record.jsontext.parse_strict_statement stays the statement of what this does and its fallback. This parses the
 * text by the RFC 8259 grammar into the value Python's json makes of it (dict, list, str, int,
 * float, bool, None; an integer literal of over 640 characters as the float it denotes, as
 * record.jsontext.parse_json_int does), and decides SPEC §3 E6 steps 1 to 5 on the way:
 *
 * - an array or object opened at depth 33 (SPEC §3 E4.1) ends the parse with limit_exceeded:
 *   every text that begins as this one does up to there has that code, whatever follows, since
 *   step 1 comes first and the text before it is valid JSON (so its depth is what a parser sees);
 * - a member named twice in one object is noted, and the parse goes on: a later step-3 or step-4
 *   failure would come first. A text that is otherwise valid then has json_duplicate_member.
 *
 * For anything else it does not decide: a grammar error, a byte-order mark, a raw surrogate or
 * invalid UTF-8, an escaped lone surrogate. It returns None and the caller reads the text the
 * exhaustive way, where the order of steps 2 to 4 over the whole text is settled. Those texts
 * are rare, and they are the texts a strict reader refuses anyway.
 *
 * A str is read as it is stored (one, two or four bytes a character), without transcoding it;
 * bytes are read as bytes, each string decoded as UTF-8 (see _json_strings.h).
 *
 * A caller may pass another depth than E4.1's 32: history_files.parse_json_file reads a whole
 * history file (SPEC H1, which has no depth limit) with this parser for its duplicate members,
 * and reads a file deeper than it asked for, or undecided, the exhaustive way.
 */

#include "_json_strings.h"

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
    while (p->at < p->t->length) {
        Py_UCS4 c = char_at(p->t, p->at);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            return;
        }
        p->at++;
    }
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

/* RFC 8259 §6: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from the parser's position. */
static PyObject *
parse_number(Parser *p)
{
    Py_ssize_t from = p->at;
    int integer = 1;
    if (current(p) == '-') {
        p->at++;
    }
    if (current(p) == '0') {
        p->at++;
    }
    else if (is_digit(current(p))) {
        while (is_digit(current(p))) {
            p->at++;
        }
    }
    else {
        return stop(p, UNDECIDED);
    }
    if (current(p) == '.') {
        integer = 0;
        p->at++;
        if (!is_digit(current(p))) {
            return stop(p, UNDECIDED);
        }
        while (is_digit(current(p))) {
            p->at++;
        }
    }
    if (current(p) == 'e' || current(p) == 'E') {
        integer = 0;
        p->at++;
        if (current(p) == '+' || current(p) == '-') {
            p->at++;
        }
        if (!is_digit(current(p))) {
            return stop(p, UNDECIDED);
        }
        while (is_digit(current(p))) {
            p->at++;
        }
    }
    PyObject *value = number_value(p, from, p->at, integer);
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
        Py_ssize_t size = PyDict_GET_SIZE(object);
        int failed = PyDict_SetItem(object, name, member);
        Py_DECREF(name);
        Py_DECREF(member);
        if (failed) {
            p->stop = ERROR;
            goto fail;
        }
        if (PyDict_GET_SIZE(object) == size) { /* the name was there already */
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

static PyObject *
parse(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Text t;
    int max_depth = MAX_DEPTH;
    (void)module;
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "parse() takes a text and, optionally, a maximum depth");
        return NULL;
    }
    if (!text_of(args[0], &t, "parse")) {
        return NULL;
    }
    if (nargs == 2) {
        long asked = PyLong_AsLong(args[1]);
        if (asked == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (asked < 0 || asked > MAX_DEPTH_LIMIT) {
            PyErr_Format(PyExc_ValueError, "max_depth must be from 0 to %d", MAX_DEPTH_LIMIT);
            return NULL;
        }
        max_depth = (int)asked;
    }
    Parser p = {.t = &t, .at = 0, .max_depth = max_depth, .duplicate = 0, .stop = UNDECIDED};
    PyObject *value = parse_value(&p, 0);
    if (value == NULL) {
        switch (p.stop) {
        case TOO_DEEP:
            return Py_BuildValue("(sO)", "limit_exceeded", Py_None);
        case ERROR:
            return NULL;
        default:
            Py_RETURN_NONE;
        }
    }
    skip_whitespace(&p);
    if (p.at != t.length) { /* trailing data: what it holds may come first (step 1 or 2) */
        Py_DECREF(value);
        Py_RETURN_NONE;
    }
    if (p.duplicate) {
        Py_DECREF(value);
        return Py_BuildValue("(sO)", "json_duplicate_member", Py_None);
    }
    return Py_BuildValue("(ON)", Py_None, value);
}

PyDoc_STRVAR(parse_doc,
             "parse(text, max_depth=32, /)\n--\n\n"
             "(None, value) for a JSON text that passes SPEC E6 steps 1-5, (code, None) for one\n"
             "that is decided to fail step 1 (limit_exceeded) or step 5 (json_duplicate_member),\n"
             "and None for any other text, which record.jsontext.parse_strict_statement reads the exhaustive way.\n"
             "max_depth replaces step 1's depth of 32 (a history file's reader, SPEC H1, passes a\n"
             "larger one and reads a deeper file the exhaustive way).");

static PyMethodDef methods[] = {
    {"parse", (PyCFunction)(void (*)(void))parse, METH_FASTCALL, parse_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "reasoning_replay._strict",
    .m_doc = "A JSON text parsed by the rules of SPEC E4 in C: record.jsontext.parse_strict_statement's "
             "accelerator.",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = accelerator_slots,
};

PyMODINIT_FUNC
PyInit__strict(void)
{
    return PyModuleDef_Init(&module_def);
}

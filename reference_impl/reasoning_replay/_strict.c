/*
 * _strict: a JSON text read by the rules of SPEC §3 E4, in one pass. Two functions:
 *
 * read_envelope, the reader's path for an envelope in any layout, is described below, where it
 * is. parse is record.jsontext.parse_strict_statement's accelerator; that function stays the
 * statement of what it does and its fallback. parse reads the text by the RFC 8259 grammar into
 * the value Python's json makes of it (_json_values.h's parse_value), and decides SPEC §3 E6
 * steps 1 to 5 on the way:
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

#include "_envelope_literals.h"
#include "_json_values.h"

/* --- an envelope in any layout ------------------------------------------------------------ */

/*
 * read_envelope: the fields of a text that is a resumable envelope (SPEC §3 E1-E3) in any layout
 * (members in any order, any whitespace between tokens, any escapes), or None: record._fast.
 * general's path for the texts a writer other than SPEC §4 C3's lays out, which the canonical
 * path (_canonical.c) does not take. Like that path it only ever accepts, and what it accepts is
 * decided here whole: one JSON value (RFC 8259) with no member twice, nesting 4 deep, every
 * string valid (SPEC §3 E4, E6 steps 1-5), whose members and values are an envelope's (steps
 * 6-13). Within SPEC §3 E4.1's length limit (the caller's to check), it returns fields exactly
 * for the texts record.read.read_block finds resumable, and the same item (tests/
 * test_envelope_accelerator.py and tools/fuzz.py compare them); None for every other text. It
 * follows the common spelling straight (names and constants compared as written, the version
 * written `1`) and any other through the values it stands for.
 */


enum { ENVELOPE_SCHEMA, ENVELOPE_VERSION, ENVELOPE_ITEM, ENVELOPE_MEMBERS };
static const Name ENVELOPE_NAMES[ENVELOPE_MEMBERS] = {
    NAME("schema"), NAME("version"), NAME("item")};
enum { ITEM_TYPE, ITEM_ID, ITEM_SUMMARY, ITEM_CIPHERTEXT, ITEM_CONTENT, ITEM_MEMBERS };
static const Name ITEM_NAMES[ITEM_MEMBERS] = {NAME("type"), NAME("id"), NAME("summary"),
                                              NAME("encrypted_content"), NAME("content")};
enum { PART_TYPE, PART_TEXT, PART_MEMBERS };
static const Name PART_NAMES[PART_MEMBERS] = {NAME("type"), NAME("text")};
static const Name SCHEMA_VALUE = NAME("fast-agent.openai-responses.reasoning-replay");
static const Name ITEM_TYPE_VALUE = NAME("reasoning");
static const Name SUMMARY_PART_TYPE = NAME("summary_text");
static const Name CONTENT_PART_TYPE = NAME("reasoning_text");

/* A string value from *at that is exactly `name`. */
static Step
read_constant(const Text *t, Py_ssize_t *at, const Name *name)
{
    Literal literal;
    if (!read_literal(t, at, &literal)) {
        return REFUSED;
    }
    int equal = literal_is(t, &literal, name);
    return equal < 0 ? FAILED : equal ? FOUND : REFUSED;
}

/* The version from *at (after any whitespace): a JSON number equal to 1 (SPEC §3 E1). */
static Step
read_version(const Text *t, Py_ssize_t *at)
{
    Py_UCS4 c = next_token(t, at);
    Py_UCS4 after = *at + 1 < t->length ? char_at(t, *at + 1) : 0;
    if (c == '1' && !is_digit(after) && after != '.' && after != 'e' && after != 'E') {
        ++*at; /* written `1`: the common spelling */
        return FOUND;
    }
    if (c != '-' && !is_digit(c)) {
        return REFUSED;
    }
    /* Any other number literal is 1 only if it is a fraction or an exponent whose value is 1.0
     * (`1.0`, `10e-1`): an integer literal other than `1` is another integer. */
    Parser p = {.t = t, .at = *at, .max_depth = MAX_DEPTH, .duplicate = 0, .stop = UNDECIDED};
    PyObject *number = parse_number(&p);
    if (number == NULL) {
        return p.stop == ERROR ? FAILED : REFUSED;
    }
    int one = PyFloat_Check(number) && PyFloat_AsDouble(number) == 1.0;
    Py_DECREF(number);
    *at = p.at;
    return one ? FOUND : REFUSED;
}

/* A part {"type": part_type, "text": "..."} from *at (its '{' after any whitespace), its text
 * noted in `found`. */
static Step
read_part(const Text *t, Py_ssize_t *at, const Name *part_type, Literals *found)
{
    unsigned seen = 0;
    if (next_token(t, at) != '{') {
        return REFUSED;
    }
    ++*at;
    for (;;) {
        Step step;
        switch (read_member_name(t, at, PART_NAMES, PART_MEMBERS, &seen)) {
        case PART_TYPE:
            step = read_constant(t, at, part_type);
            break;
        case PART_TEXT: {
            Literal *slot = literals_push(found);
            step = slot == NULL ? FAILED : read_literal(t, at, slot) ? FOUND : REFUSED;
            break;
        }
        case OUT_OF_MEMORY:
            return FAILED;
        default:
            return REFUSED;
        }
        if (step != FOUND) {
            return step;
        }
        int more = member_follows(t, at);
        if (more < 0) {
            return REFUSED;
        }
        if (!more) {
            return seen == (1u << PART_MEMBERS) - 1 ? FOUND : REFUSED;
        }
    }
}

/* An array of parts from *at (its '[' after any whitespace), their texts noted in `found` and
 * counted in *count; an empty array only if `may_be_empty` (SPEC §3 E2, E3). */
static Step
read_parts(const Text *t, Py_ssize_t *at, const Name *part_type, int may_be_empty,
           Literals *found, Py_ssize_t *count)
{
    *count = 0;
    if (next_token(t, at) != '[') {
        return REFUSED;
    }
    ++*at;
    if (next_token(t, at) == ']') {
        ++*at;
        return may_be_empty ? FOUND : REFUSED;
    }
    for (;;) {
        Step step = read_part(t, at, part_type, found);
        if (step != FOUND) {
            return step;
        }
        ++*count;
        Py_UCS4 c = next_token(t, at);
        ++*at;
        if (c == ']') {
            return FOUND;
        }
        if (c != ',') {
            return REFUSED;
        }
    }
}

/* Where the item's literals are among those noted. */
typedef struct {
    Py_ssize_t id, ciphertext;      /* index of each literal */
    Py_ssize_t summary, content;    /* index of the first text of each array */
    Py_ssize_t summary_count, content_count; /* content_count -1: no content */
} ItemLiterals;

/* A non-empty string value from *at, noted in `found` at *index (an escape is never empty). */
static Step
read_text_member(const Text *t, Py_ssize_t *at, Literals *found, Py_ssize_t *index)
{
    Literal *slot = literals_push(found);
    if (slot == NULL) {
        return FAILED;
    }
    *index = found->count - 1;
    return read_literal(t, at, slot) && slot->to > slot->from ? FOUND : REFUSED;
}

/* The item object from *at (its '{' after any whitespace): SPEC §3 E2, E3. */
static Step
read_item(const Text *t, Py_ssize_t *at, Literals *found, ItemLiterals *item)
{
    unsigned seen = 0;
    Step step;
    if (next_token(t, at) != '{') {
        return REFUSED;
    }
    ++*at;
    item->content_count = -1;
    for (;;) {
        switch (read_member_name(t, at, ITEM_NAMES, ITEM_MEMBERS, &seen)) {
        case ITEM_TYPE:
            step = read_constant(t, at, &ITEM_TYPE_VALUE);
            break;
        case ITEM_ID:
            step = read_text_member(t, at, found, &item->id);
            break;
        case ITEM_CIPHERTEXT:
            step = read_text_member(t, at, found, &item->ciphertext);
            break;
        case ITEM_SUMMARY:
            item->summary = found->count;
            step = read_parts(t, at, &SUMMARY_PART_TYPE, 1, found, &item->summary_count);
            break;
        case ITEM_CONTENT:
            item->content = found->count;
            step = read_parts(t, at, &CONTENT_PART_TYPE, 0, found, &item->content_count);
            break;
        case OUT_OF_MEMORY:
            return FAILED;
        default:
            return REFUSED;
        }
        if (step != FOUND) {
            return step;
        }
        int more = member_follows(t, at);
        if (more < 0) {
            return REFUSED;
        }
        if (!more) {
            /* Every member but content is required. */
            return (seen | 1u << ITEM_CONTENT) == (1u << ITEM_MEMBERS) - 1 ? FOUND : REFUSED;
        }
    }
}

/* The envelope: the whole text, one object with exactly its three members (SPEC §3 E1). */
static Step
read_envelope_object(const Text *t, Literals *found, ItemLiterals *item)
{
    Py_ssize_t at = 0;
    unsigned seen = 0;
    Step step;
    if (next_token(t, &at) != '{') {
        return REFUSED;
    }
    at++;
    for (;;) {
        switch (read_member_name(t, &at, ENVELOPE_NAMES, ENVELOPE_MEMBERS, &seen)) {
        case ENVELOPE_SCHEMA:
            step = read_constant(t, &at, &SCHEMA_VALUE);
            break;
        case ENVELOPE_VERSION:
            step = read_version(t, &at);
            break;
        case ENVELOPE_ITEM:
            step = read_item(t, &at, found, item);
            break;
        case OUT_OF_MEMORY:
            return FAILED;
        default:
            return REFUSED;
        }
        if (step != FOUND) {
            return step;
        }
        int more = member_follows(t, &at);
        if (more < 0) {
            return REFUSED;
        }
        if (!more) {
            break;
        }
    }
    if (seen != (1u << ENVELOPE_MEMBERS) - 1 || whitespace_end(t, at) != t->length) {
        return REFUSED;
    }
    return FOUND;
}

static PyObject *
read_envelope(PyObject *module, PyObject *text)
{
    Text t;
    (void)module;
    int readable = text_of(text, &t, "read_envelope");
    if (readable <= 0) {
        return readable < 0 ? Py_NewRef(Py_None) : NULL; /* -1: the Python path reads it */
    }
    Literals found;
    ItemLiterals item = {0};
    PyObject *fields = NULL;
    literals_init(&found);
    if (read_envelope_object(&t, &found, &item) == FOUND) {
        const Literal *at = found.items;
        fields = item_fields(&t, at + item.id, at + item.summary, item.summary_count,
                             at + item.ciphertext, at + item.content, item.content_count);
    }
    literals_free(&found);
    if (fields == NULL && !PyErr_Occurred()) {
        Py_RETURN_NONE;
    }
    return fields;
}

/* --- the module ------------------------------------------------------------------------------- */

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
    int readable = text_of(args[0], &t, "parse");
    if (readable == 0) {
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
    if (readable < 0) { /* a str the limited API cannot read: undecided, as for a surrogate */
        Py_RETURN_NONE;
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

PyDoc_STRVAR(read_envelope_doc,
             "read_envelope(text, /)\n--\n\n"
             "The fields (id, summary, encrypted_content, content) of a text that is a resumable\n"
             "envelope in any layout (SPEC E1-E4, E6), or None for any other text. The length\n"
             "limit of SPEC E4.1 is the caller's to check.");

static PyMethodDef methods[] = {
    {"parse", (PyCFunction)(void (*)(void))parse, METH_FASTCALL, parse_doc},
    {"read_envelope", read_envelope, METH_O, read_envelope_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "reasoning_replay._strict",
    .m_doc = "A JSON text read by the rules of SPEC E4 in C: record.jsontext."
             "parse_strict_statement's accelerator, and an envelope in any layout.",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = accelerator_slots,
};

PyMODINIT_FUNC
PyInit__strict(void)
{
    return PyModuleDef_Init(&module_def);
}

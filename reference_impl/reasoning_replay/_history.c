/*
 * _history: the messages of a history file (SPEC §10 H1) in one pass: the accelerator of
 * history.history_files.read_message_channels.
 *
 * history_files stays the statement of what this reads, and its fallback. This reads a file's
 * bytes (or characters) by the JSON grammar (RFC 8259) and returns, for each message of the
 * top-level `messages`, (role, channels, provider): what history_files._channels_from_value
 * makes of the value Python's json makes of the file (history_files.parse_json_file). It makes
 * only what those hold (each message's channels, made as _json_values.h's parse_value makes
 * values, its role and its provider); every other value (a message's content, its tool calls
 * and results, any other member, anywhere) is checked by the grammar and passed over, its
 * strings checked for UTF-8 without being made. A validator reads every file whole, and most of
 * a file is what it passes over.
 *
 * Given the name of a channel (the replay channel, SPEC ST1), it makes the texts of that channel's
 * text blocks as the UTF-8 bytes the file stores (escapes decoded), not as characters: the reader
 * reads a block's text as characters or as the bytes it was stored as (SPEC E6), and bytes cost
 * a copy where characters cost a decoding and, for a text with one character past U+00FF, twice
 * the memory. Only for a file given as bytes; a str's texts stay characters.
 *
 * It only ever accepts: for any file it does not read whole it returns None, and the caller
 * reads the file the other ways (_strict's parse, then json), which decide every file. Those are
 * the files that are not the JSON text H1 requires (a member named twice in one object at any
 * depth included) or not of H1's shape, and a few valid ones left to them: a string with an
 * escaped lone surrogate (json reads it; the replay block holding one gets json_invalid_unicode
 * from the reader), an object of more than MAX_NAMED_MEMBERS members, nesting deeper than
 * MAX_SKIP_DEPTH, or than MAX_DEPTH inside a channel. A str that has no UTF-8 form (a raw lone
 * surrogate, history_unreadable by SPEC H3) is one of the texts it does not read whole.
 */

#include "_json_values.h"

#define MAX_SKIP_DEPTH 64 /* past it, json's reading decides (it stops where Python recurses) */

/* --- members named twice -------------------------------------------------------------------- */

/*
 * SPEC H1: no object of a history file names a member twice. Names holds the names an object's
 * members have had so far, each compared with the next. An object of more members than
 * MAX_NAMED_MEMBERS is left to the other readings, which find a name twice among any number: so
 * the comparisons stay a bounded number a name, and the reading linear.
 */
#define MAX_NAMED_MEMBERS 128
#define INLINE_NAMES 8

typedef struct {
    Literal *items;
    int count, capacity;
    Literal inline_items[INLINE_NAMES];
} Names;

static void
names_init(Names *names)
{
    names->items = names->inline_items;
    names->count = 0;
    names->capacity = INLINE_NAMES;
}

static void
names_free(Names *names)
{
    if (names->items != names->inline_items) {
        PyMem_Free(names->items);
    }
}

/* Whether two literals scan_string found valid (and, for bytes, UTF-8) stand for one string: 1 or
 * 0, or -1 if memory ran out (an exception set). Without escapes, they do exactly when they are
 * written alike. */
static int
same_string(const Text *t, const Literal *a, const Literal *b)
{
    if (!a->escaped && !b->escaped) {
        Py_ssize_t n = a->to - a->from;
        const char *data = (const char *)t->data;
        return n == b->to - b->from &&
               memcmp(data + a->from * t->kind, data + b->from * t->kind,
                      (size_t)(n * t->kind)) == 0;
    }
    PyObject *x = string_value(t, a);
    if (x == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *y = string_value(t, b);
    if (y == NULL) {
        Py_DECREF(x);
        return PyErr_Occurred() ? -1 : 0;
    }
    int equal = PyObject_RichCompareBool(x, y, Py_EQ);
    Py_DECREF(x);
    Py_DECREF(y);
    return equal;
}

/* Notes the name of an object's next member: FOUND if the object has not had it yet, REFUSED if
 * it has (or it is one more than MAX_NAMED_MEMBERS), FAILED if memory ran out. */
static Step
note_name(const Text *t, Names *names, const Literal *name)
{
    for (int k = 0; k < names->count; k++) {
        int same = same_string(t, &names->items[k], name);
        if (same != 0) {
            return same < 0 ? FAILED : REFUSED;
        }
    }
    if (names->count == MAX_NAMED_MEMBERS) {
        return REFUSED;
    }
    if (names->count == names->capacity) {
        int capacity = names->capacity * 2;
        Literal *items = PyMem_Malloc((size_t)capacity * sizeof(Literal));
        if (items == NULL) {
            PyErr_NoMemory();
            return FAILED;
        }
        memcpy(items, names->items, (size_t)names->count * sizeof(Literal));
        names_free(names);
        names->items = items;
        names->capacity = capacity;
    }
    names->items[names->count++] = *name;
    return FOUND;
}

/* The name read_member_name read from `name_at` as OTHER_NAME, noted in `names`. */
static Step
note_other_name(const Text *t, Py_ssize_t name_at, Names *names)
{
    Literal name;
    if (!read_literal(t, &name_at, &name)) { /* read once already: never */
        return REFUSED;
    }
    return note_name(t, names, &name);
}

/* --- values passed over --------------------------------------------------------------------- */

/* A string literal from *at (its opening quote): valid, and a string (UTF-8 for bytes). */
static Step
skip_string(const Text *t, Py_ssize_t *at)
{
    Literal literal;
    Py_ssize_t i = *at + 1;
    if (!scan_string(t, &i, &literal) || !literal_is_text(t, &literal)) {
        return REFUSED;
    }
    *at = i;
    return FOUND;
}

/* `true`, `false` or `null` from *at. */
static Step
skip_name(const Text *t, Py_ssize_t *at, const char *name, Py_ssize_t length)
{
    if (!starts_with(t, *at, name, length)) {
        return REFUSED;
    }
    *at += length;
    return FOUND;
}

/* Any value from *at (after any whitespace), inside `depth` open arrays and objects. */
static Step
skip_value(const Text *t, Py_ssize_t *at, int depth)
{
    Py_UCS4 c = next_token(t, at);
    switch (c) {
    case '"':
        return skip_string(t, at);
    case 't':
        return skip_name(t, at, "true", 4);
    case 'f':
        return skip_name(t, at, "false", 5);
    case 'n':
        return skip_name(t, at, "null", 4);
    case '[':
    case '{':
        break;
    default: {
        int integer;
        Py_ssize_t end = number_end(t, *at, &integer);
        if (end < 0) {
            return REFUSED;
        }
        *at = end;
        return FOUND;
    }
    }
    if (depth + 1 > MAX_SKIP_DEPTH) {
        return REFUSED;
    }
    Py_UCS4 close = c == '{' ? '}' : ']';
    ++*at;
    if (next_token(t, at) == close) {
        ++*at;
        return FOUND;
    }
    Names names;
    names_init(&names);
    Step step;
    for (;;) {
        if (c == '{') {
            Literal name;
            if (!read_literal(t, at, &name) || !literal_is_text(t, &name)) {
                step = REFUSED;
                break;
            }
            if ((step = note_name(t, &names, &name)) != FOUND) {
                break;
            }
            if (next_token(t, at) != ':') {
                step = REFUSED;
                break;
            }
            ++*at;
        }
        if ((step = skip_value(t, at, depth + 1)) != FOUND) {
            break;
        }
        Py_UCS4 after = next_token(t, at);
        ++*at;
        if (after == close) {
            break;
        }
        if (after != ',') {
            step = REFUSED;
            break;
        }
    }
    names_free(&names);
    return step;
}

/* --- a message ------------------------------------------------------------------------------ */

enum {
    MESSAGE_ROLE,
    MESSAGE_CONTENT,
    MESSAGE_TOOL_CALLS,
    MESSAGE_TOOL_RESULTS,
    MESSAGE_CHANNELS,
    MESSAGE_PROVIDER,
    MESSAGE_MEMBERS
};
static const Name MESSAGE_NAMES[MESSAGE_MEMBERS] = {
    NAME("role"),     NAME("content"),  NAME("tool_calls"),
    NAME("tool_results"), NAME("channels"), NAME("provider")};
static const Name USER = NAME("user");
static const Name ASSISTANT = NAME("assistant");

#define MESSAGE_DEPTH 3 /* the file's object, `messages`, the message */

/* The role from *at: "user" or "assistant" (SPEC H1), made in *role. */
static Step
read_role(const Text *t, Py_ssize_t *at, PyObject **role)
{
    Literal literal;
    if (!read_literal(t, at, &literal)) {
        return REFUSED;
    }
    for (int k = 0; k < 2; k++) {
        const Name *name = k ? &ASSISTANT : &USER;
        int equal = literal_is(t, &literal, name);
        if (equal < 0) {
            return FAILED;
        }
        if (equal) {
            *role = PyUnicode_FromStringAndSize(name->name, name->length);
            return *role == NULL ? FAILED : FOUND;
        }
    }
    return REFUSED;
}

/* A value from *at that is an object or null (SPEC H1: tool_calls, tool_results), passed over. */
static Step
skip_object_or_null(const Text *t, Py_ssize_t *at)
{
    Py_UCS4 c = next_token(t, at);
    return c == '{' || c == 'n' ? skip_value(t, at, MESSAGE_DEPTH) : REFUSED;
}

/* A value made by parse_value from *at, inside `depth` open arrays and objects, with no member
 * named twice. */
static Step
make_value(const Text *t, Py_ssize_t *at, int depth, PyObject **value)
{
    Parser p = {.t = t, .at = *at, .max_depth = MAX_DEPTH, .duplicate = 0, .stop = UNDECIDED};
    *value = parse_value(&p, depth);
    if (*value == NULL) {
        return p.stop == ERROR ? FAILED : REFUSED;
    }
    if (p.duplicate) { /* SPEC H1: not one value every parser reads alike */
        Py_CLEAR(*value);
        return REFUSED;
    }
    *at = p.at;
    return FOUND;
}

/* --- the texts of a channel, as the bytes stored -------------------------------------------- */

/* The bytes a valid literal of a bytes text stands for: its raw bytes, escapes decoded to UTF-8
 * (never longer than the escape). NULL with no exception if they are not UTF-8. */
static PyObject *
stored_bytes(const Text *t, const Literal *literal)
{
    const char *raw = (const char *)t->data;
    if (!literal_is_text(t, literal)) {
        return NULL;
    }
    if (!literal->escaped) {
        return PyBytes_FromStringAndSize(raw + literal->from, literal->to - literal->from);
    }
    /* Decoded into a buffer first: the limited API cannot shrink a bytes object once made. */
    char small[1024];
    Py_ssize_t size = literal->to - literal->from;
    char *buffer = size <= (Py_ssize_t)sizeof(small) ? small : PyMem_Malloc((size_t)size);
    if (buffer == NULL) {
        return PyErr_NoMemory();
    }
    char *out = buffer;
    for (Py_ssize_t i = literal->from; i < literal->to;) {
        Py_UCS4 ignored = 0;
        Py_ssize_t run_end = span(t, i, literal->to, &ignored);
        memcpy(out, raw + i, (size_t)(run_end - i));
        out += run_end - i;
        i = run_end;
        if (i < literal->to) {
            Py_UCS4 cp = 0;
            i = read_escape(t, i, &cp); /* valid: scan_string read the literal already */
            out = put_utf8(out, cp);
        }
    }
    PyObject *value = PyBytes_FromStringAndSize(buffer, out - buffer);
    if (buffer != small) {
        PyMem_Free(buffer);
    }
    return value;
}

static const Name TEXT = NAME("text");

/* A block of the channel whose texts are kept as bytes, from *at (its '{'): the object json
 * makes of it, its member "text", when a string, as stored_bytes; no member named twice. */
static Step
make_block(const Text *t, Py_ssize_t *at, int depth, PyObject **block)
{
    PyObject *made = PyDict_New();
    if (made == NULL) {
        return FAILED;
    }
    Step step = REFUSED;
    ++*at;
    if (next_token(t, at) == '}') {
        ++*at;
        *block = made;
        return FOUND;
    }
    for (;;) {
        Literal literal;
        PyObject *name = NULL, *member = NULL;
        if (!read_literal(t, at, &literal) || next_token(t, at) != ':') {
            break;
        }
        ++*at;
        if ((name = string_value(t, &literal)) == NULL) {
            step = PyErr_Occurred() ? FAILED : REFUSED;
            break;
        }
        int is_text = literal_is(t, &literal, &TEXT);
        Literal text;
        if (is_text < 0) {
            step = FAILED;
        }
        else if (is_text && next_token(t, at) == '"' && read_literal(t, at, &text)) {
            member = stored_bytes(t, &text);
            step = member != NULL ? FOUND : PyErr_Occurred() ? FAILED : REFUSED;
        }
        else if (is_text && next_token(t, at) == '"') {
            step = REFUSED; /* not a valid literal */
        }
        else {
            step = make_value(t, at, depth, &member);
        }
        if (step != FOUND) {
            Py_DECREF(name);
            break;
        }
        Py_ssize_t size = DICT_SIZE(made);
        int failed = PyDict_SetItem(made, name, member);
        Py_DECREF(name);
        Py_DECREF(member);
        if (failed) {
            step = FAILED;
            break;
        }
        if (DICT_SIZE(made) == size) { /* a name twice (SPEC H1) */
            step = REFUSED;
            break;
        }
        int more = member_follows(t, at);
        if (more <= 0) {
            step = more == 0 ? FOUND : REFUSED;
            break;
        }
        step = REFUSED;
    }
    if (step == FOUND) {
        *block = made;
    }
    else {
        Py_DECREF(made);
    }
    return step;
}

/* The blocks of the channel whose texts are kept as bytes, from *at (its '['). */
static Step
make_blocks(const Text *t, Py_ssize_t *at, int depth, PyObject **blocks)
{
    if (depth + 1 > MAX_DEPTH) {
        return REFUSED;
    }
    PyObject *made = PyList_New(0);
    if (made == NULL) {
        return FAILED;
    }
    Step step = FOUND;
    ++*at;
    if (next_token(t, at) == ']') {
        ++*at;
    }
    else {
        for (;;) {
            PyObject *block = NULL;
            if (next_token(t, at) == '{') {
                step = depth + 2 > MAX_DEPTH ? REFUSED : make_block(t, at, depth + 2, &block);
            }
            else {
                step = make_value(t, at, depth + 1, &block);
            }
            if (step != FOUND) {
                break;
            }
            int failed = PyList_Append(made, block);
            Py_DECREF(block);
            if (failed) {
                step = FAILED;
                break;
            }
            Py_UCS4 after = next_token(t, at);
            ++*at;
            if (after == ']') {
                break;
            }
            if (after != ',') {
                step = REFUSED;
                break;
            }
        }
    }
    if (step == FOUND) {
        *blocks = made;
    }
    else {
        Py_DECREF(made);
    }
    return step;
}

/* --- the message's members ------------------------------------------------------------ */

/*
 * The channels from *at (SPEC H1: an object of arrays, or null), made in *channels; left NULL
 * for null or an empty object (history_files: `raw.get("channels") or _NO_CHANNELS`). A name
 * written twice is refused (SPEC H1). The channel named `bytes_channel` (if not NULL) is made by
 * make_blocks.
 */
static Step
read_channels(const Text *t, Py_ssize_t *at, PyObject *bytes_channel, PyObject **channels)
{
    Py_UCS4 c = next_token(t, at);
    if (c == 'n') {
        return skip_name(t, at, "null", 4);
    }
    if (c != '{') {
        return REFUSED;
    }
    ++*at;
    if (next_token(t, at) == '}') {
        ++*at;
        return FOUND;
    }
    PyObject *made = PyDict_New();
    if (made == NULL) {
        return FAILED;
    }
    Step step = REFUSED;
    for (;;) {
        Literal literal;
        PyObject *name = NULL, *blocks = NULL;
        if (!read_literal(t, at, &literal) || next_token(t, at) != ':') {
            goto done;
        }
        ++*at;
        if ((name = string_value(t, &literal)) == NULL) {
            step = PyErr_Occurred() ? FAILED : REFUSED;
            goto done;
        }
        if (next_token(t, at) != '[') { /* SPEC H1: each channel is an array */
            Py_DECREF(name);
            goto done;
        }
        int as_bytes = bytes_channel != NULL ? PyObject_RichCompareBool(name, bytes_channel, Py_EQ)
                                             : 0;
        if (as_bytes < 0) {
            Py_DECREF(name);
            step = FAILED;
            goto done;
        }
        step = as_bytes ? make_blocks(t, at, MESSAGE_DEPTH + 1, &blocks)
                        : make_value(t, at, MESSAGE_DEPTH + 1, &blocks);
        if (step != FOUND) {
            Py_DECREF(name);
            goto done;
        }
        Py_ssize_t size = DICT_SIZE(made);
        int failed = PyDict_SetItem(made, name, blocks);
        Py_DECREF(name);
        Py_DECREF(blocks);
        if (failed) {
            step = FAILED;
            goto done;
        }
        if (DICT_SIZE(made) == size) { /* a name twice (SPEC H1) */
            step = REFUSED;
            goto done;
        }
        int more = member_follows(t, at);
        if (more <= 0) {
            step = more == 0 ? FOUND : REFUSED;
            goto done;
        }
    }
done:
    if (step == FOUND) {
        *channels = made;
    }
    else {
        Py_DECREF(made);
    }
    return step;
}

/* The provider from *at: made in *provider when it is a non-empty string (SPEC P4), any other
 * value passed over. */
static Step
read_provider(const Text *t, Py_ssize_t *at, PyObject **provider)
{
    if (next_token(t, at) != '"') {
        return skip_value(t, at, MESSAGE_DEPTH);
    }
    Literal literal;
    if (!read_literal(t, at, &literal)) {
        return REFUSED;
    }
    if (literal.to == literal.from) { /* "": none recorded (an escape is never empty) */
        return FOUND;
    }
    *provider = string_value(t, &literal);
    if (*provider == NULL) {
        return PyErr_Occurred() ? FAILED : REFUSED;
    }
    return FOUND;
}

/* What a file is read with: the channels' stand-in for none, the channel kept as bytes. */
typedef struct {
    PyObject *no_channels;
    PyObject *bytes_channel; /* NULL: none */
} Options;

/* One message from *at (SPEC H1): (role, channels or `no_channels`, provider or None). */
static Step
read_message(const Text *t, Py_ssize_t *at, const Options *options, PyObject **message)
{
    PyObject *role = NULL, *channels = NULL, *provider = NULL;
    unsigned seen = 0; /* H1's members, each found by read_member_name */
    Names others;      /* the names of every other member */
    Step step = REFUSED;
    if (next_token(t, at) != '{') {
        return REFUSED;
    }
    ++*at;
    names_init(&others);
    for (;;) {
        Py_ssize_t name_at = *at;
        switch (read_member_name(t, at, MESSAGE_NAMES, MESSAGE_MEMBERS, &seen)) {
        case MESSAGE_ROLE:
            step = read_role(t, at, &role);
            break;
        case MESSAGE_CONTENT: /* SPEC H1: an array */
            step = next_token(t, at) == '[' ? skip_value(t, at, MESSAGE_DEPTH) : REFUSED;
            break;
        case MESSAGE_TOOL_CALLS:
        case MESSAGE_TOOL_RESULTS:
            step = skip_object_or_null(t, at);
            break;
        case MESSAGE_CHANNELS:
            step = read_channels(t, at, options->bytes_channel, &channels);
            break;
        case MESSAGE_PROVIDER:
            step = read_provider(t, at, &provider);
            break;
        case OTHER_NAME: /* ignored (SPEC H1), but JSON all the same */
            step = note_other_name(t, name_at, &others);
            if (step == FOUND) {
                step = skip_value(t, at, MESSAGE_DEPTH);
            }
            break;
        case OUT_OF_MEMORY:
            step = FAILED;
            break;
        default: /* no member here (an empty object included), or one of H1's twice */
            step = REFUSED;
            break;
        }
        if (step != FOUND) {
            goto done;
        }
        int more = member_follows(t, at);
        if (more <= 0) {
            step = more == 0 ? FOUND : REFUSED;
            break;
        }
    }
    unsigned required = 1u << MESSAGE_ROLE | 1u << MESSAGE_CONTENT;
    if ((seen & required) != required) {
        step = REFUSED;
        goto done;
    }
    *message = PyTuple_Pack(3, role, channels == NULL ? options->no_channels : channels,
                            provider == NULL ? Py_None : provider);
    step = *message == NULL ? FAILED : FOUND;
done:
    names_free(&others);
    Py_XDECREF(role);
    Py_XDECREF(channels);
    Py_XDECREF(provider);
    return step;
}

/* --- the file ------------------------------------------------------------------------------- */

/* The messages array from *at, each message appended to `messages`. */
static Step
read_messages(const Text *t, Py_ssize_t *at, const Options *options, PyObject *messages)
{
    if (next_token(t, at) != '[') {
        return REFUSED;
    }
    ++*at;
    if (next_token(t, at) == ']') {
        ++*at;
        return FOUND;
    }
    for (;;) {
        PyObject *message = NULL;
        Step step = read_message(t, at, options, &message);
        if (step != FOUND) {
            return step;
        }
        int failed = PyList_Append(messages, message);
        Py_DECREF(message);
        if (failed) {
            return FAILED;
        }
        Py_UCS4 after = next_token(t, at);
        ++*at;
        if (after == ']') {
            return FOUND;
        }
        if (after != ',') {
            return REFUSED;
        }
    }
}

static const Name FILE_NAMES[] = {NAME("messages")};

/* The whole text: one object whose `messages` is read, every other member passed over. */
static Step
read_file(const Text *t, const Options *options, PyObject *messages)
{
    Py_ssize_t at = 0;
    unsigned seen = 0;
    Names others;
    Step step;
    if (next_token(t, &at) != '{') {
        return REFUSED;
    }
    at++;
    names_init(&others);
    for (;;) {
        Py_ssize_t name_at = at;
        switch (read_member_name(t, &at, FILE_NAMES, 1, &seen)) {
        case 0:
            step = read_messages(t, &at, options, messages);
            break;
        case OTHER_NAME:
            step = note_other_name(t, name_at, &others);
            if (step == FOUND) {
                step = skip_value(t, &at, 1);
            }
            break;
        case OUT_OF_MEMORY:
            step = FAILED;
            break;
        default: /* no member (an empty object included), or `messages` twice */
            step = REFUSED;
            break;
        }
        if (step != FOUND) {
            break;
        }
        int more = member_follows(t, &at);
        if (more <= 0) {
            step = more == 0 && seen && whitespace_end(t, at) == t->length ? FOUND : REFUSED;
            break;
        }
    }
    names_free(&others);
    return step;
}

static PyObject *
read_history(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Text t;
    (void)module;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "read_history() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    int readable = text_of(args[0], &t, "read_history");
    if (readable == 0) {
        return NULL;
    }
    if (args[2] != Py_None && !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "read_history(): the bytes channel is a str or None");
        return NULL;
    }
    if (readable < 0) { /* a str the limited API cannot read (no UTF-8 form): the others decide */
        Py_RETURN_NONE;
    }
    /* A str's texts stay characters (the limited API reads its UTF-8 form, t.utf8 set, all the
     * same): only a file's bytes are kept as bytes. */
    Options options = {args[1], args[2] == Py_None || !PyBytes_Check(args[0]) ? NULL : args[2]};
    PyObject *messages = PyList_New(0);
    if (messages == NULL) {
        return NULL;
    }
    Step step = read_file(&t, &options, messages);
    if (step == FOUND) {
        return messages;
    }
    Py_DECREF(messages);
    if (step == FAILED) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(read_history_doc,
             "read_history(data, no_channels, bytes_channel, /)\n--\n\n"
             "For each message of a history file (SPEC H1), (role, channels, provider): channels\n"
             "is `no_channels` where the message has none, provider None where it records none\n"
             "(SPEC P4); where data is bytes, the texts of the text blocks of the channel named\n"
             "bytes_channel (a str, or None) are the UTF-8 bytes stored. None for a file it\n"
             "leaves to history_files' other readings.");

static PyMethodDef methods[] = {
    {"read_history", (PyCFunction)(void (*)(void))read_history, METH_FASTCALL, read_history_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "reasoning_replay._history",
    .m_doc = "The messages of a history file (SPEC H1) read in one pass in C: "
             "history.history_files.read_message_channels' accelerator.",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = accelerator_slots,
};

PyMODINIT_FUNC
PyInit__history(void)
{
    return PyModuleDef_Init(&module_def);
}

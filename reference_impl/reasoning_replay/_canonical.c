/*
 * _canonical: read an envelope text laid out exactly as SPEC §4 C3 writes it, fast.
 *
 * This is the optional accelerator of record._fast.canonical.read_canonical, which stays the readable statement
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
 * String literals are read by _json_strings.h, which _strict.c shares.
 *
 * It accepts exactly the texts read_canonical accepts, so that the two can be compared text by
 * text (tests/test_canonical_accelerator.py). That includes two limits of the Python path on the
 * ciphertext, which it reads as an ASCII literal: a raw non-ASCII character or a \" escape in it
 * sends the text the general way (both are legal, and neither occurs in real ciphertexts).
 */

#include "_envelope_literals.h"

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

/* --- following the layout ------------------------------------------------------------ */

/* The text is read in two passes, as _envelope_literals.h describes. */


/* What a literal may hold beyond the JSON string grammar. */
enum { ANY_STRING = 0, CIPHERTEXT = 1 };

/*
 * Checks the string literal whose opening quote is just before *at (scan_string), notes it in
 * `found`, and advances *at past its closing quote. A CIPHERTEXT literal is also refused if it
 * holds a raw non-ASCII character or a \" escape, as in read_canonical (see the top of this
 * file); bytes are checked to be UTF-8 by the second pass, when they are decoded.
 */
static Step
scan_literal(const Text *t, Py_ssize_t *at, int rule, Literals *found)
{
    Literal literal;
    Py_ssize_t i = *at;
    if (!scan_string(t, &i, &literal)) {
        return REFUSED;
    }
    if (rule == CIPHERTEXT && (literal.raw_bits >= 0x80 || literal.escaped_quote)) {
        return REFUSED;
    }
    Literal *slot = literals_push(found);
    if (slot == NULL) {
        return FAILED;
    }
    *slot = literal;
    *at = i;
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
    if (scan_envelope(t, &found, &summary_count, &content_count) == FOUND) {
        /* In the layout's order: id, summary texts, ciphertext, content texts. */
        const Literal *summary = found.items + 1, *ciphertext = summary + summary_count;
        fields = item_fields(t, found.items, summary, summary_count, ciphertext, ciphertext + 1,
                             content_count);
    }
    literals_free(&found);
    return fields;
}

static PyObject *
read_canonical(PyObject *module, PyObject *text)
{
    Text t;
    (void)module;
    int readable = text_of(text, &t, "read_canonical");
    if (readable <= 0) {
        return readable < 0 ? Py_NewRef(Py_None) : NULL; /* -1: the Python path reads it */
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
             "record._fast.canonical.read_canonical; bytes must be valid UTF-8 as well.");

static PyMethodDef methods[] = {
    {"read_canonical", read_canonical, METH_O, read_canonical_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "reasoning_replay._canonical",
    .m_doc = "The canonical envelope layout (SPEC §4 C3), read in C: record._fast.canonical.read_canonical's "
             "accelerator.",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = accelerator_slots,
};

PyMODINIT_FUNC
PyInit__canonical(void)
{
    return PyModuleDef_Init(&module_def);
}

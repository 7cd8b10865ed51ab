/*
 * _envelope_literals.h: the literals of an envelope's item, noted then made, for the reader's two
 * envelope readers (_canonical.c for SPEC §4 C3's layout, _strict.c's read_envelope for any
 * other), each of which includes it once.
 */

#ifndef REASONING_REPLAY_ENVELOPE_LITERALS_H
#define REASONING_REPLAY_ENVELOPE_LITERALS_H

#include "_json_strings.h"

/*
 * Both read a text in two passes: the first checks the whole text and notes where each literal
 * of the item is; only a text that passes it all gets its strings made, by the second. A text
 * that departs late (an unknown member after the ciphertext, an empty content) thus costs one
 * scan, and no allocation.
 */

/* Noted literals, in the order they were found. */
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

/* A tuple of the values of `count` literals from `first`; NULL with no exception set if one is
 * bytes that are not UTF-8, NULL with an exception set if memory runs out. */
static PyObject *
make_tuple(const Text *t, const Literal *first, Py_ssize_t count)
{
    PyObject *tuple = PyTuple_New(count);
    if (tuple == NULL) {
        return NULL;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *value = string_value(t, &first[k]);
        if (value == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        TUPLE_SET_ITEM(tuple, k, value);
    }
    return tuple;
}

/*
 * The item's fields (id, summary texts, ciphertext, content texts or None) from its noted
 * literals: the id at `id`, `summary_count` summary texts from `summary`, the ciphertext at
 * `ciphertext`, and `content_count` content texts from `content` (-1: no content). NULL with no
 * exception set if a literal is bytes that are not UTF-8, with one set if memory runs out.
 */
static PyObject *
item_fields(const Text *t, const Literal *id, const Literal *summary, Py_ssize_t summary_count,
            const Literal *ciphertext, const Literal *content, Py_ssize_t content_count)
{
    PyObject *fields = PyTuple_New(4);
    if (fields == NULL) {
        return NULL;
    }
    PyObject *value = string_value(t, id);
    if (value == NULL) {
        goto fail;
    }
    TUPLE_SET_ITEM(fields, 0, value);
    if ((value = make_tuple(t, summary, summary_count)) == NULL) {
        goto fail;
    }
    TUPLE_SET_ITEM(fields, 1, value);
    if ((value = string_value(t, ciphertext)) == NULL) {
        goto fail;
    }
    TUPLE_SET_ITEM(fields, 2, value);
    value = content_count < 0 ? Py_NewRef(Py_None) : make_tuple(t, content, content_count);
    if (value == NULL) {
        goto fail;
    }
    TUPLE_SET_ITEM(fields, 3, value);
    return fields;
fail:
    Py_DECREF(fields); /* the items it does not hold yet are NULL, which it skips */
    return NULL;
}

#endif /* REASONING_REPLAY_ENVELOPE_LITERALS_H */

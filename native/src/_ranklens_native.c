/* Compiled helpers for ranklens' join of a run given as Python dicts
 * (ranklens/judging/dicts.py): the loops over millions of dict entries, done in C.
 *
 * Each function takes only what the numpy path would read the same way (exact str ids,
 * exact int or float scores, exact int or bool grades) and returns None for anything
 * else, so the caller falls back to that path: the numbers are the same either way
 * (tests/test_dict_path.py checks both). Results are returned as bytes (native-endian
 * doubles or int64s) for numpy.frombuffer: no numpy at build time.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* numpy's scalar types, registered by ranklens (set_number_types) so that this module needs
 * no numpy: floats other than float64 (float16, float32), and integers. */
static PyObject *float_types = NULL, *int_types = NULL;

static int registered(PyObject *types, PyObject *v) {
    if (types == NULL) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(types); i++)
        if ((PyObject *)Py_TYPE(v) == PyTuple_GET_ITEM(types, i)) return 1;
    return 0;
}

/* An integer (exact int, or a registered numpy integer) as a long long: 1 when read, 0 when
 * not such an integer or beyond 64 bits (-1 on error). */
static int integer_of(PyObject *v, long long *out) {
    PyObject *num = NULL;
    if (!PyLong_CheckExact(v)) {
        if (!registered(int_types, v)) return 0;
        num = PyNumber_Index(v);
        if (num == NULL) return -1;
        v = num;
    }
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    Py_XDECREF(num);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (overflow) return 0;
    *out = x;
    return 1;
}

/* A score as a double: 1 when read, 0 when not a plain int or float, a float subclass
 * (numpy.float64) or a registered numpy number (-1 on error). Each is read as numpy reads it
 * into a float64 array: a float exactly, float16 and float32 widened exactly, an integer
 * rounded to the nearest double. */
static int score_of(PyObject *v, double *out) {
    if (PyFloat_Check(v)) {
        *out = PyFloat_AS_DOUBLE(v);
        return 1;
    }
    if (registered(float_types, v)) {
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred()) return -1;
        *out = x;
        return 1;
    }
    long long x;
    int got = integer_of(v, &x);
    if (got > 0) *out = (double)x;
    return got;
}

/* set_number_types(floats, ints): the numpy scalar types read as numbers (tuples of types). */
static PyObject *set_number_types(PyObject *self, PyObject *args) {
    PyObject *floats, *ints;
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &floats, &PyTuple_Type, &ints))
        return NULL;
    Py_INCREF(floats);
    Py_INCREF(ints);
    Py_XSETREF(float_types, floats);
    Py_XSETREF(int_types, ints);
    Py_RETURN_NONE;
}

/* The number of entries in a list of dicts, or -1 when an item is not exactly a dict. */
static Py_ssize_t dict_entries(PyObject *dicts) {
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(dicts); i++) {
        PyObject *d = PyList_GET_ITEM(dicts, i);
        if (!PyDict_CheckExact(d)) return -1;
        total += PyDict_GET_SIZE(d);
    }
    return total;
}

/* run_scores(dicts): every score of a list of {doc: score} dicts, in order, as doubles;
 * None when a dict is not exactly a dict, an id not a non-empty str, a score not an int
 * (within 64 bits) or a float. */
static PyObject *run_scores(PyObject *self, PyObject *args) {
    PyObject *dicts;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &dicts)) return NULL;
    Py_ssize_t n_dicts = PyList_GET_SIZE(dicts), total = dict_entries(dicts);
    if (total < 0) Py_RETURN_NONE;
    PyObject *out = PyBytes_FromStringAndSize(NULL, total * (Py_ssize_t)sizeof(double));
    if (out == NULL) return NULL;
    double *buf = (double *)PyBytes_AS_STRING(out);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n_dicts; i++) {
        PyObject *d = PyList_GET_ITEM(dicts, i), *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(d, &pos, &key, &value)) {
            if (!PyUnicode_CheckExact(key) || PyUnicode_GET_LENGTH(key) == 0 || at >= total) {
                Py_DECREF(out);
                Py_RETURN_NONE;
            }
            int got = score_of(value, &buf[at]);
            if (got <= 0) {
                Py_DECREF(out);
                if (got < 0) return NULL;
                Py_RETURN_NONE;
            }
            at++;
        }
    }
    if (at != total) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return out;
}

/* A query's hits as a table of its ids (open addressing over their hashes), reused from one
 * query to the next: each entry is a position + 1 (0: empty) and the id's hash. */
typedef struct {
    Py_ssize_t cap;
    int64_t *at;
    Py_hash_t *hash;
} id_table;

/* The id of hit j: the item itself (kind 1, a ranked list) or the first of a (doc, score)
 * pair (kind 2); NULL when the hit is not of its kind. */
static PyObject *hit_id(PyObject *hits, Py_ssize_t j, int kind) {
    PyObject *hit = PySequence_Fast_GET_ITEM(hits, j);
    if (kind == 1) return hit;
    if ((!PyTuple_CheckExact(hit) && !PyList_CheckExact(hit)) || PySequence_Fast_GET_SIZE(hit) != 2)
        return NULL;
    return PySequence_Fast_GET_ITEM(hit, 0);
}

/* Fill the table with the ids of hits (a list or tuple): 1 when every id is a non-empty str
 * and none repeats, 0 when not (the caller steps aside), -1 on error. */
static int fill_table(id_table *t, PyObject *hits, int kind) {
    Py_ssize_t m = PySequence_Fast_GET_SIZE(hits), cap = 16;
    while (cap < 2 * m) cap <<= 1;
    if (cap > t->cap) {
        int64_t *at = PyMem_Realloc(t->at, (size_t)cap * sizeof(int64_t));
        if (at == NULL) { PyErr_NoMemory(); return -1; }
        t->at = at;
        Py_hash_t *hash = PyMem_Realloc(t->hash, (size_t)cap * sizeof(Py_hash_t));
        if (hash == NULL) { PyErr_NoMemory(); return -1; }
        t->hash = hash;
        t->cap = cap;
    }
    memset(t->at, 0, (size_t)cap * sizeof(int64_t));
    Py_ssize_t mask = cap - 1;
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *id = hit_id(hits, j, kind);
        if (id == NULL || !PyUnicode_CheckExact(id) || PyUnicode_GET_LENGTH(id) == 0) return 0;
        Py_hash_t h = PyObject_Hash(id);
        if (h == -1) return -1;
        Py_ssize_t i = (Py_ssize_t)((size_t)h & (size_t)mask);
        while (t->at[i]) {
            if (t->hash[i] == h) {
                int cmp = PyUnicode_Compare(id, hit_id(hits, t->at[i] - 1, kind));
                if (cmp == -1 && PyErr_Occurred()) return -1;
                if (cmp == 0) return 0;  /* a document twice: the conventions decide */
            }
            i = (i + 1) & mask;
        }
        t->at[i] = j + 1;
        t->hash[i] = h;
    }
    t->cap = cap;  /* the part in use */
    return 1;
}

/* The position of id among the table's hits, -1 when absent (-2 on error). */
static Py_ssize_t find_id(id_table *t, PyObject *hits, int kind, PyObject *id) {
    Py_hash_t h = PyObject_Hash(id);
    if (h == -1) return -2;
    Py_ssize_t mask = t->cap - 1, i = (Py_ssize_t)((size_t)h & (size_t)mask);
    while (t->at[i]) {
        if (t->hash[i] == h) {
            PyObject *other = hit_id(hits, t->at[i] - 1, kind);
            int cmp = other == id ? 0 : PyUnicode_Compare(id, other);
            if (cmp == -1 && PyErr_Occurred()) return -2;
            if (cmp == 0) return t->at[i] - 1;
        }
        i = (i + 1) & mask;
    }
    return -1;
}

/* lookups(run, qids, labels, n[, kind]): for each query id of qids and its labels (a dict,
 * whose keys are read, or a list or tuple of ids), the score of each labelled document in
 * the run's hits of that query, NaN where it has none: n doubles. The hits are a dict of
 * {doc: score} (kind 0), or a list or tuple of ranked ids (kind 1: the document at position
 * j scores -j, as a ranked list is read) or of (doc, score) pairs (kind 2), whose ids are
 * put in a table (checked as it is built: non-empty strs, none twice). None when a labelled
 * id is not a str, a score not a number read here, anything not of its kind, or the count
 * is not n. */
static PyObject *lookups(PyObject *self, PyObject *args) {
    PyObject *run, *qids, *labels;
    Py_ssize_t n;
    int kind = 0;
    if (!PyArg_ParseTuple(args, "O!O!O!n|i", &PyDict_Type, &run, &PyList_Type, &qids,
                          &PyList_Type, &labels, &n, &kind))
        return NULL;
    if (PyList_GET_SIZE(qids) != PyList_GET_SIZE(labels) || kind < 0 || kind > 2)
        Py_RETURN_NONE;
    id_table t = {0, NULL, NULL};
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (out == NULL) return NULL;
    double *buf = (double *)PyBytes_AS_STRING(out);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(qids); i++) {
        PyObject *hits = PyDict_GetItemWithError(run, PyList_GET_ITEM(qids, i));
        if (hits == NULL && PyErr_Occurred()) goto error;
        if (hits != NULL && kind == 0 && !PyDict_CheckExact(hits)) goto none;
        if (hits != NULL && kind != 0) {
            if (!PyList_CheckExact(hits) && !PyTuple_CheckExact(hits)) goto none;
            int got = fill_table(&t, hits, kind);
            if (got < 0) goto error;
            if (got == 0) goto none;
        }
        PyObject *lab = PyList_GET_ITEM(labels, i);
        PyObject *item = NULL, *value;
        Py_ssize_t pos = 0, size;
        int is_dict = PyDict_CheckExact(lab);
        if (!is_dict && !PyList_CheckExact(lab) && !PyTuple_CheckExact(lab)) goto none;
        size = is_dict ? PyDict_GET_SIZE(lab) : PySequence_Fast_GET_SIZE(lab);
        if (at + size > n) goto none;
        for (Py_ssize_t j = 0; j < size; j++) {
            if (is_dict) {
                if (!PyDict_Next(lab, &pos, &item, &value)) goto none;
            } else {
                item = PySequence_Fast_GET_ITEM(lab, j);
            }
            if (!PyUnicode_CheckExact(item)) goto none;
            PyObject *score = NULL;
            if (hits != NULL && kind == 0) {
                score = PyDict_GetItemWithError(hits, item);
                if (score == NULL && PyErr_Occurred()) goto error;
            } else if (hits != NULL) {
                Py_ssize_t k = find_id(&t, hits, kind, item);
                if (k == -2) goto error;
                if (k >= 0 && kind == 1) {
                    buf[at++] = -(double)k;
                    continue;
                }
                if (k >= 0) score = PySequence_Fast_GET_ITEM(PySequence_Fast_GET_ITEM(hits, k), 1);
            }
            if (score == NULL) {
                buf[at++] = NAN;
            } else {
                int got = score_of(score, &buf[at]);
                if (got < 0) goto error;
                if (got == 0) goto none;
                at++;
            }
        }
    }
    if (at != n) goto none;
    PyMem_Free(t.at);
    PyMem_Free(t.hash);
    return out;
none:
    PyMem_Free(t.at);
    PyMem_Free(t.hash);
    Py_DECREF(out);
    Py_RETURN_NONE;
error:
    PyMem_Free(t.at);
    PyMem_Free(t.hash);
    Py_DECREF(out);
    return NULL;
}

/* seq_check(values, kind): True when every list or tuple of hits in values has ids that are
 * non-empty strs, none twice (kind as for lookups); None when not. */
static PyObject *seq_check(PyObject *self, PyObject *args) {
    PyObject *values;
    int kind;
    if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &values, &kind)) return NULL;
    if (kind != 1 && kind != 2) Py_RETURN_NONE;
    id_table t = {0, NULL, NULL};
    int got = 1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values) && got > 0; i++) {
        PyObject *hits = PyList_GET_ITEM(values, i);
        if (!PyList_CheckExact(hits) && !PyTuple_CheckExact(hits)) got = 0;
        else got = fill_table(&t, hits, kind);
    }
    PyMem_Free(t.at);
    PyMem_Free(t.hash);
    if (got < 0) return NULL;
    if (got == 0) Py_RETURN_NONE;
    Py_RETURN_TRUE;
}

/* label_grades(dicts): every grade of a list of {doc: grade} dicts, in order, as int64s;
 * None when a dict is not exactly a dict or a grade not an int within 64 bits (exact, or a
 * registered numpy integer) or a bool. */
static PyObject *label_grades(PyObject *self, PyObject *args) {
    PyObject *dicts;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &dicts)) return NULL;
    Py_ssize_t n_dicts = PyList_GET_SIZE(dicts), total = dict_entries(dicts);
    if (total < 0) Py_RETURN_NONE;
    PyObject *out = PyBytes_FromStringAndSize(NULL, total * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) return NULL;
    int64_t *buf = (int64_t *)PyBytes_AS_STRING(out);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n_dicts; i++) {
        PyObject *d = PyList_GET_ITEM(dicts, i), *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(d, &pos, &key, &value)) {
            if (at >= total) goto none;
            if (PyBool_Check(value)) {
                buf[at++] = value == Py_True;
            } else {
                long long x;
                int got = integer_of(value, &x);
                if (got < 0) {
                    Py_DECREF(out);
                    return NULL;
                }
                if (got == 0) goto none;
                buf[at++] = (int64_t)x;
            }
        }
    }
    if (at != total) goto none;
    return out;
none:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

/* pair_scores(lists): the scores of lists of (doc, score) pairs (each hit an exact tuple or
 * list of two, each score an int within 64 bits or a float), in order, as doubles; None
 * for anything else. The ids are not looked at here. */
static PyObject *pair_scores(PyObject *self, PyObject *args) {
    PyObject *lists;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &lists)) return NULL;
    Py_ssize_t n_lists = PyList_GET_SIZE(lists), total = 0;
    for (Py_ssize_t i = 0; i < n_lists; i++) {
        PyObject *v = PyList_GET_ITEM(lists, i);
        if (!PyList_CheckExact(v) && !PyTuple_CheckExact(v)) Py_RETURN_NONE;
        total += PySequence_Fast_GET_SIZE(v);
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total * (Py_ssize_t)sizeof(double));
    if (out == NULL) return NULL;
    double *buf = (double *)PyBytes_AS_STRING(out);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n_lists; i++) {
        PyObject *v = PyList_GET_ITEM(lists, i);
        Py_ssize_t size = PySequence_Fast_GET_SIZE(v);
        for (Py_ssize_t j = 0; j < size; j++) {
            PyObject *hit = PySequence_Fast_GET_ITEM(v, j);
            if ((!PyTuple_CheckExact(hit) && !PyList_CheckExact(hit))
                || PySequence_Fast_GET_SIZE(hit) != 2 || at >= total) {
                Py_DECREF(out);
                Py_RETURN_NONE;
            }
            int got = score_of(PySequence_Fast_GET_ITEM(hit, 1), &buf[at]);
            if (got <= 0) {
                Py_DECREF(out);
                if (got < 0) return NULL;
                Py_RETURN_NONE;
            }
            at++;
        }
    }
    return out;
}

/* pack_ids(values, kind, n): the n ids of a list of containers as UTF-8 bytes one after
 * another (then 8 zero bytes) and their byte lengths (int32s), and whether one holds a
 * zero byte: kind 0, each container a dict (its keys); 1, a list or tuple of ids; 2, a
 * list or tuple of (id, score) pairs (their first items). One pass: each id is read once.
 * None when a container or pair is not of its kind, an id is not a non-empty str (or not
 * UTF-8), or there are not n ids. */
static PyObject *pack_ids(PyObject *self, PyObject *args) {
    PyObject *values;
    int kind;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "O!in", &PyList_Type, &values, &kind, &n)) return NULL;
    Py_ssize_t cap = n * 16 + 64, at = 0, k = 0;
    PyObject *body = PyBytes_FromStringAndSize(NULL, cap);
    PyObject *lens = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int32_t));
    if (body == NULL || lens == NULL) goto error;
    int32_t *len_out = (int32_t *)PyBytes_AS_STRING(lens);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); i++) {
        PyObject *v = PyList_GET_ITEM(values, i), *key, *value;
        Py_ssize_t pos = 0, size;
        if (kind == 0) {
            if (!PyDict_CheckExact(v)) goto none;
            size = PyDict_GET_SIZE(v);
        } else {
            if (!PyList_CheckExact(v) && !PyTuple_CheckExact(v)) goto none;
            size = PySequence_Fast_GET_SIZE(v);
        }
        for (Py_ssize_t j = 0; j < size; j++) {
            PyObject *id;
            if (kind == 0) {
                if (!PyDict_Next(v, &pos, &key, &value)) goto none;
                id = key;
            } else {
                id = PySequence_Fast_GET_ITEM(v, j);
                if (kind == 2) {
                    if ((!PyTuple_CheckExact(id) && !PyList_CheckExact(id))
                        || PySequence_Fast_GET_SIZE(id) != 2)
                        goto none;
                    id = PySequence_Fast_GET_ITEM(id, 0);
                }
            }
            if (!PyUnicode_CheckExact(id) || k >= n) goto none;
            Py_ssize_t size_b;
            const char *utf8 = PyUnicode_AsUTF8AndSize(id, &size_b);
            if (utf8 == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) goto error;
                PyErr_Clear();
                goto none;
            }
            if (size_b == 0 || size_b > INT32_MAX) goto none;
            if (at + size_b + 8 > cap) {
                cap = (at + size_b + 8) * 3 / 2;
                if (_PyBytes_Resize(&body, cap) < 0) goto error;
            }
            memcpy(PyBytes_AS_STRING(body) + at, utf8, (size_t)size_b);
            len_out[k++] = (int32_t)size_b;
            at += size_b;
        }
    }
    if (k != n) goto none;
    if (_PyBytes_Resize(&body, at + 8) < 0) goto error;
    memset(PyBytes_AS_STRING(body) + at, 0, 8);
    int nul = memchr(PyBytes_AS_STRING(body), 0, (size_t)at) != NULL;
    return Py_BuildValue("(NNO)", body, lens, nul ? Py_True : Py_False);
none:
    Py_XDECREF(body);
    Py_XDECREF(lens);
    Py_RETURN_NONE;
error:
    Py_XDECREF(body);
    Py_XDECREF(lens);
    return NULL;
}

/* One tied entry's id against doc: counted in *before when it ranks before doc (its id
 * greater under by_id, trec_eval's order; else earlier in the dict, until doc is seen);
 * *seen set when it is doc. 0, or -1 on error. */
static int place_one(PyObject *key, PyObject *doc, int by_id, Py_ssize_t *before, int *seen) {
    if (!by_id && *seen) return 0;
    int cmp = PyUnicode_Compare(key, doc);
    if (cmp == -1 && PyErr_Occurred()) return -1;
    if (by_id) *before += cmp > 0;
    else if (cmp != 0) (*before)++;
    *seen |= cmp == 0;
    return 0;
}

/* The tied entries of dict d read from its entry at ordinal first - 1 on (PyDict_Next's
 * position is the entry's index in a dict that never lost an entry): 1 when the entry before
 * scores above x (or first is 0), the next size entries score x and the one after (if any)
 * below it, so that they are the run of x in d, whatever its layout; then *before counts
 * those ranking before doc and *seen says whether doc was among them. 0 when a check fails
 * (the caller reads d from its start), -1 on error. */
static int tied_at(PyObject *d, int64_t first, int64_t size, double x, int f32, PyObject *doc,
                   int by_id, Py_ssize_t *before, int *seen) {
    Py_ssize_t pos = first > 0 ? (Py_ssize_t)first - 1 : 0, n = PyDict_GET_SIZE(d);
    PyObject *key, *value;
    double v;
    int got;
    *before = 0;
    *seen = 0;
    if (first + size > n) return 0;
    if (first > 0) {
        if (!PyDict_Next(d, &pos, &key, &value)) return 0;
        if ((got = score_of(value, &v)) <= 0) return got;
        if (f32) v = (double)(float)v;
        if (!(v > x)) return 0;
    }
    for (int64_t k = 0; k < size; k++) {
        if (!PyDict_Next(d, &pos, &key, &value)) return 0;
        if ((got = score_of(value, &v)) <= 0) return got;
        if (f32) v = (double)(float)v;
        if (v != x || !PyUnicode_CheckExact(key)) return 0;
        if (place_one(key, doc, by_id, before, seen) < 0) return -1;
    }
    if (first + size < n) {
        if (!PyDict_Next(d, &pos, &key, &value)) return 0;
        if ((got = score_of(value, &v)) <= 0) return got;
        if (f32) v = (double)(float)v;
        if (!(v < x)) return 0;
    }
    return 1;
}

/* tie_places(dicts, above, tied, docs, by_id[, scores, f32]): for each labelled document
 * docs[i] tied with others in the dict dicts[i] (in score order: its tied documents are the
 * entries above[i] .. above[i] + tied[i] - 1), how many of them rank before it: those whose
 * id is greater (by_id, trec_eval's order: code point order) or that come earlier in the
 * dict. above and tied are int64 buffers; n int64s. Given the tied scores (doubles, rounded
 * to float32 with f32, as the caller ranked them), the tied entries are read where they
 * stand, checked by their scores; else (or when a check fails) the dict is read from its
 * start. None when an entry is not there or the document is not among them. */
static PyObject *tie_places(PyObject *self, PyObject *args) {
    PyObject *dicts, *docs;
    Py_buffer above, tied, xs = {0};
    int by_id, f32 = 0;
    if (!PyArg_ParseTuple(args, "O!y*y*O!p|y*p", &PyList_Type, &dicts, &above, &tied,
                          &PyList_Type, &docs, &by_id, &xs, &f32))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = PyList_GET_SIZE(dicts);
    const double *x = xs.buf != NULL && xs.len == n * 8 ? (const double *)xs.buf : NULL;
    if (PyList_GET_SIZE(docs) != n || above.len != n * 8 || tied.len != n * 8) goto none;
    out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) goto error;
    int64_t *buf = (int64_t *)PyBytes_AS_STRING(out);
    const int64_t *first = (const int64_t *)above.buf, *size = (const int64_t *)tied.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyList_GET_ITEM(dicts, i), *doc = PyList_GET_ITEM(docs, i);
        PyObject *key, *value;
        if (!PyUnicode_CheckExact(doc)) goto none;
        Py_ssize_t pos = 0, k = 0, before = 0;
        int seen = 0;
        if (PyList_CheckExact(d) || PyTuple_CheckExact(d)) {  /* (doc, score) pairs in order */
            if (first[i] < 0 || first[i] + size[i] > PySequence_Fast_GET_SIZE(d)) goto none;
            for (int64_t j = first[i]; j < first[i] + size[i]; j++) {
                key = hit_id(d, j, 2);
                if (key == NULL || !PyUnicode_CheckExact(key)) goto none;
                if (place_one(key, doc, by_id, &before, &seen) < 0) goto error;
            }
            if (!seen) goto none;
            buf[i] = before;
            continue;
        }
        if (!PyDict_CheckExact(d)) goto none;
        if (x != NULL) {
            int got = tied_at(d, first[i], size[i], x[i], f32, doc, by_id, &before, &seen);
            if (got < 0) goto error;
            if (got > 0) {
                if (!seen) goto none;
                buf[i] = before;
                continue;
            }
            before = 0;
            seen = 0;
        }
        while (k < first[i] + size[i] && PyDict_Next(d, &pos, &key, &value)) {
            if (k++ < first[i]) continue;  /* entries before the tie: not dereferenced */
            if (!PyUnicode_CheckExact(key)) goto none;
            if (place_one(key, doc, by_id, &before, &seen) < 0) goto error;
        }
        if (k != first[i] + size[i] || !seen) goto none;
        buf[i] = before;
    }
    goto done;
none:
    Py_XDECREF(out);
    out = Py_None;
    Py_INCREF(out);
    goto done;
error:
    Py_XDECREF(out);
    out = NULL;
done:
    PyBuffer_Release(&above);
    PyBuffer_Release(&tied);
    if (xs.obj != NULL) PyBuffer_Release(&xs);
    return out;
}

/* label_docs(labels, which, within): the documents labels[which[i]] holds at position
 * within[i] (a dict's keys in order, or a list's or tuple's items); which and within are
 * int64 buffers. None when a container is not a dict, list or tuple or too short. */
static PyObject *label_docs(PyObject *self, PyObject *args) {
    PyObject *labels;
    Py_buffer which, within;
    if (!PyArg_ParseTuple(args, "O!y*y*", &PyList_Type, &labels, &which, &within)) return NULL;
    Py_ssize_t n = which.len / 8, n_lab = PyList_GET_SIZE(labels);
    PyObject *out = NULL;
    if (within.len != which.len) goto none;
    out = PyList_New(n);
    if (out == NULL) goto done;
    const int64_t *w = (const int64_t *)which.buf, *at = (const int64_t *)within.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (w[i] < 0 || w[i] >= n_lab || at[i] < 0) goto none;
        PyObject *lab = PyList_GET_ITEM(labels, w[i]), *item = NULL, *value;
        if (PyDict_CheckExact(lab)) {
            Py_ssize_t pos = 0;
            for (int64_t k = 0; k <= at[i]; k++)
                if (!PyDict_Next(lab, &pos, &item, &value)) goto none;
        } else if (PyList_CheckExact(lab) || PyTuple_CheckExact(lab)) {
            if (at[i] >= PySequence_Fast_GET_SIZE(lab)) goto none;
            item = PySequence_Fast_GET_ITEM(lab, at[i]);
        } else {
            goto none;
        }
        Py_INCREF(item);
        PyList_SET_ITEM(out, i, item);
    }
    goto done;
none:
    Py_XDECREF(out);
    out = Py_None;
    Py_INCREF(out);
done:
    PyBuffer_Release(&which);
    PyBuffer_Release(&within);
    return out;
}

/* ranks(ranked, start, length, s): in the descending segments ranked[start[i]:start[i] +
 * length[i]] (doubles; start and length int64s), the number of entries above s[i] and the
 * number equal to it from there: a binary search per entry. (above, tied) as int64 bytes;
 * None when an s[i] is not in its segment. */
static PyObject *ranks(PyObject *self, PyObject *args) {
    Py_buffer ranked, start, length, s;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &ranked, &start, &length, &s)) return NULL;
    PyObject *above = NULL, *tied = NULL, *res = NULL;
    Py_ssize_t n = s.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t total = ranked.len / (Py_ssize_t)sizeof(double);
    if (start.len != n * 8 || length.len != n * 8 || s.len != n * 8) goto none;
    above = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    tied = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (above == NULL || tied == NULL) goto done;
    const double *r = (const double *)ranked.buf, *sv = (const double *)s.buf;
    const int64_t *st = (const int64_t *)start.buf, *ln = (const int64_t *)length.buf;
    int64_t *a = (int64_t *)PyBytes_AS_STRING(above), *t = (int64_t *)PyBytes_AS_STRING(tied);
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t lo = 0, hi = ln[i], b = st[i];
        double x = sv[i];
        if (b < 0 || hi < 0 || b + hi > total) goto none;
        const double *seg = r + b;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (seg[mid] > x) lo = mid + 1; else hi = mid;
        }
        int64_t k = lo;
        while (k < ln[i] && seg[k] == x) k++;
        if (k == lo) goto none;
        a[i] = lo;
        t[i] = k - lo;
    }
    res = PyTuple_Pack(2, above, tied);
    goto done;
none:
    res = Py_None;
    Py_INCREF(res);
done:
    Py_XDECREF(above);
    Py_XDECREF(tied);
    PyBuffer_Release(&ranked);
    PyBuffer_Release(&start);
    PyBuffer_Release(&length);
    PyBuffer_Release(&s);
    return res;
}

/* numpy's pairwise sum of v[0:n] (np.add.reduce of a float64 row, numpy's pairwise_sum):
 * fewer than 8 summed in order from 0.0; at most 128 in eight interleaved accumulators
 * combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the rest in order; a
 * longer row halved at a multiple of 8. Only additions: no contraction to fused
 * multiply-adds can change a bit. */
static double pairwise(const double *v, Py_ssize_t n) {
    if (n < 8) {
        double res = 0.;
        for (Py_ssize_t i = 0; i < n; i++) res += v[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        Py_ssize_t i, m = n - n % 8;
        for (int j = 0; j < 8; j++) r[j] = v[j];
        for (i = 8; i < m; i += 8)
            for (int j = 0; j < 8; j++) r[j] += v[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (i = m; i < n; i++) res += v[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(v, n2) + pairwise(v + n2, n - n2);
}

/* One ranking's weights: w[own[r]] = table[r], then each document of other not in own
 * weighted on from table[len(own)] in other's order. 1 when every document 0..n-1 got a
 * weight exactly once (own without repeats, own and other covering them), else 0. */
static int rank_weights_of(PyObject *own, PyObject *other, const double *table, Py_ssize_t n,
                           double *w, char *seen) {
    memset(seen, 0, (size_t)n);
    Py_ssize_t r = 0;
    for (int side = 0; side < 2; side++) {
        PyObject *seq = side ? other : own;
        Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
        PyObject **items = PySequence_Fast_ITEMS(seq);
        for (Py_ssize_t i = 0; i < len; i++) {
            if (!PyLong_CheckExact(items[i])) return 0;
            Py_ssize_t d = PyLong_AsSsize_t(items[i]);
            if (d < 0 || d >= n) {
                PyErr_Clear();
                return 0;
            }
            if (seen[d]) {
                if (side == 0) return 0;  /* a repeat within own */
                continue;
            }
            seen[d] = 1;
            w[d] = table[r++];
        }
    }
    return r == n;
}

/* prob_row(a, b, n, k, draws, table): one row of probabilistic interleaving (ranklens/
 * monitoring/interleave.py, probabilistic_row), the same floating-point operations in the
 * same order: a and b each ranking's document indices (exact ints, no repeats, together
 * 0..n-1), draws 2k floats (per position the ranker's coin, then the document's draw),
 * table the rank weights 1/r^tau (at least n floats). (docs, share_a), or None for
 * anything else. */
static PyObject *prob_row(PyObject *self, PyObject *args) {
    PyObject *a_in, *b_in, *draws_in, *table_in;
    Py_ssize_t n, k;
    if (!PyArg_ParseTuple(args, "OOnnOO", &a_in, &b_in, &n, &k, &draws_in, &table_in))
        return NULL;
    PyObject *a = NULL, *b = NULL, *draws = NULL, *table = NULL, *docs = NULL, *share = NULL;
    PyObject *res = NULL;
    double *mem = NULL, *dv = NULL;
    char *seen = NULL;
    if (n < 1 || k < 0) goto none;
    PyObject *given[4] = {a_in, b_in, draws_in, table_in};
    for (int i = 0; i < 4; i++)
        if (!PyList_CheckExact(given[i]) && !PyTuple_CheckExact(given[i])) goto none;
    a = PySequence_Fast(a_in, "a");
    b = PySequence_Fast(b_in, "b");
    draws = PySequence_Fast(draws_in, "draws");
    table = PySequence_Fast(table_in, "table");
    if (a == NULL || b == NULL || draws == NULL || table == NULL) goto done;
    if (PySequence_Fast_GET_SIZE(draws) < 2 * k || PySequence_Fast_GET_SIZE(table) < n) goto none;
    mem = PyMem_Malloc(sizeof(double) * (size_t)(4 * n + 2 * k));
    seen = PyMem_Malloc((size_t)n);
    if (mem == NULL || seen == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    double *wa = mem, *wb = mem + n, *cum = mem + 2 * n, *tv = mem + 3 * n;
    dv = mem + 4 * n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(table, i);
        if (!PyFloat_CheckExact(x)) goto none;
        tv[i] = PyFloat_AS_DOUBLE(x);
    }
    for (Py_ssize_t i = 0; i < 2 * k; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(draws, i);
        if (!PyFloat_CheckExact(x)) goto none;
        dv[i] = PyFloat_AS_DOUBLE(x);
    }
    if (!rank_weights_of(a, b, tv, n, wa, seen) || !rank_weights_of(b, a, tv, n, wb, seen))
        goto none;
    docs = PyList_New(0);
    share = PyList_New(0);
    if (docs == NULL || share == NULL) goto done;
    for (Py_ssize_t pos = 0; pos < k; pos++) {
        double total_a = pairwise(wa, n);
        if (!(total_a > 0)) break;
        double total_b = pairwise(wb, n);
        const double *w = dv[2 * pos] < 0.5 ? wa : wb;
        cum[0] = w[0];
        for (Py_ssize_t i = 1; i < n; i++) cum[i] = cum[i - 1] + w[i];
        double x = dv[2 * pos + 1] * cum[n - 1];
        Py_ssize_t lo = 0, hi = n;  /* bisect_right, as Python's */
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (x < cum[mid]) hi = mid; else lo = mid + 1;
        }
        Py_ssize_t doc = lo < n - 1 ? lo : n - 1;
        double pa = wa[doc] / total_a;
        double pb = total_b != 0 ? wb[doc] / total_b : NAN;
        double s = pa + pb != 0 ? pa / (pa + pb) : NAN;
        PyObject *d = PyLong_FromSsize_t(doc), *f = PyFloat_FromDouble(s);
        int bad = d == NULL || f == NULL || PyList_Append(docs, d) < 0 ||
                  PyList_Append(share, f) < 0;
        Py_XDECREF(d);
        Py_XDECREF(f);
        if (bad) goto done;
        wa[doc] = wb[doc] = 0.;
    }
    res = PyTuple_Pack(2, docs, share);
    goto done;
none:
    res = Py_None;
    Py_INCREF(res);
done:
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(draws);
    Py_XDECREF(table);
    Py_XDECREF(docs);
    Py_XDECREF(share);
    PyMem_Free(mem);
    PyMem_Free(seen);
    return res;
}

/* The id of a plain (id, score) pair as an interleaving serves it as it is: an exact tuple
 * of two, a non-empty str id and a finite float score; or of a hit (exactly of hit_type,
 * when given) whose id is a non-empty str. NULL for anything else (a borrowed reference:
 * the hit's id is held by the hit). */
static PyObject *plain_pair_id(PyObject *item, PyObject *hit_type) {
    if (hit_type != NULL && (PyObject *)Py_TYPE(item) == hit_type) {
        PyObject *dict = PyObject_GenericGetDict(item, NULL);
        if (dict == NULL) {
            PyErr_Clear();
            return NULL;
        }
        PyObject *id = PyDict_GetItemString(dict, "id");  /* borrowed, held by the hit */
        Py_DECREF(dict);
        if (id == NULL || !PyUnicode_CheckExact(id) || PyUnicode_GET_LENGTH(id) == 0) return NULL;
        return id;
    }
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2) return NULL;
    PyObject *id = PyTuple_GET_ITEM(item, 0), *score = PyTuple_GET_ITEM(item, 1);
    if (!PyUnicode_CheckExact(id) || PyUnicode_GET_LENGTH(id) == 0) return NULL;
    if (!PyFloat_CheckExact(score) || !isfinite(PyFloat_AS_DOUBLE(score))) return NULL;
    return id;
}

/* pair_rows(a, b[, hit_type]): two rankers' answers, each a list of plain (id, score)
 * pairs or hits (as plain_pair_id), numbered as an interleaving numbers them (ranklens/monitoring/
 * interleaving.py): A's documents 0 .. len(a) - 1 in A's order, then B's new ones in B's.
 * (keys, row_b, from_b): every document's id in that numbering, B's ranking as those
 * numbers (a document B repeats kept at its first place), and for each of B's new documents
 * its position in b. None when an item is anything else, A holds a document twice or B
 * holds one of its new documents twice (the caller reads those item by item). */
static PyObject *pair_rows(PyObject *self, PyObject *args) {
    PyObject *a, *b, *hit_type = NULL;
    if (!PyArg_ParseTuple(args, "O!O!|O", &PyList_Type, &a, &PyList_Type, &b, &hit_type))
        return NULL;
    Py_ssize_t na = PyList_GET_SIZE(a), nb = PyList_GET_SIZE(b), cap = 16;
    while (cap < 2 * (na + nb)) cap <<= 1;
    PyObject *keys = NULL, *row_b = NULL, *from_b = NULL, *res = NULL;
    int64_t *at = PyMem_Calloc((size_t)cap, sizeof(int64_t));  /* number + 1, 0 empty */
    Py_hash_t *hash = PyMem_Malloc((size_t)cap * sizeof(Py_hash_t));
    char *placed = PyMem_Calloc((size_t)(na + nb) + 1, 1);  /* B placed a number already */
    keys = PyList_New(0);
    row_b = PyList_New(0);
    from_b = PyList_New(0);
    if (at == NULL || hash == NULL || placed == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (keys == NULL || row_b == NULL || from_b == NULL) goto done;
    Py_ssize_t mask = cap - 1;
    for (int side = 0; side < 2; side++) {
        PyObject *items = side ? b : a;
        Py_ssize_t m = side ? nb : na;
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *id = plain_pair_id(PyList_GET_ITEM(items, j), hit_type);
            if (id == NULL) goto none;
            Py_hash_t h = PyObject_Hash(id);
            if (h == -1) goto done;
            Py_ssize_t i = (Py_ssize_t)((size_t)h & (size_t)mask), found = -1;
            while (at[i]) {
                if (hash[i] == h) {
                    PyObject *other = PyList_GET_ITEM(keys, at[i] - 1);
                    int cmp = other == id ? 0 : PyUnicode_Compare(id, other);
                    if (cmp == -1 && PyErr_Occurred()) goto done;
                    if (cmp == 0) {
                        found = at[i] - 1;
                        break;
                    }
                }
                i = (i + 1) & mask;
            }
            if (found >= 0 && (side == 0 || found >= na)) goto none;  /* a repeat: item by item */
            if (found < 0) {
                found = PyList_GET_SIZE(keys);
                if (PyList_Append(keys, id) < 0) goto done;
                at[i] = found + 1;
                hash[i] = h;
                if (side == 1) {
                    PyObject *pos = PyLong_FromSsize_t(j);
                    int bad = pos == NULL || PyList_Append(from_b, pos) < 0;
                    Py_XDECREF(pos);
                    if (bad) goto done;
                }
            }
            if (side == 1 && !placed[found]) {
                placed[found] = 1;
                PyObject *num = PyLong_FromSsize_t(found);
                int bad = num == NULL || PyList_Append(row_b, num) < 0;
                Py_XDECREF(num);
                if (bad) goto done;
            }
        }
    }
    res = PyTuple_Pack(3, keys, row_b, from_b);
    goto done;
none:
    res = Py_None;
    Py_INCREF(res);
done:
    Py_XDECREF(keys);
    Py_XDECREF(row_b);
    Py_XDECREF(from_b);
    PyMem_Free(at);
    PyMem_Free(hash);
    PyMem_Free(placed);
    return res;
}

static const double POW10[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15};

/* trec_split(body, n_fields, fields, nums): one block of a TREC file's whole lines
 * (ranklens/io/scan.py), split as _split_plain splits it and its number fields parsed as
 * _parse_numbers parses them: when every byte at or below 0x20 is a line feed or the one
 * delimiter (a tab if the first content line holds one, else a space), and every content
 * line (blank lines skipped) holds exactly n_fields non-empty fields, one delimiter
 * between each two, not starting with '#'. fields: the field numbers whose (start, length)
 * are wanted; nums: (field, kind) pairs, kind 0 an integer, 1 a float. Returns (starts,
 * lengths, values, slow): per wanted field int64 bytes of starts and of lengths; per number
 * field a bytearray of int64s or doubles and int64 bytes of the rows left to Python's parser
 * (anything but a plain decimal of at most 15 digits, or 18 for an integer: those rows'
 * values are 0 here); and (start, length) of the last line's last field. None when a line
 * is not so (numpy's split reads the block then). */
/* Split the block's content lines into pos (per line, each field's start and one past
 * the line's end: n_fields + 1 int64s): 0 when done, 1 when a line is not plain, 2 when
 * memory ran out. No Python object is touched: called without the GIL. */
static int split_lines(const unsigned char *b, Py_ssize_t n, int n_fields, int64_t **pos_out,
                       Py_ssize_t *lines_out) {
    unsigned char delim = ' ';  /* a tab if the first content line holds one */
    Py_ssize_t i = 0;
    while (i < n && b[i] == '\n') i++;
    for (; i < n && b[i] != '\n'; i++)
        if (b[i] == '\t') { delim = '\t'; break; }
    Py_ssize_t cap = 1024, lines = 0;
    int64_t *pos = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(cap * (n_fields + 1)));
    if (pos == NULL) return 2;
    *pos_out = pos;
    i = 0;
    while (i < n) {
        if (b[i] == '\n') { i++; continue; }  /* a blank line */
        if (b[i] == '#') return 1;
        if (lines == cap) {
            cap *= 2;
            int64_t *more = PyMem_RawRealloc(pos, sizeof(int64_t) * (size_t)(cap * (n_fields + 1)));
            if (more == NULL) return 2;
            *pos_out = pos = more;
        }
        int64_t *row = pos + lines * (n_fields + 1);
        int f = 0;
        row[0] = i;
        for (;; i++) {
            if (i >= n) return 1;  /* a block ends with a line feed */
            unsigned char c = b[i];
            if (c > 0x20) continue;
            if (c == delim) {
                if (i == row[f] || f + 1 >= n_fields) return 1;  /* an empty field, or more */
                row[++f] = i + 1;
                continue;
            }
            if (c != '\n' || i == row[f] || f != n_fields - 1) return 1;
            row[n_fields] = i + 1;  /* the last field ends one before: at the line feed */
            i++;
            break;
        }
        lines++;
    }
    *lines_out = lines;
    return 0;
}

/* Field j of each line parsed as _parse_numbers parses it into out (int64s, or doubles
 * when is_float); the rows it leaves to Python's parser (anything but a plain decimal of
 * at most 15 digits, or 18 for an integer; their values 0 here) into slow: their count.
 * No Python object is touched. */
static Py_ssize_t parse_numbers(const unsigned char *b, const int64_t *pos, Py_ssize_t lines,
                                int n_fields, int j, int is_float, char *out, int64_t *slow) {
    Py_ssize_t n_slow = 0;
    for (Py_ssize_t r = 0; r < lines; r++) {
        const int64_t *row = pos + r * (n_fields + 1);
        const unsigned char *c = b + row[j], *end = b + row[j + 1] - 1;
        int neg = 0, dots = 0, frac = 0, bad = end - c > 32;
        uint64_t mant = 0;
        if (c < end && (*c == '-' || *c == '+')) neg = *c++ == '-';
        const unsigned char *first = c;
        while (c < end && (unsigned)(*c - '0') < 10) mant = mant * 10 + (uint64_t)(*c++ - '0');
        Py_ssize_t digits = c - first;
        if (c < end && *c == '.') {  /* one dot, anywhere: the digits after it */
            dots = 1;
            const unsigned char *after = ++c;
            while (c < end && (unsigned)(*c - '0') < 10) mant = mant * 10 + (uint64_t)(*c++ - '0');
            frac = (int)(c - after);
            digits += frac;
        }
        bad |= c != end || digits == 0 || (is_float ? digits > 15 : (dots > 0 || digits > 18));
        if (bad) {
            slow[n_slow++] = r;
            memset(out + r * 8, 0, 8);
        } else if (is_float) {  /* exact mantissa by an exact power of ten: one rounding */
            double v = (double)(int64_t)mant / POW10[frac];
            if (neg) v = -v;
            memcpy(out + r * 8, &v, 8);
        } else {
            int64_t v = neg ? -(int64_t)mant : (int64_t)mant;
            memcpy(out + r * 8, &v, 8);
        }
    }
    return n_slow;
}

static PyObject *trec_split(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int n_fields;
    PyObject *fields, *nums;
    if (!PyArg_ParseTuple(args, "y*iO!O!", &buf, &n_fields, &PyTuple_Type, &fields,
                          &PyTuple_Type, &nums))
        return NULL;
    const unsigned char *b = (const unsigned char *)buf.buf;
    Py_ssize_t n = buf.len, n_want = PyTuple_GET_SIZE(fields), n_num = PyTuple_GET_SIZE(nums);
    PyObject *res = NULL, *starts = NULL, *lengths = NULL, *values = NULL, *slow = NULL;
    int64_t *pos = NULL, *slow_rows = NULL;
    Py_ssize_t lines = 0;
    int want[64], num_field[64], num_kind[64], status;
    if (n_fields < 1 || n_fields > 64 || n_want > 64 || n_num > 64) goto none;
    for (Py_ssize_t i = 0; i < n_want; i++) {
        want[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(fields, i));
        if (PyErr_Occurred()) goto done;
        if (want[i] < 0 || want[i] >= n_fields) goto none;
    }
    for (Py_ssize_t i = 0; i < n_num; i++) {
        PyObject *spec = PyTuple_GET_ITEM(nums, i);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2) goto none;
        num_field[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(spec, 0));
        num_kind[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(spec, 1));
        if (PyErr_Occurred()) goto done;
        if (num_field[i] < 0 || num_field[i] >= n_fields) goto none;
    }
    Py_BEGIN_ALLOW_THREADS
    status = split_lines(b, n, n_fields, &pos, &lines);
    Py_END_ALLOW_THREADS
    if (status == 1) goto none;
    if (status == 2) { PyErr_NoMemory(); goto done; }
    starts = PyList_New(n_want);
    lengths = PyList_New(n_want);
    values = PyList_New(n_num);
    slow = PyList_New(n_num);
    slow_rows = PyMem_RawMalloc(sizeof(int64_t) * (size_t)((lines + 1) * (n_num + 1)));
    if (slow_rows == NULL) { PyErr_NoMemory(); goto done; }
    if (starts == NULL || lengths == NULL || values == NULL || slow == NULL) goto done;
    for (Py_ssize_t w = 0; w < n_want; w++) {
        PyObject *st = PyBytes_FromStringAndSize(NULL, lines * 8);
        PyObject *ln = PyBytes_FromStringAndSize(NULL, lines * 8);
        if (st == NULL || ln == NULL) { Py_XDECREF(st); Py_XDECREF(ln); goto done; }
        PyList_SET_ITEM(starts, w, st);
        PyList_SET_ITEM(lengths, w, ln);
    }
    for (Py_ssize_t k = 0; k < n_num; k++) {
        PyObject *vals = PyByteArray_FromStringAndSize(NULL, lines * 8);
        if (vals == NULL) goto done;
        PyList_SET_ITEM(values, k, vals);
    }
    Py_ssize_t n_slow[64];
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t w = 0; w < n_want; w++) {
        int64_t *sp = (int64_t *)PyBytes_AS_STRING(PyList_GET_ITEM(starts, w));
        int64_t *lp = (int64_t *)PyBytes_AS_STRING(PyList_GET_ITEM(lengths, w));
        int j = want[w];
        for (Py_ssize_t r = 0; r < lines; r++) {
            const int64_t *row = pos + r * (n_fields + 1);
            sp[r] = row[j];
            lp[r] = row[j + 1] - 1 - row[j];
        }
    }
    for (Py_ssize_t k = 0; k < n_num; k++)
        n_slow[k] = parse_numbers(b, pos, lines, n_fields, num_field[k], num_kind[k] == 1,
                                  PyByteArray_AS_STRING(PyList_GET_ITEM(values, k)),
                                  slow_rows + k * (lines + 1));
    Py_END_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n_num; k++) {
        PyObject *sl = PyBytes_FromStringAndSize((const char *)(slow_rows + k * (lines + 1)),
                                                 n_slow[k] * 8);
        if (sl == NULL) goto done;
        PyList_SET_ITEM(slow, k, sl);
    }
    {
        /* the last line's last field: (start, length), or (0, 0) without a content line */
        const int64_t *row = lines ? pos + (lines - 1) * (n_fields + 1) : NULL;
        long long at = row ? row[n_fields - 1] : 0;
        long long len = row ? row[n_fields] - 1 - row[n_fields - 1] : 0;
        res = Py_BuildValue("(OOOO(LL))", starts, lengths, values, slow, at, len);
    }
    goto done;
none:
    res = Py_None;
    Py_INCREF(res);
done:
    Py_XDECREF(starts);
    Py_XDECREF(lengths);
    Py_XDECREF(values);
    Py_XDECREF(slow);
    PyMem_RawFree(pos);
    PyMem_RawFree(slow_rows);
    PyBuffer_Release(&buf);
    return res;
}

/* The first k (1..8) bytes at p as a little-endian 64-bit word (the rest zero). */
static uint64_t le_word(const unsigned char *p, Py_ssize_t k) {
    uint64_t v = 0;
    for (Py_ssize_t i = k - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* pack_hash(body, start, length[, pack]): the ids body[start[i]:start[i] + length[i]]
 * (start and length int64s) packed one after another with 8 zero bytes after them (a
 * bytearray; empty when pack is false: the hashes only) and
 * each one's 64-bit hash as ranklens/model/idbytes.py's hash_slices computes it (uint64
 * bytes): the length times 0x9E3779B97F4A7C15, then per 8-byte little-endian word (one
 * at least, zero past the id's end) x ^= word, x *= 0xBF58476D1CE4E5B9, x ^= x >> 31, and
 * splitmix64's finish. None when a slice is outside body. */
static PyObject *pack_hash(PyObject *self, PyObject *args) {
    Py_buffer body, start, length;
    int pack = 1;
    if (!PyArg_ParseTuple(args, "y*y*y*|p", &body, &start, &length, &pack)) return NULL;
    PyObject *packed = NULL, *hashes = NULL, *res = NULL;
    Py_ssize_t n = start.len / 8, total = 0;
    const int64_t *st = (const int64_t *)start.buf, *ln = (const int64_t *)length.buf;
    const unsigned char *b = (const unsigned char *)body.buf;
    if (length.len != start.len) goto none;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (st[i] < 0 || ln[i] < 0 || st[i] + ln[i] > body.len) goto none;
        total += ln[i];
    }
    packed = PyByteArray_FromStringAndSize(NULL, pack ? total + 8 : 0);
    hashes = PyBytes_FromStringAndSize(NULL, n * 8);
    if (packed == NULL || hashes == NULL) goto done;
    unsigned char *out = pack ? (unsigned char *)PyByteArray_AS_STRING(packed) : NULL;
    uint64_t *h = (uint64_t *)PyBytes_AS_STRING(hashes);
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *p = b + st[i];
        Py_ssize_t len = (Py_ssize_t)ln[i];
        if (out != NULL) memcpy(out + at, p, (size_t)len);
        at += len;
        uint64_t x = (uint64_t)len * 0x9E3779B97F4A7C15ULL;
        Py_ssize_t w = 0;
        do {
            Py_ssize_t k = len - w < 8 ? len - w : 8;
            x ^= k > 0 ? le_word(p + w, k) : 0;
            x *= 0xBF58476D1CE4E5B9ULL;
            x ^= x >> 31;
            w += 8;
        } while (w < len);
        x ^= x >> 30;
        x *= 0x94D049BB133111EBULL;
        x ^= x >> 31;
        h[i] = x;
    }
    if (out != NULL) memset(out + at, 0, 8);
    Py_END_ALLOW_THREADS
    res = PyTuple_Pack(2, packed, hashes);
    goto done;
none:
    res = Py_None;
    Py_INCREF(res);
done:
    Py_XDECREF(packed);
    Py_XDECREF(hashes);
    PyBuffer_Release(&body);
    PyBuffer_Release(&start);
    PyBuffer_Release(&length);
    return res;
}

static PyMethodDef methods[] = {
    {"run_scores", run_scores, METH_VARARGS, "Every score of a list of {doc: score} dicts."},
    {"lookups", lookups, METH_VARARGS, "Each labelled document's score in the run's hits."},
    {"label_grades", label_grades, METH_VARARGS, "Every grade of a list of {doc: grade} dicts."},
    {"tie_places", tie_places, METH_VARARGS, "How many tied documents rank before each."},
    {"seq_check", seq_check, METH_VARARGS, "Whether lists of hits have plain ids, none twice."},
    {"label_docs", label_docs, METH_VARARGS, "The labelled documents at given positions."},
    {"pair_scores", pair_scores, METH_VARARGS, "The scores of lists of (doc, score) pairs."},
    {"ranks", ranks, METH_VARARGS, "Entries above and tied with each score in its segment."},
    {"set_number_types", set_number_types, METH_VARARGS, "numpy's scalar types read as numbers."},
    {"pair_rows", pair_rows, METH_VARARGS, "Two rankers' (id, score) pairs numbered as one."},
    {"pack_hash", pack_hash, METH_VARARGS, "Ids packed and hashed as hash_slices hashes them."},
    {"trec_split", trec_split, METH_VARARGS, "A TREC block's fields split and numbers parsed."},
    {"prob_row", prob_row, METH_VARARGS, "One row of probabilistic interleaving."},
    {"pack_ids", pack_ids, METH_VARARGS, "The ids of containers as packed UTF-8 bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ranklens_native",
    "Compiled helpers for ranklens' join of Python dicts (optional: ranklens gives the same "
    "numbers without them).",
    -1, methods,
};

PyMODINIT_FUNC PyInit__ranklens_native(void) { return PyModule_Create(&module); }

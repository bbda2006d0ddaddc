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

/* A score as a double: 1 when read, 0 when not a plain int or float (-1 on error). */
static int score_of(PyObject *v, double *out) {
    if (PyFloat_CheckExact(v)) {
        *out = PyFloat_AS_DOUBLE(v);
        return 1;
    }
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) return -1;
        if (overflow) return 0;
        *out = (double)x;
        return 1;
    }
    return 0;
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

/* lookups(run, qids, labels, n): for each query id of qids and its labels (a dict, whose
 * keys are read, or a list or tuple of ids), the score of each labelled document in the
 * run's dict of that query, NaN where it has none: n doubles. None when a labelled id is
 * not a str, a score not a plain number, or the count is not n. */
static PyObject *lookups(PyObject *self, PyObject *args) {
    PyObject *run, *qids, *labels;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "O!O!O!n", &PyDict_Type, &run, &PyList_Type, &qids,
                          &PyList_Type, &labels, &n))
        return NULL;
    if (PyList_GET_SIZE(qids) != PyList_GET_SIZE(labels)) Py_RETURN_NONE;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (out == NULL) return NULL;
    double *buf = (double *)PyBytes_AS_STRING(out);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(qids); i++) {
        PyObject *hits = PyDict_GetItemWithError(run, PyList_GET_ITEM(qids, i));
        if (hits == NULL && PyErr_Occurred()) goto error;
        if (hits != NULL && !PyDict_CheckExact(hits)) goto none;
        PyObject *lab = PyList_GET_ITEM(labels, i);
        PyObject *item = NULL, *value;
        Py_ssize_t pos = 0, j = 0, size;
        int is_dict = PyDict_CheckExact(lab);
        if (!is_dict && !PyList_CheckExact(lab) && !PyTuple_CheckExact(lab)) goto none;
        size = is_dict ? PyDict_GET_SIZE(lab) : PySequence_Fast_GET_SIZE(lab);
        if (at + size > n) goto none;
        for (j = 0; j < size; j++) {
            if (is_dict) {
                if (!PyDict_Next(lab, &pos, &item, &value)) goto none;
            } else {
                item = PySequence_Fast_GET_ITEM(lab, j);
            }
            if (!PyUnicode_CheckExact(item)) goto none;
            PyObject *score = hits == NULL ? NULL : PyDict_GetItemWithError(hits, item);
            if (score == NULL) {
                if (PyErr_Occurred()) goto error;
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
    return out;
none:
    Py_DECREF(out);
    Py_RETURN_NONE;
error:
    Py_DECREF(out);
    return NULL;
}

/* label_grades(dicts): every grade of a list of {doc: grade} dicts, in order, as int64s;
 * None when a dict is not exactly a dict or a grade not an int within 64 bits or a bool. */
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
            } else if (PyLong_CheckExact(value)) {
                int overflow = 0;
                long long x = PyLong_AsLongLongAndOverflow(value, &overflow);
                if (x == -1 && PyErr_Occurred()) {
                    Py_DECREF(out);
                    return NULL;
                }
                if (overflow) goto none;
                buf[at++] = (int64_t)x;
            } else {
                goto none;
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

/* tie_places(dicts, above, tied, docs, by_id): for each labelled document docs[i] tied
 * with others in the dict dicts[i] (in score order: its tied documents are the entries
 * above[i] .. above[i] + tied[i] - 1), how many of them rank before it: those whose id is
 * greater (by_id, trec_eval's order: code point order) or that come earlier in the dict.
 * above and tied are int64 buffers; n int64s. None when an entry is not there or the
 * document is not among them. */
static PyObject *tie_places(PyObject *self, PyObject *args) {
    PyObject *dicts, *docs;
    Py_buffer above, tied;
    int by_id;
    if (!PyArg_ParseTuple(args, "O!y*y*O!p", &PyList_Type, &dicts, &above, &tied, &PyList_Type,
                          &docs, &by_id))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = PyList_GET_SIZE(dicts);
    if (PyList_GET_SIZE(docs) != n || above.len != n * 8 || tied.len != n * 8) goto none;
    out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) goto error;
    int64_t *buf = (int64_t *)PyBytes_AS_STRING(out);
    const int64_t *first = (const int64_t *)above.buf, *size = (const int64_t *)tied.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyList_GET_ITEM(dicts, i), *doc = PyList_GET_ITEM(docs, i);
        PyObject *key, *value;
        if (!PyDict_CheckExact(d) || !PyUnicode_CheckExact(doc)) goto none;
        Py_ssize_t pos = 0, k = 0, before = 0;
        int seen = 0;
        while (k < first[i] + size[i] && PyDict_Next(d, &pos, &key, &value)) {
            if (k++ < first[i]) continue;  /* entries before the tie: not dereferenced */
            if (!PyUnicode_CheckExact(key)) goto none;
            if (by_id) {
                int cmp = PyUnicode_Compare(key, doc);
                if (cmp == -1 && PyErr_Occurred()) goto error;
                before += cmp > 0;
                seen |= cmp == 0;
            } else if (!seen) {
                int eq = PyUnicode_Compare(key, doc);
                if (eq == -1 && PyErr_Occurred()) goto error;
                if (eq == 0) seen = 1; else before++;
            }
        }
        if (k != first[i] + size[i] || !seen) goto none;
        buf[i] = before;
    }
    PyBuffer_Release(&above);
    PyBuffer_Release(&tied);
    return out;
none:
    Py_XDECREF(out);
    PyBuffer_Release(&above);
    PyBuffer_Release(&tied);
    Py_RETURN_NONE;
error:
    Py_XDECREF(out);
    PyBuffer_Release(&above);
    PyBuffer_Release(&tied);
    return NULL;
}

static PyMethodDef methods[] = {
    {"run_scores", run_scores, METH_VARARGS, "Every score of a list of {doc: score} dicts."},
    {"lookups", lookups, METH_VARARGS, "Each labelled document's score in the run's dicts."},
    {"label_grades", label_grades, METH_VARARGS, "Every grade of a list of {doc: grade} dicts."},
    {"tie_places", tie_places, METH_VARARGS, "How many tied documents rank before each."},
    {"pair_scores", pair_scores, METH_VARARGS, "The scores of lists of (doc, score) pairs."},
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

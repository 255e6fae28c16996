/* scantok._pylist: token ids (a C uint32 array) to a Python list of ints; for
   scantok.Tokenizer's Encoding also the token strings of ids (from a table) and offset pairs;
   and the UTF-8 of an ASCII str read in place (str_utf8, below).

   Why a C-API module next to the cffi one: building the list is the largest cost of
   encode() returning a list. cffi (ffi.unpack) and memoryview.tolist() allocate a new int
   object per token (about 25-40 ns each); this module keeps one int object per id and
   stores a new reference to it (a few ns), so list output costs little more than numpy
   output and the GIL is held for a small part of a batch.

   The int objects are created on first use of each id and kept for the life of the process
   (at most IDS_CACHED of them, about 40 bytes each); ids above that get fresh objects. The
   table is only touched with the GIL held. Limited API (abi3), like the cffi module. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch((p), 0, 3)
#define PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
#else
#define PREFETCH(p) ((void)0)
#define PREFETCH_W(p) ((void)0)
#endif

#define IDS_CACHED (1u << 18) /* covers every shipped vocabulary (o200k_harmony: 201,088) */

static PyObject **ints; /* IDS_CACHED entries, NULL until an id is first seen */

/* A new reference to the int v (from the table when v < IDS_CACHED), NULL on error. */
static PyObject *cached_pos(size_t v) {
    if (!ints) {
        ints = PyMem_Calloc(IDS_CACHED, sizeof *ints);
        if (!ints) return PyErr_NoMemory();
    }
    if (v >= IDS_CACHED) return PyLong_FromSize_t(v);
    PyObject *o = ints[v];
    if (!o) {
        o = PyLong_FromSize_t(v);
        if (!o) return NULL;
        ints[v] = o; /* the table's reference */
    }
    Py_INCREF(o);
    return o;
}

static PyObject *cached_int(uint32_t id) { return cached_pos(id); }

/* ids_to_list(address, n): the n uint32 ids at address (an integer from cffi's
   ffi.cast("uintptr_t", ptr)) as a list. The caller keeps the memory alive. */
static PyObject *ids_to_list(PyObject *self, PyObject *args) {
    PyObject *addr_obj;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "On", &addr_obj, &n)) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "ids_to_list: negative length");
        return NULL;
    }
    const uint32_t *ids = (const uint32_t *)PyLong_AsVoidPtr(addr_obj);
    if (!ids && PyErr_Occurred()) return NULL;
    if (!ids && n) {
        PyErr_SetString(PyExc_ValueError, "ids_to_list: NULL address");
        return NULL;
    }
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    if (!ints && !(ints = PyMem_Calloc(IDS_CACHED, sizeof *ints))) {
        Py_DECREF(list);
        return PyErr_NoMemory();
    }
    /* The ints of a large vocabulary (and the table pointing at them) are spread over several
       MB: each token waited for two cache misses, the table entry and then the object's
       reference count. Ask for both ahead: the entry PF_FAR tokens ahead, the object PF_NEAR
       ahead (its entry has arrived by then). */
    enum { PF_FAR = 16, PF_NEAR = 8 };
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + PF_FAR < n && ids[i + PF_FAR] < IDS_CACHED) PREFETCH(&ints[ids[i + PF_FAR]]);
        if (i + PF_NEAR < n && ids[i + PF_NEAR] < IDS_CACHED) {
            PyObject *ahead = ints[ids[i + PF_NEAR]];
            if (ahead) PREFETCH_W(ahead);
        }
        PyObject *o = cached_int(ids[i]);
        if (!o) goto fail;
        PyList_SetItem(list, i, o); /* steals o; cannot fail for 0 <= i < n */
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}

/* str_utf8(s) -> (address, n): the UTF-8 of str s as CPython holds it, without a copy when s
   is ASCII (its characters are then stored as bytes, which are its UTF-8). The memory belongs
   to s: valid while the caller keeps s alive. For another str CPython makes the UTF-8 and
   keeps it in s for s's lifetime, so the caller bounds the size of such str (encoding.py's
   _KEEP_UTF8_MAX). */
static PyObject *str_utf8(PyObject *self, PyObject *s) {
    Py_ssize_t n;
    (void)self;
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "str_utf8: expected str");
        return NULL;
    }
    const char *p = PyUnicode_AsUTF8AndSize(s, &n);
    if (!p) return NULL;
    return Py_BuildValue("Nn", PyLong_FromVoidPtr((void *)p), n);
}

/* An address argument (from cffi's ffi.cast("uintptr_t", ptr)); NULL with an error set. */
static const uint32_t *address(PyObject *obj, Py_ssize_t n, const char *what) {
    const uint32_t *p = (const uint32_t *)PyLong_AsVoidPtr(obj);
    if (!p && !PyErr_Occurred() && n) PyErr_Format(PyExc_ValueError, "%s: NULL address", what);
    return p;
}

/* tokens_to_list(address, n, table): [table[id] for each of the n uint32 ids at address],
   None where table (a list) has no entry. */
static PyObject *tokens_to_list(PyObject *self, PyObject *args) {
    PyObject *addr_obj, *table;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "OnO!", &addr_obj, &n, &PyList_Type, &table)) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "tokens_to_list: negative length");
        return NULL;
    }
    const uint32_t *ids = address(addr_obj, n, "tokens_to_list");
    if (!ids && PyErr_Occurred()) return NULL;
    Py_ssize_t size = PyList_Size(table);
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = (Py_ssize_t)ids[i] < size ? PyList_GetItem(table, (Py_ssize_t)ids[i]) : Py_None;
        Py_INCREF(o);
        PyList_SetItem(list, i, o);
    }
    return list;
}

/* spans_to_list(starts, ends, n, shift): [(starts[i] + shift, ends[i] + shift), ...] from two
   uint32 arrays at C addresses. */
static PyObject *spans_to_list(PyObject *self, PyObject *args) {
    PyObject *s_obj, *e_obj;
    Py_ssize_t n, shift;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOnn", &s_obj, &e_obj, &n, &shift)) return NULL;
    if (n < 0 || shift < 0) {
        PyErr_SetString(PyExc_ValueError, "spans_to_list: negative length or shift");
        return NULL;
    }
    const uint32_t *st = address(s_obj, n, "spans_to_list"), *en;
    if (!st && PyErr_Occurred()) return NULL;
    en = address(e_obj, n, "spans_to_list");
    if (!en && PyErr_Occurred()) return NULL;
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyTuple_New(2), *a, *b;
        if (!t) goto fail;
        PyList_SetItem(list, i, t);
        if (!(a = cached_pos((size_t)st[i] + (size_t)shift))) goto fail;
        PyTuple_SetItem(t, 0, a);
        if (!(b = cached_pos((size_t)en[i] + (size_t)shift))) goto fail;
        PyTuple_SetItem(t, 1, b);
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}

static PyMethodDef methods[] = {
    {"ids_to_list", ids_to_list, METH_VARARGS,
     "ids_to_list(address, n) -> list[int]: n uint32 ids at a C address as a list."},
    {"str_utf8", str_utf8, METH_O,
     "str_utf8(s) -> (address, n): the UTF-8 of an ASCII str in place (no copy)."},
    {"tokens_to_list", tokens_to_list, METH_VARARGS,
     "tokens_to_list(address, n, table) -> list: table[id] of n uint32 ids at a C address."},
    {"spans_to_list", spans_to_list, METH_VARARGS,
     "spans_to_list(starts, ends, n, shift) -> list[tuple[int, int]]: offset pairs."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "scantok._pylist", "Token id arrays to Python lists (ids, token strings, offset pairs); str UTF-8 in place.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pylist(void) { return PyModule_Create(&module); }

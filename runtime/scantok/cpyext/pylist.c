/* scantok._pylist: token ids (a C uint32 array) to a Python list of ints, and the UTF-8 of
   an ASCII str read in place (str_utf8, below).

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

#define IDS_CACHED (1u << 18) /* covers every shipped vocabulary (o200k_harmony: 201,088) */

static PyObject **ints; /* IDS_CACHED entries, NULL until an id is first seen */

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
    if (!ints) {
        ints = PyMem_Calloc(IDS_CACHED, sizeof *ints);
        if (!ints) return PyErr_NoMemory();
    }
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        PyObject *o;
        if (id < IDS_CACHED) {
            o = ints[id];
            if (!o) {
                o = PyLong_FromUnsignedLong(id);
                if (!o) goto fail;
                ints[id] = o; /* the table's reference */
            }
            Py_INCREF(o);
        } else {
            o = PyLong_FromUnsignedLong(id);
            if (!o) goto fail;
        }
        PyList_SetItem(list, i, o); /* steals o; cannot fail for 0 <= i < n */
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}

/* str_utf8(s) -> (address, n): the UTF-8 of str s as CPython holds it, without a copy when s
   is ASCII (its characters are then stored as bytes, which are its UTF-8). The memory belongs
   to s: valid while the caller keeps s alive. The caller calls it for ASCII str only (for
   other str CPython would make the UTF-8 and keep it in s for s's lifetime). */
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

static PyMethodDef methods[] = {
    {"ids_to_list", ids_to_list, METH_VARARGS,
     "ids_to_list(address, n) -> list[int]: n uint32 ids at a C address as a list."},
    {"str_utf8", str_utf8, METH_O,
     "str_utf8(s) -> (address, n): the UTF-8 of an ASCII str in place (no copy)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "scantok._pylist", "Token id arrays to Python lists; str UTF-8 in place.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pylist(void) { return PyModule_Create(&module); }

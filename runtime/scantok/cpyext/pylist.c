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
   table is only touched with the GIL held.

   Not the limited API (unlike the cffi module): a list's slots are written in place
   (PyList_SET_ITEM). The limited API's PyList_SetItem reads each slot before it writes it, so
   each 4 KiB page of a new list's array (fresh, zero memory from calloc) faulted twice, first
   onto the zero page, then copied on write: for the 6.1 M ids of 10 MB of random letters,
   24 K faults and 56 ms, against 12 K and 32 ms written in place. (Huge pages for such an
   array took 16 ms in a process that had used them before, but in a fresh process the
   kernel's 2 MiB faults varied from 20 to 150 ms of system time on this VM: not used.) */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h> /* T_OBJECT_EX, READONLY: the Encoding slots' descriptors */
#include <stdint.h>
#include <string.h>

#include "../csrc/bpe.h" /* BPE_SMALL_MAX, BPE_SMALL_IDS */
#include "ucs_utf8.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/* list[at + i] = ids[i] for i < n (a new list's empty slots); -1 with an error set (the
   slots not filled stay NULL, which the list's deallocation skips).
   The ints of a large vocabulary (and the table pointing at them) are spread over several MB:
   each token waited for two cache misses, the table entry and then the object's reference
   count. Both are asked for ahead: the entry PF_FAR tokens ahead, the object PF_NEAR ahead
   (its entry has arrived by then). At 16/8 the entry loads of a 128K vocabulary still waited:
   all-hit passes of scantok.Tokenizer over 0.5 MB of DeepSeek V3 en, 3.51 -> 3.22 ms at 64/24. */
static int fill_ids(PyObject *list, Py_ssize_t at, const uint32_t *ids, Py_ssize_t n) {
    enum { PF_FAR = 64, PF_NEAR = 24 };
    if (!ints && !(ints = PyMem_Calloc(IDS_CACHED, sizeof *ints))) {
        PyErr_NoMemory();
        return -1;
    }
    /* the prefetches run PF_FAR ahead of the stores: the loop stops short of the last PF_FAR
       ids (finished below), so it tests no bound per id */
    Py_ssize_t i = 0;
    PyObject **tab = ints; /* a local: the calls below could change the global, as far as the
                              compiler knows (the table itself never moves) */
    for (; i + PF_FAR < n; i++) {
        uint32_t far = ids[i + PF_FAR], near = ids[i + PF_NEAR], id = ids[i];
        if (far < IDS_CACHED) PREFETCH(&tab[far]);
        if (near < IDS_CACHED) {
            PyObject *ahead = tab[near];
            if (ahead) PREFETCH_W(ahead);
        }
        PyObject *o = id < IDS_CACHED ? tab[id] : NULL;
        if (o) Py_INCREF(o);
        else if (!(o = cached_pos(id))) return -1;
        PyList_SET_ITEM(list, at + i, o); /* the slot is empty: nothing to release */
    }
    for (; i < n; i++) { /* the table entries of these are on their way */
        if (i + PF_NEAR < n && ids[i + PF_NEAR] < IDS_CACHED) {
            PyObject *ahead = tab[ids[i + PF_NEAR]];
            if (ahead) PREFETCH_W(ahead);
        }
        PyObject *o = cached_int(ids[i]);
        if (!o) return -1;
        PyList_SET_ITEM(list, at + i, o);
    }
    return 0;
}

static const uint32_t *address(PyObject *obj, Py_ssize_t n, const char *what);

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
    const uint32_t *ids = address(addr_obj, n, "ids_to_list");
    if (!ids && PyErr_Occurred()) return NULL;
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    if (fill_ids(list, 0, ids, n)) goto fail;
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}

/* split_ids_into(out, at, address, ends, n): out[at + i] = the ids of text i, for i < n, where
   the uint32 ids of the n texts follow each other at address and ends (a C size_t array, its
   address) says where each text's ids end. One call per batch or chunk, writing straight into
   the caller's list: a Python loop with a list per text and a temporary per chunk cost calls,
   and enough allocations to start a collection of the young lists inside the call. */
static PyObject *split_ids_into(PyObject *self, PyObject *args) {
    PyObject *out, *addr_obj, *ends_obj;
    Py_ssize_t at, n;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!nOOn", &PyList_Type, &out, &at, &addr_obj, &ends_obj, &n)) return NULL;
    if (at < 0 || n < 0 || at > PyList_GET_SIZE(out) - n) {
        PyErr_SetString(PyExc_ValueError, "split_ids_into: texts outside the output list");
        return NULL;
    }
    const size_t *ends = (const size_t *)PyLong_AsVoidPtr(ends_obj);
    if (!ends && PyErr_Occurred()) return NULL;
    const uint32_t *ids = (const uint32_t *)PyLong_AsVoidPtr(addr_obj);
    if (!ids && PyErr_Occurred()) return NULL;
    if (n && (!ends || (!ids && ends[n - 1]))) {
        PyErr_SetString(PyExc_ValueError, "split_ids_into: NULL address");
        return NULL;
    }
    size_t prev = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t end = ends[i];
        if (end < prev) {
            PyErr_SetString(PyExc_ValueError, "split_ids_into: ends out of order");
            return NULL;
        }
        if (end - prev > (size_t)PY_SSIZE_T_MAX) {
            PyErr_SetString(PyExc_ValueError, "split_ids_into: a text's ids do not fit a list");
            return NULL;
        }
        PyObject *lst = PyList_New((Py_ssize_t)(end - prev));
        if (!lst) return NULL;
        if (fill_ids(lst, 0, ids + prev, (Py_ssize_t)(end - prev))) {
            Py_DECREF(lst);
            return NULL;
        }
        /* steals lst even when it fails (out shrunk by the old item's finalizer) */
        if (PyList_SetItem(out, at + i, lst) < 0) return NULL;
        prev = end;
    }
    Py_RETURN_NONE;
}

/* ascii_views(texts, lo, hi, ptrs, lens) -> sequence of int: for each exact ASCII str texts[i],
   lo <= i < hi, ptrs[i] and lens[i] (C arrays, their addresses) = its characters in place,
   which are its UTF-8; the indices of the other items, which the caller converts. The memory
   belongs to the str: valid while texts holds it. (A batch's texts were converted one Python
   call each, and the tuple each call returned counted toward a collection of the young
   lists.) */
static PyObject *ascii_views(PyObject *self, PyObject *args) {
    PyObject *texts, *p_obj, *l_obj;
    Py_ssize_t lo, hi;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!nnOO", &PyList_Type, &texts, &lo, &hi, &p_obj, &l_obj)) return NULL;
    if (lo < 0 || hi < lo || hi > PyList_GET_SIZE(texts)) {
        PyErr_SetString(PyExc_ValueError, "ascii_views: range outside the list");
        return NULL;
    }
    const uint8_t **ptrs = (const uint8_t **)PyLong_AsVoidPtr(p_obj);
    if (!ptrs && PyErr_Occurred()) return NULL;
    size_t *lens = (size_t *)PyLong_AsVoidPtr(l_obj);
    if (!lens && PyErr_Occurred()) return NULL;
    if ((!ptrs || !lens) && hi > lo) {
        PyErr_SetString(PyExc_ValueError, "ascii_views: NULL address");
        return NULL;
    }
    PyObject *rest = NULL; /* made at the first item left to the caller */
    for (Py_ssize_t i = lo; i < hi; i++) {
        PyObject *t = PyList_GET_ITEM(texts, i);
        if (PyUnicode_CheckExact(t) && PyUnicode_IS_READY(t) && PyUnicode_IS_ASCII(t)) {
            ptrs[i] = (const uint8_t *)PyUnicode_1BYTE_DATA(t);
            lens[i] = (size_t)PyUnicode_GET_LENGTH(t);
            continue;
        }
        PyObject *at = PyLong_FromSsize_t(i);
        if (!rest) rest = PyList_New(0);
        if (!at || !rest || PyList_Append(rest, at)) {
            Py_XDECREF(at);
            Py_XDECREF(rest);
            return NULL;
        }
        Py_DECREF(at);
    }
    return rest ? rest : PyTuple_New(0); /* the empty tuple: no allocation */
}

/* PyUnicode_AsUTF8AndSize, with the UTF-8 a compact non-ASCII str keeps made by ucs_utf8 (the
   str's own UTF-8 field, filled as CPython's unicode_fill_utf8 fills it: NUL-terminated, from
   the allocator unicode_dealloc frees it with, PyObject_Malloc up to 3.12 and PyMem_Malloc
   from 3.13 on (gh-114569; the debug hooks of -X dev abort on a mismatch); CPython's encoder
   made it 3-4x slower, and for a str encoded once it cost as much as counting it).  Only
   where the field is known (CPython 3.11 to 3.14, with the GIL: the field is written under
   it); elsewhere, and for a lone surrogate, CPython's own function. */
#if PY_VERSION_HEX >= 0x030D0000
#define KEPT_UTF8_MALLOC PyMem_Malloc
#else
#define KEPT_UTF8_MALLOC PyObject_Malloc
#endif
static const char *kept_utf8(PyObject *s, Py_ssize_t *n) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030F0000 && !defined(Py_GIL_DISABLED)
    if (PyUnicode_IS_READY(s) && PyUnicode_IS_COMPACT(s) && !PyUnicode_IS_ASCII(s)) {
        PyCompactUnicodeObject *c = (PyCompactUnicodeObject *)s;
        if (c->utf8) {
            *n = c->utf8_length;
            return c->utf8;
        }
        const int kind = PyUnicode_KIND(s);
        const size_t len = (size_t)PyUnicode_GET_LENGTH(s);
        const ptrdiff_t m = ucs_utf8_length(kind, PyUnicode_DATA(s), len);
        if (m >= 0) {
            char *u = KEPT_UTF8_MALLOC((size_t)m + 1);
            if (!u) {
                PyErr_NoMemory();
                return NULL;
            }
            ucs_utf8(kind, PyUnicode_DATA(s), len, (uint8_t *)u, (size_t)m);
            u[m] = 0;
            c->utf8 = u;
            c->utf8_length = (Py_ssize_t)m;
            *n = (Py_ssize_t)m;
            return u;
        }
    }
#endif
    return PyUnicode_AsUTF8AndSize(s, n);
}

/* str_utf8(s) -> (address, n): the UTF-8 of str s as CPython holds it, without a copy when s
   is ASCII (its characters are then stored as bytes, which are its UTF-8). The memory belongs
   to s: valid while the caller keeps s alive. For another str the UTF-8 is made (kept_utf8)
   and kept in s for s's lifetime, as CPython keeps it, so the caller bounds the size of such
   str (encoding.py's _KEEP_UTF8_MAX). */
static PyObject *str_utf8(PyObject *self, PyObject *s) {
    Py_ssize_t n;
    (void)self;
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "str_utf8: expected str");
        return NULL;
    }
    const char *p = kept_utf8(s, &n);
    if (!p) return NULL;
    return Py_BuildValue("Nn", PyLong_FromVoidPtr((void *)p), n);
}

/* utf8_contains(s, needle) -> bool: whether the UTF-8 of str s (as str_utf8 reads it) holds
   the bytes needle. The encoder's check for disallowed special tokens: searching a non-ASCII
   str for "<|" went through its 2- or 4-byte characters (~1.9 ms for 2 MB of en.txt, as long
   as encoding it), its UTF-8 holds a rarer first byte (memchr, then memcmp). */
/* 1 if needle[0:m] occurs in p[0:n] (memchr for its first byte, vectorised in libc). */
static int holds(const char *p, Py_ssize_t n, const char *needle, Py_ssize_t m) {
    if (m == 0) return 1;
    for (const char *q = p, *end = p + n; end - q >= m; q++) {
        q = memchr(q, needle[0], (size_t)(end - q - m + 1));
        if (!q) return 0;
        if (!memcmp(q, needle, (size_t)m)) return 1;
    }
    return 0;
}

static PyObject *utf8_contains(PyObject *self, PyObject *args) {
    PyObject *s;
    const char *needle;
    Py_ssize_t n, m;
    (void)self;
    if (!PyArg_ParseTuple(args, "Uy#", &s, &needle, &m)) return NULL;
    const char *p = kept_utf8(s, &n);
    if (!p) return NULL;
    return PyBool_FromLong(holds(p, n, needle, m));
}

/* An address argument (from cffi's ffi.cast("uintptr_t", ptr)); NULL with an error set. */
/* Or a tuple (bytes, at): the n uint32 values from uint32 index at of a bytes object (what
   hf_encode_offsets returns: numpy views of it cost ~1.4 us per short encode()). */
static const uint32_t *address(PyObject *obj, Py_ssize_t n, const char *what) {
    if (PyTuple_CheckExact(obj)) {
        PyObject *b = PyTuple_GET_SIZE(obj) == 2 ? PyTuple_GET_ITEM(obj, 0) : NULL;
        Py_ssize_t at = b ? PyLong_AsSsize_t(PyTuple_GET_ITEM(obj, 1)) : -1;
        if (at == -1 && PyErr_Occurred()) return NULL;
        if (!b || !PyBytes_Check(b) || at < 0 || n < 0 ||
            (at + n) > PyBytes_GET_SIZE(b) / (Py_ssize_t)sizeof(uint32_t)) {
            PyErr_Format(PyExc_ValueError, "%s: (bytes, index) out of range", what);
            return NULL;
        }
        return (const uint32_t *)(const void *)PyBytes_AS_STRING(b) + at;
    }
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

/* ---- scantok.Tokenizer.encode_batch_fast: one call per batch -------------------------------

   hf_encode_batch(fn, model, cache, stages, texts, screen, meta=None) -> list, one entry per text: a
   bytes object of its model ids (native uint32), or None where the caller must encode the text
   itself (the screen flags it, or the encoder returned HFB_SLOW).  The caller wraps each in a
   lazy Encoding (its id list is built on access, as tokenizers' Encoding converts on access).
   fn is the address of hf_bpe.c's hfb_encode (from the cffi module: this module does not link
   hf_bpe.c), model, cache and stages its arguments; the cache belongs to the calling thread.
   The texts are encoded in groups, the GIL released once a group (text_group, below).  An
   ASCII str is read in place, another through a temporary UTF-8 copy (nothing kept in the
   str); with meta (meta_args below), each text as a char-mode normalizer makes it, written
   once into a buffer (and copied into its group's).

   screen (None: no added tokens) is 256 + 8192 bytes: flags per byte b (1: b starts an added
   token of two bytes or more, 2: b is a whole added token), then a bitmap of the byte pairs
   that start an added token.  A text holding such a byte or pair is flagged (conservative: the
   caller makes the exact test). */
typedef int64_t (*hf_encode_fn)(const void *m, void *c, const void *ss, const uint8_t *data,
                                size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends);
/* hf_bpe.c's hfb_encode_words: hfb_encode and each token's word (piece index) */
typedef int64_t (*hf_encode_words_fn)(const void *m, void *c, const void *ss, const uint8_t *data,
                                      size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends,
                                      uint32_t *words);

/* 1 if p[0:n] holds a byte or byte pair the screen flags.  firsts: the flagged first bytes
   (nfirst of them); at most 4 are found by memchr (vectorised in libc), more by a table. */
static int screened(const uint8_t *p, size_t n, const uint8_t *first, const uint8_t *pairs,
                    const uint8_t *firsts, int nfirst) {
    const uint8_t *e = p + n;
    if (nfirst <= 4) {
        for (int k = 0; k < nfirst; k++) {
            unsigned b = firsts[k];
            for (const uint8_t *q = p; (q = memchr(q, (int)b, (size_t)(e - q))) != NULL; q++) {
                if (first[b] & 2) return 1;
                if (q + 1 < e && (pairs[(b << 5) | (q[1] >> 3)] >> (q[1] & 7)) & 1) return 1;
            }
        }
        return 0;
    }
    for (const uint8_t *q = p; q < e; q++) {
        unsigned f = first[*q];
        if (!f) continue;
        if (f & 2) return 1;
        if (q + 1 < e && (pairs[((unsigned)*q << 5) | (q[1] >> 3)] >> (q[1] & 7)) & 1) return 1;
    }
    return 0;
}

/* The UTF-8 of the str t as a new bytes object, by ucs_utf8 (its length counted first, so the
   object is made at its size: no over-allocation to fault in, no copy); NULL with an error
   set.  A str it cannot encode (a lone surrogate) gets CPython's own encoder, and so
   CPython's error. */
static PyObject *str_utf8_copy(PyObject *t) {
    if (PyUnicode_READY(t) < 0) return NULL;
    const int kind = PyUnicode_KIND(t);
    const size_t n = (size_t)PyUnicode_GET_LENGTH(t);
    const void *d = PyUnicode_DATA(t);
    const ptrdiff_t len = ucs_utf8_length(kind, d, n);
    if (len < 0) return PyUnicode_AsUTF8String(t);
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
    if (b) ucs_utf8(kind, d, n, (uint8_t *)PyBytes_AS_STRING(b), (size_t)len);
    return b;
}

/* The UTF-8 of str t: in place for an ASCII str, else a temporary copy in *tmp (the caller
   releases it; nothing is kept in t).  NULL with an error set. */
static const char *text_utf8(PyObject *t, Py_ssize_t *n, PyObject **tmp) {
    *tmp = NULL;
    if (PyUnicode_READY(t) < 0) return NULL;
    if (PyUnicode_IS_ASCII(t)) return PyUnicode_AsUTF8AndSize(t, n);
    if (!(*tmp = str_utf8_copy(t))) return NULL;
    *n = PyBytes_GET_SIZE(*tmp);
    return PyBytes_AS_STRING(*tmp);
}

/* utf8_bytes(s) -> bytes: str.encode(s, "utf-8") by ucs_utf8 (CPython's own encoder, and
   its error, for a str holding a lone surrogate); s an exact str or a subclass (its
   characters, not its own encode()). */
static PyObject *utf8_bytes(PyObject *self, PyObject *s) {
    (void)self;
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "expected str, got %.100s", Py_TYPE(s)->tp_name);
        return NULL;
    }
    if (PyUnicode_READY(s) < 0) return NULL;
    if (PyUnicode_IS_ASCII(s)) return PyBytes_FromStringAndSize(PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s));
    return str_utf8_copy(s);
}

/* utf8_impl(name=None) -> str: the implementation ucs_utf8 uses ("sse41" or "scalar"), after
   forcing name if given (ValueError if unknown or not supported by this CPU). */
static PyObject *utf8_impl(PyObject *self, PyObject *args) {
    const char *name = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "|z", &name)) return NULL;
    if (name) {
        int rc = ucs_utf8_force(name);
        if (rc == -1) return PyErr_Format(PyExc_ValueError, "utf8_impl: unknown implementation %R (sse41, scalar)", PyTuple_GET_ITEM(args, 0));
        if (rc == -2) return PyErr_Format(PyExc_ValueError, "utf8_impl: this CPU does not support %R", PyTuple_GET_ITEM(args, 0));
    }
    return PyUnicode_FromString(ucs_utf8_impl());
}

/* A char-mode tokenizer's normalizer done while its text becomes UTF-8 (scantok.Tokenizer's
   _CharPiece: Prepend(p) + Replace(" ", r), Replace alone, Metaspace without split): the
   prefix, then the text's UTF-8 with each space as r's. Why: str.replace made a new str (of
   two bytes a character for ASCII text, r being "▁") that was then converted again, ~10 % of
   a first pass over English with a SentencePiece-style file and ~20 % of a second.
   meta: None, or (prefix, r, unless) with prefix bytes (already replaced), r a str of one
   character, unless true when no prefix goes before a text that starts with a space or r
   (Metaspace's "always"); an empty text stays empty. */
typedef struct {
    int on; /* meta given */
    const uint8_t *prefix;
    Py_ssize_t plen;
    uint8_t rep[4];
    Py_ssize_t rlen;
    Py_UCS4 rep_cp;
    int unless;
    uint8_t *buf, *tmp; /* the normalized UTF-8, and a str's UTF-8 first where it is not ASCII */
    size_t cap, tcap;   /* (made on first use, reused for each text of a call) */
} meta_args;

/* meta read into *a (a->on: not None): 0, or -1 with an error set. meta_free(a) after it. */
static int meta_read(PyObject *meta, meta_args *a, const char *who) {
    memset(a, 0, sizeof *a);
    if (meta == Py_None) return 0;
    PyObject *prefix, *rep;
    int unless;
    if (!PyTuple_Check(meta) || !PyArg_ParseTuple(meta, "SUp", &prefix, &rep, &unless)) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: meta must be None or (bytes, str, bool)", who);
        }
        return -1;
    }
    Py_ssize_t rlen;
    const char *r = PyUnicode_AsUTF8AndSize(rep, &rlen);
    if (!r) return -1;
    if (PyUnicode_GET_LENGTH(rep) != 1 || rlen < 1 || rlen > 4) {
        PyErr_Format(PyExc_ValueError, "%s: meta's replacement must be one character", who);
        return -1;
    }
    a->prefix = (const uint8_t *)PyBytes_AS_STRING(prefix), a->plen = PyBytes_GET_SIZE(prefix);
    memcpy(a->rep, r, (size_t)rlen);
    a->rlen = rlen, a->rep_cp = PyUnicode_READ_CHAR(rep, 0), a->unless = unless;
    a->on = 1;
    return 0;
}

static void meta_free(meta_args *a) {
    PyMem_Free(a->buf), PyMem_Free(a->tmp);
    a->buf = a->tmp = NULL, a->cap = a->tcap = 0;
}

/* How many spaces p[0:n] holds. */
static size_t count_spaces(const uint8_t *p, size_t n) {
    size_t k = 0, i = 0;
#ifdef __SSE2__
    /* byte counters (a match is -1: subtracted), summed by psadbw every 255 blocks at most
       (no popcount instruction without -mpopcnt: a libgcc call per block) */
    const __m128i sp = _mm_set1_epi8(0x20), zero = _mm_setzero_si128();
    __m128i sum = zero;
    while (i + 16 <= n) {
        __m128i bytes = zero;
        for (int b = 0; b < 255 && i + 16 <= n; b++, i += 16)
            bytes = _mm_sub_epi8(bytes, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), sp));
        sum = _mm_add_epi64(sum, _mm_sad_epu8(bytes, zero));
    }
    k = (size_t)_mm_cvtsi128_si64(sum) + (size_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum));
#endif
    for (; i < n; i++) k += p[i] == 0x20;
    return k;
}

/* src[0:n] to dst with each space as a->rep (rlen bytes). dst needs 16 bytes of room past
   the end: the runs between spaces are copied 16 bytes at a time, and a space's rep 4 bytes
   at a time, each store overwritten by the next one past its end. */
static void spaces_as(const uint8_t *src, size_t n, uint8_t *dst, const meta_args *a) {
    uint32_t rw;
    uint8_t r4[4] = {0, 0, 0, 0};
    memcpy(r4, a->rep, (size_t)a->rlen);
    memcpy(&rw, r4, 4);
    const size_t rlen = (size_t)a->rlen;
    size_t i = 0;
#ifdef __SSE2__
    const __m128i sp = _mm_set1_epi8(0x20);
    /* a block of 16 (loads of 16 from any of its bytes stay within src: i + 32 <= n) */
    for (; i + 32 <= n; i += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(src + i)), sp));
        size_t at = 0; /* the block's first byte not written yet */
        while (m) {
            const size_t s = (size_t)__builtin_ctz(m);
            _mm_storeu_si128((__m128i *)dst, _mm_loadu_si128((const __m128i *)(src + i + at)));
            dst += s - at;
            memcpy(dst, &rw, 4);
            dst += rlen;
            at = s + 1, m &= m - 1;
        }
        _mm_storeu_si128((__m128i *)dst, _mm_loadu_si128((const __m128i *)(src + i + at)));
        dst += 16 - at;
    }
#endif
    for (; i < n; i++) {
        const uint32_t b = src[i], isp = b == 0x20, w = isp ? rw : b;
        memcpy(dst, &w, 4);
        dst += isp ? rlen : 1;
    }
}

/* The normalized UTF-8 (see meta_args) of the str t into a->buf (made or grown to a->cap
   bytes; a->tmp likewise for the UTF-8 of a str that is not ASCII): its length, or -1 with an
   error set (CPython's UnicodeEncodeError for a lone surrogate). */
static Py_ssize_t meta_utf8(PyObject *t, meta_args *a) {
    uint8_t **buf = &a->buf, **tmp = &a->tmp;
    size_t *cap = &a->cap, *tcap = &a->tcap;
    if (PyUnicode_READY(t) < 0) return -1;
    const int kind = PyUnicode_KIND(t);
    const size_t n = (size_t)PyUnicode_GET_LENGTH(t);
    const void *d = PyUnicode_DATA(t);
    if (!n) return 0;
    const int ascii = PyUnicode_IS_ASCII(t);
    const ptrdiff_t ulen = ascii ? (ptrdiff_t)n : ucs_utf8_length(kind, d, n);
    if (ulen < 0) { /* CPython's error */
        PyObject *e = PyUnicode_AsUTF8String(t);
        if (e) {
            Py_DECREF(e);
            PyErr_SetString(PyExc_ValueError, "meta_utf8: a str ucs_utf8 refused but CPython encoded");
        }
        return -1;
    }
    const Py_UCS4 c0 = PyUnicode_READ(kind, d, 0);
    const size_t plen = a->unless && (c0 == 0x20 || c0 == a->rep_cp) ? 0 : (size_t)a->plen;
    const uint8_t *src = d;
    if (!ascii) { /* the UTF-8 first, its spaces counted there */
        if ((size_t)ulen > *tcap) {
            uint8_t *nt = PyMem_Realloc(*tmp, (size_t)ulen);
            if (!nt) {
                PyErr_NoMemory();
                return -1;
            }
            *tmp = nt, *tcap = (size_t)ulen;
        }
        ucs_utf8(kind, d, n, *tmp, (size_t)ulen);
        src = *tmp;
    }
    const size_t total = plen + (size_t)ulen + count_spaces(src, (size_t)ulen) * (size_t)(a->rlen - 1);
    if (total + 16 > *cap) {
        size_t want = total + 16 > 4096 ? total + 16 : 4096;
        uint8_t *nb = PyMem_Realloc(*buf, want);
        if (!nb) {
            PyErr_NoMemory();
            return -1;
        }
        *buf = nb, *cap = want;
    }
    memcpy(*buf, a->prefix, plen);
    spaces_as(src, (size_t)ulen, *buf + plen, a);
    return (Py_ssize_t)total;
}

/* The UTF-8 an encoder reads of the str t, and its length in *n: the normalized text with
   meta (in a's buffer), else text_utf8's (*tmp the caller's to release); NULL with an error
   set. */
static const char *text_data(PyObject *t, meta_args *a, Py_ssize_t *n, PyObject **tmp) {
    if (!a->on) return text_utf8(t, n, tmp);
    *tmp = NULL;
    if ((*n = meta_utf8(t, a)) < 0) return NULL;
    return *n ? (const char *)a->buf : "";
}

/* The encoder and its arguments from their addresses; -1 with an error set. */
static int hf_addresses(PyObject *fn_o, PyObject *m_o, PyObject *c_o, PyObject *ss_o, hf_encode_fn *fn,
                        void **m, void **c, void **ss, const char *who) {
    *fn = (hf_encode_fn)PyLong_AsVoidPtr(fn_o);
    *m = PyLong_AsVoidPtr(m_o), *c = PyLong_AsVoidPtr(c_o), *ss = PyLong_AsVoidPtr(ss_o);
    if (PyErr_Occurred()) return -1;
    if (!*fn || !*m) {
        PyErr_Format(PyExc_ValueError, "%s: NULL function or model", who);
        return -1;
    }
    return 0;
}

/* A screen argument (see hf_encode_batch) read: first NULL when there is none or it flags
   nothing; 0, or -1 with an error set. */
typedef struct {
    const uint8_t *first, *pairs;
    uint8_t firsts[256];
    int nfirst;
} screen_args;

static int screen_read(PyObject *screen, screen_args *s, const char *who) {
    s->first = s->pairs = NULL;
    s->nfirst = 0;
    if (screen == Py_None) return 0;
    char *sb;
    Py_ssize_t sl;
    if (PyBytes_AsStringAndSize(screen, &sb, &sl) < 0) return -1;
    if (sl != 256 + 8192) {
        PyErr_Format(PyExc_ValueError, "%s: screen must be 8448 bytes", who);
        return -1;
    }
    s->first = (const uint8_t *)sb, s->pairs = s->first + 256;
    for (int b = 0; b < 256; b++)
        if (s->first[b]) s->firsts[s->nfirst++] = (uint8_t)b;
    if (!s->nfirst) s->first = NULL; /* no added token at all */
    return 0;
}

/* The texts of a batch call are encoded in groups, the GIL released once a group: released
   around each text's call, two threads' calls on short texts queued for the GIL at every text
   (50,000 texts of 60 characters, DeepSeek V3: two threads ran encode_batch_fast at 50-52 MB/s,
   one at 52-53; in groups 67-72 against 55). A group holds up to GROUP_TEXTS texts or about GROUP_BYTES bytes of them; their
   UTF-8 stays alive through it (the str's own, its UTF-8 copy, or the normalizer's piece copied
   into the group's arena), and the ids (and offsets) of text j go to buf from na * at_j. */
#define GROUP_TEXTS 256
#define GROUP_BYTES ((size_t)1 << 16)

typedef struct {
    PyObject *t, *tmp;  /* references the group holds */
    const char *data;   /* NULL: in the arena, at arena_at */
    size_t arena_at, at;
    Py_ssize_t n;
    uint32_t fold;
    int screened;
    int64_t r;
} group_item;

typedef struct {
    size_t k, bytes;
    uint8_t *arena;
    size_t arena_len, arena_cap;
    uint32_t *buf;
    size_t buf_cap; /* uint32 */
    group_item items[GROUP_TEXTS];
} text_group;

static void group_clear(text_group *g) {
    for (size_t j = 0; j < g->k; j++) {
        Py_XDECREF(g->items[j].tmp);
        Py_DECREF(g->items[j].t);
    }
    g->k = 0, g->bytes = 0, g->arena_len = 0;
}

static void group_free(text_group *g) {
    if (!g) return;
    group_clear(g);
    PyMem_Free(g->arena), PyMem_Free(g->buf), PyMem_Free(g);
}

/* Takes text t (a str) into the group: its UTF-8 (through the normalizer's piece when ma is on),
   whether the screen flags it. 0, or -1 with an error set (the group unchanged). */
static int group_add(text_group *g, PyObject *t, meta_args *ma, const screen_args *sa, uint32_t fold) {
    group_item *it = &g->items[g->k];
    PyObject *tmp = NULL;
    Py_ssize_t n = 0;
    Py_INCREF(t); /* the caller's list may change while the GIL is released */
    const char *data = text_data(t, ma, &n, &tmp);
    if (!data) goto fail;
    if (ma->on && n) { /* text_data's buffer is the next text's too: copied */
        if (g->arena_len + (size_t)n > g->arena_cap) {
            size_t want = 2 * (g->arena_len + (size_t)n);
            uint8_t *na = PyMem_Realloc(g->arena, want);
            if (!na) {
                PyErr_NoMemory();
                goto fail;
            }
            g->arena = na, g->arena_cap = want;
        }
        memcpy(g->arena + g->arena_len, data, (size_t)n);
        it->arena_at = g->arena_len;
        g->arena_len += (size_t)n;
        data = NULL;
    }
    it->t = t, it->tmp = tmp, it->data = data, it->n = n, it->fold = fold, it->r = 0;
    it->at = g->bytes;
    const uint8_t *p = data ? (const uint8_t *)data : g->arena + it->arena_at;
    it->screened = sa->first && screened(p, (size_t)n, sa->first, sa->pairs, sa->firsts, sa->nfirst);
    g->bytes += (size_t)n;
    g->k++;
    return 0;
fail:
    Py_XDECREF(tmp);
    Py_DECREF(t);
    return -1;
}

static int group_full(const text_group *g) { return g->k == GROUP_TEXTS || g->bytes >= GROUP_BYTES; }

/* Encodes the group's texts that are not screened, with the GIL released once: na 3 with
   offsets, 1 without. 0, or -1 with an error set (out of memory). */
static int group_run(text_group *g, hf_encode_fn fn, void *m, void *c, void *ss, int na) {
    size_t need = (size_t)na * (g->bytes ? g->bytes : 1);
    if (need > g->buf_cap) {
        PyMem_Free(g->buf);
        size_t want = need > (size_t)na * GROUP_BYTES ? need : (size_t)na * GROUP_BYTES;
        if (!(g->buf = PyMem_New(uint32_t, want))) {
            g->buf_cap = 0;
            PyErr_NoMemory();
            return -1;
        }
        g->buf_cap = want;
    }
    for (size_t j = 0; j < g->k; j++)
        if (!g->items[j].data) g->items[j].data = (const char *)g->arena + g->items[j].arena_at;
    Py_BEGIN_ALLOW_THREADS
    for (size_t j = 0; j < g->k; j++) {
        group_item *it = &g->items[j];
        if (it->screened || !it->n) continue;
        uint32_t *o = g->buf + (size_t)na * it->at;
        it->r = fn(m, c, ss, (const uint8_t *)it->data, (size_t)it->n, o, na == 3 ? o + it->n : NULL,
                   na == 3 ? o + 2 * it->n : NULL);
    }
    Py_END_ALLOW_THREADS
    return 0;
}

/* A group item's entry in a batch's result: with offsets (na 3), hf_encode_offsets' bytes or
   int code (-3 where the screen flags the text); without (na 1), the ids' bytes, or None where
   the caller encodes the text itself. NULL with an error set. */
static PyObject *offsets_result(int64_t r, uint32_t *buf, Py_ssize_t n, int na, uint32_t fold);

static PyObject *group_result(text_group *g, const group_item *it, int na) {
    if (na == 3)
        return it->screened ? PyLong_FromLong(-3) : offsets_result(it->r, g->buf + 3 * it->at, it->n, 3, it->fold);
    if (it->screened || (it->r < 0 && it->r != -1)) {
        Py_INCREF(Py_None);
        return Py_None;
    }
    if (it->r == -1) return PyErr_NoMemory();
    return PyBytes_FromStringAndSize((const char *)(g->buf + it->at), (Py_ssize_t)it->r * 4);
}

/* The result list of a batch call: texts (a list of str; not_str the TypeError's message for
   another item) encoded in groups, each entry group_result's; folds (NULL: 0 each) a list of
   one int per text (checked by the caller to be one per text). NULL with an error set. */
static PyObject *encode_in_groups(PyObject *texts, PyObject *folds, hf_encode_fn fn, void *m, void *c, void *ss,
                                  meta_args *ma, const screen_args *sa, int na, const char *not_str) {
    const Py_ssize_t ntexts = PyList_GET_SIZE(texts);
    Py_ssize_t first = 0;
    PyObject *out = PyList_New(ntexts);
    text_group *g = PyMem_Calloc(1, sizeof *g);
    if (!out || !g) {
        if (!g) PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < ntexts; i++) {
        PyObject *t = PyList_GetItem(texts, i);
        if (!t) goto fail; /* the list shrank (the caller's own copy: it does not) */
        if (!PyUnicode_Check(t)) {
            PyErr_SetString(PyExc_TypeError, not_str);
            goto fail;
        }
        Py_ssize_t fold = folds ? PyLong_AsSsize_t(PyList_GET_ITEM(folds, i)) : 0;
        if (fold == -1 && PyErr_Occurred()) goto fail;
        if (fold < 0 || fold > UINT32_MAX - 1) {
            PyErr_SetString(PyExc_ValueError, "hf_encode_offsets_batch: fold out of range");
            goto fail;
        }
        if (group_add(g, t, ma, sa, (uint32_t)fold) < 0) goto fail;
        if (!group_full(g) && i + 1 < ntexts) continue;
        if (group_run(g, fn, m, c, ss, na) < 0) goto fail;
        for (size_t j = 0; j < g->k; j++) {
            PyObject *res = group_result(g, &g->items[j], na);
            if (!res) goto fail;
            PyList_SET_ITEM(out, first + (Py_ssize_t)j, res); /* the slot is empty */
        }
        first += (Py_ssize_t)g->k;
        group_clear(g);
    }
    group_free(g);
    return out;
fail:
    group_free(g);
    Py_XDECREF(out);
    return NULL;
}

static PyObject *hf_encode_batch(PyObject *self, PyObject *args) {
    PyObject *fn_o, *m_o, *c_o, *ss_o, *texts, *screen, *meta = Py_None;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOO!O|O", &fn_o, &m_o, &c_o, &ss_o, &PyList_Type, &texts, &screen, &meta))
        return NULL;
    hf_encode_fn fn;
    void *m, *c, *ss;
    if (hf_addresses(fn_o, m_o, c_o, ss_o, &fn, &m, &c, &ss, "hf_encode_batch") < 0) return NULL;
    screen_args sa;
    if (screen_read(screen, &sa, "hf_encode_batch") < 0) return NULL;
    meta_args ma;
    if (meta_read(meta, &ma, "hf_encode_batch") < 0) return NULL;
    PyObject *out = encode_in_groups(texts, NULL, fn, m, c, ss, &ma, &sa, 1, "encode_batch_fast() expects strings");
    meta_free(&ma);
    return out;
}

/* hf_encode_offsets' result for the encoder's return r, its na arrays at buf (n entries each):
   the bytes of the r entries of each, starts and ends folded (see hf_encode_offsets), or the
   int code; NULL with an error set (MemoryError for HFB_NOMEM). */
static PyObject *offsets_result(int64_t r, uint32_t *buf, Py_ssize_t n, int na, uint32_t fold) {
    if (r == -1) return PyErr_NoMemory();
    if (r < 0) return PyLong_FromLongLong(r);
    PyObject *res = PyBytes_FromStringAndSize(NULL, na * (Py_ssize_t)r * 4);
    if (!res) return NULL;
    char *o = PyBytes_AS_STRING(res);
    for (int64_t i = 0; fold && i < r; i++) {
        uint32_t *s = buf + n + i, *e = buf + 2 * n + i;
        *s = *s > fold ? *s - fold : 0;
        *e = *e > fold + 1 ? *e - fold : 1;
    }
    for (int k = 0; k < na; k++) memcpy(o + 4 * k * r, buf + k * n, (size_t)r * 4);
    return res;
}

/* hf_encode_offsets(fn, model, cache, stages, text, words=0, fold=0, screen=None, meta=None) -> bytes or
   int: scantok.Tokenizer.encode of one text in one call: the r ids, then their r start and r
   end offsets (code points), and with words their r words (the pre-tokenizer's piece each
   comes from), as 3 * r (4 * r) native uint32 in one bytes object; or the encoder's negative
   code HFB_SLOW (-2), or -3 when the screen (as for hf_encode_batch) flags the text, which is
   then not encoded.  fn is the address of hfb_encode, or of hfb_encode_words with words; the
   other arguments as for hf_encode_batch; the encoding runs with the GIL released.  fold: the
   text's first fold characters are a prefix put before the caller's text that comes from its
   first character (ByteLevel's add_prefix_space): starts become max(s - fold, 0) and ends
   max(e - fold, 1).  meta: as for hf_encode_batch (the offsets are the normalized text's). */
static PyObject *hf_encode_offsets(PyObject *self, PyObject *args) {
    PyObject *fn_o, *m_o, *c_o, *ss_o, *t, *tmp = NULL, *res = NULL, *screen = Py_None, *meta = Py_None;
    int words = 0;
    Py_ssize_t fold = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOU|pnOO", &fn_o, &m_o, &c_o, &ss_o, &t, &words, &fold, &screen, &meta))
        return NULL;
    screen_args sa;
    if (screen_read(screen, &sa, "hf_encode_offsets") < 0) return NULL;
    meta_args ma;
    if (meta_read(meta, &ma, "hf_encode_offsets") < 0) return NULL;
    if (fold < 0 || fold > UINT32_MAX - 1) {
        PyErr_SetString(PyExc_ValueError, "hf_encode_offsets: fold out of range");
        return NULL;
    }
    hf_encode_fn fn;
    void *m, *c, *ss;
    if (hf_addresses(fn_o, m_o, c_o, ss_o, &fn, &m, &c, &ss, "hf_encode_offsets") < 0) return NULL;
    const int na = words ? 4 : 3;
    Py_ssize_t n = 0;
    const char *data = text_data(t, &ma, &n, &tmp);
    if (!data) goto done;
    if (sa.first && screened((const uint8_t *)data, (size_t)n, sa.first, sa.pairs, sa.firsts, sa.nfirst)) {
        res = PyLong_FromLong(-3);
        goto done;
    }
    uint32_t *buf = PyMem_Malloc((size_t)na * (size_t)(n ? n : 1) * sizeof *buf);
    if (!buf) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t r = 0;
    if (n) {
        Py_BEGIN_ALLOW_THREADS
        if (words)
            r = ((hf_encode_words_fn)(void *)fn)(m, c, ss, (const uint8_t *)data, (size_t)n, buf, buf + n,
                                                 buf + 2 * n, buf + 3 * n);
        else
            r = fn(m, c, ss, (const uint8_t *)data, (size_t)n, buf, buf + n, buf + 2 * n);
        Py_END_ALLOW_THREADS
    }
    res = offsets_result(r, buf, n, na, (uint32_t)fold);
    PyMem_Free(buf);
done:
    Py_XDECREF(tmp);
    meta_free(&ma);
    return res;
}

/* hf_encode_offsets_batch(fn, model, cache, stages, texts, screen, folds=None, meta=None) -> list:
   hf_encode_offsets(fn, model, cache, stages, texts[i], False, folds[i], screen, meta) of each
   text (folds None: 0 each) in one call, in groups as hf_encode_batch: the bytes or the int
   code of each.  Why: encode_batch called hf_encode_offsets once a text through
   Python, and on two threads the GIL passed between them at every text (DeepSeek V3 on en in
   4 KB documents: 1.1x one thread's speed in wall time, 1.5x its CPU time). */
static PyObject *hf_encode_offsets_batch(PyObject *self, PyObject *args) {
    PyObject *fn_o, *m_o, *c_o, *ss_o, *texts, *screen, *folds = Py_None, *meta = Py_None;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOO!O|OO", &fn_o, &m_o, &c_o, &ss_o, &PyList_Type, &texts, &screen, &folds,
                          &meta))
        return NULL;
    hf_encode_fn fn;
    void *m, *c, *ss;
    if (hf_addresses(fn_o, m_o, c_o, ss_o, &fn, &m, &c, &ss, "hf_encode_offsets_batch") < 0) return NULL;
    screen_args sa;
    if (screen_read(screen, &sa, "hf_encode_offsets_batch") < 0) return NULL;
    const Py_ssize_t ntexts = PyList_GET_SIZE(texts);
    if (folds != Py_None && (!PyList_Check(folds) || PyList_GET_SIZE(folds) != ntexts)) {
        PyErr_SetString(PyExc_TypeError, "hf_encode_offsets_batch: folds must be None or a list, one per text");
        return NULL;
    }
    meta_args ma;
    if (meta_read(meta, &ma, "hf_encode_offsets_batch") < 0) return NULL;
    PyObject *out = encode_in_groups(texts, folds == Py_None ? NULL : folds, fn, m, c, ss, &ma, &sa, 3,
                                     "hf_encode_offsets_batch: texts must be str");
    meta_free(&ma);
    return out;
}

/* encode_small(fn, table, dfa, text, screen) -> list | None: Encoding.encode_ordinary of a
   short exact str in one call, the GIL held throughout.  fn is bpe.c's bpe_encode_small (from
   the cffi module, as for hf_encode_batch), table and dfa its arguments, all as addresses.
   None (the caller takes its general path, which gives the same ids or the error) when text
   is not an exact str, holds a lone surrogate, has more than BPE_SMALL_MAX bytes of UTF-8,
   holds screen (bytes: the common prefix of the special tokens encode() disallows; None: no
   check), or the encoder fails.  Why: a short text's cost is the per-call cost, and through
   Python (the UTF-8 view, the scratch buffer, a cffi call, the list) "hello world" took
   0.73 us, three quarters of it outside the encoder. */
typedef int64_t (*small_fn)(const void *t, const void *dfa, const uint8_t *data, size_t n,
                            int flags, uint32_t *ids);

/* The UTF-8 of the str t into buf (room for max bytes): its length, or -1 when it does not
   fit or holds a surrogate (not encodable as UTF-8).  A loop of its own, not ucs_utf8: on a
   text this short the SIMD path's length pass and two calls cost more (a 30-character Cyrillic
   encode_ordinary took 0.245 us through them, 0.218 here). */
static Py_ssize_t small_utf8(PyObject *t, uint8_t *buf, Py_ssize_t max) {
    int kind = PyUnicode_KIND(t);
    const void *d = PyUnicode_DATA(t);
    Py_ssize_t len = PyUnicode_GET_LENGTH(t), o = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, d, i);
        if (c < 0x80) {
            if (o + 1 > max) return -1;
            buf[o++] = (uint8_t)c;
        } else if (c < 0x800) {
            if (o + 2 > max) return -1;
            buf[o++] = (uint8_t)(0xC0 | (c >> 6));
            buf[o++] = (uint8_t)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            if ((c >= 0xD800 && c <= 0xDFFF) || o + 3 > max) return -1;
            buf[o++] = (uint8_t)(0xE0 | (c >> 12));
            buf[o++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            buf[o++] = (uint8_t)(0x80 | (c & 0x3F));
        } else {
            if (o + 4 > max) return -1;
            buf[o++] = (uint8_t)(0xF0 | (c >> 18));
            buf[o++] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
            buf[o++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            buf[o++] = (uint8_t)(0x80 | (c & 0x3F));
        }
    }
    return o;
}

static PyObject *encode_small(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    /* on the stack (13 KiB), not in a static: PyList_New can run a collection, and a
       finalizer could call this again before the ids are in the list */
    uint8_t utf8[BPE_SMALL_MAX];
    uint32_t ids[BPE_SMALL_IDS];
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "encode_small(fn, table, dfa, text, screen)");
        return NULL;
    }
    PyObject *text = args[3], *screen = args[4];
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
    small_fn fn = (small_fn)PyLong_AsVoidPtr(args[0]);
    const void *t = PyLong_AsVoidPtr(args[1]), *dfa = PyLong_AsVoidPtr(args[2]);
    if (PyErr_Occurred()) return NULL;
    if (!fn || !t || !dfa) {
        PyErr_SetString(PyExc_ValueError, "encode_small: NULL function, table or scanner");
        return NULL;
    }
    const uint8_t *data;
    Py_ssize_t n;
    if (PyUnicode_IS_ASCII(text)) { /* a compact ASCII str's characters are its UTF-8 */
        n = PyUnicode_GET_LENGTH(text);
        if (n > BPE_SMALL_MAX) Py_RETURN_NONE;
        data = (const uint8_t *)PyUnicode_DATA(text);
    } else {
        if (PyUnicode_GET_LENGTH(text) > BPE_SMALL_MAX) Py_RETURN_NONE;
        n = small_utf8(text, utf8, BPE_SMALL_MAX);
        if (n < 0) Py_RETURN_NONE;
        data = utf8;
    }
    if (screen != Py_None) {
        if (!PyBytes_Check(screen)) {
            PyErr_SetString(PyExc_TypeError, "encode_small: screen must be bytes or None");
            return NULL;
        }
        /* no common prefix (empty screen): every text takes the exact check */
        if (holds((const char *)data, n, PyBytes_AS_STRING(screen), PyBytes_GET_SIZE(screen))) Py_RETURN_NONE;
    }
    int64_t k = fn(t, dfa, data, (size_t)n, 0, ids);
    if (k < 0) Py_RETURN_NONE;
    PyObject *list = PyList_New((Py_ssize_t)k);
    if (!list) return NULL;
    if (fill_ids(list, 0, ids, (Py_ssize_t)k)) {
        Py_DECREF(list);
        return NULL;
    }
    return list;
}

/* decode_small(len_fn, decode_fn, table, tokens) -> bytes | None: Encoding.decode_bytes of an
   exact list of at most DECODE_SMALL exact ints in one call (len_fn, decode_fn: bpe.c's
   bpe_decode_len and bpe_decode; table: as for encode_small).  None (the caller takes its
   general path, which gives the bytes or tiktoken's error) for anything else: another
   sequence, a longer list, an int out of uint32 range, a token the table does not have.
   Through cffi (a uint32 array from the list, two calls, a buffer copy) two tokens took
   1.5 us. */
#define DECODE_SMALL 4096
typedef int64_t (*decode_len_fn)(const void *t, const uint32_t *ids, size_t n);
typedef void (*decode_fn)(const void *t, const uint32_t *ids, size_t n, uint8_t *out);

static PyObject *decode_small(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint32_t ids[DECODE_SMALL]; /* on the stack: nothing here runs Python code */
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "decode_small(len_fn, decode_fn, table, tokens)");
        return NULL;
    }
    PyObject *tokens = args[3];
    if (!PyList_CheckExact(tokens) || PyList_GET_SIZE(tokens) > DECODE_SMALL) Py_RETURN_NONE;
    decode_len_fn len_fn = (decode_len_fn)PyLong_AsVoidPtr(args[0]);
    decode_fn dec = (decode_fn)PyLong_AsVoidPtr(args[1]);
    const void *t = PyLong_AsVoidPtr(args[2]);
    if (PyErr_Occurred()) return NULL;
    if (!len_fn || !dec || !t) {
        PyErr_SetString(PyExc_ValueError, "decode_small: NULL function or table");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(tokens);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyList_GET_ITEM(tokens, i);
        if (!PyLong_CheckExact(o)) Py_RETURN_NONE;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || v < 0 || v > 0xFFFFFFFFll) Py_RETURN_NONE;
        ids[i] = (uint32_t)v;
    }
    int64_t total = len_fn(t, ids, (size_t)n);
    if (total < 0) Py_RETURN_NONE;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (!out) return NULL;
    dec(t, ids, (size_t)n, (uint8_t *)PyBytes_AS_STRING(out));
    return out;
}


/* ---- scantok.Tokenizer's lazy Encodings, left out of the cyclic GC ---------------------

   A batch of short texts makes an Encoding and its lazy tuple per text.  Tracked by the
   cyclic GC, as Python makes them, 50,000 texts of 60 characters spent ~30 of ~95 ms of
   encode_batch in collections (a young collection every 700 objects, every tenth of them an
   older one, then a full one), and ~13 ms more in the Python constructor.  Such objects can
   never be part of a reference cycle: a lazy Encoding holds bytes (the C arrays), ints, the
   text, the post-processor's wrap (tuples of ints and str, and a closure over the model's C
   handles) and the model's token table holder, none of which refers to an Encoding.  So
   they are made here, untracked, as tokenizers' own Encoding is (a pyo3 class without
   __traverse__).  The slots are written through their member descriptors' offsets, read
   and checked once (encoding_class). */
static PyTypeObject *enc_type; /* scantok.hf.encoding.Encoding (a strong reference) */
static Py_ssize_t off_lazy, off_over, off_pad;

static Py_ssize_t slot_offset(PyTypeObject *t, const char *name) {
    PyObject *d = PyDict_GetItemString(t->tp_dict, name); /* borrowed */
    if (!d || !PyObject_TypeCheck(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "encoding_class: %s has no slot %s", t->tp_name, name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX || (m->flags & READONLY) || m->offset < (Py_ssize_t)sizeof(PyObject) ||
        m->offset + (Py_ssize_t)sizeof(PyObject *) > t->tp_basicsize) {
        PyErr_Format(PyExc_TypeError, "encoding_class: %s.%s is not a writable object slot", t->tp_name, name);
        return -1;
    }
    return m->offset;
}

/* encoding_class(cls): the class lazy_encoding(s) make.  It must be a class of __slots__
   with _lazy, _overflowing and _pad, no __dict__ (nothing else can be stored on one), no
   weak references and no finalizer. */
static PyObject *encoding_class(PyObject *self, PyObject *cls) {
    (void)self;
    if (!PyType_Check(cls)) return PyErr_Format(PyExc_TypeError, "encoding_class: a class, not %R", cls);
    PyTypeObject *t = (PyTypeObject *)cls;
    if (!PyType_IS_GC(t) || t->tp_dictoffset || t->tp_weaklistoffset || t->tp_finalize || t->tp_del ||
        t->tp_itemsize)
        return PyErr_Format(PyExc_TypeError, "encoding_class: %s must be a class of __slots__ only", t->tp_name);
    Py_ssize_t a = slot_offset(t, "_lazy"), b = a < 0 ? -1 : slot_offset(t, "_overflowing"),
               c = b < 0 ? -1 : slot_offset(t, "_pad");
    if (c < 0) return NULL;
    Py_INCREF(cls);
    Py_XSETREF(enc_type, t);
    off_lazy = a, off_over = b, off_pad = c;
    Py_RETURN_NONE;
}

#define SLOT(e, off) (*(PyObject **)((char *)(e) + (off)))

/* A new untracked Encoding whose _lazy is (arrays, n, wrap, table, text, 0); NULL on error. */
static PyObject *untracked_encoding(PyObject *arrays, Py_ssize_t n, PyObject *wrap, PyObject *table,
                                    PyObject *text) {
    PyObject *lazy = PyTuple_New(6), *e = NULL, *count = lazy ? PyLong_FromSsize_t(n) : NULL,
             *zero = count ? PyLong_FromLong(0) : NULL;
    if (!zero) goto fail;
    PyObject_GC_UnTrack(lazy);
    PyObject *items[6] = {arrays, count, wrap, table, text, zero};
    for (int i = 0; i < 6; i++) {
        if (i != 1 && i != 5) Py_INCREF(items[i]);
        PyTuple_SET_ITEM(lazy, i, items[i]);
    }
    count = zero = NULL; /* the tuple's now */
    e = enc_type->tp_alloc(enc_type, 0);
    if (!e) goto fail;
    PyObject_GC_UnTrack(e);
    SLOT(e, off_lazy) = lazy;
    SLOT(e, off_over) = PyTuple_New(0); /* the empty tuple: a new reference, never NULL */
    if (!SLOT(e, off_over)) {
        Py_DECREF(e);
        return NULL;
    }
    Py_INCREF(Py_None);
    SLOT(e, off_pad) = Py_None;
    return e;
fail:
    Py_XDECREF(lazy);
    Py_XDECREF(count);
    Py_XDECREF(zero);
    return NULL;
}

static int encoding_ready(void) {
    if (enc_type) return 0;
    PyErr_SetString(PyExc_RuntimeError, "scantok._pylist: encoding_class() was not called");
    return -1;
}

/* lazy_encoding(arrays, n, wrap, table, text): one untracked lazy Encoding. */
static PyObject *lazy_encoding(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5) return PyErr_Format(PyExc_TypeError, "lazy_encoding: 5 arguments, not %zd", nargs);
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (encoding_ready() < 0) return NULL;
    return untracked_encoding(args[0], n, args[2], args[3], args[4]);
}

/* lazy_encodings(results, unit, wrap, table, texts): for each result, a bytes object of n
   records of unit bytes (12: encode's ids, starts and ends; 4: encode_batch_fast's ids) or,
   with unit 4, a list of n ids, its untracked lazy Encoding with texts[i] (texts None: None);
   None for any other result (the caller encodes that text its own way). */
static PyObject *lazy_encodings(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *results, *wrap, *table, *texts;
    Py_ssize_t unit;
    if (!PyArg_ParseTuple(args, "O!nOOO:lazy_encodings", &PyList_Type, &results, &unit, &wrap, &table, &texts))
        return NULL;
    Py_ssize_t k = PyList_GET_SIZE(results);
    if (unit <= 0 || (texts != Py_None && (!PyList_Check(texts) || PyList_GET_SIZE(texts) != k)))
        return PyErr_Format(PyExc_ValueError, "lazy_encodings: unit %zd, texts a list of %zd or None", unit, k);
    if (encoding_ready() < 0) return NULL;
    PyObject *out = PyList_New(k);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *r = PyList_GET_ITEM(results, i), *e;
        Py_ssize_t n = -1;
        if (PyBytes_Check(r))
            n = PyBytes_GET_SIZE(r) / unit;
        else if (unit == 4 && PyList_Check(r))
            n = PyList_GET_SIZE(r);
        if (n < 0) {
            Py_INCREF(Py_None);
            e = Py_None;
        } else {
            e = untracked_encoding(r, n, wrap, table, texts == Py_None ? Py_None : PyList_GET_ITEM(texts, i));
            if (!e) {
                Py_DECREF(out);
                return NULL;
            }
        }
        PyList_SET_ITEM(out, i, e);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"decode_small", (PyCFunction)(void (*)(void))decode_small, METH_FASTCALL,
     "decode_small(len_fn, decode_fn, table, tokens): the bytes of a short list of ids, or None"},
    {"encode_small", (PyCFunction)(void (*)(void))encode_small, METH_FASTCALL,
     "encode_small(fn, table, dfa, text, screen): the ids of a short str, or None"},
    {"ids_to_list", ids_to_list, METH_VARARGS,
     "ids_to_list(address, n) -> list[int]: n uint32 ids at a C address as a list."},
    {"split_ids_into", split_ids_into, METH_VARARGS,
     "split_ids_into(out, at, address, ends, n): out[at + i] = the ids of text i (C arrays)."},
    {"ascii_views", ascii_views, METH_VARARGS,
     "ascii_views(texts, lo, hi, ptrs, lens) -> list[int]: ASCII str in place; the others' indices."},
    {"utf8_bytes", utf8_bytes, METH_O,
     "utf8_bytes(s) -> bytes: str.encode(s, 'utf-8') (SIMD; CPython's error for a lone surrogate)."},
    {"utf8_impl", utf8_impl, METH_VARARGS,
     "utf8_impl(name=None) -> str: utf8_bytes' implementation (sse41, scalar), forced to name if given."},
    {"str_utf8", str_utf8, METH_O,
     "str_utf8(s) -> (address, n): the UTF-8 of an ASCII str in place (no copy)."},
    {"utf8_contains", utf8_contains, METH_VARARGS,
     "utf8_contains(s, needle) -> bool: whether the UTF-8 of str s holds the bytes needle."},
    {"tokens_to_list", tokens_to_list, METH_VARARGS,
     "tokens_to_list(address, n, table) -> list: table[id] of n uint32 ids at a C address."},
    {"spans_to_list", spans_to_list, METH_VARARGS,
     "spans_to_list(starts, ends, n, shift) -> list[tuple[int, int]]: offset pairs."},
    {"hf_encode_batch", hf_encode_batch, METH_VARARGS,
     "hf_encode_batch(fn, model, cache, stages, texts, screen, meta=None) -> list: "
     "scantok.Tokenizer's encode_batch_fast in one call (see pylist.c)."},
    {"hf_encode_offsets_batch", hf_encode_offsets_batch, METH_VARARGS,
     "hf_encode_offsets_batch(fn, model, cache, stages, texts, screen, folds=None, meta=None) -> list: "
     "hf_encode_offsets of each text in one call (see pylist.c)."},
    {"encoding_class", encoding_class, METH_O,
     "encoding_class(cls): the Encoding class lazy_encoding(s) make (a class of __slots__ only)."},
    {"lazy_encoding", (PyCFunction)(void (*)(void))lazy_encoding, METH_FASTCALL,
     "lazy_encoding(arrays, n, wrap, table, text) -> Encoding: a lazy Encoding, untracked by the cyclic GC."},
    {"lazy_encodings", lazy_encodings, METH_VARARGS,
     "lazy_encodings(results, unit, wrap, table, texts) -> list: lazy_encoding of each bytes result (None for others)."},
    {"hf_encode_offsets", hf_encode_offsets, METH_VARARGS,
     "hf_encode_offsets(fn, model, cache, stages, text, words=False, fold=0, screen=None, meta=None) -> bytes | int: scantok.Tokenizer's "
     "encode of one text in one call (ids, starts, ends and with words the words, as uint32; see pylist.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "scantok._pylist", "Token id arrays to Python lists (ids, token strings, offset pairs); str UTF-8 in place.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pylist(void) {
    /* the best UTF-8 path this CPU has, or scalar when SCANTOK_FORCE_IMPL names a scanner
       path without SSE4.1 (scalar, sse2): every engine path is tested with its own helpers */
    const char *forced = getenv("SCANTOK_FORCE_IMPL");
    ucs_utf8_force(NULL);
    if (forced && (!strcmp(forced, "scalar") || !strcmp(forced, "sse2"))) ucs_utf8_force("scalar");
    return PyModule_Create(&module);
}

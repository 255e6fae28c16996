/* Vocabulary hash table for scantok's WordLevel tokenizer: maps the UTF-8 bytes of a
   pre-tokenized piece to its id.  Built once at load; lookups are read-only and thread-safe;
   the encode entry points scan with a compiled scanner and look every piece up in one call,
   so the Python side can release the GIL around them (cffi does by default). */
#ifndef SCANTOK_VOCAB_TABLE_H
#define SCANTOK_VOCAB_TABLE_H
#include <stddef.h>
#include <stdint.h>
#include "scantok_scan.h"

/* cdef:begin */
typedef struct vt_table vt_table;
vt_table *vt_new(size_t expected);              /* NULL on out of memory */
void vt_free(vt_table *t);
/* Inserts or replaces key -> id.  Returns 0 if new, 1 if it replaced an existing key, -1 on
   out of memory. */
int vt_insert(vt_table *t, const char *key, size_t len, int32_t id);
int32_t vt_get(const vt_table *t, const char *key, size_t len);   /* -1 if absent */
size_t vt_size(const vt_table *t);
/* Looks up pieces [starts[i], ends[i]) of data; writes ids.  Unknown pieces get unk_id; if
   unk_id < 0 an unknown piece stops the lookup: returns -(i + 1) for the first unknown piece i.
   Otherwise returns n. */
int64_t vt_lookup_spans(const vt_table *t, const uint8_t *data, const uint32_t *starts,
                        const uint32_t *ends, size_t n, int32_t unk_id, int32_t *ids);
/* Scans data[0:n] with dfa (regex.findall semantics) and looks every piece up.  Writes the ids
   to ids[] (room for n entries); if starts/ends are not NULL also the piece offsets — in bytes,
   or in code points of the UTF-8 text (counting lead bytes) when char_offsets is nonzero.
   Unknown pieces get unk_id; if unk_id < 0 an unknown piece is an error: returns
   -(1 + byte offset of that piece).  Returns the number of pieces, or INT64_MIN on out of
   memory. */
int64_t vt_encode(const vt_table *t, const scantok_dfa *dfa, const uint8_t *data, size_t n,
                  int scan_flags, int32_t unk_id, int32_t *ids, uint32_t *starts,
                  uint32_t *ends, int char_offsets);
/* The same as vt_encode with the whitespace_split scanner (HF WhitespaceSplit: pieces are the
   maximal runs of characters that are not White_Space), fused with hashing in one hand-written
   loop; tested equal to vt_encode with the compiled scanner. */
int64_t vt_encode_wsplit(const vt_table *t, const uint8_t *data, size_t n, int32_t unk_id,
                         int32_t *ids, uint32_t *starts, uint32_t *ends, int char_offsets);
/* Encodes ntexts texts: text i is data[offsets[i]:offsets[i+1]].  Its ids go to
   ids[offsets[i] ...] (so ids needs room for offsets[ntexts] entries) and its piece count to
   counts[i].  dfa NULL means the fused WhitespaceSplit loop.  Runs on nthreads threads (texts
   split into contiguous groups of about equal bytes).  Returns 0; if a text has an unknown
   piece and unk_id < 0, counts[i] is -(1 + byte offset in that text) and the return is -1;
   INT64_MIN on out of memory. */
int64_t vt_encode_batch(const vt_table *t, const scantok_dfa *dfa, const uint8_t *data,
                        const uint64_t *offsets, size_t ntexts, int scan_flags, int32_t unk_id,
                        int32_t *ids, int64_t *counts, int nthreads);
/* Word counting for training: scans data and adds every piece to counts (key -> count in a
   second table, stored as int64).  Returns the number of pieces or -1 on out of memory. */
typedef struct vt_counter vt_counter;
vt_counter *vt_counter_new(void);
void vt_counter_free(vt_counter *c);
int64_t vt_count(vt_counter *c, const scantok_dfa *dfa, const uint8_t *data, size_t n,
                 int scan_flags);
size_t vt_counter_size(const vt_counter *c);
/* Copies entries out: keys concatenated into keybuf (room for vt_counter_keybytes), key
   lengths into lens[], counts into counts[] (room for vt_counter_size). */
size_t vt_counter_keybytes(const vt_counter *c);
void vt_counter_dump(const vt_counter *c, char *keybuf, uint32_t *lens, int64_t *counts);
/* cdef:end */
#endif

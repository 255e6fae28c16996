/* scantok BPE core: a hash table of byte strings -> ranks, tiktoken's byte-pair merge
   (exact, including its leftmost-first tie break), and a fused scan + encode loop that
   drives a compiled scanner (scantok_scan) without returning to Python per piece.

   Thread safety: a bpe_table is immutable after bpe_table_new/bpe_table_add_special and
   may be shared by any number of threads; every call allocates its own scratch. */
#ifndef SCANTOK_BPE_H
#define SCANTOK_BPE_H
#include <stddef.h>
#include <stdint.h>

/* cdef:begin */
typedef struct bpe_table bpe_table;

/* Builds a table from n tokens: token i has bytes blob[offs[i]:offs[i+1]] and rank ranks[i].
   Returns NULL on allocation failure or invalid input (empty token, duplicate bytes, rank >=
   0xFFFFFFFE); *err (may be NULL) receives a reason code (1 oom, 2 empty token, 3 duplicate,
   4 bad rank, 5 decreasing offsets), *err_index the offending token index. */
bpe_table *bpe_table_new(const uint8_t *blob, const uint32_t *offs, const uint32_t *ranks,
                         uint32_t n, int *err, uint32_t *err_index);
/* Adds a special token for decoding only (id -> bytes). Returns 0, or -1 on OOM. The first
   name given for an id wins; a mergeable token with that id wins over it. */
int bpe_table_add_special(bpe_table *t, uint32_t id, const uint8_t *bytes, size_t len);
void bpe_table_free(bpe_table *t);
/* A built table as one relocatable image (for an mmap'ed cache file): size, write (into a
   buffer of that size), and a table that uses the image in place (64-byte aligned, kept
   alive and unmodified by the caller; special tokens are added to the new table as usual).
   from_image returns NULL if the image is from another build or damaged: its checksum is
   verified and every index and offset the encoder follows is validated, so no image, however
   damaged, makes the encoder read outside it. */
size_t bpe_table_image_size(const bpe_table *t);
void bpe_table_image_write(const bpe_table *t, uint8_t *out);
bpe_table *bpe_table_from_image(const uint8_t *img, size_t len);
/* Rewrites the checksum of a (modified) image so that it matches: for tests of the structural
   validation, which must hold even when damage leaves the checksum intact. */
void bpe_image_seal(uint8_t *img, size_t len);
/* A fast 64-bit checksum of p[0:n] (detects damage, not tampering); also for the .stkb files. */
uint64_t bpe_checksum(const uint8_t *p, size_t n, uint64_t seed);
uint32_t bpe_table_size(const bpe_table *t);
uint32_t bpe_table_max_rank(const bpe_table *t);
/* 1 if all 256 single bytes are tokens (required to encode arbitrary text). */
int bpe_table_has_all_bytes(const bpe_table *t);

/* Rank of the exact byte string, or -1. */
int64_t bpe_lookup(const bpe_table *t, const uint8_t *p, size_t len);

/* Growable output buffer of token ids; the ids are malloc'ed and released by bpe_buf_free
   (or handed over: after bpe_buf_release the caller frees buf->ids with bpe_free). */
typedef struct bpe_buf { uint32_t *ids; size_t len; size_t cap; } bpe_buf;
void bpe_buf_free(bpe_buf *b);
void bpe_free(void *p);

/* BPE-encodes one piece (no pre-tokenization), appending to out. 0 ok, -1 OOM, -2 a byte
   with no token. */
int bpe_encode_piece(const bpe_table *t, const uint8_t *p, size_t len, bpe_buf *out);
/* The per-thread piece cache (see bpe.c): its size in bytes per thread and table, rounded
   down to a power of two (at least 32 KiB). The default is 16 MiB, or SCANTOK_PIECE_CACHE_MB
   if set when the first cache is made; caches made after a call use the new size. Returns
   the size in effect. */
size_t bpe_set_piece_cache_bytes(size_t bytes);
size_t bpe_piece_cache_bytes(void);
/* How many piece caches the threads of this process have allocated (statistics, for tests): a
   thread's cache of a freed table is cleared and taken by the next table it encodes with. */
size_t bpe_piece_cache_allocs(void);
/* Window sizes of the long-piece encoder, for tests: chunk 0 restores the defaults (128, 16).
   Within a piece they double whenever a junction fails. */
void bpe_set_long_window(size_t chunk, size_t margin);
size_t bpe_long_window_failures(void); /* how many junctions needed a back-off (statistics) */
/* Tests: the guess of encode_run (a run of one byte as copies of a period token, then a tail):
   n bytes (0: the longest token's length, the default) instead of 2 maxlen name the period and
   bound the tail. Every guess gives the same ids (a wrong one fails its check); and, since the
   process started, how many runs took the guess and how many went on to the windows. */
void bpe_set_run_guess(size_t n);
void bpe_run_stats(size_t *taken, size_t *declined);
/* Whether a thread's new piece cache starts with the vocabulary's short tokens (bpe.c,
   seed_pieces; on by default; caches made afterwards follow it): the ids are the same either
   way, which tests check by turning it off. Returns the previous setting. And how many entries
   have been seeded since the process started (statistics). */
int bpe_set_piece_seed(int on);
size_t bpe_piece_seeds(void);
/* Whether merges start from pre-merged characters (bpe.c, "pre-merged characters"; on by
   default): the ids are the same either way, which tests check by turning it off. Returns the
   previous setting. */
int bpe_set_premerge(int on);
/* Encodes npieces pieces [starts[i], ends[i]) of data. 0 ok, <0 as above. */
int bpe_encode_spans(const bpe_table *t, const uint8_t *data, const uint32_t *starts,
                     const uint32_t *ends, size_t npieces, bpe_buf *out);

/* Fused scan + BPE over data[0:n] with the scanner `dfa` (a `const scantok_dfa *`).
   flags: scanner flags (SCANTOK_SURROGATEPASS, SCANTOK_PARTIAL). With SCANTOK_PARTIAL,
   *consumed gets the number of bytes whose tokens were emitted (the rest must be fed again
   with more input); otherwise n.
   count_only: if nonzero no ids are stored, only out->len is advanced.
   limit: stop as soon as out->len > limit (SIZE_MAX for none); *consumed then tells how far.
   Returns 0, -1 OOM, -2 a byte with no token. */
int bpe_encode_scan(const bpe_table *t, const void *dfa, const uint8_t *data, size_t n,
                    int flags, bpe_buf *out, size_t *consumed, int count_only, size_t limit);

/* bpe_encode_scan (without SCANTOK_PARTIAL) of a short text (n <= BPE_SMALL_MAX) without
   allocating: the ids go to ids (room for BPE_SMALL_IDS). Returns their number, or < 0 as
   bpe_encode_scan (-3: n too large). For the per-call cost of short texts. */
#define BPE_SMALL_MAX 1024
#define BPE_SMALL_IDS 3080
int64_t bpe_encode_small(const bpe_table *t, const void *dfa, const uint8_t *data, size_t n,
                         int flags, uint32_t *ids);

/* bpe_encode_scan (without SCANTOK_PARTIAL) over ndocs texts datas[i][0:lens[i]], in one call
   (a batch without a return to Python per text): the ids of all texts follow one another in
   out, text i's end at ends[i]. Returns 0, or the first text's error (*failed = its index). */
int bpe_encode_many(const bpe_table *t, const void *dfa, const uint8_t *const *datas,
                    const size_t *lens, size_t ndocs, int flags, bpe_buf *out, size_t *ends,
                    size_t *failed);

/* A batch shared by threads: the texts cut into chunks (chunk k is texts chunk_end[k - 1] ..
   chunk_end[k] - 1), which nthreads threads encode at once (bpe_batch_work; thread `who`
   starts on a region of its own, see bpe.c), while one of them, holding the GIL, turns the
   finished chunks into lists as they finish (bpe_batch_next, bpe_batch_ids) and encodes chunks
   itself in between (bpe_batch_work with max_chunks 1). The threads that only encode never
   need the GIL. The caller sets each chunk's texts (datas, lens) before bpe_batch_set_ready
   for it, possibly while other chunks are encoded; they, the lengths and the bounds stay alive
   and unchanged until bpe_batch_free, which may only be called once every call of
   bpe_batch_work has returned. */
typedef struct bpe_batch bpe_batch;
/* NULL without memory, with chunk bounds that do not increase to ndocs, or with nthreads 0 or
   above 4096. */
bpe_batch *bpe_batch_new(const bpe_table *t, const void *dfa, const uint8_t *const *datas,
                         const size_t *lens, size_t ndocs, const size_t *chunk_end,
                         size_t nchunks, size_t nthreads, int flags);
void bpe_batch_free(bpe_batch *b);
/* Thread r's region: chunks *lo .. *hi - 1 (the order in which to make chunks ready). */
void bpe_batch_region(const bpe_batch *b, size_t r, size_t *lo, size_t *hi);
/* Chunk k's texts are set. */
void bpe_batch_set_ready(bpe_batch *b, size_t k);
/* Thread `who` (0 .. nthreads - 1) takes and encodes chunks until none is left, or max_chunks
   of them (0: no limit), or the batch is stopped (an error in a chunk, or bpe_batch_stop).
   Returns how many it encoded. */
size_t bpe_batch_work(bpe_batch *b, size_t max_chunks, size_t who);
/* A finished chunk not handed out before (in the order they finished), or -1 if none is
   finished yet (block 0) ; with block 1 it waits for one. -3 when every chunk has been handed
   out, -5 when the batch has stopped and no chunk being encoded is left. */
int64_t bpe_batch_next(bpe_batch *b, int block);
/* A finished chunk's result (0, or an error as bpe_encode_scan's; -5 if the batch stopped
   before its texts were ready), -3 if there is no such finished chunk. */
int bpe_batch_rc(bpe_batch *b, size_t k);
/* A finished chunk's ids (*n of them) and the end of each of its texts in them
   (ends[i - first] for text i of the chunk); NULL before it is finished. */
const uint32_t *bpe_batch_ids(bpe_batch *b, size_t k, size_t *n, const size_t **ends);
/* Frees a finished chunk's ids (they are no longer needed). */
void bpe_batch_release(bpe_batch *b, size_t k);
/* No chunk is taken after this (chunks being encoded are finished). */
void bpe_batch_stop(bpe_batch *b);

/* Decoding. bpe_decode_len returns the byte length of the concatenation, or -1 - i where
   i is the index of the first id with no bytes. bpe_decode writes it (call after len). */
int64_t bpe_decode_len(const bpe_table *t, const uint32_t *ids, size_t n);
void bpe_decode(const bpe_table *t, const uint32_t *ids, size_t n, uint8_t *out);
/* Bytes of one id: returns length and sets *p, or -1 if the id has no bytes. */
int64_t bpe_token_bytes(const bpe_table *t, uint32_t id, const uint8_t **p);
/* cdef:end */

#endif

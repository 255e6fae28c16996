/* HuggingFace-style BPE for scantok.Tokenizer: merges by MERGE RANK (a pair of ids (a, b) ->
   (rank, new id), as tokenizers' MergeMap), the lowest rank merged first and, among equal
   ranks, the leftmost (tokenizers' Word::merge_all).  Byte mode: a piece is raw bytes whose
   initial symbols are the ids of the 256 byte-level characters (ByteLevel pre-tokenizer).
   The split stages of the pre-tokenizer (HF Split behaviours over compiled scanners) run in
   the same call, so a whole text is pre-tokenized and merged without the GIL.
   The model is read-only after building; a cache belongs to one thread. */
#ifndef SCANTOK_HF_BPE_H
#define SCANTOK_HF_BPE_H
#include <stddef.h>
#include <stdint.h>
#include "scantok_scan.h"
#include "vocab_table.h"

/* cdef:begin */
typedef struct hfb_model hfb_model;
typedef struct hfb_cache hfb_cache;
/* n_ids: one more than the largest id.  NULL on out of memory. */
hfb_model *hfb_new(uint32_t n_ids, size_t n_merges);
void hfb_free(hfb_model *m);
/* Merge i of n: (a[i], b[i]) -> new_id[i] with rank i; a later duplicate pair replaces an
   earlier one (as a Rust HashMap collected from the list).  -1 on out of memory. */
int hfb_add_merges(hfb_model *m, const uint32_t *a, const uint32_t *b, const uint32_t *new_id,
                   size_t n);
/* Byte mode: byte_ids[b] is the id of byte b's character (-1: missing, such a piece makes
   the encode calls return HFB_SLOW); tok_len[id] the byte length of every id (n_ids of them);
   whole, if not NULL, maps a whole piece's raw bytes to its id (ignore_merges).  The model
   keeps the pointers: the caller keeps whole alive. */
int hfb_set_bytes(hfb_model *m, const int32_t *byte_ids, const uint32_t *tok_len,
                  const void *whole);
/* Byte mode with tokenizers' end_of_word_suffix: last_ids[b] is the id of byte b's character
   followed by the suffix, which a piece's last symbol is (-1: missing, the encode calls return
   HFB_SLOW for such a piece); NULL: no suffix.  Drops the self and pre-merge tables (they know
   no suffix: build none after it).  Returns 0. */
int hfb_set_byte_suffix(hfb_model *m, const int32_t *last_ids);
/* Merges the n symbols ids[] (with byte lengths lens[], or lens NULL) in place; returns the
   new count, or SIZE_MAX on out of memory (ids unchanged then). */
size_t hfb_merge(const hfb_model *m, uint32_t *ids, uint32_t *lens, size_t n);
/* Loading (tokenizer.json's vocab and merges without a Python loop per entry).  A record list
   is the UTF-8 of n records, each followed by the byte sep (the caller checks that no record
   holds sep).
   hfb_vocab_lengths: tokens[i] has id ids[i]; writes tok_len[id] (the byte length of the
   token's raw bytes when every character is a byte-level character, byte_of[cp] for cp <
   n_byte_of, else of its UTF-8) and, if whole is not NULL, inserts raw bytes -> id into it
   (byte-level tokens only).  Returns 0, or -1 on out of memory. */
int hfb_vocab_lengths(const uint8_t *tokens, size_t n, uint8_t sep, const uint32_t *ids,
                      const int16_t *byte_of, size_t n_byte_of, uint32_t *tok_len, void *whole);
/* hfb_merge_ids: the ids of merges given as records "a b" (pairs 0: exactly one space) or as
   two records a, b each (pairs 1), against the vocabulary records tokens/ids; the merged
   token is a + b without its first prefix_chars characters.  Writes a_ids, b_ids, new_ids.
   Returns 0, -1 on out of memory, or -(2 + i) for the first merge i that is malformed or
   names a token outside the vocabulary. */
int64_t hfb_merge_ids(const uint8_t *tokens, size_t ntok, const uint32_t *ids, const uint8_t *merges,
                      size_t nmerges, uint8_t sep, int pairs, size_t prefix_chars,
                      uint32_t *a_ids, uint32_t *b_ids, uint32_t *new_ids);
/* Byte mode, after hfb_set_bytes: the vocabulary records (as hfb_vocab_lengths) whose raw
   bytes (3 to 24 of them) BPE merges back into the token itself go to a table that a piece
   met for the first time is looked up in before it is merged (the same ids, by construction).
   Built by merging every such token once; a later hfb_add_merges or hfb_set_bytes drops it.
   Returns 0, or -1 on out of memory (then no table). */
int hfb_build_selfs(hfb_model *m, const uint8_t *tokens, size_t n, uint8_t sep, const uint32_t *ids,
                    const int16_t *byte_of, size_t n_byte_of);
/* The number of tokens in that table (diagnostics, tests). */
size_t hfb_selfs_size(const hfb_model *m);
/* Whether a cache made for a model (its first encode on a thread) starts with the tokens of
   that table, up to half its slots (hf_bpe.c, seed_cache; on by default): the ids are the
   same either way, which tests check by turning it off. Returns the previous setting. And how
   many entries have been seeded since the process started (statistics). */
int hfb_set_seed(int on);
size_t hfb_seeds(void);
/* Byte mode, after hfb_set_bytes: tables that let the merge of a piece start from its two-
   and three-byte characters already merged, where that gives the same ids (hf_bpe.c,
   "pre-merged characters"), from the vocabulary records (as hfb_vocab_lengths) and the
   merges. A later hfb_add_merges or hfb_set_bytes drops them. Returns 0 (also when the model
   is not byte-level: then no tables), or -1 on out of memory (then none). */
int hfb_build_premerge(hfb_model *m, const uint8_t *tokens, size_t n, uint8_t sep, const uint32_t *ids,
                       const int16_t *byte_of, size_t n_byte_of);
/* Whether merges start from pre-merged characters (on by default); for tests, which compare
   with it off. Returns the previous setting. */
int hfb_set_premerge(int on);
/* Whether the vocabulary (ids[0:n], its ids) gives no id to two strings: then pieces of more
   than 248 symbols merge in windows whose junctions are checked, shorter ones by a scan for the
   lowest rank (hf_bpe.c, "long pieces"); else every piece merges on tokenizers' heap, whose
   stale entries can then merge a pair by another pair's rank. Until it is called, a model
   takes the heap. Call it before hfb_build_selfs and hfb_build_premerge. Returns 1 (unique),
   0 (an id repeats), or -1 on out of memory (then as 0). */
int hfb_check_unique_ids(hfb_model *m, const uint32_t *ids, size_t n);
/* Whether long pieces merge in windows (on by default); for tests, which compare with it off.
   Returns the previous setting. */
int hfb_set_windows(int on);
/* Tests: windows of chunk + margin bytes for every piece longer than that (chunk 0: the
   defaults, 224 + 16 for pieces over 248 bytes); and, since the process started, how many
   pieces were merged in windows and how many junctions were found not compatible (each
   costs a back-off). */
void hfb_set_long_window(size_t chunk, size_t margin);
void hfb_long_window_stats(size_t *pieces, size_t *failures);
/* Tests: merge_run's guess (a run of one symbol as copies of a period token, then a tail) in
   symbols, 1..128 (0: the default, 128). Every guess gives the same ids (a wrong one fails
   its check); and, since the process started, how many runs took the guess and how many went
   on to the windows. */
void hfb_set_run_guess(size_t n);
void hfb_run_stats(size_t *taken, size_t *declined);
/* Char mode (a model whose symbols are characters): the one-character tokens (code point
   cps[i] has id ids[i], UINT32_MAX: none), fallback[256] the ids of the tokens <0x00>..<0xFF>
   (-1 missing) or NULL without byte_fallback, unk_id the unknown token's id (-1: none, -2:
   named but not in the vocabulary), fuse_unk; u8len (or NULL), the UTF-8 length of every id's
   string (pieces of up to 24 bytes are then kept in the cache's word table); cut_words (with
   u8len), only for a vocabulary where no token holds "▁" after another character: then
   hfb_tokenize_chars merges a piece word by word (hf_bpe.c, "words"). The model keeps the
   pointer. Returns 0 or -1
   on out of memory. */
int hfb_set_chars(hfb_model *m, const uint32_t *cps, const uint32_t *ids, size_t n,
                  const int32_t *fallback, int64_t unk_id, int fuse_unk, const uint32_t *u8len,
                  int cut_words);
/* Char mode with tokenizers' continuing_subword_prefix (prefix_on; prefix_len its UTF-8
   length) and/or end_of_word_suffix (suffix_on), after hfb_set_chars, whose cps must list
   every code point here (with id UINT32_MAX where the character alone is no token): aff[3 i
   .. 3 i + 2] are the ids of prefix + c, c + suffix and prefix + c + suffix for c = cps[i]
   (UINT32_MAX: none).  A piece's characters after its first take the prefix, its last the
   suffix; a character whose such form is no token, in a model with byte_fallback, makes the
   encode calls return HFB_SLOW (tokenizers falls back to the affixed string's bytes).  Turns
   cut_words off.  Returns 0, -1 on out of memory, -2 when a code point is not hfb_set_chars'. */
int hfb_set_char_affixes(hfb_model *m, const uint32_t *cps, const uint32_t *aff, size_t n, uint32_t prefix_len,
                         int prefix_on, int suffix_on);
/* Char mode: the tokens of one piece, the UTF-8 data[0:n] of a str (surrogatepass), as
   tokenizers' BPE: ids (room for n) and each token's offsets in characters of the piece
   (starts and ends may both be NULL: ids only); c
   (this thread's cache, or NULL) keeps words.
   Returns the count, HFB_SLOW (no char mode, or tokenizers would fail: the caller's path
   raises its error) or HFB_NOMEM. */
int64_t hfb_tokenize_chars(const hfb_model *m, hfb_cache *c, const uint8_t *data, size_t n, uint32_t *ids,
                           uint32_t *starts, uint32_t *ends);
/* hfb_tokenize_chars under hfb_encode's signature, for scantok._pylist's encode of one text
   by a model over characters whose normalizer and pre-tokenizer only put a prefix before the
   text and replace its spaces one for one (Prepend + Replace, Replace, Metaspace without split):
   data is the UTF-8 of the prefix and the replaced text; skip points at two uint32_t, k (the
   prefix's length in characters) and first_end.  Offsets are the text's: the prefix's
   characters and the text's first come from the text's first character, as tokenizers aligns
   them, so a start is max(s - k, 0) and an end e - k where e > k + 1, else first_end (1, or 0
   after Prepend(""), which makes the first character an insertion aligned to (0, 0)). */
int64_t hfb_encode_chars(const hfb_model *m, hfb_cache *c, const void *skip, const uint8_t *data,
                         size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends);
hfb_cache *hfb_cache_new(void);
void hfb_cache_free(hfb_cache *c);
/* How many caches hfb_cache_new has allocated (statistics, for tests): freed ones (up to two)
   are kept and taken again, cleared. */
size_t hfb_cache_allocs(void);
/* Char mode's store of words over 24 bytes in cache c (statistics, for tests): how many it
   has kept and how many lookups it has answered since the cache was made or last cleared, and
   how many bytes its blocks take now. */
void hfb_cache_word_longs(const hfb_cache *c, size_t *kept, size_t *hits, size_t *bytes);
#define HFB_SLOW -2
#define HFB_NOMEM -1
/* Pre-tokenizer stages: stage k splits every piece with dfas[k] under behaviors[k]
   (0 Removed, 1 Isolated, 2 MergedWithPrevious, 3 MergedWithNext, 4 Contiguous; +8: invert;
   +16: the stage comes after a ByteLevel and runs over the characters ByteLevel maps each
   byte to, one per byte, so that its matches may end inside a character of the text).
   skip: let a stage whose scanner starts no match at most characters jump over runs of such
   characters instead of scanning them (the same matches; 0 scans every byte, for tests).
   The stages keep the dfa pointers: the caller keeps the scanners alive.  NULL on out of
   memory. */
typedef struct hfb_stages hfb_stages;
hfb_stages *hfb_stages_new(const scantok_dfa *const *dfas, const int32_t *behaviors, size_t n,
                           int skip);
void hfb_stages_free(hfb_stages *st);
/* How many stages jump over characters that start no match (diagnostics, tests). */
size_t hfb_stages_skipping(const hfb_stages *st);
/* Encodes text data[0:n] (valid UTF-8): the stages (st may be NULL: no stage), then byte-mode
   BPE of every piece.  Writes the ids to ids[] (room for n) and, if starts is not NULL, each
   token's code-point offsets [starts[i], ends[i]) in the text (a token that covers part of a
   character covers all of it).  Returns the number of ids, HFB_SLOW or HFB_NOMEM. */
int64_t hfb_encode(const hfb_model *m, hfb_cache *c, const hfb_stages *st, const uint8_t *data,
                   size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends);
/* hfb_encode, and if words is not NULL, the index of the piece (tokenizers' word) each token
   comes from in words[i]. */
int64_t hfb_encode_words(const hfb_model *m, hfb_cache *c, const hfb_stages *st, const uint8_t *data,
                         size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends, uint32_t *words);
/* hfb_encode_words for a model in char mode (hfb_set_chars): the stages, then each piece
   merged from its characters' tokens (unknown token, byte fallback) as tokenizers' BPE does.
   HFB_SLOW when the model has no char mode or tokenizers would fail. */
int64_t hfb_encode_chars_words(const hfb_model *m, hfb_cache *c, const hfb_stages *st, const uint8_t *data,
                               size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends, uint32_t *words);
/* hfb_encode_chars_words without words, under hfb_encode's signature. */
int64_t hfb_encode_chars_split(const hfb_model *m, hfb_cache *c, const hfb_stages *st, const uint8_t *data,
                               size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends);
/* WordLevel: a model whose every piece is one token, the id of its UTF-8 among the n
   vocabulary records in tokens[0:nbytes] (as hfb_vocab_lengths; record i has id ids[i]), else
   unk_id (-1: no unknown token, then the encode calls return HFB_SLOW for a text with a piece
   outside the vocabulary: tokenizers fails there).  Returns 0, -1 on out of memory, or -2
   when tokens holds fewer than n records or an id is above INT32_MAX (the model is unchanged
   then). */
int hfb_set_word_level(hfb_model *m, const uint8_t *tokens, size_t nbytes, size_t n, uint8_t sep,
                       const uint32_t *ids, int64_t unk_id);
/* WordLevel: whether the encode calls split on White_Space themselves (vt_encode_wsplit's
   fused scan and lookup, tested equal to the whitespace_split scanner) and ignore the stages
   they are given: for a pre-tokenizer that is WhitespaceSplit alone.  Returns the previous
   setting. */
int hfb_set_word_wsplit(hfb_model *m, int on);
/* hfb_encode_words for a WordLevel model (hfb_set_word_level): the stages, then one token a
   piece.  HFB_SLOW when the model is not WordLevel or a piece has no token. */
int64_t hfb_encode_wl_words(const hfb_model *m, hfb_cache *c, const hfb_stages *st, const uint8_t *data,
                            size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends, uint32_t *words);
/* hfb_encode_wl_words without words, under hfb_encode's signature. */
int64_t hfb_encode_wl(const hfb_model *m, hfb_cache *c, const hfb_stages *st, const uint8_t *data,
                      size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends);
/* hfb_encode of ntexts texts data[offsets[i]:offsets[i+1]]; text i's ids go to
   ids[offsets[i]...] and their count to counts[i] (HFB_SLOW for a text the caller must
   encode itself).  Returns 0 or HFB_NOMEM. */
int64_t hfb_encode_batch(const hfb_model *m, hfb_cache *c, const hfb_stages *st,
                         const uint8_t *data, const uint64_t *offsets, size_t ntexts,
                         uint32_t *ids, int64_t *counts);
/* Only the stages: the pieces of data[0:n] as byte offsets (room for n each).  Returns the
   number of pieces or HFB_NOMEM. */
int64_t hfb_pretokenize(const hfb_stages *st, const uint8_t *data, size_t n, uint32_t *starts,
                        uint32_t *ends);
/* cdef:end */
#endif

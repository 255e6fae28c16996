/* Byte-level BPE training (scantok.train_bpe): piece counting on a compiled scanner and
   HuggingFace BpeTrainer's merge loop, transcribed exactly (see runtime/scantok/bpe/train.py for
   the rules it reproduces).  Counting calls release the GIL (cffi), so each Python thread can
   count into its own counter in parallel; counters are then merged. */
#ifndef SCANTOK_BPE_TRAIN_H
#define SCANTOK_BPE_TRAIN_H
#include <stddef.h>
#include <stdint.h>
#include "scantok_scan.h"

/* cdef:begin */
/* ---- piece counting */
typedef struct bt_counter bt_counter;
bt_counter *bt_counter_new(void);               /* NULL on out of memory */
void bt_counter_free(bt_counter *c);
/* Pre-tokenizes data[0:n] with dfa as HF's Split(..., "isolated") does (every match is a piece
   and so is every gap between matches) and adds each piece to the counter.  If lines is nonzero
   each line (ending after a '\n') is a sequence of its own, as HF's Tokenizer.train(files) reads
   files; otherwise data is one sequence.  If check_utf8 is nonzero the data is validated first.
   Returns the number of pieces, -1 on out of memory, or -(2 + offset) for the first byte of an
   invalid UTF-8 sequence (nothing is counted then). */
int64_t bt_count(bt_counter *c, const scantok_dfa *dfa, const uint8_t *data, size_t n,
                 int lines, int check_utf8);
/* Counts nseq sequences at once: sequence i is data[ends[i-1]:ends[i]] (ends[-1] = 0), each
   pre-tokenized on its own (the items of an iterator).  Returns as bt_count with lines == 0,
   the offset of invalid UTF-8 being into data. */
int64_t bt_count_seqs(bt_counter *c, const scantok_dfa *dfa, const uint8_t *data,
                      const uint64_t *ends, size_t nseq, int check_utf8);
/* Offset of the first byte of the first invalid UTF-8 sequence in data[0:n], or -1. */
int64_t bt_utf8_invalid_at(const uint8_t *data, size_t n);
/* Adds every entry of src to dst.  Returns 0 or -1 on out of memory. */
int bt_counter_merge(bt_counter *dst, const bt_counter *src);
/* Adds n pieces: piece i is keys[off_i : off_i + lens[i]] (concatenated), with count counts[i].
   Returns 0 or -1 on out of memory. */
int bt_counter_add(bt_counter *c, const uint8_t *keys, const uint32_t *lens,
                   const uint64_t *counts, size_t n);
size_t bt_counter_size(const bt_counter *c);
size_t bt_counter_keybytes(const bt_counter *c);
/* Copies the entries out: keys concatenated (room for bt_counter_keybytes), lengths and counts
   (room for bt_counter_size each), in the counter's slot order. */
void bt_counter_dump(const bt_counter *c, uint8_t *keys, uint32_t *lens, uint64_t *counts);

/* ---- the merge loop */
typedef struct bt_trainer bt_trainer;
/* Builds the initial vocabulary and the pair queue from the counted pieces.
   nspecial special tokens take ids 0..nspecial-1; special i spells the byte string
   special_keys[...special_lens[i]] (concatenated) in the byte-level alphabet, or nothing
   (special_lens[i] == UINT32_MAX) if it has characters outside it.  alphabet_order: the 256 bytes
   in the order of their alphabet ids.  max_token_length 0 means none.  Returns NULL on out of
   memory. */
bt_trainer *bt_trainer_new(const bt_counter *c, uint32_t nspecial, const uint8_t *special_keys,
                           const uint32_t *special_lens, const uint8_t *alphabet_order,
                           uint64_t vocab_size, uint64_t min_frequency,
                           uint64_t max_token_length);
void bt_trainer_free(bt_trainer *t);
/* Runs the merge loop for at most max_merges more merges.  Returns 1 if it stopped on that
   budget, 0 when training is finished, -1 on out of memory. */
int bt_trainer_run(bt_trainer *t, uint64_t max_merges);
/* Every merge done, in order (duplicates included, as HF's trainer records them):
   3 ids each (left, right, new token). */
size_t bt_trainer_n_merges(const bt_trainer *t);
void bt_trainer_merges(const bt_trainer *t, uint32_t *out);
/* The merges as HF's saved tokenizer lists them: each pair once, at its last merge, in merge
   order; 2 ids each in out (room for 2 * n_merges).  Returns their number, or SIZE_MAX on out
   of memory. */
size_t bt_trainer_saved_merges(const bt_trainer *t, uint32_t *out);
/* The vocabulary: ids 0..n_tokens-1.  bt_trainer_tokens writes every token's bytes,
   concatenated, to blob (room for bt_trainer_token_bytes) and their lengths to lens
   (UINT32_MAX for a special token that has no byte-level spelling). */
size_t bt_trainer_n_tokens(const bt_trainer *t);
size_t bt_trainer_token_bytes(const bt_trainer *t);
void bt_trainer_tokens(const bt_trainer *t, uint8_t *blob, uint32_t *lens);
/* cdef:end */
#endif

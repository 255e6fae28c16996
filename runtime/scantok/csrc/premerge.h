/* Pre-merged characters: what the two BPE merge loops share (bpe.c by byte strings, tiktoken;
   hf_bpe.c by id pairs, tokenizers).

   A first pass over multi-script text is bound by merges, and a two- or three-byte UTF-8
   character costs one or two merge steps before it is one token. Where no merge that joins
   its bytes to a neighbour can come first, a merge loop may start from that token instead.
   Let R be the highest rank among the character's own merges and x, y the bytes before and
   after it in the piece. Until the character is whole one of its own pairs is present, so
   every merge made meanwhile ranks at most R. It is exact to start from the token if every
   merge that would join a neighbour to its bytes, to the two-byte part a three-byte
   character passes through, or to the whole token ranks above R:
   - one joining a part that ends in x to its lead byte (end_min, by x);
   - one joining its last byte to a part that starts with y (start_min, by y);
   - one joining a neighbour to its two-byte part, or to the whole token, at either end (any
     neighbour: checked when the tables are made; a character that fails gets no entry).
   Then no merge before it involves its bytes, and the pairs it forms with its neighbours rank
   above every pair merged meanwhile, so both runs merge the same pairs in the same order and
   are in the same state once it is whole. The first two conditions take the neighbouring
   part's bytes for the part: which merges a part can make must follow from its bytes. So it
   does in tiktoken (a rank is that of the joined bytes); in tokenizers merges are by id, and
   a file may give one id to several strings, whose bytes hf_bpe.c then takes as unknown (any
   byte). Each loop's tables say "rank" its own way (bpe.c: the rank of the joined bytes;
   hf_bpe.c: the merge's line); the layout and the per-piece test are this header's. */
#ifndef SCANTOK_PREMERGE_H
#define SCANTOK_PREMERGE_H
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PM_LEAD2 (0xDFu - 0xC2u + 1)        /* lead bytes of two-byte characters */
#define PM_LEADS (0xEFu - 0xC2u + 1)        /* ... of two- and three-byte characters */
#define PM_N (PM_LEAD2 * 64 + 16 * 64 * 64) /* two-byte, then three-byte characters */

typedef struct premerge_tables {
    uint32_t end_min[PM_LEADS * 256]; /* [lead - 0xC2][x]: lowest rank joining x's part and the lead byte */
    uint32_t start_min[64 * 256];     /* [last & 0x3F][y]: lowest rank joining the last byte and y's part */
    uint64_t chr[PM_N];               /* (R + 1) | token << 32; 0: never pre-merged */
} premerge_tables;

/* The length of the character shape at p (a lead byte and its continuation bytes, within n
   bytes), 2 or 3, and its index in chr; 0 for anything else. */
static inline size_t pm_char(const uint8_t *p, size_t n, size_t *idx) {
    uint32_t b = p[0];
    if (b - 0xC2u < PM_LEAD2) {
        if (n < 2 || (p[1] & 0xC0) != 0x80) return 0;
        *idx = (b - 0xC2u) * 64 + (p[1] & 0x3Fu);
        return 2;
    }
    if (b - 0xE0u < 16) {
        if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        *idx = PM_LEAD2 * 64 + ((b & 0x0Fu) << 12 | (p[1] & 0x3Fu) << 6 | (p[2] & 0x3Fu));
        return 3;
    }
    return 0;
}

#define PM_NONE 0xFFFFFFFFu /* pm_token: not pre-merged; also "no rank" in the tables */

/* The token the character at p[i] (of the piece p[0:n]) starts the merge as, with its length
   in *len; PM_NONE when it is not pre-merged there. */
static inline uint32_t pm_token(const premerge_tables *pm, const uint8_t *p, size_t i, size_t n,
                                size_t *len) {
    size_t idx, l = p[i] >= 0xC2 ? pm_char(p + i, n - i, &idx) : 0;
    uint64_t e = l ? pm->chr[idx] : 0;
    uint32_t R = (uint32_t)e - 1;
    if (!e || (i > 0 && pm->end_min[(p[i] - 0xC2u) * 256 + p[i - 1]] <= R) ||
        (i + l < n && pm->start_min[(p[i + l - 1] & 0x3Fu) * 256 + p[i + l]] <= R))
        return PM_NONE;
    *len = l;
    return (uint32_t)(e >> 32);
}

/* A merge loop's parts before its first step, with the piece's characters pre-merged where
   pm_token says so: each becomes one part at its first byte (its token in ids[i], its byte
   count added up in lens[i] if lens), its other positions dead (rank PM_NONE) and linked past
   (next[i] = i + length, also for the last part; prev). The ranks of the pairs next to such
   parts are the caller's to look up again. *end gets the last part; returns how many parts it
   removed. */
static inline size_t pm_mark(const premerge_tables *pm, const uint8_t *p, size_t n, uint32_t *ids,
                             uint32_t *lens, uint32_t *rank, uint8_t *next, uint8_t *prev, size_t *end) {
    size_t removed = 0;
    *end = n - 1;
    for (size_t i = 0, l; i < n;) {
        uint32_t tok = pm_token(pm, p, i, n, &l);
        if (tok == PM_NONE) {
            i++;
            continue;
        }
        ids[i] = tok;
        for (size_t q = 1; q < l; q++) {
            rank[i + q] = PM_NONE;
            if (lens) lens[i] += lens[i + q];
        }
        next[i] = (uint8_t)(i + l);
        if (i + l < n) prev[i + l] = (uint8_t)i;
        else *end = i;
        removed += l - 1;
        i += l;
    }
    return removed;
}

/* Whether p[0:n] may hold a lead byte (an OR of its bytes: most pieces of English or code
   cannot, and skip the rest). */
static inline int pm_maybe(const uint8_t *p, size_t n) {
    uint32_t high = 0;
    for (size_t i = 0; i < n; i++) high |= p[i];
    return (high & 0xC0) == 0xC0;
}

static inline void pm_min(uint32_t *slot, uint32_t r) {
    if (r < *slot) *slot = r;
}

/* New tables: every rank PM_NONE, no character (chr stays zero pages until written). NULL on
   out of memory; free() frees them. */
static inline premerge_tables *premerge_tables_new(void) {
    premerge_tables *pm = calloc(1, sizeof *pm);
    if (pm) {
        memset(pm->end_min, 0xFF, sizeof pm->end_min);
        memset(pm->start_min, 0xFF, sizeof pm->start_min);
    }
    return pm;
}

#endif

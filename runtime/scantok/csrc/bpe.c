/* scantok BPE core (see bpe.h). Hand-written; exactness reference: tiktoken 0.14's
   byte_pair_merge (merge the adjacent pair whose concatenation has the lowest rank, the
   leftmost one on ties, until no adjacent pair is a token). */
#include "bpe.h"
#include "premerge.h"
#include "scantok_scan.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define NONE 0xFFFFFFFFu
_Static_assert(NONE == PM_NONE, "pm_mark marks dead parts with PM_NONE");
#define DEAD (NONE - 1) /* merge_window_avx2: a part merged into the one on its left */
#define HOT_N 24576u        /* tokens of >= 5 bytes with the lowest ranks go to the hot table */
#define BLOOM_WORDS (1u << 16) /* 4 Mbit = 512 KiB filter over the tokens of >= 5 bytes */
#define BLOOM_MASK (BLOOM_WORDS - 1)
#define SMALL_MAX SMALL_LOOP /* merge_small's capacity */
#define WINDOW_MAX 240      /* merge_window_avx2's capacity (links are bytes: < 255) */
#define SMALL_LOOP 160      /* merge_any: quadratic loop up to here (< 256), heap above */
/* Initial scan window (bytes) of the fused loop. 64 KiB rather than 16: the scan's two lanes
   join once per window; steady-state cl100k passes over 64 KB documents +1.5-2 % (in-process
   A/B, 30 alternating runs, en / code / multi), first passes unchanged (+-1 %). */
#define WINDOW0 (1u << 16)

typedef struct ent {
    uint64_t head; /* first <= 8 bytes, zero padded */
    uint32_t rank;
    uint32_t len;  /* 0 = empty slot */
} ent;

struct bpe_table {
    ent *slots;
    uint64_t mask;
    int shift;
    uint32_t n;
    uint32_t maxlen;
    uint32_t max_rank;
    uint32_t byte_rank[256];
    uint32_t *pair2; /* 65536 ranks of two-byte tokens, indexed by p[0] | p[1] << 8 */
    /* three- and four-byte tokens in small tables of their own (key << 32 | rank; rank NONE
       = empty): most merge lookups are for short strings, and these stay in cache */
    uint64_t *short3, *short4;
    uint32_t short_shift;
    uint64_t short_mask;
    /* longer tokens: the HOT_N lowest ranks (the most frequent merges) in a small table
       that stays in cache, a one-bit-per-slot filter that answers most misses, then the
       full table */
    ent *hot;
    uint64_t hot_mask;
    int hot_shift;
    uint64_t *bloom;
    /* decoding of mergeable tokens: rank -> bytes */
    uint32_t dec_n;
    uint64_t *dec_off;
    uint32_t *dec_len; /* NONE = no such id */
    uint8_t *dec_blob;
    size_t dec_blob_len, dec_blob_cap;
    /* special tokens (decoding only): ids sp_base .. sp_base + sp_n - 1, dense */
    uint32_t sp_base, sp_n;
    uint64_t *sp_off;
    uint32_t *sp_len;
    uint8_t *sp_blob;
    size_t sp_blob_len;
    struct premerge_tables *premerge; /* see premerge_of: made on first use, then read-only */
    int premerge_borrowed; /* premerge lies in the caller's image (bpe_table_from_image) */
    uint64_t uid; /* unique per table in this process (keys the per-thread piece caches) */
    struct table_life *life; /* shared with the threads' caches of this table (NULL: none) */
    int borrowed; /* the arrays above sp_* live in a caller's image (bpe_table_from_image) */
};

/* ------------------------------------------------------------------ hashing */

static inline uint32_t ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* First min(len, 8) bytes as a little-endian integer, zero padded; reads only p[0:len]. */
static inline uint64_t head_of(const uint8_t *p, size_t len) {
    if (len >= 8) return ld64(p);
    if (len >= 4) return (uint64_t)ld32(p) | ((uint64_t)ld32(p + len - 4) << (8 * (len - 4)));
    if (len == 0) return 0;
    return (uint64_t)p[0] | ((uint64_t)p[len >> 1] << (8 * (len >> 1))) |
           ((uint64_t)p[len - 1] << (8 * (len - 1)));
}

static inline uint64_t mix(uint64_t h) {
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
}

static inline uint64_t hash_key(uint64_t head, const uint8_t *p, size_t len) {
    uint64_t h = (head ^ ((uint64_t)len << 56)) * 0x9E3779B97F4A7C15ull;
    if (len > 8) {
        size_t i = 8;
        for (; i + 8 <= len; i += 8) h = (h ^ ld64(p + i)) * 0xbf58476d1ce4e5b9ull + (h >> 29);
        if (i < len) h = (h ^ ld64(p + len - 8)) * 0x94d049bb133111ebull + (h >> 31);
    }
    return mix(h);
}

static inline uint32_t lookup2(const bpe_table *t, const uint8_t *p) {
    return t->pair2[p[0] | (p[1] << 8)];
}

static inline uint32_t short_get(const bpe_table *t, const uint64_t *tab, uint32_t key) {
    uint64_t i = ((uint64_t)key * 0x9E3779B97F4A7C15ull) >> t->short_shift;
    for (;;) {
        uint64_t e = tab[i];
        if ((uint32_t)e == NONE) return NONE;
        if ((uint32_t)(e >> 32) == key) return (uint32_t)e;
        i = (i + 1) & t->short_mask;
    }
}

static inline void short_put(bpe_table *t, uint64_t *tab, uint32_t key, uint32_t rank) {
    uint64_t i = ((uint64_t)key * 0x9E3779B97F4A7C15ull) >> t->short_shift;
    while ((uint32_t)tab[i] != NONE) i = (i + 1) & t->short_mask;
    tab[i] = ((uint64_t)key << 32) | rank;
}

static inline uint32_t lookup(const bpe_table *t, const uint8_t *p, size_t len) {
    if (len > t->maxlen || len == 0) return NONE;
    if (len == 1) return t->byte_rank[p[0]];
    if (len == 2) return lookup2(t, p);
    if (len == 3) return short_get(t, t->short3, (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16));
    if (len == 4) return short_get(t, t->short4, ld32(p));
    uint64_t head = head_of(p, len);
    uint64_t h = hash_key(head, p, len);
    if (!((t->bloom[(h >> 6) & BLOOM_MASK] >> (h & 63)) & 1)) return NONE;
    for (uint64_t i = h >> t->hot_shift;; i = (i + 1) & t->hot_mask) {
        const ent *e = &t->hot[i];
        if (e->len == 0) break;
        if (e->head == head && e->len == len) {
            if (len <= 8) return e->rank;
            if (memcmp(t->dec_blob + t->dec_off[e->rank] + 8, p + 8, len - 8) == 0) return e->rank;
        }
    }
    uint64_t i = h >> t->shift;
    for (;;) {
        const ent *e = &t->slots[i];
        if (e->len == 0) return NONE;
        if (e->head == head && e->len == len) {
            if (len <= 8) return e->rank;
            if (memcmp(t->dec_blob + t->dec_off[e->rank] + 8, p + 8, len - 8) == 0) return e->rank;
        }
        i = (i + 1) & t->mask;
    }
}

int64_t bpe_lookup(const bpe_table *t, const uint8_t *p, size_t len) {
    uint32_t r = lookup(t, p, len);
    return r == NONE ? -1 : (int64_t)r;
}

/* ------------------------------------------------------------------ table */

static void premerge_free(struct premerge_tables *pm);

static uint64_t new_uid(void) {
    static uint64_t next_uid = 1;
    return __atomic_fetch_add(&next_uid, 1, __ATOMIC_RELAXED);
}

/* Whether a table is still alive, as its threads' caches see it (cache_for): a cache of a
   freed table is the first one a thread reuses, memory already mapped, where a new one is
   faulted in page by page (16 MiB: 30-70 ms of system time on this VM, inside the first batch
   a pool thread runs for each new table). One reference for the table, one per cache. */
typedef struct table_life {
    int alive;
    int refs;
} table_life;

static table_life *life_new(void) {
    table_life *l = malloc(sizeof *l);
    if (l) l->alive = 1, l->refs = 1;
    return l;
}

static void life_release(table_life *l) {
    if (l && __atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL) == 0) free(l);
}

static int dec_reserve(bpe_table *t, uint32_t id) {
    if (id < t->dec_n) return 0;
    uint32_t nn = t->dec_n ? t->dec_n : 256;
    while (nn <= id) nn = nn > 0x7FFFFFFFu ? 0xFFFFFFFFu : nn * 2;
    uint64_t *off = realloc(t->dec_off, (size_t)nn * sizeof *off);
    if (!off) return -1;
    t->dec_off = off;
    uint32_t *ln = realloc(t->dec_len, (size_t)nn * sizeof *ln);
    if (!ln) return -1;
    t->dec_len = ln;
    for (uint32_t i = t->dec_n; i < nn; i++) { off[i] = 0; ln[i] = NONE; }
    t->dec_n = nn;
    return 0;
}

/* The hash table is probed at random: back it with transparent huge pages where the OS
   offers them (fewer TLB misses), zeroed. */
static void *alloc_slots(size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= (1u << 21)) {
        void *p = NULL;
        if (posix_memalign(&p, 1u << 21, size) == 0) {
            madvise(p, size, MADV_HUGEPAGE);
            memset(p, 0, size);
            return p;
        }
        return NULL;
    }
#endif
    return calloc(1, size);
}

void bpe_table_free(bpe_table *t) {
    if (!t) return;
    if (t->life) {
        __atomic_store_n(&t->life->alive, 0, __ATOMIC_RELEASE);
        life_release(t->life);
    }
    if (!t->borrowed) {
        free(t->slots);
        free(t->pair2);
        free(t->short3);
        free(t->short4);
        free(t->hot);
        free(t->bloom);
        free(t->dec_off);
        free(t->dec_len);
        free(t->dec_blob);
    }
    if (!t->premerge_borrowed) premerge_free(t->premerge);
    free(t->sp_off);
    free(t->sp_len);
    free(t->sp_blob);
    free(t);
}

bpe_table *bpe_table_new(const uint8_t *blob, const uint32_t *offs, const uint32_t *ranks,
                         uint32_t n, int *err, uint32_t *err_index) {
    int e_ = 1;
    uint32_t ei = 0;
    bpe_table *t = NULL;
    /* offsets must not decrease (a damaged cache file could hold anything) */
    for (uint32_t k = 0; k < n; k++)
        if (offs[k + 1] < offs[k]) { e_ = 5; ei = k; goto fail; }
    t = calloc(1, sizeof *t);
    if (!t) goto fail;
    t->uid = new_uid();
    t->life = life_new(); /* NULL: its caches are never taken for dead */
    for (int b = 0; b < 256; b++) t->byte_rank[b] = NONE;
    t->pair2 = malloc(65536 * sizeof *t->pair2);
    if (!t->pair2) goto fail;
    memset(t->pair2, 0xFF, 65536 * sizeof *t->pair2);
    {
        uint32_t n3 = 0, n4 = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t l = offs[k + 1] - offs[k];
            n3 += l == 3;
            n4 += l == 4;
        }
        uint32_t m = n3 > n4 ? n3 : n4, sbits = 4;
        while ((1ull << sbits) < (uint64_t)m * 2 + 2) sbits++;
        t->short_shift = 64 - sbits;
        t->short_mask = (1ull << sbits) - 1;
        t->short3 = malloc(sizeof(uint64_t) << sbits);
        t->short4 = malloc(sizeof(uint64_t) << sbits);
        if (!t->short3 || !t->short4) goto fail;
        memset(t->short3, 0xFF, sizeof(uint64_t) << sbits);
        memset(t->short4, 0xFF, sizeof(uint64_t) << sbits);
    }
    uint64_t cap = 16, nlong0 = 0;
    for (uint32_t k = 0; k < n; k++) nlong0 += offs[k + 1] - offs[k] >= 5;
    while (cap < nlong0 * 2 + 2) cap <<= 1;
    int bits = 0;
    while ((1ull << bits) < cap) bits++;
    t->slots = alloc_slots(cap * sizeof(ent));
    if (!t->slots) goto fail;
    t->mask = cap - 1;
    t->shift = 64 - bits;
    size_t total = n ? offs[n] - offs[0] : 0;
    t->dec_blob = malloc(total ? total : 1);
    if (!t->dec_blob) goto fail;
    if (total) memcpy(t->dec_blob, blob + offs[0], total);
    t->dec_blob_len = t->dec_blob_cap = total;
    uint32_t maxr = 0;
    for (uint32_t k = 0; k < n; k++) if (ranks[k] < NONE - 1 && ranks[k] > maxr) maxr = ranks[k];
    /* hot table: the first HOT_N long tokens in the given order (RankTable stores tokens
       sorted by rank, so these are the lowest ranks: the most frequent merges) */
    uint32_t nlong = 0, hot_left;
    {
        for (uint32_t k = 0; k < n; k++) nlong += offs[k + 1] - offs[k] >= 5;
        uint32_t nh = nlong < HOT_N ? nlong : HOT_N, hb = 4;
        while ((1ull << hb) < (uint64_t)nh * 2 + 2) hb++;
        t->hot = calloc((size_t)1 << hb, sizeof(ent));
        t->bloom = calloc(BLOOM_WORDS, sizeof(uint64_t));
        if (!t->hot || !t->bloom) goto fail;
        t->hot_mask = (1ull << hb) - 1;
        t->hot_shift = 64 - hb;
        hot_left = nh;
    }
    if (n && dec_reserve(t, maxr)) goto fail;
    for (uint32_t k = 0; k < n; k++) {
        ei = k;
        uint32_t r = ranks[k];
        if (r >= NONE - 1) { e_ = 4; goto fail; }
        const uint8_t *p = blob + offs[k];
        uint32_t len = offs[k + 1] - offs[k];
        if (len == 0) { e_ = 2; goto fail; }
        if (t->dec_len[r] != NONE) { e_ = 3; goto fail; } /* two tokens with one rank */
        t->dec_off[r] = offs[k] - offs[0];
        t->dec_len[r] = len;
        if (len > t->maxlen) t->maxlen = len;
        if (len <= 4) {
            uint32_t old;
            if (len == 1) { old = t->byte_rank[p[0]]; t->byte_rank[p[0]] = r; }
            else if (len == 2) { old = t->pair2[p[0] | (p[1] << 8)]; t->pair2[p[0] | (p[1] << 8)] = r; }
            else if (len == 3) {
                uint32_t key = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
                old = short_get(t, t->short3, key);
                if (old == NONE) short_put(t, t->short3, key, r);
            } else {
                old = short_get(t, t->short4, ld32(p));
                if (old == NONE) short_put(t, t->short4, ld32(p), r);
            }
            if (old != NONE) { e_ = 3; goto fail; }
            continue;
        }
        uint64_t head = head_of(p, len);
        uint64_t h = hash_key(head, p, len);
        uint64_t i = h >> t->shift;
        for (;;) {
            ent *e = &t->slots[i];
            if (e->len == 0) { e->head = head; e->len = len; e->rank = r; break; }
            if (e->head == head && e->len == len &&
                memcmp(t->dec_blob + t->dec_off[e->rank], p, len) == 0) { e_ = 3; goto fail; }
            i = (i + 1) & t->mask;
        }
        t->bloom[(h >> 6) & BLOOM_MASK] |= 1ull << (h & 63);
        if (hot_left) {
            hot_left--;
            for (i = h >> t->hot_shift;; i = (i + 1) & t->hot_mask) {
                ent *e = &t->hot[i];
                if (e->len == 0) { e->head = head; e->len = len; e->rank = r; break; }
            }
        }
    }
    t->n = n;
    t->max_rank = maxr;
    return t;
fail:
    if (err) *err = e_;
    if (err_index) *err_index = ei;
    bpe_table_free(t);
    return NULL;
}

int bpe_table_add_special(bpe_table *t, uint32_t id, const uint8_t *bytes, size_t len) {
    if (id == NONE) return -1;
    if (id < t->dec_n && t->dec_len[id] != NONE) return 0; /* mergeable tokens win */
    if (t->sp_n == 0) t->sp_base = id;
    uint32_t lo = t->sp_n && id < t->sp_base ? id : t->sp_base;
    uint32_t hi = t->sp_n ? t->sp_base + t->sp_n : id + 1;
    if (id + 1 > hi) hi = id + 1;
    if (lo != t->sp_base || hi - lo != t->sp_n) {
        uint32_t nn = hi - lo, shift = t->sp_base - lo;
        uint64_t *off = malloc((size_t)nn * sizeof *off);
        uint32_t *ln = malloc((size_t)nn * sizeof *ln);
        if (!off || !ln) { free(off); free(ln); return -1; }
        for (uint32_t i = 0; i < nn; i++) { off[i] = 0; ln[i] = NONE; }
        for (uint32_t i = 0; i < t->sp_n; i++) { off[i + shift] = t->sp_off[i]; ln[i + shift] = t->sp_len[i]; }
        free(t->sp_off);
        free(t->sp_len);
        t->sp_off = off;
        t->sp_len = ln;
        t->sp_base = lo;
        t->sp_n = nn;
    }
    uint32_t k = id - t->sp_base;
    if (t->sp_len[k] != NONE) return 0; /* the first name given for an id wins */
    uint8_t *b = realloc(t->sp_blob, t->sp_blob_len + len + 1);
    if (!b) return -1;
    t->sp_blob = b;
    if (len) memcpy(b + t->sp_blob_len, bytes, len);
    t->sp_off[k] = t->sp_blob_len;
    t->sp_len[k] = (uint32_t)len;
    t->sp_blob_len += len;
    return 0;
}

/* bytes of any id (mergeable or special); NONE length if unknown */
static inline uint32_t id_bytes(const bpe_table *t, uint32_t id, const uint8_t **p) {
    if (id < t->dec_n && t->dec_len[id] != NONE) {
        *p = t->dec_blob + t->dec_off[id];
        return t->dec_len[id];
    }
    if (id - t->sp_base < t->sp_n && t->sp_len[id - t->sp_base] != NONE) {
        *p = t->sp_blob + t->sp_off[id - t->sp_base];
        return t->sp_len[id - t->sp_base];
    }
    return NONE;
}

uint32_t bpe_table_size(const bpe_table *t) { return t->n; }
uint32_t bpe_table_max_rank(const bpe_table *t) { return t->max_rank; }
int bpe_table_has_all_bytes(const bpe_table *t) {
    for (int b = 0; b < 256; b++) if (t->byte_rank[b] == NONE) return 0;
    return 1;
}

/* ------------------------------------------------------------------ buffers */

void bpe_buf_free(bpe_buf *b) { free(b->ids); b->ids = NULL; b->len = b->cap = 0; }
void bpe_free(void *p) { free(p); }

static int buf_grow(bpe_buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra) cap *= 2;
    uint32_t *ids = realloc(b->ids, cap * sizeof *ids);
    if (!ids) return -1;
    b->ids = ids;
    b->cap = cap;
    return 0;
}

/* The ids of a large text (an empty buffer about to take LARGE_OUT_MIN bytes or more of
   text): room for len/2 ids reserved at once. Growing by doubling copied the buffer at each
   step until it left the heap (a text's ids are up to 4 bytes per byte of text). Untouched
   reserved pages cost no memory; more ids than reserved grow the buffer as usual (a large
   buffer is mmap'ed: realloc moves its pages without copying). Best effort: without memory it
   leaves the buffer as it was. (Huge pages for it: in a fresh process their faults cost more
   system time than they saved, see pylist.c.) */
#define LARGE_OUT_MIN ((size_t)1 << 21)
static void buf_reserve_large(bpe_buf *b, size_t len) {
    if (b->cap || len < LARGE_OUT_MIN) return;
    size_t cap = len / 2 + 1024;
    uint32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) return;
    b->ids = ids;
    b->cap = cap;
}

static inline int buf_push(bpe_buf *b, uint32_t id) {
    if (b->len == b->cap && buf_grow(b, 1)) return -1;
    b->ids[b->len++] = id;
    return 0;
}

/* ------------------------------------------------------------------ pre-merged characters */

/* See premerge.h. Here a rank is that of the joined bytes: R is a two-byte character's own
   rank, or for three bytes the higher of its rank and the lower of its two byte pairs'. The
   tables: end_min[lead][x] the lowest rank of a token of two bytes or more ending in x, lead;
   start_min[last][y] of one starting last, y; and, checked here, the lowest rank of a token
   of three bytes or more ending in a three-byte character's first two bytes (end3) or
   starting with its last two (start3), or longer than the character and starting or ending
   with it (longer). tests/test_premerge.py checks the ids against tiktoken. */
static int premerge_on = 1; /* bpe_set_premerge */

int bpe_set_premerge(int on) { return __atomic_exchange_n(&premerge_on, on ? 1 : 0, __ATOMIC_RELAXED); }

static char premerge_failed; /* see premerge_of */

static void premerge_free(struct premerge_tables *pm) {
    if (pm != (premerge_tables *)&premerge_failed) free(pm);
}

static premerge_tables *premerge_make(const bpe_table *t) {
    premerge_tables *pm = premerge_tables_new();
    uint32_t *longer = malloc(PM_N * sizeof *longer);
    uint32_t *end3 = malloc(16 * 64 * sizeof *end3);    /* [lead & 0x0F][second & 0x3F] */
    uint32_t *start3 = malloc(64 * 64 * sizeof *start3); /* [second & 0x3F][third & 0x3F] */
    if (!pm || !longer || !end3 || !start3) {
        free(pm);
        pm = NULL;
        goto done;
    }
    memset(longer, 0xFF, PM_N * sizeof *longer);
    memset(end3, 0xFF, 16 * 64 * sizeof *end3);
    memset(start3, 0xFF, 64 * 64 * sizeof *start3);
    for (uint32_t r = 0; r < t->dec_n; r++) {
        uint32_t len = t->dec_len[r];
        if (len == NONE || len < 2) continue;
        const uint8_t *q = t->dec_blob + t->dec_off[r];
        uint32_t first = q[0], last = q[len - 1];
        /* every test below needs a non-ASCII first or last byte: most tokens leave here (this
           loop over o200k_base's 200K tokens took 2 ms, the first non-ASCII piece's wait) */
        if ((first | last) < 0x80) continue;
        if (last - 0xC2u < PM_LEADS) pm_min(&pm->end_min[(last - 0xC2u) * 256 + q[len - 2]], r);
        if ((first & 0xC0) == 0x80) pm_min(&pm->start_min[(first & 0x3Fu) * 256 + q[1]], r);
        if (len < 3) continue;
        if (q[len - 2] - 0xE0u < 16 && (last & 0xC0) == 0x80)
            pm_min(&end3[(q[len - 2] & 0x0Fu) * 64 + (last & 0x3Fu)], r);
        if ((first & 0xC0) == 0x80 && (q[1] & 0xC0) == 0x80)
            pm_min(&start3[(first & 0x3Fu) * 64 + (q[1] & 0x3Fu)], r);
        for (size_t l = 2; l <= 3 && l < len; l++) {
            size_t idx;
            if (pm_char(q + len - l, l, &idx) == l) pm_min(&longer[idx], r);
            if (pm_char(q, l, &idx) == l) pm_min(&longer[idx], r);
        }
    }
    for (uint32_t r = 0; r < t->dec_n; r++) {
        uint32_t len = t->dec_len[r];
        if (len != 2 && len != 3) continue;
        const uint8_t *q = t->dec_blob + t->dec_off[r];
        size_t idx;
        if (pm_char(q, len, &idx) != len || lookup(t, q, len) != r) continue;
        uint32_t R = r;
        if (len == 3) {
            uint32_t r01 = lookup2(t, q), r12 = lookup2(t, q + 1), lo = r01 < r12 ? r01 : r12;
            if (lo == NONE) continue; /* its bytes never merge into it */
            if (lo > R) R = lo;
            if (end3[(q[0] & 0x0Fu) * 64 + (q[1] & 0x3Fu)] <= R ||
                start3[(q[1] & 0x3Fu) * 64 + (q[2] & 0x3Fu)] <= R)
                continue;
        }
        if (longer[idx] <= R) continue;
        pm->chr[idx] = (uint64_t)(R + 1) | (uint64_t)r << 32;
    }
done:
    free(longer);
    free(end3);
    free(start3);
    return pm;
}

/* Published in t->premerge when the tables could not be made (out of memory): pieces then
   merge without them, and no later piece tries again. Never dereferenced. */
#define PM_FAILED ((premerge_tables *)&premerge_failed)

/* t's tables, made by the first caller. Threads that meet t's first lead byte together may
   each make them; the first published is kept, the others freed (once per table). */
static const premerge_tables *premerge_of(const bpe_table *t) {
    premerge_tables *pm = __atomic_load_n(&t->premerge, __ATOMIC_ACQUIRE);
    if (pm) return pm == PM_FAILED ? NULL : pm;
    premerge_tables *made = premerge_make(t), *expected = NULL;
    if (!__atomic_compare_exchange_n(&((bpe_table *)t)->premerge, &expected, made ? made : PM_FAILED, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        premerge_free(made);
        return expected == PM_FAILED ? NULL : expected;
    }
    return made;
}

/* ------------------------------------------------------------------ merge */

/* The leftmost minimum of rk[0:n] (n a multiple of 8, padded with NONE): its index, and the
   value in *best (NONE when there is no pair left). The merge loop spends most of its time
   here, so there is an AVX2 version, inlined into an AVX2 copy of the merge loop, used when
   the scanner's implementation is AVX2 (which follows the CPU and SCANTOK_FORCE_IMPL). */
static inline size_t argmin_scalar(const uint32_t *rk, size_t n, uint32_t *best) {
    uint32_t b = NONE;
    for (size_t i = 0; i < n; i++) {
        b = rk[i] < b ? rk[i] : b;
        __asm__("" : "+r"(b)); /* keeps the loads scalar (see argmin_avx2) */
    }
    *best = b;
    if (b == NONE) return n;
    size_t i = 0;
    while (rk[i] != b) i++;
    return i;
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_ARGMIN_AVX2 1
__attribute__((target("avx2"))) static inline size_t argmin_avx2(const uint32_t *rk, size_t n,
                                                                  uint32_t *best) {
    /* A piece of up to 16 bytes: its ranks were just stored one by one, and a 32-byte load
       of them waits until those stores reach L1 (no store-to-load forwarding across
       stores); scalar loads are forwarded. */
    if (n <= 16) return argmin_scalar(rk, n, best);
    __m256i m = _mm256_set1_epi32(-1);
    for (size_t i = 0; i < n; i += 8)
        m = _mm256_min_epu32(m, _mm256_loadu_si256((const __m256i *)(rk + i)));
    __m128i x = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, 0x4E));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, 0xB1));
    uint32_t b = (uint32_t)_mm_cvtsi128_si32(x);
    *best = b;
    if (b == NONE) return n;
    __m256i v = _mm256_set1_epi32((int)b);
    for (size_t i = 0;; i += 8) {
        __m256i eq = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(rk + i)), v);
        unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(eq));
        if (mask) return i + (size_t)__builtin_ctz(mask);
    }
}
#endif

/* Per-thread caches in front of the vocabulary, whose tables are too big for L2:
   - the piece cache: text repeats its words, so the ids of every short piece (1..16 bytes,
     or a run of one byte up to 255, at most PC_TOK tokens) are kept; entries hold the piece
     bytes, so a hit is exact;
   - the pair cache: the rank of the concatenation of two tokens (a, b), or NONE, as the
     merge asks for it; the two ranks determine the bytes, so the key is exact. Long pieces
     without spaces (CJK, code, random text) repeat their merges across pieces.
   Each thread keeps one pair of caches per table (the last PC_SLOTS tables it used), so
   consecutive calls and the documents of a batch share them; a table's uid (never reused)
   tells its caches apart from a freed table's, whose memory a new table takes first, cleared
   (see table_life). Both are 2-way set associative, one set per 64-byte line, the most
   recently used entry first.

   The piece cache is what makes recurring text cheap: it is large enough to hold the working
   set of a corpus (English prose has ~50K distinct pieces in 4 MB, code ~25K), so a piece
   seen before costs one probe, and the fused loop prefetches the sets of the next pieces while
   it handles the current one, so the probe rarely waits for memory. Its size is bounded:
   2^pc_bits entries of 32 bytes per thread and table (default 2^19: 16 MiB), set with
   SCANTOK_PIECE_CACHE_MB or bpe_set_piece_cache_bytes (caches made afterwards use it).
   Why 16 MiB: with two entries a set, pieces that share a set evict each other, and each miss
   is a merge; at 4 MiB the steady state (64 KB documents, every piece seen before) of the
   shared corpora ran at o200k en / code / multi 391 / 367 / 249 MB/s, at 16 MiB 408 / 393 /
   317 (8 MiB: 415 / 384 / 298; 32 MiB: 427 / 393 / 333). The long-piece store is a quarter
   of its size (a larger one gained nothing). */
#define PC_BITS_DEFAULT 19 /* 512K entries x 32 bytes = 16 MiB per thread and table */
#define PS_BITS_LESS 2     /* the store has 2^(pc_bits - PS_BITS_LESS) slots, 32x that in bytes */
#define PC_BITS_MIN 10
_Static_assert(PC_BITS_MIN > PS_BITS_LESS, "the smallest cache still has a store");
#define PC_BITS_MAX 25     /* 1 GiB */
#define PC_TOK 3
#define PC_MAXLEN 16
#define PC_RUN_MAX 254 /* runs of one byte up to this length are cached too */
#define PC_IN_STORE 255 /* the len of a hint: this short piece is in the store (at tok[0]) */
#define PC_SLOTS 4
#define PAIR_BITS 14 /* 16K entries x 16 bytes = 256 KiB per thread and table */
typedef struct pc_ent {
    uint64_t k0, k1; /* the piece, zero padded */
    uint32_t tok[PC_TOK];
    uint8_t len, n; /* len 0 = empty */
    uint8_t pad_[2];
} pc_ent;

typedef struct pair_ent {
    uint64_t key; /* a << 32 | b; ~0 = empty (NONE is never a key) */
    uint32_t rank;
    uint32_t pad_;
} pair_ent;

/* The long-piece store: pieces the piece cache cannot hold (longer than 16 bytes, or more
   than PC_TOK tokens; up to PS_MAXLEN bytes), with their ids, in an arena indexed by an
   open-addressed table. Bounded: when the arena or the table is full it is emptied and learns
   again (a new epoch; a working set that fits never sees one). Allocated on first use. */
#define PS_MAXLEN 255
typedef struct ps_slot { uint32_t tag, off; } ps_slot; /* tag 0 = empty */
typedef struct piece_store {
    ps_slot *slots;
    uint8_t *arena; /* entries: len, ntok (1 byte each), 2 spare, the bytes, pad to 4, the ids */
    uint32_t mask, count, used, cap;
    uint64_t epoch; /* 1 from allocation on, + 1 each time the store is emptied */
} piece_store;

struct bpe_cache;
typedef int (*merge_fn)(const bpe_table *, struct bpe_cache *, const uint8_t *, size_t,
                        bpe_buf *);
static merge_fn merge_for_impl(void);

/* encode_run's findings for runs of one byte value (see there); all RUN_UNKNOWN in a new cache */
enum { RUN_UNKNOWN = 0, RUN_PERIODIC, RUN_DECLINE };
typedef struct run_info {
    uint8_t state;
    uint8_t tail_ok;   /* tail0 below is known compatible after the period token */
    uint16_t period;   /* the period token's length in bytes */
    uint32_t tok;      /* the period token */
    uint32_t tail0;    /* a first tail token seen compatible after it */
} run_info;

typedef struct bpe_cache {
    pc_ent *pieces;
    pair_ent *pairs;
    unsigned pc_bits; /* the piece cache has 2^pc_bits entries */
    piece_store store; /* arena of 32 << (pc_bits - PS_BITS_LESS) bytes, as many slots / 32 */
    merge_fn merge; /* merge_small for the scanner's implementation, set per call */
    uint64_t *short_filter; /* see short_filter_make; made on first use */
    run_info runs[256]; /* by byte value */
} bpe_cache;

typedef struct pc_slot {
    uint64_t uid;
    uint64_t used; /* last use, for replacement */
    table_life *life; /* of the table uid names (a reference), NULL if none */
    bpe_cache c;
} pc_slot;

static pthread_key_t pc_key;
static pthread_once_t pc_once = PTHREAD_ONCE_INIT;
static int pc_key_ok;
static unsigned pc_bits_cfg = PC_BITS_DEFAULT;

static void pc_destroy(void *v) {
    pc_slot *slots = v;
    for (int i = 0; i < PC_SLOTS; i++) {
        free(slots[i].c.pieces);
        free(slots[i].c.pairs);
        free(slots[i].c.store.slots);
        free(slots[i].c.store.arena);
        free(slots[i].c.short_filter);
        life_release(slots[i].life);
    }
    free(slots);
}

static unsigned pc_bits_for_bytes(double bytes) {
    unsigned bits = PC_BITS_MIN;
    while (bits < PC_BITS_MAX && (double)(sizeof(pc_ent) << (bits + 1)) <= bytes) bits++;
    return bits;
}

static void pc_init_key(void) {
    pc_key_ok = pthread_key_create(&pc_key, pc_destroy) == 0;
    const char *mb = getenv("SCANTOK_PIECE_CACHE_MB");
    if (mb && *mb) {
        char *end;
        double v = strtod(mb, &end);
        if (end != mb && v >= 0) __atomic_store_n(&pc_bits_cfg, pc_bits_for_bytes(v * 1048576.0), __ATOMIC_RELAXED);
    }
}

size_t bpe_set_piece_cache_bytes(size_t bytes) {
    pthread_once(&pc_once, pc_init_key);
    unsigned bits = pc_bits_for_bytes((double)bytes);
    __atomic_store_n(&pc_bits_cfg, bits, __ATOMIC_RELAXED);
    return sizeof(pc_ent) << bits;
}

static size_t pc_allocs;

size_t bpe_piece_cache_allocs(void) { return __atomic_load_n(&pc_allocs, __ATOMIC_RELAXED); }

size_t bpe_piece_cache_bytes(void) {
    pthread_once(&pc_once, pc_init_key);
    return sizeof(pc_ent) << __atomic_load_n(&pc_bits_cfg, __ATOMIC_RELAXED);
}

static void seed_pieces(const bpe_table *t, bpe_cache *c);

/* This thread's caches for table t (allocated on first use), or NULL without memory. */
static bpe_cache *cache_for(const bpe_table *t) {
    pthread_once(&pc_once, pc_init_key);
    if (!pc_key_ok) return NULL;
    pc_slot *slots = pthread_getspecific(pc_key);
    if (!slots) {
        slots = calloc(PC_SLOTS, sizeof *slots);
        if (!slots) return NULL;
        if (pthread_setspecific(pc_key, slots)) { free(slots); return NULL; }
    }
    unsigned bits = __atomic_load_n(&pc_bits_cfg, __ATOMIC_RELAXED);
    uint64_t now = 0;
    int victim = 0;
    for (int i = 0; i < PC_SLOTS; i++) if (slots[i].used > now) now = slots[i].used;
    int dead = -1; /* a slot with memory whose table was freed */
    for (int i = 0; i < PC_SLOTS; i++) {
        if (slots[i].c.pieces && slots[i].uid == t->uid && slots[i].c.pc_bits == bits) {
            slots[i].used = now + 1;
            slots[i].c.merge = merge_for_impl();
            return &slots[i].c;
        }
        if (slots[i].uid == t->uid) { victim = i; dead = -1; break; } /* resized: replace in place */
        if (slots[i].used < slots[victim].used) victim = i;
        if (slots[i].c.pieces && slots[i].life && !__atomic_load_n(&slots[i].life->alive, __ATOMIC_ACQUIRE) &&
            (dead < 0 || slots[i].c.pc_bits == bits))
            dead = i;
    }
    if (dead >= 0) victim = dead; /* before an unused slot, which would map new memory */
    pc_slot *s = &slots[victim];
    life_release(s->life);
    s->life = NULL;
    if (s->c.pieces && s->c.pc_bits != bits) {
        free(s->c.pieces);
        s->c.pieces = NULL;
    }
    if (s->c.pieces && s->c.store.slots) {
        /* the same size: emptied in place, as when it is full */
        memset(s->c.store.slots, 0, ((size_t)s->c.store.mask + 1) * sizeof *s->c.store.slots);
        s->c.store.used = s->c.store.count = 0;
        s->c.store.epoch++;
    } else {
        free(s->c.store.slots);
        free(s->c.store.arena);
        memset(&s->c.store, 0, sizeof s->c.store); /* made again on first use, at this size */
    }
    free(s->c.short_filter); /* it describes the slot's previous table */
    s->c.short_filter = NULL;
    memset(s->c.runs, 0, sizeof s->c.runs); /* so do these */
    if (!s->c.pieces) {
        /* aligned so that each 2-entry set is one cache line */
        s->c.pieces = alloc_slots(sizeof(pc_ent) << bits); /* huge pages: probed at random */
        if (!s->c.pieces) return NULL;
        __atomic_add_fetch(&pc_allocs, 1, __ATOMIC_RELAXED);
        s->c.pc_bits = bits;
    }
    if (!s->c.pairs) {
        void *b = NULL;
        if (posix_memalign(&b, 64, sizeof(pair_ent) << PAIR_BITS)) return NULL;
        s->c.pairs = b;
    }
    s->uid = 0; /* not valid until cleared */
    memset(s->c.pieces, 0, sizeof(pc_ent) << bits);
    memset(s->c.pairs, 0xFF, sizeof(pair_ent) << PAIR_BITS);
    s->uid = t->uid;
    if (t->life) {
        __atomic_add_fetch(&t->life->refs, 1, __ATOMIC_RELAXED);
        s->life = t->life;
    }
    s->used = now + 1;
    s->c.merge = merge_for_impl();
    seed_pieces(t, &s->c);
    return &s->c;
}

/* Rank of bytes(a) + bytes(b), which are p[0:len], through the pair cache. */
static inline uint32_t pair_rank(const bpe_table *t, bpe_cache *c, uint32_t a, uint32_t b,
                                 const uint8_t *p, size_t len) {
    /* 3 and 4 bytes: the short tables cost no more than a probe here, and keep the pair
       cache for the longer strings whose lookup is a hash of the bytes */
    if (!c || len <= 4 || a == NONE || b == NONE) return lookup(t, p, len);
    uint64_t key = ((uint64_t)a << 32) | b;
    pair_ent *e = &c->pairs[((key * 0x9E3779B97F4A7C15ull) >> (64 - PAIR_BITS)) & ~(uint64_t)1];
    if (e[0].key == key) return e[0].rank;
    if (e[1].key == key) {
        pair_ent hit = e[1];
        e[1] = e[0];
        e[0] = hit;
        return hit.rank;
    }
    uint32_t r = lookup(t, p, len);
    e[1] = e[0];
    e[0].key = key;
    e[0].rank = r;
    return r;
}


/* merge_small's parts before its first merge step, with the piece's characters pre-merged
   where that is exact (see premerge): each such character becomes one part at its first
   byte, its other bytes dead (rk NONE), then the pairs next to such parts are looked up
   again. Returns how many parts it removed. Out of line: most pieces of English or code hold
   no lead byte. */
static __attribute__((noinline)) size_t premerge_piece(const bpe_table *t, bpe_cache *c,
                                                       const uint8_t *p, size_t len, uint32_t *tok,
                                                       uint32_t *rk, uint8_t *nxt, uint8_t *prv) {
    if (!pm_maybe(p, len) || !__atomic_load_n(&premerge_on, __ATOMIC_RELAXED)) return 0;
    const premerge_tables *pm = premerge_of(t); /* not made for ASCII text */
    if (!pm) return 0;
    size_t end, removed = pm_mark(pm, p, len, tok, NULL, rk, nxt, prv, &end);
    if (!removed) return 0;
    for (size_t i = 0, j; i < len; i = j) {
        j = nxt[i];
        if (j >= len) {
            rk[i] = NONE;
            break;
        }
        if (j - i > 1 || nxt[j] - j > 1) rk[i] = pair_rank(t, c, tok[i], tok[j], p + i, nxt[j] - i);
    }
    return removed;
}

/* A Bloom filter (one 64-bit word per key, two bits) over the vocabulary's 3- and 4-byte
   tokens, for the merges of encode_long's windows and of merge_small. In a long piece of
   random letters 7 of 10 merge lookups are for 3 bytes and 2 of 10 for 4, and 99 % of those
   are not tokens; each would probe the 256 KiB short tables (outside L1, often outside L2 once
   the output streams through it). The filter is 32 KiB and answers ~95 % of them. In
   merge_small too, the short tables' loads were a quarter of its samples on o200k_base's
   random letters (pieces of 5 to 16 bytes); 10**7 random letters: 0.279 -> 0.259 s (medians
   of 5, alternating processes), text unchanged within the noise. */
#define SF_BITS 12 /* 2^12 words */
static inline uint64_t sf_hash(uint32_t key, size_t len) {
    return ((uint64_t)key | (uint64_t)len << 32) * 0x9E3779B97F4A7C15ull;
}
static inline uint64_t sf_bits(uint64_t h) {
    return (1ull << ((h >> 20) & 63)) | (1ull << ((h >> 26) & 63));
}

static uint64_t *short_filter_make(const bpe_table *t) {
    uint64_t *f = calloc((size_t)1 << SF_BITS, sizeof *f);
    if (!f) return NULL;
    for (int len = 3; len <= 4; len++) {
        const uint64_t *tab = len == 3 ? t->short3 : t->short4;
        for (uint64_t i = 0; i <= t->short_mask; i++) {
            if ((uint32_t)tab[i] == NONE) continue;
            uint64_t h = sf_hash((uint32_t)(tab[i] >> 32), (size_t)len);
            f[h >> (64 - SF_BITS)] |= sf_bits(h);
        }
    }
    return f;
}

/* pair_rank where len >= 3 (a merged token and its neighbour), c and its filter made */
static inline uint32_t pair_rank3(const bpe_table *t, bpe_cache *c, uint32_t a, uint32_t b,
                                  const uint8_t *p, size_t len) {
    if (len > 4) return pair_rank(t, c, a, b, p, len);
    uint32_t key = len == 3 ? (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) : ld32(p);
    uint64_t h = sf_hash(key, len), m = sf_bits(h);
    if ((c->short_filter[h >> (64 - SF_BITS)] & m) != m) return NONE;
    return short_get(t, len == 3 ? t->short3 : t->short4, key);
}

/* pair_rank3 when c has its filter, else pair_rank (merge_small: c may be NULL, and the
   filter is made on a cache's first merge) */
static inline uint32_t pair_rank_merged(const bpe_table *t, bpe_cache *c, uint32_t a, uint32_t b,
                                        const uint8_t *p, size_t len) {
    return c && c->short_filter ? pair_rank3(t, c, a, b, p, len) : pair_rank(t, c, a, b, p, len);
}

/* tiktoken's loop, for short pieces (2 <= len <= SMALL_MAX): parts are linked by position;
   rk[i] is the rank of the pair starting at part i (NONE for dead positions and the last
   part), so the leftmost lowest pair is the first index of the minimum of rk (a scan that
   vectorizes; no array shifting). One body, compiled per instruction set with its argmin
   inlined (a call per merge step cost as much as the step's own work). */
#define MERGE_SMALL_BODY(ARGMIN)                                                              \
    uint32_t rk[SMALL_MAX + 8], tok[SMALL_MAX + 1];                                           \
    uint8_t nxt[SMALL_MAX + 16], prv[SMALL_MAX + 16];                                         \
    size_t nparts = len;                                                                      \
    /* nxt[i] = i + 1, prv[i] = i - 1, 16 at a time (the tails are never read) */             \
    for (size_t i = 0; i < len; i += 16) {                                                    \
        memcpy(nxt + i, IOTA_M1 + i + 2, 16);                                                 \
        memcpy(prv + i, IOTA_M1 + i, 16);                                                     \
    }                                                                                         \
    for (size_t i = 0; i < len; i++) tok[i] = t->byte_rank[p[i]];                            \
    for (size_t i = 0; i + 1 < len; i++) rk[i] = lookup2(t, p + i);                          \
    for (size_t q = 0; q < 9; q++) rk[len - 1 + q] = NONE; /* the last part, the padding */  \
    nparts -= premerge_piece(t, c, p, len, tok, rk, nxt, prv);                                \
    size_t padded = (len + 7) & ~(size_t)7;                                                   \
    for (;;) {                                                                                \
        uint32_t best;                                                                        \
        size_t i = ARGMIN(rk, padded, &best);                                                 \
        if (best == NONE) break;                                                              \
        size_t j = nxt[i];                                                                    \
        size_t k = j < len ? nxt[j] : len; /* j < len always: rk[i] != NONE */                \
        tok[i] = best;                                                                        \
        rk[j] = NONE;                                                                         \
        nxt[i] = (uint8_t)k;                                                                  \
        if (k < len) prv[k] = (uint8_t)i;                                                     \
        nparts--;                                                                             \
        rk[i] = k < len ? pair_rank_merged(t, c, best, tok[k], p + i, nxt[k] - i) : NONE;    \
        if (i > 0) {                                                                          \
            size_t h = prv[i];                                                                \
            rk[h] = pair_rank_merged(t, c, tok[h], best, p + h, k - h);                       \
        }                                                                                     \
    }                                                                                         \
    if (buf_grow(out, nparts)) return -1;                                                     \
    for (size_t i = 0; i < len; i = nxt[i]) {                                                 \
        if (tok[i] == NONE) return -2;                                                        \
        out->ids[out->len++] = tok[i];                                                        \
    }                                                                                         \
    return 0;

/* IOTA_M1[j] = j - 1 (mod 256): merge_small's initial links are slices of it. */
#define IOTA16(b) (uint8_t)((b) - 1), (uint8_t)(b), (uint8_t)((b) + 1), (uint8_t)((b) + 2),       \
    (uint8_t)((b) + 3), (uint8_t)((b) + 4), (uint8_t)((b) + 5), (uint8_t)((b) + 6),             \
    (uint8_t)((b) + 7), (uint8_t)((b) + 8), (uint8_t)((b) + 9), (uint8_t)((b) + 10),            \
    (uint8_t)((b) + 11), (uint8_t)((b) + 12), (uint8_t)((b) + 13), (uint8_t)((b) + 14)
static const uint8_t IOTA_M1[WINDOW_MAX + 32] = {
    IOTA16(0), IOTA16(16), IOTA16(32), IOTA16(48), IOTA16(64), IOTA16(80), IOTA16(96),
    IOTA16(112), IOTA16(128), IOTA16(144), IOTA16(160), IOTA16(176), IOTA16(192), IOTA16(208),
    IOTA16(224), IOTA16(240), IOTA16(256),
};
_Static_assert(SMALL_MAX <= WINDOW_MAX && WINDOW_MAX + 32 <= 272, "IOTA_M1 covers the merge loops' links");
_Static_assert(WINDOW_MAX < 255, "merge_window_avx2's links (up to len) are bytes");

static int merge_small_scalar(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len,
                              bpe_buf *out) {
    MERGE_SMALL_BODY(argmin_scalar)
}

#ifdef HAVE_ARGMIN_AVX2
__attribute__((target("avx2"))) static int merge_small_avx2(const bpe_table *t, bpe_cache *c,
                                                            const uint8_t *p, size_t len,
                                                            bpe_buf *out) {
    MERGE_SMALL_BODY(argmin_avx2)
}
#endif

#ifdef HAVE_ARGMIN_AVX2
/* merge_small for encode_long's windows (~144 bytes), where the flat argmin above reads all
   of rk for every merge. Two levels: bm0..bm2 hold the minimum of each 8-rank block of rk, in
   registers, so a step reads 3 vectors of block minima and then one block. rk is only ever
   written a whole block at a time (load, blend the changed lanes, store): a 32-byte load
   that overlaps narrower stores still in the store buffer would wait for them to reach L1,
   while a load of what one same-sized store wrote is forwarded. */
__attribute__((target("avx2"))) static inline __m256i hmin_bcast(__m256i v) {
    __m128i x = _mm_min_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, 0x4E));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, 0xB1));
    return _mm256_broadcastd_epi32(x);
}

__attribute__((target("avx2"))) static int merge_window_avx2(const bpe_table *t, bpe_cache *c,
                                                             const uint8_t *p, size_t len,
                                                             bpe_buf *out) {
    uint32_t rk[32 * 8] __attribute__((aligned(32))), tok[WINDOW_MAX + 1];
    uint8_t nxt[WINDOW_MAX + 16], prv[WINDOW_MAX + 16];
    for (size_t i = 0; i < len; i += 16) {
        memcpy(nxt + i, IOTA_M1 + i + 2, 16);
        memcpy(prv + i, IOTA_M1 + i, 16);
    }
    for (size_t i = 0; i < len; i++) tok[i] = t->byte_rank[p[i]];
    for (size_t i = 0; i + 1 < len; i++) rk[i] = lookup2(t, p + i);
    for (size_t q = 0; q < 9; q++) rk[len - 1 + q] = NONE;
    size_t nb = (len + 7) >> 3;
    uint32_t bms[32];
    for (size_t b = 0; b < 32; b++) {
        uint32_t m = NONE;
        if (b < nb)
            for (size_t q = 0; q < 8; q++) m = rk[8 * b + q] < m ? rk[8 * b + q] : m;
        bms[b] = m;
    }
    __m256i bm0 = _mm256_loadu_si256((const __m256i *)bms);
    __m256i bm1 = _mm256_loadu_si256((const __m256i *)(bms + 8));
    __m256i bm2 = _mm256_loadu_si256((const __m256i *)(bms + 16));
    __m256i bm3 = _mm256_loadu_si256((const __m256i *)(bms + 24));
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i iota8 = _mm256_add_epi32(iota, _mm256_set1_epi32(8));
    const __m256i iota16 = _mm256_add_epi32(iota, _mm256_set1_epi32(16));
    const __m256i iota24 = _mm256_add_epi32(iota, _mm256_set1_epi32(24));
    const __m256i none = _mm256_set1_epi32(-1);
    for (;;) {
        __m256i vb = hmin_bcast(_mm256_min_epu32(_mm256_min_epu32(bm0, bm1), _mm256_min_epu32(bm2, bm3)));
        uint32_t best = (uint32_t)_mm256_cvtsi256_si32(vb);
        if (best == NONE) break;
        unsigned bmask = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(bm0, vb))) |
                         (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(bm1, vb))) << 8 |
                         (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(bm2, vb))) << 16 |
                         (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(bm3, vb))) << 24;
        size_t bi = (size_t)__builtin_ctz(bmask);
        __m256i blk = _mm256_load_si256((const __m256i *)(rk + 8 * bi));
        unsigned lmask = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(blk, vb)));
        size_t i = 8 * bi + (size_t)__builtin_ctz(lmask);
        size_t j = nxt[i];
        size_t k = nxt[j]; /* j < len: rk[i] != NONE */
        tok[i] = best;
        tok[j] = DEAD;
        nxt[i] = (uint8_t)k;
        if (k < len) prv[k] = (uint8_t)i;
        uint32_t ri = k < len ? pair_rank3(t, c, best, tok[k], p + i, nxt[k] - i) : NONE;
        size_t h = i; /* i == 0: no left neighbour; h == i rewrites rk[i] with the same value */
        uint32_t rh = ri;
        if (i > 0) {
            h = prv[i];
            rh = pair_rank3(t, c, tok[h], best, p + h, k - h);
        }
        __m256i vi = _mm256_set1_epi32((int)i), vj = _mm256_set1_epi32((int)j),
                vh = _mm256_set1_epi32((int)h), vri = _mm256_set1_epi32((int)ri),
                vrh = _mm256_set1_epi32((int)rh);
        size_t todo[3] = {bi, j >> 3, h >> 3};
        for (int u = 0; u < 3; u++) {
            size_t b = todo[u];
            if (u == 1 && b == bi) continue;
            if (u == 2 && (b == bi || b == todo[1])) continue;
            __m256i pos = _mm256_add_epi32(iota, _mm256_set1_epi32((int)(8 * b)));
            __m256i v = _mm256_load_si256((const __m256i *)(rk + 8 * b));
            v = _mm256_blendv_epi8(v, vri, _mm256_cmpeq_epi32(pos, vi));
            v = _mm256_blendv_epi8(v, none, _mm256_cmpeq_epi32(pos, vj));
            v = _mm256_blendv_epi8(v, vrh, _mm256_cmpeq_epi32(pos, vh));
            _mm256_store_si256((__m256i *)(rk + 8 * b), v);
            __m256i m = hmin_bcast(v), vbk = _mm256_set1_epi32((int)b);
            bm0 = _mm256_blendv_epi8(bm0, m, _mm256_cmpeq_epi32(iota, vbk));
            bm1 = _mm256_blendv_epi8(bm1, m, _mm256_cmpeq_epi32(iota8, vbk));
            bm2 = _mm256_blendv_epi8(bm2, m, _mm256_cmpeq_epi32(iota16, vbk));
            bm3 = _mm256_blendv_epi8(bm3, m, _mm256_cmpeq_epi32(iota24, vbk));
        }
    }
    /* the parts in order: a pass over tok, not a walk along nxt (each step of which waits
       for the previous load) */
    if (buf_grow(out, len)) return -1;
    uint32_t *o = out->ids + out->len, bad = 0;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t v = tok[i];
        o[n] = v;
        n += v != DEAD;
        bad |= v == NONE;
    }
    if (bad) return -2;
    out->len += n;
    return 0;
}
#endif

static merge_fn merge_for_impl(void) {
#ifdef HAVE_ARGMIN_AVX2
    if (!strcmp(scantok_impl_name(), "avx2")) return merge_small_avx2;
#endif
    return merge_small_scalar;
}

/* c's 3-/4-byte filter, made on its first merge; NULL without memory (merges go without it) */
static inline const uint64_t *filter_of(const bpe_table *t, bpe_cache *c) {
    if (!c->short_filter) c->short_filter = short_filter_make(t);
    return c->short_filter;
}

static inline int merge_small(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len,
                              bpe_buf *out) {
    if (!c) return merge_small_scalar(t, c, p, len, out);
    filter_of(t, c);
    return c->merge(t, c, p, len, out);
}

static int merge_any(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len, bpe_buf *out);

/* encode_long's windows (2..WINDOW_MAX bytes). */
static inline int merge_window(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len,
                               bpe_buf *out) {
#ifdef HAVE_ARGMIN_AVX2
    if (c && c->merge == merge_small_avx2 && filter_of(t, c)) return merge_window_avx2(t, c, p, len, out);
#endif
    return merge_any(t, c, p, len, out);
}

/* Binary min-heap of (rank << 32 | position) keys: lowest rank first, then leftmost. */
static inline void heap_down(uint64_t *h, size_t n, size_t i) {
    uint64_t v = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

static inline void heap_up(uint64_t *h, size_t i) {
    uint64_t v = h[i];
    while (i > 0) {
        size_t pa = (i - 1) / 2;
        if (h[pa] <= v) break;
        h[i] = h[pa];
        i = pa;
    }
    h[i] = v;
}

/* The same merge order in O(n log n): a linked list of parts and a heap of pair ranks with
   lazy deletion (an entry is live iff its position still starts a part whose current pair
   rank equals the entry's rank; ranks are unique per byte string, and a pair's bytes only
   grow, so a changed pair never gets its old rank back). */
static int merge_large(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len, bpe_buf *out) {
    int rc = -1;
    enum { STACK_N = 1024 };
    uint32_t s_nxt[STACK_N], s_prv[STACK_N], s_rk[STACK_N], s_tok[STACK_N];
    uint64_t s_heap[2 * STACK_N + 2]; /* each merge pops one entry and pushes <= 2: <= 2n */
    int on_stack = len <= STACK_N;
    uint32_t *nxt = on_stack ? s_nxt : malloc(len * sizeof *nxt);
    uint32_t *prv = on_stack ? s_prv : malloc(len * sizeof *prv);
    uint32_t *rk = on_stack ? s_rk : malloc(len * sizeof *rk);
    uint32_t *tok = on_stack ? s_tok : malloc(len * sizeof *tok);
    uint64_t *heap = on_stack ? s_heap : malloc((2 * len + 2) * sizeof *heap);
    size_t hn = 0, hcap = on_stack ? 2 * STACK_N + 2 : 2 * len + 2;
    if (!nxt || !prv || !rk || !tok || !heap) goto done;
    for (size_t i = 0; i < len; i++) {
        nxt[i] = (uint32_t)(i + 1);
        prv[i] = (uint32_t)(i - 1); /* prv[0] unused */
        tok[i] = t->byte_rank[p[i]];
        uint32_t r = i + 1 < len ? lookup2(t, p + i) : NONE;
        rk[i] = r;
        if (r != NONE) heap[hn++] = ((uint64_t)r << 32) | i;
    }
    for (size_t i = hn / 2; i-- > 0;) heap_down(heap, hn, i);
    while (hn) {
        uint64_t key = heap[0];
        heap[0] = heap[--hn];
        if (hn) heap_down(heap, hn, 0);
        uint32_t r = (uint32_t)(key >> 32), i = (uint32_t)key;
        if (tok[i] == NONE - 1 || rk[i] != r) continue; /* dead part or stale entry */
        uint32_t j = nxt[i], k = nxt[j];
        tok[i] = r;
        tok[j] = NONE - 1; /* dead */
        nxt[i] = k;
        if (k < len) prv[k] = i;
        uint32_t nr = (k < len) ? pair_rank(t, c, r, tok[k], p + i, nxt[k] - i) : NONE;
        rk[i] = nr;
        /* at most 2 pushes per pop: the heap never exceeds 2 * len entries */
        if (hn + 2 > hcap) {
            size_t nc = hcap * 2 + 4;
            if (on_stack) goto done; /* cannot happen (see above) */
            uint64_t *h2 = realloc(heap, nc * sizeof *h2);
            if (!h2) goto done;
            heap = h2;
            hcap = nc;
        }
        if (nr != NONE) { heap[hn] = ((uint64_t)nr << 32) | i; heap_up(heap, hn++); }
        if (i > 0) {
            uint32_t h = prv[i];
            uint32_t hr = pair_rank(t, c, tok[h], r, p + h, k - h);
            rk[h] = hr;
            if (hr != NONE) { heap[hn] = ((uint64_t)hr << 32) | h; heap_up(heap, hn++); }
        }
    }
    rc = 0;
    for (size_t i = 0; i < len; i = nxt[i]) {
        if (tok[i] == NONE) { rc = -2; goto done; }
        if (buf_push(out, tok[i])) { rc = -1; goto done; }
    }
done:
    if (!on_stack) { free(nxt); free(prv); free(rk); free(tok); free(heap); }
    return rc;
}

static int merge_any(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len, bpe_buf *out) {
    if (len == 0) return 0;
    if (len == 1) {
        uint32_t r = t->byte_rank[p[0]];
        if (r == NONE) return -2;
        return buf_push(out, r);
    }
    if (len <= SMALL_LOOP) return merge_small(t, c, p, len, out);
    return merge_large(t, c, p, len, out);
}

/* Long pieces, in windows. Lemma (the one rs-bpe's backtracking encoder rests on; it holds
   for tiktoken's merge order): a token sequence is the BPE encoding of its bytes iff every
   adjacent pair (a, b) is "compatible", i.e. BPE(bytes(a) + bytes(b)) == [a, b]. (If no pair
   boundary is ever crossed, each token's region merges exactly as it would alone, and the
   first crossing merge would also happen in the isolated pair; conversely.) So we encode a
   window, keep its tokens up to a cut well before the window's end (a prefix of an encoding
   is pairwise compatible), continue from the cut, and check the one new pair at every
   junction with the exact merge. If a junction is not compatible the cut was not a true
   boundary: back off (pop emitted tokens) and redo with a wider window; at the piece start
   there is no junction, so this always terminates, and every emitted adjacent pair has been
   verified. */
/* A window of chunk + margin bytes stays within merge_small (SMALL_LOOP). Measured on 1-4 MB
   pieces (random letters, random and real CJK, random "ab"): 128 + 16 encodes 14-22 % faster
   than 64 + 24 (less text merged twice), with no junction failures; a margin of 8 failed on
   "ab" text, whose windows then grow for the rest of the piece. merge_window_avx2's cost per
   merge hardly grows with the window, so it takes 224 + 16 (6.7 % of the text merged twice,
   not 11 %): 10**7 random letters (cl100k_base) 3-4 % faster than 128 + 16, still with no
   junction failures on 1 MB of random letters, "ab", "abc", CJK or concatenated words. */
#define LONG_CHUNK_DEFAULT 128
#define LONG_CHUNK_WIDE 224 /* with merge_window_avx2 */
#define LONG_MARGIN_DEFAULT 16
_Static_assert(LONG_CHUNK_DEFAULT + LONG_MARGIN_DEFAULT <= SMALL_LOOP, "a default window is merged by merge_small");
_Static_assert(LONG_CHUNK_WIDE + LONG_MARGIN_DEFAULT <= WINDOW_MAX, "a wide window is merged by merge_window_avx2");
size_t bpe_long_chunk = 0 /* the default for the merge at hand */, bpe_long_margin = LONG_MARGIN_DEFAULT; /* tests use tiny windows */
size_t bpe_long_failures = 0; /* statistics (racy across threads; tests only) */

static int compatible(const bpe_table *t, bpe_cache *c, uint32_t a, uint32_t b, bpe_buf *scratch,
                      int *res) {
    uint32_t la = t->dec_len[a], lb = t->dec_len[b];
    uint8_t tmp[2 * 512];
    const uint8_t *pa = t->dec_blob + t->dec_off[a], *pb = t->dec_blob + t->dec_off[b];
    uint8_t *buf = tmp;
    if (la + lb > sizeof tmp) { buf = malloc(la + lb); if (!buf) return -1; }
    memcpy(buf, pa, la);
    memcpy(buf + la, pb, lb);
    scratch->len = 0;
    int rc = merge_any(t, c, buf, la + lb, scratch);
    if (buf != tmp) free(buf);
    if (rc) return rc;
    *res = scratch->len == 2 && scratch->ids[0] == a && scratch->ids[1] == b;
    return 0;
}

static int encode_long(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len, bpe_buf *out) {
    bpe_buf win = {0}, scratch = {0};
    size_t base = out->len, pos = 0, extra = 0, failures = 0;
    size_t chunk = bpe_long_chunk, margin = bpe_long_margin;
    if (!chunk) {
        chunk = LONG_CHUNK_DEFAULT;
#ifdef HAVE_ARGMIN_AVX2
        if (c && c->merge == merge_small_avx2) chunk = LONG_CHUNK_WIDE;
#endif
    }
    size_t prev_pos = (size_t)-1, prev_wlen = 0; /* the window whose tokens are in win */
    uint64_t cache_key[64];
    uint8_t cache_val[64];
    memset(cache_key, 0xFF, sizeof cache_key);
    int rc = 0;
    while (pos < len) {
        size_t cut = chunk + extra;
        size_t wlen = len - pos;
        if (wlen > cut + margin) wlen = cut + margin; else cut = wlen;
        if (!(prev_pos != (size_t)-1 && wlen == prev_wlen &&
              memcmp(p + prev_pos, p + pos, wlen) == 0)) {
            win.len = 0;
            rc = wlen >= 2 && wlen <= WINDOW_MAX ? merge_window(t, c, p + pos, wlen, &win)
                                                 : merge_any(t, c, p + pos, wlen, &win);
            if (rc) goto done;
            prev_pos = pos;
            prev_wlen = wlen;
        }
        if (out->len > base) {
            uint32_t a = out->ids[out->len - 1], b = win.ids[0];
            uint64_t key = ((uint64_t)a << 32) | b;
            size_t slot = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 58);
            int ok;
            if (cache_key[slot] == key) ok = cache_val[slot];
            else {
                if ((rc = compatible(t, c, a, b, &scratch, &ok))) goto done;
                cache_key[slot] = key;
                cache_val[slot] = (uint8_t)ok;
            }
            if (!ok) {
                bpe_long_failures++;
                failures++;
                /* this text has long-range merges: use wider windows from now on */
                if (chunk < 1024) chunk *= 2;
                if (margin < 512) margin = margin ? margin * 2 : 8;
                /* back off at least `extra` bytes (doubling), never past the piece start */
                extra = extra ? extra * 2 : chunk;
                size_t back = 0;
                while (out->len > base && back < extra) {
                    back += t->dec_len[out->ids[out->len - 1]];
                    out->len--;
                }
                pos -= back;
                extra += back;
                if (extra > len) extra = len; /* a window never needs to exceed the piece */
                continue;
            }
        }
        /* take the window's tokens that end at or before the cut (at least one) */
        size_t end = 0, k = 0;
        while (k < win.len) {
            size_t l = t->dec_len[win.ids[k]];
            if (k > 0 && end + l > cut) break;
            end += l;
            k++;
        }
        if (buf_grow(out, k)) { rc = -1; goto done; }
        /* let the window shrink back after a success; once failures are frequent (which
           real vocabularies do not produce) keep it growing, which bounds the retries */
        if (extra && failures * 64 < len) extra /= 2;
        memcpy(out->ids + out->len, win.ids, k * sizeof *win.ids);
        out->len += k;
        pos += end;
    }
done:
    bpe_buf_free(&win);
    bpe_buf_free(&scratch);
    return rc;
}

size_t bpe_long_window_failures(void) { return bpe_long_failures; }

void bpe_set_long_window(size_t chunk, size_t margin) {
    bpe_long_chunk = chunk;
    bpe_long_margin = chunk ? margin : LONG_MARGIN_DEFAULT;
}

#define RUN_NOT 1 /* encode_run: not a run it encodes; the general path takes it */
#define RUN_MERGE_MAX 1024 /* encode_run: the longest prefix of a run it merges whole */
static int encode_run(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len, bpe_buf *out);

/* merge_small's result for a piece of 2 to 4 bytes that is not a token, written out: at most
   two merges happen before the only pair left is the whole piece, so the parts follow from
   the ranks of the piece's 2-byte substrings and, after a first merge, of the 3-byte one the
   merged part forms with its neighbour. The lowest rank merges first, the leftmost of equal
   ones, as in tiktoken. On random letters (o200k_base splits them into pieces of 2 to 4 bytes
   seven times in ten) merge_small's setup of links and padding cost more than these lookups. */
static inline int merge_tiny(const bpe_table *t, const uint8_t *p, size_t len, bpe_buf *out) {
    const uint32_t *br = t->byte_rank;
    uint32_t tok[4];
    size_t n;
    if (len == 2) {
        tok[0] = br[p[0]];
        tok[1] = br[p[1]];
        n = 2;
    } else if (len == 3) {
        uint32_t r0 = lookup2(t, p), r1 = lookup2(t, p + 1);
        n = 2;
        if (r0 != NONE && r0 <= r1) {
            tok[0] = r0;
            tok[1] = br[p[2]];
        } else if (r1 != NONE) {
            tok[0] = br[p[0]];
            tok[1] = r1;
        } else {
            tok[0] = br[p[0]];
            tok[1] = br[p[1]];
            tok[2] = br[p[2]];
            n = 3;
        }
    } else {
        uint32_t r0 = lookup2(t, p), r1 = lookup2(t, p + 1), r2 = lookup2(t, p + 2);
        uint32_t x, y; /* the two pairs after the first merge, left and right */
        n = 2;
        if (r0 <= r1 && r0 <= r2 && r0 != NONE) { /* parts p[0:2], p[2], p[3] */
            x = lookup(t, p, 3);
            if (x != NONE && x <= r2) { tok[0] = x; tok[1] = br[p[3]]; }
            else if (r2 != NONE) { tok[0] = r0; tok[1] = r2; }
            else { tok[0] = r0; tok[1] = br[p[2]]; tok[2] = br[p[3]]; n = 3; }
        } else if (r1 <= r2 && r1 != NONE) { /* p[0], p[1:3], p[3] */
            x = lookup(t, p, 3);
            y = lookup(t, p + 1, 3);
            if (x != NONE && x <= y) { tok[0] = x; tok[1] = br[p[3]]; }
            else if (y != NONE) { tok[0] = br[p[0]]; tok[1] = y; }
            else { tok[0] = br[p[0]]; tok[1] = r1; tok[2] = br[p[3]]; n = 3; }
        } else if (r2 != NONE) { /* p[0], p[1], p[2:4] */
            y = lookup(t, p + 1, 3);
            if (r0 != NONE && r0 <= y) { tok[0] = r0; tok[1] = r2; }
            else if (y != NONE) { tok[0] = br[p[0]]; tok[1] = y; }
            else { tok[0] = br[p[0]]; tok[1] = br[p[1]]; tok[2] = r2; n = 3; }
        } else {
            for (size_t i = 0; i < 4; i++) tok[i] = br[p[i]];
            n = 4;
        }
    }
    if (buf_grow(out, n)) return -1;
    for (size_t i = 0; i < n; i++) {
        if (tok[i] == NONE) return -2;
        out->ids[out->len++] = tok[i];
    }
    return 0;
}

static inline int encode_piece(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len,
                               bpe_buf *out) {
    if (len == 1) {
        uint32_t r = t->byte_rank[p[0]];
        if (r == NONE) return -2;
        return buf_push(out, r);
    }
    if (len == 0) return 0;
    uint32_t r = lookup(t, p, len);
    if (r != NONE) return buf_push(out, r);
    if (len <= 4) return merge_tiny(t, p, len, out);
    if (len <= SMALL_LOOP) return merge_small(t, c, p, len, out);
    /* longer pieces go through encode_long's windows (runs of one byte first through
       encode_run): merged whole (merge_large, which hashes ever longer tokens) they took
       100-150 ns a byte over 300-1,000 bytes of random letters or of a run with another last
       byte, tiktoken's speed; the windows take 25-40 (1,000 random letters: 112 us -> 38,
       tiktoken 131-194) */
    if (len > PC_RUN_MAX && p[0] == p[len - 1]) {
        int rc = encode_run(t, c, p, len, out);
        if (rc != RUN_NOT) return rc;
    }
    return encode_long(t, c, p, len, out);
}

int bpe_encode_piece(const bpe_table *t, const uint8_t *p, size_t len, bpe_buf *out) {
    return encode_piece(t, cache_for(t), p, len, out);
}

int bpe_encode_spans(const bpe_table *t, const uint8_t *data, const uint32_t *starts,
                     const uint32_t *ends, size_t npieces, bpe_buf *out) {
    bpe_cache *c = cache_for(t);
    for (size_t i = 0; i < npieces; i++) {
        if (ends[i] < starts[i]) return -3;
        int rc = encode_piece(t, c, data + starts[i], ends[i] - starts[i], out);
        if (rc) return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ fused loop */

/* The piece p[0:len] (1 <= len <= 16) as two zero-padded words; reads only p[0:len]. */
static inline void pc_key_of(const uint8_t *p, size_t len, uint64_t *k0, uint64_t *k1) {
    if (len > 8) {
        *k0 = ld64(p);
        *k1 = ld64(p + len - 8) >> (8 * (16 - len));
    } else {
        *k0 = head_of(p, len);
        *k1 = 0;
    }
}

/* The cache is 2-way set associative: a set is one 64-byte line, the most recently used entry
   first. */
static inline uint64_t pc_hash(uint64_t k0, uint64_t k1, size_t len) {
    return (k0 ^ (k1 * 0xbf58476d1ce4e5b9ull) ^ len) * 0x9E3779B97F4A7C15ull;
}

static inline pc_ent *pc_set_of(const bpe_cache *c, uint64_t k0, uint64_t k1, size_t len) {
    return &c->pieces[(pc_hash(k0, k1, len) >> (65 - c->pc_bits)) << 1];
}

/* A new piece cache starts with the vocabulary's tokens of up to PC_MAXLEN bytes, each the
   piece of its own rank: a piece that is a token encodes to that token alone (encode_piece
   looks a piece up whole before it merges, as tiktoken does), so the entry is what its first
   sight would have stored. On new text about half the first sights are such tokens (cl100k,
   English and code); each cost the token table's lookup chain (the filter, the small table,
   the table, and past 8 bytes the token's bytes: 66-189 ns a piece measured, against ~17 for
   a hit). At most half the entries are seeded, the lowest ranks (the commonest tokens) when
   the vocabulary has more; they go in from the highest rank down, so that where a set gets
   more than two, the lowest-ranked stay. Pieces learnt later displace them as they displace
   each other. Tests turn it off (bpe_set_piece_seed) to check that the ids are the same. */
static int piece_seed_on = 1;
static size_t piece_seeds; /* entries seeded since the process started (statistics) */

int bpe_set_piece_seed(int on) { return __atomic_exchange_n(&piece_seed_on, on ? 1 : 0, __ATOMIC_RELAXED); }

size_t bpe_piece_seeds(void) { return __atomic_load_n(&piece_seeds, __ATOMIC_RELAXED); }

/* The length of rank r's token if the piece cache can hold it as a piece, else 0. */
static inline uint32_t seed_len(const bpe_table *t, uint32_t r) {
    uint32_t len = t->dec_len[r];
    return len != NONE && len <= PC_MAXLEN ? len : 0;
}

static void seed_pieces(const bpe_table *t, bpe_cache *c) {
    if (!__atomic_load_n(&piece_seed_on, __ATOMIC_RELAXED) || !t->dec_len) return;
    size_t budget = ((size_t)1 << c->pc_bits) / 2, count = 0;
    uint32_t end = t->dec_n; /* ranks below end are seeded */
    for (uint32_t r = 0; r < t->dec_n; r++) {
        if (!seed_len(t, r)) continue;
        if (++count > budget) {
            end = r;
            count--;
            break;
        }
    }
    /* in groups: the sets of a group are asked for before any is written (random lines of a
       table larger than the CPU's caches; one at a time, o200k_base's 196K tokens took 4 ms) */
    enum { GROUP = 16 };
    pc_ent ents[GROUP], *sets[GROUP];
    for (uint32_t r = end; r > 0;) {
        size_t g = 0;
        while (r > 0 && g < GROUP) {
            uint32_t q = --r, len = seed_len(t, q);
            if (!len) continue;
            uint64_t k0, k1;
            pc_key_of(t->dec_blob + t->dec_off[q], len, &k0, &k1);
            ents[g] = (pc_ent){k0, k1, {q, 0, 0}, (uint8_t)len, 1, {0, 0}};
            sets[g] = pc_set_of(c, k0, k1, len);
            __builtin_prefetch(sets[g], 1);
            g++;
        }
        for (size_t i = 0; i < g; i++) { /* in rank order, highest first, as above */
            sets[i][1] = sets[i][0];
            sets[i][0] = ents[i];
        }
    }
    __atomic_add_fetch(&piece_seeds, count, __ATOMIC_RELAXED);
}

/* Encodes one piece through the cache (cache may be NULL). */
static int store_alloc(const bpe_cache *c, piece_store *ps) {
    ps->cap = (uint32_t)(sizeof(pc_ent) << (c->pc_bits - PS_BITS_LESS));
    ps->mask = (1u << (c->pc_bits - PS_BITS_LESS)) - 1;
    ps->slots = calloc((size_t)ps->mask + 1, sizeof *ps->slots);
    ps->arena = malloc(ps->cap);
    if (!ps->slots || !ps->arena) {
        free(ps->slots);
        free(ps->arena);
        memset(ps, 0, sizeof *ps);
        return -1;
    }
    ps->epoch = 1;
    return 0;
}

static inline uint64_t store_hash(const uint8_t *p, size_t len) {
    return hash_key(head_of(p, len), p, len);
}

/* Appends the ids of p[0:len] if the store has them: 1, else 0 (-1 out of memory). */
static int store_get(piece_store *ps, const uint8_t *p, size_t len, uint64_t h, bpe_buf *out) {
    if (!ps->slots) return 0;
    uint32_t tag = (uint32_t)(h >> 32) | 1u;
    for (uint32_t i = (uint32_t)h & ps->mask;; i = (i + 1) & ps->mask) {
        ps_slot sl = ps->slots[i];
        if (!sl.tag) return 0;
        const uint8_t *e = ps->arena + sl.off;
        if (sl.tag == tag && e[0] == len && memcmp(e + 4, p, len) == 0) {
            size_t ntok = e[1];
            if (buf_grow(out, ntok)) return -1;
            memcpy(out->ids + out->len, e + 4 + ((len + 3) & ~(size_t)3), ntok * sizeof *out->ids);
            out->len += ntok;
            return 1;
        }
    }
}

/* Adds p[0:len] -> ids[0:ntok] (known absent): the entry's offset in the arena, valid in the
   store's current epoch, or -1 when not added. h: the piece's store_hash, indexing the entry
   for store_get; 0 for a short piece, which is found only through its hint in the piece
   cache (it takes no slot: on text that is new throughout, such as random letters, most
   pieces are put once and never asked for, and the slot was a random write into a table
   larger than L2). */
static int64_t store_put(const bpe_cache *c, piece_store *ps, const uint8_t *p, size_t len,
                         uint64_t h, const uint32_t *ids, size_t ntok) {
    if (!ps->slots && store_alloc(c, ps)) return -1;
    size_t need = 4 + ((len + 3) & ~(size_t)3) + 4 * ntok;
    if (ntok > 255 || len > PS_MAXLEN || need > ps->cap) return -1;
    if (ps->used + need > ps->cap || (ps->count + 1) * 2 > ps->mask + 1) {
        /* full: a new epoch */
        memset(ps->slots, 0, ((size_t)ps->mask + 1) * sizeof *ps->slots);
        ps->used = ps->count = 0;
        ps->epoch++;
    }
    const uint32_t off = ps->used;
    uint8_t *e = ps->arena + off;
    e[0] = (uint8_t)len;
    e[1] = (uint8_t)ntok;
    e[2] = e[3] = 0;
    memcpy(e + 4, p, len);
    memcpy(e + 4 + ((len + 3) & ~(size_t)3), ids, ntok * sizeof *ids);
    ps->used += (uint32_t)need;
    if (h) {
        uint32_t i = (uint32_t)h & ps->mask;
        while (ps->slots[i].tag) i = (i + 1) & ps->mask;
        ps->slots[i].tag = (uint32_t)(h >> 32) | 1u;
        ps->slots[i].off = off;
        ps->count++;
    }
    return off;
}

/* Encodes p[0:len] (len <= PS_MAXLEN) through the long-piece store: 0 if the store had it,
   1 if it was encoded, or an error (< 0). h: store_hash(p, len), or 0 (not known yet). */
static int store_encode(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len,
                        bpe_buf *out, uint64_t h) {
    if (!h) h = store_hash(p, len);
    int r = store_get(&c->store, p, len, h, out);
    if (r) return r < 0 ? -1 : 0;
    size_t before = out->len;
    int rc = encode_piece(t, c, p, len, out);
    if (rc) return rc;
    store_put(c, &c->store, p, len, h, out->ids + before, out->len - before);
    return 1;
}

/* Encodes p[0:len] through the piece cache and the store: 0 if one of them had it, 1 if it
   was encoded, or an error (< 0). set, k0, k1: the piece's set and key if the caller has them
   (set NULL: not); store_h: a long piece's store_hash if the caller has it, else 0. */
static inline int encode_piece_cached(const bpe_table *t, bpe_cache *c, const uint8_t *p,
                                      size_t len, bpe_buf *out, pc_ent *set, uint64_t k0,
                                      uint64_t k1, uint64_t store_h) {
    if (!c || len == 0) return encode_piece(t, c, p, len, out);
    int rc;
    if (set) {
        /* known */
    } else if (len <= PC_MAXLEN) {
        pc_key_of(p, len, &k0, &k1);
    } else if (len <= PC_RUN_MAX && p[0] == p[len - 1] && memcmp(p, p + 1, len - 1) == 0) {
        /* a run of one byte (indentation, rules): the byte and the length are the piece;
           such entries have len > PC_MAXLEN, so they never equal a short piece's */
        k0 = p[0];
        k1 = 0;
    } else if (len <= PS_MAXLEN) {
        return store_encode(t, c, p, len, out, store_h);
    } else {
        return (rc = encode_piece(t, c, p, len, out)) ? rc : 1;
    }
    pc_ent *e = set ? set : pc_set_of(c, k0, k1, len);
    if (out->cap - out->len < PC_TOK && buf_grow(out, PC_TOK)) return -1;
    if (e[0].k0 == k0 && e[0].k1 == k1 && e[0].len == len) {
        memcpy(out->ids + out->len, e[0].tok, sizeof e[0].tok);
        out->len += e[0].n;
        return 0;
    }
    if (e[1].k0 == k0 && e[1].k1 == k1 && e[1].len == len) {
        memcpy(out->ids + out->len, e[1].tok, sizeof e[1].tok);
        out->len += e[1].n;
        pc_ent hit = e[1];
        e[1] = e[0];
        e[0] = hit;
        return 0;
    }
    /* A short piece of more than PC_TOK tokens lives in the store; a hint in its set says where
       (len PC_IN_STORE, n the piece's length, tok[0] the entry's offset in the arena, tok[1]
       and tok[2] the store's epoch then), so that such a piece costs no hashing and probing
       of the store while the store keeps it. */
    pc_ent *hint = NULL;
    if (len <= PC_MAXLEN) {
        for (int w = 0; w < 2; w++) {
            if (e[w].len != PC_IN_STORE || e[w].n != len || e[w].k0 != k0 || e[w].k1 != k1) continue;
            hint = &e[w];
            uint64_t epoch = hint->tok[1] | (uint64_t)hint->tok[2] << 32;
            if (epoch != c->store.epoch || !epoch) break; /* the store has been emptied since */
            const uint8_t *a = c->store.arena + hint->tok[0];
            size_t ntok = a[1];
            if (buf_grow(out, ntok)) return -1;
            memcpy(out->ids + out->len, a + 4 + ((len + 3) & ~(size_t)3), ntok * sizeof *out->ids);
            out->len += ntok;
            if (w == 1) {
                pc_ent tmp = e[1];
                e[1] = e[0];
                e[0] = tmp;
            }
            return 0;
        }
    }
    size_t before = out->len;
    if ((rc = encode_piece(t, c, p, len, out))) return rc;
    size_t n = out->len - before;
    if (n <= PC_TOK) {
        e[1] = e[0];
        e[0].k0 = k0;
        e[0].k1 = k1;
        e[0].len = (uint8_t)len;
        e[0].n = (uint8_t)n;
        memcpy(e[0].tok, out->ids + before, n * sizeof *e[0].tok);
        return 1;
    }
    if (len > PC_MAXLEN) return 1; /* a long run of many tokens: not cached */
    int64_t off = store_put(c, &c->store, p, len, 0, out->ids + before, n); /* found by its hint */
    if (!hint) {
        e[1] = e[0];
        hint = &e[0];
    }
    hint->k0 = k0;
    hint->k1 = k1;
    hint->len = PC_IN_STORE;
    hint->n = (uint8_t)len;
    uint64_t epoch = off < 0 ? 0 : c->store.epoch; /* epoch 0: no entry */
    hint->tok[0] = off < 0 ? 0 : (uint32_t)off;
    hint->tok[1] = (uint32_t)epoch;
    hint->tok[2] = (uint32_t)(epoch >> 32);
    return 1;
}

/* A run of one byte longer than PC_RUN_MAX (indentation, rules, padding).  Merged whole it
   cost 45-200 ns a byte between 300 and 100,000 bytes (merge_large hashes ever longer tokens;
   encode_long's windows fail at their junctions and grow): 5,000 spaces took 1.4 ms, more
   than tiktoken's 1.3.  Such a run encodes as k copies of one period token P followed by the
   encoding of its last r bytes, maxlen <= r < maxlen + |P|.  That is a guess, used only once
   encode_long's lemma confirms it (a token sequence is the encoding of its bytes iff each
   adjacent pair (a, b) is compatible: the encoding of bytes(a) + bytes(b) is [a, b]): the
   pairs inside the tail are an encoding's own, and the two others, (P, P) and (P, the tail's
   first token), are checked as encode_long checks a junction (compatible; once per byte value
   and tail token, per thread: the cache's runs[]).  P is the first token of the encoding of 2 maxlen bytes of the run.
   Returns 0 (out has the ids), an error (< 0), or RUN_NOT: the guess failed or does not
   apply, out unchanged. */
static size_t run_guess = 0, runs_taken = 0, runs_declined = 0; /* tests: see bpe.h */

void bpe_set_run_guess(size_t n) { __atomic_store_n(&run_guess, n, __ATOMIC_RELAXED); }

void bpe_run_stats(size_t *taken, size_t *declined) {
    *taken = __atomic_load_n(&runs_taken, __ATOMIC_RELAXED);
    *declined = __atomic_load_n(&runs_declined, __ATOMIC_RELAXED);
}

static int encode_run(const bpe_table *t, bpe_cache *c, const uint8_t *p, size_t len, bpe_buf *out) {
    const size_t guess = __atomic_load_n(&run_guess, __ATOMIC_RELAXED), lim = guess ? guess : t->maxlen;
    /* the period is found by merging 2 lim <= RUN_MERGE_MAX bytes of the run, the tail through
       the piece cache (at most PC_RUN_MAX bytes) or merged whole: none comes back here */
    if (!c || lim == 0 || len < 2 * lim || 2 * lim > RUN_MERGE_MAX || memcmp(p, p + 1, len - 1) != 0)
        return RUN_NOT;
    run_info *ri = &c->runs[p[0]];
    bpe_buf tmp = {0};
    int rc, ok;
    if (ri->state == RUN_UNKNOWN) {
        if ((rc = merge_any(t, c, p, 2 * lim, &tmp))) goto done;
        const uint32_t P = tmp.ids[0];
        if ((rc = compatible(t, c, P, P, &tmp, &ok))) goto done;
        ri->state = ok ? RUN_PERIODIC : RUN_DECLINE;
        ri->tok = P;
        ri->period = (uint16_t)t->dec_len[P];
        ri->tail_ok = 0;
    }
    /* with the default guess (lim = maxlen >= |P|) k >= 1 always; a guess set for tests
       (bpe_set_run_guess) may name a period too long for this run */
    rc = RUN_NOT;
    if (ri->state != RUN_PERIODIC || (size_t)ri->period > len - lim) goto done;
    const size_t pl = ri->period, k = (len - lim) / pl, r = len - k * pl;
    tmp.len = 0;
    rc = r <= PC_RUN_MAX ? encode_piece_cached(t, c, p, r, &tmp, NULL, 0, 0, 0) : merge_any(t, c, p, r, &tmp);
    if (rc < 0) goto done;
    const uint32_t tail0 = tmp.ids[0];
    if (!ri->tail_ok || ri->tail0 != tail0) {
        bpe_buf pair = {0};
        rc = compatible(t, c, ri->tok, tail0, &pair, &ok);
        bpe_buf_free(&pair);
        if (rc) goto done;
        if (!ok) {
            rc = RUN_NOT;
            goto done;
        }
        ri->tail_ok = 1;
        ri->tail0 = tail0;
    }
    if (buf_grow(out, k + tmp.len)) {
        rc = -1;
        goto done;
    }
    for (size_t i = 0; i < k; i++) out->ids[out->len++] = ri->tok;
    memcpy(out->ids + out->len, tmp.ids, tmp.len * sizeof *tmp.ids);
    out->len += tmp.len;
    rc = 0;
done:
    bpe_buf_free(&tmp);
    __atomic_add_fetch(rc == RUN_NOT ? &runs_declined : &runs_taken, 1, __ATOMIC_RELAXED);
    return rc;
}

/* PC_MASK[len]: the bits of two little-endian words that hold a len-byte piece, so that a
   piece's key is two unconditional loads and two ANDs (no branch on its length). */
#define PC_M(n) ((((uint64_t)1 << (4 * (n))) << (4 * (n))) - 1) /* n <= 8; PC_M(8) = ~0 */
#define PC_MASKS(n) { (n) >= 8 ? ~(uint64_t)0 : PC_M((n) & 7), (n) <= 8 ? 0 : PC_M((n) - 8) }
static const uint64_t PC_MASK[PC_MAXLEN + 1][2] = {
    PC_MASKS(0), PC_MASKS(1), PC_MASKS(2), PC_MASKS(3), PC_MASKS(4), PC_MASKS(5), PC_MASKS(6),
    PC_MASKS(7), PC_MASKS(8), PC_MASKS(9), PC_MASKS(10), PC_MASKS(11), PC_MASKS(12),
    PC_MASKS(13), PC_MASKS(14), PC_MASKS(15), PC_MASKS(16),
};

static inline void prefetch(const void *addr) {
#if defined(__x86_64__) && defined(__GNUC__)
    /* gcc 12 -O3 drops __builtin_prefetch here (measured): the instruction itself */
    __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)addr));
#else
    __builtin_prefetch(addr);
#endif
}

/* The piece cache is larger than the CPU's caches, so the fused loop takes the pieces in
   batches of PC_BATCH and works on two batches at once: for the next batch it computes each
   piece's key and set and asks for the set's line (stage 1); for this batch, the lines having
   arrived meanwhile, it emits the pieces in order (stage 3): a hit is copied out of its set, a
   miss is encoded by encode_piece_cached (which probes again: a piece may have been learnt by
   an earlier one of the batch). When the batch before had a miss, a stage 2 runs first: it
   asks for the vocabulary lines each missed piece's encoding will read, so that misses in a
   row do not wait for memory one after another; on recurring text (nearly every piece a hit)
   it is skipped. Each stage is a short loop of its own: one loop doing all of them kept more
   values alive than there are registers. */
#define PC_BATCH 32
#define PREFETCH_SUBSTR_MAX 8 /* first sights up to this length prefetch their substrings */
/* The set of a piece the cache cannot hold (longer than 16 bytes, or too near the end of the
   text to read 16 bytes): empty entries, which match no piece (len 0), so that stage 3 tests
   no pointer; never written. */
static pc_ent PC_NO_SET[2] __attribute__((aligned(64)));
typedef struct pc_probe {
    pc_ent *set; /* PC_NO_SET: not a short piece with 16 readable bytes */
    uint64_t k0, k1; /* a long piece (set PC_NO_SET, len > PC_MAXLEN): k0 its store_hash */
    uint64_t len;
} pc_probe;
_Static_assert(offsetof(pc_probe, k1) == offsetof(pc_probe, k0) + 8 &&
               offsetof(pc_ent, k1) == offsetof(pc_ent, k0) + 8, "keys are 16 adjacent bytes");

/* A piece's value in the cache: pc_ent from tok on. */
typedef struct pc_val {
    uint32_t tok[PC_TOK];
    uint8_t len, n, pad_[2];
} pc_val;
_Static_assert(sizeof(pc_val) == sizeof(pc_ent) - offsetof(pc_ent, tok), "pc_val is pc_ent's tail");

/* Stage 1 for a long piece (PC_MAXLEN < len): its store_hash (0 if the store does not take
   it), and the store's slot for it asked for: a long piece costs two lines of the store (the
   slot, then the entry), which stage 3 would otherwise wait for one after the other. */
static __attribute__((noinline)) uint64_t probe_long(const piece_store *ps, const uint8_t *p,
                                                     size_t len) {
    /* runs of one byte are in the piece cache (PC_RUN_MAX), not the store: no hash for what
       looks like one (a piece that is not one gets its hash in stage 3) */
    if (len > PS_MAXLEN || (p[0] == p[1] && p[0] == p[len - 1])) return 0;
    uint64_t h = store_hash(p, len);
    if (ps->slots) prefetch(&ps->slots[(uint32_t)h & ps->mask]);
    return h;
}

/* Stage 1 for piece q; check_end: whether its 16 bytes may pass the end of the text; a long
   piece's q is added to longs[0:*nlong]. */
static inline __attribute__((always_inline)) void probe_one(
    pc_ent *pieces, unsigned shift, uint8_t *longs, size_t *nlong, const uint8_t *base,
    const uint32_t *st, const uint32_t *en,
    size_t q, const uint8_t *end, int check_end, pc_probe *restrict r) {
    const uint8_t *p = base + st[q];
    size_t len = en[q] - st[q];
    r[q].len = len;
    if (len > PC_MAXLEN || (check_end && p + 16 > end)) {
        r[q].set = PC_NO_SET;
        /* a defined key: stage 3 compares it with PC_NO_SET's entries (which only an empty
           piece matches, and copies no id for) */
        r[q].k0 = r[q].k1 = 0;
        if (len > PC_MAXLEN) longs[(*nlong)++] = (uint8_t)q;
        return;
    }
    uint64_t k0 = ld64(p) & PC_MASK[len][0], k1 = ld64(p + 8) & PC_MASK[len][1];
    pc_ent *set = &pieces[(pc_hash(k0, k1, len) >> shift) << 1];
    prefetch(set);
    r[q].k0 = k0;
    r[q].k1 = k1;
    r[q].set = set;
}

/* Stage 1 for the m pieces st[0:m], en[0:m]. */
static __attribute__((noinline)) void probe_batch(const bpe_cache *c, const uint8_t *base, const uint32_t *st,
                               const uint32_t *en, size_t m, const uint8_t *end,
                               pc_probe *restrict r, uint8_t *restrict longs, size_t *nlong_out) {
    /* the cache's fields in locals: the stores to r could alias them */
    pc_ent *pieces = c->pieces;
    unsigned shift = 65 - c->pc_bits; /* the set's index (the top pc_bits - 1 bits) */
    size_t nlong = 0;
    /* 16 bytes are read at each piece start: only a batch near the end of the text needs the
       check (pieces are in order, so the last start says for all) */
    if (m && base + st[m - 1] + 16 > end)
        for (size_t q = 0; q < m; q++) probe_one(pieces, shift, longs, &nlong, base, st, en, q, end, 1, r);
    else
        for (size_t q = 0; q < m; q++) probe_one(pieces, shift, longs, &nlong, base, st, en, q, end, 0, r);
    /* long pieces in a loop of their own: a call in the loop above cost its registers */
    for (size_t j = 0; j < nlong; j++) {
        size_t q = longs[j];
        r[q].k0 = probe_long(&c->store, base + st[q], r[q].len);
    }
    *nlong_out = nlong;
}

static inline int pc_same(const pc_ent *e, uint64_t k0, uint64_t k1, size_t len) {
    return ((e->k0 ^ k0) | (e->k1 ^ k1) | (e->len ^ len)) == 0;
}

/* pc_same against a probe's key (k0, k1 adjacent in pc_probe and in pc_ent): one 16-byte
   compare where SSE2 is there. */
static inline int pc_same_probe(const pc_ent *e, const pc_probe *r) {
#if defined(__SSE2__)
    __m128i a = _mm_loadu_si128((const __m128i *)&e->k0), b = _mm_loadu_si128((const __m128i *)&r->k0);
    return (_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) == 0xFFFF) & (e->len == r->len);
#else
    return pc_same(e, r->k0, r->k1, r->len);
#endif
}

static inline uint64_t short_slot(const bpe_table *t, uint32_t key) {
    return ((uint64_t)key * 0x9E3779B97F4A7C15ull) >> t->short_shift;
}

/* Asks for the vocabulary lines a first sight of p[0:len] (2 <= len <= 16) will read: its
   whole-piece lookup, and for a short piece the 3- and 4-byte tables at every offset, where
   the merge loop looks up the pairs it forms from the 2-byte tokens (on text seen for the
   first time, such as random letters, the merge waited for these lines one after another).
   Reads up to p + 16, which stage 1 checked is inside the text. */
static inline void prefetch_miss(const bpe_table *t, const uint8_t *p, size_t len) {
    if (len >= 5) {
        uint64_t h = hash_key(head_of(p, len), p, len);
        prefetch(&t->bloom[(h >> 6) & BLOOM_MASK]);
        prefetch(&t->hot[h >> t->hot_shift]);
        prefetch(&t->slots[h >> t->shift]);
    }
    if (len > PREFETCH_SUBSTR_MAX) return;
    for (size_t i = 0; i + 3 <= len; i++) {
        prefetch(&t->short3[short_slot(t, ld32(p + i) & 0xFFFFFF)]);
        if (i + 4 <= len) prefetch(&t->short4[short_slot(t, ld32(p + i))]);
    }
}

/* Stage 2: asks for the vocabulary lines of the pieces of the batch that the cache does not
   have. */
static inline void prefetch_batch(const bpe_table *t, const pc_probe *r, const uint8_t *base,
                                  const uint32_t *st, size_t m) {
    for (size_t q = 0; q < m; q++) {
        const pc_ent *e = r[q].set;
        if (e != PC_NO_SET && !pc_same_probe(&e[0], &r[q]) && !pc_same_probe(&e[1], &r[q]))
            prefetch_miss(t, base + st[q], r[q].len);
    }
}

/* For the long pieces of a batch (longs[0:nlong]), whose store slots stage 1 asked for a batch
   ago: the store entry a slot points to, asked for before stage 3 reads it. */
static inline void prefetch_long_entries(const piece_store *ps, const pc_probe *r,
                                         const uint8_t *longs, size_t nlong) {
    if (!ps->slots) return;
    for (size_t j = 0; j < nlong; j++) {
        uint64_t h = r[longs[j]].k0;
        ps_slot sl = ps->slots[(uint32_t)h & ps->mask];
        if (h && sl.tag == ((uint32_t)(h >> 32) | 1u)) prefetch(ps->arena + sl.off);
    }
}

/* Stage 3 for pieces b0 .. b0 + m - 1 of the window (probes r): hits copied out of their sets
   (the found entry becomes its set's first), misses encoded; *misses counts the pieces that
   were in neither the cache nor the store. 0, or 1 when the ids (with *counted, those already
   counted away) pass limit at piece *stop, or an error (< 0). Inlined twice, for the common
   call (count_only 0, no limit) without the checks. */
static inline __attribute__((always_inline)) int emit_batch(
    const bpe_table *t, bpe_cache *cache, const uint8_t *base, const uint32_t *st,
    const uint32_t *en, size_t b0, size_t m, size_t k, const pc_probe *r, bpe_buf *out,
    int count_only, size_t limit, size_t *counted, size_t *stop, size_t *misses) {
    /* the output in locals: stores to ids may alias st and en (all uint32_t), and out's
       fields would be reloaded after each */
    uint32_t *ids = out->ids;
    size_t olen = out->len, cnt = *counted;
    for (size_t q = 0; q < m; q++) {
        pc_ent *e = r[q].set;
        /* a hit copies 16 bytes, the ids and what follows them (one uint32_t of slack) */
        if (pc_same_probe(&e[0], &r[q])) {
            memcpy(ids + olen, e[0].tok, sizeof(pc_val));
            olen += e[0].n;
        } else if (pc_same_probe(&e[1], &r[q])) {
            memcpy(ids + olen, e[1].tok, sizeof(pc_val));
            olen += e[1].n;
            pc_ent hit = e[1];
            e[1] = e[0];
            e[0] = hit;
        } else {
            size_t i = b0 + q;
            out->len = olen;
            size_t len = r[q].len;
            int rc = encode_piece_cached(t, cache, base + st[i], len, out,
                                         e == PC_NO_SET ? NULL : e, r[q].k0, r[q].k1,
                                         len > PC_MAXLEN ? r[q].k0 : 0);
            if (rc < 0) return rc;
            *misses += (size_t)rc;
            if (buf_grow(out, PC_TOK * (k - i) + 1)) return -1;
            ids = out->ids;
            olen = out->len;
        }
        if (count_only) { cnt += olen; olen = 0; }
        if (cnt + olen > limit) {
            out->len = olen;
            *counted = cnt;
            *stop = b0 + q;
            return 1;
        }
    }
    out->len = olen;
    *counted = cnt;
    return 0;
}

/* Stage 3 without a cache: every piece encoded. */
static int emit_uncached(const bpe_table *t, const uint8_t *base, const uint32_t *st,
                         const uint32_t *en, size_t b0, size_t m, bpe_buf *out, int count_only,
                         size_t limit, size_t *counted, size_t *stop) {
    for (size_t q = 0; q < m; q++) {
        size_t i = b0 + q, before = out->len;
        int rc = encode_piece(t, NULL, base + st[i], en[i] - st[i], out);
        if (rc) return rc;
        if (count_only) { *counted += out->len - before; out->len = before; }
        if (*counted + out->len > limit) {
            *stop = i;
            return 1;
        }
    }
    return 0;
}

/* bpe_encode_scan; st/en (room for n entries each) may be given by the caller, else they are
   allocated (and widened for pieces longer than a window). */
static int encode_scan(const bpe_table *t, const void *dfa, const uint8_t *data, size_t n,
                       int flags, bpe_buf *out, size_t *consumed, int count_only, size_t limit,
                       uint32_t *st_given, uint32_t *en_given) {
    const scantok_dfa *d = (const scantok_dfa *)dfa;
    int want_partial = flags & SCANTOK_PARTIAL;
    int base_flags = flags & ~SCANTOK_PARTIAL;
    int own = !st_given;
    size_t W = !own || n < WINDOW0 ? (n ? n : 1) : WINDOW0, pos = 0, counted = 0;
    uint32_t *st = own ? malloc(W * sizeof *st) : st_given;
    uint32_t *en = own ? malloc(W * sizeof *en) : en_given;
    bpe_cache *cache = cache_for(t);
    int plain = !count_only && limit == SIZE_MAX;
    size_t stop = 0;
    size_t misses = 1; /* misses in the batch before: the first batch gets stage 2 */
    int rc = -1;
    if (!st || !en) goto done;
    rc = 0;
    if (plain) buf_reserve_large(out, n);
    while (pos < n) {
        size_t rem = n - pos;
        size_t win = rem < W ? rem : W;
        int last = win == rem;
        int fl = base_flags | ((!last || want_partial) ? SCANTOK_PARTIAL : 0);
        size_t cons = win;
        size_t k = scantok_scan(d, data + pos, win, fl, st, en, &cons);
        if (!(fl & SCANTOK_PARTIAL)) cons = win;
        const uint8_t *base = data + pos;
        /* room for PC_TOK ids per piece and one more, so that a cache hit stores its 16
           bytes without a check */
        if (buf_grow(out, PC_TOK * k + 1)) { rc = -1; goto done; }
        const uint8_t *end = data + n;
        while (k && en[k - 1] > cons) k--; /* defensive: only final pieces */
        pc_probe pr[2][PC_BATCH];
        uint8_t longs[2][PC_BATCH];
        size_t nlong[2] = {0, 0};
        if (cache) probe_batch(cache, base, st, en, k < PC_BATCH ? k : PC_BATCH, end, pr[0], longs[0], &nlong[0]);
        for (size_t b0 = 0, side = 0; b0 < k; b0 += PC_BATCH, side ^= 1) {
            size_t m = k - b0 < PC_BATCH ? k - b0 : PC_BATCH, next = b0 + m;
            int r;
            if (cache) {
                if (next < k)
                    probe_batch(cache, base, st + next, en + next,
                                k - next < PC_BATCH ? k - next : PC_BATCH, end, pr[side ^ 1],
                                longs[side ^ 1], &nlong[side ^ 1]);
                if (misses) prefetch_batch(t, pr[side], base, st + b0, m);
                if (nlong[side]) prefetch_long_entries(&cache->store, pr[side], longs[side], nlong[side]);
                misses = 0;
                r = plain ? emit_batch(t, cache, base, st, en, b0, m, k, pr[side], out, 0, SIZE_MAX, &counted, &stop, &misses)
                          : emit_batch(t, cache, base, st, en, b0, m, k, pr[side], out, count_only, limit, &counted, &stop, &misses);
            } else {
                r = emit_uncached(t, base, st, en, b0, m, out, count_only, limit, &counted, &stop);
            }
            if (r < 0) { rc = r; goto done; }
            if (r > 0) {
                pos += en[stop];
                goto done;
            }
        }
        pos += cons;
        if (last) break;
        if (cons == 0) {
            /* one piece longer than the window: widen it (pieces stay exact, the rescans add up
               to at most twice the piece) */
            if (W >= ((size_t)1 << 31) || !own) { rc = -4; goto done; }
            W *= 2;
            uint32_t *s2 = realloc(st, W * sizeof *st);
            if (!s2) { rc = -1; goto done; }
            st = s2;
            uint32_t *e2 = realloc(en, W * sizeof *en);
            if (!e2) { rc = -1; goto done; }
            en = e2;
        }
    }
done:
    if (count_only) out->len += counted;
    if (consumed) *consumed = pos;
    if (own) {
        free(st);
        free(en);
    }
    return rc;
}

int bpe_encode_scan(const bpe_table *t, const void *dfa, const uint8_t *data, size_t n,
                    int flags, bpe_buf *out, size_t *consumed, int count_only, size_t limit) {
    return encode_scan(t, dfa, data, n, flags, out, consumed, count_only, limit, NULL, NULL);
}

int64_t bpe_encode_small(const bpe_table *t, const void *dfa, const uint8_t *data, size_t n,
                         int flags, uint32_t *ids) {
    uint32_t st[BPE_SMALL_MAX], en[BPE_SMALL_MAX];
    if (n > BPE_SMALL_MAX) return -3;
    /* a text of n bytes has at most n tokens, and the encoder reserves PC_TOK ids per piece
       (at most n pieces) before it stores: BPE_SMALL_IDS ids are never outgrown */
    bpe_buf out = { ids, 0, BPE_SMALL_IDS };
    int rc = encode_scan(t, dfa, data, n, flags & ~SCANTOK_PARTIAL, &out, NULL, 0, SIZE_MAX, st, en);
    if (out.ids != ids) { /* cannot happen (see above); never leak or hand back another buffer */
        free(out.ids);
        return -4;
    }
    return rc ? rc : (int64_t)out.len;
}

_Static_assert(BPE_SMALL_IDS >= PC_TOK * BPE_SMALL_MAX, "bpe_encode_small's ids must fit the reservation");

int bpe_encode_many(const bpe_table *t, const void *dfa, const uint8_t *const *datas,
                    const size_t *lens, size_t ndocs, int flags, bpe_buf *out, size_t *ends,
                    size_t *failed) {
    for (size_t i = 0; i < ndocs; i++) {
        int rc = bpe_encode_scan(t, dfa, datas[i], lens[i], flags & ~SCANTOK_PARTIAL, out, NULL,
                                 0, SIZE_MAX);
        if (rc) {
            if (failed) *failed = i;
            return rc;
        }
        ends[i] = out->len;
    }
    return 0;
}

/* ------------------------------------------------------------------ shared batches */

/* Why: a batch on several threads used to give each Python worker contiguous chunks, each a C
   call followed by building its lists with the GIL held; the workers then waited for each
   other's list building (the GIL), and in turn for the hand-off of the GIL, at every chunk.
   Here the threads that only encode never touch the GIL, and the one thread that builds the
   lists does it while the others encode.

   Which chunks a thread takes: each thread starts on a contiguous region of its own (thread r
   of n: chunks K*r/n .. K*(r+1)/n - 1), from its front; a thread whose region is used up takes
   the last chunk of the region with the most left. Neighbouring texts share their words (a
   section of a manual, one language of a multilingual corpus), and every word a thread meets
   for the first time is merged and learnt by its per-thread caches: with regions, the threads
   learn fewer of the same words than with chunks handed out in turn (o200k, the bench's timed
   text in 64 chunks, first sightings over one thread's: en +39% -> +33%, code +40% -> +27%,
   multi +27% -> +15%). Chunks finish in any order; the caller takes them as they finish. */
struct bpe_batch {
    const bpe_table *t;
    const void *dfa;
    const uint8_t *const *datas;
    const size_t *lens;
    size_t ndocs, nchunks, nthreads;
    int flags;
    size_t *chunk_end; /* a copy: [k] = one past chunk k's last text */
    /* under mu: */
    size_t *rlo, *rhi; /* per thread: its region's chunks not taken yet */
    size_t inflight;   /* chunks taken and not finished */
    size_t nfin;       /* chunks finished, in fin[0 .. nfin - 1] in the order they finished */
    size_t fin_read;   /* how many of them bpe_batch_next has handed out */
    int stop;          /* take no more chunks (atomic: also read without mu) */
    size_t *fin;
    uint8_t *ready;    /* per chunk (atomic): its texts' datas and lens are set */
    uint8_t *done;     /* per chunk (atomic): finished (bufs, ends, rc final) */
    bpe_buf *bufs;     /* per chunk */
    size_t *ends;      /* per text: its end in its chunk's ids */
    int *rc;           /* per chunk */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a chunk finished or got ready, or the batch stopped */
};

bpe_batch *bpe_batch_new(const bpe_table *t, const void *dfa, const uint8_t *const *datas,
                         const size_t *lens, size_t ndocs, const size_t *chunk_end,
                         size_t nchunks, size_t nthreads, int flags) {
    if (nthreads == 0 || nthreads > 4096) return NULL;
    if (nchunks == 0 ? ndocs != 0 : chunk_end[nchunks - 1] != ndocs) return NULL;
    for (size_t k = 0; k < nchunks; k++)
        if (chunk_end[k] <= (k ? chunk_end[k - 1] : 0)) return NULL; /* every chunk has a text */
    bpe_batch *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    size_t nc = nchunks ? nchunks : 1;
    b->t = t;
    b->dfa = dfa;
    b->datas = datas;
    b->lens = lens;
    b->ndocs = ndocs;
    b->nchunks = nchunks;
    b->nthreads = nthreads;
    b->flags = flags & ~SCANTOK_PARTIAL;
    b->chunk_end = malloc(nc * sizeof *b->chunk_end);
    b->rlo = malloc(nthreads * sizeof *b->rlo);
    b->rhi = malloc(nthreads * sizeof *b->rhi);
    b->fin = malloc(nc * sizeof *b->fin);
    b->ready = calloc(nc, 1);
    b->done = calloc(nc, 1);
    b->bufs = calloc(nc, sizeof *b->bufs);
    b->ends = malloc((ndocs ? ndocs : 1) * sizeof *b->ends);
    b->rc = calloc(nc, sizeof *b->rc);
    int mu_ok = pthread_mutex_init(&b->mu, NULL) == 0;
    int cv_ok = pthread_cond_init(&b->cv, NULL) == 0;
    if (!b->chunk_end || !b->rlo || !b->rhi || !b->fin || !b->ready || !b->done || !b->bufs ||
        !b->ends || !b->rc || !mu_ok || !cv_ok) {
        if (mu_ok) pthread_mutex_destroy(&b->mu);
        if (cv_ok) pthread_cond_destroy(&b->cv);
        b->nchunks = 0; /* no buffers to free yet */
        free(b->chunk_end); free(b->rlo); free(b->rhi); free(b->fin); free(b->ready);
        free(b->done); free(b->bufs); free(b->ends); free(b->rc); free(b);
        return NULL;
    }
    if (nchunks) memcpy(b->chunk_end, chunk_end, nchunks * sizeof *chunk_end);
    for (size_t r = 0; r < nthreads; r++) bpe_batch_region(b, r, &b->rlo[r], &b->rhi[r]);
    return b;
}

/* floor(nchunks * r / nthreads) without overflow (32-bit size_t included): with q, m the
   quotient and remainder of nchunks / nthreads it is q * r + floor(m * r / nthreads), and
   m * r < 4096 * 4096. */
static size_t region_start(const bpe_batch *b, size_t r) {
    size_t q = b->nchunks / b->nthreads, m = b->nchunks % b->nthreads;
    return q * r + m * r / b->nthreads;
}

void bpe_batch_region(const bpe_batch *b, size_t r, size_t *lo, size_t *hi) {
    *lo = *hi = 0;
    if (r >= b->nthreads) return;
    *lo = region_start(b, r);
    *hi = region_start(b, r + 1);
}

void bpe_batch_free(bpe_batch *b) {
    if (!b) return;
    for (size_t k = 0; k < b->nchunks; k++) bpe_buf_free(&b->bufs[k]);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b->chunk_end); free(b->rlo); free(b->rhi); free(b->fin); free(b->ready);
    free(b->done); free(b->bufs); free(b->ends); free(b->rc); free(b);
}

/* The next chunk for thread `who` (under mu), or SIZE_MAX if none is left to take. */
static size_t batch_take(bpe_batch *b, size_t who) {
    if (b->stop) return SIZE_MAX;
    size_t r = who < b->nthreads ? who : b->nthreads - 1;
    if (b->rlo[r] < b->rhi[r]) return b->rlo[r]++;
    size_t best = SIZE_MAX, most = 0;
    for (size_t q = 0; q < b->nthreads; q++)
        if (b->rhi[q] - b->rlo[q] > most) { most = b->rhi[q] - b->rlo[q]; best = q; }
    return best == SIZE_MAX ? SIZE_MAX : --b->rhi[best];
}

size_t bpe_batch_work(bpe_batch *b, size_t max_chunks, size_t who) {
    size_t n = 0;
    while (!max_chunks || n < max_chunks) {
        pthread_mutex_lock(&b->mu);
        size_t k = batch_take(b, who);
        if (k == SIZE_MAX) {
            pthread_mutex_unlock(&b->mu);
            break;
        }
        b->inflight++; /* from here this thread finishes chunk k, whatever happens */
        /* the caller may still be converting the texts (it does so while the first chunks are
           encoded): wait for this chunk's */
        while (!__atomic_load_n(&b->ready[k], __ATOMIC_ACQUIRE) && !b->stop)
            pthread_cond_wait(&b->cv, &b->mu);
        int rc = __atomic_load_n(&b->ready[k], __ATOMIC_ACQUIRE) ? 0 : -5; /* -5: stopped */
        pthread_mutex_unlock(&b->mu);
        size_t lo = k ? b->chunk_end[k - 1] : 0, hi = b->chunk_end[k];
        if (!rc)
            rc = bpe_encode_many(b->t, b->dfa, b->datas + lo, b->lens + lo, hi - lo, b->flags,
                                 &b->bufs[k], b->ends + lo, NULL);
        pthread_mutex_lock(&b->mu);
        b->rc[k] = rc;
        __atomic_store_n(&b->done[k], 1, __ATOMIC_RELEASE); /* after the chunk's ids and ends */
        b->fin[b->nfin++] = k;
        b->inflight--;
        if (rc) __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        n++;
    }
    return n;
}

int64_t bpe_batch_next(bpe_batch *b, int block) {
    int64_t k = -1;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        if (b->fin_read < b->nfin) { k = (int64_t)b->fin[b->fin_read++]; break; }
        if (b->fin_read == b->nchunks) { k = -3; break; }           /* all handed out */
        if (b->stop && b->inflight == 0) { k = -5; break; }         /* no more will finish */
        if (!block) break;
        pthread_cond_wait(&b->cv, &b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return k;
}

int bpe_batch_rc(bpe_batch *b, size_t k) {
    if (k >= b->nchunks || !__atomic_load_n(&b->done[k], __ATOMIC_ACQUIRE)) return -3;
    return b->rc[k];
}

const uint32_t *bpe_batch_ids(bpe_batch *b, size_t k, size_t *n, const size_t **ends) {
    if (k >= b->nchunks || !__atomic_load_n(&b->done[k], __ATOMIC_ACQUIRE)) return NULL;
    *n = b->bufs[k].len;
    *ends = b->ends + (k ? b->chunk_end[k - 1] : 0);
    return b->bufs[k].ids;
}

void bpe_batch_release(bpe_batch *b, size_t k) {
    if (k < b->nchunks && __atomic_load_n(&b->done[k], __ATOMIC_ACQUIRE)) bpe_buf_free(&b->bufs[k]);
}

void bpe_batch_set_ready(bpe_batch *b, size_t k) {
    if (k >= b->nchunks) return;
    pthread_mutex_lock(&b->mu);
    __atomic_store_n(&b->ready[k], 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void bpe_batch_stop(bpe_batch *b) {
    pthread_mutex_lock(&b->mu);
    __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* ------------------------------------------------------------------ decode */

int64_t bpe_decode_len(const bpe_table *t, const uint32_t *ids, size_t n) {
    int64_t total = 0;
    const uint8_t *p;
    for (size_t i = 0; i < n; i++) {
        uint32_t l = id_bytes(t, ids[i], &p);
        if (l == NONE) return -1 - (int64_t)i;
        total += l;
    }
    return total;
}

void bpe_decode(const bpe_table *t, const uint32_t *ids, size_t n, uint8_t *out) {
    const uint8_t *p;
    for (size_t i = 0; i < n; i++) {
        uint32_t l = id_bytes(t, ids[i], &p);
        if (l == NONE) continue; /* bpe_decode_len was checked first */
        memcpy(out, p, l);
        out += l;
    }
}

int64_t bpe_token_bytes(const bpe_table *t, uint32_t id, const uint8_t **p) {
    uint32_t l = id_bytes(t, id, p);
    return l == NONE ? -1 : (int64_t)l;
}

/* ------------------------------------------------------------------ image */

/* A built table serialised for mmap: header, then each array at a 64-byte aligned offset.
   Native byte order and layout; the header's ABI tag rejects an image from another build.
   An image lives in a cache file that a disk error or a torn copy can damage, and the encoder
   follows its indices without bounds checks, so bpe_table_from_image trusts nothing: a
   checksum over the whole image catches damage, and every index and offset the encoder can
   follow is validated as well, so that even an image whose checksum matches by accident
   cannot make it read outside the image or loop forever (it could only give other ids). */
#define IMG_MAGIC 0x314B54534B4E4353ull /* "SCNKSTK1" */
typedef struct img_header {
    uint64_t magic, abi, total;
    uint64_t checksum; /* bpe_checksum of the image with this field zero */
    uint64_t n, maxlen, max_rank, mask, shift, short_shift, short_mask, hot_mask, hot_shift;
    uint64_t dec_n, dec_blob_len;
    uint64_t off[12]; /* byte_rank pair2 short3 short4 hot bloom slots dec_off dec_len dec_blob premerge */
} img_header;

/* Changes whenever the layout, the table parameters or the hash function change (the hash
   of a fixed string is folded in), so an image from another build is rebuilt, never misread. */
#define IMG_VERSION 3u
static uint64_t img_abi(void) {
    static const uint8_t probe[] = "scantok image probe: hash function check";
    uint64_t hk = hash_key(head_of(probe, sizeof probe - 1), probe, sizeof probe - 1);
    return ((uint64_t)sizeof(ent) << 48) ^ ((uint64_t)HOT_N << 16) ^ BLOOM_WORDS ^
           ((uint64_t)sizeof(img_header) << 40) ^ ((uint64_t)IMG_VERSION << 56) ^
           (uint64_t)SMALL_LOOP ^ hk;
}

/* A 64-bit checksum at memory speed: eight independent multiply-rotate lanes over 64-byte
   blocks (the loads stay ahead of the multiplies), then the tail, then an avalanche. Not a
   cryptographic hash: it detects damage, not tampering. */
static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
#define CK_P1 0x9E3779B185EBCA87ull
#define CK_P2 0xC2B2AE3D27D4EB4Full
#define CK_P3 0x165667B19E3779F9ull
uint64_t bpe_checksum(const uint8_t *p, size_t n, uint64_t seed) {
    uint64_t h = seed ^ ((uint64_t)n * CK_P3);
    if (n >= 64) {
        uint64_t v[8];
        for (int k = 0; k < 8; k++) v[k] = seed + CK_P1 * (uint64_t)(k + 1) + CK_P2;
        size_t blocks = n / 64;
        for (size_t b = 0; b < blocks; b++, p += 64)
            for (int k = 0; k < 8; k++) v[k] = rotl64(v[k] + ld64(p + 8 * k) * CK_P2, 31) * CK_P1;
        n -= blocks * 64;
        for (int k = 0; k < 8; k++) h = (h ^ rotl64(v[k] * CK_P2, 31) * CK_P1) * CK_P1 + CK_P3;
    }
    for (; n >= 8; n -= 8, p += 8) h = rotl64(h ^ rotl64(ld64(p) * CK_P2, 31) * CK_P1, 27) * CK_P1 + CK_P3;
    for (; n; n--, p++) h = rotl64(h ^ (*p * CK_P3), 11) * CK_P1;
    h ^= h >> 33;
    h *= CK_P2;
    h ^= h >> 29;
    h *= CK_P3;
    h ^= h >> 32;
    return h;
}

/* The image's checksum: the header with its checksum field zero, then the rest. */
static uint64_t img_checksum(const uint8_t *img, size_t len) {
    img_header h;
    memcpy(&h, img, sizeof h);
    h.checksum = 0;
    uint64_t c = bpe_checksum((const uint8_t *)&h, sizeof h, 0x5CA7704Bu);
    return bpe_checksum(img + sizeof h, len - sizeof h, c);
}

#define IMG_ARRAYS 11
static void img_layout(const bpe_table *t, uint64_t size[IMG_ARRAYS]) {
    size[0] = 256 * sizeof(uint32_t);
    size[1] = 65536 * sizeof(uint32_t);
    size[2] = size[3] = (t->short_mask + 1) * sizeof(uint64_t);
    size[4] = (t->hot_mask + 1) * sizeof(ent);
    size[5] = (uint64_t)BLOOM_WORDS * sizeof(uint64_t);
    size[6] = (t->mask + 1) * sizeof(ent);
    size[7] = (uint64_t)t->dec_n * sizeof(uint64_t);
    size[8] = (uint64_t)t->dec_n * sizeof(uint32_t);
    size[9] = t->dec_blob_len;
    /* the pre-merge tables (premerge_of), made when the image is: made on first use, they
       cost the first piece with a non-ASCII character 2 ms for o200k_base (0.5 for cl100k) */
    size[10] = sizeof(premerge_tables);
}

size_t bpe_table_image_size(const bpe_table *t) {
    uint64_t size[IMG_ARRAYS], pos = (sizeof(img_header) + 63) & ~63ull;
    img_layout(t, size);
    for (int i = 0; i < IMG_ARRAYS; i++) pos = (pos + size[i] + 63) & ~63ull;
    return (size_t)pos;
}

void bpe_table_image_write(const bpe_table *t, uint8_t *out) {
    uint64_t size[IMG_ARRAYS], pos = (sizeof(img_header) + 63) & ~63ull;
    img_header h;
    memset(&h, 0, sizeof h);
    img_layout(t, size);
    /* NULL (out of memory): zero tables, in which no character is pre-merged */
    const premerge_tables *pm = premerge_of(t);
    const void *src[IMG_ARRAYS] = {t->byte_rank, t->pair2, t->short3, t->short4, t->hot, t->bloom,
                                   t->slots, t->dec_off, t->dec_len, t->dec_blob, pm};
    memset(out, 0, bpe_table_image_size(t));
    for (int i = 0; i < IMG_ARRAYS; i++) {
        h.off[i] = pos;
        if (size[i] && src[i]) memcpy(out + pos, src[i], size[i]);
        pos = (pos + size[i] + 63) & ~63ull;
    }
    h.magic = IMG_MAGIC;
    h.abi = img_abi();
    h.total = pos;
    h.n = t->n; h.maxlen = t->maxlen; h.max_rank = t->max_rank; h.mask = t->mask;
    h.shift = (uint64_t)t->shift; h.short_shift = t->short_shift; h.short_mask = t->short_mask;
    h.hot_mask = t->hot_mask; h.hot_shift = (uint64_t)t->hot_shift;
    h.dec_n = t->dec_n; h.dec_blob_len = t->dec_blob_len;
    memcpy(out, &h, sizeof h);
    h.checksum = img_checksum(out, (size_t)pos);
    memcpy(out, &h, sizeof h);
}

void bpe_image_seal(uint8_t *img, size_t len) {
    img_header h;
    if (len < sizeof h) return;
    memcpy(&h, img, sizeof h);
    h.checksum = img_checksum(img, len);
    memcpy(img, &h, sizeof h);
}

/* log2 of cap if cap (= mask + 1) is a power of two in [16, 2^32], else -1. */
static int pow2_bits(uint64_t mask) {
    uint64_t cap = mask + 1;
    if (mask < 15 || mask > 0xFFFFFFFFull || (cap & mask)) return -1;
    return __builtin_ctzll(cap);
}

/* The checks below are branch-free (half the slots of a hash table are empty, at random) and
   clamp every index before using it, so they run at memory speed: ~1 ms for o200k_base. */

/* rank r is "no token" or a token of exactly len bytes (whose bytes lie in the blob: checked
   for every dec entry first); 0 if so, nonzero if not */
static inline uint32_t rank_bad(const bpe_table *t, uint32_t r, uint32_t len) {
    uint32_t in = r < t->dec_n, rc = in ? r : 0;
    return (r != NONE) & (!in | (t->dec_len[rc] != len));
}

/* Open-addressed table of long tokens: every entry names a token of its length, and one slot
   is empty (a probe for a missing key ends there). */
static int ents_ok(const bpe_table *t, const ent *e, uint64_t cap) {
    uint64_t empty = 0;
    uint32_t bad = 0;
    for (uint64_t i = 0; i < cap; i++) {
        uint32_t len = e[i].len, r = e[i].rank, in = r < t->dec_n, rc = in ? r : 0;
        empty += len == 0;
        bad |= (len != 0) & ((len < 5) | !in | (t->dec_len[rc] != len));
    }
    return !bad && empty > 0;
}

static int shorts_ok(const bpe_table *t, const uint64_t *tab, uint32_t len) {
    uint64_t empty = 0;
    uint32_t bad = 0;
    for (uint64_t i = 0; i <= t->short_mask; i++) {
        uint32_t r = (uint32_t)tab[i];
        empty += r == NONE;
        bad |= rank_bad(t, r, len);
    }
    return !bad && empty > 0;
}

/* Every structural invariant the encoder and decoder rely on (see the section comment). */
static int img_tables_ok(const bpe_table *t) {
    uint32_t count = 0, maxr = 0, bad = 0;
    for (uint32_t i = 0; i < t->dec_n; i++) {
        uint32_t l = t->dec_len[i], live = l != NONE;
        uint64_t o = t->dec_off[i];
        bad |= live & ((l == 0) | (l > t->maxlen) | (o > t->dec_blob_len) |
                       (l > t->dec_blob_len - (o > t->dec_blob_len ? 0 : o)));
        count += live;
        maxr = live ? i : maxr;
    }
    if (bad || count != t->n || (count && maxr != t->max_rank)) return 0;
    for (int b = 0; b < 256; b++) bad |= rank_bad(t, t->byte_rank[b], 1);
    for (uint32_t i = 0; i < 65536; i++) bad |= rank_bad(t, t->pair2[i], 2);
    /* a pre-merged character's token is a token of its length (the merges read its bytes) */
    for (size_t i = 0; i < PM_N; i++) {
        uint64_t e = t->premerge->chr[i];
        uint32_t tok = (uint32_t)(e >> 32), in = tok < t->dec_n, rc = in ? tok : 0;
        bad |= (e != 0) & (!in | (t->dec_len[rc] != (i < PM_LEAD2 * 64 ? 2u : 3u)));
    }
    return !bad && shorts_ok(t, t->short3, 3) && shorts_ok(t, t->short4, 4) &&
           ents_ok(t, t->hot, t->hot_mask + 1) && ents_ok(t, t->slots, t->mask + 1);
}

bpe_table *bpe_table_from_image(const uint8_t *img, size_t len) {
    img_header h;
    if (!img || len < sizeof h || ((uintptr_t)img & 63)) return NULL;
    memcpy(&h, img, sizeof h);
    if (h.magic != IMG_MAGIC || h.abi != img_abi() || h.total != len) return NULL;
    /* parameters: powers of two that match their shifts, sizes that fit the image */
    int bits = pow2_bits(h.mask), hbits = pow2_bits(h.hot_mask), sbits = pow2_bits(h.short_mask);
    if (bits < 0 || hbits < 0 || sbits < 0 || h.shift != (uint64_t)(64 - bits) ||
        h.hot_shift != (uint64_t)(64 - hbits) || h.short_shift != (uint64_t)(64 - sbits))
        return NULL;
    if (h.dec_n >= NONE || h.n > h.dec_n || (h.n && h.max_rank >= h.dec_n) ||
        h.dec_blob_len > len || h.maxlen > h.dec_blob_len)
        return NULL;
    if (img_checksum(img, len) != h.checksum) return NULL;
    bpe_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->uid = new_uid();
    t->life = life_new(); /* NULL: its caches are never taken for dead */
    t->n = (uint32_t)h.n; t->maxlen = (uint32_t)h.maxlen; t->max_rank = (uint32_t)h.max_rank;
    t->mask = h.mask; t->shift = (int)h.shift; t->short_shift = (uint32_t)h.short_shift;
    t->short_mask = h.short_mask; t->hot_mask = h.hot_mask; t->hot_shift = (int)h.hot_shift;
    t->dec_n = (uint32_t)h.dec_n; t->dec_blob_len = t->dec_blob_cap = h.dec_blob_len;
    uint64_t size[IMG_ARRAYS];
    img_layout(t, size);
    for (int i = 0; i < IMG_ARRAYS; i++)
        if (h.off[i] % 64 || h.off[i] > len || size[i] > len - h.off[i]) { free(t->life); free(t); return NULL; }
    memcpy(t->byte_rank, img + h.off[0], size[0]);
    t->pair2 = (uint32_t *)(img + h.off[1]);
    t->short3 = (uint64_t *)(img + h.off[2]);
    t->short4 = (uint64_t *)(img + h.off[3]);
    t->hot = (ent *)(img + h.off[4]);
    t->bloom = (uint64_t *)(img + h.off[5]);
    t->slots = (ent *)(img + h.off[6]);
    t->dec_off = (uint64_t *)(img + h.off[7]);
    t->dec_len = (uint32_t *)(img + h.off[8]);
    t->dec_blob = (uint8_t *)(img + h.off[9]);
    t->premerge = (premerge_tables *)(img + h.off[10]);
    t->premerge_borrowed = 1;
    t->borrowed = 1;
    if (!img_tables_ok(t)) { bpe_table_free(t); return NULL; }
    return t;
}

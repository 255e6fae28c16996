/* HuggingFace-style BPE (merge ranks of id pairs) and split stages.  See hf_bpe.h. */
#include "hf_bpe.h"

#include <pthread.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include "premerge.h"
#include "scantok_dfa.h"
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define EMPTY_KEY UINT64_MAX
#define NO_RANK UINT32_MAX
_Static_assert(NO_RANK == PM_NONE, "pm_mark marks dead symbols with PM_NONE");
/* The piece cache: 2^CACHE_BITS slots of 64 bytes (8 MiB) per thread and model, on huge pages
   (hfb_cache_new), as large as the working set of recurring text (English prose has ~50K
   distinct pieces in 4 MB).  Re-encoding 0.5 MB of 4 KB documents already seen (DeepSeek V3,
   medians of 4 fresh processes): 2 MiB on 4 KiB pages 187 MB/s on en, 2 MiB on huge pages 202,
   4 MiB 202, 8 MiB 211 (multi: 132 -> 144 at 8 MiB); text seen for the first time ran the same
   (111-117 MB/s on en for each). */
#ifndef CACHE_BITS
#define CACHE_BITS 17
#endif
#define CACHE_KEY 24
#define CACHE_IDS 8
/* Pieces of up to LINEAR_MAX symbols merge by a scan for the lowest rank (O(n^2), but 8
   ranks a vector instruction and no setup); longer ones by the heap, on the stack up to
   HEAP_STACK symbols.  Was 64 (chosen by instruction counts): at 248, first-sight long pieces
   (CJK runs, runs of '=' or '-') take 4-6 % less CPU time over the multi corpus (the heap
   looks every merged pair up twice, and its first pairs one by one), en and code unchanged. */
#ifndef LINEAR_MAX
#define LINEAR_MAX 248
#endif
#define HEAP_STACK 256
_Static_assert(LINEAR_MAX <= 255, "merge_linear links symbols by uint8_t");
_Static_assert(LINEAR_MAX % 8 == 0, "merge_linear pads the ranks with NO_RANK to a multiple of 8");

/* One 16-byte slot per pair: a lookup that finds its pair reads one cache line. */
typedef struct {
    uint64_t key; /* (a << 32) | b, EMPTY_KEY when free */
    uint32_t rank;
    uint32_t new_id;
} pair_slot_t;

/* The merge of two byte-level symbols, by the two raw bytes: the first lookups of a piece's
   merge read this 512 KiB table (its common entries stay in the CPU caches) instead of
   hashing into the pair table. */
typedef struct {
    uint32_t rank; /* NO_RANK: no merge */
    uint32_t new_id;
} byte_pair_t;

/* The pair table (4 MiB for 128K merges) is larger than the CPU's caches, and a first-sight
   merge waits for each lookup.  Most lookups are of frequent merges (the lowest ranks) or of
   pairs that do not merge; so the HOT_RANKS lowest-ranked merges are also in a small table of
   8-byte slots (a << 44 | b << 24 | rank, for ids below 2^20), and a bitmap of hashes (one
   bit per 2^20 values) marks the other merges: a lookup reads the large table only when the
   small one lacks the pair and its bit is set. */
#define HOT_RANKS 16384u
#define HOT_ID_LIMIT (1u << 20)
#define COLD_BITS 20
#define HOT_EMPTY UINT64_MAX

struct hfb_model {
    pair_slot_t *pairs;
    byte_pair_t *byte_pairs; /* 65536 entries (first byte << 8 | second), once bytes are set */
    uint64_t *hot;           /* NULL: no small table (ids too large, or out of memory) */
    uint32_t *hot_new;       /* new id of each rank below HOT_RANKS */
    uint64_t *cold_bits;     /* 2^COLD_BITS bits */
    size_t hot_mask;
    unsigned hot_shift; /* 64 - log2(slots): the small table's index is the hash's top bits */
    size_t mask;
    unsigned shift; /* 64 - log2(mask + 1) */
    uint32_t n_ids;
    int32_t byte_ids[256];
    /* end_of_word_suffix (hfb_set_byte_suffix): the id of each byte's character followed by
       the suffix, which a piece's last symbol is (-1: missing); suffix: set */
    int32_t byte_ids_last[256];
    int suffix;
    const uint32_t *tok_len;
    const vt_table *whole;
    struct self_slot *selfs; /* NULL: none (see hfb_build_selfs) */
    uint64_t *self_bits;     /* 2^SELF_BITS bits: a piece whose bit is clear is not in selfs */
    uint32_t *self_order;    /* selfs' occupied slots by id, lowest first (seed_cache) */
    size_t self_mask, self_count;
    unsigned self_shift;
    struct premerge_tables *premerge; /* NULL: none (see hfb_build_premerge) */
    int unique_ids;      /* no two vocabulary strings share an id (hfb_check_unique_ids) */
    /* char mode (hfb_set_chars): code point -> id of the one-character tokens, open
       addressing (key UINT32_MAX: empty); the byte fallback tokens <0xXX> (-1: missing; all -1
       without byte_fallback); the unknown token (-1: none, -2: named but not in the vocabulary) */
    uint32_t *char_keys;
    uint32_t *char_ids;
    size_t char_mask;
    int32_t fallback[256];
    int64_t unk_id;
    int fuse_unk, byte_fallback;
    const uint32_t *u8len; /* char mode: the UTF-8 length of every id's string (or NULL) */
    int cut_words;         /* char mode: pieces may be cut into words (hfb_set_chars) */
    /* char mode: the merge of two ASCII characters' tokens, by the two characters (128 x 128,
       as byte_pairs for bytes; NULL: none), for a piece's first pairs (hfb_set_chars) */
    byte_pair_t *chr_pairs;
    /* char mode with continuing_subword_prefix / end_of_word_suffix (hfb_set_char_affixes):
       per slot of char_keys the ids of prefix + c, c + suffix and prefix + c + suffix
       (UINT32_MAX: none), 3 a slot; the prefix's UTF-8 length; which affixes the model has */
    uint32_t *char_aff;
    uint32_t prefix_len;
    int prefix_on, suffix_on;
    /* WordLevel (hfb_set_word_level): a piece's UTF-8 -> its id; the unknown token's id (-1:
       none, then a piece outside words makes the encode calls return HFB_SLOW) */
    vt_table *words;
    int64_t word_unk;
    int word_wsplit; /* the pieces are WhitespaceSplit's: vt_encode_wsplit's fused loop */
    uint64_t generation; /* changes with every build step: caches of an older model are void */
};

/* The tokens of CACHE_MIN_SELF..CACHE_KEY raw bytes that BPE merges back into themselves
   (merge(bytes(t)) == [t], checked by running the merge at build time), keyed as the piece
   cache: a piece met for the first time that is such a token costs one lookup here instead
   of its merges (tiktoken returns a piece found in its vocabulary at once; merging by id-pair
   ranks a token need not encode to itself, hence the check). */
#define SELF_MIN 3
/* The table (8 MiB for 128K tokens) is probed at random; most first-sight pieces of some
   texts (CJK, code identifiers) are not tokens: a 256 KiB bitmap of the tokens' hashes
   answers those (~6 % false positives for 123K tokens) without the table's cache miss. */
#define SELF_BITS 21
static inline uint64_t self_bit(uint64_t h) { return (h * 0xD6E8FEB86659FD93ull) >> (64 - SELF_BITS); }
typedef struct self_slot {
    uint64_t key[3]; /* the token's raw bytes, zero-padded */
    uint32_t klen;   /* 0: empty */
    uint32_t id;
} self_slot;

typedef struct cache_slot_s {
    uint64_t key[CACHE_KEY / 8]; /* the piece's bytes, zero-padded */
    uint32_t klen;               /* 0: empty (pieces are never empty) */
    uint32_t nids;
    uint32_t ids[CACHE_IDS];
} cache_slot;

/* Pieces longer than CACHE_KEY (runs of spaces or dashes, long words, CJK runs) are as
   costly to merge as many short ones together and recur as often in documents: they go to a
   second, direct-mapped store of heap blocks (replaced on collision; bounded memory:
   LONG_SLOTS blocks of at most LONG_MAX bytes and as many ids). */
#define LONG_BITS 12
#define LONG_SLOTS (1u << LONG_BITS)
#define LONG_MAX 512
/* char mode's words of CACHE_KEY + 1 .. LONG_MAX bytes (a word after an indentation of eight
   "▁", three bytes each, or a piece across a line break, where the cut is only before "▁"):
   2^15 blocks in sets of two (the newer first), WORD_LONG_BUDGET bytes of them per thread at
   most (a block that would go past it is not kept). On 1 MB of en in 4 KB documents, a
   SentencePiece-style file cuts 8,602 such pieces (38 % of the bytes; 5,756 distinct; 104
   bytes a block on average), which were merged at every sight. Until session 26 blocks were
   at most 256 bytes, and 2^14 of them direct-mapped: the rows of ASCII tables and deep
   indentations (a line's end, "\n" and the next line's "▁▁▁▁|---"), and the ~1 in 6 words
   whose slot another had taken, were merged again on every pass (19 % of a warm one). */
#define WORD_LONG_SLOTS (1u << 15)
/* The set of the word p[0:len] in c's long-word store. */
#define LONG_SET(c, p, len) (&(c)->word_longs[bytes_hash((p), (len)) & (WORD_LONG_SLOTS - 2)])
/* A word table slot's nids for a word of more tokens than it holds: they are in the long-word
   store ("▁▁▁▁▁▁▁|\n|", a table's row, is 24 bytes and 10 tokens: merged on every pass before). */
#define WORD_IN_LONGS (CACHE_IDS + 1)
#define WORD_LONG_BUDGET ((size_t)4 << 20)

typedef struct {
    uint32_t len, nids;
    uint8_t bytes[];  /* len bytes, then nids uint32 ids (aligned) */
} long_entry;

/* Work arrays of one encode call, sized for its text (n + 1 entries each). */
typedef struct {
    uint32_t *a, *b;   /* two piece lists of capacity cap */
    uint32_t *ms, *me; /* scanner matches */
    uint32_t *cidx;    /* byte -> code point index (offsets only) */
    size_t cap;
    uint8_t *mapped;   /* a piece's ByteLevel characters (2 cap bytes), made on first use */
    uint32_t *raw_of;  /* mapped byte -> the piece's byte it comes from (2 cap + 1) */
} scratch;

/* A cache keeps its thread's scratch between calls (no allocation per text) while it is for
   texts of at most SCRATCH_KEEP bytes (28 bytes per text byte: 7 MiB at most). */
#define SCRATCH_KEEP (1u << 18)

/* char mode's word cache: 2^WORD_BITS slots (8 MiB, on huge pages), made on first use. At 2^15
   slots, 1 MB of en in 4 KB documents (~29K distinct words) missed ~1,300 words a pass again
   in its sets of two. */
#define WORD_BITS 17
struct hfb_cache {
    scratch s;
    const hfb_model *model;
    uint64_t generation;
    int seeded; /* seed_cache put the self table's tokens in (encode_cold then skips the table) */
    struct cache_slot_s *words; /* char mode (hfb_tokenize_chars), NULL until used */
    long_entry *longs[LONG_SLOTS];
    long_entry *word_longs[WORD_LONG_SLOTS]; /* char mode's long words (WORD_LONG_SLOTS) */
    size_t word_longs_bytes; /* the blocks' sizes (long_size), at most WORD_LONG_BUDGET */
    size_t word_longs_kept, word_long_hits; /* statistics for tests (hfb_cache_word_longs) */
    cache_slot slots[1u << CACHE_BITS] __attribute__((aligned(64)));
};

static uint64_t model_generation = 1;

/* The tables' indexes are the top bits of the product (the lower ones do not depend on every
   bit of the key); the bitmap's, of a second product. */
static inline size_t pair_slot(uint64_t key, unsigned shift) {
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> shift);
}

static inline uint64_t cold_bit(uint64_t h) {
    return ((h ^ (h >> 32)) * 0xBF58476D1CE4E5B9ull) >> (64 - COLD_BITS);
}

hfb_model *hfb_new(uint32_t n_ids, size_t n_merges) {
    hfb_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    size_t cap = 16;
    unsigned shift = 60;
    while (cap < 2 * n_merges + 16) cap <<= 1, shift--;
    m->pairs = malloc(cap * sizeof *m->pairs);
    if (!m->pairs) {
        hfb_free(m);
        return NULL;
    }
    for (size_t i = 0; i < cap; i++) m->pairs[i] = (pair_slot_t){EMPTY_KEY, NO_RANK, 0};
    m->mask = cap - 1;
    m->shift = shift;
    m->n_ids = n_ids;
    for (int b = 0; b < 256; b++) m->byte_ids[b] = -1;
    m->generation = __atomic_fetch_add(&model_generation, 1, __ATOMIC_RELAXED);
    return m;
}

void hfb_free(hfb_model *m) {
    if (!m) return;
    free(m->pairs);
    free(m->byte_pairs);
    free(m->hot);
    free(m->hot_new);
    free(m->cold_bits);
    free(m->selfs);
    free(m->self_bits);
    free(m->self_order);
    free(m->premerge);
    free(m->char_keys);
    free(m->char_ids);
    free(m->char_aff);
    free(m->chr_pairs);
    vt_free(m->words);
    free(m);
}

/* The self table depends on the merges and the byte ids: a build step voids it. */
static void selfs_drop(hfb_model *m) {
    free(m->selfs), free(m->self_bits), free(m->self_order);
    m->selfs = NULL, m->self_bits = NULL, m->self_order = NULL;
    m->self_count = 0;
}

size_t hfb_selfs_size(const hfb_model *m) { return m->self_count; }

/* The pre-merge tables depend on the merges and the byte ids too (hfb_build_premerge). */
static void premerge_drop(hfb_model *m) {
    free(m->premerge);
    m->premerge = NULL;
}

static void byte_pairs_fill(hfb_model *m);
static void hot_fill(hfb_model *m);

int hfb_add_merges(hfb_model *m, const uint32_t *a, const uint32_t *b, const uint32_t *new_id,
                   size_t n) {
    selfs_drop(m);
    premerge_drop(m);
    free(m->chr_pairs); /* made again by hfb_set_chars */
    m->chr_pairs = NULL;
    size_t used = 0;
    for (size_t i = 0; i <= m->mask; i++) used += m->pairs[i].key != EMPTY_KEY;
    if (2 * (used + n) > m->mask + 1) return -1; /* sized by hfb_new's n_merges */
    for (size_t i = 0; i < n; i++) {
        uint64_t key = ((uint64_t)a[i] << 32) | b[i];
        size_t s = pair_slot(key, m->shift);
        while (m->pairs[s].key != EMPTY_KEY && m->pairs[s].key != key) s = (s + 1) & m->mask;
        m->pairs[s] = (pair_slot_t){key, (uint32_t)i, new_id[i]};
    }
    hot_fill(m);
    byte_pairs_fill(m);
    m->generation = __atomic_fetch_add(&model_generation, 1, __ATOMIC_RELAXED);
    return 0;
}

int hfb_set_bytes(hfb_model *m, const int32_t *byte_ids, const uint32_t *tok_len,
                  const void *whole) {
    selfs_drop(m);
    premerge_drop(m);
    memcpy(m->byte_ids, byte_ids, sizeof m->byte_ids);
    if (!m->byte_pairs) m->byte_pairs = malloc(65536 * sizeof *m->byte_pairs); /* NULL: unused */
    byte_pairs_fill(m);
    m->tok_len = tok_len;
    m->whole = (const vt_table *)whole;
    m->generation = __atomic_fetch_add(&model_generation, 1, __ATOMIC_RELAXED);
    return 0;
}

static inline uint32_t pair_rank(const hfb_model *m, uint32_t a, uint32_t b, uint32_t *new_id) {
    uint64_t key = ((uint64_t)a << 32) | b, h = key * 0x9E3779B97F4A7C15ull;
    if (m->hot && a < m->n_ids && b < m->n_ids) {
        uint64_t want = (uint64_t)a << 20 | b;
        for (size_t s = (size_t)(h >> m->hot_shift);; s = (s + 1) & m->hot_mask) {
            uint64_t v = m->hot[s];
            if (v >> 24 == want) {
                uint32_t r = (uint32_t)(v & 0xFFFFFF);
                *new_id = m->hot_new[r];
                return r;
            }
            if (v == HOT_EMPTY) break;
        }
        uint64_t bit = cold_bit(h);
        if (!((m->cold_bits[bit >> 6] >> (bit & 63)) & 1)) return NO_RANK;
    }
    for (size_t s = (size_t)(h >> m->shift);; s = (s + 1) & m->mask) {
        const pair_slot_t *ps = &m->pairs[s];
        uint64_t k = ps->key;
        if (k == key) {
            *new_id = ps->new_id;
            return ps->rank;
        }
        if (k == EMPTY_KEY) return NO_RANK;
    }
}

/* The small table and the bitmap from the pair table (none when an id is 2^20 - 1 or more:
   a << 20 | b would not be unique, nor when out of memory). */
static void hot_fill(hfb_model *m) {
    free(m->hot), free(m->hot_new), free(m->cold_bits);
    m->hot = NULL, m->hot_new = NULL, m->cold_bits = NULL;
    if (m->n_ids >= HOT_ID_LIMIT - 1) return;
    size_t cap = 16;
    unsigned shift = 60;
    while (cap < 2 * HOT_RANKS) cap <<= 1, shift--;
    uint64_t *hot = malloc(cap * sizeof *hot), *bits = calloc((1u << COLD_BITS) / 64, sizeof *bits);
    uint32_t *hot_new = malloc(HOT_RANKS * sizeof *hot_new);
    if (!hot || !bits || !hot_new) {
        free(hot), free(bits), free(hot_new);
        return;
    }
    for (size_t i = 0; i < cap; i++) hot[i] = HOT_EMPTY;
    for (size_t i = 0; i <= m->mask; i++) {
        const pair_slot_t *ps = &m->pairs[i];
        if (ps->key == EMPTY_KEY) continue;
        uint64_t h = ps->key * 0x9E3779B97F4A7C15ull;
        if (ps->rank < HOT_RANKS) {
            size_t s = (size_t)(h >> shift);
            while (hot[s] != HOT_EMPTY) s = (s + 1) & (cap - 1);
            hot[s] = (ps->key >> 32) << 44 | (ps->key & 0xFFFFFFFFu) << 24 | ps->rank;
            hot_new[ps->rank] = ps->new_id;
        } else {
            uint64_t bit = cold_bit(h);
            bits[bit >> 6] |= 1ull << (bit & 63);
        }
    }
    m->hot = hot, m->hot_new = hot_new, m->cold_bits = bits, m->hot_mask = cap - 1, m->hot_shift = shift;
}

/* byte_pairs from the pair table and byte_ids (a missing byte: no merge; such a piece never
   reaches the merge). */
static void byte_pairs_fill(hfb_model *m) {
    if (!m->byte_pairs) return;
    for (uint32_t x = 0; x < 256; x++)
        for (uint32_t y = 0; y < 256; y++) {
            byte_pair_t *bp = &m->byte_pairs[x << 8 | y];
            bp->rank = NO_RANK, bp->new_id = 0;
            if (m->byte_ids[x] >= 0 && m->byte_ids[y] >= 0)
                bp->rank = pair_rank(m, (uint32_t)m->byte_ids[x], (uint32_t)m->byte_ids[y], &bp->new_id);
        }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HFB_X86 1
static int have_avx2(void) {
    static int v = -1; /* threads may set it at once, to the same value: relaxed atomics */
    int r = __atomic_load_n(&v, __ATOMIC_RELAXED);
    if (r < 0) {
        __builtin_cpu_init();
        r = __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&v, r, __ATOMIC_RELAXED);
    }
    return r;
}

/* The position of the lowest of r[0:n] (n a multiple of 8, at most LINEAR_MAX), the first on
   ties; *best gets the value. */
__attribute__((target("avx2"))) static size_t argmin_avx2(const uint32_t *r, size_t n, uint32_t *best) {
    __m256i m = _mm256_loadu_si256((const __m256i *)r);
    for (size_t i = 8; i < n; i += 8) m = _mm256_min_epu32(m, _mm256_loadu_si256((const __m256i *)(r + i)));
    m = _mm256_min_epu32(m, _mm256_permute2x128_si256(m, m, 1));
    m = _mm256_min_epu32(m, _mm256_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm256_min_epu32(m, _mm256_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
    *best = (uint32_t)_mm256_cvtsi256_si32(m);
    for (size_t i = 0;; i += 8) {
        __m256i eq = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(r + i)), m);
        unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(eq));
        if (mask) return i + (size_t)__builtin_ctz(mask);
    }
}
#endif

/* Fetches the slot of pair (a, b) into the cache ahead of its lookup. */
static inline void pair_prefetch(const hfb_model *m, uint32_t a, uint32_t b) {
    uint64_t h = (((uint64_t)a << 32) | b) * 0x9E3779B97F4A7C15ull;
    if (m->hot) {
        __builtin_prefetch(&m->hot[(size_t)(h >> m->hot_shift)]);
        uint64_t bit = cold_bit(h);
        if (!((m->cold_bits[bit >> 6] >> (bit & 63)) & 1)) return;
    }
    __builtin_prefetch(&m->pairs[(size_t)(h >> m->shift)]);
}

/* Pre-merged characters (see premerge.h). Here a rank is a merge's line: R is the highest of
   the ranks of the merges that make a character's token from its bytes. hfb_build_premerge
   makes the tables: end_min[lead][x] the lowest rank of a merge (a, lead byte) where a's bytes
   end in x, start_min[last][y] of a merge (last byte, b) where b's start with y; and, checked
   there, merges of the token or of a three-byte character's two-byte part with anything. */
static int premerge_on = 1; /* hfb_set_premerge */

int hfb_set_premerge(int on) { return __atomic_exchange_n(&premerge_on, on ? 1 : 0, __ATOMIC_RELAXED); }

/* merge_linear's symbols before its first merge step, with the piece's characters pre-merged
   where that is exact: each such character becomes one symbol at its first byte, its other
   bytes dead (rank NO_RANK), then the pairs next to such symbols are looked up again.
   Returns how many symbols it removed and sets *last. Out of line: most pieces of English or
   code hold no lead byte. */
static __attribute__((noinline)) size_t premerge_piece(const hfb_model *m, const uint8_t *raw, size_t n,
                                                       uint32_t *ids, uint32_t *lens, uint32_t *rank,
                                                       uint32_t *nid, uint8_t *next, uint8_t *prev,
                                                       size_t *last) {
    if (!pm_maybe(raw, n)) return 0;
    size_t end, removed = pm_mark(m->premerge, raw, n, ids, lens, rank, next, prev, &end);
    if (!removed) return 0;
    for (size_t i = 0; i != end; i = next[i]) {
        size_t j = next[i], jl = j == end ? n - j : (size_t)next[j] - j;
        if (j - i > 1 || jl > 1) rank[i] = pair_rank(m, ids[i], ids[j], &nid[i]);
    }
    rank[end] = NO_RANK;
    *last = end;
    return removed;
}

/* Few symbols: find the lowest rank (leftmost on ties) by a scan, merge, repeat.  The symbols
   stay where they are (a merged-away one gets rank NO_RANK and leaves the list next/prev), so
   a merge moves nothing: the scan runs over the first n - 1 slots in position order, which
   keeps ties leftmost.  Compacted at the end.  raw, if not NULL, holds the piece's bytes
   (ids[i] is byte raw[i]'s symbol): the first pairs come from the byte-pair table; else key,
   if not NULL, says which symbols are an ASCII character's token (key[i] < 0x80, the
   character): pairs of two such come from chr_pairs. */
static size_t merge_linear(const hfb_model *m, uint32_t *ids, uint32_t *lens, size_t n,
                           const uint8_t *raw, const uint8_t *key) {
    uint32_t rank[LINEAR_MAX], nid[LINEAR_MAX];
    uint8_t next[LINEAR_MAX], prev[LINEAR_MAX];
    if (n < 2) return n;
    const byte_pair_t *bp = raw ? m->byte_pairs : NULL, *cp = key && !raw ? m->chr_pairs : NULL;
    for (size_t i = 0; i + 1 < n; i++) {
        if (bp) {
            const byte_pair_t *e = &bp[(uint32_t)raw[i] << 8 | raw[i + 1]];
            rank[i] = e->rank;
            nid[i] = e->new_id;
        } else if (cp && (key[i] | key[i + 1]) < 0x80) {
            const byte_pair_t *e = &cp[(uint32_t)key[i] << 7 | key[i + 1]];
            rank[i] = e->rank;
            nid[i] = e->new_id;
        } else
            rank[i] = pair_rank(m, ids[i], ids[i + 1], &nid[i]);
        next[i] = (uint8_t)(i + 1);
        prev[i + 1] = (uint8_t)i;
    }
    /* the slots scanned: 0 .. last - 1, and NO_RANK up to the next multiple of 8 (the last
       symbol's slot and the dead ones stay NO_RANK) */
    size_t last = n - 1, k = n;
    for (size_t i = last; i < ((last + 7) & ~(size_t)7); i++) rank[i] = NO_RANK;
    if (bp && m->premerge && __atomic_load_n(&premerge_on, __ATOMIC_RELAXED))
        k -= premerge_piece(m, raw, n, ids, lens, rank, nid, next, prev, &last);
    /* The pair table is larger than the CPU caches and each merge's two lookups wait for the
       merge before them: fetch, for every pair that can merge, the slots its merge would look
       up next (one merge ahead), so that they load in parallel rather than one after another. */
    for (size_t i = 0; i < last; i++)
        if (rank[i] != NO_RANK) {
            if (i > 0) pair_prefetch(m, ids[prev[i]], nid[i]);
            if (next[i] != last) pair_prefetch(m, nid[i], ids[next[next[i]]]);
        }
#ifdef HFB_X86
    const int simd = have_avx2();
#endif
    while (last) {
        uint32_t best = NO_RANK;
        size_t bi = 0;
#ifdef HFB_X86
        if (simd)
            bi = argmin_avx2(rank, (last + 7) & ~(size_t)7, &best);
        else
#endif
            for (size_t i = 0; i < last; i++)
                if (rank[i] < best) {
                    best = rank[i];
                    bi = i;
                }
        if (best == NO_RANK) break;
        size_t nx = next[bi];
        ids[bi] = nid[bi];
        if (lens) lens[bi] += lens[nx];
        k--;
        size_t nn = 0;
        if (nx == last) { /* bi is the last symbol now */
            rank[bi] = NO_RANK;
            last = bi;
        } else {
            nn = next[nx];
            rank[nx] = NO_RANK;
            next[bi] = (uint8_t)nn;
            prev[nn] = (uint8_t)bi;
            rank[bi] = pair_rank(m, ids[bi], ids[nn], &nid[bi]);
        }
        size_t pv = bi > 0 ? prev[bi] : 0;
        if (bi > 0) rank[pv] = pair_rank(m, ids[pv], ids[bi], &nid[pv]);
        /* one merge ahead, as above, for the two pairs that changed */
        if (rank[bi] != NO_RANK) {
            if (bi > 0) pair_prefetch(m, ids[pv], nid[bi]);
            if (nn != last) pair_prefetch(m, nid[bi], ids[next[nn]]);
        }
        if (bi > 0 && rank[pv] != NO_RANK) {
            if (pv > 0) pair_prefetch(m, ids[prev[pv]], nid[pv]);
            if (bi != last) pair_prefetch(m, nid[pv], ids[next[bi]]);
        }
    }
    if (k < n) {
        size_t j = 0;
        for (size_t i = 0;; i = next[i]) {
            ids[j] = ids[i];
            if (lens) lens[j] = lens[i];
            j++;
            if (i == last) break;
        }
    }
    return k;
}

typedef struct {
    uint64_t order; /* rank << 32 | pos: the lowest rank first, the leftmost on ties */
    uint32_t new_id;
} heap_entry;

static inline int heap_less(const heap_entry *x, const heap_entry *y) { return x->order < y->order; }

static inline heap_entry entry(uint32_t rank, uint32_t pos, uint32_t new_id) {
    return (heap_entry){((uint64_t)rank << 32) | pos, new_id};
}

static void heap_push(heap_entry *h, size_t *len, heap_entry e) {
    size_t i = (*len)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_less(&e, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static heap_entry heap_pop(heap_entry *h, size_t *len) {
    heap_entry top = h[0], last = h[--*len];
    size_t i = 0, n = *len;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_less(&h[c + 1], &h[c])) c++;
        if (!heap_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (n) h[i] = last;
    return top;
}

/* The heap merge over caller-provided work arrays (n each; heap 3n); raw as for merge_linear
   (the first pairs from the byte-pair table, not hashed into the pair table one by one). */
static size_t merge_heap_in(const hfb_model *m, uint32_t *ids, uint32_t *lens, size_t n,
                            int32_t *prev, int32_t *next, uint8_t *alive, heap_entry *heap,
                            const uint8_t *raw) {
    size_t hl = 0;
    const byte_pair_t *bp = raw ? m->byte_pairs : NULL;
    for (size_t i = 0; i < n; i++) {
        prev[i] = (int32_t)i - 1;
        next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
        alive[i] = 1;
        if (i + 1 < n) {
            uint32_t nid, r;
            if (bp) {
                const byte_pair_t *e = &bp[(uint32_t)raw[i] << 8 | raw[i + 1]];
                r = e->rank, nid = e->new_id;
            } else
                r = pair_rank(m, ids[i], ids[i + 1], &nid);
            if (r != NO_RANK) heap_push(heap, &hl, entry(r, (uint32_t)i, nid));
        }
    }
    while (hl) {
        heap_entry t = heap_pop(heap, &hl);
        uint32_t p = (uint32_t)t.order;
        if (!alive[p] || next[p] < 0) continue;
        uint32_t nx = (uint32_t)next[p], nid;
        if (pair_rank(m, ids[p], ids[nx], &nid) == NO_RANK || nid != t.new_id) continue;
        ids[p] = t.new_id;
        if (lens) lens[p] += lens[nx];
        alive[nx] = 0;
        next[p] = next[nx];
        if (next[p] >= 0) prev[next[p]] = (int32_t)p;
        uint32_t r;
        if (prev[p] >= 0 && (r = pair_rank(m, ids[prev[p]], ids[p], &nid)) != NO_RANK)
            heap_push(heap, &hl, entry(r, (uint32_t)prev[p], nid));
        if (next[p] >= 0 && (r = pair_rank(m, ids[p], ids[next[p]], &nid)) != NO_RANK)
            heap_push(heap, &hl, entry(r, p, nid));
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (alive[i]) {
            ids[k] = ids[i];
            if (lens) lens[k] = lens[i];
            k++;
        }
    return k;
}

/* Many symbols: tokenizers' Word::merge_all (a heap of (rank, position) with stale entries
   skipped), O(n log n).  Every merge pushes at most two entries: 3n bounds the heap. */
static size_t merge_heap(const hfb_model *m, uint32_t *ids, uint32_t *lens, size_t n, const uint8_t *raw) {
    if (n <= HEAP_STACK) {
        int32_t prev[HEAP_STACK], next[HEAP_STACK];
        uint8_t alive[HEAP_STACK];
        heap_entry heap[3 * HEAP_STACK];
        return merge_heap_in(m, ids, lens, n, prev, next, alive, heap, raw);
    }
    int32_t *prev = malloc(n * sizeof *prev), *next = malloc(n * sizeof *next);
    uint8_t *alive = malloc(n);
    heap_entry *heap = malloc(3 * n * sizeof *heap);
    size_t k = SIZE_MAX;
    if (prev && next && alive && heap) k = merge_heap_in(m, ids, lens, n, prev, next, alive, heap, raw);
    free(prev), free(next), free(alive), free(heap);
    return k;
}

/* hfb_merge; raw as for merge_linear. A vocabulary that gives one id to two strings merges on
   the heap whatever the length: tokenizers' heap then takes a stale entry whose pair has
   changed into another pair with the same new id (vocabulary "ab" = "abx" = 10, merges "b x",
   "a b", "bx y", "a bx": in "abxy" the entry of (a, b) merges (a, bx) at (a, b)'s rank, [10, 3];
   the lowest rank first gives [0, 5]), and merge_heap_in checks entries as it does. */
static size_t merge_any_key(const hfb_model *m, uint32_t *ids, uint32_t *lens, size_t n, const uint8_t *raw,
                            const uint8_t *key) {
    return n <= LINEAR_MAX && m->unique_ids ? merge_linear(m, ids, lens, n, raw, key)
                                            : merge_heap(m, ids, lens, n, raw);
}

static size_t merge_any(const hfb_model *m, uint32_t *ids, uint32_t *lens, size_t n, const uint8_t *raw) {
    return merge_any_key(m, ids, lens, n, raw, NULL);
}

size_t hfb_merge(const hfb_model *m, uint32_t *ids, uint32_t *lens, size_t n) {
    return merge_any(m, ids, lens, n, NULL);
}

/* ---- loading ---------------------------------------------------------------------------- */

int hfb_vocab_lengths(const uint8_t *tokens, size_t n, uint8_t sep, const uint32_t *ids,
                      const int16_t *byte_of, size_t n_byte_of, uint32_t *tok_len, void *whole) {
    uint8_t buf[256];
    const uint8_t *p = tokens;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = memchr(p, sep, SIZE_MAX / 2);
        size_t len = (size_t)(e - p), k = 0;
        uint8_t *raw = len <= sizeof buf ? buf : malloc(len);
        if (!raw) return -1;
        int is_bytes = 1;
        for (size_t j = 0; j < len && is_bytes;) {
            uint32_t b = p[j], cp, need;
            if (b < 0x80) cp = b, need = 0;
            else if (b >= 0xC0 && b < 0xE0) cp = b & 0x1F, need = 1;
            else { is_bytes = 0; break; } /* byte-level characters are below U+0800 */
            if (j + need >= len || (need && (p[j + 1] & 0xC0) != 0x80)) { is_bytes = 0; break; }
            if (need) cp = (cp << 6) | (p[j + 1] & 0x3F);
            j += need + 1;
            if (cp >= n_byte_of || byte_of[cp] < 0) { is_bytes = 0; break; }
            raw[k++] = (uint8_t)byte_of[cp];
        }
        tok_len[ids[i]] = is_bytes ? (uint32_t)k : (uint32_t)len;
        if (is_bytes && whole && vt_insert((vt_table *)whole, (const char *)raw, k, (int32_t)ids[i]) < 0) {
            if (raw != buf) free(raw);
            return -1;
        }
        if (raw != buf) free(raw);
        p = e + 1;
    }
    return 0;
}

/* The byte length of the first `chars` characters of p[0:len] (all of it if shorter). */
static size_t utf8_prefix(const uint8_t *p, size_t len, size_t chars) {
    size_t j = 0;
    while (chars && j < len) {
        j++;
        while (j < len && (p[j] & 0xC0) == 0x80) j++;
        chars--;
    }
    return j;
}

int64_t hfb_merge_ids(const uint8_t *tokens, size_t ntok, const uint32_t *ids, const uint8_t *merges,
                      size_t nmerges, uint8_t sep, int pairs, size_t prefix_chars,
                      uint32_t *a_ids, uint32_t *b_ids, uint32_t *new_ids) {
    vt_table *t = vt_new(ntok);
    if (!t) return -1;
    const uint8_t *p = tokens;
    for (size_t i = 0; i < ntok; i++) {
        const uint8_t *e = memchr(p, sep, SIZE_MAX / 2);
        if (vt_insert(t, (const char *)p, (size_t)(e - p), (int32_t)ids[i]) < 0) {
            vt_free(t);
            return -1;
        }
        p = e + 1;
    }
    uint8_t buf[512];
    int64_t rc = 0;
    p = merges;
    for (size_t i = 0; i < nmerges && !rc; i++) {
        const uint8_t *a = p, *ae, *b, *be;
        if (pairs) {
            ae = memchr(a, sep, SIZE_MAX / 2);
            b = ae + 1;
            be = memchr(b, sep, SIZE_MAX / 2);
        } else {
            be = memchr(a, sep, SIZE_MAX / 2);
            ae = memchr(a, ' ', (size_t)(be - a));
            if (!ae || memchr(ae + 1, ' ', (size_t)(be - ae - 1))) {
                rc = -(int64_t)(2 + i);
                break;
            }
            b = ae + 1;
        }
        p = be + 1;
        size_t al = (size_t)(ae - a), bl = (size_t)(be - b);
        int32_t ia = vt_get(t, (const char *)a, al), ib = vt_get(t, (const char *)b, bl);
        size_t skip = utf8_prefix(b, bl, prefix_chars), nl = al + bl - skip;
        uint8_t *cat = nl <= sizeof buf ? buf : malloc(nl ? nl : 1);
        if (!cat) {
            rc = -1;
            break;
        }
        memcpy(cat, a, al);
        memcpy(cat + al, b + skip, bl - skip);
        int32_t in = vt_get(t, (const char *)cat, nl);
        if (cat != buf) free(cat);
        if (ia < 0 || ib < 0 || in < 0) {
            rc = -(int64_t)(2 + i);
            break;
        }
        a_ids[i] = (uint32_t)ia, b_ids[i] = (uint32_t)ib, new_ids[i] = (uint32_t)in;
    }
    vt_free(t);
    return rc;
}

/* Freed caches, taken by the next hfb_cache_new: memory already mapped, where a new cache is
   faulted in page by page (8 MiB: tens of ms of system time on a VM, paid by the first call
   of each thread that encodes with a new tokenizer). At most CACHE_POOL are kept. */
#define CACHE_POOL 2
static hfb_cache *cache_pool[CACHE_POOL];
static pthread_mutex_t cache_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t cache_allocs;

size_t hfb_cache_allocs(void) { return __atomic_load_n(&cache_allocs, __ATOMIC_RELAXED); }

/* size bytes, 2 MiB-aligned, on transparent huge pages where the system has them (tables
   probed at random); freed with free(). */
static void *huge_alloc(size_t size) {
    void *p = NULL;
    if (posix_memalign(&p, 1u << 21, size)) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

hfb_cache *hfb_cache_new(void) {
    void *c = NULL;
    pthread_mutex_lock(&cache_pool_mu);
    for (size_t i = 0; i < CACHE_POOL && !c; i++)
        if (cache_pool[i]) c = cache_pool[i], cache_pool[i] = NULL;
    pthread_mutex_unlock(&cache_pool_mu);
    if (!c) {
        /* slots on cache lines (a set's two ways are two adjacent lines) */
        if (!(c = huge_alloc(sizeof(hfb_cache)))) return NULL;
        __atomic_add_fetch(&cache_allocs, 1, __ATOMIC_RELAXED);
    }
    return memset(c, 0, sizeof(hfb_cache));
}

void hfb_cache_word_longs(const hfb_cache *c, size_t *kept, size_t *hits, size_t *bytes) {
    *kept = c ? c->word_longs_kept : 0;
    *hits = c ? c->word_long_hits : 0;
    *bytes = c ? c->word_longs_bytes : 0;
}


static void clear_longs(hfb_cache *c) {
    for (size_t i = 0; i < LONG_SLOTS; i++) {
        free(c->longs[i]);
        c->longs[i] = NULL;
    }
    for (size_t i = 0; i < WORD_LONG_SLOTS; i++) {
        free(c->word_longs[i]);
        c->word_longs[i] = NULL;
    }
    c->word_longs_kept = c->word_long_hits = c->word_longs_bytes = 0;
}

static void scratch_free(scratch *s);

void hfb_cache_free(hfb_cache *c) {
    if (!c) return;
    scratch_free(&c->s);
    clear_longs(c);
    free(c->words);
    c->words = NULL;
    pthread_mutex_lock(&cache_pool_mu);
    for (size_t i = 0; i < CACHE_POOL && c; i++)
        if (!cache_pool[i]) cache_pool[i] = c, c = NULL;
    pthread_mutex_unlock(&cache_pool_mu);
    free(c);
}

static inline uint32_t *long_ids(long_entry *e) {
    return (uint32_t *)(void *)(e->bytes + ((e->len + 3u) & ~3u));
}

/* A long store's block of len bytes and k ids, in bytes. */
static inline size_t long_size(size_t len, size_t k) {
    return sizeof(long_entry) + ((len + 3u) & ~(size_t)3u) + k * sizeof(uint32_t);
}

/* The block in *slot if it holds the piece p[0:len], else NULL. */
static inline long_entry *long_find(long_entry *const *slot, const uint8_t *p, size_t len) {
    long_entry *e = *slot;
    return e && e->len == len && memcmp(e->bytes, p, len) == 0 ? e : NULL;
}

/* The piece p[0:len] and its ids into *slot (replacing what was there); 0, or -1 when out of
   memory, which only loses the entry (the caller has the ids). */
static int long_put(long_entry **slot, const uint8_t *p, size_t len, const uint32_t *ids, size_t k) {
    long_entry *e = malloc(long_size(len, k));
    if (!e) return -1;
    free(*slot);
    e->len = (uint32_t)len;
    e->nids = (uint32_t)k;
    memcpy(e->bytes, p, len);
    memcpy(long_ids(e), ids, k * sizeof *ids);
    *slot = e;
    return 0;
}

static inline uint64_t bytes_hash(const uint8_t *p, size_t len) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ len, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, p + i, len - i);
    h = (h ^ w) * 0x94D049BB133111EBull;
    return h ^ (h >> 32);
}

/* key_mask[len][i]: the bytes of word i that belong to a piece of len bytes. */
static const struct key_masks {
    uint64_t w[CACHE_KEY + 1][3];
} key_mask = {{
#define KW(l, i) ((l) >= 8 * (i) + 8 ? ~0ull : (l) <= 8 * (i) ? 0ull : (1ull << (8 * ((l) - 8 * (i)))) - 1)
#define KROW(l) {KW(l, 0), KW(l, 1), KW(l, 2)}
    KROW(0), KROW(1), KROW(2), KROW(3), KROW(4), KROW(5), KROW(6), KROW(7), KROW(8), KROW(9),
    KROW(10), KROW(11), KROW(12), KROW(13), KROW(14), KROW(15), KROW(16), KROW(17), KROW(18),
    KROW(19), KROW(20), KROW(21), KROW(22), KROW(23), KROW(24),
#undef KROW
#undef KW
}};
_Static_assert(CACHE_KEY == 24, "key_mask has rows for 0..24 bytes");

/* The piece p[0:len] (len <= CACHE_KEY) as three zero-padded words; end bounds the readable
   memory. */
static inline void load_key(const uint8_t *p, size_t len, const uint8_t *end, uint64_t w[3]) {
    if ((size_t)(end - p) >= CACHE_KEY) {
        memcpy(w, p, CACHE_KEY);
        for (int i = 0; i < 3; i++) w[i] &= key_mask.w[len][i];
    } else {
        w[0] = w[1] = w[2] = 0;
        for (size_t i = 0; i < len; i++) w[i >> 3] |= (uint64_t)p[i] << (8 * (i & 7));
    }
}

/* Three independent products (no multiply chain); the set index takes the top bits. */
static inline uint64_t key_hash(const uint64_t w[3], size_t len) {
    uint64_t h = (w[0] ^ ((uint64_t)len << 58)) * 0x9E3779B97F4A7C15ull + w[1] * 0xBF58476D1CE4E5B9ull +
                 w[2] * 0x94D049BB133111EBull;
    return h ^ (h >> 29);
}

/* A cache made for a model (cache_sync) starts with the tokens of the self table: a piece met
   for the first time that is one of them is looked up there before it is merged, and the
   entry is what that first sight would store (encode_cold). Each such first sight cost the
   table's two cache misses (its bitmap, then its slot: ~11 % of DeepSeek V3's time on the
   held-out multilingual text); now it is a hit. At most half the slots are seeded, with the
   lowest ids (for a BPE vocabulary, the earliest merges: the commonest tokens), inserted from
   the highest of them down, so that where a set gets more than two the lowest ids stay. Tests
   turn it off (hfb_set_seed) to check that the ids are the same.
   A seeded cache's first sights do not look in the self table at all (encode_cold): with the
   commonest tokens in the cache, most pieces that reach it are not tokens, and its bitmap's
   and slots' cache misses cost more than the merges they saved for the rest (a token that
   merges back into itself gives the same ids merged). DeepSeek V3, alternating processes,
   medians of 6, `encode_batch_fast` / `encode` MB/s: intl 49.4 / 43.0 -> 50.8 / 45.0, en
   103.7 / 91.4 -> 106.2 / 90.4, prose 86.7 / 76.6 -> 92.0 / 78.7, multi 77.5 / 66.0 -> 79.8 /
   66.6. */
static int seed_on = 1;
static size_t seeds_made; /* entries seeded since the process started (statistics) */

int hfb_set_seed(int on) { return __atomic_exchange_n(&seed_on, on ? 1 : 0, __ATOMIC_RELAXED); }

size_t hfb_seeds(void) { return __atomic_load_n(&seeds_made, __ATOMIC_RELAXED); }

static void seed_cache(const hfb_model *m, hfb_cache *c) {
    c->seeded = 0;
    if (!__atomic_load_n(&seed_on, __ATOMIC_RELAXED) || !m->selfs || !m->self_order) return;
    c->seeded = 1;
    size_t n = m->self_count < (1u << CACHE_BITS) / 2 ? m->self_count : (1u << CACHE_BITS) / 2;
    /* in groups: the sets of a group are asked for before any is written (random lines of
       an 8 MiB table) */
    enum { GROUP = 16 };
    cache_slot *sets[GROUP];
    const self_slot *from[GROUP];
    for (size_t i = n; i > 0;) {
        size_t g = 0;
        while (i > 0 && g < GROUP) {
            const self_slot *e = &m->selfs[m->self_order[--i]];
            uint64_t h = key_hash(e->key, e->klen);
            from[g] = e;
            sets[g] = &c->slots[(h >> (64 - CACHE_BITS)) & ~(size_t)1];
            __builtin_prefetch(sets[g], 1);
            __builtin_prefetch(sets[g] + 1, 1);
            g++;
        }
        for (size_t k = 0; k < g; k++) { /* highest id first, as above */
            cache_slot *slot = sets[k];
            if (slot[0].klen) slot[1] = slot[0];
            memcpy(slot->key, from[k]->key, sizeof slot->key);
            slot->klen = from[k]->klen;
            slot->nids = 1;
            slot->ids[0] = from[k]->id;
        }
    }
    __atomic_add_fetch(&seeds_made, n, __ATOMIC_RELAXED);
}

/* A cache of an older model (or of none yet) is void: cleared before a text's first piece,
   then seeded. */
static void cache_sync(const hfb_model *m, hfb_cache *c) {
    if (c && (c->model != m || c->generation != m->generation)) {
        if (c->model) { /* a new cache is zero already (hfb_cache_new) */
            memset(c->slots, 0, sizeof c->slots);
            clear_longs(c);
            free(c->words);
            c->words = NULL;
        }
        c->model = m;
        c->generation = m->generation;
        seed_cache(m, c);
    }
}

/* A vocabulary record's raw bytes (its characters are byte-level characters, byte_of[cp]):
   the first cap of them to raw and the last to *tail, the count returned; -1 if a character
   is not one. */
static long record_raw(const uint8_t *p, size_t len, const int16_t *byte_of, size_t n_byte_of,
                       uint8_t *raw, size_t cap, uint8_t *tail) {
    size_t k = 0;
    for (size_t j = 0; j < len;) {
        uint32_t b = p[j], cp, need;
        if (b < 0x80) cp = b, need = 0;
        else if (b >= 0xC0 && b < 0xE0) cp = b & 0x1F, need = 1;
        else return -1;
        if (j + need >= len || (need && (p[j + 1] & 0xC0) != 0x80)) return -1;
        if (need) cp = (cp << 6) | (p[j + 1] & 0x3F);
        j += need + 1;
        if (cp >= n_byte_of || byte_of[cp] < 0) return -1;
        if (k < cap) raw[k] = (uint8_t)byte_of[cp];
        *tail = (uint8_t)byte_of[cp];
        k++;
    }
    return (long)k;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int hfb_build_selfs(hfb_model *m, const uint8_t *tokens, size_t n, uint8_t sep, const uint32_t *ids,
                    const int16_t *byte_of, size_t n_byte_of) {
    if (m->suffix) return 0; /* the tables know no suffix */
    selfs_drop(m);
    if (!m->byte_pairs || !n) return 0;
    size_t cap = 16;
    unsigned shift = 60;
    while (cap < 2 * n) cap <<= 1, shift--;
    self_slot *tab = calloc(cap, sizeof *tab);
    uint64_t *bits = calloc((1u << SELF_BITS) / 64, sizeof *bits);
    if (!tab || !bits) {
        free(tab), free(bits);
        return -1;
    }
    const uint8_t *p = tokens;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = memchr(p, sep, SIZE_MAX / 2);
        uint8_t raw[CACHE_KEY], tail;
        long kk = record_raw(p, (size_t)(e - p), byte_of, n_byte_of, raw, CACHE_KEY, &tail);
        p = e + 1;
        if (kk < SELF_MIN || kk > CACHE_KEY) continue;
        size_t k = (size_t)kk;
        int ok = 1;
        for (size_t j = 0; j < k; j++) ok &= m->byte_ids[raw[j]] >= 0;
        if (!ok) continue;
        uint32_t sym[CACHE_KEY];
        for (size_t j = 0; j < k; j++) sym[j] = (uint32_t)m->byte_ids[raw[j]];
        if (merge_any(m, sym, NULL, k, raw) != 1 || sym[0] != ids[i]) continue;
        uint64_t w[3];
        load_key(raw, k, raw + k, w);
        uint64_t h = key_hash(w, k), bit = self_bit(h);
        bits[bit >> 6] |= 1ull << (bit & 63);
        size_t s = (size_t)(h >> shift);
        while (tab[s].klen) s = (s + 1) & (cap - 1); /* raw bytes are distinct per token */
        memcpy(tab[s].key, w, sizeof w);
        tab[s].klen = (uint32_t)k;
        tab[s].id = ids[i];
        m->self_count++;
    }
    /* the order seed_cache takes them in (none, if out of memory: no seeds then) */
    uint64_t *by_id = malloc((m->self_count ? m->self_count : 1) * sizeof *by_id);
    uint32_t *order = malloc((m->self_count ? m->self_count : 1) * sizeof *order);
    if (by_id && order) {
        size_t j = 0;
        for (size_t s = 0; s < cap; s++)
            if (tab[s].klen) by_id[j++] = (uint64_t)tab[s].id << 32 | s;
        qsort(by_id, j, sizeof *by_id, cmp_u64);
        for (size_t i = 0; i < j; i++) order[i] = (uint32_t)by_id[i];
    } else {
        free(order);
        order = NULL;
    }
    free(by_id);
    m->self_order = order;
    m->selfs = tab;
    m->self_bits = bits;
    m->self_mask = cap - 1;
    m->self_shift = shift;
    m->generation = __atomic_fetch_add(&model_generation, 1, __ATOMIC_RELAXED);
    return 0;
}

/* What a three-byte character's bytes merge into: its token (NO_RANK if they do not become
   one token), R and the two-byte part on the way in *part, with *part_left set when that
   part is its first two bytes. */
static uint32_t char3_token(const hfb_model *m, const uint8_t *c, uint32_t *R, uint32_t *part,
                            int *part_left) {
    uint32_t b0 = (uint32_t)m->byte_ids[c[0]], b1 = (uint32_t)m->byte_ids[c[1]], b2 = (uint32_t)m->byte_ids[c[2]];
    uint32_t n01 = 0, n12 = 0, tok = 0;
    uint32_t r01 = pair_rank(m, b0, b1, &n01), r12 = pair_rank(m, b1, b2, &n12), r2;
    if (r01 == NO_RANK && r12 == NO_RANK) return NO_RANK;
    if (r01 < r12) {
        r2 = pair_rank(m, n01, b2, &tok);
        *R = r01 > r2 ? r01 : r2, *part = n01, *part_left = 1;
    } else {
        r2 = pair_rank(m, b0, n12, &tok);
        *R = r12 > r2 ? r12 : r2, *part = n12, *part_left = 0;
    }
    return r2 == NO_RANK ? NO_RANK : tok;
}

#define PM_ANY 0xFFFFu /* an id's first or last byte, when it is not known */

int hfb_build_premerge(hfb_model *m, const uint8_t *tokens, size_t n, uint8_t sep, const uint32_t *ids,
                       const int16_t *byte_of, size_t n_byte_of) {
    if (m->suffix) return 0; /* the tables know no suffix */
    premerge_drop(m);
    if (!m->byte_pairs || !n) return 0;
    for (int b = 0; b < 256; b++)
        if (m->byte_ids[b] < 0 || (uint32_t)m->byte_ids[b] >= m->n_ids) return 0; /* no byte-level model */
    size_t n_ids = m->n_ids;
    premerge_tables *pm = premerge_tables_new();
    /* per id: its first and last raw byte (PM_ANY: not known, so any byte), its raw bytes if
       it has two or three, the lowest rank of a merge with it on the left, on the right */
    uint16_t *first = malloc(n_ids * sizeof *first), *last = malloc(n_ids * sizeof *last);
    uint8_t(*small)[4] = calloc(n_ids, sizeof *small); /* [0]: 2 or 3 (the length), else 0;
                                                          [3]: a record seen */
    uint32_t *min_l = malloc(n_ids * sizeof *min_l), *min_r = malloc(n_ids * sizeof *min_r);
    uint8_t *is_byte = calloc(n_ids, 1); /* 1: the id of a lead byte, 2: of a continuation byte */
    int rc = -1;
    if (!pm || !first || !last || !small || !min_l || !min_r || !is_byte) goto done;
    for (uint32_t x = 0xC2; x <= 0xEF; x++) is_byte[m->byte_ids[x]] |= 1;
    for (uint32_t x = 0x80; x <= 0xBF; x++) is_byte[m->byte_ids[x]] |= 2;
    memset(first, 0xFF, n_ids * sizeof *first);
    memset(last, 0xFF, n_ids * sizeof *last);
    memset(min_l, 0xFF, n_ids * sizeof *min_l);
    memset(min_r, 0xFF, n_ids * sizeof *min_r);
    /* a file may give one id to several strings (tokenizers accepts it): such an id's first and
       last bytes are unknown, and it has no character shape */
    const uint8_t *p = tokens;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = memchr(p, sep, SIZE_MAX / 2);
        uint8_t raw[3], tail = 0;
        long k = record_raw(p, (size_t)(e - p), byte_of, n_byte_of, raw, 3, &tail);
        p = e + 1;
        uint32_t id = ids[i];
        if (id >= n_ids) continue;
        if (small[id][3]) { /* a second record: the id's bytes are not known */
            first[id] = last[id] = PM_ANY;
            small[id][0] = 0;
            continue;
        }
        small[id][3] = 1;
        if (k <= 0) continue; /* not byte-level: unknown bytes */
        first[id] = raw[0];
        last[id] = tail;
        if (k == 2 || k == 3) {
            small[id][0] = (uint8_t)k;
            memcpy(small[id] + 1, raw, (size_t)k);
        }
    }
    /* every merge (a, b) of rank r joins b's first byte to a's last; where b is a lead byte
       alone (b may be the id of several bytes), by a's last byte (any byte if unknown), and
       where a is a continuation byte alone, by b's first */
    for (size_t s = 0; s <= m->mask; s++) {
        const pair_slot_t *ps = &m->pairs[s];
        if (ps->key == EMPTY_KEY) continue;
        uint32_t a = (uint32_t)(ps->key >> 32), b = (uint32_t)ps->key, r = ps->rank;
        if (a >= n_ids || b >= n_ids) continue;
        pm_min(&min_l[a], r);
        pm_min(&min_r[b], r);
        if (is_byte[b] & 1)
            for (uint32_t lead = 0xC2; lead <= 0xEF; lead++) {
                if ((uint32_t)m->byte_ids[lead] != b) continue;
                uint32_t *row = &pm->end_min[(lead - 0xC2u) * 256];
                if (last[a] < 256) pm_min(&row[last[a]], r);
                else for (int x = 0; x < 256; x++) pm_min(&row[x], r);
            }
        if (is_byte[a] & 2)
            for (uint32_t cont = 0x80; cont <= 0xBF; cont++) {
                if ((uint32_t)m->byte_ids[cont] != a) continue;
                uint32_t *row = &pm->start_min[(cont & 0x3Fu) * 256];
                if (first[b] < 256) pm_min(&row[first[b]], r);
                else for (int y = 0; y < 256; y++) pm_min(&row[y], r);
            }
    }
    /* the characters: the token their bytes merge into, if nothing merges with it, or with the
       part on the way, at a lower rank than R */
    for (size_t id = 0; id < n_ids; id++) {
        size_t len = small[id][0], idx;
        const uint8_t *c = small[id] + 1;
        if (!len || pm_char(c, len, &idx) != len) continue;
        uint32_t R, tok;
        if (len == 2) {
            R = pair_rank(m, (uint32_t)m->byte_ids[c[0]], (uint32_t)m->byte_ids[c[1]], &tok);
            if (R == NO_RANK) continue;
        } else {
            uint32_t part;
            int part_left;
            tok = char3_token(m, c, &R, &part, &part_left);
            if (tok == NO_RANK || part >= n_ids || (part_left ? min_r[part] : min_l[part]) <= R) continue;
        }
        if (tok != id || min_l[tok] <= R || min_r[tok] <= R) continue;
        pm->chr[idx] = (uint64_t)(R + 1) | (uint64_t)tok << 32;
    }
    m->premerge = pm;
    pm = NULL;
    m->generation = __atomic_fetch_add(&model_generation, 1, __ATOMIC_RELAXED);
    rc = 0;
done:
    free(pm), free(first), free(last), free(small), free(min_l), free(min_r), free(is_byte);
    return rc;
}

/* ---- long pieces ------------------------------------------------------------------------ */

/* A piece of more than LINEAR_MAX bytes (a run of letters with no space, of spaces, of CJK, a
   base64 blob) merged whole went to the heap: 190-310 ns a byte, 1.3-3x tokenizers' speed
   where text of words runs 15-30x. Such a piece is merged in windows, as bpe.c's encode_long
   merges tiktoken's, on the lemma rs-bpe's backtracking encoder rests on: a token sequence is
   the merge of its bytes iff every adjacent pair (a, b) is compatible, i.e. the bytes of a then
   b merge into exactly [a, b]. It holds for any merge that takes the lowest (rank, position)
   pair first, where a pair's rank and new id follow from its two ids, as merge_linear's and
   tokenizers' Word::merge_all do (its stale heap entries are checked against the pair's new
   id, which for distinct tokens is the pair's own): until a boundary between two final tokens
   is crossed, each side merges as it would alone and the two sides interleave by rank as they
   do in the pair alone; so the first crossing would also happen in the pair, and no crossing
   in the pair means none in the whole. A window's tokens up to a cut short of its end are
   taken (a prefix of a merge's result), the next window starts there, and the one new pair
   at the junction is checked by merging its bytes; a pair that is not compatible means the
   cut was not a boundary: back off, widen the windows and redo. At the piece's start there is
   no junction, so this ends; every adjacent pair taken has been checked.
   A file may give one id to two strings: then tokenizers' stale entries can merge a pair by
   another pair's rank, and the lemma is not known to hold: such models merge long pieces on
   the heap (hfb_check_unique_ids). */
#define LONG_CHUNK 224 /* a window of LONG_CHUNK + LONG_MARGIN bytes is merged by merge_linear */
#define LONG_MARGIN 16
_Static_assert(LONG_CHUNK + LONG_MARGIN <= LINEAR_MAX, "a window fits merge_linear");
static size_t long_chunk = LONG_CHUNK, long_margin = LONG_MARGIN, long_min = LINEAR_MAX;
static size_t long_pieces, long_failures; /* pieces merged in windows, junctions found not
                                              compatible (statistics for tests) */
static int windows_on = 1;   /* hfb_set_windows */

void hfb_set_long_window(size_t chunk, size_t margin) {
    long_chunk = chunk ? chunk : LONG_CHUNK;
    long_margin = chunk ? margin : LONG_MARGIN;
    long_min = chunk ? chunk + margin : LINEAR_MAX;
}

void hfb_long_window_stats(size_t *pieces, size_t *failures) {
    *pieces = __atomic_load_n(&long_pieces, __ATOMIC_RELAXED);
    *failures = __atomic_load_n(&long_failures, __ATOMIC_RELAXED);
}

int hfb_set_windows(int on) { return __atomic_exchange_n(&windows_on, on ? 1 : 0, __ATOMIC_RELAXED); }

int hfb_check_unique_ids(hfb_model *m, const uint32_t *ids, size_t n) {
    uint64_t *seen = calloc(((size_t)m->n_ids + 63) / 64, sizeof *seen);
    m->unique_ids = 0;
    if (!seen) return -1;
    int unique = 1;
    for (size_t i = 0; i < n && unique; i++) {
        uint32_t id = ids[i];
        if (id >= m->n_ids || ((seen[id >> 6] >> (id & 63)) & 1)) unique = 0;
        else seen[id >> 6] |= 1ull << (id & 63);
    }
    free(seen);
    m->unique_ids = unique;
    return unique;
}

/* Whether the initial symbols of a junction (na of token a, then nb of token b) merge into
   exactly [a, b], a of the first na: 1 yes, 0 no, -1 out of memory. Byte mode: the symbols are
   the bytes raw[0:na + nb]; else sym[0:na + nb]. */
static int compatible(const hfb_model *m, const uint8_t *raw, const uint32_t *sym, size_t na, size_t nb,
                      uint32_t a, uint32_t b) {
    size_t n = na + nb;
    uint32_t ids_s[64], lens_s[64], *ids = ids_s, *lens = lens_s;
    if (n > 64) {
        ids = malloc(n * sizeof *ids), lens = malloc(n * sizeof *lens);
        if (!ids || !lens) {
            free(ids), free(lens);
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++) ids[i] = raw ? (uint32_t)m->byte_ids[raw[i]] : sym[i], lens[i] = 1;
    size_t k = merge_any(m, ids, lens, n, raw);
    int ok = k == SIZE_MAX ? -1 : k == 2 && ids[0] == a && ids[1] == b && lens[0] == na;
    if (ids != ids_s) free(ids), free(lens);
    return ok;
}

/* Grows *a (and *b, if b) to room for n entries; -1 on out of memory (the arrays stay). */
static int grow2(uint32_t **a, uint32_t **b, size_t *cap, size_t n) {
    if (n <= *cap) return 0;
    size_t c = *cap ? *cap : 256;
    while (c < n) c *= 2;
    uint32_t *x = realloc(*a, c * sizeof *x);
    if (!x) return -1;
    *a = x;
    if (b) {
        if (!(x = realloc(*b, c * sizeof *x))) return -1;
        *b = x;
    }
    *cap = c;
    return 0;
}

/* A run of one symbol (spaces, rules, padding) of RUN_MIN symbols or more.  In windows it
   cost as much as tokenizers (5,000 spaces: 1.2 ms, tokenizers 1.3; the junctions of a run
   fail and the windows grow).  Such a run merges into k copies of one period token P, then
   the merge of its last r symbols, RUN_GUESS <= r < RUN_GUESS + |P|: a guess, used only once
   the lemma above confirms it: the pairs inside the tail are a merge's own, and the two others,
   (P, P) and (P, the tail's first token), are checked as a window's junction is (compatible).
   P is the first token of the merge of 2 RUN_GUESS symbols of the run.  Any guess is safe, so
   RUN_GUESS need not be
   the vocabulary's longest token (it is tiktoken's vocabularies'; a vocabulary with longer
   run tokens fails the check and takes the windows).  Returns the count, SIZE_MAX on out of
   memory, or RUN_NOT (out untouched). */
#define RUN_GUESS 128
#define RUN_MIN (2 * RUN_GUESS) /* the guess reads 2 RUN_GUESS symbols of the run */
#define RUN_NOT (SIZE_MAX - 1)

/* The merge of n copies of symbol s (byte mode: raw, a run of at least n bytes) into ids and
   lens (room for n). */
static size_t run_merge(const hfb_model *m, const uint8_t *raw, uint32_t s, size_t n, uint32_t *ids,
                        uint32_t *lens) {
    for (size_t i = 0; i < n; i++) ids[i] = s, lens[i] = 1;
    return merge_any(m, ids, lens, n, raw);
}

static size_t run_guess = RUN_GUESS, runs_taken, runs_declined; /* tests: hfb_set_run_guess */

void hfb_set_run_guess(size_t n) {
    __atomic_store_n(&run_guess, n && n <= RUN_GUESS ? n : RUN_GUESS, __ATOMIC_RELAXED);
}

void hfb_run_stats(size_t *taken, size_t *declined) {
    *taken = __atomic_load_n(&runs_taken, __ATOMIC_RELAXED);
    *declined = __atomic_load_n(&runs_declined, __ATOMIC_RELAXED);
}

static size_t merge_run_guess(const hfb_model *m, const uint8_t *raw, const uint32_t *sym, size_t len,
                              uint32_t *out, uint32_t *counts, size_t guess);

static size_t merge_run(const hfb_model *m, const uint8_t *raw, const uint32_t *sym, size_t len,
                        uint32_t *out, uint32_t *counts) {
    if (len < RUN_MIN || (raw ? memcmp(raw, raw + 1, len - 1) : memcmp(sym, sym + 1, (len - 1) * sizeof *sym)))
        return RUN_NOT;
    const size_t k = merge_run_guess(m, raw, sym, len, out, counts, __atomic_load_n(&run_guess, __ATOMIC_RELAXED));
    __atomic_add_fetch(k == RUN_NOT ? &runs_declined : &runs_taken, 1, __ATOMIC_RELAXED);
    return k;
}

/* What merge_run_guess found on this thread for the last symbol whose run it took: the period
   token (or that there is none: P NO_RANK) and a first tail token seen compatible after it,
   for the model build step `generation` (unique across models) and the guess.  Without it a
   run of 256-383 spaces cost four merges of up to 256 symbols each time (300: 50 us, tokenizers
   73); the facts it keeps were checked, so a stale or reused entry cannot change ids. */
static __thread struct {
    uint64_t generation;
    size_t guess;
    uint32_t sym, P, pl, tail0;
    int tail_ok;
} run_seen;

/* merge_run past its run test, guess <= RUN_GUESS standing for RUN_GUESS */
static size_t merge_run_guess(const hfb_model *m, const uint8_t *raw, const uint32_t *sym, size_t len,
                              uint32_t *out, uint32_t *counts, size_t guess) {
    const uint32_t s = raw ? (uint32_t)m->byte_ids[raw[0]] : sym[0];
    uint32_t ids[2 * RUN_GUESS], lens[2 * RUN_GUESS];
    int ok;
    if (run_seen.generation != m->generation || run_seen.sym != s || run_seen.guess != guess) {
        if (run_merge(m, raw, s, 2 * guess, ids, lens) == SIZE_MAX) return SIZE_MAX;
        uint32_t P = ids[0], pl = lens[0];
        /* pl <= guess keeps the tail below within the arrays (and the junctions within the run) */
        if (pl > guess || !(ok = compatible(m, raw, sym, pl, pl, P, P))) P = NO_RANK;
        else if (ok < 0) return SIZE_MAX;
        run_seen.generation = m->generation, run_seen.guess = guess, run_seen.sym = s;
        run_seen.P = P, run_seen.pl = pl, run_seen.tail_ok = 0;
    }
    const uint32_t P = run_seen.P, pl = run_seen.pl;
    if (P == NO_RANK) return RUN_NOT;
    const size_t reps = (len - guess) / pl, r = len - reps * pl;
    const size_t kt = run_merge(m, raw, s, r, ids, lens);
    if (kt == SIZE_MAX) return SIZE_MAX;
    if (!run_seen.tail_ok || run_seen.tail0 != ids[0]) {
        if (!(ok = compatible(m, raw, sym, pl, lens[0], P, ids[0]))) return RUN_NOT;
        if (ok < 0) return SIZE_MAX;
        run_seen.tail_ok = 1, run_seen.tail0 = ids[0];
    }
    for (size_t i = 0; i < reps; i++) out[i] = P;
    memcpy(out + reps, ids, kt * sizeof *ids);
    if (counts) {
        for (size_t i = 0; i < reps; i++) counts[i] = pl;
        memcpy(counts + reps, lens, kt * sizeof *lens);
    }
    return reps + kt;
}

/* The merge of a long piece of len initial symbols into out[] (room for len), in windows (see
   above): byte mode, the bytes raw[0:len] (every byte has an id), else the symbols sym[0:len].
   If counts is not NULL, counts[i] gets how many initial symbols token i covers. Returns the
   number of tokens, or SIZE_MAX on out of memory. */
static size_t merge_long(const hfb_model *m, const uint8_t *raw, const uint32_t *sym, size_t len,
                         uint32_t *out, uint32_t *counts) {
    size_t chunk = long_chunk, margin = long_margin;
    uint32_t *olen = NULL, *wid = NULL, *wlen = NULL; /* the tokens' symbol counts; the window */
    size_t ocap = 0, wcap = 0;
    const size_t unit = raw ? 1 : sizeof *sym; /* bytes per symbol, as compared */
    const uint8_t *base = raw ? raw : (const uint8_t *)sym;
    /* the last junctions checked, by their symbols (up to 24 bytes of them) and cut: a run of
       one letter or of spaces meets the same junction in every window */
    struct { uint64_t w[3]; uint32_t n, alen; int ok; } seen[64];
    size_t nout = 0, pos = 0, extra = 0, failures = 0, wk = 0, prev_pos = SIZE_MAX, prev_wn = 0;
    __atomic_fetch_add(&long_pieces, 1, __ATOMIC_RELAXED);
    const size_t run = merge_run(m, raw, sym, len, out, counts);
    if (run != RUN_NOT) return run;
    for (size_t i = 0; i < 64; i++) seen[i].n = 0;
    while (pos < len) {
        size_t cut = chunk + extra, wn = len - pos;
        if (wn > cut + margin) wn = cut + margin;
        else cut = wn;
        /* a window with the symbols of the one before merges the same */
        if (!(prev_pos != SIZE_MAX && wn == prev_wn &&
              memcmp(base + prev_pos * unit, base + pos * unit, wn * unit) == 0)) {
            if (grow2(&wid, &wlen, &wcap, wn)) goto nomem;
            for (size_t i = 0; i < wn; i++)
                wid[i] = raw ? (uint32_t)m->byte_ids[raw[pos + i]] : sym[pos + i], wlen[i] = 1;
            wk = merge_any(m, wid, wlen, wn, raw ? raw + pos : NULL);
            if (wk == SIZE_MAX) goto nomem;
            prev_pos = pos, prev_wn = wn;
        }
        if (nout) {
            uint32_t a = out[nout - 1], alen = olen[nout - 1], jn = alen + wlen[0];
            const size_t at = pos - alen, kb = jn * unit;
            int ok = -2;
            size_t slot = 0;
            uint64_t w[3] = {0, 0, 0};
            if (kb <= 24) {
                memcpy(w, base + at * unit, kb);
                slot = (size_t)((key_hash(w, kb) ^ alen) * 0x9E3779B97F4A7C15ull >> 58);
                if (seen[slot].n == kb && seen[slot].alen == alen && !((seen[slot].w[0] ^ w[0]) |
                    (seen[slot].w[1] ^ w[1]) | (seen[slot].w[2] ^ w[2])))
                    ok = seen[slot].ok;
            }
            if (ok == -2) {
                ok = compatible(m, raw ? raw + at : NULL, raw ? NULL : sym + at, alen, wlen[0], a, wid[0]);
                if (ok < 0) goto nomem;
                if (kb <= 24) {
                    memcpy(seen[slot].w, w, sizeof w);
                    seen[slot].n = (uint32_t)kb, seen[slot].alen = alen, seen[slot].ok = ok;
                }
            }
            if (!ok) {
                __atomic_fetch_add(&long_failures, 1, __ATOMIC_RELAXED);
                failures++;
                /* this text has long-range merges: wider windows from now on, and back off at
                   least `extra` symbols (doubling), never past the piece's start */
                if (chunk < 1024) chunk *= 2;
                if (margin < 512) margin = margin ? margin * 2 : 8;
                extra = extra ? extra * 2 : chunk;
                size_t back = 0;
                while (nout && back < extra) back += olen[--nout];
                pos -= back;
                extra += back;
                if (extra > len) extra = len; /* a window never needs more than the piece */
                continue;
            }
        }
        /* the window's tokens that end at or before the cut (at least one) */
        size_t end = 0, k = 0;
        while (k < wk) {
            if (k > 0 && end + wlen[k] > cut) break;
            end += wlen[k++];
        }
        if (grow2(&olen, NULL, &ocap, nout + k)) goto nomem;
        memcpy(out + nout, wid, k * sizeof *out);
        memcpy(olen + nout, wlen, k * sizeof *olen);
        nout += k;
        pos += end;
        /* shrink back after a success; once failures are frequent (no real vocabulary gave
           one) keep growing, which bounds the retries */
        if (extra && failures * 64 < len) extra /= 2;
    }
    if (counts && nout) memcpy(counts, olen, nout * sizeof *counts);
    free(olen), free(wid), free(wlen);
    return nout;
nomem:
    free(olen), free(wid), free(wlen);
    return SIZE_MAX;
}

/* ---- char mode ------------------------------------------------------------------------ */

/* A model whose symbols are characters (SentencePiece-style files: Llama 2, Mistral; no
   ByteLevel), where a document is often one piece (no pre-tokenizer): tokenizers' BPE
   merge_word in C, long pieces in windows. */
static inline size_t char_slot(uint32_t cp, size_t mask) {
    return (size_t)(((uint64_t)cp * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static inline int64_t char_id(const hfb_model *m, uint32_t cp, unsigned kind);

int hfb_set_chars(hfb_model *m, const uint32_t *cps, const uint32_t *ids, size_t n,
                  const int32_t *fallback, int64_t unk_id, int fuse_unk, const uint32_t *u8len,
                  int cut_words) {
    size_t cap = 16;
    while (cap < 2 * n + 16) cap <<= 1;
    uint32_t *keys = malloc(cap * sizeof *keys), *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys), free(vals);
        return -1;
    }
    for (size_t i = 0; i < cap; i++) keys[i] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t sl = char_slot(cps[i], cap - 1);
        while (keys[sl] != UINT32_MAX && keys[sl] != cps[i]) sl = (sl + 1) & (cap - 1);
        keys[sl] = cps[i], vals[sl] = ids[i]; /* a character listed twice: the last id */
    }
    free(m->char_keys), free(m->char_ids), free(m->char_aff);
    m->char_keys = keys, m->char_ids = vals, m->char_mask = cap - 1;
    m->char_aff = NULL, m->prefix_on = m->suffix_on = 0, m->prefix_len = 0;
    m->byte_fallback = fallback != NULL;
    for (int b = 0; b < 256; b++) m->fallback[b] = fallback ? fallback[b] : -1;
    m->unk_id = unk_id;
    m->fuse_unk = fuse_unk != 0;
    m->u8len = u8len;
    m->cut_words = cut_words != 0 && u8len;
    free(m->chr_pairs);
    m->chr_pairs = malloc(128 * 128 * sizeof *m->chr_pairs); /* NULL: the pair table alone */
    int64_t ascii_id[128];
    for (uint32_t x = 0; x < 128; x++) ascii_id[x] = char_id(m, x, 0);
    for (uint32_t x = 0; m->chr_pairs && x < 128 * 128; x++) {
        int64_t a = ascii_id[x >> 7], b = ascii_id[x & 127];
        byte_pair_t *e = &m->chr_pairs[x];
        e->rank = NO_RANK, e->new_id = 0;
        if (a >= 0 && b >= 0) e->rank = pair_rank(m, (uint32_t)a, (uint32_t)b, &e->new_id);
    }
    return 0;
}

int hfb_set_char_affixes(hfb_model *m, const uint32_t *cps, const uint32_t *aff, size_t n, uint32_t prefix_len,
                         int prefix_on, int suffix_on) {
    if (!m->char_keys) return -2;
    uint32_t *t = malloc((m->char_mask + 1) * 3 * sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < (m->char_mask + 1) * 3; i++) t[i] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t sl = char_slot(cps[i], m->char_mask);
        while (m->char_keys[sl] != UINT32_MAX && m->char_keys[sl] != cps[i]) sl = (sl + 1) & m->char_mask;
        if (m->char_keys[sl] != cps[i]) { /* not among hfb_set_chars' characters */
            free(t);
            return -2;
        }
        memcpy(t + 3 * sl, aff + 3 * i, 3 * sizeof *t);
    }
    free(m->char_aff);
    m->char_aff = t, m->prefix_len = prefix_len, m->prefix_on = prefix_on != 0, m->suffix_on = suffix_on != 0;
    m->cut_words = 0; /* a word's symbols depend on where it starts and ends */
    return 0;
}

/* The id of code point cp's token, as the kind'th of its forms: 0 the character, 1 prefix + c,
   2 c + suffix, 3 prefix + c + suffix; -1 when there is none. */
static inline int64_t char_id(const hfb_model *m, uint32_t cp, unsigned kind) {
    for (size_t sl = char_slot(cp, m->char_mask);; sl = (sl + 1) & m->char_mask) {
        uint32_t k = m->char_keys[sl];
        if (k == cp) {
            uint32_t v = kind ? m->char_aff[3 * sl + kind - 1] : m->char_ids[sl];
            return v == UINT32_MAX ? -1 : (int64_t)v;
        }
        if (k == UINT32_MAX) return -1;
    }
}

/* Words (cut_words set, unique ids, windows on, a cache): a piece is cut before each "▁" that
   follows another character, and its words are merged one by one, the words of up to
   CACHE_KEY bytes that are all one-character tokens kept in the cache's word table. Exact:
   cut_words is set only for a vocabulary where no token holds "▁" after a character other than
   "▁" (hf/bpe.py), and a merge across a cut would make such a token (its new token is the
   two tokens' strings joined, which the vocabulary must hold); so no merge crosses a cut, and
   each word merges as it does alone (its pairs' lowest rank is the whole's wherever it falls in
   the word). The tokens of SentencePiece vocabularies (Llama 2, Mistral) start with "▁"; runs
   of "▁" ("▁▁▁▁") are not cut. Such a word's symbols are those of its bytes alone: the "▁"
   that starts the next word is a token and ends a pending unknown token. */
static inline int is_cut(const uint8_t *p) { return p[0] == 0xE2 && p[1] == 0x96 && p[2] == 0x81; }

/* The symbols of the UTF-8 data[a:b] (each a character's token, its <0xXX> bytes, or the
   unknown token) into sym[]/slen[] (byte lengths): their count, or -1 (tokenizers fails here:
   an unknown token named but not in the vocabulary). *plain: no character unknown or dropped
   (each one a character's token or its <0xXX> bytes). */
static int64_t symbolize(const hfb_model *m, const uint8_t *data, size_t a, size_t b, uint32_t *sym,
                         uint32_t *slen, uint8_t *key, int *plain) {
    size_t k = 0, unk_len = 0;
    int unk = 0; /* a pending unknown token of unk_len bytes */
    *plain = 1;
    for (size_t i = a; i < b;) {
        uint32_t c0 = data[i], cp, l = c0 < 0x80 ? 1 : c0 < 0xE0 ? 2 : c0 < 0xF0 ? 3 : 4;
        cp = l == 1 ? c0 : l == 2 ? c0 & 0x1F : l == 3 ? c0 & 0x0F : c0 & 0x07;
        for (uint32_t j = 1; j < l; j++) cp = cp << 6 | (data[i + j] & 0x3F);
        /* tokenizers' merge_word: the prefix before every character but the word's first, the
           suffix after its last */
        unsigned kind = (m->prefix_on && i > a) | (m->suffix_on && i + l == b) << 1;
        int64_t id = char_id(m, cp, kind);
        int fb = !(id >= 0) && m->byte_fallback;
        if (fb && kind) return -1; /* the bytes of the affixed string: the caller's path */
        for (uint32_t j = 0; fb && j < l; j++) fb = m->fallback[data[i + j]] >= 0;
        if (id >= 0) {
            if (unk) key[k] = 0xFF, sym[k] = (uint32_t)m->unk_id, slen[k++] = (uint32_t)unk_len, unk = 0;
            key[k] = l == 1 && !kind ? (uint8_t)c0 : 0xFF; /* an ASCII character's own token */
            sym[k] = (uint32_t)id, slen[k++] = l;
        } else if (fb) { /* as tokenizers: a pending unknown token stays pending */
            for (uint32_t j = 0; j < l; j++) key[k] = 0xFF, sym[k] = (uint32_t)m->fallback[data[i + j]], slen[k++] = 1;
        } else if (m->unk_id == -2) {
            return -1;
        } else if (m->unk_id >= 0) {
            *plain = 0;
            if (unk && m->fuse_unk) unk_len += l;
            else {
                if (unk) key[k] = 0xFF, sym[k] = (uint32_t)m->unk_id, slen[k++] = (uint32_t)unk_len;
                unk = 1, unk_len = l;
            }
        } else *plain = 0; /* no unknown token: the character is dropped */
        i += l;
    }
    if (unk) key[k] = 0xFF, sym[k] = (uint32_t)m->unk_id, slen[k++] = (uint32_t)unk_len;
    return (int64_t)k;
}

/* Work arrays of a char-mode call over n bytes: symbols and their byte lengths, each token's
   byte length (each at least one byte: n entries each), which symbols are an ASCII
   character's token (symbolize's key), and merge_long's symbol counts (made on the first long
   piece). */
typedef struct {
    uint32_t *sym, *slen, *blen, *counts;
    uint8_t *ckey;
    size_t n;
} chars_work;

static int chars_work_init(chars_work *w, size_t n) {
    memset(w, 0, sizeof *w);
    w->n = n;
    w->sym = malloc(n * sizeof *w->sym), w->slen = malloc(n * sizeof *w->slen);
    w->blen = malloc(n * sizeof *w->blen), w->ckey = malloc(n);
    return w->sym && w->slen && w->blen && w->ckey ? 0 : -1;
}

static void chars_work_free(chars_work *w) {
    free(w->sym), free(w->slen), free(w->blen), free(w->counts), free(w->ckey);
    memset(w, 0, sizeof *w);
}

/* A word cache's hit: the tokens' ids, and their byte lengths from the ids' lengths (a token
   after the first starts with the prefix's text, the last ends with the suffix's: its string
   is the merge of its symbols' strings). */
static inline int64_t word_hit(const hfb_model *m, const uint32_t *hid, uint32_t nids, size_t plen,
                               uint32_t *ids, uint32_t *blen) {
    uint32_t used = 0;
    for (uint32_t j = 0; j < nids; j++) {
        uint32_t l = m->u8len[hid[j]], cut = j ? m->prefix_len : 0;
        ids[j] = hid[j], blen[j] = l > cut ? l - cut : 0, used += blen[j];
    }
    if (m->suffix_on && nids) /* the last one ends where the piece does */
        blen[nids - 1] = (uint32_t)plen - (used - blen[nids - 1]);
    return nids;
}

/* A word's key in the word cache: its bytes (up to CACHE_KEY), zeros after them, and their hash. */
typedef struct {
    uint64_t key[3];
    uint64_t hash;
} word_key;

/* The key of the word data[a:b] (b - a <= CACHE_KEY), the data readable up to end: three
   loads and masks where 24 bytes can be read, not a copy of b - a bytes (a call). */
static inline void word_key_of(word_key *k, const uint8_t *data, size_t a, size_t b, size_t end) {
    const size_t len = b - a;
    if (end - a >= sizeof k->key) {
        memcpy(k->key, data + a, sizeof k->key);
        for (size_t j = 0; j < 3; j++) {
            const size_t have = len > 8 * j ? len - 8 * j : 0; /* the word's bytes in k->key[j] */
            k->key[j] &= have >= 8 ? ~0ull : (1ull << (8 * have)) - 1;
        }
    } else {
        memset(k->key, 0, sizeof k->key);
        memcpy(k->key, data + a, len);
    }
    k->hash = key_hash(k->key, len);
}

/* Whether word_hit, given the tokens ids[0:k] of a piece of plen bytes, gives back their byte
   lengths blen[]: the test for keeping a merged piece in the word cache. A token's length
   there comes from its id, and ids are not enough where a token's string is not the text it
   covers: a byte fallback token <0xXX> covers one byte (u8len says 1, bpe.py), and the same
   token merged from the characters "<0xXX>" would cover six. */
static int hit_same(const hfb_model *m, const uint32_t *ids, const uint32_t *blen, size_t k, size_t plen) {
    enum { MOST = LONG_MAX }; /* more ids than a word kept has bytes */
    uint32_t same_ids[MOST], got[MOST];
    if (k > MOST) return 0;
    word_hit(m, ids, (uint32_t)k, plen, same_ids, got);
    return memcmp(got, blen, k * sizeof *got) == 0;
}

/* The word p[0:len] and its k ids into the set set[0..1] of char mode's long-word store: first,
   the one that was first moved second and the one second dropped; nothing changes where that
   would take the store past WORD_LONG_BUDGET (returns 0, else 1). */
static int word_long_put(hfb_cache *c, long_entry **set, const uint8_t *p, size_t len, const uint32_t *ids,
                         size_t k) {
    const size_t need = long_size(len, k), out = set[0] && set[1] ? long_size(set[1]->len, set[1]->nids) : 0;
    if (c->word_longs_bytes - out + need > WORD_LONG_BUDGET) return 0;
    if (set[0]) {
        free(set[1]);
        c->word_longs_bytes -= out;
        set[1] = set[0];
        set[0] = NULL;
    }
    if (long_put(&set[0], p, len, ids, k) < 0) return 0;
    c->word_longs_kept++, c->word_longs_bytes += need;
    return 1;
}

/* The tokens of the piece data[a:b] of a char-mode model into ids[] and their byte lengths
   into w->blen[] (room for b - a each): through the word cache when words is set (c->words
   made, u8len set; wk its key when the caller made it, else NULL), merged in windows when
   windows is set and the piece is long.  Returns the count, HFB_SLOW (tokenizers fails here)
   or HFB_NOMEM. */
static int64_t chars_piece(const hfb_model *m, hfb_cache *c, int words, int windows, const uint8_t *data,
                           size_t a, size_t b, const word_key *wk, chars_work *w, uint32_t *ids, uint32_t *blen) {
    cache_slot *slot = NULL;
    long_entry **lslot = NULL;
    word_key own;
    if (words && b - a <= CACHE_KEY) {
        if (!wk) {
            word_key_of(&own, data, a, b, b);
            wk = &own;
        }
        const uint64_t *key = wk->key;
        slot = &c->words[(wk->hash >> (64 - WORD_BITS)) & ~(size_t)1];
        for (int way = 0; way < 2; way++) {
            const cache_slot *h = &slot[way];
            if (h->klen == b - a && !((h->key[0] ^ key[0]) | (h->key[1] ^ key[1]) | (h->key[2] ^ key[2]))) {
                if (h->nids <= CACHE_IDS) return word_hit(m, h->ids, h->nids, b - a, ids, blen);
                lslot = LONG_SET(c, data + a, b - a); /* WORD_IN_LONGS: more ids than a slot holds */
                break;
            }
        }
    } else if (words && b - a <= LONG_MAX)
        lslot = LONG_SET(c, data + a, b - a);
    if (lslot) {
        long_entry *e = long_find(lslot, data + a, b - a);
        if (!e) e = long_find(lslot + 1, data + a, b - a);
        if (e) {
            c->word_long_hits++;
            return word_hit(m, long_ids(e), e->nids, b - a, ids, blen);
        }
    }
    int plain;
    int64_t k = symbolize(m, data, a, b, w->sym, w->slen, w->ckey, &plain);
    if (k < 0) return HFB_SLOW;
    size_t kt;
    if ((size_t)k > long_min && windows) {
        if (!w->counts && !(w->counts = malloc(w->n * sizeof *w->counts))) return HFB_NOMEM;
        kt = merge_long(m, NULL, w->sym, (size_t)k, ids, w->counts);
        if (kt == SIZE_MAX) return HFB_NOMEM;
        for (size_t t = 0, q = 0; t < kt; t++) { /* byte lengths from the symbols covered */
            uint32_t bytes = 0;
            for (uint32_t j = 0; j < w->counts[t]; j++) bytes += w->slen[q++];
            blen[t] = bytes;
        }
    } else {
        kt = merge_any_key(m, w->sym, w->slen, (size_t)k, NULL, w->ckey);
        if (kt == SIZE_MAX) return HFB_NOMEM;
        memcpy(ids, w->sym, kt * sizeof *ids);
        memcpy(blen, w->slen, kt * sizeof *blen);
    }
    /* a dropped or unknown character: not kept (a hit could not say how many bytes it covers) */
    if (!plain || !(slot || lslot) || !hit_same(m, ids, blen, kt, b - a)) return (int64_t)kt;
    if (slot) { /* more ids than a slot holds: the slot says where they are */
        if (kt > CACHE_IDS && !word_long_put(c, LONG_SET(c, data + a, b - a), data + a, b - a, ids, kt))
            return (int64_t)kt;
        cache_slot *h = slot[0].klen == b - a && !memcmp(slot[0].key, wk->key, sizeof wk->key) ? &slot[0] : NULL;
        if (!h) { /* (a redirect slot whose long entry was dropped is h: taken again) */
            if (slot[1].klen == b - a && !memcmp(slot[1].key, wk->key, sizeof wk->key)) slot[1] = slot[0];
            else if (slot[0].klen) slot[1] = slot[0];
            h = &slot[0];
        }
        memcpy(h->key, wk->key, sizeof h->key);
        h->klen = (uint32_t)(b - a);
        h->nids = kt <= CACHE_IDS ? (uint32_t)kt : WORD_IN_LONGS;
        for (size_t j = 0; kt <= CACHE_IDS && j < kt; j++) h->ids[j] = ids[j];
    } else
        word_long_put(c, lslot, data + a, b - a, ids, kt);
    return (int64_t)kt;
}

/* The word cache of c (made on first use), or NULL when words cannot be kept (no cache, no
   token lengths) or memory is out (*nomem set). */
static int words_ready(const hfb_model *m, hfb_cache *c, int *nomem) {
    *nomem = 0;
    if (!c || !m->u8len) return 0;
    cache_sync(m, c);
    if (!c->words) {
        if (!(c->words = huge_alloc(sizeof(cache_slot) << WORD_BITS))) {
            *nomem = 1;
            return 0;
        }
        memset(c->words, 0, sizeof(cache_slot) << WORD_BITS);
    }
    return 1;
}

/* Up to WORD_BATCH pieces of data[*a:n] as cuts[0] = *a < cuts[1] < ... (each the end of the
   one before): one piece, the rest, without words; else each up to the next "▁" after a
   character other than "▁", and for one of up to CACHE_KEY bytes its key made (keys[i] of
   the piece from cuts[i]) and its set in the word cache asked for. Returns the number of cuts
   (0: nothing left) and moves *a past the last piece. */
enum { WORD_BATCH = 16 };
static size_t next_words(const hfb_cache *c, int words, const uint8_t *data, size_t n, size_t *a,
                         size_t cuts[WORD_BATCH + 1], word_key keys[WORD_BATCH]) {
    size_t k = 0, at = *a;
    if (at >= n) return 0;
    cuts[k++] = at;
    while (at < n && k <= WORD_BATCH) {
        size_t b = n;
        if (words) {
            /* a cut's "▁" is E2 96 81: look at the E2 bytes only */
            for (size_t i = at + 1; i + 3 <= n; i++) {
                const uint8_t *q = memchr(data + i, 0xE2, n - 2 - i);
                if (!q) break;
                i = (size_t)(q - data);
                if (is_cut(q) && !(i >= 3 && is_cut(q - 3))) {
                    b = i;
                    break;
                }
            }
            if (b - at <= CACHE_KEY) {
                word_key *wk = &keys[k - 1];
                word_key_of(wk, data, at, b, n);
                const cache_slot *set = &c->words[(wk->hash >> (64 - WORD_BITS)) & ~(size_t)1];
                __builtin_prefetch(set);
                __builtin_prefetch(set + 1);
            }
        }
        cuts[k++] = b;
        at = b;
    }
    *a = at;
    return k;
}

/* Whether data[0:n] has the shape of a str's UTF-8: each lead byte (0xC0 and up, 0xF0 and up
   taken as four bytes long, as the character walks take them) followed by its continuation
   bytes (0x80-0xBF), none anywhere else, the last character whole. A mask compare per 16
   bytes: the walk's test it replaced, a branch per character (text with "▁" every few
   characters has few blocks of ASCII to skip), was 15 % of a warm pass over English; that test
   also let a lead byte with too few continuation bytes through. */
static int utf8_shape_ok(const uint8_t *d, size_t n) {
    uint32_t carry = 0; /* continuation bytes owed to the next block (bit 0: its first byte) */
    uint8_t tail[16];
    for (size_t i = 0; i < n; i += 16) {
        const uint8_t *p = d + i;
        if (n - i < 16) { /* zero bytes after the end: a character cut there fails */
            memset(tail, 0, sizeof tail);
            memcpy(tail, p, n - i);
            p = tail;
        }
        uint32_t cont, lead, lead3, lead4;
#ifdef __SSE2__
        const __m128i x = _mm_loadu_si128((const __m128i *)p), zero = _mm_setzero_si128();
        const __m128i high = _mm_cmplt_epi8(x, zero); /* as int8: 0x80 and up are negative */
        if (!_mm_movemask_epi8(high) && !carry) continue;
        const __m128i c = _mm_cmplt_epi8(x, _mm_set1_epi8(-64)); /* 0x80-0xBF */
        cont = (uint32_t)_mm_movemask_epi8(c);
        lead = (uint32_t)_mm_movemask_epi8(_mm_andnot_si128(c, high));
        lead3 = (uint32_t)_mm_movemask_epi8(_mm_and_si128(high, _mm_cmpgt_epi8(x, _mm_set1_epi8(-33))));
        lead4 = (uint32_t)_mm_movemask_epi8(_mm_and_si128(high, _mm_cmpgt_epi8(x, _mm_set1_epi8(-17))));
#else
        cont = lead = lead3 = lead4 = 0;
        for (int j = 0; j < 16; j++) {
            cont |= (uint32_t)((p[j] & 0xC0) == 0x80) << j;
            lead |= (uint32_t)(p[j] >= 0xC0) << j;
            lead3 |= (uint32_t)(p[j] >= 0xE0) << j;
            lead4 |= (uint32_t)(p[j] >= 0xF0) << j;
        }
#endif
        const uint32_t owed = carry | lead << 1 | lead3 << 2 | lead4 << 3;
        if ((owed & 0xFFFF) != cont) return 0;
        carry = owed >> 16;
    }
    return carry == 0;
}

/* How many of p[0:len] are not UTF-8 continuation bytes (10xxxxxx): the characters that
   start there. Eight at a time: a continuation byte has bit 7 set and bit 6 clear. */
static inline size_t leads_in(const uint8_t *p, size_t len) {
    size_t k = len;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        const uint64_t cont = (x & ~(x << 1) & 0x8080808080808080ull) >> 7;
        k -= (size_t)((cont * 0x0101010101010101ull) >> 56);
    }
    for (; len; p++, len--) k -= (*p & 0xC0) == 0x80;
    return k;
}

/* leads_in(data + x, e - x) where data[0:n] may be read (x < e <= n): a token's last bytes
   (most tokens are fewer than eight) by one load and a mask where eight bytes can be read,
   not a loop whose end the branch predictor cannot know. */
static inline size_t leads_between(const uint8_t *data, size_t n, size_t x, size_t e) {
    size_t len = e - x;
    if (x + 8 > n) return leads_in(data + x, len);
    const size_t whole = len & ~(size_t)7, rest = len & 7;
    size_t k = whole ? leads_in(data + x, whole) : 0;
    if (rest) {
        uint64_t w;
        memcpy(&w, data + x + (x + whole + 8 <= n ? whole : len - 8), 8);
        if (x + whole + 8 > n) w >>= 8 * (8 - rest); /* the last eight bytes: the rest at the top */
        const uint64_t cont = (w & ~(w << 1) & 0x8080808080808080ull) >> 7 & ((1ull << (8 * rest)) - 1);
        k += rest - (size_t)((cont * 0x0101010101010101ull) >> 56);
    }
    return k;
}

int64_t hfb_tokenize_chars(const hfb_model *m, hfb_cache *c, const uint8_t *data, size_t n, uint32_t *ids,
                           uint32_t *starts, uint32_t *ends) {
    if (!m->char_keys) return HFB_SLOW;
    if (!n) return 0;
    chars_work w;
    int64_t rc = HFB_NOMEM;
    size_t nt = 0;
    if (chars_work_init(&w, n) < 0) goto done;
    if (!utf8_shape_ok(data, n)) { /* not the UTF-8 of a str */
        rc = HFB_SLOW;
        goto done;
    }
    const int windows = m->unique_ids && __atomic_load_n(&windows_on, __ATOMIC_RELAXED);
    int nomem = 0, words = windows && m->cut_words && words_ready(m, c, &nomem);
    if (nomem) goto done;
    /* the pieces in batches: a batch's cuts are found, and their sets in the word cache asked
       for, before the batch before it is merged */
    size_t cuts[2][WORD_BATCH + 1], a = 0;
    word_key keys[2][WORD_BATCH]; /* of the words of up to CACHE_KEY bytes */
    size_t ncut = next_words(c, words, data, n, &a, cuts[0], keys[0]);
    for (int cur = 0; ncut > 1; cur ^= 1) {
        size_t nnext = next_words(c, words, data, n, &a, cuts[cur ^ 1], keys[cur ^ 1]);
        for (size_t p = 0; p + 1 < ncut; p++) {
            const size_t pa = cuts[cur][p], pb = cuts[cur][p + 1];
            int64_t k = chars_piece(m, c, words, windows, data, pa, pb, words && pb - pa <= CACHE_KEY ? &keys[cur][p] : NULL,
                                    &w, ids + nt, w.blen + nt);
            if (k < 0) {
                rc = k;
                goto done;
            }
            nt += (size_t)k;
        }
        ncut = nnext;
    }
    /* offsets in characters, from the tokens' bytes counted one after another (a pending
       unknown token comes after the fallback bytes that followed it, as in tokenizers): a
       token of bytes [x, e) starts at the character holding byte x and ends after the one
       holding byte e - 1 (a fallback token covers its whole character); with L(p) the lead
       bytes before p, that is L(x) - (x a continuation byte) and L(e) */
    const size_t nchars = starts ? leads_in(data, n) : 0;
    for (size_t t = 0, pos = 0, lead = 0; starts && t < nt; t++) {
        size_t x = pos, e = pos + w.blen[t];
        pos = e;
        starts[t] = x < n ? (uint32_t)(lead - ((data[x] & 0xC0) == 0x80)) : (uint32_t)nchars;
        if (x < n) lead += leads_between(data, n, x, e < n ? e : n);
        ends[t] = e == 0 ? 0 : e <= n ? (uint32_t)lead : (uint32_t)nchars;
    }
    rc = (int64_t)nt;
done:
    chars_work_free(&w);
    return rc;
}

int64_t hfb_encode_chars(const hfb_model *m, hfb_cache *c, const void *skip, const uint8_t *data,
                         size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends) {
    const int64_t r = hfb_tokenize_chars(m, c, data, n, ids, starts, ends);
    const uint32_t k = ((const uint32_t *)skip)[0], first_end = ((const uint32_t *)skip)[1];
    for (int64_t i = 0; starts && i < r; i++) {
        starts[i] = starts[i] > k ? starts[i] - k : 0;
        ends[i] = ends[i] > k + 1 ? ends[i] - k : first_end;
    }
    return r;
}

/* A piece the short cache does not hold (slot: its slot there, or NULL when the piece is too
   long for it): the long-piece store, else merge and remember.  Out of line: the cache hit
   path stays small. */
/* A piece's tokens under end_of_word_suffix: its bytes' characters, the last one with the
   suffix (tokenizers' merge_word), merged from those symbols (no byte-pair table or
   pre-merged characters: they know no suffix).  SIZE_MAX on out of memory, SIZE_MAX - 1 when
   a symbol is missing from the vocabulary (the caller's path gives tokenizers' result). */
static size_t merge_suffixed(const hfb_model *m, const uint8_t *p, size_t len, uint32_t *out) {
    for (size_t i = 0; i < len; i++) {
        int32_t id = i + 1 < len ? m->byte_ids[p[i]] : m->byte_ids_last[p[i]];
        if (id < 0) return SIZE_MAX - 1;
        out[i] = (uint32_t)id;
    }
    if (!(len > long_min && m->unique_ids && __atomic_load_n(&windows_on, __ATOMIC_RELAXED)))
        return merge_any(m, out, NULL, len, NULL);
    uint32_t *sym = malloc(len * sizeof *sym);
    if (!sym) return SIZE_MAX;
    memcpy(sym, out, len * sizeof *sym);
    size_t k = merge_long(m, NULL, sym, len, out, NULL);
    free(sym);
    return k;
}

int hfb_set_byte_suffix(hfb_model *m, const int32_t *last_ids) {
    selfs_drop(m);
    premerge_drop(m);
    m->suffix = last_ids != NULL;
    for (int b = 0; b < 256; b++) m->byte_ids_last[b] = last_ids ? last_ids[b] : -1;
    m->generation = __atomic_fetch_add(&model_generation, 1, __ATOMIC_RELAXED);
    return 0;
}

static __attribute__((noinline)) int64_t encode_cold(const hfb_model *m, hfb_cache *c, const uint8_t *p,
                                                     size_t len, cache_slot *slot, const uint64_t w[3],
                                                     uint32_t *out) {
    long_entry **lslot = NULL;
    if (c && len > CACHE_KEY && len <= LONG_MAX) {
        lslot = &c->longs[bytes_hash(p, len) & (LONG_SLOTS - 1)];
        long_entry *e = long_find(lslot, p, len);
        if (e) {
            memcpy(out, long_ids(e), e->nids * sizeof *out);
            return e->nids;
        }
    }
    size_t k = 0;
    uint64_t h = 0, bit = 0;
    /* slot: SELF_MIN <= len <= CACHE_KEY, w is the key. A seeded cache skips the self table
       (see seed_cache) */
    const int selfs = slot && c && m->selfs && !c->seeded;
    if (selfs) h = key_hash(w, len), bit = self_bit(h);
    if (selfs && ((m->self_bits[bit >> 6] >> (bit & 63)) & 1)) {
        for (size_t s = (size_t)(h >> m->self_shift);; s = (s + 1) & m->self_mask) {
            const self_slot *e = &m->selfs[s];
            if (e->klen == len && ((e->key[0] ^ w[0]) | (e->key[1] ^ w[1]) | (e->key[2] ^ w[2])) == 0) {
                out[0] = e->id;
                k = 1;
                break;
            }
            if (!e->klen) break;
        }
    }
    if (!k && m->suffix) {
        k = merge_suffixed(m, p, len, out);
        if (k == SIZE_MAX) return HFB_NOMEM;
        if (k == SIZE_MAX - 1) return HFB_SLOW;
    } else if (!k) {
        for (size_t i = 0; i < len; i++) {
            int32_t id = m->byte_ids[p[i]];
            if (id < 0) return HFB_SLOW;
            out[i] = (uint32_t)id;
        }
        k = len > long_min && m->unique_ids && __atomic_load_n(&windows_on, __ATOMIC_RELAXED)
                ? merge_long(m, p, NULL, len, out, NULL)
                : merge_any(m, out, NULL, len, p);
        if (k == SIZE_MAX) return HFB_NOMEM;
    }
    if (slot && k <= CACHE_IDS) {
        /* two ways per set: the newest piece goes to way 0, the one it displaces to way 1 */
        if (slot[0].klen) slot[1] = slot[0];
        memcpy(slot->key, w, sizeof slot->key);
        slot->klen = (uint32_t)len;
        slot->nids = (uint32_t)k;
        for (size_t j = 0; j < k; j++) slot->ids[j] = out[j];
    } else if (lslot)
        long_put(lslot, p, len, out, k);
    return (int64_t)k;
}

/* A piece's probe: its set in the short cache (NULL: the piece does not go through that
   cache) and its key there.  Computed a batch of pieces ahead of their lookups, with the set
   asked for meanwhile: the cache is larger than the CPU's caches. */
typedef struct {
    cache_slot *slot;
    uint64_t w[3];
} piece_probe;

/* The probe of the piece p[0:len] (readable up to end); c, if not NULL, is in sync with m. */
static inline void probe_piece(hfb_cache *c, const uint8_t *p, size_t len, const uint8_t *end,
                               piece_probe *r) {
    r->slot = NULL;
    if (!c || len <= 2 || len > CACHE_KEY) return;
    uint64_t h;
    if (len <= 8 && (size_t)(end - p) >= 8) { /* one word: key_hash of (w0, 0, 0), shorter */
        uint64_t w0;
        memcpy(&w0, p, 8);
        r->w[0] = w0 &= key_mask.w[len][0];
        r->w[1] = r->w[2] = 0;
        h = (w0 ^ ((uint64_t)len << 58)) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    } else {
        load_key(p, len, end, r->w);
        h = key_hash(r->w, len);
    }
    r->slot = &c->slots[(h >> (64 - CACHE_BITS)) & ~(size_t)1];
    __builtin_prefetch(r->slot);
    __builtin_prefetch(r->slot + 1);
}

/* The ids of one piece (raw bytes p[0:len]) into out[] (room for len, and for CACHE_IDS when
   room_ids): pr its probe (probe_piece).  Returns the count or HFB_SLOW. */
/* The model's fields encode_piece reads, copied to a local of the caller: the compiler keeps
   them in registers there (the extension is built without strict aliasing, so a field of *m
   would be read again after every store of an id). */
typedef struct {
    const vt_table *whole;
    const int32_t *byte_ids;
    const byte_pair_t *byte_pairs;
    int suffix;
} piece_ctx;

static inline int64_t encode_piece(const hfb_model *m, const piece_ctx *x, hfb_cache *c,
                                   const uint8_t *p, size_t len, const piece_probe *pr,
                                   uint32_t *out, int room_ids) {
    if (x->whole) {
        int32_t id = vt_get(x->whole, (const char *)p, len);
        if (id >= 0) {
            out[0] = (uint32_t)id;
            return 1;
        }
    }
    if (len <= 2 && !x->suffix) { /* one byte, or one pair: no cache needed */
        int32_t a = x->byte_ids[p[0]], b = len == 2 ? x->byte_ids[p[1]] : 0;
        if (a < 0 || b < 0) return HFB_SLOW;
        out[0] = (uint32_t)a;
        if (len == 1) return 1;
        uint32_t nid, r;
        if (x->byte_pairs) {
            const byte_pair_t *e = &x->byte_pairs[(uint32_t)p[0] << 8 | p[1]];
            r = e->rank, nid = e->new_id;
        } else
            r = pair_rank(m, (uint32_t)a, (uint32_t)b, &nid);
        if (r != NO_RANK) {
            out[0] = nid;
            return 1;
        }
        out[1] = (uint32_t)b;
        return 2;
    }
    cache_slot *slot = pr->slot;
    if (slot) {
        const uint64_t *w = pr->w;
        for (int way = 0; way < 2; way++) {
            const cache_slot *h = &slot[way];
            if (h->klen == len && ((h->key[0] ^ w[0]) | (h->key[1] ^ w[1]) | (h->key[2] ^ w[2])) == 0) {
                if (room_ids) memcpy(out, h->ids, sizeof h->ids);
                else
                    for (uint32_t j = 0; j < h->nids; j++) out[j] = h->ids[j];
                return h->nids;
            }
        }
    }
    return encode_cold(m, c, p, len, slot, pr->w, out);
}

/* ---- split stages ---------------------------------------------------------------------- */

/* The engine's step flags (build/generated/scantok_engine.c): at the start state, a class
   whose step has T_SPECIAL without T_MATCH kills every thread at once: the scanner skips
   that character and tries again after it (findall).  Such a "dead" character starts no
   match, so a run of them needs no scanning. */
#define ENGINE_T_MATCH 1u
#define ENGINE_T_SPECIAL 2u

typedef struct {
    const scantok_dfa *dfa;
    int32_t behavior;
    int skip;              /* jump over dead characters (most ASCII bytes are dead) */
    uint8_t dead_ascii[128];
    uint8_t live_lo[16];   /* bit h of live_lo[l]: ASCII byte h << 4 | l is live (SIMD lookup) */
    /* bit h - 8 of live_hi[l]: byte h << 4 | l (h >= 8) may start a live character.  A
       continuation byte never does, nor a lead byte whose every well-formed character is dead
       (an ill-formed sequence's bytes are characters U+DC80..U+DCFF: dead, or else every
       non-ASCII byte is marked here).  The SIMD skip then jumps over text in other scripts
       too: the Split stages of DeepSeek V3 that look for digits and for CJK took 0.85 ms of
       8 ms over 0.5 MB of the multi corpus, stepping through its Cyrillic or CJK text one
       character at a time. */
    uint8_t live_hi[16];
    uint8_t *dead_cls;     /* nclasses entries */
    /* bit b: every code point of U+(64 b) .. U+(64 b + 63) (b < 1024: the BMP) is dead and
       none is a surrogate: a well-formed 2- or 3-byte character there is skipped on its first
       two bytes, without decoding it */
    uint8_t dead_block[1024 / 8];
} stage;

struct hfb_stages {
    size_t n;
    /* the UTF-8 of each byte's character in ByteLevel's alphabet (GPT-2's bytes_to_unicode),
       for the stages that run after a ByteLevel (behavior + 16) */
    uint8_t byte_u8[256][2], byte_u8len[256];
    stage st[];
};

hfb_stages *hfb_stages_new(const scantok_dfa *const *dfas, const int32_t *behaviors, size_t n,
                           int skip) {
    hfb_stages *ss = calloc(1, sizeof *ss + n * sizeof(stage));
    if (!ss) return NULL;
    ss->n = n;
    for (uint32_t b = 0, extra = 0; b < 256; b++) {
        int kept = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        uint32_t cp = kept ? b : 256 + extra++;
        if (cp < 0x80) ss->byte_u8[b][0] = (uint8_t)cp, ss->byte_u8len[b] = 1;
        else {
            ss->byte_u8[b][0] = (uint8_t)(0xC0 | cp >> 6), ss->byte_u8[b][1] = (uint8_t)(0x80 | (cp & 0x3F));
            ss->byte_u8len[b] = 2;
        }
    }
    for (size_t k = 0; k < n; k++) {
        stage *g = &ss->st[k];
        const scantok_dfa *d = dfas[k];
        g->dfa = d;
        g->behavior = behaviors[k];
        g->dead_cls = calloc(d->nclasses ? d->nclasses : 1, 1);
        if (!g->dead_cls) {
            hfb_stages_free(ss);
            return NULL;
        }
        const uint8_t *F = d->flags + d->pair;
        for (uint32_t c = 0; c < d->nclasses; c++) {
            uint32_t f = F[d->start + c];
            g->dead_cls[c] = (f & ENGINE_T_SPECIAL) && !(f & ENGINE_T_MATCH);
        }
        int ndead = 0;
        for (int b = 0; b < 128; b++) {
            ndead += g->dead_ascii[b] = g->dead_cls[d->ascii[b]];
            if (!g->dead_ascii[b]) g->live_lo[b & 15] |= (uint8_t)(1u << (b >> 4));
        }
        g->skip = skip && ndead >= 64;
        for (uint32_t b = 2; b < 1024; b++) { /* blocks 0, 1 are ASCII */
            if (b >= 0xD800 / 64 && b < 0xE000 / 64) continue;
            int dead = 1;
            for (uint32_t cp = 64 * b; cp < 64 * b + 64 && dead; cp++)
                dead = g->dead_cls[d->stage2[((uint32_t)d->stage1[cp >> 8] << 8) | (cp & 0xFF)]];
            if (dead) g->dead_block[b >> 3] |= (uint8_t)(1u << (b & 7));
        }
        int bad_dead = 1; /* the characters of ill-formed bytes */
        for (uint32_t b = 0x80; b < 0x100; b++) {
            uint32_t cp = 0xDC00 | b;
            bad_dead &= g->dead_cls[d->stage2[((uint32_t)d->stage1[cp >> 8] << 8) | (cp & 0xFF)]];
        }
        for (uint32_t b = 0x80; b < 0x100; b++) {
            int live = 1;
            if (bad_dead) {
                if (b < 0xC2) live = 0; /* a continuation byte, or an overlong lead (ill-formed) */
                else if (b < 0xE0) live = !((g->dead_block[(b & 0x1F) >> 3] >> (b & 7)) & 1);
                else if (b < 0xF0) { /* blocks (b & 15) << 6 .. + 63, well-formed ones only */
                    uint32_t lo = (b & 15) << 6, hi = lo + 64;
                    if (b == 0xE0) lo = 0x800 / 64;
                    if (b == 0xED) hi = 0xD800 / 64;
                    live = 0;
                    for (uint32_t k = lo; k < hi && !live; k++) live = !((g->dead_block[k >> 3] >> (k & 7)) & 1);
                } else live = b <= 0xF4; /* 4-byte characters: not looked into */
            }
            if (live) g->live_hi[b & 15] |= (uint8_t)(1u << ((b >> 4) - 8));
        }
    }
    return ss;
}

void hfb_stages_free(hfb_stages *ss) {
    if (!ss) return;
    for (size_t k = 0; k < ss->n; k++) free(ss->st[k].dead_cls);
    free(ss);
}

size_t hfb_stages_skipping(const hfb_stages *ss) {
    size_t k = 0;
    for (size_t i = 0; ss && i < ss->n; i++) k += ss->st[i].skip != 0;
    return k;
}

/* The class and byte length of the character at p (p < end), as the engine decodes it
   without flags: an invalid byte is a character of its own, U+DC00 + byte. */
static inline size_t char_class(const scantok_dfa *d, const uint8_t *p, const uint8_t *end,
                                uint32_t *cls) {
    uint32_t b = p[0], cp, need, lo = 0x80, hi = 0xBF;
    if (b < 0x80) {
        *cls = d->ascii[b];
        return 1;
    }
    if (b >= 0xC2 && b <= 0xDF) need = 1, cp = b & 0x1F;
    else if (b >= 0xE0 && b <= 0xEF) {
        need = 2, cp = b & 0x0F;
        if (b == 0xE0) lo = 0xA0;
        else if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 3, cp = b & 0x07;
        if (b == 0xF0) lo = 0x90;
        else if (b == 0xF4) hi = 0x8F;
    } else goto invalid;
    for (uint32_t i = 1; i <= need; i++) {
        if (p + i >= end || p[i] < lo || p[i] > hi) goto invalid;
        lo = 0x80, hi = 0xBF;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    *cls = d->stage2[((uint32_t)d->stage1[cp >> 8] << 8) | (cp & 0xFF)];
    return need + 1;
invalid:
    cp = 0xDC00 | b;
    *cls = d->stage2[((uint32_t)d->stage1[cp >> 8] << 8) | (cp & 0xFF)];
    return 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* Skips dead bytes 32 at a time (nibble lookups; non-ASCII bytes as live_hi says): returns
   the first position at or after pos whose byte may start a live character, or where fewer
   than 32 bytes are left. */
__attribute__((target("avx2"))) static size_t skip_dead_avx2(const stage *g, const uint8_t *p, size_t pos,
                                                             size_t n) {
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)g->live_lo));
    const __m256i tbl_hi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)g->live_hi));
    const __m256i bit = _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128,
                                         1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    const __m256i low = _mm256_set1_epi8(0x0F);
    while (n - pos >= 32) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(p + pos)), lo = _mm256_and_si256(x, low);
        /* the row of the byte's low nibble, from the non-ASCII table where its top bit is set */
        __m256i row = _mm256_blendv_epi8(_mm256_shuffle_epi8(tbl, lo), _mm256_shuffle_epi8(tbl_hi, lo), x);
        __m256i hb = _mm256_shuffle_epi8(bit, _mm256_and_si256(_mm256_srli_epi16(x, 4), low));
        __m256i dead = _mm256_cmpeq_epi8(_mm256_and_si256(row, hb), _mm256_setzero_si256());
        uint32_t stop = ~(uint32_t)_mm256_movemask_epi8(dead);
        if (stop) return pos + (size_t)__builtin_ctz(stop);
        pos += 32;
    }
    return pos;
}

#endif

/* The first character at or after pos that is live (want_dead 0) or dead (want_dead 1). */
static size_t next_char(const stage *g, const uint8_t *p, size_t pos, size_t n, int want_dead) {
#if defined(__x86_64__) && defined(__GNUC__)
    int simd = !want_dead && have_avx2();
#endif
    while (pos < n) {
#if defined(__x86_64__) && defined(__GNUC__)
        if (simd) {
            pos = skip_dead_avx2(g, p, pos, n);
            if (pos >= n) break;
        }
#endif
        uint32_t b = p[pos], cls;
        if (b < 0x80) {
            if (g->dead_ascii[b] == want_dead) return pos;
            pos++;
            continue;
        }
        if (!want_dead && pos + 1 < n && (p[pos + 1] & 0xC0) == 0x80) {
            uint32_t c1 = p[pos + 1], blk;
            size_t len = 0;
            if (b >= 0xC2 && b <= 0xDF) blk = b & 0x1F, len = 2;
            else if (b >= 0xE0 && b <= 0xEF && pos + 2 < n && (p[pos + 2] & 0xC0) == 0x80 &&
                     (b != 0xE0 || c1 >= 0xA0) && (b != 0xED || c1 <= 0x9F))
                blk = ((b & 0x0F) << 6) | (c1 & 0x3F), len = 3;
            if (len && (g->dead_block[blk >> 3] >> (blk & 7)) & 1) {
                pos += len;
                continue;
            }
        }
        size_t len = char_class(g->dfa, p + pos, p + n, &cls);
        if (g->dead_cls[cls] == want_dead) return pos;
        pos += len;
    }
    return n;
}

/* The scanner's matches in p[0:n] (offsets into ms/me, room for n + 1).  A skipping stage
   scans only from each live character to just past the next dead one, with SCANTOK_PARTIAL
   (a match still undecided there is rescanned over a window that doubles); between those
   windows every character is dead and the scanner would skip it one by one. */
static size_t find_matches(const stage *g, const uint8_t *p, size_t n, uint32_t *ms, uint32_t *me) {
    if (!g->skip) return scantok_scan(g->dfa, p, n, 0, ms, me, NULL);
    size_t k = 0, pos = 0;
    while (pos < n) {
        size_t q = next_char(g, p, pos, n, 0);
        if (q >= n) break;
        size_t r = next_char(g, p, q + 1, n, 1);
        if (r < n) r++;
        size_t ext = 16;
        for (;;) {
            size_t consumed = 0;
            size_t nm = scantok_scan(g->dfa, p + q, r - q, r < n ? SCANTOK_PARTIAL : 0, ms + k,
                                     me + k, &consumed);
            for (size_t i = 0; i < nm; i++) ms[k + i] += (uint32_t)q, me[k + i] += (uint32_t)q;
            k += nm;
            if (r >= n) {
                pos = n;
                break;
            }
            if (q + consumed >= r) {
                pos = r;
                break;
            }
            q += consumed;
            r = n - r > ext ? r + ext : n;
            ext *= 2;
        }
    }
    return k;
}

static int scratch_grow(scratch *s, size_t n, int offsets) {
    if (n + 1 > s->cap || (offsets && !s->cidx)) {
        size_t cap = n + 1 > s->cap ? n + 1 : s->cap;
        free(s->a), free(s->b), free(s->ms), free(s->me), free(s->cidx), free(s->mapped), free(s->raw_of);
        memset(s, 0, sizeof *s);
        s->a = malloc(2 * cap * sizeof(uint32_t));
        s->b = malloc(2 * cap * sizeof(uint32_t));
        s->ms = malloc(cap * sizeof(uint32_t));
        s->me = malloc(cap * sizeof(uint32_t));
        s->cidx = offsets ? malloc((cap + 1) * sizeof(uint32_t)) : NULL;
        if (!s->a || !s->b || !s->ms || !s->me || (offsets && !s->cidx)) return -1;
        s->cap = cap;
    }
    return 0;
}

static void scratch_free(scratch *s) {
    free(s->a), free(s->b), free(s->ms), free(s->me), free(s->cidx), free(s->mapped), free(s->raw_of);
    memset(s, 0, sizeof *s);
}

/* The scratch of a call: the cache's (kept for the next call unless it grew past
   SCRATCH_KEEP: see scratch_done), or local (c NULL). */
static void scratch_done(hfb_cache *c, scratch *s) {
    if (!c || s->cap > SCRATCH_KEEP) scratch_free(s);
}

/* Pieces are stored as pairs (start, end) in one array. */
typedef struct {
    uint32_t *out;
    size_t k;
    int have;          /* a pending piece */
    uint32_t ps, pe;
} emitter;

static inline void flush(emitter *e) {
    if (e->have && e->pe > e->ps) {
        e->out[2 * e->k] = e->ps;
        e->out[2 * e->k + 1] = e->pe;
        e->k++;
    }
    e->have = 0;
}

static inline void start_piece(emitter *e, uint32_t a, uint32_t b) {
    flush(e);
    e->have = 1;
    e->ps = a;
    e->pe = b;
}

/* One mark (a part of the piece, a match or not) under a behaviour; prevm is the previous
   mark's flag, pend (MergedWithNext) says a match waits for the next mark. */
/* find_matches over the ByteLevel characters of p[0:n] (each byte one character of
   ss->byte_u8), the matches given back in p's bytes; -1 on out of memory. */
static int64_t find_matches_mapped(const hfb_stages *ss, const stage *g, const uint8_t *p, size_t n,
                                   scratch *s) {
    if (!s->mapped || !s->raw_of) {
        free(s->mapped), free(s->raw_of);
        s->mapped = malloc(2 * s->cap);
        s->raw_of = malloc((2 * s->cap + 1) * sizeof *s->raw_of);
        if (!s->mapped || !s->raw_of) {
            free(s->mapped), free(s->raw_of);
            s->mapped = NULL, s->raw_of = NULL;
            return -1;
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t l = ss->byte_u8len[p[i]];
        s->mapped[m] = ss->byte_u8[p[i]][0];
        s->raw_of[m++] = (uint32_t)i;
        if (l == 2) {
            s->mapped[m] = ss->byte_u8[p[i]][1];
            s->raw_of[m++] = (uint32_t)i;
        }
    }
    s->raw_of[m] = (uint32_t)n;
    size_t nm = find_matches(g, s->mapped, m, s->ms, s->me);
    for (size_t i = 0; i < nm; i++) s->ms[i] = s->raw_of[s->ms[i]], s->me[i] = s->raw_of[s->me[i]];
    return (int64_t)nm;
}

static int split_piece(const hfb_stages *ss, const stage *g, const uint8_t *data, uint32_t ps, uint32_t pe,
                       scratch *s, emitter *e) {
    size_t nm;
    if (g->behavior & 16) {
        int64_t r = find_matches_mapped(ss, g, data + ps, pe - ps, s);
        if (r < 0) return -1;
        nm = (size_t)r;
    } else
        nm = find_matches(g, data + ps, pe - ps, s->ms, s->me);
    int invert = g->behavior & 8, beh = g->behavior & 7;
    if (beh == 0 && invert) { /* keep the matches only */
        for (size_t i = 0; i < nm; i++) start_piece(e, ps + s->ms[i], ps + s->me[i]);
        flush(e);
        return 0;
    }
    if (beh == 1) { /* Isolated (with or without invert: the same pieces): gaps and matches */
        flush(e);
        uint32_t *out = e->out + 2 * e->k, pos = ps;
        for (size_t i = 0; i < nm; i++) {
            uint32_t a = ps + s->ms[i], b = ps + s->me[i];
            if (pos < a) *out++ = pos, *out++ = a;
            *out++ = a, *out++ = b;
            pos = b;
        }
        if (pos < pe) *out++ = pos, *out++ = pe;
        e->k = (size_t)(out - e->out) / 2;
        return 0;
    }
    int prevm = 0, first = 1;
    uint32_t pos = 0, len = pe - ps;
    size_t i = 0;
    while (pos < len) {
        uint32_t a, b;
        int m;
        if (i < nm && s->ms[i] == pos) {
            a = s->ms[i], b = s->me[i], m = 1;
            i++;
        } else {
            a = pos, b = i < nm ? s->ms[i] : len, m = 0;
        }
        pos = b;
        if (invert) m = !m;
        a += ps, b += ps;
        switch (beh) {
        case 1: /* Isolated */
            start_piece(e, a, b);
            break;
        case 0: /* Removed */
            if (!m) start_piece(e, a, b);
            else flush(e);
            break;
        case 4: /* Contiguous */
            if (m == prevm && !first && e->have) e->pe = b;
            else start_piece(e, a, b);
            break;
        case 2: /* MergedWithPrevious */
            if (m && !prevm && !first && e->have) e->pe = b;
            else start_piece(e, a, b);
            break;
        case 3: /* MergedWithNext: a match takes the non-match after it */
            if (!m && prevm && e->have) e->pe = b;
            else start_piece(e, a, b);
            break;
        }
        prevm = m;
        first = 0;
    }
    flush(e);
    return 0;
}

static int64_t pretokenize_into(const hfb_stages *ss, const uint8_t *data, size_t n, scratch *s,
                                uint32_t **pieces) {
    size_t nstages = ss ? ss->n : 0;
    uint32_t *cur = s->a, *nxt = s->b;
    size_t k = 0;
    if (n) {
        cur[0] = 0;
        cur[1] = (uint32_t)n;
        k = 1;
    }
    for (size_t st = 0; st < nstages; st++) {
        emitter e = {nxt, 0, 0, 0, 0};
        for (size_t i = 0; i < k; i++)
            if (split_piece(ss, &ss->st[st], data, cur[2 * i], cur[2 * i + 1], s, &e) < 0) return HFB_NOMEM;
        k = e.k;
        uint32_t *t = cur;
        cur = nxt;
        nxt = t;
    }
    *pieces = cur;
    return (int64_t)k;
}

int64_t hfb_pretokenize(const hfb_stages *ss, const uint8_t *data, size_t n, uint32_t *starts,
                        uint32_t *ends) {
    scratch s = {0};
    if (scratch_grow(&s, n, 0) < 0) {
        scratch_free(&s);
        return HFB_NOMEM;
    }
    uint32_t *pieces;
    int64_t k = pretokenize_into(ss, data, n, &s, &pieces);
    for (int64_t i = 0; i < k; i++) {
        starts[i] = pieces[2 * i];
        ends[i] = pieces[2 * i + 1];
    }
    scratch_free(&s);
    return k;
}

/* cidx[b] (b = 0 .. n): the code point index of byte b, the number of bytes before it that
   start a character (all but the continuation bytes 10xxxxxx).  Eight bytes a step, as a
   prefix sum in the bytes of one product: byte by byte it was 9 % of the instructions of
   encode() with offsets over the multi corpus. */
static void char_index(const uint8_t *data, size_t n, uint32_t *cidx) {
    const uint64_t high = 0x8080808080808080ull, ones = 0x0101010101010101ull;
    uint32_t cnt = 0;
    size_t b = 0;
    for (; b + 8 <= n; b += 8) {
        uint64_t x;
        memcpy(&x, data + b, 8);
        uint64_t lead = ((x & ~(x << 1) & high) ^ high) >> 7; /* 1 in each byte that starts one */
        uint64_t upto = lead * ones;                          /* byte i: starts in bytes 0..i */
        uint64_t before = upto << 8;                          /* byte i: starts in bytes 0..i-1 */
        for (int i = 0; i < 8; i++) cidx[b + i] = cnt + (uint32_t)((before >> (8 * i)) & 0xFF);
        cnt += (uint32_t)(upto >> 56);
    }
    for (; b < n; b++) {
        cidx[b] = cnt;
        cnt += (data[b] & 0xC0) != 0x80;
    }
    cidx[n] = cnt;
}

/* For offsets (wanted): whether data[0:n] is ASCII, where a byte's code point index is its
   own; else s->cidx is filled (char_index).  Without offsets: 1. */
static int offsets_index(const uint8_t *data, size_t n, int wanted, scratch *s) {
    if (!wanted) return 1;
    uint8_t any = 0;
    for (size_t b = 0; b < n; b++) any |= data[b];
    if (any < 0x80) return 1;
    char_index(data, n, s->cidx);
    return 0;
}

/* Inlined into each caller: those that pass words NULL get no trace of it (the piece index
   stores cost encode() with offsets 16 % of encode_text's instructions when compiled in). */
static inline __attribute__((always_inline)) int64_t encode_text(const hfb_model *m, hfb_cache *c,
                                                                 const hfb_stages *ss, const uint8_t *data,
                                                                 size_t n, uint32_t *ids, uint32_t *starts,
                                                                 uint32_t *ends, uint32_t *words, scratch *s) {
    /* a token's end is its start plus its id's length, which an id given to two strings of
       different lengths does not have (tokenizers counts the symbols merged): such files take
       the general path for offsets (found by a fuzz campaign, session 23) */
    if (starts && !m->unique_ids) return HFB_SLOW;
    if (scratch_grow(s, n, starts != NULL) < 0) return HFB_NOMEM;
    cache_sync(m, c);
    uint32_t *pieces;
    int64_t k = pretokenize_into(ss, data, n, s, &pieces);
    if (k < 0) return k;
    int ascii = offsets_index(data, n, starts != NULL, s);
    /* pieces in batches of PROBE_BATCH: the next batch's probes (and the cache lines they ask
       for) are made before this batch is encoded */
    enum { PROBE_BATCH = 16 };
    piece_probe probes[2][PROBE_BATCH];
    const uint8_t *end = data + n;
    size_t out = 0;
    const piece_ctx x = {m->whole, m->byte_ids, m->byte_pairs, m->suffix};
    const uint32_t *tok_len = m->tok_len;
    for (int64_t i = 0; i < k && i < PROBE_BATCH; i++)
        probe_piece(c, data + pieces[2 * i], pieces[2 * i + 1] - pieces[2 * i], end, &probes[0][i]);
    for (int64_t b0 = 0, nb = 0; b0 < k; b0 += PROBE_BATCH, nb++) {
        piece_probe *cur = probes[nb & 1], *nx = probes[(nb + 1) & 1];
        int64_t b1 = b0 + PROBE_BATCH, e0 = b1 < k ? b1 : k, e1 = b1 + PROBE_BATCH < k ? b1 + PROBE_BATCH : k;
        for (int64_t j = b1; j < e1; j++)
            probe_piece(c, data + pieces[2 * j], pieces[2 * j + 1] - pieces[2 * j], end, &nx[j - b1]);
        for (int64_t i = b0; i < e0; i++) {
            uint32_t ps = pieces[2 * i], pe = pieces[2 * i + 1];
            int64_t r = encode_piece(m, &x, c, data + ps, pe - ps, &cur[i - b0], ids + out, out + CACHE_IDS <= n);
            if (r < 0) return r;
            if (starts) {
                /* a token ends where its bytes do (the last one where the piece does: the symbols
                   merged are the piece's bytes, as tokenizers' Word counts them) */
                uint32_t pos = ps;
                for (int64_t j = 0; j < r; j++) {
                    uint32_t e = j + 1 < r ? pos + tok_len[ids[out + j]] : pe;
                    /* defensive: lengths come from the vocabulary; a start is never read past
                       the piece (cidx has n + 1 entries) */
                    if (e > pe) e = pe;
                    if (pos >= pe) pos = pe - 1;
                    starts[out + j] = ascii ? pos : s->cidx[pos + 1] - 1;
                    ends[out + j] = ascii ? e : s->cidx[e];
                    pos = e;
                }
            }
            if (words)
                for (int64_t j = 0; j < r; j++) words[out + j] = (uint32_t)i;
            out += (size_t)r;
        }
    }
    return (int64_t)out;
}

int64_t hfb_encode_words(const hfb_model *m, hfb_cache *c, const hfb_stages *ss, const uint8_t *data,
                         size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends, uint32_t *words) {
    if (!m->tok_len) return HFB_SLOW;
    scratch local = {0}, *s = c ? &c->s : &local;
    int64_t r = encode_text(m, c, ss, data, n, ids, starts, ends, words, s);
    scratch_done(c, s);
    return r;
}

int64_t hfb_encode(const hfb_model *m, hfb_cache *c, const hfb_stages *ss, const uint8_t *data,
                   size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends) {
    if (!m->tok_len) return HFB_SLOW;
    scratch local = {0}, *s = c ? &c->s : &local;
    int64_t r = encode_text(m, c, ss, data, n, ids, starts, ends, NULL, s);
    scratch_done(c, s);
    return r;
}

/* The pieces of data[0:n] under the stages (scratch sized for the text), and for offsets
   the code point index (*ascii, or s->cidx: offsets_index).  Returns the count or HFB_NOMEM. */
static int64_t pieces_of(const hfb_stages *ss, const uint8_t *data, size_t n, int offsets, scratch *s,
                         uint32_t **pieces, int *ascii) {
    if (scratch_grow(s, n, offsets) < 0) return HFB_NOMEM;
    int64_t k = pretokenize_into(ss, data, n, s, pieces);
    if (k >= 0) *ascii = offsets_index(data, n, offsets, s);
    return k;
}

/* Char mode under pre-tokenizer stages: each piece merged on its own (chars_piece), through
   the word cache; offsets as encode_text's (a byte-fallback token covers all of its
   character). */
static int64_t encode_chars_text(const hfb_model *m, hfb_cache *c, const hfb_stages *ss, const uint8_t *data,
                                 size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends, uint32_t *words,
                                 scratch *s) {
    if (!m->char_keys) return HFB_SLOW;
    if (!n) return 0;
    uint32_t *pieces;
    int ascii;
    int64_t k = pieces_of(ss, data, n, starts != NULL, s, &pieces, &ascii);
    if (k < 0) return k;
    chars_work w;
    if (chars_work_init(&w, n) < 0) {
        chars_work_free(&w);
        return HFB_NOMEM;
    }
    const int windows = m->unique_ids && __atomic_load_n(&windows_on, __ATOMIC_RELAXED);
    /* a hit's offsets come from u8len: one length per id */
    int nomem = 0, cached = m->unique_ids && words_ready(m, c, &nomem);
    int64_t rc = HFB_NOMEM;
    size_t out = 0;
    if (nomem) goto done;
    for (int64_t i = 0; i < k; i++) {
        uint32_t ps = pieces[2 * i], pe = pieces[2 * i + 1];
        int64_t r = chars_piece(m, c, cached, windows, data, ps, pe, NULL, &w, ids + out, w.blen + out);
        if (r < 0) {
            rc = r;
            goto done;
        }
        if (starts)
            for (int64_t j = 0, pos = ps; j < r; j++) {
                uint32_t e = (uint32_t)pos + w.blen[out + j];
                starts[out + j] = ascii ? (uint32_t)pos : s->cidx[pos + 1] - 1;
                ends[out + j] = ascii ? e : s->cidx[e];
                pos = e;
            }
        if (words)
            for (int64_t j = 0; j < r; j++) words[out + j] = (uint32_t)i;
        out += (size_t)r;
    }
    rc = (int64_t)out;
done:
    chars_work_free(&w);
    return rc;
}

int64_t hfb_encode_chars_words(const hfb_model *m, hfb_cache *c, const hfb_stages *ss, const uint8_t *data,
                               size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends, uint32_t *words) {
    scratch local = {0}, *s = c ? &c->s : &local;
    int64_t r = encode_chars_text(m, c, ss, data, n, ids, starts, ends, words, s);
    scratch_done(c, s);
    return r;
}

int64_t hfb_encode_chars_split(const hfb_model *m, hfb_cache *c, const hfb_stages *ss, const uint8_t *data,
                               size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends) {
    return hfb_encode_chars_words(m, c, ss, data, n, ids, starts, ends, NULL);
}

/* WordLevel. */
int hfb_set_word_level(hfb_model *m, const uint8_t *tokens, size_t nbytes, size_t n, uint8_t sep,
                       const uint32_t *ids, int64_t unk_id) {
    vt_table *t = vt_new(n);
    if (!t) return -1;
    const uint8_t *p = tokens, *end = tokens + nbytes;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = memchr(p, sep, (size_t)(end - p));
        if (!e || ids[i] > INT32_MAX) { /* fewer records than n, or an id vt_table cannot hold */
            vt_free(t);
            return -2;
        }
        if (vt_insert(t, (const char *)p, (size_t)(e - p), (int32_t)ids[i]) < 0) {
            vt_free(t);
            return -1;
        }
        p = e + 1;
    }
    vt_free(m->words);
    m->words = t;
    m->word_unk = unk_id;
    return 0;
}

int hfb_set_word_wsplit(hfb_model *m, int on) {
    int was = m->word_wsplit;
    m->word_wsplit = on != 0;
    return was;
}

/* One token a piece: no merge, no cache, so no per-thread state but the scratch. */
static int64_t encode_wl_text(const hfb_model *m, const hfb_stages *ss, const uint8_t *data, size_t n,
                              uint32_t *ids, uint32_t *starts, uint32_t *ends, uint32_t *words, scratch *s) {
    if (!m->words) return HFB_SLOW;
    if (!n) return 0;
    if (m->word_wsplit) { /* ids < 2**31 (hfb_set_word_level): int32_t and uint32_t alike */
        int64_t k = vt_encode_wsplit(m->words, data, n, (int32_t)m->word_unk, (int32_t *)ids, starts, ends, 1);
        if (k == INT64_MIN) return HFB_NOMEM;
        if (k < 0) return HFB_SLOW; /* no unknown token: tokenizers fails, the caller raises */
        for (int64_t i = 0; words && i < k; i++) words[i] = (uint32_t)i;
        return k;
    }
    uint32_t *pieces;
    int ascii;
    int64_t k = pieces_of(ss, data, n, starts != NULL, s, &pieces, &ascii);
    if (k < 0) return k;
    const vt_table *t = m->words;
    for (int64_t i = 0; i < k; i++) {
        uint32_t ps = pieces[2 * i], pe = pieces[2 * i + 1];
        int64_t id = vt_get(t, (const char *)data + ps, pe - ps);
        if (id < 0) {
            if (m->word_unk < 0) return HFB_SLOW; /* tokenizers fails: the caller raises its error */
            id = m->word_unk;
        }
        ids[i] = (uint32_t)id;
        if (starts) {
            starts[i] = ascii ? ps : s->cidx[ps + 1] - 1;
            ends[i] = ascii ? pe : s->cidx[pe];
        }
        if (words) words[i] = (uint32_t)i;
    }
    return k;
}

int64_t hfb_encode_wl_words(const hfb_model *m, hfb_cache *c, const hfb_stages *ss, const uint8_t *data,
                            size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends, uint32_t *words) {
    scratch local = {0}, *s = c ? &c->s : &local;
    int64_t r = encode_wl_text(m, ss, data, n, ids, starts, ends, words, s);
    scratch_done(c, s);
    return r;
}

int64_t hfb_encode_wl(const hfb_model *m, hfb_cache *c, const hfb_stages *ss, const uint8_t *data,
                      size_t n, uint32_t *ids, uint32_t *starts, uint32_t *ends) {
    return hfb_encode_wl_words(m, c, ss, data, n, ids, starts, ends, NULL);
}

int64_t hfb_encode_batch(const hfb_model *m, hfb_cache *c, const hfb_stages *ss,
                         const uint8_t *data, const uint64_t *offsets, size_t ntexts,
                         uint32_t *ids, int64_t *counts) {
    scratch local = {0}, *s = c ? &c->s : &local;
    for (size_t i = 0; i < ntexts; i++) {
        if (!m->tok_len) {
            counts[i] = HFB_SLOW;
            continue;
        }
        int64_t r = encode_text(m, c, ss, data + offsets[i], offsets[i + 1] - offsets[i],
                                ids + offsets[i], NULL, NULL, NULL, s);
        if (r == HFB_NOMEM) {
            scratch_free(s);
            return HFB_NOMEM;
        }
        counts[i] = r;
    }
    scratch_done(c, s);
    return 0;
}

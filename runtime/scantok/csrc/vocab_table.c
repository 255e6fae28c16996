/* Vocabulary hash table (open addressing, linear probing, power-of-two capacity, load <= 1/2)
   and the scan + lookup loops of scantok's WordLevel tokenizer.  See vocab_table.h. */
#include "vocab_table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A slot is 16 bytes: the first 8 key bytes (zero-padded), a tag (hash high bits | length,
   0 = empty) and the value; the arena offset (and the full length of keys of 255+ bytes) sit in
   per-slot side arrays touched only for keys longer than 8 bytes. */
typedef struct {
    uint64_t prefix;
    uint32_t tag;
    int32_t value;
} vt_slot;

typedef struct {
    vt_slot *slots;
    uint32_t *soff;   /* per slot: key offset in the arena */
    uint32_t *slen;   /* per slot: key length */
    int64_t *scount;  /* per slot: count (counters only) */
    size_t mask;      /* capacity - 1 */
    size_t count;
    char *arena;
    size_t arena_len, arena_cap;
    int counting;
} vt_map;

struct vt_table { vt_map m; };
struct vt_counter { vt_map m; };

static inline uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static inline uint64_t mix(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* A small wyhash-style hash: fast on the short keys that words are. */
static inline uint32_t vt_hash(const uint8_t *p, size_t len) {
    const uint64_t s0 = 0xa0761d6478bd642full, s1 = 0xe7037ed1a0b428dbull, s2 = 0x8ebc6af09c88c6e3ull;
    uint64_t a, b, seed = s0 ^ len;
    if (len <= 16) {
        if (len >= 4) {
            a = ((uint64_t)rd32(p) << 32) | rd32(p + ((len >> 3) << 2));
            b = ((uint64_t)rd32(p + len - 4) << 32) | rd32(p + len - 4 - ((len >> 3) << 2));
        } else if (len > 0) {
            a = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) | p[len - 1];
            b = 0;
        } else {
            a = b = 0;
        }
    } else {
        size_t i = len;
        while (i > 16) {
            seed = mix(rd64(p) ^ s1, rd64(p + 8) ^ seed);
            p += 16;
            i -= 16;
        }
        a = rd64(p + i - 16);
        b = rd64(p + i - 8);
    }
    uint64_t h = mix(s1 ^ len, mix(a ^ s1, b ^ seed) ^ s2);
    uint32_t r = (uint32_t)(h ^ (h >> 32));
    return r ? r : 1u;
}

static inline uint32_t make_tag(uint32_t h, size_t len) {
    uint32_t tag = (h & 0xFFFFFF00u) | (uint32_t)(len < 255 ? len : 255);
    return tag ? tag : 0x100u;
}

static inline uint64_t key_prefix(const uint8_t *key, size_t len) {
    uint64_t v = 0;
    memcpy(&v, key, len < 8 ? len : 8);
    return v;
}

/* prefix when 8 bytes can be read at key */
static inline uint64_t key_prefix8(const uint8_t *key, size_t len) {
    uint64_t v = rd64(key);
    return len >= 8 ? v : v & ((1ull << (len * 8)) - 1);
}

static void map_free(vt_map *m) {
    free(m->slots);
    free(m->soff);
    free(m->slen);
    free(m->scount);
    free(m->arena);
    memset(m, 0, sizeof *m);
}

static int map_alloc(vt_map *m, size_t cap) {
    m->slots = calloc(cap, sizeof(vt_slot));
    m->soff = calloc(cap, sizeof(uint32_t));
    m->slen = calloc(cap, sizeof(uint32_t));
    m->scount = m->counting ? calloc(cap, sizeof(int64_t)) : NULL;
    if (!m->slots || !m->soff || !m->slen || (m->counting && !m->scount)) return -1;
    m->mask = cap - 1;
    return 0;
}

static int map_init(vt_map *m, size_t expected, int counting) {
    memset(m, 0, sizeof *m);
    m->counting = counting;
    size_t cap = 16;
    while (cap < expected * 2 + 2) cap <<= 1;
    m->arena_cap = expected * 8 + 64;
    m->arena = malloc(m->arena_cap);
    if (!m->arena || map_alloc(m, cap)) { map_free(m); return -1; }
    return 0;
}

static inline vt_slot *map_find_p(const vt_map *m, const uint8_t *key, size_t len, uint32_t h,
                                  uint64_t pre) {
    size_t j = h & m->mask;
    uint32_t tag = make_tag(h, len);
    for (;;) {
        vt_slot *s = &m->slots[j];
        if (s->tag == tag && s->prefix == pre &&
            (len <= 8 || (m->slen[j] == len &&
                          memcmp(m->arena + m->soff[j] + 8, key + 8, len - 8) == 0)))
            return s;
        if (!s->tag) return s;
        j = (j + 1) & m->mask;
    }
}

static inline vt_slot *map_find(const vt_map *m, const uint8_t *key, size_t len, uint32_t h) {
    return map_find_p(m, key, len, h, key_prefix(key, len));
}

static int map_grow(vt_map *m) {
    vt_map old = *m;
    size_t cap = (m->mask + 1) * 2;
    if (map_alloc(m, cap)) {
        free(m->slots); free(m->soff); free(m->slen); free(m->scount);
        *m = old;
        return -1;
    }
    for (size_t i = 0; i <= old.mask; i++) {
        vt_slot *s = &old.slots[i];
        if (!s->tag) continue;
        size_t len = old.slen[i];
        uint32_t h = vt_hash((const uint8_t *)old.arena + old.soff[i], len);
        size_t j = h & m->mask;
        while (m->slots[j].tag) j = (j + 1) & m->mask;
        m->slots[j] = *s;
        m->soff[j] = old.soff[i];
        m->slen[j] = old.slen[i];
        if (m->counting) m->scount[j] = old.scount[i];
    }
    free(old.slots); free(old.soff); free(old.slen); free(old.scount);
    return 0;
}

/* Returns the slot index for key, inserting it (value 0, count 0) if absent (*is_new set);
   -1 on out of memory. */
static ptrdiff_t map_upsert(vt_map *m, const uint8_t *key, size_t len, int *is_new) {
    if (len > UINT32_MAX) return -1;
    uint32_t h = vt_hash(key, len);
    vt_slot *s = map_find(m, key, len, h);
    if (s->tag) { *is_new = 0; return s - m->slots; }
    if ((m->count + 1) * 2 > m->mask + 1) {
        if (map_grow(m)) return -1;
        s = map_find(m, key, len, h);
    }
    if (m->arena_len + len > UINT32_MAX) return -1;
    if (m->arena_len + len > m->arena_cap) {
        size_t nc = m->arena_cap * 2;
        while (nc < m->arena_len + len) nc *= 2;
        char *na = realloc(m->arena, nc);
        if (!na) return -1;
        m->arena = na;
        m->arena_cap = nc;
    }
    memcpy(m->arena + m->arena_len, key, len);
    size_t j = (size_t)(s - m->slots);
    s->tag = make_tag(h, len);
    s->prefix = key_prefix(key, len);
    s->value = 0;
    m->soff[j] = (uint32_t)m->arena_len;
    m->slen[j] = (uint32_t)len;
    if (m->counting) m->scount[j] = 0;
    m->arena_len += len;
    m->count++;
    *is_new = 1;
    return (ptrdiff_t)j;
}

/* ---- vocabulary table ------------------------------------------------------------------ */

vt_table *vt_new(size_t expected) {
    vt_table *t = malloc(sizeof *t);
    if (!t) return NULL;
    if (map_init(&t->m, expected, 0)) { free(t); return NULL; }
    return t;
}

void vt_free(vt_table *t) {
    if (!t) return;
    map_free(&t->m);
    free(t);
}

int vt_insert(vt_table *t, const char *key, size_t len, int32_t id) {
    int is_new;
    ptrdiff_t j = map_upsert(&t->m, (const uint8_t *)key, len, &is_new);
    if (j < 0) return -1;
    t->m.slots[j].value = id;
    return is_new ? 0 : 1;
}

static inline int32_t table_get_p(const vt_table *t, const uint8_t *key, size_t len, uint64_t pre) {
    vt_slot *s = map_find_p(&t->m, key, len, vt_hash(key, len), pre);
    return s->tag ? s->value : -1;
}

static inline int32_t table_get(const vt_table *t, const uint8_t *key, size_t len) {
    return table_get_p(t, key, len, key_prefix(key, len));
}

int32_t vt_get(const vt_table *t, const char *key, size_t len) {
    return table_get(t, (const uint8_t *)key, len);
}

size_t vt_size(const vt_table *t) { return t->m.count; }

int64_t vt_lookup_spans(const vt_table *t, const uint8_t *data, const uint32_t *starts,
                        const uint32_t *ends, size_t n, int32_t unk_id, int32_t *ids) {
    for (size_t i = 0; i < n; i++) {
        int32_t id = table_get(t, data + starts[i], ends[i] - starts[i]);
        if (id < 0) {
            if (unk_id < 0) return -(int64_t)(i + 1);
            id = unk_id;
        }
        ids[i] = id;
    }
    return (int64_t)n;
}

/* ---- scanning in chunks ---------------------------------------------------------------- */

#define VT_CHUNK (1u << 16)

/* Calls scantok_scan over data[0:n] in chunks that end on UTF-8 character boundaries, so that
   the piece buffers stay small; on_pieces(ctx, base, starts, ends, k) receives each batch of
   pieces with offsets relative to data + base.  Returns 0, or what on_pieces returned if
   nonzero, or -1 on out of memory. */
typedef int (*vt_piece_fn)(void *ctx, size_t base, const uint32_t *starts, const uint32_t *ends,
                           size_t k);

static int scan_chunks(const scantok_dfa *dfa, const uint8_t *data, size_t n, int flags,
                       vt_piece_fn fn, void *ctx) {
    size_t cap = VT_CHUNK;
    if (n < cap) cap = n + 1;  /* short texts: a small buffer (no mmap per call) */
    uint32_t *buf = malloc(2 * cap * sizeof(uint32_t));
    if (!buf) return -1;
    size_t pos = 0;
    int rc = 0;
    while (pos < n) {
        size_t len = n - pos;
        int f = flags;
        if (len > cap) {
            len = cap;
            /* back off to a character boundary (at most 3 continuation bytes) */
            size_t k = len;
            while (k > len - 4 && (data[pos + k] & 0xC0) == 0x80) k--;
            len = k;
            f |= SCANTOK_PARTIAL;
        }
        size_t consumed = 0;
        size_t k = scantok_scan(dfa, data + pos, len, f, buf, buf + cap, &consumed);
        if (k) {
            rc = fn(ctx, pos, buf, buf + cap, k);
            if (rc) break;
        }
        if (consumed == 0 && len < n - pos) {
            /* one piece longer than the chunk: grow and rescan this position */
            size_t ncap = cap * 4;
            uint32_t *nb = realloc(buf, 2 * ncap * sizeof(uint32_t));
            if (!nb) { rc = -1; break; }
            buf = nb;
            cap = ncap;
            continue;
        }
        if (!(f & SCANTOK_PARTIAL)) consumed = len;
        pos += consumed;
    }
    free(buf);
    return rc;
}

typedef struct {
    const vt_table *t;
    const uint8_t *data;
    int32_t unk_id;
    int32_t *ids;
    uint32_t *starts, *ends;
    int char_offsets;
    size_t count;
    size_t char_pos, byte_pos;  /* char index of byte_pos (for char offsets) */
    int64_t error;
} enc_ctx;

static inline size_t count_chars(const uint8_t *p, size_t n) {
    size_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = rd64(p + i);
        /* continuation bytes are 10xxxxxx: count bytes that are not */
        uint64_t cont = (v & ~(v << 1)) & 0x8080808080808080ull;
        c += 8 - (size_t)((cont >> 7) * 0x0101010101010101ull >> 56); /* bytes with bit 7 set */
    }
    for (; i < n; i++) c += (p[i] & 0xC0) != 0x80;
    return c;
}

static int enc_cb(void *vctx, size_t base, const uint32_t *starts, const uint32_t *ends, size_t k) {
    enc_ctx *c = vctx;
    const uint8_t *d = c->data + base;
    int32_t *ids = c->ids + c->count;
    const vt_table *t = c->t;
    for (size_t i = 0; i < k; i++) {
        int32_t id = table_get(t, d + starts[i], ends[i] - starts[i]);
        if (id < 0) {
            if (c->unk_id < 0) {
                c->error = -(int64_t)(1 + base + starts[i]);
                return 1;
            }
            id = c->unk_id;
        }
        ids[i] = id;
    }
    if (c->starts) {
        uint32_t *os = c->starts + c->count, *oe = c->ends + c->count;
        if (!c->char_offsets) {
            for (size_t i = 0; i < k; i++) {
                os[i] = (uint32_t)(base + starts[i]);
                oe[i] = (uint32_t)(base + ends[i]);
            }
        } else {
            size_t bp = c->byte_pos, cp = c->char_pos;
            for (size_t i = 0; i < k; i++) {
                size_t s = base + starts[i], e = base + ends[i];
                cp += count_chars(c->data + bp, s - bp);
                os[i] = (uint32_t)cp;
                cp += count_chars(c->data + s, e - s);
                oe[i] = (uint32_t)cp;
                bp = e;
            }
            c->byte_pos = bp;
            c->char_pos = cp;
        }
    }
    c->count += k;
    return 0;
}

int64_t vt_encode(const vt_table *t, const scantok_dfa *dfa, const uint8_t *data, size_t n,
                  int scan_flags, int32_t unk_id, int32_t *ids, uint32_t *starts,
                  uint32_t *ends, int char_offsets) {
    enc_ctx c = {t, data, unk_id, ids, starts, ends, char_offsets, 0, 0, 0, 0};
    if (!starts || !ends) c.starts = c.ends = NULL;
    int rc = scan_chunks(dfa, data, n, scan_flags, enc_cb, &c);
    if (rc < 0) return INT64_MIN;
    if (rc > 0) return c.error;
    return (int64_t)c.count;
}

/* ---- fused WhitespaceSplit ------------------------------------------------------------ */

/* Length of the White_Space character at d[i] (0 if none).  White_Space: U+0009..U+000D,
   U+0020, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. */
static inline size_t ws_at(const uint8_t *d, size_t i, size_t n) {
    uint8_t c = d[i];
    if (c < 0x80) return (c == 0x20 || (c >= 0x09 && c <= 0x0D)) ? 1 : 0;
    if (c == 0xC2) {
        if (i + 1 < n && (d[i + 1] == 0x85 || d[i + 1] == 0xA0)) return 2;
        return 0;
    }
    if (c < 0xE1 || c > 0xE3 || i + 2 >= n) return 0;
    uint8_t b = d[i + 1], e = d[i + 2];
    if (c == 0xE1) return (b == 0x9A && e == 0x80) ? 3 : 0;
    if (c == 0xE3) return (b == 0x80 && e == 0x80) ? 3 : 0;
    if (b == 0x80) return ((e >= 0x80 && e <= 0x8A) || e == 0xA8 || e == 0xA9 || e == 0xAF) ? 3 : 0;
    if (b == 0x81) return e == 0x9F ? 3 : 0;
    return 0;
}

/* nonzero for bytes that may start a White_Space character */
static const uint8_t WS_MAYBE[256] = {
    [0x09] = 1, [0x0A] = 1, [0x0B] = 1, [0x0C] = 1, [0x0D] = 1, [0x20] = 1,
    [0xC2] = 1, [0xE1] = 1, [0xE2] = 1, [0xE3] = 1,
};

static void bytes_to_chars(const uint8_t *data, uint32_t *starts, uint32_t *ends, size_t k) {
    size_t bp = 0, cp = 0;
    for (size_t i = 0; i < k; i++) {
        size_t s = starts[i], e = ends[i];
        cp += count_chars(data + bp, s - bp);
        starts[i] = (uint32_t)cp;
        cp += count_chars(data + s, e - s);
        ends[i] = (uint32_t)cp;
        bp = e;
    }
}

int64_t vt_encode_wsplit(const vt_table *t, const uint8_t *data, size_t n, int32_t unk_id,
                         int32_t *ids, uint32_t *starts, uint32_t *ends, int char_offsets) {
    const vt_map *m = &t->m;
    size_t i = 0, k = 0;
    /* Software pipelining: a word's slot is prefetched when the word is found and looked up
       only after the next word has been scanned, hiding the memory latency. */
    int have = 0;
    size_t p_start = 0, p_len = 0;
    uint32_t p_h = 0;
    uint64_t p_pre = 0;
#define VT_RESOLVE()                                                              \
    do {                                                                          \
        vt_slot *s_ = map_find_p(m, data + p_start, p_len, p_h, p_pre);           \
        int32_t id_ = s_->tag ? s_->value : -1;                                   \
        if (id_ < 0) {                                                            \
            if (unk_id < 0) return -(int64_t)(1 + p_start);                       \
            id_ = unk_id;                                                         \
        }                                                                         \
        ids[k] = id_;                                                             \
        if (starts) {                                                             \
            starts[k] = (uint32_t)p_start;                                        \
            ends[k] = (uint32_t)(p_start + p_len);                                \
        }                                                                         \
        k++;                                                                      \
    } while (0)
    for (;;) {
        /* skip whitespace */
        for (;;) {
            if (i >= n) goto done;
            if (!WS_MAYBE[data[i]]) break;
            size_t l = ws_at(data, i, n);
            if (!l) break;
            i += l;
        }
        size_t start = i++;
        for (;;) {
            if (i + 8 <= n) {
                /* 8 bytes at a time: find the first byte < 0x21 or >= 0x80 (only those can
                   start a White_Space character); the lowest flagged byte is exact */
                uint64_t v = rd64(data + i);
                uint64_t mask = ((v - 0x2121212121212121ull) & ~v & 0x8080808080808080ull) |
                                (v & 0x8080808080808080ull);
                if (!mask) { i += 8; continue; }
                i += (size_t)__builtin_ctzll(mask) >> 3;
            } else {
                while (i < n && !WS_MAYBE[data[i]]) i++;
                if (i >= n) break;
            }
            if (WS_MAYBE[data[i]] && ws_at(data, i, n)) break;
            i++;
        }
        size_t len = i - start;
        const uint8_t *key = data + start;
        uint64_t pre = start + 8 <= n ? key_prefix8(key, len) : key_prefix(key, len);
        uint32_t h = vt_hash(key, len);
        __builtin_prefetch(&m->slots[h & m->mask]);
        if (have) VT_RESOLVE();
        have = 1;
        p_start = start;
        p_len = len;
        p_h = h;
        p_pre = pre;
    }
done:
    if (have) VT_RESOLVE();
#undef VT_RESOLVE
    if (starts && char_offsets) bytes_to_chars(data, starts, ends, k);
    return (int64_t)k;
}

/* ---- batches on threads ---------------------------------------------------------------- */

typedef struct {
    const vt_table *t;
    const scantok_dfa *dfa;
    const uint8_t *data;
    const uint64_t *offsets;
    size_t lo, hi;  /* texts [lo, hi) */
    int scan_flags;
    int32_t unk_id;
    int32_t *ids;
    int64_t *counts;
    int64_t rc;
} batch_job;

static void *batch_run(void *arg) {
    batch_job *j = arg;
    j->rc = 0;
    for (size_t i = j->lo; i < j->hi; i++) {
        uint64_t a = j->offsets[i], b = j->offsets[i + 1];
        int64_t k;
        if (j->dfa)
            k = vt_encode(j->t, j->dfa, j->data + a, b - a, j->scan_flags, j->unk_id, j->ids + a,
                          NULL, NULL, 0);
        else
            k = vt_encode_wsplit(j->t, j->data + a, b - a, j->unk_id, j->ids + a, NULL, NULL, 0);
        if (k == INT64_MIN) { j->rc = INT64_MIN; return NULL; }
        if (k < 0 && j->rc == 0) j->rc = -1;
        j->counts[i] = k;
    }
    return NULL;
}

int64_t vt_encode_batch(const vt_table *t, const scantok_dfa *dfa, const uint8_t *data,
                        const uint64_t *offsets, size_t ntexts, int scan_flags, int32_t unk_id,
                        int32_t *ids, int64_t *counts, int nthreads) {
    if (nthreads < 1) nthreads = 1;
    if ((size_t)nthreads > ntexts) nthreads = ntexts ? (int)ntexts : 1;
    if (nthreads > 256) nthreads = 256;
    batch_job jobs[256];
    pthread_t tids[256];
    uint64_t total = offsets[ntexts] - offsets[0];
    size_t lo = 0;
    for (int k = 0; k < nthreads; k++) {
        size_t hi = lo;
        if (k == nthreads - 1) {
            hi = ntexts;
        } else {
            uint64_t goal = offsets[0] + total / (uint64_t)nthreads * (uint64_t)(k + 1);
            while (hi < ntexts && offsets[hi + 1] <= goal) hi++;
            if (hi == lo && hi < ntexts) hi++;
        }
        jobs[k] = (batch_job){t, dfa, data, offsets, lo, hi, scan_flags, unk_id, ids, counts, 0};
        lo = hi;
    }
    unsigned char threaded[256] = {0};
    for (int k = 1; k < nthreads; k++) {
        if (pthread_create(&tids[k], NULL, batch_run, &jobs[k]) == 0)
            threaded[k] = 1;
        else
            batch_run(&jobs[k]);  /* could not start a thread: do it here */
    }
    batch_run(&jobs[0]);
    int64_t rc = jobs[0].rc;
    for (int k = 1; k < nthreads; k++) {
        if (threaded[k]) pthread_join(tids[k], NULL);
        if (jobs[k].rc == INT64_MIN || (jobs[k].rc < 0 && rc == 0)) rc = jobs[k].rc;
    }
    return rc;
}

/* ---- counting ---------------------------------------------------------------------------- */

vt_counter *vt_counter_new(void) {
    vt_counter *c = malloc(sizeof *c);
    if (!c) return NULL;
    if (map_init(&c->m, 1 << 12, 1)) { free(c); return NULL; }
    return c;
}

void vt_counter_free(vt_counter *c) {
    if (!c) return;
    map_free(&c->m);
    free(c);
}

typedef struct {
    vt_counter *c;
    const uint8_t *data;
    int64_t pieces;
} cnt_ctx;

static int cnt_cb(void *vctx, size_t base, const uint32_t *starts, const uint32_t *ends, size_t k) {
    cnt_ctx *x = vctx;
    const uint8_t *d = x->data + base;
    for (size_t i = 0; i < k; i++) {
        int is_new;
        ptrdiff_t j = map_upsert(&x->c->m, d + starts[i], ends[i] - starts[i], &is_new);
        if (j < 0) return -1;
        x->c->m.scount[j]++;
    }
    x->pieces += (int64_t)k;
    return 0;
}

int64_t vt_count(vt_counter *c, const scantok_dfa *dfa, const uint8_t *data, size_t n,
                 int scan_flags) {
    cnt_ctx x = {c, data, 0};
    int rc = scan_chunks(dfa, data, n, scan_flags, cnt_cb, &x);
    return rc ? -1 : x.pieces;
}

size_t vt_counter_size(const vt_counter *c) { return c->m.count; }

size_t vt_counter_keybytes(const vt_counter *c) { return c->m.arena_len; }

void vt_counter_dump(const vt_counter *c, char *keybuf, uint32_t *lens, int64_t *counts) {
    size_t k = 0, off = 0;
    for (size_t i = 0; i <= c->m.mask; i++) {
        if (!c->m.slots[i].tag) continue;
        uint32_t len = c->m.slen[i];
        memcpy(keybuf + off, c->m.arena + c->m.soff[i], len);
        off += len;
        lens[k] = len;
        counts[k] = c->m.scount[i];
        k++;
    }
}

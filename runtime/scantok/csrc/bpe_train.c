/* Byte-level BPE training: piece counting on a compiled scanner, and HuggingFace tokenizers
   0.23.3 BpeTrainer's merge loop (trainer.rs do_train + word.rs Word::merge) transcribed with
   flat arrays.  The transcription keeps every observable rule of the original:

   - pair counts are i32 with wrapping arithmetic; a merged pair's own count is not decreased;
   - a queue entry carries the set of words it was created for and a merge rewrites only those
     words; a popped entry whose count is stale is pushed back with the current count (cast to
     u64 as Rust does, so a negative count becomes huge);
   - the queue orders by count, then by the smaller (left id, right id); entries equal on both
     pop first-in first-out (HF's order between them follows its random hash seeds);
   - the loop stops when the vocabulary reaches vocab_size, the queue is empty, or the best count
     is < 1 or < min_frequency;
   - max_token_length only stops new pairs from being counted (a + b < max), as HF does. */
#include "bpe_train.h"

#include <stdlib.h>
#include <string.h>

#define BT_WINDOW (1u << 20) /* bytes scanned per scanner call on long sequences */

/* ---- hashing ----------------------------------------------------------------------------- */

static inline uint64_t bt_mix(uint64_t a, uint64_t b) {
    __uint128_t m = (__uint128_t)a * b;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

/* The first min(len, 8) bytes of key, zero-padded. */
static inline uint64_t bt_prefix(const uint8_t *key, size_t len) {
    uint64_t v = 0;
    memcpy(&v, key, len < 8 ? len : 8);
    return v;
}

/* Hash of a key whose prefix (bt_prefix) is already loaded. */
static inline uint32_t bt_hash_p(const uint8_t *p, size_t len, uint64_t prefix) {
    uint64_t h = bt_mix(prefix ^ 0x243F6A8885A308D3ull ^ ((uint64_t)len << 58), 0x9E3779B97F4A7C15ull);
    for (size_t i = 8; i < len; i += 8) {
        uint64_t v = 0;
        memcpy(&v, p + i, len - i < 8 ? len - i : 8);
        h = bt_mix(h ^ v, 0xE7037ED1A0B428DBull);
    }
    return (uint32_t)h;
}

/* ---- a map from byte strings to a 64-bit value, keys kept in an arena ------------------------ */

typedef struct {
    uint64_t value;
    uint64_t prefix; /* the key's first 8 bytes, zero-padded: keys up to 8 bytes compare here */
    uint64_t off;    /* key offset in the arena */
    uint32_t len;    /* 0: empty slot (keys are never empty) */
    uint32_t hash;
} bm_slot;

typedef struct {
    bm_slot *slots;
    size_t mask, count;
    uint8_t *arena;
    size_t alen, acap;
} bmap;

static int bm_init(bmap *m, size_t cap) {
    memset(m, 0, sizeof *m);
    m->slots = calloc(cap, sizeof(bm_slot));
    if (!m->slots) return -1;
    m->mask = cap - 1;
    return 0;
}

static void bm_free(bmap *m) {
    free(m->slots);
    free(m->arena);
    memset(m, 0, sizeof *m);
}

static int bm_grow(bmap *m) {
    size_t ncap = (m->mask + 1) * 2;
    bm_slot *ns = calloc(ncap, sizeof(bm_slot));
    if (!ns) return -1;
    for (size_t i = 0; i <= m->mask; i++) {
        bm_slot s = m->slots[i];
        if (!s.len) continue;
        size_t j = s.hash & (ncap - 1);
        while (ns[j].len) j = (j + 1) & (ncap - 1);
        ns[j] = s;
    }
    free(m->slots);
    m->slots = ns;
    m->mask = ncap - 1;
    return 0;
}

/* The slot of key (with its hash and prefix), inserting it with value 0 if absent (*fresh set
   to 1).  NULL on out of memory. */
static bm_slot *bm_upsert_h(bmap *m, const uint8_t *key, uint32_t len, uint32_t h,
                            uint64_t prefix, int *fresh) {
    size_t j = h & m->mask;
    for (;;) {
        bm_slot *s = &m->slots[j];
        if (!s->len) break;
        if (s->hash == h && s->len == len && s->prefix == prefix &&
            (len <= 8 || !memcmp(m->arena + s->off + 8, key + 8, len - 8))) {
            *fresh = 0;
            return s;
        }
        j = (j + 1) & m->mask;
    }
    if ((m->count + 1) * 2 > m->mask + 1) {
        if (bm_grow(m)) return NULL;
        return bm_upsert_h(m, key, len, h, prefix, fresh);
    }
    if (m->alen + len > m->acap) {
        size_t ncap = m->acap ? m->acap * 2 : 4096;
        while (ncap < m->alen + len) ncap *= 2;
        uint8_t *na = realloc(m->arena, ncap);
        if (!na) return NULL;
        m->arena = na;
        m->acap = ncap;
    }
    memcpy(m->arena + m->alen, key, len);
    bm_slot *s = &m->slots[j];
    s->off = m->alen;
    s->len = len;
    s->hash = h;
    s->prefix = prefix;
    s->value = 0;
    m->alen += len;
    m->count++;
    *fresh = 1;
    return s;
}

static inline bm_slot *bm_upsert(bmap *m, const uint8_t *key, uint32_t len, int *fresh) {
    uint64_t prefix = bt_prefix(key, len);
    return bm_upsert_h(m, key, len, bt_hash_p(key, len, prefix), prefix, fresh);
}

/* ---- UTF-8 validation ---------------------------------------------------------------------- */

int64_t bt_utf8_invalid_at(const uint8_t *d, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t v;
            memcpy(&v, d + i, 8);
            if (!(v & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        uint8_t c = d[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c < 0xC2 || c > 0xF4) return (int64_t)i;
        size_t need = c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
        if (i + need >= n) return (int64_t)i;
        uint8_t b1 = d[i + 1], lo = 0x80, hi = 0xBF;
        if (c == 0xE0) lo = 0xA0;
        else if (c == 0xED) hi = 0x9F;
        else if (c == 0xF0) lo = 0x90;
        else if (c == 0xF4) hi = 0x8F;
        if (b1 < lo || b1 > hi) return (int64_t)i;
        for (size_t k = 2; k <= need; k++)
            if ((d[i + k] & 0xC0) != 0x80) return (int64_t)i;
        i += need + 1;
    }
    return -1;
}

/* ---- counting ------------------------------------------------------------------------------ */

#define BT_BATCH 256 /* pieces hashed, prefetched, then counted together */

struct bt_counter {
    bmap m;
    uint32_t *buf; /* scanner output: starts then ends, cap entries each */
    size_t cap;
    size_t npend;  /* pieces waiting in the batch (pointing into the caller's data) */
    const uint8_t *pend_key[BT_BATCH];
    uint32_t pend_len[BT_BATCH];
    uint32_t pend_hash[BT_BATCH];
    uint64_t pend_prefix[BT_BATCH];
};

bt_counter *bt_counter_new(void) {
    bt_counter *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (bm_init(&c->m, 1 << 12)) {
        free(c);
        return NULL;
    }
    return c;
}

void bt_counter_free(bt_counter *c) {
    if (!c) return;
    bm_free(&c->m);
    free(c->buf);
    free(c);
}

static inline int ct_add(bt_counter *c, const uint8_t *key, size_t len, uint64_t count) {
    int fresh;
    bm_slot *s = bm_upsert(&c->m, key, (uint32_t)len, &fresh);
    if (!s) return -1;
    s->value += count;
    return 0;
}

/* Counts the pending pieces: hashes them all and prefetches their slots first, so that the
   table's cache misses overlap. */
static int ct_flush(bt_counter *c) {
    size_t n = c->npend;
    for (size_t j = 0; j < n; j++) {
        const uint8_t *k = c->pend_key[j];
        uint32_t len = c->pend_len[j];
        uint64_t pre = bt_prefix(k, len);
        uint32_t h = bt_hash_p(k, len, pre);
        c->pend_prefix[j] = pre;
        c->pend_hash[j] = h;
        __builtin_prefetch(&c->m.slots[h & c->m.mask]);
    }
    c->npend = 0;
    for (size_t j = 0; j < n; j++) {
        int fresh;
        bm_slot *s = bm_upsert_h(&c->m, c->pend_key[j], c->pend_len[j], c->pend_hash[j],
                                 c->pend_prefix[j], &fresh);
        if (!s) return -1;
        s->value++;
    }
    return 0;
}

static inline int ct_push(bt_counter *c, const uint8_t *key, size_t len) {
    c->pend_key[c->npend] = key;
    c->pend_len[c->npend] = (uint32_t)len;
    if (++c->npend == BT_BATCH) return ct_flush(c);
    return 0;
}

static int ct_reserve(bt_counter *c, size_t cap) {
    if (c->cap >= cap) return 0;
    uint32_t *nb = realloc(c->buf, 2 * cap * sizeof(uint32_t));
    if (!nb) return -1;
    c->buf = nb;
    c->cap = cap;
    return 0;
}

/* Counts the pieces of one sequence (matches and the gaps between them). */
static int64_t count_sequence(bt_counter *c, const scantok_dfa *dfa, const uint8_t *data,
                              size_t n) {
    size_t want = n < BT_WINDOW ? n + 1 : BT_WINDOW;
    if (ct_reserve(c, want)) return -1;
    size_t pos = 0, prev = 0;
    int64_t pieces = 0;
    while (pos < n) {
        size_t len = n - pos, cap = c->cap;
        int flags = 0;
        if (len > cap) {
            len = cap;
            while (len > cap - 4 && (data[pos + len] & 0xC0) == 0x80) len--;
            flags = SCANTOK_PARTIAL;
        }
        size_t consumed = 0;
        uint32_t *starts = c->buf, *ends = c->buf + c->cap;
        size_t k = scantok_scan(dfa, data + pos, len, flags, starts, ends, &consumed);
        if (flags && consumed == 0) {
            /* one piece longer than the window: widen it and scan this position again */
            if (ct_reserve(c, c->cap * 4)) return -1;
            continue;
        }
        for (size_t j = 0; j < k; j++) {
            size_t s = pos + starts[j], e = pos + ends[j];
            if (s > prev) {
                if (ct_push(c, data + prev, s - prev)) return -1;
                pieces++;
            }
            if (ct_push(c, data + s, e - s)) return -1;
            pieces++;
            prev = e;
        }
        pos += flags ? consumed : len;
    }
    if (prev < n) {
        if (ct_push(c, data + prev, n - prev)) return -1;
        pieces++;
    }
    return pieces;
}

int64_t bt_count(bt_counter *c, const scantok_dfa *dfa, const uint8_t *data, size_t n,
                 int lines, int check_utf8) {
    if (check_utf8) {
        int64_t bad = bt_utf8_invalid_at(data, n);
        if (bad >= 0) return -(2 + bad);
    }
    int64_t pieces = 0;
    if (!lines) {
        pieces = count_sequence(c, dfa, data, n);
        if (pieces < 0) c->npend = 0;
        return pieces < 0 || ct_flush(c) ? -1 : pieces;
    }
    size_t pos = 0;
    while (pos < n) {
        const uint8_t *nl = memchr(data + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - data) + 1 : n;
        int64_t k = count_sequence(c, dfa, data + pos, end - pos);
        if (k < 0) {
            c->npend = 0; /* the batch points into data: never count it later */
            return k;
        }
        pieces += k;
        pos = end;
    }
    return ct_flush(c) ? -1 : pieces;
}

int64_t bt_count_seqs(bt_counter *c, const scantok_dfa *dfa, const uint8_t *data,
                      const uint64_t *ends, size_t nseq, int check_utf8) {
    if (check_utf8 && nseq) {
        int64_t bad = bt_utf8_invalid_at(data, (size_t)ends[nseq - 1]);
        if (bad >= 0) return -(2 + bad);
    }
    int64_t pieces = 0;
    uint64_t start = 0;
    for (size_t i = 0; i < nseq; i++) {
        int64_t k = count_sequence(c, dfa, data + start, (size_t)(ends[i] - start));
        if (k < 0) {
            c->npend = 0; /* the batch points into data: never count it later */
            return k;
        }
        pieces += k;
        start = ends[i];
    }
    return ct_flush(c) ? -1 : pieces;
}

int bt_counter_merge(bt_counter *dst, const bt_counter *src) {
    for (size_t i = 0; i <= src->m.mask; i++) {
        const bm_slot *s = &src->m.slots[i];
        if (s->len && ct_add(dst, src->m.arena + s->off, s->len, s->value)) return -1;
    }
    return 0;
}

int bt_counter_add(bt_counter *c, const uint8_t *keys, const uint32_t *lens,
                   const uint64_t *counts, size_t n) {
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        if (lens[i] && ct_add(c, keys + off, lens[i], counts[i])) return -1;
        off += lens[i];
    }
    return 0;
}

size_t bt_counter_size(const bt_counter *c) { return c->m.count; }
size_t bt_counter_keybytes(const bt_counter *c) { return c->m.alen; }

void bt_counter_dump(const bt_counter *c, uint8_t *keys, uint32_t *lens, uint64_t *counts) {
    size_t k = 0, off = 0;
    for (size_t i = 0; i <= c->m.mask; i++) {
        const bm_slot *s = &c->m.slots[i];
        if (!s->len) continue;
        memcpy(keys + off, c->m.arena + s->off, s->len);
        off += s->len;
        lens[k] = s->len;
        counts[k] = s->value;
        k++;
    }
}

/* ---- the merge loop ------------------------------------------------------------------------ */

/* pair -> count, plus the pair's word list of the current step (where_to_update) */
typedef struct {
    uint64_t key; /* (left << 32 | right) + 1; 0: empty */
    int32_t count;
    uint32_t widx; /* this step's list of the pair, if lists[widx] is the pair's */
} pc_slot;

typedef struct {
    uint64_t key;
    uint32_t *words;
    uint32_t n, cap;
} step_list;

/* A queue entry: its key (count, pair, push order) in the heap node, its word set (HF's
   Merge::pos) in a pool slot, so that sifting moves 24 bytes. */
typedef struct {
    uint64_t count;
    uint64_t pair; /* left << 32 | right: compares as the (left, right) tuple */
    uint32_t seq;
    uint32_t set;  /* slot in the word-set pool */
} hp_node;

typedef struct {
    uint32_t *pos;
    uint32_t npos;
} word_set;

typedef struct {
    uint64_t off;  /* first symbol in sym */
    uint32_t len;  /* symbols now */
    uint32_t cnt;  /* count as HF uses it: truncated to 32 bits (counts[i] as i32) */
} word;

struct bt_trainer {
    /* vocabulary */
    bmap tokmap;        /* token bytes -> id (arena holds every token's bytes) */
    uint64_t *tok_off;  /* id -> offset in tokmap.arena */
    uint32_t *tok_len;  /* id -> byte length (UINT32_MAX: a special with no bytes) */
    size_t ntok, tokcap;
    /* words */
    uint32_t *sym;      /* symbols of every word, concatenated */
    word *words;
    size_t nwords;
    /* pair counts */
    pc_slot *pc;
    size_t pcmask, pccount;
    /* this step's lists */
    step_list *lists;
    size_t nlists, listcap;
    /* queue */
    hp_node *heap;
    size_t nheap, heapcap;
    uint32_t seq;
    word_set *sets;     /* pool of word sets; free slots are chained through npos */
    size_t nsets, setcap;
    uint32_t freeset;   /* first free slot, UINT32_MAX if none */
    /* result */
    uint32_t *merges;
    size_t nmerges, mergecap;
    uint8_t *scratch;
    size_t scratchcap;
    uint64_t vocab_size, min_frequency, max_len;
    int done;
};

static inline size_t pc_index(uint64_t key, size_t mask) {
    return (size_t)(bt_mix(key, 0x9E3779B97F4A7C15ull)) & mask;
}

static int pc_grow(bt_trainer *t) {
    size_t ncap = (t->pcmask + 1) * 2;
    pc_slot *ns = calloc(ncap, sizeof(pc_slot));
    if (!ns) return -1;
    for (size_t i = 0; i <= t->pcmask; i++) {
        if (!t->pc[i].key) continue;
        size_t j = pc_index(t->pc[i].key, ncap - 1);
        while (ns[j].key) j = (j + 1) & (ncap - 1);
        ns[j] = t->pc[i];
    }
    free(t->pc);
    t->pc = ns;
    t->pcmask = ncap - 1;
    return 0;
}

static pc_slot *pc_upsert(bt_trainer *t, uint32_t a, uint32_t b) {
    uint64_t key = (((uint64_t)a << 32) | b) + 1;
    size_t j = pc_index(key, t->pcmask);
    for (;;) {
        pc_slot *s = &t->pc[j];
        if (s->key == key) return s;
        if (!s->key) break;
        j = (j + 1) & t->pcmask;
    }
    if ((t->pccount + 1) * 4 > (t->pcmask + 1) * 3) {
        if (pc_grow(t)) return NULL;
        return pc_upsert(t, a, b);
    }
    pc_slot *s = &t->pc[j];
    s->key = key;
    s->count = 0;
    s->widx = UINT32_MAX;
    t->pccount++;
    return s;
}

static pc_slot *pc_find(const bt_trainer *t, uint32_t a, uint32_t b) {
    uint64_t key = (((uint64_t)a << 32) | b) + 1;
    size_t j = pc_index(key, t->pcmask);
    for (;;) {
        pc_slot *s = &t->pc[j];
        if (s->key == key) return s;
        if (!s->key) return NULL;
        j = (j + 1) & t->pcmask;
    }
}

static inline void pc_prefetch(const bt_trainer *t, uint32_t a, uint32_t b) {
    uint64_t key = (((uint64_t)a << 32) | b) + 1;
    __builtin_prefetch(&t->pc[pc_index(key, t->pcmask)]);
}

/* pair_counts[(a, b)] += delta (i32, wrapping); if add_word, word w joins the pair's list. */
static int pc_change(bt_trainer *t, uint32_t a, uint32_t b, uint32_t delta, int add_word,
                     uint32_t w) {
    pc_slot *s = pc_upsert(t, a, b);
    if (!s) return -1;
    s->count = (int32_t)((uint32_t)s->count + delta);
    if (!add_word) return 0;
    if (s->widx >= t->nlists || t->lists[s->widx].key != s->key) {
        if (t->nlists == t->listcap) {
            size_t ncap = t->listcap ? t->listcap * 2 : 1024;
            step_list *nl = realloc(t->lists, ncap * sizeof(step_list));
            if (!nl) return -1;
            t->lists = nl;
            t->listcap = ncap;
        }
        s->widx = (uint32_t)t->nlists;
        step_list *l = &t->lists[t->nlists++];
        l->key = s->key;
        l->words = NULL;
        l->n = l->cap = 0;
    }
    step_list *l = &t->lists[s->widx];
    if (l->n && l->words[l->n - 1] == w) return 0;
    if (l->n == l->cap) {
        uint32_t ncap = l->cap ? l->cap * 2 : 4;
        uint32_t *nw = realloc(l->words, (size_t)ncap * sizeof(uint32_t));
        if (!nw) return -1;
        l->words = nw;
        l->cap = ncap;
    }
    l->words[l->n++] = w;
    return 0;
}

/* ---- queue: a 4-ary heap, best entry first ---- */

static inline int hp_better(const hp_node *x, const hp_node *y) {
    if (x->count != y->count) return x->count > y->count;
    if (x->pair != y->pair) return x->pair < y->pair;
    return x->seq < y->seq;
}

/* Stores a word set in the pool; returns its slot or UINT32_MAX on out of memory. */
static uint32_t set_put(bt_trainer *t, uint32_t *pos, uint32_t npos) {
    uint32_t k = t->freeset;
    if (k != UINT32_MAX) {
        t->freeset = t->sets[k].npos;
    } else {
        if (t->nsets == t->setcap) {
            size_t ncap = t->setcap ? t->setcap * 2 : 1024;
            word_set *ns = realloc(t->sets, ncap * sizeof(word_set));
            if (!ns) return UINT32_MAX;
            t->sets = ns;
            t->setcap = ncap;
        }
        k = (uint32_t)t->nsets++;
    }
    t->sets[k].pos = pos;
    t->sets[k].npos = npos;
    return k;
}

static void set_drop(bt_trainer *t, uint32_t k) {
    free(t->sets[k].pos);
    t->sets[k].pos = NULL;
    t->sets[k].npos = t->freeset;
    t->freeset = k;
}

static int hp_push(bt_trainer *t, hp_node e) {
    if (t->nheap == t->heapcap) {
        size_t ncap = t->heapcap ? t->heapcap * 2 : 1024;
        hp_node *nh = realloc(t->heap, ncap * sizeof(hp_node));
        if (!nh) return -1;
        t->heap = nh;
        t->heapcap = ncap;
    }
    e.seq = t->seq++;
    size_t i = t->nheap++;
    while (i) {
        size_t p = (i - 1) / 4;
        if (!hp_better(&e, &t->heap[p])) break;
        t->heap[i] = t->heap[p];
        i = p;
    }
    t->heap[i] = e;
    return 0;
}

static hp_node hp_pop(bt_trainer *t) {
    hp_node top = t->heap[0];
    hp_node last = t->heap[--t->nheap];
    size_t n = t->nheap, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n) break;
        size_t best = c, end = c + 4 < n ? c + 4 : n;
        for (size_t j = c + 1; j < end; j++)
            if (hp_better(&t->heap[j], &t->heap[best])) best = j;
        if (!hp_better(&t->heap[best], &last)) break;
        t->heap[i] = t->heap[best];
        i = best;
    }
    if (n) t->heap[i] = last;
    return top;
}

/* Pushes this step's lists whose pair count is positive (HF's where_to_update drain). */
static int flush_lists(bt_trainer *t) {
    int rc = 0;
    for (size_t i = 0; i < t->nlists; i++) {
        step_list *l = &t->lists[i];
        uint32_t a = (uint32_t)((l->key - 1) >> 32), b = (uint32_t)(l->key - 1);
        pc_slot *s = pc_find(t, a, b);
        if (!rc && s && s->count > 0) {
            uint32_t k = set_put(t, l->words, l->n);
            hp_node e = {(uint64_t)s->count, ((uint64_t)a << 32) | b, 0, k};
            if (k == UINT32_MAX || hp_push(t, e)) {
                if (k != UINT32_MAX) t->sets[k].pos = NULL;
                rc = -1;
            } else {
                continue;
            }
        }
        free(l->words);
    }
    t->nlists = 0;
    return rc;
}

static int tok_add(bt_trainer *t, uint64_t off, uint32_t len) {
    if (t->ntok == t->tokcap) {
        size_t ncap = t->tokcap ? t->tokcap * 2 : 1024;
        uint64_t *no = realloc(t->tok_off, ncap * sizeof(uint64_t));
        if (!no) return -1;
        t->tok_off = no;
        uint32_t *nl = realloc(t->tok_len, ncap * sizeof(uint32_t));
        if (!nl) return -1;
        t->tok_len = nl;
        t->tokcap = ncap;
    }
    t->tok_off[t->ntok] = off;
    t->tok_len[t->ntok] = len;
    t->ntok++;
    return 0;
}

void bt_trainer_free(bt_trainer *t) {
    if (!t) return;
    bm_free(&t->tokmap);
    free(t->tok_off);
    free(t->tok_len);
    free(t->sym);
    free(t->words);
    free(t->pc);
    for (size_t i = 0; i < t->nlists; i++) free(t->lists[i].words);
    free(t->lists);
    for (size_t i = 0; i < t->nheap; i++) free(t->sets[t->heap[i].set].pos);
    free(t->sets);
    free(t->heap);
    free(t->merges);
    free(t->scratch);
    free(t);
}

bt_trainer *bt_trainer_new(const bt_counter *c, uint32_t nspecial, const uint8_t *special_keys,
                           const uint32_t *special_lens, const uint8_t *alphabet_order,
                           uint64_t vocab_size, uint64_t min_frequency,
                           uint64_t max_token_length) {
    bt_trainer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->vocab_size = vocab_size;
    t->min_frequency = min_frequency;
    t->max_len = max_token_length;
    t->freeset = UINT32_MAX;
    if (bm_init(&t->tokmap, 1 << 10)) goto oom;
    /* 1. special tokens, 2. the alphabet in code point order of its characters */
    size_t koff = 0;
    for (uint32_t i = 0; i < nspecial; i++) {
        uint32_t len = special_lens[i];
        if (len == UINT32_MAX || len == 0) {
            if (tok_add(t, 0, UINT32_MAX)) goto oom;
            continue;
        }
        int fresh;
        bm_slot *s = bm_upsert(&t->tokmap, special_keys + koff, len, &fresh);
        if (!s) goto oom;
        koff += len;
        if (!fresh) { /* a repeated special token keeps its first id (HF's add_special_tokens) */
            continue;
        }
        s->value = t->ntok;
        if (tok_add(t, s->off, len)) goto oom;
    }
    uint32_t byte_id[256];
    for (int i = 0; i < 256; i++) {
        uint8_t b = alphabet_order[i];
        int fresh;
        bm_slot *s = bm_upsert(&t->tokmap, &b, 1, &fresh);
        if (!s) goto oom;
        if (fresh) {
            s->value = t->ntok;
            if (tok_add(t, s->off, 1)) goto oom;
        }
        byte_id[b] = (uint32_t)s->value;
    }
    /* 3. words: the pieces of two bytes or more (a single symbol has no pair) */
    size_t nw = 0, nsym = 0;
    for (size_t i = 0; i <= c->m.mask; i++)
        if (c->m.slots[i].len >= 2) {
            nw++;
            nsym += c->m.slots[i].len;
        }
    t->sym = malloc((nsym ? nsym : 1) * sizeof(uint32_t));
    t->words = malloc((nw ? nw : 1) * sizeof(word));
    if (!t->sym || !t->words) goto oom;
    size_t pcap = 1 << 12; /* distinct pairs are far fewer than symbols: grow as needed */
    while (pcap < nsym / 6) pcap *= 2;
    t->pc = calloc(pcap, sizeof(pc_slot));
    if (!t->pc) goto oom;
    t->pcmask = pcap - 1;
    /* 4. count pairs; every pair's words form its first queue entry */
    size_t off = 0, w = 0;
    for (size_t i = 0; i <= c->m.mask; i++) {
        const bm_slot *s = &c->m.slots[i];
        if (s->len < 2) continue;
        const uint8_t *key = c->m.arena + s->off;
        uint32_t *sy = t->sym + off;
        for (uint32_t k = 0; k < s->len; k++) sy[k] = byte_id[key[k]];
        t->words[w].off = off;
        t->words[w].len = s->len;
        t->words[w].cnt = (uint32_t)s->value;
        uint32_t cnt = (uint32_t)s->value;
        for (uint32_t k = 0; k + 1 < s->len; k++)
            if (pc_change(t, sy[k], sy[k + 1], cnt, 1, (uint32_t)w)) goto oom;
        off += s->len;
        w++;
    }
    t->nwords = nw;
    if (flush_lists(t)) goto oom;
    return t;
oom:
    bt_trainer_free(t);
    return NULL;
}

/* word.rs Word::merge on word w, applying each change as it is found. */
static int merge_word(bt_trainer *t, uint32_t w, uint32_t c1, uint32_t c2, uint32_t rep) {
    word *wd = &t->words[w];
    uint32_t *s = t->sym + wd->off;
    uint32_t n = wd->len;
    uint32_t cnt = wd->cnt, neg = (uint32_t)0 - cnt;
    const uint32_t *L = t->tok_len;
    uint64_t newlen = (uint64_t)L[c1] + L[c2], maxlen = t->max_len;
    uint32_t r = 0, o = 0;
    while (r < n) {
        if (s[r] == c1 && r + 1 < n && s[r + 1] == c2) {
            /* the (up to) four pair slots this occurrence changes: fetch them together */
            if (o > 0) {
                pc_prefetch(t, s[o - 1], c1);
                pc_prefetch(t, s[o - 1], rep);
            }
            if (r + 2 < n) {
                pc_prefetch(t, c2, s[r + 2]);
                pc_prefetch(t, rep, s[r + 2]);
            }
            if (o > 0) {
                uint32_t prev = s[o - 1];
                if (pc_change(t, prev, c1, neg, 0, w)) return -1;
                if ((uint64_t)L[prev] + newlen < maxlen && pc_change(t, prev, rep, cnt, 1, w))
                    return -1;
            }
            s[o++] = rep;
            r += 2;
            if (r < n) {
                uint32_t next = s[r];
                if (pc_change(t, c2, next, neg, 0, w)) return -1;
                if ((uint64_t)L[next] + newlen < maxlen && pc_change(t, rep, next, cnt, 1, w))
                    return -1;
            }
        } else {
            s[o++] = s[r++];
        }
    }
    wd = &t->words[w]; /* unchanged array, but keep the store obviously after the calls */
    wd->len = o;
    return 0;
}

/* The id of the token a + b, added to the vocabulary if new (an existing token keeps its id).
   UINT32_MAX on out of memory. */
static uint32_t token_of_pair(bt_trainer *t, uint32_t a, uint32_t b) {
    uint32_t la = t->tok_len[a], lb = t->tok_len[b];
    size_t need = (size_t)la + lb;
    if (need > t->scratchcap) {
        uint8_t *ns = realloc(t->scratch, need * 2);
        if (!ns) return UINT32_MAX;
        t->scratch = ns;
        t->scratchcap = need * 2;
    }
    memcpy(t->scratch, t->tokmap.arena + t->tok_off[a], la);
    memcpy(t->scratch + la, t->tokmap.arena + t->tok_off[b], lb);
    int fresh;
    bm_slot *ts = bm_upsert(&t->tokmap, t->scratch, (uint32_t)need, &fresh);
    if (!ts) return UINT32_MAX;
    if (fresh) {
        ts->value = t->ntok;
        if (tok_add(t, ts->off, (uint32_t)need)) return UINT32_MAX;
    }
    return (uint32_t)ts->value;
}

static int record_merge(bt_trainer *t, uint32_t a, uint32_t b, uint32_t rep) {
    if (t->nmerges == t->mergecap) {
        size_t ncap = t->mergecap ? t->mergecap * 2 : 1024;
        uint32_t *nm = realloc(t->merges, ncap * 3 * sizeof(uint32_t));
        if (!nm) return -1;
        t->merges = nm;
        t->mergecap = ncap;
    }
    t->merges[3 * t->nmerges] = a;
    t->merges[3 * t->nmerges + 1] = b;
    t->merges[3 * t->nmerges + 2] = rep;
    t->nmerges++;
    return 0;
}

/* Merges the pair in every word of the set (HF: top.pos), prefetching words ahead: the words
   are scattered, so this loop waits on memory more than it computes. */
static int merge_words(bt_trainer *t, const word_set *ws, uint32_t a, uint32_t b, uint32_t rep) {
    const uint32_t *pos = ws->pos;
    uint32_t n = ws->npos;
    for (uint32_t i = 0; i < n; i++) {
        if (i + 8 < n) __builtin_prefetch(&t->words[pos[i + 8]]);
        if (i + 4 < n) __builtin_prefetch(t->sym + t->words[pos[i + 4]].off);
        if (merge_word(t, pos[i], a, b, rep)) return -1;
    }
    return 0;
}

int bt_trainer_run(bt_trainer *t, uint64_t max_merges) {
    while (!t->done) {
        if (!max_merges) return 1;
        if (t->ntok >= t->vocab_size || !t->nheap) {
            t->done = 1;
            break;
        }
        hp_node top = hp_pop(t);
        uint32_t a = (uint32_t)(top.pair >> 32), b = (uint32_t)top.pair;
        uint64_t cur = (uint64_t)(int64_t)pc_find(t, a, b)->count;
        if (top.count != cur) {
            top.count = cur;
            if (hp_push(t, top)) {
                set_drop(t, top.set);
                return -1;
            }
            continue;
        }
        if (top.count < 1 || t->min_frequency > top.count) {
            set_drop(t, top.set);
            t->done = 1;
            break;
        }
        uint32_t rep = token_of_pair(t, a, b);
        if (rep == UINT32_MAX || record_merge(t, a, b, rep)) {
            set_drop(t, top.set);
            return -1;
        }
        int rc = merge_words(t, &t->sets[top.set], a, b, rep);
        set_drop(t, top.set);
        if (rc || flush_lists(t)) return -1;
        max_merges--;
    }
    return 0;
}

size_t bt_trainer_n_merges(const bt_trainer *t) { return t->nmerges; }

void bt_trainer_merges(const bt_trainer *t, uint32_t *out) {
    if (t->nmerges) memcpy(out, t->merges, t->nmerges * 3 * sizeof(uint32_t));
}

size_t bt_trainer_saved_merges(const bt_trainer *t, uint32_t *out) {
    size_t n = t->nmerges, cap = 16;
    while (cap < 2 * n) cap *= 2;
    uint64_t *seen = calloc(cap, sizeof(uint64_t)); /* pair + 1; 0: empty */
    if (!seen) return SIZE_MAX;
    size_t k = n; /* filled from the back: the last merge of each pair is kept */
    for (size_t r = n; r-- > 0;) {
        uint64_t key = (((uint64_t)t->merges[3 * r] << 32) | t->merges[3 * r + 1]) + 1;
        size_t j = pc_index(key, cap - 1);
        while (seen[j] && seen[j] != key) j = (j + 1) & (cap - 1);
        if (seen[j]) continue;
        seen[j] = key;
        k--;
        out[2 * k] = t->merges[3 * r];
        out[2 * k + 1] = t->merges[3 * r + 1];
    }
    free(seen);
    memmove(out, out + 2 * k, (n - k) * 2 * sizeof(uint32_t));
    return n - k;
}

size_t bt_trainer_n_tokens(const bt_trainer *t) { return t->ntok; }

size_t bt_trainer_token_bytes(const bt_trainer *t) {
    size_t total = 0;
    for (size_t i = 0; i < t->ntok; i++)
        if (t->tok_len[i] != UINT32_MAX) total += t->tok_len[i];
    return total;
}

void bt_trainer_tokens(const bt_trainer *t, uint8_t *blob, uint32_t *lens) {
    size_t off = 0;
    for (size_t i = 0; i < t->ntok; i++) {
        lens[i] = t->tok_len[i];
        if (t->tok_len[i] == UINT32_MAX) continue;
        memcpy(blob + off, t->tokmap.arena + t->tok_off[i], t->tok_len[i]);
        off += t->tok_len[i];
    }
}

/* Scanners compiled at run time (scantok.compile): the checks that make a table set safe for
 * the engine, and the struct that points the engine at it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scantok_dfa.h"
#include "dfa_runtime.h"

/* Must agree with gen's layout (runtime/scantok/compiler/layout.py) and engine.c. */
#define T_MATCH 1u
#define T_SPECIAL 2u
#define T_ACCEL 4u
#define P_START1 4u
#define P_MATCH1 8u
#define P_REWIND 16u
#define P_EMIT1 32u
#define P_REWIND_PREV 64u
#define P_SLOW 128u
#define STAGE1_LEN (0x110000u >> 8)

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

enum { K_NONE, K_STEP, K_EMIT, K_DIE };

typedef struct {
    const scantok_dfa_tables *t;
    uint32_t stride;
} view;

/* One single step as the pair block sees it (layout.py, single()): its kind, the next row
 * offset and whether a match ends before the character. */
static int single(const view *v, uint32_t row, uint32_t cls, uint32_t *next, int *match)
{
    const scantok_dfa_tables *t = v->t;
    uint32_t at = row + t->pair + cls;
    uint8_t f = t->flags[at];
    *next = 0;
    *match = 0;
    if (!(f & T_SPECIAL)) {
        *next = t->next[at];
        *match = (f & T_MATCH) != 0;
        return K_STEP;
    }
    if (!(f & T_MATCH)) return K_DIE;
    if (t->flags[t->start + t->pair + cls] & T_SPECIAL) return K_NONE;
    *next = t->next[t->start + t->pair + cls];
    return K_EMIT;
}

/* The pair entry the generator derives from the single steps (layout.py, pair_entry()). */
static void pair_entry(const view *v, uint32_t row, uint32_t c0, uint32_t c1,
                       uint32_t *next, uint8_t *flags)
{
    const uint32_t start = v->t->start;
    uint32_t s1, s2, t1, t2;
    int m0, m1, n1, k0, k1, j0, j1;
    *next = 0;
    *flags = P_SLOW;
    if (row == 0) return;
    k0 = single(v, row, c0, &s1, &m0);
    if (k0 == K_NONE) return;
    if (k0 == K_DIE) { *next = start; *flags = P_REWIND | P_REWIND_PREV; return; }
    k1 = single(v, s1, c1, &s2, &m1);
    if (k1 == K_NONE || (k1 == K_DIE && k0 == K_EMIT)) return;
    if (k1 == K_DIE && !m0) { *next = start; *flags = P_REWIND | P_REWIND_PREV; return; }
    if (k1 == K_DIE) {
        j0 = single(v, start, c0, &t1, &n1);
        if (j0 == K_STEP) j1 = single(v, t1, c1, &t2, &n1);
        else { j1 = K_NONE; t2 = 0; n1 = 0; }
        if (j1 != K_STEP && j1 != K_EMIT) { *next = start; *flags = P_REWIND; return; }
        uint8_t f = (j1 == K_STEP && n1) ? P_MATCH1 : 0;
        f |= j1 == K_EMIT ? (2 | P_START1) : 1;
        *next = t2;
        *flags = f;
        return;
    }
    uint8_t f = (k1 == K_STEP && m1) ? P_MATCH1 : 0;
    if (k0 == K_EMIT && k1 == K_EMIT) f |= 2 | P_START1;
    else if (k0 == K_EMIT) f |= 1;
    else if (k1 == K_EMIT) f |= 1 | P_EMIT1 | P_START1;
    *next = s2;
    *flags = f;
}

static int check(const scantok_dfa_tables *t, char *err, size_t errlen)
{
    if (!t->ascii || !t->ascii_x || !t->stage1 || !t->stage2 || !t->next || !t->flags)
        return fail(err, errlen, "missing table");
    if (t->nclasses < 1 || t->nclasses > 256)
        return fail(err, errlen, "nclasses %u out of range 1..256", t->nclasses);
    if (t->pair != 0 && t->pair != t->nclasses * t->nclasses)
        return fail(err, errlen, "pair block size %u is neither 0 nor nclasses^2", t->pair);
    const uint64_t stride = (uint64_t)t->pair + t->nclasses + 1;
    if (t->nstates < 2 || (uint64_t)t->nstates * stride >= ((uint64_t)1 << 32))
        return fail(err, errlen, "%u states do not fit 32-bit row offsets", t->nstates);
    if (t->trans_len != t->nstates * stride)
        return fail(err, errlen, "transition table has %zu entries, expected %llu", t->trans_len,
                    (unsigned long long)(t->nstates * stride));
    if (t->start == 0 || t->start % stride || t->start >= t->trans_len)
        return fail(err, errlen, "start offset %u is not a live row", t->start);
    for (uint32_t b = 0; b < 128; b++) {
        if (t->ascii[b] >= t->nclasses)
            return fail(err, errlen, "ASCII byte %u has class %u >= %u", b, t->ascii[b], t->nclasses);
        if (t->ascii_x[b] != (t->pair ? t->ascii[b] * t->nclasses : 0))
            return fail(err, errlen, "pair index of ASCII byte %u is inconsistent", b);
    }
    if (t->stage1_len != STAGE1_LEN)
        return fail(err, errlen, "stage 1 has %zu entries, expected %u", t->stage1_len, STAGE1_LEN);
    if (t->stage2_len == 0 || t->stage2_len % 256)
        return fail(err, errlen, "stage 2 length %zu is not a positive multiple of 256", t->stage2_len);
    for (size_t i = 0; i < t->stage1_len; i++)
        if ((size_t)t->stage1[i] >= t->stage2_len / 256)
            return fail(err, errlen, "stage 1 entry %zu points past stage 2", i);
    for (size_t i = 0; i < t->stage2_len; i++)
        if (t->stage2[i] >= t->nclasses)
            return fail(err, errlen, "stage 2 entry %zu has class %u >= %u", i, t->stage2[i], t->nclasses);
    for (uint32_t a = 0; a < t->naccel; a++) {
        uint64_t bits[2] = {0, 0};
        if (t->accel_match[a] > 1) return fail(err, errlen, "accelerator %u: bad match flag", a);
        for (int r = 0; r < 3; r++) {
            uint32_t lo = t->accel_lo[3 * a + r], hi = lo + t->accel_len[3 * a + r];
            if (hi > 127) return fail(err, errlen, "accelerator %u: range beyond ASCII", a);
            for (uint32_t b = lo; b <= hi; b++) bits[b >> 6] |= (uint64_t)1 << (b & 63);
        }
        if (bits[0] != t->accel_bits[2 * a] || bits[1] != t->accel_bits[2 * a + 1])
            return fail(err, errlen, "accelerator %u: bitmap differs from its ranges", a);
    }
    const uint32_t P = t->pair, nc = t->nclasses;
    for (uint32_t s = 0; s < t->nstates; s++) {
        const uint32_t row = (uint32_t)(s * stride);
        const uint8_t info = t->flags[row + P + nc];
        if (t->next[row + P + nc] != 0 || (info >> 1) > t->naccel)
            return fail(err, errlen, "state %u: bad info entry", s);
        if (row == t->start && (info & 1))
            return fail(err, errlen, "the start state matches the empty string at end of text");
        for (uint32_t c = 0; c < nc; c++) {
            const uint32_t nx = t->next[row + P + c];
            const uint8_t f = t->flags[row + P + c];
            if (nx % stride || nx >= t->trans_len || (f & ~(T_MATCH | T_SPECIAL | T_ACCEL)))
                return fail(err, errlen, "state %u class %u: bad transition", s, c);
            if (row == t->start && (f & T_MATCH))
                return fail(err, errlen, "the start state matches the empty string");
            if ((f & T_ACCEL) && (nx == 0 || (t->flags[nx + P + nc] >> 1) == 0))
                return fail(err, errlen, "state %u class %u: prefilter flag on a state without one", s, c);
        }
        if (info >> 1) {  /* the prefilter may only skip bytes that loop on this state */
            const uint32_t a = (info >> 1) - 1;
            for (uint32_t b = 0; b < 128; b++) {
                if (!((t->accel_bits[2 * a + (b >> 6)] >> (b & 63)) & 1)) continue;
                const uint32_t at = row + P + t->ascii[b];
                if (t->next[at] != row || (t->flags[at] & T_SPECIAL)
                    || (uint32_t)(t->flags[at] & T_MATCH) != t->accel_match[a])
                    return fail(err, errlen, "state %u: prefilter skips byte %u, which is not a self-loop", s, b);
            }
        }
    }
    if (P) {
        view v = { t, (uint32_t)stride };
        for (uint32_t s = 0; s < t->nstates; s++) {
            const uint32_t row = (uint32_t)(s * stride);
            for (uint32_t c0 = 0; c0 < nc; c0++) {
                for (uint32_t c1 = 0; c1 < nc; c1++) {
                    uint32_t nx;
                    uint8_t f;
                    pair_entry(&v, row, c0, c1, &nx, &f); /* every class pair (engine.c.j2) */
                    if (t->next[row + c0 * nc + c1] != nx || t->flags[row + c0 * nc + c1] != f)
                        return fail(err, errlen, "state %u: pair entry (%u, %u) differs from the single steps",
                                    s, c0, c1);
                }
            }
        }
    }
    return 0;
}

scantok_dfa *scantok_dfa_new(const scantok_dfa_tables *t, const char *name, const char *pattern,
                             char *err, size_t errlen)
{
    if (!t || !name || !pattern) { fail(err, errlen, "missing argument"); return NULL; }
    if (t->naccel && (!t->accel_lo || !t->accel_len || !t->accel_match || !t->accel_bits)) {
        fail(err, errlen, "missing accelerator table");
        return NULL;
    }
    if (check(t, err, errlen)) return NULL;
    scantok_dfa *d = malloc(sizeof *d);
    scantok_accel *acc = calloc(t->naccel ? t->naccel : 1, sizeof *acc);
    scantok_dfa_lazy *lazy = calloc(1, sizeof *lazy);
    if (!d || !acc || !lazy) {
        free(d);
        free(acc);
        free(lazy);
        fail(err, errlen, "out of memory");
        return NULL;
    }
    for (uint32_t a = 0; a < t->naccel; a++) {
        memcpy(acc[a].lo, t->accel_lo + 3 * a, 3);
        memcpy(acc[a].len, t->accel_len + 3 * a, 3);
        acc[a].match = t->accel_match[a];
        acc[a].bits[0] = t->accel_bits[2 * a];
        acc[a].bits[1] = t->accel_bits[2 * a + 1];
    }
    d->name = name;
    d->pattern = pattern;
    d->nclasses = t->nclasses;
    d->start = t->start;
    d->pair = t->pair;
    d->ascii = t->ascii;
    d->ascii_x = t->ascii_x;
    d->stage1 = t->stage1;
    d->stage2 = t->stage2;
    d->next = t->next;
    d->flags = t->flags;
    d->accel = acc;
    d->lazy = lazy;
    return d;
}

void scantok_dfa_free(scantok_dfa *dfa)
{
    if (!dfa) return;
    free((void *)dfa->accel);
    free(dfa->lazy->pair_x);
    free(dfa->lazy);
    free(dfa);
}

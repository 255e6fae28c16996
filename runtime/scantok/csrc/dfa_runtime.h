/* Scanners compiled at run time: a struct scantok_dfa over tables in caller-owned memory,
 * checked before the engine may use it. */
#ifndef SCANTOK_DFA_RUNTIME_H
#define SCANTOK_DFA_RUNTIME_H
#include <stddef.h>
#include <stdint.h>
#include "scantok_scan.h"

/* cdef:begin */
/* The arrays of one compiled pattern, laid out as gen/emit.py renders them into C (see
   scantok_dfa.h). Accelerator i is accel_lo[3i..3i+2], accel_len[3i..3i+2], accel_match[i],
   accel_bits[2i..2i+1]. */
typedef struct {
    uint32_t nclasses, start, pair, nstates, naccel;
    const uint8_t *ascii;
    const uint16_t *ascii_x;
    const uint16_t *stage1;
    size_t stage1_len;
    const uint8_t *stage2;
    size_t stage2_len;
    const uint32_t *next;
    const uint8_t *flags;
    size_t trans_len;
    const uint8_t *accel_lo, *accel_len, *accel_match;
    const uint64_t *accel_bits;
} scantok_dfa_tables;

/* A scanner over `t`'s arrays (not copied: they, `name` and `pattern` must outlive it), or
   NULL with a message in err[0:errlen] if the tables are inconsistent: every index the engine
   will follow is checked to be in bounds, and every invariant it relies on to make progress
   and to write at most one piece per byte (no empty match, pair block = the one the single
   steps imply, prefilters only skip self-loops) is checked, so corrupt tables are an error,
   never an out-of-bounds access or a hang. */
scantok_dfa *scantok_dfa_new(const scantok_dfa_tables *t, const char *name, const char *pattern,
                             char *err, size_t errlen);
void scantok_dfa_free(scantok_dfa *dfa);
/* cdef:end */
#endif

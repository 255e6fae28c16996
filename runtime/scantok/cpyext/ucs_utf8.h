/* UTF-8 of a CPython str from its code units (PEP 393 kinds: 1, 2 or 4 bytes a character),
   for the C-API module's encoders (see ucs_utf8.c for why not CPython's own encoder).
   Pure C: no Python.h, so that it can be tested and fuzzed on its own. */
#ifndef SCANTOK_UCS_UTF8_H
#define SCANTOK_UCS_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length of the UTF-8 of the n code units at data (kind 1: Latin-1 bytes, 2: UCS-2, 4:
   UCS-4), or -1 if a code unit is a surrogate (U+D800..U+DFFF: no UTF-8; the caller lets
   CPython raise its error) or is above U+10FFFF, or kind is none of these. */
ptrdiff_t ucs_utf8_length(int kind, const void *data, size_t n);

/* Writes the len bytes of that UTF-8 (len from ucs_utf8_length, which accepted the units)
   to out, and nothing past them. */
void ucs_utf8(int kind, const void *data, size_t n, uint8_t *out, size_t len);

/* The implementation in use ("sse41" or "scalar"); ucs_utf8_force("scalar" | "sse41" | NULL:
   the best this CPU has) returns 0, or -1 for an unknown name, -2 if the CPU lacks it. */
const char *ucs_utf8_impl(void);
int ucs_utf8_force(const char *name);

#endif

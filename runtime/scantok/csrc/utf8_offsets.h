/* Byte offsets → str indices, for spans of non-ASCII text. */
#ifndef SCANTOK_UTF8_OFFSETS_H
#define SCANTOK_UTF8_OFFSETS_H
#include <stddef.h>
#include <stdint.h>

/* cdef:begin */
/* Rewrites k non-decreasing byte offsets into data[0:n] (UTF-8, possibly with encoded
   surrogates) as character indices, in place. */
void scantok_utf8_to_char_offsets(const uint8_t *data, size_t n, uint32_t *offsets, size_t k);
/* cdef:end */
#endif

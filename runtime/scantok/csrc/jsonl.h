/* JSON Lines text extraction for the corpus pipeline (scantok.corpus). */
#ifndef SCANTOK_JSONL_H
#define SCANTOK_JSONL_H
#include <stddef.h>
#include <stdint.h>

/* cdef:begin */
/* For each line of buf[0:n] (lines end at '\n'; the last one may not), finds the top-level
   JSON object's member named field[0:field_len] (the last one, as Python's json keeps) and,
   when it is a string, writes its value unescaped as UTF-8 to out (room for n bytes): a lone
   surrogate escape becomes U+FFFD, as tiktoken treats lone surrogates. For line i,
   status[i] is 0 (the text is out[ends[i-1]:ends[i]], ends[-1] = 0), 1 (the line holds only
   spaces, tabs or CRs: not a document) or 2 (anything else: invalid JSON, not an object, no
   such member, not a string, a construct this parser leaves to Python's json, e.g. NaN or
   deep nesting; the caller decides with json.loads). ends[i] is set for every line
   (no text: ends[i] = ends[i-1]). status and ends have room for one entry per line
   (count of '\n' + 1). Returns the number of lines. Never reads outside buf. */
size_t scantok_jsonl_extract(const uint8_t *buf, size_t n, const uint8_t *field, size_t field_len,
                             uint8_t *out, size_t *ends, uint8_t *status);
/* cdef:end */
#endif

#include "utf8_offsets.h"

void scantok_utf8_to_char_offsets(const uint8_t *data, size_t n, uint32_t *offsets, size_t k)
{
    /* The input is well-formed (it came from str.encode), so a character starts at every
     * byte that is not a continuation byte. */
    size_t pos = 0, chars = 0;
    for (size_t i = 0; i < k; i++) {
        size_t target = offsets[i] <= n ? offsets[i] : n;
        for (; pos < target; pos++) chars += (data[pos] & 0xC0) != 0x80;
        offsets[i] = (uint32_t)chars;
    }
}

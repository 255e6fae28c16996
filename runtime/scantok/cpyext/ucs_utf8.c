/* UTF-8 of a CPython str's code units.

   Why not CPython's own encoder (PyUnicode_AsUTF8String): for text that mixes scripts its
   per-character loop branches on each character's UTF-8 length and mispredicts at every change
   of script; on the multi corpus cut into 4 KB documents it ran at ~1.5 GB/s, 4-5 % of
   scantok.Tokenizer.encode.  Here a block of code units is classified at once and its UTF-8
   assembled with one byte shuffle, chosen from a table by which units take one, two or three
   bytes (the method of simdutf's UTF-16 to UTF-8 transcoder, written anew for PEP 393's
   fixed-width kinds, which hold no surrogate pairs: a str's astral characters are single
   UCS-4 units).

   The SIMD path needs SSSE3 (pshufb) and SSE4.1 (blendv, zero extension); it is compiled with
   a target attribute and chosen at run time, the scalar path otherwise or when forced. */
#include "ucs_utf8.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define UCS_X86 1
#include <immintrin.h>
#endif

/* One code point's UTF-8 at *o; -1 for a surrogate or a value above U+10FFFF. */
static inline int put(uint32_t c, uint8_t **o) {
    uint8_t *p = *o;
    if (c < 0x80) {
        p[0] = (uint8_t)c;
        *o = p + 1;
    } else if (c < 0x800) {
        p[0] = (uint8_t)(0xC0 | (c >> 6));
        p[1] = (uint8_t)(0x80 | (c & 0x3F));
        *o = p + 2;
    } else if (c < 0x10000) {
        if ((c & 0xF800) == 0xD800) return -1;
        p[0] = (uint8_t)(0xE0 | (c >> 12));
        p[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        p[2] = (uint8_t)(0x80 | (c & 0x3F));
        *o = p + 3;
    } else {
        if (c > 0x10FFFF) return -1;
        p[0] = (uint8_t)(0xF0 | (c >> 18));
        p[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
        p[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        p[3] = (uint8_t)(0x80 | (c & 0x3F));
        *o = p + 4;
    }
    return 0;
}

/* Units [i, n) one at a time (accepted by ucs_utf8_length), from out position o. */
static void scalar_from(int kind, const void *data, size_t i, size_t n, uint8_t *o) {
    if (kind == 1)
        for (const uint8_t *s = data; i < n; i++) (void)put(s[i], &o);
    else if (kind == 2)
        for (const uint16_t *s = data; i < n; i++) (void)put(s[i], &o);
    else
        for (const uint32_t *s = data; i < n; i++) (void)put(s[i], &o);
}

static void ucs_utf8_scalar(int kind, const void *data, size_t n, uint8_t *out, size_t len) {
    (void)len;
    scalar_from(kind, data, 0, n, out);
}

static ptrdiff_t length_scalar_from(int kind, const void *data, size_t i, size_t n, size_t len) {
    if (kind == 1) {
        const uint8_t *s = data;
        for (; i < n; i++) len += 1 + (s[i] >= 0x80);
    } else if (kind == 2) {
        const uint16_t *s = data;
        unsigned bad = 0;
        for (; i < n; i++) {
            const uint32_t c = s[i];
            len += 1 + (c >= 0x80) + (c >= 0x800);
            bad |= (c & 0xF800) == 0xD800;
        }
        if (bad) return -1;
    } else if (kind == 4) {
        const uint32_t *s = data;
        unsigned bad = 0;
        for (; i < n; i++) {
            const uint32_t c = s[i];
            len += 1 + (c >= 0x80) + (c >= 0x800) + (c >= 0x10000);
            bad |= ((c & 0xFFFFF800) == 0xD800) | (c > 0x10FFFF);
        }
        if (bad) return -1;
    } else {
        return -1;
    }
    return (ptrdiff_t)len;
}

static ptrdiff_t length_scalar(int kind, const void *data, size_t n) { return length_scalar_from(kind, data, 0, n, 0); }

#ifdef UCS_X86
/* Shuffles that gather the UTF-8 bytes of a vector of code points laid out one per lane
   (first byte lowest), and how many bytes they make:
   - two[k]: 8 lanes of 16 bits, each one byte (bit j of k set: lane j is ASCII) or two;
   - three[k]: 4 lanes of 32 bits, k = (lanes of 2+ bytes) | (lanes of 3 bytes) << 4.
   Filled once by the first ucs_utf8_force (module init); an entry of three[] for an impossible k
   (a 3-byte lane not among the 2+ ones) is never read. */
static uint8_t two[256][16], two_len[256], three[256][16], three_len[256];
static int tables_ready;

static void fill_tables(void) {
    for (int k = 0; k < 256; k++) {
        int o = 0;
        memset(two[k], 0x80, 16);
        for (int j = 0; j < 8; j++) {
            two[k][o++] = (uint8_t)(2 * j);
            if (!(k >> j & 1)) two[k][o++] = (uint8_t)(2 * j + 1);
        }
        two_len[k] = (uint8_t)o;
        o = 0;
        memset(three[k], 0x80, 16);
        for (int j = 0; j < 4; j++) {
            int len = 1 + (k >> j & 1) + (k >> (4 + j) & 1);
            for (int b = 0; b < len; b++) three[k][o++] = (uint8_t)(4 * j + b);
        }
        three_len[k] = (uint8_t)o;
    }
}

#define SSE_TARGET __attribute__((target("ssse3,sse4.1")))

/* Eight code points below U+0800 (16-bit lanes) to UTF-8 at o; the bytes written. */
SSE_TARGET static inline size_t eight_below_800(__m128i v, uint8_t *o) {
    const __m128i lead = _mm_or_si128(_mm_srli_epi16(v, 6), _mm_set1_epi16(0xC0));
    const __m128i cont = _mm_slli_epi16(_mm_or_si128(_mm_and_si128(v, _mm_set1_epi16(0x3F)), _mm_set1_epi16(0x80)), 8);
    const __m128i ascii = _mm_cmplt_epi16(v, _mm_set1_epi16(0x80));
    const __m128i r = _mm_blendv_epi8(_mm_or_si128(lead, cont), v, ascii);
    const unsigned k = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(ascii, _mm_setzero_si128())) & 0xFF;
    _mm_storeu_si128((__m128i *)o, _mm_shuffle_epi8(r, _mm_loadu_si128((const __m128i *)two[k])));
    return two_len[k];
}

/* Four code points below U+10000, none a surrogate (32-bit lanes), to UTF-8 at o. */
SSE_TARGET static inline size_t four_below_10000(__m128i u, uint8_t *o) {
    const __m128i c80 = _mm_set1_epi32(0x80), c3f = _mm_set1_epi32(0x3F);
    const __m128i m2 = _mm_cmpgt_epi32(u, _mm_set1_epi32(0x7F)), m3 = _mm_cmpgt_epi32(u, _mm_set1_epi32(0x7FF));
    const __m128i low = _mm_or_si128(_mm_and_si128(u, c3f), c80);                           /* 10xxxxxx */
    const __m128i mid = _mm_or_si128(_mm_and_si128(_mm_srli_epi32(u, 6), c3f), c80);        /* 10xxxxxx */
    const __m128i t2 = _mm_or_si128(_mm_or_si128(_mm_srli_epi32(u, 6), _mm_set1_epi32(0xC0)), _mm_slli_epi32(low, 8));
    const __m128i t3 = _mm_or_si128(_mm_or_si128(_mm_srli_epi32(u, 12), _mm_set1_epi32(0xE0)),
                                    _mm_or_si128(_mm_slli_epi32(mid, 8), _mm_slli_epi32(low, 16)));
    const __m128i r = _mm_blendv_epi8(_mm_blendv_epi8(u, t2, m2), t3, m3);
    const unsigned k = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(m2)) |
                       (unsigned)_mm_movemask_ps(_mm_castsi128_ps(m3)) << 4;
    _mm_storeu_si128((__m128i *)o, _mm_shuffle_epi8(r, _mm_loadu_si128((const __m128i *)three[k])));
    return three_len[k];
}

/* The vector loops stop this many bytes before the end of the output: a block writes at most
   32 bytes (16 Latin-1 units as UTF-8; two 16-byte stores for eight UCS-2 units) */
#define SLACK 32u

SSE_TARGET static void ucs_utf8_sse41(int kind, const void *data, size_t n, uint8_t *out, size_t len) {
    uint8_t *o = out;
    const uint8_t *const o_stop = len > SLACK ? out + len - SLACK : out;
    size_t i = 0;
    if (kind == 1) {
        const uint8_t *s = data;
        for (; i + 16 <= n && o < o_stop; i += 16) {
            const __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            if (!_mm_movemask_epi8(v)) {
                _mm_storeu_si128((__m128i *)o, v);
                o += 16;
                continue;
            }
            o += eight_below_800(_mm_cvtepu8_epi16(v), o);
            o += eight_below_800(_mm_cvtepu8_epi16(_mm_srli_si128(v, 8)), o);
        }
    } else if (kind == 2) {
        const uint16_t *s = data;
        for (; i + 8 <= n && o < o_stop; i += 8) {
            const __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            if (_mm_testz_si128(v, _mm_set1_epi16((short)0xFF80))) {
                if (i + 16 <= n) {
                    const __m128i w = _mm_loadu_si128((const __m128i *)(s + i + 8));
                    if (_mm_testz_si128(w, _mm_set1_epi16((short)0xFF80))) { /* sixteen ASCII */
                        _mm_storeu_si128((__m128i *)o, _mm_packus_epi16(v, w));
                        o += 16;
                        i += 8;
                        continue;
                    }
                }
                _mm_storel_epi64((__m128i *)o, _mm_packus_epi16(v, v));
                o += 8;
                continue;
            }
            if (_mm_testz_si128(v, _mm_set1_epi16((short)0xF800))) {
                o += eight_below_800(v, o);
                continue;
            }
            o += four_below_10000(_mm_cvtepu16_epi32(v), o);
            o += four_below_10000(_mm_cvtepu16_epi32(_mm_srli_si128(v, 8)), o);
        }
    } else {
        const uint32_t *s = data;
        const __m128i not_ascii = _mm_set1_epi32((int)0xFFFFFF80);
        for (; i + 4 <= n && o < o_stop; i += 4) {
            if (i + 16 <= n) { /* sixteen ASCII units (a mostly English str made UCS-4 by one emoji) */
                const __m128i a = _mm_loadu_si128((const __m128i *)(s + i)),
                              b = _mm_loadu_si128((const __m128i *)(s + i + 4)),
                              c = _mm_loadu_si128((const __m128i *)(s + i + 8)),
                              d = _mm_loadu_si128((const __m128i *)(s + i + 12));
                if (_mm_testz_si128(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)), not_ascii)) {
                    _mm_storeu_si128((__m128i *)o, _mm_packus_epi16(_mm_packus_epi32(a, b), _mm_packus_epi32(c, d)));
                    o += 16;
                    i += 12;
                    continue;
                }
            }
            const __m128i u = _mm_loadu_si128((const __m128i *)(s + i));
            if (!_mm_testz_si128(u, _mm_set1_epi32((int)0xFFFF0000))) { /* an astral character */
                for (size_t j = i; j < i + 4; j++) (void)put(s[j], &o);
                continue;
            }
            o += four_below_10000(u, o);
        }
    }
    scalar_from(kind, data, i, n, o);
}

/* ucs_utf8_length: per lane, the count of units at or above 0x80 and 0x800, in 16-bit
   counters emptied before they can overflow; surrogates OR-ed together. */
SSE_TARGET static ptrdiff_t length_sse41(int kind, const void *data, size_t n) {
    size_t i = 0, len = 0;
    if (kind == 1) {
        /* per byte lane, the count of bytes at or above 0x80, in 8-bit counters summed before
           they can overflow (a popcount of the movemask is a libgcc call without popcnt) */
        const uint8_t *s = data;
        const __m128i zero = _mm_setzero_si128();
        while (i + 16 <= n) {
            __m128i acc = zero;
            const size_t stop = n - i > 16 * 255 ? i + 16 * 255 : n;
            for (; i + 16 <= stop; i += 16)
                acc = _mm_sub_epi8(acc, _mm_cmplt_epi8(_mm_loadu_si128((const __m128i *)(s + i)), zero));
            const __m128i sad = _mm_sad_epu8(acc, zero);
            len += (size_t)_mm_cvtsi128_si32(sad) + (size_t)_mm_extract_epi16(sad, 4);
        }
        len += i;
    } else if (kind == 2) {
        const uint16_t *s = data;
        const __m128i c80 = _mm_set1_epi16(0x80), c800 = _mm_set1_epi16(0x800);
        const __m128i sur_mask = _mm_set1_epi16((short)0xF800), sur = _mm_set1_epi16((short)0xD800);
        __m128i bad = _mm_setzero_si128();
        while (i + 8 <= n) {
            __m128i acc = _mm_setzero_si128();
            const size_t stop = n - i > 8 * 8192 ? i + 8 * 8192 : n; /* at most 2 a lane a step */
            for (; i + 8 <= stop; i += 8) {
                const __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
                acc = _mm_sub_epi16(acc, _mm_cmpeq_epi16(_mm_max_epu16(v, c80), v));
                acc = _mm_sub_epi16(acc, _mm_cmpeq_epi16(_mm_max_epu16(v, c800), v));
                bad = _mm_or_si128(bad, _mm_cmpeq_epi16(_mm_and_si128(v, sur_mask), sur));
            }
            /* sum the eight 16-bit counters */
            const __m128i w = _mm_madd_epi16(acc, _mm_set1_epi16(1));
            const __m128i h = _mm_add_epi32(w, _mm_shuffle_epi32(w, 0x4E));
            len += (uint32_t)_mm_cvtsi128_si32(_mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1)));
        }
        if (!_mm_testz_si128(bad, bad)) return -1;
        len += i;
    } else if (kind == 4) {
        /* per 32-bit lane, the count of units at or above 0x80, 0x800 and 0x10000 (at most
           3 a step: no lane overflows before 2^30 steps); surrogates and values above
           U+10FFFF OR-ed together */
        const uint32_t *s = data;
        const __m128i c80 = _mm_set1_epi32(0x80), c800 = _mm_set1_epi32(0x800), c10000 = _mm_set1_epi32(0x10000);
        const __m128i top = _mm_set1_epi32(0x110000);
        const __m128i sur_mask = _mm_set1_epi32((int)0xFFFFF800), sur = _mm_set1_epi32(0xD800);
        __m128i bad = _mm_setzero_si128();
        while (i + 4 <= n) {
            __m128i acc = _mm_setzero_si128();
            const size_t stop = n - i > ((size_t)4 << 28) ? i + ((size_t)4 << 28) : n;
            for (; i + 4 <= stop; i += 4) {
                const __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
                acc = _mm_sub_epi32(acc, _mm_cmpeq_epi32(_mm_max_epu32(v, c80), v));
                acc = _mm_sub_epi32(acc, _mm_cmpeq_epi32(_mm_max_epu32(v, c800), v));
                acc = _mm_sub_epi32(acc, _mm_cmpeq_epi32(_mm_max_epu32(v, c10000), v));
                bad = _mm_or_si128(bad, _mm_cmpeq_epi32(_mm_and_si128(v, sur_mask), sur));
                bad = _mm_or_si128(bad, _mm_cmpeq_epi32(_mm_max_epu32(v, top), v));
            }
            const __m128i h = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0x4E));
            len += (uint32_t)_mm_cvtsi128_si32(_mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1)));
        }
        if (!_mm_testz_si128(bad, bad)) return -1;
        len += i;
    }
    return length_scalar_from(kind, data, i, n, len);
}
#endif

typedef void (*convert_fn)(int, const void *, size_t, uint8_t *, size_t);
typedef ptrdiff_t (*length_fn)(int, const void *, size_t);
static convert_fn chosen_convert = ucs_utf8_scalar;
static length_fn chosen_length = length_scalar;
static const char *chosen_name = "scalar";

static int has_sse41(void) {
#ifdef UCS_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1");
#else
    return 0;
#endif
}

int ucs_utf8_force(const char *name) {
#ifdef UCS_X86
    if (!tables_ready) {
        fill_tables();
        tables_ready = 1;
    }
    if (!name || !strcmp(name, "sse41")) {
        if (has_sse41()) {
            chosen_convert = ucs_utf8_sse41;
            chosen_length = length_sse41;
            chosen_name = "sse41";
            return 0;
        }
        if (name) return -2;
    }
#endif
    if (!name || !strcmp(name, "scalar")) {
        chosen_convert = ucs_utf8_scalar;
        chosen_length = length_scalar;
        chosen_name = "scalar";
        return 0;
    }
    return (name && !strcmp(name, "sse41")) ? -2 : -1;
}

const char *ucs_utf8_impl(void) { return chosen_name; }

ptrdiff_t ucs_utf8_length(int kind, const void *data, size_t n) { return chosen_length(kind, data, n); }

void ucs_utf8(int kind, const void *data, size_t n, uint8_t *out, size_t len) { chosen_convert(kind, data, n, out, len); }

/* JSON Lines text extraction: a strict JSON grammar (RFC 8259) that unescapes one string
   member per line straight into UTF-8, so the corpus pipeline never builds a Python object
   per document. It accepts a subset of what Python's json accepts (anything else is status
   2 and goes to json.loads), and for what it accepts it yields exactly
   json.loads(line)[field] encoded as tiktoken encodes str (lone surrogates -> U+FFFD). */
#include "jsonl.h"

#include <string.h>

#define MAX_DEPTH 200 /* deeper values are left to Python */

typedef struct {
    const uint8_t *p, *e;
} cur_t;

static inline void skip_ws(cur_t *c) {
    while (c->p < c->e && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')) c->p++;
}

static inline int hexval(uint8_t b) {
    if (b >= '0' && b <= '9') return b - '0';
    if (b >= 'a' && b <= 'f') return b - 'a' + 10;
    if (b >= 'A' && b <= 'F') return b - 'A' + 10;
    return -1;
}

/* four hex digits at p (p + 4 <= e checked by the caller) */
static inline long hex4(const uint8_t *p) {
    int a = hexval(p[0]), b = hexval(p[1]), c = hexval(p[2]), d = hexval(p[3]);
    if ((a | b | c | d) < 0) return -1;
    return (a << 12) | (b << 8) | (c << 4) | d;
}

static inline uint8_t *put_utf8(uint8_t *o, unsigned long u) {
    if (u < 0x80) {
        *o++ = (uint8_t)u;
    } else if (u < 0x800) {
        *o++ = (uint8_t)(0xC0 | (u >> 6));
        *o++ = (uint8_t)(0x80 | (u & 0x3F));
    } else if (u < 0x10000) {
        *o++ = (uint8_t)(0xE0 | (u >> 12));
        *o++ = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
        *o++ = (uint8_t)(0x80 | (u & 0x3F));
    } else {
        *o++ = (uint8_t)(0xF0 | (u >> 18));
        *o++ = (uint8_t)(0x80 | ((u >> 12) & 0x3F));
        *o++ = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
        *o++ = (uint8_t)(0x80 | (u & 0x3F));
    }
    return o;
}

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), 0 if invalid (overlong,
   surrogate, above U+10FFFF, truncated): the same bytes Python's strict decoder accepts. */
static inline size_t utf8_len(const uint8_t *p, const uint8_t *e) {
    uint8_t b = p[0];
    size_t avail = (size_t)(e - p);
    if (b >= 0xC2 && b <= 0xDF) return avail >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (b >= 0xE0 && b <= 0xEF) {
        if (avail < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (b == 0xE0 && p[1] < 0xA0) return 0;
        if (b == 0xED && p[1] > 0x9F) return 0;
        return 3;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        if (avail < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        if (b == 0xF0 && p[1] < 0x90) return 0;
        if (b == 0xF4 && p[1] > 0x8F) return 0;
        return 4;
    }
    return 0;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* The high bit of each byte of x that is '"', '\\', a control character or not ASCII (the
   classic has-zero-byte and has-less-than tests: a borrow may also flag a byte after a
   flagged one, never before, so the lowest flag is exact and "none" is exact). */
static inline uint64_t special_mask(uint64_t x) {
    uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b) | ((x - ONES * 0x20) & ~x) | x) & HIGHS;
}

/* A string at c->p (its opening quote), unescaped to o; returns the end of what it wrote, or
   NULL if invalid. *lone is set when a lone surrogate was replaced. Writes at most as many
   bytes as it reads. */
static uint8_t *parse_string(cur_t *c, uint8_t *o, int *lone) {
    const uint8_t *p = c->p + 1, *e = c->e;
    for (;;) {
        const uint8_t *run = p;
        while (e - p >= 8) { /* 8 plain bytes at a time */
            uint64_t x;
            memcpy(&x, p, 8);
            uint64_t m = special_mask(x);
            if (m) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                p += __builtin_ctzll(m) >> 3; /* the first special byte */
#endif
                break;
            }
            p += 8;
        }
        while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        if (p > run) {
            memcpy(o, run, (size_t)(p - run));
            o += p - run;
        }
        if (p >= e) return NULL;
        uint8_t b = *p;
        if (b == '"') {
            c->p = p + 1;
            return o;
        }
        if (b < 0x20) return NULL; /* a control character: json (strict) refuses it */
        if (b >= 0x80) {
            size_t k = utf8_len(p, e);
            if (!k) return NULL;
            memcpy(o, p, k);
            o += k;
            p += k;
            continue;
        }
        /* an escape */
        if (p + 1 >= e) return NULL;
        uint8_t x = p[1];
        p += 2;
        switch (x) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            if (e - p < 4) return NULL;
            long u = hex4(p);
            if (u < 0) return NULL;
            p += 4;
            if (u >= 0xD800 && u <= 0xDBFF && e - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                long u2 = hex4(p + 2);
                if (u2 < 0) return NULL; /* json: invalid \uXXXX escape */
                if (u2 >= 0xDC00 && u2 <= 0xDFFF) {
                    u = 0x10000 + ((u - 0xD800) << 10) + (u2 - 0xDC00);
                    p += 6;
                }
            }
            if (u >= 0xD800 && u <= 0xDFFF) {
                *lone = 1;
                u = 0xFFFD;
            }
            o = put_utf8(o, (unsigned long)u);
            break;
        }
        default:
            return NULL;
        }
    }
}

static int skip_value(cur_t *c, uint8_t *scratch, int depth);

static int skip_number(cur_t *c) {
    const uint8_t *p = c->p, *e = c->e;
    if (p < e && *p == '-') p++;
    if (p >= e) return 0;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < e && *p >= '0' && *p <= '9') p++;
    } else {
        return 0;
    }
    if (p < e && *p == '.') {
        p++;
        if (p >= e || *p < '0' || *p > '9') return 0;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') return 0;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    c->p = p;
    return 1;
}

static int skip_literal(cur_t *c, const char *word, size_t len) {
    if ((size_t)(c->e - c->p) < len || memcmp(c->p, word, len) != 0) return 0;
    c->p += len;
    return 1;
}

static int skip_value(cur_t *c, uint8_t *scratch, int depth) {
    if (c->p >= c->e || depth > MAX_DEPTH) return 0;
    int lone = 0;
    switch (*c->p) {
    case '"':
        return parse_string(c, scratch, &lone) != NULL;
    case '{':
    case '[': {
        uint8_t close = *c->p == '{' ? '}' : ']';
        int object = close == '}';
        c->p++;
        skip_ws(c);
        if (c->p < c->e && *c->p == close) {
            c->p++;
            return 1;
        }
        for (;;) {
            if (object) {
                if (c->p >= c->e || *c->p != '"' || !parse_string(c, scratch, &lone)) return 0;
                skip_ws(c);
                if (c->p >= c->e || *c->p != ':') return 0;
                c->p++;
                skip_ws(c);
            }
            if (!skip_value(c, scratch, depth + 1)) return 0;
            skip_ws(c);
            if (c->p >= c->e) return 0;
            if (*c->p == close) {
                c->p++;
                return 1;
            }
            if (*c->p != ',') return 0;
            c->p++;
            skip_ws(c);
        }
    }
    case 't': return skip_literal(c, "true", 4);
    case 'f': return skip_literal(c, "false", 5);
    case 'n': return skip_literal(c, "null", 4);
    default: return skip_number(c);
    }
}

/* One line: 0 (text written to out[*o0:*o]), 1 (blank) or 2 (left to Python). */
static int extract_line(cur_t *c, const uint8_t *field, size_t field_len, uint8_t *out, size_t *o) {
    size_t start = *o;
    skip_ws(c);
    if (c->p >= c->e) return 1;
    if (*c->p != '{') return 2;
    c->p++;
    skip_ws(c);
    int found = 0; /* 1: the last member named field is a string, 2: it is something else */
    size_t end = start;
    if (c->p < c->e && *c->p == '}') {
        c->p++;
    } else {
        for (;;) {
            int lone = 0;
            if (c->p >= c->e || *c->p != '"') return 2;
            uint8_t *kend = parse_string(c, out + end, &lone); /* the key, as scratch after the text */
            if (!kend) return 2;
            /* field is valid UTF-8 (the caller checks), so a key holding a lone surrogate is
               never equal to it */
            int is_field = !lone && (size_t)(kend - (out + end)) == field_len && memcmp(out + end, field, field_len) == 0;
            skip_ws(c);
            if (c->p >= c->e || *c->p != ':') return 2;
            c->p++;
            skip_ws(c);
            if (is_field && c->p < c->e && *c->p == '"') {
                int vlone = 0;
                uint8_t *vend = parse_string(c, out + start, &vlone); /* the last one wins */
                if (!vend) return 2;
                end = (size_t)(vend - out);
                found = 1;
            } else {
                if (!skip_value(c, out + end, 1)) return 2;
                if (is_field) {
                    found = 2;
                    end = start;
                }
            }
            skip_ws(c);
            if (c->p >= c->e) return 2;
            if (*c->p == '}') {
                c->p++;
                break;
            }
            if (*c->p != ',') return 2;
            c->p++;
            skip_ws(c);
        }
    }
    skip_ws(c);
    if (c->p != c->e || found != 1) return 2;
    *o = end;
    return 0;
}

size_t scantok_jsonl_extract(const uint8_t *buf, size_t n, const uint8_t *field, size_t field_len,
                             uint8_t *out, size_t *ends, uint8_t *status) {
    size_t lines = 0, o = 0;
    const uint8_t *p = buf, *e = buf + n;
    for (;;) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(e - p));
        const uint8_t *le = nl ? nl : e;
        if (!nl && p == e && lines > 0) break; /* nothing after the last newline */
        cur_t c = {p, le};
        int st = extract_line(&c, field, field_len, out, &o);
        status[lines] = (uint8_t)st;
        ends[lines] = o;
        lines++;
        if (!nl) break;
        p = nl + 1;
    }
    return lines;
}

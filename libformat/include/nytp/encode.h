/* nytp/encode.h — the encoding of numbers and of the chunks a profiler
 * writes per statement and call, as inline code: for codec.c (which
 * exports the encoder built on it), the writer's functions, and the
 * inline writers of nytp/writer_inline.h.  With codec_decode.h and
 * codec.c, the only places that know how chunks look as bytes. */
#ifndef NYTP_ENCODE_H
#define NYTP_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nytp/codec.h"

/* Bytes a TIME_LINE or TIME_BLOCK chunk takes at most: the tag and five
 * numbers of at most 5 bytes. */
#define NYTP_TIME_CHUNK_MAX (1 + 5 * 5)

static inline size_t nytp_encode_u32_inline(uint8_t *o, uint32_t v)
{
    if (v < 0x80) {
        o[0] = (uint8_t)v;
        return 1;
    }
    if (v < 0x4000) {
        o[0] = (uint8_t)(0x80 | (v >> 8));
        o[1] = (uint8_t)v;
        return 2;
    }
    if (v < 0x200000) {
        o[0] = (uint8_t)(0xC0 | (v >> 16));
        o[1] = (uint8_t)(v >> 8);
        o[2] = (uint8_t)v;
        return 3;
    }
    if (v < 0x10000000) {
        o[0] = (uint8_t)(0xE0 | (v >> 24));
        o[1] = (uint8_t)(v >> 16);
        o[2] = (uint8_t)(v >> 8);
        o[3] = (uint8_t)v;
        return 4;
    }
    o[0] = 0xFF;
    o[1] = (uint8_t)(v >> 24);
    o[2] = (uint8_t)(v >> 16);
    o[3] = (uint8_t)(v >> 8);
    o[4] = (uint8_t)v;
    return 5;
}

/* A TIME_LINE chunk, or with block and sub lines a TIME_BLOCK one, into
 * at least NYTP_TIME_CHUNK_MAX bytes at o; its length. */
static inline size_t nytp_encode_time_line_inline(uint8_t *o, int32_t ticks, uint32_t fid,
                                                  uint32_t line)
{
    /* The usual chunk first: ticks and fid under 0x80 (a byte each), the
     * line under 0x4000 (one or two), stored without the general
     * encoder's branch per number (a fifth of a statement event's
     * instructions went to this chunk). */
    if ((((uint32_t)ticks | fid) < 0x80) & (line < 0x4000)) {
        o[0] = (uint8_t)NYTP_TAG_TIME_LINE;
        o[1] = (uint8_t)ticks;
        o[2] = (uint8_t)fid;
        if (line < 0x80) {
            o[3] = (uint8_t)line;
            return 4;
        }
        o[3] = (uint8_t)(0x80 | (line >> 8));
        o[4] = (uint8_t)line;
        return 5;
    }
    uint8_t *p = o;
    *p++ = (uint8_t)NYTP_TAG_TIME_LINE;
    p += nytp_encode_u32_inline(p, (uint32_t)ticks);
    p += nytp_encode_u32_inline(p, fid);
    p += nytp_encode_u32_inline(p, line);
    return (size_t)(p - o);
}

static inline size_t nytp_encode_time_block_inline(uint8_t *o, int32_t ticks, uint32_t fid,
                                                   uint32_t line, uint32_t block_line,
                                                   uint32_t sub_line)
{
    uint8_t *p = o;
    *p++ = (uint8_t)NYTP_TAG_TIME_BLOCK;
    p += nytp_encode_u32_inline(p, (uint32_t)ticks);
    p += nytp_encode_u32_inline(p, fid);
    p += nytp_encode_u32_inline(p, line);
    p += nytp_encode_u32_inline(p, block_line);
    p += nytp_encode_u32_inline(p, sub_line);
    return (size_t)(p - o);
}

static inline void nytp_encode_nv_inline(uint8_t *o, double d)
{
    memcpy(o, &d, sizeof d);
}

/* A string: its kind, its length, its bytes. */
static inline uint8_t *nytp_encode_str_inline(uint8_t *o, nytp_str s)
{
    *o++ = s.utf8 ? NYTP_STR_UTF8 : NYTP_STR_BYTES;
    o += nytp_encode_u32_inline(o, s.len);
    if (s.len)
        memcpy(o, s.ptr, s.len);
    return o + s.len;
}

/* Bytes a SUB_RETURN chunk for a name of name_len bytes takes at most. */
#define NYTP_SUB_RETURN_MAX(name_len) (1 + 5 + 2 * 8 + 1 + 5 + (size_t)(name_len))

/* n bytes from src to dst, for the short strings of a profiler's chunks:
 * up to 32 bytes by two copies of a fixed size that may overlap (each
 * one a load and a store), longer ones by memcpy.  Reads and writes only
 * the n bytes. */
static inline void nytp_copy_short(uint8_t *dst, const char *src, size_t n)
{
    if (n >= 16 && n <= 32) {
        memcpy(dst, src, 16);
        memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n >= 8 && n < 16) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            dst[i] = (uint8_t)src[i];
    } else {
        memcpy(dst, src, n);
    }
}

/* A SUB_RETURN chunk into at least NYTP_SUB_RETURN_MAX(name.len) bytes at
 * o; its length. */
static inline size_t nytp_encode_sub_return_inline(uint8_t *o, uint32_t depth, double incl,
                                                   double excl, nytp_str name)
{
    /* The usual chunk first: depth and the name's length under 0x80, a
     * byte each, the name copied without a call of memcpy (these were a
     * third of the chunk's instructions). */
    if ((depth | name.len) < 0x80) {
        o[0] = (uint8_t)NYTP_TAG_SUB_RETURN;
        o[1] = (uint8_t)depth;
        nytp_encode_nv_inline(o + 2, incl);
        nytp_encode_nv_inline(o + 10, excl);
        o[18] = name.utf8 ? NYTP_STR_UTF8 : NYTP_STR_BYTES;
        o[19] = (uint8_t)name.len;
        nytp_copy_short(o + 20, name.ptr, name.len);
        return 20 + (size_t)name.len;
    }
    uint8_t *p = o;
    *p++ = (uint8_t)NYTP_TAG_SUB_RETURN;
    p += nytp_encode_u32_inline(p, depth);
    nytp_encode_nv_inline(p, incl);
    nytp_encode_nv_inline(p + 8, excl);
    p = nytp_encode_str_inline(p + 16, name);
    return (size_t)(p - o);
}

/* A DISCOUNT chunk (the tag alone) into at least 1 byte at o. */
static inline size_t nytp_encode_discount_inline(uint8_t *o)
{
    o[0] = (uint8_t)NYTP_TAG_DISCOUNT;
    return 1;
}

#endif /* NYTP_ENCODE_H */

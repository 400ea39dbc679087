/* codec_decode.h — the chunk decoder, as inline code for the library's
 * own hot path (the reader) and for codec.c, which exports it.  This and
 * codec.c are the only places that know how chunks look as bytes.  Not a
 * public header. */
#ifndef NYTP_CODEC_DECODE_H
#define NYTP_CODEC_DECODE_H

#include <string.h>

#include "nytp/codec.h"

static inline size_t decode_u32_inline(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
    if (p >= end)
        return 0;
    uint8_t b = p[0];
    if (b < 0x80) {
        *v = b;
        return 1;
    }
    /* The masks follow the reference reader: 0x7F for the two-byte form
     * (a writer never sets bit 6 there), 0x1F, 0x0F, and none for 0xFF. */
    size_t n;
    uint32_t r;
    if (b < 0xC0) {
        n = 2;
        r = b & 0x7F;
    } else if (b < 0xE0) {
        n = 3;
        r = b & 0x1F;
    } else if (b < 0xFF) {
        n = 4;
        r = b & 0x0F;
    } else {
        n = 5;
        r = 0;
    }
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++)
        r = (r << 8) | p[i];
    *v = r;
    return n;
}

/* A whole TIME_LINE chunk at p (p[0] is its tag): its length, or 0 when it
 * does not end before end (the general decoder then says what is
 * missing).  The statement loop of the model decodes with this alone. */
static inline size_t nytp_decode_time_line_inline(const uint8_t *p, const uint8_t *end,
                                                  int32_t *ticks, uint32_t *fid, uint32_t *line)
{
    const uint8_t *q = p + 1;
    uint32_t t;
    size_t n;
    if (!(n = decode_u32_inline(q, end, &t)))
        return 0;
    q += n;
    if (!(n = decode_u32_inline(q, end, fid)))
        return 0;
    q += n;
    if (!(n = decode_u32_inline(q, end, line)))
        return 0;
    *ticks = (int32_t)t;
    return (size_t)(q + n - p);
}

/* A dec_cursor over p..end.  need > 0 means the chunk runs past end and at
 * least that many bytes (from the chunk start) are required; why != NULL
 * means the bytes are bad at offset bad. */
typedef struct dec_cursor {
    const uint8_t *start, *q, *end;
    size_t need;
    const char *why;
    size_t bad;
} dec_cursor;

static inline int dec_more(dec_cursor *k, size_t extra)
{
    size_t want = (size_t)(k->q - k->start) + extra;
    size_t have = (size_t)(k->end - k->start);
    k->need = want > have ? want : have + 1;
    return 0;
}

static inline int dec_get_u32(dec_cursor *k, uint32_t *v)
{
    size_t n = decode_u32_inline(k->q, k->end, v);
    if (!n) {
        if (k->q >= k->end)
            return dec_more(k, 1);
        uint8_t b = *k->q;
        return dec_more(k, b < 0xC0 ? 2 : b < 0xE0 ? 3 : b < 0xFF ? 4 : 5);
    }
    k->q += n;
    return 1;
}

static inline int dec_get_nv(dec_cursor *k, double *d)
{
    if (k->end - k->q < 8)
        return dec_more(k, 8);
    memcpy(d, k->q, 8);
    k->q += 8;
    return 1;
}

static inline int dec_get_str(dec_cursor *k, nytp_str *s)
{
    if (k->q >= k->end)
        return dec_more(k, 1);
    uint8_t t = *k->q;
    if (t != NYTP_STR_BYTES && t != NYTP_STR_UTF8) {
        k->why = nytp_why_string_tag;
        k->bad = (size_t)(k->q - k->start);
        return 0;
    }
    const uint8_t *save = k->q;
    k->q++;
    uint32_t len;
    if (!dec_get_u32(k, &len))
        return 0;
    if (len > NYTP_STR_LIMIT) {
        k->why = nytp_why_string_length;
        k->bad = (size_t)(save - k->start);
        return 0;
    }
    if ((size_t)(k->end - k->q) < len)
        return dec_more(k, len);
    s->ptr = (const char *)k->q;
    s->len = len;
    s->utf8 = t == NYTP_STR_UTF8;
    k->q += len;
    return 1;
}

/* A text line after the tag byte, up to and including '\n'. */
static inline int dec_get_line(dec_cursor *k, const uint8_t **line, size_t *len)
{
    size_t avail = (size_t)(k->end - k->q);
    const uint8_t *nl = memchr(k->q, '\n', avail);
    if (!nl) {
        if (avail > NYTP_STR_LIMIT) {
            k->why = nytp_why_line_length;
            k->bad = (size_t)(k->q - k->start);
            return 0;
        }
        k->need = (size_t)(k->end - k->start) + 1;
        return 0;
    }
    *line = k->q;
    *len = (size_t)(nl - k->q) + 1;
    k->q = nl + 1;
    return 1;
}

#define U32(x) if (!dec_get_u32(&k, &(x))) goto stop
#define I32(x) do { uint32_t u_; if (!dec_get_u32(&k, &u_)) goto stop; (x) = (int32_t)u_; } while (0)
#define NV(x) if (!dec_get_nv(&k, &(x))) goto stop
#define STR(x) if (!dec_get_str(&k, &(x))) goto stop

static inline int nytp_decode_chunk_inline(const uint8_t *p, const uint8_t *end, nytp_chunk *c,
                                           size_t *used, const char **why)
{
    dec_cursor k = {p, p + 1, end, 0, NULL, 0};
    if (p >= end) {
        *used = 1;
        return NYTP_DECODE_NEED_MORE;
    }
    int tag = *p;
    c->tag = (enum nytp_tag)tag;
    switch (tag) {
    case NYTP_TAG_TIME_LINE:
        I32(c->u.time.ticks);
        U32(c->u.time.fid);
        U32(c->u.time.line);
        c->u.time.block_line = c->u.time.sub_line = 0;
        break;
    case NYTP_TAG_TIME_BLOCK:
        I32(c->u.time.ticks);
        U32(c->u.time.fid);
        U32(c->u.time.line);
        U32(c->u.time.block_line);
        U32(c->u.time.sub_line);
        break;
    case NYTP_TAG_DISCOUNT:
    case NYTP_TAG_START_DEFLATE:
        break;
    case NYTP_TAG_SUB_RETURN:
        U32(c->u.sub_return.depth);
        NV(c->u.sub_return.incl);
        NV(c->u.sub_return.excl);
        STR(c->u.sub_return.name);
        break;
    case NYTP_TAG_SUB_ENTRY:
        U32(c->u.sub_entry.fid);
        U32(c->u.sub_entry.line);
        break;
    case NYTP_TAG_NEW_FID:
        U32(c->u.new_fid.fid);
        U32(c->u.new_fid.eval_fid);
        U32(c->u.new_fid.eval_line);
        U32(c->u.new_fid.flags);
        U32(c->u.new_fid.size);
        U32(c->u.new_fid.mtime);
        STR(c->u.new_fid.name);
        break;
    case NYTP_TAG_SUB_INFO:
        U32(c->u.sub_info.fid);
        STR(c->u.sub_info.name);
        U32(c->u.sub_info.first_line);
        U32(c->u.sub_info.last_line);
        break;
    case NYTP_TAG_SUB_CALLERS:
        U32(c->u.sub_callers.fid);
        U32(c->u.sub_callers.line);
        STR(c->u.sub_callers.caller);
        U32(c->u.sub_callers.count);
        NV(c->u.sub_callers.incl);
        NV(c->u.sub_callers.excl);
        NV(c->u.sub_callers.reci);
        U32(c->u.sub_callers.rec_depth);
        STR(c->u.sub_callers.called);
        break;
    case NYTP_TAG_SRC_LINE:
        U32(c->u.src_line.fid);
        U32(c->u.src_line.line);
        STR(c->u.src_line.text);
        break;
    case NYTP_TAG_PID_START:
        U32(c->u.pid_start.pid);
        U32(c->u.pid_start.ppid);
        NV(c->u.pid_start.time);
        break;
    case NYTP_TAG_PID_END:
        U32(c->u.pid_end.pid);
        NV(c->u.pid_end.time);
        break;
    case NYTP_TAG_COMMENT: {
        const uint8_t *line;
        size_t len;
        if (!dec_get_line(&k, &line, &len))
            goto stop;
        c->u.comment.text = (nytp_str){(const char *)line, (uint32_t)len, false};
        break;
    }
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION: {
        const uint8_t *line;
        size_t len;
        if (!dec_get_line(&k, &line, &len))
            goto stop;
        len--; /* drop '\n' */
        const uint8_t *eq = memchr(line, '=', len);
        if (!eq) {
            /* No '=': the caller decides (Devel::NYTProf warns and skips). */
            c->u.kv.key = (nytp_str){(const char *)line, (uint32_t)len, false};
            c->u.kv.value = (nytp_str){NULL, 0, false};
        } else {
            c->u.kv.key = (nytp_str){(const char *)line, (uint32_t)(eq - line), false};
            c->u.kv.value = (nytp_str){(const char *)eq + 1, (uint32_t)(line + len - eq - 1), false};
        }
        break;
    }
    default:
        *why = nytp_why_tag;
        *used = 0;
        return NYTP_DECODE_BAD;
    }
    *used = (size_t)(k.q - p);
    return NYTP_DECODE_OK;
stop:
    if (k.why) {
        *why = k.why;
        *used = k.bad;
        return NYTP_DECODE_BAD;
    }
    *used = k.need;
    return NYTP_DECODE_NEED_MORE;
}

#undef U32
#undef I32
#undef NV
#undef STR

#endif

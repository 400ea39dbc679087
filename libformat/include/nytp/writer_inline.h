/* nytp/writer_inline.h — the chunks a profiler writes at every statement
 * and call (TIME_LINE, DISCOUNT, SUB_RETURN) by inline code, straight
 * into the buffer of the writer's output: the same bytes, and the same
 * results, as nytp_write_time_line, nytp_write_discount and
 * nytp_write_sub_return, which they call when the buffer is full or the
 * writer has failed.  They save a profiler the call, the tests of errors
 * and of room, which the buffer's limit folds into one.  Like those
 * functions they leave errno as it was.
 *
 *     nytp_write_time_line_inline(w, ticks, fid, line);
 */
#ifndef NYTP_WRITER_INLINE_H
#define NYTP_WRITER_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include "nytp/encode.h"
#include "nytp/writer.h"

/* The buffer of an output, bytes before compression.  libformat's own:
 * read and advanced here only. */
typedef struct nytp_outbuf {
    uint8_t *buf;
    size_t len;        /* bytes in buf */
    size_t limit;      /* what the inline writers may fill: the buffer's
                        * size, 0 once the output or writer has failed */
    uint64_t total;    /* bytes committed in all */
} nytp_outbuf;

/* A writer's first member points to its output's buffer (C11 6.7.2.1:
 * a pointer to a struct, converted, points to its first member). */
static inline nytp_outbuf *nytp_writer_outbuf(nytp_writer *w)
{
    return *(nytp_outbuf **)(void *)w;
}

/* Room for n bytes at the end of the buffer, or NULL. */
static inline uint8_t *nytp_outbuf_room(nytp_outbuf *b, size_t n)
{
    return b->len + n <= b->limit ? b->buf + b->len : NULL;
}

static inline void nytp_outbuf_commit(nytp_outbuf *b, size_t n)
{
    b->len += n;
    b->total += n;
}

static inline int nytp_write_time_line_inline(nytp_writer *w, int32_t ticks, uint32_t fid,
                                              uint32_t line)
{
    nytp_outbuf *b = nytp_writer_outbuf(w);
    uint8_t *p = nytp_outbuf_room(b, NYTP_TIME_CHUNK_MAX);
    if (!p)
        return nytp_write_time_line(w, ticks, fid, line);
    nytp_outbuf_commit(b, nytp_encode_time_line_inline(p, ticks, fid, line));
    return 0;
}

static inline int nytp_write_discount_inline(nytp_writer *w)
{
    nytp_outbuf *b = nytp_writer_outbuf(w);
    uint8_t *p = nytp_outbuf_room(b, 1);
    if (!p)
        return nytp_write_discount(w);
    nytp_outbuf_commit(b, nytp_encode_discount_inline(p));
    return 0;
}

static inline int nytp_write_sub_return_inline(nytp_writer *w, uint32_t depth, double incl,
                                               double excl, nytp_str name)
{
    nytp_outbuf *b = nytp_writer_outbuf(w);
    uint8_t *p = nytp_outbuf_room(b, NYTP_SUB_RETURN_MAX(name.len));
    if (!p)
        return nytp_write_sub_return(w, depth, incl, excl, name);
    nytp_outbuf_commit(b, nytp_encode_sub_return_inline(p, depth, incl, excl, name));
    return 0;
}

#endif

/* out_impl.h — the inside of nytp_out, for the library's own hot path:
 * the writer encodes the chunks a profiler writes millions of times
 * (TIME_LINE, TIME_BLOCK, DISCOUNT) straight into the buffer, without a
 * call per chunk into out.c.  Not a public header. */
#ifndef NYTP_OUT_IMPL_H
#define NYTP_OUT_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "deflater.h"
#include "nytp/error.h"
#include "nytp/io.h"
#include "nytp/writer_inline.h"

#define BUF_SIZE (256u * 1024u)

struct nytp_out {
    nytp_outbuf ob;         /* bytes not yet handed on (before compression),
                             * committed in all (first: see writer_inline.h) */
    size_t cap;             /* the size of ob.buf */

    int fd;                 /* -1: memory out */
    bool close_fd;
    char *guard_path;       /* nytp_out_guard_fd: the file fd must still be */
    dev_t guard_dev;
    ino_t guard_ino;
    uint64_t sunk;          /* fd's offset: where to go on after a reopen */
    bool lost;              /* fd was closed by another, the file gone */
    char *path, *tmp_path;  /* atomic files: target and temporary name */

    uint8_t *mem;           /* memory out: the file's bytes */
    size_t mem_len, mem_cap;

    bool threads;           /* deflate on a writer thread */
    bool isal;              /* deflate with ISA-L rather than zlib */
    deflater *def;          /* non-NULL while deflating */
    bool gzip;              /* a gzip stream: no trailer comment after it */
    uint64_t deflate_base;  /* ob.total when deflating began: a byte's
                             * offset in the inflated stream is its
                             * ob.total less this */

    nytp_error err;         /* sticky first error; err.status == 0 if none */
};

/* nytp_out_reserve without a call where the buffer has room (the usual
 * case): the same result, the same contract. */
static inline uint8_t *out_reserve_inline(nytp_out *o, size_t n)
{
    if (o->err.status == 0 && o->cap - o->ob.len >= n)
        return o->ob.buf + o->ob.len;
    return nytp_out_reserve(o, n);
}

static inline void out_commit_inline(nytp_out *o, size_t n)
{
    nytp_outbuf_commit(&o->ob, n);
}

/* ob.limit after a change of the buffer or of the error: the inline
 * writers may fill the buffer while there is no error. */
static inline void out_sync_limit(nytp_out *o)
{
    o->ob.limit = o->err.status ? 0 : o->cap;
}

#endif

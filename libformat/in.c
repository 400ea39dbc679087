/* in.c — buffered byte input over a file descriptor or memory, with an
 * optional switch to zlib inflate part way through. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "nytp/io.h"

#define PLAIN_READ (256u * 1024u)   /* bytes asked of read() at a time */
#define ZIN_SIZE (256u * 1024u)     /* compressed input buffer */
#define OUT_INITIAL (1024u * 1024u) /* decode window when inflating */

struct nytp_in {
    /* The decode window: data[pos..lim) is buffered and unread.  data is
     * own (capacity cap) except for plain memory input, where it is the
     * caller's bytes. */
    const uint8_t *data;
    uint8_t *own;
    size_t cap, pos, lim;
    uint64_t base;          /* stream offset of data[0] */

    int fd;                 /* -1 for memory input */
    bool close_fd;
    bool eof;               /* the fd (or memory) has nothing more */

    const uint8_t *mem;     /* memory input */
    size_t mem_len;

    bool inflating, zend;
    z_stream zs;
    uint8_t *zin;           /* compressed bytes read from fd */
    uint64_t deflate_start; /* file offset of the zlib stream */
    nytp_error zerr;        /* a zlib error held back until the bytes
                               inflated before it have been read */
};

static int alloc_in(nytp_in **inp, nytp_error *err)
{
    nytp_in *in = calloc(1, sizeof *in);
    if (!in)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    in->fd = -1;
    *inp = in;
    return NYTP_OK;
}

int nytp_in_open_fd(nytp_in **inp, int fd, bool close_fd, nytp_error *err)
{
    nytp_in *in = NULL;
    int st = alloc_in(&in, err);
    if (st < 0)
        return st;
    in->fd = fd;
    in->close_fd = close_fd;
    in->cap = PLAIN_READ;
    in->own = malloc(in->cap);
    if (!in->own) {
        free(in);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    in->data = in->own;
    *inp = in;
    return NYTP_OK;
}

int nytp_in_open_file(nytp_in **inp, const char *path, nytp_error *err)
{
    if (strcmp(path, "-") == 0)
        return nytp_in_open_fd(inp, STDIN_FILENO, false, err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return nytp_error_set(err, NYTP_E_IO, "cannot open: %s", strerror(errno));
    int st = nytp_in_open_fd(inp, fd, true, err);
    if (st < 0)
        close(fd);
    return st;
}

int nytp_in_open_mem(nytp_in **inp, const void *data, size_t len, nytp_error *err)
{
    nytp_in *in = NULL;
    int st = alloc_in(&in, err);
    if (st < 0)
        return st;
    in->mem = data;
    in->mem_len = len;
    in->data = data;
    in->lim = len;
    in->cap = len;
    in->eof = true;
    *inp = in;
    return NYTP_OK;
}

void nytp_in_close(nytp_in *in)
{
    if (!in)
        return;
    if (in->inflating)
        inflateEnd(&in->zs);
    if (in->close_fd && in->fd >= 0)
        close(in->fd);
    free(in->own);
    free(in->zin);
    free(in);
}

const uint8_t *nytp_in_peek(const nytp_in *in, size_t *avail)
{
    *avail = in->lim - in->pos;
    return in->data + in->pos;
}

void nytp_in_skip(nytp_in *in, size_t n)
{
    in->pos += n;
}

bool nytp_in_inflating(const nytp_in *in) { return in->inflating; }
bool nytp_in_stream_ended(const nytp_in *in) { return in->zend; }
uint64_t nytp_in_offset(const nytp_in *in) { return in->base + in->pos; }
uint64_t nytp_in_deflate_start(const nytp_in *in) { return in->deflate_start; }

/* read() that retries on EINTR; returns bytes, 0 at end, -1 on error. */
static ssize_t read_some(int fd, void *buf, size_t len)
{
    for (;;) {
        ssize_t n = read(fd, buf, len);
        if (n >= 0 || errno != EINTR)
            return n;
    }
}

/* Make room so that want bytes fit from pos: move the unread bytes to the
 * start of own, growing it if needed. */
static int make_room(nytp_in *in, size_t want, nytp_error *err)
{
    size_t unread = in->lim - in->pos;
    if (in->pos > 0) {
        if (unread)
            memmove(in->own, in->own + in->pos, unread);
        in->base += in->pos;
        in->pos = 0;
        in->lim = unread;
    }
    if (want > in->cap) {
        size_t ncap = in->cap * 2;
        if (ncap < want)
            ncap = want;
        uint8_t *n = realloc(in->own, ncap);
        if (!n)
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory for a %zu-byte buffer", ncap);
        in->own = n;
        in->data = n;
        in->cap = ncap;
    }
    return NYTP_OK;
}

static int inflate_more(nytp_in *in, nytp_error *err)
{
    if (in->zerr.status) {
        if (err)
            *err = in->zerr;
        return in->zerr.status;
    }
    for (;;) {
        if (in->zs.avail_in == 0 && !in->eof) {
            if (in->fd >= 0) {
                ssize_t n = read_some(in->fd, in->zin, ZIN_SIZE);
                if (n < 0)
                    return nytp_error_set(err, NYTP_E_IO, "read failed: %s", strerror(errno));
                if (n == 0)
                    in->eof = true;
                in->zs.next_in = in->zin;
                in->zs.avail_in = (uInt)n;
            } else {
                in->eof = true; /* memory: everything was handed over at start */
            }
        }
        in->zs.next_out = in->own + in->lim;
        in->zs.avail_out = (uInt)(in->cap - in->lim);
        size_t before = in->zs.avail_out;
        int zst = inflate(&in->zs, Z_NO_FLUSH);
        in->lim += before - in->zs.avail_out;
        if (zst == Z_STREAM_END) {
            in->zend = true;
            return NYTP_OK;
        }
        if (zst == Z_OK) {
            if (before != in->zs.avail_out)
                return NYTP_OK;
            continue;
        }
        if (zst == Z_BUF_ERROR && in->zs.avail_in == 0 && in->eof) {
            if (err) {
                err->offset = in->base + in->lim;
                err->inflated = true;
                err->deflate_start = in->deflate_start;
            }
            return nytp_error_set(err, NYTP_E_TRUNCATED,
                                  "the zlib stream stops before its end (the file was cut short)");
        }
        if (zst == Z_BUF_ERROR)
            continue; /* needs input; loop reads more */
        nytp_error *z = &in->zerr;
        z->offset = in->deflate_start + in->zs.total_in;
        z->inflated = false;
        z->deflate_start = in->deflate_start;
        nytp_error_set(z, NYTP_E_FORMAT, "corrupt zlib data (%s)",
                       in->zs.msg ? in->zs.msg : "inflate failed");
        if (before != in->zs.avail_out)
            return NYTP_OK; /* hand over what came before the damage first */
        if (err)
            *err = *z;
        return z->status;
    }
}

int nytp_in_fill(nytp_in *in, size_t want, nytp_error *err)
{
    while (in->lim - in->pos < want) {
        if (!in->inflating) {
            if (in->eof)
                return NYTP_END;
            int st = make_room(in, want < PLAIN_READ ? PLAIN_READ : want, err);
            if (st < 0)
                return st;
            ssize_t n = read_some(in->fd, in->own + in->lim, in->cap - in->lim);
            if (n < 0)
                return nytp_error_set(err, NYTP_E_IO, "read failed: %s", strerror(errno));
            if (n == 0)
                in->eof = true;
            in->lim += (size_t)n;
        } else {
            if (in->zend)
                return NYTP_END;
            int st = make_room(in, want, err);
            if (st < 0)
                return st;
            st = inflate_more(in, err);
            if (st < 0)
                return st;
        }
    }
    return NYTP_OK;
}

int nytp_in_start_inflate(nytp_in *in, nytp_error *err)
{
    if (in->inflating)
        return nytp_error_set(err, NYTP_E_FORMAT, "a second START_DEFLATE inside compressed data");
    memset(&in->zs, 0, sizeof in->zs);
    in->deflate_start = in->base + in->pos;
    size_t rest = in->lim - in->pos;
    if (in->fd >= 0) {
        in->zin = malloc(rest > ZIN_SIZE ? rest : ZIN_SIZE);
        if (!in->zin)
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
        if (rest)
            memcpy(in->zin, in->data + in->pos, rest);
        in->zs.next_in = in->zin;
    } else {
        in->zs.next_in = (Bytef *)(uintptr_t)(in->data + in->pos);
    }
    in->zs.avail_in = (uInt)rest;
    if (inflateInit(&in->zs) != Z_OK)
        return nytp_error_set(err, NYTP_E_NOMEM, "zlib inflateInit failed");
    in->inflating = true;
    /* The window now holds inflated bytes, counted from 0. */
    if (!in->own || in->cap < OUT_INITIAL) {
        free(in->own);
        in->own = malloc(OUT_INITIAL);
        if (!in->own)
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
        in->cap = OUT_INITIAL;
    }
    in->data = in->own;
    in->base = 0;
    in->pos = in->lim = 0;
    return NYTP_OK;
}

int nytp_in_drain(nytp_in *in, uint64_t *bytes, nytp_error *err)
{
    uint64_t total = 0;
    for (;;) {
        total += in->lim - in->pos;
        in->pos = in->lim;
        int st = nytp_in_fill(in, 1, err);
        if (st == NYTP_END)
            break;
        if (st < 0)
            return st;
    }
    *bytes = total;
    return NYTP_OK;
}

/* in.c — buffered byte input over a file descriptor or memory, with a
 * switch to zlib inflate part way through.
 *
 * Inflating is pipelined: a producer thread inflates the next blocks while
 * the caller decodes the current one, so reading a compressed profile takes
 * about as long as inflating it.  Without a thread (it could not be made,
 * or NYTP_THREADS=0 in the environment, or nytp_in_set_threads) the same
 * producer runs on the caller's thread whenever a block is needed. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "in_impl.h"

#define PLAIN_READ (256u * 1024u)   /* bytes asked of read() at a time */
#define ZIN_SIZE (256u * 1024u)     /* compressed input buffer */

static int alloc_in(nytp_in **inp, nytp_error *err)
{
    nytp_in *in = calloc(1, sizeof *in);
    if (!in)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    in->fd = -1;
    in->cur_slot = -1;
    const char *t = getenv("NYTP_THREADS");
    in->threads = !(t && strcmp(t, "0") == 0);
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
    in->eof = true;
    *inp = in;
    return NYTP_OK;
}

void nytp_in_set_threads(nytp_in *in, bool on)
{
    in->threads = on;
}

static void stop_inflater(nytp_in *in)
{
    struct nytp_inflater *z = in->z;
    if (!z)
        return;
    if (z->threaded) {
        pthread_mutex_lock(&z->mu);
        z->stop = true;
        pthread_cond_broadcast(&z->cv);
        pthread_mutex_unlock(&z->mu);
        pthread_join(z->thread, NULL);
        pthread_mutex_destroy(&z->mu);
        pthread_cond_destroy(&z->cv);
    }
    inflateEnd(&z->zs);
    for (int i = 0; i < NYTP_IN_SLOTS; i++)
        free(z->slots[i].mem);
    free(z->zin);
    free(z);
    in->z = NULL;
}

void nytp_in_close(nytp_in *in)
{
    if (!in)
        return;
    stop_inflater(in);
    if (in->close_fd && in->fd >= 0)
        close(in->fd);
    free(in->own);
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

/* Make own hold at least want bytes from pos: move the unread bytes to its
 * start (from wherever the window is), growing it if needed. */
static int window_to_own(nytp_in *in, size_t want, nytp_error *err)
{
    size_t unread = in->lim - in->pos;
    if (want < unread)
        want = unread;
    if (want > in->cap) {
        size_t ncap = in->cap ? in->cap * 2 : PLAIN_READ;
        if (ncap < want)
            ncap = want;
        uint8_t *n = malloc(ncap);
        if (!n)
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory for a %zu-byte buffer", ncap);
        if (unread)
            memcpy(n, in->data + in->pos, unread);
        free(in->own);
        in->own = n;
        in->cap = ncap;
    } else if (unread && (in->data != in->own || in->pos)) {
        memmove(in->own, in->data + in->pos, unread);
    }
    in->data = in->own;
    in->base += in->pos;
    in->pos = 0;
    in->lim = unread;
    return NYTP_OK;
}

/* ---- the producer ------------------------------------------------------ */

/* Inflate up to one block into s. */
static void produce(nytp_in *in, struct nytp_inflater *z, struct nytp_in_slot *s)
{
    s->len = 0;
    s->status = NYTP_OK;
    if (!s->mem) { /* slots are allocated when first filled */
        s->mem = malloc(NYTP_IN_HEADROOM + NYTP_IN_BLOCK);
        if (!s->mem) {
            s->status = nytp_error_set(&s->err, NYTP_E_NOMEM, "out of memory for inflated data");
            z->done = true;
            return;
        }
    }
    z->zs.next_out = s->mem + NYTP_IN_HEADROOM;
    z->zs.avail_out = NYTP_IN_BLOCK;
    for (;;) {
        if (z->zs.avail_in == 0 && !z->input_eof) {
            if (in->fd >= 0) {
                ssize_t n = read_some(in->fd, z->zin, z->zin_cap);
                if (n < 0) {
                    s->status = nytp_error_set(&s->err, NYTP_E_IO, "read failed: %s", strerror(errno));
                    z->done = true;
                    return;
                }
                if (n == 0)
                    z->input_eof = true;
                z->zs.next_in = z->zin;
                z->zs.avail_in = (uInt)n;
            } else if (z->mem_left == 0) {
                z->input_eof = true;
            } else {
                size_t take = z->mem_left < (1u << 30) ? z->mem_left : (1u << 30);
                z->zs.next_in = (Bytef *)(uintptr_t)z->mem_next;
                z->zs.avail_in = (uInt)take;
                z->mem_next += take;
                z->mem_left -= take;
            }
        }
        uInt before = z->zs.avail_out;
        int zst = inflate(&z->zs, Z_NO_FLUSH);
        s->len += before - z->zs.avail_out;
        if (zst == Z_STREAM_END) {
            s->status = NYTP_END;
            z->done = true;
            return;
        }
        if (zst == Z_OK || (zst == Z_BUF_ERROR && !(z->zs.avail_in == 0 && z->input_eof))) {
            if (z->zs.avail_out == 0)
                return; /* the block is full */
            continue;
        }
        nytp_error *e = &s->err;
        if (zst == Z_BUF_ERROR) {
            e->offset = z->zs.total_out;
            e->inflated = true;
            s->status = nytp_error_set(e, NYTP_E_TRUNCATED,
                                       "the zlib stream stops before its end (the file was cut short)");
        } else {
            e->offset = in->deflate_start + z->zs.total_in;
            e->inflated = false;
            s->status = nytp_error_set(e, NYTP_E_FORMAT, "corrupt zlib data (%s)",
                                       z->zs.msg ? z->zs.msg : "inflate failed");
        }
        e->deflate_start = in->deflate_start;
        z->done = true;
        return;
    }
}

static void *producer_main(void *arg)
{
    nytp_in *in = arg;
    struct nytp_inflater *z = in->z;
    pthread_mutex_lock(&z->mu);
    while (!z->stop && !z->done) {
        struct nytp_in_slot *s = &z->slots[z->produced % NYTP_IN_SLOTS];
        while (!z->stop && s->state != SLOT_FREE)
            pthread_cond_wait(&z->cv, &z->mu);
        if (z->stop)
            break;
        pthread_mutex_unlock(&z->mu);
        produce(in, z, s);
        pthread_mutex_lock(&z->mu);
        s->state = SLOT_FILLED;
        z->produced++;
        pthread_cond_broadcast(&z->cv);
    }
    pthread_mutex_unlock(&z->mu);
    return NULL;
}

/* The next block, in order: waited for, or made here. */
static struct nytp_in_slot *take_slot(nytp_in *in)
{
    struct nytp_inflater *z = in->z;
    struct nytp_in_slot *s = &z->slots[z->consumed % NYTP_IN_SLOTS];
    if (z->threaded) {
        pthread_mutex_lock(&z->mu);
        while (s->state != SLOT_FILLED)
            pthread_cond_wait(&z->cv, &z->mu);
        s->state = SLOT_INUSE;
        pthread_mutex_unlock(&z->mu);
    } else {
        produce(in, z, s);
        z->produced++;
        s->state = SLOT_INUSE;
    }
    z->consumed++;
    return s;
}

static void release_slot(nytp_in *in, int idx)
{
    struct nytp_inflater *z = in->z;
    if (idx < 0)
        return;
    if (z->threaded) {
        pthread_mutex_lock(&z->mu);
        z->slots[idx].state = SLOT_FREE;
        pthread_cond_broadcast(&z->cv);
        pthread_mutex_unlock(&z->mu);
    } else {
        z->slots[idx].state = SLOT_FREE;
    }
}

/* Move the window on to the next block, keeping the unread bytes in front
 * of it. */
static int next_block(nytp_in *in, nytp_error *err)
{
    struct nytp_in_slot *s = take_slot(in);
    int idx = (int)(s - in->z->slots);
    /* Read the slot's outcome now: once released, the producer refills it. */
    int status = s->status;
    if (status < 0)
        in->zerr = s->err;
    size_t unread = in->lim - in->pos;
    if (unread <= NYTP_IN_HEADROOM) {
        uint8_t *start = s->mem + NYTP_IN_HEADROOM - unread;
        if (unread)
            memcpy(start, in->data + in->pos, unread);
        release_slot(in, in->cur_slot);
        in->cur_slot = idx;
        in->data = start;
        in->base += in->pos;
        in->pos = 0;
        in->lim = unread + s->len;
    } else {
        /* A chunk bigger than the headroom: gather it in own. */
        int st = window_to_own(in, unread + s->len, err);
        if (st < 0) {
            release_slot(in, idx);
            return st;
        }
        memcpy(in->own + in->lim, s->mem + NYTP_IN_HEADROOM, s->len);
        in->lim += s->len;
        release_slot(in, in->cur_slot);
        in->cur_slot = -1;
        release_slot(in, idx);
    }
    if (status == NYTP_END)
        in->zend = true;
    return NYTP_OK;
}

int nytp_in_fill(nytp_in *in, size_t want, nytp_error *err)
{
    while (in->lim - in->pos < want) {
        if (!in->inflating) {
            if (in->eof)
                return NYTP_END;
            int st = window_to_own(in, want < PLAIN_READ ? PLAIN_READ : want, err);
            if (st < 0)
                return st;
            ssize_t n = read_some(in->fd, in->own + in->lim, in->cap - in->lim);
            if (n < 0)
                return nytp_error_set(err, NYTP_E_IO, "read failed: %s", strerror(errno));
            if (n == 0)
                in->eof = true;
            in->lim += (size_t)n;
            continue;
        }
        if (in->zerr.status) {
            if (err)
                *err = in->zerr;
            return in->zerr.status;
        }
        if (in->zend)
            return NYTP_END;
        int st = next_block(in, err);
        if (st < 0)
            return st;
    }
    return NYTP_OK;
}

int nytp_in_start_inflate(nytp_in *in, nytp_error *err)
{
    if (in->inflating)
        return nytp_error_set(err, NYTP_E_FORMAT, "a second START_DEFLATE inside compressed data");
    struct nytp_inflater *z = calloc(1, sizeof *z);
    if (!z)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    in->z = z;
    in->deflate_start = in->base + in->pos;
    size_t rest = in->lim - in->pos;
    if (in->fd >= 0) {
        z->zin_cap = rest > ZIN_SIZE ? rest : ZIN_SIZE;
        z->zin = malloc(z->zin_cap);
        if (!z->zin) {
            stop_inflater(in);
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
        }
        if (rest)
            memcpy(z->zin, in->data + in->pos, rest);
        z->zs.next_in = z->zin;
        z->zs.avail_in = (uInt)rest;
    } else {
        z->mem_next = in->data + in->pos;
        z->mem_left = rest;
    }
    if (inflateInit(&z->zs) != Z_OK) {
        stop_inflater(in);
        return nytp_error_set(err, NYTP_E_NOMEM, "zlib inflateInit failed");
    }
    /* The window now counts inflated bytes from 0. */
    in->inflating = true;
    in->data = in->own;
    in->base = 0;
    in->pos = in->lim = 0;
    if (in->threads && pthread_mutex_init(&z->mu, NULL) == 0) {
        if (pthread_cond_init(&z->cv, NULL) == 0) {
            z->threaded = true;
            if (pthread_create(&z->thread, NULL, producer_main, in) != 0) {
                z->threaded = false; /* work on this thread instead */
                pthread_cond_destroy(&z->cv);
                pthread_mutex_destroy(&z->mu);
            }
        } else {
            pthread_mutex_destroy(&z->mu);
        }
    }
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

/* in.c — buffered byte input over a file descriptor or memory, with a
 * switch to zlib inflate part way through.
 *
 * Inflating is pipelined: a producer thread inflates the next blocks while
 * the caller decodes the current one, so reading a compressed profile takes
 * about as long as inflating it (from its second block on: a stream that
 * inflates to one block, as most small profiles do, is inflated on the
 * caller's thread).  Without a thread (it could not be made,
 * or NYTP_THREADS=0 in the environment, or nytp_in_set_threads) the same
 * producer runs on the caller's thread whenever a block is needed.
 *
 * The inflater is Intel ISA-L when the build has it (NYTP_HAVE_ISAL) and
 * NYTP_INFLATE is not "zlib": about twice as fast as zlib.  ISA-L's errors
 * say less than zlib's and are found at other input offsets, so whenever
 * it stops short of the stream's end, zlib inflates the stream again from
 * its start and has the last word (zlib_takes_over).  The one difference
 * left: ISA-L accepts incomplete Huffman codes, which zlib rejects; no
 * zlib-based writer makes them, and inflated data that uses none of the
 * missing codes and matches the adler32 is what the stream encodes. */
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
#ifdef NYTP_HAVE_ISAL
    const char *b = getenv("NYTP_INFLATE");
    in->isal = !(b && strcmp(b, "zlib") == 0);
#endif
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

int nytp_in_set_inflater(nytp_in *in, const char *name, nytp_error *err)
{
    if (strcmp(name, "zlib") == 0) {
        in->isal = false;
        return NYTP_OK;
    }
#ifdef NYTP_HAVE_ISAL
    if (strcmp(name, "isal") == 0) {
        in->isal = true;
        return NYTP_OK;
    }
#endif
    return nytp_error_set(err, NYTP_E_USAGE, "no inflater '%s' in this build", name);
}

const char *nytp_in_inflater(const nytp_in *in)
{
    return in->isal ? "isal" : "zlib";
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
    if (z->zs_live)
        inflateEnd(&z->zs);
#ifdef NYTP_HAVE_ISAL
    free(z->is);
#endif
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
    return in->data ? in->data + in->pos : in->data; /* no buffer yet: NULL, not NULL + 0 */
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

/* read() at a file position, retrying on EINTR. */
static ssize_t pread_some(int fd, void *buf, size_t len, off_t pos)
{
    for (;;) {
        ssize_t n = pread(fd, buf, len, pos);
        if (n >= 0 || errno != EINTR)
            return n;
    }
}

/* The next compressed bytes for the inflater, which has used up the last
 * ones: *avail is 0 at the end of the input.  Returns < 0 on a read error
 * (then s holds it and the producer is done). */
static int next_input(nytp_in *in, struct nytp_inflater *z, const uint8_t **next, uint32_t *avail,
                      struct nytp_in_slot *s)
{
    *next = z->zin;
    *avail = 0;
    if (in->fd >= 0) {
        ssize_t n;
        if (z->rereading) {
            n = pread_some(in->fd, z->zin, z->zin_cap, z->reread_pos);
            if (n > 0)
                z->reread_pos += n;
        } else {
            n = read_some(in->fd, z->zin, z->zin_cap);
        }
        if (n < 0) {
            s->status = nytp_error_set(&s->err, NYTP_E_IO, "read failed: %s", strerror(errno));
            z->done = true;
            return s->status;
        }
        if (n == 0)
            z->input_eof = true;
        *avail = (uint32_t)n;
    } else if (z->mem_left == 0) {
        z->input_eof = true;
        *next = z->mem_next;
    } else {
        size_t take = z->mem_left < (1u << 30) ? z->mem_left : (1u << 30);
        *next = z->mem_next;
        *avail = (uint32_t)take;
        z->mem_next += take;
        z->mem_left -= take;
    }
    return NYTP_OK;
}

/* Inflate with zlib into out[0..cap); *got says how many bytes came out.
 * Returns NYTP_OK when out is full, NYTP_END at the end of the stream, or
 * an error (also in s). */
static int zlib_step(nytp_in *in, struct nytp_inflater *z, uint8_t *out, size_t cap, size_t *got,
                     struct nytp_in_slot *s)
{
    z->zs.next_out = out;
    z->zs.avail_out = (uInt)cap;
    *got = 0;
    for (;;) {
        if (z->zs.avail_in == 0 && !z->input_eof) {
            const uint8_t *next;
            uint32_t avail;
            int st = next_input(in, z, &next, &avail, s);
            if (st < 0)
                return st;
            z->zs.next_in = (Bytef *)(uintptr_t)next;
            z->zs.avail_in = avail;
        }
        uInt before = z->zs.avail_out;
        int zst = inflate(&z->zs, Z_NO_FLUSH);
        *got += before - z->zs.avail_out;
        if (zst == Z_STREAM_END)
            return NYTP_END;
        if (zst == Z_OK || (zst == Z_BUF_ERROR && !(z->zs.avail_in == 0 && z->input_eof))) {
            if (z->zs.avail_out == 0)
                return NYTP_OK; /* out is full */
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
        return s->status;
    }
}

/* Inflate with zlib into the rest of slot s. */
static void produce_zlib(nytp_in *in, struct nytp_inflater *z, struct nytp_in_slot *s)
{
    if (s->len == NYTP_IN_BLOCK)
        return;
    size_t got;
    int st = zlib_step(in, z, s->mem + NYTP_IN_HEADROOM + s->len, NYTP_IN_BLOCK - s->len, &got, s);
    s->len += got;
    if (st == NYTP_OK)
        return;
    s->status = st;
    z->done = true;
}

#ifdef NYTP_HAVE_ISAL
/* zlib takes over from ISA-L, which stopped without the stream's proper
 * end: it inflates the stream again from its start, drops the bytes ISA-L
 * already put out (the same bytes: both decode the same deflate data) and
 * goes on from there, so statuses, messages and offsets are zlib's. */
static void zlib_takes_over(nytp_in *in, struct nytp_inflater *z, struct nytp_in_slot *s)
{
    uint64_t skip = z->isal_out - s->len;
    s->len = 0;
    z->isal = false;
    memset(&z->zs, 0, sizeof z->zs);
    if (inflateInit(&z->zs) != Z_OK) {
        s->status = nytp_error_set(&s->err, NYTP_E_NOMEM, "zlib inflateInit failed");
        z->done = true;
        return;
    }
    z->zs_live = true;
    z->input_eof = false;
    if (in->fd >= 0) {
        z->rereading = true;
        z->reread_pos = z->file_start;
    } else {
        z->mem_next = in->mem + in->deflate_start;
        z->mem_left = in->mem_len - in->deflate_start;
    }
    while (skip) {
        size_t got, cap = skip < NYTP_IN_BLOCK ? (size_t)skip : NYTP_IN_BLOCK;
        int st = zlib_step(in, z, s->mem + NYTP_IN_HEADROOM, cap, &got, s);
        skip -= got;
        if (st != NYTP_OK) { /* zlib stopped sooner */
            s->status = st;
            z->done = true;
            return;
        }
    }
    produce_zlib(in, z, s);
}

/* The 2-byte zlib header as zlib's inflate accepts it (with the 32 KiB
 * window, the only one ISA-L is asked to handle). */
static bool zlib_header_ok(const uint8_t *b)
{
    return b[0] == 0x78 && ((unsigned)b[0] << 8 | b[1]) % 31 == 0 && !(b[1] & 0x20);
}

/* Inflate with ISA-L into slot s; false when zlib has to take over. */
static bool produce_isal(nytp_in *in, struct nytp_inflater *z, struct nytp_in_slot *s)
{
    struct inflate_state *is = z->is;
    is->next_out = s->mem + NYTP_IN_HEADROOM;
    is->avail_out = NYTP_IN_BLOCK;
    int stuck = 0;
    for (;;) {
        if (is->avail_in == 0 && !z->input_eof) {
            const uint8_t *next;
            uint32_t avail;
            if (next_input(in, z, &next, &avail, s) < 0)
                return true;
            is->next_in = (uint8_t *)(uintptr_t)next;
            is->avail_in = avail;
        }
        if (z->isal_out == 0 && is->total_out == 0 && is->block_state == ISAL_BLOCK_NEW_HDR &&
            is->avail_in >= 2 && !zlib_header_ok(is->next_in))
            return false;
        uint32_t in_before = is->avail_in, out_before = is->avail_out;
        int r = isal_inflate(is);
        uint32_t got = out_before - is->avail_out;
        s->len += got;
        z->isal_out += got;
        if (r != ISAL_DECOMP_OK)
            return false;
        if (is->block_state == ISAL_BLOCK_FINISH) {
            s->status = NYTP_END;
            z->done = true;
            return true;
        }
        if (is->avail_out == 0)
            return true; /* the block is full */
        /* No progress twice in a row: the input is cut short (or ISA-L
         * will not say why it stopped); zlib finds out. */
        if (got == 0 && is->avail_in == in_before && ++stuck > 1)
            return false;
        if (got || is->avail_in != in_before)
            stuck = 0;
    }
}
#endif

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
#ifdef NYTP_HAVE_ISAL
    if (z->isal) {
        if (!produce_isal(in, z, s))
            zlib_takes_over(in, z, s);
        return;
    }
#endif
    produce_zlib(in, z, s);
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

/* The producer thread, started once the stream has outgrown its first
 * block: most profiles of a run cut in segments, or of a short program,
 * inflate to less than a block, and for them a thread of their own costs
 * more than it saves (11,520 segments of 46 to 115 KB: 13.1 s of CPU
 * without threads, 15.5 s with one per input).  Slots are produced and
 * taken in step until then, so the thread begins at the next one.  No
 * thread (it cannot be made): the work goes on here. */
static void start_producer(nytp_in *in, struct nytp_inflater *z)
{
    z->may_thread = false;
    if (pthread_mutex_init(&z->mu, NULL) != 0)
        return;
    if (pthread_cond_init(&z->cv, NULL) != 0) {
        pthread_mutex_destroy(&z->mu);
        return;
    }
    z->threaded = true;
    if (pthread_create(&z->thread, NULL, producer_main, in) != 0) {
        z->threaded = false;
        pthread_cond_destroy(&z->cv);
        pthread_mutex_destroy(&z->mu);
    }
}

/* The next block, in order: waited for, or made here. */
static struct nytp_in_slot *take_slot(nytp_in *in)
{
    struct nytp_inflater *z = in->z;
    if (z->may_thread && z->consumed >= 1 && !z->done)
        start_producer(in, z);
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
    if (!s->mem) {
        /* its memory could not be had (produce): nothing came, and the
         * window stays where it is; the caller sees in->zerr */
        release_slot(in, idx);
        return NYTP_OK;
    }
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
    const uint8_t *next = NULL;
    if (in->fd >= 0) {
        z->zin_cap = rest > ZIN_SIZE ? rest : ZIN_SIZE;
        z->zin = malloc(z->zin_cap);
        if (!z->zin) {
            stop_inflater(in);
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
        }
        if (rest)
            memcpy(z->zin, in->data + in->pos, rest);
        next = z->zin;
        /* ISA-L needs a second look at the stream if it stops early: only
         * input that can be read again (not a pipe) gets it. */
        off_t cur = in->isal ? lseek(in->fd, 0, SEEK_CUR) : -1;
        if (cur < 0 || (uint64_t)cur < rest)
            in->isal = false;
        else
            z->file_start = cur - (off_t)rest;
    } else {
        z->mem_next = in->data + in->pos;
        z->mem_left = rest;
        rest = 0;
    }
    z->isal = in->isal;
#ifdef NYTP_HAVE_ISAL
    if (z->isal) {
        z->is = malloc(sizeof *z->is);
        if (!z->is) {
            stop_inflater(in);
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
        }
        isal_inflate_init(z->is);
        z->is->crc_flag = ISAL_ZLIB;
        z->is->next_in = (uint8_t *)(uintptr_t)next;
        z->is->avail_in = (uint32_t)rest;
    }
#endif
    if (!z->isal) {
        if (inflateInit(&z->zs) != Z_OK) {
            stop_inflater(in);
            return nytp_error_set(err, NYTP_E_NOMEM, "zlib inflateInit failed");
        }
        z->zs_live = true;
        z->zs.next_in = (Bytef *)(uintptr_t)next;
        z->zs.avail_in = (uInt)rest;
    }
    /* The window now counts inflated bytes from 0. */
    in->inflating = true;
    in->data = in->own;
    in->base = 0;
    in->pos = in->lim = 0;
    z->may_thread = in->threads; /* from the second block on: see take_slot */
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

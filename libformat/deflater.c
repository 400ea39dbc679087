/* deflater.c — zlib deflate on the caller's thread or on a writer thread;
 * see deflater.h for the contract. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>
#ifdef NYTP_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "deflater.h"

#define ZBUF_SIZE (256u * 1024u)
#define MAX_BUFS (DEFLATER_QUEUE + 2) /* the caller's, the queue, the writer's */

typedef struct {
    uint8_t *buf;
    size_t cap, len;
    int flush;
} job;

struct deflater {
    z_stream zs;
#ifdef NYTP_HAVE_ISAL
    bool isal;
    struct isal_zstream is;
    uint8_t *level_buf;
#endif
    uint64_t total_in, total_out;
    uint8_t *zbuf;
    deflater_sink_fn sink;
    void *ctx;

    bool threaded;
    pid_t pid;                  /* the process the writer thread runs in */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* any change of the fields below */
    job queue[DEFLATER_QUEUE];  /* waiting, oldest at head */
    unsigned head, count;
    bool busy;                  /* the writer is deflating a job */
    bool quit;
    struct {
        uint8_t *buf;
        size_t cap;
    } spare[MAX_BUFS];          /* empty buffers for the caller */
    unsigned nspare, nbufs;     /* nbufs: buffers made, the caller's included */
    nytp_error err;             /* the first error; err.status == 0 if none */
};

static int zfail(nytp_error *err, const char *what)
{
    return nytp_error_set(err, NYTP_E_IO, "zlib %s failed", what);
}

#ifdef NYTP_HAVE_ISAL
static int run_isal(deflater *d, const uint8_t *p, size_t len, int flush, nytp_error *err)
{
    struct isal_zstream *is = &d->is;
    is->next_in = (uint8_t *)(uintptr_t)p;
    is->avail_in = (uint32_t)len;
    is->flush = flush == Z_SYNC_FLUSH ? SYNC_FLUSH : NO_FLUSH;
    is->end_of_stream = flush == Z_FINISH;
    for (;;) {
        is->next_out = d->zbuf;
        is->avail_out = ZBUF_SIZE;
        if (isal_deflate(is) != COMP_OK)
            return nytp_error_set(err, NYTP_E_IO, "ISA-L deflate failed");
        size_t have = ZBUF_SIZE - is->avail_out;
        d->total_out += have;
        if (have) {
            int st = d->sink(d->ctx, d->zbuf, have, err);
            if (st < 0)
                return st;
        }
        if (flush == Z_FINISH ? is->internal_state.state == ZSTATE_END
                              : is->avail_in == 0 && is->avail_out != 0)
            return NYTP_OK;
    }
}
#endif

/* Deflate len bytes at p with flush, handing the output to the sink. */
static int run_deflate(deflater *d, const uint8_t *p, size_t len, int flush, nytp_error *err)
{
    d->total_in += len;
#ifdef NYTP_HAVE_ISAL
    if (d->isal)
        return run_isal(d, p, len, flush, err);
#endif
    d->zs.next_in = (Bytef *)(uintptr_t)p;
    d->zs.avail_in = (uInt)len;
    for (;;) {
        d->zs.next_out = d->zbuf;
        d->zs.avail_out = ZBUF_SIZE;
        int zst = deflate(&d->zs, flush);
        if (zst == Z_STREAM_ERROR)
            return zfail(err, "deflate");
        size_t have = ZBUF_SIZE - d->zs.avail_out;
        d->total_out += have;
        if (have) {
            int st = d->sink(d->ctx, d->zbuf, have, err);
            if (st < 0)
                return st;
        }
        if (zst == Z_STREAM_END || (d->zs.avail_out != 0 && d->zs.avail_in == 0))
            return NYTP_OK;
    }
}

static void *writer_main(void *arg)
{
    deflater *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (d->count == 0 && !d->quit)
            pthread_cond_wait(&d->cv, &d->mu);
        if (d->quit)
            break;
        job j = d->queue[d->head];
        d->head = (d->head + 1) % DEFLATER_QUEUE;
        d->count--;
        d->busy = true;
        bool failed = d->err.status != 0;
        pthread_mutex_unlock(&d->mu);

        nytp_error e = {0};
        int st = failed ? NYTP_OK : run_deflate(d, j.buf, j.len, j.flush, &e);

        pthread_mutex_lock(&d->mu);
        if (st < 0 && d->err.status == 0)
            d->err = e;
        d->spare[d->nspare].buf = j.buf;
        d->spare[d->nspare].cap = j.cap;
        d->nspare++;
        d->busy = false;
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* A writer thread with every signal blocked (it inherits the mask of the
 * thread that creates it). */
static bool start_thread(deflater *d)
{
    if (pthread_mutex_init(&d->mu, NULL) != 0)
        return false;
    if (pthread_cond_init(&d->cv, NULL) != 0) {
        pthread_mutex_destroy(&d->mu);
        return false;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&d->thread, NULL, writer_main, d);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        return false;
    }
    d->pid = getpid();
    d->nbufs = 1; /* the caller's */
    return true;
}

/* ISA-L's levels are 1 (fastest) to 3; zlib's 1..9 map onto them, the
 * default 6 onto 2: level 3 took 40% more CPU for a stream 8-15% smaller
 * (merging perltidy.out with a copy: 2.19 -> 1.57 s of CPU, 15.0 -> 16.4
 * MB; Devel::NYTP's profile of perltidy: 38,389 -> 43,847 KiB). */
#ifdef NYTP_HAVE_ISAL
static int start_isal(deflater *d, int level)
{
    static const size_t buf_size[] = {0, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
                                      ISAL_DEF_LVL3_DEFAULT};
    int il = level <= 1 ? 1 : level <= 6 ? 2 : 3;
    d->level_buf = malloc(buf_size[il]);
    if (!d->level_buf)
        return NYTP_E_NOMEM;
    isal_deflate_init(&d->is);
    d->is.level = (uint32_t)il;
    d->is.level_buf = d->level_buf;
    d->is.level_buf_size = (uint32_t)buf_size[il];
    d->is.gzip_flag = IGZIP_ZLIB;
    d->isal = true;
    return NYTP_OK;
}
#endif

int deflater_start(deflater **dp, int level, const char *engine, bool threaded,
                   deflater_sink_fn sink, void *ctx, nytp_error *err)
{
    bool isal = engine && strcmp(engine, "isal") == 0;
    bool gzip = engine && strcmp(engine, "gzip") == 0; /* zlib with a gzip wrapper */
    if (engine && !isal && !gzip && strcmp(engine, "zlib") != 0)
        return nytp_error_set(err, NYTP_E_USAGE, "unknown deflater '%s'", engine);
#ifndef NYTP_HAVE_ISAL
    if (isal)
        return nytp_error_set(err, NYTP_E_USAGE, "this build has no ISA-L deflater%s", "");
#endif
    deflater *d = calloc(1, sizeof *d);
    if (!d)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    d->zbuf = malloc(ZBUF_SIZE);
    if (!d->zbuf) {
        free(d);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
#ifdef NYTP_HAVE_ISAL
    if (isal && level > 0) {
        /* level 0 (stored blocks) stays zlib's */
        if (start_isal(d, level) < 0) {
            free(d->zbuf);
            free(d);
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
        }
    } else
#endif
    if (deflateInit2(&d->zs, level, Z_DEFLATED, gzip ? 15 + 16 : 15, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(d->zbuf);
        free(d);
        return nytp_error_set(err, NYTP_E_NOMEM, "zlib deflateInit failed");
    }
    d->sink = sink;
    d->ctx = ctx;
    d->threaded = threaded && start_thread(d);
    *dp = d;
    return NYTP_OK;
}

bool deflater_threaded(const deflater *d) { return d->threaded; }

void deflater_totals(const deflater *d, uint64_t *in, uint64_t *out)
{
    *in = d->total_in;
    *out = d->total_out;
}

static void end_stream(deflater *d)
{
#ifdef NYTP_HAVE_ISAL
    if (d->isal) {
        free(d->level_buf);
        return;
    }
#endif
    deflateEnd(&d->zs);
}

int deflater_push(deflater *d, uint8_t **buf, size_t *cap, size_t len, int flush,
                  nytp_error *err)
{
    if (!d->threaded) {
        if (d->err.status == 0)
            run_deflate(d, *buf, len, flush, &d->err);
        if (d->err.status)
            *err = d->err;
        return d->err.status;
    }

    pthread_mutex_lock(&d->mu);
    while (d->count == DEFLATER_QUEUE)
        pthread_cond_wait(&d->cv, &d->mu);
    job *j = &d->queue[(d->head + d->count) % DEFLATER_QUEUE];
    j->buf = *buf;
    j->cap = *cap;
    j->len = len;
    j->flush = flush;
    d->count++;
    pthread_cond_broadcast(&d->cv);

    /* an empty buffer to go on with: a spare one, a new one while there
     * are fewer than MAX_BUFS (if malloc fails, the one just queued comes
     * back), else wait for the writer to free one */
    for (;;) {
        if (d->nspare) {
            d->nspare--;
            *buf = d->spare[d->nspare].buf;
            *cap = d->spare[d->nspare].cap;
            break;
        }
        if (d->nbufs < MAX_BUFS) {
            uint8_t *nb = malloc(*cap);
            if (nb) {
                d->nbufs++;
                *buf = nb;
                break;
            }
        }
        pthread_cond_wait(&d->cv, &d->mu);
    }
    if (flush != Z_NO_FLUSH)
        while (d->count || d->busy)
            pthread_cond_wait(&d->cv, &d->mu);
    int st = d->err.status;
    if (st)
        *err = d->err;
    pthread_mutex_unlock(&d->mu);
    return st;
}

void deflater_free(deflater *d)
{
    if (!d)
        return;
    if (d->threaded && d->pid != getpid()) {
        /* a child after fork: the writer thread and whatever it was doing
         * stayed in the parent; the lock and zlib's state may be
         * mid-change, so only the idle buffers are released */
        for (unsigned i = 0; i < d->nspare; i++)
            free(d->spare[i].buf);
        for (unsigned i = 0; i < d->count; i++)
            free(d->queue[(d->head + i) % DEFLATER_QUEUE].buf);
        free(d->zbuf);
        free(d);
        return;
    }
    if (d->threaded) {
        pthread_mutex_lock(&d->mu);
        d->quit = true;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->thread, NULL);
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        for (unsigned i = 0; i < d->nspare; i++)
            free(d->spare[i].buf);
        for (unsigned i = 0; i < d->count; i++)
            free(d->queue[(d->head + i) % DEFLATER_QUEUE].buf);
    }
    end_stream(d);
    free(d->zbuf);
    free(d);
}

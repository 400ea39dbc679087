/* deflater.c — zlib deflate on the caller's thread or on a writer thread;
 * see deflater.h for the contract. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>

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

/* Deflate len bytes at p with flush, handing the output to the sink. */
static int run_deflate(deflater *d, const uint8_t *p, size_t len, int flush, nytp_error *err)
{
    d->zs.next_in = (Bytef *)(uintptr_t)p;
    d->zs.avail_in = (uInt)len;
    for (;;) {
        d->zs.next_out = d->zbuf;
        d->zs.avail_out = ZBUF_SIZE;
        int zst = deflate(&d->zs, flush);
        if (zst == Z_STREAM_ERROR)
            return zfail(err, "deflate");
        size_t have = ZBUF_SIZE - d->zs.avail_out;
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

int deflater_start(deflater **dp, int level, bool threaded, deflater_sink_fn sink, void *ctx,
                   nytp_error *err)
{
    deflater *d = calloc(1, sizeof *d);
    if (!d)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    d->zbuf = malloc(ZBUF_SIZE);
    if (!d->zbuf) {
        free(d);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    if (deflateInit2(&d->zs, level, Z_DEFLATED, 15, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
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

void deflater_totals(const deflater *d, unsigned long *in, unsigned long *out)
{
    *in = d->zs.total_in;
    *out = d->zs.total_out;
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
    deflateEnd(&d->zs);
    free(d->zbuf);
    free(d);
}

/* returns.c — the call tree and the duration histograms of 'nytp
 * html' built on a second thread while the model loads.
 *
 * Both are fed by the SUB_RETURN events only (1.26 million of them in
 * perltidy.out's 29 million chunks) and hash each event's sub name; the
 * loading thread is busy decoding and summing statements, while the
 * other core only inflates.  So the loading thread copies each event it
 * is given (depth, times, name bytes) into a batch, and a worker thread
 * takes the batches in order and adds them to the tree and the
 * histograms, which nobody else touches until html_returns_finish joins
 * it.  The ticks_per_sec attribute and the end of an input travel in
 * the same batches, so the tree sees everything in the order it came.
 *
 * With NYTP_THREADS=0 (as for the reader) there is no worker: every
 * event is added at once, on the loading thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "nytp/calltree.h"

#define BATCH_BYTES (256u * 1024u)
#define N_BATCHES 4u /* the worker's and the loader's, with room to spare */

enum rec_kind { REC_RETURN, REC_RETURN_UTF8, REC_ATTRIBUTE, REC_END_INPUT };

/* One event in a batch, followed by its bytes (name; or key then value)
 * and padding to 8 bytes. */
typedef struct rec {
    uint32_t kind, depth;
    uint32_t len, len2;       /* name; ATTRIBUTE: key and value */
    double incl, excl;
} rec;

typedef struct batch {
    unsigned char *buf;
    size_t len;
} batch;

struct html_returns {
    nytp_calltree *t;         /* may be NULL: durations only */
    html_durations *d;        /* may be NULL: tree only */
    bool threaded;
    int status;               /* NYTP_OK, or the first failure (worker's own until joined) */

    /* the worker's */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t data, space;
    batch b[N_BATCHES];
    uint32_t fill;            /* the batch the loader fills */
    uint32_t take;            /* the batch the worker takes next */
    uint32_t handed;          /* batches handed over and not yet done (lock) */
    bool done;                /* no more batches (lock) */
    bool failed;              /* the worker failed (lock) */
};

static int add_return(html_returns *h, uint32_t depth, double incl, double excl, nytp_str name)
{
    if (!h->t)
        return h->d ? html_durations_add(h->d, name.ptr, name.len, incl) : NYTP_OK;
    if (nytp_calltree_add_return(h->t, depth, incl, excl, name) < 0)
        return NYTP_E_NOMEM;
    if (!h->d)
        return NYTP_OK;
    /* The tree found the name's id: the durations take it as the key,
     * unless the tree normalised the name (eval sequence numbers, always
     * after a '('), when several names share an id. */
    if (memchr(name.ptr, '(', name.len))
        return html_durations_add(h->d, name.ptr, name.len, incl);
    return html_durations_add_key(h->d, nytp_calltree_last_name(h->t), name.ptr, name.len, incl);
}

static int add_attribute(html_returns *h, nytp_str key, nytp_str value)
{
    if (!h->t)
        return NYTP_OK;
    nytp_chunk c;
    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_ATTRIBUTE;
    c.u.kv.key = key;
    c.u.kv.value = value;
    return nytp_calltree_add_chunk(h->t, &c);
}

static int end_input(html_returns *h)
{
    return h->t && nytp_calltree_end_input(h->t) < 0 ? NYTP_E_NOMEM : NYTP_OK;
}

static size_t padded(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Everything in one batch, in order. */
static int run_batch(html_returns *h, const batch *b)
{
    for (size_t at = 0; at < b->len;) {
        rec r;
        memcpy(&r, b->buf + at, sizeof r);
        const char *bytes = (const char *)b->buf + at + sizeof r;
        at += sizeof r + padded((size_t)r.len + r.len2);
        int st;
        switch (r.kind) {
        case REC_RETURN:
        case REC_RETURN_UTF8:
            st = add_return(h, r.depth, r.incl, r.excl,
                            (nytp_str){bytes, r.len, r.kind == REC_RETURN_UTF8});
            break;
        case REC_ATTRIBUTE:
            st = add_attribute(h, (nytp_str){bytes, r.len, false}, (nytp_str){bytes + r.len, r.len2, false});
            break;
        default: st = end_input(h); break;
        }
        if (st < 0)
            return st;
    }
    return NYTP_OK;
}

static void *worker_main(void *arg)
{
    html_returns *h = arg;
    bool failed = false;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!h->handed && !h->done)
            pthread_cond_wait(&h->data, &h->lock);
        if (!h->handed)
            break;
        pthread_mutex_unlock(&h->lock);
        /* after a failure the batches are only taken, so the loader never waits */
        if (!failed && run_batch(h, &h->b[h->take]) < 0)
            failed = true;
        h->take = (h->take + 1) % N_BATCHES;
        pthread_mutex_lock(&h->lock);
        h->handed--;
        h->failed = failed;
        pthread_cond_signal(&h->space);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

int html_returns_new(html_returns **hp, nytp_calltree *t, html_durations *d)
{
    html_returns *h = calloc(1, sizeof *h);
    *hp = NULL;
    if (!h)
        return NYTP_E_NOMEM;
    h->t = t;
    h->d = d;
    const char *threads = getenv("NYTP_THREADS");
    h->threaded = !(threads && strcmp(threads, "0") == 0);
    if (h->threaded) {
        for (uint32_t i = 0; i < N_BATCHES; i++)
            if (!(h->b[i].buf = malloc(BATCH_BYTES)))
                h->threaded = false;
        if (h->threaded) {
            pthread_mutex_init(&h->lock, NULL);
            pthread_cond_init(&h->data, NULL);
            pthread_cond_init(&h->space, NULL);
            if (pthread_create(&h->thread, NULL, worker_main, h) != 0) {
                pthread_mutex_destroy(&h->lock);
                pthread_cond_destroy(&h->data);
                pthread_cond_destroy(&h->space);
                h->threaded = false;
            }
        }
        if (!h->threaded) /* no memory or no thread: the work is done here */
            for (uint32_t i = 0; i < N_BATCHES; i++) {
                free(h->b[i].buf);
                h->b[i].buf = NULL;
            }
    }
    *hp = h;
    return NYTP_OK;
}

/* Hand the filled batch over and take the next free one. */
static int hand_over(html_returns *h)
{
    pthread_mutex_lock(&h->lock);
    h->handed++;
    pthread_cond_signal(&h->data);
    while (h->handed == N_BATCHES)
        pthread_cond_wait(&h->space, &h->lock);
    bool failed = h->failed;
    pthread_mutex_unlock(&h->lock);
    h->fill = (h->fill + 1) % N_BATCHES;
    h->b[h->fill].len = 0;
    return failed ? NYTP_E_NOMEM : NYTP_OK;
}

/* Room for a record of n bytes after it in the batch being filled; NULL:
 * out of memory (the worker failed, or a record larger than any batch). */
static unsigned char *reserve(html_returns *h, size_t n)
{
    size_t need = sizeof(rec) + padded(n);
    if (need > BATCH_BYTES) { /* a name of more than 256 KiB: its own buffer */
        batch *b = &h->b[h->fill];
        if (b->len && hand_over(h) < 0)
            return NULL;
        b = &h->b[h->fill];
        unsigned char *big = realloc(b->buf, need);
        if (!big)
            return NULL;
        b->buf = big;
        b->len = need;
        return big;
    }
    batch *b = &h->b[h->fill];
    if (b->len + need > BATCH_BYTES) {
        if (hand_over(h) < 0)
            return NULL;
        b = &h->b[h->fill];
    }
    unsigned char *at = b->buf + b->len;
    b->len += need;
    return at;
}

static int queue(html_returns *h, const rec *r, const char *a, const char *b)
{
    unsigned char *at = reserve(h, (size_t)r->len + r->len2);
    if (!at)
        return NYTP_E_NOMEM;
    memcpy(at, r, sizeof *r);
    if (r->len)
        memcpy(at + sizeof *r, a, r->len);
    if (r->len2)
        memcpy(at + sizeof *r + r->len, b, r->len2);
    return NYTP_OK;
}

int html_returns_add(html_returns *h, const nytp_chunk *c)
{
    if (c->tag == NYTP_TAG_SUB_RETURN) {
        if (!h->threaded)
            return add_return(h, c->u.sub_return.depth, c->u.sub_return.incl, c->u.sub_return.excl,
                              c->u.sub_return.name);
        rec r = {c->u.sub_return.name.utf8 ? REC_RETURN_UTF8 : REC_RETURN, c->u.sub_return.depth,
                 c->u.sub_return.name.len, 0, c->u.sub_return.incl, c->u.sub_return.excl};
        return queue(h, &r, c->u.sub_return.name.ptr, NULL);
    }
    if (c->tag == NYTP_TAG_ATTRIBUTE) {
        if (!h->t)
            return NYTP_OK;
        if (!h->threaded)
            return add_attribute(h, c->u.kv.key, c->u.kv.value);
        rec r = {REC_ATTRIBUTE, 0, c->u.kv.key.len, c->u.kv.value.len, 0, 0};
        return queue(h, &r, c->u.kv.key.ptr, c->u.kv.value.ptr);
    }
    return NYTP_OK;
}

int html_returns_end_input(html_returns *h)
{
    if (!h->t)
        return NYTP_OK;
    if (!h->threaded)
        return end_input(h);
    rec r = {REC_END_INPUT, 0, 0, 0, 0, 0};
    return queue(h, &r, NULL, NULL);
}

int html_returns_finish(html_returns *h)
{
    if (!h->threaded)
        return h->status;
    pthread_mutex_lock(&h->lock);
    if (h->b[h->fill].len)
        h->handed++; /* the last batch: there is room for it (see hand_over) */
    h->done = true;
    pthread_cond_signal(&h->data);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->thread, NULL);
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->data);
    pthread_cond_destroy(&h->space);
    for (uint32_t i = 0; i < N_BATCHES; i++) {
        free(h->b[i].buf);
        h->b[i].buf = NULL;
    }
    h->threaded = false;
    if (h->failed)
        h->status = NYTP_E_NOMEM;
    return h->status;
}

void html_returns_free(html_returns *h)
{
    if (!h)
        return;
    html_returns_finish(h);
    free(h);
}

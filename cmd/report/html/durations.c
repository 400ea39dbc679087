/* durations.c — per-sub distribution of call durations in 'nytp
 * html': every SUB_RETURN event (one per call, with calls=1 or more)
 * adds its inclusive time to a histogram of its sub, with log-scale
 * buckets (8 per doubling, so a percentile read from it is within 9% of
 * the exact one); the sub's headline shows the histogram and p50, p90,
 * p99 and the exact maximum.  Memory: one histogram per distinct sub name,
 * never per call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"
#include "html.h"

#define PER_OCTAVE 8
#define NBUCKETS (48 * PER_OCTAVE + 1) /* bucket 0: zero ticks; up to 2^48 ticks */

struct html_dist {
    uint64_t n;
    double max;
    uint32_t b[NBUCKETS];
};

struct html_durations {
    strmap names;             /* distinct sub names -> index in dists */
    html_dist **dists;
    uint32_t cap_dists;
    html_dist **by_key;       /* by the caller's key of a name (html_durations_add_key) */
    uint32_t n_by_key;
};

/* Names the call tree has an id for are looked up once per name
 * (html_durations_add_key), not per call. */

int html_durations_new(html_durations **d)
{
    *d = calloc(1, sizeof **d);
    return *d ? NYTP_OK : NYTP_E_NOMEM;
}

void html_durations_free(html_durations *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; i < d->names.n; i++)
        free(d->dists[i]);
    free(d->dists);
    strmap_release(&d->names);
    free(d->by_key);
    free(d);
}

static void add_to(html_dist *h, double ticks);

/* The histogram of name, made if new; NULL: out of memory. */
static html_dist *dist_of(html_durations *d, const char *name, uint32_t len)
{
    uint32_t id = strmap_find(&d->names, name, len);
    if (id != NYTP_NONE)
        return d->dists[id];
    html_dist *h = NULL;
    if (!cli_grow((void **)&d->dists, (size_t)d->names.n + 1, &d->cap_dists, sizeof *d->dists) ||
        !(h = calloc(1, sizeof *h)) || (id = strmap_add(&d->names, name, len, false, NULL)) == NYTP_NONE) {
        free(h);
        return NULL;
    }
    d->dists[id] = h;
    return h;
}

int html_durations_add(html_durations *d, const char *name, uint32_t len, double ticks)
{
    html_dist *h = dist_of(d, name, len);
    if (!h)
        return NYTP_E_NOMEM;
    add_to(h, ticks);
    return NYTP_OK;
}

int html_durations_add_key(html_durations *d, uint32_t key, const char *name, uint32_t len, double ticks)
{
    if (key < d->n_by_key && d->by_key[key]) {
        add_to(d->by_key[key], ticks);
        return NYTP_OK;
    }
    html_dist *h = dist_of(d, name, len);
    if (!h)
        return NYTP_E_NOMEM;
    if (key >= d->n_by_key) {
        uint64_t n = d->n_by_key ? d->n_by_key : 256;
        while (n <= key)
            n *= 2;
        html_dist **nk = n > UINT32_MAX ? NULL : realloc(d->by_key, (size_t)n * sizeof *nk);
        if (!nk)
            return NYTP_E_NOMEM;
        memset(nk + d->n_by_key, 0, (size_t)(n - d->n_by_key) * sizeof *nk);
        d->by_key = nk;
        d->n_by_key = (uint32_t)n;
    }
    d->by_key[key] = h;
    add_to(h, ticks);
    return NYTP_OK;
}

static void add_to(html_dist *h, double ticks)
{
    uint32_t b = 0;
    if (ticks >= 1) { /* also false for NaN */
        double l = log2(ticks) * PER_OCTAVE;
        b = l >= NBUCKETS - 2 ? NBUCKETS - 1 : 1 + (uint32_t)l;
    }
    h->b[b]++;
    h->n++;
    if (ticks > h->max)
        h->max = ticks;
}

const html_dist *html_durations_get(const html_durations *d, const char *name, uint32_t len)
{
    if (!d)
        return NULL;
    uint32_t id = strmap_find(&d->names, name, len);
    return id == NYTP_NONE ? NULL : d->dists[id];
}

uint64_t html_dist_calls(const html_dist *h)
{
    return h ? h->n : 0;
}

/* The lower bound of bucket b, in ticks. */
static double bucket_low(uint32_t b)
{
    return b == 0 ? 0 : exp2((double)(b - 1) / PER_OCTAVE);
}

/* The q-quantile (0 < q <= 1), in ticks: the middle of the bucket it falls
 * in (geometric), at most the maximum. */
static double quantile(const html_dist *h, double q)
{
    uint64_t want = (uint64_t)ceil(q * (double)h->n), seen = 0;
    if (want < 1)
        want = 1;
    for (uint32_t b = 0; b < NBUCKETS; b++) {
        seen += h->b[b];
        if (seen >= want) {
            double v = b == 0 ? 0 : exp2(((double)b - 0.5) / PER_OCTAVE);
            return v > h->max ? h->max : v;
        }
    }
    return h->max;
}

void html_dist_write(hw *w, const html_dist *h, double ticks_per_sec)
{
    if (!h || h->n < 2 || !(ticks_per_sec > 0))
        return;
    uint32_t lo = 0, hi = 0;
    while (lo < NBUCKETS && !h->b[lo])
        lo++;
    for (uint32_t b = 0; b < NBUCKETS; b++)
        if (h->b[b])
            hi = b;
    /* bars of 2 buckets (4 per doubling), at most 64 of them */
    uint32_t per = 2;
    while ((hi - lo) / per + 1 > 64)
        per *= 2;
    lo -= lo % per;
    uint32_t nbars = (hi - lo) / per + 1;
    uint64_t bars[64] = {0}, top = 0;
    for (uint32_t b = lo; b <= hi; b++)
        bars[(b - lo) / per] += h->b[b];
    for (uint32_t i = 0; i < nbars; i++)
        if (bars[i] > top)
            top = bars[i];
    hw_s(w, "<div class=dist><svg class=hist width=");
    hw_u(w, nbars * 4 + 2);
    hw_s(w, " height=26 viewBox=\"0 0 ");
    hw_u(w, nbars * 4 + 2);
    hw_s(w, " 26\" role=img aria-label=\"distribution of call durations\"><title>");
    hw_count(w, h->n);
    hw_s(w, " calls by inclusive time, log scale: ");
    hw_dur(w, bucket_low(lo) / ticks_per_sec);
    hw_s(w, " to ");
    hw_dur(w, h->max / ticks_per_sec);
    hw_s(w, " (bar height: square root of the count)</title>"
            "<line x1=0 y1=25.5 x2=");
    hw_u(w, nbars * 4 + 2);
    hw_s(w, " y2=25.5 />");
    for (uint32_t i = 0; i < nbars; i++) {
        if (!bars[i])
            continue;
        char b[160];
        double hgt = 24.0 * sqrt((double)bars[i] / (double)top);
        if (hgt < 1)
            hgt = 1;
        snprintf(b, sizeof b, "<rect x=%u y=%.1f width=3 height=%.1f />", 1 + i * 4, 25 - hgt, hgt);
        hw_s(w, b);
    }
    hw_s(w, "</svg> <span class=pct>");
    static const double qs[] = {0.5, 0.9, 0.99};
    static const char *qn[] = {"p50 ", ", p90 ", ", p99 "};
    for (int i = 0; i < 3; i++) {
        hw_s(w, qn[i]);
        hw_dur(w, quantile(h, qs[i]) / ticks_per_sec);
    }
    hw_s(w, ", max ");
    hw_dur(w, h->max / ticks_per_sec);
    hw_s(w, "</span></div>");
}

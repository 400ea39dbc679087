/* flame_diff.c — the differential flame graph (see flame_diff.h): BASE's
 * call paths as a trie in a strmap, NEW's tree walked twice (the largest
 * change first, then the colours) through flame_svg.c's style hook. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flame_diff.h"
#include "fmt.h"
#include "strmap.h"
#include "term.h"

struct flame_diff {
    flame_diff_opts o;
    /* BASE's call paths: key (parent node, name) -> node */
    strmap m;
    double *incl;           /* per node: time along the path and below (ticks) */
    uint32_t cap;
    uint32_t *at;           /* per depth: the node of the path being walked */
    uint32_t cap_at;
    char *key;
    size_t cap_key;
    int side;               /* whose names path_key maps */
    double tps[2];
    double max_delta;       /* largest |change| of a frame, seconds */
    bool tested;            /* o.cmp has tests: colour significant changes only */
    bool oom;
};

/* The p-value of the change of the exclusive time of the sub named by a
 * NEW frame (NAN: no test, or the comparison has no such sub). */
static double frame_p(flame_diff *P, nytp_str name)
{
    const comparison *C = P->o.cmp;
    size_t len;
    const char *key = pathmap_sub_key(C->paths, 1, name.ptr, name.len, &len);
    if (!key) {
        P->oom = true;
        return NAN;
    }
    uint32_t r = len <= UINT32_MAX - 1 ? strmap_find(&C->subs.keys, key, (uint32_t)len) : NYTP_NONE;
    if (r == NYTP_NONE)
        return NAN;
    return cmp_test(C, cmp_vals(C, &C->subs, r, CMP_TIME), CMP_TIME);
}

static bool significant(flame_diff *P, const nytp_calltree_visit *v, double *p)
{
    *p = NAN;
    if (!P->tested)
        return true;
    *p = frame_p(P, v->path[v->depth - 1]);
    return *p < P->o.alpha;
}

/* The key of (parent, name) with name matched across checkouts. */
static const char *path_key(flame_diff *P, uint32_t parent, nytp_str name, size_t *len)
{
    const char *s = name.ptr;
    size_t sl = name.len;
    if (P->o.paths && !(s = pathmap_sub_key(P->o.paths, P->side, name.ptr, name.len, &sl))) {
        P->oom = true;
        return NULL;
    }
    size_t need = 4 + sl;
    if (!cli_grow_size((void **)&P->key, need, &P->cap_key, 1)) {
        P->oom = true;
        return NULL;
    }
    memcpy(P->key, &parent, 4);
    memcpy(P->key + 4, s, sl);
    *len = need;
    return P->key;
}

static int add_base_path(void *ctx, const nytp_calltree_visit *v)
{
    flame_diff *P = ctx;
    if (!cli_grow_zeroed((void **)&P->at, v->depth + 1, &P->cap_at, sizeof *P->at)) {
        P->oom = true;
        return NYTP_E_NOMEM;
    }
    uint32_t parent = v->depth > 1 ? P->at[v->depth - 1] : NYTP_NONE;
    size_t len;
    const char *key = path_key(P, parent, v->path[v->depth - 1], &len);
    uint32_t i = key && len <= UINT32_MAX - 1 ? strmap_add(&P->m, key, (uint32_t)len, false, NULL)
                                              : NYTP_NONE;
    if (i == NYTP_NONE || !cli_grow_zeroed((void **)&P->incl, i + 1, &P->cap, sizeof *P->incl)) {
        P->oom = true;
        return NYTP_E_NOMEM;
    }
    P->incl[i] = v->total_excl;
    P->at[v->depth] = i;
    return 0;
}

static double per_run(double runs)
{
    return runs > 0 ? runs : 1;
}

/* The change of a NEW node against BASE, in seconds (per run, NEW
 * scaled), into *change; false when out of memory.  A time that is NaN,
 * infinite or negative (a damaged profile) counts as 0, as flame --svg
 * draws it, so the change is always a finite number. */
static bool node_change(flame_diff *P, const nytp_calltree_visit *v, double *base, bool *in_base,
                        double *change)
{
    if (!cli_grow_zeroed((void **)&P->at, v->depth + 1, &P->cap_at, sizeof *P->at))
        return false;
    uint32_t parent = v->depth > 1 ? P->at[v->depth - 1] : NYTP_NONE;
    uint32_t i = NYTP_NONE;
    if (v->depth == 1 || parent != NYTP_NONE) {
        size_t len;
        const char *key = path_key(P, parent, v->path[v->depth - 1], &len);
        if (!key)
            return false;
        i = len <= UINT32_MAX - 1 ? strmap_find(&P->m, key, (uint32_t)len) : NYTP_NONE;
    }
    P->at[v->depth] = i;
    *in_base = i != NYTP_NONE;
    *base = i != NYTP_NONE && P->tps[0] > 0
                ? fmt_time_scaled(P->incl[i], 1 / (P->tps[0] * per_run(P->o.runs[0])))
                : 0;
    double now = P->tps[1] > 0 ? fmt_time_scaled(v->total_excl, P->o.new_scale /
                                                                    (P->tps[1] * per_run(P->o.runs[1])))
                               : 0;
    *change = now - *base;
    return true;
}

static int measure(void *ctx, const nytp_calltree_visit *v)
{
    flame_diff *P = ctx;
    double base, d;
    bool in_base;
    if (!node_change(P, v, &base, &in_base, &d))
        return NYTP_E_NOMEM;
    double p;
    if (in_base && !significant(P, v, &p))
        return P->oom ? NYTP_E_NOMEM : 0; /* drawn neutral: not on the scale */
    if (fabs(d) > P->max_delta)
        P->max_delta = fabs(d);
    return 0;
}

static int style(void *ctx, const nytp_calltree_visit *v, long *rgb, char *note, size_t size)
{
    flame_diff *P = ctx;
    double base, now, d;
    bool in_base = true;
    if (!v) {
        base = fmt_time_scaled(nytp_calltree_total_excl(P->o.tree[0]),
                               1 / ((P->tps[0] > 0 ? P->tps[0] : 1) * per_run(P->o.runs[0])));
        now = fmt_time_scaled(nytp_calltree_total_excl(P->o.tree[1]),
                              P->o.new_scale / ((P->tps[1] > 0 ? P->tps[1] : 1) * per_run(P->o.runs[1])));
        d = now - base;
    } else {
        if (!node_change(P, v, &base, &in_base, &d))
            return NYTP_E_NOMEM;
        now = base + d;
    }
    char bs[40], ds[40], pc[40];
    *term_dur(bs, base, false) = 0;
    *term_dur(ds, d, true) = 0;
    double pct = base > 0 ? 100.0 * (now - base) / base : now > 0 ? INFINITY : NAN;
    *term_pct(pc, pct, true) = 0;
    if (!in_base) {
        snprintf(note, size, "not in BASE");
        *rgb = 0xD21E1E;
        return 0;
    }
    double p;
    if (v && !significant(P, v, &p)) {
        if (P->oom)
            return NYTP_E_NOMEM;
        if (isnan(p))
            snprintf(note, size, "%s (%s) against %s in BASE; not tested", ds, pc, bs);
        else
            snprintf(note, size, "%s (%s) against %s in BASE; not significant (p=%.2g)", ds, pc, bs, p);
        *rgb = 0xEBEBEB;
        return 0;
    }
    snprintf(note, size, "%s (%s) against %s in BASE", ds, pc, bs);
    /* white for no change, to full red or blue at the largest change */
    double f = P->max_delta > 0 ? fabs(d) / P->max_delta : 0;
    if (!(f <= 1)) /* also NaN */
        f = 1;
    f = sqrt(f); /* small changes stay visible */
    int fade = (int)lround(235 - 200 * f);
    if (d > 0)
        *rgb = (245L << 16) | ((long)fade << 8) | fade;
    else if (d < 0)
        *rgb = ((long)fade << 16) | ((long)fade << 8) | 245L;
    else
        *rgb = 0xEBEBEB;
    return 0;
}

int flame_diff_new(flame_diff **dp, const flame_diff_opts *o)
{
    flame_diff *P = calloc(1, sizeof *P);
    *dp = P;
    if (!P)
        return NYTP_E_NOMEM;
    P->o = *o;
    if (!(P->o.new_scale > 0))
        P->o.new_scale = 1;
    if (!(P->o.alpha > 0))
        P->o.alpha = 0.05;
    P->tested = o->cmp && o->cmp->stats;
    for (int k = 0; k < 2; k++) {
        P->tps[k] = o->ticks_per_sec[k] > 0 ? o->ticks_per_sec[k] : nytp_calltree_ticks_per_sec(o->tree[k]);
    }
    P->side = 0;
    int st = nytp_calltree_walk(o->tree[0], 0, add_base_path, P);
    if (!st && P->oom)
        st = NYTP_E_NOMEM;
    P->side = 1;
    if (!st)
        st = nytp_calltree_walk(o->tree[1], 0, measure, P);
    if (!st && P->oom)
        st = NYTP_E_NOMEM;
    return st < 0 ? st : st ? NYTP_E_NOMEM : NYTP_OK;
}

void flame_diff_style(flame_diff *P, flame_svg_opts *fo)
{
    fo->style_fn = style;
    fo->style_ctx = P;
    fo->subtitle_note = P->tested ? (P->o.normalized
                                         ? "NEW scaled to BASE's total; red: slower than BASE, blue: "
                                           "faster, grey: no significant change of the sub"
                                         : "sized by NEW; red: slower than BASE, blue: faster, grey: no "
                                           "significant change of the sub")
                        : P->o.normalized ? "NEW scaled to BASE's total; red: slower than BASE, blue: faster"
                                          : "sized by NEW; red: slower than BASE, blue: faster";
}

void flame_diff_free(flame_diff *P)
{
    if (!P)
        return;
    strmap_release(&P->m);
    free(P->incl);
    free(P->at);
    free(P->key);
    free(P);
}

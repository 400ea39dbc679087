/* diff_svg.c — 'nytp diff --svg': the differential flame graph, NEW's
 * call tree drawn with flame_svg.c and each frame coloured by how its
 * time changed against BASE's same path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame_svg.h"
#include "fmt.h"
#include "diff_impl.h"

/* ---- the differential flame graph --------------------------------------------------- */

/* BASE's call paths as a trie in a map: key (parent node, name) -> node. */
typedef struct paths {
    strmap m;
    double *incl;           /* per node: time along the path and below (ticks) */
    uint32_t cap;
    uint32_t *at;           /* per depth: the node of the path being walked */
    uint32_t cap_at;
    char *key;
    size_t cap_key;
    bool oom;
} paths;

static const char *path_key(paths *P, uint32_t parent, nytp_str name, size_t *len)
{
    size_t need = 4 + name.len;
    if (need > P->cap_key) {
        char *b = realloc(P->key, need);
        if (!b) {
            P->oom = true;
            return NULL;
        }
        P->key = b;
        P->cap_key = need;
    }
    memcpy(P->key, &parent, 4);
    memcpy(P->key + 4, name.ptr, name.len);
    *len = need;
    return P->key;
}

static bool paths_at(paths *P, uint32_t depth)
{
    return diff_grow_rows((void **)&P->at, &P->cap_at, depth + 1, sizeof *P->at);
}

static int add_base_path(void *ctx, const nytp_calltree_visit *v)
{
    paths *P = ctx;
    if (!paths_at(P, v->depth)) {
        P->oom = true;
        return NYTP_E_NOMEM;
    }
    uint32_t parent = v->depth > 1 ? P->at[v->depth - 1] : NYTP_NONE;
    size_t len;
    const char *key = path_key(P, parent, v->path[v->depth - 1], &len);
    uint32_t i = key ? diff_bmap_find(&P->m, key, len, true, NULL, &P->oom) : NYTP_NONE;
    if (i == NYTP_NONE || !diff_grow_rows((void **)&P->incl, &P->cap, i + 1, sizeof *P->incl))
        return NYTP_E_NOMEM;
    P->incl[i] = v->total_excl;
    P->at[v->depth] = i;
    return 0;
}

typedef struct styler {
    diff *D;
    paths *P;
    double base_tps, new_tps;
    double max_delta;       /* largest |change| of a frame, seconds */
    bool measuring;         /* first pass: only find max_delta */
    uint32_t *at;           /* per depth: BASE's node, or NYTP_NONE */
    uint32_t cap_at;
} styler;

/* The change of a NEW node against BASE, in seconds (NEW scaled), into
 * *change; false when out of memory.  A time that is NaN, infinite or
 * negative (a damaged profile) counts as 0, as flame --svg draws it, so
 * the change is always a finite number. */
static bool node_change(styler *S, const nytp_calltree_visit *v, double *base, bool *in_base,
                        double *change)
{
    if (!diff_grow_rows((void **)&S->at, &S->cap_at, v->depth + 1, sizeof *S->at))
        return false;
    uint32_t parent = v->depth > 1 ? S->at[v->depth - 1] : NYTP_NONE;
    uint32_t i = NYTP_NONE;
    if (v->depth == 1 || parent != NYTP_NONE) {
        size_t len;
        const char *key = path_key(S->P, parent, v->path[v->depth - 1], &len);
        if (key)
            i = diff_bmap_find(&S->P->m, key, len, false, NULL, &S->P->oom);
    }
    S->at[v->depth] = i;
    *in_base = i != NYTP_NONE;
    *base = i != NYTP_NONE && S->base_tps > 0 ? fmt_time_scaled(S->P->incl[i], 1 / S->base_tps) : 0;
    double now = S->new_tps > 0 ? fmt_time_scaled(v->total_excl, S->D->scale / S->new_tps) : 0;
    *change = now - *base;
    return true;
}

static int measure(void *ctx, const nytp_calltree_visit *v)
{
    styler *S = ctx;
    double base;
    bool in_base;
    double d;
    if (!node_change(S, v, &base, &in_base, &d))
        return NYTP_E_NOMEM;
    if (fabs(d) > S->max_delta)
        S->max_delta = fabs(d);
    return 0;
}

static int style(void *ctx, const nytp_calltree_visit *v, long *rgb, char *note, size_t size)
{
    styler *S = ctx;
    diff *D = S->D;
    double base, now, d;
    bool in_base = true;
    if (!v) {
        base = fmt_time_scaled(nytp_calltree_total_excl(D->s[0].t),
                               1 / (S->base_tps > 0 ? S->base_tps : 1));
        now = fmt_time_scaled(nytp_calltree_total_excl(D->s[1].t),
                              D->scale / (S->new_tps > 0 ? S->new_tps : 1));
        d = now - base;
    } else {
        if (!node_change(S, v, &base, &in_base, &d))
            return NYTP_E_NOMEM;
        now = base + d;
    }
    char bs[40], ds[40], pc[40];
    *term_dur(bs, base, false) = 0;
    *term_dur(ds, d, true) = 0;
    *term_pct(pc, diff_pct_change(base, now), true) = 0;
    if (!in_base) {
        snprintf(note, size, "not in BASE");
        *rgb = 0xD21E1E;
        return 0;
    }
    snprintf(note, size, "%s (%s) against %s in BASE", ds, pc, bs);
    /* white for no change, to full red or blue at the largest change */
    double f = S->max_delta > 0 ? fabs(d) / S->max_delta : 0;
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

int diff_write_svg(diff *D, nytp_out *out)
{
    paths P;
    memset(&P, 0, sizeof P);
    styler S;
    memset(&S, 0, sizeof S);
    S.D = D;
    S.P = &P;
    S.base_tps = nytp_calltree_ticks_per_sec(D->s[0].t);
    S.new_tps = nytp_calltree_ticks_per_sec(D->s[1].t);
    if (S.base_tps <= 0)
        S.base_tps = D->s[0].p->ticks_per_sec;
    if (S.new_tps <= 0)
        S.new_tps = D->s[1].p->ticks_per_sec;
    int st = nytp_calltree_walk(D->s[0].t, 0, add_base_path, &P);
    if (!st && P.oom)
        st = NYTP_E_NOMEM;
    if (!st)
        st = nytp_calltree_walk(D->s[1].t, 0, measure, &S);
    if (!st) {
        flame_svg_opts fo;
        flame_svg_opts_init(&fo);
        fo.title = D->o->title ? D->o->title : "Differential flame graph";
        fo.style_fn = style;
        fo.style_ctx = &S;
        fo.subtitle_note = D->o->normalize
                               ? "NEW scaled to BASE's total; red: slower than BASE, blue: faster"
                               : "sized by NEW; red: slower than BASE, blue: faster";
        st = flame_svg_write(out, D->s[1].t, &fo);
    }
    strmap_release(&P.m);
    free(P.incl);
    free(P.at);
    free(P.key);
    free(S.at);
    return st < 0 ? st : st ? NYTP_E_NOMEM : NYTP_OK;
}

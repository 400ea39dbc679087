/* view_sites.c — the model's call sites as a view has them
 * (nytp_view_apply_sites, nytp/view.h).
 *
 * One walk of the tree before the view finds, for every edge of the
 * profile (the caller's frame, the frame it called), what it held and
 * what the view makes of it: which shown subs the caller reaches through
 * it (the edge's own sub, or with --hide the shown subs below the hidden
 * ones), with how many calls and how much time, and the hidden subs'
 * exclusive time it takes to the caller.  The sites, which are per line,
 * then take the view's share of their edges. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmap.h"
#include "nytp/view.h"

#define M_KNOWN 0x80
#define M_FOCUS (1u << NYTP_VIEW_FOCUS)
#define M_IGNORE (1u << NYTP_VIEW_IGNORE)
#define M_HIDE (1u << NYTP_VIEW_HIDE)

typedef struct vals {
    double calls, excl, incl;   /* incl: the exclusive ticks of the subtree */
} vals;

/* An edge of the profile: (caller, called) by tree name ids, the caller
 * + 1 (0: the main program). */
typedef struct edge {
    uint64_t caller;
    uint32_t called;
    vals o;                 /* the profile's */
    double hidden;          /* exclusive ticks of hidden subs reached through it */
    uint32_t first, n;      /* its targets: order[first .. first+n) */
    uint32_t sites;         /* model sites on it */
} edge;

/* A shown sub reached through an edge, and what the view gives it. */
typedef struct target {
    uint32_t edge, sub;     /* sub: tree name id */
    vals v;
} target;

typedef struct walk {
    const nytp_view *v;
    const nytp_calltree *t;
    uint8_t *marks;         /* by tree name id */
    kmap edge_at, target_at;
    edge *e;
    uint32_t n_e, cap_e;
    target *tg;
    uint32_t n_tg, cap_tg;
    /* by depth along the path (0: the main program) */
    uint8_t *focus, *ignore;
    uint32_t *shown;        /* depth of the nearest shown frame at or above */
    uint32_t *tgt, *oe;     /* the frame's target (shown ones), its edge */
    double *acc, *acc_o;    /* kept and all exclusive ticks of the subtree so far */
    uint32_t cap_d, open;
    int status;
} walk;

static uint8_t marks_of(walk *W, uint32_t id)
{
    if (!(W->marks[id] & M_KNOWN)) {
        nytp_str s = nytp_calltree_name(W->t, id);
        W->marks[id] = (uint8_t)(M_KNOWN | nytp_view_match(W->v, s.ptr, s.len));
    }
    return W->marks[id];
}

static uint32_t edge_of(walk *W, uint64_t caller, uint32_t called)
{
    uint32_t i = kmap_get(&W->edge_at, caller, called);
    if (i != KMAP_NONE)
        return i;
    if (!kmap_grow_array((void **)&W->e, W->n_e, &W->cap_e, sizeof *W->e) ||
        !kmap_put(&W->edge_at, caller, called, W->n_e)) {
        W->status = NYTP_E_NOMEM;
        return KMAP_NONE;
    }
    memset(&W->e[W->n_e], 0, sizeof *W->e);
    W->e[W->n_e].caller = caller;
    W->e[W->n_e].called = called;
    return W->n_e++;
}

static uint32_t target_of(walk *W, uint32_t e, uint32_t sub)
{
    uint32_t i = kmap_get(&W->target_at, e, sub);
    if (i != KMAP_NONE)
        return i;
    if (!kmap_grow_array((void **)&W->tg, W->n_tg, &W->cap_tg, sizeof *W->tg) ||
        !kmap_put(&W->target_at, e, sub, W->n_tg)) {
        W->status = NYTP_E_NOMEM;
        return KMAP_NONE;
    }
    W->tg[W->n_tg] = (target){e, sub, {0, 0, 0}};
    return W->n_tg++;
}

static bool depth_room(walk *W, uint32_t d)
{
    if (d < W->cap_d)
        return true;
    uint32_t cap = W->cap_d ? W->cap_d : 64;
    while (cap <= d)
        cap *= 2;
#define GROW(a)                                                  \
    do {                                                         \
        void *n_ = realloc(W->a, (size_t)cap * sizeof *W->a);     \
        if (!n_)                                                 \
            return false;                                        \
        W->a = n_;                                               \
    } while (0)
    GROW(focus);
    GROW(ignore);
    GROW(shown);
    GROW(tgt);
    GROW(oe);
    GROW(acc);
    GROW(acc_o);
#undef GROW
    W->cap_d = cap;
    return true;
}

/* The frame at depth k is complete: its subtree's ticks go to its parent,
 * its edge and its target. */
static void close_frame(walk *W, uint32_t k)
{
    W->acc[k - 1] += W->acc[k];
    W->acc_o[k - 1] += W->acc_o[k];
    W->e[W->oe[k]].o.incl += W->acc_o[k];
    if (W->tgt[k] != KMAP_NONE)
        W->tg[W->tgt[k]].v.incl += W->acc[k];
}

static int on_node(void *ctx, const nytp_calltree_visit *n)
{
    walk *W = ctx;
    uint32_t d = n->depth;
    if (!depth_room(W, d))
        return W->status = NYTP_E_NOMEM;
    for (; W->open >= d; W->open--)
        close_frame(W, W->open);
    if (d == 1) {
        W->focus[0] = W->ignore[0] = 0;
        W->shown[0] = 0;
        W->acc[0] = W->acc_o[0] = 0;
    }
    uint32_t id = n->path_ids[d - 1];
    uint8_t m = marks_of(W, id);
    W->focus[d] = W->focus[d - 1] || (m & M_FOCUS);
    W->ignore[d] = W->ignore[d - 1] || (m & M_IGNORE);
    bool kept = (W->focus[d] || !nytp_view_active(W->v, NYTP_VIEW_FOCUS)) && !W->ignore[d];
    uint32_t oe = edge_of(W, d == 1 ? 0 : (uint64_t)n->path_ids[d - 2] + 1, id);
    if (oe == KMAP_NONE)
        return W->status;
    W->oe[d] = oe;
    W->e[oe].o.calls += (double)n->calls;
    W->e[oe].o.excl += n->excl;
    W->acc_o[d] = n->excl;
    W->acc[d] = kept ? n->excl : 0;
    /* the view's edge: from the nearest shown frame, through its child here */
    uint32_t s = W->shown[d - 1];
    uint32_t ve = s + 1 == d ? oe : edge_of(W, s ? (uint64_t)n->path_ids[s - 1] + 1 : 0, n->path_ids[s]);
    if (ve == KMAP_NONE)
        return W->status;
    if (m & M_HIDE) {
        W->shown[d] = s;
        W->tgt[d] = KMAP_NONE;
        if (kept) {
            W->e[ve].hidden += n->excl;
            if (s && W->tgt[s] != KMAP_NONE)
                W->tg[W->tgt[s]].v.excl += n->excl;
        }
    } else {
        W->shown[d] = d;
        uint32_t tg = target_of(W, ve, id);
        if (tg == KMAP_NONE)
            return W->status;
        W->tgt[d] = tg;
        if (kept) {
            W->tg[tg].v.calls += (double)n->calls;
            W->tg[tg].v.excl += n->excl;
        }
    }
    W->open = d;
    return 0;
}

static int cmp_target_edge(const void *a, const void *b, void *ctx)
{
    const target *tg = ctx;
    uint32_t x = tg[*(const uint32_t *)a].edge, y = tg[*(const uint32_t *)b].edge;
    if (x != y)
        return x < y ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : *(const uint32_t *)a > *(const uint32_t *)b;
}

/* ---- the sites ------------------------------------------------------------- */

typedef struct rewrite {
    nytp_profile *p;
    nytp_site *v;
    uint32_t n, cap;
    kmap at;                /* (called, fid << 32 | line) -> new site */
    double *cum;            /* by target: the calls its sites had so far, exactly */
    uint64_t *given;        /* and as given out, whole */
    int status;
} rewrite;

/* A new site for `called` at s's line, or the one already there. */
static nytp_site *new_site(rewrite *R, const nytp_site *s, uint32_t called)
{
    uint32_t i = kmap_get(&R->at, called, (uint64_t)s->fid << 32 | s->line);
    if (i != KMAP_NONE)
        return &R->v[i];
    if (!kmap_grow_array((void **)&R->v, R->n, &R->cap, sizeof *R->v) ||
        !kmap_put(&R->at, called, (uint64_t)s->fid << 32 | s->line, R->n)) {
        R->status = NYTP_E_NOMEM;
        return NULL;
    }
    nytp_site *d = &R->v[R->n++];
    memset(d, 0, sizeof *d);
    d->called = called;
    d->fid = s->fid;
    d->line = s->line;
    return d;
}

static void add_callers(rewrite *R, nytp_site *d, const nytp_site *s, const uint8_t *keep)
{
    for (uint32_t k = 0; k < s->n_callers; k++) {
        if (!keep[k])
            continue;
        bool have = false;
        for (uint32_t j = 0; j < d->n_callers && !have; j++)
            have = d->callers[j] == s->callers[k];
        if (!have && !kmap_grow_array((void **)&d->callers, d->n_callers, &d->cap_callers, sizeof *d->callers)) {
            R->status = NYTP_E_NOMEM;
            return;
        }
        if (!have)
            d->callers[d->n_callers++] = s->callers[k];
    }
}

static bool is_main(const char *s, uint32_t len)
{
    return (len == 13 && memcmp(s, NYTP_VIEW_MAIN, 13) == 0) || (len == 10 && memcmp(s, "main::NULL", 10) == 0);
}

/* The edge of caller (a model string) to called (a tree id), or KMAP_NONE:
 * the main program's calls are made by main::RUNTIME (main::NULL at
 * compile time) in the sites and from the root in the tree. */
static uint32_t site_edge(walk *W, const nytp_profile *p, uint32_t caller, uint32_t called, uint8_t *caller_marks)
{
    const char *s = nytp_profile_str(p, caller);
    uint32_t len = nytp_profile_strlen(p, caller), id;
    *caller_marks = 0;
    if (nytp_calltree_find_name(W->t, s, len, &id) < 0) {
        W->status = NYTP_E_NOMEM;
        return KMAP_NONE;
    }
    uint32_t e = id != UINT32_MAX ? kmap_get(&W->edge_at, (uint64_t)id + 1, called) : KMAP_NONE;
    if (id != UINT32_MAX)
        *caller_marks = marks_of(W, id);
    if (e == KMAP_NONE && is_main(s, len)) {
        *caller_marks = 0;
        e = kmap_get(&W->edge_at, 0, called);
    }
    return e;
}

#define MAX_EDGES 64        /* callers of one site looked at (they are a handful) */

static void rewrite_site(walk *W, rewrite *R, const uint32_t *order, const uint32_t *sub_of, const nytp_site *s)
{
    const nytp_profile *p = R->p;
    const nytp_sub *called = &p->subs[s->called];
    uint32_t f;
    if (nytp_calltree_find_name(W->t, nytp_profile_str(p, called->name), nytp_profile_strlen(p, called->name), &f) < 0) {
        R->status = NYTP_E_NOMEM;
        return;
    }
    uint32_t es[MAX_EDGES], ne = 0;
    uint8_t keep[MAX_EDGES] = {0};
    uint32_t nc = s->n_callers < MAX_EDGES ? s->n_callers : MAX_EDGES;
    for (uint32_t k = 0; f != UINT32_MAX && k < nc; k++) {
        uint8_t cm;
        uint32_t e = site_edge(W, p, s->callers[k], f, &cm);
        keep[k] = !(cm & M_HIDE);
        bool have = e == KMAP_NONE;
        for (uint32_t j = 0; j < ne && !have; j++)
            have = es[j] == e;
        if (!have)
            es[ne++] = e;
    }
    if (W->status)
        return;
    if (ne == 0) { /* the call tree has no such call: as profiled */
        nytp_site *d = new_site(R, s, s->called);
        if (!d)
            return;
        uint8_t all[MAX_EDGES];
        memset(all, 1, sizeof all);
        d->count += s->count;
        d->incl += s->incl;
        d->excl += s->excl;
        d->view |= NYTP_SITE_UNVIEWED;
        add_callers(R, d, s, all);
        return;
    }
    vals o = {0, 0, 0};
    double hidden = 0;
    uint32_t ntg = 0, sites = 0;
    for (uint32_t j = 0; j < ne; j++) {
        const edge *e = &W->e[es[j]];
        o.calls += e->o.calls;
        o.excl += e->o.excl;
        o.incl += e->o.incl;
        hidden += e->hidden;
        ntg += e->n;
        sites += e->sites;
    }
    /* what the view does not change stays as it is, to the byte */
    if (ne == 1 && ntg == 1 && hidden == 0) {
        const target *t = &W->tg[order[W->e[es[0]].first]];
        if (t->sub == f && t->v.calls == o.calls && t->v.excl == o.excl && t->v.incl == o.incl) {
            nytp_site *d = new_site(R, s, s->called);
            if (!d)
                return;
            uint32_t *callers = d->callers, n = d->n_callers, cap = d->cap_callers;
            if (d->count || d->incl || n) { /* a site already made here: add to it */
                d->count += s->count;
                d->incl += s->incl;
                d->excl += s->excl;
                d->rec_depth = d->rec_depth > s->rec_depth ? d->rec_depth : s->rec_depth;
                d->reci = d->reci > s->reci ? d->reci : s->reci;
                add_callers(R, d, s, keep);
                return;
            }
            *d = *s;
            d->callers = callers;
            d->n_callers = n;
            d->cap_callers = cap;
            uint8_t all[MAX_EDGES];
            memset(all, 1, sizeof all);
            add_callers(R, d, s, all);
            return;
        }
    }
    uint8_t shared = sites > ne ? NYTP_SITE_SHARED : 0;
    for (uint32_t j = 0; j < ne; j++) {
        const edge *e = &W->e[es[j]];
        for (uint32_t k = 0; k < e->n; k++) {
            const target *t = &W->tg[order[e->first + k]];
            uint32_t sub = sub_of[t->sub];
            if (sub == NYTP_NONE)
                continue;
            /* rounded as a running sum over the target's sites, so that
             * they add up to its calls (whole ones each) */
            uint32_t ti = order[e->first + k];
            uint64_t count = 0;
            if (o.calls > 0) {
                R->cum[ti] += (double)s->count * t->v.calls / o.calls;
                uint64_t upto = (uint64_t)llround(R->cum[ti]);
                count = upto > R->given[ti] ? upto - R->given[ti] : 0;
                R->given[ti] += count;
            }
            double incl = o.incl > 0 ? s->incl * (t->v.incl / o.incl) : 0;
            double excl = o.excl > 0 ? s->excl * (t->v.excl / o.excl) : incl;
            if (!count && incl == 0 && excl == 0)
                continue;
            nytp_site *d = new_site(R, s, sub);
            if (!d)
                return;
            d->count += count;
            d->incl += incl;
            d->excl += excl;
            d->view |= shared;
            add_callers(R, d, s, keep);
        }
    }
    if (hidden > 0 && o.incl > 0) {
        double h = s->incl * (hidden / o.incl);
        nytp_site *d = new_site(R, s, s->called);
        if (!d)
            return;
        d->incl += h;
        d->excl += h;
        d->view |= NYTP_SITE_HIDDEN | shared;
        add_callers(R, d, s, keep);
    }
}

int nytp_view_apply_sites(const nytp_view *v, nytp_profile *p, const nytp_calltree *t)
{
    if (!nytp_view_active(v, NYTP_VIEW_N_OPS))
        return NYTP_OK;
    nytp_calltree_stats cs;
    nytp_calltree_get_stats(t, &cs);
    walk W = {0};
    W.v = v;
    W.t = t;
    W.marks = calloc(cs.names ? cs.names : 1, 1);
    uint32_t *sub_of = malloc((cs.names ? cs.names : 1) * sizeof *sub_of);
    uint32_t *order = NULL;
    rewrite R = {0};
    R.p = p;
    int st = W.marks && sub_of ? nytp_calltree_walk(t, 0, on_node, &W) : NYTP_E_NOMEM;
    if (st == 0)
        st = W.status;
    for (; st == 0 && W.open >= 1; W.open--)
        close_frame(&W, W.open);
    /* each edge's targets together */
    if (st == 0 && (!(order = malloc(((size_t)W.n_tg + 1) * sizeof *order)) ||
                    !(R.cum = calloc((size_t)W.n_tg + 1, sizeof *R.cum)) ||
                    !(R.given = calloc((size_t)W.n_tg + 1, sizeof *R.given))))
        st = NYTP_E_NOMEM;
    if (st == 0) {
        for (uint32_t i = 0; i < W.n_tg; i++)
            order[i] = i;
        if (W.n_tg)
            qsort_r(order, W.n_tg, sizeof *order, cmp_target_edge, W.tg);
        for (uint32_t i = W.n_tg; i-- > 0;) {
            edge *e = &W.e[W.tg[order[i]].edge];
            e->first = i;
            e->n++;
        }
        /* the model's sub of each tree name: the first of the sibling
         * evals one normalised name stands for, as nytp_view_apply_model */
        for (uint32_t i = 0; i < cs.names; i++)
            sub_of[i] = NYTP_NONE;
        for (uint32_t i = 0; i < p->n_subs && st == 0; i++) {
            uint32_t id;
            if (nytp_calltree_find_name(t, nytp_profile_str(p, p->subs[i].name),
                                        nytp_profile_strlen(p, p->subs[i].name), &id) < 0)
                st = NYTP_E_NOMEM;
            else if (id != UINT32_MAX && id < cs.names && sub_of[id] == NYTP_NONE)
                sub_of[id] = i;
        }
    }
    /* how many sites each edge has: one alone has the edge's calls */
    for (uint32_t i = 0; st == 0 && i < p->n_sites; i++) {
        const nytp_site *s = &p->sites[i];
        uint32_t f;
        if (nytp_calltree_find_name(t, nytp_profile_str(p, p->subs[s->called].name),
                                    nytp_profile_strlen(p, p->subs[s->called].name), &f) < 0) {
            st = NYTP_E_NOMEM;
            break;
        }
        for (uint32_t k = 0; f != UINT32_MAX && k < s->n_callers && k < MAX_EDGES; k++) {
            uint8_t cm;
            uint32_t e = site_edge(&W, p, s->callers[k], f, &cm);
            if (e != KMAP_NONE)
                W.e[e].sites++;
        }
        st = W.status;
    }
    for (uint32_t i = 0; st == 0 && i < p->n_sites; i++) {
        rewrite_site(&W, &R, order, sub_of, &p->sites[i]);
        st = R.status ? R.status : W.status;
    }
    if (st == 0) {
        st = nytp_profile_replace_sites(p, R.v, R.n);
        R.v = NULL;
        R.n = 0;
    }
    for (uint32_t i = 0; i < R.n; i++)
        free(R.v[i].callers);
    free(R.v);
    kmap_free(&R.at);
    free(R.cum);
    free(R.given);
    kmap_free(&W.edge_at);
    kmap_free(&W.target_at);
    free(W.e);
    free(W.tg);
    free(W.marks);
    free(W.focus);
    free(W.ignore);
    free(W.shown);
    free(W.tgt);
    free(W.oe);
    free(W.acc);
    free(W.acc_o);
    free(order);
    free(sub_of);
    return st < 0 ? st : st ? NYTP_E_NOMEM : NYTP_OK;
}

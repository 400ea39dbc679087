/* view.c — focus, ignore, hide and recursion folding over a call tree
 * (see nytp/view.h). */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmap.h"
#include "nytp/view.h"

typedef struct pattern {
    char *text;             /* as given */
    bool by_file;
    regex_t re;
} pattern;

/* What the patterns make of a name, found once per name id. */
enum {
    M_KNOWN = 1,
    M_FOCUS = 2,
    M_IGNORE = 4,
    M_HIDE = 8
};

struct nytp_view {
    pattern *pats[NYTP_VIEW_N_OPS];
    uint32_t n[NYTP_VIEW_N_OPS], cap[NYTP_VIEW_N_OPS];
    bool by_file;
    uint32_t max_recursion;
    nytp_view_sub_file_fn sub_file;
    void *sub_file_ctx;
    nytp_view_stats stats;
};

int nytp_view_new(nytp_view **v, nytp_error *err)
{
    *v = calloc(1, sizeof **v);
    return *v ? NYTP_OK : nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
}

void nytp_view_free(nytp_view *v)
{
    if (!v)
        return;
    for (int op = 0; op < NYTP_VIEW_N_OPS; op++) {
        for (uint32_t i = 0; i < v->n[op]; i++) {
            regfree(&v->pats[op][i].re);
            free(v->pats[op][i].text);
        }
        free(v->pats[op]);
    }
    free(v);
}

int nytp_view_add(nytp_view *v, enum nytp_view_op op, const char *text, nytp_error *err)
{
    if (op < 0 || op >= NYTP_VIEW_N_OPS)
        return nytp_error_set(err, NYTP_E_USAGE, "no such view operation");
    if (!kmap_grow_array((void **)&v->pats[op], v->n[op], &v->cap[op], sizeof *v->pats[op]))
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    pattern *p = &v->pats[op][v->n[op]];
    p->by_file = strncmp(text, "file:", 5) == 0;
    const char *re = p->by_file ? text + 5 : text;
    int rc = regcomp(&p->re, re, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char why[160];
        regerror(rc, &p->re, why, sizeof why);
        return nytp_error_set(err, NYTP_E_USAGE, "'%s': %s", re, why);
    }
    if (!(p->text = strdup(text))) {
        regfree(&p->re);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    v->by_file |= p->by_file;
    v->n[op]++;
    return NYTP_OK;
}

void nytp_view_set_max_recursion(nytp_view *v, uint32_t limit)
{
    v->max_recursion = limit;
}

void nytp_view_set_sub_files(nytp_view *v, nytp_view_sub_file_fn fn, void *ctx)
{
    v->sub_file = fn;
    v->sub_file_ctx = ctx;
}

bool nytp_view_active(const nytp_view *v, enum nytp_view_op op)
{
    if (!v)
        return false;
    if (op >= 0 && op < NYTP_VIEW_N_OPS)
        return v->n[op] > 0;
    return v->n[NYTP_VIEW_FOCUS] || v->n[NYTP_VIEW_IGNORE] || v->n[NYTP_VIEW_HIDE];
}

bool nytp_view_has_file_patterns(const nytp_view *v)
{
    return v && v->by_file;
}

size_t nytp_view_count(const nytp_view *v, enum nytp_view_op op)
{
    return v && op >= 0 && op < NYTP_VIEW_N_OPS ? v->n[op] : 0;
}

const char *nytp_view_pattern(const nytp_view *v, enum nytp_view_op op, size_t i)
{
    return i < nytp_view_count(v, op) ? v->pats[op][i].text : NULL;
}

void nytp_view_get_stats(const nytp_view *v, nytp_view_stats *s)
{
    *s = v->stats;
}

/* Whether any pattern of op matches the name (or, for "file:" ones, the
 * file, which may be NULL). */
static bool any_match(const nytp_view *v, int op, const char *name, const char *file)
{
    for (uint32_t i = 0; i < v->n[op]; i++) {
        const pattern *p = &v->pats[op][i];
        const char *s = p->by_file ? file : name;
        if (s && regexec(&p->re, s, 0, NULL, 0) == 0)
            return true;
    }
    return false;
}

/* Which patterns match a NUL-terminated name of len bytes: a mask of
 * 1 << op.  A frame folded from recursion ("NAME…[×K]") is its sub's for
 * "file:" patterns. */
static unsigned match_ops(const nytp_view *v, const char *name, size_t len)
{
    const char *file = NULL;
    if (v->by_file && v->sub_file)
        file = v->sub_file(v->sub_file_ctx, name, (uint32_t)nytp_calltree_unfolded_len(name, len));
    unsigned m = 0;
    for (int op = 0; op < NYTP_VIEW_N_OPS; op++)
        if (any_match(v, op, name, file))
            m |= 1u << op;
    return m;
}

/* What the patterns make of names, found once per id (a call tree's name
 * id, a time line's frame): marks by id, and the buffer that gives the
 * regexes a NUL-terminated name. */
typedef struct mark_cache {
    uint8_t *marks;
    uint32_t n;
    char *buf;
    size_t cap;
} mark_cache;

static void mark_cache_free(mark_cache *c)
{
    free(c->marks);
    free(c->buf);
}

/* The marks of id, or 0 when not found yet. */
static inline uint8_t mark_known(const mark_cache *c, uint32_t id)
{
    return id < c->n ? c->marks[id] : 0;
}

/* The marks of name s (M_KNOWN with M_FOCUS, M_IGNORE, M_HIDE as its
 * patterns match), kept under id.  Out of memory sets *status to
 * NYTP_E_NOMEM: the marks are then not kept, or M_KNOWN alone when the
 * name could not even be copied. */
static uint8_t mark_name(const nytp_view *v, mark_cache *c, uint32_t id, nytp_str s, int *status)
{
    if ((size_t)s.len + 1 > c->cap) {
        size_t cap = (size_t)s.len + 64;
        char *b = realloc(c->buf, cap);
        if (!b) {
            *status = NYTP_E_NOMEM;
            return M_KNOWN;
        }
        c->buf = b;
        c->cap = cap;
    }
    memcpy(c->buf, s.ptr, s.len);
    c->buf[s.len] = 0;
    uint8_t m = (uint8_t)(M_KNOWN | match_ops(v, c->buf, s.len) << 1);
    if (id >= c->n) {
        uint32_t n = c->n ? c->n : 256;
        while (n <= id && n < UINT32_MAX / 2)
            n *= 2;
        uint8_t *nm = n > id ? realloc(c->marks, n) : NULL;
        if (!nm) {
            *status = NYTP_E_NOMEM;
            return m;
        }
        memset(nm + c->n, 0, n - c->n);
        c->marks = nm;
        c->n = n;
    }
    c->marks[id] = m;
    return m;
}

/* ---- filtering the tree -------------------------------------------------- */

typedef struct apply_ctx {
    nytp_view *v;
    const nytp_calltree *src;
    nytp_calltree *dst;
    mark_cache mc;          /* by source name id */
    /* by depth (1-based) along the path being visited */
    uint8_t *in_focus, *in_ignore;
    uint32_t *kept;         /* frames of the new path down to this depth */
    nytp_str *path;         /* the new path */
    uint32_t cap_depth;
    int status;
} apply_ctx;

static uint8_t marks_of(apply_ctx *A, uint32_t id)
{
    uint8_t m = mark_known(&A->mc, id);
    if (m)
        return m;
    int st = NYTP_OK;
    m = mark_name(A->v, &A->mc, id, nytp_calltree_name(A->src, id), &st);
    if (st != NYTP_OK)
        A->status = st;
    else if (m & M_HIDE)
        A->v->stats.hidden_subs++;
    return m;
}

static bool depth_room(apply_ctx *A, uint32_t depth)
{
    if (depth + 1 <= A->cap_depth)
        return true;
    uint32_t cap = A->cap_depth ? A->cap_depth : 64;
    while (cap < depth + 1)
        cap *= 2;
    uint8_t *f = realloc(A->in_focus, cap), *g = f ? realloc(A->in_ignore, cap) : NULL;
    if (f)
        A->in_focus = f;
    if (g)
        A->in_ignore = g;
    uint32_t *k = g ? realloc(A->kept, cap * sizeof *k) : NULL;
    if (k)
        A->kept = k;
    nytp_str *p = k ? realloc(A->path, cap * sizeof *p) : NULL;
    if (!p)
        return false;
    A->path = p;
    A->cap_depth = cap;
    return true;
}

static int on_node(void *ctx, const nytp_calltree_visit *n)
{
    apply_ctx *A = ctx;
    nytp_view *v = A->v;
    uint32_t d = n->depth;
    if (!depth_room(A, d))
        return A->status = NYTP_E_NOMEM;
    if (d == 1) {
        A->in_focus[0] = 0;
        A->in_ignore[0] = 0;
        A->kept[0] = 0;
    }
    uint8_t m = marks_of(A, n->path_ids[d - 1]);
    if (A->status)
        return A->status;
    A->in_focus[d] = A->in_focus[d - 1] || (m & M_FOCUS);
    A->in_ignore[d] = A->in_ignore[d - 1] || (m & M_IGNORE);
    uint32_t k = A->kept[d - 1];
    if (!(m & M_HIDE))
        A->path[k++] = n->path[d - 1];
    A->kept[d] = k;
    if (v->n[NYTP_VIEW_FOCUS] && !A->in_focus[d]) {
        v->stats.unfocused += n->excl;
        return 0;
    }
    if (A->in_ignore[d]) {
        v->stats.ignored += n->excl;
        return 0;
    }
    int st;
    if (m & M_HIDE) {
        v->stats.hidden += n->excl;
        if (k) {
            st = nytp_calltree_add_path(A->dst, A->path, k, n->excl, 0, 0);
        } else {
            nytp_str main = {NYTP_VIEW_MAIN, (uint32_t)strlen(NYTP_VIEW_MAIN), false};
            st = nytp_calltree_add_path(A->dst, &main, 1, n->excl, 0, 0);
        }
    } else {
        st = nytp_calltree_add_path(A->dst, A->path, k, n->excl, n->incl, n->calls);
    }
    return st < 0 ? (A->status = st) : 0;
}

int nytp_view_apply(nytp_view *v, nytp_calltree **t, nytp_error *err)
{
    memset(&v->stats, 0, sizeof v->stats);
    v->stats.total = nytp_calltree_total_excl(*t);
    if (!nytp_view_active(v, NYTP_VIEW_N_OPS)) {
        v->stats.shown = v->stats.total;
        int64_t f = nytp_calltree_fold_recursion(*t, v->max_recursion);
        if (f < 0)
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory folding deep recursion");
        v->stats.folded = f;
        return NYTP_OK;
    }
    apply_ctx A = {0};
    A.v = v;
    A.src = *t;
    if (nytp_calltree_new(&A.dst, err) < 0)
        return NYTP_E_NOMEM;
    int st = nytp_calltree_walk(*t, 0, on_node, &A);
    if (st == 0)
        st = A.status;
    mark_cache_free(&A.mc);
    free(A.in_focus);
    free(A.in_ignore);
    free(A.kept);
    free(A.path);
    int64_t f = st == 0 ? nytp_calltree_fold_recursion(A.dst, v->max_recursion) : 0;
    if (st != 0 || f < 0) {
        nytp_calltree_free(A.dst);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory filtering the call tree");
    }
    v->stats.folded = f;
    v->stats.shown = nytp_calltree_total_excl(A.dst);
    /* what the tree knew of its inputs goes with it */
    nytp_calltree_copy_attrs(A.dst, *t);
    nytp_calltree_free(*t);
    *t = A.dst;
    return NYTP_OK;
}

/* ---- per-sub totals ------------------------------------------------------ */

typedef struct totals_ctx {
    double *excl, *incl;
    uint64_t *calls;
    uint64_t *stamp;        /* by name id: the last node that counted it */
    uint64_t node;
    uint32_t n;
} totals_ctx;

static int on_total(void *ctx, const nytp_calltree_visit *n)
{
    totals_ctx *T = ctx;
    uint32_t id = n->path_ids[n->depth - 1];
    if (id >= T->n)
        return 0;
    T->node++;
    T->excl[id] += n->excl;
    T->calls[id] += n->calls;
    for (uint32_t i = 0; i < n->depth; i++) {
        uint32_t a = n->path_ids[i];
        if (a < T->n && T->stamp[a] != T->node) {
            T->stamp[a] = T->node;
            T->incl[a] += n->excl;
        }
    }
    return 0;
}

int nytp_view_sub_totals(const nytp_calltree *t, double **excl, double **incl, uint64_t **calls)
{
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    size_t n = s.names ? s.names : 1;
    totals_ctx T = {calloc(n, sizeof *T.excl), calloc(n, sizeof *T.incl), calloc(n, sizeof *T.calls),
                    calloc(n, sizeof *T.stamp), 0, (uint32_t)s.names};
    int st = T.excl && T.incl && T.calls && T.stamp ? nytp_calltree_walk(t, 0, on_total, &T)
                                                    : NYTP_E_NOMEM;
    free(T.stamp);
    if (st) {
        free(T.excl);
        free(T.incl);
        free(T.calls);
        *excl = *incl = NULL;
        *calls = NULL;
        return NYTP_E_NOMEM;
    }
    *excl = T.excl;
    *incl = T.incl;
    *calls = T.calls;
    return NYTP_OK;
}

int nytp_view_apply_model(const nytp_view *v, nytp_profile *p, const nytp_calltree *t, double tps)
{
    (void)v;
    double *excl, *incl;
    uint64_t *calls;
    if (nytp_view_sub_totals(t, &excl, &incl, &calls) < 0)
        return NYTP_E_NOMEM;
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    double ttps = nytp_calltree_ticks_per_sec(t);
    double scale = ttps > 0 ? 1 / ttps : tps > 0 ? 1 / tps : 1;
    size_t nn = s.names ? s.names : 1;
    /* Sibling string evals are one name in the tree (their sequence
     * numbers normalised away) and several subs in the model: the tree's
     * totals of the name are shared among them in the proportions of
     * their own times and calls (all to the first when those are 0). */
    uint32_t *ids = malloc((p->n_subs ? p->n_subs : 1) * sizeof *ids);
    uint32_t *members = calloc(nn, sizeof *members), *left = calloc(nn, sizeof *left);
    double *own_excl = calloc(nn, sizeof *own_excl), *own_incl = calloc(nn, sizeof *own_incl);
    uint64_t *own_calls = calloc(nn, sizeof *own_calls), *calls_left = calloc(nn, sizeof *calls_left);
    bool *used = calloc(nn, sizeof *used);
    int st = ids && members && left && own_excl && own_incl && own_calls && calls_left && used ? NYTP_OK
                                                                                               : NYTP_E_NOMEM;
    for (uint32_t i = 0; st == NYTP_OK && i < p->n_subs; i++) {
        const nytp_sub *sub = &p->subs[i];
        uint32_t id;
        if (nytp_calltree_find_name(t, nytp_profile_str(p, sub->name), nytp_profile_strlen(p, sub->name),
                                    &id) < 0) {
            st = NYTP_E_NOMEM;
            break;
        }
        ids[i] = id;
        if (id == UINT32_MAX)
            continue;
        members[id]++;
        left[id]++;
        own_excl[id] += sub->excl;
        own_incl[id] += sub->incl;
        own_calls[id] += sub->calls;
        calls_left[id] = calls[id];
    }
    for (uint32_t i = 0; st == NYTP_OK && i < p->n_subs; i++) {
        nytp_sub *sub = &p->subs[i];
        uint32_t id = ids[i];
        sub->reci = 0;
        if (id == UINT32_MAX) {
            sub->excl = sub->incl = 0;
            sub->calls = 0;
            continue;
        }
        if (members[id] == 1) {
            sub->excl = excl[id] * scale;
            sub->incl = incl[id] * scale;
            sub->calls = calls[id];
            continue;
        }
        bool first = !used[id], last = --left[id] == 0;
        used[id] = true;
        double fe = own_excl[id] > 0 ? sub->excl / own_excl[id] : first;
        double fi = own_incl[id] > 0 ? sub->incl / own_incl[id] : first;
        uint64_t c;
        if (last)
            c = calls_left[id];
        else if (own_calls[id] > 0)
            c = (uint64_t)((unsigned __int128)calls[id] * sub->calls / own_calls[id]);
        else
            c = first ? calls[id] : 0;
        if (c > calls_left[id])
            c = calls_left[id];
        calls_left[id] -= c;
        sub->excl = excl[id] * fe * scale;
        sub->incl = incl[id] * fi * scale;
        sub->calls = c;
    }
    free(ids);
    free(members);
    free(left);
    free(own_excl);
    free(own_incl);
    free(own_calls);
    free(calls_left);
    free(used);
    free(excl);
    free(incl);
    free(calls);
    return st;
}

/* ---- line and file views ------------------------------------------------- */

/* Only the "file:" patterns apply to a file: a sub pattern says nothing
 * of which file a line is in. */
static bool any_file_match(const nytp_view *v, int op, const char *name)
{
    for (uint32_t i = 0; i < v->n[op]; i++)
        if (v->pats[op][i].by_file && regexec(&v->pats[op][i].re, name, 0, NULL, 0) == 0)
            return true;
    return false;
}

static bool has_file_pattern(const nytp_view *v, int op)
{
    for (uint32_t i = 0; i < v->n[op]; i++)
        if (v->pats[op][i].by_file)
            return true;
    return false;
}

enum nytp_view_file_verdict nytp_view_file(const nytp_view *v, const char *name)
{
    if (!v || !v->by_file)
        return NYTP_VIEW_SHOWN;
    if (has_file_pattern(v, NYTP_VIEW_FOCUS) && !any_file_match(v, NYTP_VIEW_FOCUS, name))
        return NYTP_VIEW_LEFT_OUT;
    if (any_file_match(v, NYTP_VIEW_IGNORE, name))
        return NYTP_VIEW_LEFT_OUT;
    if (any_file_match(v, NYTP_VIEW_HIDE, name))
        return NYTP_VIEW_HIDDEN;
    return NYTP_VIEW_SHOWN;
}

/* ---- time lines ------------------------------------------------------------ */

typedef struct tl_ctx {
    nytp_view *v;
    const nytp_view_names *names;
    mark_cache mc;          /* by frame id */
    int status;
} tl_ctx;

/* What the patterns make of a frame, found once per frame id. */
static uint8_t tl_marks(tl_ctx *T, uint32_t frame)
{
    uint8_t m = mark_known(&T->mc, frame);
    if (m)
        return m;
    int st = NYTP_OK;
    m = mark_name(T->v, &T->mc, frame, T->names->name(T->names->ctx, frame), &st);
    if (st != NYTP_OK)
        T->status = st;
    return m;
}

static bool tl_grow(void **a, uint32_t need, uint32_t *cap, size_t size)
{
    if (need <= *cap)
        return true;
    uint32_t n = *cap ? *cap : 64;
    while (n < need) {
        if (n > UINT32_MAX / 2)
            return false;
        n *= 2;
    }
    void *p = realloc(*a, (size_t)n * size);
    if (!p)
        return false;
    *a = p;
    *cap = n;
    return true;
}

/* A call being copied: its calls are visited in order, each copied (or
 * not) before the next. */
typedef struct tl_frame {
    uint32_t in, out;       /* the call, its copy */
    uint32_t child;         /* the next of its calls to visit */
    uint32_t last;          /* the last of its calls kept (a copy) */
    bool in_focus, in_ignore, hidden, drawn_above;
    double removed;         /* ticks of its calls taken out of it */
    double kept;            /* ticks of its calls kept */
} tl_frame;

/* The filtered copy of the time line (see nytp_view_apply_calls).  The
 * copies are made depth first, so the calls of a call that goes are the
 * last ones made, and go with it. */
static int tl_filter(tl_ctx *T, const nytp_view_call *in, uint32_t first, nytp_view_call **out,
                     uint32_t *n_out, uint32_t *cap_out, uint32_t *out_first)
{
    nytp_view *v = T->v;
    bool focus = v->n[NYTP_VIEW_FOCUS] > 0;
    nytp_view_call *o = NULL;
    uint32_t no = 0, co = 0, top_last = NYTP_VIEW_NO_CALL;
    tl_frame *st = NULL;
    uint32_t sp = 0, cs = 0;
    uint32_t main_frame = NYTP_VIEW_NOT_DRAWN;
    *out_first = NYTP_VIEW_NO_CALL;
    for (uint32_t top = first; top != NYTP_VIEW_NO_CALL && !T->status; top = in[top].next) {
        sp = 0;
        uint32_t c = top;
        for (;;) {
            if (c != NYTP_VIEW_NO_CALL) { /* enter call c */
                uint8_t m = tl_marks(T, in[c].frame);
                if (T->status || !tl_grow((void **)&st, sp + 1, &cs, sizeof *st) ||
                    !tl_grow((void **)&o, no + 2, &co, sizeof *o)) {
                    T->status = NYTP_E_NOMEM;
                    break;
                }
                const tl_frame *p = sp ? &st[sp - 1] : NULL;
                tl_frame f = {c, no, NYTP_VIEW_NO_CALL, NYTP_VIEW_NO_CALL,
                              (p && p->in_focus) || (m & M_FOCUS), (p && p->in_ignore) || (m & M_IGNORE),
                              (m & M_HIDE) != 0, p && (p->drawn_above || !p->hidden), 0, 0};
                /* a call through an ignored one goes whole: no need to look */
                f.child = f.in_ignore ? NYTP_VIEW_NO_CALL : in[c].first_child;
                o[no++] = (nytp_view_call){f.hidden ? NYTP_VIEW_NOT_DRAWN : in[c].frame, NYTP_VIEW_NO_CALL,
                                           NYTP_VIEW_NO_CALL, 0};
                st[sp++] = f;
            }
            tl_frame *f = &st[sp - 1];
            if (f->child != NYTP_VIEW_NO_CALL) {
                c = f->child;
                f->child = in[c].next;
                continue;
            }
            /* leave call f->in: keep its copy or drop it */
            bool own = !f->in_ignore && (!focus || f->in_focus);
            double incl = own ? in[f->in].incl - f->removed : f->kept;
            bool keep = !f->in_ignore && (own || f->last != NYTP_VIEW_NO_CALL);
            if (keep && own && f->hidden && !f->drawn_above && incl - f->kept > 0) {
                /* its own time, with no caller drawn to hold it */
                if (main_frame == NYTP_VIEW_NOT_DRAWN)
                    main_frame = T->names->intern(T->names->ctx, NYTP_VIEW_MAIN, (uint32_t)strlen(NYTP_VIEW_MAIN));
                /* the room reserved on entering it may be taken: a hidden
                 * call of it ending just before added its own */
                if (main_frame == NYTP_VIEW_NOT_DRAWN || !tl_grow((void **)&o, no + 1, &co, sizeof *o)) {
                    T->status = NYTP_E_NOMEM;
                    break;
                }
                o[no] = (nytp_view_call){main_frame, NYTP_VIEW_NO_CALL, NYTP_VIEW_NO_CALL, incl - f->kept};
                if (f->last == NYTP_VIEW_NO_CALL)
                    o[f->out].first_child = no;
                else
                    o[f->last].next = no;
                f->last = no++;
            }
            uint32_t out_id = f->out;
            double was = in[f->in].incl;
            sp--;
            tl_frame *p = sp ? &st[sp - 1] : NULL;
            if (!keep) {
                no = out_id;
                if (p)
                    p->removed += was;
            } else {
                o[out_id].incl = incl;
                uint32_t *last = p ? &p->last : &top_last;
                if (*last == NYTP_VIEW_NO_CALL) {
                    if (p)
                        o[p->out].first_child = out_id;
                    else
                        *out_first = out_id;
                } else {
                    o[*last].next = out_id;
                }
                *last = out_id;
                if (p) {
                    p->removed += was - incl;
                    p->kept += incl;
                }
            }
            if (!sp)
                break;
            c = NYTP_VIEW_NO_CALL;
        }
    }
    free(st);
    if (T->status) {
        free(o);
        return T->status;
    }
    *out = o;
    *n_out = no;
    *cap_out = co;
    return NYTP_OK;
}

/* A call being folded: the frame of the nearest drawn call at or above
 * it, and its place in a run of calls of that frame. */
typedef struct tl_fold {
    uint32_t call, child;
    uint32_t frame;
    uint64_t run;
} tl_fold;

/* The frame "NAME…[×K]" of call c of frame f: K the longest chain of
 * calls of f from c, each made by the one before (hidden calls between
 * them do not count). */
static uint32_t tl_folded_frame(tl_ctx *T, nytp_view_call *calls, uint32_t c, uint32_t f, uint64_t **scan,
                                uint32_t *cap_scan)
{
    uint64_t deepest = 0;
    uint32_t nt = 0;
    if (!tl_grow((void **)scan, 2, cap_scan, sizeof **scan))
        return NYTP_VIEW_NOT_DRAWN;
    (*scan)[nt++] = c;
    (*scan)[nt++] = 1;
    while (nt) {
        uint64_t len = (*scan)[--nt], n = (*scan)[--nt];
        if (len > deepest)
            deepest = len;
        for (uint32_t k = calls[n].first_child; k != NYTP_VIEW_NO_CALL; k = calls[k].next) {
            bool through = calls[k].frame == NYTP_VIEW_NOT_DRAWN;
            if (!through && calls[k].frame != f)
                continue;
            if (!tl_grow((void **)scan, nt + 2, cap_scan, sizeof **scan))
                return NYTP_VIEW_NOT_DRAWN;
            (*scan)[nt++] = k;
            (*scan)[nt++] = through ? len : len + 1;
        }
    }
    nytp_str s = T->names->name(T->names->ctx, f);
    char *name = malloc((size_t)s.len + 40);
    if (!name)
        return NYTP_VIEW_NOT_DRAWN;
    memcpy(name, s.ptr, s.len);
    /* U+2026 HORIZONTAL ELLIPSIS, "[", U+00D7 MULTIPLICATION SIGN */
    int k = snprintf(name + s.len, 40, "\xe2\x80\xa6[\xc3\x97%llu]", (unsigned long long)deepest);
    uint32_t id = T->names->intern(T->names->ctx, name, s.len + (uint32_t)k);
    free(name);
    return id;
}

/* Fold deep direct recursion in place, depth first. */
static int tl_fold_recursion(tl_ctx *T, nytp_view_call *calls, uint32_t first)
{
    uint64_t limit = T->v->max_recursion;
    if (!limit)
        return NYTP_OK;
    tl_fold *st = NULL;
    uint64_t *scan = NULL;
    uint32_t cs = 0, cap_scan = 0;
    int status = NYTP_OK;
    for (uint32_t top = first; top != NYTP_VIEW_NO_CALL && !status; top = calls[top].next) {
        uint32_t sp = 0, c = top;
        for (;;) {
            if (c != NYTP_VIEW_NO_CALL) {
                if (!tl_grow((void **)&st, sp + 1, &cs, sizeof *st)) {
                    status = NYTP_E_NOMEM;
                    break;
                }
                tl_fold e = {c, calls[c].first_child, NYTP_VIEW_NOT_DRAWN, 0};
                uint32_t f = calls[c].frame;
                if (f == NYTP_VIEW_NOT_DRAWN) { /* hidden: its caller's run goes on through it */
                    if (sp) {
                        e.frame = st[sp - 1].frame;
                        e.run = st[sp - 1].run;
                    }
                } else {
                    e.frame = f;
                    e.run = sp && st[sp - 1].frame == f ? st[sp - 1].run + 1 : 1;
                    if (e.run == limit + 1) {
                        uint32_t id = tl_folded_frame(T, calls, c, f, &scan, &cap_scan);
                        if (id == NYTP_VIEW_NOT_DRAWN) {
                            status = NYTP_E_NOMEM;
                            break;
                        }
                        calls[c].frame = id;
                    } else if (e.run > limit + 1) {
                        calls[c].frame = NYTP_VIEW_NOT_DRAWN;
                    }
                }
                st[sp++] = e;
            }
            tl_fold *e = &st[sp - 1];
            if (e->child != NYTP_VIEW_NO_CALL) {
                c = e->child;
                e->child = calls[c].next;
                continue;
            }
            if (!--sp)
                break;
            c = NYTP_VIEW_NO_CALL;
        }
    }
    free(st);
    free(scan);
    return status;
}

int nytp_view_apply_calls(nytp_view *v, nytp_view_call **calls, uint32_t *n, uint32_t *cap,
                          uint32_t *first, const nytp_view_names *names, nytp_error *err)
{
    tl_ctx T = {0};
    T.v = v;
    T.names = names;
    int st = NYTP_OK;
    if (nytp_view_active(v, NYTP_VIEW_N_OPS)) {
        nytp_view_call *o;
        uint32_t no, co, of;
        st = tl_filter(&T, *calls, *first, &o, &no, &co, &of);
        if (st == NYTP_OK) {
            free(*calls);
            *calls = o;
            *n = no;
            *cap = co;
            *first = of;
        }
    }
    mark_cache_free(&T.mc);
    if (st == NYTP_OK)
        st = tl_fold_recursion(&T, *calls, *first);
    return st ? nytp_error_set(err, st, "out of memory laying out the time line") : NYTP_OK;
}
/* ---- one name -------------------------------------------------------------- */

unsigned nytp_view_match(const nytp_view *v, const char *name, size_t len)
{
    if (!nytp_view_active(v, NYTP_VIEW_N_OPS))
        return 0;
    char small[256], *buf = len < sizeof small ? small : malloc(len + 1);
    if (!buf)
        return 0;
    memcpy(buf, name, len);
    buf[len] = 0;
    unsigned m = match_ops(v, buf, len);
    if (buf != small)
        free(buf);
    return m;
}

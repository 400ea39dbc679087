/* export.c — the profile, call tree and names that 'nytp pprof' and
 * 'nytp speedscope' share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export.h"
#include "fmt.h"

/* ---- loading ------------------------------------------------------------- */

typedef struct load_ctx {
    export_profile *x;
    int (*hook)(void *ctx, const nytp_chunk *c);
    void *hook_ctx;
    bool started;           /* an input has begun */
} load_ctx;

static int end_input(export_profile *x)
{
    int64_t open = nytp_calltree_end_input(x->t);
    if (open < 0)
        return (int)open;
    x->unreturned += (uint64_t)open;
    return NYTP_OK;
}

static int on_chunk(void *ctx, const nytp_chunk *c)
{
    load_ctx *L = ctx;
    if (c->tag == NYTP_TAG_VERSION) {
        if (L->started && end_input(L->x) < 0)
            return NYTP_E_NOMEM;
        L->started = true;
    }
    int st;
    if (c->tag == NYTP_TAG_SUB_RETURN) {
        /* straight to the tree: the most frequent chunk here */
        L->x->returns++;
        st = nytp_calltree_add_return(L->x->t, c->u.sub_return.depth, c->u.sub_return.incl,
                                      c->u.sub_return.excl, c->u.sub_return.name);
    } else {
        st = nytp_calltree_add_chunk(L->x->t, c);
    }
    if (st < 0)
        return NYTP_E_NOMEM;
    return L->hook ? L->hook(L->hook_ctx, c) : 0;
}

int export_load(export_profile *x, int nfiles, char **files, bool strict,
                int (*hook)(void *ctx, const nytp_chunk *c), void *hook_ctx)
{
    memset(x, 0, sizeof *x);
    nytp_error e = {0};
    if (nytp_calltree_new(&x->t, &e) < 0) {
        cli_error("%s", e.msg);
        return EXIT_BAD_INPUT;
    }
    load_ctx L = {x, hook, hook_ctx, false};
    int rc;
    x->p = cli_load_profile_with(nfiles, files, strict, on_chunk, &L, &rc);
    if (!x->p) {
        nytp_calltree_free(x->t);
        x->t = NULL;
        return rc;
    }
    if (end_input(x) < 0) {
        cli_error("out of memory");
        export_release(x);
        return EXIT_BAD_INPUT;
    }
    if (x->unreturned)
        cli_warn("%llu call%s still open where the profile ends, shown as %s",
                 (unsigned long long)x->unreturned, x->unreturned == 1 ? "" : "s",
                 NYTP_CALLTREE_UNRETURNED);
    return EXIT_OK;
}

int export_load_mem(export_profile *x, const void *data, size_t size, int ninputs,
                    int (*hook)(void *ctx, const nytp_chunk *c), void *hook_ctx)
{
    memset(x, 0, sizeof *x);
    nytp_error e = {0};
    if (nytp_calltree_new(&x->t, &e) < 0)
        return NYTP_E_NOMEM;
    if (nytp_profile_new(&x->p, &e) < 0) {
        export_release(x);
        return NYTP_E_NOMEM;
    }
    load_ctx L = {x, hook, hook_ctx, false};
    int st = NYTP_OK;
    for (int i = 0; i < ninputs && st >= 0; i++) {
        nytp_reader *r;
        if ((st = nytp_reader_open_mem(&r, data, size, &e)) < 0)
            break;
        nytp_load_opts lo = {NULL, NULL, on_chunk, &L, true}; /* as cli_load_profile_with */
        st = nytp_profile_load_reader(x->p, r, "memory", &lo, &e);
        if (st == NYTP_E_TRUNCATED)
            st = NYTP_OK; /* as the commands do without --strict */
    }
    if (st >= 0 && nytp_profile_finish(x->p) < 0)
        st = NYTP_E_NOMEM;
    if (st >= 0 && end_input(x) < 0)
        st = NYTP_E_NOMEM;
    if (st < 0) {
        export_release(x);
        return st;
    }
    return NYTP_OK;
}

void export_release(export_profile *x)
{
    if (x->p)
        nytp_profile_free(x->p);
    if (x->t)
        nytp_calltree_free(x->t);
    strmap_release(&x->sub_names);
    memset(x, 0, sizeof *x);
}

/* ---- subs by name ----------------------------------------------------------- */

static void build_sub_names(export_profile *x)
{
    x->sub_names_built = true;
    char *buf = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; i < x->p->n_subs; i++) {
        const char *name = nytp_profile_str(x->p, x->p->subs[i].name);
        uint32_t len = nytp_profile_strlen(x->p, x->p->subs[i].name);
        if (len + 1 > cap) {
            cap = (size_t)len + 64;
            char *b = realloc(buf, cap);
            if (!b)
                break;
            buf = b;
        }
        size_t n = nytp_calltree_normalise(name, len, buf);
        bool added;
        uint32_t id = strmap_add(&x->sub_names, buf, (uint32_t)n, false, &added);
        if (id == NYTP_NONE)
            break;
        if (added)
            x->sub_names.v[id].value = i;
    }
    free(buf);
}

const nytp_sub *export_find_sub(export_profile *x, const char *name, uint32_t len)
{
    uint32_t id = nytp_profile_sub_by_name(x->p, name, len);
    if (id != NYTP_NONE)
        return &x->p->subs[id];
    /* the call tree numbers string evals 0; the model keeps their numbers */
    if (!x->sub_names_built)
        build_sub_names(x);
    id = strmap_find(&x->sub_names, name, len);
    if (id != NYTP_NONE)
        return &x->p->subs[x->sub_names.v[id].value];
    /* a frame folded from deep recursion is its sub's */
    size_t base = nytp_calltree_unfolded_len(name, len);
    return base < len ? export_find_sub(x, name, (uint32_t)base) : NULL;
}

const char *export_sub_file(const export_profile *x, const nytp_sub *s)
{
    const nytp_file *f = s && s->fid != NYTP_NONE ? nytp_profile_file(x->p, s->fid) : NULL;
    return f && f->defined ? nytp_profile_str(x->p, f->name) : "";
}

/* ---- the view ------------------------------------------------------------------ */

static const char *sub_file(void *ctx, const char *name, uint32_t len)
{
    export_profile *x = ctx;
    return export_sub_file(x, export_find_sub(x, name, len));
}

int export_apply_view(export_profile *x, viewopt *vo)
{
    if (viewopt_active(vo)) {
        if (!x->returns && nytp_calltree_add_sites(x->t, x->p) < 0) {
            cli_error("out of memory");
            return NYTP_E_NOMEM;
        }
        x->viewed = true;
        if (vo->v)
            nytp_view_set_sub_files(vo->v, sub_file, x);
    }
    return viewopt_apply(vo, &x->t);
}

static int add_path(void *ctx, const nytp_calltree_visit *v)
{
    return nytp_calltree_add_path(ctx, v->path, v->depth, v->excl, v->incl, v->calls);
}

nytp_profile *export_load_viewed(int nfiles, char **files, bool strict, viewopt *vo, nytp_view_stats *stats,
                                 nytp_calltree *into, int *rc)
{
    export_profile x;
    memset(&x, 0, sizeof x);
    nytp_error e = {0};
    if (nytp_calltree_new(&x.t, &e) < 0) {
        cli_error("out of memory");
        *rc = EXIT_BAD_INPUT;
        return NULL;
    }
    /* no warning for calls left open: the run's view says what it holds */
    load_ctx L = {&x, NULL, NULL, false};
    x.p = cli_load_profile_with(nfiles, files, strict, on_chunk, &L, rc);
    if (!x.p) {
        export_release(&x);
        return NULL;
    }
    int st = end_input(&x) < 0 ? NYTP_E_NOMEM : NYTP_OK;
    if (st == NYTP_OK) {
        int vst = export_apply_view(&x, vo);
        nytp_view_set_sub_files(vo->v, NULL, NULL);
        if (vst < 0) { /* said */
            export_release(&x);
            *rc = EXIT_BAD_INPUT;
            return NULL;
        }
    }
    if (st == NYTP_OK)
        st = nytp_view_apply_model(vo->v, x.p, x.t, x.p->ticks_per_sec);
    nytp_view_stats vs;
    nytp_view_get_stats(vo->v, &vs);
    viewopt_stats_add(stats, &vs);
    if (st == NYTP_OK && into) {
        st = nytp_calltree_walk(x.t, 0, add_path, into);
        nytp_calltree_copy_attrs(into, x.t);
    }
    nytp_profile *p = x.p;
    x.p = NULL;
    export_release(&x);
    if (st < 0) {
        cli_error("out of memory");
        nytp_profile_free(p);
        *rc = EXIT_BAD_INPUT;
        return NULL;
    }
    return p;
}

/* ---- call-site paths --------------------------------------------------------- */

int export_site_paths(const export_profile *x, export_site_fn fn, void *ctx)
{
    const nytp_profile *p = x->p;
    for (uint32_t i = 0; i < p->n_sites; i++) {
        const nytp_site *s = &p->sites[i];
        const nytp_sub *called = &p->subs[s->called];
        nytp_str path[2];
        uint32_t depth = 0;
        if (s->n_callers == 1) {
            path[depth++] = (nytp_str){nytp_profile_str(p, s->callers[0]),
                                       nytp_profile_strlen(p, s->callers[0]), false};
        }
        path[depth++] = (nytp_str){nytp_profile_str(p, called->name),
                                   nytp_profile_strlen(p, called->name), false};
        int rc = fn(ctx, path, depth, depth == 2 ? s->fid : 0, depth == 2 ? s->line : 0, s->excl,
                    s->count);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- text ------------------------------------------------------------------ */

const char *export_utf8(const char *s, uint32_t len, uint32_t *out_len, char **tofree)
{
    const unsigned char *u = (const unsigned char *)s;
    *tofree = NULL;
    size_t extra = 0;
    for (uint32_t i = 0; i < len;) {
        size_t n = fmt_utf8_seq(u + i, len - i);
        if (n == 0) {
            extra++;
            n = 1;
        }
        i += (uint32_t)n;
    }
    if (!extra) {
        *out_len = len;
        return s;
    }
    char *o = malloc((size_t)len + extra + 1), *w = o;
    if (!o)
        return NULL;
    for (uint32_t i = 0; i < len;) {
        size_t n = fmt_utf8_seq(u + i, len - i);
        if (n) {
            memcpy(w, s + i, n);
            w += n;
            i += (uint32_t)n;
        } else {
            *w++ = (char)(0xC0 | (u[i] >> 6));
            *w++ = (char)(0x80 | (u[i] & 0x3F));
            i++;
        }
    }
    *w = 0;
    *out_len = (uint32_t)(w - o);
    *tofree = o;
    return o;
}

/* model_derive.c — what is derived from a loaded profile: the tables
 * nytp_profile_finish fills (callee lists, eval roots, each file's subs),
 * and the rewrites that change them (sibling string evals collapsed into
 * one, files named more than once folded into one). */
#include <stdlib.h>
#include <string.h>

#include "nytp/model.h"
#include "model_impl.h"

/* The callee lists: every site lists its calling subs by name; turn that
 * around so a report can go from a sub to the calls it made.  Two passes
 * (count, then fill) keep it to one allocation per sub. */
static int build_callees(nytp_profile *p)
{
    for (uint32_t i = 0; i < p->n_subs; i++) {
        free(p->subs[i].callees);
        p->subs[i].callees = NULL;
        p->subs[i].n_callees = 0;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < p->n_sites; i++) {
            const nytp_site *st = &p->sites[i];
            for (uint32_t k = 0; k < st->n_callers; k++) {
                uint32_t sub = u64map_get(&p->impl->sub_by_name, st->callers[k]);
                if (sub == NYTP_NONE)
                    continue;
                nytp_sub *s = &p->subs[sub];
                if (pass)
                    s->callees[s->n_callees] = i;
                s->n_callees++;
            }
        }
        if (pass)
            break;
        for (uint32_t i = 0; i < p->n_subs; i++) {
            nytp_sub *s = &p->subs[i];
            if (s->n_callees && !(s->callees = malloc(s->n_callees * sizeof *s->callees)))
                return NYTP_E_NOMEM;
            s->n_callees = 0;
        }
    }
    return NYTP_OK;
}

/* eval_depth, root_fid and root_line of every file, and evals_by_depth:
 * each file's chain of parents is walked once, the walk stopping at the
 * first file already resolved, so the work is linear in the files however
 * deep the nesting. */
static int derive_eval_roots(nytp_profile *p)
{
    uint32_t n = p->n_files;
    free(p->evals_by_depth);
    p->evals_by_depth = NULL;
    p->n_evals_by_depth = 0;
    if (!n)
        return NYTP_OK;
    /* state: 0 not seen, 1 on the walk in progress, 2 resolved */
    unsigned char *state = calloc(n, 1);
    uint32_t *path = malloc((size_t)n * sizeof *path);
    if (!state || !path) {
        free(state);
        free(path);
        return NYTP_E_NOMEM;
    }
    uint32_t n_evals = 0, max_depth = 0;
    for (uint32_t fid = 0; fid < n; fid++) {
        uint32_t np = 0, at = fid;
        while (!state[at]) {
            state[at] = 1;
            path[np++] = at;
            uint32_t up = p->files[at].eval_fid;
            if (!up || up >= n || !p->files[up].defined)
                break;
            at = up;
        }
        /* path[np-1] is a file, or its parent is resolved or on this walk
         * (a cycle, cut here) */
        while (np) {
            nytp_file *f = &p->files[path[--np]];
            uint32_t up = f->eval_fid;
            if (!up || up >= n || !p->files[up].defined || state[up] != 2) {
                f->eval_depth = 0;
                f->root_fid = f->fid;
                f->root_line = 0;
            } else {
                const nytp_file *pf = &p->files[up];
                f->eval_depth = pf->eval_depth + 1;
                f->root_fid = pf->root_fid;
                f->root_line = pf->eval_depth ? pf->root_line : f->eval_line;
                n_evals++;
                if (f->eval_depth > max_depth)
                    max_depth = f->eval_depth;
            }
            state[f->fid] = 2;
        }
    }
    free(state);
    /* order by depth (a counting sort; path holds the counts) */
    uint32_t *order = n_evals ? malloc((size_t)n_evals * sizeof *order) : NULL;
    uint32_t *start = n_evals ? calloc((size_t)max_depth + 2, sizeof *start) : NULL;
    if (n_evals && (!order || !start)) {
        free(order);
        free(start);
        free(path);
        return NYTP_E_NOMEM;
    }
    for (uint32_t fid = 0; fid < n && n_evals; fid++)
        if (p->files[fid].eval_depth)
            start[p->files[fid].eval_depth + 1]++;
    for (uint32_t d = 1; n_evals && d <= max_depth + 1; d++)
        start[d] += start[d - 1];
    for (uint32_t fid = 0; fid < n && n_evals; fid++)
        if (p->files[fid].eval_depth)
            order[start[p->files[fid].eval_depth]++] = fid;
    free(start);
    free(path);
    p->evals_by_depth = order;
    p->n_evals_by_depth = n_evals;
    return NYTP_OK;
}

int nytp_profile_finish(nytp_profile *p)
{
    /* Subs that were called but have no file (xsubs that died, subs that
     * never existed, opcodes of packages with no file) are given file 1,
     * as Devel::NYTProf::Data does; with no file 1 their fid becomes 0. */
    bool have1 = p->n_files > 1 && p->files[1].defined;
    for (uint32_t i = 0; i < p->n_subs; i++) {
        nytp_sub *s = &p->subs[i];
        if (!s->calls || (s->fid != NYTP_NONE && s->fid != 0))
            continue;
        if (!have1) {
            s->fid = 0;
            continue;
        }
        s->fid = 1;
        nytp_file *f = &p->files[1];
        bool present = false;
        for (uint32_t k = 0; k < f->n_subs; k++)
            present |= f->subs[k] == i;
        if (!present && !PUSH(f->subs, f->n_subs, f->cap_subs, i))
            return NYTP_E_NOMEM;
    }
    int st = derive_eval_roots(p);
    return st < 0 ? st : build_callees(p);
}

/* ---- collapsing sibling string evals ------------------------------------ */

typedef struct collapser {
    nytp_profile *p;
    bool *dead_site, *dead_sub;
    kmap site_at;            /* (called, fid << 32 | line) -> site (see find_site) */
    bool site_at_built;
    uint32_t *in_survivor;   /* sub -> stamp of the survivor whose list has it */
    uint32_t stamp;
    bool oom;
} collapser;

/* A digest of a file's saved source for telling sibling evals apart: line
 * count, total length and a 64-bit FNV-1a hash of the lines (Devel::NYTProf
 * uses a 32-bit byte sum; a real hash makes "same source" mean it).
 * False when no source was saved. */
static bool src_digest(const nytp_file *f, uint64_t d[3])
{
    uint64_t len = 0, h = 14695981039346656037ULL;
    for (uint32_t i = 0; i < f->src.n; i++) {
        const nytp_srcline *sl = &f->src.v[i];
        if (sl->line == 0)
            continue;
        for (int k = 0; k < 32; k += 8) /* the line number, then the text */
            h = (h ^ ((sl->line >> k) & 0xFF)) * 1099511628211ULL;
        len += sl->text.len;
        for (uint32_t k = 0; k < sl->text.len; k++)
            h = (h ^ (unsigned char)sl->text.ptr[k]) * 1099511628211ULL;
    }
    if (len == 0)
        return false;
    d[0] = nytp_src_last(&f->src);
    d[1] = len;
    d[2] = h;
    return true;
}

static bool has_byte_seq(const char *s, uint32_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (uint32_t i = 0; i + n <= len; i++)
        if (memcmp(s + i, needle, n) == 0)
            return true;
    return false;
}

static void remove_id(uint32_t *v, uint32_t *n, uint32_t id)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (v[i] == id) {
            memmove(v + i, v + i + 1, (*n - i - 1) * sizeof *v);
            (*n)--;
            return;
        }
    }
}

/* Merge the counts of site src into dst (Devel::NYTProf's rule: sums of
 * count and times, the larger depth and recursive time, callers united). */
static void merge_site(collapser *C, nytp_site *dst, const nytp_site *src)
{
    dst->count += src->count;
    dst->incl += src->incl;
    dst->excl += src->excl;
    if (src->rec_depth > dst->rec_depth)
        dst->rec_depth = src->rec_depth;
    if (src->reci > dst->reci)
        dst->reci = src->reci;
    dst->view |= src->view;
    for (uint32_t i = 0; i < src->n_callers; i++) {
        bool have = false;
        for (uint32_t k = 0; k < dst->n_callers; k++)
            have |= dst->callers[k] == src->callers[i];
        if (!have && !PUSH(dst->callers, dst->n_callers, dst->cap_callers, src->callers[i]))
            C->oom = true;
    }
}

/* The live site of sub `called` at fid:line, or NYTP_NONE.  C->site_at
 * has every live site under its (called, fid, line), and may still have
 * a site under a key it has left or a site since merged away: checked. */
static uint32_t find_site(collapser *C, uint32_t called, uint32_t fid, uint32_t line)
{
    nytp_profile *p = C->p;
    if (!C->site_at_built) {
        for (uint32_t i = 0; i < p->n_sites; i++)
            if (!C->dead_site[i] &&
                !kmap_put(&C->site_at, p->sites[i].called, (uint64_t)p->sites[i].fid << 32 | p->sites[i].line, i))
                C->oom = true;
        C->site_at_built = true;
    }
    uint32_t sid = kmap_get(&C->site_at, called, (uint64_t)fid << 32 | line);
    if (sid == KMAP_NONE || C->dead_site[sid])
        return NYTP_NONE;
    const nytp_site *x = &p->sites[sid];
    return x->called == called && x->fid == fid && x->line == line ? sid : NYTP_NONE;
}

/* Move site sid to (called, fid): merge into an existing one or re-home
 * it.  The site stays in the lists of its old file (when that changes)
 * and of its old sub, which the caller drops whole, and when merged in the
 * lists it is in, for compact() to drop: readers skip dead sites. */
static void move_site(collapser *C, uint32_t sid, uint32_t called, uint32_t fid)
{
    nytp_profile *p = C->p;
    nytp_site *s = &p->sites[sid];
    uint32_t old_fid = s->fid, old_called = s->called;
    uint32_t into = find_site(C, called, fid, s->line);
    if (into == sid)
        return;
    if (into != NYTP_NONE) {
        merge_site(C, &p->sites[into], s);
        C->dead_site[sid] = true;
        return;
    }
    if (old_fid == fid) /* re-homed in its file: it goes to the end of its list */
        remove_id(p->files[old_fid].sites, &p->files[old_fid].n_sites, sid);
    s->fid = fid;
    nytp_file *f = &p->files[fid];
    if (!PUSH(f->sites, f->n_sites, f->cap_sites, sid))
        C->oom = true;
    if (called != old_called) {
        s->called = called;
        nytp_sub *ns = &p->subs[called];
        if (!PUSH(ns->sites, ns->n_sites, ns->cap_sites, sid))
            C->oom = true;
    }
    if (!kmap_put(&C->site_at, called, (uint64_t)fid << 32 | s->line, sid))
        C->oom = true;
}

static void add_lines(collapser *C, nytp_lines *dst, nytp_lines *src)
{
    uint32_t n0 = dst->n;
    for (uint32_t i = 0; i < src->n; i++) {
        const nytp_linestat *d = &src->v[i];
        /* dst's first n0 entries are sorted; those appended come later */
        nytp_linestat *s = (nytp_linestat *)nytp_lines_get(&(nytp_lines){dst->v, n0, n0}, d->line);
        if (!s) {
            if (!kmap_grow_array((void **)&dst->v, dst->n, &dst->cap, sizeof *dst->v)) {
                C->oom = true;
                return;
            }
            s = &dst->v[dst->n++];
            *s = (nytp_linestat){0, 0, d->line, true};
        }
        s->time += d->time;
        s->count += d->count;
    }
    model_sort_lines(dst);
    free(src->v);
    src->v = NULL;
    src->n = src->cap = 0;
}

/* Number the n items of v (each `stride` words, compared whole) by
 * equal value, in order of first appearance: cls[i] is item i's class,
 * and the count of classes is returned (UINT32_MAX when out of memory).
 * Hashed, so linear in n. */
static uint32_t classify(const uint64_t *v, size_t stride, uint32_t n, uint32_t *cls)
{
    kmap m = {0};
    uint32_t *rep = malloc((n ? n : 1) * sizeof *rep); /* class -> its first item */
    uint32_t ncls = 0;
    if (!rep)
        return UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t *x = v + i * stride;
        uint64_t h = 0;
        for (size_t k = 0; k < stride; k++)
            h = kmap_mix64(h ^ x[k]) + k;
        /* a hash shared by different values goes on to the next salt */
        uint64_t salt = 0;
        uint32_t c;
        while ((c = kmap_get(&m, h, salt)) != KMAP_NONE &&
               memcmp(v + (size_t)rep[c] * stride, x, stride * sizeof *x) != 0)
            salt++;
        if (c == KMAP_NONE) {
            c = ncls++;
            rep[c] = i;
            if (!kmap_put(&m, h, salt, c)) {
                ncls = UINT32_MAX;
                break;
            }
        }
        cls[i] = c;
    }
    kmap_free(&m);
    free(rep);
    return ncls;
}

/* Order the items 0..n-1 by class (of ncls), keeping their order within
 * a class: the items of class c are out[at[c]] .. out[at[c + 1] - 1]. */
static void bucket(const uint32_t *cls, uint32_t n, uint32_t ncls, uint32_t *at, uint32_t *out)
{
    memset(at, 0, (ncls + 1) * sizeof *at);
    for (uint32_t i = 0; i < n; i++)
        at[cls[i] + 1]++;
    for (uint32_t c = 0; c < ncls; c++)
        at[c + 1] += at[c];
    for (uint32_t i = 0; i < n; i++)
        out[at[cls[i]]++] = i;
    for (uint32_t c = ncls; c > 0; c--) /* back to the starts */
        at[c] = at[c - 1];
    at[0] = 0;
}

/* Merge anon subs of the survivor whose names differ only in eval
 * sequence numbers ("(eval 12)" -> "(eval 0)") into the first by name. */
static void merge_anon_subs(collapser *C, nytp_file *sf)
{
    nytp_profile *p = C->p;
    uint32_t n = sf->n_subs;
    char **norm = calloc(n ? n : 1, sizeof *norm);
    if (!norm) {
        C->oom = true;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *name = nytp_profile_str(p, p->subs[sf->subs[i]].name);
        uint32_t len = nytp_profile_strlen(p, p->subs[sf->subs[i]].name);
        if (!has_byte_seq(name, len, "::__ANON__"))
            continue;
        char *o = norm[i] = malloc((size_t)len + 1);
        if (!o) {
            C->oom = true;
            break;
        }
        uint32_t k = 0;
        while (k < len) {
            /* "(eval " or "(re_eval " then digits then ")" */
            uint32_t pre = 0;
            if (k + 6 <= len && memcmp(name + k, "(eval ", 6) == 0)
                pre = 6;
            else if (k + 9 <= len && memcmp(name + k, "(re_eval ", 9) == 0)
                pre = 9;
            uint32_t d = k + pre;
            while (pre && d < len && name[d] >= '0' && name[d] <= '9')
                d++;
            if (pre && d > k + pre && d < len && name[d] == ')') {
                memcpy(o, name + k, pre);
                o += pre;
                *o++ = '0';
                k = d;
                continue;
            }
            *o++ = name[k++];
        }
        *o = 0;
    }
    /* the groups of equal normalised names, in the order of their first
     * live member, each member in order: by hash, a generated eval may
     * define 100,000 anon subs */
    uint32_t *live = malloc((n ? n : 1) * sizeof *live), *cls = calloc(n ? n : 1, sizeof *cls);
    uint32_t *rep = malloc((n ? n : 1) * sizeof *rep), *at = malloc((n + 1) * sizeof *at);
    uint32_t *by_cls = malloc((n ? n : 1) * sizeof *by_cls);
    kmap m = {0};
    uint32_t n_live = 0, ncls = 0;
    bool ok = live && cls && rep && at && by_cls && !C->oom;
    for (uint32_t i = 0; ok && i < n; i++) {
        if (!norm[i] || C->dead_sub[sf->subs[i]])
            continue;
        uint64_t h = 14695981039346656037ULL;
        for (const char *c = norm[i]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
        uint64_t salt = 0;
        uint32_t k;
        while ((k = kmap_get(&m, h, salt)) != KMAP_NONE && strcmp(norm[rep[k]], norm[i]) != 0)
            salt++;
        if (k == KMAP_NONE) {
            k = ncls++;
            rep[k] = i;
            ok = kmap_put(&m, h, salt, k);
        }
        live[n_live] = i;
        cls[n_live++] = k;
    }
    kmap_free(&m);
    if (!ok)
        C->oom = true;
    else
        bucket(cls, n_live, ncls, at, by_cls);
    for (uint32_t g = 0; ok && g < ncls; g++) {
        const uint32_t *mem = by_cls + at[g];
        uint32_t nmem = at[g + 1] - at[g];
        /* survivor of a group: the first by full name (byte order) */
        uint32_t surv = live[mem[0]];
        for (uint32_t x = 1; x < nmem; x++) {
            uint32_t j = live[mem[x]];
            uint32_t a = p->subs[sf->subs[j]].name, b = p->subs[sf->subs[surv]].name;
            uint32_t la = nytp_profile_strlen(p, a), lb = nytp_profile_strlen(p, b);
            int c = memcmp(nytp_profile_str(p, a), nytp_profile_str(p, b), la < lb ? la : lb);
            if (c < 0 || (c == 0 && la < lb))
                surv = j;
        }
        for (uint32_t x = 0; x < nmem; x++) {
            uint32_t j = live[mem[x]];
            if (j == surv)
                continue;
            nytp_sub *keep = &p->subs[sf->subs[surv]];
            uint32_t gone_id = sf->subs[j];
            nytp_sub *gone = &p->subs[gone_id];
            if (gone->first_line != NYTP_NONE &&
                (keep->first_line == NYTP_NONE || gone->first_line < keep->first_line))
                keep->first_line = gone->first_line;
            if (gone->last_line != NYTP_NONE &&
                (keep->last_line == NYTP_NONE || gone->last_line > keep->last_line))
                keep->last_line = gone->last_line;
            keep->calls += gone->calls;
            keep->incl += gone->incl;
            keep->excl += gone->excl;
            keep->reci += gone->reci;
            if (gone->rec_depth > keep->rec_depth)
                keep->rec_depth = gone->rec_depth;
            uint32_t keep_id = sf->subs[surv];
            /* move_site adds to keep's list, never to gone's */
            for (uint32_t k = 0; k < gone->n_sites; k++) {
                uint32_t sid = gone->sites[k];
                if (!C->dead_site[sid])
                    move_site(C, sid, keep_id, p->sites[sid].fid);
                gone = &p->subs[gone_id];
            }
            gone->n_sites = 0;
            C->dead_sub[gone_id] = true;
        }
    }
    free(live);
    free(cls);
    free(rep);
    free(at);
    free(by_cls);
    for (uint32_t i = 0; i < n; i++)
        free(norm[i]);
    free(norm);
    /* drop the merged subs from the file's list */
    uint32_t k = 0;
    for (uint32_t i = 0; i < sf->n_subs; i++)
        if (!C->dead_sub[sf->subs[i]])
            sf->subs[k++] = sf->subs[i];
    sf->n_subs = k;
}

static void free_file_data(nytp_file *f)
{
    free(f->evals);
    free(f->subs);
    free(f->sites);
    free(f->line.v);
    free(f->block.v);
    free(f->sub.v);
    model_free_src(&f->src);
    uint32_t fid = f->fid;
    memset(f, 0, sizeof *f);
    f->fid = fid;
}

/* Fold donors (siblings of survivor) into survivor; the caller takes
 * them off their parent's list of evals. */
static void collapse_into(collapser *C, uint32_t survivor, const uint32_t *donors, uint32_t n)
{
    nytp_profile *p = C->p;
    /* the survivor's subs, marked: a file is a survivor once */
    C->stamp++;
    for (uint32_t i = 0; i < p->files[survivor].n_subs; i++)
        C->in_survivor[p->files[survivor].subs[i]] = C->stamp;
    for (uint32_t d = 0; d < n; d++) {
        nytp_file *df = &p->files[donors[d]];
        nytp_file *sf = &p->files[survivor];
        /* subs defined in the donor move to the survivor */
        for (uint32_t i = 0; i < df->n_subs; i++) {
            uint32_t id = df->subs[i];
            nytp_sub *s = &p->subs[id];
            if (s->fid != df->fid)
                continue;
            s->fid = survivor;
            if (C->in_survivor[id] != C->stamp) {
                C->in_survivor[id] = C->stamp;
                if (!PUSH(sf->subs, sf->n_subs, sf->cap_subs, id))
                    C->oom = true;
            }
        }
        /* calls made from the donor move to the survivor's lines (the
         * donor's list goes with the donor) */
        for (uint32_t i = 0; i < df->n_sites; i++) {
            uint32_t sid = df->sites[i];
            if (!C->dead_site[sid])
                move_site(C, sid, p->sites[sid].called, survivor);
        }
        df->n_sites = 0;
        sf = &p->files[survivor];
        add_lines(C, &sf->line, &df->line);
        add_lines(C, &sf->block, &df->block);
        add_lines(C, &sf->sub, &df->sub);
        sf->merged_evals += 1 + df->merged_evals;
        free_file_data(&p->files[donors[d]]);
    }
    merge_anon_subs(C, &p->files[survivor]);
}

/* Fold the sibling evals run in parent (whose own evals are folded
 * already).  Siblings are grouped by the line that ran them, then by
 * source, each by hash: a loop running 100,000 evals makes groups that
 * large. */
static void collapse_in(collapser *C, uint32_t parent)
{
    nytp_profile *p = C->p;
    nytp_file *pf = &p->files[parent];
    uint32_t n = pf->n_evals;
    if (n < 2)
        return;
    uint32_t *kids = malloc(n * sizeof *kids);
    uint64_t(*keys)[4] = malloc(n * sizeof *keys);
    uint64_t(*lines)[1] = malloc(n * sizeof *lines);
    uint32_t *line_cls = malloc(n * sizeof *line_cls), *by_line = malloc(n * sizeof *by_line);
    uint32_t *line_at = malloc((n + 1) * sizeof *line_at);
    uint64_t(*skeys)[4] = malloc(n * sizeof *skeys);
    uint32_t *src_cls = malloc(n * sizeof *src_cls), *by_src = malloc(n * sizeof *by_src);
    uint32_t *src_at = malloc((n + 1) * sizeof *src_at);
    uint32_t *group = malloc(n * sizeof *group);
    bool *gone = calloc(n, sizeof *gone);
    if (!kids || !keys || !lines || !line_cls || !by_line || !line_at || !skeys || !src_cls || !by_src ||
        !src_at || !group || !gone) {
        C->oom = true;
        goto out;
    }
    memcpy(kids, pf->evals, n * sizeof *kids);
    for (uint32_t i = 0; i < n; i++) {
        const nytp_file *f = &p->files[kids[i]];
        uint64_t d[3] = {0, 0, 0};
        bool has_src = src_digest(f, d);
        keys[i][0] = d[0];
        keys[i][1] = d[1];
        keys[i][2] = d[2];
        /* no source: tell apart by whether they run evals or define subs */
        keys[i][3] = has_src ? 0 : 1 | (f->n_evals ? 2 : 0) | (f->n_subs ? 4 : 0);
        lines[i][0] = f->eval_line;
    }
    /* the lines in the order they first ran an eval, and each line's
     * siblings in the order they ran */
    uint32_t nlines = classify(&lines[0][0], 1, n, line_cls);
    if (nlines == UINT32_MAX) {
        C->oom = true;
        goto out;
    }
    bucket(line_cls, n, nlines, line_at, by_line);
    for (uint32_t l = 0; l < nlines; l++) {
        const uint32_t *sib = by_line + line_at[l];
        uint32_t nsib = line_at[l + 1] - line_at[l];
        if (nsib < 2)
            continue;
        for (uint32_t j = 0; j < nsib; j++)
            memcpy(skeys[j], keys[sib[j]], sizeof skeys[j]);
        uint32_t nkeys = classify(&skeys[0][0], 4, nsib, src_cls);
        if (nkeys == UINT32_MAX) {
            C->oom = true;
            goto out;
        }
        if (nkeys > 200) {
            /* too many different sources: fold them all into the first */
            for (uint32_t j = 1; j < nsib; j++) {
                group[j - 1] = kids[sib[j]];
                gone[sib[j]] = true;
            }
            collapse_into(C, kids[sib[0]], group, nsib - 1);
            continue;
        }
        /* ... with the same source, none running evals of its own */
        bucket(src_cls, nsib, nkeys, src_at, by_src);
        for (uint32_t k = 0; k < nkeys; k++) {
            const uint32_t *same = by_src + src_at[k];
            uint32_t g = src_at[k + 1] - src_at[k] - 1;
            bool nested = false;
            for (uint32_t j = 0; j <= g; j++)
                nested |= p->files[kids[sib[same[j]]]].n_evals > 0;
            if (!g || nested)
                continue;
            for (uint32_t j = 1; j <= g; j++) {
                group[j - 1] = kids[sib[same[j]]];
                gone[sib[same[j]]] = true;
            }
            collapse_into(C, kids[sib[same[0]]], group, g);
        }
    }
    /* the folded siblings leave the parent's list, the others keep their
     * order */
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!gone[i])
            pf->evals[m++] = kids[i];
    pf->n_evals = m;
out:
    free(kids);
    free(keys);
    free(lines);
    free(line_cls);
    free(by_line);
    free(line_at);
    free(skeys);
    free(src_cls);
    free(by_src);
    free(src_at);
    free(group);
    free(gone);
}

/* Drop dead sites and subs and renumber what refers to them. */
static int compact(collapser *C)
{
    nytp_profile *p = C->p;
    uint32_t *site_map = malloc((p->n_sites + 1) * sizeof *site_map);
    uint32_t *sub_map = malloc((p->n_subs + 1) * sizeof *sub_map);
    if (!site_map || !sub_map) {
        free(site_map);
        free(sub_map);
        return NYTP_E_NOMEM;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->n_sites; i++) {
        if (C->dead_site[i]) {
            free(p->sites[i].callers);
            site_map[i] = NYTP_NONE;
            continue;
        }
        site_map[i] = k;
        p->sites[k++] = p->sites[i];
    }
    p->n_sites = k;
    k = 0;
    for (uint32_t i = 0; i < p->n_subs; i++) {
        if (C->dead_sub[i]) {
            free(p->subs[i].sites);
            free(p->subs[i].callees);
            sub_map[i] = NYTP_NONE;
            continue;
        }
        sub_map[i] = k;
        p->subs[k++] = p->subs[i];
    }
    p->n_subs = k;
    for (uint32_t i = 0; i < p->n_sites; i++)
        p->sites[i].called = sub_map[p->sites[i].called];
    for (uint32_t i = 0; i < p->n_subs; i++) {
        nytp_sub *s = &p->subs[i];
        uint32_t m = 0;
        for (uint32_t j = 0; j < s->n_sites; j++)
            if (site_map[s->sites[j]] != NYTP_NONE)
                s->sites[m++] = site_map[s->sites[j]];
        s->n_sites = m;
    }
    for (uint32_t f = 0; f < p->n_files; f++) {
        nytp_file *fi = &p->files[f];
        uint32_t m = 0;
        for (uint32_t j = 0; j < fi->n_sites; j++)
            if (site_map[fi->sites[j]] != NYTP_NONE)
                fi->sites[m++] = site_map[fi->sites[j]];
        fi->n_sites = m;
        m = 0;
        for (uint32_t j = 0; j < fi->n_subs; j++)
            if (sub_map[fi->subs[j]] != NYTP_NONE)
                fi->subs[m++] = sub_map[fi->subs[j]];
        fi->n_subs = m;
    }
    /* rebuild the indexes */
    u64map_free(&p->impl->sub_by_name);
    u64map_free(&p->impl->site_by_key);
    int st = NYTP_OK;
    for (uint32_t i = 0; i < p->n_subs; i++)
        if (!u64map_put(&p->impl->sub_by_name, p->subs[i].name, i))
            st = NYTP_E_NOMEM;
    for (uint32_t i = 0; i < p->n_sites; i++) {
        const nytp_site *s = &p->sites[i];
        uint64_t key = ((uint64_t)s->called << 40) ^ ((uint64_t)s->fid << 24) ^ s->line;
        while (u64map_get(&p->impl->site_by_key, key) != NYTP_NONE)
            key = kmap_mix64(key + 1);
        if (!u64map_put(&p->impl->site_by_key, key, i))
            st = NYTP_E_NOMEM;
    }
    free(site_map);
    free(sub_map);
    if (st == NYTP_OK)
        st = build_callees(p);
    return st;
}

static void collapser_free(collapser *C)
{
    free(C->dead_site);
    free(C->dead_sub);
    free(C->in_survivor);
    kmap_free(&C->site_at);
}

int nytp_profile_collapse_evals(nytp_profile *p)
{
    collapser C = {0};
    C.p = p;
    C.dead_site = calloc(p->n_sites + 1, sizeof(bool));
    C.dead_sub = calloc(p->n_subs + 1, sizeof(bool));
    C.in_survivor = calloc(p->n_subs + 1, sizeof *C.in_survivor);
    if (!C.dead_site || !C.dead_sub || !C.in_survivor) {
        collapser_free(&C);
        return NYTP_E_NOMEM;
    }
    /* the deepest evals first, so every eval's own evals are folded
     * before it is compared with its siblings; the outermost files last */
    if (derive_eval_roots(p) < 0) {
        collapser_free(&C);
        return NYTP_E_NOMEM;
    }
    for (uint32_t i = p->n_evals_by_depth; i-- > 0;)
        collapse_in(&C, p->evals_by_depth[i]);
    for (uint32_t fid = 1; fid < p->n_files; fid++)
        if (p->files[fid].defined && !p->files[fid].eval_fid)
            collapse_in(&C, fid);
    int st = compact(&C);
    if (st == NYTP_OK)
        st = derive_eval_roots(p);
    collapser_free(&C);
    return C.oom ? NYTP_E_NOMEM : st;
}

/* ---- files named more than once ----------------------------------------- */

int nytp_profile_fold_files(nytp_profile *p, const uint32_t *into)
{
    collapser C = {0};
    C.p = p;
    C.dead_site = calloc(p->n_sites + 1, sizeof(bool));
    C.dead_sub = calloc(p->n_subs + 1, sizeof(bool));
    C.in_survivor = calloc(p->n_subs + 1, sizeof *C.in_survivor);
    bool *folded = calloc((size_t)p->n_files + 1, sizeof *folded);
    if (!C.dead_site || !C.dead_sub || !C.in_survivor || !folded) {
        collapser_free(&C);
        free(folded);
        return NYTP_E_NOMEM;
    }
    bool any = false;
    for (uint32_t d = 1; d < p->n_files; d++) {
        uint32_t t = into[d];
        if (t == d || t >= p->n_files || into[t] != t || p->files[d].eval_fid || p->files[t].eval_fid)
            continue;
        any = folded[d] = true;
        /* every sub placed in the donor, defined there or only listed,
         * once on the target's list (marked: no scan per sub) */
        C.stamp++;
        for (uint32_t k = 0; k < p->files[t].n_subs; k++)
            C.in_survivor[p->files[t].subs[k]] = C.stamp;
        for (uint32_t i = 0; i < p->files[d].n_subs; i++) {
            uint32_t sid = p->files[d].subs[i];
            if (p->subs[sid].fid == d)
                p->subs[sid].fid = t;
            nytp_file *tf = &p->files[t];
            if (C.in_survivor[sid] == C.stamp)
                continue;
            C.in_survivor[sid] = C.stamp;
            if (!PUSH(tf->subs, tf->n_subs, tf->cap_subs, sid))
                C.oom = true;
        }
        /* the sites stay on the donor's list, which goes whole below */
        for (uint32_t i = 0; i < p->files[d].n_sites; i++) {
            uint32_t sid = p->files[d].sites[i];
            if (!C.dead_site[sid] && p->sites[sid].fid == d)
                move_site(&C, sid, p->sites[sid].called, t);
        }
        nytp_file *df = &p->files[d], *tf = &p->files[t];
        add_lines(&C, &tf->line, &df->line);
        add_lines(&C, &tf->block, &df->block);
        add_lines(&C, &tf->sub, &df->sub);
        for (uint32_t i = 0; i < df->n_evals; i++) {
            p->files[df->evals[i]].eval_fid = t;
            if (!PUSH(tf->evals, tf->n_evals, tf->cap_evals, df->evals[i]))
                C.oom = true;
        }
        if (!tf->src.n) { /* the first saved source of the file serves */
            nytp_src keep = tf->src;
            tf->src = df->src;
            df->src = keep;
        }
        free_file_data(df);
    }
    /* subs placed in a donor but not on its list */
    for (uint32_t i = 0; any && i < p->n_subs; i++) {
        uint32_t f = p->subs[i].fid;
        if (f != NYTP_NONE && f < p->n_files && folded[f])
            p->subs[i].fid = into[f];
    }
    int st = any ? compact(&C) : NYTP_OK;
    if (any && st == NYTP_OK)
        st = derive_eval_roots(p);
    bool oom = C.oom;
    collapser_free(&C);
    free(folded);
    return oom ? NYTP_E_NOMEM : st;
}

/* ---- sites replaced (a view's) ------------------------------------------- */

int nytp_profile_replace_sites(nytp_profile *p, nytp_site *sites, uint32_t n)
{
    for (uint32_t i = 0; i < p->n_sites; i++)
        free(p->sites[i].callers);
    free(p->sites);
    p->sites = sites;
    p->n_sites = p->cap_sites = n;
    for (uint32_t i = 0; i < p->n_subs; i++)
        p->subs[i].n_sites = 0;
    for (uint32_t f = 0; f < p->n_files; f++)
        p->files[f].n_sites = 0;
    u64map_free(&p->impl->site_by_key);
    int st = NYTP_OK;
    for (uint32_t i = 0; i < n && st == NYTP_OK; i++) {
        const nytp_site *s = &sites[i];
        nytp_sub *sub = &p->subs[s->called];
        nytp_file *f = &p->files[s->fid];
        uint64_t key = ((uint64_t)s->called << 40) ^ ((uint64_t)s->fid << 24) ^ s->line;
        while (u64map_get(&p->impl->site_by_key, key) != NYTP_NONE)
            key = kmap_mix64(key + 1);
        if (!PUSH(sub->sites, sub->n_sites, sub->cap_sites, i) || !PUSH(f->sites, f->n_sites, f->cap_sites, i) ||
            !u64map_put(&p->impl->site_by_key, key, i))
            st = NYTP_E_NOMEM;
    }
    return st == NYTP_OK ? build_callees(p) : st;
}

/* diff_compare.c — the comparison of 'nytp diff': the two sides' subs,
 * lines and files matched by name into rows, their order, and the check
 * of --fail-above with its messages.  The outputs (diff_text.c,
 * diff_json.c, diff_svg.c) read what it computed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "term.h"
#include "diff_impl.h"

/* ---- a map from byte strings to dense indexes ------------------------------- */


/* The index of key in m (diff's names: subs, line keys, files); with
 * add, a new one when it is missing (*added set).  NYTP_NONE: missing,
 * or out of memory (*oom set). */
uint32_t diff_bmap_find(strmap *m, const char *key, size_t len, bool add, bool *added, bool *oom)
{
    if (added)
        *added = false;
    if (len > UINT32_MAX - 1) {
        *oom = true;
        return NYTP_NONE;
    }
    if (!add)
        return strmap_find(m, key, (uint32_t)len);
    uint32_t id = strmap_add(m, key, (uint32_t)len, false, added);
    if (id == NYTP_NONE)
        *oom = true;
    return id;
}

/* ---- the two sides and their rows ---------------------------------------------- */


/* A name with string eval sequence numbers made 0, in D->norm. */
static const char *normalise(diff *D, const char *s, size_t len, size_t *out_len)
{
    if (len + 1 > D->cap_norm) {
        char *b = realloc(D->norm, len + 1);
        if (!b) {
            D->oom = true;
            *out_len = 0;
            return "";
        }
        D->norm = b;
        D->cap_norm = len + 1;
    }
    *out_len = nytp_calltree_normalise(s, len, D->norm);
    return D->norm;
}

bool diff_grow_rows(void **v, uint32_t *cap, uint32_t need, size_t size)
{
    uint32_t was = *cap;
    if (!cli_grow(v, need, cap, size))
        return false;
    memset((char *)*v + (size_t)was * size, 0, (size_t)(*cap - was) * size);
    return true;
}

/* The matching key of a file: its name, eval sequence numbers made 0. */
static const char *file_key(diff *D, const nytp_profile *p, uint32_t fid, size_t *len)
{
    const nytp_file *f = &p->files[fid];
    if (!f->defined) {
        static char buf[32];
        *len = (size_t)snprintf(buf, sizeof buf, "(file %u)", fid);
        return buf;
    }
    return normalise(D, nytp_profile_str(p, f->name), nytp_profile_strlen(p, f->name), len);
}

static time_row *time_row_at(diff *D, strmap *m, time_row **rows, uint32_t *cap, const char *key,
                             size_t len)
{
    bool added;
    uint32_t i = diff_bmap_find(m, key, len, true, &added, &D->oom);
    if (i == NYTP_NONE || !diff_grow_rows((void **)rows, cap, i + 1, sizeof **rows)) {
        D->oom = true;
        return NULL;
    }
    time_row *r = &(*rows)[i];
    if (added)
        r->fid[0] = r->fid[1] = NYTP_NONE;
    return r;
}

static void add_side(diff *D, int k)
{
    side *S = &D->s[k];
    const nytp_profile *p = S->p;
    double scale = k == 1 ? D->scale : 1;
    for (uint32_t i = 0; i < p->n_subs && !D->oom; i++) {
        const nytp_sub *s = &p->subs[i];
        if (!s->calls && s->excl == 0 && s->incl == 0)
            continue; /* known but never run */
        size_t len;
        const char *key = normalise(D, nytp_profile_str(p, s->name), nytp_profile_strlen(p, s->name), &len);
        bool added;
        uint32_t r = diff_bmap_find(&D->subs, key, len, true, &added, &D->oom);
        if (r == NYTP_NONE || !diff_grow_rows((void **)&D->sub, &D->cap_sub, r + 1, sizeof *D->sub)) {
            D->oom = true;
            return;
        }
        sub_row *row = &D->sub[r];
        if (added)
            row->sid[0] = row->sid[1] = NYTP_NONE;
        row->excl[k] += s->excl * scale;
        row->incl[k] += s->incl * scale;
        row->calls[k] += s->calls;
        row->present[k] = true;
        if (row->sid[k] == NYTP_NONE)
            row->sid[k] = i;
    }
    for (uint32_t fid = 1; fid < p->n_files && !D->oom; fid++) {
        const nytp_file *f = &p->files[fid];
        if (!f->line.n)
            continue;
        /* the file's key, for its lines */
        size_t flen;
        const char *fkey = file_key(D, p, fid, &flen);
        bool added;
        uint32_t lf = diff_bmap_find(&D->line_files, fkey, flen, true, &added, &D->oom);
        if (lf == NYTP_NONE)
            return;
        /* its source file, for the files table */
        size_t rlen;
        const char *rkey = file_key(D, p, p->files[fid].root_fid, &rlen);
        time_row *fr = time_row_at(D, &D->files, &D->file, &D->cap_file, rkey, rlen);
        if (!fr)
            return;
        uint32_t fr_index = (uint32_t)(fr - D->file);
        for (uint32_t l = 0; l < f->line.n; l++) {
            const nytp_linestat *st = &f->line.v[l];
            if (!st->set)
                continue;
            uint32_t line = st->line;
            char key[8];
            memcpy(key, &lf, 4);
            memcpy(key + 4, &line, 4);
            time_row *lr = time_row_at(D, &D->lines, &D->line, &D->cap_line, key, sizeof key);
            if (!lr)
                return;
            lr->file = lf;
            lr->line = line;
            lr->time[k] += st->time * scale;
            lr->count[k] += st->count;
            lr->present[k] = true;
            if (lr->fid[k] == NYTP_NONE)
                lr->fid[k] = fid;
            fr = &D->file[fr_index];
            fr->time[k] += st->time * scale;
            fr->count[k] += st->count;
            fr->present[k] = true;
            fr->fid[k] = p->files[fid].root_fid;
        }
    }
}

static void totals(side *S)
{
    const nytp_profile *p = S->p;
    for (uint32_t fid = 1; fid < p->n_files; fid++)
        for (uint32_t l = 0; l < p->files[fid].line.n; l++)
            if (p->files[fid].line.v[l].set)
                S->stmt_total += p->files[fid].line.v[l].time;
    for (uint32_t i = 0; i < p->n_subs; i++) {
        if (p->subs[i].excl > 0 && isfinite(p->subs[i].excl))
            S->sub_total += p->subs[i].excl;
        S->calls += p->subs[i].calls;
    }
}

/* ---- ordering ------------------------------------------------------------------- */

static const diff *sort_d;

/* By size, descending; a NaN (a corrupt profile) last, so that the order
 * is total. */
static int cmp_abs_desc(double a, double b)
{
    a = isnan(a) ? -1 : fabs(a);
    b = isnan(b) ? -1 : fabs(b);
    if (a != b)
        return a > b ? -1 : 1;
    return 0;
}

double diff_sub_delta(const sub_row *r)
{
    return r->excl[1] - r->excl[0];
}

static int cmp_sub(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const sub_row *ra = &sort_d->sub[a], *rb = &sort_d->sub[b];
    int c = cmp_abs_desc(diff_sub_delta(ra), diff_sub_delta(rb));
    if (!c)
        c = cmp_abs_desc(ra->incl[1] - ra->incl[0], rb->incl[1] - rb->incl[0]);
    if (!c)
        c = cmp_abs_desc(ra->excl[1] + ra->excl[0], rb->excl[1] + rb->excl[0]);
    return c ? c : strcmp(strmap_str(&sort_d->subs, a), strmap_str(&sort_d->subs, b));
}

static int cmp_time_rows(const time_row *ra, const time_row *rb)
{
    int c = cmp_abs_desc(ra->time[1] - ra->time[0], rb->time[1] - rb->time[0]);
    if (!c)
        c = cmp_abs_desc(ra->time[1] + ra->time[0], rb->time[1] + rb->time[0]);
    return c;
}

static int cmp_line(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const time_row *ra = &sort_d->line[a], *rb = &sort_d->line[b];
    int c = cmp_time_rows(ra, rb);
    if (!c)
        c = strcmp(strmap_str(&sort_d->line_files, ra->file), strmap_str(&sort_d->line_files, rb->file));
    return c ? c : ra->line < rb->line ? -1 : ra->line > rb->line;
}

static int cmp_file(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    int c = cmp_time_rows(&sort_d->file[a], &sort_d->file[b]);
    return c ? c : strcmp(strmap_str(&sort_d->files, a), strmap_str(&sort_d->files, b));
}

static uint32_t *ordered(uint32_t n, int (*cmp)(const void *, const void *))
{
    uint32_t *v = malloc(((size_t)n + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        v[i] = i;
    if (n > 0) /* qsort(NULL, 0) is undefined */
        qsort(v, n, sizeof *v, cmp);
    return v;
}

/* ---- the check ------------------------------------------------------------------- */

double diff_pct_change(double base, double now)
{
    if (base > 0)
        return 100.0 * (now - base) / base;
    return now > 0 ? INFINITY : NAN;
}

double diff_min_time(const diff *D)
{
    const struct diff_opts *o = D->o;
    if (o->min_pct < 0)
        return o->min_time;
    double total = D->s[0].total > 0 ? D->s[0].total : D->s[1].total * D->scale;
    return total * o->min_pct / 100.0;
}

bool diff_total_grew(const diff *D)
{
    double pct = diff_pct_change(D->s[0].total, D->s[1].total * D->scale);
    return D->o->fail_above >= 0 && D->s[0].total > 0 && pct > D->o->fail_above;
}

/* Did sub row r grow past the threshold (a sub that only NEW ran counts
 * as grown when its time is above the minimum)? */
bool diff_sub_grew(const diff *D, const sub_row *r, double min)
{
    if (D->o->fail_above < 0)
        return false;
    double most = r->excl[0] > r->excl[1] ? r->excl[0] : r->excl[1];
    if (!(most > min) || most <= 0)
        return false;
    return diff_pct_change(r->excl[0], r->excl[1]) > D->o->fail_above;
}

size_t diff_limit(const diff *D, size_t n)
{
    return D->o->n && D->o->n < n ? D->o->n : n;
}

void diff_report_growth(diff *D, double min)
{
    if (diff_total_grew(D)) {
        char b[40], n[40], pc[40];
        double base = D->s[0].total, now = D->s[1].total * D->scale;
        *term_dur(b, base, false) = 0;
        *term_dur(n, now, false) = 0;
        *term_pct(pc, diff_pct_change(base, now), true) = 0;
        cli_error("the total time grew by %s (%s -> %s), more than --fail-above=%g%%", pc, b, n,
                  D->o->fail_above);
    }
    unsigned shown = 0, more = 0;
    for (uint32_t i = 0; i < D->subs.n; i++) {
        uint32_t id = D->order_sub[i];
        const sub_row *r = &D->sub[id];
        if (!diff_sub_grew(D, r, min))
            continue;
        if (shown == 10) {
            more++;
            continue;
        }
        shown++;
        char *name = malloc((size_t)D->subs.v[id].len * 4 + 1);
        if (!name)
            continue;
        size_t w;
        term_clean(strmap_str(&D->subs, id), D->subs.v[id].len, false, name, &w);
        char b[40], n[40], pc[40];
        *term_dur(b, r->excl[0], false) = 0;
        *term_dur(n, r->excl[1], false) = 0;
        if (!r->present[0])
            cli_error("%s is new in NEW with %s of exclusive time (above --min-time, "
                      "--fail-above=%g%%)", name, n, D->o->fail_above);
        else if (!(r->excl[0] > 0))
            cli_error("%s: exclusive time grew from %s to %s (above --min-time, "
                      "--fail-above=%g%%)", name, b, n, D->o->fail_above);
        else {
            *term_pct(pc, diff_pct_change(r->excl[0], r->excl[1]), true) = 0;
            cli_error("%s: exclusive time grew by %s (%s -> %s), more than --fail-above=%g%%",
                      name, pc, b, n, D->o->fail_above);
        }
        free(name);
    }
    if (more)
        cli_error("and %u more subs grew by more than --fail-above=%g%%", more, D->o->fail_above);
}

void diff_free(diff *D)
{
    for (int k = 0; k < 2; k++) {
        if (!D->borrowed)
            nytp_profile_free(D->s[k].p);
        nytp_calltree_free(D->s[k].own_t);
    }
    strmap_release(&D->subs);
    strmap_release(&D->lines);
    strmap_release(&D->files);
    strmap_release(&D->line_files);
    free(D->sub);
    free(D->line);
    free(D->file);
    free(D->order_sub);
    free(D->order_line);
    free(D->order_file);
    free(D->norm);
}

/* Totals, the scale, the rows and their order. */
int diff_compute(diff *D)
{
    for (int k = 0; k < 2; k++)
        totals(&D->s[k]);
    bool stmts = D->s[0].stmt_total > 0 && D->s[1].stmt_total > 0;
    for (int k = 0; k < 2; k++)
        D->s[k].total = stmts ? D->s[k].stmt_total : D->s[k].sub_total;
    D->scale = D->o->normalize && D->s[1].total > 0 && D->s[0].total > 0
                   ? D->s[0].total / D->s[1].total
                   : 1;
    if (!isfinite(D->scale) || D->scale <= 0)
        D->scale = 1; /* absurd totals of a corrupt profile */
    for (int k = 0; k < 2 && !D->oom; k++)
        add_side(D, k);
    sort_d = D;
    if (!D->oom) {
        D->order_sub = ordered(D->subs.n, cmp_sub);
        D->order_line = ordered(D->lines.n, cmp_line);
        D->order_file = ordered(D->files.n, cmp_file);
        D->oom = !D->order_sub || !D->order_line || !D->order_file;
    }
    return D->oom ? NYTP_E_NOMEM : NYTP_OK;
}

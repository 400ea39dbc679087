/* compare.c — BASE's and NEW's runs matched into rows of subs, lines and
 * files with a value per run, their medians and their tests (see
 * compare.h).  Below it: the model, pathmap.c (names across checkouts),
 * stats.c and strmap.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "stats.h"

/* Below this a time is noise of the clock: log(time + floor) keeps a 0
 * finite, and no time is taken as known better than to this. */
#define TIME_FLOOR 1e-6

void cmp_init(comparison *C, const cmp_opts *o)
{
    memset(C, 0, sizeof *C);
    C->o = *o;
    C->total.p = NAN;
    C->total.ref_run[0] = C->total.ref_run[1] = NYTP_NONE;
}

int cmp_add_run(comparison *C, int side, nytp_profile *p)
{
    cmp_side *S = &C->s[side];
    if (!cli_grow((void **)&S->run, (size_t)S->n + 1, &S->cap, sizeof *S->run))
        return NYTP_E_NOMEM;
    S->run[S->n++] = p;
    return NYTP_OK;
}

static void table_release(cmp_table *t)
{
    strmap_release(&t->keys);
    free(t->row);
    free(t->val);
}

void cmp_release(comparison *C)
{
    for (int k = 0; k < 2; k++) {
        free(C->s[k].run);
        free(C->s[k].scale);
    }
    pathmap_free(C->paths);
    table_release(&C->subs);
    table_release(&C->lines);
    table_release(&C->files);
    strmap_release(&C->line_files);
    free(C->total_val);
    free(C->tmp);
    memset(C, 0, sizeof *C);
}

enum cmp_q cmp_measure_q(const comparison *C)
{
    return C->o.by == CMP_BY_STATEMENTS ? CMP_STMTS : C->o.by == CMP_BY_CALLS ? CMP_CALLS : CMP_TIME;
}

double cmp_pct(double base, double now)
{
    if (base > 0)
        return 100.0 * (now - base) / base;
    return now > 0 ? INFINITY : NAN;
}

double cmp_test(const comparison *C, const double *v, enum cmp_q q)
{
    if (!C->stats)
        return NAN;
    bool time = q == CMP_TIME || q == CMP_INCL;
    return stats_welch_log(v, C->s[0].n, v + C->s[0].n, C->s[1].n, time ? TIME_FLOOR : 1,
                           time ? TIME_FLOOR : 0, NULL, NULL);
}

double cmp_test_above(const comparison *C, const double *v, enum cmp_q q, double ratio)
{
    if (!C->stats)
        return NAN;
    bool time = q == CMP_TIME || q == CMP_INCL;
    return stats_welch_log_above(v, C->s[0].n, v + C->s[0].n, C->s[1].n, time ? TIME_FLOOR : 1,
                                 time ? TIME_FLOOR : 0, ratio);
}

/* ---- rows ------------------------------------------------------------------------------ */

/* The row of key in t (made when new), or NYTP_NONE when out of memory. */
static uint32_t row_at(comparison *C, cmp_table *t, const char *key, size_t len)
{
    bool added;
    uint32_t i = len <= UINT32_MAX - 1 ? strmap_add(&t->keys, key, (uint32_t)len, false, &added)
                                       : NYTP_NONE;
    size_t per_row = (size_t)CMP_NQ * cmp_nruns(C) * sizeof *t->val;
    if (i == NYTP_NONE || !cli_grow_zeroed((void **)&t->row, i + 1, &t->cap, sizeof *t->row) ||
        !cli_grow_zeroed((void **)&t->val, i + 1, &t->cap_val, per_row)) {
        C->oom = true;
        return NYTP_NONE;
    }
    if (added) {
        cmp_row *r = &t->row[i];
        r->ref_run[0] = r->ref_run[1] = NYTP_NONE;
        r->ref_id[0] = r->ref_id[1] = NYTP_NONE;
        r->file = r->line = NYTP_NONE;
        r->p = NAN;
    }
    return i;
}

static double *val_at(comparison *C, cmp_table *t, uint32_t r, enum cmp_q q, uint32_t run)
{
    return t->val + ((size_t)r * CMP_NQ + q) * cmp_nruns(C) + run;
}

/* Row r has been seen in run (its global index) of side k, as id. */
static void seen(cmp_row *r, int k, uint32_t run, uint32_t id, uint32_t *last)
{
    if (*last == run + 1)
        return;
    *last = run + 1;
    r->runs[k]++;
    if (r->ref_run[k] == NYTP_NONE) {
        r->ref_run[k] = run;
        r->ref_id[k] = id;
    }
}

/* ---- statements of subs --------------------------------------------------------------- */

typedef struct span {
    uint32_t first, last, sid;
} span;

static int cmp_span(const void *x, const void *y)
{
    const span *a = x, *b = y;
    uint32_t la = a->last - a->first, lb = b->last - b->first;
    if (la != lb)
        return la < lb ? -1 : 1;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->sid < b->sid ? -1 : a->sid > b->sid;
}

/* Statements executed on each sub's lines, each line counted for the
 * smallest sub whose lines hold it (a sub defined inside another is not
 * counted in the outer one), into stmts[sid].  Only subs that were called
 * count: the lines of one that never ran (a "sub {...}" written on a line
 * of code that did) are the code around it. */
bool cmp_sub_statements(const nytp_profile *p, double *stmts)
{
    span *sp = NULL;
    uint32_t cap_sp = 0;
    bool *painted = NULL;
    uint32_t cap_painted = 0;
    bool ok = true;
    for (uint32_t fid = 1; fid < p->n_files && ok; fid++) {
        const nytp_file *f = &p->files[fid];
        if (!f->n_subs || !f->line.n)
            continue;
        uint32_t n = 0;
        for (uint32_t i = 0; i < f->n_subs; i++) {
            const nytp_sub *s = &p->subs[f->subs[i]];
            if (!s->calls || s->fid != fid || s->first_line == NYTP_NONE ||
                s->last_line == NYTP_NONE || s->first_line > s->last_line)
                continue;
            if (!cli_grow((void **)&sp, (size_t)n + 1, &cap_sp, sizeof *sp)) {
                ok = false;
                break;
            }
            sp[n++] = (span){s->first_line, s->last_line, f->subs[i]};
        }
        if (!ok || !n)
            continue;
        if (!cli_grow((void **)&painted, f->line.n, &cap_painted, sizeof *painted)) {
            ok = false;
            break;
        }
        memset(painted, 0, f->line.n * sizeof *painted);
        qsort(sp, n, sizeof *sp, cmp_span);
        for (uint32_t i = 0; i < n; i++) {
            /* the first line entry at or after the sub's first line */
            uint32_t lo = 0, hi = f->line.n;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (f->line.v[mid].line < sp[i].first)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (uint32_t l = lo; l < f->line.n && f->line.v[l].line <= sp[i].last; l++) {
                if (painted[l] || !f->line.v[l].set)
                    continue;
                painted[l] = true;
                stmts[sp[i].sid] += (double)f->line.v[l].count;
            }
        }
    }
    free(sp);
    free(painted);
    return ok;
}

/* ---- one run into the rows ------------------------------------------------------------ */

static const char *undefined_key(comparison *C, uint32_t fid, size_t *len)
{
    if (!cli_grow_size((void **)&C->tmp, 32, &C->cap_tmp, 1))
        return NULL;
    *len = (size_t)snprintf(C->tmp, 32, "(file %u)", fid);
    return C->tmp;
}

/* The key of a file of side k's profile p, or NULL when out of memory. */
static const char *file_key(comparison *C, int k, const nytp_profile *p, uint32_t fid, size_t *len)
{
    const nytp_file *f = &p->files[fid];
    if (!f->defined)
        return undefined_key(C, fid, len);
    return pathmap_file_key(C->paths, k, nytp_profile_str(p, f->name), nytp_profile_strlen(p, f->name), len);
}

/* The row of line (fid, line) of run p (made when new). */
static uint32_t line_row(comparison *C, int k, const nytp_profile *p, uint32_t fid, uint32_t line, uint32_t *lf_of)
{
    if (lf_of[fid] == NYTP_NONE) {
        size_t len;
        const char *key = file_key(C, k, p, fid, &len);
        uint32_t lf = key && len <= UINT32_MAX - 1
                          ? strmap_add(&C->line_files, key, (uint32_t)len, false, NULL)
                          : NYTP_NONE;
        if (lf == NYTP_NONE) {
            C->oom = true;
            return NYTP_NONE;
        }
        lf_of[fid] = lf;
    }
    char key[8];
    memcpy(key, &lf_of[fid], 4);
    memcpy(key + 4, &line, 4);
    uint32_t r = row_at(C, &C->lines, key, sizeof key);
    if (r != NYTP_NONE) {
        C->lines.row[r].file = lf_of[fid];
        C->lines.row[r].line = line;
    }
    return r;
}

static uint32_t file_row(comparison *C, int k, const nytp_profile *p, uint32_t fid, uint32_t *row_of)
{
    if (row_of[fid] == NYTP_NONE) {
        size_t len;
        const char *key = file_key(C, k, p, fid, &len);
        row_of[fid] = key ? row_at(C, &C->files, key, len) : NYTP_NONE;
        if (row_of[fid] == NYTP_NONE)
            C->oom = true;
    }
    return row_of[fid];
}

/* Rows seen in a run, per table, so each counts the run once. */
typedef struct marks {
    uint32_t *v;
    uint32_t cap;
} marks;

static uint32_t *mark(comparison *C, marks *m, uint32_t r)
{
    if (!cli_grow_zeroed((void **)&m->v, r + 1, &m->cap, sizeof *m->v)) {
        C->oom = true;
        return NULL;
    }
    return &m->v[r];
}

static void add_run(comparison *C, int k, uint32_t i, marks mk[3])
{
    const nytp_profile *p = C->s[k].run[i];
    uint32_t run = k ? C->s[0].n + i : i;
    double *stmts = calloc((size_t)p->n_subs + 1, sizeof *stmts);
    uint32_t *lf_of = malloc(((size_t)p->n_files + 1) * sizeof *lf_of);
    uint32_t *file_of = malloc(((size_t)p->n_files + 1) * sizeof *file_of);
    if (!stmts || !lf_of || !file_of || !cmp_sub_statements(p, stmts)) {
        C->oom = true;
        goto out;
    }
    for (uint32_t f = 0; f < p->n_files; f++)
        lf_of[f] = file_of[f] = NYTP_NONE;
    for (uint32_t s = 0; s < p->n_subs && !C->oom; s++) {
        const nytp_sub *sub = &p->subs[s];
        if (!sub->calls && sub->excl == 0 && sub->incl == 0 && stmts[s] == 0)
            continue; /* known but never run */
        size_t len;
        const char *key = pathmap_sub_key(C->paths, k, nytp_profile_str(p, sub->name),
                                          nytp_profile_strlen(p, sub->name), &len);
        uint32_t r = key ? row_at(C, &C->subs, key, len) : NYTP_NONE;
        uint32_t *m = r != NYTP_NONE ? mark(C, &mk[0], r) : NULL;
        if (!m) {
            C->oom = true;
            break;
        }
        seen(&C->subs.row[r], k, run, s, m);
        *val_at(C, &C->subs, r, CMP_TIME, run) += sub->excl;
        *val_at(C, &C->subs, r, CMP_INCL, run) += sub->incl;
        *val_at(C, &C->subs, r, CMP_STMTS, run) += stmts[s];
        *val_at(C, &C->subs, r, CMP_CALLS, run) += (double)sub->calls;
    }
    for (uint32_t fid = 1; fid < p->n_files && !C->oom; fid++) {
        const nytp_file *f = &p->files[fid];
        uint32_t root = f->root_fid < p->n_files ? f->root_fid : fid;
        for (uint32_t l = 0; l < f->line.n && !C->oom; l++) {
            const nytp_linestat *ls = &f->line.v[l];
            if (!ls->set)
                continue;
            uint32_t r = line_row(C, k, p, fid, ls->line, lf_of);
            uint32_t fr = r != NYTP_NONE ? file_row(C, k, p, root, file_of) : NYTP_NONE;
            uint32_t *m = fr != NYTP_NONE ? mark(C, &mk[1], r) : NULL;
            if (!m)
                break;
            seen(&C->lines.row[r], k, run, fid, m);
            *val_at(C, &C->lines, r, CMP_TIME, run) += ls->time;
            *val_at(C, &C->lines, r, CMP_STMTS, run) += (double)ls->count;
            if (!(m = mark(C, &mk[2], fr)))
                break;
            seen(&C->files.row[fr], k, run, root, m);
            *val_at(C, &C->files, fr, CMP_TIME, run) += ls->time;
            *val_at(C, &C->files, fr, CMP_STMTS, run) += (double)ls->count;
        }
    }
    /* calls made on each line and in each file */
    for (uint32_t c = 0; c < p->n_sites && !C->oom; c++) {
        const nytp_site *s = &p->sites[c];
        if (!s->fid || s->fid >= p->n_files)
            continue; /* an xsub's marker */
        uint32_t root = p->files[s->fid].root_fid < p->n_files ? p->files[s->fid].root_fid : s->fid;
        uint32_t r = line_row(C, k, p, s->fid, s->line, lf_of);
        uint32_t fr = r != NYTP_NONE ? file_row(C, k, p, root, file_of) : NYTP_NONE;
        uint32_t *m = fr != NYTP_NONE ? mark(C, &mk[1], r) : NULL;
        if (!m)
            break;
        seen(&C->lines.row[r], k, run, s->fid, m);
        *val_at(C, &C->lines, r, CMP_CALLS, run) += (double)s->count;
        if (!(m = mark(C, &mk[2], fr)))
            break;
        seen(&C->files.row[fr], k, run, root, m);
        *val_at(C, &C->files, fr, CMP_CALLS, run) += (double)s->count;
    }
out:
    free(stmts);
    free(lf_of);
    free(file_of);
}

/* ---- totals and scales ------------------------------------------------------------------ */

typedef struct run_totals {
    double stmt_time, sub_time, stmts, calls;
} run_totals;

static run_totals totals_of(const nytp_profile *p)
{
    run_totals t = {0, 0, 0, 0};
    for (uint32_t fid = 1; fid < p->n_files; fid++)
        for (uint32_t l = 0; l < p->files[fid].line.n; l++)
            if (p->files[fid].line.v[l].set) {
                t.stmt_time += p->files[fid].line.v[l].time;
                t.stmts += (double)p->files[fid].line.v[l].count;
            }
    for (uint32_t i = 0; i < p->n_subs; i++) {
        if (p->subs[i].excl > 0 && isfinite(p->subs[i].excl))
            t.sub_time += p->subs[i].excl;
        t.calls += (double)p->subs[i].calls;
    }
    return t;
}

static bool totals(comparison *C)
{
    uint32_t N = cmp_nruns(C);
    run_totals *t = malloc(((size_t)N + 1) * sizeof *t);
    C->total_val = calloc((size_t)CMP_NQ * N + 1, sizeof *C->total_val);
    for (int k = 0; k < 2; k++)
        C->s[k].scale = malloc(((size_t)C->s[k].n + 1) * sizeof *C->s[k].scale);
    if (!t || !C->total_val || !C->s[0].scale || !C->s[1].scale) {
        free(t);
        return false;
    }
    C->total_is_stmts = true;
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; i < C->s[k].n; i++) {
            uint32_t run = k ? C->s[0].n + i : i;
            t[run] = totals_of(C->s[k].run[i]);
            if (!(t[run].stmt_time > 0))
                C->total_is_stmts = false;
            C->s[k].scale[i] = 1;
        }
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; i < C->s[k].n; i++) {
            uint32_t run = k ? C->s[0].n + i : i;
            C->total_val[CMP_TIME * N + run] =
                C->total_is_stmts ? t[run].stmt_time : t[run].sub_time;
            C->total_val[CMP_STMTS * N + run] = t[run].stmts;
            C->total_val[CMP_CALLS * N + run] = t[run].calls;
            C->total.runs[k]++;
        }
    free(t);
    return true;
}

/* ---- --normalize ---------------------------------------------------------------------------- */

typedef struct wlog {
    double v, w;            /* a log ratio and its weight */
} wlog;

static int cmp_wlog(const void *x, const void *y)
{
    double a = ((const wlog *)x)->v, b = ((const wlog *)y)->v;
    return a < b ? -1 : a > b;
}

/* Each run's factor: how much faster or slower the run was than BASE as a
 * whole, the mean of the middle half (by weight) of the logs of the ratios
 * of each sub's value in the run to its median in BASE, each weighted by
 * that median.  A sub that changed is one of many and falls outside the
 * middle half, so the factor is the machine's speed (or the run's
 * length), not the change being looked for; the mean over the middle is
 * steadier than their median. */
static int normalize_runs(comparison *C)
{
    uint32_t N = cmp_nruns(C), n0 = C->s[0].n, nsubs = C->subs.keys.n;
    enum cmp_q m = cmp_measure_q(C);
    double *base = malloc(((size_t)nsubs + 1) * sizeof *base), *tmp = malloc(((size_t)n0 + 1) * sizeof *tmp);
    wlog *wl = malloc(((size_t)nsubs + 1) * sizeof *wl);
    if (!base || !tmp || !wl) {
        free(base);
        free(tmp);
        free(wl);
        return NYTP_E_NOMEM;
    }
    for (uint32_t r = 0; r < nsubs; r++) {
        memcpy(tmp, cmp_vals(C, &C->subs, r, m), n0 * sizeof *tmp);
        base[r] = stats_median(tmp, n0);
    }
    for (uint32_t run = 0; run < N; run++) {
        size_t n = 0;
        double all = 0;
        for (uint32_t r = 0; r < nsubs; r++) {
            double v = cmp_vals(C, &C->subs, r, m)[run];
            if (base[r] > 0 && v > 0 && isfinite(v) && isfinite(base[r])) {
                wl[n++] = (wlog){log(v / base[r]), base[r]};
                all += base[r];
            }
        }
        double f = 1;
        if (n && all > 0) {
            /* the mean of the middle half, by weight: as robust to the
             * few subs that changed as the median, steadier */
            qsort(wl, n, sizeof *wl, cmp_wlog);
            double acc = 0, sum = 0, in = 0, lo = all / 4, hi = 3 * all / 4;
            for (size_t i = 0; i < n; i++) {
                double from = acc, to = acc + wl[i].w;
                acc = to;
                double a = from > lo ? from : lo, b = to < hi ? to : hi;
                if (b > a) {
                    sum += (b - a) * wl[i].v;
                    in += b - a;
                }
            }
            if (in > 0)
                f = exp(-sum / in);
        }
        int k = run >= n0;
        C->s[k].scale[k ? run - n0 : run] = isfinite(f) && f > 0 ? f : 1;
    }
    free(base);
    free(tmp);
    free(wl);
    /* the measure's quantities (times: both) of every row and the totals */
    cmp_table *tables[] = {&C->subs, &C->lines, &C->files};
    for (int q = 0; q < CMP_NQ; q++) {
        if (!(q == (int)m || (m == CMP_TIME && q == CMP_INCL)))
            continue;
        for (int t = 0; t < 3; t++)
            for (uint32_t r = 0; r < tables[t]->keys.n; r++)
                for (uint32_t run = 0; run < N; run++)
                    *val_at(C, tables[t], r, (enum cmp_q)q, run) *=
                        run < n0 ? C->s[0].scale[run] : C->s[1].scale[run - n0];
        for (uint32_t run = 0; run < N; run++)
            C->total_val[(size_t)q * N + run] *= run < n0 ? C->s[0].scale[run] : C->s[1].scale[run - n0];
    }
    return NYTP_OK;
}

/* ---- centres and tests --------------------------------------------------------------------- */

static void finish_row(comparison *C, cmp_row *r, const double *vals, double *tmp)
{
    uint32_t N = cmp_nruns(C), n0 = C->s[0].n;
    for (int q = 0; q < CMP_NQ; q++) {
        const double *v = vals + (size_t)q * N;
        memcpy(tmp, v, n0 * sizeof *tmp);
        r->centre[0][q] = stats_median(tmp, n0);
        memcpy(tmp, v + n0, C->s[1].n * sizeof *tmp);
        r->centre[1][q] = stats_median(tmp, C->s[1].n);
    }
    enum cmp_q m = cmp_measure_q(C);
    r->p = cmp_test(C, vals + (size_t)m * N, m);
}

static void finish_table(comparison *C, cmp_table *t, double *tmp)
{
    for (uint32_t r = 0; r < t->keys.n; r++)
        finish_row(C, &t->row[r], cmp_vals(C, t, r, 0), tmp);
}

int cmp_compute(comparison *C)
{
    C->stats = C->s[0].n >= 2 && C->s[1].n >= 2;
    if (pathmap_new(&C->paths, &C->o.paths) < 0)
        return NYTP_E_NOMEM;
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; i < C->s[k].n; i++)
            if (pathmap_add_profile(C->paths, k, C->s[k].run[i]) < 0)
                return NYTP_E_NOMEM;
    if (pathmap_finish(C->paths) < 0 || !totals(C))
        return NYTP_E_NOMEM;
    marks mk[3];
    for (int k = 0; k < 2 && !C->oom; k++)
        for (uint32_t i = 0; i < C->s[k].n && !C->oom; i++) {
            /* rows are marked with the run's global index + 1: no reset between runs */
            if (k == 0 && i == 0)
                memset(mk, 0, sizeof mk);
            add_run(C, k, i, mk);
        }
    for (int j = 0; j < 3; j++)
        free(mk[j].v);
    if (C->oom || (C->o.normalize && normalize_runs(C) < 0))
        return NYTP_E_NOMEM;
    double *tmp = malloc(((size_t)cmp_nruns(C) + 1) * sizeof *tmp);
    if (!tmp)
        return NYTP_E_NOMEM;
    finish_table(C, &C->subs, tmp);
    finish_table(C, &C->lines, tmp);
    finish_table(C, &C->files, tmp);
    finish_row(C, &C->total, C->total_val, tmp);
    free(tmp);
    return NYTP_OK;
}

/* ---- lookups ------------------------------------------------------------------------------- */

uint32_t cmp_find_sub(comparison *C, int side, const nytp_profile *p, uint32_t sid)
{
    const nytp_sub *s = &p->subs[sid];
    size_t len;
    const char *key = pathmap_sub_key(C->paths, side, nytp_profile_str(p, s->name),
                                      nytp_profile_strlen(p, s->name), &len);
    return key && len <= UINT32_MAX - 1 ? strmap_find(&C->subs.keys, key, (uint32_t)len) : NYTP_NONE;
}

uint32_t cmp_find_line(comparison *C, int side, const nytp_profile *p, uint32_t fid, uint32_t line)
{
    size_t len;
    const char *key = file_key(C, side, p, fid, &len);
    uint32_t lf = key && len <= UINT32_MAX - 1 ? strmap_find(&C->line_files, key, (uint32_t)len)
                                               : NYTP_NONE;
    if (lf == NYTP_NONE)
        return NYTP_NONE;
    char k8[8];
    memcpy(k8, &lf, 4);
    memcpy(k8 + 4, &line, 4);
    return strmap_find(&C->lines.keys, k8, sizeof k8);
}

uint32_t cmp_find_line_file(comparison *C, int side, const nytp_profile *p, uint32_t fid)
{
    size_t len;
    const char *key = file_key(C, side, p, fid, &len);
    return key && len <= UINT32_MAX - 1 ? strmap_find(&C->line_files, key, (uint32_t)len) : NYTP_NONE;
}

uint32_t cmp_find_file(comparison *C, int side, const nytp_profile *p, uint32_t fid)
{
    size_t len;
    const char *key = file_key(C, side, p, fid, &len);
    return key && len <= UINT32_MAX - 1 ? strmap_find(&C->files.keys, key, (uint32_t)len) : NYTP_NONE;
}

/* diff_json.c — 'nytp diff --json': the comparison as one JSON document:
 * the runs of each side, every row with the centres of both sides, each
 * run's value of the measure, the p-value of its test, and the check's
 * result.  Names are the full matching keys, never cut. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_impl.h"
#include "fmt.h"
#include "json.h"
#include "stats.h"

static void jchange(json *j, const char *what, double base, double now)
{
    json_key(j, what);
    json_num(j, now - base);
    char k[40];
    snprintf(k, sizeof k, "%s_pct", what);
    json_key(j, k);
    json_num(j, cmp_pct(base, now)); /* null when BASE is 0 */
}

static const char *status(const cmp_row *r)
{
    return cmp_added(r) ? "added" : cmp_removed(r) ? "removed" : "both";
}

/* The values of each run of side k. */
static void jruns(const diff *D, json *j, const double *v, int k)
{
    json_array(j);
    uint32_t from = k ? D->C.s[0].n : 0;
    for (uint32_t i = 0; i < D->C.s[k].n; i++)
        json_num(j, v[from + i]);
    json_end(j);
}

/* The measure's change, its test and each run's value. */
static void jtest(const diff *D, json *j, const cmp_row *r, const double *v)
{
    jchange(j, "delta", diff_centre(D, r, 0), diff_centre(D, r, 1));
    json_key(j, "p");
    json_num(j, r->p);
    json_key(j, "significant");
    if (D->C.stats && !isnan(r->p))
        json_bool(j, r->p < D->o->alpha);
    else
        json_null(j);
    json_key(j, "base_runs");
    jruns(D, j, v, 0);
    json_key(j, "new_runs");
    jruns(D, j, v, 1);
}

/* A count of side k, or null where it is unknown (a sampled run). */
static void jcount(const diff *D, json *j, int k, double v)
{
    if (D->sampled[k])
        json_null(j);
    else
        json_num(j, v);
}

/* A change of counts, or null where either side's are unknown. */
static void jcount_delta(const diff *D, json *j, double base, double now)
{
    if (!diff_counts_known(D))
        json_null(j);
    else
        json_num(j, now - base);
}

static void json_side(const diff *D, json *j, int k)
{
    const side *S = &D->s[k];
    const cmp_side *cs = &D->C.s[k];
    const cmp_row *t = &D->C.total;
    json_object(j);
    json_key(j, "files");
    json_array(j);
    for (int i = 0; i < S->nfiles; i++)
        json_cstr(j, S->files[i]);
    json_end(j);
    json_key(j, "n");
    json_u64(j, cs->n);
    json_key(j, "time");
    json_num(j, t->centre[k][CMP_TIME]);
    json_key(j, "statement_count");
    jcount(D, j, k, t->centre[k][CMP_STMTS]);
    json_key(j, "calls");
    jcount(D, j, k, t->centre[k][CMP_CALLS]);
    json_key(j, "total");
    json_num(j, diff_centre(D, t, k));
    bool complete = true;
    for (uint32_t i = 0; i < cs->n; i++)
        complete = complete && cs->run[i]->complete;
    json_key(j, "complete");
    json_bool(j, complete);
    if (D->sampled[k]) { /* its counts above are null (unknown) */
        uint64_t samples = 0;
        for (uint32_t i = 0; i < cs->n; i++)
            samples += cs->run[i]->samples;
        json_key(j, "sampled");
        json_bool(j, true);
        json_key(j, "samples");
        json_u64(j, samples);
    }
    json_key(j, "runs");
    json_array(j);
    uint32_t N = cmp_nruns(&D->C), from = k ? D->C.s[0].n : 0;
    for (uint32_t i = 0; i < cs->n; i++) {
        json_object(j);
        json_key(j, "files");
        json_array(j);
        if (D->o->sum || (uint32_t)S->nfiles != cs->n) {
            for (int f = 0; f < S->nfiles; f++)
                json_cstr(j, S->files[f]);
        } else {
            json_cstr(j, S->files[i]);
        }
        json_end(j);
        json_key(j, "time");
        json_num(j, D->C.total_val[CMP_TIME * N + from + i]);
        json_key(j, "statement_count");
        jcount(D, j, k, D->C.total_val[CMP_STMTS * N + from + i]);
        json_key(j, "calls");
        jcount(D, j, k, D->C.total_val[CMP_CALLS * N + from + i]);
        json_key(j, "scale");
        json_num(j, cs->scale[i]);
        json_key(j, "complete");
        json_bool(j, cs->run[i]->complete);
        json_end(j);
    }
    json_end(j);
    json_end(j);
}

static void json_check(diff *D, json *j, double min)
{
    json_key(j, "check");
    if (D->o->fail_above < 0) {
        json_null(j);
        return;
    }
    json_object(j);
    json_key(j, "fail_above");
    json_num(j, D->o->fail_above);
    json_key(j, "min");
    json_num(j, min);
    json_key(j, "alpha");
    if (D->C.stats)
        json_num(j, D->o->alpha);
    else
        json_null(j);
    json_key(j, "total_grew");
    json_bool(j, diff_total_grew(D));
    json_key(j, "total_p_adjusted");
    json_num(j, D->adj_total);
    json_key(j, "subs_grew");
    json_array(j);
    bool any = false;
    const strmap *k = &D->C.subs.keys;
    for (uint32_t i = 0; i < k->n; i++) {
        uint32_t id = D->order_sub[i];
        if (!diff_sub_grew(D, id, min))
            continue;
        any = true;
        json_str(j, strmap_str(k, id), k->v[id].len);
    }
    json_end(j);
    json_key(j, "failed");
    json_bool(j, diff_total_grew(D) || any);
    json_end(j);
}

static void json_subs(diff *D, json *j)
{
    const cmp_table *t = &D->C.subs;
    json_key(j, "subs");
    json_array(j);
    enum cmp_q m = cmp_measure_q(&D->C);
    for (size_t i = 0; i < diff_limit(D, t->keys.n); i++) {
        uint32_t id = D->order_sub[i];
        const cmp_row *r = &t->row[id];
        json_object(j);
        json_key(j, "name");
        json_str(j, strmap_str(&t->keys, id), t->keys.v[id].len);
        json_key(j, "status");
        json_cstr(j, status(r));
        for (int k = 0; k < 2; k++) {
            json_key(j, k ? "new" : "base");
            if (r->ref_run[k] == NYTP_NONE) {
                json_null(j);
                continue;
            }
            uint32_t run = k ? r->ref_run[k] - D->C.s[0].n : r->ref_run[k];
            const nytp_profile *p = D->C.s[k].run[run];
            const nytp_sub *s = &p->subs[r->ref_id[k]];
            json_object(j);
            json_key(j, "excl");
            json_num(j, r->centre[k][CMP_TIME]);
            json_key(j, "incl");
            json_num(j, r->centre[k][CMP_INCL]);
            json_key(j, "calls");
            jcount(D, j, k, r->centre[k][CMP_CALLS]);
            json_key(j, "statements");
            jcount(D, j, k, r->centre[k][CMP_STMTS]);
            json_key(j, "runs");
            json_u64(j, r->runs[k]);
            json_key(j, "file");
            if (s->fid != NYTP_NONE && s->fid < p->n_files && p->files[s->fid].defined)
                json_str(j, nytp_profile_str(p, p->files[s->fid].name),
                         nytp_profile_strlen(p, p->files[s->fid].name));
            else
                json_null(j);
            json_key(j, "first_line");
            if (s->first_line == NYTP_NONE)
                json_null(j);
            else
                json_u64(j, s->first_line);
            json_end(j);
        }
        jchange(j, "excl_delta", r->centre[0][CMP_TIME], r->centre[1][CMP_TIME]);
        jchange(j, "incl_delta", r->centre[0][CMP_INCL], r->centre[1][CMP_INCL]);
        json_key(j, "calls_delta");
        jcount_delta(D, j, r->centre[0][CMP_CALLS], r->centre[1][CMP_CALLS]);
        json_key(j, "statements_delta");
        jcount_delta(D, j, r->centre[0][CMP_STMTS], r->centre[1][CMP_STMTS]);
        jtest(D, j, r, cmp_vals(&D->C, t, id, m));
        json_key(j, "grew");
        json_bool(j, diff_sub_grew(D, id, diff_min_time(D)));
        json_key(j, "p_grew_adjusted");
        json_num(j, D->adj_sub ? D->adj_sub[id] : NAN);
        json_end(j);
    }
    json_end(j);
}

static void json_times(diff *D, json *j, bool lines)
{
    const cmp_table *t = lines ? &D->C.lines : &D->C.files;
    const uint32_t *order = lines ? D->order_line : D->order_file;
    enum cmp_q m = cmp_measure_q(&D->C);
    json_key(j, lines ? "lines" : "files");
    json_array(j);
    for (size_t i = 0; i < diff_limit(D, t->keys.n); i++) {
        const cmp_row *r = &t->row[order[i]];
        json_object(j);
        json_key(j, "file");
        if (lines) {
            json_str(j, strmap_str(&D->C.line_files, r->file), D->C.line_files.v[r->file].len);
            json_key(j, "line");
            json_u64(j, r->line);
        } else {
            json_str(j, strmap_str(&t->keys, order[i]), t->keys.v[order[i]].len);
        }
        json_key(j, "status");
        json_cstr(j, status(r));
        json_key(j, "base");
        json_num(j, diff_centre(D, r, 0));
        json_key(j, "new");
        json_num(j, diff_centre(D, r, 1));
        json_key(j, "time_base");
        json_num(j, r->centre[0][CMP_TIME]);
        json_key(j, "time_new");
        json_num(j, r->centre[1][CMP_TIME]);
        json_key(j, "count_base");
        jcount(D, j, 0, r->centre[0][CMP_STMTS]);
        json_key(j, "count_new");
        jcount(D, j, 1, r->centre[1][CMP_STMTS]);
        json_key(j, "calls_base");
        jcount(D, j, 0, r->centre[0][CMP_CALLS]);
        json_key(j, "calls_new");
        jcount(D, j, 1, r->centre[1][CMP_CALLS]);
        jtest(D, j, r, cmp_vals(&D->C, t, order[i], m));
        json_end(j);
    }
    json_end(j);
}

void diff_write_json(diff *D, nytp_out *out, double min)
{
    json J, *j = &J;
    json_init(j, out);
    json_object(j);
    json_key(j, "format");
    json_cstr(j, "nytp-diff-2");
    json_key(j, "measure");
    json_cstr(j, diff_measure_name(D));
    if (*D->view_line) {
        json_key(j, "view");
        json_cstr(j, D->view_line);
    }
    json_key(j, "n");
    json_object(j);
    json_key(j, "base");
    json_u64(j, D->C.s[0].n);
    json_key(j, "new");
    json_u64(j, D->C.s[1].n);
    json_end(j);
    json_key(j, "test");
    if (D->C.stats) {
        json_object(j);
        json_key(j, "name");
        json_cstr(j, "welch-t-log");
        json_key(j, "alpha");
        json_num(j, D->o->alpha);
        json_end(j);
    } else {
        json_null(j);
    }
    json_key(j, "base");
    json_side(D, j, 0);
    json_key(j, "new");
    json_side(D, j, 1);
    json_key(j, "total_kind");
    json_cstr(j, D->C.total_is_stmts ? "statements" : "subs");
    json_key(j, "normalized");
    json_bool(j, D->C.o.normalize);
    /* NEW's factor: the median of its runs' (one run: its own) */
    double *f = malloc(((size_t)D->C.s[1].n + 1) * sizeof *f);
    if (f) {
        memcpy(f, D->C.s[1].scale, D->C.s[1].n * sizeof *f);
        json_key(j, "scale");
        json_num(j, stats_median(f, D->C.s[1].n));
        free(f);
    } else {
        D->oom = true;
    }
    json_key(j, "paired_by_suffix");
    json_u64(j, pathmap_paired(D->C.paths));
    json_key(j, "total");
    json_object(j);
    json_key(j, "base");
    json_num(j, diff_centre(D, &D->C.total, 0));
    json_key(j, "new");
    json_num(j, diff_centre(D, &D->C.total, 1));
    jtest(D, j, &D->C.total, cmp_total_vals(&D->C, cmp_measure_q(&D->C)));
    json_end(j);
    json_check(D, j, min);
    json_key(j, "rows");
    json_object(j);
    json_key(j, "subs");
    json_u64(j, D->C.subs.keys.n);
    json_key(j, "lines");
    json_u64(j, D->C.lines.keys.n);
    json_key(j, "files");
    json_u64(j, D->C.files.keys.n);
    json_end(j);
    json_subs(D, j);
    json_times(D, j, true);
    json_times(D, j, false);
    json_end(j);
    json_raw(j, "\n");
}

/* diff_compare.c — what 'nytp diff' makes of the comparison (compare.c):
 * the order of the rows (the largest change of the centres first), and
 * the check of --fail-above with its messages: a sub or
 * the total fails when its centre grew by more than the threshold and,
 * with several runs a side, the test says it grew by more than the
 * threshold (not merely changed), after Holm's correction over the
 * candidates.  The outputs
 * (diff_text.c, diff_json.c) read what it computed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_impl.h"
#include "stats.h"
#include "term.h"

/* ---- the measure --------------------------------------------------------------------- */

double diff_centre(const diff *D, const cmp_row *r, int k)
{
    return r->centre[k][cmp_measure_q(&D->C)];
}

double diff_delta(const diff *D, const cmp_row *r)
{
    return diff_centre(D, r, 1) - diff_centre(D, r, 0);
}

bool diff_noise(const diff *D, const cmp_row *r)
{
    return D->C.stats && !(r->p < D->o->alpha);
}

const char *diff_measure_name(const diff *D)
{
    static const char *const names[] = {"time", "statements", "calls"};
    return names[D->C.o.by];
}

/* ---- ordering ------------------------------------------------------------------------- */

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

static int cmp_rows(const cmp_row *ra, const cmp_row *rb)
{
    const diff *D = sort_d;
    int c = cmp_abs_desc(diff_delta(D, ra), diff_delta(D, rb));
    if (!c && D->C.o.by == CMP_BY_TIME)
        c = cmp_abs_desc(ra->centre[1][CMP_INCL] - ra->centre[0][CMP_INCL],
                         rb->centre[1][CMP_INCL] - rb->centre[0][CMP_INCL]);
    if (!c)
        c = cmp_abs_desc(diff_centre(D, ra, 1) + diff_centre(D, ra, 0),
                         diff_centre(D, rb, 1) + diff_centre(D, rb, 0));
    return c;
}

static int cmp_sub(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const cmp_table *t = &sort_d->C.subs;
    int c = cmp_rows(&t->row[a], &t->row[b]);
    return c ? c : strcmp(strmap_str(&t->keys, a), strmap_str(&t->keys, b));
}

static int cmp_line(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const cmp_row *ra = &sort_d->C.lines.row[a], *rb = &sort_d->C.lines.row[b];
    int c = cmp_rows(ra, rb);
    if (!c)
        c = strcmp(strmap_str(&sort_d->C.line_files, ra->file),
                   strmap_str(&sort_d->C.line_files, rb->file));
    return c ? c : ra->line < rb->line ? -1 : ra->line > rb->line;
}

static int cmp_file(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const cmp_table *t = &sort_d->C.files;
    int c = cmp_rows(&t->row[a], &t->row[b]);
    return c ? c : strcmp(strmap_str(&t->keys, a), strmap_str(&t->keys, b));
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

/* ---- the check ------------------------------------------------------------------------ */

double diff_min_time(const diff *D)
{
    const struct diff_opts *o = D->o;
    if (o->min_pct < 0)
        return o->min_time;
    double total = diff_centre(D, &D->C.total, 0);
    if (!(total > 0))
        total = diff_centre(D, &D->C.total, 1);
    return total * o->min_pct / 100.0;
}

/* Whether the check looks at a sub at all: above the minimum on a side. */
static bool checked(const diff *D, const cmp_row *r, double min)
{
    double most = fmax(diff_centre(D, r, 0), diff_centre(D, r, 1));
    return most > min && most > 0;
}

bool diff_total_grew(const diff *D)
{
    const cmp_row *t = &D->C.total;
    double base = diff_centre(D, t, 0), now = diff_centre(D, t, 1);
    if (D->o->fail_above < 0 || !(base > 0) || !(cmp_pct(base, now) > D->o->fail_above))
        return false;
    return !D->C.stats || D->adj_total < D->o->alpha;
}

/* Did sub row r grow past the threshold (a sub that only NEW ran counts
 * as grown when its centre is above the minimum)? */
bool diff_sub_grew(const diff *D, uint32_t row, double min)
{
    const cmp_row *r = &D->C.subs.row[row];
    if (D->o->fail_above < 0 || !checked(D, r, min))
        return false;
    if (!(cmp_pct(diff_centre(D, r, 0), diff_centre(D, r, 1)) > D->o->fail_above))
        return false;
    return !D->C.stats || (D->adj_sub && D->adj_sub[row] < D->o->alpha);
}

/* The check's test, with several runs a side: each candidate (the total,
 * and every sub above the minimum whose centre grew by more than the
 * threshold) is tested for having grown by more than the threshold
 * (one-sided Welch on the logs against log(1 + PCT/100)), and Holm's
 * correction is made over the candidates. */
static int adjust(diff *D)
{
    D->adj_total = NAN;
    if (D->o->fail_above < 0 || !D->C.stats)
        return NYTP_OK;
    double min = diff_min_time(D), ratio = 1 + D->o->fail_above / 100;
    enum cmp_q q = cmp_measure_q(&D->C);
    uint32_t n = D->C.subs.keys.n;
    double *p = malloc(((size_t)n + 2) * sizeof *p);
    D->adj_sub = malloc(((size_t)n + 1) * sizeof *D->adj_sub);
    if (!p || !D->adj_sub) {
        free(p);
        return NYTP_E_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        const cmp_row *r = &D->C.subs.row[i];
        bool candidate = checked(D, r, min) &&
                         cmp_pct(diff_centre(D, r, 0), diff_centre(D, r, 1)) > D->o->fail_above;
        p[i] = candidate ? cmp_test_above(&D->C, cmp_vals(&D->C, &D->C.subs, i, q), q, ratio) : NAN;
    }
    const cmp_row *t = &D->C.total;
    double tb = diff_centre(D, t, 0);
    p[n] = tb > 0 && cmp_pct(tb, diff_centre(D, t, 1)) > D->o->fail_above
               ? cmp_test_above(&D->C, cmp_total_vals(&D->C, q), q, ratio)
               : NAN;
    int st = stats_holm(p, (size_t)n + 1, p);
    if (st == 0) {
        memcpy(D->adj_sub, p, (size_t)n * sizeof *p);
        D->adj_total = p[n];
    }
    free(p);
    return st < 0 ? NYTP_E_NOMEM : NYTP_OK;
}

size_t diff_limit(const diff *D, size_t n)
{
    return D->o->n && D->o->n < n ? D->o->n : n;
}

void diff_count_text(char *b, double v, bool sign)
{
    const char *plus = sign && v > 0 ? "+" : "";
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(b, 40, "%s%.0f", plus, v);
    else
        snprintf(b, 40, "%s%.1f", plus, v);
}

void diff_value_text(const diff *D, char *b, double v, bool sign)
{
    if (D->C.o.by == CMP_BY_TIME)
        *term_dur(b, v, sign) = 0;
    else
        diff_count_text(b, v, sign);
}

/* "; p=0.0012 (3+3 runs)" with tests, else "": the check's p-value. */
static void p_text(const diff *D, char *b, size_t size, double p)
{
    if (!D->C.stats || isnan(p))
        *b = 0;
    else
        snprintf(b, size, "; p=%.2g, %u+%u runs", p, D->C.s[0].n, D->C.s[1].n);
}

void diff_report_growth(diff *D, double min)
{
    const char *what = D->C.o.by == CMP_BY_TIME ? "exclusive time" : diff_measure_name(D);
    if (diff_total_grew(D)) {
        char b[40], n[40], pc[40], pt[80];
        double base = diff_centre(D, &D->C.total, 0), now = diff_centre(D, &D->C.total, 1);
        diff_value_text(D, b, base, false);
        diff_value_text(D, n, now, false);
        *term_pct(pc, cmp_pct(base, now), true) = 0;
        p_text(D, pt, sizeof pt, D->adj_total);
        cli_error("the total %s grew by %s (%s -> %s%s), more than --fail-above=%g%%",
                  D->C.o.by == CMP_BY_TIME ? "time" : diff_measure_name(D), pc, b, n, pt,
                  D->o->fail_above);
    }
    unsigned shown = 0, more = 0;
    for (uint32_t i = 0; i < D->C.subs.keys.n; i++) {
        uint32_t id = D->order_sub[i];
        const cmp_row *r = &D->C.subs.row[id];
        if (!diff_sub_grew(D, id, min))
            continue;
        if (shown == 10) {
            more++;
            continue;
        }
        shown++;
        const strmap *k = &D->C.subs.keys;
        char *name = malloc((size_t)k->v[id].len * 4 + 1);
        if (!name)
            continue;
        size_t w;
        term_clean(strmap_str(k, id), k->v[id].len, false, name, &w);
        char b[40], n[40], pc[40], pt[80];
        diff_value_text(D, b, diff_centre(D, r, 0), false);
        diff_value_text(D, n, diff_centre(D, r, 1), false);
        p_text(D, pt, sizeof pt, D->adj_sub ? D->adj_sub[id] : NAN);
        if (cmp_added(r))
            cli_error("%s is new in NEW with %s of %s (above --min-time%s, --fail-above=%g%%)", name,
                      n, what, pt, D->o->fail_above);
        else if (!(diff_centre(D, r, 0) > 0))
            cli_error("%s: %s grew from %s to %s (above --min-time%s, --fail-above=%g%%)", name,
                      what, b, n, pt, D->o->fail_above);
        else {
            *term_pct(pc, cmp_pct(diff_centre(D, r, 0), diff_centre(D, r, 1)), true) = 0;
            cli_error("%s: %s grew by %s (%s -> %s%s), more than --fail-above=%g%%", name, what, pc,
                      b, n, pt, D->o->fail_above);
        }
        free(name);
    }
    if (more)
        cli_error("and %u more subs grew by more than --fail-above=%g%%", more, D->o->fail_above);
}

void diff_free(diff *D)
{
    cmp_release(&D->C);
    for (uint32_t i = 0; i < D->n_own; i++)
        nytp_profile_free(D->own[i]);
    free(D->own);
    for (int k = 0; k < 2; k++)
        nytp_calltree_free(D->s[k].own_t);
    free(D->order_sub);
    free(D->order_line);
    free(D->order_file);
    free(D->adj_sub);
}

/* The rows, their order and the check. */
int diff_compute(diff *D)
{
    int st = cmp_compute(&D->C);
    if (st < 0)
        return st;
    sort_d = D;
    D->order_sub = ordered(D->C.subs.keys.n, cmp_sub);
    D->order_line = ordered(D->C.lines.keys.n, cmp_line);
    D->order_file = ordered(D->C.files.keys.n, cmp_file);
    if (!D->order_sub || !D->order_line || !D->order_file)
        return NYTP_E_NOMEM;
    return adjust(D);
}

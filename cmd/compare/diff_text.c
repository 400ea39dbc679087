/* diff_text.c — 'nytp diff' as tables for people: the sides and the
 * total, then the subs, lines and files that changed most, in the measure
 * compared (time, statements or calls), with the p-value of each change
 * and "~" for one the runs' noise explains; fitted to the terminal's width
 * (sub names cut in the middle of their package path and kept apart,
 * colour when it is a terminal). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_impl.h"
#include "fmt.h"
#include "term.h"

static bool by_time(const diff *D)
{
    return D->C.o.by == CMP_BY_TIME;
}


static void cell(nytp_out *out, const char *text, size_t cols)
{
    term_num(out, text, cols);
}

static void cell_value(const diff *D, nytp_out *out, double v, bool sign, size_t cols)
{
    char b[40];
    diff_value_text(D, b, v, sign);
    cell(out, b, cols);
}

/* The change in percent, "~" for one the noise explains, "new"/"gone"
 * for what one side lacks. */
static void change_text(const diff *D, char *b, const cmp_row *r, double base, double now,
                        bool noise)
{
    if (cmp_added(r))
        strcpy(b, "new");
    else if (cmp_removed(r))
        strcpy(b, "gone");
    else if (noise)
        strcpy(b, "~");
    else
        *term_pct(b, cmp_pct(base, now), true) = 0;
    (void)D;
}

static void cell_change(const diff *D, nytp_out *out, const cmp_row *r, double base, double now,
                        bool noise, size_t cols)
{
    char b[40];
    change_text(D, b, r, base, now, noise);
    cell(out, b, cols);
}

static void p_cell(const diff *D, nytp_out *out, const cmp_row *r)
{
    if (!D->C.stats)
        return;
    char b[40];
    if (isnan(r->p))
        strcpy(b, "-");
    else if (r->p == 0)
        strcpy(b, "0"); /* counts that differ for certain */
    else if (r->p < 0.0001)
        snprintf(b, sizeof b, "%.0e", r->p);
    else
        snprintf(b, sizeof b, "%.2g", r->p);
    nytp_out_write(out, " ", 1);
    cell(out, b, 7);
}

static void colour_for(const diff *D, nytp_out *out, double delta, bool noise, bool flagged)
{
    if (flagged || (!noise && delta > 0))
        term_sgr(&D->t, out, TERM_RED);
    else if (!noise && delta < 0)
        term_sgr(&D->t, out, TERM_GREEN);
}

static size_t room_after(const diff *D, size_t used)
{
    if (!D->t.width)
        return 0;
    return D->t.width > used + 8 ? D->t.width - used : 8;
}

static void put_text(nytp_out *out, const char *s, size_t len, size_t room, enum term_align how)
{
    char *c = malloc(len * 4 + 1);
    if (!c) { /* never a table with a name left out, taken for whole */
        nytp_out_fail(out, NYTP_E_NOMEM, "out of memory");
        return;
    }
    size_t w;
    size_t n = term_clean(s, len, false, c, &w);
    term_put(out, c, n, w, room && w > room ? room : 0, how);
    free(c);
}

/* The name of a file as people read it (@INC stripped), malloc'd. */
static char *shown_file(const diff *D, const char *key, size_t len)
{
    char *s = malloc(len + 1);
    if (s)
        dump_data_strip_inc(key, len, &D->names, s);
    return s;
}

static bool heading(const diff *D, nytp_out *out, const char *title, size_t shown, size_t all,
                    const char *extra)
{
    nytp_out_write(out, "\n", 1);
    term_sgr(&D->t, out, TERM_BOLD);
    if (shown < all)
        nytp_out_printf(out, "%s (top %zu of %zu%s)", title, shown, all, extra);
    else
        nytp_out_printf(out, "%s (%zu%s)", title, all, extra);
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    if (!all)
        nytp_out_write(out, "  (none)\n", 9);
    return all > 0;
}

static void side_line(const diff *D, nytp_out *out, int k)
{
    const side *S = &D->s[k];
    const cmp_row *t = &D->C.total;
    char tm[40], st[40], ca[40];
    *term_dur(tm, t->centre[k][CMP_TIME], false) = 0;
    diff_count_text(st, t->centre[k][CMP_STMTS], false);
    diff_count_text(ca, t->centre[k][CMP_CALLS], false);
    bool complete = true;
    for (uint32_t i = 0; i < D->C.s[k].n; i++)
        complete = complete && D->C.s[k].run[i]->complete;
    nytp_out_printf(out, "%-5s ", k ? "NEW" : "BASE");
    for (int i = 0; i < S->nfiles; i++) {
        if (i)
            nytp_out_write(out, " ", 1);
        put_text(out, S->files[i], strlen(S->files[i]), 0, TERM_LEFT);
    }
    nytp_out_write(out, ": ", 2);
    if (D->C.s[k].n > 1)
        nytp_out_printf(out, "%u runs, medians ", D->C.s[k].n);
    else if (S->nfiles > 1)
        nytp_out_printf(out, "added up, ");
    if (D->sampled[k]) {
        /* the rate and the samples of its runs; counts are not known */
        const cmp_side *cs = &D->C.s[k];
        char note[200] = "";
        uint64_t samples = 0;
        for (uint32_t i = 0; i < cs->n; i++)
            samples += cs->run[i]->samples;
        if (cs->n == 1)
            cli_sampled_note(cs->run[0], note, sizeof note);
        else
            snprintf(note, sizeof note, "sampled, %llu samples in all; counts unknown",
                     (unsigned long long)samples);
        nytp_out_printf(out, "%s %s, %s%s\n", tm,
                        D->C.total_is_stmts ? "of statements" : "in subs", note,
                        complete ? "" : " (incomplete)");
        return;
    }
    nytp_out_printf(out, "%s %s, %s statements, %s calls%s\n", tm,
                    D->C.total_is_stmts ? "of statements" : "in subs", st, ca,
                    complete ? "" : " (incomplete)");
}

/* The column of calls (or statements) "a -> b" of the shown rows. */
static size_t arrow_width(const diff *D, const cmp_table *t, const uint32_t *order, size_t n,
                          enum cmp_q q, const char *title)
{
    size_t w = strlen(title);
    for (size_t i = 0; i < n; i++) {
        const cmp_row *r = &t->row[order[i]];
        char a[40], b[40];
        diff_count_text(a, r->centre[0][q], false);
        diff_count_text(b, r->centre[1][q], false);
        size_t l = strlen(a) + 4 + strlen(b);
        if (l > w)
            w = l;
    }
    (void)D;
    return w;
}

static void cell_arrow(nytp_out *out, const cmp_row *r, enum cmp_q q, size_t cols)
{
    char a[40], b[40], c[96];
    diff_count_text(a, r->centre[0][q], false);
    diff_count_text(b, r->centre[1][q], false);
    snprintf(c, sizeof c, "%s -> %s", a, b);
    cell(out, c, cols);
}

/* The width of the measure's columns: 8 for times, else the widest count. */
static size_t value_width(const diff *D, const cmp_table *t, const uint32_t *order, size_t n)
{
    if (by_time(D))
        return 8;
    size_t w = 6;
    enum cmp_q q = cmp_measure_q(&D->C);
    for (size_t i = 0; i < n; i++) {
        const cmp_row *r = &t->row[order[i]];
        double v[3] = {r->centre[0][q], r->centre[1][q], r->centre[1][q] - r->centre[0][q]};
        for (int j = 0; j < 3; j++) {
            char b[40];
            diff_count_text(b, v[j], j == 2);
            if (strlen(b) > w)
                w = strlen(b);
        }
    }
    return w;
}

/* The columns every table begins with: the change of the measure, in
 * percent, its p-value, the centres.  Returns their width. */
static size_t head_columns(const diff *D, nytp_out *out, size_t vw)
{
    const char *what = by_time(D) ? "time" : D->C.o.by == CMP_BY_STATEMENTS ? "stmts" : "calls";
    nytp_out_printf(out, "%*s %7s ", (int)vw, what, "change");
    if (D->C.stats)
        nytp_out_printf(out, "%7s ", "p");
    nytp_out_printf(out, "%*s %*s ", (int)vw, "base", (int)vw, "new");
    return vw + 1 + 7 + 1 + (D->C.stats ? 8 : 0) + vw + 1 + vw + 1;
}

static void row_columns(const diff *D, nytp_out *out, const cmp_row *r, size_t vw, bool flagged)
{
    bool noise = diff_noise(D, r);
    double b = diff_centre(D, r, 0), n = diff_centre(D, r, 1);
    colour_for(D, out, n - b, noise, flagged);
    cell_value(D, out, n - b, true, vw);
    nytp_out_write(out, " ", 1);
    cell_change(D, out, r, b, n, noise, 7);
    p_cell(D, out, r);
    nytp_out_write(out, " ", 1);
    cell_value(D, out, b, false, vw);
    nytp_out_write(out, " ", 1);
    cell_value(D, out, n, false, vw);
    nytp_out_write(out, " ", 1);
}

/* Whether the inclusive time columns fit (always, without a width). */
static bool with_incl(const diff *D)
{
    return by_time(D) && (!D->t.width || D->t.width >= 110 + (D->C.stats ? 8 : 0));
}

static void text_subs(diff *D, nytp_out *out, double min)
{
    const cmp_table *t = &D->C.subs;
    uint32_t n_all = t->keys.n, added = 0, removed = 0;
    for (uint32_t i = 0; i < n_all; i++) {
        added += cmp_added(&t->row[i]);
        removed += cmp_removed(&t->row[i]);
    }
    char extra[80] = "";
    if (added || removed)
        snprintf(extra, sizeof extra, "; %u added, %u removed", added, removed);
    size_t n = diff_limit(D, n_all);
    const char *title = by_time(D) ? "Subs by change in exclusive time"
                        : D->C.o.by == CMP_BY_STATEMENTS ? "Subs by change in statements executed"
                                                         : "Subs by change in calls";
    if (!heading(D, out, title, n, n_all, extra))
        return;
    size_t vw = value_width(D, t, D->order_sub, n);
    bool calls = D->C.o.by != CMP_BY_CALLS && diff_counts_known(D);
    size_t callw = calls ? arrow_width(D, t, D->order_sub, n, CMP_CALLS, "calls") : 0;
    bool incl = with_incl(D);
    term_sgr(&D->t, out, TERM_DIM);
    size_t used = head_columns(D, out, vw);
    if (incl) {
        nytp_out_printf(out, "%8s %7s ", "incl", "change");
        used += 8 + 1 + 7 + 1;
    }
    if (calls) {
        nytp_out_printf(out, "%*s ", (int)callw, "calls");
        used += callw + 1;
    }
    nytp_out_printf(out, " %s", "sub");
    used += 1;
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    /* the names, cut to the room left and kept apart */
    char **clean = calloc(n + 1, sizeof *clean);
    size_t *lens = calloc(n + 1, sizeof *lens);
    char **shown = NULL;
    size_t *widths = calloc(n + 1, sizeof *widths);
    bool ok = clean && lens && widths;
    for (size_t i = 0; i < n && ok; i++) {
        uint32_t id = D->order_sub[i];
        size_t len = t->keys.v[id].len, w;
        if (!(clean[i] = malloc(len * 4 + 1)))
            ok = false;
        else
            lens[i] = term_clean(strmap_str(&t->keys, id), len, false, clean[i], &w);
    }
    if (ok)
        shown = term_fit_names(clean, lens, n, room_after(D, used), widths);
    if (!shown) {
        D->oom = true;
        n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t id = D->order_sub[i];
        const cmp_row *r = &t->row[id];
        row_columns(D, out, r, vw, diff_sub_grew(D, id, min));
        if (incl) {
            double b = r->centre[0][CMP_INCL], nw = r->centre[1][CMP_INCL];
            cell_value(D, out, nw - b, true, 8);
            nytp_out_write(out, " ", 1);
            cell_change(D, out, r, b, nw, false, 7);
            nytp_out_write(out, " ", 1);
        }
        if (calls) {
            cell_arrow(out, r, CMP_CALLS, callw);
            nytp_out_write(out, " ", 1);
        }
        nytp_out_write(out, " ", 1);
        nytp_out_write(out, shown[i], strlen(shown[i]));
        term_sgr(&D->t, out, TERM_RESET);
        nytp_out_write(out, "\n", 1);
    }
    for (size_t i = 0; clean && i < n; i++)
        free(clean[i]);
    free(clean);
    free(lens);
    free(widths);
    term_free_names(shown, n);
}

/* "file:line" (or "file"), as people read it, malloc'd. */
static char *where_of(diff *D, const cmp_row *r, uint32_t id, bool lines)
{
    const strmap *names = lines ? &D->C.line_files : &D->C.files.keys;
    uint32_t fk = lines ? r->file : id;
    char *shown = shown_file(D, strmap_str(names, fk), names->v[fk].len);
    if (!shown)
        return NULL;
    size_t wcap = strlen(shown) + 16;
    char *where = malloc(wcap);
    if (where) {
        if (lines)
            snprintf(where, wcap, "%s:%u", shown, r->line);
        else
            snprintf(where, wcap, "%s", shown);
    }
    free(shown);
    return where;
}

/* The line's source, from NEW (or BASE) when a run saved it. */
static void put_source(diff *D, nytp_out *out, const cmp_row *r, size_t used)
{
    for (int k = 1; k >= 0; k--) {
        if (r->ref_run[k] == NYTP_NONE)
            continue;
        uint32_t run = k ? r->ref_run[k] - D->C.s[0].n : r->ref_run[k];
        const nytp_profile *p = D->C.s[k].run[run];
        const nytp_text *t = nytp_src_get(&p->files[r->ref_id[k]].src, r->line);
        if (!t)
            continue;
        const char *src = t->ptr;
        size_t sl = t->len;
        while (sl && (src[sl - 1] == '\n' || src[sl - 1] == '\r'))
            sl--;
        while (sl && (*src == ' ' || *src == '\t')) {
            src++;
            sl--;
        }
        if (sl && (!D->t.width || D->t.width > used + 10)) {
            nytp_out_write(out, "  ", 2);
            term_sgr(&D->t, out, TERM_DIM);
            char *c = malloc(sl * 8 + 1);
            if (c) {
                size_t w;
                size_t len = term_clean(src, sl, true, c, &w);
                size_t rm = D->t.width ? D->t.width - used : 0;
                term_put(out, c, len, w, rm && w > rm ? rm : 0, TERM_LEFT);
                free(c);
            } else {
                D->oom = true;
            }
            term_sgr(&D->t, out, TERM_RESET);
        }
        return;
    }
}

static void text_times(diff *D, nytp_out *out, bool lines)
{
    const cmp_table *t = lines ? &D->C.lines : &D->C.files;
    const uint32_t *order = lines ? D->order_line : D->order_file;
    size_t n = diff_limit(D, t->keys.n);
    char title[96];
    snprintf(title, sizeof title, "%s by change in %s%s", lines ? "Lines" : "Files",
             by_time(D) ? "time" : D->C.o.by == CMP_BY_STATEMENTS ? "statements executed" : "calls made",
             lines ? "" : " (string evals in their file)");
    if (!heading(D, out, title, n, t->keys.n, ""))
        return;
    size_t vw = value_width(D, t, order, n);
    bool stmts = by_time(D) && diff_counts_known(D);
    size_t cw = stmts ? arrow_width(D, t, order, n, CMP_STMTS, "stmts") : 0;
    term_sgr(&D->t, out, TERM_DIM);
    size_t fixed = head_columns(D, out, vw);
    if (stmts) {
        nytp_out_printf(out, "%*s ", (int)cw, "stmts");
        fixed += cw + 1;
    }
    nytp_out_printf(out, " %s", lines ? "where" : "file");
    fixed += 1;
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    for (size_t i = 0; i < n; i++) {
        const cmp_row *r = &t->row[order[i]];
        row_columns(D, out, r, vw, false);
        if (stmts) {
            cell_arrow(out, r, CMP_STMTS, cw);
            nytp_out_write(out, " ", 1);
        }
        nytp_out_write(out, " ", 1);
        term_sgr(&D->t, out, TERM_RESET);
        char *where = where_of(D, r, order[i], lines);
        if (!where) {
            D->oom = true;
            return;
        }
        size_t room = room_after(D, fixed);
        put_text(out, where, strlen(where), room, TERM_KEEP_END);
        if (lines) {
            size_t wl = strlen(where);
            put_source(D, out, r, fixed + (room && wl > room ? room : wl) + 2);
        }
        free(where);
        nytp_out_write(out, "\n", 1);
    }
}

static void write_text(void *ctx, nytp_out *out)
{
    diff *D = ctx;
    double min = diff_min_time(D);
    side_line(D, out, 0);
    side_line(D, out, 1);
    const cmp_row *t = &D->C.total;
    char b[40], nw[40], d[40], pc[48], pt[48] = "";
    double base = diff_centre(D, t, 0), now = diff_centre(D, t, 1);
    bool noise = diff_noise(D, t);
    diff_value_text(D, b, base, false);
    diff_value_text(D, nw, now, false);
    diff_value_text(D, d, now - base, true);
    if (noise)
        strcpy(pc, "~");
    else
        *term_pct(pc, cmp_pct(base, now), true) = 0;
    if (D->C.stats && !isnan(t->p))
        snprintf(pt, sizeof pt, ", p=%.2g", t->p);
    term_sgr(&D->t, out, TERM_BOLD);
    colour_for(D, out, now - base, noise, diff_total_grew(D));
    const char *what = by_time(D) ? D->C.total_is_stmts ? "statement time" : "time in subs"
                       : D->C.o.by == CMP_BY_STATEMENTS ? "statements executed" : "calls";
    nytp_out_printf(out, "Total %s: %s -> %s, %s (%s%s)%s", what, b, nw, d, pc, pt,
                    D->C.o.normalize ? ", every run scaled to BASE's total" : "");
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    if (D->C.stats)
        nytp_out_printf(out, "p: Welch's t-test on the logs of %u+%u runs; ~: not significant "
                             "(p >= %g)\n",
                        D->C.s[0].n, D->C.s[1].n, D->o->alpha);
    else
        nytp_out_printf(out, "One run %s: no significance computed (give several runs a side: "
                             "BASE... -- NEW...)\n",
                        D->C.s[0].n < 2 && D->C.s[1].n < 2 ? "per side" : "on a side");
    size_t paired = pathmap_paired(D->C.paths);
    if (paired)
        nytp_out_printf(out, "%zu file%s matched by their common path suffix\n", paired,
                        paired == 1 ? "" : "s");
    text_subs(D, out, min);
    text_times(D, out, true);
    text_times(D, out, false);
}

int diff_write_fitted(diff *D, nytp_out *out)
{
    return term_write_table(&D->t, out, write_text, D);
}

/* diff_text.c — 'nytp diff' as tables for people: the totals, then the
 * subs, lines and files that changed most, fitted to the terminal's
 * width (names cut in the middle, colour when it is a terminal). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "term.h"
#include "fmt.h"
#include "diff_impl.h"

/* ---- text ------------------------------------------------------------------------- */

static void cell(nytp_out *out, const char *text, size_t cols)
{
    term_num(out, text, cols);
}

static void cell_dur(nytp_out *out, double secs, bool sign, size_t cols)
{
    char b[40];
    *term_dur(b, secs, sign) = 0;
    cell(out, b, cols);
}

/* The change in percent, or "new"/"gone" for what one side lacks. */
static void cell_change(nytp_out *out, const bool present[2], double base, double now, size_t cols)
{
    char b[40];
    if (!present[0])
        strcpy(b, "new");
    else if (!present[1])
        strcpy(b, "gone");
    else
        *term_pct(b, diff_pct_change(base, now), true) = 0;
    cell(out, b, cols);
}

static void colour_for(const diff *D, nytp_out *out, double delta, bool flagged)
{
    if (flagged || delta > 0)
        term_sgr(&D->t, out, TERM_RED);
    else if (delta < 0)
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
    if (!c)
        return;
    size_t w;
    size_t n = term_clean(s, len, false, c, &w);
    term_put(out, c, n, w, room && w > room ? room : 0, how);
    free(c);
}

static void put_name(nytp_out *out, const char *s, size_t len, size_t room)
{
    put_text(out, s, len, room, TERM_LEFT);
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
    char t[40], st[40];
    *term_dur(t, S->stmt_total, false) = 0;
    *term_dur(st, S->sub_total, false) = 0;
    nytp_out_printf(out, "%-5s ", k ? "NEW" : "BASE");
    for (int i = 0; i < S->nfiles; i++) {
        if (i)
            nytp_out_write(out, " ", 1);
        put_name(out, S->files[i], strlen(S->files[i]), 0);
    }
    nytp_out_printf(out, ": %s of statements, %s in subs, %llu calls%s\n", t, st,
                    (unsigned long long)S->calls, S->p->complete ? "" : " (incomplete)");
}

/* Whether the inclusive time columns fit (always, without a width). */
static bool with_incl(const diff *D)
{
    return !D->t.width || D->t.width >= 110;
}

static void text_subs(diff *D, nytp_out *out, double min)
{
    uint32_t n_all = D->subs.n, added = 0, removed = 0;
    for (uint32_t i = 0; i < n_all; i++) {
        added += !D->sub[i].present[0];
        removed += !D->sub[i].present[1];
    }
    char extra[80] = "";
    if (added || removed)
        snprintf(extra, sizeof extra, "; %u added, %u removed", added, removed);
    size_t n = diff_limit(D, n_all);
    if (!heading(D, out, "Subs by change in exclusive time", n, n_all, extra))
        return;
    /* the calls column is as wide as its widest cell */
    size_t callw = strlen("calls");
    for (size_t i = 0; i < n; i++) {
        const sub_row *r = &D->sub[D->order_sub[i]];
        char calls[48];
        size_t w = (size_t)snprintf(calls, sizeof calls, "%llu -> %llu", (unsigned long long)r->calls[0],
                                    (unsigned long long)r->calls[1]);
        if (w > callw)
            callw = w;
    }
    bool incl = with_incl(D);
    term_sgr(&D->t, out, TERM_DIM);
    nytp_out_printf(out, "%8s %7s %8s %8s ", "excl", "change", "base", "new");
    if (incl)
        nytp_out_printf(out, "%8s %7s ", "incl", "change");
    nytp_out_printf(out, "%*s  %s", (int)callw, "calls", "sub");
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    size_t used = 8 + 1 + 7 + 1 + 8 + 1 + 8 + 1 + (incl ? 8 + 1 + 7 + 1 : 0) + callw + 2;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = D->order_sub[i];
        const sub_row *r = &D->sub[id];
        colour_for(D, out, diff_sub_delta(r), diff_sub_grew(D, r, min));
        cell_dur(out, diff_sub_delta(r), true, 8);
        nytp_out_write(out, " ", 1);
        cell_change(out, r->present, r->excl[0], r->excl[1], 7);
        nytp_out_write(out, " ", 1);
        cell_dur(out, r->excl[0], false, 8);
        nytp_out_write(out, " ", 1);
        cell_dur(out, r->excl[1], false, 8);
        nytp_out_write(out, " ", 1);
        if (incl) {
            cell_dur(out, r->incl[1] - r->incl[0], true, 8);
            nytp_out_write(out, " ", 1);
            cell_change(out, r->present, r->incl[0], r->incl[1], 7);
            nytp_out_write(out, " ", 1);
        }
        char calls[48];
        snprintf(calls, sizeof calls, "%llu -> %llu", (unsigned long long)r->calls[0],
                 (unsigned long long)r->calls[1]);
        cell(out, calls, callw);
        nytp_out_write(out, "  ", 2);
        put_name(out, strmap_str(&D->subs, id), D->subs.v[id].len, room_after(D, used));
        term_sgr(&D->t, out, TERM_RESET);
        nytp_out_write(out, "\n", 1);
    }
}

static void text_times(diff *D, nytp_out *out, bool lines)
{
    strmap *m = lines ? &D->lines : &D->files;
    time_row *rows = lines ? D->line : D->file;
    uint32_t *order = lines ? D->order_line : D->order_file;
    size_t n = diff_limit(D, m->n);
    if (!heading(D, out, lines ? "Lines by change in time" : "Files by change in time (string evals in their file)",
            n, m->n, ""))
        return;
    size_t cw = strlen("stmts");
    for (size_t i = 0; i < n; i++) {
        const time_row *r = &rows[order[i]];
        char counts[64];
        size_t w = (size_t)snprintf(counts, sizeof counts, "%lld -> %lld", (long long)r->count[0],
                                    (long long)r->count[1]);
        if (w > cw)
            cw = w;
    }
    size_t fixed = 8 + 1 + 7 + 1 + 8 + 1 + 8 + 1 + cw + 2;
    term_sgr(&D->t, out, TERM_DIM);
    nytp_out_printf(out, "%8s %7s %8s %8s %*s  %s", "time", "change", "base", "new", (int)cw,
                    "stmts", lines ? "where" : "file");
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    for (size_t i = 0; i < n; i++) {
        const time_row *r = &rows[order[i]];
        colour_for(D, out, r->time[1] - r->time[0], false);
        cell_dur(out, r->time[1] - r->time[0], true, 8);
        nytp_out_write(out, " ", 1);
        cell_change(out, r->present, r->time[0], r->time[1], 7);
        nytp_out_write(out, " ", 1);
        cell_dur(out, r->time[0], false, 8);
        nytp_out_write(out, " ", 1);
        cell_dur(out, r->time[1], false, 8);
        char counts[64];
        snprintf(counts, sizeof counts, "%lld -> %lld", (long long)r->count[0], (long long)r->count[1]);
        nytp_out_write(out, " ", 1);
        cell(out, counts, cw);
        nytp_out_write(out, "  ", 2);
        term_sgr(&D->t, out, TERM_RESET);
        uint32_t fk = lines ? r->file : order[i];
        const strmap *names = lines ? &D->line_files : &D->files;
        char *shown = shown_file(D, strmap_str(names, fk), names->v[fk].len);
        if (!shown) {
            D->oom = true;
            return;
        }
        size_t wcap = strlen(shown) + 16;
        char *where = malloc(wcap);
        if (!where) {
            free(shown);
            D->oom = true;
            return;
        }
        if (lines)
            snprintf(where, wcap, "%s:%u", shown, r->line);
        else
            snprintf(where, wcap, "%s", shown);
        free(shown);
        size_t room = room_after(D, fixed);
        put_text(out, where, strlen(where), room, TERM_KEEP_END);
        /* the line's source, from NEW (or BASE) when the profile saved it */
        for (int k = 1; lines && k >= 0; k--) {
            if (r->fid[k] == NYTP_NONE)
                continue;
            const nytp_file *f = &D->s[k].p->files[r->fid[k]];
            const nytp_text *t = nytp_src_get(&f->src, r->line);
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
            size_t wl = strlen(where);
            size_t used = fixed + (room && wl > room ? room : wl) + 2;
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
                }
                term_sgr(&D->t, out, TERM_RESET);
            }
            break;
        }
        free(where);
        nytp_out_write(out, "\n", 1);
    }
}

static void write_text(diff *D, nytp_out *out, double min)
{
    side_line(D, out, 0);
    side_line(D, out, 1);
    char b[40], nw[40], d[40], pc[40];
    double base = D->s[0].total, now = D->s[1].total * D->scale;
    *term_dur(b, base, false) = 0;
    *term_dur(nw, now, false) = 0;
    *term_dur(d, now - base, true) = 0;
    *term_pct(pc, diff_pct_change(base, now), true) = 0;
    term_sgr(&D->t, out, TERM_BOLD);
    colour_for(D, out, now - base, diff_total_grew(D));
    nytp_out_printf(out, "Total %s: %s -> %s, %s (%s)%s",
                    D->s[0].stmt_total > 0 && D->s[1].stmt_total > 0 ? "statement time"
                                                                    : "time in subs",
                    b, nw, d, pc, D->o->normalize ? ", NEW scaled to BASE's total" : "");
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    text_subs(D, out, min);
    text_times(D, out, true);
    text_times(D, out, false);
}

/* The tables into memory first, then each line cut to the terminal. */
int diff_write_fitted(diff *D, nytp_out *out, double min)
{
    nytp_out *mem;
    nytp_error e = {0};
    uint8_t *text = NULL;
    size_t len = 0;
    if (nytp_out_open_mem(&mem, &e) < 0)
        return NYTP_E_NOMEM;
    write_text(D, mem, min);
    if (nytp_out_close_mem(mem, &text, &len, &e) < 0) {
        free(text);
        return NYTP_E_NOMEM;
    }
    term_write_fitted(&D->t, out, (const char *)text, len);
    free(text);
    return NYTP_OK;
}

/* write.c — the bottom of 'nytp html': the page writer (hw_*: text,
 * escaping, numbers), the page frame (a page's file, head, navigation,
 * foot), links to subs, lines and files, the table of subs, and with
 * --base the change columns (before, after, change, p) of any row.  Every
 * page of the report is written with these; this file calls none of the
 * pages (index.c, file.c, packages.c, callgraph.c, durations.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fmt.h"
#include "html.h"

/* ---- the page writer ------------------------------------------------------ */

void hw_put(hw *w, const char *s, size_t n)
{
    if (!w->err && nytp_out_write(w->out, s, n) < 0)
        w->err = nytp_out_error(w->out)->status;
}

void hw_s(hw *w, const char *s)
{
    hw_put(w, s, strlen(s));
}

void hw_esc(hw *w, const char *s, size_t n)
{
    while (n && !w->err) {
        size_t chunk = n > 4096 ? 4096 : n;
        /* keep a UTF-8 sequence whole across chunks */
        while (chunk < n && chunk > 4092 && ((unsigned char)s[chunk] & 0xC0) == 0x80)
            chunk--;
        uint8_t *d = nytp_out_reserve(w->out, chunk * 6);
        if (!d) {
            w->err = nytp_out_error(w->out)->status;
            return;
        }
        char *end = fmt_html_str((char *)d, s, chunk);
        nytp_out_commit(w->out, (size_t)(end - (char *)d));
        s += chunk;
        n -= chunk;
    }
}

void hw_id(hw *w, const nytp_profile *p, uint32_t id)
{
    hw_esc(w, nytp_profile_str(p, id), nytp_profile_strlen(p, id));
}

void hw_u(hw *w, uint64_t v)
{
    char b[32];
    hw_put(w, b, (size_t)(fmt_u64(b, v) - b));
}

void hw_nv(hw *w, double d)
{
    char b[40];
    hw_put(w, b, (size_t)(fmt_nv(b, d) - b));
}

/* A count for prose: 1,234,567. */
void hw_count(hw *w, uint64_t v)
{
    char b[32], o[48];
    size_t n = (size_t)(fmt_u64(b, v) - b), k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            o[k++] = ',';
        o[k++] = b[i];
    }
    hw_put(w, o, k);
}

void hw_dur(hw *w, double secs)
{
    char b[40];
    hw_put(w, b, (size_t)(fmt_duration(b, secs) - b));
}

void hw_pct(hw *w, double part, double whole)
{
    char b[40];
    double pct = whole > 0 ? 100.0 * part / whole : 0.0;
    int n = snprintf(b, sizeof b, fabs(pct) < 1e6 ? "%.1f%%" : "%.3g%%", pct);
    hw_put(w, b, n < 0 ? 0 : (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* A time of day in the local time zone, named: "2026-11-23 18:05:01 CET
 * (UTC+01:00)".  "?" for no time. */
void html_time_of_day(time_t t, char *buf, size_t size)
{
    struct tm tm;
    snprintf(buf, size, "?");
    if (t <= 0 || !localtime_r(&t, &tm))
        return;
    char date[40], zone[40] = "", off[8] = "";
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
    strftime(zone, sizeof zone, "%Z", &tm);
    strftime(off, sizeof off, "%z", &tm); /* +0100 */
    if (strlen(off) == 5)
        snprintf(buf, size, "%s %s (UTC%.3s:%.2s)", date, zone, off, off + 3);
    else
        snprintf(buf, size, "%s %s", date, zone);
}

/* ---- pages ------------------------------------------------------------------ */

static const char *view_suffix[] = {"", "-block", "-sub"};

void html_page_name(const html_report *r, uint32_t fid, enum html_view v, char *buf)
{
    const char *base = r->page[fid];
    size_t n = strlen(base) - 5; /* without ".html" */
    snprintf(buf, 96, "%.*s%s.html", (int)n, base, view_suffix[v]);
}

nytp_out *html_dir_file(html_report *r, const char *name)
{
    if (r->dir_lock)
        pthread_mutex_lock(r->dir_lock);
    nytp_out *out = cli_outdir_file(&r->dir, name);
    if (r->dir_lock)
        pthread_mutex_unlock(r->dir_lock);
    return out;
}

bool html_page_open(html_report *r, hw *w, const char *name)
{
    w->err = 0;
    if (r->in_memory) {
        nytp_error e = {0};
        return nytp_out_open_mem(&w->out, &e) == 0;
    }
    w->out = html_dir_file(r, name);
    return w->out != NULL;
}

int html_page_close(html_report *r, hw *w, const char *name)
{
    atomic_fetch_add(&r->pages_done, 1);
    if (r->in_memory) {
        int err = w->err;
        nytp_out_abort(w->out);
        return err ? EXIT_BAD_INPUT : EXIT_OK;
    }
    if (w->err) { /* the out's error, or one of the page's own: out of memory */
        const nytp_error *e = nytp_out_error(w->out);
        cli_error("%s/%s: %s", r->dir.path, name, e->status ? e->msg : "out of memory");
        nytp_out_abort(w->out);
        return EXIT_BAD_INPUT;
    }
    return cli_outdir_close_file(&r->dir, w->out, name);
}

/* <head> and the top of <body>; title is escaped text. */
void html_page_head(hw *w, const char *title, size_t tlen)
{
    hw_s(w, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content=\"width=device-width,initial-scale=1\">"
            "<link rel=icon href=\"data:,\"><title>");
    hw_esc(w, title, tlen);
    hw_s(w, " \xE2\x80\x94 nytp profile</title><link rel=stylesheet href=nytp.css>"
            "<script src=nytp.js defer></script></head>\n<body>\n");
}

void html_nav(html_report *r, hw *w, const char *here)
{
    hw_s(w, "<nav>");
    hw_s(w, strcmp(here, "index") ? "<a href=index.html>Index</a>" : "<b>Index</b>");
    hw_s(w, strcmp(here, "subs") ? " <a href=subs.html>All subs</a>" : " <b>All subs</b>");
    hw_s(w, strcmp(here, "packages") ? " <a href=packages.html>Packages</a>" : " <b>Packages</b>");
    if (r->flame)
        hw_s(w, " <a href=index.html#flame>Flame graph</a>");
    hw_s(w, "</nav>\n");
}

void html_page_foot(hw *w)
{
    hw_s(w, "<footer>Report written by nytp " NYTP_VERSION_STRING
            " from an NYTProf profile. Click a column heading (or focus it and press Enter) to sort.</footer>\n"
            "</body></html>\n");
}

/* Whether the sub has lines of its own in its file. */
bool html_sub_has_lines(const nytp_sub *s)
{
    return s->first_line && s->first_line != NYTP_NONE && s->last_line != NYTP_NONE;
}

/* Defined in its file: has lines there, and is not main::RUNTIME, which
 * stands for the main program (Devel::NYTProf gives it line 1). */
bool html_sub_defined_here(const nytp_profile *p, const nytp_sub *s)
{
    return html_sub_has_lines(s) && strcmp(nytp_profile_str(p, s->name), "main::RUNTIME") != 0;
}

/* Whether a sub's headline carries information: never-called subs (dead
 * code, or main::RUNTIME for a main script with no sub) get none. */
bool html_sub_has_headline(const nytp_sub *s)
{
    return s->calls || s->n_sites || s->incl != 0;
}

/* The URL of the place of sub id: its headline in its file's page
 * (buf: >= 128 bytes; page names are plain ASCII, nothing to escape). */
void html_sub_url(const html_report *r, uint32_t sid, char *buf, size_t size)
{
    const nytp_sub *s = &r->p->subs[sid];
    bool page = s->fid != NYTP_NONE && s->fid < r->p->n_files && r->page[s->fid];
    if (page && !html_sub_has_headline(s) && html_sub_has_lines(s)) /* no headline: its first line */
        snprintf(buf, size, "%s#L%u", r->page[s->fid], s->first_line);
    else
        snprintf(buf, size, "%s#S%u", page && html_sub_has_headline(s) ? r->page[s->fid] : "subs.html", sid);
}

/* A link to the place of sub id. */
void html_sub_href(html_report *r, hw *w, uint32_t sid)
{
    char url[160];
    html_sub_url(r, sid, url, sizeof url);
    hw_s(w, "<a href=\"");
    hw_s(w, url);
    hw_s(w, "\">");
}

/* A sub's name; a shortened one has the full name as its title. */
void html_sub_name(html_report *r, hw *w, uint32_t sid)
{
    const char *shown = r->sub_shown[sid];
    if (!shown) {
        hw_id(w, r->p, r->p->subs[sid].name);
        return;
    }
    hw_s(w, "<span title=\"");
    hw_id(w, r->p, r->p->subs[sid].name);
    hw_s(w, "\">");
    hw_esc(w, shown, strlen(shown));
    hw_s(w, "</span>");
}

void html_sub_link(html_report *r, hw *w, uint32_t sid)
{
    html_sub_href(r, w, sid);
    html_sub_name(r, w, sid);
    hw_s(w, "</a>");
}

/* A link to fid:line. */
void html_line_link(html_report *r, hw *w, uint32_t fid, uint32_t line, bool with_file)
{
    const nytp_profile *p = r->p;
    bool page = fid < p->n_files && r->page[fid];
    if (page) {
        hw_s(w, "<a href=\"");
        hw_s(w, r->page[fid]);
        hw_s(w, "#L");
        hw_u(w, line);
        hw_s(w, "\">");
    }
    hw_s(w, "line ");
    hw_u(w, line);
    if (with_file) {
        hw_s(w, " of ");
        if (fid < p->n_files && r->shown[fid])
            hw_esc(w, r->shown[fid], strlen(r->shown[fid]));
        else {
            hw_s(w, "file ");
            hw_u(w, fid);
        }
    }
    if (page)
        hw_s(w, "</a>");
}

void html_file_link(html_report *r, hw *w, uint32_t fid)
{
    if (r->page[fid]) {
        hw_s(w, "<a href=\"");
        hw_s(w, r->page[fid]);
        hw_s(w, "\">");
    }
    hw_esc(w, r->shown[fid], strlen(r->shown[fid]));
    if (r->page[fid])
        hw_s(w, "</a>");
}

bool html_is_opcode(const nytp_profile *p, const nytp_sub *s)
{
    if ((s->first_line && s->first_line != NYTP_NONE) || (s->last_line && s->last_line != NYTP_NONE))
        return false;
    const char *n = nytp_profile_str(p, s->name);
    return strncmp(n, "CORE::", 6) == 0 || strstr(n, "::CORE:") != NULL;
}

bool html_is_xsub(const nytp_sub *s)
{
    return s->xsub || (s->first_line == 0 && s->last_line == 0);
}

/* A cell with an exact sort value and a shown duration. */
void html_td_dur(hw *w, double secs)
{
    hw_s(w, "<td data-v=");
    hw_nv(w, secs);
    hw_s(w, ">");
    hw_dur(w, secs);
}

void html_td_u(hw *w, uint64_t v)
{
    hw_s(w, "<td>");
    hw_u(w, v);
}

/* ---- --base: the change columns ----------------------------------------------- */

const cmp_row *html_cmp_sub(const html_report *r, uint32_t sid)
{
    if (!r->cmp || sid >= r->p->n_subs || r->cmp->sub_row[sid] == NYTP_NONE)
        return NULL;
    return &r->cmp->C.subs.row[r->cmp->sub_row[sid]];
}

const cmp_row *html_cmp_file(const html_report *r, uint32_t fid)
{
    if (!r->cmp || fid >= r->p->n_files || r->cmp->file_row[fid] == NYTP_NONE)
        return NULL;
    return &r->cmp->C.files.row[r->cmp->file_row[fid]];
}

const cmp_row *html_cmp_line(const html_report *r, uint32_t fid, uint32_t line)
{
    if (!r->cmp || fid >= r->p->n_files || r->cmp->line_file[fid] == NYTP_NONE)
        return NULL;
    char key[8];
    memcpy(key, &r->cmp->line_file[fid], 4);
    memcpy(key + 4, &line, 4);
    uint32_t i = strmap_find(&r->cmp->C.lines.keys, key, sizeof key);
    return i == NYTP_NONE ? NULL : &r->cmp->C.lines.row[i];
}

unsigned html_change_cols(const html_report *r)
{
    return r->cmp ? 3 + r->cmp->C.stats : 0;
}

void html_change_heads(const html_report *r, hw *w, const char *what)
{
    if (!r->cmp)
        return;
    const char *per = r->cmp->C.s[0].n > 1 || r->cmp->C.s[1].n > 1 ? " (median of the runs)" : "";
    hw_s(w, "<th class=\"n cmp\" title=\"");
    hw_s(w, what);
    hw_s(w, " in BASE");
    hw_s(w, per);
    hw_s(w, "\">Before<th class=\"n cmp\" title=\"");
    hw_s(w, what);
    hw_s(w, " in this profile's runs");
    hw_s(w, per);
    hw_s(w, "\">After<th class=\"n cmp\" title=\"change from before; ~: not significant\">Change");
    if (r->cmp->C.stats)
        hw_s(w, "<th class=\"n cmp\" title=\"p-value of the change (Welch's t-test on the logs of the "
                "runs)\">p");
}

enum cmp_q html_q(const html_report *r)
{
    return r->by == CMP_BY_STATEMENTS ? CMP_STMTS : r->by == CMP_BY_CALLS ? CMP_CALLS : CMP_TIME;
}

const char *html_q_words(const html_report *r, const char *time_words)
{
    return r->by == CMP_BY_STATEMENTS ? "statements executed"
           : r->by == CMP_BY_CALLS    ? "calls"
                                      : time_words;
}

void html_change_cells(const html_report *r, hw *w, const cmp_row *row, enum cmp_q q)
{
    if (!r->cmp)
        return;
    const comparison *C = &r->cmp->C;
    if (!row) {
        hw_s(w, C->stats ? "<td><td><td><td>" : "<td><td><td>");
        return;
    }
    double b = row->centre[0][q], a = row->centre[1][q];
    bool time = q == CMP_TIME || q == CMP_INCL;
    for (int k = 0; k < 2; k++) {
        double v = k ? a : b;
        hw_s(w, "<td class=cmp data-v=");
        hw_nv(w, v);
        hw_s(w, ">");
        if (time)
            hw_dur(w, v);
        else
            hw_nv(w, v);
    }
    double pct = cmp_pct(b, a);
    bool noise = C->stats && !(row->p < 0.05);
    if (cmp_added(row))
        hw_s(w, "<td class=\"cmp slower\" data-v=1e300>new");
    else if (cmp_removed(row))
        hw_s(w, "<td class=\"cmp faster\" data-v=-100>gone");
    else if (noise || !isfinite(pct)) {
        hw_s(w, "<td class=\"cmp noise\" data-v=");
        hw_nv(w, isfinite(pct) ? pct : 0);
        hw_s(w, " title=\"");
        if (isfinite(pct)) {
            char t[40];
            snprintf(t, sizeof t, "%+.1f%%", pct);
            hw_s(w, t);
        }
        hw_s(w, noise ? ", not significant\">~" : "\">~");
    } else {
        char t[48];
        snprintf(t, sizeof t, "%+.1f%%", pct);
        hw_s(w, pct > 0 ? "<td class=\"cmp slower\" data-v=" : pct < 0 ? "<td class=\"cmp faster\" data-v="
                                                                    : "<td class=cmp data-v=");
        hw_nv(w, pct);
        hw_s(w, ">");
        hw_s(w, t);
    }
    if (C->stats) {
        hw_s(w, "<td class=cmp data-v=");
        if (isnan(row->p)) {
            hw_s(w, "1>");
        } else {
            hw_nv(w, row->p);
            char t[40];
            snprintf(t, sizeof t, row->p == 0 ? ">0" : row->p < 0.0001 ? ">%.0e" : ">%.2g", row->p);
            hw_s(w, t);
        }
    }
}

void html_runs(hw *w, uint32_t n)
{
    hw_u(w, n);
    hw_s(w, n == 1 ? " run" : " runs");
}

void html_change_words(const html_report *r, hw *w, const cmp_row *row, enum cmp_q q)
{
    if (!r->cmp || !row)
        return;
    if (cmp_added(row)) {
        hw_s(w, "new");
        return;
    }
    double pct = cmp_pct(row->centre[0][q], row->centre[1][q]);
    bool stats = r->cmp->C.stats && !isnan(row->p);
    char b[80];
    if (stats && !(row->p < 0.05))
        snprintf(b, sizeof b, "~, p=%.2g", row->p);
    else if (!isfinite(pct))
        snprintf(b, sizeof b, "~");
    else if (stats)
        snprintf(b, sizeof b, "%+.1f%%, p=%.2g", pct, row->p);
    else
        snprintf(b, sizeof b, "%+.1f%%", pct);
    hw_s(w, b);
}

void html_change_note(const html_report *r, hw *w)
{
    if (!r->cmp)
        return;
    const comparison *C = &r->cmp->C;
    hw_s(w, "<p class=note>Before: in BASE (");
    html_runs(w, C->s[0].n);
    hw_s(w, "); after: in this profile (");
    html_runs(w, C->s[1].n);
    hw_s(w, ")");
    if (C->s[0].n > 1 || C->s[1].n > 1)
        hw_s(w, ", the median of each side's runs");
    if (C->s[1].n > 1) {
        hw_s(w, "; the other columns are this profile's ");
        html_runs(w, C->s[1].n);
        hw_s(w, " added up (labelled so)");
    }
    if (C->o.normalize)
        hw_s(w, "; every run scaled by how fast it ran against BASE as a whole (--normalize)");
    if (C->stats)
        hw_s(w, ". p: Welch's t-test on the logs of the runs; ~: not significant (p &ge; 0.05)");
    else
        hw_s(w, ". One run on a side: no significance is computed");
    hw_s(w, ". Names are matched across checkouts (see nytp-diff(1)).</p>\n");
}

void html_td_count(hw *w, const nytp_profile *p, uint64_t v)
{
    if (p->counts_unknown)
        hw_s(w, "<td title=\"not known: the profile was sampled\">?");
    else
        html_td_u(w, v);
}

void html_sum_label(const html_report *r, hw *w)
{
    if (!r->cmp || r->cmp->C.s[1].n < 2)
        return;
    hw_s(w, "<br><span class=note>sum of ");
    html_runs(w, r->cmp->C.s[1].n);
    hw_s(w, "</span>");
}

/* The sub table of index, subs and file pages. */
void html_subs_table(html_report *r, hw *w, const uint32_t *ids, uint32_t n, bool all_columns,
                       const char *id)
{
    const nytp_profile *p = r->p;
    hw_s(w, "<table class=\"sort subs\" id=");
    hw_s(w, id);
    hw_s(w, "><thead><tr><th class=n title=\"number of calls\">Calls");
    html_sum_label(r, w);
    hw_s(w, "<th class=n title=\"places (file and line) it is called from\">P"
            "<th class=n title=\"files it is called from\">F"
            "<th class=n title=\"time in the sub itself, not in subs it called\">Exclusive");
    html_sum_label(r, w);
    hw_s(w, "<th class=n title=\"time in the sub and everything it called\">Inclusive");
    html_sum_label(r, w);
    if (r->sub_stmts) {
        hw_s(w, "<th class=n title=\"statements executed on its lines (not those of subs "
                "defined inside it)\">Statements");
        html_sum_label(r, w);
    }
    if (all_columns)
        hw_s(w, "<th class=n title=\"inclusive time of calls made while it was already running\">Recursive"
                "<th class=n title=\"deepest recursion\">Depth<th>Kind");
    hw_s(w, "<th>Subroutine");
    if (all_columns)
        hw_s(w, "<th>Defined at");
    html_change_heads(r, w, html_q_words(r, "exclusive time"));
    hw_s(w, "</thead>\n<tbody>\n");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t sid = ids[i];
        const nytp_sub *s = &p->subs[sid];
        hw_s(w, "<tr");
        if (all_columns) {
            hw_s(w, " id=S");
            hw_u(w, sid);
        }
        hw_s(w, ">");
        html_td_count(w, p, s->calls);
        html_td_u(w, s->n_sites);
        html_td_u(w, r->sub_files[sid]);
        /* exclusive time with a bar relative to the top sub's, and its
         * share of all subs' exclusive time as the title */
        double rel = fmt_bar_pct(s->excl, r->excl_max);
        if (rel >= 0.5 && rel <= 100) {
            char bar[96];
            snprintf(bar, sizeof bar, "<td class=bar style=\"--p:%.0f%%\" title=\"%.1f%% of all\" data-v=",
                     rel, 100.0 * s->excl / r->excl_total);
            hw_s(w, bar);
            hw_nv(w, s->excl);
            hw_s(w, ">");
            hw_dur(w, s->excl);
        } else
            html_td_dur(w, s->excl);
        html_td_dur(w, s->incl);
        if (r->sub_stmts)
            html_td_u(w, (uint64_t)r->sub_stmts[sid]);
        bool op = html_is_opcode(p, s), xs = !op && html_is_xsub(s);
        if (all_columns) {
            html_td_dur(w, s->reci);
            html_td_u(w, s->rec_depth);
            hw_s(w, op ? "<td><span class=op title=\"a perl opcode profiled as a sub (slowops)\">opcode</span>"
                       : xs ? "<td><span class=xs title=\"written in C (XS)\">xsub</span>" : "<td>");
        }
        hw_s(w, "<td class=name>");
        html_sub_link(r, w, sid);
        if (!all_columns && (op || xs))
            hw_s(w, op ? " <span class=op>opcode</span>" : " <span class=xs>xsub</span>");
        if (!all_columns && s->rec_depth) {
            hw_s(w, " <span class=note>recursion depth ");
            hw_u(w, s->rec_depth);
            hw_s(w, "</span>");
        }
        if (all_columns) {
            hw_s(w, "<td>");
            if (s->fid != NYTP_NONE && s->fid < p->n_files && r->shown[s->fid]) {
                html_file_link(r, w, s->fid);
                if (s->first_line != NYTP_NONE && s->first_line) {
                    hw_s(w, ":");
                    hw_u(w, s->first_line);
                    if (s->last_line != NYTP_NONE && s->last_line != s->first_line) {
                        hw_s(w, "-");
                        hw_u(w, s->last_line);
                    }
                }
            }
        }
        html_change_cells(r, w, html_cmp_sub(r, sid), html_q(r));
        hw_s(w, "\n");
    }
    hw_s(w, "</tbody></table>\n");
}

/* html_pages.c — the pages of 'nytp html': index, all subs, and one page
 * per source file and string eval with every line annotated. */
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

/* A JavaScript string literal (JSON), safe in a .js file. */
void hw_json(hw *w, const char *s, size_t n)
{
    uint8_t *d = nytp_out_reserve(w->out, n * 6 + 2);
    if (!d) {
        w->err = nytp_out_error(w->out)->status;
        return;
    }
    char *end = fmt_json_str((char *)d, s, n);
    nytp_out_commit(w->out, (size_t)(end - (char *)d));
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
    if (w->err) {
        cli_error("%s/%s: %s", r->dir.path, name, nytp_out_error(w->out)->msg);
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
static bool sub_has_lines(const nytp_sub *s)
{
    return s->first_line && s->first_line != NYTP_NONE && s->last_line != NYTP_NONE;
}

/* Defined in its file: has lines there, and is not main::RUNTIME, which
 * stands for the main program (Devel::NYTProf gives it line 1). */
static bool sub_defined_here(const nytp_profile *p, const nytp_sub *s)
{
    return sub_has_lines(s) && strcmp(nytp_profile_str(p, s->name), "main::RUNTIME") != 0;
}

/* Whether a sub's headline carries information: never-called subs (dead
 * code, or main::RUNTIME for a main script with no sub) get none. */
static bool sub_has_headline(const nytp_sub *s)
{
    return s->calls || s->n_sites || s->incl != 0;
}

/* The URL of the place of sub id: its headline in its file's page
 * (buf: >= 128 bytes; page names are plain ASCII, nothing to escape). */
void html_sub_url(const html_report *r, uint32_t sid, char *buf, size_t size)
{
    const nytp_sub *s = &r->p->subs[sid];
    bool page = s->fid != NYTP_NONE && s->fid < r->p->n_files && r->page[s->fid];
    if (page && !sub_has_headline(s) && sub_has_lines(s)) /* no headline: its first line */
        snprintf(buf, size, "%s#L%u", r->page[s->fid], s->first_line);
    else
        snprintf(buf, size, "%s#S%u", page && sub_has_headline(s) ? r->page[s->fid] : "subs.html", sid);
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
static void sub_name(html_report *r, hw *w, uint32_t sid)
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
    sub_name(r, w, sid);
    hw_s(w, "</a>");
}

/* A link to fid:line. */
static void line_link(html_report *r, hw *w, uint32_t fid, uint32_t line, bool with_file)
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

static void file_link(html_report *r, hw *w, uint32_t fid)
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

static bool is_opcode(const nytp_profile *p, const nytp_sub *s)
{
    if ((s->first_line && s->first_line != NYTP_NONE) || (s->last_line && s->last_line != NYTP_NONE))
        return false;
    const char *n = nytp_profile_str(p, s->name);
    return strncmp(n, "CORE::", 6) == 0 || strstr(n, "::CORE:") != NULL;
}

static bool is_xsub(const nytp_sub *s)
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

/* The sub table of index, subs and file pages. */
void html_subs_table(html_report *r, hw *w, const uint32_t *ids, uint32_t n, bool all_columns,
                       const char *id)
{
    const nytp_profile *p = r->p;
    hw_s(w, "<table class=\"sort subs\" id=");
    hw_s(w, id);
    hw_s(w, "><thead><tr><th class=n title=\"number of calls\">Calls"
            "<th class=n title=\"places (file and line) it is called from\">P"
            "<th class=n title=\"files it is called from\">F"
            "<th class=n title=\"time in the sub itself, not in subs it called\">Exclusive"
            "<th class=n title=\"time in the sub and everything it called\">Inclusive");
    if (all_columns)
        hw_s(w, "<th class=n title=\"inclusive time of calls made while it was already running\">Recursive"
                "<th class=n title=\"deepest recursion\">Depth<th>Kind");
    hw_s(w, "<th>Subroutine");
    if (all_columns)
        hw_s(w, "<th>Defined at");
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
        html_td_u(w, s->calls);
        html_td_u(w, s->n_sites);
        html_td_u(w, r->sub_files[sid]);
        /* exclusive time with a bar relative to the top sub's, and its
         * share of all subs' exclusive time as the title */
        double rel = r->excl_max > 0 && s->excl > 0 ? 100.0 * s->excl / r->excl_max : 0;
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
        bool op = is_opcode(p, s), xs = !op && is_xsub(s);
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
                file_link(r, w, s->fid);
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
        hw_s(w, "\n");
    }
    hw_s(w, "</tbody></table>\n");
}

/* ---- index ------------------------------------------------------------------- */

static void dt(hw *w, const char *term)
{
    hw_s(w, "<dt>");
    hw_s(w, term);
    hw_s(w, "<dd>");
}

static void attr_text(html_report *r, hw *w, const char *key, const char *missing)
{
    const char *v = nytp_profile_attr(r->p, key);
    if (v)
        hw_esc(w, v, strlen(v));
    else
        hw_s(w, missing);
}

static int cmp_files_time(const void *a, const void *b, void *ctx)
{
    const html_report *r = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (r->all_time[x] != r->all_time[y])
        return r->all_time[x] > r->all_time[y] ? -1 : 1;
    return strcmp(r->shown[x], r->shown[y]);
}

static void summary(html_report *r, hw *w)
{
    const nytp_profile *p = r->p;
    hw_s(w, "<dl class=summary>");
    dt(w, "Program");
    attr_text(r, w, "application", "(unknown)");
    const char *xs = nytp_profile_attr(p, "xs_version");
    if (r->source == SOURCE_DPROF) {
        /* a tmon.out converted: DProf records no perl version */
        dt(w, "Profiler");
        hw_s(w, "Devel::DProf");
        if (xs && strncmp(xs, "DProf", 5) == 0 && xs[5] == ' ' && xs[6]) {
            hw_s(w, " ");
            hw_esc(w, xs + 6, strlen(xs + 6));
        }
        hw_s(w, " <span class=note>(its tmon.out converted by nytp dprof-convert; DProf records "
                "no statements or lines)</span>");
    } else {
        dt(w, "Perl");
        attr_text(r, w, "perl_version", "?");
        hw_s(w, r->source == SOURCE_NYTP ? ", Devel::NYTP " : ", Devel::NYTProf ");
        attr_text(r, w, "xs_version", "?");
    }
    dt(w, "Run at");
    const char *bt = nytp_profile_attr(p, "basetime");
    double st = p->profiler_start_time; /* from the profile: may be anything */
    time_t t = bt ? (time_t)strtoll(bt, NULL, 10) : st > -1e15 && st < 1e15 ? (time_t)st : 0;
    char when[96];
    html_time_of_day(t, when, sizeof when);
    hw_esc(w, when, strlen(when));
    dt(w, "Wall time");
    hw_dur(w, p->profiler_duration);
    dt(w, "Profiler active");
    hw_dur(w, r->active);
    hw_s(w, " <span class=note>(wall time less the profiler's own overhead)</span>");
    dt(w, "Statements");
    hw_count(w, p->total_stmts_measured - p->total_stmts_discounted);
    hw_s(w, " executed in ");
    hw_dur(w, p->total_stmts_duration);
    dt(w, "Subroutines");
    uint32_t called = 0;
    for (uint32_t i = 0; i < p->n_subs; i++)
        called += p->subs[i].calls > 0;
    hw_count(w, p->n_subs);
    hw_s(w, " (");
    hw_count(w, called);
    hw_s(w, " called), ");
    hw_count(w, p->total_sub_calls);
    hw_s(w, " calls");
    dt(w, "Source files");
    hw_u(w, r->n_source_files);
    hw_s(w, ", ");
    hw_u(w, r->n_evals);
    hw_s(w, " string evals");
    if (r->n_empty_files) {
        hw_s(w, "; ");
        hw_count(w, r->n_empty_files);
        hw_s(w, r->n_empty_files == 1 ? " more file with no data (no page)" : " more files with no data (no pages)");
    }
    dt(w, "Processes");
    hw_u(w, p->n_procs);
    for (uint32_t i = 0; i < p->n_procs && i < 20; i++) {
        hw_s(w, i ? ", " : ": ");
        hw_s(w, "pid ");
        hw_u(w, p->procs[i].pid);
        if (p->procs[i].ppid) {
            hw_s(w, " (parent ");
            hw_u(w, p->procs[i].ppid);
            hw_s(w, ")");
        }
    }
    if (p->n_procs > 20)
        hw_s(w, ", \xE2\x80\xA6");
    if (p->n_inputs > 1) {
        hw_s(w, " from ");
        hw_u(w, p->n_inputs);
        hw_s(w, " profile files");
    }
    dt(w, "Complete");
    hw_s(w, p->complete ? "yes"
                        : "<strong class=warn>no</strong> \xE2\x80\x94 the profile was cut short "
                          "(the process died or is still running); what came before the cut is shown");
    hw_s(w, "</dl>\n");
}

int html_write_index(html_report *r)
{
    const nytp_profile *p = r->p;
    hw w;
    if (!html_page_open(r, &w, "index.html"))
        return EXIT_BAD_INPUT;
    const char *app = nytp_profile_attr(p, "application");
    if (!app)
        app = "profile";
    html_page_head(&w, app, strlen(app));
    hw_s(&w, "<header>");
    html_nav(r, &w, "index");
    hw_s(&w, "<h1>Profile of ");
    hw_esc(&w, app, strlen(app));
    hw_s(&w, "</h1></header>\n<main>\n");
    html_index_lead(r, &w);
    summary(r, &w);
    if (r->flame) {
        hw_s(&w, "<section id=flame><h2>Flame graph</h2><p class=note>Each box is a sub called along "
                 "one call path; its width is the time spent in it and in what it called, the boxes "
                 "above it are the subs it called. Click a box to zoom in, click it again (or "
                 "Ctrl-click) to open that sub; Ctrl-F in the graph searches.</p>");
        if (r->flame_sites)
            hw_s(&w, "<p class=note>The profile has no sub return events (it was made with calls=0): "
                     "the graph shows the caller;called paths of its call-site data, not whole "
                     "call stacks.</p>");
        hw_s(&w, "<object data=flame.svg type=\"image/svg+xml\" class=flame style=\"max-width:");
        hw_u(&w, r->flame_w);
        hw_s(&w, "px;aspect-ratio:");
        hw_u(&w, r->flame_w);
        hw_s(&w, "/");
        hw_u(&w, r->flame_h ? r->flame_h : r->flame_w / 4);
        hw_s(&w, "\"><a href=flame.svg>flame graph</a></object></section>\n");
    }

    if (r->flame_empty)
        hw_s(&w, "<p class=note>No flame graph: the profile has no sub return events and no "
                 "call-site data (it was made with subs=0).</p>\n");
    uint32_t top = p->n_subs < 25 ? p->n_subs : 25;
    hw_s(&w, "<section><h2>Top subroutines by exclusive time</h2>\n");
    html_subs_table(r, &w, r->by_excl, top, false, "topsubs");
    if (r->dot)
        hw_s(&w, "<p class=note>Graphviz call graphs (--dot): <a href=packages-callgraph.dot>between "
                 "packages</a>, <a href=subs-callgraph.dot>between all subs</a>; each file page links "
                 "its own.</p>\n");
    hw_s(&w, "<p><a href=subs.html>Show all ");
    hw_u(&w, p->n_subs);
    hw_s(&w, " subroutines</a></p></section>\n");
    html_packages_section(r, &w);

    /* source files */
    uint32_t *fids = malloc((p->n_files + 1) * sizeof *fids);
    if (!fids) {
        w.err = NYTP_E_NOMEM;
        return html_page_close(r, &w, "index.html");
    }
    uint32_t nf = 0;
    double total = 0;
    int64_t stmts = 0;
    for (uint32_t fid = 1; fid < p->n_files; fid++)
        if (r->page[fid] && !p->files[fid].eval_fid) {
            fids[nf++] = fid;
            total += r->all_time[fid];
            stmts += r->all_stmts[fid];
        }
    qsort_r(fids, nf, sizeof *fids, cmp_files_time, r);
    hw_s(&w, "<section><h2>Source files</h2>\n<table class=\"sort files\" id=files><thead><tr>"
             "<th class=n title=\"statements executed\">Statements"
             "<th class=n title=\"time executing statements on its lines and in its string evals\">Time"
             "<th class=n title=\"share of all statement time\">%"
             "<th class=n title=\"time per statement\">Per statement"
             "<th class=n title=\"subroutines defined in it\">Subs"
             "<th>Reports<th>File</thead>\n<tbody>\n");
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t fid = fids[i];
        const nytp_file *f = &p->files[fid];
        hw_s(&w, "<tr data-fid=");
        hw_u(&w, fid);
        hw_s(&w, "><td data-v=");
        hw_u(&w, (uint64_t)r->all_stmts[fid]);
        hw_s(&w, ">");
        hw_u(&w, (uint64_t)r->all_stmts[fid]);
        html_td_dur(&w, r->all_time[fid]);
        hw_s(&w, "<td>");
        hw_pct(&w, r->all_time[fid], total);
        html_td_dur(&w, r->all_stmts[fid] ? r->all_time[fid] / (double)r->all_stmts[fid] : 0);
        uint32_t defined = 0; /* not the xsubs and opcodes only listed with it */
        for (uint32_t k = 0; k < f->n_subs; k++)
            defined += sub_defined_here(p, &p->subs[f->subs[k]]);
        html_td_u(&w, defined);
        hw_s(&w, "<td class=views><a href=\"");
        hw_s(&w, r->page[fid]);
        hw_s(&w, "\">line</a>");
        if (p->has_blocks && !r->minimal) {
            char name[96];
            for (int v = VIEW_BLOCK; v <= VIEW_SUB; v++) {
                html_page_name(r, fid, (enum html_view)v, name);
                hw_s(&w, " <a href=\"");
                hw_s(&w, name);
                hw_s(&w, v == VIEW_BLOCK ? "\">block</a>" : "\">sub</a>");
            }
        }
        hw_s(&w, "<td class=name>");
        file_link(r, &w, fid);
        uint32_t ne = 0;
        for (uint32_t k = 0; k < f->n_evals; k++)
            ne += 1 + p->files[f->evals[k]].merged_evals;
        if (ne) {
            hw_s(&w, " <span class=note>(with ");
            hw_u(&w, ne);
            hw_s(&w, ne == 1 ? " string eval)</span>" : " string evals)</span>");
        }
        hw_s(&w, "\n");
    }
    hw_s(&w, "</tbody><tfoot><tr><td>");
    hw_u(&w, (uint64_t)stmts);
    hw_s(&w, "<td>");
    hw_dur(&w, total);
    hw_s(&w, "<td>100%<td>");
    hw_dur(&w, stmts ? total / (double)stmts : 0);
    hw_s(&w, "<td><td><td>Total</tfoot></table></section>\n</main>\n");
    free(fids);
    html_page_foot(&w);
    return html_page_close(r, &w, "index.html");
}

int html_write_subs(html_report *r)
{
    hw w;
    if (!html_page_open(r, &w, "subs.html"))
        return EXIT_BAD_INPUT;
    static const char title[] = "All subroutines";
    html_page_head(&w, title, sizeof title - 1);
    hw_s(&w, "<header>");
    html_nav(r, &w, "subs");
    hw_s(&w, "<h1>All ");
    hw_u(&w, r->p->n_subs);
    hw_s(&w, " subroutines</h1><p class=note>Sorted by exclusive time. P: places called from; F: files "
             "called from. <span class=op>opcode</span> marks perl opcodes profiled as subs (slowops), "
             "<span class=xs>xsub</span> subs written in C.</p></header>\n<main>\n"
             "<p><input type=search class=filter data-table=allsubs placeholder=\"Filter by name\" "
             "aria-label=\"Show only the subroutines whose name contains\"></p>\n");
    html_subs_table(r, &w, r->by_excl, r->p->n_subs, true, "allsubs");
    hw_s(&w, "</main>\n");
    html_page_foot(&w);
    return html_page_close(r, &w, "subs.html");
}

/* ---- file pages ------------------------------------------------------------- */

typedef struct srcline {
    const char *ptr;
    uint32_t len;
} srcline;

/* The source of a real file that was not saved in the profile, read from
 * disk now.  Returns the line array (index = line number) or NULL. */
static srcline *disk_source(const char *path, uint32_t *n, char **buf)
{
    struct stat sb;
    *buf = NULL;
    FILE *fp = cli_open_source(path, (uint64_t)64 << 20);
    if (!fp)
        return NULL;
    if (fstat(fileno(fp), &sb) < 0) {
        fclose(fp);
        return NULL;
    }
    size_t size = (size_t)sb.st_size;
    char *data = malloc(size + 1);
    if (!data || fread(data, 1, size, fp) != size) {
        free(data);
        fclose(fp);
        return NULL;
    }
    fclose(fp);
    uint32_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    srcline *v = calloc((size_t)lines + 2, sizeof *v);
    if (!v) {
        free(data);
        return NULL;
    }
    uint32_t k = 1;
    size_t start = 0;
    for (size_t i = 0; i <= size; i++)
        if (i == size || data[i] == '\n') {
            if (i == size && i == start)
                break;
            v[k].ptr = data + start;
            v[k].len = (uint32_t)(i - start);
            k++;
            start = i + 1;
        }
    *n = k;
    *buf = data;
    return v;
}

/* "file:///a%20b/c.pm": the file named name as it is now, a real file,
 * every byte but A-Z a-z 0-9 - . _ ~ / percent-encoded.  NULL if it is not
 * there (or not a plain file). */
static char *source_url(const char *name)
{
    char *abs = realpath(name, NULL);
    struct stat sb;
    if (!abs || stat(abs, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        free(abs);
        return NULL;
    }
    size_t n = strlen(abs);
    char *url = malloc(7 + 3 * n + 1), *o = url;
    if (url) {
        static const char hex[] = "0123456789ABCDEF";
        o += sprintf(o, "file://");
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)abs[i];
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                c == '.' || c == '_' || c == '~' || c == '/')
                *o++ = (char)c;
            else {
                *o++ = '%';
                *o++ = hex[c >> 4];
                *o++ = hex[c & 15];
            }
        }
        *o = 0;
    }
    free(abs);
    return url;
}

typedef struct file_ctx {
    html_report *r;
    const nytp_file *f;
    uint32_t fid;
} file_ctx;

static int cmp_site_line(const void *a, const void *b, void *ctx)
{
    const nytp_profile *p = ctx;
    const nytp_site *x = &p->sites[*(const uint32_t *)a], *y = &p->sites[*(const uint32_t *)b];
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    return strcmp(nytp_profile_str(p, p->subs[x->called].name), nytp_profile_str(p, p->subs[y->called].name));
}

static int cmp_sub_line(const void *a, const void *b, void *ctx)
{
    const nytp_profile *p = ctx;
    const nytp_sub *x = &p->subs[*(const uint32_t *)a], *y = &p->subs[*(const uint32_t *)b];
    uint32_t lx = x->first_line == NYTP_NONE ? 0 : x->first_line;
    uint32_t ly = y->first_line == NYTP_NONE ? 0 : y->first_line;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return strcmp(nytp_profile_str(p, x->name), nytp_profile_str(p, y->name));
}

static int cmp_eval_line(const void *a, const void *b, void *ctx)
{
    const nytp_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t lx = p->files[x].eval_line, ly = p->files[y].eval_line;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int cmp_site_count(const void *a, const void *b, void *ctx)
{
    const nytp_profile *p = ctx;
    const nytp_site *x = &p->sites[*(const uint32_t *)a], *y = &p->sites[*(const uint32_t *)b];
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    if (x->fid != y->fid)
        return x->fid < y->fid ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_sub_excl(const void *a, const void *b, void *ctx)
{
    const nytp_profile *p = ctx;
    const nytp_sub *x = &p->subs[*(const uint32_t *)a], *y = &p->subs[*(const uint32_t *)b];
    if (x->excl != y->excl)
        return x->excl > y->excl ? -1 : 1;
    return strcmp(nytp_profile_str(p, x->name), nytp_profile_str(p, y->name));
}

static uint32_t *sorted(const uint32_t *v, uint32_t n, int (*cmp)(const void *, const void *, void *),
                        void *ctx)
{
    uint32_t *c = malloc(((size_t)n + 1) * sizeof *c);
    if (!c)
        return NULL;
    if (n)
        memcpy(c, v, (size_t)n * sizeof *c);
    qsort_r(c, n, sizeof *c, cmp, ctx);
    return c;
}

/* "spent 1.2ms (1.0+0.2ms) within Pkg::sub which was called 3 times, avg
 * 400µs/call:" and its callers. */
static void sub_headline(html_report *r, hw *w, uint32_t sid)
{
    const nytp_profile *p = r->p;
    const nytp_sub *s = &p->subs[sid];
    hw_s(w, "<tr class=sh id=S");
    hw_u(w, sid);
    hw_s(w, "><td colspan=6><td><div>spent <b>");
    hw_dur(w, s->incl);
    hw_s(w, "</b>");
    if (s->incl != s->excl) {
        hw_s(w, " (");
        hw_dur(w, s->excl);
        hw_s(w, "+");
        hw_dur(w, s->incl - s->excl);
        hw_s(w, ")");
    }
    hw_s(w, " within <b class=name>");
    sub_name(r, w, sid);
    hw_s(w, "</b>");
    if (s->calls == 0)
        hw_s(w, ", which was never called");
    else if (s->calls == 1)
        hw_s(w, " which was called once");
    else {
        hw_s(w, " which was called ");
        hw_u(w, s->calls);
        hw_s(w, " times, avg ");
        hw_dur(w, s->incl / (double)s->calls);
        hw_s(w, "/call");
    }
    if (s->rec_depth) {
        hw_s(w, ", recursion: max depth ");
        hw_u(w, s->rec_depth);
        hw_s(w, ", sum of overlapping time ");
        hw_dur(w, s->reci);
    }
    hw_s(w, s->n_sites ? ":</div>" : "</div>");
    if (s->calls >= 2)
        html_dist_write(w, html_durations_get(r->durations, nytp_profile_str(p, s->name), nytp_profile_strlen(p, s->name)),
                        p->ticks_per_sec);
    uint32_t *sites = sorted(s->sites, s->n_sites, cmp_site_count, (void *)p);
    uint32_t shown = s->n_sites > 50 ? 50 : s->n_sites;
    for (uint32_t i = 0; sites && i < shown; i++) {
        const nytp_site *c = &p->sites[sites[i]];
        hw_s(w, "<div class=by>");
        if (c->count == 1)
            hw_s(w, "once");
        else {
            hw_u(w, c->count);
            hw_s(w, " times");
        }
        hw_s(w, " (");
        hw_dur(w, c->excl);
        hw_s(w, "+");
        hw_dur(w, c->incl - c->excl);
        hw_s(w, ") by ");
        for (uint32_t k = 0; k < c->n_callers && k < 5; k++) {
            if (k)
                hw_s(w, ", ");
            uint32_t cid = c->callers[k];
            uint32_t csub = nytp_profile_sub_by_name(p, nytp_profile_str(p, cid), nytp_profile_strlen(p, cid));
            if (csub != NYTP_NONE)
                html_sub_link(r, w, csub);
            else
                hw_id(w, p, cid);
        }
        hw_s(w, " at ");
        line_link(r, w, c->fid, c->line, c->fid != s->fid);
        if (c->count > 1) {
            hw_s(w, ", avg ");
            hw_dur(w, c->incl / (double)c->count);
            hw_s(w, "/call");
        }
        hw_s(w, "</div>");
    }
    if (s->n_sites > shown) {
        hw_s(w, "<div class=by>\xE2\x80\xA6 and from ");
        hw_u(w, s->n_sites - shown);
        hw_s(w, " more places</div>");
    }
    free(sites);
    hw_s(w, "\n");
}

static void call_note(html_report *r, hw *w, const nytp_site *c)
{
    hw_s(w, "<div>spent ");
    hw_dur(w, c->incl);
    hw_s(w, " making ");
    hw_u(w, c->count);
    hw_s(w, c->count == 1 ? " call to " : " calls to ");
    html_sub_link(r, w, c->called);
    if (c->count > 1) {
        hw_s(w, ", avg ");
        hw_dur(w, c->incl / (double)c->count);
        hw_s(w, "/call");
    }
    if (c->rec_depth) {
        hw_s(w, ", recursion: max depth ");
        hw_u(w, c->rec_depth);
        hw_s(w, ", sum of overlapping time ");
        hw_dur(w, c->reci);
    }
    hw_s(w, "</div>");
}

bool html_eval_subs_init(html_report *r)
{
    const nytp_profile *p = r->p;
    r->eval_subs = calloc((size_t)p->n_files + 1, sizeof *r->eval_subs);
    if (!r->eval_subs)
        return false;
    for (uint32_t i = 0; i < p->n_evals_by_depth; i++) {
        const nytp_file *f = &p->files[p->evals_by_depth[i]];
        struct html_eval_subs *t = &r->eval_subs[f->fid];
        for (uint32_t k = 0; k < f->n_subs; k++) {
            const nytp_sub *s = &p->subs[f->subs[k]];
            if (s->fid != f->fid || !sub_defined_here(p, s))
                continue;
            t->n++;
            t->calls += s->calls;
            t->incl += s->incl;
        }
    }
    for (uint32_t i = p->n_evals_by_depth; i-- > 0;) {
        const nytp_file *f = &p->files[p->evals_by_depth[i]];
        if (f->eval_depth > 1) {
            struct html_eval_subs *t = &r->eval_subs[f->eval_fid], *e = &r->eval_subs[f->fid];
            t->n += e->n;
            t->calls += e->calls;
            t->incl += e->incl;
        }
    }
    return true;
}

static void eval_note(html_report *r, hw *w, uint32_t efid)
{
    const nytp_file *e = &r->p->files[efid];
    hw_s(w, "<div>spent ");
    hw_dur(w, r->all_time[efid]);
    hw_s(w, " executing statements in ");
    if (r->page[efid]) {
        hw_s(w, "<a href=\"");
        hw_s(w, r->page[efid]);
        hw_s(w, "\">");
    }
    if (e->merged_evals) {
        hw_u(w, e->merged_evals + 1);
        hw_s(w, " string evals (merged)");
    } else
        hw_s(w, "string eval");
    if (r->page[efid])
        hw_s(w, "</a>");
    if (e->n_evals) {
        hw_s(w, ", which ran ");
        hw_u(w, e->n_evals);
        hw_s(w, e->n_evals == 1 ? " more string eval" : " more string evals");
    }
    /* the subs the eval (or an eval it ran) defined, and their calls */
    uint32_t nsubs = r->eval_subs[efid].n;
    uint64_t calls = r->eval_subs[efid].calls;
    double incl = r->eval_subs[efid].incl;
    if (nsubs && calls) {
        hw_s(w, "<br>includes ");
        hw_dur(w, incl);
        hw_s(w, " spent executing ");
        hw_u(w, calls);
        hw_s(w, calls == 1 ? " call to " : " calls to ");
        hw_u(w, nsubs);
        hw_s(w, nsubs == 1 ? " sub defined therein" : " subs defined therein");
    }
    hw_s(w, "</div>");
}

static const nytp_lines *view_lines(const nytp_file *f, enum html_view v)
{
    return v == VIEW_BLOCK ? &f->block : v == VIEW_SUB ? &f->sub : &f->line;
}

static int heat(double t, double max)
{
    if (t <= 0 || max <= 0)
        return 0;
    double q = t / max;
    return q >= 0.5 ? 5 : q >= 0.15 ? 4 : q >= 0.04 ? 3 : q >= 0.01 ? 2 : 1;
}

int html_write_file(html_report *r, uint32_t fid, enum html_view view)
{
    const nytp_profile *p = r->p;
    const nytp_file *f = &p->files[fid];
    char name[96];
    html_page_name(r, fid, view, name);
    hw w;
    if (!html_page_open(r, &w, name))
        return EXIT_BAD_INPUT;
    const char *shown = r->shown[fid];
    html_page_head(&w, shown, strlen(shown));
    hw_s(&w, "<header>");
    html_nav(r, &w, "file");
    hw_s(&w, "<h1>");
    hw_esc(&w, shown, strlen(shown));
    hw_s(&w, "</h1>\n");
    if (p->has_blocks && !r->minimal) {
        hw_s(&w, "<p class=views>View: ");
        static const char *vn[] = {"line", "block", "sub"};
        for (int v = VIEW_LINE; v <= VIEW_SUB; v++) {
            char other[96];
            html_page_name(r, fid, (enum html_view)v, other);
            if (v == (int)view) {
                hw_s(&w, "<b>");
                hw_s(&w, vn[v]);
                hw_s(&w, "</b> ");
            } else {
                hw_s(&w, "<a href=\"");
                hw_s(&w, other);
                hw_s(&w, "\">");
                hw_s(&w, vn[v]);
                hw_s(&w, "</a> ");
            }
        }
        hw_s(&w, view == VIEW_BLOCK   ? "<span class=note>(time of each block shown at its first line)</span>"
                 : view == VIEW_SUB ? "<span class=note>(time of each sub shown at its first line)</span>"
                                    : "");
        hw_s(&w, "</p>\n");
    }
    hw_s(&w, "<p>");
    char *url = f->defined && !f->eval_fid && !r->in_memory ? source_url(nytp_profile_str(p, f->name)) : NULL;
    if (url || (f->defined && strcmp(shown, nytp_profile_str(p, f->name)) != 0)) {
        if (url) {
            hw_s(&w, "<a class=path title=\"the source file as it is now\" href=\"");
            hw_s(&w, url); /* percent-encoded: nothing left to escape */
            hw_s(&w, "\">");
        } else
            hw_s(&w, "<span class=path>");
        hw_id(&w, p, f->name);
        hw_s(&w, url ? "</a><br>" : "</span><br>");
    }
    free(url);
    hw_count(&w, (uint64_t)r->own_stmts[fid]);
    hw_s(&w, " statements executed in ");
    hw_dur(&w, r->own_time[fid]);
    if (r->all_stmts[fid] != r->own_stmts[fid]) {
        hw_s(&w, " on its own lines, ");
        hw_count(&w, (uint64_t)r->all_stmts[fid]);
        hw_s(&w, " in ");
        hw_dur(&w, r->all_time[fid]);
        hw_s(&w, " with its string evals");
    }
    if (f->eval_fid && f->eval_fid < p->n_files) {
        hw_s(&w, ".<br>A string eval");
        if (f->merged_evals) {
            hw_s(&w, " (");
            hw_u(&w, f->merged_evals + 1);
            hw_s(&w, " evals of the same source, merged)");
        }
        hw_s(&w, " run at ");
        line_link(r, &w, f->eval_fid, f->eval_line, true);
    }
    if (html_file_has_dot(r, fid)) {
        char dot[112];
        html_dot_name(r, fid, dot);
        hw_s(&w, ".<br><a href=\"");
        hw_s(&w, dot);
        hw_s(&w, "\">Graphviz call graph of its subs</a>");
    }
    hw_s(&w, ".</p></header>\n<main>\n");

    /* the source: saved in the profile (sparse, walked with a cursor), or
     * read from disk for a real file (by line) */
    uint32_t nsrc = 0;
    const nytp_src *saved = f->src.n ? &f->src : NULL;
    srcline *src = NULL;
    char *diskbuf = NULL;
    if (saved) {
        nsrc = nytp_src_last(saved) + 1;
    } else if (f->defined && !f->eval_fid && !r->in_memory) {
        src = disk_source(nytp_profile_str(p, f->name), &nsrc, &diskbuf);
        if (src)
            hw_s(&w, "<p class=warn>The source of this file was not saved in the profile; it was read "
                     "from disk now and may differ from what ran.</p>\n");
    }
    if (!src && !saved)
        hw_s(&w, "<p class=warn>The source of this file is not available (not saved in the profile, "
                 "e.g. with savesrc=0, and not readable now): only the lines with data are shown, "
                 "without their text.</p>\n");

    /* the hottest lines, as links */
    {
        const nytp_lines *hl = view_lines(f, view);
        uint32_t top[10], nt = 0;
        double sum = 0;
        for (uint32_t l = 0; l < hl->n; l++) { /* l: an entry */
            if (hl->v[l].time <= 0)
                continue;
            sum += hl->v[l].time;
            uint32_t k = nt < 10 ? nt++ : 10;
            while (k > 0 && hl->v[top[k - 1]].time < hl->v[l].time) {
                if (k < 10)
                    top[k] = top[k - 1];
                k--;
            }
            if (k < 10)
                top[k] = l;
        }
        if (nt > 1) {
            hw_s(&w, "<p class=hot>Hottest lines: ");
            for (uint32_t i = 0; i < nt; i++) {
                hw_s(&w, i ? ", <a href=#L" : "<a href=#L");
                hw_u(&w, hl->v[top[i]].line);
                hw_s(&w, ">");
                hw_u(&w, hl->v[top[i]].line);
                hw_s(&w, "</a> <span class=note>");
                hw_pct(&w, hl->v[top[i]].time, sum);
                hw_s(&w, "</span>");
            }
            hw_s(&w, "</p>\n");
        }
    }

    /* blocks=1: the time of each block (the statements of one block,
     * nested blocks apart), the hottest ones, on the line view */
    if (view == VIEW_LINE && p->has_blocks && f->block.n) {
        const nytp_lines *bl = &f->block;
        uint32_t nb = 0, top[10], nt = 0;
        double sum = 0;
        for (uint32_t l = 0; l < bl->n; l++) {
            if (!bl->v[l].set)
                continue;
            nb++;
            sum += bl->v[l].time;
            if (!(bl->v[l].time > 0))
                continue;
            uint32_t k = nt < 10 ? nt++ : 10;
            while (k > 0 && bl->v[top[k - 1]].time < bl->v[l].time) {
                if (k < 10)
                    top[k] = top[k - 1];
                k--;
            }
            if (k < 10)
                top[k] = l;
        }
        if (nt) {
            char bpage[96];
            html_page_name(r, fid, VIEW_BLOCK, bpage);
            hw_s(&w, "<details class=blocks open><summary>");
            hw_u(&w, nb);
            hw_s(&w, nb == 1 ? " block" : " blocks");
            hw_s(&w, " with statements; the hottest</summary>\n<table class=\"sort subs\" id=blocks><thead><tr>"
                     "<th class=n title=\"statements executed in the block\">Stmts"
                     "<th class=n title=\"time of the block's own statements\">Time"
                     "<th class=n title=\"share of the file's statement time\">%"
                     "<th class=\"n up\">Block at line</thead>\n<tbody>\n");
            for (uint32_t i = 0; i < nt; i++) {
                const nytp_linestat *b = &bl->v[top[i]];
                hw_s(&w, "<tr>");
                html_td_u(&w, (uint64_t)b->count);
                html_td_dur(&w, b->time);
                hw_s(&w, "<td>");
                hw_pct(&w, b->time, sum);
                hw_s(&w, "<td class=name><a href=\"#L");
                hw_u(&w, b->line);
                hw_s(&w, "\">");
                hw_u(&w, b->line);
                hw_s(&w, "</a>");
                if (!r->minimal) {
                    hw_s(&w, " <a class=note href=\"");
                    hw_s(&w, bpage);
                    hw_s(&w, "#L");
                    hw_u(&w, b->line);
                    hw_s(&w, "\">(block view)</a>");
                }
                hw_s(&w, "\n");
            }
            hw_s(&w, "</tbody></table></details>\n");
        }
    }

    /* subs defined here */
    uint32_t *subs = sorted(f->subs, f->n_subs, cmp_sub_excl, (void *)p);
    if (subs && f->n_subs) {
        /* xsubs, opcodes and pseudo-subs with no line of their own are
         * listed with a file (their package's, or the main script when
         * they have none) but not defined in it */
        uint32_t here = 0, ops = 0, xsubs = 0, runtime = 0;
        for (uint32_t i = 0; i < f->n_subs; i++) {
            const nytp_sub *s = &p->subs[f->subs[i]];
            if (sub_defined_here(p, s))
                here++;
            else if (sub_has_lines(s))
                runtime++;
            else if (is_opcode(p, s))
                ops++;
            else if (is_xsub(s))
                xsubs++;
        }
        hw_s(&w, "<details open><summary>");
        if (here) {
            hw_u(&w, here);
            hw_s(&w, here == 1 ? " subroutine defined here" : " subroutines defined here");
        }
        if (here < f->n_subs) {
            hw_s(&w, here ? ", " : "");
            hw_u(&w, f->n_subs - here);
            hw_s(&w, " listed with this file but not defined in it (");
            const char *sep = "";
            if (xsubs) {
                hw_u(&w, xsubs);
                hw_s(&w, xsubs == 1 ? " xsub" : " xsubs");
                sep = ", ";
            }
            if (ops) {
                hw_s(&w, sep);
                hw_u(&w, ops);
                hw_s(&w, ops == 1 ? " opcode" : " opcodes");
                sep = ", ";
            }
            if (runtime) {
                hw_s(&w, sep);
                hw_s(&w, "the main program, main::RUNTIME");
                sep = ", ";
            }
            if (f->n_subs - here - xsubs - ops - runtime) {
                hw_s(&w, sep);
                hw_u(&w, f->n_subs - here - xsubs - ops - runtime);
                hw_s(&w, " with no known lines");
            }
            hw_s(&w, ")");
        }
        hw_s(&w, "</summary>\n");
        hw_s(&w, f->n_subs > 12 ? "<div class=scroll>" : "<div>");
        html_subs_table(r, &w, subs, f->n_subs, false, "subs");
        hw_s(&w, "</div></details>\n");
    }
    free(subs);
    subs = sorted(f->subs, f->n_subs, cmp_sub_line, (void *)p);
    uint32_t *sites = sorted(f->sites, f->n_sites, cmp_site_line, (void *)p);
    uint32_t *evals = sorted(f->evals, f->n_evals, cmp_eval_line, (void *)p);
    if (!subs || !sites || !evals) {
        w.err = NYTP_E_NOMEM;
        goto done;
    }

    const nytp_lines *ls = view_lines(f, view);
    uint32_t last = nytp_lines_last(ls);
    if (nsrc && nsrc - 1 > last)
        last = nsrc - 1;
    if (f->n_sites && p->sites[sites[f->n_sites - 1]].line > last)
        last = p->sites[sites[f->n_sites - 1]].line;
    if (f->n_evals && p->files[evals[f->n_evals - 1]].eval_line > last)
        last = p->files[evals[f->n_evals - 1]].eval_line;
    /* a sub's first line past all of that (a corrupt profile) is listed
     * with the xsubs at the end, not reached by walking empty lines */
    uint32_t lines_end = ls->n ? nytp_lines_last(ls) + 1 : 0;
    uint32_t cap = (lines_end > nsrc ? lines_end : nsrc) + 1000;
    for (uint32_t i = 0; i < f->n_subs; i++) {
        uint32_t fl = p->subs[subs[i]].first_line;
        if (fl != NYTP_NONE && fl > last && fl <= cap)
            last = fl;
    }
    if (last > cap + 1000000)
        last = cap + 1000000;
    double max = 0;
    for (uint32_t l = 0; l < ls->n; l++)
        if (ls->v[l].time > max)
            max = ls->v[l].time;

    hw_s(&w, "<table class=\"src sort\" id=lines><thead><tr><th class=\"n up\">Line"
             "<th class=n title=\"statements executed\">Stmts"
             "<th class=n title=\"time executing the statements of the line, not in subs they called\">Time"
             "<th class=n title=\"time per statement\">Avg<th class=n title=\"calls made on the line\">Calls"
             "<th class=n title=\"time in the subs those calls made\">In subs<th class=\"code nosort\">Code"
             "</thead>\n<tbody>\n");
    uint32_t si = 0, ci = 0, ei = 0;
    /* subs with no line here (xsubs, opcodes) go last */
    while (si < f->n_subs && (p->subs[subs[si]].first_line == NYTP_NONE || p->subs[subs[si]].first_line == 0))
        si++;
    uint32_t first_lined = si;
    bool gap = false;
    /* calls and evals not on any line (END blocks run at exit: line 0) */
    if ((ci < f->n_sites && p->sites[sites[ci]].line == 0) ||
        (ei < f->n_evals && p->files[evals[ei]].eval_line == 0)) {
        hw_s(&w, "<tr id=L0><td>0<td colspan=5><td class=note>not on a line of the file "
                 "(for example END blocks run at exit)\n<tr class=cn><td colspan=6><td>");
        for (; ci < f->n_sites && p->sites[sites[ci]].line == 0; ci++)
            call_note(r, &w, &p->sites[sites[ci]]);
        for (; ei < f->n_evals && p->files[evals[ei]].eval_line == 0; ei++)
            eval_note(r, &w, evals[ei]);
        hw_s(&w, "\n");
    }
    uint32_t li = 0; /* the first entry of ls at or after line */
    uint32_t sj = 0; /* the first saved line at or after line */
    for (uint32_t line = 1; line <= last && !w.err; line++) {
        while (li < ls->n && ls->v[li].line < line)
            li++;
        while (saved && sj < saved->n && saved->v[sj].line < line)
            sj++;
        const nytp_text *text = saved && sj < saved->n && saved->v[sj].line == line ? &saved->v[sj].text : NULL;
        const nytp_linestat *st = li < ls->n && ls->v[li].line == line ? &ls->v[li] : NULL;
        bool has_sub = si < f->n_subs && p->subs[subs[si]].first_line == line;
        bool has_call = ci < f->n_sites && p->sites[sites[ci]].line == line;
        bool has_eval = ei < f->n_evals && p->files[evals[ei]].eval_line == line;
        bool has_src = text || (src && line < nsrc && src[line].ptr);
        if (!has_src && !st && !has_sub && !has_call && !has_eval) {
            if (!gap)
                hw_s(&w, "<tr class=gap><td>\xE2\x8B\xAE<td colspan=6>\n");
            gap = true;
            /* no source here: on to the next line with something (lines
             * are stored sparse, a statement may be on line 200,000,000) */
            uint64_t next = li < ls->n ? ls->v[li].line : UINT64_MAX;
            if (si < f->n_subs && p->subs[subs[si]].first_line < next)
                next = p->subs[subs[si]].first_line;
            if (ci < f->n_sites && p->sites[sites[ci]].line < next)
                next = p->sites[sites[ci]].line;
            if (ei < f->n_evals && p->files[evals[ei]].eval_line < next)
                next = p->files[evals[ei]].eval_line;
            if (saved && sj < saved->n && saved->v[sj].line < next)
                next = saved->v[sj].line;
            if (next > (uint64_t)line + 1)
                line = next > (uint64_t)last ? last : (uint32_t)(next - 1);
            continue;
        }
        gap = false;
        for (; si < f->n_subs && p->subs[subs[si]].first_line == line; si++)
            if (sub_has_headline(&p->subs[subs[si]]))
                sub_headline(r, &w, subs[si]);
        uint64_t ncalls = 0;
        double insubs = 0;
        for (uint32_t k = ci; k < f->n_sites && p->sites[sites[k]].line == line; k++) {
            ncalls += p->sites[sites[k]].count;
            insubs += p->sites[sites[k]].incl;
        }
        hw_s(&w, "<tr id=L");
        hw_u(&w, line);
        hw_s(&w, "><td>");
        hw_u(&w, line);
        if (st) {
            hw_s(&w, "<td>");
            hw_u(&w, (uint64_t)st->count);
            int h = heat(st->time, max);
            if (h) {
                char cls[16];
                snprintf(cls, sizeof cls, "<td class=h%d>", h);
                hw_s(&w, cls);
            } else
                hw_s(&w, "<td>");
            hw_dur(&w, st->time);
            hw_s(&w, "<td>");
            if (st->count)
                hw_dur(&w, st->time / (double)st->count);
        } else
            hw_s(&w, "<td><td><td>");
        if (ncalls) {
            hw_s(&w, "<td>");
            hw_u(&w, ncalls);
            hw_s(&w, "<td>");
            hw_dur(&w, insubs);
        } else
            hw_s(&w, "<td><td>");
        hw_s(&w, "<td>");
        if (has_src) {
            uint32_t n = text ? text->len : src[line].len;
            const char *t = text ? text->ptr : src[line].ptr;
            if (n && t[n - 1] == '\n')
                n--;
            if (n && t[n - 1] == '\r')
                n--;
            hw_esc(&w, t, n);
        }
        hw_s(&w, "\n");
        if (has_call || has_eval) {
            hw_s(&w, "<tr class=cn><td colspan=6><td>");
            for (; ci < f->n_sites && p->sites[sites[ci]].line == line; ci++)
                call_note(r, &w, &p->sites[sites[ci]]);
            for (; ei < f->n_evals && p->files[evals[ei]].eval_line == line; ei++)
                eval_note(r, &w, evals[ei]);
            hw_s(&w, "\n");
        }
    }
    hw_s(&w, "</tbody></table>\n");

    /* subs without lines of their own here: xsubs, opcodes, unknown */
    bool any = false;
    for (uint32_t i = 0; i < f->n_subs; i++) {
        const nytp_sub *s = &p->subs[subs[i]];
        if ((i >= first_lined && s->first_line <= last) || !sub_has_headline(s))
            continue;
        if (!any)
            hw_s(&w, "<h2>Subs with no source lines here (xsubs and opcodes)</h2>\n"
                     "<table class=src><tbody>\n");
        any = true;
        sub_headline(r, &w, subs[i]);
    }
    if (any)
        hw_s(&w, "</tbody></table>\n");
    hw_s(&w, "</main>\n");
    html_page_foot(&w);
done:
    free(subs);
    free(sites);
    free(evals);
    free(src);
    free(diskbuf);
    return html_page_close(r, &w, name);
}

/* ---- assets ---------------------------------------------------------------------- */

static int write_asset(html_report *r, const char *name, const char *text)
{
    hw w;
    if (!html_page_open(r, &w, name))
        return EXIT_BAD_INPUT;
    hw_s(&w, text);
    return html_page_close(r, &w, name);
}

static int cmp_files_shown(const void *a, const void *b, void *ctx)
{
    const html_report *r = ctx;
    return strcmp(r->shown[*(const uint32_t *)a], r->shown[*(const uint32_t *)b]);
}

/* nytp.js: the source files for the jump-to-file menu of every page (by
 * name; string evals are reached from their files), then the script. */
static int write_script(html_report *r)
{
    const nytp_profile *p = r->p;
    hw w;
    if (!html_page_open(r, &w, "nytp.js"))
        return EXIT_BAD_INPUT;
    uint32_t *fids = malloc(((size_t)p->n_files + 1) * sizeof *fids), n = 0;
    if (!fids)
        w.err = NYTP_E_NOMEM;
    for (uint32_t fid = 1; fids && fid < p->n_files; fid++)
        if (r->page[fid] && !p->files[fid].eval_fid)
            fids[n++] = fid;
    if (fids)
        qsort_r(fids, n, sizeof *fids, cmp_files_shown, r);
    hw_s(&w, "var nytpFiles = [");
    for (uint32_t i = 0; i < n; i++) {
        hw_s(&w, i ? ",\n[" : "\n[");
        hw_json(&w, r->page[fids[i]], strlen(r->page[fids[i]]));
        hw_s(&w, ",");
        hw_json(&w, r->shown[fids[i]], strlen(r->shown[fids[i]]));
        hw_s(&w, "]");
    }
    hw_s(&w, "];\n");
    html_callgraph_script(r, &w);
    hw_s(&w, html_js);
    free(fids);
    return html_page_close(r, &w, "nytp.js");
}

int html_write_assets(html_report *r)
{
    int rc = write_asset(r, "nytp.css", html_css);
    if (rc == EXIT_OK)
        rc = write_script(r);
    return rc;
}

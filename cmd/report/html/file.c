/* file.c — a source file's page in 'nytp html' (per line, per block or
 * per sub): its lines with their statement time, calls, sub headlines
 * (with durations and call graph) and evals; with --base, the line view
 * has each line's change and each headline its sub's.  Uses write.c's primitives,
 * durations.c and callgraph.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fmt.h"
#include "html.h"

/* ---- file pages ------------------------------------------------------------- */

typedef struct srcline {
    const char *ptr;
    uint32_t len;
} srcline;

/* The source of a real file that was not saved in the profile, read from
 * disk now.  Returns the line array (index = line number) or NULL. */
static srcline *disk_source(const char *path, uint32_t *n, char **buf, bool *oom)
{
    struct stat sb;
    *buf = NULL;
    *oom = false;
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
        *oom = !data;
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
        *oom = true;
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
 * there (or not a plain file), and then *oom says whether memory ran out. */
static char *source_url(const char *name, bool *oom)
{
    *oom = false;
    char *abs = realpath(name, NULL);
    struct stat sb;
    if (!abs || stat(abs, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        free(abs);
        return NULL;
    }
    size_t n = strlen(abs);
    char *url = malloc(7 + 3 * n + 1), *o = url;
    *oom = !url;
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

/* A sorted copy of v, or NULL with w's error set: a page with a list left
 * out is not written as if whole. */
static uint32_t *sorted(hw *w, const uint32_t *v, uint32_t n,
                        int (*cmp)(const void *, const void *, void *), void *ctx)
{
    uint32_t *c = malloc(((size_t)n + 1) * sizeof *c);
    if (!c) {
        if (!w->err)
            w->err = NYTP_E_NOMEM;
        return NULL;
    }
    if (n)
        memcpy(c, v, (size_t)n * sizeof *c);
    qsort_r(c, n, sizeof *c, cmp, ctx);
    return c;
}

/* "<td colspan=N>" for the numbers' columns of the lines table (the
 * line's own six, and extra: with --base the change columns of the line
 * view), less skip. */
static void td_span(hw *w, unsigned extra, unsigned skip)
{
    hw_s(w, "<td colspan=");
    hw_u(w, 6 + extra - skip);
    hw_s(w, ">");
}

/* With --base: " (12.3ms in BASE, +12.0%, p=0.003)" after a sub's time. */
static void sub_change(const html_report *r, hw *w, uint32_t sid)
{
    const cmp_row *row = html_cmp_sub(r, sid);
    if (!r->cmp)
        return;
    hw_s(w, " <span class=note>(");
    if (!row || cmp_added(row)) {
        hw_s(w, "not in BASE)</span>");
        return;
    }
    enum cmp_q q = html_q(r);
    if (q == CMP_TIME) {
        hw_dur(w, row->centre[0][q]);
        hw_s(w, " exclusive in BASE, ");
    } else {
        hw_nv(w, row->centre[0][q]);
        hw_s(w, q == CMP_STMTS ? " statements in BASE, " : " calls in BASE, ");
    }
    html_change_words(r, w, row, q);
    hw_s(w, ")</span>");
}

static void caller_link(html_report *r, hw *w, uint32_t cid)
{
    const nytp_profile *p = r->p;
    uint32_t csub = nytp_profile_sub_by_name(p, nytp_profile_str(p, cid), nytp_profile_strlen(p, cid));
    if (csub != NYTP_NONE)
        html_sub_link(r, w, csub);
    else
        hw_id(w, p, cid);
}

/* "CALLER, ... at LINE" of a call site (the first five callers), the line
 * linked to its file page unless it is in fid's. */
static void callers_at(html_report *r, hw *w, const nytp_site *c, uint32_t fid)
{
    for (uint32_t k = 0; k < c->n_callers && k < 5; k++) {
        if (k)
            hw_s(w, ", ");
        caller_link(r, w, c->callers[k]);
    }
    hw_s(w, " at ");
    html_line_link(r, w, c->fid, c->line, c->fid != fid);
}

/* What the view (--focus, --ignore, --hide) could not give a call site
 * exactly (nytp_view_apply_sites). */
static void view_site_note(hw *w, const nytp_site *c)
{
    if (c->view & NYTP_SITE_SHARED)
        hw_s(w, " <span class=note title=\"the call tree has calls between subs, not lines: the view's calls "
                "between these subs are shared among the lines that make them as in the whole profile\">"
                "(the view's share, estimated)</span>");
    if (c->view & NYTP_SITE_UNVIEWED)
        hw_s(w, " <span class=note title=\"the profile has no call events for it\">(not filtered: not in "
                "the call tree)</span>");
}

/* "spent 1.2ms (1.0+0.2ms) within Pkg::sub which was called 3 times, avg
 * 400µs/call:" and its callers. */
static void sub_headline(html_report *r, hw *w, uint32_t sid, unsigned extra)
{
    const nytp_profile *p = r->p;
    const nytp_sub *s = &p->subs[sid];
    hw_s(w, "<tr class=sh id=S");
    hw_u(w, sid);
    hw_s(w, ">");
    td_span(w, extra, 0);
    hw_s(w, "<td><div>spent <b>");
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
    html_sub_name(r, w, sid);
    hw_s(w, "</b>");
    if (p->counts_unknown)
        hw_s(w, " <span class=note>(sampled: how often it was called is not known)</span>");
    else if (s->calls == 0 && r->view_line) {
        bool hidden = false;
        for (uint32_t i = 0; i < s->n_sites && !hidden; i++)
            hidden = p->sites[s->sites[i]].view & NYTP_SITE_HIDDEN;
        hw_s(w, hidden ? ", which the view hides (its exclusive time is its callers')"
                       : ", which was not called in the view");
    } else if (s->calls == 0)
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
    sub_change(r, w, sid);
    hw_s(w, s->n_sites ? ":</div>" : "</div>");
    if (s->calls >= 2 && !p->counts_unknown) {
        const html_dist *h =
            html_durations_get(r->durations, nytp_profile_str(p, s->name), nytp_profile_strlen(p, s->name));
        html_dist_write(w, h, p->ticks_per_sec);
        if (r->view_line && html_dist_calls(h) >= 2 && html_dist_calls(h) != s->calls) {
            /* a call's duration comes with its sub's name only: which of
             * them the view keeps is not known */
            hw_s(w, "<div class=note>durations of all ");
            hw_count(w, html_dist_calls(h));
            hw_s(w, " calls in the profile, not only the ");
            hw_count(w, s->calls);
            hw_s(w, " the view keeps: the profile records a call's duration with its sub, not its call "
                    "stack</div>");
        }
    }
    uint32_t *sites = sorted(w, s->sites, s->n_sites, cmp_site_count, (void *)p);
    uint32_t shown = s->n_sites > 50 ? 50 : s->n_sites;
    for (uint32_t i = 0; sites && i < shown; i++) {
        const nytp_site *c = &p->sites[sites[i]];
        hw_s(w, "<div class=by>");
        if (c->view & NYTP_SITE_HIDDEN) {
            /* --hide: what this sub (and the hidden subs it called) had
             * of its callers' calls is their own time now */
            hw_s(w, "hidden: ");
            hw_dur(w, c->excl);
            hw_s(w, " of exclusive time (its own and that of the hidden subs it called) given to ");
            callers_at(r, w, c, s->fid);
            view_site_note(w, c);
            hw_s(w, "</div>");
            continue;
        }
        if (p->counts_unknown || c->count == 0) /* 0: a view's share of calls made on several lines */
            hw_s(w, "called");
        else if (c->count == 1)
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
        callers_at(r, w, c, s->fid);
        if (c->count > 1 && !p->counts_unknown) {
            hw_s(w, ", avg ");
            hw_dur(w, c->incl / (double)c->count);
            hw_s(w, "/call");
        }
        view_site_note(w, c);
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
    bool unknown = r->p->counts_unknown;
    hw_s(w, "<div>spent ");
    hw_dur(w, c->incl);
    if (c->view & NYTP_SITE_HIDDEN) {
        hw_s(w, " in hidden ");
        html_sub_link(r, w, c->called);
        hw_s(w, " and the hidden subs it called: their exclusive time, now the caller's own");
        view_site_note(w, c);
        hw_s(w, "</div>");
        return;
    }
    if (c->count == 0 && !unknown) {
        /* a view's share of calls made on several lines */
        hw_s(w, " in calls to ");
        html_sub_link(r, w, c->called);
        view_site_note(w, c);
        hw_s(w, "</div>");
        return;
    }
    hw_s(w, " making ");
    if (unknown) {
        hw_s(w, "calls to ");
    } else {
        hw_u(w, c->count);
        hw_s(w, c->count == 1 ? " call to " : " calls to ");
    }
    html_sub_link(r, w, c->called);
    if (c->count > 1 && !unknown) {
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
    view_site_note(w, c);
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
            if (s->fid != f->fid || !html_sub_defined_here(p, s))
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
        if (r->p->counts_unknown) {
            hw_s(w, "calls to ");
        } else {
            hw_u(w, calls);
            hw_s(w, calls == 1 ? " call to " : " calls to ");
        }
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
    /* --base: the change of each line, on the line view */
    unsigned extra = view == VIEW_LINE ? html_change_cols(r) : 0;
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
    bool url_oom = false;
    char *url = f->defined && !f->eval_fid && !r->in_memory
                    ? source_url(nytp_profile_str(p, f->name), &url_oom) : NULL;
    if (url_oom && !w.err) /* the page would lack its link */
        w.err = NYTP_E_NOMEM;
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
        html_line_link(r, &w, f->eval_fid, f->eval_line, true);
    }
    if (html_file_has_dot(r, fid)) {
        char dot[112];
        html_dot_name(r, fid, dot);
        hw_s(&w, ".<br><a href=\"");
        hw_s(&w, dot);
        hw_s(&w, "\">Graphviz call graph of its subs</a>");
    }
    hw_s(&w, ".</p>");
    if (extra)
        html_change_note(r, &w);
    hw_s(&w, "</header>\n<main>\n");

    /* the source: saved in the profile (sparse, walked with a cursor), or
     * read from disk for a real file (by line) */
    uint32_t nsrc = 0;
    const nytp_src *saved = f->src.n ? &f->src : NULL;
    srcline *src = NULL;
    char *diskbuf = NULL;
    if (saved) {
        nsrc = nytp_src_last(saved) + 1;
    } else if (f->defined && !f->eval_fid && !r->in_memory) {
        bool oom;
        src = disk_source(nytp_profile_str(p, f->name), &nsrc, &diskbuf, &oom);
        if (oom && !w.err) /* not "not readable": the page would lack its text */
            w.err = NYTP_E_NOMEM;
        if (src)
            hw_s(&w, "<p class=warn>The source of this file was not saved in the profile; it was read "
                     "from disk now and may differ from what ran.</p>\n");
    }
    if (!src && !saved) {
        /* nytp attach reads no source from the perl it samples, and a
         * string eval's has no file: savesrc would not have helped. Its
         * sub's statements may name the eval without [file:line]. */
        const char *by = nytp_profile_attr(p, "sampled_by");
        if (by && strcmp(by, "nytp attach") == 0 &&
            (f->eval_fid || strncmp(nytp_profile_str(p, f->name), "(eval ", 6) == 0))
            hw_s(&w, "<p class=warn>The source of this string eval is not available: nytp attach "
                     "reads no source from the running perl, and a string eval has no file on disk. "
                     "Only the lines with data are shown, without their text.</p>\n");
        else
            hw_s(&w, "<p class=warn>The source of this file is not available (not saved in the profile, "
                     "e.g. with savesrc=0, and not readable now): only the lines with data are shown, "
                     "without their text.</p>\n");
    }

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
                html_td_count(&w, p, (uint64_t)b->count);
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
    uint32_t *subs = sorted(&w, f->subs, f->n_subs, cmp_sub_excl, (void *)p);
    if (subs && f->n_subs) {
        /* xsubs, opcodes and pseudo-subs with no line of their own are
         * listed with a file (their package's, or the main script when
         * they have none) but not defined in it */
        uint32_t here = 0, ops = 0, xsubs = 0, runtime = 0;
        for (uint32_t i = 0; i < f->n_subs; i++) {
            const nytp_sub *s = &p->subs[f->subs[i]];
            if (html_sub_defined_here(p, s))
                here++;
            else if (html_sub_has_lines(s))
                runtime++;
            else if (html_is_opcode(p, s))
                ops++;
            else if (html_is_xsub(s))
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
    subs = sorted(&w, f->subs, f->n_subs, cmp_sub_line, (void *)p);
    uint32_t *sites = sorted(&w, f->sites, f->n_sites, cmp_site_line, (void *)p);
    uint32_t *evals = sorted(&w, f->evals, f->n_evals, cmp_eval_line, (void *)p);
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
             "<th class=n title=\"time in the subs those calls made\">In subs");
    if (extra)
        html_change_heads(r, &w, html_q_words(r, "the line's statement time"));
    hw_s(&w, "<th class=\"code nosort\">Code</thead>\n<tbody>\n");
    uint32_t si = 0, ci = 0, ei = 0;
    /* subs with no line here (xsubs, opcodes) go last */
    while (si < f->n_subs && (p->subs[subs[si]].first_line == NYTP_NONE || p->subs[subs[si]].first_line == 0))
        si++;
    uint32_t first_lined = si;
    bool gap = false;
    /* calls and evals not on any line (END blocks run at exit: line 0) */
    if ((ci < f->n_sites && p->sites[sites[ci]].line == 0) ||
        (ei < f->n_evals && p->files[evals[ei]].eval_line == 0)) {
        hw_s(&w, "<tr id=L0><td>0");
        td_span(&w, extra, 1);
        hw_s(&w, "<td class=note>not on a line of the file (for example END blocks run at exit)\n"
                 "<tr class=cn>");
        td_span(&w, extra, 0);
        hw_s(&w, "<td>");
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
            {
                hw_s(&w, "<tr class=gap><td>\xE2\x8B\xAE");
                td_span(&w, extra, 0);
                hw_s(&w, "\n");
            }
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
            if (html_sub_has_headline(&p->subs[subs[si]]))
                sub_headline(r, &w, subs[si], extra);
        uint64_t ncalls = 0;
        double insubs = 0;
        for (uint32_t k = ci; k < f->n_sites && p->sites[sites[k]].line == line; k++) {
            if (p->sites[sites[k]].view & NYTP_SITE_HIDDEN) /* the line's own time now */
                continue;
            ncalls += p->sites[sites[k]].count;
            insubs += p->sites[sites[k]].incl;
        }
        hw_s(&w, "<tr id=L");
        hw_u(&w, line);
        hw_s(&w, "><td>");
        hw_u(&w, line);
        if (st) {
            if (p->counts_unknown)
                html_td_count(&w, p, 0);
            else {
                hw_s(&w, "<td>");
                hw_u(&w, (uint64_t)st->count);
            }
            int h = heat(st->time, max);
            if (h) {
                char cls[16];
                snprintf(cls, sizeof cls, "<td class=h%d>", h);
                hw_s(&w, cls);
            } else
                hw_s(&w, "<td>");
            hw_dur(&w, st->time);
            if (p->counts_unknown)
                html_td_count(&w, p, 0);
            else {
                hw_s(&w, "<td>");
                if (st->count)
                    hw_dur(&w, st->time / (double)st->count);
            }
        } else
            hw_s(&w, "<td><td><td>");
        if (ncalls) {
            if (p->counts_unknown)
                html_td_count(&w, p, 0);
            else {
                hw_s(&w, "<td>");
                hw_u(&w, ncalls);
            }
            hw_s(&w, "<td>");
            hw_dur(&w, insubs);
        } else
            hw_s(&w, "<td><td>");
        if (extra)
            html_change_cells(r, &w, st || ncalls ? html_cmp_line(r, fid, line) : NULL, html_q(r));
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
            hw_s(&w, "<tr class=cn>");
            td_span(&w, extra, 0);
            hw_s(&w, "<td>");
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
        if ((i >= first_lined && s->first_line <= last) || !html_sub_has_headline(s))
            continue;
        if (!any)
            hw_s(&w, "<h2>Subs with no source lines here (xsubs and opcodes)</h2>\n"
                     "<table class=src><tbody>\n");
        any = true;
        sub_headline(r, &w, subs[i], extra);
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

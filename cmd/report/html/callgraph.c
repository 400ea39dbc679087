/* callgraph.c — calls between subs in 'nytp html': the edges (caller,
 * called) summed from the call sites, written as data into nytp.js for
 * the call graph each sub headline can draw (SVG, by nytp.js), and with
 * --dot as Graphviz files, as nytprofhtml writes them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "html.h"

static int cmp_edge(const void *a, const void *b)
{
    const html_edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->called < y->called ? -1 : x->called > y->called;
}

/* Every (calling sub, called sub) pair of the sites: a site called from
 * several subs (rare: the same line run by two subs, e.g. a shared
 * closure's body) counts for each of them. */
int html_edges_build(html_report *r)
{
    const nytp_profile *p = r->p;
    size_t n = 0;
    for (uint32_t i = 0; i < p->n_sites; i++)
        n += p->sites[i].n_callers;
    html_edge *e = malloc((n + 1) * sizeof *e);
    if (!e)
        return NYTP_E_NOMEM;
    size_t k = 0;
    for (uint32_t i = 0; i < p->n_sites; i++) {
        const nytp_site *st = &p->sites[i];
        if (st->view & NYTP_SITE_HIDDEN) /* not calls: a view's hidden time, the caller's own */
            continue;
        for (uint32_t c = 0; c < st->n_callers; c++) {
            uint32_t caller = nytp_profile_sub_by_name(p, nytp_profile_str(p, st->callers[c]),
                                                       nytp_profile_strlen(p, st->callers[c]));
            if (caller == NYTP_NONE || st->called >= p->n_subs)
                continue;
            e[k++] = (html_edge){caller, st->called, st->count, st->incl};
        }
    }
    if (k > 0) /* qsort(NULL, 0) is undefined */
        qsort(e, k, sizeof *e, cmp_edge);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && e[m - 1].caller == e[i].caller && e[m - 1].called == e[i].called) {
            e[m - 1].calls += e[i].calls;
            e[m - 1].incl += e[i].incl;
        } else
            e[m++] = e[i];
    }
    r->edges = e;
    r->n_edges = (uint32_t)m;
    return NYTP_OK;
}

/* nytpSubs: [name, url] by sub id; nytpEdges: [caller, called, calls,
 * inclusive seconds]. */
void html_callgraph_script(html_report *r, hw *w)
{
    const nytp_profile *p = r->p;
    char url[160];
    json j;
    json_init(&j, w->out);
    hw_s(w, "var nytpSubs = ");
    json_array(&j);
    for (uint32_t i = 0; i < p->n_subs; i++) {
        json_break(&j, "\n");
        json_array(&j);
        const char *shown = r->sub_shown[i];
        if (shown)
            json_cstr(&j, shown);
        else
            json_str(&j, nytp_profile_str(p, p->subs[i].name), nytp_profile_strlen(p, p->subs[i].name));
        html_sub_url(r, i, url, sizeof url);
        json_cstr(&j, url);
        json_end(&j);
    }
    json_end(&j);
    hw_s(w, ";\nvar nytpEdges = ");
    json_array(&j);
    for (uint32_t i = 0; i < r->n_edges; i++) {
        const html_edge *e = &r->edges[i];
        if (i % 8 == 0)
            json_break(&j, "\n");
        json_array(&j);
        json_u64(&j, e->caller);
        json_u64(&j, e->called);
        if (r->p->counts_unknown) /* sampled: how often is not known */
            json_null(&j);
        else
            json_u64(&j, e->calls);
        json_num(&j, e->incl); /* null for NaN or Infinity (a corrupt profile's times) */
        json_end(&j);
    }
    json_end(&j);
    hw_s(w, ";\n");
}

/* ---- --dot ------------------------------------------------------------------ */

/* A quoted DOT string: HTML entities (which Graphviz reads in labels) for
 * & < > " ', bytes that are not UTF-8 as their Latin-1 characters, control
 * characters as visible symbols, and backslashes doubled. */
static void dot_str(hw *w, const char *s, size_t n)
{
    char *buf = malloc(n * 6 + 1);
    if (!buf) {
        w->err = NYTP_E_NOMEM;
        return;
    }
    char *end = fmt_html_str(buf, s, n);
    hw_s(w, "\"");
    const char *at = buf;
    for (char *c = buf; c < end; c++)
        if (*c == '\\') {
            hw_put(w, at, (size_t)(c - at + 1));
            hw_s(w, "\\");
            at = c + 1;
        }
    hw_put(w, at, (size_t)(end - at));
    hw_s(w, "\"");
    free(buf);
}

static void dot_sub(html_report *r, hw *w, uint32_t sid)
{
    const char *shown = r->sub_shown[sid];
    if (shown)
        dot_str(w, shown, strlen(shown));
    else
        dot_str(w, nytp_profile_str(r->p, r->p->subs[sid].name), nytp_profile_strlen(r->p, r->p->subs[sid].name));
}

static void dot_edge_attrs(hw *w, bool count_known, uint64_t calls, double incl)
{
    char b[40];
    hw_s(w, " [label=\"");
    if (count_known) {
        hw_u(w, calls);
        hw_s(w, calls == 1 ? " call\\n" : " calls\\n");
    }
    hw_put(w, b, (size_t)(fmt_duration(b, incl) - b));
    hw_s(w, "\"];\n");
}

static const char dot_head[] = " {\n  graph [rankdir=LR, fontname=\"Helvetica\"];\n"
                               "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef4fb\", "
                               "fontname=\"Helvetica\", fontsize=10];\n"
                               "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#5b6475\"];\n";

static bool dot_open(html_report *r, hw *w, const char *name)
{
    return html_page_open(r, w, name);
}

/* The subs with calls, in clusters by package, and the calls between
 * them.  With fid != 0, only the subs of that file and those calling or
 * called by them. */
static int write_subs_dot(html_report *r, const html_pkgs *pk, uint32_t fid, const char *name)
{
    const nytp_profile *p = r->p;
    hw w;
    if (!dot_open(r, &w, name))
        return EXIT_BAD_INPUT;
    bool *keep = calloc((size_t)p->n_subs + 1, sizeof *keep);
    if (!keep) {
        w.err = NYTP_E_NOMEM;
        return html_page_close(r, &w, name);
    }
    for (uint32_t i = 0; i < p->n_subs; i++)
        keep[i] = fid ? p->subs[i].fid == fid && (p->subs[i].calls || p->subs[i].n_callees) : p->subs[i].calls > 0;
    if (fid) /* and their neighbours */
        for (uint32_t i = 0; i < r->n_edges; i++) {
            const html_edge *e = &r->edges[i];
            bool a = p->subs[e->caller].fid == fid, b = p->subs[e->called].fid == fid;
            if (a || b)
                keep[e->caller] = keep[e->called] = true;
        }
    hw_s(&w, "digraph ");
    hw_s(&w, fid ? "file" : "subs");
    hw_s(&w, dot_head);
    for (uint32_t g = 0; g < pk->n; g++) {
        bool any = false;
        for (uint32_t k = 0; k < pk->v[g].n; k++) {
            uint32_t sid = pk->ids[pk->v[g].start + k];
            if (!keep[sid])
                continue;
            if (!any) {
                hw_s(&w, "  subgraph cluster_");
                hw_u(&w, g);
                hw_s(&w, " {\n    label=");
                if (pk->v[g].name_len)
                    dot_str(&w, nytp_profile_str(p, p->subs[pk->ids[pk->v[g].start]].name), pk->v[g].name_len);
                else
                    hw_s(&w, "\"(no package)\"");
                hw_s(&w, ";\n");
                any = true;
            }
            hw_s(&w, "    s");
            hw_u(&w, sid);
            hw_s(&w, " [label=");
            dot_sub(r, &w, sid);
            if (fid && p->subs[sid].fid == fid)
                hw_s(&w, ", fillcolor=\"#ffd180\"");
            hw_s(&w, "];\n");
        }
        if (any)
            hw_s(&w, "  }\n");
    }
    for (uint32_t i = 0; i < r->n_edges; i++) {
        const html_edge *e = &r->edges[i];
        if (!keep[e->caller] || !keep[e->called])
            continue;
        if (fid && p->subs[e->caller].fid != fid && p->subs[e->called].fid != fid)
            continue;
        hw_s(&w, "  s");
        hw_u(&w, e->caller);
        hw_s(&w, " -> s");
        hw_u(&w, e->called);
        dot_edge_attrs(&w, !r->p->counts_unknown, e->calls, e->incl);
    }
    hw_s(&w, "}\n");
    free(keep);
    return html_page_close(r, &w, name);
}

typedef struct pkg_edge {
    uint32_t from, to;
    uint64_t calls;
    double incl;
} pkg_edge;

static int cmp_pkg_edge(const void *a, const void *b)
{
    const pkg_edge *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

/* Packages, and the calls between them (within one package left out). */
static int write_packages_dot(html_report *r, const html_pkgs *pk)
{
    const nytp_profile *p = r->p;
    static const char name[] = "packages-callgraph.dot";
    hw w;
    if (!dot_open(r, &w, name))
        return EXIT_BAD_INPUT;
    uint32_t *of = malloc(((size_t)p->n_subs + 1) * sizeof *of);
    pkg_edge *pe = malloc(((size_t)r->n_edges + 1) * sizeof *pe);
    if (!of || !pe) {
        free(of);
        free(pe);
        w.err = NYTP_E_NOMEM;
        return html_page_close(r, &w, name);
    }
    for (uint32_t g = 0; g < pk->n; g++)
        for (uint32_t k = 0; k < pk->v[g].n; k++)
            of[pk->ids[pk->v[g].start + k]] = g;
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_edges; i++) {
        const html_edge *e = &r->edges[i];
        if (of[e->caller] != of[e->called])
            pe[n++] = (pkg_edge){of[e->caller], of[e->called], e->calls, e->incl};
    }
    if (n > 0) /* qsort(NULL, 0) is undefined */
        qsort(pe, n, sizeof *pe, cmp_pkg_edge);
    hw_s(&w, "digraph packages");
    hw_s(&w, dot_head);
    for (uint32_t g = 0; g < pk->n; g++) {
        if (!pk->v[g].calls)
            continue;
        hw_s(&w, "  p");
        hw_u(&w, g);
        hw_s(&w, " [label=");
        if (pk->v[g].name_len)
            dot_str(&w, nytp_profile_str(p, p->subs[pk->ids[pk->v[g].start]].name), pk->v[g].name_len);
        else
            hw_s(&w, "\"(no package)\"");
        hw_s(&w, "];\n");
    }
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        uint64_t calls = 0;
        double incl = 0;
        for (; j < n && pe[j].from == pe[i].from && pe[j].to == pe[i].to; j++) {
            calls += pe[j].calls;
            incl += pe[j].incl;
        }
        hw_s(&w, "  p");
        hw_u(&w, pe[i].from);
        hw_s(&w, " -> p");
        hw_u(&w, pe[i].to);
        dot_edge_attrs(&w, !r->p->counts_unknown, calls, incl);
        i = j;
    }
    hw_s(&w, "}\n");
    free(of);
    free(pe);
    return html_page_close(r, &w, name);
}

/* The name of fid's .dot file: its page's name, "-calls.dot" for ".html". */
void html_dot_name(const html_report *r, uint32_t fid, char *buf)
{
    const char *page = r->page[fid];
    snprintf(buf, 112, "%.*s-calls.dot", (int)(strlen(page) - 5), page);
}

/* Whether fid gets a .dot file: a source file (not an eval) with subs
 * that were called or made calls. */
bool html_file_has_dot(const html_report *r, uint32_t fid)
{
    const nytp_profile *p = r->p;
    if (!r->dot || !r->page[fid] || p->files[fid].eval_fid)
        return false;
    const nytp_file *f = &p->files[fid];
    for (uint32_t i = 0; i < f->n_subs; i++)
        if (p->subs[f->subs[i]].fid == fid && (p->subs[f->subs[i]].calls || p->subs[f->subs[i]].n_callees))
            return true;
    return false;
}

int html_write_dot(html_report *r)
{
    html_pkgs pk;
    if (html_pkgs_build(r, &pk) < 0) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    int rc = write_packages_dot(r, &pk);
    if (rc == EXIT_OK)
        rc = write_subs_dot(r, &pk, 0, "subs-callgraph.dot");
    char name[112];
    for (uint32_t fid = 1; rc == EXIT_OK && fid < r->p->n_files; fid++)
        if (html_file_has_dot(r, fid)) {
            html_dot_name(r, fid, name);
            rc = write_subs_dot(r, &pk, fid, name);
        }
    html_pkgs_free(&pk);
    return rc;
}

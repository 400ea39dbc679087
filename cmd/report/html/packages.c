/* packages.c — packages in 'nytp html': every package with its
 * summed exclusive time on the index, and packages.html with a treemap of
 * exclusive time by package and sub (inline SVG, laid out here: no
 * library, no script) and each package's subs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "strmap.h"
#include "html.h"


static int cmp_sub_package(const void *a, const void *b, void *ctx)
{
    const nytp_profile *p = ctx;
    const char *x = nytp_profile_str(p, p->subs[*(const uint32_t *)a].name);
    const char *y = nytp_profile_str(p, p->subs[*(const uint32_t *)b].name);
    size_t lx = fmt_package_len(x, strlen(x)), ly = fmt_package_len(y, strlen(y));
    int c = memcmp(x, y, lx < ly ? lx : ly);
    if (c || lx != ly)
        return c ? c : lx < ly ? -1 : 1;
    /* within a package: exclusive time descending, then by name */
    const nytp_sub *sx = &p->subs[*(const uint32_t *)a], *sy = &p->subs[*(const uint32_t *)b];
    if (sx->excl != sy->excl)
        return sx->excl > sy->excl ? -1 : 1;
    return strcmp(x, y);
}

static bool same_package(const nytp_profile *p, uint32_t a, uint32_t b)
{
    const char *x = nytp_profile_str(p, p->subs[a].name), *y = nytp_profile_str(p, p->subs[b].name);
    size_t lx = fmt_package_len(x, strlen(x)), ly = fmt_package_len(y, strlen(y));
    return lx == ly && memcmp(x, y, lx) == 0;
}

static int cmp_pkg_excl(const void *a, const void *b)
{
    const html_pkg *x = a, *y = b;
    if (x->excl != y->excl)
        return x->excl > y->excl ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start; /* by name */
}

int html_pkgs_build(const html_report *r, html_pkgs *pk)
{
    const nytp_profile *p = r->p;
    memset(pk, 0, sizeof *pk);
    pk->ids = malloc(((size_t)p->n_subs + 1) * sizeof *pk->ids);
    pk->v = calloc((size_t)p->n_subs + 1, sizeof *pk->v);
    if (!pk->ids || !pk->v) {
        html_pkgs_free(pk);
        return NYTP_E_NOMEM;
    }
    for (uint32_t i = 0; i < p->n_subs; i++)
        pk->ids[i] = i;
    qsort_r(pk->ids, p->n_subs, sizeof *pk->ids, cmp_sub_package, (void *)p);
    for (uint32_t i = 0; i < p->n_subs; i++) {
        if (i == 0 || !same_package(p, pk->ids[i - 1], pk->ids[i])) {
            const char *name = nytp_profile_str(p, p->subs[pk->ids[i]].name);
            pk->v[pk->n].start = i;
            pk->v[pk->n].name_len = fmt_package_len(name, strlen(name));
            pk->n++;
        }
        html_pkg *g = &pk->v[pk->n - 1];
        const nytp_sub *s = &p->subs[pk->ids[i]];
        g->n++;
        g->called += s->calls > 0;
        g->calls += s->calls;
        g->excl += s->excl;
    }
    if (pk->n > 0) /* qsort(NULL, 0) is undefined */
        qsort(pk->v, pk->n, sizeof *pk->v, cmp_pkg_excl);
    return NYTP_OK;
}

void html_pkgs_free(html_pkgs *pk)
{
    free(pk->ids);
    free(pk->v);
    memset(pk, 0, sizeof *pk);
}

void html_pkg_name(const html_report *r, hw *w, const html_pkgs *pk, uint32_t i)
{
    const html_pkg *g = &pk->v[i];
    if (g->name_len)
        hw_esc(w, nytp_profile_str(r->p, r->p->subs[pk->ids[g->start]].name), g->name_len);
    else
        hw_s(w, "(no package)");
}

/* A cell of exclusive time with a bar relative to max. */
static void td_bar(hw *w, double v, double max)
{
    double rel = fmt_bar_pct(v, max);
    if (rel >= 0.5 && rel <= 100) {
        char bar[48];
        snprintf(bar, sizeof bar, "<td class=bar style=\"--p:%.0f%%\" data-v=", rel);
        hw_s(w, bar);
        hw_nv(w, v);
        hw_s(w, ">");
        hw_dur(w, v);
    } else
        html_td_dur(w, v);
}

static void pkg_table(html_report *r, hw *w, const html_pkgs *pk, const char *href)
{
    hw_s(w, "<table class=\"sort subs\" id=packages>"
            "<thead><tr><th class=n title=\"subroutines of the package\">Subs"
            "<th class=n title=\"of them called\">Called<th class=n title=\"calls of its subs\">Calls"
            "<th class=n title=\"time in its subs themselves\">Exclusive<th class=n>%<th>Package"
            "</thead>\n<tbody>\n");
    double max = pk->n && pk->v[0].excl > 0 ? pk->v[0].excl : 0;
    for (uint32_t i = 0; i < pk->n; i++) {
        const html_pkg *g = &pk->v[i];
        hw_s(w, "<tr>");
        html_td_u(w, g->n);
        html_td_u(w, g->called);
        html_td_count(w, r->p, g->calls);
        td_bar(w, g->excl, max);
        hw_s(w, "<td>");
        hw_pct(w, g->excl, r->excl_total);
        hw_s(w, "<td class=name><a href=\"");
        hw_s(w, href);
        hw_s(w, "#P");
        hw_u(w, i);
        hw_s(w, "\">");
        html_pkg_name(r, w, pk, i);
        hw_s(w, "</a>\n");
    }
    hw_s(w, "</tbody></table>");
}

void html_packages_section(html_report *r, hw *w)
{
    if (!r->p->n_subs)
        return;
    html_pkgs pk;
    if (html_pkgs_build(r, &pk) < 0) {
        w->err = NYTP_E_NOMEM;
        return;
    }
    hw_s(w, "<section><h2>Packages by exclusive time</h2>\n<p class=note>");
    hw_count(w, pk.n);
    hw_s(w, pk.n == 1 ? " package" : " packages");
    hw_s(w, "; each links to its subs. <a href=packages.html>Treemap of exclusive time by package and "
            "sub</a></p>\n");
    hw_s(w, pk.n > 15 ? "<div class=scroll>" : "<div>");
    pkg_table(r, w, &pk, "packages.html");
    hw_s(w, "</div></section>\n");
    html_pkgs_free(&pk);
}

/* One sentence on what dominates: the package with the most exclusive
 * time, its share, and the fewest of its subs that hold half of it or
 * more (at most 5) with their share of it. */
void html_index_lead(html_report *r, hw *w)
{
    const nytp_profile *p = r->p;
    if (!p->n_subs || !(r->excl_total > 0))
        return;
    html_pkgs pk;
    if (html_pkgs_build(r, &pk) < 0) {
        w->err = NYTP_E_NOMEM;
        return;
    }
    const html_pkg *g = &pk.v[0];
    if (g->excl > 0) {
        double sum = 0;
        uint32_t k = 0;
        while (k < g->n && k < 5 && sum < g->excl / 2) {
            double e = p->subs[pk.ids[g->start + k]].excl;
            if (!(e > 0))
                break;
            sum += e;
            k++;
        }
        hw_s(w, "<p class=lead><b>");
        hw_pct(w, g->excl, r->excl_total);
        hw_s(w, "</b> of the time in subroutines is in <a href=\"packages.html#P0\">");
        html_pkg_name(r, w, &pk, 0);
        hw_s(w, "</a>");
        if (k && g->n > 1) {
            hw_s(w, ", ");
            hw_pct(w, sum, g->excl);
            hw_s(w, " of it in ");
            if (k == g->n)
                hw_s(w, k == 2 ? "both its subs" : "all its subs");
            else if (k == 1)
                hw_s(w, "one sub");
            else {
                hw_u(w, k);
                hw_s(w, " subs");
            }
            hw_s(w, ": ");
            for (uint32_t i = 0; i < k; i++) {
                hw_s(w, i == 0 ? "" : i + 1 == k ? " and " : ", ");
                html_sub_link(r, w, pk.ids[g->start + i]);
            }
        } else if (k) {
            hw_s(w, ", all of it in ");
            html_sub_link(r, w, pk.ids[g->start]);
        }
        hw_s(w, ".</p>\n");
    }
    html_pkgs_free(&pk);
}

/* ---- the treemap ------------------------------------------------------------ */

typedef struct tm_rect {
    double x, y, w, h;
} tm_rect;

/* Squarified treemap (Bruls, Huizing, van Wijk): lay the areas a[0..n)
 * (descending, summing to r's area) out in r, rows along its shorter side,
 * a row growing while that does not make its worst aspect ratio worse. */
static void squarify(const double *a, size_t n, tm_rect r, tm_rect *out)
{
    size_t i = 0;
    while (i < n) {
        double side = r.w < r.h ? r.w : r.h;
        double sum = a[i], mn = a[i], mx = a[i];
        double s2 = side * side;
        double worst = sum > 0 && mn > 0 ? fmax(s2 * mx / (sum * sum), (sum * sum) / (s2 * mn)) : INFINITY;
        size_t j = i + 1;
        while (j < n) {
            double ns = sum + a[j], nmn = a[j] < mn ? a[j] : mn, nmx = a[j] > mx ? a[j] : mx;
            double nw = ns > 0 && nmn > 0 ? fmax(s2 * nmx / (ns * ns), (ns * ns) / (s2 * nmn)) : INFINITY;
            if (nw > worst)
                break;
            sum = ns, mn = nmn, mx = nmx, worst = nw;
            j++;
        }
        if (r.w >= r.h) { /* a column at the left */
            double cw = r.h > 0 ? sum / r.h : 0, y = r.y;
            for (size_t k = i; k < j; k++) {
                double h = cw > 0 ? a[k] / cw : 0;
                out[k] = (tm_rect){r.x, y, cw, h};
                y += h;
            }
            r.x += cw;
            r.w -= cw;
        } else { /* a row at the top */
            double rh = r.w > 0 ? sum / r.w : 0, x = r.x;
            for (size_t k = i; k < j; k++) {
                double wd = rh > 0 ? a[k] / rh : 0;
                out[k] = (tm_rect){x, r.y, wd, rh};
                x += wd;
            }
            r.y += rh;
            r.h -= rh;
        }
        if (r.w < 0)
            r.w = 0;
        if (r.h < 0)
            r.h = 0;
        i = j;
    }
}

/* Lay values v[0..n) (descending, > 0) out in r. */
static int layout(const double *v, size_t n, tm_rect r, tm_rect *out)
{
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i];
    double *a = malloc((n + 1) * sizeof *a);
    if (!a)
        return NYTP_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        a[i] = total > 0 ? v[i] / total * r.w * r.h : 0;
    squarify(a, n, r, out);
    free(a);
    return NYTP_OK;
}

/* A colour from a hash of the package name: its hue; sub boxes lighter. */
static void pkg_colour(const char *name, size_t len, bool light, char *buf, size_t size)
{
    uint32_t h = strmap_colour_hash(name, len);
    snprintf(buf, size, "hsl(%u,%u%%,%u%%)", h % 360, light ? 55u : 40u, light ? 82u : 62u);
}

/* Text that fits in width px at ~6.6px a character (12px sans), escaped,
 * ending in an ellipsis when cut. */
static void fit_text(hw *w, const char *s, size_t len, double width)
{
    size_t room = width > 8 ? (size_t)((width - 6) / 7.2) : 0;
    if (len <= room) {
        hw_esc(w, s, len);
        return;
    }
    if (room < 3)
        return;
    size_t n = room - 1;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) /* a whole UTF-8 character */
        n--;
    hw_esc(w, s, n);
    hw_s(w, "\xE2\x80\xA6");
}

static void num(hw *w, double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.1f", v);
    hw_s(w, b);
}

#define TM_W 1200.0
#define TM_H 640.0
#define TM_HEAD 16.0 /* a package's name above its subs */

static void rect(hw *w, tm_rect b, const char *fill, const char *cls)
{
    hw_s(w, "<rect class=");
    hw_s(w, cls);
    hw_s(w, " x=");
    num(w, b.x);
    hw_s(w, " y=");
    num(w, b.y);
    hw_s(w, " width=");
    num(w, b.w);
    hw_s(w, " height=");
    num(w, b.h);
    hw_s(w, " fill=\"");
    hw_s(w, fill);
    hw_s(w, "\">");
}

static void treemap(html_report *r, hw *w, const html_pkgs *pk)
{
    const nytp_profile *p = r->p;
    uint32_t np = 0;
    while (np < pk->n && pk->v[np].excl > 0 && isfinite(pk->v[np].excl))
        np++;
    if (!np) {
        hw_s(w, "<p class=note>No treemap: no sub has exclusive time.</p>\n");
        return;
    }
    double *v = malloc(((size_t)p->n_subs + np + 1) * sizeof *v);
    tm_rect *box = malloc(((size_t)np + 1) * sizeof *box);
    tm_rect *sb = malloc(((size_t)p->n_subs + 1) * sizeof *sb);
    if (!v || !box || !sb) {
        w->err = NYTP_E_NOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < np; i++)
        v[i] = pk->v[i].excl;
    if (layout(v, np, (tm_rect){0, 0, TM_W, TM_H}, box) < 0) {
        w->err = NYTP_E_NOMEM;
        goto done;
    }
    hw_s(w, "<svg class=treemap viewBox=\"0 0 1200 640\" role=img aria-label=\"Treemap of exclusive time by "
            "package and sub\" xmlns=\"http://www.w3.org/2000/svg\">\n");
    for (uint32_t i = 0; i < np && !w->err; i++) {
        const html_pkg *g = &pk->v[i];
        tm_rect b = box[i];
        if (b.w < 0.5 || b.h < 0.5)
            continue;
        const char *pname = nytp_profile_str(p, p->subs[pk->ids[g->start]].name);
        char fill[40], light[40];
        pkg_colour(pname, g->name_len, false, fill, sizeof fill);
        pkg_colour(pname, g->name_len, true, light, sizeof light);
        hw_s(w, "<g class=pk><a href=\"#P");
        hw_u(w, i);
        hw_s(w, "\">");
        rect(w, b, fill, "pk");
        hw_s(w, "<title>");
        html_pkg_name(r, w, pk, i);
        hw_s(w, ": ");
        hw_dur(w, g->excl);
        hw_s(w, " (");
        hw_pct(w, g->excl, r->excl_total);
        hw_s(w, ") in ");
        hw_u(w, g->n);
        hw_s(w, g->n == 1 ? " sub</title></rect>" : " subs</title></rect>");
        bool head = b.h >= 2 * TM_HEAD && b.w >= 40;
        if (head) {
            hw_s(w, "<text class=ph x=");
            num(w, b.x + 3);
            hw_s(w, " y=");
            num(w, b.y + 12);
            hw_s(w, ">");
            if (g->name_len)
                fit_text(w, pname, g->name_len, b.w);
            else
                fit_text(w, "(no package)", 12, b.w);
            hw_s(w, "</text>");
        }
        hw_s(w, "</a>\n");
        /* its subs, inside below the name */
        tm_rect in = {b.x + 2, b.y + (head ? TM_HEAD : 2), b.w - 4, b.h - (head ? TM_HEAD : 2) - 2};
        uint32_t ns = 0;
        while (ns < g->n && p->subs[pk->ids[g->start + ns]].excl > 0 && isfinite(p->subs[pk->ids[g->start + ns]].excl))
            ns++;
        if (in.w < 2 || in.h < 2 || !ns) {
            hw_s(w, "</g>\n");
            continue;
        }
        for (uint32_t k = 0; k < ns; k++)
            v[np + k] = p->subs[pk->ids[g->start + k]].excl;
        if (layout(v + np, ns, in, sb) < 0) {
            w->err = NYTP_E_NOMEM;
            break;
        }
        for (uint32_t k = 0; k < ns; k++) {
            tm_rect s = sb[k];
            if (s.w < 1 || s.h < 1)
                continue; /* too small to see: its package's colour shows */
            uint32_t sid = pk->ids[g->start + k];
            const nytp_sub *sub = &p->subs[sid];
            html_sub_href(r, w, sid);
            rect(w, s, light, "sb");
            hw_s(w, "<title>");
            hw_id(w, p, sub->name);
            hw_s(w, ": ");
            hw_dur(w, sub->excl);
            hw_s(w, " exclusive (");
            hw_pct(w, sub->excl, r->excl_total);
            if (p->counts_unknown) {
                hw_s(w, ")</title></rect>");
            } else {
                hw_s(w, "), ");
                hw_u(w, sub->calls);
                hw_s(w, sub->calls == 1 ? " call</title></rect>" : " calls</title></rect>");
            }
            if (s.h >= 14 && s.w >= 30) {
                const char *sn = r->sub_shown[sid] ? r->sub_shown[sid] : nytp_profile_str(p, sub->name);
                size_t sl = strlen(sn);
                size_t skip = g->name_len && sl > g->name_len + 2 ? g->name_len + 2 : 0;
                hw_s(w, "<text x=");
                num(w, s.x + 3);
                hw_s(w, " y=");
                num(w, s.y + 12);
                hw_s(w, ">");
                fit_text(w, sn + skip, sl - skip, s.w);
                hw_s(w, "</text>");
            }
            hw_s(w, "</a>\n");
        }
        hw_s(w, "</g>\n");
    }
    hw_s(w, "</svg>\n");
done:
    free(v);
    free(box);
    free(sb);
}

/* ---- packages.html ------------------------------------------------------------ */

int html_write_packages(html_report *r)
{
    hw w;
    if (!html_page_open(r, &w, "packages.html"))
        return EXIT_BAD_INPUT;
    static const char title[] = "Packages";
    html_page_head(&w, title, sizeof title - 1);
    hw_s(&w, "<header>");
    html_nav(r, &w, "packages");
    html_pkgs pk;
    if (html_pkgs_build(r, &pk) < 0) {
        w.err = NYTP_E_NOMEM;
        return html_page_close(r, &w, "packages.html");
    }
    hw_s(&w, "<h1>");
    hw_count(&w, pk.n);
    hw_s(&w, pk.n == 1 ? " package" : " packages");
    hw_s(&w, "</h1><p class=note>Exclusive time: the time in subs themselves, not in the subs they "
             "called.</p></header>\n<main>\n<section id=treemap><h2>Treemap of exclusive time</h2>"
             "<p class=note>Each box is a package, as large as the exclusive time of its subs; the boxes "
             "inside it are its subs. Point at a box for its numbers; click a sub to go to it, a "
             "package's name to its subs below.</p>\n");
    treemap(r, &w, &pk);
    hw_s(&w, "</section>\n<section><h2>All packages</h2>\n");
    pkg_table(r, &w, &pk, "");
    hw_s(&w, "</section>\n");
    char id[32];
    for (uint32_t i = 0; i < pk.n && !w.err; i++) {
        const html_pkg *g = &pk.v[i];
        hw_s(&w, "<section class=pkg id=P");
        hw_u(&w, i);
        hw_s(&w, "><h2>");
        html_pkg_name(r, &w, &pk, i);
        hw_s(&w, " <span class=note>");
        hw_dur(&w, g->excl);
        hw_s(&w, " exclusive (");
        hw_pct(&w, g->excl, r->excl_total);
        hw_s(&w, "), ");
        hw_u(&w, g->n);
        hw_s(&w, g->n == 1 ? " sub</span></h2>\n" : " subs</span></h2>\n");
        snprintf(id, sizeof id, "p%u", i);
        hw_s(&w, g->n > 12 ? "<div class=scroll>" : "<div>");
        html_subs_table(r, &w, pk.ids + g->start, g->n, false, id);
        hw_s(&w, "</div></section>\n");
    }
    hw_s(&w, "</main>\n");
    html_pkgs_free(&pk);
    html_page_foot(&w);
    return html_page_close(r, &w, "packages.html");
}

/* flame_svg.c — the interactive SVG flame graph of flame_svg.h.
 *
 * Two steps: lay the frames out from a sorted walk of the tree (x and
 * width in value units, narrow neighbours merged), then write them with
 * the CSS and the script.  The script reads each frame's geometry back
 * from its <rect> and its name from its <title>, so nothing is written
 * twice for it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame_svg.h"
#include "fmt.h"
#include "strmap.h"

#define NONE UINT32_MAX

/* Geometry, in pixels. */
#define PAD 10.0        /* left and right margin */
#define TOP 56.0        /* title, subtitle, buttons */
#define BOTTOM 28.0     /* the details line */
#define ROW 16.0        /* one frame's row */
#define CHAR_W 7.08     /* average glyph width of 12px Verdana */

void flame_svg_opts_init(flame_svg_opts *o)
{
    memset(o, 0, sizeof *o);
    o->minwidth = -1;
}

/* ---- text -------------------------------------------------------------------- */

/* A name as clean UTF-8 that XML can hold: valid UTF-8 kept, other bytes
 * read as Latin-1, control characters but TAB LF CR written as "\xHH",
 * and, for a name from the profile (is_name), a backslash doubled, so
 * that no two names read alike.  *chars gets the number of characters.
 * malloc'd, NUL-terminated. */
static char *clean_utf8(const char *p, size_t n, bool is_name, size_t *len, size_t *chars)
{
    char *o = malloc(4 * n + 1);
    if (!o)
        return NULL;
    const unsigned char *s = (const unsigned char *)p;
    size_t k = 0, c = 0;
    for (size_t i = 0; i < n; c++) {
        uint32_t cp = 0;
        size_t l = fmt_utf8_decode(s + i, n - i, &cp);
        if (cp == 0xFFFE || cp == 0xFFFF) /* not allowed in XML */
            l = 0;
        if (is_name && s[i] == '\\') {
            memcpy(o + k, "\\\\", 2);
            k += 2;
            c++;
            i++;
        } else if (l == 1 && (s[i] < 0x20 || s[i] == 0x7F) && s[i] != '\t' && s[i] != '\n' &&
            s[i] != '\r') {
            k += (size_t)sprintf(o + k, "\\x%02X", s[i]);
            c += 3;
            i++;
        } else if (l) {
            memcpy(o + k, s + i, l);
            k += l;
            i += l;
        } else {
            o[k++] = (char)(0xC0 | (s[i] >> 6));
            o[k++] = (char)(0x80 | (s[i] & 0x3F));
            i++;
        }
    }
    o[k] = 0;
    *len = k;
    *chars = c;
    return o;
}

/* Clean UTF-8 into XML text (attribute-safe too). */
static void put_xml(nytp_out *out, const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep = NULL;
        switch (s[i]) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        case '\t': rep = "&#9;"; break;
        case '\n': rep = "&#10;"; break;
        case '\r': rep = "&#13;"; break;
        default: continue;
        }
        nytp_out_write(out, s + start, i - start);
        nytp_out_write(out, rep, strlen(rep));
        start = i + 1;
    }
    nytp_out_write(out, s + start, n - start);
}

/* Raw bytes (a title, a URL) into XML text. */
static void put_xml_bytes(nytp_out *out, const char *p, size_t n)
{
    size_t len, chars;
    char *c = clean_utf8(p, n, false, &len, &chars);
    if (!c) { /* never a graph with a name left out, taken for whole */
        nytp_out_fail(out, NYTP_E_NOMEM, "out of memory");
        return;
    }
    put_xml(out, c, len);
    free(c);
}

/* The label that fits w pixels: the name, or its start and "..". */
static void put_label(nytp_out *out, const char *clean, size_t len, size_t chars, double w)
{
    double fit = floor((w - 6) / CHAR_W);
    if (fit < 3)
        return;
    if ((double)chars <= fit) {
        put_xml(out, clean, len);
        return;
    }
    size_t keep = (size_t)fit - 2, i = 0;
    for (size_t c = 0; c < keep && i < len; c++) {
        i++;
        while (i < len && ((unsigned char)clean[i] & 0xC0) == 0x80)
            i++;
    }
    put_xml(out, clean, i);
    nytp_out_write(out, "..", 2);
}

static void put_duration(nytp_out *out, double ticks, double tps)
{
    if (tps <= 0) {
        nytp_out_printf(out, "%.0f ticks", ticks);
        return;
    }
    double s = ticks / tps;
    if (fabs(s) >= 1)
        nytp_out_printf(out, "%.3f s", s);
    else if (fabs(s) >= 1e-3)
        nytp_out_printf(out, "%.3f ms", s * 1e3);
    else
        nytp_out_printf(out, "%.1f \xC2\xB5s", s * 1e6);
}

/* ---- colours -------------------------------------------------------------------- */

/* A warm colour from the package of a sub name: the part before the last
 * "::" (not looking inside a "[...]" suffix of anonymous subs). */
static void frame_colour(nytp_str name, char *buf)
{
    size_t end = name.len;
    const char *br = memchr(name.ptr, '[', name.len);
    if (br)
        end = (size_t)(br - name.ptr);
    size_t pkg = end;
    for (size_t i = end; i >= 2; i--)
        if (name.ptr[i - 1] == ':' && name.ptr[i - 2] == ':') {
            pkg = i - 2;
            break;
        }
    uint32_t h = strmap_colour_hash(name.ptr, pkg);
    h ^= h >> 15;
    h *= 0x2c1b3c6dU;
    h ^= h >> 12;
    sprintf(buf, "rgb(%u,%u,%u)", 205 + h % 50, 60 + (h >> 8) % 170, (h >> 16) % 60);
}

/* ---- layout ----------------------------------------------------------------------- */

typedef struct frame {
    double x, w;            /* value units */
    uint32_t depth;
    uint32_t name;          /* NONE: merged narrow frames */
    uint64_t n_merged;
    uint64_t calls, total_calls;
    double excl, total_excl;
    long rgb;               /* from style_fn; -1: the usual colour */
    size_t note;            /* offset + 1 of its note in layout.notes; 0: none */
} frame;

typedef struct layout {
    const flame_svg_opts *o;
    double scale;           /* pixels per value unit */
    double minwidth;
    frame *f;
    size_t n, cap;
    double *next_x;         /* per depth: where the next sibling starts */
    bool *visible;          /* per depth: the last node there was drawn */
    double *run_x, *run_sum, *run_excl;  /* per depth: narrow siblings so far */
    uint64_t *run_n, *run_calls;
    uint32_t top_run;       /* deepest depth that may have a run */
    uint32_t max_depth;
    char *notes;            /* style_fn's notes, NUL-terminated one after another */
    size_t n_notes, cap_notes;
    int err;
} layout;

#define NOTE_MAX 256

/* Ask style_fn about node v (NULL: the root) and keep the answer for
 * frame f (NULL: not drawn). */
static void style_frame(layout *L, const nytp_calltree_visit *v, frame *f)
{
    if (!L->o->style_fn)
        return;
    long rgb = -1;
    char note[NOTE_MAX] = "";
    int st = L->o->style_fn(L->o->style_ctx, v, &rgb, note, sizeof note);
    if (st) {
        L->err = st < 0 ? st : NYTP_E_NOMEM;
        return;
    }
    if (!f)
        return;
    f->rgb = rgb >= 0 && rgb <= 0xFFFFFF ? rgb : -1;
    note[NOTE_MAX - 1] = 0;
    size_t n = strlen(note);
    if (!n)
        return;
    if (L->n_notes + n + 1 > L->cap_notes) {
        size_t cap = L->cap_notes ? L->cap_notes * 2 : 4096;
        while (cap < L->n_notes + n + 1)
            cap *= 2;
        char *b = realloc(L->notes, cap);
        if (!b) {
            L->err = NYTP_E_NOMEM;
            return;
        }
        L->notes = b;
        L->cap_notes = cap;
    }
    for (size_t i = 0; i < n; i++)
        if (note[i] == '\n' || note[i] == '\r')
            note[i] = ' ';
    memcpy(L->notes + L->n_notes, note, n + 1);
    f->note = L->n_notes + 1;
    L->n_notes += n + 1;
}

static frame *push_frame(layout *L)
{
    if (L->n == L->cap) {
        size_t n = L->cap ? L->cap * 2 : 1024;
        frame *f = realloc(L->f, n * sizeof *f);
        if (!f) {
            L->err = NYTP_E_NOMEM;
            return NULL;
        }
        L->f = f;
        L->cap = n;
    }
    frame *f = &L->f[L->n++];
    memset(f, 0, sizeof *f);
    f->rgb = -1;
    return f;
}

static void flush_run(layout *L, uint32_t d)
{
    if (!L->run_n[d])
        return;
    if (L->run_sum[d] * L->scale >= L->minwidth && L->run_sum[d] > 0) {
        frame *f = push_frame(L);
        if (f) {
            f->x = L->run_x[d];
            f->w = L->run_sum[d];
            f->depth = d;
            f->name = NONE;
            f->n_merged = L->run_n[d];
            f->total_calls = L->run_calls[d];
            f->total_excl = L->run_excl[d];
            if (d > L->max_depth)
                L->max_depth = d;
        }
    }
    L->run_n[d] = 0;
    L->run_sum[d] = L->run_excl[d] = 0;
    L->run_calls[d] = 0;
}

static int lay_node(void *ctx, const nytp_calltree_visit *v)
{
    layout *L = ctx;
    uint32_t d = v->depth;
    for (uint32_t k = L->top_run; k > d; k--)
        flush_run(L, k);
    if (L->top_run > d)
        L->top_run = d;
    double val = L->o->by_calls ? (double)v->total_calls : v->total_excl;
    if (!(val > 0) || !isfinite(val))
        val = 0; /* corrupt times: draw nothing rather than garbage */
    double x = L->next_x[d];
    L->next_x[d] += val;
    L->next_x[d + 1] = x;
    L->visible[d] = false;
    double px = val * L->scale;
    bool drawn = L->visible[d - 1] && px > 0 && px >= L->minwidth;
    if (!drawn)
        style_frame(L, v, NULL);
    if (!L->visible[d - 1])
        return L->err;
    if (drawn) {
        flush_run(L, d);
        frame *f = push_frame(L);
        if (!f)
            return L->err;
        style_frame(L, v, f);
        f->x = x;
        f->w = val;
        f->depth = d;
        f->name = v->path_ids[d - 1];
        f->calls = v->calls;
        f->total_calls = v->total_calls;
        f->excl = v->excl;
        f->total_excl = v->total_excl;
        if (d > L->max_depth)
            L->max_depth = d;
        L->visible[d] = true;
    } else if (val > 0) {
        if (!L->run_n[d])
            L->run_x[d] = x;
        L->run_n[d]++;
        L->run_sum[d] += val;
        L->run_excl[d] += v->total_excl;
        L->run_calls[d] += v->total_calls;
        if (d > L->top_run)
            L->top_run = d;
    }
    return L->err;
}

/* ---- writing ------------------------------------------------------------------------- */

static const char css[] =
    ".nytp-flame text{font-family:Verdana,Helvetica,Arial,sans-serif;font-size:12px;fill:#000}\n"
    ".nytp-flame .title{text-anchor:middle;font-size:17px}\n"
    ".nytp-flame .sub{text-anchor:middle;fill:#555}\n"
    ".nytp-flame .btn{fill:#1a5c9e;cursor:pointer}\n"
    ".nytp-flame .btn:hover{text-decoration:underline}\n"
    ".nytp-flame .right{text-anchor:end}\n"
    ".nytp-flame .hide{display:none}\n"
    ".nytp-flame .f{cursor:pointer}\n"
    ".nytp-flame .f text{pointer-events:none}\n"
    ".nytp-flame .f:hover rect{stroke:#000;stroke-width:0.6}\n"
    ".nytp-flame .parent{opacity:0.55}\n";

/* The script: an IIFE over its own <svg>, so two graphs inlined in one
 * page do not meet.  No network, no globals, ES5. */
static const char script[] =
    "(function () {\n"
    "'use strict';\n"
    "var me = document.currentScript, svg = me ? me.parentNode : document.documentElement;\n"
    "function q(c) { return svg.querySelector('.' + c); }\n"
    "var CW = " "7.08" ", PAD = " "10" ";\n"
    "var FW = +svg.getAttribute('data-fw');\n"
    "var details = q('nytp-details'), matched = q('nytp-matched');\n"
    "var unzoomBtn = q('nytp-unzoom'), searchBtn = q('nytp-search');\n"
    "var frames = [], zoomed = null, searching = false;\n"
    "var gs = svg.querySelectorAll('g.f');\n"
    "for (var i = 0; i < gs.length; i++) {\n"
    "  var g = gs[i], r = g.querySelector('rect'), t = g.querySelector('text');\n"
    "  var s = g.querySelector('title').textContent, k = s.lastIndexOf('\\n');\n"
    "  var f = { g: g, r: r, t: t, name: s.substring(0, k), info: s.substring(k + 1),\n"
    "    x: +r.getAttribute('x'), w: +r.getAttribute('width'), d: +g.getAttribute('data-d'),\n"
    "    fill: r.getAttribute('fill'), merged: g.classList.contains('m'),\n"
    "    link: g.parentNode.tagName.toLowerCase() === 'a' ? g.parentNode : null };\n"
    "  g.nytpFrame = f;\n"
    "  frames.push(f);\n"
    "}\n"
    "function fit(name, w) {\n"
    "  var n = Math.floor((w - 6) / CW);\n"
    "  if (n < 3) return '';\n"
    "  if (name.length <= n) return name;\n"
    "  return name.substring(0, n - 2) + '..';\n"
    "}\n"
    "function place(f, x, w) {\n"
    "  f.r.setAttribute('x', x.toFixed(2));\n"
    "  f.r.setAttribute('width', w.toFixed(2));\n"
    "  f.t.setAttribute('x', (x + 3).toFixed(2));\n"
    "  f.t.textContent = fit(f.name, w);\n"
    "}\n"
    "function show(f, on) { f.g.classList.toggle('hide', !on); }\n"
    "function zoom(z) {\n"
    "  if (z.d === 0) { unzoom(); return; }\n"
    "  var eps = 1e-6 * FW, scale = FW / z.w;\n"
    "  frames.forEach(function (f) {\n"
    "    if (f.d >= z.d && f.x >= z.x - eps && f.x + f.w <= z.x + z.w + eps) {\n"
    "      place(f, PAD + (f.x - z.x) * scale, f.w * scale);\n"
    "      f.g.classList.remove('parent');\n"
    "      show(f, true);\n"
    "    } else if (f.d < z.d && f.x <= z.x + eps && f.x + f.w >= z.x + z.w - eps) {\n"
    "      place(f, PAD, FW);\n"
    "      f.g.classList.add('parent');\n"
    "      show(f, true);\n"
    "    } else {\n"
    "      show(f, false);\n"
    "    }\n"
    "  });\n"
    "  zoomed = z;\n"
    "  unzoomBtn.classList.remove('hide');\n"
    "}\n"
    "function unzoom() {\n"
    "  frames.forEach(function (f) {\n"
    "    place(f, f.x, f.w);\n"
    "    f.g.classList.remove('parent');\n"
    "    show(f, true);\n"
    "  });\n"
    "  zoomed = null;\n"
    "  unzoomBtn.classList.add('hide');\n"
    "}\n"
    "function resetSearch() {\n"
    "  frames.forEach(function (f) { f.r.setAttribute('fill', f.fill); });\n"
    "  matched.textContent = '';\n"
    "  searchBtn.textContent = 'Search';\n"
    "  searching = false;\n"
    "}\n"
    "function search(term) {\n"
    "  if (term === undefined) {\n"
    "    if (searching) { resetSearch(); return; }\n"
    "    term = window.prompt('Search for subs (regular expression)', '');\n"
    "  }\n"
    "  if (term === null || term === '') return;\n"
    "  var re;\n"
    "  try { re = new RegExp(term); } catch (e) {\n"
    "    details.textContent = 'Not a regular expression: ' + term;\n"
    "    return;\n"
    "  }\n"
    "  resetSearch();\n"
    "  var spans = [];\n"
    "  frames.forEach(function (f) {\n"
    "    if (f.d > 0 && !f.merged && re.test(f.name)) {\n"
    "      f.r.setAttribute('fill', 'rgb(220,40,220)');\n"
    "      spans.push([f.x, f.x + f.w]);\n"
    "    }\n"
    "  });\n"
    "  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
    "  var covered = 0, end = -Infinity;\n"
    "  spans.forEach(function (s) {\n"
    "    if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; }\n"
    "    else if (s[1] > end) { covered += s[1] - end; end = s[1]; }\n"
    "  });\n"
    "  var pct = FW > 0 ? 100 * covered / FW : 0;\n"
    "  matched.textContent = 'Matched: ' + pct.toFixed(1) + '% (' + spans.length + ' frames)';\n"
    "  searchBtn.textContent = 'Reset search';\n"
    "  searching = true;\n"
    "}\n"
    "svg.addEventListener('click', function (e) {\n"
    "  var el = e.target;\n"
    "  if (el === unzoomBtn) { unzoom(); return; }\n"
    "  if (el === searchBtn) { search(); return; }\n"
    "  while (el && el !== svg && !el.nytpFrame) el = el.parentNode;\n"
    "  if (!el || !el.nytpFrame) return;\n"
    "  var f = el.nytpFrame;\n"
    "  if (f.link && (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0 || zoomed === f))\n"
    "    return;\n"
    "  e.preventDefault();\n"
    "  zoom(f);\n"
    "});\n"
    "svg.addEventListener('mouseover', function (e) {\n"
    "  var el = e.target;\n"
    "  while (el && el !== svg && !el.nytpFrame) el = el.parentNode;\n"
    "  if (el && el.nytpFrame) details.textContent = el.nytpFrame.name + ': ' + el.nytpFrame.info;\n"
    "});\n"
    "svg.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
    "/* Ctrl-F is the page's own search when the graph is inlined in a page */\n"
    "var standalone = svg === document.documentElement;\n"
    "window.addEventListener('keydown', function (e) {\n"
    "  if (standalone && (e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F')) {\n"
    "    e.preventDefault();\n"
    "    search();\n"
    "  } else if (e.key === 'Escape') {\n"
    "    unzoom();\n"
    "    resetSearch();\n"
    "  }\n"
    "});\n"
    "svg.nytpFlame = { zoom: function (i) { zoom(frames[i]); }, unzoom: unzoom, search: search,\n"
    "  reset: resetSearch, frames: frames };\n"
    "})();\n";

typedef struct writer {
    nytp_out *out;
    const flame_svg_opts *o;
    const nytp_calltree *t;
    double tps, total;
    double scale;
    double height;
    uint32_t max_depth;
    char *url;
    size_t cap_url;
    const char *notes;      /* the layout's */
} writer;

static double row_y(const writer *w, uint32_t d)
{
    if (w->o->inverted)
        return TOP + d * ROW;
    return w->height - BOTTOM - (d + 1) * ROW;
}

/* Expand the link template for a name: "%s" percent-encoded name, "%%". */
static const char *template_url(writer *w, nytp_str name)
{
    const char *tp = w->o->link_template;
    /* every %s becomes the name with each byte as %XX at worst */
    size_t n_subst = 0;
    for (const char *p = tp; *p; p++)
        if (p[0] == '%' && (p[1] == 's' || p[1] == '%')) {
            n_subst += p[1] == 's';
            p++;
        }
    size_t tlen = strlen(tp), per = 3 * (size_t)name.len;
    if (n_subst && per > (SIZE_MAX - tlen - 1) / n_subst)
        return NULL;
    size_t need = tlen + n_subst * per + 1;
    if (need > w->cap_url) {
        char *b = realloc(w->url, need);
        if (!b)
            return NULL;
        w->url = b;
        w->cap_url = need;
    }
    static const char hex[] = "0123456789ABCDEF";
    char *o = w->url;
    for (const char *p = tp; *p; p++) {
        if (p[0] == '%' && p[1] == 's') {
            for (uint32_t i = 0; i < name.len; i++) {
                unsigned char c = (unsigned char)name.ptr[i];
                if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~') {
                    *o++ = (char)c;
                } else {
                    *o++ = '%';
                    *o++ = hex[c >> 4];
                    *o++ = hex[c & 15];
                }
            }
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            *o++ = '%';
            p++;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return w->url;
}

static void put_stats(writer *w, const frame *f)
{
    nytp_out *out = w->out;
    double val = w->o->by_calls ? (double)f->total_calls : f->total_excl;
    double pct = w->total > 0 ? 100.0 * val / w->total : 0;
    if (w->o->counts_unknown) { /* sampled: times only */
        put_duration(out, f->total_excl, w->tps);
        if (f->depth == 0)
            nytp_out_printf(out, " (100%%; click to reset the zoom)");
        else if (f->name == NONE)
            nytp_out_printf(out, ", %.2f%%, %llu narrow frames merged", pct,
                            (unsigned long long)f->n_merged);
        else {
            nytp_out_printf(out, " (%.2f%%), self ", pct);
            put_duration(out, f->excl, w->tps);
        }
        return;
    }
    if (f->depth == 0) {
        if (w->o->by_calls)
            nytp_out_printf(out, "%llu calls, ", (unsigned long long)f->total_calls);
        put_duration(out, f->total_excl, w->tps);
        if (!w->o->by_calls)
            nytp_out_printf(out, ", %llu calls", (unsigned long long)f->total_calls);
        nytp_out_printf(out, " (100%%; click to reset the zoom)");
        return;
    }
    if (f->name == NONE) {
        nytp_out_printf(out, "%llu narrow frames merged: ", (unsigned long long)f->n_merged);
        put_duration(out, f->total_excl, w->tps);
        nytp_out_printf(out, ", %.2f%%, %llu calls", pct, (unsigned long long)f->total_calls);
        return;
    }
    if (w->o->by_calls) {
        nytp_out_printf(out, "%llu calls with callees (%.2f%%), %llu calls, ",
                        (unsigned long long)f->total_calls, pct, (unsigned long long)f->calls);
        put_duration(out, f->total_excl, w->tps);
        return;
    }
    put_duration(out, f->total_excl, w->tps);
    nytp_out_printf(out, " (%.2f%%), %llu call%s, self ", pct, (unsigned long long)f->calls,
                    f->calls == 1 ? "" : "s");
    put_duration(out, f->excl, w->tps);
}

static void put_frame(writer *w, const frame *f)
{
    nytp_out *out = w->out;
    double x = PAD + f->x * w->scale, width = f->w * w->scale, y = row_y(w, f->depth);
    nytp_str name;
    char colour[40];
    const char *url = NULL;
    if (f->depth == 0) {
        name = nytp_cstr("all", false);
        strcpy(colour, "rgb(250,225,180)");
        if (f->rgb >= 0)
            sprintf(colour, "rgb(%ld,%ld,%ld)", f->rgb >> 16, (f->rgb >> 8) & 255, f->rgb & 255);
    } else if (f->name == NONE) {
        name = nytp_cstr("", false); /* set below */
        strcpy(colour, "rgb(200,200,200)");
    } else {
        name = nytp_calltree_name(w->t, f->name);
        if (f->rgb >= 0)
            sprintf(colour, "rgb(%ld,%ld,%ld)", f->rgb >> 16, (f->rgb >> 8) & 255, f->rgb & 255);
        else
            frame_colour(name, colour);
        if (w->o->link_fn)
            url = w->o->link_fn(w->o->link_ctx, name);
        else if (w->o->link_template)
            url = template_url(w, name);
    }
    char merged_name[40];
    if (f->name == NONE && f->depth) {
        snprintf(merged_name, sizeof merged_name, "(%llu merged)", (unsigned long long)f->n_merged);
        name = nytp_cstr(merged_name, false);
    }
    size_t len, chars;
    char *clean = clean_utf8(name.ptr, name.len, true, &len, &chars);
    if (!clean) {
        nytp_out_fail(out, NYTP_E_NOMEM, "out of memory");
        return;
    }
    if (url) {
        nytp_out_write(out, "<a href=\"", 9);
        put_xml_bytes(out, url, strlen(url));
        nytp_out_write(out, "\" target=\"_top\">", 16);
    }
    nytp_out_printf(out, "<g class=\"f%s\" data-d=\"%u\"><title>",
                    f->name == NONE && f->depth ? " m" : "", f->depth);
    put_xml(out, clean, len);
    nytp_out_write(out, "\n", 1);
    put_stats(w, f);
    if (f->note) {
        nytp_out_write(out, "; ", 2);
        const char *note = w->notes + f->note - 1;
        put_xml_bytes(out, note, strlen(note));
    }
    nytp_out_printf(out,
                    "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                    "fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
                    x, y, width, ROW - 1, colour, x + 3, y + 11.5);
    put_label(out, clean, len, chars, width);
    nytp_out_write(out, "</text></g>", 11);
    if (url)
        nytp_out_write(out, "</a>", 4);
    nytp_out_write(out, "\n", 1);
    free(clean);
}

int flame_svg_write(nytp_out *out, const nytp_calltree *t, const flame_svg_opts *o)
{
    unsigned width = o->width ? o->width : FLAME_SVG_WIDTH;
    double fw = width > 2 * PAD ? width - 2 * PAD : 1;
    double total = o->by_calls ? (double)nytp_calltree_total_calls(t) : nytp_calltree_total_excl(t);
    if (!(total > 0) || !isfinite(total))
        total = 0;
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);

    layout L = {0};
    L.o = o;
    L.scale = total > 0 ? fw / total : 0;
    L.minwidth = o->minwidth < 0 ? FLAME_SVG_MINWIDTH : o->minwidth;
    size_t nd = (size_t)s.max_depth + 3;
    L.next_x = calloc(nd, sizeof *L.next_x);
    L.visible = calloc(nd, sizeof *L.visible);
    L.run_x = calloc(nd, sizeof *L.run_x);
    L.run_sum = calloc(nd, sizeof *L.run_sum);
    L.run_excl = calloc(nd, sizeof *L.run_excl);
    L.run_n = calloc(nd, sizeof *L.run_n);
    L.run_calls = calloc(nd, sizeof *L.run_calls);
    int st = NYTP_E_NOMEM;
    if (L.next_x && L.visible && L.run_x && L.run_sum && L.run_excl && L.run_n && L.run_calls) {
        frame *all = push_frame(&L);
        if (all) {
            all->x = 0;
            all->w = total;
            all->depth = 0;
            all->name = NONE;
            all->total_calls = nytp_calltree_total_calls(t);
            all->total_excl = nytp_calltree_total_excl(t);
            L.visible[0] = total > 0;
            style_frame(&L, NULL, all);
            st = L.err ? L.err : nytp_calltree_walk(t, NYTP_CALLTREE_SORTED, lay_node, &L);
            for (uint32_t k = L.top_run; k > 0; k--)
                flush_run(&L, k);
            if (st == 0)
                st = L.err;
        }
    }
    free(L.next_x);
    free(L.visible);
    free(L.run_x);
    free(L.run_sum);
    free(L.run_excl);
    free(L.run_n);
    free(L.run_calls);
    if (st) {
        free(L.f);
        free(L.notes);
        return st < 0 ? st : NYTP_E_NOMEM;
    }

    writer w = {0};
    w.out = out;
    w.o = o;
    w.t = t;
    w.tps = o->ticks_per_sec > 0 ? o->ticks_per_sec : nytp_calltree_ticks_per_sec(t);
    w.total = total;
    w.scale = L.scale;
    w.max_depth = L.max_depth;
    w.height = TOP + (L.max_depth + 1) * ROW + BOTTOM;
    w.notes = L.notes;

    if (!o->fragment)
        nytp_out_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n");
    nytp_out_printf(out,
                    "<svg version=\"1.1\" class=\"nytp-flame\" width=\"%u\" height=\"%.0f\" "
                    "viewBox=\"0 0 %u %.0f\" data-fw=\"%.2f\" "
                    "xmlns=\"http://www.w3.org/2000/svg\">\n",
                    width, w.height, width, w.height, fw);
    nytp_out_printf(out, "<style>\n%s</style>\n", css);
    nytp_out_printf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%.0f\" fill=\"#fdfbf6\"/>\n",
                    width, w.height);
    const char *title = o->title ? o->title : "Flame Graph";
    nytp_out_printf(out, "<text class=\"title\" x=\"%.1f\" y=\"24\">", width / 2.0);
    put_xml_bytes(out, title, strlen(title));
    nytp_out_printf(out, "</text>\n<text class=\"sub\" x=\"%.1f\" y=\"42\">", width / 2.0);
    if (o->by_calls)
        nytp_out_printf(out, "%.0f calls", total);
    else
        put_duration(out, total, w.tps);
    nytp_out_printf(out, " in %llu call paths; ", (unsigned long long)s.nodes);
    if (o->subtitle_note) {
        put_xml_bytes(out, o->subtitle_note, strlen(o->subtitle_note));
        nytp_out_write(out, "; ", 2);
    }
    nytp_out_printf(out, "click a frame to zoom, Ctrl-F to search</text>\n");
    nytp_out_printf(out,
                    "<text class=\"btn nytp-unzoom hide\" x=\"%.0f\" y=\"24\">Reset zoom</text>\n"
                    "<text class=\"btn right nytp-search\" x=\"%.0f\" y=\"24\">Search</text>\n"
                    "<text class=\"nytp-details\" x=\"%.0f\" y=\"%.0f\"> </text>\n"
                    "<text class=\"right nytp-matched\" x=\"%.0f\" y=\"%.0f\"></text>\n",
                    PAD, width - PAD, PAD, w.height - 10, width - PAD, w.height - 10);
    nytp_out_write(out, "<g class=\"frames\">\n", 19);
    for (size_t i = 0; i < L.n; i++)
        put_frame(&w, &L.f[i]);
    nytp_out_write(out, "</g>\n", 5);
    nytp_out_printf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
                    script);
    free(L.f);
    free(L.notes);
    free(w.url);
    const nytp_error *e = nytp_out_error(out);
    return e->status ? e->status : NYTP_OK;
}

/* html.c — 'nytp html': a static HTML report of a profile, written as a
 * directory atomically (html.h lists the files of the report); with
 * --base, compared with base runs (compare.c) and with a differential
 * flame graph (flame_diff.c). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "flame_diff.h"
#include "flame_svg.h"
#include "export.h"
#include "stats.h"
#include "viewopt.h"
#include "html.h"
#include "nytp/calltree.h"
#include "perl_config.h"

static const char usage[] =
    "usage: nytp html [-o DIR] [-f FILE] [-d] [--open] [--minimal] [--no-flame] [--dot] [--strict]\n"
    "                 [--base=BASE]... [--by=WHAT] " VIEWOPT_SYNOPSIS "\n"
    "                 [FILE...]\n"
    "\n"
    "Write a static HTML report of an NYTProf profile into DIR (default\n"
    "./nytprof/): index.html with what ran, a flame graph, the top subroutines,\n"
    "every package and a treemap of where the time went, and the source files;\n"
    "a page per source file and string eval with every line annotated\n"
    "(statements, time, calls made, callers of each sub); all subroutines on\n"
    "subs.html.  Several FILEs are combined into one profile (default FILE:\n"
    "nytprof.out).  The report is self-contained and works offline; its files go\n"
    "into DIR only when all are written, so a failed run leaves the previous\n"
    "report intact.\n"
    "With --base the report compares: the index, the subs and the line view of\n"
    "each file have the time before (in the BASE profiles), after and its\n"
    "change, and with several runs a side (each --base and each FILE a run)\n"
    "the medians and the p-value of each change (~: not significant, as in\n"
    "'nytp diff'); the flame graph colours each frame by its change.\n"
    "On success it prints 'report: DIR/index.html'.\n"
    "\n"
    "  -o, --out=DIR      write the report here (default: nytprof); an existing DIR\n"
    "                     is written into: only files nytp wrote are replaced;\n"
    "                     --output is the same\n"
    "  -f, --file=FILE    read FILE (as an operand; may be repeated)\n"
    "      --open         open index.html in a browser: $BROWSER if set, else\n"
    "                     xdg-open when there is a display\n"
    "  -l, --lib=DIR      also shorten file names under DIR, as under perl's @INC\n"
    "  -m, --minimal      only the line view of each file: no block and sub views,\n"
    "                     no flame graph\n"
    "      --no-flame     no flame graph\n"
    "      --flamewidth=N width of the flame graph in pixels (default 1200)\n"
    VIEWOPT_USAGE
    "                    (every table, graph and calling line shows the view,\n"
    "                    the index says what was left out; call durations are\n"
    "                    per sub: a page says where they are the whole profile's;\n"
    "                    with --base, each run of both sides through the view,\n"
    "                    as 'nytp diff'; the index says what each side left out)\n"
    "      --dot          also write Graphviz files of the calls between packages,\n"
    "                     between all subs, and of each file's subs (*.dot)\n"
    "      --no-mergeevals  a page for every string eval, not one for each set of\n"
    "                     evals with the same source run from the same place\n"
    "  -d, --delete       first remove every file of earlier nytp reports in DIR (a\n"
    "                     csv report's too; without -d only the pages of an earlier\n"
    "                     html report that this one lacks go); files nytp did not\n"
    "                     write never do\n"
    "      --base=BASE    compare with the profile BASE (repeatable: runs of the\n"
    "                     base; files are matched across checkouts as by diff)\n"
    "      --normalize    with --base: scale every run by how fast it ran against\n"
    "                     BASE as a whole (as 'nytp diff --normalize')\n"
    "      --by=WHAT      rank subs by, and with --base compare, 'time' (the\n"
    "                     default), 'statements' executed or 'calls' (as\n"
    "                     'nytp diff --by')\n"
    "      --strict       a truncated profile is an error (exit 1)\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 ok (a truncated file only warns), 1 bad input or output, 2 usage.\n";

struct html_opts {
    const char *out;
    bool open, minimal, no_flame, strict, no_merge, dot, del, normalize;
    enum cmp_measure by;
    unsigned flamewidth;
    viewopt vo;
    const char **files;       /* -f */
    int n_files;
    const char **bases;       /* --base */
    int n_bases;
    char *lib;                /* -l DIRs joined with ':' */
};

enum { OPT_OPEN = 256, OPT_NO_FLAME, OPT_STRICT, OPT_FLAMEWIDTH, OPT_NO_MERGE, OPT_DOT, OPT_MAX_RECURSION,
       OPT_BASE, OPT_NORMALIZE, OPT_BY };

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct html_opts *o = ctx;
    if (viewopt_on_opt(&o->vo, opt, arg))
        return;
    switch (opt) {
    case 'o': o->out = arg; break;
    case 'f': {
        const char **v = realloc(o->files, ((size_t)o->n_files + 1) * sizeof *v);
        if (!v)
            cli_usage_error("out of memory");
        o->files = v;
        o->files[o->n_files++] = arg;
        break;
    }
    case 'l': {
        size_t have = o->lib ? strlen(o->lib) + 1 : 0;
        char *l = realloc(o->lib, have + strlen(arg) + 1);
        if (!l)
            cli_usage_error("out of memory");
        if (have)
            l[have - 1] = ':';
        strcpy(l + have, arg);
        o->lib = l;
        break;
    }
    case OPT_BASE: {
        const char **v = realloc(o->bases, ((size_t)o->n_bases + 1) * sizeof *v);
        if (!v)
            cli_usage_error("out of memory");
        o->bases = v;
        o->bases[o->n_bases++] = arg;
        break;
    }
    case OPT_NORMALIZE: o->normalize = true; break;
    case OPT_BY:
        if (strcmp(arg, "time") == 0 || strcmp(arg, "excl") == 0)
            o->by = CMP_BY_TIME;
        else if (strcmp(arg, "statements") == 0 || strcmp(arg, "stmts") == 0)
            o->by = CMP_BY_STATEMENTS;
        else if (strcmp(arg, "calls") == 0)
            o->by = CMP_BY_CALLS;
        else
            cli_usage_error("--by takes time, statements or calls, not '%s'", arg);
        break;
    case 'd': o->del = true; break;
    case 'm': o->minimal = true; break;
    case OPT_OPEN: o->open = true; break;
    case OPT_NO_FLAME: o->no_flame = true; break;
    case OPT_STRICT: o->strict = true; break;
    case OPT_NO_MERGE: o->no_merge = true; break;
    case OPT_DOT: o->dot = true; break;
    case OPT_FLAMEWIDTH: {
        unsigned long n = cli_parse_count("--flamewidth", arg);
        if (n < 100 || n > 100000)
            cli_usage_error("--flamewidth: %s is not a width in pixels from 100 to 100000", arg);
        o->flamewidth = (unsigned)n;
        break;
    }
    }
}

/* ---- the report state ------------------------------------------------------ */

/* "f12-Perl-Tidy-pm.html": the fid makes it unique, the rest is the tail of
 * the shown name reduced to [A-Za-z0-9_-], so it is never absolute, never
 * holds "..", and names nothing outside the report. */
static char *page_name(uint32_t fid, const char *shown)
{
    char safe[64];
    size_t n = 0, len = strlen(shown);
    size_t from = len > 200 ? len - 200 : 0;
    for (size_t i = from; i < len; i++) {
        unsigned char c = (unsigned char)shown[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (ok) {
            if (n == sizeof safe - 1) { /* keep the tail: drop the oldest byte */
                memmove(safe, safe + 1, n - 1);
                n--;
            }
            safe[n++] = (char)c;
        } else if (n && safe[n - 1] != '-') {
            if (n == sizeof safe - 1) {
                memmove(safe, safe + 1, n - 1);
                n--;
            }
            safe[n++] = '-';
        }
    }
    while (n && safe[n - 1] == '-')
        n--;
    size_t start = 0;
    while (start < n && safe[start] == '-')
        start++;
    char buf[96];
    if (n > start && n - start > 40)
        start = n - 40;
    snprintf(buf, sizeof buf, n > start ? "f%u-%.*s.html" : "f%u.html", fid, (int)(n - start), safe + start);
    return strdup(buf);
}

static int cmp_excl(const void *a, const void *b, void *ctx)
{
    const html_report *r = ctx;
    const nytp_profile *p = r->p;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const nytp_sub *x = &p->subs[i], *y = &p->subs[j];
    if (r->sub_stmts && r->sub_stmts[i] != r->sub_stmts[j])
        return r->sub_stmts[i] > r->sub_stmts[j] ? -1 : 1;
    if (r->by == CMP_BY_CALLS && x->calls != y->calls)
        return x->calls > y->calls ? -1 : 1;
    if (x->excl != y->excl)
        return x->excl > y->excl ? -1 : 1;
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    return strcmp(nytp_profile_str(p, x->name), nytp_profile_str(p, y->name));
}

/* Each file's totals with those of the string evals run in it, however
 * deep: the deepest evals are added to their parents first. */
static void add_evals_to_parents(html_report *r)
{
    const nytp_profile *p = r->p;
    for (uint32_t fid = 0; fid < p->n_files; fid++) {
        r->all_time[fid] = r->own_time[fid];
        r->all_stmts[fid] = r->own_stmts[fid];
    }
    for (uint32_t i = p->n_evals_by_depth; i-- > 0;) {
        uint32_t fid = p->evals_by_depth[i], up = p->files[fid].eval_fid;
        r->all_time[up] += r->all_time[fid];
        r->all_stmts[up] += r->all_stmts[fid];
    }
}

static int report_init(html_report *r, const nytp_profile *p)
{
    r->p = p;
    uint32_t nf = p->n_files ? p->n_files : 1;
    r->page = calloc(nf, sizeof *r->page);
    r->shown = calloc(nf, sizeof *r->shown);
    r->own_time = calloc(nf, sizeof *r->own_time);
    r->all_time = calloc(nf, sizeof *r->all_time);
    r->own_stmts = calloc(nf, sizeof *r->own_stmts);
    r->all_stmts = calloc(nf, sizeof *r->all_stmts);
    r->sub_files = calloc((size_t)p->n_subs + 1, sizeof *r->sub_files);
    r->by_excl = calloc((size_t)p->n_subs + 1, sizeof *r->by_excl);
    r->sub_shown = calloc((size_t)p->n_subs + 1, sizeof *r->sub_shown);
    uint32_t *seen = calloc(nf, sizeof *seen); /* sub id + 1 that last saw a fid */
    if (!r->page || !r->shown || !r->own_time || !r->all_time || !r->own_stmts || !r->all_stmts ||
        !r->sub_files || !r->by_excl || !r->sub_shown || !seen) {
        free(seen);
        return NYTP_E_NOMEM;
    }
    for (uint32_t fid = 1; fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        if (!f->defined && !f->line.n)
            continue;
        if (nytp_file_is_empty(f)) { /* nothing to show: no page, only counted */
            if (f->eval_fid)
                r->n_evals += 1 + f->merged_evals;
            else
                r->n_empty_files++;
            continue;
        }
        char *shown;
        if (f->defined) {
            uint32_t len = nytp_profile_strlen(p, f->name);
            shown = malloc((size_t)len + 1);
            if (shown)
                dump_data_strip_inc(nytp_profile_str(p, f->name), len, &r->names, shown);
        } else {
            shown = malloc(32);
            if (shown)
                snprintf(shown, 32, "(file %u, never named)", fid);
        }
        if (!shown || !(r->page[fid] = page_name(fid, shown))) {
            free(shown);
            free(seen);
            return NYTP_E_NOMEM;
        }
        r->shown[fid] = shown;
        for (uint32_t i = 0; i < f->line.n; i++) {
            r->own_time[fid] += f->line.v[i].time;
            r->own_stmts[fid] += f->line.v[i].count;
        }
        if (f->eval_fid)
            r->n_evals += 1 + f->merged_evals;
        else
            r->n_source_files++;
    }
    add_evals_to_parents(r);
    if (!html_eval_subs_init(r)) {
        free(seen);
        return NYTP_E_NOMEM;
    }
    for (uint32_t i = 0; i < p->n_subs; i++) {
        const nytp_sub *s = &p->subs[i];
        for (uint32_t k = 0; k < s->n_sites; k++) {
            uint32_t fid = p->sites[s->sites[k]].fid;
            if (fid < nf && seen[fid] != i + 1) {
                seen[fid] = i + 1;
                r->sub_files[i]++;
            }
        }
        r->by_excl[i] = i;
        if (s->excl > 0 && isfinite(s->excl)) {
            r->excl_total += s->excl;
            if (s->excl > r->excl_max)
                r->excl_max = s->excl;
        }
        /* "strict::__ANON__[/usr/lib/.../strict.pm:31]" -> "...[strict.pm:31]" */
        uint32_t len = nytp_profile_strlen(p, s->name);
        const char *name = nytp_profile_str(p, s->name);
        if (memchr(name, '[', len)) {
            char *shown = malloc((size_t)len + 1);
            if (!shown) {
                free(seen);
                return NYTP_E_NOMEM;
            }
            size_t n = dump_data_strip_inc(name, len, &r->names, shown);
            if (n == len && memcmp(shown, name, len) == 0)
                free(shown);
            else
                r->sub_shown[i] = shown;
        }
    }
    free(seen);
    if (r->by == CMP_BY_STATEMENTS) {
        r->sub_stmts = calloc((size_t)p->n_subs + 1, sizeof *r->sub_stmts);
        if (!r->sub_stmts || !cmp_sub_statements(p, r->sub_stmts))
            return NYTP_E_NOMEM;
    }
    qsort_r(r->by_excl, p->n_subs, sizeof *r->by_excl, cmp_excl, r);
    if (html_edges_build(r) < 0)
        return NYTP_E_NOMEM;
    const char *overhead = nytp_profile_attr(p, "cumulative_overhead_ticks");
    r->active = p->profiler_duration -
                (overhead && p->ticks_per_sec > 0 ? strtod(overhead, NULL) / p->ticks_per_sec : 0);
    return NYTP_OK;
}

static void report_free(html_report *r)
{
    if (r->p)
        for (uint32_t fid = 0; fid < r->p->n_files; fid++) {
            if (r->page)
                free(r->page[fid]);
            if (r->shown)
                free(r->shown[fid]);
        }
    free(r->page);
    free(r->shown);
    free(r->own_time);
    free(r->all_time);
    free(r->own_stmts);
    free(r->all_stmts);
    free(r->eval_subs);
    for (uint32_t i = 0; r->sub_shown && r->p && i < r->p->n_subs; i++)
        free(r->sub_shown[i]);
    free(r->sub_shown);
    free(r->sub_files);
    free(r->by_excl);
    free(r->sub_stmts);
    free(r->edges);
}

/* ---- the flame graph ------------------------------------------------------- */

/* Built in the same pass as the model: the sub returns and the
 * ticks_per_sec attribute also go to the call tree and the durations (on
 * a second thread, see returns.c); a new input (its VERSION chunk)
 * first closes the frames the last one left open. */
typedef struct flame_feed {
    nytp_calltree *t;         /* NULL: no flame graph wanted */
    unsigned inputs;          /* VERSION chunks seen: inputs begun */
    bool by_nytp;             /* the first input's comment says Devel::NYTP wrote it */
    html_durations *durations; /* of each sub's calls */
    html_returns *returns;    /* feeds both */
} flame_feed;

static int feed_chunk(void *ctx, const nytp_chunk *c)
{
    flame_feed *f = ctx;
    switch (c->tag) {
    case NYTP_TAG_SUB_RETURN:
    case NYTP_TAG_ATTRIBUTE: /* ticks_per_sec */
        return html_returns_add(f->returns, c);
    case NYTP_TAG_COMMENT:
        /* only the first input's header counts; its VERSION comes first */
        if (f->inputs <= 1 &&
            memmem(c->u.comment.text.ptr, c->u.comment.text.len, "by Devel::NYTP ", 15) != NULL)
            f->by_nytp = true;
        return NYTP_OK;
    case NYTP_TAG_VERSION:
        if (f->inputs++ && html_returns_end_input(f->returns) < 0)
            return NYTP_E_NOMEM;
        return NYTP_OK;
    default: /* the statements, most of the chunks: nothing for the tree */
        return NYTP_OK;
    }
}

/* A frame links to its sub's headline; evals (normalised names) to none. */
static const char *flame_link(void *ctx, nytp_str name)
{
    html_report *r = ctx;
    uint32_t sid = nytp_profile_sub_by_name(r->p, name.ptr, name.len);
    if (sid == NYTP_NONE)
        return NULL;
    const nytp_sub *s = &r->p->subs[sid];
    const char *page = s->fid != NYTP_NONE && s->fid < r->p->n_files && r->page[s->fid] ? r->page[s->fid]
                                                                                          : "subs.html";
    snprintf(r->flame_url, sizeof r->flame_url, "%s#S%u", page, sid);
    return r->flame_url;
}

/* flame.svg, and its height for the page that shows it; with --base the
 * differential one (flame_diff.c). */
static int write_flame(html_report *r, const nytp_calltree *t)
{
    flame_svg_opts fo;
    flame_svg_opts_init(&fo);
    const char *app = nytp_profile_attr(r->p, "application");
    char title[200];
    bool differential = r->cmp && r->cmp->base_tree;
    snprintf(title, sizeof title, "%s of %.150s", differential ? "Differential flame graph" : "Flame graph",
             app ? app : "the profile");
    fo.title = title;
    fo.link_fn = flame_link;
    fo.link_ctx = r;
    fo.width = r->flamewidth;
    flame_diff *fd = NULL;
    if (differential) {
        const comparison *C = &r->cmp->C;
        flame_diff_opts fdo = {.tree = {r->cmp->base_tree, t}, .paths = C->paths,
                               .runs = {C->s[0].n, r->p->n_inputs ? r->p->n_inputs : 1},
                               .normalized = C->o.normalize, .cmp = C, .alpha = 0.05};
        double f[64];
        uint32_t nf = C->s[1].n < 64 ? C->s[1].n : 64;
        memcpy(f, C->s[1].scale, nf * sizeof *f);
        fdo.new_scale = C->o.normalize && nf ? stats_median(f, nf) : 1;
        for (int k = 0; k < 2; k++)
            if (nytp_calltree_ticks_per_sec(fdo.tree[k]) <= 0)
                fdo.ticks_per_sec[k] = k ? r->p->ticks_per_sec : C->s[0].run[0]->ticks_per_sec;
        if (flame_diff_new(&fd, &fdo) < 0) {
            flame_diff_free(fd);
            cli_error("%s/flame.svg: out of memory", r->dir.path);
            return EXIT_BAD_INPUT;
        }
        flame_diff_style(fd, &fo);
    }
    char note[160];
    if (cli_sampled_note(r->p, note, sizeof note)) {
        fo.counts_unknown = true;
        fo.subtitle_note = note;
    }
    /* in memory first, to learn its size for the <object> showing it */
    nytp_out *mem;
    nytp_error e = {0};
    uint8_t *svg = NULL;
    size_t len = 0;
    bool opened = nytp_out_open_mem(&mem, &e) == NYTP_OK;
    int st = opened ? flame_svg_write(mem, t, &fo) : NYTP_E_NOMEM;
    flame_diff_free(fd);
    if (st < 0 && opened)
        nytp_out_abort(mem);
    if (st < 0 || nytp_out_close_mem(mem, &svg, &len, &e) < 0) {
        cli_error("%s/flame.svg: out of memory", r->dir.path);
        free(svg);
        return EXIT_BAD_INPUT;
    }
    const char *tag = memmem(svg, len, "<svg", 4);
    const char *h = tag ? memmem(tag, len - (size_t)((const uint8_t *)tag - svg), " height=\"", 9) : NULL;
    r->flame_w = fo.width ? fo.width : FLAME_SVG_WIDTH;
    r->flame_h = h ? (unsigned)strtoul(h + 9, NULL, 10) : 0;
    nytp_out *out = html_dir_file(r, "flame.svg");
    if (!out) {
        free(svg);
        return EXIT_BAD_INPUT;
    }
    nytp_out_write(out, svg, len);
    free(svg);
    atomic_fetch_add(&r->pages_done, 1);
    return cli_outdir_close_file(&r->dir, out, "flame.svg");
}

/* The pages of the source files, shared out between two threads once
 * the model is loaded (the other core is idle by then): each takes the
 * next page of a list with the largest files first, so that the last
 * page taken is a short one. */
typedef struct file_pages {
    html_report *r;
    uint32_t *fids;           /* files with pages, the most source lines first */
    uint32_t n_fids;
    int views;
    atomic_uint next;         /* the next page: fids[next / views], view next % views */
    atomic_int rc;            /* the first failure; then both stop */
} file_pages;

static void write_file_pages(file_pages *fp)
{
    for (;;) {
        unsigned k = atomic_fetch_add(&fp->next, 1);
        if (k >= fp->n_fids * (unsigned)fp->views || atomic_load(&fp->rc) != EXIT_OK)
            return;
        int rc = html_write_file(fp->r, fp->fids[k / (unsigned)fp->views], (enum html_view)(k % (unsigned)fp->views));
        int ok = EXIT_OK;
        if (rc != EXIT_OK)
            atomic_compare_exchange_strong(&fp->rc, &ok, rc);
    }
}

static void *file_pages_main(void *arg)
{
    write_file_pages(arg);
    return NULL;
}

static uint64_t page_weight(const nytp_profile *p, uint32_t fid)
{
    const nytp_file *f = &p->files[fid];
    return (uint64_t)f->src.n + f->line.n;
}

static int cmp_weight(const void *a, const void *b, void *ctx)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t wx = page_weight(ctx, x), wy = page_weight(ctx, y);
    if (wx != wy)
        return wx > wy ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int write_report(html_report *r, const nytp_calltree *t)
{
    const nytp_profile *p = r->p;
    int views = p->has_blocks && !r->minimal ? 3 : 1;
    unsigned total = 5 + (t != NULL) + (r->dot ? 2 : 0);
    file_pages fp = {.r = r, .views = views};
    fp.fids = malloc(((size_t)p->n_files + 1) * sizeof *fp.fids);
    if (!fp.fids) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    for (uint32_t fid = 1; fid < p->n_files; fid++) {
        total += (r->page[fid] ? (unsigned)views : 0) + html_file_has_dot(r, fid);
        if (r->page[fid])
            fp.fids[fp.n_fids++] = fid;
    }
    qsort_r(fp.fids, fp.n_fids, sizeof *fp.fids, cmp_weight, (void *)p);
    atomic_store(&r->pages_total, total);
    atomic_init(&fp.next, 0);
    atomic_init(&fp.rc, EXIT_OK);
    /* the other thread starts on the file pages while this one writes the
     * rest; then both take file pages */
    const char *threads = getenv("NYTP_THREADS");
    pthread_t helper;
    pthread_mutex_t dir_lock;
    bool two = !r->in_memory && fp.n_fids > 1 && !(threads && strcmp(threads, "0") == 0);
    if (two) {
        pthread_mutex_init(&dir_lock, NULL);
        r->dir_lock = &dir_lock;
        if (pthread_create(&helper, NULL, file_pages_main, &fp) != 0) {
            two = false;
            r->dir_lock = NULL;
            pthread_mutex_destroy(&dir_lock);
        }
    }
    int rc = html_write_assets(r);
    if (rc == EXIT_OK && t)
        rc = write_flame(r, t);
    if (rc == EXIT_OK)
        rc = html_write_index(r);
    if (rc == EXIT_OK)
        rc = html_write_subs(r);
    if (rc == EXIT_OK)
        rc = html_write_packages(r);
    if (rc == EXIT_OK && r->dot)
        rc = html_write_dot(r);
    if (rc != EXIT_OK) {
        int ok = EXIT_OK;
        atomic_compare_exchange_strong(&fp.rc, &ok, rc);
    }
    write_file_pages(&fp);
    if (two) {
        pthread_join(helper, NULL);
        r->dir_lock = NULL;
        pthread_mutex_destroy(&dir_lock);
    }
    free(fp.fids);
    return atomic_load(&fp.rc);
}

int html_write_memory(const nytp_profile *p)
{
    html_report r;
    memset(&r, 0, sizeof r);
    r.in_memory = true;
    static const char *inc[] = {"/usr/share/perl5", "/usr/lib"};
    r.names.inc = inc;
    r.names.n_inc = 2;
    r.names.perl_version = "5.36.0";
    int rc = report_init(&r, p) < 0 ? EXIT_BAD_INPUT : write_report(&r, NULL);
    report_free(&r);
    return rc;
}

/* Open the report in a browser: $BROWSER (its first ':'-separated entry,
 * which may hold arguments; the page is added as the last one) if set,
 * else xdg-open when there is a display; otherwise say why not. */
static void open_report(const char *index)
{
    const char *browser = getenv("BROWSER");
    const char *d = getenv("DISPLAY"), *wd = getenv("WAYLAND_DISPLAY");
    char cmd[1024];
    if (browser && *browser) {
        size_t n = strcspn(browser, ":");
        if (n >= sizeof cmd - 16)
            n = sizeof cmd - 16;
        snprintf(cmd, sizeof cmd, "%.*s \"$1\"", (int)n, browser);
    } else if ((d && *d) || (wd && *wd))
        snprintf(cmd, sizeof cmd, "xdg-open \"$1\"");
    else {
        cli_warn("--open: no display and no $BROWSER; open %s yourself", index);
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, "sh", index, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        cli_warn("--open: '%s' failed; open %s yourself", browser && *browser ? browser : "xdg-open", index);
}

/* ---- --base ------------------------------------------------------------------- */

/* The base runs' call trees go into one tree, as diff --svg builds it. */
typedef struct base_feed {
    nytp_calltree *t;
    bool any;
} base_feed;

static int feed_base(void *ctx, const nytp_chunk *c)
{
    base_feed *b = ctx;
    switch (c->tag) {
    case NYTP_TAG_SUB_RETURN:
    case NYTP_TAG_ATTRIBUTE:
        return nytp_calltree_add_chunk(b->t, c);
    case NYTP_TAG_VERSION:
        if (b->any && nytp_calltree_end_input(b->t) < 0)
            return NYTP_E_NOMEM;
        b->any = true;
        return NYTP_OK;
    default:
        return NYTP_OK;
    }
}

/* Profiles loaded for the comparison only, freed with the report. */
typedef struct runs {
    nytp_profile **v;
    uint32_t n, cap;
} runs;

static int keep_run(runs *k, nytp_profile *p)
{
    if (!cli_grow((void **)&k->v, (size_t)k->n + 1, &k->cap, sizeof *k->v)) {
        nytp_profile_free(p);
        return NYTP_E_NOMEM;
    }
    k->v[k->n++] = p;
    return NYTP_OK;
}

static void runs_free(runs *k)
{
    for (uint32_t i = 0; i < k->n; i++)
        nytp_profile_free(k->v[i]);
    free(k->v);
}

/* Side k (0: BASE) has a sampled run: its times are estimates, its counts
 * unknown; the index says so, with the first such run's rate. */
static void note_sampled(html_compare *hc, int k, const nytp_profile *run)
{
    if (!run->counts_unknown || hc->sampled[k])
        return;
    hc->sampled[k] = true;
    cli_sampled_note(run, hc->sampled_note[k], sizeof hc->sampled_note[k]);
}

/* Load the base runs (with their call tree when the report has a flame
 * graph), take the report's inputs as the other side's runs (p itself
 * when it is one input, else each input loaded again), and compare.
 * Returns an exit code. */
static int load_base(struct html_opts *o, int nin, char **inputs, nytp_profile *p, bool tree,
                     html_compare *hc, runs *own, nytp_view_stats vstats[2])
{
    bool viewed = viewopt_active(&o->vo);
    hc->base = (char **)o->bases;
    hc->n_base = cli_unique_inputs(o->n_bases, hc->base);
    cmp_init(&hc->C, &(cmp_opts){.by = o->by, .normalize = o->normalize});
    base_feed bf = {0};
    nytp_error e = {0};
    if (tree && nytp_calltree_new(&bf.t, &e) < 0) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    hc->base_tree = bf.t;
    for (int i = 0; i < hc->n_base; i++) {
        int rc;
        /* with a view, each run through it as diff reads its runs; its
         * filtered paths go to the base tree */
        nytp_profile *b = viewed ? export_load_viewed(1, hc->base + i, o->strict, &o->vo, &vstats[0], bf.t, &rc)
                          : tree ? cli_load_profile_with(1, hc->base + i, o->strict, feed_base, &bf, &rc)
                                 : cli_load_profile(1, hc->base + i, o->strict, &rc);
        if (!b)
            return rc;
        note_sampled(hc, 0, b);
        if (keep_run(own, b) < 0 || cmp_add_run(&hc->C, 0, b) < 0) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
    }
    if (bf.t && !viewed) { /* a view's trees are whole, folded and with the sites' paths */
        nytp_calltree_stats cs = {0};
        if (nytp_calltree_end_input(bf.t) < 0 ||
            nytp_calltree_fold_recursion(bf.t, o->vo.max_recursion) < 0) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
        nytp_calltree_get_stats(bf.t, &cs);
        for (uint32_t i = 0; cs.returns == 0 && i < own->n; i++)
            if (nytp_calltree_add_sites(bf.t, own->v[i]) < 0) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
            }
    }
    if (nin <= 1) {
        note_sampled(hc, 1, p);
        if (cmp_add_run(&hc->C, 1, p) < 0) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
    } else {
        for (int i = 0; i < nin; i++) {
            int rc;
            nytp_profile *n = viewed ? export_load_viewed(1, inputs + i, o->strict, &o->vo, &vstats[1], NULL, &rc)
                                     : cli_load_profile(1, inputs + i, o->strict, &rc);
            if (!n)
                return rc;
            note_sampled(hc, 1, n);
            if (keep_run(own, n) < 0 || cmp_add_run(&hc->C, 1, n) < 0) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
            }
        }
    }
    if (cmp_compute(&hc->C) < 0) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

/* Where each sub, file and line of the report is in the comparison
 * (keys made once, here, so that the pages only read). */
static int compare_lookups(html_compare *hc, const nytp_profile *p)
{
    hc->sub_row = malloc(((size_t)p->n_subs + 1) * sizeof *hc->sub_row);
    hc->file_row = malloc(((size_t)p->n_files + 1) * sizeof *hc->file_row);
    hc->line_file = malloc(((size_t)p->n_files + 1) * sizeof *hc->line_file);
    if (!hc->sub_row || !hc->file_row || !hc->line_file)
        return NYTP_E_NOMEM;
    for (uint32_t i = 0; i < p->n_subs; i++)
        hc->sub_row[i] = cmp_find_sub(&hc->C, 1, p, i);
    for (uint32_t fid = 0; fid < p->n_files; fid++) {
        bool known = fid && (p->files[fid].defined || p->files[fid].line.n);
        hc->file_row[fid] = known && !p->files[fid].eval_fid ? cmp_find_file(&hc->C, 1, p, fid) : NYTP_NONE;
        hc->line_file[fid] = known ? cmp_find_line_file(&hc->C, 1, p, fid) : NYTP_NONE;
    }
    return NYTP_OK;
}

static void compare_free(html_compare *hc)
{
    cmp_release(&hc->C);
    nytp_calltree_free(hc->base_tree);
    free(hc->sub_row);
    free(hc->file_row);
    free(hc->line_file);
}

/* Files every report has: an index.html that nytp did not write (someone's
 * page, nytprofhtml's report) stops the report before any work. */
static const char *const always_written[] = {"index.html", NULL};

/* Load, write and commit the report; returns an exit code. */
static const char *view_sub_file(void *ctx, const char *name, uint32_t len)
{
    return export_sub_file(ctx, export_find_sub(ctx, name, len));
}

/* The flame tree t becomes the view of o->vo (its 'file:' patterns
 * matching subs by p's files), and p's subs and call sites get the
 * view's times and calls;
 * line gets what was left out.  < 0 when out of memory (said). */
static int apply_view(struct html_opts *o, nytp_profile *p, nytp_calltree **t, char *line, size_t size,
                      nytp_view_stats *stats)
{
    export_profile x = {0}; /* for its sub lookup by call tree names */
    x.p = p;
    nytp_view_set_sub_files(o->vo.v, view_sub_file, &x);
    /* the sites first: they are found from the tree before the view */
    int st = nytp_view_apply_sites(o->vo.v, p, *t);
    if (st < 0)
        cli_error("out of memory");
    else
        st = viewopt_apply(&o->vo, t);
    nytp_view_set_sub_files(o->vo.v, NULL, NULL);
    strmap_release(&x.sub_names);
    if (st == 0 && nytp_view_apply_model(o->vo.v, p, *t, p->ticks_per_sec) < 0) {
        cli_error("out of memory");
        st = NYTP_E_NOMEM;
    }
    if (st == 0) {
        viewopt_header(&o->vo, line, size, p->ticks_per_sec);
        nytp_view_get_stats(o->vo.v, stats);
    }
    return st;
}

static int make_report(struct html_opts *o, int nin, char **inputs, const char *outdir)
{
    cli_progress pg;
    cli_progress_start(&pg, "loading the profile");
    int rc;
    flame_feed feed = {0};
    bool flame_empty = false, flame_sites = false;
    nytp_error e = {0};
    bool viewed = viewopt_active(&o->vo);
    char view_line[2500] = "";
    nytp_view_stats own_stats, vstats[2];
    memset(&own_stats, 0, sizeof own_stats);
    memset(vstats, 0, sizeof vstats);
    if ((viewed || (!o->no_flame && !o->minimal)) && nytp_calltree_new(&feed.t, &e) < 0) {
        cli_progress_end(&pg);
        cli_error("%s", e.msg);
        return EXIT_BAD_INPUT;
    }
    if (html_durations_new(&feed.durations) < 0 ||
        html_returns_new(&feed.returns, feed.t, feed.durations) < 0) {
        cli_progress_end(&pg);
        nytp_calltree_free(feed.t);
        html_durations_free(feed.durations);
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    nytp_profile *p = cli_load_profile_with(nin, inputs, o->strict, feed_chunk, &feed, &rc);
    /* the tree and the durations are whole once the thread is done */
    int fst = html_returns_finish(feed.returns);
    html_returns_free(feed.returns);
    if (p && fst < 0) {
        cli_error("out of memory");
        nytp_profile_free(p);
        p = NULL;
        rc = EXIT_BAD_INPUT;
    }
    if (!p) {
        cli_progress_end(&pg);
        nytp_calltree_free(feed.t);
        html_durations_free(feed.durations);
        return rc;
    }
    if (feed.t) {
        nytp_calltree_stats cs = {0};
        if (nytp_calltree_end_input(feed.t) >= 0 &&
            (viewed || nytp_calltree_fold_recursion(feed.t, o->vo.max_recursion) >= 0))
            nytp_calltree_get_stats(feed.t, &cs);
        /* no sub returns (calls=0): the paths of the call sites, as calls,
         * flame and the exports show them; none either (subs=0): no graph */
        if (cs.returns == 0 && p->n_sites && nytp_calltree_add_sites(feed.t, p) == NYTP_OK) {
            flame_sites = true;
        } else if (cs.returns == 0) {
            nytp_calltree_free(feed.t);
            feed.t = NULL;
            flame_empty = true;
        }
        /* the view, folded there, before the model is read by anything */
        if (feed.t && viewed && apply_view(o, p, &feed.t, view_line, sizeof view_line, &own_stats) < 0) {
            cli_progress_end(&pg);
            nytp_calltree_free(feed.t);
            html_durations_free(feed.durations);
            nytp_profile_free(p);
            return EXIT_BAD_INPUT;
        }
        if (feed.t && (o->no_flame || o->minimal)) { /* built for the view only */
            nytp_calltree_free(feed.t);
            feed.t = NULL;
        }
    }
    /* --base: the comparison, before evals are folded (its rows are
     * matched by names, and sibling evals sum there as in diff) */
    html_compare hc;
    memset(&hc, 0, sizeof hc);
    runs own = {0};
    if (o->n_bases) {
        cli_progress_phase(&pg, "loading the base", NULL, NULL, NULL);
        rc = load_base(o, nin, inputs, p, feed.t != NULL, &hc, &own, vstats);
        if (rc == EXIT_OK && viewed) {
            /* what each side left out, as diff says it; one input is the
             * report's own profile, viewed above */
            if (nin <= 1)
                vstats[1] = own_stats;
            char a[1200], b[1200];
            viewopt_header_of(&o->vo, &vstats[0], a, sizeof a, hc.C.s[0].run[0]->ticks_per_sec);
            viewopt_header_of(&o->vo, &vstats[1], b, sizeof b, hc.C.s[1].run[0]->ticks_per_sec);
            snprintf(view_line, sizeof view_line, "BASE: %s; NEW: %s", a, b);
        }
        if (rc == EXIT_OK && hc.sampled[0] != hc.sampled[1])
            cli_warn("%s was sampled and %s traced: the sampled times are estimates, and xsubs "
                     "have none of their own there (their callers have it)",
                     hc.sampled[0] ? "BASE" : "the report's profile",
                     hc.sampled[0] ? "the report's profile" : "BASE");
        if (rc != EXIT_OK) {
            cli_progress_end(&pg);
            compare_free(&hc);
            runs_free(&own);
            nytp_calltree_free(feed.t);
            html_durations_free(feed.durations);
            nytp_profile_free(p);
            return rc;
        }
    }
    if (o->by != CMP_BY_TIME && (p->counts_unknown || hc.sampled[0]))
        cli_usage_error("--by=%s: %s was sampled (sample=HZ), its counts are unknown; rank by "
                        "time, or profile without sampling",
                        o->by == CMP_BY_CALLS ? "calls" : "statements",
                        p->counts_unknown ? "the profile" : "BASE");
    if (cli_fold_aliases(p) < 0 || (!o->no_merge && nytp_profile_collapse_evals(p) < 0) ||
        (o->n_bases && compare_lookups(&hc, p) < 0)) {
        cli_progress_end(&pg);
        cli_error("out of memory");
        compare_free(&hc);
        runs_free(&own);
        nytp_calltree_free(feed.t);
        html_durations_free(feed.durations);
        nytp_profile_free(p);
        return EXIT_BAD_INPUT;
    }

    html_report r;
    memset(&r, 0, sizeof r);
    r.cmp = o->n_bases ? &hc : NULL;
    r.minimal = o->minimal;
    r.flame = feed.t != NULL;
    r.flame_empty = flame_empty;
    r.flame_sites = flame_sites;
    r.view_line = *view_line ? view_line : NULL;
    r.flamewidth = o->flamewidth;
    r.dot = o->dot;
    r.by = o->by;
    r.durations = feed.durations;
    const char *xs = nytp_profile_attr(p, "xs_version");
    r.source = xs && strncmp(xs, "DProf", 5) == 0 && (!xs[5] || xs[5] == ' ') ? SOURCE_DPROF
               : feed.by_nytp                                               ? SOURCE_NYTP
                                                                            : SOURCE_NYTPROF;
    char *storage = NULL, *dirs = NULL;
    if (o->lib && asprintf(&dirs, "%s:%s", o->lib, NYTP_PERL_INC) < 0)
        dirs = NULL;
    r.names.inc = dump_data_split_dirs(dirs ? dirs : NYTP_PERL_INC, &r.names.n_inc, &storage);
    free(dirs);
    r.names.perl_version = NYTP_PERL_VERSION;
    if (!r.names.inc || report_init(&r, p) < 0) {
        cli_error("out of memory");
        rc = EXIT_BAD_INPUT;
    } else if ((rc = cli_outdir_open(&r.dir, outdir, "html", always_written)) == EXIT_OK) {
        r.dir.delete_old = o->del;
        cli_progress_phase(&pg, "writing", &r.pages_done, &r.pages_total, "pages");
        rc = write_report(&r, feed.t);
        if (rc == EXIT_OK)
            rc = cli_outdir_commit(&r.dir);
        else
            cli_outdir_abort(&r.dir);
    }
    cli_progress_end(&pg);
    if (flame_sites && rc == EXIT_OK)
        cli_warn("%s: " CLI_NO_RETURNS,
                 nin > 1 ? "the profiles" : nin == 0 ? "nytprof.out"
                         : strcmp(inputs[0], "-") ? inputs[0] : "(standard input)");
    report_free(&r);
    compare_free(&hc);
    runs_free(&own);
    nytp_calltree_free(feed.t);
    html_durations_free(feed.durations);
    free((void *)r.names.inc);
    free(storage);
    nytp_profile_free(p);
    return rc;
}

int cmd_html(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},
        {"file", required_argument, NULL, 'f'},
        {"lib", required_argument, NULL, 'l'},
        {"delete", no_argument, NULL, 'd'},
        {"open", no_argument, NULL, OPT_OPEN},
        {"minimal", no_argument, NULL, 'm'},
        {"no-flame", no_argument, NULL, OPT_NO_FLAME},
        {"flamewidth", required_argument, NULL, OPT_FLAMEWIDTH},
        {"no-mergeevals", no_argument, NULL, OPT_NO_MERGE},
        {"dot", no_argument, NULL, OPT_DOT},
        {"strict", no_argument, NULL, OPT_STRICT},
        VIEWOPT_LONGOPTS,
        {"base", required_argument, NULL, OPT_BASE},
        {"normalize", no_argument, NULL, OPT_NORMALIZE},
        {"by", required_argument, NULL, OPT_BY},
        {NULL, 0, NULL, 0},
    };
    struct html_opts o = {0};
    viewopt_init(&o.vo);
    int first = cli_parse(argc, argv, "o:f:l:dm", longopts, usage, on_opt, &o);
    const char *outdir = o.out ? o.out : "nytprof";
    if (!*outdir)
        cli_usage_error("-o needs a directory name");
    /* -f FILEs first, then the operands */
    int nin = o.n_files + (argc - first);
    char **inputs = calloc((size_t)nin + 1, sizeof *inputs);
    int rc = EXIT_BAD_INPUT;
    if (!inputs)
        cli_error("out of memory");
    else {
        for (int i = 0; i < o.n_files; i++)
            inputs[i] = (char *)o.files[i];
        for (int i = first; i < argc; i++)
            inputs[o.n_files + i - first] = argv[i];
        /* --base reads the inputs twice when there are several, and
         * standard input can be read once */
        int dashes = 0;
        for (int i = 0; i < o.n_bases; i++)
            dashes += strcmp(o.bases[i], "-") == 0;
        for (int i = 0; i < nin && o.n_bases; i++)
            dashes += strcmp(inputs[i], "-") == 0 ? 1 + (nin > 1) : 0;
        if (dashes > 1)
            cli_usage_error("standard input ('-') can be read only once");
        if (o.normalize && !o.n_bases)
            cli_usage_error("--normalize goes with --base");
        if (cli_outdir_check(outdir, "html", always_written) == EXIT_OK)
            rc = make_report(&o, nin, inputs, outdir);
    }
    free(inputs);
    free(o.files);
    free(o.bases);
    free(o.lib);
    viewopt_release(&o.vo);
    if (rc != EXIT_OK)
        return rc;
    char *index = NULL;
    if (asprintf(&index, "%s/index.html", outdir) < 0) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    printf("report: %s\n", index);
    if (o.open)
        open_report(index);
    free(index);
    return rc;
}

/* calls.c — 'nytp calls': collapsed call paths, as nytprofcalls prints
 * them, from the call tree of the SUB_RETURN stream. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "cli.h"
#include "commands.h"
#include "export.h"
#include "fmt.h"

static const char usage[] =
    "usage: nytp calls [--calls] [--stable] " VIEWOPT_SYNOPSIS "\n"
    "                  [--strict] [-v] [-o FILE] [FILE...]\n"
    "\n"
    "Rebuild the call tree from the sub return events of NYTProf profiles\n"
    "(default FILE: nytprof.out; '-' reads standard input; several files add\n"
    "up) and print one line per call path: 'sub;sub;sub VALUE', VALUE being\n"
    "the exclusive ticks spent in the last sub along that path.  The same\n"
    "lines as Devel::NYTProf's nytprofcalls, which flame graph tools read.\n"
    "\n"
    "  --calls           VALUE is the number of calls instead of ticks (not\n"
    "                    for a sampled profile, whose counts are unknown)\n"
    "  --stable          sort the lines (default: tree order)\n"
    VIEWOPT_USAGE
    "  --strict          a truncated profile is an error (exit 1)\n"
    "  -v, --verbose     say what is being done on standard error\n"
    "  -f, --file=FILE   read FILE (the same as naming it)\n"
    "  -o, --output=FILE write to FILE (atomically) instead of standard output;\n"
    "                    --out is the same\n"
    "  -h, --help        this help\n"
    "\n"
    "A profile without sub return events (calls=0) gives the caller;called paths\n"
    "of its call sites instead, with a warning (not from standard input).\n"
    "String eval sequence numbers in sub names become 0 ('(eval 0)[x.pl:3]');\n"
    "names are printed as they are, spaces included, except for ';', line feed,\n"
    "carriage return and '%', written %3B, %0A, %0D and %25 so that a name\n"
    "cannot make another frame or line.  Calls still open where a\n"
    "profile ends are shown under '" NYTP_CALLTREE_UNRETURNED "'.  A sub calling itself\n"
    "more than N times in a row keeps N frames; the deeper ones are one frame\n"
    "'NAME\xe2\x80\xa6[\xc3\x97K]' (K: how many it stands for), holding their time and calls.\n"
    "With --focus, --ignore or --hide the first line, '# ...', says what was left\n"
    "out and the share of the time in subs shown.  A 'file:RE' pattern matches a\n"
    "frame by the file its sub is defined in, as in nytp top and pprof (subs with\n"
    "no definition, xsubs, are the main program's file's, as Devel::NYTProf has\n"
    "them); the profile's subs are then read too.\n"
    "Exit status: 0 ok (a truncated file only warns), 1 bad input, 2 usage.\n";

/* ---- shared with 'nytp flame' ------------------------------------------- */

static const char *shown(const char *file)
{
    return strcmp(file, "-") == 0 ? "(standard input)" : file;
}

/* A profile without call events (calls=0) still has its call sites:
 * their caller;called paths go into t, as pprof and speedscope show them,
 * said once on stderr.  The inputs are read again for them (quietly:
 * their warnings were given); standard input cannot be.  With no call
 * sites either, each input not warned about yet (warned[i]) gets a
 * warning that there is nothing to show.  Returns NYTP_OK or
 * NYTP_E_NOMEM. */
static int calls_from_sites(nytp_calltree *t, int nfiles, char **files, const bool *warned)
{
    nytp_profile *p;
    nytp_error e = {0};
    if (nytp_profile_new(&p, &e) < 0)
        return NYTP_E_NOMEM;
    nytp_load_opts lo = {0};
    int used = 0, st = NYTP_OK;
    for (int i = 0; i < nfiles && st == NYTP_OK; i++) {
        if (strcmp(files[i], "-") == 0) {
            if (!warned[i])
                cli_warn("(standard input): no sub return events, so no calls to show (profiled "
                         "with calls=0?): its call-site data cannot be read again from standard input");
            continue;
        }
        int ls = nytp_profile_load(p, files[i], &lo, &e);
        if (ls == NYTP_E_NOMEM)
            st = ls;
        else
            used += ls == NYTP_OK || ls == NYTP_E_TRUNCATED;
    }
    if (st == NYTP_OK && used && (st = nytp_profile_finish(p)) == NYTP_OK)
        st = nytp_calltree_add_sites(t, p);
    if (st == NYTP_OK && p->n_sites)
        cli_warn("%s: " CLI_NO_RETURNS, nfiles == 1 ? shown(files[0]) : "the profiles");
    for (int i = 0; st == NYTP_OK && !p->n_sites && i < nfiles; i++)
        if (!warned[i] && strcmp(files[i], "-"))
            cli_warn("%s: no sub return events, so no calls to show (profiled with calls=0, subs=0 "
                     "or an old profiler?)", shown(files[i]));
    nytp_profile_free(p);
    return st;
}

/* With "file:" patterns the frames are matched by their subs' files,
 * which only the model knows: the profile is read once into the model
 * and the call tree together, and viewed through export_apply_view, as
 * top, pprof and speedscope view it, so that a pattern means the same in
 * every report. */
static nytp_calltree *calls_load_with_files(int nfiles, char **files, bool strict, viewopt *vo,
                                            int *rc)
{
    export_profile x;
    *rc = export_load(&x, nfiles, files, strict, NULL, NULL);
    if (*rc != EXIT_OK)
        return NULL;
    if (!x.returns && x.p->n_sites)
        cli_warn("%s: " CLI_NO_RETURNS, nfiles == 1 ? shown(files[0]) : nfiles ? "the profiles" : "nytprof.out");
    else if (!x.returns)
        cli_warn("%s: no sub return events, so no calls to show (profiled with calls=0, subs=0 "
                 "or an old profiler?)", nfiles == 1 ? shown(files[0]) : nfiles ? "the profiles" : "nytprof.out");
    if (export_apply_view(&x, vo) < 0) {
        export_release(&x);
        *rc = EXIT_BAD_INPUT;
        return NULL;
    }
    nytp_calltree *t = x.t;
    x.t = NULL;
    export_release(&x);
    return t;
}

nytp_calltree *calls_load(int nfiles, char **files, bool strict, viewopt *vo,
                          bool verbose, int *rc)
{
    if (nytp_view_has_file_patterns(vo->v))
        return calls_load_with_files(nfiles, files, strict, vo, rc);
    static char *default_file[] = {"nytprof.out"};
    if (nfiles == 0) {
        nfiles = 1;
        files = default_file;
    }
    nfiles = cli_unique_inputs(nfiles, files);
    cli_check_runs(nfiles, files);
    nytp_calltree *t;
    nytp_error e = {0};
    *rc = EXIT_OK;
    bool *none = calloc((size_t)nfiles * 2, sizeof *none); /* inputs without returns */
    bool *warned = none + nfiles;                               /* inputs warned about */
    if (!none || nytp_calltree_new(&t, &e) < 0) {
        cli_error("%s", none ? e.msg : "out of memory");
        free(none);
        *rc = EXIT_BAD_INPUT;
        return NULL;
    }
    for (int i = 0; i < nfiles; i++) {
        nytp_calltree_stats before, after;
        nytp_calltree_get_stats(t, &before);
        if (verbose)
            cli_note("reading %s (%d of %d)", shown(files[i]), i + 1, nfiles);
        int st = nytp_calltree_load(t, files[i], cli_reader_warning, files[i], &e);
        nytp_calltree_get_stats(t, &after);
        uint64_t open = after.unreturned - before.unreturned;
        char opened[160] = "";
        if (open)
            snprintf(opened, sizeof opened, "%llu call%s still open at the end shown as %s",
                     (unsigned long long)open, open == 1 ? "" : "s", NYTP_CALLTREE_UNRETURNED);
        if (st == NYTP_E_TRUNCATED) {
            size_t n = strlen(e.msg);
            if (!strict)
                snprintf(e.msg + n, sizeof e.msg - n, "; kept the calls before the cut%s%s",
                         open ? ", " : "", opened);
            cli_report(files[i], &e, !strict);
            if (strict)
                *rc = EXIT_BAD_INPUT;
        } else if (st < 0) {
            cli_report(files[i], &e, false);
            *rc = EXIT_BAD_INPUT;
        } else if (open) {
            cli_warn("%s: %s", shown(files[i]), opened);
        }
        none[i] = after.returns == before.returns;
        warned[i] = st < 0 || open;
        if (*rc != EXIT_OK) {
            nytp_calltree_free(t);
            free(none);
            return NULL;
        }
        if (verbose)
            cli_note("%s: %llu sub returns", shown(files[i]),
                     (unsigned long long)(after.returns - before.returns));
    }
    nytp_calltree_stats all;
    nytp_calltree_get_stats(t, &all);
    if (all.returns == 0 && calls_from_sites(t, nfiles, files, warned) < 0) {
        cli_error("out of memory");
        nytp_calltree_free(t);
        free(none);
        *rc = EXIT_BAD_INPUT;
        return NULL;
    }
    for (int i = 0; all.returns && i < nfiles; i++)
        if (none[i])
            cli_warn("%s: no sub return events, so no calls from it (profiled with calls=0, "
                     "subs=0 or an old profiler?)", shown(files[i]));
    free(none);
    if (viewopt_apply(vo, &t) < 0) {
        nytp_calltree_free(t);
        *rc = EXIT_BAD_INPUT;
        return NULL;
    }
    return t;
}

/* printf "%d" of an NV, as perl does it (truncation; wraps past IV_MAX). */
static char *fmt_perl_d(char *o, double v)
{
    if (isnan(v))
        return memcpy(o, "NaN", 3), o + 3;
    if (isinf(v)) {
        if (v < 0)
            *o++ = '-';
        return memcpy(o, "Inf", 3), o + 3;
    }
    if (v >= 9223372036854775808.0)
        return fmt_i64(o, v < 18446744073709551616.0 ? (int64_t)(uint64_t)v : -1);
    if (v <= -9223372036854775808.0)
        return fmt_i64(o, INT64_MIN);
    return fmt_i64(o, (int64_t)v);
}

typedef struct collapse {
    nytp_out *out;
    bool by_calls, stable;
    char *prefix;           /* the path of the node being visited */
    size_t *plen;           /* plen[d]: length of the path down to depth d */
    size_t cap_prefix;
    double out_excl;
    uint64_t out_calls;
    char *lines;            /* stable: all lines, then sorted */
    size_t n_lines_bytes, cap_lines;
    struct line { size_t start, len; } *starts;
    size_t n_lines, cap_starts;
    int err;
} collapse;

static bool reserve(char **b, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    char *p = realloc(*b, n);
    if (!p)
        return false;
    *b = p;
    *cap = n;
    return true;
}

/* A name as a frame of a collapsed line: the bytes that would end the
 * frame (';') or the line (LF, CR) are percent-encoded, and so is '%'
 * itself, so that the line reads back as the names it was made of and a
 * name can never forge another frame or line.  Other bytes (spaces, tabs,
 * UTF-8) are written as they are: flame graph tools split the value off
 * at the last space.  o has room for 3 * len bytes. */
static char *put_frame(char *o, const char *s, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == ';' || ch == '\n' || ch == '\r' || ch == '%') {
            *o++ = '%';
            *o++ = hex[ch >> 4];
            *o++ = hex[ch & 15];
        } else {
            *o++ = (char)ch;
        }
    }
    return o;
}

static int on_node(void *ctx, const nytp_calltree_visit *v)
{
    collapse *c = ctx;
    const nytp_str *name = &v->path[v->depth - 1];
    size_t at = v->depth > 1 ? c->plen[v->depth - 1] : 0;
    if (!reserve(&c->prefix, &c->cap_prefix, at + 3 * (size_t)name->len + 64))
        return NYTP_E_NOMEM;
    char *p = c->prefix + at;
    if (v->depth > 1)
        *p++ = ';';
    p = put_frame(p, name->ptr, name->len);
    c->plen[v->depth] = (size_t)(p - c->prefix);
    /* a path nothing returned along (a frame still open at the end, with
     * calls below it) holds nothing: its line would only repeat its
     * children's prefix */
    if (v->calls == 0 && v->excl == 0)
        return 0;
    *p++ = ' ';
    if (c->by_calls) {
        p = fmt_u64(p, v->calls);
        c->out_calls += v->calls;
    } else {
        p = fmt_perl_d(p, v->excl);
        c->out_excl += v->excl;
    }
    *p++ = '\n';
    size_t len = (size_t)(p - c->prefix);
    if (!c->stable) {
        if (nytp_out_write(c->out, c->prefix, len) < 0)
            return nytp_out_error(c->out)->status;
        return 0;
    }
    if (!reserve(&c->lines, &c->cap_lines, c->n_lines_bytes + len))
        return NYTP_E_NOMEM;
    if (c->n_lines == c->cap_starts) {
        size_t n = c->cap_starts ? c->cap_starts * 2 : 1024;
        struct line *s = realloc(c->starts, n * sizeof *s);
        if (!s)
            return NYTP_E_NOMEM;
        c->starts = s;
        c->cap_starts = n;
    }
    c->starts[c->n_lines].start = c->n_lines_bytes;
    c->starts[c->n_lines++].len = len;
    memcpy(c->lines + c->n_lines_bytes, c->prefix, len);
    c->n_lines_bytes += len;
    return 0;
}

static int cmp_line(const void *a, const void *b, void *ctx)
{
    const char *base = ctx;
    const struct line *x = a, *y = b;
    size_t lx = x->len, ly = y->len;
    int r = memcmp(base + x->start, base + y->start, lx < ly ? lx : ly);
    return r ? r : (lx > ly) - (lx < ly);
}

int calls_write_collapsed(nytp_out *out, const nytp_calltree *t, bool by_calls, bool stable)
{
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    collapse c = {0};
    c.out = out;
    c.by_calls = by_calls;
    c.stable = stable;
    c.plen = calloc((size_t)s.max_depth + 2, sizeof *c.plen);
    int st = c.plen ? nytp_calltree_walk(t, 0, on_node, &c) : NYTP_E_NOMEM;
    if (st == 0 && stable && c.n_lines) {
        qsort_r(c.starts, c.n_lines, sizeof *c.starts, cmp_line, c.lines);
        for (size_t i = 0; i < c.n_lines && st == 0; i++)
            if (nytp_out_write(out, c.lines + c.starts[i].start, c.starts[i].len) < 0)
                st = nytp_out_error(out)->status;
    }
    free(c.prefix);
    free(c.plen);
    free(c.lines);
    free(c.starts);
    if (st) /* reported by the caller, with the output's name (cli_output_finish) */
        return st < 0 ? st : NYTP_E_NOMEM;
    bool same = by_calls ? c.out_calls == s.returns : c.out_excl == s.excl_in;
    if (s.returns && !same) { /* without returns the paths came from the call sites */
        char a[40], b[40];
        if (by_calls) {
            *fmt_u64(a, s.returns) = 0;
            *fmt_u64(b, c.out_calls) = 0;
        } else {
            *fmt_nv(a, s.excl_in) = 0;
            *fmt_nv(b, c.out_excl) = 0;
        }
        cli_warn("inconsistency: total in %s doesn't match total out %s", a, b);
    }
    return NYTP_OK;
}

void calls_write_header(nytp_out *out, const viewopt *vo, const nytp_calltree *t)
{
    char h[1024];
    if (viewopt_header(vo, h, sizeof h, nytp_calltree_ticks_per_sec(t)))
        nytp_out_printf(out, "# %s\n", h);
}

/* ---- the command ---------------------------------------------------------- */

struct calls_opts {
    bool by_calls, stable, strict, verbose;
    viewopt vo;
    const char *output;
};

enum { OPT_CALLS = 256, OPT_STABLE, OPT_STRICT };

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct calls_opts *o = ctx;
    if (viewopt_on_opt(&o->vo, opt, arg))
        return;
    switch (opt) {
    case OPT_CALLS: o->by_calls = true; break;
    case OPT_STABLE: o->stable = true; break;
    case OPT_STRICT: o->strict = true; break;
    case 'o': o->output = arg; break;
    case 'v': o->verbose = true; break;
    }
}

int cmd_calls(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"calls", no_argument, NULL, OPT_CALLS},
        {"stable", no_argument, NULL, OPT_STABLE},
        {"strict", no_argument, NULL, OPT_STRICT},
        VIEWOPT_LONGOPTS,
        {"output", required_argument, NULL, 'o'},
        {"verbose", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    struct calls_opts o = {0};
    viewopt_init(&o.vo);
    int first = cli_parse(argc, argv, "f:o:v", longopts, usage, on_opt, &o);
    cli_output_not_input(o.output, argc - first, argv + first, "nytprof.out");
    int rc;
    nytp_calltree *t = calls_load(argc - first, argv + first, o.strict, &o.vo, o.verbose, &rc);
    if (!t) {
        viewopt_release(&o.vo);
        return rc;
    }
    if (o.by_calls && nytp_calltree_sample_hz(t, NULL) > 0) {
        cli_error("--calls: the profile was sampled, its call counts are unknown");
        nytp_calltree_free(t);
        viewopt_release(&o.vo);
        return EXIT_USAGE;
    }
    nytp_out *out = cli_output_open(o.output);
    if (!out) {
        nytp_calltree_free(t);
        viewopt_release(&o.vo);
        return EXIT_BAD_INPUT;
    }
    if (o.verbose)
        cli_note("writing the call paths to %s", o.output && strcmp(o.output, "-") ? o.output : "standard output");
    calls_write_header(out, &o.vo, t);
    int st = calls_write_collapsed(out, t, o.by_calls, o.stable);
    nytp_calltree_free(t);
    viewopt_release(&o.vo);
    return cli_output_finish(out, o.output, st);
}

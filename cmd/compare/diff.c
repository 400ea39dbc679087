/* diff.c — 'nytp diff': what got slower or faster between two profiles,
 * or between two sets of runs, as tables, JSON or a differential flame
 * graph, and a check for CI (--fail-above).  The options, the loading of
 * each run (and of the call trees for --svg) and the command; the rows
 * come from compare.c, their order and the check from diff_compare.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "diff.h"
#include "diff_impl.h"
#include "dump_data.h"
#include "flame_diff.h"
#include "flame_svg.h"
#include "fmt.h"
#include "export.h"
#include "nytp/calltree.h"
#include "perl_config.h"
#include "stats.h"
#include "term.h"

static const char usage[] =
    "usage: nytp diff [options] BASE NEW\n"
    "       nytp diff [options] BASE... -- NEW...\n"
    "\n"
    "Compare two NYTProf profiles, or runs of a program before and after a\n"
    "change: the subs whose exclusive time changed most (change, centre of\n"
    "each side, calls and inclusive time before and after), then the lines\n"
    "and the files.  With several files a side (separated by '--') each is a\n"
    "run: the centre of a side is the median of its runs, and each change is\n"
    "tested against the runs' noise (Welch's t-test on the logs; '~' marks a\n"
    "change that is not significant, and never fails --fail-above).  Subs are\n"
    "matched by name and files by their path relative to where code was\n"
    "loaded from (@INC, the program's directory), so that two checkouts of one\n"
    "program match; string evals by where they ran.  What runs on one side\n"
    "only is listed as added or removed.\n"
    "\n"
    "  --by=WHAT            compare 'time' (the default), 'statements' executed\n"
    "                       or 'calls': counts are exact, the same on any machine\n"
    "                       (not of a sampled profile: its counts are unknown)\n"
    "  --fail-above=PCT     exit with status 3 when the total, or a sub above\n"
    "                       --min-time, grew by more than PCT percent (and, with\n"
    "                       several runs a side, significantly); all runs\n"
    "                       traced or all sampled, else a usage error\n"
    "  --min-time=MIN       subs that --fail-above checks: above MIN on either\n"
    "                       side, as seconds (0.01), with a unit (5ms, 200us) or\n"
    "                       a share of BASE's total (2%, for every --by); default 1%\n"
    "  --alpha=P            significance level of the test (default 0.05)\n"
    "  --normalize          scale every run by how fast it ran against BASE as a\n"
    "                       whole (the middle half of its subs' ratios), so\n"
    "                       that a faster or slower machine, or a run that did\n"
    "                       more of everything, does not show as a change\n"
    "  --sum                the files of a side are one run, added up (the\n"
    "                       processes of a program that forks)\n"
    "  --strip=PREFIX       also make file names relative to PREFIX (repeatable)\n"
    "  --map=OLD=NEW        BASE's files under OLD are NEW's under NEW (repeatable)\n"
    "  -n, --count=N        rows per table (default 20; 0: all)\n"
    "  --json               one JSON document instead of tables\n"
    "  --svg                a differential flame graph: frames sized by NEW,\n"
    "                       red where slower than BASE, blue where faster, grey\n"
    "                       (several runs a side) where the sub's change is not\n"
    "                       significant (a side profiled with calls=0: its\n"
    "                       call-site paths)\n"
    "  --title=TEXT         the flame graph's title\n"
    VIEWOPT_USAGE
    "                    (each run's subs get the times of its view, before\n"
    "                    they are compared; the first line, JSON 'view', and\n"
    "                    the SVG's subtitle say what each side left out)\n"
    "  --strict             a truncated profile is an error (exit 1)\n"
    "  -f, --file=FILE      a profile, as if named where the operands begin: '-f\n"
    "                       BASE -f NEW' is 'BASE NEW'\n"
    "  -o, --output=FILE    write to FILE (atomically); a name ending in .svg\n"
    "                       implies --svg\n"
    "  -h, --help           this help\n"
    "\n"
    "The total is the statement time of each side (the subs' exclusive time\n"
    "when a side has no statement data).  Options may come anywhere; the first\n"
    "'--' separates BASE files from NEW files.  On a shared CI runner gate on\n"
    "--by=statements; see nytp-diff(1), CHECKING IN CI.\n"
    "Exit status: 0 ok, 1 bad input, 2 usage, 3 --fail-above found growth.\n";

enum { OPT_NORMALIZE = 256, OPT_JSON, OPT_SVG, OPT_TITLE, OPT_FAIL, OPT_MIN, OPT_STRICT, OPT_BY,
       OPT_ALPHA, OPT_SUM, OPT_STRIP, OPT_MAP };

/* The repeatable --strip and --map. */
typedef struct opt_list {
    const char **v;
    size_t n;
} opt_list;

typedef struct parse_ctx {
    struct diff_opts *o;
    opt_list strip, map;
    bool min_is_time;       /* --min-time was a time, not a share */
} parse_ctx;

static void push(opt_list *l, const char *arg)
{
    const char **v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        cli_usage_error("out of memory");
    l->v = v;
    l->v[l->n++] = arg;
}

/* "5ms", "0.2s", "200us", "100ns", "0.01" (seconds) or "2%". */
static void parse_min_time(parse_ctx *c, const char *arg)
{
    struct diff_opts *o = c->o;
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || !(v >= 0) || !isfinite(v))
        cli_usage_error("--min-time needs a time (0.01, 5ms, 200us) or a share (2%%), not '%s'",
                        arg);
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ns", 1e-9}};
    if (strcmp(end, "%") == 0) {
        o->min_pct = v;
        c->min_is_time = false;
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0) {
            o->min_time = v * units[i].scale;
            o->min_pct = -1;
            c->min_is_time = true;
            return;
        }
    cli_usage_error("--min-time needs a time (0.01, 5ms, 200us) or a share (2%%), not '%s'", arg);
}

static void on_opt(int opt, const char *arg, void *ctx)
{
    parse_ctx *c = ctx;
    struct diff_opts *o = c->o;
    char *end;
    if (viewopt_on_opt(&o->vo, opt, arg))
        return;
    switch (opt) {
    case OPT_NORMALIZE: o->c.normalize = true; break;
    case OPT_JSON: o->json = true; break;
    case OPT_SVG: o->svg = true; break;
    case OPT_TITLE: o->title = arg; break;
    case OPT_FAIL:
        o->fail_above = strtod(arg, &end);
        if (end == arg || (*end && strcmp(end, "%") != 0) || !(o->fail_above >= 0) ||
            !isfinite(o->fail_above))
            cli_usage_error("--fail-above needs a percentage (10 or 10%%), not '%s'", arg);
        break;
    case OPT_MIN: parse_min_time(c, arg); break;
    case OPT_STRICT: o->strict = true; break;
    case OPT_BY:
        if (strcmp(arg, "time") == 0 || strcmp(arg, "excl") == 0)
            o->c.by = CMP_BY_TIME;
        else if (strcmp(arg, "statements") == 0 || strcmp(arg, "stmts") == 0)
            o->c.by = CMP_BY_STATEMENTS;
        else if (strcmp(arg, "calls") == 0)
            o->c.by = CMP_BY_CALLS;
        else
            cli_usage_error("--by takes time, statements or calls, not '%s'", arg);
        break;
    case OPT_ALPHA:
        o->alpha = strtod(arg, &end);
        if (end == arg || *end || !(o->alpha > 0 && o->alpha < 1))
            cli_usage_error("--alpha needs a level between 0 and 1 (0.05), not '%s'", arg);
        break;
    case OPT_SUM: o->sum = true; break;
    case OPT_STRIP:
        if (!*arg)
            cli_usage_error("--strip needs a directory");
        push(&c->strip, arg);
        break;
    case OPT_MAP:
        if (arg[0] == '=' || !strchr(arg, '='))
            cli_usage_error("--map needs OLD=NEW (BASE's directory, then NEW's), not '%s'", arg);
        push(&c->map, arg);
        break;
    case 'n': o->n = cli_parse_count("-n", arg); break;
    case 'o': o->output = arg; break;
    }
}

/* ---- loading ----------------------------------------------------------------------- */

/* The call tree is fed in the same pass as the model (as 'nytp html'
 * does): a new input first closes the frames the last one left open. */
static int feed_chunk(void *ctx, const nytp_chunk *c)
{
    side *S = ctx;
    switch (c->tag) {
    case NYTP_TAG_SUB_RETURN:
    case NYTP_TAG_ATTRIBUTE:
        return nytp_calltree_add_chunk(S->own_t, c);
    case NYTP_TAG_VERSION:
        if (S->any_input && nytp_calltree_end_input(S->own_t) < 0)
            return NYTP_E_NOMEM;
        S->any_input = true;
        return NYTP_OK;
    default:
        return NYTP_OK;
    }
}

static int keep(diff *D, nytp_profile *p)
{
    nytp_profile **v = realloc(D->own, ((size_t)D->n_own + 1) * sizeof *v);
    if (!v) {
        nytp_profile_free(p);
        return NYTP_E_NOMEM;
    }
    D->own = v;
    D->own[D->n_own++] = p;
    return NYTP_OK;
}

/* One run of side k through the view (export_load_viewed, as html
 * --base reads its runs): its subs get the view's times, its filtered
 * paths go to the side's tree for the SVG (own_t, when not NULL). */
static nytp_profile *load_viewed(diff *D, int k, int nf, char **files, int *rc)
{
    return export_load_viewed(nf, files, D->o->strict, &D->o->vo, &D->vstats[k], D->s[k].own_t, rc);
}

/* The runs of side k: each file one run, or all of them one (--sum). */
static int load_side(diff *D, int k, bool tree)
{
    side *S = &D->s[k];
    nytp_error e = {0};
    if (tree) {
        if (nytp_calltree_new(&S->own_t, &e) < 0) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
        S->t = S->own_t;
    }
    S->nfiles = cli_unique_inputs(S->nfiles, S->files);
    int runs = D->o->sum ? 1 : S->nfiles;
    for (int i = 0; i < runs; i++) {
        int rc, nf = D->o->sum ? S->nfiles : 1;
        char **files = S->files + (D->o->sum ? 0 : i);
        nytp_profile *p = viewopt_active(&D->o->vo) ? load_viewed(D, k, nf, files, &rc)
                          : tree ? cli_load_profile_with(nf, files, D->o->strict, feed_chunk, S, &rc)
                                 : cli_load_profile(nf, files, D->o->strict, &rc);
        if (!p)
            return rc;
        if (p->counts_unknown)
            D->sampled[k] = true;
        else
            D->traced[k] = true;
        if (keep(D, p) < 0 || cmp_add_run(&D->C, k, p) < 0) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
    }
    if (tree && !viewopt_active(&D->o->vo) && nytp_calltree_end_input(S->own_t) < 0) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

/* The differential flame graph of the two sides' call trees. */
static int write_svg(diff *D, nytp_out *out)
{
    flame_diff_opts fdo = {.tree = {D->s[0].t, D->s[1].t}, .paths = D->C.paths,
                           .normalized = D->C.o.normalize, .cmp = &D->C, .alpha = D->o->alpha};
    for (int k = 0; k < 2; k++) {
        fdo.runs[k] = D->C.s[k].n;
        if (nytp_calltree_ticks_per_sec(D->s[k].t) <= 0)
            fdo.ticks_per_sec[k] = D->C.s[k].run[0]->ticks_per_sec;
    }
    /* --normalize: the median of NEW's runs' factors (one run: its own) */
    if (D->C.o.normalize) {
        double *f = malloc(((size_t)D->C.s[1].n + 1) * sizeof *f);
        if (!f)
            return NYTP_E_NOMEM;
        memcpy(f, D->C.s[1].scale, D->C.s[1].n * sizeof *f);
        fdo.new_scale = stats_median(f, D->C.s[1].n);
        free(f);
    }
    flame_diff *fd;
    int st = flame_diff_new(&fd, &fdo);
    if (st == NYTP_OK) {
        flame_svg_opts fo;
        flame_svg_opts_init(&fo);
        fo.title = D->o->title ? D->o->title : "Differential flame graph";
        flame_diff_style(fd, &fo);
        char note[3000];
        if (*D->view_line) {
            snprintf(note, sizeof note, "%s%s%s", D->view_line, fo.subtitle_note ? "; " : "",
                     fo.subtitle_note ? fo.subtitle_note : "");
            fo.subtitle_note = note;
        }
        st = flame_svg_write(out, D->s[1].t, &fo);
    }
    flame_diff_free(fd);
    return st;
}

int diff_write_memory(nytp_profile *base, nytp_profile *new_, const nytp_calltree *tbase,
                      const nytp_calltree *tnew)
{
    static const char *inc[] = {"/usr/share/perl5", "/usr/lib"};
    static char *names[] = {"base", "new"};
    int st = NYTP_OK;
    for (int variant = 0; variant < 3 && st == NYTP_OK; variant++) {
        struct diff_opts o = {.n = variant ? 0 : 20, .fail_above = 5, .min_pct = 1, .alpha = 0.05};
        o.c.normalize = variant == 1;
        o.c.by = variant == 2 ? CMP_BY_STATEMENTS : CMP_BY_TIME;
        diff D;
        memset(&D, 0, sizeof D);
        D.o = &o;
        cmp_init(&D.C, &o.c);
        D.s[0] = (side){.files = names, .nfiles = 1, .t = tbase};
        D.s[1] = (side){.files = names + 1, .nfiles = 1, .t = tnew};
        D.names.inc = inc;
        D.names.n_inc = 2;
        D.names.perl_version = "5.36.0";
        D.t.width = 80;
        D.t.colour = true;
        st = cmp_add_run(&D.C, 0, base);
        if (st == NYTP_OK)
            st = cmp_add_run(&D.C, 1, new_);
        if (st == NYTP_OK)
            st = diff_compute(&D);
        nytp_out *out;
        nytp_error e = {0};
        if (st == NYTP_OK && nytp_out_open_mem(&out, &e) == NYTP_OK) {
            double min = diff_min_time(&D);
            diff_write_json(&D, out, min);
            st = diff_write_fitted(&D, out);
            if (st == NYTP_OK && tbase && tnew)
                st = write_svg(&D, out);
            nytp_out_abort(out);
        }
        if (st == NYTP_OK && D.oom)
            st = NYTP_E_NOMEM;
        diff_free(&D);
    }
    return st;
}

int cmd_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"normalize", no_argument, NULL, OPT_NORMALIZE},
        {"json", no_argument, NULL, OPT_JSON},
        {"svg", no_argument, NULL, OPT_SVG},
        {"title", required_argument, NULL, OPT_TITLE},
        {"fail-above", required_argument, NULL, OPT_FAIL},
        {"min-time", required_argument, NULL, OPT_MIN},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"by", required_argument, NULL, OPT_BY},
        {"alpha", required_argument, NULL, OPT_ALPHA},
        {"sum", no_argument, NULL, OPT_SUM},
        {"strip", required_argument, NULL, OPT_STRIP},
        {"map", required_argument, NULL, OPT_MAP},
        {"count", required_argument, NULL, 'n'},
        {"output", required_argument, NULL, 'o'},
        VIEWOPT_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct diff_opts o = {.n = 20, .fail_above = -1, .min_pct = 1, .alpha = 0.05};
    viewopt_init(&o.vo);
    parse_ctx pc = {.o = &o};
    /* getopt drops the "--" it stops at and moves the operands before it
     * behind it, so the first "--" is swapped for a marker that getopt
     * takes for an operand and whose place among the operands is found
     * again by its address. */
    static char separator[] = "";
    int dashes = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            argv[i] = separator;
            dashes = i;
            break;
        }
    int first = cli_parse(argc, argv, "f:n:o:", longopts, usage, on_opt, &pc);
    if (cli_names_svg(o.output))
        o.svg = true;
    if (o.svg && o.json)
        cli_usage_error("--svg and --json are two outputs; choose one");
    if (o.title && !o.svg)
        cli_usage_error("--title goes with --svg");
    if (pc.min_is_time && o.c.by != CMP_BY_TIME)
        cli_usage_error("--min-time with --by=%s takes a share of the total (1%%), not a time",
                        o.c.by == CMP_BY_CALLS ? "calls" : "statements");
    o.c.paths = (pathmap_opts){.strip = pc.strip.v, .n_strip = pc.strip.n, .map = pc.map.v,
                               .n_map = pc.map.n};

    diff D;
    memset(&D, 0, sizeof D);
    D.o = &o;
    cmp_init(&D.C, &o.c);
    char **ops = argv + first;
    int nops = argc - first;
    if (dashes) {
        int at = -1;
        for (int i = 0; i < nops; i++)
            if (ops[i] == separator)
                at = i;
        if (at < 0)
            cli_usage_error("'--' went missing (is it the value of an option?)");
        D.s[0].files = ops;
        D.s[0].nfiles = at;
        D.s[1].files = ops + at + 1;
        D.s[1].nfiles = nops - at - 1;
        if (!D.s[0].nfiles || !D.s[1].nfiles)
            cli_usage_error("give BASE files before '--' and NEW files after it");
    } else {
        if (nops != 2)
            cli_usage_error("give two profiles, BASE and NEW, or 'BASE... -- NEW...'");
        D.s[0].files = ops;
        D.s[0].nfiles = 1;
        D.s[1].files = ops + 1;
        D.s[1].nfiles = 1;
    }

    int stdin_uses = 0;
    for (int i = 0; i < nops; i++)
        stdin_uses += strcmp(ops[i], "-") == 0;
    if (stdin_uses > 1)
        cli_usage_error("standard input ('-') can be read only once");
    cli_output_not_input(o.output, nops, ops, NULL);

    int rc = EXIT_OK;
    for (int k = 0; k < 2 && rc == EXIT_OK; k++)
        rc = load_side(&D, k, o.svg);
    /* Runs sampled and runs traced, on either side or across them */
    bool mixed = (D.sampled[0] || D.sampled[1]) && (D.traced[0] || D.traced[1]);
    static const char *const mode[2][2] = {{"", "traced"}, {"sampled", "sampled and traced"}};
    if (rc == EXIT_OK && mixed)
        cli_warn("BASE was %s and NEW %s: the sampled times are estimates, and xsubs "
                 "have none of their own there (their callers have it)",
                 mode[D.sampled[0]][D.traced[0]], mode[D.sampled[1]][D.traced[1]]);
    /* What a gate across modes would judge is the profiling: a traced
     * run's time holds the profiler's cost at every statement and call, a
     * sampled run's does not (a sub 70 % "slower" traced than sampled). */
    if (rc == EXIT_OK && mixed && o.fail_above >= 0)
        cli_usage_error("--fail-above: BASE was %s and NEW %s; a traced run's times hold the "
                        "profiler's cost at every statement and call, a sampled run's do not, "
                        "so the change would be the profiling, not the code: gate on runs "
                        "profiled the same way",
                        mode[D.sampled[0]][D.traced[0]], mode[D.sampled[1]][D.traced[1]]);
    if (rc == EXIT_OK && o.c.by != CMP_BY_TIME && !diff_counts_known(&D))
        cli_usage_error("--by=%s: %s was sampled (sample=HZ), its counts are unknown; compare "
                        "times, or profiles traced without sampling",
                        o.c.by == CMP_BY_CALLS ? "calls" : "statements",
                        D.sampled[0] ? "BASE" : "NEW");
    for (int k = 0; k < 2 && o.svg && rc == EXIT_OK; k++) {
        nytp_calltree_stats cs;
        nytp_calltree_get_stats(D.s[k].t, &cs);
        if (cs.returns || viewopt_active(&o.vo)) /* a view has the sites' paths already */
            continue;
        /* as calls and flame do: the caller;called paths of its call sites */
        for (uint32_t i = 0; i < D.C.s[k].n && rc == EXIT_OK; i++)
            if (nytp_calltree_add_sites(D.s[k].own_t, D.C.s[k].run[i]) < 0) {
                cli_error("out of memory");
                rc = EXIT_BAD_INPUT;
            }
        if (D.s[k].nfiles == 1)
            cli_warn("%s %s: " CLI_NO_RETURNS, k ? "NEW" : "BASE", D.s[k].files[0]);
        else
            cli_warn("%s: " CLI_NO_RETURNS, k ? "NEW" : "BASE");
    }
    char *storage = NULL;
    if (rc == EXIT_OK) {
        D.names.inc = dump_data_split_dirs(NYTP_PERL_INC, &D.names.n_inc, &storage);
        D.names.perl_version = NYTP_PERL_VERSION;
        if (!D.names.inc || diff_compute(&D) < 0) {
            cli_error("out of memory");
            rc = EXIT_BAD_INPUT;
        }
    }
    if (rc != EXIT_OK) {
        free((void *)D.names.inc);
        free(storage);
        diff_free(&D);
        free(pc.strip.v);
        free(pc.map.v);
        return rc;
    }
    if (viewopt_active(&o.vo)) {
        char a[1100], b[1100];
        viewopt_header_of(&o.vo, &D.vstats[0], a, sizeof a, D.C.s[0].run[0]->ticks_per_sec);
        viewopt_header_of(&o.vo, &D.vstats[1], b, sizeof b, D.C.s[1].run[0]->ticks_per_sec);
        snprintf(D.view_line, sizeof D.view_line, "BASE: %s; NEW: %s", a, b);
    }
    double min = diff_min_time(&D);
    term_init(&D.t, o.output);
    nytp_out *out = cli_output_open(o.output);
    if (!out) {
        rc = EXIT_BAD_INPUT;
    } else {
        int st = NYTP_OK;
        if (o.svg)
            st = write_svg(&D, out);
        else if (o.json)
            diff_write_json(&D, out, min);
        else if (*D.view_line && nytp_out_printf(out, "%s\n", D.view_line) < 0)
            st = nytp_out_error(out)->status;
        else
            st = diff_write_fitted(&D, out);
        if (st == NYTP_OK && D.oom)
            st = NYTP_E_NOMEM;
        const nytp_error *e = nytp_out_error(out);
        if (st == NYTP_OK && e->status)
            st = e->status;
        rc = cli_output_finish(out, o.output, st);
    }
    if (rc == EXIT_OK && o.fail_above >= 0) {
        diff_report_growth(&D, min);
        bool grew = diff_total_grew(&D);
        for (uint32_t i = 0; i < D.C.subs.keys.n && !grew; i++)
            grew = diff_sub_grew(&D, i, min);
        if (grew)
            rc = EXIT_GREW;
    }
    free((void *)D.names.inc);
    free(storage);
    diff_free(&D);
    free(pc.strip.v);
    free(pc.map.v);
    viewopt_release(&o.vo);
    return rc;
}

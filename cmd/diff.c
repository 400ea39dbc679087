/* diff.c — 'nytp diff': what got slower or faster between two profiles
 * (or two sets of profiles), as tables, JSON or a differential flame
 * graph, and a check for CI (--fail-above).  A client of the model (subs,
 * lines, files) and, for the flame graph, of the call tree. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "diff.h"
#include "diff_impl.h"
#include "dump_data.h"
#include "flame_svg.h"
#include "fmt.h"
#include "nytp/calltree.h"
#include "perl_config.h"
#include "term.h"

static const char usage[] =
    "usage: nytp diff [options] BASE NEW\n"
    "       nytp diff [options] BASE... -- NEW...\n"
    "\n"
    "Compare two NYTProf profiles: the subs whose exclusive time changed most\n"
    "(time and share of change, calls and inclusive time before and after),\n"
    "then the lines and the files.  Several files on a side (separated by\n"
    "'--') add up, as 'nytp html' adds them.  Subs are matched by name, lines\n"
    "by file name and line, string evals by where they ran (sibling evals on\n"
    "one line summed); what runs on one side only is listed as added or\n"
    "removed.\n"
    "\n"
    "  --normalize          scale NEW to the total of BASE, so that runs of\n"
    "                       different length compare by share of the time\n"
    "  -n, --count=N        rows per table (default 20; 0: all)\n"
    "  --json               one JSON document instead of tables\n"
    "  --svg                a differential flame graph: frames sized by NEW,\n"
    "                       red where slower than BASE, blue where faster (a\n"
    "                       side profiled with calls=0: its call-site paths)\n"
    "  --title=TEXT         the flame graph's title\n"
    "  --fail-above=PCT     exit with status 3 when the total, or a sub whose time\n"
    "                       is above --min-time, grew by more than PCT percent\n"
    "  --min-time=TIME      subs that --fail-above checks: above TIME on either\n"
    "                       side, as seconds (0.01), with a unit (5ms, 200us) or\n"
    "                       a share of BASE's total (2%); default 1%\n"
    "  --strict             a truncated profile is an error (exit 1)\n"
    "  -f, --file=FILE      a profile, as if named where the operands begin: '-f\n"
    "                       BASE -f NEW' is 'BASE NEW'\n"
    "  -o, --output=FILE    write to FILE (atomically); a name ending in .svg\n"
    "                       implies --svg\n"
    "  -h, --help           this help\n"
    "\n"
    "The total is the statement time of each side (the subs' exclusive time\n"
    "when a side has no statement data).  Options may come anywhere; the first\n"
    "'--' separates BASE files from NEW files.\n"
    "Exit status: 0 ok, 1 bad input, 2 usage, 3 --fail-above found growth.\n";


enum { OPT_NORMALIZE = 256, OPT_JSON, OPT_SVG, OPT_TITLE, OPT_FAIL, OPT_MIN, OPT_STRICT };

/* "5ms", "0.2s", "200us", "100ns", "0.01" (seconds) or "2%". */
static void parse_min_time(struct diff_opts *o, const char *arg)
{
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
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0) {
            o->min_time = v * units[i].scale;
            o->min_pct = -1;
            return;
        }
    cli_usage_error("--min-time needs a time (0.01, 5ms, 200us) or a share (2%%), not '%s'", arg);
}

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct diff_opts *o = ctx;
    char *end;
    switch (opt) {
    case OPT_NORMALIZE: o->normalize = true; break;
    case OPT_JSON: o->json = true; break;
    case OPT_SVG: o->svg = true; break;
    case OPT_TITLE: o->title = arg; break;
    case OPT_FAIL:
        o->fail_above = strtod(arg, &end);
        if (end == arg || (*end && strcmp(end, "%") != 0) || !(o->fail_above >= 0) ||
            !isfinite(o->fail_above))
            cli_usage_error("--fail-above needs a percentage (10 or 10%%), not '%s'", arg);
        break;
    case OPT_MIN: parse_min_time(o, arg); break;
    case OPT_STRICT: o->strict = true; break;
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

static int load_side(side *S, bool strict, bool tree)
{
    int rc;
    nytp_error e = {0};
    if (tree) {
        if (nytp_calltree_new(&S->own_t, &e) < 0) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
        S->t = S->own_t;
        S->p = cli_load_profile_with(S->nfiles, S->files, strict, feed_chunk, S, &rc);
        if (S->p && nytp_calltree_end_input(S->own_t) < 0) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
    } else {
        S->p = cli_load_profile(S->nfiles, S->files, strict, &rc);
    }
    return S->p ? EXIT_OK : rc;
}

int diff_write_memory(nytp_profile *base, nytp_profile *new_, const nytp_calltree *tbase,
                      const nytp_calltree *tnew)
{
    static const char *inc[] = {"/usr/share/perl5", "/usr/lib"};
    static char *names[] = {"base", "new"};
    int st = NYTP_OK;
    for (int normalize = 0; normalize < 2 && st == NYTP_OK; normalize++) {
        struct diff_opts o = {.n = normalize ? 0 : 20, .fail_above = 5, .min_pct = 1,
                              .normalize = normalize};
        diff D;
        memset(&D, 0, sizeof D);
        D.o = &o;
        D.borrowed = true;
        D.s[0] = (side){.files = names, .nfiles = 1, .p = base, .t = tbase};
        D.s[1] = (side){.files = names + 1, .nfiles = 1, .p = new_, .t = tnew};
        D.names.inc = inc;
        D.names.n_inc = 2;
        D.names.perl_version = "5.36.0";
        D.t.width = 80;
        D.t.colour = true;
        st = diff_compute(&D);
        nytp_out *out;
        nytp_error e = {0};
        if (st == NYTP_OK && nytp_out_open_mem(&out, &e) == NYTP_OK) {
            double min = diff_min_time(&D);
            diff_write_json(&D, out, min);
            st = diff_write_fitted(&D, out, min);
            if (st == NYTP_OK && tbase && tnew)
                st = diff_write_svg(&D, out);
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
        {"count", required_argument, NULL, 'n'},
        {"output", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    struct diff_opts o = {.n = 20, .fail_above = -1, .min_pct = 1};
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
    int first = cli_parse(argc, argv, "f:n:o:", longopts, usage, on_opt, &o);
    if (cli_names_svg(o.output))
        o.svg = true;
    if (o.svg && o.json)
        cli_usage_error("--svg and --json are two outputs; choose one");
    if (o.title && !o.svg)
        cli_usage_error("--title goes with --svg");

    diff D;
    memset(&D, 0, sizeof D);
    D.o = &o;
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
        rc = load_side(&D.s[k], o.strict, o.svg);
    if (rc != EXIT_OK) {
        diff_free(&D);
        return rc;
    }
    for (int k = 0; k < 2 && o.svg; k++) {
        nytp_calltree_stats cs;
        nytp_calltree_get_stats(D.s[k].t, &cs);
        if (cs.returns)
            continue;
        /* as calls and flame do: the caller;called paths of its call sites */
        if (!D.s[k].own_t || nytp_calltree_add_sites(D.s[k].own_t, D.s[k].p) < 0) {
            cli_error("out of memory");
            diff_free(&D);
            return EXIT_BAD_INPUT;
        }
        if (D.s[k].nfiles == 1)
            cli_warn("%s %s: " CLI_NO_RETURNS, k ? "NEW" : "BASE", D.s[k].files[0]);
        else
            cli_warn("%s: " CLI_NO_RETURNS, k ? "NEW" : "BASE");
    }
    char *storage = NULL;
    D.names.inc = dump_data_split_dirs(NYTP_PERL_INC, &D.names.n_inc, &storage);
    D.names.perl_version = NYTP_PERL_VERSION;
    if (!D.names.inc || diff_compute(&D) < 0) {
        cli_error("out of memory");
        free((void *)D.names.inc);
        free(storage);
        diff_free(&D);
        return EXIT_BAD_INPUT;
    }
    double min = diff_min_time(&D);
    term_init(&D.t, o.output);
    nytp_out *out = cli_output_open(o.output);
    if (!out) {
        rc = EXIT_BAD_INPUT;
    } else {
        int st = NYTP_OK;
        if (o.svg)
            st = diff_write_svg(&D, out);
        else if (o.json)
            diff_write_json(&D, out, min);
        else
            st = diff_write_fitted(&D, out, min);
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
        for (uint32_t i = 0; i < D.subs.n && !grew; i++)
            grew = diff_sub_grew(&D, &D.sub[i], min);
        if (grew)
            rc = EXIT_GREW;
    }
    free((void *)D.names.inc);
    free(storage);
    diff_free(&D);
    return rc;
}

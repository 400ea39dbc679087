/* flame.c — 'nytp flame': collapsed stacks for flame graph tools, or an
 * interactive SVG flame graph drawn by nytp itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "cli.h"
#include "commands.h"
#include "flame_svg.h"

static const char usage[] =
    "usage: nytp flame [--calls] " VIEWOPT_SYNOPSIS "\n"
    "                  [--strict] [-o FILE] [FILE...]\n"
    "       nytp flame --svg [SVG options] [view options] [-o NAME.svg] [FILE...]\n"
    "\n"
    "Flame graphs of the call tree of NYTProf profiles (default FILE:\n"
    "nytprof.out; '-' reads standard input; several files add up).  Without\n"
    "--svg, print the collapsed stacks of 'nytp calls' ('sub;sub;sub VALUE', with\n"
    "';', line feed, carriage return and '%' in names as %3B, %0A, %0D, %25),\n"
    "for flame graph tools:\n"
    "    nytp flame nytprof.out | flamegraph.pl > flame.svg\n"
    "With --svg, or an output file whose name ends in .svg, draw one\n"
    "self-contained interactive SVG: frames sized by inclusive time, tooltips,\n"
    "click to zoom, search (Ctrl-F) with the share matched.\n"
    "A profile without sub return events (calls=0) gives the caller;called paths\n"
    "of its call sites, with a warning.\n"
    "\n"
    "  --svg               draw the SVG (to standard output without -o)\n"
    "  --calls             size frames by calls (collapsed: print call counts)\n"
    "  --title=TEXT        the SVG's title (default: Flame Graph)\n"
    "  --width=PIXELS      the SVG's width (default: 1200)\n"
    "  --minwidth=PIXELS   merge frames narrower than this (default: 0.5; 0 draws\n"
    "                      every frame)\n"
    "  --inverted          icicle graph: callers at the top\n"
    "  --filter=REGEX      the same as --focus=REGEX (kept for older scripts)\n"
    "  --link-template=URL make frames links: %s in URL becomes the sub name,\n"
    "                      percent-encoded, %% a '%'\n"
    "  --stable            collapsed output: sort the lines\n"
    VIEWOPT_USAGE
    "  --strict            a truncated profile is an error (exit 1)\n"
    "  -f, --file=FILE     read FILE (the same as naming it)\n"
    "  -o, --output=FILE   write to FILE (atomically) instead of standard output;\n"
    "                      --out is the same\n"
    "  -h, --help          this help\n"
    "\n"
    "With --focus, --ignore or --hide, the collapsed output's first line\n"
    "('# ...') and the SVG's subtitle say what was left out and the share of\n"
    "the time in subs shown.  A 'file:RE' pattern matches a frame by the file\n"
    "its sub is defined in, as in nytp top and pprof.\n"
    "Exit status: 0 ok (a truncated file only warns), 1 bad input, 2 usage.\n";

struct flame_opts {
    bool svg, stable, strict;
    viewopt vo;
    bool svg_only;          /* an option that only the SVG uses was given */
    const char *output;
    flame_svg_opts so;
};

enum {
    OPT_SVG = 256,
    OPT_CALLS,
    OPT_TITLE,
    OPT_WIDTH,
    OPT_MINWIDTH,
    OPT_INVERTED,
    OPT_FILTER,
    OPT_LINK,
    OPT_STABLE,
    OPT_STRICT
};

static double parse_pixels(const char *opt, const char *arg)
{
    char *end;
    double v = strtod(arg, &end);
    if (!*arg || *end || !(v >= 0) || v > 1e6)
        cli_usage_error("%s needs a number of pixels, not '%s'", opt, arg);
    return v;
}

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct flame_opts *o = ctx;
    if (viewopt_on_opt(&o->vo, opt, arg))
        return;
    switch (opt) {
    case OPT_SVG: o->svg = true; break;
    case OPT_CALLS: o->so.by_calls = true; break;
    case OPT_TITLE: o->so.title = arg; o->svg_only = true; break;
    case OPT_WIDTH: {
        unsigned long w = cli_parse_count("--width", arg);
        if (w < 100 || w > 100000)
            cli_usage_error("--width must be between 100 and 100000 pixels, not %s", arg);
        o->so.width = (unsigned)w;
        o->svg_only = true;
        break;
    }
    case OPT_MINWIDTH:
        o->so.minwidth = parse_pixels("--minwidth", arg);
        o->svg_only = true;
        break;
    case OPT_INVERTED: o->so.inverted = true; o->svg_only = true; break;
    case OPT_FILTER: /* older than the view: its --focus */
        viewopt_on_opt(&o->vo, OPT_VIEW_FOCUS, arg);
        o->svg_only = true;
        break;
    case OPT_LINK: o->so.link_template = arg; o->svg_only = true; break;
    case OPT_STABLE: o->stable = true; break;
    case OPT_STRICT: o->strict = true; break;
    case 'o': o->output = arg; break;
    }
}

int cmd_flame(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"svg", no_argument, NULL, OPT_SVG},
        {"calls", no_argument, NULL, OPT_CALLS},
        {"title", required_argument, NULL, OPT_TITLE},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"minwidth", required_argument, NULL, OPT_MINWIDTH},
        {"inverted", no_argument, NULL, OPT_INVERTED},
        {"filter", required_argument, NULL, OPT_FILTER},
        {"link-template", required_argument, NULL, OPT_LINK},
        {"stable", no_argument, NULL, OPT_STABLE},
        {"strict", no_argument, NULL, OPT_STRICT},
        VIEWOPT_LONGOPTS,
        {"output", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    struct flame_opts o = {0};
    viewopt_init(&o.vo);
    flame_svg_opts_init(&o.so);
    int first = cli_parse(argc, argv, "f:o:", longopts, usage, on_opt, &o);
    cli_output_not_input(o.output, argc - first, argv + first, "nytprof.out");
    if (cli_names_svg(o.output))
        o.svg = true;
    if (o.svg_only && !o.svg)
        cli_usage_error("--title, --width, --minwidth, --inverted, --filter and --link-template "
                        "go with --svg");
    if (o.svg && o.stable)
        cli_usage_error("--stable sorts the collapsed lines; it does not go with --svg");

    int rc;
    nytp_calltree *t = calls_load(argc - first, argv + first, o.strict, &o.vo, false, &rc);
    if (!t) {
        viewopt_release(&o.vo);
        return rc;
    }
    uint64_t samples;
    double hz = nytp_calltree_sample_hz(t, &samples);
    char note[1200] = "", left_out[1024];
    viewopt_header(&o.vo, left_out, sizeof left_out, nytp_calltree_ticks_per_sec(t));
    if (hz > 0) {
        if (o.so.by_calls) {
            cli_error("--calls: the profile was sampled, its call counts are unknown");
            nytp_calltree_free(t);
            viewopt_release(&o.vo);
            return EXIT_USAGE;
        }
        o.so.counts_unknown = true;
        snprintf(note, sizeof note, "sampled at %.0f Hz, %llu samples%s%s", hz,
                 (unsigned long long)samples, *left_out ? "; " : "", left_out);
    } else if (*left_out) {
        snprintf(note, sizeof note, "%s", left_out);
    }
    if (*note)
        o.so.subtitle_note = note;
    nytp_out *out = cli_output_open(o.output);
    if (!out) {
        nytp_calltree_free(t);
        viewopt_release(&o.vo);
        return EXIT_BAD_INPUT;
    }
    if (!o.svg)
        calls_write_header(out, &o.vo, t);
    int st = o.svg ? flame_svg_write(out, t, &o.so)
                   : calls_write_collapsed(out, t, o.so.by_calls, o.stable);
    nytp_calltree_free(t);
    viewopt_release(&o.vo);
    return cli_output_finish(out, o.output, st);
}

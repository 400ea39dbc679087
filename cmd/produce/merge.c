/* merge.c — 'nytp merge': join profiles of one program into one file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "nytp/merge.h"

static const char usage[] =
    "usage: nytp merge [-o OUT] [-v] [--strict] [--compress=N] FILE...\n"
    "\n"
    "Join profiles of the same program (the files of a program that forked,\n"
    "of the workers of a server, of many runs) into one NYTProf v5 file.\n"
    "Files are matched by name, string evals by where they ran; line times\n"
    "and counts and sub call arcs are summed, call events kept, source lines\n"
    "kept once.  Inputs are read one at a time, in the order given.\n"
    "\n"
    "  -f, --file=FILE   merge FILE (the same as naming it)\n"
    "  -o, --output=OUT  write OUT (default nytprof-merged.out; '-' is standard\n"
    "                    output); written atomically, nothing is left on error;\n"
    "                    --out is the same\n"
    "  --strict          a truncated input is an error (default: a warning, and\n"
    "                    everything before the cut is merged)\n"
    "  --compress=N      deflate level of the output, 0 (none) to 9 (default 6)\n"
    "  -v, --verbose     say what is being done on standard error (no progress\n"
    "                    line then)\n"
    "  -h, --help        this help\n"
    "\n"
    "Inputs that disagree on perl_version, nv_size, ticks_per_sec, clock_id,\n"
    "xs_version or PL_perldb get a warning; a different major format version\n"
    "is refused.  The output is deflated with ISA-L where the build has it\n"
    "(levels 1, 2-6 and 7-9 are its levels 1, 2 and 3; at 6, a third of\n"
    "zlib's CPU time for a file about 55% larger), else zlib; NYTP_DEFLATE=zlib\n"
    "chooses zlib.\n"
    "Exit status: 0 ok, 1 bad input, 2 usage.\n";

enum { OPT_STRICT = 256, OPT_COMPRESS };

struct merge_opts {
    const char *output;
    bool strict, verbose;
    int level;
};

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct merge_opts *o = ctx;
    switch (opt) {
    case 'o': o->output = arg; break;
    case OPT_STRICT: o->strict = true; break;
    case 'v': o->verbose = true; break;
    case OPT_COMPRESS: {
        unsigned long v = cli_parse_count("--compress", arg);
        if (v > 9)
            cli_usage_error("--compress takes a level from 0 to 9, not %lu", v);
        o->level = (int)v;
        break;
    }
    default: break;
    }
}

static void merge_warning(void *ctx, const nytp_error *w)
{
    (void)ctx;
    cli_warn_error(w);
}

int cmd_merge(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"compress", required_argument, NULL, OPT_COMPRESS},
        {"verbose", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    struct merge_opts o = {"nytprof-merged.out", false, false, NYTP_DEFAULT_COMPRESSION};
    int first = cli_parse(argc, argv, "f:o:v", longopts, usage, on_opt, &o);
    cli_output_not_input(o.output, argc - first, argv + first, "nytprof.out");
    if (first >= argc)
        cli_usage_error("needs at least one profile to merge");
    argc = first + cli_unique_inputs(argc - first, argv + first);
    if (!*o.output)
        cli_usage_error("-o needs a file name");

    nytp_out *out = cli_output_open(o.output);
    if (!out)
        return EXIT_BAD_INPUT;
    nytp_error e = {0};
    /* The deflater: NYTP_DEFLATE=zlib|isal, else ISA-L where the build has
     * it, else zlib (deflating is most of a merge's CPU time with zlib). */
    const char *engine = getenv("NYTP_DEFLATE");
    if (engine && *engine) {
        if (nytp_out_set_deflater(out, engine, &e) < 0) {
            cli_error("NYTP_DEFLATE: %s", e.msg);
            nytp_out_abort(out);
            return EXIT_USAGE;
        }
    } else if (nytp_out_set_deflater(out, "isal", &e) < 0) {
        nytp_out_set_deflater(out, "zlib", &e);
    }
    nytp_writer *w;
    if (nytp_writer_open(&w, out, &e) < 0) {
        cli_error("%s", e.msg);
        return EXIT_BAD_INPUT;
    }
    nytp_merge_opts mo = {merge_warning, NULL, o.level};
    nytp_merge *m;
    if (nytp_merge_new(&m, w, &mo, &e) < 0) {
        cli_error("%s: %s", o.output, e.msg);
        nytp_merge_free(m);
        nytp_writer_abort(w);
        return EXIT_BAD_INPUT;
    }
    int rc = EXIT_OK;
    cli_check_runs(argc - first, argv + first);
    /* a merge of large inputs takes a while: progress on a terminal */
    atomic_uint done = 0, total = (unsigned)(argc - first);
    cli_progress pg;
    memset(&pg, 0, sizeof pg);
    if (!o.verbose) { /* -v says it line by line instead */
        cli_progress_start(&pg, "merging");
        cli_progress_phase(&pg, "merging", &done, &total, "files");
    }
    const char *shown_out = strcmp(o.output, "-") ? o.output : "standard output";
    for (int i = first; i < argc && rc == EXIT_OK; i++) {
        const char *file = argv[i];
        if (o.verbose)
            cli_note("merging %s (%d of %d)", strcmp(file, "-") ? file : "(standard input)", i - first + 1,
                     argc - first);
        int st = nytp_merge_add(m, file, &e);
        atomic_fetch_add(&done, 1);
        if (st < 0)
            cli_progress_end(&pg); /* the message below goes on a clean line */
        if (st == NYTP_E_TRUNCATED) {
            size_t n = strlen(e.msg);
            snprintf(e.msg + n, sizeof e.msg - n, "%s",
                     o.strict ? "" : "; merged everything before the cut");
            cli_report(file, &e, !o.strict);
            if (o.strict)
                rc = EXIT_BAD_INPUT;
        } else if (st < 0) {
            const nytp_error *we = nytp_writer_error(w);
            if (we && we->status) /* the output failed, not the input */
                cli_error("%s: %s", o.output, we->msg);
            else
                cli_report(file, &e, false);
            rc = EXIT_BAD_INPUT;
        }
    }
    if (o.verbose) {
        if (rc == EXIT_OK)
            cli_note("writing the sums to %s", shown_out);
    } else
        cli_progress_phase(&pg, "writing the sums", NULL, NULL, NULL);
    if (rc == EXIT_OK && nytp_merge_finish(m, &e) < 0) {
        cli_error("%s: %s", o.output, e.msg);
        rc = EXIT_BAD_INPUT;
    }
    cli_progress_end(&pg);
    nytp_merge_free(m);
    if (rc != EXIT_OK) {
        nytp_writer_abort(w);
        return rc;
    }
    if (nytp_writer_close(w, &e) < 0) {
        cli_error("%s: %s", strcmp(o.output, "-") ? o.output : "(standard output)", e.msg);
        return EXIT_BAD_INPUT;
    }
    if (o.verbose)
        cli_note("wrote %s", shown_out);
    return EXIT_OK;
}

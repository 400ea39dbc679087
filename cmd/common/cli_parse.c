/* cli_parse.c — option parsing the commands share: --help, the spellings
 * every command takes (-o/--out/--output, -f/--file), counts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_impl.h"

static bool has_long(const struct option *o, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(o[i].name, name) == 0)
            return true;
    return false;
}

/* A view option (viewopt.h) given to a command that does not take it. */
static void refuse_view_option(const char *arg)
{
    if (strncmp(arg, "--focus", 7) == 0 || strncmp(arg, "--ignore", 8) == 0 || strncmp(arg, "--hide", 6) == 0)
        cli_usage_error("%s: nytp %s does not filter call stacks; the reports do (top, calls, "
                        "flame, html, diff, pprof, speedscope; csv and cachegrind by file)", arg, cli_command);
}

int cli_parse(int argc, char **argv, const char *shortopts, const struct option *longopts,
              const char *usage, void (*on_opt)(int opt, const char *arg, void *ctx), void *ctx)
{
    /* Our own messages, one line each; '+' stops at the first operand
     * only when POSIXLY_CORRECT asks, so options may follow files. */
    char spec[128];
    snprintf(spec, sizeof spec, ":h%s", shortopts);
    bool takes_file = strstr(shortopts, "f:") != NULL;
    opterr = 0;
    optind = 1;
    int n = 0;
    while (longopts[n].name)
        n++;
    /* the command's options, the spellings every command shares, --help */
    struct option *all = calloc((size_t)n + 5, sizeof *all);
    /* -f FILE values, at most one per word of argv */
    char **files = calloc((size_t)argc + 1, sizeof *files);
    if (!all || !files) {
        cli_error("out of memory");
        exit(EXIT_BAD_INPUT);
    }
    memcpy(all, longopts, (size_t)n * sizeof *all);
    int k = n;
    if (strstr(shortopts, "o:")) {
        /* nytprofhtml says --out, nytprofcalls --output: both, everywhere */
        if (!has_long(all, k, "out"))
            all[k++] = (struct option){"out", required_argument, NULL, 'o'};
        if (!has_long(all, k, "output"))
            all[k++] = (struct option){"output", required_argument, NULL, 'o'};
    }
    if (takes_file && !has_long(all, k, "file"))
        all[k++] = (struct option){"file", required_argument, NULL, 'f'};
    all[k] = (struct option){"help", no_argument, NULL, 'h'};
    int nfiles = 0;
    int opt;
    int longindex;
    while ((opt = getopt_long(argc, argv, spec, all, &longindex)) != -1) {
        if (opt == 'h') {
            /* checked here: a help longer than stdout's buffer fails in a
             * flush inside fputs, and by exit errno no longer says why */
            if (fputs(usage, stdout) == EOF || fflush(stdout) == EOF) {
                cli_error("standard output: %s", strerror(errno));
                _exit(EXIT_BAD_INPUT);
            }
            free(all);
            free(files);
            exit(EXIT_OK);
        }
        if (opt == '?') {
            free(all);
            free(files);
            if (optopt)
                cli_usage_error("unknown option '-%c'", optopt);
            refuse_view_option(argv[optind - 1]);
            cli_usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (opt == ':') {
            free(all);
            free(files);
            if (optopt && optopt < 256)
                cli_usage_error("option '-%c' needs a value", optopt);
            cli_usage_error("option '%s' needs a value", argv[optind - 1]);
        }
        if (opt == 'f' && takes_file) {
            if (!*optarg)
                cli_usage_error("-f needs a file name");
            files[nfiles++] = optarg;
            continue;
        }
        on_opt(opt, optarg, ctx);
    }
    free(all);
    /* -f FILE, as the nytprof* scripts take it: the files go before the
     * operands, in the slots the options used (each -f took at least one
     * word before optind, so there is room and argv[0] stays). */
    int first = optind - nfiles;
    for (int i = 0; i < nfiles; i++)
        argv[first + i] = files[i];
    free(files);
    return first;
}

bool cli_names_svg(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n > 4 && strcasecmp(path + n - 4, ".svg") == 0;
}

unsigned long cli_parse_count(const char *opt, const char *arg)
{
    char *end;
    errno = 0;
    if (!arg || !*arg || *arg == '-')
        cli_usage_error("%s needs a non-negative whole number, not '%s'", opt, arg ? arg : "");
    unsigned long v = strtoul(arg, &end, 10);
    if (errno || *end)
        cli_usage_error("%s needs a non-negative whole number, not '%s'", opt, arg);
    return v;
}

uint32_t cli_parse_max_recursion(const char *arg)
{
    unsigned long v = cli_parse_count("--max-recursion", arg);
    if (v > UINT32_MAX)
        cli_usage_error("--max-recursion must be at most %lu frames, not %s", (unsigned long)UINT32_MAX,
                        arg);
    return (uint32_t)v;
}

/* cli.c — messages, option parsing and output files shared by commands. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *cli_command = NULL;

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    if (cli_command)
        fprintf(stderr, "nytp %s: %s%s\n", cli_command, prefix, line);
    else
        fprintf(stderr, "nytp: %s%s\n", prefix, line);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("warning: ", fmt, ap);
    va_end(ap);
}

_Noreturn void cli_usage_error(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (cli_command)
        fprintf(stderr, "nytp %s: %s (see 'nytp %s --help')\n", cli_command, line, cli_command);
    else
        fprintf(stderr, "nytp: %s (see 'nytp --help')\n", line);
    exit(EXIT_USAGE);
}

static const char *display_name(const char *file)
{
    return strcmp(file, "-") == 0 ? "(standard input)" : file;
}

void cli_report(const char *file, const nytp_error *e, bool as_warning)
{
    char where[200];
    const char *what = nytp_status_name(e->status);
    if (e->status == NYTP_E_IO || e->status == NYTP_E_NOMEM) {
        if (as_warning)
            cli_warn("%s: %s", display_name(file), e->msg);
        else
            cli_error("%s: %s", display_name(file), e->msg);
        return;
    }
    nytp_error_where(e, where, sizeof where);
    if (as_warning)
        cli_warn("%s: %s at %s: %s", display_name(file), what, where, e->msg);
    else
        cli_error("%s: %s at %s: %s", display_name(file), what, where, e->msg);
}

void cli_reader_warning(void *ctx, const nytp_error *w)
{
    char where[200];
    nytp_error_where(w, where, sizeof where);
    cli_warn("%s: at %s: %s", display_name(ctx), where, w->msg);
}

int cli_parse(int argc, char **argv, const char *shortopts, const struct option *longopts,
              const char *usage, void (*on_opt)(int opt, const char *arg, void *ctx), void *ctx)
{
    /* Our own messages, one line each; '+' stops at the first operand
     * only when POSIXLY_CORRECT asks, so options may follow files. */
    char spec[128];
    snprintf(spec, sizeof spec, ":h%s", shortopts);
    opterr = 0;
    optind = 1;
    int help_index = -1;
    int n = 0;
    while (longopts[n].name)
        n++;
    struct option *all = calloc((size_t)n + 2, sizeof *all);
    if (!all) {
        cli_error("out of memory");
        exit(EXIT_BAD_INPUT);
    }
    memcpy(all, longopts, (size_t)n * sizeof *all);
    all[n] = (struct option){"help", no_argument, NULL, 'h'};
    help_index = n;
    (void)help_index;
    int opt;
    int longindex;
    while ((opt = getopt_long(argc, argv, spec, all, &longindex)) != -1) {
        if (opt == 'h') {
            fputs(usage, stdout);
            free(all);
            exit(EXIT_OK);
        }
        if (opt == '?') {
            free(all);
            if (optopt)
                cli_usage_error("unknown option '-%c'", optopt);
            cli_usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (opt == ':') {
            free(all);
            if (optopt && optopt < 256)
                cli_usage_error("option '-%c' needs a value", optopt);
            cli_usage_error("option '%s' needs a value", argv[optind - 1]);
        }
        on_opt(opt, optarg, ctx);
    }
    free(all);
    return optind;
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

nytp_out *cli_output_open(const char *path)
{
    nytp_out *out;
    nytp_error e = {0};
    if (!path)
        path = "-";
    if (nytp_out_open_file(&out, path, NYTP_OUT_ATOMIC, &e) < 0) {
        cli_error("%s: %s", path, e.msg);
        return NULL;
    }
    return out;
}

int cli_output_close(nytp_out *out, const char *path)
{
    nytp_error e = {0};
    if (nytp_out_close(out, &e) < 0) {
        cli_error("%s: %s", path && strcmp(path, "-") ? path : "(standard output)", e.msg);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

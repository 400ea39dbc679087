/* nytp.c — the multi-call binary: 'nytp COMMAND [ARGS]' runs cmd_COMMAND. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static const nytp_command commands[] = {
    /* in the order --help lists them: profile, look, export, combine */
    {"run", "profile a perl program with Devel::NYTP", cmd_run},
    {"html", "write an HTML report of a profile", cmd_html},
    {"top", "the hottest subs, lines, files and packages of a profile", cmd_top},
    {"diff", "compare two profiles: what got slower or faster; a CI check", cmd_diff},
    {"flame", "flame graphs: collapsed stacks, or an interactive SVG", cmd_flame},
    {"calls", "collapsed call paths with exclusive time or calls", cmd_calls},
    {"dump", "print the chunks of a profile, as text or JSON", cmd_dump},
    {"csv", "write line times per source file as CSV files, like nytprofcsv", cmd_csv},
    {"cachegrind", "write the profile in callgrind format for KCachegrind", cmd_cachegrind},
    {"merge", "join profiles of one program into one file", cmd_merge},
    {"dprof-convert", "convert Devel::DProf's tmon.out into a profile", cmd_dprof_convert},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_usage(FILE *f)
{
    fprintf(f, "usage: nytp [--version] [--help] COMMAND [ARGS]\n"
               "\n"
               "A toolkit for NYTProf v5 Perl profiles.  Commands:\n\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-14s %s\n", "help", "show the manual page of a command");
    fprintf(f, "\n'nytp COMMAND --help' lists a command's options; 'nytp help COMMAND'\n"
               "shows its manual page.\n");
}

static const nytp_command *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* The man page of page ("nytp-dump"): next to the binary in a build tree
 * (build/nytp -> man/), or under the installed prefix (bin/nytp ->
 * share/man/man1/), else whatever man finds. */
static int show_man(const char *page)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            const char *rel[] = {"/../man/", "/../share/man/man1/"};
            for (size_t i = 0; i < 2; i++) {
                char path[PATH_MAX + 64];
                struct stat sb;
                snprintf(path, sizeof path, "%s%s%s.1", exe, rel[i], page);
                if (stat(path, &sb) == 0) {
                    execlp("man", "man", "-l", path, (char *)NULL);
                    fprintf(stderr, "nytp help: cannot run man; the page is %s\n", path);
                    return EXIT_BAD_INPUT;
                }
            }
        }
    }
    execlp("man", "man", page, (char *)NULL);
    fprintf(stderr, "nytp help: cannot run man to show %s\n", page);
    return EXIT_BAD_INPUT;
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "nytp") == 0)
        return show_man("nytp");
    if (!find(argv[1])) {
        fprintf(stderr, "nytp help: '%s' is not a nytp command (see 'nytp --help')\n", argv[1]);
        return EXIT_USAGE;
    }
    char page[64];
    snprintf(page, sizeof page, "nytp-%s", argv[1]);
    fflush(stdout);
    return show_man(page);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        print_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("nytp %s (NYTProf file format %d.%d)\n", NYTP_VERSION_STRING, NYTP_FORMAT_MAJOR,
               NYTP_FORMAT_MINOR);
        return EXIT_OK;
    }
    if (strcmp(name, "help") == 0)
        return cmd_help(argc - 1, argv + 1);
    if (name[0] == '-') {
        fprintf(stderr, "nytp: unknown option '%s' (see 'nytp --help')\n", name);
        return EXIT_USAGE;
    }
    const nytp_command *cmd = find(name);
    if (!cmd) {
        fprintf(stderr, "nytp: '%s' is not a nytp command (see 'nytp --help')\n", name);
        return EXIT_USAGE;
    }
    cli_command = cmd->name;
    return cmd->run(argc - 1, argv + 1);
}

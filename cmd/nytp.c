/* nytp.c — the multi-call binary: 'nytp COMMAND [ARGS]' runs cmd_COMMAND. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static const nytp_command commands[] = {
    /* in the order --help lists them: profile, look, export, combine */
    {"run", "profile a perl program with Devel::NYTP", cmd_run},
    {"attach", "profile a running perl by sampling it from outside", cmd_attach},
    {"stack", "print the perl call stack of running perls", cmd_stack},
    {"html", "write an HTML report of a profile", cmd_html},
    {"top", "the hottest subs, lines, files and packages of a profile", cmd_top},
    {"diff", "compare two profiles: what got slower or faster; a CI check", cmd_diff},
    {"flame", "flame graphs: collapsed stacks, or an interactive SVG", cmd_flame},
    {"calls", "collapsed call paths with exclusive time or calls", cmd_calls},
    {"dump", "print the chunks of a profile, as text or JSON", cmd_dump},
    {"csv", "write line times per source file as CSV files, like nytprofcsv", cmd_csv},
    {"cachegrind", "write the profile in callgrind format for KCachegrind", cmd_cachegrind},
    {"pprof", "write a pprof profile, for go tool pprof, Pyroscope, Parca", cmd_pprof},
    {"speedscope", "write the profile for the speedscope viewer", cmd_speedscope},
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
    fprintf(f, "  %-14s %s\n", "help", "show the manual page of a command, or of the format (nytprof)");
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

/* Run man with args, as execvp would (returns only when man cannot be
 * run).  On a terminal man runs in our place, with its pager; otherwise
 * its output passes through us, so that a failed write to standard output
 * is an error as for every other command (man itself ignores it). */
static int exec_man(char *const args[])
{
    fflush(stdout);
    if (isatty(STDOUT_FILENO)) {
        execvp("man", args);
        return -1;
    }
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(p[1], STDOUT_FILENO);
        close(p[0]);
        close(p[1]);
        execvp("man", args);
        _exit(127);
    }
    close(p[1]);
    char buf[8192];
    ssize_t n;
    int werr = 0;
    while (!werr && (n = read(p[0], buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (ssize_t at = 0; at < n && !werr;) {
            ssize_t w = write(STDOUT_FILENO, buf + at, (size_t)(n - at));
            if (w < 0 && errno != EINTR)
                werr = errno;
            else if (w > 0)
                at += w;
        }
    }
    close(p[0]); /* man stops with SIGPIPE if we stopped reading */
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (werr) {
        fprintf(stderr, "nytp help: standard output: %s\n", strerror(werr));
        exit(EXIT_BAD_INPUT);
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        return -1;
    exit(WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_BAD_INPUT);
}

/* The man page of page ("nytp-dump") in section sect: next to the binary
 * in a build tree (build/nytp -> man/), or under the installed prefix
 * (bin/nytp -> share/man/manN/), else whatever man finds. */
static int show_man(const char *page, int sect)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            char installed[32];
            snprintf(installed, sizeof installed, "/../share/man/man%d/", sect);
            const char *rel[] = {"/../man/", installed};
            for (size_t i = 0; i < 2; i++) {
                char path[PATH_MAX + 64];
                struct stat sb;
                snprintf(path, sizeof path, "%s%s%s.%d", exe, rel[i], page, sect);
                if (stat(path, &sb) == 0) {
                    exec_man((char *[]){"man", "-l", path, NULL});
                    cli_error("cannot run man; the page is %s", path);
                    return EXIT_BAD_INPUT;
                }
            }
        }
    }
    char sect_s[8];
    snprintf(sect_s, sizeof sect_s, "%d", sect);
    exec_man((char *[]){"man", sect_s, (char *)page, NULL});
    cli_error("cannot run man to show %s", page);
    return EXIT_BAD_INPUT;
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "nytp") == 0)
        return show_man("nytp", 1);
    if (strcmp(argv[1], "nytprof") == 0) /* nytprof(5), the file format */
        return show_man("nytprof", 5);
    if (!find(argv[1])) {
        cli_error("'%s' is not a nytp command (see 'nytp --help')", argv[1]);
        return EXIT_USAGE;
    }
    char page[64];
    snprintf(page, sizeof page, "nytp-%s", argv[1]);
    fflush(stdout);
    return show_man(page, 1);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return EXIT_USAGE;
    }
    /* every write to standard output is checked once, at exit */
    atexit(cli_close_stdout);
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
    if (strcmp(name, "help") == 0) {
        cli_command = "help";
        return cmd_help(argc - 1, argv + 1);
    }
    if (name[0] == '-') {
        cli_error("unknown option '%s' (see 'nytp --help')", name);
        return EXIT_USAGE;
    }
    const nytp_command *cmd = find(name);
    if (!cmd) {
        cli_error("'%s' is not a nytp command (see 'nytp --help')", name);
        return EXIT_USAGE;
    }
    cli_command = cmd->name;
    return cmd->run(argc - 1, argv + 1);
}

/* run.c — 'nytp run': profile a perl program with Devel::NYTP.
 *
 * Runs PERL -I<profiler dir> -d:NYTP SCRIPT ARGS with the options in
 * NYTPROF, waits, reports where the profile went and exits with the
 * program's status.  The profiler is looked for next to this binary: in a
 * build tree (build/nytp -> build/perl) or under the installed prefix
 * (bin/nytp -> <perl site arch dir>); failing both, perl's @INC. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

#ifndef NYTP_SITEARCH
#define NYTP_SITEARCH ""
#endif

static const char usage[] =
    "usage: nytp run [-o FILE] [--nytprof OPTS] [--perl PERL] [--] SCRIPT [ARGS...]\n"
    "\n"
    "Profile a perl program: run 'perl -d:NYTP SCRIPT ARGS' with the\n"
    "Devel::NYTP profiler of this nytp (no installation needed in a build\n"
    "tree), say on standard error where the profile was written, and exit\n"
    "with the program's exit status (128+N if a signal N killed it).\n"
    "\n"
    "  -o, --output=FILE  write the profile to FILE (default: nytprof.out,\n"
    "                     or the file= of the profiler options); --out is the\n"
    "                     same\n"
    "  --nytprof=OPTS     profiler options, as in the NYTPROF environment\n"
    "                     variable (e.g. calls=2:compress=0:savesrc=0); they\n"
    "                     are added after those of NYTPROF itself\n"
    "  --perl=PERL        the perl to run (default: $NYTP_PERL, else perl)\n"
    "  -h, --help         this help\n"
    "\n"
    "Everything after SCRIPT is passed to the program.  Exit status: the\n"
    "program's; 2 for a usage error; 1 if perl could not be started.\n";

enum { OPT_NYTPROF = 256, OPT_PERL };

struct run_opts {
    const char *output;
    const char *nytprof;
    const char *perl;
};

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct run_opts *o = ctx;
    switch (opt) {
    case 'o': o->output = arg; break;
    case OPT_NYTPROF: o->nytprof = arg; break;
    case OPT_PERL: o->perl = arg; break;
    }
}

/* Index of SCRIPT: options stop at the first operand (or after "--"), so
 * that the program's own options are left alone. */
static int operand_index(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return i;
        if (a[0] != '-' || a[1] == 0)
            return i;
        /* options that take their value in the next word */
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--nytprof") == 0
            || strcmp(a, "--perl") == 0)
            i++;
    }
    return argc;
}

static bool is_profiler_dir(const char *dir)
{
    char path[PATH_MAX + 64];
    struct stat sb;
    snprintf(path, sizeof path, "%s/Devel/NYTP.pm", dir);
    if (stat(path, &sb) != 0)
        return false;
    snprintf(path, sizeof path, "%s/auto/Devel/NYTP/NYTP.so", dir);
    return stat(path, &sb) == 0;
}

/* The directory holding Devel/NYTP.pm for this nytp, or "" (use @INC). */
static void find_profiler(char *out, size_t size)
{
    out[0] = 0;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = 0;
    char cand[PATH_MAX + 64];
    snprintf(cand, sizeof cand, "%s/perl", exe);
    if (is_profiler_dir(cand)) {
        snprintf(out, size, "%s", cand);
        return;
    }
    if (NYTP_SITEARCH[0]) {
        snprintf(cand, sizeof cand, "%s/../%s", exe, NYTP_SITEARCH);
        if (is_profiler_dir(cand))
            snprintf(out, size, "%s", cand);
    }
}

/* Append "file=PATH" to the option string, escaping ':' and '\'. */
static char *with_file(const char *opts, const char *path)
{
    size_t n = strlen(opts) + 2 * strlen(path) + 8;
    char *s = malloc(n);
    if (!s)
        return NULL;
    char *p = s;
    if (*opts)
        p += sprintf(p, "%s:", opts);
    p += sprintf(p, "file=");
    for (const char *q = path; *q; q++) {
        if (*q == ':' || *q == '\\')
            *p++ = '\\';
        *p++ = *q;
    }
    *p = 0;
    return s;
}

/* The last file= of an option string (unescaped), or NULL. */
static char *file_option(const char *opts)
{
    char *found = NULL;
    const char *p = opts;
    while (*p) {
        const char *start = p;
        while (*p && *p != ':') {
            if (*p == '\\' && p[1])
                p++;
            p++;
        }
        if (strncmp(start, "file=", 5) == 0) {
            free(found);
            found = malloc((size_t)(p - start));
            if (!found)
                return NULL;
            char *o = found;
            for (const char *q = start + 5; q < p; q++) {
                if (*q == '\\' && q + 1 < p)
                    q++;
                *o++ = *q;
            }
            *o = 0;
        }
        if (*p == ':')
            p++;
    }
    return found;
}

int cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"nytprof", required_argument, NULL, OPT_NYTPROF},
        {"perl", required_argument, NULL, OPT_PERL},
        {NULL, 0, NULL, 0},
    };
    struct run_opts o = {0};
    int script = operand_index(argc, argv);
    int first = cli_parse(script, argv, "o:", longopts, usage, on_opt, &o);
    if (first < script)
        cli_usage_error("unexpected argument '%s'", argv[first]);
    if (script < argc && strcmp(argv[script], "--") == 0)
        script++;
    if (script >= argc)
        cli_usage_error("no program to profile");
    if (o.output && !*o.output)
        cli_usage_error("-o needs a file name");

    const char *perl = o.perl ? o.perl : getenv("NYTP_PERL");
    if (!perl || !*perl)
        perl = "perl";

    /* NYTPROF = what the environment had, then --nytprof, then -o. */
    const char *env = getenv("NYTPROF");
    size_t olen = (env ? strlen(env) : 0) + (o.nytprof ? strlen(o.nytprof) : 0) + 2;
    char *opts = malloc(olen);
    if (!opts) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    snprintf(opts, olen, "%s%s%s", env && *env ? env : "",
             env && *env && o.nytprof && *o.nytprof ? ":" : "", o.nytprof ? o.nytprof : "");
    char *profile = NULL;
    if (o.output) {
        char *all = with_file(opts, o.output);
        free(opts);
        opts = all;
        profile = strdup(o.output);
    } else {
        profile = file_option(opts);
        if (!profile)
            profile = strdup("nytprof.out");
    }
    if (!opts || !profile) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }

    char dir[PATH_MAX + 64];
    find_profiler(dir, sizeof dir);
    char incopt[PATH_MAX + 70];
    snprintf(incopt, sizeof incopt, "-I%s", dir);

    int nargs = argc - script;
    char **args = calloc((size_t)nargs + 4, sizeof *args);
    if (!args) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    int k = 0;
    args[k++] = (char *)perl;
    if (dir[0])
        args[k++] = incopt;
    args[k++] = "-d:NYTP";
    for (int i = script; i < argc; i++)
        args[k++] = argv[i];
    args[k] = NULL;

    /* a profile left by an earlier run must not be taken for this one's */
    struct stat old;
    bool had_old = stat(profile, &old) == 0;

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        cli_error("cannot fork: %s", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (pid == 0) {
        if (setenv("NYTPROF", opts, 1) != 0)
            _exit(127);
        execvp(perl, args);
        cli_error("cannot run %s: %s", perl, strerror(errno));
        _exit(127);
    }
    /* The terminal's ^C and ^\ are for the program, which decides. */
    struct sigaction ign = {0}, old_int, old_quit;
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);

    int rc;
    if (WIFEXITED(status))
        rc = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        rc = 128 + WTERMSIG(status);
    else
        rc = EXIT_BAD_INPUT;

    struct stat sb;
    char withpid[PATH_MAX + 32];
    snprintf(withpid, sizeof withpid, "%s.%d", profile, (int)pid);
    if (had_old && !S_ISREG(old.st_mode)) /* a FIFO, a device: written through */
        fprintf(stderr, "nytp run: profile written to %s\n", profile);
    else if (stat(profile, &sb) == 0
        && !(had_old && sb.st_ino == old.st_ino && sb.st_mtim.tv_sec == old.st_mtim.tv_sec
             && sb.st_mtim.tv_nsec == old.st_mtim.tv_nsec))
        cli_note("profile written to %s", profile);
    else if (stat(withpid, &sb) == 0)
        cli_note("profile written to %s", withpid);
    else
        cli_note("no profile was written (expected %s)", profile);

    free(args);
    free(opts);
    free(profile);
    return rc;
}

/* run.c — 'nytp run': profile a perl program with Devel::NYTP.
 *
 * Runs PERL -I<profiler dir> -d:NYTP SCRIPT ARGS with the options in
 * NYTPROF, waits, reports where the profile went and exits with the
 * program's status.  The profiler is looked for next to this binary: in a
 * build tree (build/nytp -> build/perl) or under the installed prefix
 * (bin/nytp -> <perl site arch dir>); failing both, perl's @INC. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nytp/reader.h"

#include "cli.h"
#include "commands.h"

#ifndef NYTP_SITEARCH
#define NYTP_SITEARCH ""
#endif

static const char usage[] =
    "usage: nytp run [-o FILE] [--nytprof OPTS] [--perl PERL] [PERL-SWITCHES] [--] SCRIPT [ARGS...]\n"
    "       nytp run [OPTIONS] [PERL-SWITCHES] -e CODE [ARGS...]\n"
    "       nytp run --children [-o FILE] [--nytprof OPTS] [--] COMMAND [ARGS...]\n"
    "\n"
    "Profile a perl program: run 'perl -d:NYTP SCRIPT ARGS' with the\n"
    "Devel::NYTP profiler of this nytp (no installation needed in a build\n"
    "tree), name on standard error every profile the run wrote (children's\n"
    "FILE.PID too), each said to be complete or not, and exit with the\n"
    "program's exit status (128+N if a signal N killed it).\n"
    "\n"
    "  -o, --output=FILE  write the profile to FILE (default: nytprof.out,\n"
    "                     or the file= of the profiler options); --out is the\n"
    "                     same\n"
    "  --nytprof=OPTS     profiler options, as in the NYTPROF environment\n"
    "                     variable (e.g. calls=2:compress=0:savesrc=0); they\n"
    "                     are added after those of NYTPROF itself; unless\n"
    "                     they name sigexit, nytp run adds sigexit=INT,HUP,TERM\n"
    "                     (the profile stays complete when the program is\n"
    "                     killed by one of them; one ignored at start, as\n"
    "                     under nohup, stays ignored; %SIG stays the\n"
    "                     program's; sigexit=0: not caught)\n"
    "  --sample[=HZ]      sample instead of tracing every statement and call\n"
    "                     (HZ times a second, default 1000): a few per cent of\n"
    "                     run time, times estimated, counts unknown; the rate\n"
    "                     in the same word (--sample=100, not --sample 100);\n"
    "                     each sample weighs the wall time since the last one,\n"
    "                     so code that waits (sleep, select, a database) ranks\n"
    "                     by its waiting: what a user waits for\n"
    "  --cpu              with --sample: weigh samples by the CPU time the\n"
    "                     process used (clock=2, read once a sample), so code\n"
    "                     that waits costs next to nothing: where the CPU goes\n"    "  --rotate=SECONDS   every SECONDS close the profile as a complete one of\n"
    "                     that interval and go on in FILE.s1, FILE.s2, ...\n"
    "                     (a child: FILE.PID.s1, ...); 'nytp top FILE*' adds them\n"
    "  --children         run COMMAND as it is and profile every perl it starts\n"
    "                     (PERL5OPT), each into FILE.PID: e.g. 'nytp run\n"
    "                     --children -o t.out prove -r t/', then 'nytp html t.out.*'\n"
    "  --perl=PERL        the perl to run (default: $NYTP_PERL, else perl)\n"
    "  -h, --help         this help\n"
    "\n"
    "Perl's switches before SCRIPT go to perl: -I DIR, -M MODULE, -m MODULE,\n"
    "-e CODE, -E CODE (then there is no SCRIPT), -w, -W, -X, -t, -T, -C, -l,\n"
    "-n, -p, -a, -F, -0, -s, -i, -c, -U, e.g. 'nytp run -I lib -M Foo -e CODE'.\n"
    "Everything after SCRIPT (or after -- or CODE) is passed to the program;\n"
    "a SCRIPT whose name begins with - comes after --: 'nytp run -- -x.pl'.\n"
    "A SCRIPT that is not a file here and has no '/' is looked for in PATH,\n"
    "as perl -S does: 'nytp run -- starman app.psgi'.\n"
    "SCRIPT is the perl script, not perl: 'nytp run x.pl', never 'nytp run perl\n"
    "x.pl' (nytp run starts perl itself; --perl=PERL for another one).\n"
    "Exit status: the program's; 2 for a usage error; 1 if perl could not\n"
    "be started.  TERM, HUP and other signals sent to nytp run are passed\n"
    "on to perl, and nytp run waits for it to end, and for the processes it\n"
    "left running that write profiles of the run (a server's workers, after\n"
    "their master; a child forked just before the end that has not opened\n"
    "its profile yet): after a signal passed on, as long as they run (signals\n"
    "go to them too), else up to 5 seconds.\n";

enum { OPT_NYTPROF = 256, OPT_PERL, OPT_CHILDREN, OPT_SAMPLE, OPT_ROTATE, OPT_CPU };

struct run_opts {
    const char *output;
    const char *nytprof;
    const char *perl;
    bool children;
    unsigned long sample_hz;   /* 0: not given */
    bool sample_bare;          /* --sample without =HZ */
    bool cpu;                  /* --cpu: samples weighed by CPU time */
    const char *rotate;        /* as given, checked */
};

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct run_opts *o = ctx;
    switch (opt) {
    case 'o': o->output = arg; break;
    case OPT_NYTPROF: o->nytprof = arg; break;
    case OPT_PERL: o->perl = arg; break;
    case OPT_CHILDREN: o->children = true; break;
    case OPT_CPU: o->cpu = true; break;
    case OPT_SAMPLE: {
        char *end;
        o->sample_hz = arg ? strtoul(arg, &end, 10) : 1000;
        o->sample_bare = !arg;
        if (arg && (!*arg || *end || o->sample_hz < 1 || o->sample_hz > 10000))
            cli_usage_error("--sample takes a rate in Hz from 1 to 10000, not '%s'", arg);
        break;
    }
    case OPT_ROTATE: {
        char *end;
        double secs = strtod(arg, &end);
        if (!*arg || *end || !(secs >= 0.01 && secs <= 1e7))
            cli_usage_error("--rotate takes seconds (0.01 or more), not '%s'", arg);
        o->rotate = arg;
        break;
    }
    }
}

/* How many words a perl switch takes (1, or 2 when its value is the next
 * word), or 0 if arg is not one that nytp run passes on. */
static int perl_switch_words(const char *a)
{
    if (a[0] != '-' || a[1] == 0 || a[1] == '-')
        return 0;
    switch (a[1]) {
    case 'I': case 'M': case 'm': case 'e': case 'E':
        return a[2] ? 1 : 2;
    case 'w': case 'W': case 'X': case 't': case 'T': case 'C': case 'l': case 'n':
    case 'p': case 'a': case 'F': case '0': case 's': case 'i': case 'c': case 'U':
        return 1;
    }
    return 0;
}

/* The command line split: nytp run's own options (for cli_parse, with
 * argv[0] first), perl's switches, and where the program's part starts
 * (SCRIPT, or the first argument after -e CODE). */
struct split {
    char **ours, **perl;
    int nours, nperl;
    char **joined;   /* "-MModule" made from "-M Module" (freed at the end) */
    int njoined;
    int program;     /* index in argv */
    bool has_code;   /* -e or -E given: no SCRIPT */
};

static void free_split(struct split *sp)
{
    for (int i = 0; i < sp->njoined; i++)
        free(sp->joined[i]);
    free(sp->joined);
    free(sp->ours);
    free(sp->perl);
}

static void split_args(int argc, char **argv, struct split *sp)
{
    sp->ours[sp->nours++] = argv[0];
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == 0)
            break;
        int n = perl_switch_words(a);
        if (n) {
            if (n == 2 && i + 1 >= argc)
                cli_usage_error("perl switch %s needs a value", a);
            if (a[1] == 'e' || a[1] == 'E')
                sp->has_code = true;
            if (n == 2 && (a[1] == 'M' || a[1] == 'm')) {
                /* perl wants -MModule in one word */
                size_t len = strlen(argv[i + 1]) + 3;
                char *w = malloc(len);
                if (!w)
                    cli_usage_error("out of memory");
                snprintf(w, len, "-%c%s", a[1], argv[i + 1]);
                sp->joined[sp->njoined++] = w;
                sp->perl[sp->nperl++] = w;
            } else {
                for (int k = 0; k < n; k++)
                    sp->perl[sp->nperl++] = argv[i + k];
            }
            i += n - 1;
            continue;
        }
        sp->ours[sp->nours++] = argv[i];
        /* options that take their value in the next word */
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--nytprof") == 0
             || strcmp(a, "--perl") == 0 || strcmp(a, "--rotate") == 0)
            && i + 1 < argc)
            sp->ours[sp->nours++] = argv[++i];
    }
    sp->program = i;
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

/* While the program runs, a signal sent to nytp run with kill(2) (TERM
 * from a service manager, HUP, a kill -INT) is passed on to perl, and
 * nytp run goes on waiting: it ends when perl does, with perl's status,
 * and never leaves perl running without it.  A signal the terminal sends
 * (^C, ^\\, a hang-up) reaches the whole process group, perl too, so it
 * is not passed on a second time: the program decides what it does. */
static const int forwarded[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM,
                                SIGTTIN, SIGTTOU, SIGWINCH, SIGCONT};
static volatile sig_atomic_t forward_to, passed_on;
/* Once perl has ended: the processes it left running (see
 * wait_leftovers), which such a signal then goes to. */
static pid_t *volatile leftover;
static bool *volatile leftover_detached; /* daemons: left alone */
static volatile sig_atomic_t nleftover;

static void on_forwarded(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    bool sent = si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_code == SI_TKILL;
    if (sent && forward_to > 0 && si->si_pid != forward_to && kill((pid_t)forward_to, sig) == 0)
        passed_on = sig;
    pid_t *left = leftover;
    int n = nleftover;
    bool from_left = false;
    for (int i = 0; left && i < n; i++)
        from_left |= left[i] == si->si_pid;
    bool *detached = leftover_detached;
    for (int i = 0; sent && !from_left && left && i < n; i++)
        if (left[i] > 0 && !(detached && detached[i]) && kill(left[i], sig) == 0)
            passed_on = sig;
    errno = saved;
}

static void forward_signals(struct sigaction *old)
{
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) {
        struct sigaction sa = {0};
        sa.sa_sigaction = on_forwarded;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigfillset(&sa.sa_mask);
        sigaction(forwarded[i], &sa, &old[i]);
    }
}

static void restore_signals(const struct sigaction *old)
{
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
        sigaction(forwarded[i], &old[i], NULL);
    forward_to = 0;
    nleftover = 0;
    leftover = NULL;
    leftover_detached = NULL;
}

/* path made absolute against the working directory (not resolved: a
 * symbolic link stays one); NULL when out of memory or the directory is
 * unknown. */
static char *absolute_path(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    size_t n = strlen(cwd) + strlen(path) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path);
    return s;
}

/* The environment of --children: every perl started below loads the
 * profiler (PERL5OPT -d:NYTP, after what PERL5OPT had) from this nytp's
 * directory (put in PERL5LIB, and taken out of @INC again by Devel::NYTP
 * as NYTP_INC names it).  Returns 0, or -1 with errno. */
static int children_env(const char *dir)
{
    const char *o = getenv("PERL5OPT"), *l = getenv("PERL5LIB");
    size_t n = (o ? strlen(o) : 0) + 16;
    char *opt = malloc(n);
    if (!opt)
        return -1;
    snprintf(opt, n, "%s%s-d:NYTP", o && *o ? o : "", o && *o ? " " : "");
    if (setenv("PERL5OPT", opt, 1) != 0)
        return -1;
    if (dir[0]) {
        n = strlen(dir) + (l ? strlen(l) : 0) + 2;
        char *lib = malloc(n);
        if (!lib)
            return -1;
        snprintf(lib, n, "%s%s%s", dir, l && *l ? ":" : "", l && *l ? l : "");
        if (setenv("PERL5LIB", lib, 1) != 0)
            return -1;
    }
    return 0;
}

/* This run's mark (NYTP_RUN, which the profiler writes as the attribute
 * nytp_run in each profile of the processes it runs). */
static char run_mark[64];

/* From the first chunks of the profile at path (its header, flushed as
 * the file is opened): into *mine, whether it is this run's (its nytp_run
 * attribute is ours, or it has none: a profiler that does not mark, a
 * header not out yet); into *pid, the process that writes it (its
 * PID_START), or 0.  Either may be NULL. */
static void read_header(const char *path, bool *mine, pid_t *pid)
{
    if (mine)
        *mine = true;
    if (pid)
        *pid = 0;
    nytp_reader *r;
    nytp_error e;
    if (nytp_reader_open(&r, path, &e) < 0)
        return;
    nytp_reader_set_warn(r, NULL, NULL);
    nytp_chunk c;
    for (int k = 0; k < 64 && nytp_reader_next(r, &c, &e) == NYTP_OK; k++) {
        if (c.tag == NYTP_TAG_ATTRIBUTE && mine && c.u.kv.key.len == 8
            && memcmp(c.u.kv.key.ptr, "nytp_run", 8) == 0)
            *mine = c.u.kv.value.len == strlen(run_mark)
                    && memcmp(c.u.kv.value.ptr, run_mark, c.u.kv.value.len) == 0;
        if (c.tag == NYTP_TAG_PID_START) { /* after the attributes */
            if (pid)
                *pid = (pid_t)c.u.pid_start.pid;
            break;
        }
    }
    nytp_reader_close(r);
}

/* Whether the profile at path is this run's. */
static bool ours(const char *path)
{
    bool mine;
    read_header(path, &mine, NULL);
    return mine;
}

/* Whether a profile reads to its end (the process that wrote it
 * finished it).  Only asked after a signal: it reads the whole file. */
static bool profile_complete(const char *path)
{
    nytp_reader *r;
    nytp_error e;
    if (nytp_reader_open(&r, path, &e) < 0)
        return false;
    nytp_chunk c;
    int st;
    while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK)
        ;
    nytp_reader_close(r);
    return st == NYTP_END;
}

/* The value of the last NAME= in a profiler option string (escapes
 * left in), its length in *len; NULL when there is none. */
static const char *option_value(const char *opts, const char *name, size_t *len)
{
    size_t nlen = strlen(name);
    const char *val = NULL, *p = opts;
    while (*p) {
        const char *start = p;
        while (*p && *p != ':')
            p += *p == '\\' && p[1] ? 2 : 1;
        if (strncmp(start, name, nlen) == 0 && start[nlen] == '=') {
            val = start + nlen + 1;
            *len = (size_t)(p - val);
        }
        if (*p == ':')
            p++;
    }
    return val;
}

/* What nytp run gives the profiler when no sigexit= is given: a program
 * stopped by these (a service manager's TERM, ^C, a hang-up) that does
 * not handle them itself still leaves a complete profile. */
#define RUN_SIGEXIT "sigexit=INT,HUP,TERM"

/* The profiler's sigexit option as the run gives it: which signals its
 * handlers catch (sigexit=1: INT, HUP, TERM, PIPE, BUS, SEGV). */
static bool sigexit_catches(const char *opts, int sig)
{
    static const int dflt[] = {SIGINT, SIGHUP, SIGTERM, SIGPIPE, SIGBUS, SIGSEGV};
    size_t vlen = 0;
    const char *val = option_value(opts, "sigexit", &vlen);
    if (!val)
        return false;
    if (vlen == 1 && val[0] == '1') {
        for (size_t i = 0; i < sizeof dflt / sizeof *dflt; i++)
            if (dflt[i] == sig)
                return true;
        return false;
    }
    const char *abbrev = sigabbrev_np(sig);
    if (!abbrev)
        return false;
    for (const char *q = val; q < val + vlen;) {
        const char *e = memchr(q, ',', (size_t)(val + vlen - q));
        if (!e)
            e = val + vlen;
        const char *name = q;
        if (e - name > 3 && strncasecmp(name, "SIG", 3) == 0)
            name += 3;
        if ((size_t)(e - name) == strlen(abbrev) && strncasecmp(name, abbrev, (size_t)(e - name)) == 0)
            return true;
        q = e + (e < val + vlen);
    }
    return false;
}

/* One line naming a profile the run wrote and saying whether it is
 * complete (read to its end); running: the process writing it runs on.
 * Why one is incomplete is said only when it is known: sig is the
 * signal that killed the process that wrote it, 0 if that process
 * exited, -1 if its end is not known here (a worker that its master
 * reaped).  Returns 1. */
static int report_profile(const char *path, int sig, const char *opts, pid_t running)
{
    if (running) {
        cli_note("profile written to %s is still being written (process %d runs on)", path,
                 (int)running);
    } else if (profile_complete(path)) {
        cli_note("profile written to %s (complete)", path);
    } else if (sig < 0) {
        cli_note("profile written to %s is incomplete (cut short; readers keep what came before "
                 "the cut)",
                 path);
    } else if (sig == 0) {
        cli_note("profile written to %s is incomplete (its process exited without finishing it; "
                 "readers keep what came before the cut)",
                 path);
    } else if (sig == SIGKILL) {
        cli_note("profile written to %s is incomplete (cut where SIGKILL struck, which no "
                 "process can catch; readers keep what came before the cut)",
                 path);
    } else if (sigexit_catches(opts, sig)) {
        cli_note("profile written to %s is incomplete (cut where SIG%s struck, though sigexit "
                 "catches it: the program had put its own handler or the default action in "
                 "place of sigexit's, or the process died before the handler could run)",
                 path, sigabbrev_np(sig));
    } else {
        bool in_dflt = sig == SIGINT || sig == SIGHUP || sig == SIGTERM || sig == SIGPIPE
                       || sig == SIGBUS || sig == SIGSEGV;
        const char *abbrev = sigabbrev_np(sig);
        if (in_dflt)
            cli_note("profile written to %s is incomplete (cut where the signal struck; "
                     "--nytprof sigexit=1 keeps it complete)",
                     path);
        else if (abbrev)
            cli_note("profile written to %s is incomplete (cut where the signal struck; "
                     "--nytprof sigexit=%s keeps it complete)",
                     path, abbrev);
        else
            cli_note("profile written to %s is incomplete (cut where the signal struck)", path);
    }
    return 1;
}

/* Whether tail is ".N" (N digits), or with segments ".N.sM..." too (a
 * segment's part is ".sM", a pid's or a time's ".N"). */
static bool digit_parts(const char *tail, bool segments)
{
    if (tail[0] != '.' || !tail[1])
        return false;
    for (const char *p = tail; *p;) {
        if (*p != '.')
            return false;
        p++;
        if (segments && *p == 's')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        p += strspn(p, "0123456789");
        if (*p && !segments)
            return false;
    }
    return true;
}

/* Calls fn for every profile FILE.N (N digits: a child's pid, or
 * addpid/addtimestamp's; with segments, also FILE.sM, FILE.N.sM...: a process's
 * profile cut in segments) written since the run started, in version order
 * (FILE.2 before FILE.10), with the number N.  Returns how many. */
static int each_pid_profile(const char *profile, const struct timespec *since, bool segments,
                            void (*fn)(const char *path, long long n, void *ctx), void *ctx)
{
    char *copy = strdup(profile);
    if (!copy)
        return 0;
    char *slash = strrchr(copy, '/');
    const char *dir = slash ? (slash == copy ? "/" : copy) : ".";
    const char *base = slash ? slash + 1 : copy;
    if (slash)
        *slash = 0;
    size_t blen = strlen(base);
    struct dirent **list;
    int n = scandir(dir, &list, NULL, versionsort);
    int count = 0;
    for (int i = 0; i < n; i++) {
        const char *name = list[i]->d_name;
        const char *tail = name + blen;
        if (strncmp(name, base, blen) == 0 && digit_parts(tail, segments)) {
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%s%s%s", slash ? dir : "", slash && strcmp(dir, "/") ? "/" : "",
                     name);
            struct stat sb;
            if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)
                && (sb.st_mtim.tv_sec > since->tv_sec
                    || (sb.st_mtim.tv_sec == since->tv_sec && sb.st_mtim.tv_nsec >= since->tv_nsec))) {
                fn(path, strtoll(tail + 1, NULL, 10), ctx);
                count++;
            }
        }
        free(list[i]);
    }
    if (n >= 0)
        free(list);
    if (count > 20)
        cli_note("... and %d more profiles named %s.N", count - 20, profile);
    free(copy);
    return count;
}

/* ---- the processes the program leaves running ------------------------------------ */

/* A server's master may end before its workers: Net::Server's sends them
 * TERM and exits without waiting, and each worker then finishes its
 * profile.  nytp run waits for them, so that the profiles it names are
 * complete (and a container whose first process is nytp run is not torn
 * down under them): the processes still running that write a profile
 * FILE.N of this run, or a segment FILE.N.M... (the writer is read from
 * its PID_START), and are in nytp run's session (a daemon that made a
 * session of its own is left alone).  After a signal passed on (a stop),
 * for as long as they run, and a signal sent to nytp run meanwhile goes
 * to them too; otherwise (the program ended by itself) for at most
 * LEFTOVER_GRACE seconds. */
#define LEFTOVER_GRACE 5

struct leftovers {
    pid_t *pid;        /* -1: it has ended */
    bool *detached;    /* a daemon: not waited for */
    int n, cap;
    pid_t main_pid;
};

/* Process pid's state letter and parent, from /proc/PID/stat; false if
 * it cannot be read (the process is gone). */
static bool proc_state(pid_t pid, char *state, pid_t *ppid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0;
    const char *paren = strrchr(buf, ')'); /* the name may hold anything */
    int pp;
    if (!paren || sscanf(paren + 1, " %c %d", state, &pp) != 2)
        return false;
    *ppid = (pid_t)pp;
    return true;
}

/* How the processes reaped here ended (the program's orphans, which come
 * to nytp run): the signal that killed each, or 0. */
#define REAPED_MAX 1024
static struct {
    pid_t pid;
    int sig;
} reaped[REAPED_MAX];
static int nreaped;

/* The signal that killed pid, 0 if it exited, -1 if not reaped here. */
static int reaped_sig(pid_t pid)
{
    for (int i = nreaped < REAPED_MAX ? nreaped : REAPED_MAX; i-- > 0;)
        if (reaped[i].pid == pid)
            return reaped[i].sig;
    return -1;
}

/* Whether process pid has ended (reaped here when it is our child). */
static bool process_gone(pid_t pid)
{
    int st;
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) {
        reaped[nreaped % REAPED_MAX].pid = pid;
        reaped[nreaped % REAPED_MAX].sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        nreaped++;
        return true;
    }
    if (w == 0)
        return false;
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return true;
    char state;
    pid_t ppid;
    return !proc_state(pid, &state, &ppid) || state == 'Z' || state == 'X';
}

/* The process that writes a profile, from its PID_START (among its first
 * chunks, flushed as the file is opened), else the number ending its name
 * (FILE.PID); 0 when neither tells. */
static pid_t profile_writer(const char *path, long long n)
{
    pid_t pid;
    read_header(path, NULL, &pid);
    if (!pid && n > 1 && n <= (1 << 22)) /* pid_max: 2^22 at most */
        pid = (pid_t)n;
    return pid;
}

/* Add process pid to the leftovers, unless it is the program itself, has
 * ended or is there already. */
static void add_leftover(struct leftovers *l, pid_t pid)
{
    if (pid <= 1 || pid == l->main_pid)
        return;
    if (process_gone(pid))
        return;
    for (int i = 0; i < l->n; i++)
        if (l->pid[i] == pid)
            return;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        pid_t *p = realloc(l->pid, (size_t)cap * sizeof *p);
        if (p)
            l->pid = p;
        bool *d = p ? realloc(l->detached, (size_t)cap * sizeof *d) : NULL;
        if (!d)
            return;
        l->detached = d;
        l->cap = cap;
    }
    l->detached[l->n] = getsid(pid) != getsid(0);
    l->pid[l->n++] = pid;
}

/* A profile FILE.N of this run: its writer, if it still runs. */
static void note_leftover(const char *path, long long n, void *ctx)
{
    if (ours(path))
        add_leftover(ctx, profile_writer(path, n));
}

/* Whether process pid has the profiler loaded (NYTP.so in its maps). */
static bool has_profiler(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char *line = NULL;
    size_t cap = 0;
    bool found = false;
    while (!found && getline(&line, &cap, f) > 0)
        found = strstr(line, "/auto/Devel/NYTP/NYTP.so") != NULL;
    free(line);
    fclose(f);
    return found;
}

/* The program's orphans, which come to nytp run (a child subreaper) when
 * the program ends, that have the profiler loaded: a forked perl that
 * may not have opened its FILE.PID yet (a busy machine may not have run
 * it at all since the fork). */
static void note_profiled_orphans(struct leftovers *l)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    pid_t me = getpid();
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        char state;
        pid_t ppid;
        if (*end || pid <= 1 || (pid_t)pid == l->main_pid)
            continue;
        if (proc_state((pid_t)pid, &state, &ppid) && ppid == me && state != 'Z' && state != 'X'
            && has_profiler((pid_t)pid))
            add_leftover(l, (pid_t)pid);
    }
    closedir(d);
}

static void wait_leftovers(struct leftovers *l, const char *profile, const struct timespec *since)
{
    each_pid_profile(profile, since, true, note_leftover, l);
    note_profiled_orphans(l);
    int waited = 0;
    pid_t first = 0;
    for (int i = 0; i < l->n; i++)
        if (!l->detached[i] && !waited++)
            first = l->pid[i];
    if (!waited)
        return;
    /* the handler reads the list: it is complete before it is counted */
    leftover = l->pid;
    leftover_detached = l->detached;
    nleftover = l->n;
    cli_note("waiting for %d process%s that the program left running (pid %d%s) to finish %s",
             waited, waited == 1 ? "" : "es", (int)first, waited > 1 ? ", ..." : "",
             waited == 1 ? "its profile" : "their profiles");
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int left = 0;
        for (int i = 0; i < l->n; i++) {
            if (l->pid[i] <= 0 || l->detached[i])
                continue;
            if (process_gone(l->pid[i]))
                l->pid[i] = -1; /* kept in place: the handler may be reading */
            else if (getsid(l->pid[i]) != getsid(0))
                l->detached[i] = true; /* it has just made a session of its own */
            else
                left++;
        }
        if (!left)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!passed_on && now.tv_sec - t0.tv_sec >= LEFTOVER_GRACE)
            break;
        struct timespec tick = {0, 20 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
}

/* Reporting each FILE.N: the process of a FILE.PID that still runs is
 * named; the end of its process is known for the program itself and for
 * the orphans reaped here. */
struct report_ctx {
    int sig;                     /* the program's: the signal that killed it, or 0 */
    const char *opts;
    const struct leftovers *left;
    int seen;                    /* the first REPORT_MAX are named */
    int others;                  /* FILE.N of another run, not named */
};

#define REPORT_MAX 20

static void report_one(const char *path, long long n, void *ctx)
{
    struct report_ctx *r = ctx;
    if (!ours(path)) {
        r->others++;
        return;
    }
    if (r->seen++ >= REPORT_MAX)
        return;
    pid_t running = 0, writer = profile_writer(path, n);
    for (int i = 0; i < r->left->n; i++)
        if (r->left->pid[i] > 0 && r->left->pid[i] == writer)
            running = writer;
    int sig = writer && writer == r->left->main_pid ? r->sig : writer ? reaped_sig(writer) : -1;
    report_profile(path, sig, r->opts, running);
}

/* The list of the profiles the program opened under names of its own
 * (DB::enable_profile(FILE): Plack::Middleware::NYTP's), which the
 * profiler adds to (NYTP_RUN_FILES); made empty, mode 0600, before the
 * run, removed after. */
static char run_list[PATH_MAX];

static void make_run_list(void)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if ((size_t)snprintf(run_list, sizeof run_list, "%s/nytp-run-XXXXXX", tmp) >= sizeof run_list) {
        run_list[0] = 0;
        return;
    }
    int fd = mkstemp(run_list);
    if (fd < 0)
        run_list[0] = 0;
    else
        close(fd);
}

static void drop_run_list(void)
{
    if (run_list[0])
        unlink(run_list);
    run_list[0] = 0;
}

/* Names each profile of the list (once, this run's, there still, not
 * main: FILE itself, named already): the first REPORT_MAX of them.
 * Returns how many there were. */
static int report_listed(const char *main, pid_t main_pid, int main_sig, const char *opts)
{
    if (!run_list[0])
        return 0;
    FILE *f = fopen(run_list, "re");
    if (!f)
        return 0;
    char **seen = NULL;
    size_t nseen = 0, cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int count = 0;
    while ((len = getline(&line, &lcap, f)) > 0) {
        if (line[len - 1] != '\n')
            continue; /* cut short */
        line[len - 1] = 0;
        bool dup = strcmp(line, main) == 0;
        for (size_t i = 0; i < nseen && !dup; i++)
            dup = strcmp(seen[i], line) == 0;
        struct stat sb;
        if (dup || stat(line, &sb) != 0 || !S_ISREG(sb.st_mode) || !ours(line))
            continue;
        if (nseen == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            char **p = realloc(seen, ncap * sizeof *p);
            if (!p)
                break;
            seen = p;
            cap = ncap;
        }
        if (!(seen[nseen] = strdup(line)))
            break;
        nseen++;
        if (count++ < REPORT_MAX) {
            pid_t writer = profile_writer(line, 0);
            report_profile(line, writer && writer == main_pid ? main_sig : reaped_sig(writer), opts,
                           0);
        }
    }
    if (count > REPORT_MAX)
        cli_note("... and %d more profiles that the program named (DB::enable_profile)",
                 count - REPORT_MAX);
    free(line);
    for (size_t i = 0; i < nseen; i++)
        free(seen[i]);
    free(seen);
    fclose(f);
    return count;
}

/* Whether SCRIPT names perl (perl, perl5.36.0, /usr/bin/perl) rather than
 * a script: 'nytp run perl t.pl', as one would write 'perl -d:NYTProf
 * t.pl', would have perl read its own binary as Perl.  A file of that
 * name that is not an executable binary (a script called perl) is a
 * script. */
static bool is_perl_itself(const char *script)
{
    const char *base = strrchr(script, '/');
    base = base ? base + 1 : script;
    if (strncmp(base, "perl", 4) != 0)
        return false;
    for (const char *c = base + 4; *c; c++)
        if (!isdigit((unsigned char)*c) && *c != '.')
            return false;
    int fd = open(script, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT; /* no such script: the perl on the PATH */
    unsigned char magic[4] = {0};
    ssize_t n = read(fd, magic, sizeof magic);
    close(fd);
    return n == 4 && memcmp(magic, "\x7f" "ELF", 4) == 0;
}

/* SCRIPT looked up in PATH, as perl -S does, when it is not a file here
 * and has no '/' ('nytp run -- starman ...'): the first readable and
 * executable regular file of that name, as a new string; NULL if none. */
static char *script_in_path(const char *script)
{
    if (strchr(script, '/') || access(script, F_OK) == 0)
        return NULL;
    const char *path = getenv("PATH");
    if (!path || !*path)
        return NULL;
    size_t n = strlen(script);
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len) { /* an empty entry is the working directory: already tried */
            char *cand = malloc(len + n + 2);
            if (!cand)
                return NULL;
            memcpy(cand, p, len);
            cand[len] = '/';
            memcpy(cand + len + 1, script, n + 1);
            struct stat sb;
            if (stat(cand, &sb) == 0 && S_ISREG(sb.st_mode) && access(cand, R_OK | X_OK) == 0)
                return cand;
            free(cand);
        }
        if (!end)
            return NULL;
        p = end + 1;
    }
}

int cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"nytprof", required_argument, NULL, OPT_NYTPROF},
        {"perl", required_argument, NULL, OPT_PERL},
        {"children", no_argument, NULL, OPT_CHILDREN},
        {"sample", optional_argument, NULL, OPT_SAMPLE},
        {"rotate", required_argument, NULL, OPT_ROTATE},
        {"cpu", no_argument, NULL, OPT_CPU},
        {NULL, 0, NULL, 0},
    };
    struct run_opts o = {0};
    struct split sp = {0};
    sp.ours = calloc((size_t)argc + 1, sizeof *sp.ours);
    sp.perl = calloc((size_t)argc + 1, sizeof *sp.perl);
    sp.joined = calloc((size_t)argc + 1, sizeof *sp.joined);
    if (!sp.ours || !sp.perl || !sp.joined) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    split_args(argc, argv, &sp);
    int first = cli_parse(sp.nours, sp.ours, "o:", longopts, usage, on_opt, &o);
    if (first < sp.nours)
        cli_usage_error("unexpected argument '%s'", sp.ours[first]);
    if (o.cpu && !o.sample_hz)
        cli_usage_error("--cpu weighs samples by CPU time: give it with --sample (a traced "
                        "profile on the CPU clock, --nytprof=clock=2, reads it at every "
                        "statement and call, a system call each)");
    int script = sp.program;
    if (script >= argc && !sp.has_code)
        cli_usage_error("no program to profile");
    /* '--sample 100': the rate must be in the same word (the value is
     * optional, so the next word is SCRIPT); a script called 100 that is
     * there runs */
    if (o.sample_bare && !sp.has_code && script < argc && argv[script][0]
        && strspn(argv[script], "0123456789") == strlen(argv[script])
        && access(argv[script], F_OK) != 0)
        cli_usage_error("--sample takes its rate in the same word: --sample=%s ('%s' would be "
                        "the script)",
                        argv[script], argv[script]);
    if (!sp.has_code && !o.children && script < argc && is_perl_itself(argv[script]))
        cli_usage_error("'%s' is perl, not a perl script: nytp run starts perl itself "
                        "(nytp run [-o FILE] [--] SCRIPT [ARGS], or -e CODE; --perl=PERL "
                        "for another perl)",
                        argv[script]);
    char *script_path = NULL;
    if (!sp.has_code && !o.children && script < argc) {
        script_path = script_in_path(argv[script]);
        if (script_path)
            argv[script] = script_path;
    }
    if (o.output && !*o.output)
        cli_usage_error("-o needs a file name");
    if (o.children && (sp.nperl || sp.has_code))
        cli_usage_error("--children runs a COMMAND as it is: perl switches (%s) go to the perls it "
                        "starts through PERL5OPT, not here",
                        sp.nperl ? sp.perl[0] : "-e");
    if (o.children && o.perl)
        cli_usage_error("--children profiles every perl the command starts; --perl does not go with it");

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
    size_t vlen;
    if (!option_value(opts, "sigexit", &vlen)) {
        size_t n = strlen(opts) + sizeof RUN_SIGEXIT + 1;
        char *all = malloc(n);
        if (all)
            snprintf(all, n, "%s%s%s", RUN_SIGEXIT, *opts ? ":" : "", opts);
        free(opts);
        opts = all;
        if (!opts) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
    }
    char *profile = NULL;
    if (o.output) {
        profile = strdup(o.output);
    } else {
        profile = file_option(opts);
        if (!profile)
            profile = strdup("nytprof.out");
    }
    /* The profile's name is absolute for perl, so that neither the
     * program's chdir nor a perl started elsewhere (--children) moves it;
     * messages keep the name as given.  With --children every perl writes
     * its own FILE.PID. */
    char *abs_profile = profile ? absolute_path(profile) : NULL;
    if (abs_profile) {
        char *all = with_file(opts, abs_profile);
        free(opts);
        opts = all;
    }
    if (opts && (o.sample_hz || o.rotate)) { /* after --nytprof: these win */
        size_t n = strlen(opts) + (o.rotate ? strlen(o.rotate) : 0) + 40;
        char *all = malloc(n);
        if (all) {
            int k = snprintf(all, n, "%s", opts);
            if (o.sample_hz)
                k += snprintf(all + k, n - (size_t)k, "%ssample=%lu%s", k ? ":" : "", o.sample_hz,
                              o.cpu ? ":clock=2" : "");
            if (o.rotate)
                snprintf(all + k, n - (size_t)k, "%srotate=%s", k ? ":" : "", o.rotate);
        }
        free(opts);
        opts = all;
    }
    if (opts && o.children) {
        size_t n = strlen(opts) + 12;
        char *all = malloc(n);
        if (all)
            snprintf(all, n, "%s:addpid=1", opts);
        free(opts);
        opts = all;
    }
    if (!opts || !profile || !abs_profile) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    /* the profile is written over the script it names after perl read it */
    if (!sp.has_code && script < argc && !o.children)
        cli_output_not_input(profile, 1, argv + script, NULL);

    char dir[PATH_MAX + 64];
    find_profiler(dir, sizeof dir);
    char incopt[PATH_MAX + 70];
    snprintf(incopt, sizeof incopt, "-I%s", dir);

    int nargs = argc - script + sp.nperl;
    char **args = calloc((size_t)nargs + 5, sizeof *args);
    if (!args) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    int k = 0;
    if (!o.children) {
        args[k++] = (char *)perl;
        if (dir[0])
            args[k++] = incopt;
        args[k++] = "-d:NYTP";
        for (int i = 0; i < sp.nperl; i++)
            args[k++] = sp.perl[i];
        /* -e CODE: the rest are @ARGV; SCRIPT: its name is not a switch
         * ('-l.pl', '-i.bak') */
        if (script < argc)
            args[k++] = "--";
    }
    for (int i = script; i < argc; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    const char *run = o.children ? args[0] : perl;

    /* a profile left by an earlier run must not be taken for this one's */
    struct stat old;
    bool had_old = stat(profile, &old) == 0;
    make_run_list();
    struct timespec started;
    clock_gettime(CLOCK_REALTIME, &started);
    snprintf(run_mark, sizeof run_mark, "%d.%lld.%09ld", (int)getpid(), (long long)started.tv_sec,
             started.tv_nsec);
    /* file time stamps come from a coarse clock, a tick behind */
    if (started.tv_nsec >= 50000000) {
        started.tv_nsec -= 50000000;
    } else {
        started.tv_sec--;
        started.tv_nsec += 950000000;
    }

    /* exec's failure comes back through a close-on-exec pipe */
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) < 0) {
        drop_run_list();
        cli_error("cannot create a pipe: %s", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    fflush(stdout);
    fflush(stderr);
    /* the program's orphans come to nytp run, so that wait_leftovers
     * finds one that has not opened its profile yet (Linux) */
#ifdef PR_SET_CHILD_SUBREAPER
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
    /* no signal is handled between the fork and the forwarding set up */
    sigset_t all, before;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &before);
    pid_t pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &before, NULL);
        drop_run_list();
        cli_error("cannot fork: %s", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &before, NULL);
        close(ep[0]);
        int e = 0;
        if (setenv("NYTPROF", opts, 1) != 0 || setenv("NYTP_RUN", run_mark, 1) != 0
            || (run_list[0] && setenv("NYTP_RUN_FILES", run_list, 1) != 0)
            || (dir[0] && setenv("NYTP_INC", dir, 1) != 0)
            || (o.children && children_env(dir) != 0))
            e = errno;
        else
            execvp(run, args);
        if (!e)
            e = errno;
        ssize_t w = write(ep[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(ep[1]);
    struct sigaction old_acts[sizeof forwarded / sizeof *forwarded];
    forward_to = pid;
    forward_signals(old_acts);
    sigprocmask(SIG_SETMASK, &before, NULL);
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(ep[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(ep[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    forward_to = 0; /* gone: its pid may come back as another's */
    struct leftovers left = {.main_pid = pid};
    if (got != (ssize_t)sizeof exec_errno)
        wait_leftovers(&left, profile, &started);
    restore_signals(old_acts);
    if (got == (ssize_t)sizeof exec_errno) {
        drop_run_list();
        cli_error("cannot run %s: %s", run, strerror(exec_errno));
        free(args);
        free(opts);
        free(profile);
        free(script_path);
        free_split(&sp);
        return EXIT_BAD_INPUT;
    }

    int rc;
    if (WIFEXITED(status))
        rc = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        rc = 128 + WTERMSIG(status);
    else
        rc = EXIT_BAD_INPUT;
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (sig && sig == passed_on)
        cli_note("the program was killed by signal %d (SIG%s), which nytp run was sent and "
                 "passed on",
                 sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    else if (sig)
        cli_note("the program was killed by signal %d (SIG%s)", sig,
                 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");

    struct stat sb;
    int named = 0;
    if (had_old && !S_ISREG(old.st_mode)) { /* a FIFO, a device: written through */
        cli_note("profile written to %s", profile);
        named++;
    } else if (stat(profile, &sb) == 0
               && !(had_old && sb.st_ino == old.st_ino && sb.st_mtim.tv_sec == old.st_mtim.tv_sec
                    && sb.st_mtim.tv_nsec == old.st_mtim.tv_nsec)
               && ours(profile)) {
        pid_t writer = profile_writer(profile, 0);
        named += report_profile(profile, !writer || writer == pid ? sig : reaped_sig(writer), opts, 0);
    }
    struct report_ctx rc_ctx = {sig, opts, &left, 0, 0};
    named += each_pid_profile(profile, &started, true, report_one, &rc_ctx) - rc_ctx.others;
    if (rc_ctx.seen > REPORT_MAX)
        cli_note("... and %d more profiles named %s.N", rc_ctx.seen - REPORT_MAX, profile);
    named += report_listed(abs_profile, pid, sig, opts);
    drop_run_list();
    if (!named)
        cli_note("no profile was written (expected %s%s)", profile,
                 o.children ? ".PID: did the command start perl?" : "");
    else if ((o.children || o.rotate) && named > 1) /* rotating, FILE itself is one */
        cli_note("%d profiles: 'nytp top %s%s' or 'nytp html %s%s' reports them together", named,
                 profile, o.rotate ? "*" : ".*", profile, o.rotate ? "*" : ".*");
    free(left.pid);
    free(left.detached);
    free(abs_profile);
    free_split(&sp);
    free(args);
    free(opts);
    free(profile);
    free(script_path);
    return rc;
}

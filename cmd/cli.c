/* cli.c — messages, option parsing and output files shared by commands. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LIBBSD_OPENBSD_VIS
#include <bsd/vis.h>

#include "cli.h"

const char *cli_command = NULL;

/* Length of the UTF-8 sequence at s that a terminal shows as text, or 0
 * when s[0] starts something it may act on: a C0 control or DEL, a C1
 * control (U+0080..U+009F; U+009B is a CSI), or a byte that is not valid
 * UTF-8 (a lone 0x9B is a CSI to an 8-bit terminal). */
static size_t printable_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x20 || c == 0x7f)
        return 0;
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f)
        return 0;
    return len;
}

size_t cli_escape(char *dst, size_t size, const char *src)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t n = strlen(src), k = 0;
    if (!size)
        return 0;
    for (size_t i = 0; i < n;) {
        size_t ok = printable_len(s + i, n - i);
        if (ok) {
            if (k + ok >= size)
                break;
            memcpy(dst + k, s + i, ok);
            k += ok;
            i += ok;
            continue;
        }
        /* \ooo, or \n \t \r ... (at most 4 bytes and the NUL).  strnvis
         * leaves LF and TAB as they are unless told: a newline in a name
         * would start a line of the name's own choosing. */
        char enc[8];
        strnvisx(enc, sizeof enc, src + i, 1, VIS_OCTAL | VIS_CSTYLE | VIS_NL | VIS_TAB);
        size_t el = strlen(enc);
        if (k + el >= size)
            break;
        memcpy(dst + k, enc, el);
        k += el;
        i++;
    }
    dst[k] = 0;
    return k;
}

/* Every message goes through cli_escape: file and sub names come from
 * profiles, and a name holding ESC [ or ESC ] would drive the terminal. */
static void park_if_dying(void);

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
    park_if_dying(); /* an error the signal handler's cleanup caused */
    char line[1024], safe[4 * sizeof line];
    vsnprintf(line, sizeof line, fmt, ap);
    cli_escape(safe, sizeof safe, line);
    if (cli_command)
        fprintf(stderr, "nytp %s: %s%s\n", cli_command, prefix, safe);
    else
        fprintf(stderr, "nytp: %s%s\n", prefix, safe);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

/* Warnings are capped by kind: a profile can hold millions of the same
 * problem (a PID_END without its start, a file id declared again), and
 * each would be a line on stderr.  The first WARN_SHOWN of a kind are
 * shown; the rest are counted and summed up in one line per kind at exit.
 * A kind is a message's format; kinds past the table's end share its
 * last slot. */
#define WARN_SHOWN 10
#define WARN_KINDS 64
typedef struct {
    char kind[160];             /* the format, cut to fit */
    unsigned long seen;
    char last[1024];            /* the last message shown, for the summary */
} warn_kind;
static warn_kind *warn_kinds;   /* WARN_KINDS of them, allocated at the first warning */
static size_t n_warn_kinds;
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

static void warn_summary(void)
{
    pthread_mutex_lock(&warn_lock);
    for (size_t i = 0; i < n_warn_kinds; i++) {
        warn_kind *k = &warn_kinds[i];
        if (k->seen > WARN_SHOWN)
            cli_note("warning: ... and %lu more warnings like this: %s", k->seen - WARN_SHOWN,
                     k->last);
    }
    pthread_mutex_unlock(&warn_lock);
}

/* Whether a warning of this kind is to be shown (its text is line);
 * counts it either way. */
static bool warn_counts(const char *kind, const char *line)
{
    bool show = true;
    pthread_mutex_lock(&warn_lock);
    if (!warn_kinds) {
        warn_kinds = calloc(WARN_KINDS, sizeof *warn_kinds);
        if (warn_kinds)
            atexit(warn_summary);
    }
    if (warn_kinds) {
        size_t i = 0;
        while (i < n_warn_kinds && strncmp(warn_kinds[i].kind, kind, sizeof warn_kinds[i].kind - 1))
            i++;
        if (i == n_warn_kinds) {
            if (n_warn_kinds < WARN_KINDS)
                snprintf(warn_kinds[n_warn_kinds++].kind, sizeof warn_kinds->kind, "%s", kind);
            else
                i = WARN_KINDS - 1;
        }
        warn_kind *k = &warn_kinds[i];
        show = ++k->seen <= WARN_SHOWN;
        if (show)
            snprintf(k->last, sizeof k->last, "%s", line);
    }
    pthread_mutex_unlock(&warn_lock);
    return show;
}

/* A warning of a kind (see warn_counts): shown or counted. */
static void vwarn_kind(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    if (warn_counts(kind, line))
        cli_note("warning: %s", line);
}

static void warn_kind_of(const char *kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn_kind_of(const char *kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn_kind(kind, fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn_kind(fmt, fmt, ap);
    va_end(ap);
}

void cli_warn_error(const nytp_error *w)
{
    warn_kind_of(w->kind ? w->kind : w->msg, "%s", w->msg);
}

_Noreturn void cli_usage_error(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char safe[4 * sizeof line];
    cli_escape(safe, sizeof safe, line);
    if (cli_command)
        fprintf(stderr, "nytp %s: %s (see 'nytp %s --help')\n", cli_command, safe, cli_command);
    else
        fprintf(stderr, "nytp: %s (see 'nytp --help')\n", safe);
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
            warn_kind_of(e->kind ? e->kind : e->msg, "%s: %s", display_name(file), e->msg);
        else
            cli_error("%s: %s", display_name(file), e->msg);
        return;
    }
    nytp_error_where(e, where, sizeof where);
    if (as_warning)
        warn_kind_of(e->kind ? e->kind : e->msg, "%s: %s at %s: %s", display_name(file), what, where,
                     e->msg);
    else
        cli_error("%s: %s at %s: %s", display_name(file), what, where, e->msg);
}

void cli_reader_warning(void *ctx, const nytp_error *w)
{
    char where[200];
    nytp_error_where(w, where, sizeof where);
    warn_kind_of(w->kind ? w->kind : w->msg, "%s: at %s: %s", display_name(ctx), where, w->msg);
}

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
            fputs(usage, stdout);
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

/* ---- temporary files, signals and standard output ------------------------ */

/* What a fatal signal must remove.  The paths are copied into static
 * storage so the handler needs neither malloc nor a lock; a slot is
 * published by storing its state after its path. */
enum { TEMP_FREE = 0, TEMP_FILE, TEMP_DIR };
#define MAX_TEMPS 8
static struct {
    _Atomic int state;
    char path[PATH_MAX];
} temps[MAX_TEMPS];
static _Atomic int signals_held, signal_pending, dying;
/* Every signal whose default action ends the process (signal(7): Term
 * and Core), but SIGKILL, which cannot be caught, and the real-time
 * signals, from SIGRTMIN on, which also end it. */
static const int fatal_signals[] = {
    SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGUSR1, SIGSEGV,
    SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
    SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF,
#ifdef SIGPOLL
    SIGPOLL,
#endif
#ifdef SIGPWR
    SIGPWR,
#endif
    SIGSYS,
};

/* Empty a directory of files and remove it, with async-signal-safe calls
 * only (getdents64 instead of readdir, which may allocate). */
static void empty_flat_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096] __attribute__((aligned(8)));
    for (long pass = 0; pass < (1L << 24); pass++) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        bool removed = false;
        for (long at = 0; at < n;) {
            /* struct linux_dirent64: ino, off, reclen, type, name */
            unsigned short reclen;
            memcpy(&reclen, buf + at + 16, sizeof reclen);
            const char *name = buf + at + 19;
            if (strcmp(name, ".") && strcmp(name, ".."))
                removed |= unlinkat(fd, name, 0) == 0;
            at += reclen;
        }
        if (removed)
            lseek(fd, 0, SEEK_SET); /* entries may move as others go */
    }
    close(fd);
}

/* Another thread may still be creating a page in it (one each at most:
 * see park_if_dying), so empty it again until rmdir finds it empty; once
 * it is gone, nothing more can be created in it. */
static void remove_flat_dir(const char *path)
{
    for (int round = 0; round < 1000; round++) {
        empty_flat_dir(path);
        if (rmdir(path) == 0 || errno != ENOTEMPTY)
            return;
    }
}

static void remove_temps(void)
{
    for (int i = 0; i < MAX_TEMPS; i++) {
        int st = atomic_load(&temps[i].state);
        if (st == TEMP_FILE)
            unlink(temps[i].path);
        else if (st == TEMP_DIR)
            remove_flat_dir(temps[i].path);
    }
}

/* Once a fatal signal is being handled, other threads must neither create
 * files in what the handler removes nor report the errors its removal
 * causes: they wait here for the end of the process. */
static void park_if_dying(void)
{
    if (atomic_load(&dying))
        for (;;)
            pause();
}

static _Noreturn void die_of(int sig)
{
    if (atomic_exchange(&dying, 1)) /* another thread is already at it */
        for (;;)
            pause();
    remove_temps();
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached */
}

/* A fault (or abort()) cannot wait for cli_signals_release: the handler's
 * return would run the faulting instruction again, or abort() would kill
 * the process with the default action. */
static bool signal_waits(int sig)
{
    return sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE && sig != SIGILL && sig != SIGTRAP &&
           sig != SIGSYS && sig != SIGABRT;
}

static void on_fatal_signal(int sig)
{
    if (atomic_load(&signals_held) && signal_waits(sig)) {
        atomic_store(&signal_pending, sig);
        return;
    }
    die_of(sig);
}

static void install_handler(int sig)
{
    struct sigaction old, sa;
    /* Only a signal left at its default: one ignored when nytp started
     * (nohup, a shell's background job) stays ignored, and one that
     * something else handles (a sanitizer's SIGSEGV report) stays its. */
    if (sigaction(sig, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NODEFER;
    sigaction(sig, &sa, NULL);
}

static void install_handlers(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        install_handler(fatal_signals[i]);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
        install_handler(sig);
}

int cli_temp_register(const char *path, bool is_dir)
{
    if (!path || strlen(path) >= PATH_MAX)
        return -1;
    install_handlers();
    for (int i = 0; i < MAX_TEMPS; i++) {
        int expected = TEMP_FREE;
        /* claim the slot with a state no handler acts on, fill it, publish */
        if (atomic_compare_exchange_strong(&temps[i].state, &expected, -1)) {
            strcpy(temps[i].path, path);
            atomic_store(&temps[i].state, is_dir ? TEMP_DIR : TEMP_FILE);
            return i;
        }
    }
    return -1;
}

void cli_temp_unregister(int slot)
{
    if (slot >= 0 && slot < MAX_TEMPS)
        atomic_store(&temps[slot].state, TEMP_FREE);
}

void cli_signals_hold(void)
{
    atomic_fetch_add(&signals_held, 1);
}

void cli_signals_release(void)
{
    if (atomic_fetch_sub(&signals_held, 1) == 1) {
        int sig = atomic_exchange(&signal_pending, 0);
        if (sig)
            die_of(sig);
    }
}

void cli_close_stdout(void)
{
    errno = 0;
    bool bad = ferror(stdout) != 0;
    if (fflush(stdout) != 0)
        bad = true;
    if (bad) {
        int e = errno;
        cli_error("standard output: %s", e ? strerror(e) : "write error");
        _exit(EXIT_BAD_INPUT);
    }
}

/* ---- file outputs ------------------------------------------------------------ */

/* Which slot of the registry each open output's temporary holds. */
static struct {
    const nytp_out *out;
    int slot;
} out_slots[MAX_TEMPS];

static void output_forget(const nytp_out *out);

nytp_out *cli_output_open(const char *path)
{
    nytp_out *out;
    nytp_error e = {0};
    if (!path)
        path = "-";
    /* Not held while opening: opening a FIFO waits for its reader, and
     * Ctrl-C must work then.  A signal in the instant between creating a
     * temporary and registering it is the one case left uncovered. */
    park_if_dying();
    if (nytp_out_open_file(&out, path, NYTP_OUT_ATOMIC, &e) < 0) {
        cli_error("%s: %s", path, e.msg);
        return NULL;
    }
    cli_signals_hold();
    const char *tmp = nytp_out_temp_path(out);
    output_forget(out); /* an earlier out at this address, aborted directly */
    if (tmp) {
        int slot = cli_temp_register(tmp, false);
        for (int i = 0; slot >= 0 && i < MAX_TEMPS; i++)
            if (!out_slots[i].out) {
                out_slots[i].out = out;
                out_slots[i].slot = slot;
                break;
            }
    }
    cli_signals_release();
    return out;
}

/* Forget out's temporary (it is renamed or removed now). */
static void output_forget(const nytp_out *out)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if (out_slots[i].out == out) {
            cli_temp_unregister(out_slots[i].slot);
            out_slots[i].out = NULL;
        }
}

int cli_output_close(nytp_out *out, const char *path)
{
    nytp_error e = {0};
    /* A rename must not be cut off from its bookkeeping; a FIFO's close,
     * which may wait for its reader, has no temporary and stays killable. */
    bool renames = nytp_out_temp_path(out) != NULL;
    if (renames)
        cli_signals_hold();
    int st = nytp_out_close(out, &e);
    output_forget(out);
    if (renames)
        cli_signals_release();
    if (st < 0) {
        cli_error("%s: %s", path && strcmp(path, "-") ? path : "(standard output)", e.msg);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

int cli_output_finish(nytp_out *out, const char *path, int status)
{
    if (status >= 0)
        return cli_output_close(out, path);
    const nytp_error *e = nytp_out_error(out);
    cli_error("%s: %s", path && strcmp(path, "-") ? path : "(standard output)",
              e && e->status ? e->msg : "out of memory");
    nytp_out_abort(out);
    output_forget(out);
    return EXIT_BAD_INPUT;
}

FILE *cli_open_source(const char *path, uint64_t max_size)
{
    /* O_NONBLOCK: opening a FIFO without a writer returns at once */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return NULL;
    struct stat sb;
    int why = 0;
    if (fstat(fd, &sb) < 0)
        why = errno;
    else if (S_ISDIR(sb.st_mode))
        why = EISDIR;
    else if (!S_ISREG(sb.st_mode))
        why = EINVAL;
    else if ((uint64_t)sb.st_size > max_size)
        why = EFBIG;
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
        why = errno;
    FILE *f = why ? NULL : fdopen(fd, "rb");
    if (!f) {
        if (!why)
            why = errno;
        close(fd);
        errno = why;
    }
    return f;
}

/* ---- growing arrays ------------------------------------------------------ */

/* The doubling of cap (from 16) that holds need elements, at most max; 0
 * when none does or its bytes would not fit in a size_t. */
static size_t grown_cap(size_t cap, size_t need, size_t max, size_t elem)
{
    if (need > max || (elem && need > SIZE_MAX / elem))
        return 0;
    size_t n = cap ? cap : 16;
    while (n < need)
        n = n > max / 2 ? max : n * 2;
    if (elem && n > SIZE_MAX / elem)
        n = need;
    return n;
}

/* Grow *v (room for *cap) to hold need elements, at most max. */
static bool grow_to(void **v, size_t need, size_t *cap, size_t elem, size_t max)
{
    if (need <= *cap)
        return true;
    size_t n = grown_cap(*cap, need, max, elem);
    void *p = n ? realloc(*v, n * elem) : NULL;
    if (!p)
        return false;
    *v = p;
    *cap = n;
    return true;
}

bool cli_grow(void **v, size_t need, uint32_t *cap, size_t elem)
{
    size_t c = *cap;
    bool ok = grow_to(v, need, &c, elem, UINT32_MAX);
    *cap = (uint32_t)c;
    return ok;
}

bool cli_grow_size(void **v, size_t need, size_t *cap, size_t elem)
{
    return grow_to(v, need, cap, elem, SIZE_MAX);
}

bool cli_grow_zeroed(void **v, size_t need, uint32_t *cap, size_t elem)
{
    uint32_t was = *cap;
    if (!cli_grow(v, need, cap, elem))
        return false;
    memset((char *)*v + (size_t)was * elem, 0, (size_t)(*cap - was) * elem);
    return true;
}

/* An input's file identity, and where it was named. */
typedef struct {
    dev_t dev;
    ino_t ino;
    int at;
} input_id;

static int input_id_cmp(const void *a, const void *b)
{
    const input_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* Sorted by identity, each file named again points at its first naming:
 * n log n, as a day of a service's profile segments is tens of
 * thousands of names (comparing each with all before it took 2 s of the
 * 3.3 s that 40,000 small profiles took to load). */
int cli_unique_inputs(int nfiles, char **files)
{
    input_id *ids = calloc((size_t)nfiles + 1, sizeof *ids);
    int *first = calloc((size_t)nfiles + 1, sizeof *first);
    char **named = calloc((size_t)nfiles + 1, sizeof *named); /* files moves down */
    if (!ids || !first || !named) { /* keep them all: at worst counted twice */
        free(ids);
        free(first);
        free(named);
        return nfiles;
    }
    memcpy(named, files, (size_t)nfiles * sizeof *named);
    int n = 0;
    for (int i = 0; i < nfiles; i++) {
        struct stat sb;
        bool is_stdin = strcmp(files[i], "-") == 0;
        first[i] = i;
        if ((is_stdin ? fstat(0, &sb) : stat(files[i], &sb)) < 0)
            continue; /* kept: opening it reports why not */
        ids[n].dev = sb.st_dev;
        ids[n].ino = sb.st_ino;
        ids[n].at = i;
        n++;
    }
    qsort(ids, (size_t)n, sizeof *ids, input_id_cmp);
    for (int k = 1; k < n; k++)
        if (ids[k].dev == ids[k - 1].dev && ids[k].ino == ids[k - 1].ino)
            first[ids[k].at] = first[ids[k - 1].at];
    int k = 0;
    for (int i = 0; i < nfiles; i++) {
        if (first[i] != i) {
            const char *was = named[first[i]];
            if (strcmp(was, files[i]) == 0)
                cli_warn("%s: given twice; read once", display_name(files[i]));
            else
                cli_warn("%s: the same file as %s; read once", display_name(files[i]),
                         display_name(was));
            continue;
        }
        files[k++] = files[i];
    }
    free(ids);
    free(first);
    free(named);
    return k;
}

void cli_output_not_input(const char *output, int nfiles, char *const *files,
                          const char *default_input)
{
    struct stat ob;
    bool to_stdout = !output || strcmp(output, "-") == 0;
    if ((to_stdout ? fstat(1, &ob) : stat(output, &ob)) < 0 || !S_ISREG(ob.st_mode))
        return; /* a new file, a device, a FIFO: nothing to destroy */
    char *const def[] = {(char *)default_input};
    if (nfiles == 0 && default_input) {
        files = def;
        nfiles = 1;
    }
    for (int i = 0; i < nfiles; i++) {
        struct stat ib;
        bool is_stdin = strcmp(files[i], "-") == 0;
        if ((is_stdin ? fstat(0, &ib) : stat(files[i], &ib)) < 0)
            continue;
        if (ib.st_dev != ob.st_dev || ib.st_ino != ob.st_ino)
            continue;
        const char *in = is_stdin ? "standard input" : display_name(files[i]);
        if (to_stdout)
            cli_error("standard output is the same file as %s%s: it would be overwritten; refusing",
                      is_stdin ? "" : "the input ", in);
        else if (files == def)
            cli_error("-o %s is the input read when no file is named: it would be overwritten; "
                      "refusing", display_name(output));
        else if (strcmp(output, files[i]) == 0)
            cli_error("-o %s is also an input: it would be overwritten; refusing", display_name(output));
        else
            cli_error("-o %s is the same file as the input %s: it would be overwritten; refusing",
                      display_name(output), in);
        exit(EXIT_USAGE);
    }
}

/* The name a file is known by whichever way the profile spelled it: its
 * real path when it exists, else the name with "//" and "/./" squeezed
 * and a leading "./" dropped ("a/../b" is left alone: "a" may be a
 * symlink). */
static char *file_key(const char *name)
{
    char *real = realpath(name, NULL);
    if (real)
        return real;
    char *k = strdup(name);
    if (!k)
        return NULL;
    char *o = k;
    for (const char *s = name; *s;) {
        if (s == name && s[0] == '.' && s[1] == '/' && s[2]) {
            s += 2;
            while (*s == '/')
                s++;
            continue;
        }
        if (*s == '/' && o > k && o[-1] == '/') {
            s++;
            continue;
        }
        if (*s == '.' && o > k && o[-1] == '/' && s[1] == '/') {
            s += 2;
            continue;
        }
        *o++ = *s++;
    }
    *o = 0;
    return k;
}

typedef struct keyed_fid {
    char *key;
    uint32_t fid;
} keyed_fid;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed_fid *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->fid > y->fid) - (x->fid < y->fid);
}

int cli_fold_aliases(nytp_profile *p)
{
    keyed_fid *v = calloc((size_t)p->n_files + 1, sizeof *v);
    uint32_t *into = malloc(((size_t)p->n_files + 1) * sizeof *into);
    uint32_t n = 0;
    int st = v && into ? NYTP_OK : NYTP_E_NOMEM;
    for (uint32_t fid = 0; st == NYTP_OK && fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        into[fid] = fid;
        if (!fid || !f->defined || f->eval_fid || nytp_file_is_empty(f) || memchr(nytp_profile_str(p, f->name), 0,
                                                                                     nytp_profile_strlen(p, f->name)))
            continue;
        if (!(v[n].key = file_key(nytp_profile_str(p, f->name))))
            st = NYTP_E_NOMEM;
        else
            v[n++].fid = fid;
    }
    bool any = false;
    if (st == NYTP_OK && n > 1) {
        qsort(v, n, sizeof *v, cmp_keyed);
        for (uint32_t i = 1; i < n; i++)
            if (strcmp(v[i].key, v[i - 1].key) == 0) {
                into[v[i].fid] = into[v[i - 1].fid]; /* the lowest fid of the group */
                any = true;
            }
    }
    if (any)
        st = nytp_profile_fold_files(p, into);
    for (uint32_t i = 0; i < n; i++)
        free(v[i].key);
    free(v);
    free(into);
    return st;
}

/* ---- which run an input is of ----------------------------------------------------- */

typedef struct run_of {
    char id[96];            /* "nytp_run=...", "run_id=..." or "basetime=..." */
    bool segment;
    uint32_t pid;
    long long basetime;
} run_of;

static void kv_copy(char *dst, size_t size, const char *key, const nytp_str *v)
{
    snprintf(dst, size, "%s=%.*s", key, (int)(v->len < 64 ? v->len : 64), v->ptr);
}

/* From the header, up to PID_START (a few chunks): false when it cannot
 * be read or is not a regular file. */
static bool read_run_of(const char *path, run_of *r)
{
    struct stat st;
    memset(r, 0, sizeof *r);
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    nytp_reader *rd;
    nytp_error e;
    if (nytp_reader_open(&rd, path, &e) < 0)
        return false;
    nytp_reader_set_warn(rd, NULL, NULL);
    char nytp_run[96] = "", run_id[96] = "", base[96] = "";
    nytp_chunk c;
    for (int k = 0; k < 256 && nytp_reader_next(rd, &c, &e) == NYTP_OK; k++) {
        if (c.tag == NYTP_TAG_PID_START) {
            r->pid = c.u.pid_start.pid;
            break;
        }
        if (c.tag != NYTP_TAG_ATTRIBUTE)
            continue;
        const nytp_str *key = &c.u.kv.key, *v = &c.u.kv.value;
#define KEY_IS(s) (key->len == sizeof s - 1 && memcmp(key->ptr, s, sizeof s - 1) == 0)
        if (KEY_IS("segment"))
            r->segment = true;
        else if (KEY_IS("nytp_run"))
            kv_copy(nytp_run, sizeof nytp_run, "nytp_run", v);
        else if (KEY_IS("run_id"))
            kv_copy(run_id, sizeof run_id, "run_id", v);
        else if (KEY_IS("basetime")) {
            kv_copy(base, sizeof base, "basetime", v);
            r->basetime = strtoll(base + 9, NULL, 10);
        }
#undef KEY_IS
    }
    nytp_reader_close(rd);
    snprintf(r->id, sizeof r->id, "%s", nytp_run[0] ? nytp_run : run_id[0] ? run_id : base);
    return true;
}

static void describe_run(const run_of *r, char *buf, size_t size)
{
    time_t t = (time_t)r->basetime;
    struct tm tm;
    char when[32] = "?";
    if (localtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, size, "started %s, pid %u", when, (unsigned)r->pid);
}

void cli_check_runs(int nfiles, char *const *files)
{
    if (nfiles < 2)
        return;
    run_of *r = malloc((size_t)nfiles * sizeof *r);
    if (!r)
        return; /* a check, not the report: the loading says it if memory is short */
    int segments = 0;
    for (int i = 0; i < nfiles; i++) {
        if (!read_run_of(files[i], &r[i]))
            r[i].id[0] = 0;
        segments += r[i].segment;
    }
    int a = -1, b = -1;
    for (int i = 0; i < nfiles && segments && b < 0; i++) {
        if (!r[i].id[0])
            continue;
        if (a < 0)
            a = i;
        else if (strcmp(r[i].id, r[a].id) != 0)
            b = i;
    }
    if (b >= 0) {
        char da[96], db[96];
        describe_run(&r[a], da, sizeof da);
        describe_run(&r[b], db, sizeof db);
        cli_warn("%s (%s) and %s (%s) are of different runs, with segments among the inputs: "
                 "their numbers are added up as one; give the files of one run",
                 files[a], da, files[b], db);
    }
    free(r);
}

nytp_profile *cli_load_profile(int nfiles, char **files, bool strict, int *rc)
{
    return cli_load_profile_with(nfiles, files, strict, NULL, NULL, rc);
}

nytp_profile *cli_load_profile_with(int nfiles, char **files, bool strict,
                                    int (*on_chunk)(void *ctx, const nytp_chunk *c), void *ctx,
                                    int *rc)
{
    static char *default_file[] = {"nytprof.out"};
    if (nfiles == 0) {
        nfiles = 1;
        files = default_file;
    }
    nytp_profile *p;
    nytp_error e = {0};
    *rc = EXIT_OK;
    if (nytp_profile_new(&p, &e) < 0) {
        cli_error("%s", e.msg);
        *rc = EXIT_BAD_INPUT;
        return NULL;
    }
    nfiles = cli_unique_inputs(nfiles, files);
    cli_check_runs(nfiles, files);
    for (int i = 0; i < nfiles; i++) {
        nytp_load_opts lo = {cli_reader_warning, files[i], on_chunk, ctx, true};
        int st = nytp_profile_load(p, files[i], &lo, &e);
        if (st == NYTP_E_TRUNCATED) {
            size_t n = strlen(e.msg);
            snprintf(e.msg + n, sizeof e.msg - n, "%s",
                     strict ? "" : "; loaded everything before the cut");
            cli_report(files[i], &e, !strict);
            if (strict)
                *rc = EXIT_BAD_INPUT;
        } else if (st < 0) {
            cli_report(files[i], &e, false);
            *rc = EXIT_BAD_INPUT;
        }
        if (*rc != EXIT_OK) {
            nytp_profile_free(p);
            return NULL;
        }
    }
    if (nytp_profile_finish(p) < 0) {
        cli_error("out of memory");
        *rc = EXIT_BAD_INPUT;
        nytp_profile_free(p);
        return NULL;
    }
    return p;
}

/* Append to buf (of size bytes, n used), cut to fit. */
static void __attribute__((format(printf, 4, 5)))
note_add(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *n, size - *n, fmt, ap);
    va_end(ap);
    if (k > 0)
        *n = (size_t)k < size - *n ? *n + (size_t)k : size - 1;
}

const char *cli_sampled_note(const nytp_profile *p, char *buf, size_t size)
{
    if (!p->counts_unknown || !size)
        return NULL;
    size_t n = 0;
    buf[0] = 0;
    if (p->n_sampled < p->n_inputs)
        note_add(buf, size, &n, "%u of %u inputs ", p->n_sampled, p->n_inputs);
    if (p->sample_hz_mixed)
        note_add(buf, size, &n, "sampled at several rates");
    else
        note_add(buf, size, &n, "sampled at %.0f Hz", p->sample_hz);
    note_add(buf, size, &n, ", %llu samples", (unsigned long long)p->samples);
    if (p->n_sample_counts < p->n_sampled)
        note_add(buf, size, &n, " (%u cut short: their samples not counted)",
                 p->n_sampled - p->n_sample_counts);
    note_add(buf, size, &n, "; counts unknown");
    return buf;
}

/* ---- directory outputs ---------------------------------------------------- */

#define MARKER ".nytp-report"

/* One line of the marker: a report kind and a file it wrote. */
typedef struct {
    char *kind, *name;
} mark;

typedef struct {
    mark *v;
    size_t n, cap;
} marks;

static void marks_free(marks *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].kind);
        free(m->v[i].name);
    }
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

static int marks_add(marks *m, const char *kind, const char *name)
{
    if (m->n == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        mark *nv = realloc(m->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        m->v = nv;
        m->cap = ncap;
    }
    m->v[m->n].kind = strdup(kind);
    m->v[m->n].name = strdup(name);
    if (!m->v[m->n].kind || !m->v[m->n].name) {
        free(m->v[m->n].kind);
        free(m->v[m->n].name);
        return -1;
    }
    m->n++;
    return 0;
}

static int mark_cmp(const void *a, const void *b)
{
    return strcmp(((const mark *)a)->name, ((const mark *)b)->name);
}

/* The kind that wrote name, or NULL: nytp did not write it.  m sorted. */
static const char *marks_kind(const marks *m, const char *name)
{
    mark key = {NULL, (char *)name};
    const mark *hit = m->n ? bsearch(&key, m->v, m->n, sizeof *m->v, mark_cmp) : NULL;
    return hit ? hit->kind : NULL;
}

/* A name a report may have: one path component, not ours to reserve. */
static bool report_name_ok(const char *name)
{
    return *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
           strncmp(name, ".nytp-", 6) != 0;
}

/* The marker keeps names as bytes; %XX stands for a control byte, a
 * space, '%' and DEL, so that one line is one file. */
static void put_escaped(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == '%' || *p == 0x7f)
            fprintf(f, "%%%02X", *p);
        else
            fputc(*p, f);
}

static bool unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '%') {
            unsigned v;
            if (sscanf(p + 1, "%2x", &v) != 1 || !isxdigit((unsigned char)p[1]) ||
                !isxdigit((unsigned char)p[2]) || v == 0)
                return false;
            *o++ = (char)v;
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return true;
}

/* Read dir's marker into m (sorted by name).  A missing marker is an
 * empty list; a line that is not "KIND NAME" with a valid name is not
 * trusted (skipped).  Returns 0, or -1 after reporting (shown: dir as the
 * user named it). */
static int marks_read(const char *dir, const char *shown, marks *m)
{
    m->v = NULL;
    m->n = m->cap = 0;
    size_t n = strlen(dir) + sizeof MARKER + 2;
    char *path = malloc(n);
    if (!path) {
        cli_error("out of memory");
        return -1;
    }
    snprintf(path, n, "%s/%s", dir, MARKER);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    free(path);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        cli_error("%s/%s: %s", shown, MARKER, strerror(errno));
        return -1;
    }
    struct stat sb;
    FILE *f = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? fdopen(fd, "r") : NULL;
    if (!f) {
        close(fd);
        cli_error("%s/%s: not a regular file; not trusting it", shown, MARKER);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        char *sp = strchr(line, ' ');
        if (line[0] == '#' || !sp || sp == line)
            continue;
        *sp = 0;
        if (!unescape(sp + 1) || !report_name_ok(sp + 1))
            continue;
        if (marks_add(m, line, sp + 1) < 0) {
            cli_error("out of memory");
            rc = -1;
        }
    }
    free(line);
    fclose(f);
    if (rc < 0)
        marks_free(m);
    else if (m->n)
        qsort(m->v, m->n, sizeof *m->v, mark_cmp);
    return rc;
}

/* Write the marker into d->tmp, listing the other kinds' files of old,
 * then also old's files of d's kind when keep_old (a report half moved in
 * must not lose them), then d's names; move it to dir/MARKER when dir is
 * not NULL.  Returns 0, or -1 after reporting. */
static int marks_write(cli_outdir *d, const marks *old, bool keep_old, const char *dir)
{
    size_t n = strlen(d->tmp) + sizeof MARKER + 2;
    char *path = malloc(n);
    if (!path) {
        cli_error("out of memory");
        return -1;
    }
    snprintf(path, n, "%s/%s", d->tmp, MARKER);
    FILE *f = fopen(path, "we");
    if (!f) {
        cli_error("%s/%s: %s", d->path, MARKER, strerror(errno));
        free(path);
        return -1;
    }
    fputs("# Files written by nytp's reports (kind, name; %XX is a byte): nytp\n"
          "# replaces or removes only the files listed here.\n", f);
    for (size_t i = 0; old && i < old->n; i++) {
        bool mine = strcmp(old->v[i].kind, d->kind) == 0 || d->delete_old;
        if (mine && !keep_old)
            continue;
        fprintf(f, "%s ", old->v[i].kind);
        put_escaped(f, old->v[i].name);
        fputc('\n', f);
    }
    for (size_t i = 0; i < d->n_names; i++) {
        fprintf(f, "%s ", d->kind);
        put_escaped(f, d->names[i]);
        fputc('\n', f);
    }
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0)
        bad = true;
    int rc = 0;
    if (bad) {
        cli_error("%s/%s: %s", d->path, MARKER, strerror(errno));
        rc = -1;
    } else if (dir) {
        char *to = malloc(strlen(dir) + sizeof MARKER + 2);
        if (!to) {
            cli_error("out of memory");
            rc = -1;
        } else {
            sprintf(to, "%s/%s", dir, MARKER);
            if (rename(path, to) < 0) {
                cli_error("%s/%s: %s", d->path, MARKER, strerror(errno));
                rc = -1;
            }
            free(to);
        }
    }
    if (rc < 0)
        unlink(path);
    free(path);
    return rc;
}

static void outdir_free(cli_outdir *d)
{
    cli_temp_unregister(d->slot);
    d->slot = -1;
    for (size_t i = 0; i < d->n_names; i++)
        free(d->names[i]);
    free(d->names);
    free(d->path);
    free(d->target);
    free(d->tmp);
    d->names = NULL;
    d->n_names = d->cap_names = 0;
    d->path = d->target = d->tmp = NULL;
}

/* path without trailing slashes, with its links followed: the directory
 * to write.  NULL after reporting. */
static char *outdir_target(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    char *trimmed = strndup(path, n);
    if (!trimmed) {
        cli_error("out of memory");
        return NULL;
    }
    bool magic;
    nytp_error e = {0};
    char *t = nytp_path_follow_links(trimmed, &magic, &e);
    free(trimmed);
    if (!t) {
        cli_error("%s: %s", path, e.msg);
        return NULL;
    }
    if (magic) {
        cli_error("%s: not a directory", path);
        free(t);
        return NULL;
    }
    return t;
}

/* Whether a file name in dir is in the way of a report: there, and not
 * a regular file that the marker lists.  Reports it. */
static bool in_the_way(const char *shown, const char *dir, const marks *m, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *full = malloc(n);
    if (!full) {
        cli_error("out of memory");
        return true;
    }
    snprintf(full, n, "%s/%s", dir, name);
    struct stat sb;
    int st = lstat(full, &sb);
    free(full);
    if (st < 0)
        return false;
    if (!marks_kind(m, name)) {
        cli_error("%s: %s there was not written by nytp (no %s lists it); not replacing it "
                  "(move it away or choose another -o)", shown, name, MARKER);
        return true;
    }
    if (!S_ISREG(sb.st_mode)) {
        cli_error("%s: %s there is not a regular file; not replacing it", shown, name);
        return true;
    }
    return false;
}

/* The checks of cli_outdir_check on a target; *exists says whether it is
 * there.  m gets its marker when it is. */
static int outdir_check_target(const char *path, const char *target, const char *const *always,
                               bool *exists, marks *m)
{
    struct stat sb;
    m->v = NULL;
    m->n = m->cap = 0;
    *exists = stat(target, &sb) == 0;
    if (!*exists) {
        if (errno != ENOENT) {
            cli_error("%s: %s", path, strerror(errno));
            return EXIT_BAD_INPUT;
        }
        /* say which part of the path is missing */
        char *parent = strdup(target);
        if (!parent) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
        char *slash = strrchr(parent, '/');
        if (!slash)
            strcpy(parent, ".");
        else if (slash == parent)
            slash[1] = 0;
        else
            *slash = 0;
        int rc = EXIT_OK, err = 0;
        if (stat(parent, &sb) < 0)
            err = errno;
        else if (!S_ISDIR(sb.st_mode))
            err = ENOTDIR;
        if (err) {
            cli_error("%s: cannot create a directory beside it: %s: %s", path, parent,
                      strerror(err));
            rc = EXIT_BAD_INPUT;
        }
        free(parent);
        return rc;
    }
    if (!S_ISDIR(sb.st_mode)) {
        cli_error("%s: exists and is not a directory", path);
        return EXIT_BAD_INPUT;
    }
    if (access(target, W_OK | X_OK) < 0) {
        cli_error("%s: cannot write into it: %s", path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (marks_read(target, path, m) < 0)
        return EXIT_BAD_INPUT;
    for (size_t i = 0; always && always[i]; i++)
        if (in_the_way(path, target, m, always[i])) {
            marks_free(m);
            return EXIT_BAD_INPUT;
        }
    return EXIT_OK;
}

int cli_outdir_check(const char *path, const char *kind, const char *const *always)
{
    (void)kind;
    char *target = outdir_target(path);
    if (!target)
        return EXIT_BAD_INPUT;
    bool exists;
    marks m;
    int rc = outdir_check_target(path, target, always, &exists, &m);
    marks_free(&m);
    free(target);
    return rc;
}

int cli_outdir_open(cli_outdir *d, const char *path, const char *kind, const char *const *always)
{
    memset(d, 0, sizeof *d);
    d->slot = -1;
    d->kind = kind;
    d->target = outdir_target(path);
    d->path = strdup(path);
    if (!d->target || !d->path) {
        if (d->target)
            cli_error("out of memory");
        outdir_free(d);
        return EXIT_BAD_INPUT;
    }
    marks m;
    if (outdir_check_target(path, d->target, always, &d->into, &m) != EXIT_OK) {
        outdir_free(d);
        return EXIT_BAD_INPUT;
    }
    marks_free(&m);
    size_t n = strlen(d->target) + 32;
    d->tmp = malloc(n);
    if (!d->tmp) {
        cli_error("out of memory");
        outdir_free(d);
        return EXIT_BAD_INPUT;
    }
    /* Beside a new directory, which it becomes; inside an existing one, so
     * that its files move into it on the same file system. */
    snprintf(d->tmp, n, d->into ? "%s/.nytp-tmpXXXXXX" : "%s.tmpXXXXXX", d->target);
    cli_signals_hold();
    if (!mkdtemp(d->tmp)) {
        cli_signals_release();
        if (d->into)
            cli_error("%s: cannot write into it: %s", path, strerror(errno));
        else
            cli_error("%s: cannot create a directory beside it: %s", path, strerror(errno));
        free(d->tmp);
        d->tmp = NULL;
        outdir_free(d);
        return EXIT_BAD_INPUT;
    }
    d->slot = cli_temp_register(d->tmp, true);
    cli_signals_release();
    if (!d->into) {
        /* mkdtemp makes it 0700; a report is for reading */
        mode_t um = umask(0);
        umask(um);
        chmod(d->tmp, 0777 & ~um);
    }
    return EXIT_OK;
}

nytp_out *cli_outdir_file(cli_outdir *d, const char *name)
{
    if (!report_name_ok(name)) {
        cli_error("%s: refusing to write '%s' outside the report", d->path, name);
        return NULL;
    }
    if (d->n_names == d->cap_names) {
        size_t ncap = d->cap_names ? d->cap_names * 2 : 64;
        char **nv = realloc(d->names, ncap * sizeof *nv);
        if (!nv) {
            cli_error("out of memory");
            return NULL;
        }
        d->names = nv;
        d->cap_names = ncap;
    }
    size_t n = strlen(d->tmp) + strlen(name) + 2;
    char *full = malloc(n);
    char *copy = strdup(name);
    if (!full || !copy) {
        free(full);
        free(copy);
        cli_error("out of memory");
        return NULL;
    }
    snprintf(full, n, "%s/%s", d->tmp, name);
    park_if_dying();
    nytp_out *out;
    nytp_error e = {0};
    int st = nytp_out_open_file(&out, full, 0, &e);
    free(full);
    if (st < 0) {
        free(copy);
        cli_error("%s/%s: %s", d->path, name, e.msg);
        return NULL;
    }
    d->names[d->n_names++] = copy;
    return out;
}

int cli_outdir_close_file(cli_outdir *d, nytp_out *out, const char *name)
{
    nytp_error e = {0};
    if (nytp_out_close(out, &e) < 0) {
        cli_error("%s/%s: %s", d->path, name, e.msg);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Move the finished files into the existing target: check that nothing
 * foreign is in the way, list old and new files in the marker, move, then
 * remove this kind's files that the new report no longer has, and list
 * only what is there. */
static int commit_into(cli_outdir *d)
{
    marks m;
    if (marks_read(d->target, d->path, &m) < 0)
        return EXIT_BAD_INPUT;
    for (size_t i = 0; i < d->n_names; i++)
        if (in_the_way(d->path, d->target, &m, d->names[i])) {
            marks_free(&m);
            return EXIT_BAD_INPUT;
        }
    int rc = EXIT_OK;
    if (marks_write(d, &m, true, d->target) < 0)
        rc = EXIT_BAD_INPUT;
    size_t n = strlen(d->target) + strlen(d->tmp) + PATH_MAX;
    char *from = malloc(n), *to = malloc(n);
    if (!from || !to) {
        cli_error("out of memory");
        rc = EXIT_BAD_INPUT;
    }
    for (size_t i = 0; rc == EXIT_OK && i < d->n_names; i++) {
        snprintf(from, n, "%s/%s", d->tmp, d->names[i]);
        snprintf(to, n, "%s/%s", d->target, d->names[i]);
        if (rename(from, to) < 0) {
            cli_error("%s/%s: cannot move it into place: %s", d->path, d->names[i],
                      strerror(errno));
            rc = EXIT_BAD_INPUT;
        }
    }
    for (size_t i = 0; rc == EXIT_OK && i < m.n; i++) {
        const char *name = m.v[i].name;
        struct stat sb;
        if ((strcmp(m.v[i].kind, d->kind) && !d->delete_old) ||
            bsearch(&name, d->names, d->n_names, sizeof *d->names, str_cmp))
            continue;
        snprintf(to, n, "%s/%s", d->target, name);
        if (lstat(to, &sb) == 0 && S_ISREG(sb.st_mode))
            unlink(to); /* a page of the earlier report that this one has not */
    }
    if (rc == EXIT_OK && marks_write(d, &m, false, d->target) < 0)
        rc = EXIT_BAD_INPUT;
    free(from);
    free(to);
    marks_free(&m);
    return rc;
}

int cli_outdir_commit(cli_outdir *d)
{
    int rc = EXIT_OK;
    /* sorted, each name once */
    if (d->n_names)
        qsort(d->names, d->n_names, sizeof *d->names, str_cmp);
    size_t k = 0;
    for (size_t i = 0; i < d->n_names; i++) {
        if (k && strcmp(d->names[k - 1], d->names[i]) == 0)
            free(d->names[i]);
        else
            d->names[k++] = d->names[i];
    }
    d->n_names = k;
    cli_signals_hold();
    if (d->into) {
        rc = commit_into(d);
    } else if (marks_write(d, NULL, false, NULL) < 0) {
        rc = EXIT_BAD_INPUT;
    } else if (renameat2(AT_FDCWD, d->tmp, AT_FDCWD, d->target, RENAME_NOREPLACE) < 0) {
        if (errno == EEXIST || errno == ENOTEMPTY)
            cli_error("%s: appeared while the report was being written; run again to write "
                      "into it", d->path);
        else
            cli_error("%s: %s", d->path, strerror(errno));
        rc = EXIT_BAD_INPUT;
    } else {
        free(d->tmp);
        d->tmp = NULL;
    }
    if (d->tmp)
        remove_flat_dir(d->tmp);
    outdir_free(d);
    cli_signals_release();
    return rc;
}

void cli_outdir_abort(cli_outdir *d)
{
    if (d->tmp)
        remove_flat_dir(d->tmp);
    outdir_free(d);
}

/* ---- progress on a terminal ------------------------------------------------ */

static void progress_draw(cli_progress *pg)
{
    unsigned total = pg->total ? atomic_load(pg->total) : 0;
    if (total)
        fprintf(stderr, "\rnytp %s: %s %u/%u %s \033[K\r", cli_command, pg->phase,
                atomic_load(pg->done), total, pg->unit);
    else
        fprintf(stderr, "\rnytp %s: %s \033[K\r", cli_command, pg->phase);
    pg->shown = true;
}

static void *progress_main(void *arg)
{
    cli_progress *pg = arg;
    struct timespec start, t;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_mutex_lock(&pg->lock);
    for (;;) {
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 250 * 1000 * 1000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&pg->cond, &pg->lock, &t);
        if (pg->stop)
            break;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double secs = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
        if (secs >= pg->after)
            progress_draw(pg);
    }
    if (!pg->shown && pg->after <= 0) /* NYTP_PROGRESS_AFTER=0: always, even if quick */
        progress_draw(pg);
    if (pg->shown)
        fputs("\r\033[K", stderr);
    pthread_mutex_unlock(&pg->lock);
    return NULL;
}

void cli_progress_start(cli_progress *pg, const char *phase)
{
    memset(pg, 0, sizeof *pg);
    pg->phase = phase;
    if (!isatty(2) || getenv("NYTP_NO_PROGRESS"))
        return;
    const char *after = getenv("NYTP_PROGRESS_AFTER"); /* for tests */
    pg->after = after ? strtod(after, NULL) : 1.0;
    pthread_mutex_init(&pg->lock, NULL);
    pthread_cond_init(&pg->cond, NULL);
    pg->running = pthread_create(&pg->thread, NULL, progress_main, pg) == 0;
}

void cli_progress_phase(cli_progress *pg, const char *phase, const atomic_uint *done,
                        const atomic_uint *total, const char *unit)
{
    if (!pg->running)
        return;
    pthread_mutex_lock(&pg->lock);
    pg->phase = phase;
    pg->done = done;
    pg->total = total;
    pg->unit = unit;
    pthread_mutex_unlock(&pg->lock);
}

void cli_progress_end(cli_progress *pg)
{
    if (!pg->running)
        return;
    pthread_mutex_lock(&pg->lock);
    pg->stop = true;
    pthread_cond_signal(&pg->cond);
    pthread_mutex_unlock(&pg->lock);
    pthread_join(pg->thread, NULL);
    pthread_mutex_destroy(&pg->lock);
    pthread_cond_destroy(&pg->cond);
    pg->running = false;
}

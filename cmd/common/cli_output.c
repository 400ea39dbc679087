/* cli_output.c — output files written to a temporary name and renamed
 * when complete; the temporaries a fatal signal removes first, signals
 * held while an output is finished, and standard output closed with its
 * errors. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cli_impl.h"

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
void remove_flat_dir(const char *path)
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
void park_if_dying(void)
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

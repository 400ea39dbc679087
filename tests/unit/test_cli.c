/* test_cli.c — the commands' shared output code (cmd/common/cli_*.c, compiled in
 * here): what a fatal signal leaves behind while other threads are still
 * writing files into a report's temporary directory, and that every
 * signal that ends the process removes the temporaries first. */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#include "../../cmd/common/cli_msg.c"
#include "../../cmd/common/cli_parse.c"
#include "../../cmd/common/cli_output.c"
#include "../../cmd/common/cli_grow.c"
#include "../../cmd/common/cli_input.c"
#include "../../cmd/common/cli_outdir.c"
#include "../../cmd/common/cli_progress.c"

/* ---- a report directory whose pages are written by threads ------------- */

typedef struct {
    cli_outdir *dir;
    pthread_mutex_t *lock;
    _Atomic unsigned *made;
    int id;
} writer_arg;

/* Write pages as fast as it can, the way html's page threads do: the
 * directory's bookkeeping under a lock, the page itself outside it. */
static void *page_writer(void *p)
{
    writer_arg *a = p;
    for (unsigned i = 0;; i++) {
        char name[64];
        snprintf(name, sizeof name, "p%d-%u.html", a->id, i);
        pthread_mutex_lock(a->lock);
        nytp_out *out = cli_outdir_file(a->dir, name);
        pthread_mutex_unlock(a->lock);
        if (!out)
            _exit(3);
        nytp_out_write(out, "<p>page</p>\n", 12);
        if (cli_outdir_close_file(a->dir, out, name) != EXIT_OK)
            _exit(4);
        atomic_fetch_add(a->made, 1);
    }
    return NULL;
}

/* The child: open the report, start writers, and once they have written
 * some pages take SIGTERM as if a user had sent it. */
static _Noreturn void child(const char *report, int err_fd)
{
    static cli_outdir dir;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static _Atomic unsigned made;
    cli_command = "test";
    if (dup2(err_fd, 2) < 0)
        _exit(5);
    if (cli_outdir_open(&dir, report, "html", NULL) != EXIT_OK)
        _exit(6);
    static writer_arg args[3];
    for (int i = 0; i < 3; i++) {
        args[i] = (writer_arg){&dir, &lock, &made, i};
        pthread_t t;
        if (pthread_create(&t, NULL, page_writer, &args[i]) != 0)
            _exit(7);
    }
    while (atomic_load(&made) < 50)
        sched_yield();
    kill(getpid(), SIGTERM);
    for (;;)
        pause();
}

/* Names in dir other than . and .., sorted, joined by spaces. */
static char *listing(const char *dir)
{
    static char buf[4096];
    buf[0] = 0;
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    struct dirent *e;
    while ((e = readdir(dh)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            strncat(buf, e->d_name, sizeof buf - strlen(buf) - 2);
            strcat(buf, " ");
        }
    closedir(dh);
    return buf;
}

static void signal_while_threads_write(bool into)
{
    char base[] = "/tmp/nytp-test-cli-XXXXXX";
    assert_non_null(mkdtemp(base));
    char report[sizeof base + 16];
    snprintf(report, sizeof report, "%s/report", base);
    if (into) {
        assert_int_equal(mkdir(report, 0755), 0);
        char keep[sizeof report + 16];
        snprintf(keep, sizeof keep, "%s/keep.txt", report);
        FILE *f = fopen(keep, "w");
        assert_non_null(f);
        fclose(f);
    }
    for (int round = 0; round < 30; round++) {
        int err[2];
        assert_int_equal(pipe2(err, O_NONBLOCK), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            child(report, err[1]);
        close(err[1]);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        /* and it said nothing: no error caused by the cleanup itself */
        char said[512];
        ssize_t n = read(err[0], said, sizeof said - 1);
        close(err[0]);
        if (n > 0) {
            said[n] = 0;
            fail_msg("round %d: the child wrote to stderr: %s", round, said);
        }
        if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM)
            fail_msg("round %d: the child did not die of SIGTERM (status %#x)", round, st);
        /* nothing of the report's temporary is left */
        const char *left = listing(base);
        if (strcmp(left, into ? "report " : ""))
            fail_msg("round %d: %s holds '%s'", round, base, left);
        if (into && strcmp((left = listing(report)), "keep.txt "))
            fail_msg("round %d: the existing report directory holds '%s'", round, left);
    }
    char cmd[sizeof base + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    assert_int_equal(system(cmd), 0);
}

static void signal_leaves_no_new_report(void **state)
{
    (void)state;
    signal_while_threads_write(false);
}

static void signal_leaves_existing_report_as_it_was(void **state)
{
    (void)state;
    signal_while_threads_write(true);
}

/* ---- every signal that ends the process -------------------------------- */

/* signal(7): every signal whose default action is Term or Core, but
 * SIGKILL; and the real-time ones, below. */
static const int ending_signals[] = {
    SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGUSR1, SIGSEGV,
    SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF,
    SIGPOLL, SIGPWR, SIGSYS,
};

/* The child: a registered temporary, then sig (while signals are held
 * when held: a fault dies at once, any other signal at the release,
 * with the file still there until then). */
static _Noreturn void temp_child(const char *path, int sig, bool held)
{
    /* cmocka (or a sanitizer) handles faults: start from the defaults,
     * as nytp does */
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    FILE *f = fopen(path, "w");
    if (!f)
        _exit(3);
    fclose(f);
    if (cli_temp_register(path, false) < 0)
        _exit(4);
    if (held)
        cli_signals_hold();
    kill(getpid(), sig);
    if (!held)
        _exit(5); /* not reached: the signal ended it */
    if (access(path, F_OK) < 0)
        _exit(6); /* removed while held */
    cli_signals_release();
    _exit(7);
}

static void one_signal(const char *path, int sig, bool held)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        temp_child(path, sig, held);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != sig)
        fail_msg("signal %d (SIG%s)%s: the child did not die of it (status %#x)", sig,
                 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", held ? ", held" : "", st);
    if (access(path, F_OK) == 0)
        fail_msg("signal %d (SIG%s)%s: the temporary file is left", sig,
                 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", held ? ", held" : "");
}

static void every_ending_signal_removes_temporaries(void **state)
{
    (void)state;
    char base[] = "/tmp/nytp-test-cli-XXXXXX";
    assert_non_null(mkdtemp(base));
    char path[sizeof base + 16];
    snprintf(path, sizeof path, "%s/tmp.out", base);
    for (int held = 0; held < 2; held++) {
        for (size_t i = 0; i < sizeof ending_signals / sizeof *ending_signals; i++)
            one_signal(path, ending_signals[i], held);
        for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
            one_signal(path, sig, held);
    }
    assert_int_equal(rmdir(base), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(signal_leaves_no_new_report),
        cmocka_unit_test(signal_leaves_existing_report_as_it_was),
        cmocka_unit_test(every_ending_signal_removes_temporaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

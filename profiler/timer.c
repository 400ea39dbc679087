/* timer.c — the sampling timer: a POSIX timer on the user CPU time of
 * the interpreter's thread, whose signal handler raises a flag
 * (timer_due) and perl's own flag of a pending signal, and does nothing
 * else.  The interpreter tests the flag and takes the sample itself
 * (sample.c).
 *
 * No thread.  It was a thread once (made with clone(), unknown to libc,
 * so that malloc stayed single-threaded), and a thread of the profiler's
 * own changed what the program does: glibc's setuid/setgid broadcast
 * never reached it, so it ran on as root in a program that had dropped
 * root (with the program's memory); unshare(CLONE_NEWUSER) and other
 * calls that want a single-threaded process failed with EINVAL; and its
 * HZ wake-ups a second cost a server several per cent of its throughput
 * (a timer interrupt and a preemption of the worker each, bench/README.md).
 *
 * Why the user CPU clock: its signal never cuts a system call short, which
 * is why the timer was a thread and not a signal.  The kernel looks at CPU
 * timers at its clock tick, and user CPU time grows only at a tick that
 * found the thread in user mode: the signal is raised there and delivered
 * as the tick returns to that user code, never while the thread waits in
 * (or is about to wait in) a system call; a blocked or sleeping program
 * gets no signal at all.  (Even so the handler is installed with
 * SA_RESTART.)  The price: a CPU timer fires at most once a tick (the
 * kernel's CONFIG_HZ, often 250 or 1000), so a faster rate gets the
 * tick's; and time the program spends waiting or in the kernel raises no
 * flag: sample.c looks at the clock after each slow op and xsub for that.
 *
 * The signal is one the program does not use (SIGURG, else a real-time
 * one; with its default disposition and not blocked at the first start);
 * a program that blocks it takes no samples while it does, and one that
 * takes it over stops the sampling (timer_check, at each sample).  Timers
 * are not inherited by fork and end at exec; the handler stays. */
#include "nytp_prof.h"

#include <stdatomic.h>
#include <sys/syscall.h>

atomic_int timer_due;

static struct {
    timer_t id;
    int running;                 /* a timer exists in this process */
    int signo;                   /* its signal; 0: none chosen yet */
} TM;

/* The interpreter sampled: its flag of a pending signal (PL_sig_pending)
 * and its current statement (PL_curcop), when the sampler wants perl to
 * come to it at its own safe points (timer_to_perl). */
static int *volatile perl_pending;
static COP *volatile *volatile perl_curcop;
static despatch_signals_proc_t volatile *perl_hook; /* PL_signalhook */
static despatch_signals_proc_t our_hook;             /* sigexit.c's */
static int *volatile *perl_psig_pend;                /* PL_psig_pend */
const COP *volatile timer_cop;

/* The flag, and perl's too: perl then calls its signal hook at its next
 * safe point, as for a signal of its own (the start of the next
 * statement, a loop's next round, a condition), where sigexit.c's hook
 * hands it to the sampler.  The statement running now is kept: the one
 * the time fell in, which the start of the next has replaced by then. */
static void raise_flags(void)
{
    int *pending = perl_pending;
    /* perl's flag only where the hook it calls is ours, or perl has its
     * table of pending signals: a module's hook that calls perl's own
     * despatcher straight reads that table, which perl allocates with the
     * first %SIG handler (NULL before: a crash at the first sample) */
    if (pending && *perl_hook != our_hook && !*perl_psig_pend)
        pending = NULL;
    if (pending)
        timer_cop = *perl_curcop;
    atomic_store_explicit(&timer_due, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (pending)
        *pending = 1;
}

static void on_timer(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    (void)ctx;
    raise_flags();
}

void timer_to_perl(int *pending, COP **curcop, despatch_signals_proc_t *hook,
                   despatch_signals_proc_t ours, int **psig_pend)
{
    perl_curcop = curcop;
    perl_hook = hook;
    our_hook = ours;
    perl_psig_pend = psig_pend;
    perl_pending = pending;
}

void timer_raise(void)
{
    raise_flags();
}

static int is_free(int s, const sigset_t *blocked)
{
    struct sigaction old;
    return sigaction(s, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO)
           && old.sa_handler == SIG_DFL && !sigismember(blocked, s);
}

/* SIGURG if nobody handles, ignores or blocks it: its default action is
 * to ignore it, so a program that sets every signal of %SIG back to
 * DEFAULT, or execs with one pending, loses samples, not its life (the
 * choice Go's runtime made for the same reason).  Else the highest free
 * real-time signal. */
static int free_signal(void)
{
    sigset_t blocked;
    pthread_sigmask(SIG_BLOCK, NULL, &blocked);
    if (is_free(SIGURG, &blocked))
        return SIGURG;
    for (int s = SIGRTMAX; s >= SIGRTMIN; s--)
        if (is_free(s, &blocked))
            return s;
    return 0;
}

static int make_timer(void)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_signo = TM.signo;
#ifdef __linux__
    /* to this thread, on its user CPU clock (the kernel's CPUCLOCK_VIRT
     * of a thread: ~tid << 3 | per-thread | virt; Linux's stable ABI,
     * with no name in <time.h>) */
    pid_t tid = (pid_t)syscall(SYS_gettid);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev._sigev_un._tid = tid;
    clockid_t virt = (clockid_t)((int)(~(unsigned)tid << 3) | 4 | 1);
    if (timer_create(virt, &ev, &TM.id) == 0)
        return 0;
#else
    ev.sigev_notify = SIGEV_SIGNAL;
#endif
    /* user and system time: the tick may then find the thread in a
     * system call (SA_RESTART restarts most of them) */
    return timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &TM.id);
}

int timer_start(long period_ns)
{
    if (TM.running)
        return 0;
    const char *why = NULL;
    if (!TM.signo) {
        TM.signo = free_signal();
        if (!TM.signo) {
            note("Devel::NYTP: no free real-time signal for the sampling timer; not sampling\n");
            return -1;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_timer;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(TM.signo, &sa, NULL) < 0) {
            TM.signo = 0;
            why = strerror(errno);
        }
    }
    if (!why && make_timer() < 0)
        why = strerror(errno);
    if (!why) {
        struct itimerspec it = {{period_ns / 1000000000L, period_ns % 1000000000L},
                                {period_ns / 1000000000L, period_ns % 1000000000L}};
        if (timer_settime(TM.id, 0, &it, NULL) < 0) {
            why = strerror(errno);
            timer_delete(TM.id);
        }
    }
    if (why) {
        note("Devel::NYTP: cannot start the sampling timer: %s; not sampling\n", why);
        return -1;
    }
    TM.running = 1;
    return 0;
}

void timer_stop(void)
{
    if (!TM.running)
        return;
    timer_delete(TM.id);
    TM.running = 0;
    /* A signal raised while the program blocked it would still be
     * pending at an exec, where its disposition becomes the default:
     * ending the new program.  Take it now. */
    sigset_t pending;
    if (sigpending(&pending) == 0 && sigismember(&pending, TM.signo)) {
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, TM.signo);
        struct timespec zero = {0, 0};
        int saved = errno;
        sigtimedwait(&one, NULL, &zero);
        errno = saved;
    }
}

int timer_running(void)
{
    return TM.running;
}

/* The program has put a disposition of its own on the signal (its own
 * handler for SIGURG, DEFAULT for all of %SIG): the timer stops rather
 * than send the program signals it did not ask for. */
int timer_check(void)
{
    struct sigaction cur;
    if (!TM.running || sigaction(TM.signo, NULL, &cur) < 0)
        return 0;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_timer)
        return 0;
    timer_stop();
    note("Devel::NYTP: the program set its own action for signal %d, which the sampling timer "
         "used; not sampling from here on\n", TM.signo);
    TM.signo = 0; /* a later start looks for a free one again */
    return -1;
}

void timer_taken(void)
{
    atomic_store_explicit(&timer_due, 0, memory_order_relaxed);
}

void timer_forked(void)
{
    /* the child has no timer (the parent's id means nothing here) */
    TM.running = 0;
}

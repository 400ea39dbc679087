/* timer.c — the sampling timer: a thread that sleeps on CLOCK_MONOTONIC to
 * absolute deadlines, HZ a second, and raises a flag (timer_due).  It
 * touches nothing else: the interpreter tests the flag and takes the
 * sample itself (sample.c).
 *
 * On Linux (x86_64, aarch64) the thread is made with clone() and talks to
 * the kernel through system calls of its own, never through libc: libc
 * does not know it exists.  A process with a second pthread pays for it
 * in every malloc and free, which then take locks (glibc switches for
 * good at the first pthread_create): 2 to 3% of the run time of perl
 * code that allocates a lot (bench/workloads/stmts.pl with an idle
 * pthread preloaded), as much as all of sampling at 100 Hz may cost.  The
 * thread runs with every signal blocked (so signals go to the
 * interpreter's thread, where perl handles them), on a stack of its own,
 * and uses no thread-local storage (errno included).  Elsewhere it is an
 * ordinary pthread.
 *
 * When the flag is still up at the next deadline, the interpreter is in
 * one long op or blocked in a system call (a server waiting in accept):
 * the thread then waits for the flag to fall instead of waking HZ times a
 * second for nothing. */
#include "nytp_prof.h"

#include <stdatomic.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sched.h>

atomic_int timer_due;

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define RAW_THREAD 1
#endif

static struct {
    atomic_int stop;             /* the thread should end */
    atomic_int parked;           /* it waits for the flag to fall */
    long period_ns;
    int running;                 /* a thread exists in this process */
#ifdef RAW_THREAD
    void *stack;
    size_t stack_size;
    volatile pid_t tid;          /* cleared by the kernel when it ends */
#else
    pthread_t thread;
#endif
} TM;

/* ---- system calls --------------------------------------------------------- */

#ifdef RAW_THREAD
/* Without libc's syscall(), which sets errno: the thread has no
 * thread-local storage of its own (it would be the interpreter's). */
static long raw6(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
#else
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc #0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
#endif
}
#else
static long raw6(long n, long a, long b, long c, long d, long e, long f)
{
    return syscall(n, a, b, c, d, e, f); /* a pthread: errno is its own */
}
#endif

static void mono_now(struct timespec *t)
{
    raw6(SYS_clock_gettime, CLOCK_MONOTONIC, (long)t, 0, 0, 0, 0);
}

/* Sleep while *addr is val, until the absolute CLOCK_MONOTONIC time at
 * (or a wake-up). */
static void wait_until(atomic_int *addr, int val, const struct timespec *at)
{
    raw6(SYS_futex, (long)addr, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, val, (long)at, 0,
         FUTEX_BITSET_MATCH_ANY);
}

static void wake(atomic_int *addr)
{
    raw6(SYS_futex, (long)addr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT32_MAX, 0, 0, 0);
}

static void ts_add_ns(struct timespec *t, long ns)
{
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec++;
    }
}

static int ts_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* ---- the thread ------------------------------------------------------------- */

static int timer_loop(void *arg)
{
    (void)arg;
    struct timespec next, now;
    mono_now(&next);
    while (!atomic_load(&TM.stop)) {
        ts_add_ns(&next, TM.period_ns);
        do { /* until the deadline, or told to stop */
            wait_until(&TM.stop, 0, &next);
            mono_now(&now);
        } while (!atomic_load(&TM.stop) && ts_before(&now, &next));
        if (atomic_load(&TM.stop))
            break;
        if (!atomic_exchange(&timer_due, 1))
            continue;
        /* Still up: wait for it to fall (said first, then checked: the
         * interpreter may have taken it just now and not seen us). */
        atomic_store(&TM.parked, 1);
        while (atomic_load(&timer_due) && !atomic_load(&TM.stop)) {
            struct timespec limit;
            mono_now(&limit);
            limit.tv_sec += 1;
            wait_until(&timer_due, 1, &limit);
        }
        atomic_store(&TM.parked, 0);
        mono_now(&now); /* the next deadline a period from now */
        if (ts_before(&next, &now))
            next = now;
    }
    return 0;
}

#ifndef RAW_THREAD
static void *timer_main(void *arg)
{
    timer_loop(arg);
    return NULL;
}
#endif

int timer_start(long period_ns)
{
    if (TM.running)
        return 0;
    TM.period_ns = period_ns;
    atomic_store(&TM.stop, 0);
    atomic_store(&TM.parked, 0);
    /* the thread blocks every signal (it inherits the mask it starts with) */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int e = 0;
#ifdef RAW_THREAD
    if (!TM.stack) {
        TM.stack_size = 64 * 1024;
        TM.stack = mmap(NULL, TM.stack_size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (TM.stack == MAP_FAILED) {
            TM.stack = NULL;
            e = errno;
        }
    }
    if (TM.stack) {
        TM.tid = 0;
        int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD
                    | CLONE_SYSVSEM | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
        /* tid is set in both before clone returns, cleared as it ends */
        if (clone(timer_loop, (char *)TM.stack + TM.stack_size, flags | CLONE_PARENT_SETTID, NULL,
                  (pid_t *)&TM.tid, NULL, (pid_t *)&TM.tid) < 0)
            e = errno;
    }
#else
    e = pthread_create(&TM.thread, NULL, timer_main, NULL);
#endif
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        note("Devel::NYTP: cannot start the sampling timer: %s; not sampling\n", strerror(e));
        return -1;
    }
    TM.running = 1;
    return 0;
}

void timer_stop(void)
{
    if (!TM.running)
        return;
    atomic_store(&TM.stop, 1);
    wake(&TM.stop);
    wake(&timer_due);
#ifdef RAW_THREAD
    /* the kernel clears tid (and wakes us) as the thread ends */
    pid_t t;
    while ((t = TM.tid) != 0)
        raw6(SYS_futex, (long)&TM.tid, FUTEX_WAIT, t, 0, 0, 0);
#else
    pthread_join(TM.thread, NULL);
#endif
    TM.running = 0;
}

int timer_running(void)
{
    return TM.running;
}

void timer_taken(void)
{
    atomic_store(&timer_due, 0);
    if (atomic_load(&TM.parked))
        wake(&timer_due);
}

void timer_forked(void)
{
    /* no thread here (its stack, copied, is free to use again) */
    TM.running = 0;
#ifdef RAW_THREAD
    TM.tid = 0;
#endif
    atomic_store(&TM.parked, 0);
}

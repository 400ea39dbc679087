/* sigexit.c — sigexit=SIGNALS: a signal that would kill the program ends
 * it with a complete profile.
 *
 * The handlers sit below perl, not in %SIG: a program sees %SIG as it
 * would without the profiler (use sigtrap qw(untrapped ...) installs its
 * handlers, a program that reads $SIG{TERM} finds it undefined), and one
 * that sets $SIG{X} replaces ours through perl's own sigaction, so that
 * its handler rules, as without the profiler (when that handler exits or
 * dies, END finishes the profile as at any end).  A signal ignored when
 * the profiler starts (nohup, a shell's '&') stays ignored.
 *
 * The handler itself only notes the signal and asks perl to look at its
 * pending signals (PL_sig_pending, and no SA_RESTART, as perl's own safe
 * signals: a blocking call returns); at its next safe point perl calls
 * PL_signalhook, where the profile is finished and the process then dies
 * of the signal with its default action, as it would have.  A fault
 * (SEGV, BUS, ILL, FPE raised by the kernel) cannot wait for a safe
 * point: the process dies of it at once, its profile cut where it struck.
 * Above control.c (finish_profile), below NYTP.c (the options). */
#include "nytp_prof.h"

#define NSIGS 65 /* signal numbers 1..64 */

static unsigned char wanted[NSIGS];      /* named by sigexit= */
static unsigned char installed[NSIGS];   /* our handler put in place */
static volatile sig_atomic_t pending[NSIGS];
static volatile sig_atomic_t any_pending;
static PerlInterpreter *sig_perl;        /* the profiled interpreter */
static despatch_signals_proc_t prev_hook;

static int is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

/* die of sig with its default action; returns only if that does not kill */
static void die_of(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    raise(sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

static void on_sigexit(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    if (sig <= 0 || sig >= NSIGS) {
        errno = saved;
        return;
    }
    if (is_fault(sig) && si && si->si_code > 0) {
        /* the faulting instruction runs again as this returns: it kills */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, NULL);
        errno = saved;
        return;
    }
    dTHXa(sig_perl);
    /* no profile open (finished, not started): nothing to save, so the
     * default action at once */
    /* and the same signal again while the first waits for perl (a long
     * call into C, or a module that took PL_signalhook without passing
     * it on): it is not put off twice */
    if (!S.w || pending[sig]) {
        die_of(sig);
        errno = saved;
        return;
    }
    pending[sig] = 1;
    any_pending = 1;
    PL_sig_pending = 1;
    errno = saved;
}

static int is_ours(int sig)
{
    struct sigaction cur;
    return sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO)
           && cur.sa_sigaction == on_sigexit;
}

/* perl's safe point, with a signal pending */
static void sigexit_despatch(pTHX)
{
    if (S.on_safe_point && aTHX == sig_perl)
        S.on_safe_point(aTHX); /* the sampling timer raised the flag too */
    if (any_pending && aTHX == sig_perl) {
        any_pending = 0;
        for (int sig = 1; sig < NSIGS; sig++) {
            if (!pending[sig])
                continue;
            pending[sig] = 0;
            if (!is_ours(sig)) {
                /* the program took the signal over since: its handler
                 * (or its default, or IGNORE) has it */
                raise(sig);
                continue;
            }
            TRACE(1, "~ SIG%s (sigexit): the profile is finished, then the process dies of it\n",
                  sigabbrev_np(sig));
            if (S.w)
                finish_profile(aTHX);
            die_of(sig);
            /* a signal whose default is not to end the process */
            my_exit(1);
        }
    }
    /* perl allocates its table of pending signals with the first %SIG
     * handler: without one, perl has none of its own to despatch */
    if (PL_psig_pend)
        prev_hook(aTHX);
    else
        PL_sig_pending = 0;
}

despatch_signals_proc_t sigexit_hook(void)
{
    return sigexit_despatch;
}

/* sigexit=VALUE: 0 none, 1 INT HUP TERM PIPE BUS SEGV, or names
 * separated by commas (TERM, term, SIGTERM). */
void sigexit_option(pTHX_ const char *value)
{
    memset(wanted, 0, sizeof wanted);
    if (strcmp(value, "0") == 0)
        ;
    else if (strcmp(value, "1") == 0) {
        static const int one[] = {SIGINT, SIGHUP, SIGTERM, SIGPIPE, SIGBUS, SIGSEGV};
        for (size_t i = 0; i < sizeof one / sizeof *one; i++)
            wanted[one[i]] = 1;
    } else {
        const char *p = value;
        while (*p) {
            const char *end = strchr(p, ',');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            char name[32];
            if (n && n < sizeof name) {
                for (size_t i = 0; i < n; i++)
                    name[i] = (char)toUPPER(p[i]);
                name[n] = 0;
            }
            const char *bare = n >= 3 && n < sizeof name && strncmp(name, "SIG", 3) == 0 ? name + 3 : name;
            I32 sig = n && n < sizeof name ? whichsig_pv(bare) : -1;
            if (sig <= 0 || sig >= NSIGS)
                croak("Devel::NYTP: option 'sigexit' names no signal '%.*s' (want 0, 1 or names "
                      "such as INT,TERM)", (int)n, p);
            if (sig == SIGKILL || sig == SIGSTOP)
                croak("Devel::NYTP: option 'sigexit': SIG%s cannot be caught", sigabbrev_np(sig));
            wanted[sig] = 1;
            p += n;
            if (*p == ',')
                p++;
        }
    }
    if (S.initialised)
        sigexit_install(aTHX);
}

/* Put our handler in place for the signals wanted, and take it back from
 * those no longer wanted; a signal ignored or handled when we come to it
 * is left as it is. */
void sigexit_install(pTHX)
{
    if (OTHER_INTERP())
        return;
    sig_perl = aTHX;
    if (!prev_hook && PL_signalhook != sigexit_despatch) {
        prev_hook = PL_signalhook;
        PL_signalhook = sigexit_despatch;
    }
    for (int sig = 1; sig < NSIGS; sig++) {
        if (wanted[sig] == installed[sig])
            continue;
        struct sigaction cur;
        if (sigaction(sig, NULL, &cur) < 0)
            continue;
        if (!wanted[sig]) {
            if (is_ours(sig)) {
                struct sigaction sa;
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = SIG_DFL;
                sigemptyset(&sa.sa_mask);
                sigaction(sig, &sa, NULL);
            }
            installed[sig] = 0;
            continue;
        }
        /* ignored at start (nohup, '&'), or a handler already there (an
         * embedding application's): theirs */
        if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigexit;
        sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: a blocking call returns */
        sigemptyset(&sa.sa_mask);
        if (sigaction(sig, &sa, NULL) == 0)
            installed[sig] = 1;
    }
}

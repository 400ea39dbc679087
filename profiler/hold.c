/* hold.c — a process that is ending keeps its profile: signals that
 * would end it are held while the profile is being finished.
 *
 * perl's main() puts every signal caught by a %SIG handler back to its
 * default action before the END blocks run, and the profile is written by
 * the last END block.  A second TERM in that window (a service manager
 * signals every process of a service and the server's master signals its
 * workers again; ^C reaches a whole process group; an alarm goes off)
 * would kill the process there: its buffered statements and its whole
 * ending (subs, callers) lost, a profile cut short with no subs at all.
 * So from the moment the process begins to exit (perl's exit, the END
 * phase) and while a profile is being closed, such a signal is noted
 * instead, and raised again once the profile is complete: it then takes
 * its course (the process dies of it, or its %SIG handler runs).  The
 * catching handler resets itself (SA_RESETHAND), so the same signal sent
 * twice acts at once: a program stuck in an END block can still be
 * stopped.  Signals the program ignores stay ignored.  Below everything
 * but state.c: it calls nothing of the profiler's. */
#include "nytp_prof.h"

/* what asks a process to end (SIGPIPE, SIGSEGV and the like are caused
 * by what the process itself does, and are not held) */
static const int held_sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM};
#define NHELD (sizeof held_sigs / sizeof *held_sigs)

static struct sigaction saved[NHELD];
static int taken[NHELD];             /* 1: our catcher replaced saved[i] */
static volatile sig_atomic_t caught; /* bit i: held_sigs[i] arrived */

static void catch_held(int sig)
{
    for (unsigned i = 0; i < NHELD; i++)
        if (held_sigs[i] == sig)
            caught |= 1 << i;
}

void hold_signals(void)
{
    if (S.holding)
        return;
    S.holding = 1;
    caught = 0;
    for (unsigned i = 0; i < NHELD; i++) {
        taken[i] = 0;
        if (sigaction(held_sigs[i], NULL, &saved[i]) < 0 || saved[i].sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = catch_held;
        sa.sa_flags = SA_RESETHAND | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        taken[i] = sigaction(held_sigs[i], &sa, NULL) == 0;
    }
}

void release_signals(pTHX)
{
    if (!S.holding)
        return;
    /* Once perl's run is over, a signal that a %SIG handler caught
     * has its default action again (perl's main() reset it while ours
     * was in place, so it left that one alone). */
    int over = PL_phase >= PERL_PHASE_END;
    for (unsigned i = 0; i < NHELD; i++) {
        if (!taken[i])
            continue;
        struct sigaction back = saved[i];
        if (over && back.sa_handler == (void (*)(int))PL_csighandlerp) {
            memset(&back, 0, sizeof back);
            back.sa_handler = SIG_DFL;
            sigemptyset(&back.sa_mask);
        }
        sigaction(held_sigs[i], &back, NULL);
        taken[i] = 0;
    }
    S.holding = 0;
    sig_atomic_t got = caught;
    caught = 0;
    for (unsigned i = 0; i < NHELD; i++)
        if (got & (1 << i)) {
            TRACE(1, "~ SIG%s held while the profile was finished: raised now\n",
                  sigabbrev_np(held_sigs[i]));
            raise(held_sigs[i]);
        }
}

/* a child made by fork while signals were held: what its parent was
 * told is not the child's */
void hold_forked(void)
{
    caught = 0;
}

/* segment.c — what the file being written has seen, and when it ends
 * (rotate=): the files with data in it, whose source it gets (fid_mark),
 * the first call of each sub in it (node_first_call), and the time of the
 * next rotation.  Above the subs, below the output that uses them. */
#include "nytp_prof.h"

void fid_mark_grow(unsigned fid)
{
    size_t ncap = S.fid_used_cap ? S.fid_used_cap : 256;
    while (ncap <= fid)
        ncap *= 2;
    int saved_errno = errno; /* called from the statement wrappers' fast path */
    unsigned char *t = realloc(S.fid_used, ncap);
    errno = saved_errno;
    if (!t)
        return; /* then the file's source is left out, nothing worse */
    memset(t + S.fid_used_cap, 0, ncap - S.fid_used_cap);
    S.fid_used = t;
    S.fid_used_cap = ncap;
    S.fid_used[fid] = 1;
}

/* The first call of a sub in this file: an xsub (or slow op) is marked
 * as one (an arc from nowhere at 0:0, and %DB::sub with no file), and its
 * package is remembered for finding the file of its SUB_INFO. */
void node_first_call(pTHX_ sub_node *n, int xs)
{
    if (n->called_seen)
        return;
    n->called_seen = 1;
    if (xs) {
        arc_for(aTHX_ n, NULL, 0, 0);
        SV **svp = hv_fetch(GvHV(PL_DBsub), n->full, (I32)n->full_len, 1);
        if (svp && !SvOK(*svp))
            sv_setpvs(*svp, ":0-0");
    }
    if (n->pkg)
        (void)hv_fetch(S.pkg_files_hv, n->pkg, (I32)strlen(n->pkg), 1);
}

/* A call (or the part of one in this file) on its arc: one more call,
 * its inclusive time (as recursion's time when it ran inside another call
 * of its sub: depth > 1) and its exclusive time, in ticks. */
void arc_add(arc_stats *a, int depth, NV incl, NV excl)
{
    a->count++;
    if (depth <= 1) {
        a->incl += incl;
    } else {
        a->reci += incl / TICKS_PER_SEC;
        if ((UV)(depth - 1) > a->rec_depth)
            a->rec_depth = (UV)(depth - 1);
    }
    a->excl += excl;
}

/* rotate=SECONDS are seconds of the wall clock, as the segments' names
 * and the recipes that pick them by age (find -mmin) take them to be.  A
 * CPU-time clock (clock=2 or 3, nytp run --sample --cpu) stands still
 * while the process waits: a server that mostly waits would otherwise
 * close a segment every SECONDS of its CPU time, hours apart.  Then the
 * segment's end is kept on CLOCK_MONOTONIC (its coarse reading: a few
 * nanoseconds, a tick's resolution), looked at on each reading of the
 * profile's clock, which on such a clock is a system call anyway
 * (clock_ticks_syscall); when it has passed, rotate_at is made due, so
 * that the usual test (the clock's reading >= rotate_at) rotates at the
 * next statement, call or sample. */
#define ROTATE_ON_WALL (INT64_MAX - 1) /* rotate_at while the wall decides */

static int64_t wall_ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * TICKS_PER_SEC + ts.tv_nsec / 100;
}

void rotate_wall_check(void)
{
    if (S.rotate_at == ROTATE_ON_WALL && wall_ticks() >= S.rotate_wall_at)
        S.rotate_at = INT64_MIN;
}

void rotate_schedule(int64_t now)
{
    if (!S.rotate_ticks) {
        S.rotate_at = INT64_MAX;
        return;
    }
    if (S.rotate_wall) {
        int64_t w = wall_ticks();
        if (S.rotate_at == INT64_MAX || S.rotate_at == 0 || !S.rotate_wall_at) /* (re)starts */
            S.rotate_wall_at = w;
        while (S.rotate_wall_at <= w)
            S.rotate_wall_at += S.rotate_ticks;
        S.rotate_at = ROTATE_ON_WALL;
        return;
    }
    if (S.rotate_at == INT64_MAX || S.rotate_at == 0)
        S.rotate_at = now;
    while (S.rotate_at <= now) /* intervals spent blocked are not segments */
        S.rotate_at += S.rotate_ticks;
}


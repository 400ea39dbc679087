/* rotate.c — rotate=SECONDS: every SECONDS the file being written is
 * closed as a complete profile of its interval and the profile goes on in
 * the next segment, FILE.s1, FILE.s2, ... (FILE being the name the process
 * writes to: FILE.PID for a child, with .TIME for addtimestamp).
 *
 * A segment holds everything a reader needs: its header and attributes,
 * every file id again (NEW_FID), the statements and calls of its
 * interval, the source of the files it has data for, the sub line ranges
 * and the call arcs.  Nothing carries over from an earlier segment.
 *
 * What is in progress at a rotation:
 *   a statement   is counted in the segment it began in; its time is
 *                 split at the rotation (a rotation happens as a
 *                 statement begins or a call ends, so only statements
 *                 that a call interrupted are in progress: their rest,
 *                 after the call, is added without a count, as always)
 *   a call        returns in the closing segment with the time it had so
 *                 far (its call arc counts it, a SUB_RETURN is written)
 *                 and goes on in the next segment from zero, where it is
 *                 counted again when it ends (or at the next rotation).
 * So no time is lost or counted twice, and each segment's call tree is
 * complete; a call spanning N segments is counted once in each of them.
 *
 * The rotation happens at the first statement, end of a call (or sample)
 * after the interval is over, a loop on one line included (stmt.c reads
 * the clock for each statement when rotating): a process blocked in a system call (a server waiting
 * in accept) closes its segment when it runs perl code again. */
#include "nytp_prof.h"

/* The tracing profiler's calls in progress (its frames,
 * innermost first) return in this segment with their time so far; they
 * start again when the next segment does (restart_calls). */
static void split_calls(pTHX_ int64_t now)
{
    if (S.npending)
        fill_pending(aTHX_ now);
    for (SSize_t ix = S.frame_ix; ix != -1; ix--) {
        call_frame *f = FRAME(ix);
        if (f->counted || !f->called || f->hide)
            continue;
        NV overhead = S.overhead_ticks - f->overhead0;
        NV incl = (NV)(now - f->t0) - overhead;
        NV excl = incl - (S.subr_ticks - f->subr0);
        node_first_call(aTHX_ f->called,
                        f->called_is_xs
                            && (f->called_is_xs[0] == 's'
                                || (f->called_cv && SvTYPE(f->called_cv) == SVt_PVCV)));
        arc_add(arc_for(aTHX_ f->called, f->caller ? f->caller : S.node_nulls, f->caller_fid,
                        f->caller_line),
                f->called_depth, incl, excl);
        fid_mark(f->caller_fid);
        if (OPT(O_CALLS) && S.w)
            nytp_write_sub_return(S.w, f->depth, incl, excl,
                                  str_n(f->called->full, f->called->full_len, false));
        S.subr_ticks += excl;
    }
}

static void restart_calls(pTHX_ int64_t now)
{
    S.overhead_ticks = 0;
    for (SSize_t ix = S.frame_ix; ix != -1; ix--) {
        call_frame *f = FRAME(ix);
        f->t0 = now;
        f->overhead0 = 0;
        f->subr0 = S.subr_ticks;
    }
}

/* Tracing: a call has ended at now, past the segment's end (frames.c,
 * through S.rotate_at_call): the segment ends there.  The statement in
 * progress, the one that made the call, is counted in the closing
 * segment with its time so far; its rest, after the rotation, is a
 * continuation (DISCOUNT), as after any call.  Not while the process
 * ends (its profile is being finished). */
void rotate_in_call(pTHX_ int64_t now)
{
    /* a child that has not yet seen its fork (one made by an xsub or a
     * piped open) still holds its parent's file: its next statement
     * gives it its own first */
    if (S.forked || S.holding || PL_phase >= PERL_PHASE_END)
        return;
    bool stmts = S.w && S.profiling && OPT(O_STMTS) && S.last_fid;
    if (stmts) {
        int32_t elapsed = (int32_t)(now - S.last_t);
        S.last_t = now;
        if (OPT(O_BLOCKS))
            nytp_write_time_block(S.w, elapsed, S.last_fid, S.last_line, S.last_block_line,
                                  S.last_sub_line);
        else
            nytp_write_time_line(S.w, elapsed, S.last_fid, S.last_line);
    }
    rotate_now(aTHX_ now);
    if (stmts && S.w)
        nytp_write_discount(S.w);
    S.fresh_t = S.last_t;
}

void rotate_now(pTHX_ int64_t now)
{
    if (!S.w || !S.profiling) {
        rotate_schedule(now);
        return;
    }
    TRACE(1, "~ rotating %s (segment %u)\n", S.out_name, S.seg);
    if (S.split_calls) /* sampling: its own calls in progress (sample.c) */
        S.split_calls(aTHX_ now);
    else
        split_calls(aTHX_ now);
    close_output(aTHX);
    if (HvUSEDKEYS(S.callers_hv))
        hv_clear(S.callers_hv);
    arcs_clear(aTHX);
    S.seg++;
    if (S.fid_used)
        memset(S.fid_used, 0, S.fid_used_cap);
    fid_mark(S.last_fid);
    rotate_schedule(now);
    /* on failure the segments so far are closed and complete: profiling
     * stops (open_output says so) rather than the program dying */
    open_output(aTHX_ 0);
    /* Writing the segment was the profiler's time, in no segment: the
     * statement that began at now, and the calls in progress, start
     * again as the new segment does. */
    int64_t resumed = clock_ticks();
    S.last_t = resumed;
    if (!S.split_calls)
        restart_calls(aTHX_ resumed);
}

/* frames.c — the calls in progress: the profiler's own stack of frames,
 * what a call's end records, and finding the calls perl has left without
 * a return the wrappers saw.
 *
 * A frame lasts while perl's context stack has the context it was made
 * in (call_frame: si and cxix).  A normal return is seen by the wrappers
 * of the ops that leave a sub (calls.c) and closes the frame at once.  A
 * die unwinds contexts without those ops: each eval's scope holds a
 * destructor that closes the frames made inside it (eval_left), so a call
 * ended by a die ends when perl unwinds it, as before.  What else leaves
 * a sub (last or goto LABEL out of it, a die caught by call_sv) is found
 * by the test of the innermost frame against the context stack
 * (frames_check), made before any new frame is pushed and after each op
 * that leaves a sub or a block; exit closes every frame first
 * (frames_close_all), and so does the END phase's first call.  A sub
 * compiled before the wrappers were put in place (the modules the
 * profiler itself loads: XSLoader, strict) runs perl's own ops, so its
 * frame ends with its scope, by a destructor, instead.  Below the
 * statement and call wrappers (stmt.c, control.c, calls.c). */
#include "nytp_prof.h"

site_slot site_cache[SITE_CACHE_SIZE];

/* Mark a sub as an xsub (or slow op) in %DB::sub, file unknown, so that
 * SUB_INFO names it. */
static void note_xsub(pTHX_ const char *name, STRLEN len)
{
    SV **svp = hv_fetch(GvHV(PL_DBsub), name, (I32)len, 1);
    if (svp && !SvOK(*svp))
        sv_setpvs(*svp, ":0-0");
}

void frames_grow(pTHX)
{
    int saved_errno = errno;
    grow_or_croak(aTHX_ (void **)&S.frames, &S.frames_cap, (size_t)S.frame_ix + 2, 64,
                  sizeof *S.frames);
    errno = saved_errno;
}

/* Take the innermost frame, f, off the stack. */
static void frame_pop(pTHX_ call_frame *f)
{
    if (f->t0_pending) {
        f->t0_pending = 0;
        if (S.npending)
            S.npending--;
    }
    S.frame_ix = (SSize_t)(f - S.frames) - 1;
}

/* The arc of a call whose arc was not known when it began, made if new
 * (and the site cache told, for the next call from there); and, for the
 * first call of a sub since the arcs were cleared, what that needs.  A
 * call whose arc was known came from a site filled here, after such a
 * first call, since the arcs were last cleared.  errno kept (perl's
 * hashes, memory). */
static __attribute__((noinline)) arc_stats *frame_new_arc(pTHX_ call_frame *f, sub_node *called)
{
    int saved_errno = errno;
    if (!called->called_seen) {
        called->called_seen = 1;
        if (f->called_is_xs) {
            arc_for(aTHX_ called, NULL, 0, 0); /* marks an xsub */
            if (f->called_is_xs[0] == 's' || (f->called_cv && SvTYPE(f->called_cv) == SVt_PVCV))
                note_xsub(aTHX_ called->full, called->full_len);
        }
        if (called->pkg)
            (void)hv_fetch(S.pkg_files_hv, called->pkg, (I32)strlen(called->pkg), 1);
    }
    arc_stats *a = arc_for(aTHX_ called, f->caller ? f->caller : S.node_nulls, f->caller_fid,
                           f->caller_line);
    if (f->site && f->site_gen == S.file_gen) { /* the next call from there */
        site_slot *slot = site_slot_of(f->site, f->site_key);
        slot->cop = f->site;
        slot->key = f->site_key;
        slot->ph = f->site_ph;
        slot->nh = f->site_nh;
        slot->called = called;
        slot->caller = f->caller;
        slot->arc = (uint32_t)(a - S.arcs);
        slot->fid = a->fid;
        slot->line = a->line;
        slot->file_gen = S.file_gen;
        slot->arcs_gen = S.arcs_gen;
        S.file_cache_used = 1; /* a statement freed changes S.file_gen */
    }
    errno = saved_errno;
    return a;
}

/* The innermost call, f, has ended (perl has left its sub, or an xsub
 * returned): add its times to its call arc, write the SUB_RETURN event
 * and take it off the stack.  errno is kept: only a sub's first call and
 * a new arc can touch it (the inline writer keeps it too). */
void frame_done(pTHX_ call_frame *f)
{
    if (!f->called)
        f->counted++; /* never learned what was called: pp_entersub died */
    if (f->counted) {
        frame_pop(aTHX_ f);
        return;
    }
    f->counted++;

    int64_t now = now_ticks(aTHX);
    if (f->t0_pending) { /* no reading since it began: an empty sub */
        f->t0 = now;
        f->t0_pending = 0;
        if (S.npending)
            S.npending--;
    }
    S.fresh = 1;
    S.fresh_t = now;
    NV overhead = S.overhead_ticks - f->overhead0;
    NV inner = S.subr_ticks - f->subr0;
    NV incl = (NV)(now - f->t0) - overhead;
    if (f->hide) {
        /* time blocked in accept() counts as overhead all the way up */
        S.overhead_ticks += incl;
        incl = 0;
        inner = 0;
    }
    NV excl = incl - inner;

    sub_node *called = f->called;
    arc_stats *a;
    if (LIKELY(f->arc_gen == S.arcs_gen))
        a = &S.arcs[f->arc]; /* known at the call: not a first call either */
    else
        a = frame_new_arc(aTHX_ f, called);
    a->count++;
    if (f->called_depth <= 1) {
        a->incl += incl;
    } else {
        a->reci += incl / TICKS_PER_SEC;
        if ((UV)(f->called_depth - 1) > a->rec_depth)
            a->rec_depth = (UV)(f->called_depth - 1);
    }
    a->excl += excl;

    if (OPT(O_CALLS) && S.w)
        nytp_write_sub_return_inline(S.w, f->depth, incl, excl,
                                     str_n(called->full, called->full_len, false));

    frame_pop(aTHX_ f);
    S.subr_ticks += excl;
    /* rotate=: a loop of calls with no statement of its own between them
     * (f() while ...; stmts=0) ends a segment at a call's end, once the
     * call is counted in it */
    if (UNLIKELY(S.fresh_t >= S.rotate_at) && S.rotate_at_call) /* now, not kept live */
        S.rotate_at_call(aTHX_ S.fresh_t);
}

/* Whether perl still has the context frame f was made in: its stack is
 * the current one or one below it, with a context at f's index. */
static int frame_alive(pTHX_ const call_frame *f)
{
    for (PERL_SI *si = PL_curstackinfo; si; si = si->si_prev)
        if (si == f->si)
            return f->cxix <= si->si_cxix;
    return 0;
}

void frames_close_dead(pTHX)
{
    while (S.frame_ix >= 0 && !frame_alive(aTHX_ &S.frames[S.frame_ix]))
        frame_done(aTHX_ &S.frames[S.frame_ix]);
}

void frames_close_from(pTHX_ SSize_t ix)
{
    while (S.frame_ix >= ix && S.frame_ix >= 0)
        frame_done(aTHX_ &S.frames[S.frame_ix]);
}

/* The process is about to leave every sub (exit): their calls end now,
 * as they would when perl unwinds them. */
void frames_close_all(pTHX)
{
    frames_close_from(aTHX_ 0);
}

/* The destructor that an eval's scope holds: the eval is being left,
 * normally or by a die, and with it every call made inside it (the
 * frames above the one innermost when it began). */
static void eval_left(pTHX_ void *p)
{
    frames_close_from(aTHX_ (SSize_t)PTR2IV(p) + 1);
}

/* The destructor of the frame of a sub that the wrappers will not see
 * leave: it and any frames above it end with its scope. */
static void sub_scope_left(pTHX_ void *p)
{
    frames_close_from(aTHX_ (SSize_t)PTR2IV(p));
}

void frame_end_with_scope(pTHX_ SSize_t ix)
{
    int saved_errno = errno;
    save_destructor_x(sub_scope_left, INT2PTR(void *, (IV)ix));
    errno = saved_errno;
}

/* An eval has begun (its context is on top): leaving its scope will end
 * the calls made inside it. */
void frames_eval_entered(pTHX)
{
    save_destructor_x(eval_left, INT2PTR(void *, (IV)S.frame_ix));
}

void frames_end_phase(pTHX)
{
    S.end_closed = 1;
    frames_close_all(aTHX);
}

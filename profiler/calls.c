/* calls.c — sub calls: the wrappers of entersub, goto and the slow ops,
 * which push a frame per call (frames.c), and of the ops that leave a sub
 * or enter an eval, which see calls end. */
#include "nytp_prof.h"

/* ---- subroutine calls ---------------------------------------------------------- */



/* What pp_entersub is about to call, without calling it: the CV, and the
 * GV it is named by.  NULL where pp_entersub would croak or autoload. */
static CV *resolve_cv(pTHX_ SV *sv, GV **gvp)
{
    CV *cv = NULL;
    *gvp = NULL;
    switch (SvTYPE(sv)) {
    case SVt_PVCV:
        cv = (CV *)sv;
        break;
    case SVt_PVGV: {
        HV *stash;
        if (!(isGV_with_GP(sv) && (cv = GvCVu((GV *)sv))))
            cv = sv_2cv(sv, &stash, gvp, 0);
        if (!cv)
            return NULL;
        break;
    }
    case SVt_PVHV:
    case SVt_PVAV:
        return NULL;
    default:
        if (SvROK(sv)) {
            if (SvAMAGIC(sv)) {
                SV *r = amagic_deref_call(sv, to_cv_amg);
                if (r)
                    sv = r;
            }
            if (SvROK(sv) && SvTYPE(SvRV(sv)) == SVt_PVCV) {
                cv = (CV *)SvRV(sv);
                break;
            }
            return NULL;
        } else {
            const char *sym;
            if (sv == &PL_sv_yes) /* a missing import method */
                return NULL;
            if (SvGMAGICAL(sv)) {
                mg_get(sv);
                if (SvROK(sv) && SvTYPE(SvRV(sv)) == SVt_PVCV) {
                    cv = (CV *)SvRV(sv);
                    break;
                }
                sym = SvPOKp(sv) ? SvPVX(sv) : NULL;
            } else {
                sym = SvPV_nolen(sv);
            }
            if (!sym || (PL_op->op_private & HINT_STRICT_REFS))
                return NULL;
            cv = get_cv(sym, GV_ADD);
        }
        break;
    }
    if (cv && !*gvp && CvGV(cv) && isGV_with_GP(CvGV(cv)))
        *gvp = CvGV(cv);
    return cv;
}

/* The sub running at context ix of stack info si (the main program is
 * PL_main_cv); string evals are transparent, sort and signal stacks are
 * walked through to the stack below. */
static CV *running_cv(pTHX_ I32 ix, PERL_SI *si)
{
    for (;;) {
        if (ix < 0) {
            if (si->si_type != PERLSI_MAIN && si->si_prev) {
                si = si->si_prev;
                ix = si->si_cxix;
                continue;
            }
            return NULL;
        }
        PERL_CONTEXT *cx = &si->si_cxstack[ix];
        if (CxTYPE(cx) == CXt_SUB || CxTYPE(cx) == CXt_FORMAT)
            return cx->blk_sub.cv;
        if (CxTYPE(cx) == CXt_EVAL && !CxTRYBLOCK(cx)) {
            ix--;
            continue;
        }
        if (ix == 0 && si->si_type == PERLSI_MAIN)
            return PL_main_cv;
        if (ix > 0) {
            ix--;
            continue;
        }
        if (si->si_type != PERLSI_MAIN && si->si_prev) {
            si = si->si_prev;
            ix = si->si_cxix;
            continue;
        }
        return NULL;
    }
}

/* The id of the file a call is made from, by its statement cop: the last
 * statement's, else the statements' file cache, which a miss fills (with
 * stmts=0 nothing else does, and the name would be hashed at every call).
 * Both know live statements' names by address (cop_in_tree), never
 * another's: a cop outside the op tree matches neither. */
static unsigned caller_fid(pTHX_ const COP *cop)
{
    const char *file = OutCopFILE(cop);
    if (file == S.last_fileptr)
        return S.last_fid;
    const file_slot *slot = file_cache_get(file);
    if (slot)
        return slot->fid;
    if (S.last_fileptr && strcmp(file, S.last_filename) == 0)
        return S.last_fid;
    return cop_file_id(aTHX_ cop, NYTP_FIDF_VIA_SUB);
}

/* A new frame's call site, from the calling statement, when the site
 * cache has no answer: its file and line, and (for the call's end to
 * tell the cache) the site and key.  Only a statement of an op tree is
 * cached (cop_in_tree): PL_compiling, the statement of calls made while
 * compiling (BEGIN blocks), changes its line, and the compiler folds
 * constants (pack with constant arguments) under a copy of it on the C
 * stack, at the same address for every statement folded. */
static void frame_site_miss(pTHX_ call_frame *f, const COP *cop, const void *key,
                            const HEK *ph, const HEK *nh)
{
    f->arc_gen = 0;
    f->site = cop_in_tree(cop) ? cop : NULL;
    f->site_gen = S.file_gen;
    f->site_key = key;
    f->site_ph = ph;
    f->site_nh = nh;
    f->caller_fid = caller_fid(aTHX_ cop);
    f->caller_line = (int)CopLINE(cop);
}

/* A new frame's call site from a site cache slot that answered. */
static inline void frame_site_hit(call_frame *f, const site_slot *slot)
{
    f->arc = slot->arc;
    f->arc_gen = S.arcs_gen;
    f->caller_fid = slot->fid;
    f->caller_line = slot->line;
    f->site = NULL;
}

/* The sub running at context cxix, as a caller. */
/* The node of a calling sub found on the context stack; errno kept (a
 * new glob or node: memory). */
static __attribute__((noinline)) sub_node *caller_node_of(pTHX_ CV *ccv)
{
    int saved_errno = errno;
    GV *gv = CvGV(ccv); /* may make a glob */
    HV *stash = gv ? GvSTASH(gv) : NULL;
    sub_node *n = stash ? node_for_gv(aTHX_ gv) : S.node_unknown;
    errno = saved_errno;
    return n;
}

/* The walk of caller_node; one that finds the main program is remembered
 * (see caller_node). */
static sub_node *caller_node_slow(pTHX_ I32 cxix)
{
    PERL_SI *si = PL_curstackinfo;
    CV *ccv = running_cv(aTHX_ cxix, si);
    if (ccv == PL_main_cv) {
        /* a substitution's context (s///e) is a struct subst, not a
         * block: it has no statement to key the memo by */
        if (cxix >= 0 && si->si_type == PERLSI_MAIN && CxTYPE(&cxstack[cxix]) != CXt_SUBST &&
            cop_in_tree(cxstack[cxix].blk_oldcop)) {
            S.main_caller.si = si;
            S.main_caller.cxix = cxix;
            S.main_caller.cop = cxstack[cxix].blk_oldcop;
            S.main_caller.type = cxstack[cxix].cx_type;
            S.main_caller.gen = S.file_gen;
            S.file_cache_used = 1;
        }
        S.main_runtime_used++;
        return S.node_runtime;
    }
    if (!ccv)
        return S.node_null;
    return caller_node_of(aTHX_ ccv);
}

/* The sub that called: the calling frame's sub, or (findcaller=1, a call
 * from the main program or from a sub not known by name) the sub running
 * at context cxix.
 *
 * A call made from the main program (no frame of a sub to ask) would
 * walk the context stack down to its bottom at every call.  A call from
 * the same context as the last such call needs no walk: the context on
 * top (at cxix) was entered by the same statement of the main stack, and
 * a statement of the main program (or of a string eval or file it runs)
 * runs only with no sub's context below it, so the walk would find the
 * main program again.  The statement is known by address while no
 * statement has been freed (S.file_gen, which a freed statement changes
 * once S.file_cache_used says something depends on it). */
static inline sub_node *caller_node(pTHX_ const call_frame *up, I32 cxix)
{
    if (!OPT(O_FINDCALLER) && up && up->called && up->called->pkg)
        return up->called;
    if (cxix == S.main_caller.cxix && PL_curstackinfo == S.main_caller.si) {
        const PERL_CONTEXT *cx = &cxstack[cxix];
        /* the type first: the memo's is never CXt_SUBST, whose context
         * has no blk_oldcop */
        if (cx->cx_type == S.main_caller.type && cx->blk_oldcop == S.main_caller.cop
            && S.main_caller.gen == S.file_gen) {
            S.main_runtime_used++;
            return S.node_runtime;
        }
    }
    return caller_node_slow(aTHX_ cxix);
}

/* Start a call: a frame on the frame stack, made before the call (an
 * xsub, a slow op, a perl sub not taken by pp_call's fast path), so that
 * a call that dies is still seen.  Returns its index. */
static SSize_t frame_setup(pTHX_ COP *prev_cop, const call_frame *clone, OPCODE type, SV *sub_sv)
{
    int saved_errno = errno;
    SSize_t prev = S.frame_ix;
    call_frame *f = frame_push(aTHX);
    SSize_t ix = S.frame_ix;
    *f = (call_frame){.si = PL_curstackinfo, .cxix = cxstack_ix};
    call_frame *up = FRAME(prev);
    f->depth = up ? up->depth + 1 : 1;
    f->overhead0 = S.overhead_ticks;
    f->subr0 = S.subr_ticks;

    if (type == OP_ENTERSUB || type == OP_GOTO) {
        GV *gv = NULL;
        f->called_cv = resolve_cv(aTHX_ sub_sv, &gv);
        if (gv) {
            sub_node *n = node_for_gv(aTHX_ gv);
            FRAME(ix)->called = n;
            /* POSIX::_exit ends the process without END blocks: write now */
            if (n->is_posix_exit)
                finish_profile(aTHX);
        } /* else learned after the call, if at all */
    } else {
        f->called = node_for_slowop(aTHX_ CopSTASH(PL_curcop), type);
        f->called_depth = 1;
        f->called_is_xs = "sop";
        if (type == OP_ACCEPT)
            f->hide = 1;
    }

    /* resolving the CV may have run perl code (overloading), which may
     * have moved the frame stack */
    f = FRAME(ix);
    up = FRAME(prev);
    f->caller_fid = caller_fid(aTHX_ prev_cop);
    f->caller_line = (int)CopLINE(prev_cop);

    if (clone) {
        f->caller = clone->caller;
    } else {
        sub_node *n = caller_node(aTHX_ up, cxstack_ix);
        f = FRAME(ix);
        f->caller = n;
    }

    CV *cv = f->called_cv;
    if (type != OP_ENTERSUB && type != OP_GOTO) {
        f->t0 = now_ticks(aTHX); /* a slow op */
    } else if (cv && SvTYPE(cv) == SVt_PVCV && !CvISXSUB(cv) && CvROOT(cv) && OPT(O_STMTS)) {
        f->t0_pending = 1; /* a perl sub: its first statement's time */
        S.npending++;
    } else {
        /* an xsub, or not known yet, or stmts=0, where no statement
         * reads the clock: the call's end would be its first reading */
        f->t0 = now_ticks(aTHX);
    }
    if (OPT(O_CALLS) >= 2 && S.w)
        nytp_write_sub_entry(S.w, f->caller_fid, (uint32_t)f->caller_line);
    errno = saved_errno;
    return ix;
}

/* A call of DB::NAME, one of our subs: always ours.  A program that loads
 * Devel::NYTProf's XS (its readers do) gets DB::finish_profile and friends
 * replaced by that module's, which crash when its profiler is not running;
 * Devel::NYTProf::Core even installs NYTPROF's sigexit handlers calling
 * DB::finish_profile by name.  Called for a GV of the DB package only. */
static SV *own_sub_for(pTHX_ GV *gv)
{
    for (unsigned i = 0; i < S.nown; i++)
        if (S.own[i].gv == gv)
            return GvCV(gv) == S.own[i].cv ? (SV *)gv : (SV *)S.own[i].cv;
    return (SV *)gv;
}

/* The fields of a new frame that every kind of call sets alike (stored
 * one by one: a whole-struct assignment went through a copy); the caller
 * sets the call site's (frame_site_hit or frame_site_miss), called_cv,
 * called_depth, called_is_xs, t0 and t0_pending. */
static inline void frame_init(call_frame *f, const call_frame *up, sub_node *called,
                              sub_node *caller)
{
    f->counted = 0;
    f->hide = 0;
    f->depth = up ? up->depth + 1 : 1;
    f->overhead0 = S.overhead_ticks;
    f->subr0 = S.subr_ticks;
    f->caller = caller;
    f->called = called;
}

/* The CV that pp_entersub will run, when that is plain: a code value (a
 * method call), a glob with a sub, a reference to a code value; NULL for
 * anything that would take magic, overloading or a symbolic name. */
static inline CV *plain_cv(SV *sv)
{
    switch (SvTYPE(sv)) {
    case SVt_PVCV:
        return (CV *)sv;
    case SVt_PVGV:
        return isGV_with_GP(sv) ? GvCVu((GV *)sv) : NULL;
    default:
        if (SvROK(sv) && !SvAMAGIC(sv) && !SvGMAGICAL(sv) && SvTYPE(SvRV(sv)) == SVt_PVCV)
            return (CV *)SvRV(sv);
        return NULL;
    }
}

/* A call of a perl sub that pp_entersub has entered (its context is on
 * top of the context stack): the frame is made now, in that context, so
 * that leaving the sub, by a return, die, last or goto, ends it.  Nothing
 * of the profiler runs before the call (its start is the next clock
 * reading, normally its first statement's).  A call from a site seen
 * before finds its sub, arc and calling line in one lookup of the site
 * cache, by the calling statement, the sub's glob and the caller; else
 * the sub is found from its glob's cached node.  Same records as
 * frame_setup and the rest of call_profiler make for a perl sub.  errno
 * is kept: only the slow paths (a new node, glob, frame stack or arc)
 * can touch it, and they keep it. */
static void perl_sub_entered(pTHX_ COP *prev_cop, CV *cv, GV *gv)
{
    call_frame *up = FRAME(S.frame_ix);
    sub_node *caller = caller_node(aTHX_ up, cxstack_ix - 1);
    const HEK *ph = HvNAME_HEK(GvSTASH(gv)), *nh = GvNAME_HEK(gv);
    const site_slot *slot = site_slot_of(prev_cop, gv);
    call_frame *f;
    if (LIKELY(site_hit(slot, prev_cop, gv, ph, nh, caller))) {
        f = frame_push(aTHX); /* may move the stack: up is stale */
        frame_init(f, FRAME(S.frame_ix - 1), slot->called, caller);
        frame_site_hit(f, slot);
    } else {
        int saved_errno = errno;
        sub_node *n = node_for_gv(aTHX_ gv);
        int begin = n->is_begin;
        if (begin)
            n = name_begin_block(aTHX_ n);
        f = frame_push(aTHX);
        frame_init(f, FRAME(S.frame_ix - 1), n, caller);
        frame_site_miss(aTHX_ f, prev_cop, gv, ph, nh);
        if (begin)
            f->site = NULL; /* named by its line, not its glob */
        errno = saved_errno;
    }
    f->called_cv = cv;
    f->called_depth = (int)CvDEPTH(cv);
    f->called_is_xs = NULL;
    if (LIKELY(OPT(O_STMTS))) {
        f->t0 = 0;
        f->t0_pending = 1; /* its first statement's time */
        S.npending++;
    } else {
        f->t0 = now_ticks(aTHX); /* stmts=0: no statement reads the clock */
    }
    if (UNLIKELY(!ours_sub_leave(CvROOT(cv))))
        frame_end_with_scope(aTHX_ S.frame_ix); /* compiled before our wrappers */
    if (OPT(O_CALLS) >= 2 && S.w) {
        int saved_errno = errno;
        nytp_write_sub_entry(S.w, f->caller_fid, (uint32_t)f->caller_line);
        errno = saved_errno;
    }
}

/* The innermost CXt_SUB context of the current stack, or -1. */
static I32 sub_context(pTHX)
{
    for (I32 i = cxstack_ix; i >= 0; i--)
        if (CxTYPE(&cxstack[i]) == CXt_SUB)
            return i;
    return -1;
}

/* A call (or slow op) of type, not taken by a fast path. */
static OP *call_profiler(pTHX_ OPCODE type, int is_slowop)
{
    int saved_errno = errno;
    COP *prev_cop = PL_curcop;
    OP *next_op = PL_op->op_next;
    SV *sub_sv = *PL_stack_sp;
    CV *called_cv = NULL;
    SSize_t ix;
    OP *op;

    if (SvTYPE(sub_sv) == SVt_PVGV && GvSTASH((GV *)sub_sv) == PL_debstash)
        sub_sv = *PL_stack_sp = own_sub_for(aTHX_ (GV *)sub_sv);

    if (!OPT(O_SUBS) || !S.profiling || OTHER_INTERP()
        || (type == OP_ENTERSUB
            && (sub_sv == &PL_sv_yes || sub_sv == S.cv_check || sub_sv == S.cv_init
                || sub_sv == S.cv_end || sub_sv == S.cv_finish))
        || (type == OP_GOTO
            && (!(PL_op->op_flags & OPf_STACKED) || !SvROK(sub_sv)
                || SvTYPE(SvRV(sub_sv)) != SVt_PVCV || S.frame_ix == -1))) {
        op = S.orig[type](aTHX);
        if (type == OP_GOTO && !OTHER_INTERP()) {
            saved_errno = errno;
            frames_check(aTHX); /* goto LABEL out of a sub, or goto &sub unprofiled */
            errno = saved_errno;
        }
        return op;
    }

    if (!OPT(O_STMTS))
        reinit_if_forked(aTHX);
    frames_check_call(aTHX);

    /* whether the call entered a perl sub: its context is the one just
     * pushed on the stack the call was made on.  An xsub can also return
     * another op than the next (Coro's cede and join switch to another
     * coroutine, with a context stack of its own, by way of an op of
     * theirs): that is an xsub that returned. */
    int entered = 0;
    if (type != OP_GOTO) {
        ix = frame_setup(aTHX_ prev_cop, NULL, type, sub_sv);
        PERL_SI *si_before = PL_curstackinfo;
        I32 cx_before = cxstack_ix;
        errno = saved_errno;
        op = S.orig[type](aTHX);
        saved_errno = errno;
        entered = op != next_op && !is_slowop && PL_curstackinfo == si_before
                  && cxstack_ix == cx_before + 1 && CxTYPE(&cxstack[cxstack_ix]) == CXt_SUB;
    } else {
        /* goto &sub leaves the current sub and enters another, which we
         * record as called by the same caller, from the line of the goto.
         * The sub left ends here: its frame, if it has one (the innermost
         * sub context's), is closed once the goto is done. */
        COP cop_copy = *prev_cop;
        I32 subix = sub_context(aTHX);
        SSize_t left_ix = S.frame_ix;
        const call_frame *top = FRAME(left_ix);
        if (top->si != PL_curstackinfo || top->cxix != subix)
            left_ix = -2; /* the sub left was not profiled */
        call_frame left = *top;
        SvREFCNT_inc_simple_void(sub_sv);
        called_cv = (CV *)SvRV(sub_sv);
        errno = saved_errno;
        op = S.orig[type](aTHX);
        saved_errno = errno;
        if (left_ix >= 0)
            frames_close_from(aTHX_ left_ix);
        frames_check(aTHX); /* a goto into an xsub has left its context too */
        ix = frame_setup(aTHX_ &cop_copy, &left, type, sub_sv);
        SvREFCNT_dec(sub_sv);
    }

    if (ix > S.frame_ix)
        goto done; /* closed already */
    call_frame *f = FRAME(ix);
    if (f->counted) { /* profiling was finished inside it: no record */
        if (entered) {
            f->si = PL_curstackinfo; /* inside a perl sub: ends with it */
            f->cxix = cxstack_ix;
        } else if (is_slowop || type == OP_ENTERSUB || CvISXSUB(called_cv)) {
            frames_close_from(aTHX_ ix);
        } else {
            f->cxix = cxstack_ix; /* goto &perl_sub */
        }
        goto done;
    }

    if (!is_slowop) {
        const char *is_xs = NULL;
        sub_node *n = NULL;
        if (type == OP_GOTO) {
            is_xs = CvISXSUB(called_cv) ? "xsub" : NULL;
        } else if (entered) { /* now inside a perl sub */
            called_cv = cxstack[cxstack_ix].blk_sub.cv;
        } else { /* an xsub has run and returned */
            GV *gv = NULL;
            called_cv = resolve_cv(aTHX_ sub_sv, &gv);
            if (!called_cv && gv)
                n = node_for_gv(aTHX_ gv);
            is_xs = "xsub";
        }
        if (called_cv && CvGV(called_cv)) {
            GV *gv = CvGV(called_cv);
            if (SvTYPE(gv) == SVt_PVGV && GvSTASH(gv))
                n = node_for_gv(aTHX_ gv);
        }
        f = FRAME(ix); /* CvGV may make a glob */
        if (!n && f->called) {
            /* the name known before the call, its package not */
            const sub_node *was = f->called;
            n = node_named(aTHX_ NULL, 0, was->full + was->sub_off, was->full_len - was->sub_off);
        } else if (!n) {
            const char *what = is_xs ? is_xs : "sub";
            SV *name;
            const char *pkg;
            if (!called_cv) {
                pkg = CopSTASHPV(PL_curcop);
                name = newSVpvf("__UNKNOWN__[%s,%s])", what, SvPV_nolen(sub_sv));
            } else {
                pkg = HvNAME(CvSTASH(called_cv));
                name = newSVpvf("__UNKNOWN__[%s,0x%p]", what, (void *)called_cv);
            }
            n = node_named(aTHX_ pkg, pkg ? strlen(pkg) : 0, SvPVX(name), SvCUR(name));
            SvREFCNT_dec(name);
        }
        if (n->is_begin)
            n = name_begin_block(aTHX_ n);
        f = FRAME(ix);
        f->called = n;
        f->called_depth = called_cv ? (int)CvDEPTH(called_cv) + (is_xs ? 1 : 0) : 0;
        f->called_cv = called_cv;
        f->called_is_xs = is_xs;
        if (!is_xs) {
            /* inside the sub: its frame lasts as long as its context */
            f->si = PL_curstackinfo;
            f->cxix = cxstack_ix;
            if (called_cv && CvROOT(called_cv) && !ours_sub_leave(CvROOT(called_cv)))
                frame_end_with_scope(aTHX_ ix); /* compiled before our wrappers */
        }
    }

    /* our own DB::_INIT/_END/_CHECK are not part of the program */
    if (f->called_is_xs && f->called && f->called->is_own)
        f->counted++;
    if (!OPT(O_SUBS))
        f->counted++;

    if (f->called_is_xs)
        frames_close_from(aTHX_ ix); /* already returned */
done:
    errno = saved_errno;
    return op;
}

/* entersub and goto.  The common case first, with nothing before the
 * call but the test of the innermost frame: a perl sub (not one of DB::,
 * where own_sub_for may have to swap the sub) known by a glob of a
 * package, while profiling. */
static inline __attribute__((always_inline)) OP *pp_call(pTHX_ OPCODE type)
{
    SV *sub_sv = *PL_stack_sp;
    CV *cv;
    GV *gv;
    if (type == OP_ENTERSUB && S.call_fast && PL_op->op_type == OP_ENTERSUB && !OTHER_INTERP()
        && (cv = plain_cv(sub_sv)) && !CvISXSUB(cv)
        && CvROOT(cv) && !CvNAMED(cv) && (gv = CvGV(cv)) && SvTYPE(gv) == SVt_PVGV
        && GvSTASH(gv) && GvSTASH(gv) != PL_debstash
        && !(SvTYPE(sub_sv) == SVt_PVGV && GvSTASH((GV *)sub_sv) == PL_debstash)) {
        COP *prev_cop = PL_curcop;
        OP *next_op = PL_op->op_next;
        frames_check_call(aTHX);
        OP *op = S.orig[OP_ENTERSUB](aTHX);
        if (op != next_op && cxstack_ix >= 0 && CxTYPE(&cxstack[cxstack_ix]) == CXt_SUB
            && cxstack[cxstack_ix].blk_sub.cv == cv)
            perl_sub_entered(aTHX_ prev_cop, cv, gv);
        return op;
    }
    return call_profiler(aTHX_ type, 0);
}

/* A slow op, while profiling (not accept, whose time is hidden): what
 * frame_setup and call_profiler do for one, without their other cases.
 * The frame is made before the op runs, in case it dies (or runs perl
 * code: a sort block, overloading), and the call is recorded as it
 * returns. */
static OP *pp_slowop(pTHX_ OPCODE type)
{
    if (!S.call_fast || OTHER_INTERP() || type == OP_ACCEPT)
        return call_profiler(aTHX_ type, 1);
    int saved_errno = errno;
    COP *prev_cop = PL_curcop;
    frames_check_call(aTHX);
    call_frame *up = FRAME(S.frame_ix);
    sub_node *caller = caller_node(aTHX_ up, cxstack_ix);
    /* the site cache by the statement, the op (slowop_key) and the name
     * of the statement's package: a site seen before gives the node too */
    const HEK *ph;
    const void *key = slowop_key(CopSTASH(prev_cop), type, &ph);
    const site_slot *slot = site_slot_of(prev_cop, key);
    call_frame *f;
    SSize_t ix;
    if (LIKELY(site_hit(slot, prev_cop, key, ph, NULL, caller))) {
        f = frame_push(aTHX);
        ix = S.frame_ix;
        frame_init(f, FRAME(ix - 1), slot->called, caller);
        frame_site_hit(f, slot);
    } else {
        sub_node *n = node_for_slowop(aTHX_ CopSTASH(prev_cop), type);
        f = frame_push(aTHX);
        ix = S.frame_ix;
        frame_init(f, FRAME(ix - 1), n, caller);
        frame_site_miss(aTHX_ f, prev_cop, key, ph, NULL);
    }
    f->called_cv = NULL;
    f->called_depth = 1;
    f->called_is_xs = "sop";
    f->t0_pending = 0;
    f->t0 = now_ticks(aTHX);
    if (OPT(O_CALLS) >= 2 && S.w)
        nytp_write_sub_entry(S.w, f->caller_fid, (uint32_t)f->caller_line);
    errno = saved_errno;
    OP *op = S.orig[type](aTHX);
    saved_errno = errno;
    if (LIKELY(S.frame_ix == ix))
        frame_done(aTHX_ FRAME(ix));
    else
        frames_close_from(aTHX_ ix); /* and any frames left above it */
    errno = saved_errno;
    return op;
}

/* The ops that leave a sub (leavesub, leavesublv, return), where the
 * statement wrappers do not take them, and those that may leave one on
 * the way to a loop (last, next, redo): the calls left end. */
static inline __attribute__((always_inline)) OP *pp_sub_left(pTHX_ OPCODE type)
{
    OP *op = S.orig[type](aTHX);
    if (!OTHER_INTERP())
        frames_check(aTHX);
    return op;
}

/* entertry, entereval (and entertrycatch): once the eval's context is
 * there, its scope holds what ends the calls made inside it when it is
 * left, by a die too. */
static inline __attribute__((always_inline)) OP *pp_eval_entered(pTHX_ OPCODE type)
{
    I32 cx_before = cxstack_ix;
    OP *op = S.orig[type](aTHX);
    if (OPT(O_SUBS) && !OTHER_INTERP() && cxstack_ix > cx_before
        && CxTYPE(&cxstack[cxstack_ix]) == CXt_EVAL) {
        int saved_errno = errno;
        frames_eval_entered(aTHX);
        errno = saved_errno;
    }
    return op;
}

NYTP_CALL_PP(NYTP_PP_DEFINE)
NYTP_SUB_LEFT_PP(NYTP_PP_DEFINE)
NYTP_EVAL_PP(NYTP_PP_DEFINE)
#define NYTP_SLOWOP(op) NYTP_PP_DEFINE(pp_slowop, op)
#include "nytp_slowops.h"
#undef NYTP_SLOWOP

/* stmt.c — statements: the wrappers of nextstate and of the ops that
 * return into the middle of a statement. */
#include "nytp_prof.h"

/* ---- statements ------------------------------------------------------------ */

/* A statement whose cop has line 0 (optimised away): look among the ops
 * that follow it for a nulled-out nextstate that still knows the line. */
static const COP *find_line_cop(pTHX_ const COP *cop, const OP *o)
{
    if (!o || o == PL_op)
        return cop;
    if (o->op_flags & OPf_KIDS) {
        for (const OP *kid = cUNOPx(o)->op_first; kid; kid = OpSIBLING(kid)) {
            if (kid->op_type == OP_NULL && kid->op_targ == OP_NEXTSTATE)
                cop = (const COP *)kid;
            const COP *found = find_line_cop(aTHX_ cop, kid);
            if (found)
                return found;
        }
    }
    return NULL;
}

/* blocks=1: the first statement of the block (or sub, eval, loop) that a
 * context runs, or NULL where that is not a statement. */
static const COP *first_cop_of(pTHX_ const PERL_CONTEXT *cx)
{
    const OP *o;
    switch (CxTYPE(cx)) {
    case CXt_EVAL:
    case CXt_BLOCK:
        o = (const OP *)cx->blk_oldcop;
        break;
    case CXt_SUB:
    case CXt_FORMAT:
        o = CvSTART(cx->blk_sub.cv);
        break;
    case CXt_LOOP_ARY:
    case CXt_LOOP_LAZYSV:
    case CXt_LOOP_LAZYIV:
    case CXt_LOOP_LIST:
    case CXt_LOOP_PLAIN:
        o = cx->blk_loop.my_op->op_redoop;
        break;
    default:
        return NULL;
    }
    if (!o)
        return NULL;
    int type = o->op_type ? (int)o->op_type : (int)o->op_targ;
    return type == OP_NEXTSTATE || type == OP_DBSTATE ? (const COP *)o : NULL;
}

static int same_file(const COP *a, const COP *b)
{
    const char *fa = OutCopFILE(a), *fb = OutCopFILE(b);
    return fa == fb || strcmp(fa, fb) == 0;
}

/* blocks=1: the first lines of the innermost enclosing block and sub of
 * the current statement, walking the context stacks outwards (through
 * sort and signal stacks) to the first sub; the main program's outermost
 * block is not a block. */
static void find_block_and_sub(pTHX)
{
    const COP *cur = PL_curcop;
    PERL_SI *si = PL_curstackinfo;
    I32 ix = cxstack_ix;
    for (;;) {
        while (ix < 0 && si->si_type != PERLSI_MAIN && si->si_prev) {
            si = si->si_prev;
            ix = si->si_cxix;
        }
        if (ix < 0 || (ix == 0 && !si->si_prev))
            return;
        const PERL_CONTEXT *cx = &si->si_cxstack[ix];
        ix--;
        if (CxTYPE(cx) == CXt_SUB) {
            if (PL_debstash && CvSTASH(cx->blk_sub.cv) == PL_debstash)
                continue; /* the debugger's own subs */
            const COP *c = first_cop_of(aTHX_ cx);
            if (c && same_file(c, cur)) {
                S.last_sub_line = CopLINE(c);
                if (!S.last_block_line)
                    S.last_block_line = S.last_sub_line;
            }
            return;
        }
        if (S.last_block_line)
            continue; /* have the block: keep looking for the sub */
        const COP *c = first_cop_of(aTHX_ cx);
        if (!c)
            continue;
        if (!same_file(c, cur)) {
            if (OutCopFILE(cur)[0] == '(') /* a string eval: give up */
                S.last_block_line = S.last_sub_line = S.last_line;
            return;
        }
        S.last_block_line = CopLINE(c);
    }
}

/* A statement begins (or, from leave_event, control is back in an outer
 * one): charge the time since the last event to the last line. */
void stmt_event(pTHX_ COP *cop, OP *op, int64_t now)
{
    if (!S.profiling || !OPT(O_STMTS) || OTHER_INTERP())
        return;
    int saved_errno = errno;
    if (!now)
        now = now_ticks(aTHX);
    long elapsed = (long)(now - S.last_t);
    S.last_t = now;

    if (S.forked) /* the check inline: it runs per statement */
        reinit_if_forked(aTHX);
    /* END blocks run with perl's %SIG handlers gone (hold.c) */
    if (UNLIKELY(PL_phase >= PERL_PHASE_END) && !S.holding && S.w)
        hold_signals();
    if (S.last_fid && S.w) {
        if (OPT(O_BLOCKS))
            nytp_write_time_block(S.w, (int32_t)elapsed, S.last_fid, S.last_line,
                                  S.last_block_line, S.last_sub_line);
        else
            nytp_write_time_line(S.w, (int32_t)elapsed, S.last_fid, S.last_line);
    }

    if (!cop)
        cop = PL_curcop;
    S.last_line = CopLINE(cop);
    if (S.last_line == 0) {
        const COP *c = find_line_cop(aTHX_ cop, OpSIBLING((OP *)cop));
        if (c)
            cop = (COP *)c;
        S.last_line = CopLINE(cop);
        if (S.last_line == 0) {
            /* perl's own preamble (-n, -p, -M) runs as line 0 */
            const char *pkg = CopSTASHPV(cop);
            int preamble = PL_scopestack_ix <= 7 && pkg && strcmp(pkg, "main") == 0;
            if (!preamble && op)
                note("Devel::NYTP: unable to determine line number in %s\n", OutCopFILE(cop));
            S.last_line = 1;
        }
    }
    const char *file = OutCopFILE(cop);
    if (file != S.last_fileptr) {
        /* a threaded perl gives every statement its own copy of the file
         * name: known copies are remembered by address (until perl frees
         * a statement, see cop_freed), else comparing with the last name
         * is cheaper than hashing it.  Back from a BEGIN block, the
         * statement is PL_compiling, whose name is not kept by address
         * (cop_in_tree). */
        int in_tree = cop_in_tree(cop);
        const file_slot *slot = in_tree ? file_cache_get(file) : NULL;
        if (slot) {
            S.last_fid = slot->fid;
            S.last_filename = slot->name;
        } else {
            if (!(S.last_fid && S.last_filename && strcmp(file, S.last_filename) == 0)) {
                S.last_fid = file_id(aTHX_ file, strlen(file), NYTP_FIDF_VIA_STMT);
                S.last_filename = S.last_fid ? file_key(S.last_fid) : NULL;
            }
            if (in_tree && S.last_filename)
                file_cache_put(file, S.last_fid, S.last_filename);
        }
        S.last_fileptr = in_tree ? file : NULL;
        if (!S.last_filename)
            S.last_fileptr = NULL;
        fid_mark(S.last_fid);
    }
    if (OPT(O_BLOCKS)) {
        S.last_block_line = S.last_sub_line = 0;
        if (op)
            find_block_and_sub(aTHX);
        if (!S.last_block_line)
            S.last_block_line = S.last_line;
        if (!S.last_sub_line)
            S.last_sub_line = S.last_line;
    }
    errno = saved_errno;
}

/* After an op that returns into the middle of an outer statement: close
 * the inner statement now and mark the outer one's next time as a
 * continuation (DISCOUNT), not a new execution. */
void leave_event(pTHX_ OP *op, int64_t now)
{
    if (!S.profiling || !S.w || !OPT(O_STMTS) || OTHER_INTERP())
        return;
    int saved_errno = errno;
    stmt_event(aTHX_ NULL, op, now);
    if (S.w)
        nytp_write_discount(S.w);
    errno = saved_errno;
}

/* A call that ended while the op ran (its scope was left) read the
 * clock moments ago: that reading is the statement's too. */
#define FRESH_TIME() (S.fresh ? S.fresh_t : 0)

/* stmt_event's common case, inline in the op wrappers: a statement with
 * a line, in a file the file cache knows by this address, blocks=0, no
 * fork to see to.  Returns 0 (having done nothing) for anything else.
 * Back from a BEGIN block the statement is PL_compiling, whose name the
 * cache never holds (cop_in_tree): a slot of its address is not valid. */
static inline __attribute__((always_inline)) int stmt_common(pTHX_ int64_t now)
{
    const COP *cop = PL_curcop;
    unsigned line = CopLINE(cop);
    if (!S.stmt_fast || OTHER_INTERP() || !S.last_fid || !line
        || UNLIKELY(PL_phase >= PERL_PHASE_END && !S.holding))
        return 0; /* stmt_event does it (the END phase: it starts holding signals) */
    const char *file = OutCopFILE(cop);
    const file_slot *slot = NULL;
    if (file != S.last_fileptr) {
        slot = file_cache_get(file);
        if (!slot)
            return 0;
    }
    long elapsed;
    if (now) {
        elapsed = (long)(now - S.last_t);
        S.last_t = now;
    } else if (line == S.last_line && (S.stmt_fast & 2) && !S.npending
               && (slot ? slot->fid : S.last_fid) == S.last_fid) {
        /* The same line again (a statement after another on its line, a
         * one-line loop's next turn), and no call waits for this reading
         * as its start: the line's time runs on from the last reading,
         * so this execution is counted with no time and the next reading
         * charges the line for both.  The line's total is the same to
         * the tick, for one clock reading fewer. */
        elapsed = 0;
    } else {
        now = now_ticks(aTHX);
        elapsed = (long)(now - S.last_t);
        S.last_t = now;
    }
    nytp_write_time_line_inline(S.w, (int32_t)elapsed, S.last_fid, S.last_line);
    S.last_line = line;
    if (slot) {
        S.last_fid = slot->fid;
        S.last_filename = slot->name;
        S.last_fileptr = file;
        fid_mark(slot->fid);
    }
    return 1;
}

/* The wrappers leave errno as the program left it: stmt_common and the
 * inline writers do not touch it, and what else they call keeps it
 * (stmt_event, leave_event, frame_done). */
static inline __attribute__((always_inline)) OP *pp_stmt(pTHX_ OPCODE type)
{
    S.fresh = 0;
    OP *op = S.orig[type](aTHX);
    int64_t now = FRESH_TIME();
    if (!stmt_common(aTHX_ now))
        stmt_event(aTHX_ NULL, op, now);
    if (UNLIKELY(S.last_t >= S.rotate_at)) { /* rotate=: a statement begins */
        int saved_errno = errno;
        rotate_now(aTHX_ S.last_t);
        errno = saved_errno;
    }
    return op;
}

static inline __attribute__((always_inline)) OP *pp_leave(pTHX_ OPCODE type)
{
    S.fresh = 0;
    OP *op = S.orig[type](aTHX);
    if (!OTHER_INTERP())
        frames_check(aTHX); /* the end of a call: its reading is the statement's */
    int64_t now = FRESH_TIME();
    if (stmt_common(aTHX_ now))
        nytp_write_discount_inline(S.w);
    else
        leave_event(aTHX_ op, now);
    return op;
}

NYTP_STMT_PP(NYTP_PP_DEFINE)
NYTP_LEAVE_PP(NYTP_PP_DEFINE)

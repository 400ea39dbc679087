/* sample.c — sample=HZ: profiling by sampling instead of tracing.
 *
 * The timer (timer.c) raises a flag HZ times a second of the program's
 * CPU time, from a signal handler that does nothing else, and perl's own
 * flag of a pending signal.  The interpreter tests the flag where the
 * state a sample sees changes: at the start of each statement (still in
 * the statement before, which the timer kept: perl's own safe point,
 * which calls its signal hook when its flag is up, so that a statement
 * costs nothing more than without the profiler; the same safe point at a
 * loop's next round or a condition is within a statement, its own),
 * before a sub is called (entersub: still in the caller) and left
 * (leavesub, return, goto: still in the sub), and before and after each
 * slow op (I/O, regex, sort...: a sample due as one ends is its own,
 * shown as Pkg::CORE:name as the tracing profiler names it).  Between
 * those points a statement runs, so a sample taken there is still that
 * statement's.  With NYTP_SAMPLE_AT=op the flag is tested
 * after every op instead, in our own runops loop (exact to the op, and
 * three times the instructions).  The sample is then taken by the
 * interpreter itself, between two ops, where perl's stacks are
 * consistent.
 *
 * A sample is the current file and line (PL_curcop), the subs on the
 * context stack (cxstack, through PL_curstackinfo and si_prev: sort,
 * signal and magic stacks are walked through), and the slow op it ends,
 * weighted by the wall time since the previous sample.  Samples are kept
 * as:
 *
 *   line times  (fid, line) -> ticks; written when the file closes, each
 *               as a DISCOUNT then a TIME_LINE: time, and no count
 *   a shadow    the sampled stack as the last sample saw it.  A frame is
 *   stack       matched to perl's by its place (stack level and context
 *               index) and its identity (CV, calling statement, save
 *               stack index at entry); a frame that is gone has returned:
 *               its SUB_RETURN (depth, inclusive and exclusive ticks) is
 *               written and its call arc (SUB_CALLERS) adds one call.
 *               New frames are pushed.  Matching stops at the first frame
 *               that matches (the rest is as before), so a sample costs
 *               what changed, not the depth of the stack.
 *
 * So a call is "seen" when a sample finds it; the counts in the file are
 * the calls seen (a lower bound, there so that older readers list the
 * subs), and the profile says it was sampled (attributes sample_hz and
 * sample_count) so nytp's reports show counts as unknown.
 *
 * The timer counts CPU time, so it says nothing while the program waits
 * (a sleep, a server in accept, a database call in an xsub) or works in
 * the kernel.  Each slow op that can wait (I/O, sockets, processes, the
 * file system: not the regex, sort, pack and crypt ops, which only
 * compute) and each xsub is timed: one that took a millisecond or more is
 * charged, as a sample of its own, the time it took, as a 30-second sleep
 * is charged its 30 seconds; a shorter one is charged a millisecond with a
 * chance of its length in a millisecond (a tenth of a millisecond: one in
 * ten), on average its own time; what was charged is taken off the next
 * sample of the timer.  (Charging a wait with all the time since the last
 * sample instead would charge it with the work before it too: a server's
 * select got 45% of its time, not its 30%.)  The timing is the cost that
 * every such op pays, sampled or not: on x86 it reads the time-stamp
 * counter (one instruction, where the profile's clock_gettime is some 40
 * instructions and a vDSO call), whose rate against the profile's clock is
 * measured at every sample of the timer; elsewhere the profile's clock.
 *
 * Fork: timers do not survive it.  The child (pthread_atfork) raises the
 * flag itself, and its first sample sees the fork: reinit_if_forked
 * starts the child's own file and then (on_child) its own timer. */
#include "nytp_prof.h"


/* One frame of the sampled stack. */
typedef struct {
    const PERL_SI *si;           /* place: stack info, its level, context */
    I32 level, ix;
    const void *cv;              /* identity: CV (or slow op), calling */
    const COP *cop;              /* statement, save stack index at entry */
    I32 saveix;
    sub_node *node, *caller;
    unsigned fid;                /* the call site */
    int line;
    unsigned rec;                /* frames of node at or below this one */
    double w0;                   /* Z.weight when pushed */
    double excl;                 /* ticks while on top */
    int xs;                      /* a slow op: marked as an xsub */
} sframe;

/* A line's time, by (fid << 32 | line), open addressing. */
typedef struct {
    uint64_t key;                /* 0: empty */
    double ticks;
} line_slot;

static struct sampler {
    int installed;
    int at_stmt;                 /* the flag is tested at statements, not ops */
    int stopping;                /* the last sample before stopping: no rotation */
    long period_ns;
    int64_t last_t;              /* when the last sample was taken */
    int64_t waited;              /* ticks charged to waits since then */
    double weight;               /* ticks of all samples so far */
    uint64_t samples;            /* in this file */
    sframe *st;                  /* the shadow stack, outermost first */
    size_t n, cap;
    sframe *fresh;               /* new frames of one sample, innermost first */
    size_t fresh_cap;
    line_slot *lines;
    size_t lines_cap, lines_used;
    const COP *cop;              /* the statement of this sample, if not PL_curcop */
} Z;

/* The timer's flag, tested where samples may be taken. */
#define FLAG_UP() UNLIKELY(atomic_load_explicit(&timer_due, memory_order_relaxed))

/* Waits are timed in "wait units": on x86, with a CPU whose time-stamp
 * counter runs at a constant rate in every state (the test the tracing
 * clock makes, clock.c), the counter's cycles; elsewhere the profile's
 * clock's ticks.  (Not the coarse clock: it moves a kernel tick at a time,
 * on the very tick where the CPU-time timer fires, and a program that
 * worked and waited in turn in spells far shorter than a tick had its
 * work's share off by 11 to 20 points.)  On a CPU-time clock (clock=2, 3:
 * nytp run --cpu) nothing is timed: a wait costs what that clock saw of it,
 * which the next sample's weight already holds. */
enum { WAIT_NONE, WAIT_TICKS, WAIT_TSC };
static struct {
    int mode;
    int64_t quantum;             /* WAIT_QUANTUM_NS in wait units; 0: rate not known yet */
    uint64_t last;               /* the last sample of any kind */
    double ns_per_unit;
    uint64_t tsc0;               /* WAIT_TSC: a reading of the counter */
    int64_t ticks0;              /* and of the profile's clock, together */
} W;

/* A wait shorter than this is charged this with a chance of its length
 * in it (on average its own time), so that most short slow ops and xsubs
 * take no sample of their own. */
#define WAIT_QUANTUM_NS 1000000

/* A rate measured over less than this is a guess (the two readings are a
 * few tens of nanoseconds apart), good enough for one wait but not kept. */
#define WAIT_RATE_MIN_TICKS (TICKS_PER_SEC / 1000)

static inline uint64_t wait_now(void)
{
#ifdef HAVE_TSC
    if (LIKELY(W.mode == WAIT_TSC))
        return __rdtsc();
#endif
    return W.mode == WAIT_TICKS ? (uint64_t)clock_ticks() : 0;
}

static void wait_clock_init(void)
{
    W.mode = WAIT_NONE;
    if (S.clock == CLOCK_PROCESS_CPUTIME_ID || S.clock == CLOCK_THREAD_CPUTIME_ID || S.clock < 0)
        return;
    W.mode = WAIT_TICKS;
    W.ns_per_unit = 1000000000.0 / TICKS_PER_SEC;
    W.quantum = WAIT_QUANTUM_NS / (1000000000 / TICKS_PER_SEC);
#ifdef HAVE_TSC
    const char *e = getenv("NYTP_TSC");
    if (!(e && strcmp(e, "0") == 0) && cpu_has_stable_tsc()) {
        W.mode = WAIT_TSC;
        W.quantum = 0;
        W.ticks0 = clock_ticks();
        W.tsc0 = __rdtsc();
    }
#endif
}

#ifdef HAVE_TSC
/* The counter's rate against the profile's clock, from the first reading
 * to now (ticks and tsc read together); kept once measured over a
 * millisecond or more.  Returns ns a cycle (0: none yet). */
static double wait_rate(int64_t ticks, uint64_t tsc)
{
    int64_t dt = ticks - W.ticks0;
    int64_t dc = (int64_t)(tsc - W.tsc0);
    if (dt <= 0 || dc <= 0)
        return W.quantum ? W.ns_per_unit : 0;
    double r = (double)dt * (1000000000.0 / TICKS_PER_SEC) / (double)dc;
    if (dt >= WAIT_RATE_MIN_TICKS) {
        W.ns_per_unit = r;
        W.quantum = (int64_t)(WAIT_QUANTUM_NS / r);
        if (W.quantum < 1)
            W.quantum = 1;
    }
    return r;
}
#endif

/* The chance of a short wait: the high half of a linear congruential
 * generator (Knuth's MMIX constants), a multiplication and an addition. */
static uint64_t wait_rng = 0x9E3779B97F4A7C15u;

static inline uint32_t wait_rand(void)
{
    wait_rng = wait_rng * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(wait_rng >> 32);
}

/* ---- line times ------------------------------------------------------------- */

static void line_add(pTHX_ unsigned fid, unsigned line, double ticks)
{
    uint64_t key = (uint64_t)fid << 32 | line;
    if (!key)
        return;
    if ((Z.lines_used + 1) * 2 > Z.lines_cap) {
        size_t ncap = Z.lines_cap ? Z.lines_cap * 2 : 1024;
        line_slot *t = calloc(ncap, sizeof *t);
        if (!t)
            croak("Devel::NYTP: out of memory");
        for (size_t j = 0; j < Z.lines_cap; j++) {
            if (!Z.lines[j].key)
                continue;
            size_t i = (size_t)(Z.lines[j].key * 0x9E3779B97F4A7C15ull >> 20) & (ncap - 1);
            while (t[i].key)
                i = (i + 1) & (ncap - 1);
            t[i] = Z.lines[j];
        }
        free(Z.lines);
        Z.lines = t;
        Z.lines_cap = ncap;
    }
    size_t mask = Z.lines_cap - 1;
    size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & mask;
    while (Z.lines[i].key && Z.lines[i].key != key)
        i = (i + 1) & mask;
    if (!Z.lines[i].key) {
        Z.lines[i].key = key;
        Z.lines_used++;
    }
    Z.lines[i].ticks += ticks;
}

static int cmp_slot(const void *a, const void *b)
{
    uint64_t x = ((const line_slot *)a)->key, y = ((const line_slot *)b)->key;
    return x < y ? -1 : x > y;
}

/* Every line's time, by file and line: a DISCOUNT before each TIME_LINE,
 * so that readers add the time and count no statement (the number of
 * executions is not known). */
static void lines_write(void)
{
    if (!Z.lines_used)
        return;
    size_t n = 0;
    for (size_t j = 0; j < Z.lines_cap; j++)
        if (Z.lines[j].key)
            Z.lines[n++] = Z.lines[j];
    qsort(Z.lines, n, sizeof *Z.lines, cmp_slot);
    for (size_t j = 0; j < n && S.w; j++) {
        double t = Z.lines[j].ticks + 0.5;
        unsigned fid = (unsigned)(Z.lines[j].key >> 32), line = (unsigned)Z.lines[j].key;
        do { /* a TIME_LINE holds 31 bits of ticks (3.5 minutes) */
            int32_t part = t > INT32_MAX ? INT32_MAX : (int32_t)t;
            nytp_write_discount(S.w);
            nytp_write_time_line(S.w, part, fid, line);
            t -= part;
        } while (t >= 1);
    }
    memset(Z.lines, 0, Z.lines_cap * sizeof *Z.lines);
    Z.lines_used = 0;
}

/* ---- the sampled stack -------------------------------------------------------- */

/* The file id of a statement's file (the statement hook's cache). */
static unsigned cop_fid(pTHX_ const COP *cop)
{
    return cop_file_id(aTHX_ cop, NYTP_FIDF_VIA_STMT);
}

/* The node of a sub on the stack.  A BEGIN block is named BEGIN@LINE as
 * the tracing profiler names it, from its %DB::sub entry if that entry is
 * this block's (the block's first statement within its lines), else from
 * its first statement's line. */
static sub_node *node_of_cv(pTHX_ CV *cv)
{
    GV *gv = CvGV(cv);
    if (!gv || SvTYPE(gv) != SVt_PVGV || !GvSTASH(gv))
        return S.node_unknown;
    sub_node *n = node_for_gv(aTHX_ gv);
    if (!n->is_begin)
        return n;
    const COP *first = (const COP *)CvSTART(cv);
    unsigned line = first && (first->op_type == OP_NEXTSTATE || first->op_type == OP_DBSTATE)
                        ? (unsigned)CopLINE(first) : 0;
    SV **svp = hv_fetch(GvHV(PL_DBsub), n->full, (I32)n->full_len, 0);
    if (svp && SvOK(*svp)) {
        const char *s = SvPV_nolen(*svp);
        const char *colon = strrchr(s, ':');
        unsigned a = 0, b = 0;
        if (colon && sscanf(colon + 1, "%u-%u", &a, &b) == 2 && line >= a && line <= b + 1)
            return name_begin_block(aTHX_ n);
    }
    if (!line)
        return n;
    char name[48];
    int len = snprintf(name, sizeof name, "BEGIN@%u", line);
    SV *full = newSVpvf("%s::%s", n->pkg, name);
    if (!hv_exists(GvHV(PL_DBsub), SvPVX(full), (I32)SvCUR(full))) {
        const char *file = CvFILE(cv) ? CvFILE(cv) : "";
        (void)hv_store(GvHV(PL_DBsub), SvPVX(full), (I32)SvCUR(full),
                       newSVpvf("%s:%u-%u", file, line, line), 0);
    }
    SvREFCNT_dec(full);
    return node_named(aTHX_ n->pkg, strlen(n->pkg), name, (STRLEN)len);
}

/* The frame ends (its sub returned, or the file closes): its call arc,
 * its SUB_RETURN. */
static void frame_end(pTHX_ const sframe *f, size_t depth)
{
    double incl = Z.weight - f->w0;
    node_first_call(aTHX_ f->node, f->xs);
    arc_add(arc_for(aTHX_ f->node, f->caller, f->fid, f->line), (int)f->rec, incl, f->excl);
    if (OPT(O_CALLS) && S.w)
        nytp_write_sub_return(S.w, (uint32_t)depth, incl, f->excl,
                              str_n(f->node->full, f->node->full_len, false));
    fid_mark(f->fid);
}

static void pop_to(pTHX_ size_t keep)
{
    while (Z.n > keep) {
        sframe *f = &Z.st[Z.n - 1];
        frame_end(aTHX_ f, Z.n);
        f->node->sample_depth--;
        Z.n--;
    }
}

/* A frame place compared with another: <0 below it, 0 the same, >0 above. */
static int place_cmp(const sframe *a, I32 level, I32 ix)
{
    if (a->level != level)
        return a->level < level ? -1 : 1;
    return a->ix < ix ? -1 : a->ix > ix;
}

/* A candidate from perl's stack, innermost first: false once it matches
 * the shadow frame at its place (everything below is unchanged).  *k is
 * the shadow frame being compared (from the top); frames above the
 * candidate's place are gone. */
static int candidate(size_t *k, const sframe *c)
{
    while (*k > 0 && place_cmp(&Z.st[*k - 1], c->level, c->ix) > 0)
        (*k)--;
    if (*k > 0 && place_cmp(&Z.st[*k - 1], c->level, c->ix) == 0) {
        const sframe *s = &Z.st[*k - 1];
        if (s->si == c->si && s->cv == c->cv && s->cop == c->cop && s->saveix == c->saveix)
            return 0;
        (*k)--;
    }
    return 1;
}

/* Where a sub was called from.  A BEGIN block is called while its file is
 * being compiled (from PL_compiling, which has moved on since): its call
 * site is its own first line. */
static void call_site(pTHX_ sframe *f)
{
    if (f->cop == &PL_compiling && !f->xs) {
        const CV *cv = (const CV *)f->cv;
        const COP *first = (const COP *)CvSTART(cv);
        const char *file = CvFILE(cv);
        if (file && first && (first->op_type == OP_NEXTSTATE || first->op_type == OP_DBSTATE)) {
            f->fid = file_id(aTHX_ file, strlen(file), NYTP_FIDF_VIA_SUB);
            f->line = (int)CopLINE(first);
        }
        return;
    }
    if (f->cop == &PL_compiling) {
        const char *file = OutCopFILE(f->cop);
        f->fid = file ? file_id(aTHX_ file, strlen(file), NYTP_FIDF_VIA_STMT) : 0;
    } else {
        f->fid = f->cop ? cop_fid(aTHX_ f->cop) : 0;
    }
    f->line = f->cop ? (int)CopLINE(f->cop) : 0;
}

/* The stack now: frames that are gone end, new ones are pushed.  ran is
 * the slow op that had just run (its type, taken before it ran; OP_max:
 * none), on top of the stack. */
static void stack_sample(pTHX_ OPCODE ran)
{
    I32 top_level = 0;
    for (const PERL_SI *si = PL_curstackinfo; si->si_prev; si = si->si_prev)
        top_level++;
    size_t k = Z.n, nf = 0;
    int matched = 0;
    grow_or_croak(aTHX_ (void **)&Z.fresh, &Z.fresh_cap, 1, 64, sizeof *Z.fresh);

    if (ran < OP_max) {
        sframe *c = &Z.fresh[nf];
        memset(c, 0, sizeof *c);
        c->si = PL_curstackinfo;
        c->level = top_level;
        c->ix = I32_MAX;
        c->node = node_for_slowop(aTHX_ CopSTASH(PL_curcop), ran);
        c->cv = c->node;
        c->cop = PL_curcop;
        c->xs = 1;
        if (!candidate(&k, c))
            matched = 1;
        else
            nf++;
    }
    const PERL_SI *si = PL_curstackinfo;
    I32 level = top_level, ix = si->si_cxix;
    while (!matched) {
        while (ix < 0 && si->si_prev) {
            si = si->si_prev;
            level--;
            ix = si->si_cxix;
        }
        if (ix < 0)
            break;
        const PERL_CONTEXT *cx = &si->si_cxstack[ix];
        if ((CxTYPE(cx) == CXt_SUB || CxTYPE(cx) == CXt_FORMAT)
            && !(PL_debstash && CvSTASH(cx->blk_sub.cv) == PL_debstash)) {
            grow_or_croak(aTHX_ (void **)&Z.fresh, &Z.fresh_cap, nf + 1, 64, sizeof *Z.fresh);
            sframe *c = &Z.fresh[nf];
            memset(c, 0, sizeof *c);
            c->si = si;
            c->level = level;
            c->ix = ix;
            c->cv = cx->blk_sub.cv;
            c->cop = cx->blk_oldcop;
            c->saveix = cx->blk_oldsaveix;
            if (!candidate(&k, c)) {
                matched = 1;
                break;
            }
            nf++;
        }
        ix--;
    }
    if (!matched)
        k = 0; /* perl's stack ended with no frame as before: all are gone */
    pop_to(aTHX_ k);
    /* push the new frames, outermost first */
    grow_or_croak(aTHX_ (void **)&Z.st, &Z.cap, Z.n + nf + 1, 64, sizeof *Z.st);
    while (nf > 0) {
        sframe *c = &Z.fresh[--nf];
        sframe *f = &Z.st[Z.n];
        *f = *c;
        if (!f->node)
            f->node = node_of_cv(aTHX_ (CV *)c->cv);
        const sframe *up = Z.n ? &Z.st[Z.n - 1] : NULL;
        if (up) {
            f->caller = up->node;
        } else {
            f->caller = S.node_runtime;
            S.main_runtime_used++;
        }
        call_site(aTHX_ f);
        f->rec = ++f->node->sample_depth;
        f->w0 = Z.weight;
        f->excl = 0;
        Z.n++;
        if (OPT(O_CALLS) >= 2 && S.w)
            nytp_write_sub_entry(S.w, f->fid, (uint32_t)f->line);
    }
}

/* ---- taking a sample ---------------------------------------------------------- */

/* The line a sample is charged to: the current statement's.  While a file
 * is compiled (PL_curcop is PL_compiling, or the compiler's copy of it
 * under which it runs ops to fold constants: not a statement of the op
 * tree; and the first op of a file just required runs before its first
 * statement) and for a statement without a line, the line of the
 * innermost call (a 'use' line for a BEGIN block), as the tracing
 * profiler charges compiling to the statement that required the file:
 * not the line being compiled, which may never run. */
static void sample_line(pTHX_ unsigned *fid, unsigned *line)
{
    const COP *cop = Z.cop ? Z.cop : PL_curcop;
    if (cop_in_tree(cop) && CopLINE(cop)) {
        *fid = cop_fid(aTHX_ cop);
        *line = (unsigned)CopLINE(cop);
        return;
    }
    for (size_t i = Z.n; i > 0; i--) {
        const sframe *f = &Z.st[i - 1];
        if (f->fid && f->line > 0 && !f->xs) {
            *fid = f->fid;
            *line = (unsigned)f->line;
            return;
        }
    }
    if (!CopLINE(cop) && !cop_in_tree(cop)) {
        /* PL_compiling at no line, with no call: before the program's
         * first statement or after its last (global destruction), where
         * the tracing profiler charges no line either.  Not line 1 of
         * the file last compiled, which may hold no code at all. */
        *fid = 0;
        *line = 0;
        return;
    }
    const char *file = OutCopFILE(cop);
    *fid = !file ? 0 : cop == &PL_compiling ? file_id(aTHX_ file, strlen(file), NYTP_FIDF_VIA_STMT)
                                            : cop_fid(aTHX_ cop);
    *line = CopLINE(cop) ? (unsigned)CopLINE(cop) : 1;
}

/* A sample where the program is; waited_ns: the time an op or xsub that
 * just ended waited (its weight), 0 for a sample of the timer (weighted
 * by the time since the last, less what waits were charged). */
static void take_sample(pTHX_ OPCODE ran, int64_t waited_ns)
{
    int saved_errno = errno;
    if (S.forked)
        reinit_if_forked(aTHX);
    if (!S.profiling || !S.w || OTHER_INTERP())
        goto out;
    timer_check();
    W.last = wait_now();
    /* END blocks run with perl's %SIG handlers gone (hold.c) */
    if (UNLIKELY(PL_phase >= PERL_PHASE_END) && !S.holding)
        hold_signals();
    int64_t now = clock_ticks();
    double w;
    if (waited_ns) {
        w = (double)(waited_ns / (1000000000 / TICKS_PER_SEC));
        Z.waited += (int64_t)w;
    } else {
#ifdef HAVE_TSC
        if (W.mode == WAIT_TSC)
            (void)wait_rate(now, W.last);
#endif
        /* a wait charged a tick where the clock moved a little less: the
         * rest comes off the next sample, so that the times add up */
        int64_t d = now - Z.last_t - Z.waited;
        Z.last_t = now;
        Z.waited = d < 0 ? -d : 0;
        w = d < 0 ? 0 : (double)d;
    }
    Z.samples++;
    if (OPT(O_SUBS))
        stack_sample(aTHX_ ran);
    Z.weight += w;
    if (Z.n)
        Z.st[Z.n - 1].excl += w;
    if (OPT(O_STMTS) && PL_curcop) {
        unsigned fid, line;
        sample_line(aTHX_ &fid, &line);
        if (fid) {
            line_add(aTHX_ fid, line, w);
            fid_mark(fid);
        }
    }
    if (now >= S.rotate_at && !Z.stopping) {
        rotate_now(aTHX_ now);
        Z.last_t = S.last_t; /* the time writing the segment is no sample's */
        Z.waited = 0;
    }
out:
    errno = saved_errno;
}

/* The interpreter's loop: perl's own, and a test of the flag after each
 * op (a load and a branch not taken). */
static int sample_runops(pTHX)
{
    OP *op = PL_op;
    while ((PL_op = op = op->op_ppaddr(aTHX))) {
        if (FLAG_UP()) {
            timer_taken();
            take_sample(aTHX_ OP_max, 0);
        }
    }
    PERL_ASYNC_CHECK();
    TAINT_NOT;
    return 0;
}

/* Where the flag is tested by default (NYTP_SAMPLE_AT=stmt): before
 * each statement, before a sub is called or left, and around slow ops:
 * the state changes nowhere else that a sample would see (a sample
 * taken later, within a statement, is still that statement's). */

/* Out of line and cold: the wrappers' common path then keeps few
 * registers to save. */
static __attribute__((noinline, cold)) void sample_here(pTHX_ OPCODE ran)
{
    if (OTHER_INTERP())
        return;
    timer_taken();
    take_sample(aTHX_ ran, 0);
}

/* A timed op or xsub ended d wait units after it began (or after the
 * last sample, if that came later: an xsub or sort that called back into
 * perl code, List::Util's first, a comparator, had that code's time
 * sampled already) and passed the chance of a short wait: its sample. */
static __attribute__((noinline)) void waited(pTHX_ OPCODE ran, int64_t d)
{
    if (OTHER_INTERP())
        return;
    int64_t ns;
    if (d == W.quantum) {
        ns = WAIT_QUANTUM_NS;
    } else {
        double r = W.ns_per_unit;
#ifdef HAVE_TSC
        if (W.mode == WAIT_TSC)
            r = wait_rate(clock_ticks(), __rdtsc());
#endif
        ns = (int64_t)((double)d * r);
        if (ns <= 0)
            return;
        if (ns < WAIT_QUANTUM_NS) { /* the rate was not known before */
            if ((int64_t)(((uint64_t)wait_rand() * WAIT_QUANTUM_NS) >> 32) >= ns)
                return;
            ns = WAIT_QUANTUM_NS;
        }
    }
    take_sample(aTHX_ ran, ns);
}

/* On a CPU-time clock, a segment whose end (on the wall clock:
 * segment.c) came while an op waited ends now, not at the next sample of
 * the CPU timer, which a waiting process may not see for minutes: one
 * sample more, weighed as the timer's. */
static __attribute__((noinline)) void waited_cpu_clock(pTHX_ OPCODE ran)
{
    rotate_wall_check();
    if (S.rotate_at == INT64_MIN)
        take_sample(aTHX_ ran, 0);
}

/* An op or xsub that began at t0 (wait_now) has ended.  Inline: for all
 * but a wait of a millisecond or more and one in some of the shorter
 * ones, a reading of the counter, a subtraction and a multiplication. */
static inline void waited_since(pTHX_ OPCODE ran, uint64_t t0)
{
    if (UNLIKELY(W.mode == WAIT_NONE)) {
        if (UNLIKELY(S.rotate_wall))
            waited_cpu_clock(aTHX_ ran);
        return;
    }
    uint64_t from = (int64_t)(t0 - W.last) > 0 ? t0 : W.last;
    int64_t d = (int64_t)(wait_now() - from);
    if (d <= 0)
        return;
    if (d < W.quantum) {
        /* a chance of d in quantum, without a division */
        if ((int64_t)(((uint64_t)wait_rand() * (uint64_t)W.quantum) >> 32) >= d)
            return; /* its time stays with the next sample of the timer */
        d = W.quantum;
    }
    waited(aTHX_ ran, d);
}

/* The CV an entersub is about to call, if it is an xsub: what it finds
 * on the stack in the common cases (a CV, a glob, a code reference). */
static inline int calls_xsub(pTHX)
{
    SV *sv = *PL_stack_sp;
    CV *cv = NULL;
    if (!sv)
        return 0;
    if (SvTYPE(sv) == SVt_PVCV)
        cv = (CV *)sv;
    else if (SvTYPE(sv) == SVt_PVGV)
        cv = GvCVu((GV *)sv);
    else if (SvROK(sv) && SvTYPE(SvRV(sv)) == SVt_PVCV)
        cv = (CV *)SvRV(sv);
    return cv && CvISXSUB(cv);
}

static pp_fn orig_entersub, orig_leavesub;

/* Perl's safe point (its signal hook, sigexit.c), come to because the
 * timer raised perl's flag too.  At the start of a statement (nextstate's
 * check, after it made the new statement current) the time was the
 * statement's before, which the timer kept; elsewhere (a loop's next
 * round, a condition, the end of an eval) the current statement's. */
static void sampler_safe_point(pTHX)
{
    if (!FLAG_UP() || OTHER_INTERP())
        return;
    timer_taken();
    const COP *before = timer_cop;
    if (before && PL_op == (OP *)PL_curcop && cop_in_tree(before))
        Z.cop = before;
    take_sample(aTHX_ OP_max, 0);
    Z.cop = NULL;
}

/* An xsub is not on perl's context stack: its time is its caller's.  It
 * has run when entersub returns the op after it (a sub of perl's returns
 * its first op). */
static __attribute__((noinline)) OP *entersub_xsub_timed(pTHX)
{
    uint64_t t0 = wait_now();
    OP *next = orig_entersub(aTHX);
    waited_since(aTHX_ OP_max, t0); /* the caller's, as the xsub's time is */
    return next;
}

static OP *pp_entersub_sampled(pTHX)
{
    if (FLAG_UP())
        sample_here(aTHX_ OP_max); /* still in the caller */
    if (!calls_xsub(aTHX))
        return orig_entersub(aTHX);
    return entersub_xsub_timed(aTHX);
}

static OP *pp_leavesub_sampled(pTHX)
{
    if (FLAG_UP())
        sample_here(aTHX_ OP_max); /* still in the sub */
    return orig_leavesub(aTHX);
}

static inline OP *pp_leave_sampled(pTHX_ OPCODE type)
{
    if (FLAG_UP())
        sample_here(aTHX_ OP_max); /* still in the sub */
    return S.orig[type](aTHX);
}
#define NYTP_LEAVE_SAMPLED_PP(X) \
    X(pp_leave_sampled, OP_DBSTATE) X(pp_leave_sampled, OP_LEAVESUBLV) \
    X(pp_leave_sampled, OP_RETURN) X(pp_leave_sampled, OP_LEAVEWRITE) X(pp_leave_sampled, OP_GOTO)
NYTP_LEAVE_SAMPLED_PP(static NYTP_PP_DEFINE)

/* The slow ops that only compute: no wait to time (a regex on a tied
 * value or a sort's comparator runs perl code, whose own ops are timed). */
static int op_may_wait(OPCODE type)
{
    switch (type) {
    case OP_MATCH: case OP_SUBST: case OP_SUBSTCONT: case OP_QR: case OP_REGCOMP:
    case OP_SORT: case OP_PACK: case OP_UNPACK: case OP_CRYPT:
        return 0;
    default:
        return 1;
    }
}

/* A slow op (I/O, regex, sort, ...): a sample due when it ends is its
 * own, shown as Pkg::CORE:name as the tracing profiler shows it.  (Its
 * type is taken before it runs: an op may free itself.) */
static inline __attribute__((always_inline)) OP *pp_slowop_sampled(pTHX_ OPCODE type)
{
    if (FLAG_UP() && Z.at_stmt)
        sample_here(aTHX_ OP_max); /* due before it began */
    uint64_t t0 = wait_now();
    OP *op = S.orig[type](aTHX);
    if (FLAG_UP())
        sample_here(aTHX_ type);
    else
        waited_since(aTHX_ type, t0);
    return op;
}

/* The same for an op that does not wait: not timed. */
static inline __attribute__((always_inline)) OP *pp_cpuop_sampled(pTHX_ OPCODE type)
{
    if (FLAG_UP() && Z.at_stmt)
        sample_here(aTHX_ OP_max);
    OP *op = S.orig[type](aTHX);
    if (FLAG_UP())
        sample_here(aTHX_ type);
    return op;
}

#define NYTP_SLOWOP(op) \
    static NYTP_PP_DEFINE(pp_slowop_sampled, op) static NYTP_PP_DEFINE(pp_cpuop_sampled, op)
#include "nytp_slowops.h"
#undef NYTP_SLOWOP

/* ---- the profiler's interface ------------------------------------------------- */

/* A string eval is compiled with perl keeping its lines when savesrc is
 * not given (evals are not on disk): those of an eval that defines subs,
 * as long as the subs live; not those of one that defines none, which a
 * long-running program may run without end (SAVESRC_NOSUBS would keep
 * them all).  A die while compiling leaves the flag on until the next
 * eval returns. */
static U32 perldb_base;

static OP *pp_entereval_saving(pTHX)
{
    PL_perldb |= PERLDBf_SAVESRC;
    OP *op = S.orig[OP_ENTEREVAL](aTHX);
    PL_perldb = perldb_base;
    return op;
}

static void sampler_stop(pTHX);
static void sampler_atfork_child(void);
static void sampler_forked(pTHX);
static void sampler_split(pTHX_ int64_t now);

void sampler_init(pTHX)
{
    if (Z.installed)
        return;
    Z.installed = 1;
    wait_clock_init();
    Z.period_ns = 1000000000L / (long)S.sample_hz;
    if (OPT(O_SLOWOPS)) {
#define NYTP_SLOWOP(op) \
    PL_ppaddr[op] = op_may_wait(op) ? NYTP_PP(pp_slowop_sampled, op) : NYTP_PP(pp_cpuop_sampled, op);
#include "nytp_slowops.h"
#undef NYTP_SLOWOP
    }
    const char *at = getenv("NYTP_SAMPLE_AT");
    Z.at_stmt = !(at && strcmp(at, "op") == 0);
    if (Z.at_stmt) {
        /* statements: perl's own check, in nextstate */
        timer_to_perl(&PL_sig_pending, &PL_curcop, &PL_signalhook, sigexit_hook(), &PL_psig_pend);
        S.on_safe_point = sampler_safe_point;
        orig_entersub = S.orig[OP_ENTERSUB];
        orig_leavesub = S.orig[OP_LEAVESUB];
        PL_ppaddr[OP_ENTERSUB] = pp_entersub_sampled;
        PL_ppaddr[OP_LEAVESUB] = pp_leavesub_sampled;
#define NYTP_INSTALL(wrapper, type) PL_ppaddr[type] = NYTP_PP(wrapper, type);
        NYTP_LEAVE_SAMPLED_PP(NYTP_INSTALL)
#undef NYTP_INSTALL
    } else {
        PL_runops = sample_runops;
    }
    if (!S.savesrc_given && !(PL_perldb & PERLDBf_SAVESRC)) {
        perldb_base = PL_perldb;
        PL_ppaddr[OP_ENTEREVAL] = pp_entereval_saving;
    }
    /* output.c and rotate.c are below: they reach the sampler this way */
    S.on_stop = sampler_stop;
    S.on_atfork = sampler_atfork_child;
    S.on_child = sampler_forked;
    S.split_calls = sampler_split;
}

void sampler_start(pTHX)
{
    PERL_UNUSED_CONTEXT;
    Z.last_t = clock_ticks();
    Z.waited = 0;
    atomic_store(&timer_due, 0);
    timer_start(Z.period_ns);
}

static void sampler_stop(pTHX)
{
    if (!timer_running())
        return;
    timer_stop();
    /* the time since the last sample, in the state it ends in */
    if (S.profiling && S.w && PL_curcop) {
        Z.stopping = 1;
        take_sample(aTHX_ OP_max, 0);
        Z.stopping = 0;
    }
}

static void sampler_split(pTHX_ int64_t now)
{
    PERL_UNUSED_VAR(now);
    sampler_flush(aTHX_ 1);
}

void sampler_flush(pTHX_ int keep_frames)
{
    if (!S.w)
        return;
    if (keep_frames) {
        /* a rotation: every call in progress returns in this file with
         * its time so far, and goes on in the next from zero */
        for (size_t i = Z.n; i > 0; i--)
            frame_end(aTHX_ &Z.st[i - 1], i);
        for (size_t i = 0; i < Z.n; i++) {
            Z.st[i].w0 = Z.weight;
            Z.st[i].excl = 0;
        }
    } else {
        pop_to(aTHX_ 0);
    }
    lines_write();
    char buf[64];
    snprintf(buf, sizeof buf, "%u", S.sample_hz);
    nytp_write_attribute(S.w, "sample_hz", buf);
    snprintf(buf, sizeof buf, "%" UVuf, (UV)Z.samples);
    nytp_write_attribute(S.w, "sample_count", buf);
    Z.samples = 0;
}

/* In a child, from pthread_atfork: no timer here; the flag makes
 * the next op take a sample, which sees the fork. */
static void sampler_atfork_child(void)
{
    timer_forked();
    if (Z.installed)
        timer_raise();
}

/* In a child, once its own file is open (or profiling stopped): the
 * parent's lines and samples stay the parent's, the calls in progress go
 * on here from now, with a timer of the child's own. */
static void sampler_forked(pTHX)
{
    if (Z.lines)
        memset(Z.lines, 0, Z.lines_cap * sizeof *Z.lines);
    Z.lines_used = 0;
    Z.samples = 0;
    for (size_t i = 0; i < Z.n; i++) {
        Z.st[i].w0 = Z.weight;
        Z.st[i].excl = 0;
    }
    atomic_store(&timer_due, 0);
    Z.last_t = clock_ticks();
    Z.waited = 0;
    if (S.profiling && S.w)
        sampler_start(aTHX);
}

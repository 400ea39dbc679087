/* nytp_prof.h — what the files of Devel::NYTP share: the profiler's one
 * state (S), its types, the clock read at every event, and the functions
 * one concern offers another.  Private to profiler/.
 *
 * The files, in layers: each calls only files below it (none calls up).
 *   state.c   S and its defaults, messages (note), array growth
 *   clock.c   the clock: time-stamp counter or clock_gettime
 *   hold.c    signals that would end the process, held while a profile
 *             is finished (and from the moment the process exits)
 *   timer.c   the sampling timer: a thread that only raises a flag
 *   files.c   file ids of files and string evals
 *   subs.c    subs and call arcs by address; calls waiting for their start
 *   segment.c what the file being written has seen (files with data, subs
 *             called) and when it ends (rotate=)
 *   output.c  the output file: open, close, disable, a fork's new file,
 *             and what is written at the end (source lines, sub line
 *             ranges, call arcs)
 *   frames.c  the calls in progress: the frame stack, what a call's end
 *             records, the calls perl has left (unwound by a die, last,
 *             exit) found and closed
 *   rotate.c  rotate=SECONDS: the file closed as a complete profile of
 *             its interval, the next one opened; calls in progress split
 *   sample.c  sample=HZ: the interpreter tests the timer's flag at
 *             statements, calls and returns (or after every op) and takes
 *             the sample: line, sub stack, and from consecutive stacks the
 *             calls.  It reaches into output.c and rotate.c, below it,
 *             through the hooks in S that it sets (on_stop, on_atfork,
 *             on_child, split_calls, on_safe_point).
 *   stmt.c    statements: the op wrappers of nextstate and leave
 *   control.c enable and finish a profile; the wrappers of fork, exit, exec
 *   sigexit.c sigexit=: signals that end the program with its profile
 *             finished, caught below perl (not in %SIG)
 *   calls.c   sub calls: the wrappers of entersub, goto, slow ops, the
 *             ops that leave a sub and those that enter an eval; a frame
 *             per call on the profiler's own stack, what a call's end
 *             records
 *   NYTP.c    options, start-up and the perl interface (DB::...), the
 *             module's boot
 * Everything but the boot function is hidden inside NYTP.so.
 */
#ifndef NYTP_PROF_H
#define NYTP_PROF_H

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>
#include <pthread.h>
#include <signal.h>

#include "nytp/writer.h"
#include "nytp/writer_inline.h"

#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

#ifndef NYTP_XS_VERSION
#define NYTP_XS_VERSION "0"
#endif


#define TICKS_PER_SEC 10000000L /* 100 ns ticks */


enum start_mode { START_NO, START_BEGIN, START_INIT, START_END };

/* Options with a numeric value, echoed into the profile in this order (the
 * order Devel::NYTProf writes them in). */
enum {
    O_USECPUTIME, O_SUBS, O_BLOCKS, O_LEAVE, O_EXPAND, O_TRACE, O_USE_DB_SUB,
    O_COMPRESS, O_CLOCK, O_STMTS, O_SLOWOPS, O_FINDCALLER, O_FORKDEPTH, O_PERLDB,
    O_NAMEEVALS, O_NAMEANONSUBS, O_CALLS, O_EVALS, O_COUNT
};

typedef struct {
    const char *name;
    IV value;
    IV dflt;
    int unsupported; /* a value other than the default only warns */
} num_option;

/* One file (or string eval) seen by the profiler. */
typedef struct {
    char *key;        /* the name as perl knows it */
    STRLEN key_len;
    char *abs;        /* absolute name written to the profile, or NULL */
    unsigned id, eval_fid, eval_line, flags;
} fid_info;

/* One call in progress, on the profiler's frame stack (S.frames; the
 * caller's frame is the one below).  It lasts while perl's context
 * stack si has a context at index cxix: for a perl sub, the sub's own
 * context; for an xsub or slow op, the innermost context when it was
 * called. */
typedef struct {
    int counted;                 /* 1 once its times are recorded */
    U32 depth;                   /* call depth, 1 for a call from main */
    PERL_SI *si;
    I32 cxix;
    int64_t t0;                  /* ticks when it began */
    int t0_pending;              /* a perl sub: t0 is the next clock reading */
    NV overhead0, subr0;
    unsigned caller_fid;
    int caller_line;
    struct sub_node *caller;     /* the calling sub */
    CV *called_cv;
    int called_depth;            /* CvDEPTH once inside: >1 means recursion */
    const char *called_is_xs;    /* NULL, "xsub" or "sop" (slow op) */
    struct sub_node *called;     /* NULL until known */
    int hide;                    /* time spent waiting (accept) is hidden */
    /* its call arc, if known when it began (a call site seen before) ... */
    unsigned arc_gen;            /* S.arcs_gen then, 0: not known */
    uint32_t arc;                /* its index in S.arcs */
    /* ... else where to remember it, for the next call from that site */
    const COP *site;             /* the calling statement, or NULL */
    unsigned site_gen;           /* S.file_gen then */
    const void *site_key;        /* what called was found by (site_slot) */
    const HEK *site_ph, *site_nh;
} call_frame;

/* The frame at index ix of the frame stack (-1: none).  A pointer to a
 * frame is good until the next frame is pushed (the stack may move). */
#define FRAME(ix) ((ix) != -1 ? &S.frames[ix] : (call_frame *)NULL)

/* A sub by name ("Pkg::name"), as calls and call arcs refer to it.  One
 * node per name, never freed: arcs and frames hold its address. */
typedef struct sub_node {
    char *full;                  /* "Pkg::name" ("(null)" for a missing part) */
    STRLEN full_len;
    STRLEN sub_off;              /* where the name part starts */
    char *pkg;                   /* NULL if the package was unknown */
    unsigned called_seen : 1;    /* has been called (since the arcs were cleared) */
    unsigned sample_depth;       /* sample.c: frames of it on the sampled stack */
    unsigned is_begin : 1;       /* Pkg::BEGIN: to be named BEGIN@LINE */
    unsigned is_own : 1;         /* DB::_CHECK, _INIT, _END: ours */
    unsigned is_posix_exit : 1;  /* POSIX::_exit */
    size_t last_arc;             /* its last call's arc number + 1 (see arc_for) */
} sub_node;

/* The statistics of one call arc: called sub, caller sub (NULL: the
 * marker of an xsub), and the call site. */
typedef struct {
    sub_node *called, *caller;
    unsigned fid;
    int line;
    UV count;
    NV incl, excl, reci;         /* incl/excl in ticks, reci in seconds */
    UV rec_depth;
} arc_stats;

/* The node of a glob's (package, name), by the addresses of the shared
 * strings of the two names (held, so an address is never another name's),
 * or of a slow op (k2 is the op's number + 1). */
typedef struct {
    const void *k1, *k2;
    sub_node *node;
    unsigned held;               /* 1: k1 is a held HEK, 2: k2 is */
} node_slot;

typedef OP *(*pp_fn)(pTHX);

/* A statement's copy of its file name (by address) and the file's id;
 * two slots a set (file_cache_get). */
#define FILE_CACHE_SIZE 4096
typedef struct {
    const char *ptr;
    const char *name;            /* perl's name of fid (ours, never freed) */
    unsigned fid;
    unsigned gen;                /* valid while S.file_gen is this */
} file_slot;


struct profiler {
    num_option opt[O_COUNT];
    char file[PATH_MAX];         /* file= */
    char out_name[PATH_MAX + 64]; /* the file being written (with .PID...) */
    char seg_base[PATH_MAX + 64]; /* rotate=: the first segment's name */
    unsigned seg;                /* rotate=: this segment's number (0: the first) */
    char run_id[40];             /* this run (the process that started the profiler, and
                                    the children it forks): written in segments */
    int64_t rotate_ticks;        /* rotate=SECONDS in ticks; 0: never */
    int64_t rotate_at;           /* when the segment ends (INT64_MAX: never) */
    bool rotate_wall;            /* rotate= with a CPU-time clock: segments end on
                                    the wall clock (rotate_wall_at), see segment.c */
    int64_t rotate_wall_at;      /* then when the segment ends, CLOCK_MONOTONIC ticks */
    unsigned char *fid_used;     /* rotate=: files with data in this segment */
    size_t fid_used_cap;
    unsigned sample_hz;          /* sample=HZ; 0: every statement and call */
    /* set by sample.c, for the layers below it (NULL when tracing) */
    void (*on_stop)(pTHX);       /* profiling stops: the last sample */
    void (*on_atfork)(void);     /* in a child, from pthread_atfork */
    void (*on_child)(pTHX);      /* a child has its own file (or none) */
    void (*split_calls)(pTHX_ int64_t now); /* rotation: calls in progress */
    void (*on_safe_point)(pTHX); /* perl's signal hook ran: a sample due */
    /* set by NYTP.c when tracing with rotate=, for frames.c below it */
    void (*rotate_at_call)(pTHX_ int64_t now); /* a call ended after rotate_at */
    int start;
    int addpid, addtimestamp, savesrc, optimize, libcexit;
    int no_threads;              /* threads=0: no writer thread */
    int savesrc_given;           /* savesrc= was given (sampling's default is 0) */
    int profiling;
    /* what the wrappers' fast paths test first, kept by fast_update
     * wherever one of its parts changes: */
    int stmt_fast;               /* profiling, writing, not forked, stmts=1, blocks=0
                                  * (| 2: not rotating, see fast_update) */
    int call_fast;               /* profiling, subs=1, and not forked with stmts=0 */
    pid_t pid;
    volatile sig_atomic_t forked; /* set in a child by pthread_atfork */
    int holding;                 /* hold.c: ending signals are held */
    FILE *log;                   /* log=FILE, else standard error */

    nytp_writer *w;

    clockid_t clock;
    int64_t last_t;              /* ticks when the last statement began */
    uint64_t clock_reads;        /* now_ticks calls in this process (trace=1
                                  * says at the end: the bench's clock floor) */
    unsigned npending;           /* frames waiting for their t0 */
    int fresh;                   /* fresh_t was read by a call's end ... */
    int64_t fresh_t;             /* ... during the op just run */
    NV overhead_ticks;           /* time hidden (accept), not the program's */
    NV subr_ticks;               /* exclusive time of completed calls */

    unsigned last_fid, last_line;
    unsigned last_block_line, last_sub_line; /* blocks=1 */
    const char *last_fileptr;
    const char *last_filename;   /* perl's name of last_fid */
    file_slot file_cache[FILE_CACHE_SIZE]; /* a statement's file name -> id */
    int file_cache_used;
    unsigned file_gen;           /* a statement freed: every slot is stale */
    Perl_ophook_t prev_opfreehook;

    HV *fid_hv;                  /* name -> index into fids */
    fid_info *fids;              /* 1-based, in creation order; aliases too */
    unsigned nentries;
    size_t fid_cap;
    unsigned nfids;              /* ids given out */

    call_frame *frames;          /* the calls in progress, outermost first */
    size_t frames_cap;
    SSize_t frame_ix;            /* the innermost one's index, -1: none */
    int end_closed;              /* the calls open when END began are closed */
    pp_fn sub_leave_pp;          /* the wrappers of leavesub and leavesublv, */
    pp_fn sub_leavelv_pp;        /* if any (frames.c) */
    HV *nodes_hv;                /* "Pkg::name" -> sub_node (an IV) */
    HV *callers_hv;              /* filled when written, see fill_callers_hv */
    node_slot *node_cache;       /* (pkg HEK, name HEK) -> sub_node */
    size_t node_cache_cap, node_cache_used;
    sub_node *node_runtime, *node_null, *node_unknown, *node_nulls;
    arc_stats *arcs;             /* in creation order */
    unsigned arcs_gen;           /* changes when the arcs are cleared (never 0) */
    size_t narcs, arcs_cap;
    uint32_t *arc_index;         /* open addressing: arc number + 1, or 0 */
    size_t arc_index_cap;
    HV *pkg_files_hv;            /* packages whose subs were called -> file */
    int main_runtime_used;
    struct {                     /* the last call found made from the main */
        const PERL_SI *si;       /* program by a walk of the context stack */
        const COP *cop;          /* (calls.c, caller_node): its top */
        I32 cxix;                /* context's index, statement and type */
        U8 type;
        unsigned gen;            /* S.file_gen then */
    } main_caller;
    unsigned dup_begin_seq;

    SV *cv_init, *cv_end, *cv_check, *cv_finish, *cv_enable;
    struct own_sub { GV *gv; CV *cv; } own[16]; /* DB::name -> our CV */
    unsigned nown;
    pp_fn orig[OP_max];
    int initialised;
    int cputime_noted;           /* usecputime=1 said once */
    void *interp;                /* the profiled interpreter */
};
extern struct profiler S;

#define OPT(i) (S.opt[i].value)

/* PL_ppaddr is shared by every interpreter of the process, but only the
 * one that loaded the profiler is profiled (threads are not supported):
 * another interpreter runs the original ops. */
#ifdef MULTIPLICITY
#define OTHER_INTERP() (S.interp && aTHX != S.interp)
#else
#define OTHER_INTERP() 0
#endif

/* The time-stamp counter, where the CPU says it runs at a constant rate
 * in every state (constant_tsc and nonstop_tsc) and no clock=N was asked
 * for: CLOCK_MONOTONIC's rate, measured at start (2 ms) and again from the
 * whole run so far once a second (each second continuing where the last
 * ended, so the ticks never jump), for a third less than clock_gettime on
 * this project's VM (kvm-clock). */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

struct tsc_clock {
    int on;
    uint64_t tsc0;               /* at calibration */
    int64_t mono0;               /* CLOCK_MONOTONIC then, ns */
    uint64_t tsc_a;              /* the current second's start */
    int64_t ticks_a;             /* its ticks */
    uint64_t mult;               /* ticks per cycle << 32 */
    uint64_t span;               /* cycles in about a second */
    int64_t last;                /* the last reading: never less */
    double mhz;
};
extern struct tsc_clock T;

#ifdef HAVE_TSC
int64_t tsc_reanchor(uint64_t c);
int cpu_has_stable_tsc(void);
#endif

/* clock_ticks without the TSC: clock_gettime of the profile's clock.  Out
 * of line, so that the wrappers that inline clock_ticks have no local
 * whose address is taken (the struct timespec), which would give each of
 * them a stack-protector check (-fstack-protector-strong, from perl's
 * lddlflags) on every statement and call. */
int64_t clock_ticks_syscall(void);

/* The clock in ticks (a tick truncated from the nanoseconds, as before). */
static inline int64_t clock_ticks(void)
{
#ifdef HAVE_TSC
    if (T.on) {
        uint64_t c = __rdtsc();
        uint64_t d = c - T.tsc_a;
        int64_t ticks = d < T.span ? T.ticks_a + (int64_t)((d * T.mult) >> 32) : tsc_reanchor(c);
        if (ticks < T.last)
            ticks = T.last; /* never backwards, whichever CPU it ran on */
        T.last = ticks;
        return ticks;
    }
#endif
    return clock_ticks_syscall();
}

void fill_pending(pTHX_ int64_t now);

/* One reading of the clock per event: a statement, a call of an xsub,
 * the end of a call.  A call of a perl sub takes no reading of its own:
 * its start is the next reading (normally its first statement's), so the
 * statement that calls it and its first statement share one. */
static inline int64_t now_ticks(pTHX)
{
    int64_t now = clock_ticks();
    S.clock_reads++;
    if (S.npending) {
        call_frame *top = S.frame_ix >= 0 ? &S.frames[S.frame_ix] : NULL;
        if (S.npending == 1 && top && top->t0_pending) { /* the usual: the call just made */
            top->t0 = now;
            top->t0_pending = 0;
            S.npending = 0;
        } else {
            fill_pending(aTHX_ now);
        }
    }
    return now;
}

/* ---- messages ------------------------------------------------------------ */

/* A message of the profiler (to log=FILE if given), written at once and
 * without perl's help, so that it works in any state of the interpreter. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Make room for need elements of elem bytes in *v, which has room for
 * *cap: doubled from first while too small.  grow_array returns -1 when
 * out of memory (*v and *cap unchanged), grow_or_croak croaks. */
int grow_array(void **v, size_t *cap, size_t need, size_t first, size_t elem);
void grow_or_croak(pTHX_ void **v, size_t *cap, size_t need, size_t first, size_t elem);

/* S.stmt_fast and S.call_fast from what they stand for: to be called
 * whenever S.profiling, S.w, S.forked or an option changes. */
void fast_update(void);

#define TRACE(level, ...) \
    do { \
        if (OPT(O_TRACE) >= (level)) \
            note(__VA_ARGS__); \
    } while (0)

static inline nytp_str str_n(const char *p, size_t len, bool utf8)
{
    nytp_str s;
    s.ptr = p;
    s.len = (uint32_t)len;
    s.utf8 = utf8;
    return s;
}

/* clock.c */
NV wall_time(void);
void init_clock(void);

/* sigexit.c */
void sigexit_option(pTHX_ const char *value);
void sigexit_install(pTHX);
despatch_signals_proc_t sigexit_hook(void); /* the PL_signalhook it installs */

/* hold.c */
void hold_signals(void);
void release_signals(pTHX);
void hold_forked(void);

/* Whether cop is a statement of an op tree (a nextstate or dbstate, or
 * one the optimiser has nulled), whose file name lives as long as it does
 * and is freed only through cop_freed.  PL_compiling is not, nor the copy
 * of it that the compiler makes on the C stack to fold constants: their
 * file name changes (a #line, the next file compiled) and the old one is
 * freed with no op freed, so that a new name can take its address.  The
 * caches by address (file_cache, S.last_fileptr, site_cache) take in
 * statements only; a name they hold is then a live statement's, until
 * cop_freed forgets them all, so that the address of any other live name
 * matches none of them, and is looked up without asking. */
static inline int cop_in_tree(const COP *cop)
{
    unsigned type = cop->op_type ? (unsigned)cop->op_type : (unsigned)cop->op_targ;
    return type == OP_NEXTSTATE || type == OP_DBSTATE;
}

/* files.c */
const char *file_key(unsigned fid);
int name_is_eval(const char *name, STRLEN len);
unsigned file_id(pTHX_ const char *name, STRLEN len, unsigned create_via);
/* The file cache (S.file_cache): a file name's id by the name's address,
 * valid while slot->gen is S.file_gen.  A set of two slots for an
 * address, the one put last first: two statements of a loop whose names'
 * addresses differ only above the bits taken (perl's allocations are
 * often a multiple of 64 KiB apart) each keep their slot, where one slot
 * a set had them evict each other at every turn (JSON::PP under
 * callgrind: 56,075 misses in 675,260 statements).  file_cache_get: the
 * slot holding an address, or NULL; file_cache_put: remember fid (named
 * name) for it; cop_file_id: the id of a statement's file through the
 * cache, else file_id (creating it via create_via), remembered; by name
 * alone for a cop not in an op tree (cop_in_tree); 0 if none. */
static inline file_slot *file_set_of(const char *file)
{
    return &S.file_cache[((uintptr_t)file >> 4) & (FILE_CACHE_SIZE - 2)];
}
static inline const file_slot *file_cache_get(const char *file)
{
    const file_slot *set = file_set_of(file);
    if (LIKELY(set[0].ptr == file && set[0].gen == S.file_gen))
        return &set[0];
    if (set[1].ptr == file && set[1].gen == S.file_gen)
        return &set[1];
    return NULL;
}
void file_cache_put(const char *file, unsigned fid, const char *name);
unsigned cop_file_id(pTHX_ const COP *cop, unsigned create_via);
void emit_fid(const fid_info *f);
void emit_all_fids(void);

/* subs.c */
sub_node *node_named(pTHX_ const char *pkg, STRLEN pkg_len, const char *sub, STRLEN sub_len);
/* The node of a glob: a direct-mapped memo (gv_cache, see subs.c) in
 * front of node_for_gv_slow. */
#define GV_CACHE_SIZE 2048
typedef struct {
    const GV *gv;
    const HEK *ph, *nh;
    sub_node *node;
} gv_slot;
extern gv_slot gv_cache[GV_CACHE_SIZE];
sub_node *node_for_gv_slow(pTHX_ GV *gv, HEK *ph, HEK *nh, gv_slot *slot);
static inline sub_node *node_for_gv(pTHX_ GV *gv)
{
    HV *stash = GvSTASH(gv);
    HEK *ph = stash ? HvNAME_HEK(stash) : NULL;
    HEK *nh = GvNAME_HEK(gv);
    gv_slot *slot = &gv_cache[((uintptr_t)gv >> 4) & (GV_CACHE_SIZE - 1)];
    if (LIKELY(slot->gv == gv && slot->nh == nh && slot->ph == ph))
        return slot->node;
    return node_for_gv_slow(aTHX_ gv, ph, nh, slot);
}

/* The node of a slow op of type run in package stash: a direct-mapped
 * memo (slowop_cache, see subs.c) by (package name, op type) in front of
 * node_for_slowop_slow.  slowops=1 names them CORE::op, without the
 * package, so the package is left out of the key. */
#define SLOWOP_CACHE_SIZE 1024
typedef struct {
    const HEK *ph;
    uintptr_t k2; /* type + 1, plus OP_max with slowops=1 */
    sub_node *node;
} slowop_slot;
extern slowop_slot slowop_cache[SLOWOP_CACHE_SIZE];
sub_node *node_for_slowop_slow(pTHX_ const HEK *ph, uintptr_t k2, slowop_slot *slot,
                               OPCODE type);
/* The key a slow op's node is known by: the op (type + 1, plus OP_max
 * with slowops=1), and in *php the name of the package it runs in (NULL
 * with slowops=1).  As a pointer it is below any address of a glob, so
 * it keys the site cache too. */
static inline const void *slowop_key(HV *stash, OPCODE type, const HEK **php)
{
    int core_only = OPT(O_SLOWOPS) == 1;
    *php = stash && !core_only ? HvNAME_HEK(stash) : NULL;
    return (const void *)((uintptr_t)type + 1 + (core_only ? OP_max : 0));
}
static inline sub_node *node_for_slowop(pTHX_ HV *stash, OPCODE type)
{
    const HEK *ph;
    uintptr_t k2 = (uintptr_t)slowop_key(stash, type, &ph);
    slowop_slot *slot =
        &slowop_cache[(((uintptr_t)ph >> 4) * 31 + k2) & (SLOWOP_CACHE_SIZE - 1)];
    if (LIKELY(slot->node && slot->ph == ph && slot->k2 == k2))
        return slot->node;
    return node_for_slowop_slow(aTHX_ ph, k2, slot, type);
}
/* "Pkg::BEGIN" becomes "Pkg::BEGIN@LINE" (its %DB::sub entry too). */
sub_node *name_begin_block(pTHX_ sub_node *n);
arc_stats *arc_for(pTHX_ sub_node *called, sub_node *caller, unsigned fid, int line);
void arcs_clear(pTHX);
void node_cache_clear(pTHX);

/* output.c */
int open_output(pTHX_ int croak_on_error);
void close_output(pTHX);
int disable_profile(pTHX);
void note_fork(void);
int reinit_if_forked(pTHX);

/* The op wrappers.  Each is installed in PL_ppaddr[type] as a function of
 * its own per op type, NYTP_PP(wrapper, type), which hands the wrapper
 * that type: a wrapper runs S.orig[] of the type it was installed for,
 * never of PL_op's.  Other code calls PL_ppaddr[type] directly while
 * PL_op is another op: Future::AsyncAwait's await, a custom op, ends in
 * PL_ppaddr[OP_RETURN](), and S.orig[OP_CUSTOM] is perl's "unimplemented
 * op" panic. */
/* Whether a sub's root op (its leavesub or leavesublv) runs through our
 * wrapper: a sub compiled before the wrappers were installed (XSLoader,
 * strict, loaded by the profiler itself) keeps perl's. */
static inline int ours_sub_leave(const OP *root)
{
    return root->op_ppaddr == S.sub_leave_pp || root->op_ppaddr == S.sub_leavelv_pp;
}

#define NYTP_PP(wrapper, type) wrapper##__##type
#define NYTP_PP_DECLARE(wrapper, type) OP *NYTP_PP(wrapper, type)(pTHX);
#define NYTP_PP_DEFINE(wrapper, type) \
    OP *NYTP_PP(wrapper, type)(pTHX) \
    { \
        return wrapper(aTHX_ type); \
    }

/* stmt.c */
#define NYTP_STMT_PP(X) X(pp_stmt, OP_NEXTSTATE) X(pp_stmt, OP_DBSTATE)
#define NYTP_LEAVE_PP(X) \
    X(pp_leave, OP_LEAVESUB) X(pp_leave, OP_LEAVESUBLV) X(pp_leave, OP_LEAVE) \
    X(pp_leave, OP_LEAVELOOP) X(pp_leave, OP_LEAVEWRITE) X(pp_leave, OP_LEAVEEVAL) \
    X(pp_leave, OP_LEAVETRY) X(pp_leave, OP_RETURN) X(pp_leave, OP_UNSTACK)
NYTP_STMT_PP(NYTP_PP_DECLARE)
NYTP_LEAVE_PP(NYTP_PP_DECLARE)
void stmt_event(pTHX_ COP *cop, OP *op, int64_t now);
void leave_event(pTHX_ OP *op, int64_t now);

/* control.c */
bool absolute_name(char *dst, size_t size, const char *name);
int enable_profile(pTHX_ const char *file);
void finish_profile(pTHX);
void finish_profile_ex(pTHX_ int own_call_open); /* from DB::finish_profile */
#define NYTP_CONTROL_PP(X) X(pp_exit, OP_EXIT) X(pp_exit, OP_EXEC) X(pp_fork, OP_FORK)
NYTP_CONTROL_PP(NYTP_PP_DECLARE)

/* calls.c */
#define NYTP_CALL_PP(X) X(pp_call, OP_ENTERSUB) X(pp_call, OP_GOTO)
#define NYTP_SUB_LEFT_PP(X) \
    X(pp_sub_left, OP_LEAVESUB) X(pp_sub_left, OP_LEAVESUBLV) X(pp_sub_left, OP_RETURN) \
    X(pp_sub_left, OP_LAST) X(pp_sub_left, OP_NEXT) X(pp_sub_left, OP_REDO)
#if PERL_VERSION_GE(5, 34, 0)
#define NYTP_EVAL_PP(X) \
    X(pp_eval_entered, OP_ENTERTRY) X(pp_eval_entered, OP_ENTEREVAL) \
    X(pp_eval_entered, OP_ENTERTRYCATCH)
#else
#define NYTP_EVAL_PP(X) X(pp_eval_entered, OP_ENTERTRY) X(pp_eval_entered, OP_ENTEREVAL)
#endif
NYTP_CALL_PP(NYTP_PP_DECLARE)
NYTP_SUB_LEFT_PP(NYTP_PP_DECLARE)
NYTP_EVAL_PP(NYTP_PP_DECLARE)
#define NYTP_SLOWOP(op) NYTP_PP_DECLARE(pp_slowop, op)
#include "nytp_slowops.h"
#undef NYTP_SLOWOP

/* frames.c */
void frames_grow(pTHX);
/* A call site: (calling statement, what is called, caller) -> the sub
 * called, the call arc and the calling file and line, while the statement
 * and the arcs are those it was made with.  What is called is the key:
 * for a perl sub, its glob, with the shared strings of its package and
 * own name that the node was found by (ph, nh: the slot answers only
 * while the glob still has those very names, as gv_cache; node_cache
 * holds the strings, and clearing it clears this); for a slow op, its
 * slowop_key, with ph its package's name as there (nh NULL).  One lookup gives a call from a known site all it
 * needs, without finding the sub's node first. */
#define SITE_CACHE_SIZE 2048
typedef struct {
    const COP *cop;
    const void *key;
    const HEK *ph, *nh;
    sub_node *called;
    const sub_node *caller;
    uint32_t arc;
    unsigned fid;
    int line;
    unsigned file_gen, arcs_gen;
} site_slot;
extern site_slot site_cache[SITE_CACHE_SIZE];
static inline site_slot *site_slot_of(const COP *cop, const void *key)
{
    /* k ^ k >> 3: a glob's address loses its zero low bits, and the
     * small keys of slow ops (regcomp and match, of one statement) stay
     * apart */
    uintptr_t k = (uintptr_t)key;
    uintptr_t h = ((uintptr_t)cop >> 4) ^ (k ^ (k >> 3)) * 31;
    return &site_cache[(h ^ (h >> 11)) & (SITE_CACHE_SIZE - 1)];
}
static inline int site_hit(const site_slot *slot, const COP *cop, const void *key,
                           const HEK *ph, const HEK *nh, const sub_node *caller)
{
    return slot->cop == cop && slot->key == key && slot->nh == nh && slot->ph == ph
           && slot->caller == caller && slot->file_gen == S.file_gen
           && slot->arcs_gen == S.arcs_gen;
}
void frame_done(pTHX_ call_frame *f);
void frames_close_dead(pTHX);
/* Close the frame at index ix and all above it, whatever perl's contexts
 * say (a call that has returned, and any left above it unseen). */
void frames_close_from(pTHX_ SSize_t ix);
void frames_close_all(pTHX);
void frames_eval_entered(pTHX);
void frames_end_phase(pTHX);
void frame_end_with_scope(pTHX_ SSize_t ix);

/* A new frame on top of the stack, in the innermost context; its other
 * fields are the caller's to set. */
static inline call_frame *frame_push(pTHX)
{
    SSize_t ix = S.frame_ix + 1;
    if (UNLIKELY((size_t)ix >= S.frames_cap))
        frames_grow(aTHX);
    S.frame_ix = ix;
    call_frame *f = &S.frames[ix];
    f->si = PL_curstackinfo;
    f->cxix = cxstack_ix;
    return f;
}

/* Perl has left the context of the innermost call, by a return (the
 * wrappers of the ops that leave a sub call this after them) or without
 * one the wrappers saw (last out of a sub, goto out of one, a die caught
 * by call_sv): close it, and any others so left.  Cheap when nothing
 * was: the test of one frame. */
static inline void frames_check(pTHX)
{
    while (S.frame_ix >= 0) {
        call_frame *f = &S.frames[S.frame_ix];
        if (UNLIKELY(f->si != PL_curstackinfo)) {
            frames_close_dead(aTHX); /* a sort block, a handler: the stacks below */
            return;
        }
        if (LIKELY(f->cxix <= cxstack_ix))
            return;
        frame_done(aTHX_ f);
    }
}

/* frames_check before a call's frame is pushed; and the first call of
 * the END phase: every call still open from before then has ended (perl
 * leaves them all, by exit or die, before END blocks run), though
 * perl's contexts now reuse their places. */
static inline void frames_check_call(pTHX)
{
    if (UNLIKELY(PL_phase >= PERL_PHASE_END) && !S.end_closed)
        frames_end_phase(aTHX);
    frames_check(aTHX);
}


/* timer.c */
#include <stdatomic.h>
extern atomic_int timer_due;     /* raised by the timer, lowered by the sampler */
int timer_start(long period_ns);
void timer_stop(void);
int timer_running(void);
int timer_check(void);
void timer_taken(void);
void timer_forked(void);
void timer_to_perl(int *pending, COP **curcop, despatch_signals_proc_t *hook,
                   despatch_signals_proc_t ours, int **psig_pend);
void timer_raise(void);
extern const COP *volatile timer_cop; /* the statement running when the flag was raised */

/* sample.c */
void sampler_init(pTHX);
void sampler_start(pTHX);
void sampler_flush(pTHX_ int keep_frames);

/* segment.c */
void fid_mark_grow(unsigned fid);
void node_first_call(pTHX_ sub_node *n, int xs);
void arc_add(arc_stats *a, int depth, NV incl, NV excl);
void rotate_schedule(int64_t now);
void rotate_wall_check(void);

/* rotate.c */
void rotate_now(pTHX_ int64_t now);
void rotate_in_call(pTHX_ int64_t now);

/* rotate=: file fid has data in this segment (its source is written). */
static inline void fid_mark(unsigned fid)
{
    if (!S.rotate_ticks || !fid)
        return;
    if (fid < S.fid_used_cap)
        S.fid_used[fid] = 1;
    else
        fid_mark_grow(fid);
}

#endif

/* NYTP.c — Devel::NYTP, the statement and subroutine profiler that runs
 * inside perl (perl -d:NYTP script.pl).
 *
 * How it works: at start-up the profiler replaces entries of PL_ppaddr, the
 * table of functions perl calls to run each op.  A wrapper runs the
 * original function and takes its measurement around it:
 *
 *   nextstate, dbstate         a statement begins: the time since the
 *                              previous one began is that statement's
 *   leavesub, leave, return,   control returns into the middle of an outer
 *   unstack, ...               statement: its time so far is written, then
 *                              a DISCOUNT so the rest is not counted twice
 *   entersub, goto, slow ops   a call: a frame on perl's save stack, closed
 *                              by a destructor when the sub's scope ends
 *                              (also when it is left by die, last, next)
 *   fork, exit, exec           a new process, or the last chance to write
 *
 * Everything written goes through libformat's writer (nytp/writer.h); the
 * profiler has no encoder of its own.  The measurement rules are
 * Devel::NYTProf's (its documentation and its files are the reference),
 * implemented here independently.  All state lives in one struct (S, in
 * nytp_prof.h), because perl calls the op wrappers without a context
 * argument (its defaults are in state.c).  This file is the top layer:
 * the options, start-up and the perl interface; nytp_prof.h lists the
 * other files, one concern each, in layers that call only downwards.
 */
#include "nytp_prof.h"

#include <sys/random.h>

/* PL_ppaddr[type] = the wrapper's function for type (nytp_prof.h) */
#define NYTP_INSTALL(wrapper, type) PL_ppaddr[type] = NYTP_PP(wrapper, type);

/* ---- options and start-up ------------------------------------------------------ */

/* libcexit=1: a process that ends through libc's exit() without running
 * perl's END blocks (an embedding application, an xsub calling exit)
 * still gets a complete profile.  Only if the profile is still open:
 * after a normal end the interpreter may already be gone. */
static void finish_at_libc_exit(void)
{
    if (!S.w)
        return;
    dTHX;
    finish_profile(aTHX);
}

static void set_option(pTHX_ const char *name, const char *value)
{
    if (!name || !*name)
        croak("Devel::NYTP: empty option name");
    if (!value || !*value)
        croak("Devel::NYTP: option '%s' has no value", name);
    if (strcmp(name, "file") == 0) {
        if (strlen(value) >= sizeof S.file - 64)
            croak("Devel::NYTP: file name too long: '%s'", value);
        snprintf(S.file, sizeof S.file, "%s", value);
    } else if (strcmp(name, "start") == 0) {
        if (strcmp(value, "begin") == 0)
            S.start = START_BEGIN;
        else if (strcmp(value, "init") == 0)
            S.start = START_INIT;
        else if (strcmp(value, "end") == 0)
            S.start = START_END;
        else if (strcmp(value, "no") == 0)
            S.start = START_NO;
        else
            croak("Devel::NYTP: option 'start' has invalid value '%s'", value);
    } else if (strcmp(name, "sample") == 0) {
        char *end;
        long hz = strtol(value, &end, 10);
        if (*end || hz < 0 || hz > 10000)
            croak("Devel::NYTP: option 'sample' wants a rate in Hz from 1 to 10000 (0: off), "
                  "not '%s'", value);
        if (S.initialised && (unsigned)hz != S.sample_hz)
            croak("Devel::NYTP: option 'sample' cannot change once profiling has started");
        S.sample_hz = (unsigned)hz;
    } else if (strcmp(name, "rotate") == 0) {
        char *end;
        double secs = strtod(value, &end);
        if (*end || !(secs >= 0) || secs > 1e7 || (secs > 0 && secs < 0.01))
            croak("Devel::NYTP: option 'rotate' wants seconds (0.01 or more; 0: off), not '%s'",
                  value);
        S.rotate_ticks = (int64_t)(secs * TICKS_PER_SEC);
    } else if (strcmp(name, "sigexit") == 0) {
        sigexit_option(aTHX_ value);
    } else if (strcmp(name, "threads") == 0) {
        S.no_threads = atoi(value) == 0;
    } else if (strcmp(name, "addpid") == 0) {
        S.addpid = atoi(value) != 0;
    } else if (strcmp(name, "addtimestamp") == 0) {
        S.addtimestamp = atoi(value) != 0;
    } else if (strcmp(name, "savesrc") == 0) {
        S.savesrc = atoi(value) != 0;
        S.savesrc_given = 1;
    } else if (strcmp(name, "optimize") == 0 || strcmp(name, "optimise") == 0) {
        S.optimize = atoi(value) != 0;
    } else if (strcmp(name, "endatexit") == 0) {
        /* run END blocks (and so finish the profile) even when an
         * embedding application's perl_destruct would not */
        if (atoi(value))
            PL_exit_flags |= PERL_EXIT_DESTRUCT_END;
    } else if (strcmp(name, "libcexit") == 0) {
        if (atoi(value) && !S.libcexit) {
            S.libcexit = 1;
            atexit(finish_at_libc_exit);
        }
    } else if (strcmp(name, "log") == 0) {
        FILE *f = fopen(value, "ae");
        if (!f) {
            note("Devel::NYTP: cannot open log file '%s': %s\n", value, strerror(errno));
            return;
        }
        if (S.log)
            fclose(S.log);
        S.log = f;
    } else {
        int i;
        for (i = 0; i < O_COUNT; i++)
            if (strcmp(name, S.opt[i].name) == 0)
                break;
        if (i == O_COUNT)
            croak("Devel::NYTP: unknown option '%s'", name);
        IV v = (IV)strtol(value, NULL, 0);
        if (S.opt[i].unsupported && v != S.opt[i].dflt) {
            note("Devel::NYTP: option '%s' is not supported yet; ignored\n", name);
            return;
        }
        S.opt[i].value = v;
        fast_update();
    }
    TRACE(1, "# %s=%s\n", name, value);
}

/* perl frees an op: if it is a statement, its copy of the file name goes
 * with it and the address may come back holding another name, so the
 * file cache (and the last file's address) are forgotten. */
static void cop_freed(pTHX_ OP *o)
{
    int type = o->op_type ? (int)o->op_type : (int)o->op_targ;
    if ((const COP *)o == timer_cop)
        timer_cop = NULL;
    if ((type == OP_NEXTSTATE || type == OP_DBSTATE) && S.file_cache_used) {
        if (++S.file_gen == 0) { /* wrapped: a slot of long ago could match */
            memset(S.file_cache, 0, sizeof S.file_cache);
            S.main_caller.si = NULL;
            S.file_gen = 1;
        }
        S.file_cache_used = 0;
        S.last_fileptr = NULL;
    }
    if (S.prev_opfreehook)
        S.prev_opfreehook(aTHX_ o);
}

static SV *cv_named(pTHX_ const char *name)
{
    CV *cv = get_cv(name, 0);
    return (SV *)cv;
}

/* A run's mark, for the segments of rotate=SECONDS, by which the reports
 * tell the segments of one run from another's left under the same names:
 * random, else the pid and the time to the nanosecond.  Children made by
 * fork keep it (they are of the same run); a program started by exec gets
 * its own. */
static void new_run_id(void)
{
    uint64_t v[2] = {0, 0};
    if (getrandom(v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v[0] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        v[1] = (uint64_t)getpid();
    }
    snprintf(S.run_id, sizeof S.run_id, "%016" PRIx64 "%016" PRIx64, v[0], v[1]);
}

static int init_profiler(pTHX)
{
    if (S.initialised)
        return 1;
    S.pid = getpid();
    new_run_id();
#ifdef MULTIPLICITY
    S.interp = aTHX;
#endif
    {
        char full[sizeof S.file];
        if (absolute_name(full, sizeof full - 64, S.file))
            snprintf(S.file, sizeof S.file, "%s", full);
    }
    pthread_atfork(NULL, NULL, note_fork);
    S.prev_opfreehook = PL_opfreehook;
    PL_opfreehook = cop_freed;
    S.fid_hv = newHV();
    S.nodes_hv = newHV();
    S.callers_hv = newHV();
    S.node_runtime = node_named(aTHX_ "main", 4, "RUNTIME", 7);
    S.node_null = node_named(aTHX_ "main", 4, "NULL", 4);
    S.node_unknown = node_named(aTHX_ "__UNKNOWN__", 11, "__UNKNOWN__", 11);
    S.node_nulls = node_named(aTHX_ NULL, 0, NULL, 0);
    S.pkg_files_hv = newHV();
    /* Our own CVs, held here: never looked up by name later, because a
     * program may load Devel::NYTProf's XS, whose boot code replaces
     * DB::finish_profile, DB::_END and friends with its own. */
    S.cv_check = SvREFCNT_inc(cv_named(aTHX_ "DB::_CHECK"));
    S.cv_init = SvREFCNT_inc(cv_named(aTHX_ "DB::_INIT"));
    S.cv_end = SvREFCNT_inc(cv_named(aTHX_ "DB::_END"));
    S.cv_finish = SvREFCNT_inc(cv_named(aTHX_ "DB::finish_profile"));
    S.cv_enable = SvREFCNT_inc(cv_named(aTHX_ "DB::enable_profile"));

    /* Sampling keeps the source of string evals only, unless savesrc= says
     * otherwise: perl keeping every line of every file it compiles, and
     * the profile carrying them, costs more than sampling itself (186 M
     * instructions more to load Perl::Tidy, 164 M of them the source);
     * reports read files from disk. */
    if (S.sample_hz && !S.savesrc_given)
        S.savesrc = 0;
    /* $^P: keep perl's optimisations; keep source lines for savesrc */
    if (S.optimize)
        PL_perldb &= ~PERLDBf_NOOPT;
    else
        PL_perldb |= PERLDBf_NOOPT;
    if (S.savesrc)
        PL_perldb |= PERLDBf_SAVESRC | PERLDBf_SAVESRC_NOSUBS;
    /* As in Devel::NYTProf 6.12, turning these off keeps only that bit
     * (the files it writes then record this PL_perldb). */
    if (!OPT(O_NAMEEVALS))
        PL_perldb &= PERLDBf_NAMEEVAL;
    if (!OPT(O_NAMEANONSUBS))
        PL_perldb &= PERLDBf_NAMEANON;
    if (OPT(O_PERLDB))
        PL_perldb = (U32)OPT(O_PERLDB);
    init_clock();

    if (!get_hv("DB::sub", 0)) {
        note("Devel::NYTP: perl is not in debug mode (use perl -d:NYTP)\n");
        return 0;
    }

    Copy(PL_ppaddr, S.orig, OP_max, pp_fn);
    if (S.rotate_ticks && !S.sample_hz && !OPT(O_STMTS) && !OPT(O_SUBS) && !OPT(O_USE_DB_SUB)) {
        /* a segment ends as a statement begins, a call ends (or at a sample) */
        note("Devel::NYTP: rotate needs the statement profiler (stmts=1), the sub profiler "
             "(subs=1) or sample=HZ; ignored\n");
        S.rotate_ticks = 0;
    }
    if (S.rotate_ticks && !S.sample_hz)
        S.rotate_at_call = rotate_in_call;
    if (S.sample_hz) {
        /* sampling: none of the tracing wrappers, a runops loop that
         * tests the timer's flag (sample.c) */
        if (OPT(O_USE_DB_SUB)) {
            note("Devel::NYTP: use_db_sub does not go with sample; ignored\n");
            OPT(O_USE_DB_SUB) = 0;
            fast_update();
        }
        sampler_init(aTHX);
        /* exec: the profile finished first; exit: from there on,
         * signals are held (hold.c) */
        NYTP_CONTROL_PP(NYTP_INSTALL)
        goto hooked;
    }
    if (OPT(O_USE_DB_SUB)) {
        /* statements through DB::DB (perl calls it at each statement
         * while $DB::single is true), instead of op wrappers */
        PL_perldb |= PERLDBf_LINE | PERLDBf_SINGLE;
    }
    if (OPT(O_STMTS) && !OPT(O_USE_DB_SUB)) {
        NYTP_STMT_PP(NYTP_INSTALL)
        if (OPT(O_LEAVE)) {
            NYTP_LEAVE_PP(NYTP_INSTALL) /* unstack: the end of a loop iteration */
        }
    }
    NYTP_CONTROL_PP(NYTP_INSTALL)
    if (OPT(O_SLOWOPS)) {
#define NYTP_SLOWOP(op) NYTP_INSTALL(pp_slowop, op)
#include "nytp_slowops.h"
#undef NYTP_SLOWOP
    }
    NYTP_CALL_PP(NYTP_INSTALL)
    /* the ends of calls, where pp_leave does not see them (frames.c);
     * last, next and redo go on where pp_leave has been (its leave, its
     * return) */
    if (!(OPT(O_STMTS) && !OPT(O_USE_DB_SUB) && OPT(O_LEAVE))) {
        NYTP_SUB_LEFT_PP(NYTP_INSTALL)
    } else {
        NYTP_INSTALL(pp_sub_left, OP_LAST)
        NYTP_INSTALL(pp_sub_left, OP_NEXT)
        NYTP_INSTALL(pp_sub_left, OP_REDO)
    }
    NYTP_EVAL_PP(NYTP_INSTALL)
    S.sub_leave_pp = PL_ppaddr[OP_LEAVESUB];
    S.sub_leavelv_pp = PL_ppaddr[OP_LEAVESUBLV];
hooked:

    if (!PL_checkav)
        PL_checkav = newAV();
    if (!PL_initav)
        PL_initav = newAV();
    if (!PL_endav)
        PL_endav = newAV();
    av_extend(PL_endav, av_len(PL_endav) + 30);

    S.initialised = 1;
    sigexit_install(aTHX);
    TRACE(1, "~ init_profiler for pid %d, clock %ld, start %d, perldb 0x%lx\n", (int)S.pid,
          (long)OPT(O_CLOCK), S.start, (unsigned long)PL_perldb);
    if (T.on)
        TRACE(1, "~ clock: time-stamp counter at %.1f MHz, calibrated against CLOCK_MONOTONIC\n",
              T.mhz);
    else
        TRACE(1, "~ clock: clock_gettime(%ld)\n", (long)OPT(O_CLOCK));
    if (S.start == START_BEGIN)
        enable_profile(aTHX_ NULL);
    else
        av_push(PL_initav, SvREFCNT_inc(S.cv_init));
    /* perl -c runs no END block: the profile ends with the CHECK phase.
     * A module can ask for that later, while the program compiles
     * (O.pm's B::minus_c: perl -MO=Deparse): DB::_CHECK is queued in
     * any case and does nothing unless -c is on by then. */
    if (!PL_minus_c)
        av_push(PL_endav, SvREFCNT_inc(S.cv_end));
    av_push(PL_checkav, SvREFCNT_inc(S.cv_check));
    S.last_t = clock_ticks();
    return 1;
}

/* ---- the perl interface (DB::...) ----------------------------------------------- */

XS_INTERNAL(XS_DB_set_option)
{
    dXSARGS;
    if (items != 2)
        croak_xs_usage(cv, "option, value");
    set_option(aTHX_ SvPV_nolen(ST(0)), SvPV_nolen(ST(1)));
    XSRETURN_EMPTY;
}

XS_INTERNAL(XS_DB_init_profiler)
{
    dXSARGS;
    PERL_UNUSED_VAR(items);
    PERL_UNUSED_VAR(cv);
    ST(0) = sv_2mortal(newSViv(init_profiler(aTHX)));
    XSRETURN(1);
}

XS_INTERNAL(XS_DB_enable_profile)
{
    dXSARGS;
    PERL_UNUSED_VAR(cv);
    const char *file = items > 0 && SvOK(ST(0)) ? SvPV_nolen(ST(0)) : NULL;
    int was = enable_profile(aTHX_ file);
    if (!was && !S.sample_hz)
        stmt_event(aTHX_ PL_curcop, PL_op, 0); /* note where profiling resumed */
    ST(0) = sv_2mortal(newSViv(was));
    XSRETURN(1);
}

XS_INTERNAL(XS_DB_disable_profile)
{
    dXSARGS;
    PERL_UNUSED_VAR(items);
    PERL_UNUSED_VAR(cv);
    ST(0) = sv_2mortal(newSViv(disable_profile(aTHX)));
    XSRETURN(1);
}

XS_INTERNAL(XS_DB_finish_profile)
{
    dXSARGS;
    PERL_UNUSED_VAR(items);
    PERL_UNUSED_VAR(cv);
    finish_profile_ex(aTHX_ 1);
    XSRETURN_EMPTY;
}

/* DB::DB with use_db_sub=1 (NYTP.pm makes it an alias of this). */
XS_INTERNAL(XS_DB_DB_profiler)
{
    dXSARGS;
    PERL_UNUSED_VAR(items);
    PERL_UNUSED_VAR(cv);
    if (OPT(O_USE_DB_SUB)) {
        stmt_event(aTHX_ NULL, PL_op, 0);
        if (UNLIKELY(S.last_t >= S.rotate_at))
            rotate_now(aTHX_ S.last_t);
    } else
        note("Devel::NYTP: DB::DB called unexpectedly\n");
    XSRETURN_EMPTY;
}

XS_INTERNAL(XS_DB__INIT)
{
    dXSARGS;
    PERL_UNUSED_VAR(items);
    PERL_UNUSED_VAR(cv);
    if (S.start == START_INIT) {
        enable_profile(aTHX_ NULL);
    } else if (S.start == START_END) {
        /* start profiling as the END phase begins */
        if (!PL_endav)
            PL_endav = newAV();
        av_unshift(PL_endav, 1);
        av_store(PL_endav, 0, SvREFCNT_inc(S.cv_enable));
    }
    av_extend(PL_endav, av_len(PL_endav) + 20);
    XSRETURN_EMPTY;
}

/* DB::_END (ix 0) and DB::_CHECK (ix 1): queue finish_profile as the very
 * last END (or CHECK) block, once that phase has started. */
XS_INTERNAL(XS_DB__END)
{
    dXSARGS;
    dXSI32;
    PERL_UNUSED_VAR(items);
    SV *fin = S.cv_finish; /* ours, whatever DB::finish_profile is now */
    if (ix == 1 && !PL_minus_c)
        XSRETURN_EMPTY; /* the program will run: END finishes the profile */
    if (ix == 0 && S.w)
        hold_signals(); /* the END phase: the process is ending */
    if (!PL_checkav)
        PL_checkav = newAV();
    if (!PL_endav)
        PL_endav = newAV();
    av_push(ix == 1 ? PL_checkav : PL_endav, SvREFCNT_inc(fin));
    XSRETURN_EMPTY;
}

static CV *newXS_deffile_here(pTHX_ const char *name, XSUBADDR_t fn)
{
    return newXS_flags(name, fn, __FILE__, NULL, 0);
}

__attribute__((visibility("default"))) XS_EXTERNAL(boot_Devel__NYTP);
XS_EXTERNAL(boot_Devel__NYTP)
{
    dVAR;
    dXSBOOTARGSNOVERCHK;
    PERL_UNUSED_VAR(items);
    PERL_UNUSED_VAR(cv);
    newXS_deffile_here(aTHX_ "DB::set_option", XS_DB_set_option);
    newXS_deffile_here(aTHX_ "DB::init_profiler", XS_DB_init_profiler);
    newXS_deffile_here(aTHX_ "DB::enable_profile", XS_DB_enable_profile);
    newXS_deffile_here(aTHX_ "DB::disable_profile", XS_DB_disable_profile);
    newXS_deffile_here(aTHX_ "DB::finish_profile", XS_DB_finish_profile);
    newXS_deffile_here(aTHX_ "DB::_finish", XS_DB_finish_profile);
    newXS_deffile_here(aTHX_ "DB::_INIT", XS_DB__INIT);
    newXS_deffile_here(aTHX_ "DB::DB_profiler", XS_DB_DB_profiler);
    CV *c = newXS_deffile_here(aTHX_ "DB::_END", XS_DB__END);
    CvXSUBANY(c).any_i32 = 0;
    c = newXS_deffile_here(aTHX_ "DB::_CHECK", XS_DB__END);
    CvXSUBANY(c).any_i32 = 1;
    static const char *const own_names[] = {
        "DB::set_option", "DB::init_profiler", "DB::enable_profile", "DB::disable_profile",
        "DB::finish_profile", "DB::_finish", "DB::_INIT", "DB::DB_profiler", "DB::_END",
        "DB::_CHECK",
    };
    S.nown = 0;
    for (size_t i = 0; i < sizeof own_names / sizeof own_names[0]; i++) {
        GV *gv = gv_fetchpv(own_names[i], 0, SVt_PVCV);
        if (gv && GvCV(gv) && S.nown < sizeof S.own / sizeof S.own[0]) {
            S.own[S.nown].gv = (GV *)SvREFCNT_inc_simple_NN((SV *)gv);
            S.own[S.nown].cv = (CV *)SvREFCNT_inc_simple_NN((SV *)GvCV(gv));
            S.nown++;
        }
    }
    Perl_xs_boot_epilog(aTHX_ ax);
}

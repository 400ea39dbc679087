/* control.c — a profile from start to end: enable (open the output),
 * finish (the last statement, the tables, close), and the wrappers of
 * fork, exit and exec, where a process begins anew or ends.  Above the
 * statement and call recording it finishes; below the sub hooks
 * (calls.c: POSIX::_exit) and the perl interface (NYTP.c). */
#include "nytp_prof.h"

/* name as an absolute path (relative names are to the working directory
 * now), so that a program that changes directory, and its children's
 * FILE.PID, still write where the name meant when it was given.  false
 * (dst unchanged) when it does not fit or the directory is unknown. */
bool absolute_name(char *dst, size_t size, const char *name)
{
    if (name[0] == '/') {
        if (strlen(name) >= size)
            return false;
        snprintf(dst, size, "%s", name);
        return true;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return false;
    size_t c = strlen(cwd), n = strlen(name);
    if (c == 1) /* "/" */
        c = 0;
    if (c + 1 + n >= size)
        return false;
    memcpy(dst, cwd, c);
    dst[c] = '/';
    memcpy(dst + c + 1, name, n + 1);
    return true;
}

/* nytp run (NYTP_RUN_FILES: a list it made) names the profiles of the
 * run; those opened under a name of the program's own choosing
 * (DB::enable_profile(FILE), as Plack::Middleware::NYTP does) it could
 * not find by the name it gave, so each such name is added to the list,
 * in one write (O_APPEND: the lines of many processes do not mix).  The
 * list is opened only if it is there and a regular file. */
static void list_for_run(const char *name)
{
    const char *list = getenv("NYTP_RUN_FILES");
    size_t n = strlen(name);
    if (!list || !*list || strchr(name, '\n') || n + 1 > sizeof S.file)
        return;
    int fd = open(list, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return;
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        char line[sizeof S.file + 1];
        memcpy(line, name, n);
        line[n] = '\n';
        ssize_t w = write(fd, line, n + 1);
        (void)w;
    }
    close(fd);
}

int enable_profile(pTHX_ const char *file)
{
    int was = S.profiling, named = 0;
    if (OTHER_INTERP())
        return 0;
    if (OPT(O_USECPUTIME)) {
        /* as Devel::NYTProf 6 does: no profile rather than one measured
         * with a clock the user did not ask for */
        if (!S.cputime_noted++)
            note("Devel::NYTP: the usecputime option has been removed (as from Devel::NYTProf): "
                 "profiling is not enabled; use clock=N for a CPU-time clock "
                 "(clock=%d is CLOCK_PROCESS_CPUTIME_ID)\n", (int)CLOCK_PROCESS_CPUTIME_ID);
        return 0;
    }
    reinit_if_forked(aTHX);
    TRACE(1, "~ enable_profile (previously %s) to %s\n", was ? "enabled" : "disabled",
          file && *file ? file : S.file);
    char full[sizeof S.file];
    if (file && *file && absolute_name(full, sizeof full, file) && strcmp(full, S.file) != 0) {
        if (S.sample_hz && S.w)
            sampler_flush(aTHX_ 1);
        close_output(aTHX);
        if (S.sample_hz) {
            /* a sampled file has only its own calls (the tracing
             * profiler carries them over, as Devel::NYTProf does) */
            if (HvUSEDKEYS(S.callers_hv))
                hv_clear(S.callers_hv);
            arcs_clear(aTHX);
        }
        snprintf(S.file, sizeof S.file, "%s", full);
        S.seg = 0;
        named = 1;
    }
    if (!S.w) {
        open_output(aTHX_ 1);
        if (named && S.w)
            list_for_run(S.file);
    }
    S.last_fileptr = NULL;
    S.profiling = 1;
    fast_update();
    if (OPT(O_USE_DB_SUB))
        sv_setiv(PL_DBsingle, 1);
    S.last_t = clock_ticks();
    if (S.rotate_ticks && S.rotate_at == INT64_MAX)
        rotate_schedule(S.last_t);
    if (S.sample_hz)
        sampler_start(aTHX);
    return was;
}

void finish_profile(pTHX)
{
    finish_profile_ex(aTHX_ 0);
}

void finish_profile_ex(pTHX_ int own_call_open)
{
    int saved_errno = errno;
    if (OTHER_INTERP())
        return;
    TRACE(1, "~ finish_profile (overhead %gt, profiling %d, %" PRIu64 " clock readings)\n",
          (double)S.overhead_ticks, S.profiling, S.clock_reads);
    if (PL_phase >= PERL_PHASE_END && !S.end_closed)
        frames_end_phase(aTHX);
    frames_close_dead(aTHX);
    if ((!OPT(O_LEAVE) || OPT(O_USE_DB_SUB)) && !S.sample_hz)
        stmt_event(aTHX_ NULL, NULL, 0); /* the last statement's time */
    disable_profile(aTHX);
    if (S.sample_hz)
        sampler_flush(aTHX_ 0);
    close_output(aTHX);
    /* The calls still open (those that led here: DB::finish_profile and
     * the subs that called it) end after this profile: left out of it, as
     * calls in progress always are, and kept out of the next one, where
     * their arcs would stand with times that span the closing
     * (Devel::NYTProf writes them there, so that a profile per request
     * holds calls of the request before). */
    for (SSize_t ix = S.frame_ix; ix != -1; ix--)
        FRAME(ix)->counted++;
    /* ... but for DB::finish_profile called with no other call open that
     * the profile saw begin (from the main program, outside any sub): its
     * call, with no open caller whose times would span the closing, is
     * counted when it returns, in the next profile (the same file begun
     * again by enable_profile() or a new one), as Devel::NYTProf counts it
     * (its t/test51-enable.t relies on that). */
    if (own_call_open && S.frame_ix == 0)
        FRAME(0)->counted = 0;
    if (HvUSEDKEYS(S.callers_hv))
        hv_clear(S.callers_hv);
    arcs_clear(aTHX);
    node_cache_clear(aTHX);
    S.overhead_ticks = 0;
    S.subr_ticks = 0;
    errno = saved_errno;
}

static OP *pp_fork(pTHX_ OPCODE type)
{
    OP *op = S.orig[type](aTHX);
    if (!OTHER_INTERP())
        reinit_if_forked(aTHX);
    return op;
}

/* exit and exec.  From exit on, the process is ending: the signals that
 * would cut its profile short are held until the profile is written
 * (hold.c), as a server's worker that exits from its TERM handler may be
 * sent TERM again a moment later. */
static OP *pp_exit(pTHX_ OPCODE type)
{
    if (OTHER_INTERP())
        return S.orig[type](aTHX);
    if (!S.sample_hz && OPT(O_STMTS) && OPT(O_LEAVE) && !OPT(O_USE_DB_SUB))
        leave_event(aTHX_ NULL, 0);
    if (type == OP_EXEC) {
        /* finished first: nothing of this process runs after an exec */
        bool writing = S.profiling && S.w;
        struct stat sb;
        char done[sizeof S.out_name];
        snprintf(done, sizeof done, "%s", S.out_name);
        finish_profile(aTHX);
        OP *op = S.orig[type](aTHX);
        /* Back here, exec failed (perl's exec returns false): the
         * program goes on, and so does its profile, in the next file of
         * the name (FILE.sN, as rotate= names them), unless that name
         * was a device or FIFO the user gave, beside which nothing is
         * made. */
        if (writing) {
            int saved_errno = errno;
            if (lstat(done, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
                note("Devel::NYTP: exec failed: the profile %s was finished before it; profiling "
                     "stopped\n", done);
            } else {
                S.seg++;
                if (open_output(aTHX_ 0) == 0) {
                    note("Devel::NYTP: exec failed: the profile %s was finished before it; the "
                         "rest goes on in %s\n", done, S.out_name);
                    enable_profile(aTHX_ NULL);
                }
            }
            errno = saved_errno;
        }
        return op;
    } else {
        frames_close_all(aTHX); /* perl leaves every sub */
        if (S.w)
            hold_signals();
    }
    return S.orig[type](aTHX);
}

NYTP_CONTROL_PP(NYTP_PP_DEFINE)

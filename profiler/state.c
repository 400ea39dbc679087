/* state.c — what every part of the profiler shares, at the bottom: the
 * one state struct S (its defaults here), messages (note) and array
 * growth.  Calls nothing of the profiler's. */
#include "nytp_prof.h"

struct profiler S = {
    .opt = {
        {"usecputime", 0, 0, 0}, {"subs", 1, 1, 0}, {"blocks", 0, 0, 0},
        {"leave", 1, 1, 0}, {"expand", 0, 0, 0}, {"trace", 0, 0, 0},
        {"use_db_sub", 0, 0, 0}, {"compress", NYTP_DEFAULT_COMPRESSION, NYTP_DEFAULT_COMPRESSION, 0},
        {"clock", -1, -1, 0}, {"stmts", 1, 1, 0}, {"slowops", 2, 2, 0},
        {"findcaller", 0, 0, 0}, {"forkdepth", -1, -1, 0}, {"perldb", 0, 0, 0},
        {"nameevals", 1, 1, 0}, {"nameanonsubs", 1, 1, 0}, {"calls", 1, 1, 0},
        {"evals", 0, 0, 0},
    },
    .file = "nytprof.out",
    .start = START_BEGIN,
    .savesrc = 1,
    .optimize = 1,
    .frame_ix = -1,
    .arcs_gen = 1,
    .rotate_at = INT64_MAX,
};

void note(const char *fmt, ...)
{
    FILE *f = S.log ? S.log : stderr;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fflush(f);
}

int grow_array(void **v, size_t *cap, size_t need, size_t first, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : first;
    while (ncap < need)
        ncap *= 2;
    void *nv = ncap > SIZE_MAX / elem ? NULL : realloc(*v, ncap * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = ncap;
    return 0;
}

void grow_or_croak(pTHX_ void **v, size_t *cap, size_t need, size_t first, size_t elem)
{
    if (grow_array(v, cap, need, first, elem) < 0)
        croak("Devel::NYTP: out of memory");
}

void fast_update(void)
{
    /* bit 2: a statement on the line of the last may skip its clock
     * reading (stmt.c), but for rotate=, which has to see the time pass
     * in a loop on one line */
    S.stmt_fast = S.profiling && S.w && !S.forked && OPT(O_STMTS) && !OPT(O_BLOCKS)
                      ? (S.rotate_ticks ? 1 : 3)
                      : 0;
    S.call_fast = S.profiling && OPT(O_SUBS) && !(S.forked && !OPT(O_STMTS));
}

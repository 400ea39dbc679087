/* nytp/calltree.h — the call tree rebuilt from the SUB_RETURN stream.
 *
 *     nytp_calltree *t;
 *     nytp_calltree_new(&t, &e);
 *     st = nytp_calltree_load(t, "nytprof.out", warn_fn, warn_ctx, &e);
 *     // st: NYTP_OK, NYTP_E_TRUNCATED (everything before the cut is in
 *     // the tree) or another negative status (the tree holds what was
 *     // read before the error)
 *     nytp_calltree_walk(t, NYTP_CALLTREE_SORTED, visit, ctx);
 *     nytp_calltree_free(t);
 *
 * A node is one call path: the sub it names, called from the path of its
 * parent (the root, depth 0, is the main program).  Each node sums, over
 * all the calls that returned along that path, the exclusive and
 * inclusive ticks and the number of calls.
 *
 * The rules are those of Devel::NYTProf's nytprofcalls, so `nytp calls`
 * prints the same paths and values:
 *
 *  - Returns arrive deepest first and name the sub only when it returns.
 *    A return at depth d first opens unnamed frames until the stack of
 *    open frames (the root counts as one) is deeper than d, then closes
 *    the frame on top of the stack (nytprofcalls closes the top one even
 *    when the stack is deeper than d).  The closed frame takes the name,
 *    and with everything already below it is merged into its parent's
 *    child of the same name.
 *  - Names are normalised: the sequence number of a string eval,
 *    "(eval 12)[x.pl:3]" (or "(re_eval 4)[...]", any word ending in
 *    "eval"), becomes 0, so sibling evals share one path.
 *  - Several inputs add to one tree.
 *
 * Any depth is accepted.  Memory is bounded by the distinct paths (plus
 * the open frames that something returned into), not by the number of
 * events nor by the depth numbers: merged frames are freed and reused,
 * and frames that hold nothing are not stored.
 */
#ifndef NYTP_CALLTREE_H
#define NYTP_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nytp/codec.h"
#include "nytp/error.h"
#include "nytp/model.h"
#include "nytp/reader.h"

typedef struct nytp_calltree nytp_calltree;

/* The name given to frames still open when an input ends (the profile
 * was cut, or the program left a sub without its return being written):
 * their names are unknown, the calls below them are kept. */
#define NYTP_CALLTREE_UNRETURNED "(unreturned)"

int nytp_calltree_new(nytp_calltree **t, nytp_error *err);
void nytp_calltree_free(nytp_calltree *t);

/* Read every chunk of one input into the tree, then close the frames it
 * left open (nytp_calltree_end_input).  Returns NYTP_OK, or the reader's
 * negative status (NYTP_E_TRUNCATED: the input was cut, everything before
 * it was added).  Reader warnings go to warn (may be NULL). */
int nytp_calltree_load(nytp_calltree *t, const char *path, nytp_warn_fn warn, void *warn_ctx,
                       nytp_error *err);
/* The same from an open reader (not closed here). */
int nytp_calltree_read(nytp_calltree *t, nytp_reader *r, nytp_error *err);

/* One chunk: SUB_RETURN adds a return, the ticks_per_sec attribute is
 * remembered, the rest is ignored.  NYTP_OK or NYTP_E_NOMEM. */
int nytp_calltree_add_chunk(nytp_calltree *t, const nytp_chunk *c);
/* One SUB_RETURN event. */
int nytp_calltree_add_return(nytp_calltree *t, uint32_t depth, double incl, double excl,
                             nytp_str name);
/* An input ended: the frames still open become one frame
 * NYTP_CALLTREE_UNRETURNED called from the main program, holding every
 * call that returned into any of them.  Returns how many frames were open
 * (0 for a complete profile), or NYTP_E_NOMEM. */
int64_t nytp_calltree_end_input(nytp_calltree *t);

/* Add values at a path of names (the first is called from the main
 * program), creating the nodes; names are normalised as above.  For
 * building trees by hand (filters, tests). */
int nytp_calltree_add_path(nytp_calltree *t, const nytp_str *names, size_t depth, double excl,
                           double incl, uint64_t calls);

/* ---- folding deep recursion ------------------------------------------------ */

/* The default limit of the commands (--max-recursion). */
#define NYTP_CALLTREE_MAX_RECURSION 1000

/* Fold direct recursion deeper than limit frames.  A run of frames of one
 * sub, each called by the one before it, keeps its first limit frames;
 * every frame of the run beyond them is one frame named
 *
 *     NAME…[×N]       (U+2026 then "[", U+00D7, N, "]")
 *
 * N being how many frames it stands for along the deepest such run.  It
 * holds their values summed (exclusive and inclusive ticks, calls), and
 * the calls they made to other subs, merged by name, so every total stays
 * what it was: "a;b;b;b;…;b;c" with 2,000,000 frames of b and a limit of
 * 1000 becomes "a;b;…(1000 frames of b);b…[×1999000];c".  A tree with no
 * run deeper than limit is left as it is.  Call it once, after the last
 * input (a folded frame is not a frame of its sub: returns added later do
 * not go into it).  limit 0 folds nothing.  Returns how many frames were
 * folded away along the deepest runs (summed over the runs), or
 * NYTP_E_NOMEM (the tree holds every value, partly folded). */
int64_t nytp_calltree_fold_recursion(nytp_calltree *t, uint32_t limit);

/* The length of the sub name of a folded frame's name ("NAME…[×N]": that
 * of NAME), or len for any other name: lets a caller find the folded sub
 * (its file, its line). */
size_t nytp_calltree_unfolded_len(const char *name, size_t len);

/* The paths a profile without call events (calls=0: no SUB_RETURN) still
 * has, from its call sites (SUB_CALLERS): "caller;called" when a site has
 * one calling sub, "called" alone when it has several, with the site's
 * exclusive and inclusive time (in ticks of p's ticks_per_sec, seconds
 * when it has none) and calls.  What pprof and speedscope show of such a
 * profile.  The tree's return statistics are left as they are.  NYTP_OK
 * or NYTP_E_NOMEM. */
int nytp_calltree_add_sites(nytp_calltree *t, const nytp_profile *p);

typedef struct nytp_calltree_stats {
    uint64_t returns;       /* SUB_RETURN events added */
    double excl_in;         /* their exclusive ticks, summed as they came */
    uint64_t nodes;         /* distinct call paths in the tree */
    uint64_t node_slots;    /* nodes ever allocated at once (memory used) */
    uint64_t names;         /* distinct (normalised) sub names */
    uint32_t max_depth;     /* deepest path (exact once the input ended) */
    uint64_t unreturned;    /* frames closed by nytp_calltree_end_input */
} nytp_calltree_stats;

void nytp_calltree_get_stats(const nytp_calltree *t, nytp_calltree_stats *s);

/* The name id (nytp_calltree_name) of the sub of the last return added,
 * or UINT32_MAX before any: lets a caller that keeps more per sub key it
 * by the id the tree already found instead of hashing the name again. */
uint32_t nytp_calltree_last_name(const nytp_calltree *t);

/* Give dst what src knew of its inputs (ticks_per_sec, sample rate and
 * count), not its paths nor its return statistics: for a tree rebuilt
 * from another (a view, nytp/view.h). */
void nytp_calltree_copy_attrs(nytp_calltree *dst, const nytp_calltree *src);

/* ticks_per_sec of the last input that gave it, or 0. */
double nytp_calltree_ticks_per_sec(const nytp_calltree *t);

/* The sample rate of a sampled input (attribute sample_hz: Devel::NYTP
 * sample=HZ), or 0 when no input was sampled; *samples (may be NULL)
 * gets the sample_count attributes summed.  The returns of a sampled
 * profile are the calls the sampler saw: their times are estimates and
 * their number is not the number of calls. */
double nytp_calltree_sample_hz(const nytp_calltree *t, uint64_t *samples);

/* ---- walking ------------------------------------------------------------- */

typedef struct nytp_calltree_visit {
    uint32_t depth;             /* 1: called from the main program */
    const nytp_str *path;       /* path[0..depth-1]; path[depth-1] is this sub */
    const uint32_t *path_ids;   /* the same as name ids (nytp_calltree_name) */
    uint64_t calls;             /* calls along this path */
    double excl, incl;          /* their exclusive and inclusive ticks */
    double total_excl;          /* excl of this node and all below it */
    uint64_t total_calls;       /* calls of this node and all below it */
    uint32_t n_children;
} nytp_calltree_visit;

/* Return non-zero to stop the walk (the value is returned by walk). */
typedef int (*nytp_calltree_fn)(void *ctx, const nytp_calltree_visit *v);

enum nytp_calltree_walk_flags {
    NYTP_CALLTREE_SORTED = 1    /* children in byte order of their names */
};

/* Visit every node but the root, parents before children (depth first),
 * children in the order the program first called them (of the first
 * return below each) or sorted.  Returns 0, the callback's non-zero
 * value, or NYTP_E_NOMEM.  The tree may not change during the walk. */
int nytp_calltree_walk(const nytp_calltree *t, unsigned flags, nytp_calltree_fn fn, void *ctx);

/* Totals over the whole tree (the root's total_excl and total_calls). */
double nytp_calltree_total_excl(const nytp_calltree *t);
uint64_t nytp_calltree_total_calls(const nytp_calltree *t);

/* A name id's string (normalised). */
nytp_str nytp_calltree_name(const nytp_calltree *t, uint32_t id);

/* *id: the name id of NAME (normalised as the tree normalises the names
 * it is given), or UINT32_MAX when the tree has no such name.  0, or
 * NYTP_E_NOMEM. */
int nytp_calltree_find_name(const nytp_calltree *t, const char *name, size_t len, uint32_t *id);

/* Normalise a sub name as nytprofcalls does (eval sequence numbers to 0)
 * into out, which has room for len bytes (never longer).  Returns the new
 * length. */
size_t nytp_calltree_normalise(const char *name, size_t len, char *out);

#endif

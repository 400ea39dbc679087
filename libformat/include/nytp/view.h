/* nytp/view.h — what a report shows: the one place where call stacks are
 * focused, ignored and hidden (pprof's -focus, -ignore, -hide) and where
 * direct recursion is folded, between the call tree and every report.
 *
 *     nytp_view *v;
 *     nytp_view_new(&v, &e);
 *     nytp_view_add(v, NYTP_VIEW_HIDE, "^(Moose|Class::MOP)::", &e);
 *     nytp_view_set_max_recursion(v, 1000);
 *     nytp_view_apply(v, &tree, &e);       // tree is now the view's
 *     nytp_view_get_stats(v, &s);          // what was left out
 *     nytp_view_apply_model(v, p, tree);   // subs' times as the view has them
 *     nytp_view_free(v);
 *
 * The meanings are pprof's, on the call paths of the call tree (each path
 * holds the exclusive time spent with exactly that stack):
 *
 *  - focus RE: keep only the paths with a frame whose sub matches (the
 *    frames above it stay; their own time, on paths without a match, goes);
 *  - ignore RE: drop the paths with a frame whose sub matches;
 *  - hide RE: take the matching frames out of every path: a hidden sub's
 *    exclusive time becomes its nearest shown caller's, or, with no shown
 *    caller, that of NYTP_VIEW_MAIN (the main program, as Devel::NYTProf
 *    names it); inclusive times of the shown subs and the total stay.
 *
 * Each may be given several times: a path is focused when it matches any
 * focus pattern, ignored when it matches any ignore pattern, a frame is
 * hidden when it matches any hide pattern.  A pattern "file:RE" matches a
 * sub by the name of the file it is defined in (given by a callback, as
 * the call tree knows only names) and, in line and file views, a file by
 * its name (nytp_view_file).  Patterns are POSIX extended regular
 * expressions, matched anywhere in the name unless anchored.
 *
 * Totals never change silently: the stats say how much time the paths
 * held before and after, and how much each rule took out.
 */
#ifndef NYTP_VIEW_H
#define NYTP_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nytp/calltree.h"
#include "nytp/error.h"
#include "nytp/model.h"

/* The frame a hidden sub without a shown caller gives its time to. */
#define NYTP_VIEW_MAIN "main::RUNTIME"

enum nytp_view_op { NYTP_VIEW_FOCUS, NYTP_VIEW_IGNORE, NYTP_VIEW_HIDE, NYTP_VIEW_N_OPS };

typedef struct nytp_view nytp_view;

int nytp_view_new(nytp_view **v, nytp_error *err);
void nytp_view_free(nytp_view *v);

/* Add a pattern ("RE" for sub names, "file:RE" for file names).
 * NYTP_OK, NYTP_E_USAGE (err says what is wrong with the expression) or
 * NYTP_E_NOMEM. */
int nytp_view_add(nytp_view *v, enum nytp_view_op op, const char *pattern, nytp_error *err);

/* Fold direct recursion deeper than limit frames after filtering
 * (nytp_calltree_fold_recursion; 0: never, the default). */
void nytp_view_set_max_recursion(nytp_view *v, uint32_t limit);

/* The file a sub is defined in, for "file:" patterns: name is a call
 * tree name (string eval numbers 0); NULL or "" when not known. */
typedef const char *(*nytp_view_sub_file_fn)(void *ctx, const char *name, uint32_t len);
void nytp_view_set_sub_files(nytp_view *v, nytp_view_sub_file_fn fn, void *ctx);

/* Whether any pattern was added (of op; NYTP_VIEW_N_OPS: of any). */
bool nytp_view_active(const nytp_view *v, enum nytp_view_op op);
/* Whether any "file:" pattern was added. */
bool nytp_view_has_file_patterns(const nytp_view *v);
/* The patterns of op as given, in order ("file:" included). */
size_t nytp_view_count(const nytp_view *v, enum nytp_view_op op);
const char *nytp_view_pattern(const nytp_view *v, enum nytp_view_op op, size_t i);

/* Replace *t by its view: the paths filtered as above, then recursion
 * folded.  With no pattern the tree is only folded, in place.  NYTP_OK
 * or NYTP_E_NOMEM (*t is then the tree as it was). */
int nytp_view_apply(nytp_view *v, nytp_calltree **t, nytp_error *err);

typedef struct nytp_view_stats {
    double total;           /* exclusive ticks of every path before */
    double shown;           /* after: total - unfocused - ignored */
    double unfocused;       /* on paths without a focus match */
    double ignored;         /* on paths with an ignore match (and focused) */
    double hidden;          /* exclusive ticks of hidden frames, moved to callers */
    uint64_t hidden_subs;   /* distinct sub names hidden */
    int64_t folded;         /* frames folded away by recursion folding */
} nytp_view_stats;

/* Of the last nytp_view_apply. */
void nytp_view_get_stats(const nytp_view *v, nytp_view_stats *s);

/* Per-sub totals of a (filtered) tree, indexed by its name ids:
 * exclusive ticks and calls of the frames of the sub, inclusive ticks the
 * exclusive ticks of every path through the sub (counted once however
 * often it recurs), so that a hidden sub's time is in its callers'.
 * Arrays of nytp_calltree_get_stats(t).names entries, freed by the
 * caller.  NYTP_OK or NYTP_E_NOMEM. */
int nytp_view_sub_totals(const nytp_calltree *t, double **excl, double **incl, uint64_t **calls);

/* Give the model's subs the times of the tree (a view): each sub's excl,
 * incl (in seconds, by the tree's ticks_per_sec, or tps when it has
 * none) and calls become those of its name in the tree, 0 for a sub not
 * in it (hidden or left out).  Sibling string evals, one name in the tree
 * (their sequence numbers normalised away), share its totals in the
 * proportions of their own exclusive and inclusive times and calls in p
 * (all to the first of them when those are 0; the calls shared out in
 * whole numbers that add up).  Call sites are left as they are.
 * NYTP_OK or NYTP_E_NOMEM. */
int nytp_view_apply_model(const nytp_view *v, nytp_profile *p, const nytp_calltree *t, double tps);

/* Line and file views: what the "file:" patterns make of a file. */
enum nytp_view_file_verdict {
    NYTP_VIEW_SHOWN,        /* shown */
    NYTP_VIEW_LEFT_OUT,     /* outside a file focus, or file-ignored: not shown, not in the total shown */
    NYTP_VIEW_HIDDEN        /* file-hidden: not shown, its time stays in the totals */
};
enum nytp_view_file_verdict nytp_view_file(const nytp_view *v, const char *name);

/* ---- time lines: single calls, not paths -------------------------------- */

/* One call of a time line (speedscope's evented profile): its frame (the
 * caller's name id), the calls it made in the order they ran
 * (first_child, then next; NYTP_VIEW_NO_CALL ends a list) and its
 * inclusive ticks.  A call's own time is taken as after its calls. */
typedef struct nytp_view_call {
    uint32_t frame;
    uint32_t first_child, next;
    double incl;
} nytp_view_call;

#define NYTP_VIEW_NO_CALL UINT32_MAX
/* The frame of a call taken out of the time line but not out of the time:
 * it is not drawn, its calls are drawn in its caller where they ran, and
 * its own time stays where it was, inside its caller's (whose own time it
 * becomes, as the path view gives it). */
#define NYTP_VIEW_NOT_DRAWN UINT32_MAX

/* The names of the caller's frame ids, and new ids for the names the view
 * makes ("NAME…[×K]" of folded recursion, NYTP_VIEW_MAIN);
 * intern returns NYTP_VIEW_NOT_DRAWN when out of memory. */
typedef struct nytp_view_names {
    nytp_str (*name)(void *ctx, uint32_t frame);
    uint32_t (*intern)(void *ctx, const char *name, uint32_t len);
    void *ctx;
} nytp_view_names;

/* The view of the time line whose outermost calls are the list at *first
 * in the *n calls of *calls (an array of *cap, from malloc), with the
 * meanings of the path view, call by call:
 *
 *  - ignore: a call through a match goes with its calls, and its time
 *    leaves its callers (the time line closes up);
 *  - focus: a call through a match stays with its calls; a call above
 *    one stays with only the calls that lead to one, its own time gone;
 *    any other call goes, as for ignore;
 *  - hide: a matching call becomes NYTP_VIEW_NOT_DRAWN; when no caller
 *    of it is drawn, its own time is drawn as a last call NYTP_VIEW_MAIN
 *    (the path view gives it to NYTP_VIEW_MAIN);
 *
 * then direct recursion deeper than the view's max_recursion is folded
 * as nytp_calltree_fold_recursion folds paths, hidden calls between two
 * calls of a sub not counting: in a run of calls of one sub, each made by
 * the one before, the call beyond the limit becomes "NAME…[×K]" (K:
 * how many calls of the run it and the longest chain below it hold) and
 * the deeper ones of the run NYTP_VIEW_NOT_DRAWN.  With no pattern only
 * the frames change, in place (names interned in the order of the calls,
 * depth first); otherwise *calls, *n, *cap and *first are replaced.
 * The "file:" patterns use the sub-file callback of the view.  NYTP_OK or
 * NYTP_E_NOMEM (the calls as they were). */
int nytp_view_apply_calls(nytp_view *v, nytp_view_call **calls, uint32_t *n, uint32_t *cap,
                          uint32_t *first, const nytp_view_names *names, nytp_error *err);
/* Which kinds of pattern match a sub name (a call tree name; "file:"
 * ones by its file): a mask of 1 << NYTP_VIEW_FOCUS, _IGNORE, _HIDE. */
unsigned nytp_view_match(const nytp_view *v, const char *name, size_t len);

/* Give the model's call sites (the calling lines, each sub's callers and
 * callees) the calls of the view, by pprof's rules as nytp_view_apply
 * has them.  t is the tree BEFORE nytp_view_apply: the one that knows
 * the calls the view moves or leaves out.  The call tree has no lines, so
 * each line's calls follow those of its calling and called subs:
 *
 *  - focus and ignore: a site keeps the share of its (caller, called)
 *    calls and times that the view keeps;
 *  - hide: a call from a shown sub C to a hidden sub H at a line becomes,
 *    there, C's calls to the shown subs H reached (H's callees, through
 *    any hidden subs), and a site of H flagged NYTP_SITE_HIDDEN holds the
 *    exclusive time of the hidden subs, now C's own; the hidden subs'
 *    own calls go.
 *
 * Where the caller calls the sub from several lines, the view's calls
 * are split over them in proportion to the profile's (NYTP_SITE_SHARED);
 * a site the tree does not know stays as it is (NYTP_SITE_UNVIEWED).  A
 * site the view does not change stays byte for byte.  Call it before
 * evals are collapsed (the tree's names have their numbers normalised,
 * the sites keep them).  NYTP_OK or NYTP_E_NOMEM. */
int nytp_view_apply_sites(const nytp_view *v, nytp_profile *p, const nytp_calltree *t);

#endif

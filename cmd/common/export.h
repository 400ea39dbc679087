/* export.h — what the exports to other tools' formats ('nytp pprof',
 * 'nytp speedscope') share: a profile and its call tree loaded in one
 * pass, sub names resolved to the model's subs (file, first line), an
 * interner for names, and the depth-2 call paths of the call-site data
 * for profiles without call events.
 *
 *     export_profile x;
 *     int rc = export_load(&x, nfiles, files, strict, hook, ctx);
 *     if (rc != EXIT_OK) return rc;
 *     ... x.p (the model), x.t (the call tree), export_find_sub(&x, ...)
 *     export_release(&x);
 */
#ifndef NYTP_EXPORT_H
#define NYTP_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "nytp/calltree.h"
#include "nytp/model.h"
#include "strmap.h"
#include "viewopt.h"

/* ---- the loaded profile ----------------------------------------------- */

typedef struct export_profile {
    nytp_profile *p;
    nytp_calltree *t;
    uint64_t returns;       /* SUB_RETURN events read */
    uint64_t unreturned;    /* frames still open where an input ended */
    strmap sub_names; /* model sub names, eval numbers normalised -> sub id */
    bool sub_names_built;
    bool viewed;            /* x.t is a view with patterns: write from it, even
                               without returns (its paths came from the sites) */
} export_profile;

/* Load files (none: "nytprof.out") into one model and one call tree in a
 * single pass (so standard input works), reporting warnings and errors as
 * every command does; hook, if not NULL, sees every chunk after them (a
 * VERSION chunk starts each input).  Warns when calls were left open.
 * Returns an exit code; on failure nothing is left to release. */
int export_load(export_profile *x, int nfiles, char **files, bool strict,
                int (*hook)(void *ctx, const nytp_chunk *c), void *hook_ctx);
/* The same from a profile in memory, read ninputs times (as that many
 * inputs), without messages: for tests and the fuzz target.  A truncated
 * profile loads what is before the cut; < 0 for anything else. */
int export_load_mem(export_profile *x, const void *data, size_t size, int ninputs,
                    int (*hook)(void *ctx, const nytp_chunk *c), void *hook_ctx);
void export_release(export_profile *x);

/* Make x->t the view of vo (viewopt_apply), its "file:" patterns
 * matching subs by the model's files; with a pattern, a profile without
 * call events first gets its call-site paths into the tree
 * (nytp_calltree_add_sites) and x->viewed is set.  Says what went wrong
 * and returns < 0 on failure. */
int export_apply_view(export_profile *x, viewopt *vo);

/* One run through the view, as 'nytp diff' and 'nytp html --base' read
 * each run of a side: files (nfiles of them, one run) loaded with their
 * own call tree (the call sites' paths when it has no call events),
 * filtered by vo, the model's subs given the view's times; the view's
 * stats added to *stats, and the filtered tree's paths to into (may be
 * NULL).  Returns the model, or NULL with *rc the exit code (said). */
nytp_profile *export_load_viewed(int nfiles, char **files, bool strict, viewopt *vo, nytp_view_stats *stats,
                                 nytp_calltree *into, int *rc);

/* The exports of a profile in memory (read as two inputs) into memory,
 * thrown away: for the fuzz target.  < 0 on an error. */
int pprof_write_memory(const void *data, size_t size);
int speedscope_write_memory(const void *data, size_t size);
/* The same for 'nytp cachegrind', of a loaded profile (whose evals it
 * collapses). */
int cachegrind_write_memory(nytp_profile *p);

/* The model's sub of a (normalised, as the call tree has them) name, or
 * NULL. */
const nytp_sub *export_find_sub(export_profile *x, const char *name, uint32_t len);
/* The file name of a sub ("" when not known). */
const char *export_sub_file(const export_profile *x, const nytp_sub *s);

/* ---- call paths from the call-site data -------------------------------- */

/* One path per call site of the model: caller then called sub (depth 2),
 * or only the called sub (depth 1) when the line ran in more than one sub,
 * whose shares the profile does not record.  fid and line are the
 * calling line (0 for depth 1); excl in seconds. */
typedef int (*export_site_fn)(void *ctx, const nytp_str *path, uint32_t depth, uint32_t fid,
                              uint32_t line, double excl, uint64_t calls);
/* Returns 0 or the callback's non-zero value. */
int export_site_paths(const export_profile *x, export_site_fn fn, void *ctx);

/* ---- text -------------------------------------------------------------- */

/* s as UTF-8 text: valid UTF-8 as it is, otherwise each byte read as
 * Latin-1 (as perl reads a byte string).  Returns s itself or a new
 * string in *tofree (free it); NULL when out of memory. */
const char *export_utf8(const char *s, uint32_t len, uint32_t *out_len, char **tofree);

#endif

/* pathmap.h — the names of two sets of profiles (BASE, side 0, and NEW,
 * side 1) made comparable when the same code was profiled in two
 * checkouts: "/ci/ws-1234/lib/M.pm" and "/ci/ws-5678/lib/M.pm" are both
 * "M.pm", "M::__ANON__[/ci/ws-1234/lib/M.pm:2]" is "M::__ANON__[M.pm:2]",
 * and "(eval 12)[/ci/ws-1234/lib/M.pm:8]" is "(eval 0)[M.pm:8]".
 *
 *     pathmap *m;
 *     pathmap_new(&m, &opts);                      // --strip, --map
 *     pathmap_add_profile(m, 0, base_run);         // each run of each side
 *     pathmap_add_profile(m, 1, new_run);
 *     pathmap_finish(m);                           // pairs what is left
 *     key = pathmap_file_key(m, side, name, len, &klen);
 *     key = pathmap_sub_key(m, side, name, len, &klen);
 *     pathmap_free(m);
 *
 * A file's key is its path after, in order: --map (BASE's OLD prefix
 * becomes NEW), the longest --strip prefix, else the longest root of its
 * side: the directories its program loaded code from, as the profile
 * tells them (the "inc" option Devel::NYTP writes, an attribute in
 * profiles written before: perl's @INC at the end of the run; the
 * directory of the program, from the "application" attribute).  A file that still has a key only one side has is then
 * paired with the file of the other side that shares the longest path
 * suffix (whole components; the best on both sides and the only one), and
 * both take that suffix as key.  Sub and eval names get their file part
 * (inside the last "[...:LINE]", however deeply evals nest) rewritten the
 * same way, and the sequence numbers of string evals made 0. */
#ifndef NYTP_PATHMAP_H
#define NYTP_PATHMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "nytp/model.h"

typedef struct pathmap_opts {
    const char *const *strip;   /* --strip=PREFIX, either side */
    size_t n_strip;
    const char *const *map;     /* --map=OLD=NEW, as given */
    size_t n_map;
} pathmap_opts;

typedef struct pathmap pathmap;

/* NYTP_OK or NYTP_E_NOMEM.  o's strings must outlive m. */
int pathmap_new(pathmap **m, const pathmap_opts *o);
void pathmap_free(pathmap *m);

/* Learn the roots and the file names of one run of a side. */
int pathmap_add_profile(pathmap *m, int side, const nytp_profile *p);
/* After the last profile: pair the files only one side has. */
int pathmap_finish(pathmap *m);

/* The key of a file name (a path, or a string eval's "(eval N)[...]")
 * or of a sub name of a side, in a buffer of m valid until the next call;
 * NULL when out of memory. */
const char *pathmap_file_key(pathmap *m, int side, const char *name, size_t len, size_t *klen);
const char *pathmap_sub_key(pathmap *m, int side, const char *name, size_t len, size_t *klen);

/* How many files were paired by their common suffix (for a note). */
size_t pathmap_paired(const pathmap *m);

#endif

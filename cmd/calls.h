/* calls.h — the collapsed call paths of 'nytp calls', shared with
 * 'nytp flame'. */
#ifndef NYTP_CALLS_H
#define NYTP_CALLS_H

#include <stdbool.h>

#include "nytp/calltree.h"
#include "nytp/nytp.h"

/* Build one call tree from files (none: "nytprof.out"), reporting as
 * every command does: a truncated input warns (its calls before the cut
 * are kept) unless strict, which makes it an error; frames left open are
 * reported.  Returns NULL and sets *rc to the exit code on failure. */
nytp_calltree *calls_load(int nfiles, char **files, bool strict, bool verbose, int *rc);

/* "sub;sub;sub VALUE" lines, one per call path, as nytprofcalls prints
 * them: VALUE is the exclusive ticks (an integer, truncated), or the
 * number of calls with by_calls.  Names are printed as they are (nytprofcalls
 * means to turn ';' and ' ' into '?', but its tr changes the name ids, not
 * the names, so it prints them unchanged; so do we).
 * stable sorts the lines.  Warns, as nytprofcalls does, if the total
 * printed differs from the total read.  NYTP_OK or the out's error. */
int calls_write_collapsed(nytp_out *out, const nytp_calltree *t, bool by_calls, bool stable);

#endif

/* calls.h — the collapsed call paths of 'nytp calls', shared with
 * 'nytp flame'. */
#ifndef NYTP_CALLS_H
#define NYTP_CALLS_H

#include <stdbool.h>

#include "nytp/calltree.h"
#include "nytp/nytp.h"
#include "viewopt.h"

/* Build one call tree from files (none: "nytprof.out"), reporting as
 * every command does: a truncated input warns (its calls before the cut
 * are kept) unless strict, which makes it an error; frames left open are
 * reported; a profile without sub return events gets the caller;called
 * paths of its call sites (with a warning).  Then the tree becomes the
 * view of vo: --focus, --ignore, --hide, and recursion folded
 * (viewopt_apply).  verbose says what is being done on stderr.  Returns NULL and
 * sets *rc to the exit code on failure. */
nytp_calltree *calls_load(int nfiles, char **files, bool strict, viewopt *vo,
                          bool verbose, int *rc);

/* "sub;sub;sub VALUE" lines, one per call path, as nytprofcalls prints
 * them: VALUE is the exclusive ticks (an integer, truncated), or the
 * number of calls with by_calls.  Names are printed as they are (nytprofcalls
 * means to turn ';' and ' ' into '?', but its tr changes the name ids, not
 * the names, so it prints them unchanged), except for the bytes that would
 * end a frame or a line, ';', LF and CR, and '%', which are percent-encoded
 * (%3B, %0A, %0D, %25): a name cannot forge frames or lines.
 * stable sorts the lines.  Warns, as nytprofcalls does, if the total
 * printed differs from the total read.  NYTP_OK or the out's error. */
int calls_write_collapsed(nytp_out *out, const nytp_calltree *t, bool by_calls, bool stable);

/* "# WHAT WAS LEFT OUT\n" (viewopt_header) before the collapsed lines when
 * vo has a pattern, nothing otherwise: flame graph tools skip the line. */
void calls_write_header(nytp_out *out, const viewopt *vo, const nytp_calltree *t);

#endif

/* nytp/merge.h — join profiles of the same program into one, streaming.
 *
 *     nytp_merge *m;
 *     nytp_merge_new(&m, w, &opts, &e);         // w: an open nytp_writer
 *     nytp_merge_add(m, "a.out", &e);           // once per input, in order
 *     nytp_merge_add(m, "b.out", &e);
 *     nytp_merge_finish(m, &e);                 // writes the summaries
 *     nytp_merge_free(m);
 *     nytp_writer_close(w, &e);                 // the caller owns w
 *
 * Files of later inputs are matched to earlier ones by name; a string
 * eval matches the eval run at the same place (parent file and line) the
 * same number of times before in its input, as nytp's model matches them.
 *
 * What is summed and what passes through:
 *  - statement events (TIME_LINE, TIME_BLOCK, DISCOUNT) are summed per
 *    line (per line, block and sub line for TIME_BLOCK): ticks, statements
 *    counted and statements discounted.  At the end each line is written as
 *    as many statement chunks as it had statements, the first carrying
 *    the summed ticks and the rest zero, each discounted one preceded by a
 *    DISCOUNT.  A loader that follows Devel::NYTProf's rules (each statement
 *    adds 1 to its line's count unless a DISCOUNT came just before it) sees
 *    exactly the summed counts, statements measured and discounted, and
 *    the summed times; the output compresses to far less than the events.
 *  - SUB_INFO: one per sub name and file, the first lines seen kept.
 *  - SUB_CALLERS: summed per called sub, file, line and calling sub (count,
 *    inclusive, exclusive and recursive times; the deepest recursion).
 *  - SRC_LINE: the first text of each file's line, written once.
 *  - PID_START, PID_END, SUB_ENTRY (file id mapped) and SUB_RETURN pass
 *    through in input order, so call trees can be rebuilt from the output.
 *  - attributes: perl_version, nv_size, ticks_per_sec, clock_id, xs_version
 *    and PL_perldb are written once (a warning names both inputs and
 *    values when a later input disagrees; statement and call-event ticks of
 *    an input with another ticks_per_sec are converted); basetime is the
 *    smallest, cumulative_overhead_ticks the sum, sawampersand_* the first,
 *    application lists the programs ("x.pl (3 runs) and y.pl"; an input
 *    that is a merge adds the runs it lists, so merging is associative), any other
 *    key the last value.  Options: the first value of each (a warning when
 *    a later input has another).
 *
 * Memory grows with distinct files, lines, subs and call arcs, never with
 * the number of events; inputs are opened one at a time.
 */
#ifndef NYTP_MERGE_H
#define NYTP_MERGE_H

#include <stdint.h>

#include "nytp/error.h"
#include "nytp/reader.h"
#include "nytp/writer.h"

typedef struct nytp_merge nytp_merge;

typedef struct nytp_merge_opts {
    nytp_warn_fn warn;      /* warnings: disagreeing inputs, reader warnings */
    void *warn_ctx;
    int level;              /* zlib level of the output, 0..9 (0: plain) */
} nytp_merge_opts;

/* Start a merge that writes to w (the header is written now).  w stays the
 * caller's: close it after nytp_merge_finish, or abort it after an error. */
int nytp_merge_new(nytp_merge **m, nytp_writer *w, const nytp_merge_opts *opts, nytp_error *err);

/* Read one input through ("-" is standard input).  NYTP_OK; or
 * NYTP_E_TRUNCATED when it was cut short, in which case everything before
 * the cut is merged (err says where); or another error for an unreadable
 * or corrupt input (the output must then be discarded). */
int nytp_merge_add(nytp_merge *m, const char *path, nytp_error *err);
/* The same from a reader (taken over and closed); name is for messages. */
int nytp_merge_add_reader(nytp_merge *m, nytp_reader *r, const char *name, nytp_error *err);

/* After the last input: write the summed statements, subs, call arcs and
 * attributes. */
int nytp_merge_finish(nytp_merge *m, nytp_error *err);

void nytp_merge_free(nytp_merge *m);

/* Inputs added so far. */
uint32_t nytp_merge_inputs(const nytp_merge *m);

#endif

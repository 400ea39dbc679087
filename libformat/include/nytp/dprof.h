/* nytp/dprof.h — read Devel::DProf's tmon.out, one event at a time.
 *
 *     nytp_in *in;  nytp_dprof *d;  nytp_dprof_event ev;
 *     nytp_in_open_file(&in, "tmon.out", &e);
 *     nytp_dprof_open(&d, in, 0, &e);          // takes ownership of in
 *     const nytp_dprof_header *h = nytp_dprof_get_header(d);
 *     while ((st = nytp_dprof_next(d, &ev, &e)) == NYTP_OK)
 *         ... ev.kind, ev.sub, ev.real ...
 *     nytp_dprof_close(d);
 *
 * A tmon.out is text: the magic line "#fOrTyTwO", perl assignments such
 * as "$hz=100;" up to a line "PART2", then one record per line:
 *
 *     & ID PKG NAME      declares sub ID (newer format; DProf writes hex ids)
 *     + ID / - ID        enter / leave sub ID
 *     * ID               the running sub did 'goto &ID'
 *     / ID               the running sub was left by die
 *     @ U S R            user, system and real clocks advance by U, S, R ticks
 *     + U S R NAME       older format: the sub by name, with absolute times
 *     - & NAME           leave NAME, no time
 *
 * The reader checks that the records nest (every leave matches an enter,
 * a leave after 'goto &sub' names the sub that did the goto), so a caller
 * sees a balanced stream.  Errors carry the 1-based line number in
 * err->chunk and start their message with "line N: ".
 *
 * Subs are numbered densely (0, 1, ...) by fully qualified name, in the
 * order they are first seen: several DProf ids with the same name (every
 * anonymous sub is main::__ANON__) are one sub, as dprofpp shows them.
 * Memory grows with the number of subs and the call depth, never with the
 * number of records.
 */
#ifndef NYTP_DPROF_H
#define NYTP_DPROF_H

#include <stdbool.h>
#include <stdint.h>

#include "nytp/error.h"
#include "nytp/io.h"

typedef struct nytp_dprof nytp_dprof;

/* The header assignments (0 when absent). Times are in ticks of 1/hz s. */
typedef struct nytp_dprof_header {
    double hz;
    char xs_version[64];        /* "DProf 20110802.00" */
    double over_utime, over_stime, over_rtime, over_tests;
    double rrun_utime, rrun_stime, rrun_rtime;
    double total_marks;
    bool have_hz;
} nytp_dprof_header;

enum nytp_dprof_kind {
    NYTP_DPROF_ENTER = 1,       /* '+': sub is called */
    NYTP_DPROF_LEAVE,           /* '-': sub returns */
    NYTP_DPROF_DIE,             /* '/': sub is left by die */
    NYTP_DPROF_GOTO,            /* '*': goto_from is left and sub takes its place */
    NYTP_DPROF_FAKE_LEAVE       /* end of input with sub still running
                                   (only with NYTP_DPROF_FAKE_EXITS) */
};

typedef struct nytp_dprof_event {
    int kind;                   /* enum nytp_dprof_kind */
    uint32_t sub;               /* dense sub number: the sub entered or left */
    uint32_t goto_from;         /* GOTO: the sub being replaced */
    uint32_t named;             /* the sub dprofpp books the record to: the
                                   sub a '-' record names (after 'goto &sub'
                                   DProf names the sub that did the goto), for
                                   '/' the running sub (the old format: the
                                   one the record names), else as sub */
    uint32_t depth;             /* frames on the stack after an ENTER or GOTO,
                                   before a LEAVE, DIE or FAKE_LEAVE (1 = called
                                   from the main program) */
    double user, sys, real;     /* clocks at this record, ticks since start */
    uint64_t line;              /* line of the record (1-based) */
} nytp_dprof_event;

enum nytp_dprof_flags {
    /* At end of input, leave the subs still running (as dprofpp -F does)
     * instead of failing with NYTP_E_TRUNCATED; a last line without its
     * newline (a killed run's last flush) is left out, not an error (see
     * nytp_dprof_cut_line). */
    NYTP_DPROF_FAKE_EXITS = 1
};

/* Reads the header (through the PART2 line).  Takes ownership of in, also
 * on failure. */
int nytp_dprof_open(nytp_dprof **d, nytp_in *in, unsigned flags, nytp_error *err);
void nytp_dprof_close(nytp_dprof *d);

const nytp_dprof_header *nytp_dprof_get_header(const nytp_dprof *d);

/* Next event: NYTP_OK, NYTP_END at a clean end, or an error
 * (NYTP_E_FORMAT, NYTP_E_TRUNCATED, NYTP_E_IO, NYTP_E_NOMEM). */
int nytp_dprof_next(nytp_dprof *d, nytp_dprof_event *ev, nytp_error *err);

/* Subs seen so far, and the name of one ("main::foo"). */
uint32_t nytp_dprof_sub_count(const nytp_dprof *d);
const char *nytp_dprof_sub_name(const nytp_dprof *d, uint32_t sub);
/* Line number of the last line read. */
uint64_t nytp_dprof_line(const nytp_dprof *d);
/* With NYTP_DPROF_FAKE_EXITS: the number of a last line that was cut
 * short and left out, else 0. */
uint64_t nytp_dprof_cut_line(const nytp_dprof *d);

#endif

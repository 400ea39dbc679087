/* compare.h — two sides of runs, BASE (side 0) and NEW (side 1), matched
 * into rows: subs, lines, files and the total, each holding its values
 * in every run, the centre (median) of each side and, with two runs a
 * side or more, the p-value of Welch's t-test on the logs (stats.h) of
 * the measure compared.  Names are matched across checkouts (pathmap.h).
 * What 'nytp diff' and 'nytp html --base' compare with.
 *
 *     comparison C;
 *     cmp_init(&C, &opts);
 *     cmp_add_run(&C, 0, base_run);  ...  cmp_add_run(&C, 1, new_run);
 *     cmp_compute(&C);
 *     for (uint32_t r = 0; r < C.subs.keys.n; r++)
 *         ... C.subs.row[r].centre[1][CMP_TIME], C.subs.row[r].p, cmp_val(&C.subs, r, q) ...
 *     cmp_release(&C);
 *
 * The profiles are the caller's, and must stay until cmp_release.  A row
 * that a run lacks counts 0 in that run.
 */
#ifndef NYTP_COMPARE_H
#define NYTP_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nytp/model.h"
#include "pathmap.h"
#include "strmap.h"

/* The quantities of a row: time (exclusive time of a sub, statement time
 * of a line or file), a sub's inclusive time, statements executed (a
 * sub's: on its own lines, those of subs defined inside it left out),
 * calls (of a sub; made on a line, in a file). */
enum cmp_q { CMP_TIME, CMP_INCL, CMP_STMTS, CMP_CALLS, CMP_NQ };

/* What is compared and tested: --by. */
enum cmp_measure { CMP_BY_TIME, CMP_BY_STATEMENTS, CMP_BY_CALLS };

typedef struct cmp_opts {
    enum cmp_measure by;
    bool normalize;         /* every run scaled by its speed against BASE: the mean of
                               the middle half of its subs' ratios to BASE (by weight) */
    pathmap_opts paths;
} cmp_opts;

typedef struct cmp_row {
    uint32_t file, line;        /* lines: the file's key (in cmp.line_files) and line */
    uint32_t runs[2];           /* runs of each side that have it */
    uint32_t ref_run[2];        /* the first of them (or NYTP_NONE) ... */
    uint32_t ref_id[2];         /* ... and its sub id (subs) or fid (lines, files) there */
    double centre[2][CMP_NQ];   /* medians of the runs of each side */
    double p;                   /* the measure's test; NAN: not computed */
} cmp_row;

typedef struct cmp_table {
    strmap keys;                /* the rows' keys: a name, or (file, line) as bytes */
    cmp_row *row;
    uint32_t cap;
    double *val;                /* per row, per quantity: the value of each run,
                                   BASE's runs then NEW's */
    uint32_t cap_val;
} cmp_table;

typedef struct cmp_side {
    nytp_profile **run;
    uint32_t n, cap;
    double *scale;              /* per run: the factor of --normalize (1 without) */
    bool stmts;                 /* every run has statement times */
} cmp_side;

typedef struct comparison {
    cmp_opts o;
    cmp_side s[2];
    pathmap *paths;
    cmp_table subs, lines, files;
    strmap line_files;          /* the file keys of lines */
    cmp_row total;              /* the measure's total; its values in total_val */
    double *total_val;          /* per quantity, per run (CMP_INCL unused) */
    bool total_is_stmts;        /* the total time is that of the statements, else
                                   of the subs (a side without statement data) */
    bool stats;                 /* both sides have 2 runs or more: p-values */
    bool oom;
    char *tmp;                  /* a key being made */
    size_t cap_tmp;
} comparison;

void cmp_init(comparison *C, const cmp_opts *o);
/* One run of a side (a loaded, finished profile).  NYTP_OK or NYTP_E_NOMEM. */
int cmp_add_run(comparison *C, int side, nytp_profile *p);
/* The rows, centres and tests.  NYTP_OK or NYTP_E_NOMEM. */
int cmp_compute(comparison *C);
void cmp_release(comparison *C);

/* How many runs both sides have. */
static inline uint32_t cmp_nruns(const comparison *C)
{
    return C->s[0].n + C->s[1].n;
}
/* The values of quantity q of row r, one per run (BASE's, then NEW's). */
static inline const double *cmp_vals(const comparison *C, const cmp_table *t, uint32_t r, enum cmp_q q)
{
    return t->val + ((size_t)r * CMP_NQ + q) * cmp_nruns(C);
}
static inline const double *cmp_total_vals(const comparison *C, enum cmp_q q)
{
    return C->total_val + (size_t)q * cmp_nruns(C);
}
/* Statements executed on each sub's own lines (those of subs defined
 * inside it left out; subs never called have none) into stmts[0..n_subs),
 * which the caller zeroes.  False when out of memory. */
bool cmp_sub_statements(const nytp_profile *p, double *stmts);
/* The quantity --by compares. */
enum cmp_q cmp_measure_q(const comparison *C);
/* Whether the row is on one side only: "added" (NEW only), "removed". */
static inline bool cmp_added(const cmp_row *r)
{
    return !r->runs[0];
}
static inline bool cmp_removed(const cmp_row *r)
{
    return !r->runs[1];
}
/* The change of the centres in percent (INFINITY from 0 to more, NAN
 * from 0 to 0). */
double cmp_pct(double base, double now);
/* The measure's p-value of a row (NAN without tests) for a test of the
 * two sides' runs of quantity q of values v (cmp_vals). */
double cmp_test(const comparison *C, const double *v, enum cmp_q q);

/* The p-value of "NEW's runs are no more than ratio times BASE's" (NAN
 * without tests): small when they grew by more than that for sure. */
double cmp_test_above(const comparison *C, const double *v, enum cmp_q q, double ratio);

/* Lookups by the names of a profile of a side (not necessarily one of
 * its runs: the report of the NEW runs loaded as one); NYTP_NONE when the
 * comparison has no such row. */
uint32_t cmp_find_sub(comparison *C, int side, const nytp_profile *p, uint32_t sid);
uint32_t cmp_find_line(comparison *C, int side, const nytp_profile *p, uint32_t fid, uint32_t line);
uint32_t cmp_find_file(comparison *C, int side, const nytp_profile *p, uint32_t fid);
/* The key of file fid among the lines' files (C->line_files): with a line
 * number, the key of its row in C->lines (see compare.c's line_row). */
uint32_t cmp_find_line_file(comparison *C, int side, const nytp_profile *p, uint32_t fid);

#endif

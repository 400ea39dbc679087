/* diff_impl.h — what the files of 'nytp diff' share (private to them):
 * the options, the two sides, the comparison and the functions one file
 * offers another.  In layers: compare.c (the rows, shared with html) and
 * flame_diff.c below; diff_compare.c (the order of the rows and the check
 * of --fail-above); diff_text.c and diff_json.c (the outputs) above it;
 * diff.c (options, loading, the command) on top. */
#ifndef NYTP_DIFF_IMPL_H
#define NYTP_DIFF_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "compare.h"
#include "dump_data.h"
#include "nytp/calltree.h"
#include "nytp/model.h"
#include "nytp/io.h"
#include "strmap.h"
#include "term.h"
#include "viewopt.h"

enum { EXIT_GREW = 3 };

struct diff_opts {
    bool json, svg, strict, sum;
    unsigned long n;
    double fail_above;      /* percent; < 0: no check */
    double min_time;        /* seconds (or statements, calls), or ... */
    double min_pct;         /* ... percent of BASE's total when >= 0 */
    double alpha;           /* significance level */
    const char *title, *output;
    cmp_opts c;             /* --by, --normalize, --strip, --map */
    viewopt vo;             /* --focus, --ignore, --hide, --max-recursion */
};

typedef struct side {
    char **files;
    int nfiles;
    const nytp_calltree *t; /* --svg: the runs' call trees added up */
    nytp_calltree *own_t;   /* the same when built here (freed with the diff) */
    bool any_input;         /* for the call tree feed */
} side;

typedef struct diff {
    struct diff_opts *o;
    side s[2];
    comparison C;
    nytp_profile **own;     /* the profiles loaded here (freed with the diff) */
    uint32_t n_own;
    uint32_t *order_sub, *order_line, *order_file;
    /* The check: Holm-adjusted p-values over the subs it looks at and
     * the total (NAN: not looked at, or no test) */
    double *adj_sub;
    double adj_total;
    dump_data_opts names;
    term t;
    bool oom;
    /* A side with a sampled run (sample=HZ): its counts are unknown, shown
     * as such (null, not a number), and --by=statements/calls refused */
    bool sampled[2];
    /* A side with a run traced without sampling */
    bool traced[2];
    /* --focus/--ignore/--hide: each side's view stats (its runs added up)
     * and the line saying what was left out; "" without a view */
    nytp_view_stats vstats[2];
    char view_line[2500];
} diff;

/* diff_compare.c: the order, the check */
int diff_compute(diff *D);
void diff_free(diff *D);
/* The measure's values: change of the centres, centre of a side. */
double diff_delta(const diff *D, const cmp_row *r);
double diff_centre(const diff *D, const cmp_row *r, int k);
/* A change that the test cannot tell from noise (p >= alpha); false
 * without tests. */
bool diff_noise(const diff *D, const cmp_row *r);
double diff_min_time(const diff *D);
bool diff_total_grew(const diff *D);
bool diff_sub_grew(const diff *D, uint32_t row, double min);
size_t diff_limit(const diff *D, size_t n);
void diff_report_growth(diff *D, double min);
/* "time", "statements" or "calls" */
const char *diff_measure_name(const diff *D);
/* A value for people, into b (40 bytes): of the measure ("1.23ms",
 * "+1200"), or a count (a median of an even number of runs may end in .5). */
void diff_value_text(const diff *D, char *b, double v, bool sign);
void diff_count_text(char *b, double v, bool sign);
/* Whether counts can be compared: neither side was sampled. */
static inline bool diff_counts_known(const diff *D)
{
    return !D->sampled[0] && !D->sampled[1];
}

/* the outputs */
int diff_write_fitted(diff *D, nytp_out *out);              /* diff_text.c */
void diff_write_json(diff *D, nytp_out *out, double min);   /* diff_json.c */

#endif

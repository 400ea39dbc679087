/* diff_impl.h — what the files of 'nytp diff' share (private to them):
 * the options, the two sides, the rows matched by name, and the
 * functions one file offers another.  In layers: diff_compare.c at the
 * bottom; diff_text.c, diff_json.c and diff_svg.c (the outputs) above it;
 * diff.c (options, loading, the command) on top. */
#ifndef NYTP_DIFF_IMPL_H
#define NYTP_DIFF_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "dump_data.h"
#include "nytp/calltree.h"
#include "nytp/model.h"
#include "nytp/io.h"
#include "strmap.h"
#include "term.h"

enum { EXIT_GREW = 3 };

struct diff_opts {
    bool normalize, json, svg, strict;
    unsigned long n;
    double fail_above;      /* percent; < 0: no check */
    double min_time;        /* seconds, or ... */
    double min_pct;         /* ... percent of BASE's total when >= 0 */
    const char *title, *output;
};


typedef struct side {
    char **files;
    int nfiles;
    nytp_profile *p;
    const nytp_calltree *t; /* --svg only */
    nytp_calltree *own_t;   /* the same when loaded here (freed with the diff) */
    bool any_input;         /* for the call tree feed */
    double stmt_total, sub_total, total;
    uint64_t calls;
} side;

typedef struct sub_row {
    double excl[2], incl[2];
    uint64_t calls[2];
    bool present[2];
    uint32_t sid[2];        /* NYTP_NONE: not on that side */
} sub_row;

typedef struct time_row {   /* a line (file key + line) or a file */
    double time[2];
    int64_t count[2];
    bool present[2];
    uint32_t file;          /* lines: the index of the file name in the line map's file names */
    uint32_t line;
    uint32_t fid[2];        /* for the source of a line */
} time_row;

typedef struct diff {
    struct diff_opts *o;
    side s[2];
    double scale;           /* NEW's times are multiplied by it (--normalize) */
    strmap subs, lines, files, line_files;
    sub_row *sub;
    time_row *line, *file;
    uint32_t cap_sub, cap_line, cap_file;
    uint32_t *order_sub, *order_line, *order_file;
    dump_data_opts names;
    term t;
    char *norm;             /* normalising buffer */
    size_t cap_norm;
    bool borrowed;          /* the profiles are the caller's */
    bool oom;
} diff;

/* diff_compare.c: the map of names to rows */
uint32_t diff_bmap_find(strmap *m, const char *key, size_t len, bool add, bool *added, bool *oom);
bool diff_grow_rows(void **v, uint32_t *cap, uint32_t need, size_t size);
/* the rows, their order and the check */
int diff_compute(diff *D);
void diff_free(diff *D);
double diff_sub_delta(const sub_row *r);
double diff_pct_change(double base, double now);
double diff_min_time(const diff *D);
bool diff_total_grew(const diff *D);
bool diff_sub_grew(const diff *D, const sub_row *r, double min);
size_t diff_limit(const diff *D, size_t n);
void diff_report_growth(diff *D, double min);

/* the outputs */
int diff_write_fitted(diff *D, nytp_out *out, double min);  /* diff_text.c */
void diff_write_json(diff *D, nytp_out *out, double min);   /* diff_json.c */
int diff_write_svg(diff *D, nytp_out *out);                 /* diff_svg.c */

#endif

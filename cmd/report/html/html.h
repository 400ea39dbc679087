/* html.h — the parts of 'nytp html' shared by its files: a page writer
 * that escapes whatever comes from the profile, and the report state
 * (page names, per-file totals, sub orders) computed once from the model.
 *
 * The files, in layers: each calls only files below it.
 *   write.c      the page writer (hw_*), page frame, links, the subs table,
 *                the change columns of a report with --base
 *   durations.c  per-sub histograms of call durations (and their HTML)
 *   returns.c    the call tree and the durations, built on a second thread
 *   packages.c   subs by package: the index's section, packages.html
 *   callgraph.c  calls between subs: nytp.js data, --dot files
 *   index.c      index.html and subs.html
 *   file.c       a source file's pages
 *   assets.c     nytp.css and nytp.js
 *   html.c       the command: loading, report state, who writes what */
#ifndef NYTP_HTML_H
#define NYTP_HTML_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cli.h"
#include "compare.h"
#include "dump_data.h"
#include "nytp/calltree.h"

/* One page being written; err is the first write error (sticky). */
typedef struct hw {
    nytp_out *out;
    int err;
} hw;

void hw_put(hw *w, const char *s, size_t n);
void hw_s(hw *w, const char *markup);          /* our own markup, as is */
void hw_esc(hw *w, const char *text, size_t n); /* anything from the profile */
void hw_id(hw *w, const nytp_profile *p, uint32_t str_id); /* a model string, escaped */
void hw_u(hw *w, uint64_t v);
void hw_nv(hw *w, double d);                   /* exact (%.15g), for data-v */
void hw_dur(hw *w, double secs);               /* for people: 1.23ms */
void hw_pct(hw *w, double part, double whole); /* 12.3% */
void hw_count(hw *w, uint64_t v);              /* for prose: 1,234,567 */

enum html_view { VIEW_LINE, VIEW_BLOCK, VIEW_SUB };

/* What wrote the profile, for naming it. */
enum html_source { SOURCE_NYTPROF, SOURCE_NYTP, SOURCE_DPROF };

/* A time of day in the local time zone with the zone named. */
void html_time_of_day(time_t t, char *buf, size_t size);

typedef struct html_edge {
    uint32_t caller, called;  /* sub ids */
    uint64_t calls;
    double incl;
} html_edge;

/* Per-sub distributions of call durations (html_durations.c). */
typedef struct html_durations html_durations;
typedef struct html_dist html_dist;
int html_durations_new(html_durations **d);
void html_durations_free(html_durations *d);
/* One call of the sub named name returned after ticks (inclusive). */
int html_durations_add(html_durations *d, const char *name, uint32_t len, double ticks);
/* The same, with key a small number the caller gives this name and no
 * other (the call tree's name id): the name is hashed only the first
 * time a key comes. */
int html_durations_add_key(html_durations *d, uint32_t key, const char *name, uint32_t len, double ticks);
const html_dist *html_durations_get(const html_durations *d, const char *name, uint32_t len);
/* How many calls a histogram holds (0 for none). */
uint64_t html_dist_calls(const html_dist *h);
/* A small histogram and p50/p90/p99/max, for a sub with 2 calls or more. */
void html_dist_write(hw *w, const html_dist *h, double ticks_per_sec);

/* The call tree and the durations, fed from the load on a second thread
 * (html_returns.c).  add takes every chunk (SUB_RETURN and ATTRIBUTE
 * count), end_input closes an input's open frames; after finish (which
 * waits for the thread) t and d are complete and belong to the caller
 * again.  Each returns NYTP_OK or NYTP_E_NOMEM. */
typedef struct html_returns html_returns;
int html_returns_new(html_returns **h, nytp_calltree *t, html_durations *d);
int html_returns_add(html_returns *h, const nytp_chunk *c);
int html_returns_end_input(html_returns *h);
int html_returns_finish(html_returns *h);
void html_returns_free(html_returns *h);

/* --base: the report's profile compared with base runs (compare.h), and
 * where each sub, file and line of the report is in the comparison,
 * found once before the pages are written (the pages, two threads at a
 * time, only read). */
typedef struct html_compare {
    comparison C;             /* BASE's runs (side 0) against NEW's (side 1) */
    uint32_t *sub_row;        /* by sub id of the report: its row in C.subs, or NYTP_NONE */
    uint32_t *file_row;       /* by fid: the row of its file in C.files, or NYTP_NONE */
    uint32_t *line_file;      /* by fid: its key in C.line_files, or NYTP_NONE */
    char **base;              /* the base files as given */
    int n_base;
    nytp_calltree *base_tree; /* their call trees added up, for the differential
                                 flame graph; NULL: no flame graph */
    bool sampled[2];          /* BASE, this profile: a run of that side was sampled */
    char sampled_note[2][160]; /* cli_sampled_note of the first such run */
} html_compare;

typedef struct html_report {
    const nytp_profile *p;
    const html_compare *cmp;  /* NULL: no --base */
    cli_outdir dir;
    bool minimal, flame;
    bool in_memory;           /* pages go to memory and are dropped (fuzzing) */
    bool flame_empty;         /* wanted, but the profile has no sub returns */
    bool flame_sites;         /* no sub returns: the graph is of call-site paths */
    const char *view_line;    /* --focus/--ignore/--hide: what was left out; NULL: no view */
    enum html_source source;
    dump_data_opts names;     /* for display names (@INC stripped) */
    char **page;              /* by fid: page name of the line view, NULL: none */
    char **shown;             /* by fid: name shown for the file */
    double *own_time, *all_time;    /* by fid; all: with nested string evals */
    int64_t *own_stmts, *all_stmts;
    struct html_eval_subs {   /* by fid: subs defined in a string eval and the evals it ran */
        uint32_t n;
        uint64_t calls;
        double incl;
    } *eval_subs;
    uint32_t *sub_files;      /* by sub: distinct files it is called from */
    char **sub_shown;         /* by sub: name with @INC paths shortened, NULL: as is */
    uint32_t *by_excl;        /* sub ids, by the measure (--by) descending: exclusive
                                 time, statements or calls */
    enum cmp_measure by;      /* --by: what the subs are ranked and compared by */
    double *sub_stmts;        /* by sub, with --by=statements: statements on its lines */
    double active;            /* profiler active seconds */
    double excl_total, excl_max; /* exclusive time of all subs, of the top one */
    uint32_t n_source_files, n_evals;
    uint32_t n_empty_files;   /* declared, nothing in them: no page */
    char flame_url[128];      /* the flame graph's link of a frame */
    unsigned flame_w, flame_h; /* its size in pixels */
    unsigned flamewidth;      /* --flamewidth, 0: the default */
    bool dot;                 /* --dot: Graphviz files too */
    const html_durations *durations; /* NULL: the profile has no call events */
    html_edge *edges;         /* calls between subs, by caller then called */
    uint32_t n_edges;
    pthread_mutex_t *dir_lock; /* while two threads write pages: for dir */
    atomic_uint pages_done;   /* progress */
    atomic_uint pages_total;
} html_report;

/* Write every page of p's report (no flame graph) into memory and drop
 * it: what the fuzz target runs.  Returns an exit code. */
int html_write_memory(const nytp_profile *p);

/* Page name of fid's view (written into buf, >= 96 bytes). */
void html_page_name(const html_report *r, uint32_t fid, enum html_view v, char *buf);

/* Each writes one page (or asset) into r->dir; returns an exit code. */
int html_write_assets(html_report *r);
int html_write_index(html_report *r);
int html_write_subs(html_report *r);
int html_write_file(html_report *r, uint32_t fid, enum html_view v);
/* eval_subs, summed from the deepest evals up; false when out of memory */
bool html_eval_subs_init(html_report *r);

/* The page frame, links and tables (write.c), shared by the pages. */
nytp_out *html_dir_file(html_report *r, const char *name); /* cli_outdir_file, under dir_lock */
bool html_page_open(html_report *r, hw *w, const char *name);
int html_page_close(html_report *r, hw *w, const char *name);
void html_page_head(hw *w, const char *title, size_t tlen); /* title: text, escaped here */
void html_nav(html_report *r, hw *w, const char *here);
void html_page_foot(hw *w);
void html_sub_url(const html_report *r, uint32_t sid, char *buf, size_t size); /* >= 128 */
void html_sub_href(html_report *r, hw *w, uint32_t sid);    /* <a href="..."> */
void html_sub_link(html_report *r, hw *w, uint32_t sid);    /* <a ...>name</a> */
void html_td_dur(hw *w, double secs);
void html_td_u(hw *w, uint64_t v);
/* A count, or "?" where the profile's counts are unknown (sampled). */
void html_td_count(hw *w, const nytp_profile *p, uint64_t v);
/* What a sub is: lines known; defined in a file of the profile; a
 * headline on its file's page; an opcode (CORE:...); an xsub. */
bool html_sub_has_lines(const nytp_sub *s);
bool html_sub_defined_here(const nytp_profile *p, const nytp_sub *s);
bool html_sub_has_headline(const nytp_sub *s);
bool html_is_opcode(const nytp_profile *p, const nytp_sub *s);
bool html_is_xsub(const nytp_sub *s);
/* A sub's name, escaped; a link to a line (with its file's name if
 * with_file) and to a file's page. */
void html_sub_name(html_report *r, hw *w, uint32_t sid);
void html_line_link(html_report *r, hw *w, uint32_t fid, uint32_t line, bool with_file);
void html_file_link(html_report *r, hw *w, uint32_t fid);
/* A sortable table of subs ids[0..n) with the table id given. */
void html_subs_table(html_report *r, hw *w, const uint32_t *ids, uint32_t n, bool all_columns,
                     const char *id);

/* --base (write.c): the comparison's row of a sub, a file (its root
 * file's) or a line of the report, NULL when there is no comparison or
 * the comparison has no such row; the headings "Before, After, Change[,
 * p]" and the cells of a row in quantity q (a NULL row: blank cells), and
 * how many columns they are (0 without --base); a note on what they are. */
const cmp_row *html_cmp_sub(const html_report *r, uint32_t sid);
const cmp_row *html_cmp_file(const html_report *r, uint32_t fid);
const cmp_row *html_cmp_line(const html_report *r, uint32_t fid, uint32_t line);
void html_change_heads(const html_report *r, hw *w, const char *what);
/* The quantity the change columns show (--by): time, statements, calls;
 * and in words, for a sub and for a line or file. */
enum cmp_q html_q(const html_report *r);
const char *html_q_words(const html_report *r, const char *time_words);
void html_change_cells(const html_report *r, hw *w, const cmp_row *row, enum cmp_q q);
unsigned html_change_cols(const html_report *r);
/* Under a heading of a figure summed over the report's runs, with
 * --base and several: "sum of 3 runs" (the change columns are medians). */
void html_sum_label(const html_report *r, hw *w);
/* "1 run", "3 runs". */
void html_runs(hw *w, uint32_t n);
/* The change of a row in words: "+12.0%, p=0.003", "~, p=0.41", "new". */
void html_change_words(const html_report *r, hw *w, const cmp_row *row, enum cmp_q q);
void html_change_note(const html_report *r, hw *w);

/* Packages (packages.c): subs grouped by package, the packages by
 * exclusive time descending. */
typedef struct html_pkg {
    uint32_t start, n;        /* its subs: ids[start .. start+n), exclusive time descending */
    uint32_t called;          /* of them called */
    uint64_t calls;
    double excl;
    size_t name_len;          /* the package: the first name_len bytes of its first sub's name */
} html_pkg;
typedef struct html_pkgs {
    uint32_t *ids;
    html_pkg *v;
    uint32_t n;
} html_pkgs;
int html_pkgs_build(const html_report *r, html_pkgs *out);
void html_pkgs_free(html_pkgs *pk);
/* The package's name, escaped, or "(no package)". */
void html_pkg_name(const html_report *r, hw *w, const html_pkgs *pk, uint32_t i);
int html_write_packages(html_report *r);
/* The index's section: every package, linked to its part of packages.html. */
void html_packages_section(html_report *r, hw *w);
/* The index's first sentence: which package dominates, and its top subs. */
void html_index_lead(html_report *r, hw *w);

/* Call graphs (callgraph.c): calls between subs, summed per
 * (caller, called) pair from the call sites. */
int html_edges_build(html_report *r);          /* into r->edges */
/* "var nytpSubs = [...], nytpEdges = [...];" for nytp.js. */
void html_callgraph_script(html_report *r, hw *w);
/* --dot: packages-callgraph.dot, subs-callgraph.dot, and one per file. */
int html_write_dot(html_report *r);
bool html_file_has_dot(const html_report *r, uint32_t fid);
void html_dot_name(const html_report *r, uint32_t fid, char *buf); /* >= 112 bytes */

/* The CSS and JavaScript of every page. */
extern const char html_css[];
extern const char html_js[];

#endif

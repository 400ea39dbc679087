/* nytp/model.h — a profile loaded into memory: what every report reads.
 *
 *     nytp_profile *p;
 *     nytp_profile_new(&p, &e);
 *     nytp_profile_load(p, "a.out", &opts, &e);   // once per input file
 *     nytp_profile_load(p, "b.out", &opts, &e);
 *     nytp_profile_finish(p);                      // derived attributes
 *     ... read p->files, p->subs, p->sites ...
 *     nytp_profile_free(p);
 *
 * The rules are those of Devel::NYTProf::Data (6.x) loading a file with
 * skip_collapse_evals: statement time and count per line (a DISCOUNT makes
 * the next statement add time but no count), call arcs summed per called
 * sub and calling fid:line, sub totals summed over their arcs, and the
 * derived attributes (complete, profiler_duration, total_stmts_measured,
 * ...).  Collapsing sibling string evals is a separate step,
 * nytp_profile_collapse_evals.
 *
 * Memory grows with distinct files, lines, subs and call sites, never with
 * the number of events nor with line numbers.  Lookups by fid are array
 * indexing; by (fid, line), a binary search; by file name and sub name,
 * hashing.
 */
#ifndef NYTP_MODEL_H
#define NYTP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nytp/error.h"
#include "nytp/reader.h"

#define NYTP_NONE UINT32_MAX

/* Time and count of statements on one line (or block, or sub). */
typedef struct nytp_linestat {
    double time;    /* seconds */
    int64_t count;  /* statements executed; a DISCOUNT adds time but no count */
    uint32_t line;  /* the line (for blocks and subs: their first line) */
    bool set;       /* a statement was seen here (true for every entry) */
} nytp_linestat;

/* The lines of one file that have statements, sorted by line: memory
 * follows the lines present, not the line numbers.  Look one up with
 * nytp_lines_get; walk them with v[0..n-1]. */
typedef struct nytp_lines {
    nytp_linestat *v;   /* by increasing line */
    uint32_t n, cap;    /* entries, room */
} nytp_lines;

/* The entry of line, or NULL (binary search). */
const nytp_linestat *nytp_lines_get(const nytp_lines *l, uint32_t line);
/* The highest line with an entry, or 0. */
uint32_t nytp_lines_last(const nytp_lines *l);

typedef struct nytp_text {
    char *ptr;          /* NUL-terminated copy */
    uint32_t len;
    bool utf8;
} nytp_text;

/* The saved source lines of one file (SRC_LINE chunks), sorted by line:
 * memory follows the lines saved, not their numbers.  Look one up with
 * nytp_src_get; walk them with v[0..n-1]. */
typedef struct nytp_srcline {
    uint32_t line;
    nytp_text text;
} nytp_srcline;

typedef struct nytp_src {
    nytp_srcline *v;    /* by increasing line */
    uint32_t n, cap;
} nytp_src;

/* The text saved for line, or NULL (binary search). */
const nytp_text *nytp_src_get(const nytp_src *s, uint32_t line);
/* The highest line with saved text, or 0. */
uint32_t nytp_src_last(const nytp_src *s);

typedef struct nytp_file {
    uint32_t fid;           /* its index in the model's files */
    uint32_t number;        /* the file id the profile gave it: fid, except
                               for ids far beyond the others (a profile
                               naming file 4194303 and a few more), which
                               get the next index instead */
    bool defined;           /* a NEW_FID declared it */
    uint32_t name;          /* string id (nytp_profile_str) */
    uint32_t eval_fid;      /* 0 unless a string eval ... */
    uint32_t eval_line;     /* ... run on this line of eval_fid */
    uint32_t flags, size, mtime;
    uint32_t *evals;        /* fids of the string evals run in this file, in NEW_FID order */
    uint32_t n_evals, cap_evals;
    uint32_t *subs;         /* subs defined here (ids), in SUB_INFO order, distinct */
    uint32_t n_subs, cap_subs;
    uint32_t *sites;        /* call sites on this file's lines (ids) */
    uint32_t n_sites, cap_sites;
    nytp_lines line, block, sub;  /* statement time per line; per block and per
                                     sub first line when the profile has blocks */
    nytp_src src;           /* saved source lines */
    uint32_t merged_evals;  /* sibling evals folded into this one by collapsing */
    /* Derived by nytp_profile_finish and collapsing: where a string eval
     * was run from, however deep the nesting (found once per file, so
     * commands need not walk eval_fid chains).  A cycle of evals (only a
     * corrupt profile has one) is cut where it is found: that file counts
     * as an outermost one, eval_depth 0, though its eval_fid is set. */
    uint32_t eval_depth;    /* 0 for a file, 1 for an eval run in one, 2 for an eval in that, ... */
    uint32_t root_fid;      /* the outermost file it was run from; itself when eval_depth is 0 */
    uint32_t root_line;     /* the line of root_fid that ran the outermost eval; 0 when eval_depth is 0 */
} nytp_file;

typedef struct nytp_sub {
    uint32_t name;          /* string id */
    uint32_t fid;           /* NYTP_NONE: not known (no SUB_INFO) */
    uint32_t first_line, last_line; /* NYTP_NONE when not known */
    uint64_t calls;
    double incl, excl, reci;    /* seconds */
    uint32_t rec_depth;
    bool xsub;              /* marked as an xsub (a fid 0 SUB_CALLERS) */
    uint32_t *sites;        /* call sites that call this sub (ids) */
    uint32_t n_sites, cap_sites;
    uint32_t *callees;      /* call sites of calls made while this sub ran (ids),
                               set by nytp_profile_finish and collapsing */
    uint32_t n_callees;
} nytp_sub;

/* All calls of one sub from one fid:line, summed. */
typedef struct nytp_site {
    uint32_t called;        /* sub id */
    uint32_t fid, line;
    uint64_t count;
    double incl, excl, reci;
    uint32_t rec_depth;
    uint32_t *callers;      /* string ids of the calling subs (a set) */
    uint32_t n_callers, cap_callers;
    uint8_t view;           /* NYTP_SITE_* flags: what a view made of it (0: as profiled) */
} nytp_site;

/* What a view (nytp/view.h, nytp_view_apply_sites) made of a call site. */
enum nytp_site_view {
    /* the called sub is hidden: no calls; incl and excl are the exclusive
     * time of the hidden subs this line reached, now its caller's own */
    NYTP_SITE_HIDDEN = 1,
    /* the view's calls between these subs, split over the lines that make
     * them in proportion to the whole profile's (the call tree has no lines) */
    NYTP_SITE_SHARED = 2,
    /* not in the call tree (no call events for it): as profiled, unfiltered */
    NYTP_SITE_UNVIEWED = 4
};

typedef struct nytp_process {
    uint32_t pid, ppid;
    double start, end;
    bool ended;
    uint32_t input;         /* which input file (0-based) */
} nytp_process;

typedef struct nytp_kv {
    uint32_t key, value;    /* string ids */
} nytp_kv;

typedef struct nytp_profile nytp_profile;

/* The model.  Read the fields; change them only through the functions. */
struct nytp_profile {
    nytp_kv *attrs;          /* in first-seen order; later values replace */
    uint32_t n_attrs, cap_attrs;
    nytp_kv *options;
    uint32_t n_options, cap_options;

    nytp_file *files;        /* indexed by fid; files[0] is never defined */
    uint32_t n_files;        /* highest fid + 1 */
    uint32_t cap_files;
    nytp_sub *subs;
    uint32_t n_subs, cap_subs;
    nytp_site *sites;
    uint32_t n_sites, cap_sites;
    nytp_process *procs;
    uint32_t n_procs, cap_procs;
    /* The string evals (eval_depth > 0) by increasing eval_depth: each
     * comes after the file it was run in.  Walk it backwards to sum evals
     * into their parents.  Derived with eval_depth. */
    uint32_t *evals_by_depth;
    uint32_t n_evals_by_depth;

    /* Derived, as Devel::NYTProf::Data reports them. */
    bool complete;
    bool has_blocks;         /* TIME_BLOCK data was seen */
    double profiler_start_time, profiler_end_time, profiler_duration;
    bool have_start, have_end;
    uint64_t total_stmts_measured, total_stmts_discounted, total_sub_calls;
    double total_stmts_duration;
    double ticks_per_sec;
    uint32_t n_inputs;
    bool truncated;          /* some input was cut short */

    /* Sampled profiles (Devel::NYTP sample=HZ, attribute sample_hz): their
     * times are estimates from samples; their call counts are the calls
     * the sampler saw (a lower bound, there for older readers) and their
     * statement counts 0.  Reports show counts as unknown when
     * counts_unknown. */
    bool counts_unknown;     /* some input was sampled */
    uint32_t n_sampled;      /* inputs that were */
    double sample_hz;        /* the rate of the first of them */
    bool sample_hz_mixed;    /* they were sampled at different rates */
    uint64_t samples;        /* their sample_count attributes, summed */
    uint32_t n_sample_counts; /* inputs that had one (one cut short has none) */

    struct nytp_model_impl *impl; /* indexes, strings, loading state */
};

typedef struct nytp_load_opts {
    nytp_warn_fn warn;       /* warnings: truncation, inputs that disagree, ... */
    void *warn_ctx;
    /* Optional: called with every chunk after the model has taken it, so
     * a caller can build more (a call tree) in the same pass.  A negative
     * return stops loading with that status. */
    int (*on_chunk)(void *ctx, const nytp_chunk *c);
    void *chunk_ctx;
    /* true: on_chunk is not called for the statements (TIME_LINE,
     * TIME_BLOCK, DISCOUNT), most of a profile's chunks, which the model
     * sums and a call tree does not need. */
    bool skip_statements;
} nytp_load_opts;

int nytp_profile_new(nytp_profile **p, nytp_error *err);
void nytp_profile_free(nytp_profile *p);

/* Add one input file ("-" is standard input).  Files of later inputs are
 * matched to earlier ones by name (string evals by their parent and line);
 * line, sub and call data are summed.  Returns NYTP_OK; NYTP_E_TRUNCATED
 * when the input was cut short, in which case everything before the cut
 * is in the model and it is marked incomplete (err says where); or another
 * error for a corrupt or unreadable input, after which the model holds
 * what came before the error. */
int nytp_profile_load(nytp_profile *p, const char *path, const nytp_load_opts *opts,
                      nytp_error *err);
/* The same from a reader (taken over and closed). */
int nytp_profile_load_reader(nytp_profile *p, nytp_reader *r, const char *name,
                             const nytp_load_opts *opts, nytp_error *err);

/* After the last load: derive attributes, give homeless subs a file. */
int nytp_profile_finish(nytp_profile *p);

/* Fold sibling string evals with the same source (and no nested evals)
 * into one, as reports show them: counts and times of the survivor are the
 * sums of its siblings. */
int nytp_profile_collapse_evals(nytp_profile *p);

/* Fold files that are one file named several ways ("/a/./b.pl" and
 * "/a/b.pl"): into[fid] is the fid that file fid is folded into, or fid
 * itself (into has n_files entries; a target must map to itself; string
 * evals are never folded).  The target gets the donors' lines, subs, call
 * sites and evals, and their saved source if it has none; a donor is left
 * empty and undefined, as if never declared.  Call it before collapsing
 * evals. */
int nytp_profile_fold_files(nytp_profile *p, const uint32_t *into);

/* Replace every call site by sites[0..n) (taken over, with their caller
 * arrays; the string ids must be p's, the sub ids and fids valid), the
 * subs' and files' site lists and the callee lists rebuilt from them: for
 * a view's sites (nytp_view_apply_sites).  NYTP_OK or NYTP_E_NOMEM. */
int nytp_profile_replace_sites(nytp_profile *p, nytp_site *sites, uint32_t n);

/* Whether a file has nothing to show: no statements, subs, calls made,
 * string evals or saved source. */
bool nytp_file_is_empty(const nytp_file *f);

/* Strings of the model. */
const char *nytp_profile_str(const nytp_profile *p, uint32_t id);
uint32_t nytp_profile_strlen(const nytp_profile *p, uint32_t id);

/* Lookups; NYTP_NONE or NULL when absent. */
const nytp_file *nytp_profile_file(const nytp_profile *p, uint32_t fid);
uint32_t nytp_profile_fid_by_name(const nytp_profile *p, const char *name, size_t len);
uint32_t nytp_profile_sub_by_name(const nytp_profile *p, const char *name, size_t len);
const nytp_linestat *nytp_profile_line(const nytp_profile *p, uint32_t fid, uint32_t line);
/* The value of attribute/option key, or NULL. */
const char *nytp_profile_attr(const nytp_profile *p, const char *key);
const char *nytp_profile_option(const nytp_profile *p, const char *key);

#endif

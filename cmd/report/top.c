/* top.c — 'nytp top': where the time went, on one screen, like
 * 'pprof -top': the hottest subs, lines (with their source), files and
 * packages of a profile, from the model every report reads.  Sub and
 * package names are cut to the terminal and kept apart by term.c's
 * term_fit_names, and the tables fitted by term_write_table, as diff's. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "dump_data.h"
#include "export.h"
#include "fmt.h"
#include "json.h"
#include "perl_config.h"
#include "term.h"
#include "top.h"
#include "viewopt.h"

static const char usage[] =
    "usage: nytp top [-n N] [--by=excl|incl|calls] [--lines] [--json] [--strict]\n"
    "                " VIEWOPT_SYNOPSIS "\n"
    "                [-o FILE] [-f FILE] [FILE...]\n"
    "\n"
    "Where the time went in NYTProf profiles (default FILE: nytprof.out; '-'\n"
    "reads standard input; several files add up): the hottest subs (exclusive\n"
    "and inclusive time, calls, share of the time in subs, cumulative share),\n"
    "then the hottest lines with their source, the files and the packages.\n"
    "On a terminal the tables fit its width and hot rows are coloured (never\n"
    "with NO_COLOR set); elsewhere $COLUMNS, if set, is the width.\n"
    "\n"
    "  -n, --count=N     rows per table (default 20; 0: all)\n"
    "  --by=KEY          sort by excl (default), incl or calls (lines and files:\n"
    "                    by statements executed; not for a sampled profile,\n"
    "                    whose counts are unknown and shown as ?)\n"
    "  --lines           only the lines table\n"
    "  --json            one JSON document instead of tables\n"
    "  --strict          a truncated profile is an error (exit 1)\n"
    VIEWOPT_USAGE
    "                    (lines and files: 'file:' patterns hide or leave out\n"
    "                    the lines of matching files)\n"
    "  -f, --file=FILE   read FILE (the same as naming it)\n"
    "  -o, --output=FILE write to FILE (atomically) instead of standard output;\n"
    "                    --out is the same\n"
    "  -h, --help        this help\n"
    "\n"
    "Times are seconds of the profile's clock, the values of 'nytp dump --data\n"
    "--collapse-evals' (sibling string evals are folded, as reports show them).\n"
    "With --focus, --ignore or --hide the subs' times are those of the call\n"
    "paths left (inclusive: the time of every path through the sub), and the\n"
    "first line (JSON: \"view\") says what was left out and the share shown.\n"
    "Exit status: 0 ok (a truncated file only warns), 1 bad input, 2 usage.\n";

enum top_by { BY_EXCL, BY_INCL, BY_CALLS };

struct top_opts {
    unsigned long n;
    enum top_by by;
    bool lines_only, json, strict;
    const char *output;
    viewopt vo;
    char view_line[1200];   /* what the view left out; "" without one */
};

enum { OPT_BY = 256, OPT_LINES, OPT_JSON, OPT_STRICT };

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct top_opts *o = ctx;
    if (viewopt_on_opt(&o->vo, opt, arg))
        return;
    switch (opt) {
    case 'n': o->n = cli_parse_count("-n", arg); break;
    case OPT_BY:
        if (strcmp(arg, "excl") == 0)
            o->by = BY_EXCL;
        else if (strcmp(arg, "incl") == 0)
            o->by = BY_INCL;
        else if (strcmp(arg, "calls") == 0)
            o->by = BY_CALLS;
        else
            cli_usage_error("--by takes excl, incl or calls, not '%s'", arg);
        break;
    case OPT_LINES: o->lines_only = true; break;
    case OPT_JSON: o->json = true; break;
    case OPT_STRICT: o->strict = true; break;
    case 'o': o->output = arg; break;
    }
}

/* ---- the rows ------------------------------------------------------------- */

typedef struct line_row {
    uint32_t fid, line;
    double time;
    int64_t count;
} line_row;

typedef struct file_row {
    uint32_t fid;
    double time;
    int64_t count;
} file_row;

typedef struct pkg_row {
    uint32_t first;         /* a sub of the package: its name gives the package */
    size_t len;             /* length of the package name in it */
    uint32_t subs;
    uint64_t calls;
    double excl;
} pkg_row;

/* The source of a file read from disk, split into lines. */
typedef struct disk_src {
    bool tried;
    char *data;
    size_t *start;          /* start[i]: offset of line i+1; start[n]: end */
    uint32_t n;
} disk_src;

typedef struct top {
    const nytp_profile *p;
    struct top_opts *o;
    term t;
    dump_data_opts names;
    char **shown;           /* by fid: the name shown (@INC stripped) */
    disk_src *disk;         /* by fid */
    double sub_total, stmt_total;
    double stmt_hidden, stmt_left_out; /* lines of files a 'file:' pattern matched */
    int64_t stmt_count;
    uint64_t calls_total;
    uint32_t *subs;         /* sub ids, sorted */
    uint32_t n_subs;
    line_row *lines;
    size_t n_lines;
    file_row *files;
    uint32_t n_files;
    pkg_row *pkgs;
    uint32_t n_pkgs;
    bool no_disk;           /* source lines only from the profile */
} top;

static const top *sort_top; /* qsort has no context argument */

static int cmp_names(uint32_t a, uint32_t b)
{
    return strcmp(nytp_profile_str(sort_top->p, a), nytp_profile_str(sort_top->p, b));
}

/* Descending, a NaN (a corrupt profile) last, so that the order is
 * total and qsort is given a consistent comparison. */
static double key(double v)
{
    return isnan(v) ? -INFINITY : v;
}

#define DESC(x, y)                                                                                 \
    do {                                                                                           \
        double x_ = key((double)(x)), y_ = key((double)(y));                                      \
        if (x_ != y_)                                                                              \
            return x_ > y_ ? -1 : 1;                                                               \
    } while (0)

static int cmp_sub(const void *a, const void *b)
{
    const nytp_sub *x = &sort_top->p->subs[*(const uint32_t *)a];
    const nytp_sub *y = &sort_top->p->subs[*(const uint32_t *)b];
    switch (sort_top->o->by) {
    case BY_CALLS: DESC(x->calls, y->calls); break;
    case BY_INCL: DESC(x->incl, y->incl); break;
    case BY_EXCL: break;
    }
    DESC(x->excl, y->excl);
    DESC(x->incl, y->incl);
    DESC(x->calls, y->calls);
    return cmp_names(x->name, y->name);
}

static int cmp_line(const void *a, const void *b)
{
    const line_row *x = a, *y = b;
    if (sort_top->o->by == BY_CALLS)
        DESC(x->count, y->count);
    DESC(x->time, y->time);
    DESC(x->count, y->count);
    if (x->fid != y->fid)
        return x->fid < y->fid ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_file(const void *a, const void *b)
{
    const file_row *x = a, *y = b;
    if (sort_top->o->by == BY_CALLS)
        DESC(x->count, y->count);
    DESC(x->time, y->time);
    DESC(x->count, y->count);
    return x->fid < y->fid ? -1 : x->fid > y->fid;
}


static int cmp_sub_package(const void *a, const void *b)
{
    const nytp_profile *p = sort_top->p;
    const char *x = nytp_profile_str(p, p->subs[*(const uint32_t *)a].name);
    const char *y = nytp_profile_str(p, p->subs[*(const uint32_t *)b].name);
    size_t lx = fmt_package_len(x, strlen(x)), ly = fmt_package_len(y, strlen(y));
    int c = memcmp(x, y, lx < ly ? lx : ly);
    return c ? c : lx < ly ? -1 : lx > ly;
}

static int cmp_pkg(const void *a, const void *b)
{
    const pkg_row *x = a, *y = b;
    if (sort_top->o->by == BY_CALLS)
        DESC(x->calls, y->calls);
    DESC(x->excl, y->excl);
    DESC(x->calls, y->calls);
    const char *nx = nytp_profile_str(sort_top->p, sort_top->p->subs[x->first].name);
    const char *ny = nytp_profile_str(sort_top->p, sort_top->p->subs[y->first].name);
    int c = memcmp(nx, ny, x->len < y->len ? x->len : y->len);
    return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

static int build(top *T)
{
    const nytp_profile *p = T->p;
    uint32_t nf = p->n_files ? p->n_files : 1;
    T->shown = calloc(nf, sizeof *T->shown);
    T->disk = calloc(nf, sizeof *T->disk);
    T->subs = malloc(((size_t)p->n_subs + 1) * sizeof *T->subs);
    T->files = calloc(nf, sizeof *T->files);
    double *ftime = calloc(nf, sizeof *ftime);
    int64_t *fcount = calloc(nf, sizeof *fcount);
    if (!T->shown || !T->disk || !T->subs || !T->files || !ftime || !fcount) {
        free(ftime);
        free(fcount);
        return NYTP_E_NOMEM;
    }
    size_t cap = 0;
    for (uint32_t fid = 1; fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        if (f->defined) {
            uint32_t len = nytp_profile_strlen(p, f->name);
            T->shown[fid] = malloc((size_t)len + 1);
            if (T->shown[fid])
                dump_data_strip_inc(nytp_profile_str(p, f->name), len, &T->names, T->shown[fid]);
        } else {
            T->shown[fid] = malloc(32);
            if (T->shown[fid])
                snprintf(T->shown[fid], 32, "(file %u)", fid);
        }
        if (!T->shown[fid])
            goto nomem;
        uint32_t root = p->files[fid].root_fid;
        enum nytp_view_file_verdict verdict = NYTP_VIEW_SHOWN;
        if (nytp_view_has_file_patterns(T->o->vo.v) && p->files[root].defined)
            verdict = nytp_view_file(T->o->vo.v, nytp_profile_str(p, p->files[root].name));
        for (uint32_t l = 0; l < f->line.n; l++) {
            const nytp_linestat *s = &f->line.v[l];
            if (!s->set)
                continue;
            if (verdict == NYTP_VIEW_LEFT_OUT) {
                T->stmt_left_out += s->time;
                continue;
            }
            if (verdict == NYTP_VIEW_HIDDEN) { /* not shown, still in the totals */
                T->stmt_hidden += s->time;
                T->stmt_total += s->time;
                T->stmt_count += s->count;
                continue;
            }
            T->stmt_total += s->time;
            T->stmt_count += s->count;
            ftime[root] += s->time;
            fcount[root] += s->count;
            if (T->n_lines == cap) {
                cap = cap ? cap * 2 : 1024;
                line_row *v = realloc(T->lines, cap * sizeof *v);
                if (!v)
                    goto nomem;
                T->lines = v;
            }
            T->lines[T->n_lines++] = (line_row){fid, s->line, s->time, s->count};
        }
    }
    for (uint32_t fid = 1; fid < p->n_files; fid++)
        if (ftime[fid] != 0 || fcount[fid] != 0)
            T->files[T->n_files++] = (file_row){fid, ftime[fid], fcount[fid]};
    free(ftime);
    free(fcount);
    ftime = NULL;
    fcount = NULL;

    for (uint32_t i = 0; i < p->n_subs; i++) {
        const nytp_sub *s = &p->subs[i];
        if (s->excl > 0 && isfinite(s->excl))
            T->sub_total += s->excl;
        T->calls_total += s->calls;
        if (s->calls || s->excl != 0 || s->incl != 0)
            T->subs[T->n_subs++] = i;
    }

    /* packages: subs grouped by package name */
    T->pkgs = calloc((size_t)T->n_subs + 1, sizeof *T->pkgs);
    if (!T->pkgs)
        goto nomem;
    sort_top = T;
    if (T->n_subs > 0) /* qsort(NULL, 0) is undefined */
        qsort(T->subs, T->n_subs, sizeof *T->subs, cmp_sub_package);
    for (uint32_t i = 0; i < T->n_subs; i++) {
        if (i == 0 || cmp_sub_package(&T->subs[i - 1], &T->subs[i]) != 0) {
            const char *name = nytp_profile_str(p, p->subs[T->subs[i]].name);
            T->pkgs[T->n_pkgs].first = T->subs[i];
            T->pkgs[T->n_pkgs].len = fmt_package_len(name, strlen(name));
            T->n_pkgs++;
        }
        pkg_row *r = &T->pkgs[T->n_pkgs - 1];
        const nytp_sub *s = &p->subs[T->subs[i]];
        r->subs++;
        r->calls += s->calls;
        r->excl += s->excl;
    }
    if (T->n_pkgs > 0) /* qsort(NULL, 0) is undefined */
        qsort(T->pkgs, T->n_pkgs, sizeof *T->pkgs, cmp_pkg);
    if (T->n_subs > 0) /* qsort(NULL, 0) is undefined */
        qsort(T->subs, T->n_subs, sizeof *T->subs, cmp_sub);
    if (T->n_lines > 0) /* qsort(NULL, 0) is undefined */
        qsort(T->lines, T->n_lines, sizeof *T->lines, cmp_line);
    if (T->n_files > 0) /* qsort(NULL, 0) is undefined */
        qsort(T->files, T->n_files, sizeof *T->files, cmp_file);
    return NYTP_OK;
nomem:
    free(ftime);
    free(fcount);
    return NYTP_E_NOMEM;
}

static void top_free(top *T)
{
    for (uint32_t fid = 0; T->p && fid < T->p->n_files; fid++) {
        if (T->shown)
            free(T->shown[fid]);
        if (T->disk) {
            free(T->disk[fid].data);
            free(T->disk[fid].start);
        }
    }
    free(T->shown);
    free(T->disk);
    free(T->subs);
    free(T->lines);
    free(T->files);
    free(T->pkgs);
}

/* ---- source lines ------------------------------------------------------------ */

#define MAX_SOURCE_BYTES (64u << 20)

/* Read a file named in the profile, if it is a regular file that is not
 * too big (a FIFO or device is never opened for reading: O_NONBLOCK and
 * a check of what was opened). */
static void read_disk(const top *T, uint32_t fid, disk_src *d)
{
    d->tried = true;
    const nytp_file *f = &T->p->files[fid];
    if (!f->defined || f->eval_fid)
        return;
    const char *name = nytp_profile_str(T->p, f->name);
    if (!*name || strlen(name) != nytp_profile_strlen(T->p, f->name))
        return;
    int fd = open(name, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return;
    struct stat sb;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > MAX_SOURCE_BYTES) {
        close(fd);
        return;
    }
    size_t size = (size_t)sb.st_size, got = 0;
    char *data = malloc(size + 1);
    while (data && got < size) {
        ssize_t n = read(fd, data + got, size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!data)
        return;
    uint32_t n = 0;
    for (size_t i = 0; i < got; i++)
        n += data[i] == '\n';
    size_t *start = malloc(((size_t)n + 2) * sizeof *start);
    if (!start) {
        free(data);
        return;
    }
    uint32_t k = 0;
    start[k++] = 0;
    for (size_t i = 0; i < got; i++)
        if (data[i] == '\n' && i + 1 < got)
            start[k++] = i + 1;
    start[k] = got;
    d->data = data;
    d->start = start;
    d->n = k;
}

/* The source text of fid:line without its line end, or NULL. */
static const char *source_line(top *T, uint32_t fid, uint32_t line, size_t *len)
{
    const nytp_file *f = &T->p->files[fid];
    const char *s = NULL;
    size_t n = 0;
    const nytp_text *t = nytp_src_get(&f->src, line);
    if (t) {
        s = t->ptr;
        n = t->len;
    } else {
        disk_src *d = &T->disk[fid];
        if (!d->tried && !T->no_disk)
            read_disk(T, fid, d);
        if (d->data && line >= 1 && line <= d->n) {
            s = d->data + d->start[line - 1];
            n = d->start[line] - d->start[line - 1];
        }
    }
    while (s && n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    *len = n;
    return s;
}

/* ---- JSON ------------------------------------------------------------------------ */

static void jid(json *j, const nytp_profile *p, uint32_t id)
{
    json_str(j, nytp_profile_str(p, id), nytp_profile_strlen(p, id));
}

static void jfile(json *j, const top *T, uint32_t fid)
{
    const nytp_file *f = &T->p->files[fid];
    if (f->defined)
        jid(j, T->p, f->name);
    else
        json_null(j);
}

static double share(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0;
}

static size_t limit(const top *T, size_t n)
{
    return T->o->n && T->o->n < n ? T->o->n : n;
}

/* A count, or null where counts are unknown (a sampled profile). */
static void jcount(json *j, const top *T, uint64_t v)
{
    if (T->p->counts_unknown)
        json_null(j);
    else
        json_u64(j, v);
}

static void rows_subs(top *T, json *j)
{
    const nytp_profile *p = T->p;
    double cum = 0;
    json_array(j);
    for (size_t i = 0; i < limit(T, T->n_subs); i++) {
        const nytp_sub *s = &p->subs[T->subs[i]];
        cum += s->excl;
        json_object(j);
        json_key(j, "name");
        jid(j, p, s->name);
        json_key(j, "file");
        if (s->fid != NYTP_NONE && s->fid < p->n_files)
            jfile(j, T, s->fid);
        else
            json_null(j);
        json_key(j, "first_line");
        if (s->first_line == NYTP_NONE)
            json_null(j);
        else
            json_u64(j, s->first_line);
        json_key(j, "calls");
        jcount(j, T, s->calls);
        json_key(j, "excl");
        json_num(j, s->excl);
        json_key(j, "incl");
        json_num(j, s->incl);
        json_key(j, "excl_share");
        json_num(j, share(s->excl, T->sub_total));
        json_key(j, "cum_share");
        json_num(j, share(cum, T->sub_total));
        json_key(j, "incl_share");
        json_num(j, share(s->incl, T->sub_total));
        json_end(j);
    }
    json_end(j);
}

static void rows_lines(top *T, json *j)
{
    json_array(j);
    for (size_t i = 0; i < limit(T, T->n_lines); i++) {
        const line_row *r = &T->lines[i];
        json_object(j);
        json_key(j, "file");
        jfile(j, T, r->fid);
        json_key(j, "fid");
        json_u64(j, r->fid);
        json_key(j, "line");
        json_u64(j, r->line);
        json_key(j, "time");
        json_num(j, r->time);
        json_key(j, "count");
        if (T->p->counts_unknown)
            json_null(j);
        else
            json_i64(j, r->count);
        json_key(j, "share");
        json_num(j, share(r->time, T->stmt_total));
        json_key(j, "source");
        size_t n;
        const char *src = source_line(T, r->fid, r->line, &n);
        if (src)
            json_str(j, src, n);
        else
            json_null(j);
        json_end(j);
    }
    json_end(j);
}

static void rows_files(top *T, json *j)
{
    json_array(j);
    for (size_t i = 0; i < limit(T, T->n_files); i++) {
        const file_row *r = &T->files[i];
        json_object(j);
        json_key(j, "file");
        jfile(j, T, r->fid);
        json_key(j, "fid");
        json_u64(j, r->fid);
        json_key(j, "time");
        json_num(j, r->time);
        json_key(j, "count");
        if (T->p->counts_unknown)
            json_null(j);
        else
            json_i64(j, r->count);
        json_key(j, "share");
        json_num(j, share(r->time, T->stmt_total));
        json_end(j);
    }
    json_end(j);
}

static void rows_packages(top *T, json *j)
{
    json_array(j);
    for (size_t i = 0; i < limit(T, T->n_pkgs); i++) {
        const pkg_row *r = &T->pkgs[i];
        json_object(j);
        json_key(j, "package");
        json_str(j, nytp_profile_str(T->p, T->p->subs[r->first].name), r->len);
        json_key(j, "subs");
        json_u64(j, r->subs);
        json_key(j, "calls");
        jcount(j, T, r->calls);
        json_key(j, "excl");
        json_num(j, r->excl);
        json_key(j, "share");
        json_num(j, share(r->excl, T->sub_total));
        json_end(j);
    }
    json_end(j);
}

static void write_json(top *T, nytp_out *out)
{
    static const char *const by[] = {"excl", "incl", "calls"};
    const nytp_profile *p = T->p;
    json j;
    json_init(&j, out);
    json_object(&j);
    json_key(&j, "format");
    json_cstr(&j, "nytp-top-1");
    json_key(&j, "by");
    json_cstr(&j, by[T->o->by]);
    json_key(&j, "complete");
    json_bool(&j, p->complete);
    if (*T->o->view_line) {
        json_key(&j, "view");
        json_cstr(&j, T->o->view_line);
    }
    json_key(&j, "totals");
    json_object(&j);
    json_key(&j, "sub_excl");
    json_num(&j, T->sub_total);
    json_key(&j, "sub_calls");
    jcount(&j, T, T->calls_total);
    json_key(&j, "statements");
    json_num(&j, T->stmt_total);
    json_key(&j, "statements_executed");
    if (p->counts_unknown)
        json_null(&j);
    else
        json_i64(&j, T->stmt_count);
    json_key(&j, "profiler_duration");
    json_num(&j, p->profiler_duration);
    json_end(&j);
    if (p->counts_unknown) {
        /* a sampled profile: its counts above are null (unknown) */
        json_key(&j, "sampled");
        json_object(&j);
        json_key(&j, "hz");
        if (p->sample_hz_mixed)
            json_null(&j);
        else
            json_num(&j, p->sample_hz);
        json_key(&j, "samples");
        json_u64(&j, p->samples);
        json_key(&j, "inputs");
        json_u64(&j, p->n_sampled);
        json_end(&j);
    }
    json_key(&j, "rows");
    json_object(&j);
    json_key(&j, "subs");
    json_u64(&j, T->n_subs);
    json_key(&j, "lines");
    json_u64(&j, T->n_lines);
    json_key(&j, "files");
    json_u64(&j, T->n_files);
    json_key(&j, "packages");
    json_u64(&j, T->n_pkgs);
    json_end(&j);
    if (!T->o->lines_only) {
        json_key(&j, "subs");
        rows_subs(T, &j);
    }
    json_key(&j, "lines");
    rows_lines(T, &j);
    if (!T->o->lines_only) {
        json_key(&j, "files");
        rows_files(T, &j);
        json_key(&j, "packages");
        rows_packages(T, &j);
    }
    json_end(&j);
    json_raw(&j, "\n");
}

/* ---- text -------------------------------------------------------------------------- */

static void cell_text(nytp_out *out, const char *text, size_t cols)
{
    term_num(out, text, cols);
}

static void cell_dur(nytp_out *out, double secs, size_t cols)
{
    char b[40];
    *term_dur(b, secs, false) = 0;
    cell_text(out, b, cols);
}

static void cell_pct(nytp_out *out, double pct, size_t cols)
{
    char b[40];
    *term_pct(b, pct, false) = 0;
    cell_text(out, b, cols);
}

static void cell_u(nytp_out *out, uint64_t v, size_t cols)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    cell_text(out, b, cols);
}

/* A count, or "?" where counts are unknown (a sampled profile). */
static void cell_count(const top *T, nytp_out *out, uint64_t v, size_t cols)
{
    if (T->p->counts_unknown)
        cell_text(out, "?", cols);
    else
        cell_u(out, v, cols);
}

/* The colour of a row by its share: hot, warm, or none. */
static void row_colour(const top *T, nytp_out *out, double pct)
{
    if (pct >= 10)
        term_sgr(&T->t, out, TERM_RED);
    else if (pct >= 2)
        term_sgr(&T->t, out, TERM_YELLOW);
}

static bool heading(const top *T, nytp_out *out, const char *title, size_t shown, size_t all)
{
    nytp_out_write(out, "\n", 1);
    term_sgr(&T->t, out, TERM_BOLD);
    if (shown < all)
        nytp_out_printf(out, "%s (top %zu of %zu)", title, shown, all);
    else
        nytp_out_printf(out, "%s (%zu)", title, all);
    term_sgr(&T->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    if (!all)
        nytp_out_write(out, "  (none)\n", 9);
    return all > 0;
}

/* Columns left for the text at the end of a row after used columns. */
static size_t rest(const top *T, size_t used)
{
    if (!T->t.width)
        return 0;
    return T->t.width > used + 8 ? T->t.width - used : 8;
}

/* The name of row i of a table, from the profile (not cleaned). */
static const char *sub_name_of(const top *T, size_t i, size_t *len)
{
    const nytp_sub *s = &T->p->subs[T->subs[i]];
    *len = nytp_profile_strlen(T->p, s->name);
    return nytp_profile_str(T->p, s->name);
}

static const char *pkg_name_of(const top *T, size_t i, size_t *len)
{
    const pkg_row *r = &T->pkgs[i];
    *len = r->len;
    return nytp_profile_str(T->p, T->p->subs[r->first].name);
}

/* Room for n bytes of a cell's text, or NULL with out failed: a table
 * with a cell left out is not printed as if whole. */
static char *cell_room(nytp_out *out, size_t n)
{
    char *p = malloc(n);
    if (!p)
        nytp_out_fail(out, NYTP_E_NOMEM, "out of memory");
    return p;
}

/* The names of the first n rows, cleaned, cut to room columns and kept
 * apart (term_fit_names), with their widths; NULL when out of memory. */
static char **fitted_names(const top *T, size_t n, size_t room,
                           const char *(*name_of)(const top *, size_t, size_t *), size_t **widths)
{
    char **clean = calloc(n + 1, sizeof *clean);
    size_t *lens = calloc(n + 1, sizeof *lens);
    *widths = calloc(n + 1, sizeof **widths);
    char **shown = NULL;
    bool ok = clean && lens && *widths;
    for (size_t i = 0; i < n && ok; i++) {
        size_t len, w;
        const char *s = name_of(T, i, &len);
        if (!(clean[i] = malloc(len * 4 + 1)))
            ok = false;
        else
            lens[i] = term_clean(s, len, false, clean[i], &w);
    }
    if (ok)
        shown = term_fit_names(clean, lens, n, room, *widths);
    for (size_t i = 0; clean && i < n; i++)
        free(clean[i]);
    free(clean);
    free(lens);
    if (!shown) {
        free(*widths);
        *widths = NULL;
    }
    return shown;
}

static void text_subs(top *T, nytp_out *out)
{
    const nytp_profile *p = T->p;
    static const char *const titles[] = {"Subs by exclusive time", "Subs by inclusive time",
                                         "Subs by calls"};
    size_t n = limit(T, T->n_subs);
    if (!heading(T, out, titles[T->o->by], n, T->n_subs))
        return;
    term_sgr(&T->t, out, TERM_DIM);
    nytp_out_printf(out, "%8s %6s %6s %8s %6s %8s  %s", "excl", "excl%", "cum%", "incl", "incl%",
                    "calls", "sub");
    term_sgr(&T->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    size_t room = rest(T, 8 + 1 + 6 + 1 + 6 + 1 + 8 + 1 + 6 + 1 + 8 + 2);
    size_t *widths;
    char **shown = fitted_names(T, n, room, sub_name_of, &widths);
    if (!shown) {
        nytp_out_fail(out, NYTP_E_NOMEM, "out of memory");
        return;
    }
    double cum = 0;
    for (size_t i = 0; i < n; i++) {
        const nytp_sub *s = &p->subs[T->subs[i]];
        cum += s->excl;
        double pct = share(s->excl, T->sub_total);
        row_colour(T, out, pct);
        cell_dur(out, s->excl, 8);
        nytp_out_write(out, " ", 1);
        cell_pct(out, pct, 6);
        nytp_out_write(out, " ", 1);
        cell_pct(out, share(cum, T->sub_total), 6);
        nytp_out_write(out, " ", 1);
        cell_dur(out, s->incl, 8);
        nytp_out_write(out, " ", 1);
        cell_pct(out, share(s->incl, T->sub_total), 6);
        nytp_out_write(out, " ", 1);
        cell_count(T, out, s->calls, 8);
        nytp_out_write(out, "  ", 2);
        {
            size_t w = widths[i];
            nytp_out_write(out, shown[i], strlen(shown[i]));
            /* where it is defined, when there is room */
            if (s->fid != NYTP_NONE && s->fid < p->n_files && T->shown[s->fid] &&
                s->first_line != NYTP_NONE && s->first_line) {
                char loc[64];
                const char *file = T->shown[s->fid];
                const char *slash = strrchr(file, '/');
                file = slash && !p->files[s->fid].eval_fid ? slash + 1 : file;
                size_t fl = strlen(file);
                char *cf = cell_room(out, fl * 4 + 1);
                if (cf) {
                    size_t fw;
                    size_t cl = term_clean(file, fl, false, cf, &fw);
                    snprintf(loc, sizeof loc, ":%u", s->first_line);
                    size_t lw = fw + strlen(loc) + 2;
                    if (!room || w + lw <= room) {
                        term_sgr(&T->t, out, TERM_RESET);
                        term_sgr(&T->t, out, TERM_DIM);
                        nytp_out_write(out, "  ", 2);
                        nytp_out_write(out, cf, cl);
                        nytp_out_write(out, loc, strlen(loc));
                    }
                    free(cf);
                }
            }
        }
        term_sgr(&T->t, out, TERM_RESET);
        nytp_out_write(out, "\n", 1);
    }
    term_free_names(shown, n);
    free(widths);
}

static void text_lines(top *T, nytp_out *out)
{
    size_t n = limit(T, T->n_lines);
    if (!heading(T, out, T->o->by == BY_CALLS ? "Lines by statements executed" : "Lines by time", n,
            T->n_lines))
        return;
    /* the widest location, so that the source column lines up */
    size_t locw = 0;
    for (size_t i = 0; i < n; i++) {
        const line_row *r = &T->lines[i];
        char num[16];
        size_t w = (size_t)snprintf(num, sizeof num, ":%u", r->line), cols;
        const char *file = T->shown[r->fid];
        char *c = cell_room(out, strlen(file) * 4 + 1);
        if (c) {
            term_clean(file, strlen(file), false, c, &cols);
            free(c);
            w += cols;
        }
        if (w > locw)
            locw = w;
    }
    size_t fixed = 8 + 1 + 6 + 1 + 8 + 2;
    if (T->t.width && locw > (T->t.width - fixed) / 2)
        locw = (T->t.width - fixed) / 2 > 12 ? (T->t.width - fixed) / 2 : 12;
    term_sgr(&T->t, out, TERM_DIM);
    nytp_out_printf(out, "%8s %6s %8s  %-*s  %s", "time", "time%", "stmts", (int)locw, "where",
                    "source");
    term_sgr(&T->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    for (size_t i = 0; i < n; i++) {
        const line_row *r = &T->lines[i];
        double pct = share(r->time, T->stmt_total);
        row_colour(T, out, pct);
        cell_dur(out, r->time, 8);
        nytp_out_write(out, " ", 1);
        cell_pct(out, pct, 6);
        nytp_out_write(out, " ", 1);
        cell_count(T, out, r->count < 0 ? 0 : (uint64_t)r->count, 8);
        nytp_out_write(out, "  ", 2);
        term_sgr(&T->t, out, TERM_RESET);
        /* file:line, the file cut at its start when too long */
        const char *file = T->shown[r->fid];
        size_t fl = strlen(file);
        char num[16];
        size_t nw = (size_t)snprintf(num, sizeof num, ":%u", r->line);
        char *cf = cell_room(out, fl * 4 + 1);
        if (cf) {
            size_t fw;
            size_t cl = term_clean(file, fl, false, cf, &fw);
            /* too long: ".." and the end of the path, which says most */
            size_t skip = 0, col = fw;
            if (fw + nw > locw) {
                size_t keep = locw > nw + 2 ? locw - nw - 2 : 0, drop = fw - (keep < fw ? keep : fw);
                for (size_t c = 0; c < drop && skip < cl; c++) {
                    skip++;
                    while (skip < cl && ((unsigned char)cf[skip] & 0xC0) == 0x80)
                        skip++;
                }
                col = fw - drop;
                nytp_out_write(out, "..", 2);
                col += 2;
            }
            nytp_out_write(out, cf + skip, cl - skip);
            nytp_out_write(out, num, nw);
            for (size_t k = col + nw; k < locw; k++)
                nytp_out_write(out, " ", 1);
            free(cf);
        }
        size_t sl;
        const char *src = source_line(T, r->fid, r->line, &sl);
        while (src && sl && (*src == ' ' || *src == '\t')) {
            src++;
            sl--;
        }
        if (src && sl) {
            nytp_out_write(out, "  ", 2);
            char *cs = cell_room(out, sl * 8 + 1);
            if (cs) {
                size_t w;
                size_t len = term_clean(src, sl, true, cs, &w);
                size_t room = rest(T, fixed + locw + 2);
                term_put(out, cs, len, w, room && w > room ? room : 0, TERM_LEFT);
                free(cs);
            }
        } else if (!src) {
            /* neither saved in the profile nor on disk (a string eval's in
             * a profile written by nytp attach or with savesrc=0, a file
             * gone): said, where a blank would read as an empty line */
            nytp_out_write(out, "  ", 2);
            term_sgr(&T->t, out, TERM_DIM);
            nytp_out_printf(out, "(source not available)");
            term_sgr(&T->t, out, TERM_RESET);
        }
        nytp_out_write(out, "\n", 1);
    }
}

static void text_files(top *T, nytp_out *out)
{
    size_t n = limit(T, T->n_files);
    if (!heading(T, out,
            T->o->by == BY_CALLS ? "Files by statements executed (string evals in their file)"
                                 : "Files by time (string evals in their file)",
            n, T->n_files))
        return;
    term_sgr(&T->t, out, TERM_DIM);
    nytp_out_printf(out, "%8s %6s %8s  %s", "time", "time%", "stmts", "file");
    term_sgr(&T->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    size_t fixed = 8 + 1 + 6 + 1 + 8 + 2;
    for (size_t i = 0; i < n; i++) {
        const file_row *r = &T->files[i];
        double pct = share(r->time, T->stmt_total);
        row_colour(T, out, pct);
        cell_dur(out, r->time, 8);
        nytp_out_write(out, " ", 1);
        cell_pct(out, pct, 6);
        nytp_out_write(out, " ", 1);
        cell_count(T, out, r->count < 0 ? 0 : (uint64_t)r->count, 8);
        nytp_out_write(out, "  ", 2);
        const char *file = T->shown[r->fid];
        size_t room = rest(T, fixed);
        char *cf = cell_room(out, strlen(file) * 4 + 1);
        if (cf) {
            size_t w;
            size_t len = term_clean(file, strlen(file), false, cf, &w);
            term_put(out, cf, len, w, room && w > room ? room : 0, TERM_LEFT);
            free(cf);
        }
        term_sgr(&T->t, out, TERM_RESET);
        nytp_out_write(out, "\n", 1);
    }
}

static void text_packages(top *T, nytp_out *out)
{
    size_t n = limit(T, T->n_pkgs);
    if (!heading(T, out, T->o->by == BY_CALLS ? "Packages by calls" : "Packages by exclusive time", n,
            T->n_pkgs))
        return;
    term_sgr(&T->t, out, TERM_DIM);
    nytp_out_printf(out, "%8s %6s %8s %6s  %s", "excl", "excl%", "calls", "subs", "package");
    term_sgr(&T->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    size_t fixed = 8 + 1 + 6 + 1 + 8 + 1 + 6 + 2;
    size_t *widths;
    char **shown = fitted_names(T, n, rest(T, fixed), pkg_name_of, &widths);
    if (!shown) {
        nytp_out_fail(out, NYTP_E_NOMEM, "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const pkg_row *r = &T->pkgs[i];
        double pct = share(r->excl, T->sub_total);
        row_colour(T, out, pct);
        cell_dur(out, r->excl, 8);
        nytp_out_write(out, " ", 1);
        cell_pct(out, pct, 6);
        nytp_out_write(out, " ", 1);
        cell_count(T, out, r->calls, 8);
        nytp_out_write(out, " ", 1);
        cell_u(out, r->subs, 6);
        nytp_out_write(out, "  ", 2);
        if (r->len)
            nytp_out_write(out, shown[i], strlen(shown[i]));
        else
            nytp_out_write(out, "(no package)", 12);
        term_sgr(&T->t, out, TERM_RESET);
        nytp_out_write(out, "\n", 1);
    }
    term_free_names(shown, n);
    free(widths);
}

static void write_text(top *T, nytp_out *out)
{
    const nytp_profile *p = T->p;
    char stmts[40], subs[40], wall[40];
    if (*T->o->view_line)
        nytp_out_printf(out, "%s\n", T->o->view_line);
    *term_dur(stmts, T->stmt_total, false) = 0;
    *term_dur(subs, T->sub_total, false) = 0;
    *term_dur(wall, p->profiler_duration, false) = 0;
    term_sgr(&T->t, out, TERM_BOLD);
    char note[160];
    if (cli_sampled_note(p, note, sizeof note))
        nytp_out_printf(out, "%s of statements, %s in subs, %s profiled%s; %s", stmts, subs, wall,
                        p->complete ? "" : "; the profile is incomplete", note);
    else
        nytp_out_printf(out, "%s of statements (%lld executed), %s in subs (%llu calls), %s "
                             "profiled%s",
                        stmts, (long long)T->stmt_count, subs, (unsigned long long)T->calls_total,
                        wall, p->complete ? "" : "; the profile is incomplete");
    term_sgr(&T->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    if (!T->o->lines_only)
        text_subs(T, out);
    text_lines(T, out);
    if (!T->o->lines_only) {
        text_files(T, out);
        text_packages(T, out);
    }
}

static void write_table(void *ctx, nytp_out *out)
{
    write_text(ctx, out);
}

int top_write_memory(nytp_profile *p)
{
    static const char *inc[] = {"/usr/share/perl5", "/usr/lib"};
    if (nytp_profile_collapse_evals(p) < 0)
        return NYTP_E_NOMEM;
    int st = NYTP_OK;
    for (int by = BY_EXCL; by <= BY_CALLS && st == NYTP_OK; by++) {
        struct top_opts o = {.n = by == BY_CALLS ? 0 : 20, .by = (enum top_by)by,
                             .lines_only = by == BY_INCL};
        top T;
        memset(&T, 0, sizeof T);
        T.p = p;
        T.o = &o;
        T.t.width = 80;
        T.t.colour = true;
        T.no_disk = true;
        T.names.inc = inc;
        T.names.n_inc = 2;
        T.names.perl_version = "5.36.0";
        nytp_out *out;
        nytp_error e = {0};
        st = build(&T);
        if (st == NYTP_OK && nytp_out_open_mem(&out, &e) == NYTP_OK) {
            write_json(&T, out);
            st = term_write_table(&T.t, out, write_table, &T);
            nytp_out_abort(out);
        }
        T.names.inc = NULL;
        top_free(&T);
    }
    return st;
}

/* The profile with its subs' times those of the view of o (the call tree
 * loaded in the same pass, filtered, then given to the model), and
 * o->view_line saying what was left out.  NULL with *rc on failure. */
static nytp_profile *view_profile(int nfiles, char **files, struct top_opts *o, int *rc)
{
    export_profile x;
    if ((*rc = export_load(&x, nfiles, files, o->strict, NULL, NULL)) != EXIT_OK)
        return NULL;
    if (export_apply_view(&x, &o->vo) < 0 ||
        nytp_view_apply_model(o->vo.v, x.p, x.t, x.p->ticks_per_sec) < 0) {
        if (x.t)
            cli_error("out of memory");
        export_release(&x);
        *rc = EXIT_BAD_INPUT;
        return NULL;
    }
    viewopt_header(&o->vo, o->view_line, sizeof o->view_line, x.p->ticks_per_sec);
    nytp_profile *p = x.p;
    x.p = NULL; /* kept; the rest goes */
    export_release(&x);
    return p;
}

int cmd_top(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"count", required_argument, NULL, 'n'},
        {"by", required_argument, NULL, OPT_BY},
        {"lines", no_argument, NULL, OPT_LINES},
        {"json", no_argument, NULL, OPT_JSON},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"output", required_argument, NULL, 'o'},
        VIEWOPT_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct top_opts o = {.n = 20};
    viewopt_init(&o.vo);
    int first = cli_parse(argc, argv, "f:n:o:", longopts, usage, on_opt, &o);
    cli_output_not_input(o.output, argc - first, argv + first, "nytprof.out");

    int rc;
    nytp_profile *p;
    if (viewopt_active(&o.vo)) {
        if ((p = view_profile(argc - first, argv + first, &o, &rc)) == NULL) {
            viewopt_release(&o.vo);
            return rc;
        }
    } else if ((p = cli_load_profile(argc - first, argv + first, o.strict, &rc)) == NULL) {
        return rc;
    }
    if (o.by == BY_CALLS && p->counts_unknown) {
        cli_error("--by=calls: the profile was sampled, its counts are unknown");
        nytp_profile_free(p);
        return EXIT_USAGE;
    }
    top T;
    memset(&T, 0, sizeof T);
    T.p = p;
    T.o = &o;
    term_init(&T.t, o.output);
    char *storage = NULL;
    T.names.inc = dump_data_split_dirs(NYTP_PERL_INC, &T.names.n_inc, &storage);
    T.names.perl_version = NYTP_PERL_VERSION;
    if (!T.names.inc || nytp_profile_collapse_evals(p) < 0 || build(&T) < 0) {
        cli_error("out of memory");
        top_free(&T);
        free((void *)T.names.inc);
        free(storage);
        nytp_profile_free(p);
        return EXIT_BAD_INPUT;
    }
    if (T.stmt_hidden > 0 || T.stmt_left_out > 0) {
        char h[40], l[40];
        *fmt_duration(h, T.stmt_hidden) = 0;
        *fmt_duration(l, T.stmt_left_out) = 0;
        size_t n = strlen(o.view_line);
        double all = T.stmt_total + T.stmt_left_out;
        if (T.stmt_hidden > 0)
            n += (size_t)snprintf(o.view_line + n, sizeof o.view_line - n, "%sstatements of hidden files: %s",
                                  n ? "; " : "", h);
        if (T.stmt_left_out > 0 && n < sizeof o.view_line)
            snprintf(o.view_line + n, sizeof o.view_line - n,
                     "%sstatements left out: %s (%.1f%% of the statement time)", n ? "; " : "", l,
                     all > 0 ? 100 * T.stmt_left_out / all : 0.0);
    }
    nytp_out *out = cli_output_open(o.output);
    if (!out) {
        rc = EXIT_BAD_INPUT;
    } else {
        if (o.json)
            write_json(&T, out);
        else if (term_write_table(&T.t, out, write_table, &T) < 0)
            nytp_out_abort(out), out = NULL;
        if (!out) {
            cli_error("out of memory");
            rc = EXIT_BAD_INPUT;
        } else {
            const nytp_error *e = nytp_out_error(out);
            rc = cli_output_finish(out, o.output, e->status ? e->status : NYTP_OK);
        }
    }
    top_free(&T);
    free((void *)T.names.inc);
    free(storage);
    nytp_profile_free(p);
    viewopt_release(&o.vo);
    return rc;
}

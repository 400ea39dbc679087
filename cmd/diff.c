/* diff.c — 'nytp diff': what got slower or faster between two profiles
 * (or two sets of profiles), as tables, JSON or a differential flame
 * graph, and a check for CI (--fail-above).  A client of the model (subs,
 * lines, files) and, for the flame graph, of the call tree. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "diff.h"
#include "dump_data.h"
#include "flame_svg.h"
#include "fmt.h"
#include "nytp/calltree.h"
#include "perl_config.h"
#include "term.h"

static const char usage[] =
    "usage: nytp diff [options] BASE NEW\n"
    "       nytp diff [options] BASE... -- NEW...\n"
    "\n"
    "Compare two NYTProf profiles: the subs whose exclusive time changed most\n"
    "(time and share of change, calls and inclusive time before and after),\n"
    "then the lines and the files.  Several files on a side (separated by\n"
    "'--') add up, as 'nytp html' adds them.  Subs are matched by name, lines\n"
    "by file name and line, string evals by where they ran (sibling evals on\n"
    "one line summed); what runs on one side only is listed as added or\n"
    "removed.\n"
    "\n"
    "  --normalize          scale NEW to the total of BASE, so that runs of\n"
    "                       different length compare by share of the time\n"
    "  -n, --count=N        rows per table (default 20; 0: all)\n"
    "  --json               one JSON document instead of tables\n"
    "  --svg                a differential flame graph: frames sized by NEW,\n"
    "                       red where slower than BASE, blue where faster (a\n"
    "                       side profiled with calls=0: its call-site paths)\n"
    "  --title=TEXT         the flame graph's title\n"
    "  --fail-above=PCT     exit with status 3 when the total, or a sub whose time\n"
    "                       is above --min-time, grew by more than PCT percent\n"
    "  --min-time=TIME      subs that --fail-above checks: above TIME on either\n"
    "                       side, as seconds (0.01), with a unit (5ms, 200us) or\n"
    "                       a share of BASE's total (2%); default 1%\n"
    "  --strict             a truncated profile is an error (exit 1)\n"
    "  -f, --file=FILE      a profile, as if named where the operands begin: '-f\n"
    "                       BASE -f NEW' is 'BASE NEW'\n"
    "  -o, --output=FILE    write to FILE (atomically); a name ending in .svg\n"
    "                       implies --svg\n"
    "  -h, --help           this help\n"
    "\n"
    "The total is the statement time of each side (the subs' exclusive time\n"
    "when a side has no statement data).  Options may come anywhere; the first\n"
    "'--' separates BASE files from NEW files.\n"
    "Exit status: 0 ok, 1 bad input, 2 usage, 3 --fail-above found growth.\n";

enum { EXIT_GREW = 3 };

struct diff_opts {
    bool normalize, json, svg, strict;
    unsigned long n;
    double fail_above;      /* percent; < 0: no check */
    double min_time;        /* seconds, or ... */
    double min_pct;         /* ... percent of BASE's total when >= 0 */
    const char *title, *output;
};

enum { OPT_NORMALIZE = 256, OPT_JSON, OPT_SVG, OPT_TITLE, OPT_FAIL, OPT_MIN, OPT_STRICT };

/* "5ms", "0.2s", "200us", "100ns", "0.01" (seconds) or "2%". */
static void parse_min_time(struct diff_opts *o, const char *arg)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || !(v >= 0) || !isfinite(v))
        cli_usage_error("--min-time needs a time (0.01, 5ms, 200us) or a share (2%%), not '%s'",
                        arg);
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ns", 1e-9}};
    if (strcmp(end, "%") == 0) {
        o->min_pct = v;
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0) {
            o->min_time = v * units[i].scale;
            o->min_pct = -1;
            return;
        }
    cli_usage_error("--min-time needs a time (0.01, 5ms, 200us) or a share (2%%), not '%s'", arg);
}

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct diff_opts *o = ctx;
    char *end;
    switch (opt) {
    case OPT_NORMALIZE: o->normalize = true; break;
    case OPT_JSON: o->json = true; break;
    case OPT_SVG: o->svg = true; break;
    case OPT_TITLE: o->title = arg; break;
    case OPT_FAIL:
        o->fail_above = strtod(arg, &end);
        if (end == arg || (*end && strcmp(end, "%") != 0) || !(o->fail_above >= 0) ||
            !isfinite(o->fail_above))
            cli_usage_error("--fail-above needs a percentage (10 or 10%%), not '%s'", arg);
        break;
    case OPT_MIN: parse_min_time(o, arg); break;
    case OPT_STRICT: o->strict = true; break;
    case 'n': o->n = cli_parse_count("-n", arg); break;
    case 'o': o->output = arg; break;
    }
}

/* ---- a map from byte strings to dense indexes ------------------------------- */

typedef struct bmap {
    uint32_t *slot;         /* index + 1; 0: empty */
    uint32_t mask;
    char **key;
    uint32_t *len;
    uint32_t n, cap;
} bmap;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static bool bmap_grow(bmap *m)
{
    if (m->mask >= (1u << 30))
        return false;
    uint32_t size = m->mask ? (m->mask + 1) * 2 : 256;
    uint32_t *slot = calloc(size, sizeof *slot);
    if (!slot)
        return false;
    for (uint32_t i = 0; i < m->n; i++) {
        uint32_t h = (uint32_t)hash_bytes(m->key[i], m->len[i]) & (size - 1);
        while (slot[h])
            h = (h + 1) & (size - 1);
        slot[h] = i + 1;
    }
    free(m->slot);
    m->slot = slot;
    m->mask = size - 1;
    return true;
}

/* The index of key; with add, a new one when it is missing (*added set).
 * NYTP_NONE: missing, or out of memory (*oom set). */
static uint32_t bmap_find(bmap *m, const char *key, size_t len, bool add, bool *added, bool *oom)
{
    if (added)
        *added = false;
    if (m->mask) {
        uint32_t h = (uint32_t)hash_bytes(key, len) & m->mask;
        for (; m->slot[h]; h = (h + 1) & m->mask) {
            uint32_t i = m->slot[h] - 1;
            if (m->len[i] == len && memcmp(m->key[i], key, len) == 0)
                return i;
        }
    }
    if (!add)
        return NYTP_NONE;
    if ((uint64_t)(m->n + 1) * 2 > (uint64_t)m->mask + 1 && !bmap_grow(m))
        goto nomem;
    if (m->n == m->cap) {
        /* two arrays, one count: each grows to the same doubling */
        uint32_t ck = m->cap, cl = m->cap;
        if (!cli_grow((void **)&m->key, (size_t)m->n + 1, &ck, sizeof *m->key) ||
            !cli_grow((void **)&m->len, (size_t)m->n + 1, &cl, sizeof *m->len))
            goto nomem;
        m->cap = ck < cl ? ck : cl;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        goto nomem;
    memcpy(copy, key, len);
    copy[len] = 0;
    uint32_t h = (uint32_t)hash_bytes(key, len) & m->mask;
    while (m->slot[h])
        h = (h + 1) & m->mask;
    m->slot[h] = m->n + 1;
    m->key[m->n] = copy;
    m->len[m->n] = (uint32_t)len;
    if (added)
        *added = true;
    return m->n++;
nomem:
    *oom = true;
    return NYTP_NONE;
}

static void bmap_free(bmap *m)
{
    for (uint32_t i = 0; i < m->n; i++)
        free(m->key[i]);
    free(m->key);
    free(m->len);
    free(m->slot);
}

/* ---- the two sides and their rows ---------------------------------------------- */

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
    bmap subs, lines, files, line_files;
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

/* A name with string eval sequence numbers made 0, in D->norm. */
static const char *normalise(diff *D, const char *s, size_t len, size_t *out_len)
{
    if (len + 1 > D->cap_norm) {
        char *b = realloc(D->norm, len + 1);
        if (!b) {
            D->oom = true;
            *out_len = 0;
            return "";
        }
        D->norm = b;
        D->cap_norm = len + 1;
    }
    *out_len = nytp_calltree_normalise(s, len, D->norm);
    return D->norm;
}

static bool grow_rows(void **v, uint32_t *cap, uint32_t need, size_t size)
{
    uint32_t was = *cap;
    if (!cli_grow(v, need, cap, size))
        return false;
    memset((char *)*v + (size_t)was * size, 0, (size_t)(*cap - was) * size);
    return true;
}

/* The matching key of a file: its name, eval sequence numbers made 0. */
static const char *file_key(diff *D, const nytp_profile *p, uint32_t fid, size_t *len)
{
    const nytp_file *f = &p->files[fid];
    if (!f->defined) {
        static char buf[32];
        *len = (size_t)snprintf(buf, sizeof buf, "(file %u)", fid);
        return buf;
    }
    return normalise(D, nytp_profile_str(p, f->name), nytp_profile_strlen(p, f->name), len);
}

static time_row *time_row_at(diff *D, bmap *m, time_row **rows, uint32_t *cap, const char *key,
                             size_t len)
{
    bool added;
    uint32_t i = bmap_find(m, key, len, true, &added, &D->oom);
    if (i == NYTP_NONE || !grow_rows((void **)rows, cap, i + 1, sizeof **rows)) {
        D->oom = true;
        return NULL;
    }
    time_row *r = &(*rows)[i];
    if (added)
        r->fid[0] = r->fid[1] = NYTP_NONE;
    return r;
}

static void add_side(diff *D, int k)
{
    side *S = &D->s[k];
    const nytp_profile *p = S->p;
    double scale = k == 1 ? D->scale : 1;
    for (uint32_t i = 0; i < p->n_subs && !D->oom; i++) {
        const nytp_sub *s = &p->subs[i];
        if (!s->calls && s->excl == 0 && s->incl == 0)
            continue; /* known but never run */
        size_t len;
        const char *key = normalise(D, nytp_profile_str(p, s->name), nytp_profile_strlen(p, s->name), &len);
        bool added;
        uint32_t r = bmap_find(&D->subs, key, len, true, &added, &D->oom);
        if (r == NYTP_NONE || !grow_rows((void **)&D->sub, &D->cap_sub, r + 1, sizeof *D->sub)) {
            D->oom = true;
            return;
        }
        sub_row *row = &D->sub[r];
        if (added)
            row->sid[0] = row->sid[1] = NYTP_NONE;
        row->excl[k] += s->excl * scale;
        row->incl[k] += s->incl * scale;
        row->calls[k] += s->calls;
        row->present[k] = true;
        if (row->sid[k] == NYTP_NONE)
            row->sid[k] = i;
    }
    for (uint32_t fid = 1; fid < p->n_files && !D->oom; fid++) {
        const nytp_file *f = &p->files[fid];
        if (!f->line.n)
            continue;
        /* the file's key, for its lines */
        size_t flen;
        const char *fkey = file_key(D, p, fid, &flen);
        bool added;
        uint32_t lf = bmap_find(&D->line_files, fkey, flen, true, &added, &D->oom);
        if (lf == NYTP_NONE)
            return;
        /* its source file, for the files table */
        size_t rlen;
        const char *rkey = file_key(D, p, p->files[fid].root_fid, &rlen);
        time_row *fr = time_row_at(D, &D->files, &D->file, &D->cap_file, rkey, rlen);
        if (!fr)
            return;
        uint32_t fr_index = (uint32_t)(fr - D->file);
        for (uint32_t l = 0; l < f->line.n; l++) {
            const nytp_linestat *st = &f->line.v[l];
            if (!st->set)
                continue;
            uint32_t line = st->line;
            char key[8];
            memcpy(key, &lf, 4);
            memcpy(key + 4, &line, 4);
            time_row *lr = time_row_at(D, &D->lines, &D->line, &D->cap_line, key, sizeof key);
            if (!lr)
                return;
            lr->file = lf;
            lr->line = line;
            lr->time[k] += st->time * scale;
            lr->count[k] += st->count;
            lr->present[k] = true;
            if (lr->fid[k] == NYTP_NONE)
                lr->fid[k] = fid;
            fr = &D->file[fr_index];
            fr->time[k] += st->time * scale;
            fr->count[k] += st->count;
            fr->present[k] = true;
            fr->fid[k] = p->files[fid].root_fid;
        }
    }
}

static void totals(side *S)
{
    const nytp_profile *p = S->p;
    for (uint32_t fid = 1; fid < p->n_files; fid++)
        for (uint32_t l = 0; l < p->files[fid].line.n; l++)
            if (p->files[fid].line.v[l].set)
                S->stmt_total += p->files[fid].line.v[l].time;
    for (uint32_t i = 0; i < p->n_subs; i++) {
        if (p->subs[i].excl > 0 && isfinite(p->subs[i].excl))
            S->sub_total += p->subs[i].excl;
        S->calls += p->subs[i].calls;
    }
}

/* ---- ordering ------------------------------------------------------------------- */

static const diff *sort_d;

/* By size, descending; a NaN (a corrupt profile) last, so that the order
 * is total. */
static int cmp_abs_desc(double a, double b)
{
    a = isnan(a) ? -1 : fabs(a);
    b = isnan(b) ? -1 : fabs(b);
    if (a != b)
        return a > b ? -1 : 1;
    return 0;
}

static double sub_delta(const sub_row *r)
{
    return r->excl[1] - r->excl[0];
}

static int cmp_sub(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const sub_row *ra = &sort_d->sub[a], *rb = &sort_d->sub[b];
    int c = cmp_abs_desc(sub_delta(ra), sub_delta(rb));
    if (!c)
        c = cmp_abs_desc(ra->incl[1] - ra->incl[0], rb->incl[1] - rb->incl[0]);
    if (!c)
        c = cmp_abs_desc(ra->excl[1] + ra->excl[0], rb->excl[1] + rb->excl[0]);
    return c ? c : strcmp(sort_d->subs.key[a], sort_d->subs.key[b]);
}

static int cmp_time_rows(const time_row *ra, const time_row *rb)
{
    int c = cmp_abs_desc(ra->time[1] - ra->time[0], rb->time[1] - rb->time[0]);
    if (!c)
        c = cmp_abs_desc(ra->time[1] + ra->time[0], rb->time[1] + rb->time[0]);
    return c;
}

static int cmp_line(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const time_row *ra = &sort_d->line[a], *rb = &sort_d->line[b];
    int c = cmp_time_rows(ra, rb);
    if (!c)
        c = strcmp(sort_d->line_files.key[ra->file], sort_d->line_files.key[rb->file]);
    return c ? c : ra->line < rb->line ? -1 : ra->line > rb->line;
}

static int cmp_file(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    int c = cmp_time_rows(&sort_d->file[a], &sort_d->file[b]);
    return c ? c : strcmp(sort_d->files.key[a], sort_d->files.key[b]);
}

static uint32_t *ordered(uint32_t n, int (*cmp)(const void *, const void *))
{
    uint32_t *v = malloc(((size_t)n + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        v[i] = i;
    if (n > 0) /* qsort(NULL, 0) is undefined */
        qsort(v, n, sizeof *v, cmp);
    return v;
}

/* ---- the check ------------------------------------------------------------------- */

static double pct_change(double base, double now)
{
    if (base > 0)
        return 100.0 * (now - base) / base;
    return now > 0 ? INFINITY : NAN;
}

static double min_time(const diff *D)
{
    const struct diff_opts *o = D->o;
    if (o->min_pct < 0)
        return o->min_time;
    double total = D->s[0].total > 0 ? D->s[0].total : D->s[1].total * D->scale;
    return total * o->min_pct / 100.0;
}

static bool total_grew(const diff *D)
{
    double pct = pct_change(D->s[0].total, D->s[1].total * D->scale);
    return D->o->fail_above >= 0 && D->s[0].total > 0 && pct > D->o->fail_above;
}

/* Did sub row r grow past the threshold (a sub that only NEW ran counts
 * as grown when its time is above the minimum)? */
static bool sub_grew(const diff *D, const sub_row *r, double min)
{
    if (D->o->fail_above < 0)
        return false;
    double most = r->excl[0] > r->excl[1] ? r->excl[0] : r->excl[1];
    if (!(most > min) || most <= 0)
        return false;
    return pct_change(r->excl[0], r->excl[1]) > D->o->fail_above;
}

/* ---- text ------------------------------------------------------------------------- */

static void cell(nytp_out *out, const char *text, size_t cols)
{
    term_num(out, text, cols);
}

static void cell_dur(nytp_out *out, double secs, bool sign, size_t cols)
{
    char b[40];
    *term_dur(b, secs, sign) = 0;
    cell(out, b, cols);
}

/* The change in percent, or "new"/"gone" for what one side lacks. */
static void cell_change(nytp_out *out, const bool present[2], double base, double now, size_t cols)
{
    char b[40];
    if (!present[0])
        strcpy(b, "new");
    else if (!present[1])
        strcpy(b, "gone");
    else
        *term_pct(b, pct_change(base, now), true) = 0;
    cell(out, b, cols);
}

static void colour_for(const diff *D, nytp_out *out, double delta, bool flagged)
{
    if (flagged || delta > 0)
        term_sgr(&D->t, out, TERM_RED);
    else if (delta < 0)
        term_sgr(&D->t, out, TERM_GREEN);
}

static size_t room_after(const diff *D, size_t used)
{
    if (!D->t.width)
        return 0;
    return D->t.width > used + 8 ? D->t.width - used : 8;
}

static void put_text(nytp_out *out, const char *s, size_t len, size_t room, enum term_align how)
{
    char *c = malloc(len * 4 + 1);
    if (!c)
        return;
    size_t w;
    size_t n = term_clean(s, len, false, c, &w);
    term_put(out, c, n, w, room && w > room ? room : 0, how);
    free(c);
}

static void put_name(nytp_out *out, const char *s, size_t len, size_t room)
{
    put_text(out, s, len, room, TERM_LEFT);
}

/* The name of a file as people read it (@INC stripped), malloc'd. */
static char *shown_file(const diff *D, const char *key, size_t len)
{
    char *s = malloc(len + 1);
    if (s)
        dump_data_strip_inc(key, len, &D->names, s);
    return s;
}

static bool heading(const diff *D, nytp_out *out, const char *title, size_t shown, size_t all,
                    const char *extra)
{
    nytp_out_write(out, "\n", 1);
    term_sgr(&D->t, out, TERM_BOLD);
    if (shown < all)
        nytp_out_printf(out, "%s (top %zu of %zu%s)", title, shown, all, extra);
    else
        nytp_out_printf(out, "%s (%zu%s)", title, all, extra);
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    if (!all)
        nytp_out_write(out, "  (none)\n", 9);
    return all > 0;
}

static size_t limit(const diff *D, size_t n)
{
    return D->o->n && D->o->n < n ? D->o->n : n;
}

static void side_line(const diff *D, nytp_out *out, int k)
{
    const side *S = &D->s[k];
    char t[40], st[40];
    *term_dur(t, S->stmt_total, false) = 0;
    *term_dur(st, S->sub_total, false) = 0;
    nytp_out_printf(out, "%-5s ", k ? "NEW" : "BASE");
    for (int i = 0; i < S->nfiles; i++) {
        if (i)
            nytp_out_write(out, " ", 1);
        put_name(out, S->files[i], strlen(S->files[i]), 0);
    }
    nytp_out_printf(out, ": %s of statements, %s in subs, %llu calls%s\n", t, st,
                    (unsigned long long)S->calls, S->p->complete ? "" : " (incomplete)");
}

/* Whether the inclusive time columns fit (always, without a width). */
static bool with_incl(const diff *D)
{
    return !D->t.width || D->t.width >= 110;
}

static void text_subs(diff *D, nytp_out *out, double min)
{
    uint32_t n_all = D->subs.n, added = 0, removed = 0;
    for (uint32_t i = 0; i < n_all; i++) {
        added += !D->sub[i].present[0];
        removed += !D->sub[i].present[1];
    }
    char extra[80] = "";
    if (added || removed)
        snprintf(extra, sizeof extra, "; %u added, %u removed", added, removed);
    size_t n = limit(D, n_all);
    if (!heading(D, out, "Subs by change in exclusive time", n, n_all, extra))
        return;
    /* the calls column is as wide as its widest cell */
    size_t callw = strlen("calls");
    for (size_t i = 0; i < n; i++) {
        const sub_row *r = &D->sub[D->order_sub[i]];
        char calls[48];
        size_t w = (size_t)snprintf(calls, sizeof calls, "%llu -> %llu", (unsigned long long)r->calls[0],
                                    (unsigned long long)r->calls[1]);
        if (w > callw)
            callw = w;
    }
    bool incl = with_incl(D);
    term_sgr(&D->t, out, TERM_DIM);
    nytp_out_printf(out, "%8s %7s %8s %8s ", "excl", "change", "base", "new");
    if (incl)
        nytp_out_printf(out, "%8s %7s ", "incl", "change");
    nytp_out_printf(out, "%*s  %s", (int)callw, "calls", "sub");
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    size_t used = 8 + 1 + 7 + 1 + 8 + 1 + 8 + 1 + (incl ? 8 + 1 + 7 + 1 : 0) + callw + 2;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = D->order_sub[i];
        const sub_row *r = &D->sub[id];
        colour_for(D, out, sub_delta(r), sub_grew(D, r, min));
        cell_dur(out, sub_delta(r), true, 8);
        nytp_out_write(out, " ", 1);
        cell_change(out, r->present, r->excl[0], r->excl[1], 7);
        nytp_out_write(out, " ", 1);
        cell_dur(out, r->excl[0], false, 8);
        nytp_out_write(out, " ", 1);
        cell_dur(out, r->excl[1], false, 8);
        nytp_out_write(out, " ", 1);
        if (incl) {
            cell_dur(out, r->incl[1] - r->incl[0], true, 8);
            nytp_out_write(out, " ", 1);
            cell_change(out, r->present, r->incl[0], r->incl[1], 7);
            nytp_out_write(out, " ", 1);
        }
        char calls[48];
        snprintf(calls, sizeof calls, "%llu -> %llu", (unsigned long long)r->calls[0],
                 (unsigned long long)r->calls[1]);
        cell(out, calls, callw);
        nytp_out_write(out, "  ", 2);
        put_name(out, D->subs.key[id], D->subs.len[id], room_after(D, used));
        term_sgr(&D->t, out, TERM_RESET);
        nytp_out_write(out, "\n", 1);
    }
}

static void text_times(diff *D, nytp_out *out, bool lines)
{
    bmap *m = lines ? &D->lines : &D->files;
    time_row *rows = lines ? D->line : D->file;
    uint32_t *order = lines ? D->order_line : D->order_file;
    size_t n = limit(D, m->n);
    if (!heading(D, out, lines ? "Lines by change in time" : "Files by change in time (string evals in their file)",
            n, m->n, ""))
        return;
    size_t cw = strlen("stmts");
    for (size_t i = 0; i < n; i++) {
        const time_row *r = &rows[order[i]];
        char counts[64];
        size_t w = (size_t)snprintf(counts, sizeof counts, "%lld -> %lld", (long long)r->count[0],
                                    (long long)r->count[1]);
        if (w > cw)
            cw = w;
    }
    size_t fixed = 8 + 1 + 7 + 1 + 8 + 1 + 8 + 1 + cw + 2;
    term_sgr(&D->t, out, TERM_DIM);
    nytp_out_printf(out, "%8s %7s %8s %8s %*s  %s", "time", "change", "base", "new", (int)cw,
                    "stmts", lines ? "where" : "file");
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    for (size_t i = 0; i < n; i++) {
        const time_row *r = &rows[order[i]];
        colour_for(D, out, r->time[1] - r->time[0], false);
        cell_dur(out, r->time[1] - r->time[0], true, 8);
        nytp_out_write(out, " ", 1);
        cell_change(out, r->present, r->time[0], r->time[1], 7);
        nytp_out_write(out, " ", 1);
        cell_dur(out, r->time[0], false, 8);
        nytp_out_write(out, " ", 1);
        cell_dur(out, r->time[1], false, 8);
        char counts[64];
        snprintf(counts, sizeof counts, "%lld -> %lld", (long long)r->count[0], (long long)r->count[1]);
        nytp_out_write(out, " ", 1);
        cell(out, counts, cw);
        nytp_out_write(out, "  ", 2);
        term_sgr(&D->t, out, TERM_RESET);
        uint32_t fk = lines ? r->file : order[i];
        const bmap *names = lines ? &D->line_files : &D->files;
        char *shown = shown_file(D, names->key[fk], names->len[fk]);
        if (!shown) {
            D->oom = true;
            return;
        }
        size_t wcap = strlen(shown) + 16;
        char *where = malloc(wcap);
        if (!where) {
            free(shown);
            D->oom = true;
            return;
        }
        if (lines)
            snprintf(where, wcap, "%s:%u", shown, r->line);
        else
            snprintf(where, wcap, "%s", shown);
        free(shown);
        size_t room = room_after(D, fixed);
        put_text(out, where, strlen(where), room, TERM_KEEP_END);
        /* the line's source, from NEW (or BASE) when the profile saved it */
        for (int k = 1; lines && k >= 0; k--) {
            if (r->fid[k] == NYTP_NONE)
                continue;
            const nytp_file *f = &D->s[k].p->files[r->fid[k]];
            const nytp_text *t = nytp_src_get(&f->src, r->line);
            if (!t)
                continue;
            const char *src = t->ptr;
            size_t sl = t->len;
            while (sl && (src[sl - 1] == '\n' || src[sl - 1] == '\r'))
                sl--;
            while (sl && (*src == ' ' || *src == '\t')) {
                src++;
                sl--;
            }
            size_t wl = strlen(where);
            size_t used = fixed + (room && wl > room ? room : wl) + 2;
            if (sl && (!D->t.width || D->t.width > used + 10)) {
                nytp_out_write(out, "  ", 2);
                term_sgr(&D->t, out, TERM_DIM);
                char *c = malloc(sl * 8 + 1);
                if (c) {
                    size_t w;
                    size_t len = term_clean(src, sl, true, c, &w);
                    size_t rm = D->t.width ? D->t.width - used : 0;
                    term_put(out, c, len, w, rm && w > rm ? rm : 0, TERM_LEFT);
                    free(c);
                }
                term_sgr(&D->t, out, TERM_RESET);
            }
            break;
        }
        free(where);
        nytp_out_write(out, "\n", 1);
    }
}

static void write_text(diff *D, nytp_out *out, double min)
{
    side_line(D, out, 0);
    side_line(D, out, 1);
    char b[40], nw[40], d[40], pc[40];
    double base = D->s[0].total, now = D->s[1].total * D->scale;
    *term_dur(b, base, false) = 0;
    *term_dur(nw, now, false) = 0;
    *term_dur(d, now - base, true) = 0;
    *term_pct(pc, pct_change(base, now), true) = 0;
    term_sgr(&D->t, out, TERM_BOLD);
    colour_for(D, out, now - base, total_grew(D));
    nytp_out_printf(out, "Total %s: %s -> %s, %s (%s)%s",
                    D->s[0].stmt_total > 0 && D->s[1].stmt_total > 0 ? "statement time"
                                                                    : "time in subs",
                    b, nw, d, pc, D->o->normalize ? ", NEW scaled to BASE's total" : "");
    term_sgr(&D->t, out, TERM_RESET);
    nytp_out_write(out, "\n", 1);
    text_subs(D, out, min);
    text_times(D, out, true);
    text_times(D, out, false);
}

/* The tables into memory first, then each line cut to the terminal. */
static int write_fitted(diff *D, nytp_out *out, double min)
{
    nytp_out *mem;
    nytp_error e = {0};
    uint8_t *text = NULL;
    size_t len = 0;
    if (nytp_out_open_mem(&mem, &e) < 0)
        return NYTP_E_NOMEM;
    write_text(D, mem, min);
    if (nytp_out_close_mem(mem, &text, &len, &e) < 0) {
        free(text);
        return NYTP_E_NOMEM;
    }
    term_write_fitted(&D->t, out, (const char *)text, len);
    free(text);
    return NYTP_OK;
}

/* ---- JSON ------------------------------------------------------------------------ */

static void jkey(nytp_out *out, const char *k, bool first)
{
    nytp_out_printf(out, "%s\"%s\":", first ? "" : ",", k);
}

static void jchange(nytp_out *out, const char *what, double base, double now, bool first)
{
    jkey(out, what, first);
    term_json_nv(out, now - base);
    char k[40];
    snprintf(k, sizeof k, "%s_pct", what);
    jkey(out, k, false);
    term_json_nv(out, pct_change(base, now)); /* null when BASE is 0 */
}

static const char *status(const bool present[2])
{
    return !present[0] ? "added" : !present[1] ? "removed" : "both";
}

static void json_side(nytp_out *out, const side *S)
{
    nytp_out_write(out, "{\"files\":[", 10);
    for (int i = 0; i < S->nfiles; i++) {
        if (i)
            nytp_out_write(out, ",", 1);
        term_json_str(out, S->files[i], strlen(S->files[i]));
    }
    nytp_out_write(out, "]", 1);
    jkey(out, "statements", false);
    term_json_nv(out, S->stmt_total);
    jkey(out, "sub_excl", false);
    term_json_nv(out, S->sub_total);
    jkey(out, "sub_calls", false);
    nytp_out_printf(out, "%llu", (unsigned long long)S->calls);
    jkey(out, "total", false);
    term_json_nv(out, S->total);
    jkey(out, "complete", false);
    nytp_out_printf(out, "%s}", S->p->complete ? "true" : "false");
}

static void write_json(diff *D, nytp_out *out, double min)
{
    nytp_out_write(out, "{\"format\":\"nytp-diff-1\",\"base\":", 31);
    json_side(out, &D->s[0]);
    nytp_out_write(out, ",\"new\":", 7);
    json_side(out, &D->s[1]);
    jkey(out, "total_kind", false);
    nytp_out_printf(out, "\"%s\"", D->s[0].stmt_total > 0 && D->s[1].stmt_total > 0 ? "statements" : "subs");
    jkey(out, "normalized", false);
    nytp_out_printf(out, "%s", D->o->normalize ? "true" : "false");
    jkey(out, "scale", false);
    term_json_nv(out, D->scale);
    nytp_out_write(out, ",\"total\":{", 10);
    jkey(out, "base", true);
    term_json_nv(out, D->s[0].total);
    jkey(out, "new", false);
    term_json_nv(out, D->s[1].total * D->scale);
    jchange(out, "delta", D->s[0].total, D->s[1].total * D->scale, false);
    nytp_out_write(out, "}", 1);

    /* the check */
    nytp_out_write(out, ",\"check\":", 9);
    if (D->o->fail_above < 0) {
        nytp_out_write(out, "null", 4);
    } else {
        nytp_out_write(out, "{", 1);
        jkey(out, "fail_above", true);
        term_json_nv(out, D->o->fail_above);
        jkey(out, "min_time", false);
        term_json_nv(out, min);
        jkey(out, "total_grew", false);
        nytp_out_printf(out, "%s", total_grew(D) ? "true" : "false");
        jkey(out, "subs_grew", false);
        nytp_out_write(out, "[", 1);
        bool first = true;
        for (uint32_t i = 0; i < D->subs.n; i++) {
            uint32_t id = D->order_sub[i];
            if (!sub_grew(D, &D->sub[id], min))
                continue;
            if (!first)
                nytp_out_write(out, ",", 1);
            first = false;
            term_json_str(out, D->subs.key[id], D->subs.len[id]);
        }
        nytp_out_write(out, "]", 1);
        jkey(out, "failed", false);
        nytp_out_printf(out, "%s}", total_grew(D) || !first ? "true" : "false");
    }

    nytp_out_printf(out, ",\"rows\":{\"subs\":%u,\"lines\":%u,\"files\":%u}", D->subs.n,
                    D->lines.n, D->files.n);
    nytp_out_write(out, ",\"subs\":[", 9);
    for (size_t i = 0; i < limit(D, D->subs.n); i++) {
        uint32_t id = D->order_sub[i];
        const sub_row *r = &D->sub[id];
        nytp_out_write(out, i ? ",{" : "{", i ? 2 : 1);
        jkey(out, "name", true);
        term_json_str(out, D->subs.key[id], D->subs.len[id]);
        jkey(out, "status", false);
        nytp_out_printf(out, "\"%s\"", status(r->present));
        for (int k = 0; k < 2; k++) {
            jkey(out, k ? "new" : "base", false);
            if (!r->present[k]) {
                nytp_out_write(out, "null", 4);
                continue;
            }
            const nytp_profile *p = D->s[k].p;
            const nytp_sub *s = &p->subs[r->sid[k]];
            nytp_out_write(out, "{", 1);
            jkey(out, "excl", true);
            term_json_nv(out, r->excl[k]);
            jkey(out, "incl", false);
            term_json_nv(out, r->incl[k]);
            jkey(out, "calls", false);
            nytp_out_printf(out, "%llu", (unsigned long long)r->calls[k]);
            jkey(out, "file", false);
            if (s->fid != NYTP_NONE && s->fid < p->n_files && p->files[s->fid].defined)
                term_json_str(out, nytp_profile_str(p, p->files[s->fid].name),
                              nytp_profile_strlen(p, p->files[s->fid].name));
            else
                nytp_out_write(out, "null", 4);
            jkey(out, "first_line", false);
            if (s->first_line == NYTP_NONE)
                nytp_out_write(out, "null", 4);
            else
                nytp_out_printf(out, "%u", s->first_line);
            nytp_out_write(out, "}", 1);
        }
        jchange(out, "excl_delta", r->excl[0], r->excl[1], false);
        jchange(out, "incl_delta", r->incl[0], r->incl[1], false);
        jkey(out, "calls_delta", false);
        nytp_out_printf(out, "%lld", (long long)(r->calls[1] - r->calls[0]));
        nytp_out_write(out, "}", 1);
    }
    nytp_out_write(out, "]", 1);
    for (int lines = 1; lines >= 0; lines--) {
        bmap *m = lines ? &D->lines : &D->files;
        time_row *rows = lines ? D->line : D->file;
        uint32_t *order = lines ? D->order_line : D->order_file;
        nytp_out_printf(out, ",\"%s\":[", lines ? "lines" : "files");
        for (size_t i = 0; i < limit(D, m->n); i++) {
            const time_row *r = &rows[order[i]];
            nytp_out_write(out, i ? ",{" : "{", i ? 2 : 1);
            jkey(out, "file", true);
            if (lines) {
                term_json_str(out, D->line_files.key[r->file], D->line_files.len[r->file]);
                nytp_out_printf(out, ",\"line\":%u", r->line);
            } else {
                term_json_str(out, D->files.key[order[i]], D->files.len[order[i]]);
            }
            jkey(out, "status", false);
            nytp_out_printf(out, "\"%s\"", status(r->present));
            jkey(out, "base", false);
            term_json_nv(out, r->time[0]);
            jkey(out, "new", false);
            term_json_nv(out, r->time[1]);
            jchange(out, "delta", r->time[0], r->time[1], false);
            nytp_out_printf(out, ",\"count_base\":%lld,\"count_new\":%lld}", (long long)r->count[0],
                            (long long)r->count[1]);
        }
        nytp_out_write(out, "]", 1);
    }
    nytp_out_write(out, "}\n", 2);
}

/* ---- the differential flame graph --------------------------------------------------- */

/* BASE's call paths as a trie in a map: key (parent node, name) -> node. */
typedef struct paths {
    bmap m;
    double *incl;           /* per node: time along the path and below (ticks) */
    uint32_t cap;
    uint32_t *at;           /* per depth: the node of the path being walked */
    uint32_t cap_at;
    char *key;
    size_t cap_key;
    bool oom;
} paths;

static const char *path_key(paths *P, uint32_t parent, nytp_str name, size_t *len)
{
    size_t need = 4 + name.len;
    if (need > P->cap_key) {
        char *b = realloc(P->key, need);
        if (!b) {
            P->oom = true;
            return NULL;
        }
        P->key = b;
        P->cap_key = need;
    }
    memcpy(P->key, &parent, 4);
    memcpy(P->key + 4, name.ptr, name.len);
    *len = need;
    return P->key;
}

static bool paths_at(paths *P, uint32_t depth)
{
    return grow_rows((void **)&P->at, &P->cap_at, depth + 1, sizeof *P->at);
}

static int add_base_path(void *ctx, const nytp_calltree_visit *v)
{
    paths *P = ctx;
    if (!paths_at(P, v->depth)) {
        P->oom = true;
        return NYTP_E_NOMEM;
    }
    uint32_t parent = v->depth > 1 ? P->at[v->depth - 1] : NYTP_NONE;
    size_t len;
    const char *key = path_key(P, parent, v->path[v->depth - 1], &len);
    uint32_t i = key ? bmap_find(&P->m, key, len, true, NULL, &P->oom) : NYTP_NONE;
    if (i == NYTP_NONE || !grow_rows((void **)&P->incl, &P->cap, i + 1, sizeof *P->incl))
        return NYTP_E_NOMEM;
    P->incl[i] = v->total_excl;
    P->at[v->depth] = i;
    return 0;
}

typedef struct styler {
    diff *D;
    paths *P;
    double base_tps, new_tps;
    double max_delta;       /* largest |change| of a frame, seconds */
    bool measuring;         /* first pass: only find max_delta */
    uint32_t *at;           /* per depth: BASE's node, or NYTP_NONE */
    uint32_t cap_at;
} styler;

/* The change of a NEW node against BASE, in seconds (NEW scaled), into
 * *change; false when out of memory.  A time that is NaN, infinite or
 * negative (a damaged profile) counts as 0, as flame --svg draws it, so
 * the change is always a finite number. */
static bool node_change(styler *S, const nytp_calltree_visit *v, double *base, bool *in_base,
                        double *change)
{
    if (!grow_rows((void **)&S->at, &S->cap_at, v->depth + 1, sizeof *S->at))
        return false;
    uint32_t parent = v->depth > 1 ? S->at[v->depth - 1] : NYTP_NONE;
    uint32_t i = NYTP_NONE;
    if (v->depth == 1 || parent != NYTP_NONE) {
        size_t len;
        const char *key = path_key(S->P, parent, v->path[v->depth - 1], &len);
        if (key)
            i = bmap_find(&S->P->m, key, len, false, NULL, &S->P->oom);
    }
    S->at[v->depth] = i;
    *in_base = i != NYTP_NONE;
    *base = i != NYTP_NONE && S->base_tps > 0 ? fmt_time_scaled(S->P->incl[i], 1 / S->base_tps) : 0;
    double now = S->new_tps > 0 ? fmt_time_scaled(v->total_excl, S->D->scale / S->new_tps) : 0;
    *change = now - *base;
    return true;
}

static int measure(void *ctx, const nytp_calltree_visit *v)
{
    styler *S = ctx;
    double base;
    bool in_base;
    double d;
    if (!node_change(S, v, &base, &in_base, &d))
        return NYTP_E_NOMEM;
    if (fabs(d) > S->max_delta)
        S->max_delta = fabs(d);
    return 0;
}

static int style(void *ctx, const nytp_calltree_visit *v, long *rgb, char *note, size_t size)
{
    styler *S = ctx;
    diff *D = S->D;
    double base, now, d;
    bool in_base = true;
    if (!v) {
        base = fmt_time_scaled(nytp_calltree_total_excl(D->s[0].t),
                               1 / (S->base_tps > 0 ? S->base_tps : 1));
        now = fmt_time_scaled(nytp_calltree_total_excl(D->s[1].t),
                              D->scale / (S->new_tps > 0 ? S->new_tps : 1));
        d = now - base;
    } else {
        if (!node_change(S, v, &base, &in_base, &d))
            return NYTP_E_NOMEM;
        now = base + d;
    }
    char bs[40], ds[40], pc[40];
    *term_dur(bs, base, false) = 0;
    *term_dur(ds, d, true) = 0;
    *term_pct(pc, pct_change(base, now), true) = 0;
    if (!in_base) {
        snprintf(note, size, "not in BASE");
        *rgb = 0xD21E1E;
        return 0;
    }
    snprintf(note, size, "%s (%s) against %s in BASE", ds, pc, bs);
    /* white for no change, to full red or blue at the largest change */
    double f = S->max_delta > 0 ? fabs(d) / S->max_delta : 0;
    if (!(f <= 1)) /* also NaN */
        f = 1;
    f = sqrt(f); /* small changes stay visible */
    int fade = (int)lround(235 - 200 * f);
    if (d > 0)
        *rgb = (245L << 16) | ((long)fade << 8) | fade;
    else if (d < 0)
        *rgb = ((long)fade << 16) | ((long)fade << 8) | 245L;
    else
        *rgb = 0xEBEBEB;
    return 0;
}

static int write_svg(diff *D, nytp_out *out)
{
    paths P;
    memset(&P, 0, sizeof P);
    styler S;
    memset(&S, 0, sizeof S);
    S.D = D;
    S.P = &P;
    S.base_tps = nytp_calltree_ticks_per_sec(D->s[0].t);
    S.new_tps = nytp_calltree_ticks_per_sec(D->s[1].t);
    if (S.base_tps <= 0)
        S.base_tps = D->s[0].p->ticks_per_sec;
    if (S.new_tps <= 0)
        S.new_tps = D->s[1].p->ticks_per_sec;
    int st = nytp_calltree_walk(D->s[0].t, 0, add_base_path, &P);
    if (!st && P.oom)
        st = NYTP_E_NOMEM;
    if (!st)
        st = nytp_calltree_walk(D->s[1].t, 0, measure, &S);
    if (!st) {
        flame_svg_opts fo;
        flame_svg_opts_init(&fo);
        fo.title = D->o->title ? D->o->title : "Differential flame graph";
        fo.style_fn = style;
        fo.style_ctx = &S;
        fo.subtitle_note = D->o->normalize
                               ? "NEW scaled to BASE's total; red: slower than BASE, blue: faster"
                               : "sized by NEW; red: slower than BASE, blue: faster";
        st = flame_svg_write(out, D->s[1].t, &fo);
    }
    bmap_free(&P.m);
    free(P.incl);
    free(P.at);
    free(P.key);
    free(S.at);
    return st < 0 ? st : st ? NYTP_E_NOMEM : NYTP_OK;
}

/* ---- loading ----------------------------------------------------------------------- */

/* The call tree is fed in the same pass as the model (as 'nytp html'
 * does): a new input first closes the frames the last one left open. */
static int feed_chunk(void *ctx, const nytp_chunk *c)
{
    side *S = ctx;
    switch (c->tag) {
    case NYTP_TAG_SUB_RETURN:
    case NYTP_TAG_ATTRIBUTE:
        return nytp_calltree_add_chunk(S->own_t, c);
    case NYTP_TAG_VERSION:
        if (S->any_input && nytp_calltree_end_input(S->own_t) < 0)
            return NYTP_E_NOMEM;
        S->any_input = true;
        return NYTP_OK;
    default:
        return NYTP_OK;
    }
}

static int load_side(side *S, bool strict, bool tree)
{
    int rc;
    nytp_error e = {0};
    if (tree) {
        if (nytp_calltree_new(&S->own_t, &e) < 0) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
        S->t = S->own_t;
        S->p = cli_load_profile_with(S->nfiles, S->files, strict, feed_chunk, S, &rc);
        if (S->p && nytp_calltree_end_input(S->own_t) < 0) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
    } else {
        S->p = cli_load_profile(S->nfiles, S->files, strict, &rc);
    }
    return S->p ? EXIT_OK : rc;
}

static void report_growth(diff *D, double min)
{
    if (total_grew(D)) {
        char b[40], n[40], pc[40];
        double base = D->s[0].total, now = D->s[1].total * D->scale;
        *term_dur(b, base, false) = 0;
        *term_dur(n, now, false) = 0;
        *term_pct(pc, pct_change(base, now), true) = 0;
        cli_error("the total time grew by %s (%s -> %s), more than --fail-above=%g%%", pc, b, n,
                  D->o->fail_above);
    }
    unsigned shown = 0, more = 0;
    for (uint32_t i = 0; i < D->subs.n; i++) {
        uint32_t id = D->order_sub[i];
        const sub_row *r = &D->sub[id];
        if (!sub_grew(D, r, min))
            continue;
        if (shown == 10) {
            more++;
            continue;
        }
        shown++;
        char *name = malloc((size_t)D->subs.len[id] * 4 + 1);
        if (!name)
            continue;
        size_t w;
        term_clean(D->subs.key[id], D->subs.len[id], false, name, &w);
        char b[40], n[40], pc[40];
        *term_dur(b, r->excl[0], false) = 0;
        *term_dur(n, r->excl[1], false) = 0;
        if (!r->present[0])
            cli_error("%s is new in NEW with %s of exclusive time (above --min-time, "
                      "--fail-above=%g%%)", name, n, D->o->fail_above);
        else if (!(r->excl[0] > 0))
            cli_error("%s: exclusive time grew from %s to %s (above --min-time, "
                      "--fail-above=%g%%)", name, b, n, D->o->fail_above);
        else {
            *term_pct(pc, pct_change(r->excl[0], r->excl[1]), true) = 0;
            cli_error("%s: exclusive time grew by %s (%s -> %s), more than --fail-above=%g%%",
                      name, pc, b, n, D->o->fail_above);
        }
        free(name);
    }
    if (more)
        cli_error("and %u more subs grew by more than --fail-above=%g%%", more, D->o->fail_above);
}

static void diff_free(diff *D)
{
    for (int k = 0; k < 2; k++) {
        if (!D->borrowed)
            nytp_profile_free(D->s[k].p);
        nytp_calltree_free(D->s[k].own_t);
    }
    bmap_free(&D->subs);
    bmap_free(&D->lines);
    bmap_free(&D->files);
    bmap_free(&D->line_files);
    free(D->sub);
    free(D->line);
    free(D->file);
    free(D->order_sub);
    free(D->order_line);
    free(D->order_file);
    free(D->norm);
}

/* Totals, the scale, the rows and their order. */
static int compute(diff *D)
{
    for (int k = 0; k < 2; k++)
        totals(&D->s[k]);
    bool stmts = D->s[0].stmt_total > 0 && D->s[1].stmt_total > 0;
    for (int k = 0; k < 2; k++)
        D->s[k].total = stmts ? D->s[k].stmt_total : D->s[k].sub_total;
    D->scale = D->o->normalize && D->s[1].total > 0 && D->s[0].total > 0
                   ? D->s[0].total / D->s[1].total
                   : 1;
    if (!isfinite(D->scale) || D->scale <= 0)
        D->scale = 1; /* absurd totals of a corrupt profile */
    for (int k = 0; k < 2 && !D->oom; k++)
        add_side(D, k);
    sort_d = D;
    if (!D->oom) {
        D->order_sub = ordered(D->subs.n, cmp_sub);
        D->order_line = ordered(D->lines.n, cmp_line);
        D->order_file = ordered(D->files.n, cmp_file);
        D->oom = !D->order_sub || !D->order_line || !D->order_file;
    }
    return D->oom ? NYTP_E_NOMEM : NYTP_OK;
}

int diff_write_memory(nytp_profile *base, nytp_profile *new_, const nytp_calltree *tbase,
                      const nytp_calltree *tnew)
{
    static const char *inc[] = {"/usr/share/perl5", "/usr/lib"};
    static char *names[] = {"base", "new"};
    int st = NYTP_OK;
    for (int normalize = 0; normalize < 2 && st == NYTP_OK; normalize++) {
        struct diff_opts o = {.n = normalize ? 0 : 20, .fail_above = 5, .min_pct = 1,
                              .normalize = normalize};
        diff D;
        memset(&D, 0, sizeof D);
        D.o = &o;
        D.borrowed = true;
        D.s[0] = (side){.files = names, .nfiles = 1, .p = base, .t = tbase};
        D.s[1] = (side){.files = names + 1, .nfiles = 1, .p = new_, .t = tnew};
        D.names.inc = inc;
        D.names.n_inc = 2;
        D.names.perl_version = "5.36.0";
        D.t.width = 80;
        D.t.colour = true;
        st = compute(&D);
        nytp_out *out;
        nytp_error e = {0};
        if (st == NYTP_OK && nytp_out_open_mem(&out, &e) == NYTP_OK) {
            double min = min_time(&D);
            write_json(&D, out, min);
            st = write_fitted(&D, out, min);
            if (st == NYTP_OK && tbase && tnew)
                st = write_svg(&D, out);
            nytp_out_abort(out);
        }
        if (st == NYTP_OK && D.oom)
            st = NYTP_E_NOMEM;
        diff_free(&D);
    }
    return st;
}

int cmd_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"normalize", no_argument, NULL, OPT_NORMALIZE},
        {"json", no_argument, NULL, OPT_JSON},
        {"svg", no_argument, NULL, OPT_SVG},
        {"title", required_argument, NULL, OPT_TITLE},
        {"fail-above", required_argument, NULL, OPT_FAIL},
        {"min-time", required_argument, NULL, OPT_MIN},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"count", required_argument, NULL, 'n'},
        {"output", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    struct diff_opts o = {.n = 20, .fail_above = -1, .min_pct = 1};
    /* getopt drops the "--" it stops at and moves the operands before it
     * behind it, so the first "--" is swapped for a marker that getopt
     * takes for an operand and whose place among the operands is found
     * again by its address. */
    static char separator[] = "";
    int dashes = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            argv[i] = separator;
            dashes = i;
            break;
        }
    int first = cli_parse(argc, argv, "f:n:o:", longopts, usage, on_opt, &o);
    if (cli_names_svg(o.output))
        o.svg = true;
    if (o.svg && o.json)
        cli_usage_error("--svg and --json are two outputs; choose one");
    if (o.title && !o.svg)
        cli_usage_error("--title goes with --svg");

    diff D;
    memset(&D, 0, sizeof D);
    D.o = &o;
    char **ops = argv + first;
    int nops = argc - first;
    if (dashes) {
        int at = -1;
        for (int i = 0; i < nops; i++)
            if (ops[i] == separator)
                at = i;
        if (at < 0)
            cli_usage_error("'--' went missing (is it the value of an option?)");
        D.s[0].files = ops;
        D.s[0].nfiles = at;
        D.s[1].files = ops + at + 1;
        D.s[1].nfiles = nops - at - 1;
        if (!D.s[0].nfiles || !D.s[1].nfiles)
            cli_usage_error("give BASE files before '--' and NEW files after it");
    } else {
        if (nops != 2)
            cli_usage_error("give two profiles, BASE and NEW, or 'BASE... -- NEW...'");
        D.s[0].files = ops;
        D.s[0].nfiles = 1;
        D.s[1].files = ops + 1;
        D.s[1].nfiles = 1;
    }

    int stdin_uses = 0;
    for (int i = 0; i < nops; i++)
        stdin_uses += strcmp(ops[i], "-") == 0;
    if (stdin_uses > 1)
        cli_usage_error("standard input ('-') can be read only once");
    cli_output_not_input(o.output, nops, ops, NULL);

    int rc = EXIT_OK;
    for (int k = 0; k < 2 && rc == EXIT_OK; k++)
        rc = load_side(&D.s[k], o.strict, o.svg);
    if (rc != EXIT_OK) {
        diff_free(&D);
        return rc;
    }
    for (int k = 0; k < 2 && o.svg; k++) {
        nytp_calltree_stats cs;
        nytp_calltree_get_stats(D.s[k].t, &cs);
        if (cs.returns)
            continue;
        /* as calls and flame do: the caller;called paths of its call sites */
        if (!D.s[k].own_t || nytp_calltree_add_sites(D.s[k].own_t, D.s[k].p) < 0) {
            cli_error("out of memory");
            diff_free(&D);
            return EXIT_BAD_INPUT;
        }
        if (D.s[k].nfiles == 1)
            cli_warn("%s %s: " CLI_NO_RETURNS, k ? "NEW" : "BASE", D.s[k].files[0]);
        else
            cli_warn("%s: " CLI_NO_RETURNS, k ? "NEW" : "BASE");
    }
    char *storage = NULL;
    D.names.inc = dump_data_split_dirs(NYTP_PERL_INC, &D.names.n_inc, &storage);
    D.names.perl_version = NYTP_PERL_VERSION;
    if (!D.names.inc || compute(&D) < 0) {
        cli_error("out of memory");
        free((void *)D.names.inc);
        free(storage);
        diff_free(&D);
        return EXIT_BAD_INPUT;
    }
    double min = min_time(&D);
    term_init(&D.t, o.output);
    nytp_out *out = cli_output_open(o.output);
    if (!out) {
        rc = EXIT_BAD_INPUT;
    } else {
        int st = NYTP_OK;
        if (o.svg)
            st = write_svg(&D, out);
        else if (o.json)
            write_json(&D, out, min);
        else
            st = write_fitted(&D, out, min);
        if (st == NYTP_OK && D.oom)
            st = NYTP_E_NOMEM;
        const nytp_error *e = nytp_out_error(out);
        if (st == NYTP_OK && e->status)
            st = e->status;
        rc = cli_output_finish(out, o.output, st);
    }
    if (rc == EXIT_OK && o.fail_above >= 0) {
        report_growth(&D, min);
        bool grew = total_grew(&D);
        for (uint32_t i = 0; i < D.subs.n && !grew; i++)
            grew = sub_grew(&D, &D.sub[i], min);
        if (grew)
            rc = EXIT_GREW;
    }
    free((void *)D.names.inc);
    free(storage);
    diff_free(&D);
    return rc;
}

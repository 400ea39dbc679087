/* pprof.c — 'nytp pprof': the profile as pprof's profile.proto, gzipped,
 * for go tool pprof and continuous-profiling services.
 *
 * One sample per call path (the call tree of the SUB_RETURN events, as
 * 'nytp calls' prints it; without call events, caller;called paths from
 * the call-site data) with two values: exclusive wall time in nanoseconds
 * and calls.  A function per sub (name, file, first line; its system name
 * "&Pkg::name": see func_of); a location per sub and line.  A path's leaf
 * frame is split over the lines of its sub by their statement times
 * (line_shares), so pprof's line views show NYTProf's per-line times; a
 * calling frame is at the line it made the call from when the call-site
 * data names exactly one such line.
 *
 * The protobuf encoding is done here: profile.proto needs only varints
 * and length-delimited fields, a few dozen lines, where a protobuf library
 * would bring a dependency and generated code for the same bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "export.h"
#include "fmt.h"

static const char usage[] =
    "usage: nytp pprof " VIEWOPT_SYNOPSIS "\n"
    "                  [--strict] [-o FILE] [-f FILE] [FILE...]\n"
    "\n"
    "Write NYTProf profiles (default FILE: nytprof.out; '-' reads standard\n"
    "input; several files add up) as a gzipped pprof profile (profile.proto),\n"
    "which go tool pprof, Grafana Pyroscope, Parca and other pprof tools read.\n"
    "\n"
    "  -f, --file=FILE   read FILE (the same as naming it)\n"
    "  -o, --output=FILE write FILE (default: nytprof.pb.gz; '-': standard\n"
    "                    output), atomically; --out is the same\n"
    VIEWOPT_USAGE
    "  --strict          a truncated profile is an error (exit 1)\n"
    "  -h, --help        this help\n"
    "\n"
    "Each call path of the sub return events (the paths of 'nytp calls') is\n"
    "a sample with its exclusive wall time in nanoseconds and its calls (not\n"
    "for a profile made by sampling, whose counts are unknown), the\n"
    "time split over the sub's lines as their statement times are (so\n"
    "'go tool pprof -list SUB' shows time per line).  A\n"
    "profile without call events (calls=0) gets caller;called paths from the\n"
    "call-site data instead, and says so.  With --focus, --ignore or --hide\n"
    "the profile's comment (go tool pprof -comments) says what was left out\n"
    "and the share of the time in subs in it.\n"
    "Exit status: 0 ok (a truncated file only warns), 1 bad input, 2 usage.\n";

/* ---- protobuf encoding ------------------------------------------------------ */

typedef struct pb {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} pb;

enum { WT_VARINT = 0, WT_LEN = 2 };

static void pb_put(pb *b, const void *data, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + len)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
}

static void pb_varint(pb *b, uint64_t v)
{
    uint8_t buf[10];
    size_t n = 0;
    while (v >= 0x80) {
        buf[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (uint8_t)v;
    pb_put(b, buf, n);
}

static void pb_key(pb *b, unsigned field, unsigned wire_type)
{
    pb_varint(b, (uint64_t)field << 3 | wire_type);
}

/* int64 and uint64 fields alike: a varint of the two's complement. */
static void pb_int(pb *b, unsigned field, uint64_t v)
{
    pb_key(b, field, WT_VARINT);
    pb_varint(b, v);
}

static void pb_bytes(pb *b, unsigned field, const void *data, size_t len)
{
    pb_key(b, field, WT_LEN);
    pb_varint(b, len);
    pb_put(b, data, len);
}

/* ---- the profile being built --------------------------------------------- */

typedef struct func {
    uint32_t sub;           /* model sub id, or NYTP_NONE */
    uint32_t name, file;    /* string table indexes */
    uint32_t system_name;   /* "&Pkg::name", as perl names the sub's symbol */
    int64_t start_line;
    uint32_t first_share, n_shares; /* its lines' shares (line_shares) */
    bool shares_known;
} func;

/* A line of a sub and its share of the sub's statement time. */
typedef struct line_share {
    uint32_t line;
    double share;
} line_share;

typedef struct pprof {
    export_profile *x;
    nytp_out *out;
    double ns_per_tick;
    strmap strings;   /* the string table, "" first */
    strmap fnames;    /* normalised sub name -> function (id = index) */
    func *funcs;
    uint32_t cap_funcs;
    strmap locs;      /* (function, line) as 8 bytes -> location (id) */
    strmap edges;     /* (caller, called) function pair -> calling line */
    line_share *shares;     /* every function's, one run each */
    uint32_t n_shares, cap_shares;
    uint32_t *fn_at;        /* per depth: function of the path's frame */
    uint64_t *loc_at;       /* per depth: location of the frame (calling) */
    uint32_t cap_depth;
    char *norm;             /* scratch for normalised names */
    size_t cap_norm;
    pb tmp, msg, packed;
    bool oom;
    int out_status;
    uint64_t samples;
    uint64_t total_ns;      /* at most FMT_UNITS_MAX */
    const char *comment;    /* what the view left out, or NULL */
} pprof;

static uint32_t str_idx(pprof *P, const char *s, uint32_t len)
{
    uint32_t ulen;
    char *tofree;
    const char *u = export_utf8(s, len, &ulen, &tofree);
    if (!u) {
        P->oom = true;
        return 0;
    }
    bool added;
    uint32_t id = strmap_add(&P->strings, u, ulen, true, &added);
    free(tofree);
    if (id == NYTP_NONE) {
        P->oom = true;
        return 0;
    }
    return id;
}

/* The function of a sub name (normalised as the call tree does). */
static uint32_t func_of(pprof *P, const char *name, uint32_t len)
{
    if (len + 1 > P->cap_norm) {
        size_t cap = (size_t)len + 256;
        char *b = realloc(P->norm, cap);
        if (!b) {
            P->oom = true;
            return 0;
        }
        P->norm = b;
        P->cap_norm = cap;
    }
    uint32_t n = (uint32_t)nytp_calltree_normalise(name, len, P->norm);
    bool added;
    uint32_t id = strmap_add(&P->fnames, P->norm, n, false, &added);
    if (id == NYTP_NONE) {
        P->oom = true;
        return 0;
    }
    if (!added)
        return id;
    if (!cli_grow((void **)&P->funcs, (size_t)id + 1, &P->cap_funcs, sizeof *P->funcs)) {
        P->oom = true;
        return 0;
    }
    /* the name is looked up again: P->norm is reused below */
    const char *fname = strmap_str(&P->fnames, id);
    const nytp_sub *s = export_find_sub(P->x, fname, n);
    func *f = &P->funcs[id];
    f->sub = s ? (uint32_t)(s - P->x->p->subs) : NYTP_NONE;
    f->name = str_idx(P, fname, n);
    /* pprof takes a function whose system name equals its name for C++
     * and strips (...) and <...> from it: "(eval 0)" would vanish */
    char *amp = malloc((size_t)n + 2);
    if (!amp) {
        P->oom = true;
        return 0;
    }
    amp[0] = '&';
    memcpy(amp + 1, fname, n);
    f->system_name = str_idx(P, amp, n + 1);
    free(amp);
    const char *file = export_sub_file(P->x, s);
    f->file = str_idx(P, file, (uint32_t)strlen(file));
    f->start_line = s && s->first_line != NYTP_NONE ? s->first_line : 0;
    f->shares_known = false;
    f->n_shares = 0;
    return id;
}

static uint64_t loc_of(pprof *P, uint32_t fn, int64_t line)
{
    uint32_t key[2] = {fn, (uint32_t)line};
    bool added;
    uint32_t id = strmap_add(&P->locs, (const char *)key, sizeof key, false, &added);
    if (id == NYTP_NONE) {
        P->oom = true;
        return 1;
    }
    return (uint64_t)id + 1;
}

/* Whether caller (a sub name as the model has it) normalises to name. */
static bool caller_is(pprof *P, uint32_t caller, const char *name, uint32_t len)
{
    const nytp_profile *p = P->x->p;
    uint32_t clen = nytp_profile_strlen(p, caller);
    if (clen < len)
        return false;
    char buf[512];
    char *b = clen <= sizeof buf ? buf : malloc(clen);
    if (!b)
        return false;
    size_t n = nytp_calltree_normalise(nytp_profile_str(p, caller), clen, b);
    bool r = n == len && memcmp(b, name, len) == 0;
    if (b != buf)
        free(b);
    return r;
}

/* The line in caller from which it called called: the call-site data's,
 * when it names exactly one line in the caller's file; else the caller's
 * first line. */
static int64_t call_line(pprof *P, uint32_t caller, uint32_t called)
{
    uint32_t key[2] = {caller, called};
    bool added;
    uint32_t id = strmap_add(&P->edges, (const char *)key, sizeof key, false, &added);
    if (id == NYTP_NONE) {
        P->oom = true;
        return 0;
    }
    if (!added)
        return P->edges.v[id].value;
    const func *fc = &P->funcs[caller], *fd = &P->funcs[called];
    int64_t line = fc->start_line;
    if (fc->sub != NYTP_NONE && fd->sub != NYTP_NONE) {
        const nytp_profile *p = P->x->p;
        const nytp_sub *cs = &p->subs[fc->sub], *ds = &p->subs[fd->sub];
        const char *cname = strmap_str(&P->fnames, caller);
        uint32_t clen = P->fnames.v[caller].len;
        uint32_t found = 0, at = 0;
        for (uint32_t i = 0; i < ds->n_sites && found < 2; i++) {
            const nytp_site *s = &p->sites[ds->sites[i]];
            if (s->fid != cs->fid)
                continue;
            for (uint32_t j = 0; j < s->n_callers; j++) {
                if (caller_is(P, s->callers[j], cname, clen)) {
                    if (!found || s->line != at)
                        found++;
                    at = s->line;
                    break;
                }
            }
        }
        if (found == 1)
            line = at;
    }
    P->edges.v[id].value = (uint32_t)line;
    return line;
}

static void write_field(pprof *P, unsigned field, const pb *m)
{
    P->tmp.n = 0;
    pb_bytes(&P->tmp, field, m->p, m->n);
    if (P->tmp.oom || m->oom) {
        P->oom = true;
        return;
    }
    if (!P->out_status && nytp_out_write(P->out, P->tmp.p, P->tmp.n) < 0)
        P->out_status = nytp_out_error(P->out)->status;
}

/* One sample: locations leaf first. */
/* ns from fmt_time_units: a damaged time (NaN, an infinity, negative,
 * too large) is 0 or FMT_UNITS_MAX, never a value out of range. */
static void write_sample(pprof *P, const uint64_t *locs_leaf_first, uint32_t n, uint64_t ns,
                         uint64_t calls)
{
    P->packed.n = 0;
    for (uint32_t i = 0; i < n; i++)
        pb_varint(&P->packed, locs_leaf_first[i]);
    P->msg.n = 0;
    pb_bytes(&P->msg, 1, P->packed.p, P->packed.n);
    P->packed.n = 0;
    pb_varint(&P->packed, ns);
    if (!P->x->p->counts_unknown) /* a sampled profile has no calls values */
        pb_varint(&P->packed, calls);
    pb_bytes(&P->msg, 2, P->packed.p, P->packed.n);
    if (P->packed.oom)
        P->oom = true;
    write_field(P, 2, &P->msg);
    P->samples++;
    P->total_ns = fmt_units_add(P->total_ns, ns);
}

static bool ensure_depth(pprof *P, uint32_t depth)
{
    if (depth <= P->cap_depth)
        return true;
    /* two arrays, one count: each grows to the same doubling */
    uint32_t cf = P->cap_depth, cl = P->cap_depth;
    if (!cli_grow((void **)&P->fn_at, depth, &cf, sizeof *P->fn_at) ||
        !cli_grow((void **)&P->loc_at, depth, &cl, sizeof *P->loc_at)) {
        P->oom = true;
        return false;
    }
    P->cap_depth = cf < cl ? cf : cl;
    return true;
}

/* The lines of fn's sub with statement time, and each one's share of it:
 * the lines from its first to its last in its file (a sub defined inside
 * it counts with it).  The profile records statement time per line, not
 * per call path, so every path of a sub is split the same way. */
static const line_share *line_shares(pprof *P, uint32_t fn, uint32_t *n)
{
    func *f = &P->funcs[fn];
    if (!f->shares_known) {
        f->shares_known = true;
        f->first_share = P->n_shares;
        f->n_shares = 0;
        const nytp_profile *p = P->x->p;
        const nytp_sub *s = f->sub != NYTP_NONE ? &p->subs[f->sub] : NULL;
        const nytp_file *file = s && s->fid != NYTP_NONE ? nytp_profile_file(p, s->fid) : NULL;
        if (file && s->first_line != NYTP_NONE && s->last_line != NYTP_NONE && s->first_line > 0) {
            const nytp_lines *l = &file->line;
            uint32_t lo = 0, hi = l->n; /* the first entry at or after first_line */
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (l->v[mid].line < s->first_line)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            double sum = 0;
            for (uint32_t i = lo; i < l->n && l->v[i].line <= s->last_line; i++) {
                double t = l->v[i].time;
                if (!(t > 0) || !isfinite(t))
                    continue;
                if (P->n_shares == P->cap_shares) {
                    uint32_t cap = P->cap_shares ? P->cap_shares * 2 : 256;
                    line_share *b = cap > P->cap_shares ? realloc(P->shares, (size_t)cap * sizeof *b) : NULL;
                    if (!b) {
                        P->oom = true;
                        P->n_shares = f->first_share;
                        return NULL;
                    }
                    P->shares = b;
                    P->cap_shares = cap;
                }
                P->shares[P->n_shares++] = (line_share){l->v[i].line, t};
                sum = isfinite(sum + t) ? sum + t : sum;
            }
            f->n_shares = P->n_shares - f->first_share;
            for (uint32_t i = 0; i < f->n_shares; i++)
                P->shares[f->first_share + i].share /= sum;
        }
    }
    *n = f->n_shares;
    return f->n_shares ? P->shares + f->first_share : NULL;
}

/* A path of the call tree; its ancestors were visited just before. */
static int on_node(void *ctx, const nytp_calltree_visit *v)
{
    pprof *P = ctx;
    uint32_t d = v->depth;
    if (!ensure_depth(P, 2 * d))
        return NYTP_E_NOMEM;
    const nytp_str *name = &v->path[d - 1];
    uint32_t fn = func_of(P, name->ptr, name->len);
    if (P->oom) /* func_of's 0 may name no func yet */
        return NYTP_E_NOMEM;
    P->fn_at[d - 1] = fn;
    if (d >= 2)
        P->loc_at[d - 2] = loc_of(P, P->fn_at[d - 2], call_line(P, P->fn_at[d - 2], fn));
    P->loc_at[d - 1] = loc_of(P, fn, P->funcs[fn].start_line);
    /* leaf first, in the room after the path's own */
    uint64_t *ids = P->loc_at + d;
    for (uint32_t i = 0; i < d; i++)
        ids[i] = P->loc_at[d - 1 - i];
    uint64_t ns = fmt_time_units(v->excl, P->ns_per_tick);
    uint32_t n_shares;
    const line_share *sh = ns ? line_shares(P, fn, &n_shares) : NULL;
    if (!sh) {
        write_sample(P, ids, d, ns, v->calls);
    } else {
        /* the calls at the sub's first line (with that line's time, if it
         * has any), the time split over its lines; the parts add up to ns */
        uint64_t left = ns;
        int64_t start = P->funcs[fn].start_line;
        bool calls_written = false;
        for (uint32_t i = 0; i < n_shares; i++) {
            uint64_t part = i + 1 == n_shares ? left : (uint64_t)((double)ns * sh[i].share);
            if (part > left)
                part = left;
            left -= part;
            bool at_start = sh[i].line == start;
            if (!part && !at_start)
                continue;
            ids[0] = loc_of(P, fn, sh[i].line);
            write_sample(P, ids, d, part, at_start ? v->calls : 0);
            calls_written |= at_start;
        }
        if (!calls_written && v->calls) {
            ids[0] = loc_of(P, fn, start);
            write_sample(P, ids, d, 0, v->calls);
        }
    }
    if (P->oom)
        return NYTP_E_NOMEM;
    return P->out_status ? P->out_status : 0;
}

static int on_site_path(void *ctx, const nytp_str *path, uint32_t depth, uint32_t fid,
                        uint32_t line, double excl, uint64_t calls)
{
    pprof *P = ctx;
    uint64_t ids[2];
    uint32_t called = func_of(P, path[depth - 1].ptr, path[depth - 1].len);
    if (P->oom) /* func_of's 0 may name no func yet */
        return NYTP_E_NOMEM;
    ids[0] = loc_of(P, called, P->funcs[called].start_line);
    if (depth == 2) {
        uint32_t caller = func_of(P, path[0].ptr, path[0].len);
        if (P->oom)
            return NYTP_E_NOMEM;
        const func *fc = &P->funcs[caller];
        bool same_file = fc->sub != NYTP_NONE && P->x->p->subs[fc->sub].fid == fid;
        ids[1] = loc_of(P, caller, same_file ? (int64_t)line : fc->start_line);
    }
    write_sample(P, ids, depth, fmt_time_units(excl, 1e9), calls);
    if (P->oom)
        return NYTP_E_NOMEM;
    return P->out_status ? P->out_status : 0;
}

static void value_type(pprof *P, unsigned field, const char *type, const char *unit)
{
    pb m = {0};
    pb_int(&m, 1, str_idx(P, type, (uint32_t)strlen(type)));
    pb_int(&m, 2, str_idx(P, unit, (uint32_t)strlen(unit)));
    write_field(P, field, &m);
    free(m.p);
}

/* Everything but the samples: types, mapping, locations, functions,
 * times, and the string table last (every index is known by then). */
static void write_tables(pprof *P)
{
    const nytp_profile *p = P->x->p;
    pb m = {0}, line = {0};
    for (uint32_t i = 0; i < P->fnames.n && !P->oom; i++) {
        const func *f = &P->funcs[i];
        m.n = 0;
        pb_int(&m, 1, (uint64_t)i + 1);
        pb_int(&m, 2, f->name);
        pb_int(&m, 3, f->system_name);
        pb_int(&m, 4, f->file);
        pb_int(&m, 5, (uint64_t)f->start_line);
        write_field(P, 5, &m);
    }
    for (uint32_t i = 0; i < P->locs.n && !P->oom; i++) {
        uint32_t key[2];
        memcpy(key, strmap_str(&P->locs, i), sizeof key);
        line.n = 0;
        pb_int(&line, 1, (uint64_t)key[0] + 1);
        pb_int(&line, 2, key[1]);
        m.n = 0;
        pb_int(&m, 1, (uint64_t)i + 1);
        pb_int(&m, 2, 1);
        pb_bytes(&m, 4, line.p, line.n);
        write_field(P, 4, &m);
    }
    const char *app = nytp_profile_attr(p, "application");
    m.n = 0;
    pb_int(&m, 1, 1);
    pb_int(&m, 5, str_idx(P, app ? app : "perl", (uint32_t)strlen(app ? app : "perl")));
    pb_int(&m, 7, 1);  /* has_functions */
    pb_int(&m, 8, 1);  /* has_filenames */
    pb_int(&m, 9, 1);  /* has_line_numbers */
    write_field(P, 3, &m);
    value_type(P, 11, "wall", "nanoseconds");
    P->tmp.n = 0;
    /* the earliest process start: several inputs may have run apart */
    double start = p->have_start ? p->profiler_start_time : 0;
    for (uint32_t i = 0; i < p->n_procs; i++)
        if (fmt_time_scaled(p->procs[i].start, 1) > 0 && (start <= 0 || p->procs[i].start < start))
            start = p->procs[i].start;
    if (start > 0)
        pb_int(&P->tmp, 9, fmt_time_units(start, 1e9));
    pb_int(&P->tmp, 10, fmt_time_units(p->profiler_duration, 1e9));
    pb_int(&P->tmp, 12, P->ns_per_tick > 0 ? fmt_time_units(P->ns_per_tick, 1) : 1);
    if (P->comment) /* go tool pprof -comments */
        pb_int(&P->tmp, 13, str_idx(P, P->comment, (uint32_t)strlen(P->comment)));
    pb_int(&P->tmp, 14, str_idx(P, "wall", 4));
    if (P->tmp.oom)
        P->oom = true;
    else if (!P->out_status && nytp_out_write(P->out, P->tmp.p, P->tmp.n) < 0)
        P->out_status = nytp_out_error(P->out)->status;
    for (uint32_t i = 0; i < P->strings.n && !P->oom; i++) {
        m.n = 0;
        pb_put(&m, strmap_str(&P->strings, i), P->strings.v[i].len);
        write_field(P, 6, &m);
    }
    if (m.oom || line.oom)
        P->oom = true;
    free(m.p);
    free(line.p);
}

static int write_pprof(pprof *P)
{
    export_profile *x = P->x;
    str_idx(P, "", 0);
    value_type(P, 1, "wall", "nanoseconds");
    if (!x->p->counts_unknown) /* sampled: how often subs were called is not known */
        value_type(P, 1, "calls", "count");
    int st = 0;
    if (x->returns || x->viewed)
        st = nytp_calltree_walk(x->t, 0, on_node, P);
    else
        st = export_site_paths(x, on_site_path, P);
    if (st == 0)
        write_tables(P);
    if (P->oom || st == NYTP_E_NOMEM)
        return NYTP_E_NOMEM;  /* cli_output_finish says so */
    if (P->out_status)
        return P->out_status;
    return st < 0 ? st : NYTP_OK;
}

static void pprof_release(pprof *P)
{
    strmap_release(&P->strings);
    strmap_release(&P->fnames);
    strmap_release(&P->locs);
    strmap_release(&P->edges);
    free(P->funcs);
    free(P->shares);
    free(P->fn_at);
    free(P->loc_at);
    free(P->norm);
    free(P->tmp.p);
    free(P->msg.p);
    free(P->packed.p);
}

/* The profile x as a gzipped pprof profile into out. */
static int pprof_write(nytp_out *out, export_profile *x, const char *comment)
{
    double tps = x->p->ticks_per_sec;
    pprof P = {0};
    P.x = x;
    P.out = out;
    P.comment = comment && *comment ? comment : NULL;
    P.ns_per_tick = tps > 0 ? 1e9 / tps : 0;
    int st = nytp_out_start_gzip(out, 6);
    if (st == NYTP_OK)
        st = write_pprof(&P);
    pprof_release(&P);
    return st;
}

/* ---- the command -------------------------------------------------------------- */

struct pprof_opts {
    bool strict;
    const char *output;
    viewopt vo;
};

enum { OPT_STRICT = 256 };

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct pprof_opts *o = ctx;
    if (viewopt_on_opt(&o->vo, opt, arg))
        return;
    switch (opt) {
    case OPT_STRICT: o->strict = true; break;
    case 'o': o->output = arg; break;
    }
}

int cmd_pprof(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"strict", no_argument, NULL, OPT_STRICT},
        VIEWOPT_LONGOPTS,
        {"output", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    struct pprof_opts o = {false, "nytprof.pb.gz", {NULL, 0}};
    viewopt_init(&o.vo);
    int first = cli_parse(argc, argv, "f:o:", longopts, usage, on_opt, &o);
    cli_output_not_input(o.output, argc - first, argv + first, "nytprof.out");
    export_profile x;
    int rc = export_load(&x, argc - first, argv + first, o.strict, NULL, NULL);
    if (rc != EXIT_OK) {
        viewopt_release(&o.vo);
        return rc;
    }
    if (export_apply_view(&x, &o.vo) < 0) {
        viewopt_release(&o.vo);
        export_release(&x);
        return EXIT_BAD_INPUT;
    }
    char comment[1024];
    viewopt_header(&o.vo, comment, sizeof comment, x.p->ticks_per_sec);
    double tps = x.p->ticks_per_sec;
    if (x.returns && !(tps > 0)) {
        cli_error("%s: no ticks_per_sec attribute, so call event ticks cannot be converted to "
                  "time", argc > first ? argv[first] : "nytprof.out");
        viewopt_release(&o.vo);
        export_release(&x);
        return EXIT_BAD_INPUT;
    }
    if (!x.returns)
        cli_warn("%s: no sub return events (profiled with calls=0?): samples are caller;called "
                 "paths from the call-site data",
                 argc - first == 1 ? argv[first] : argc > first ? "the profiles" : "nytprof.out");
    nytp_out *out = cli_output_open(o.output);
    if (!out) {
        viewopt_release(&o.vo);
        export_release(&x);
        return EXIT_BAD_INPUT;
    }
    int st = pprof_write(out, &x, comment);
    viewopt_release(&o.vo);
    export_release(&x);
    return cli_output_finish(out, o.output, st);
}

int pprof_write_memory(const void *data, size_t size)
{
    export_profile x;
    int st = export_load_mem(&x, data, size, 2, NULL, NULL);
    if (st < 0)
        return st;
    nytp_out *out;
    nytp_error e = {0};
    if ((st = nytp_out_open_mem(&out, &e)) == NYTP_OK) {
        st = pprof_write(out, &x, NULL);
        nytp_out_abort(out);
    }
    export_release(&x);
    return st;
}

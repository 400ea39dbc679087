/* cachegrind.c — 'nytp cachegrind': the profile in callgrind format, for
 * KCachegrind, QCachegrind and callgrind_annotate.
 *
 * The event is Ticks, the profiler's clock ticks.  Every statement line's
 * time is self cost on that line, charged to the function the line is in:
 * the innermost sub defined in the file whose lines hold it; a string
 * eval's top-level code counts on the line that ran the eval (in the
 * function there); a file's top-level code belongs to the sub recorded as
 * calling from it most (main::RUNTIME for the main script, the BEGIN block
 * that loaded a module).  Each call site gives one call record: the caller
 * as the profiler recorded it (several callers of one site are joined with
 * " or ", as nytprofcg does), the call count and the inclusive time.
 * String evals are collapsed first, as in every Devel::NYTProf report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export.h"
#include "commands.h"
#include "fmt.h"
#include "viewopt.h"

static const char usage[] =
    "usage: nytp cachegrind [-o FILE] [--strict]\n"
    "                       [--focus=file:RE] [--ignore=file:RE] [--hide=file:RE] [FILE...]\n"
    "\n"
    "Write the profile in callgrind format, for KCachegrind, QCachegrind and\n"
    "callgrind_annotate (default output: nytprof.callgrind; '-' is standard\n"
    "output).  The cost is clock ticks: each statement line's time is self\n"
    "cost of the sub it is in; each call site is a call record with its count\n"
    "and inclusive ticks.  Several FILEs are added up into one profile\n"
    "(default FILE: nytprof.out; '-' reads standard input).\n"
    "\n"
    "  -f, --file=FILE   read FILE (the same as naming it)\n"
    "  -o, --out=FILE    write to FILE, atomically (default: nytprof.callgrind);\n"
    "                    --output is the same\n"
    "  --strict          a truncated profile is an error (exit 1)\n"
    "  --focus=file:RE   only the lines and call sites of files whose name\n"
    "                    matches RE (POSIX extended; repeatable)\n"
    "  --ignore=file:RE, --hide=file:RE\n"
    "                    leave out the lines and call sites of matching files;\n"
    "                    only file: patterns (the cost is per line, not per\n"
    "                    call stack); a 'desc: View:' line says what was left out\n"
    "  -h, --help        this help\n"
    "\n"
    "Exit status: 0 ok (a truncated file only warns), 1 bad input, 2 usage.\n";

typedef struct cg_opts {
    const char *out;
    bool strict;
    viewopt vo;             /* only file: patterns */
} cg_opts;

enum { OPT_STRICT = 256 };

static void on_opt(int opt, const char *arg, void *ctx)
{
    cg_opts *o = ctx;
    if (viewopt_on_opt(&o->vo, opt, arg)) {
        if (strncmp(arg, "file:", 5) != 0)
            cli_usage_error("'%s': nytp cachegrind's cost is per line, not per call stack: only "
                            "'file:RE' patterns apply", arg);
        return;
    }
    switch (opt) {
    case 'o': o->out = arg; break;
    case OPT_STRICT: o->strict = true; break;
    }
}

/* ---- names: interned byte strings (strmap) ------------------------------ */

/* The id of name s (len bytes), added if new; NYTP_NONE when out of memory. */
static uint32_t intern(strmap *t, const char *s, size_t len)
{
    return len < UINT32_MAX ? strmap_add(t, s, (uint32_t)len, false, NULL) : NYTP_NONE;
}

/* ---- functions: (file, name) pairs -------------------------------------- */

typedef struct func {
    uint32_t fl, fn;        /* name ids */
    uint32_t rank;          /* position in output order */
} func;

/* One output record: self cost on a line, or a call. */
typedef struct entry {
    uint32_t func;          /* whose record */
    uint32_t file;          /* name id of the position's file */
    uint32_t line;
    uint64_t ticks;
    uint32_t callee;        /* func id, NYTP_NONE for self cost */
    uint64_t calls;
    uint32_t target;        /* callee's first line */
} entry;

typedef struct cg_run {
    const nytp_profile *p;
    strmap names;
    func *funcs;
    uint32_t n_funcs, cap_funcs;
    strmap func_keys;       /* (fl, fn) as 8 bytes -> func id */
    entry *entries;
    size_t n_entries, cap_entries;
    uint32_t **oline;       /* per fid: the lines asked about (with statements, calls or evals), sorted */
    uint32_t **owner;       /* per fid: the innermost sub (id) holding each of them, or NONE */
    uint32_t *owner_n;
    uint32_t *top;          /* per fid: func of the top-level code, NONE until known */
    struct at { uint32_t sub, fid, line; } *ran_at; /* per string eval: where the line that ran it counts */
    uint32_t unknown;       /* name id of "Unknown" */
    const viewopt *vo;      /* file: patterns, or NULL */
    double view_all, view_kept; /* statement ticks before and after them */
    bool oom;
} cg_run;

static uint32_t func_of(cg_run *R, uint32_t fl, uint32_t fn)
{
    if (fl == NYTP_NONE || fn == NYTP_NONE) {
        R->oom = true;
        return NYTP_NONE;
    }
    uint32_t key[2] = {fl, fn};
    bool added;
    uint32_t id = strmap_add(&R->func_keys, (const char *)key, sizeof key, false, &added);
    if (id == NYTP_NONE) {
        R->oom = true;
        return NYTP_NONE;
    }
    if (!added)
        return id;
    /* a new key's id is the next func's */
    if (!cli_grow((void **)&R->funcs, (size_t)R->n_funcs + 1, &R->cap_funcs, sizeof *R->funcs)) {
        R->oom = true;
        return NYTP_NONE;
    }
    R->funcs[R->n_funcs] = (func){fl, fn, 0};
    return R->n_funcs++;
}

static uint32_t model_name(cg_run *R, uint32_t str)
{
    return intern(&R->names, nytp_profile_str(R->p, str), nytp_profile_strlen(R->p, str));
}

/* The name id of the file of fid, or of "Unknown". */
static uint32_t file_name(cg_run *R, uint32_t fid)
{
    const nytp_file *f = nytp_profile_file(R->p, fid);
    return f ? model_name(R, f->name) : R->unknown;
}

/* The function of sub id. */
static uint32_t sub_func(cg_run *R, uint32_t sid)
{
    const nytp_sub *s = &R->p->subs[sid];
    return func_of(R, file_name(R, s->fid), model_name(R, s->name));
}

/* The function called name (a name id): the sub of that name, in the file
 * it is defined in, or else a function of that name in file fl. */
static uint32_t named_func(cg_run *R, uint32_t name, uint32_t fl)
{
    uint32_t sid = nytp_profile_sub_by_name(R->p, strmap_str(&R->names, name), R->names.v[name].len);
    if (sid != NYTP_NONE && nytp_profile_file(R->p, R->p->subs[sid].fid))
        fl = file_name(R, R->p->subs[sid].fid);
    return func_of(R, fl, name);
}

static bool add_entry(cg_run *R, entry e)
{
    if (e.func == NYTP_NONE || e.file == NYTP_NONE) {
        R->oom = true;
        return false;
    }
    if (R->n_entries == R->cap_entries) {
        size_t c = R->cap_entries ? R->cap_entries * 2 : 4096;
        entry *v = realloc(R->entries, c * sizeof *v);
        if (!v) {
            R->oom = true;
            return false;
        }
        R->entries = v;
        R->cap_entries = c;
    }
    R->entries[R->n_entries++] = e;
    return true;
}

/* ---- which sub a line is in ----------------------------------------------- */

static int cmp_longer_first(const void *a, const void *b, void *ctx)
{
    const nytp_profile *p = ctx;
    const nytp_sub *x = &p->subs[*(const uint32_t *)a], *y = &p->subs[*(const uint32_t *)b];
    uint32_t lx = x->last_line - x->first_line, ly = y->last_line - y->first_line;
    if (lx != ly)
        return lx > ly ? -1 : 1;
    return x->first_line < y->first_line ? -1 : x->first_line > y->first_line;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The index of the first of v[0..n-1] (sorted) that is >= line. */
static uint32_t lower_bound(const uint32_t *v, uint32_t n, uint32_t line)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* owner[fid][k]: the innermost sub defined in fid whose lines hold
 * oline[fid][k], painted longest range first so that inner subs win.
 * Only the lines with statements, calls or evals are kept, so memory
 * follows them, not the line numbers. */
static bool build_owners(cg_run *R)
{
    const nytp_profile *p = R->p;
    R->oline = calloc(p->n_files + 1, sizeof *R->oline);
    R->owner = calloc(p->n_files + 1, sizeof *R->owner);
    R->owner_n = calloc(p->n_files + 1, sizeof *R->owner_n);
    R->top = malloc((p->n_files + 1) * sizeof *R->top);
    if (!R->oline || !R->owner || !R->owner_n || !R->top)
        return false;
    for (uint32_t fid = 0; fid < p->n_files; fid++)
        R->top[fid] = NYTP_NONE;
    for (uint32_t fid = 0; fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        if (!f->defined || !f->n_subs)
            continue;
        uint32_t *subs = malloc(f->n_subs * sizeof *subs);
        size_t nl = (size_t)f->line.n + f->n_sites + f->n_evals;
        uint32_t *lines = malloc((nl ? nl : 1) * sizeof *lines);
        uint32_t *own = malloc((nl ? nl : 1) * sizeof *own);
        if (!subs || !lines || !own) {
            free(subs);
            free(lines);
            free(own);
            return false;
        }
        size_t k = 0;
        for (uint32_t i = 0; i < f->line.n; i++)
            lines[k++] = f->line.v[i].line;
        for (uint32_t i = 0; i < f->n_sites; i++)
            lines[k++] = p->sites[f->sites[i]].line;
        for (uint32_t i = 0; i < f->n_evals; i++)
            lines[k++] = p->files[f->evals[i]].eval_line;
        qsort(lines, nl, sizeof *lines, cmp_u32);
        uint32_t m = 0;
        for (size_t i = 0; i < nl; i++)
            if (!m || lines[m - 1] != lines[i])
                lines[m++] = lines[i];
        for (uint32_t i = 0; i < m; i++)
            own[i] = NYTP_NONE;
        uint32_t n = 0;
        for (uint32_t i = 0; i < f->n_subs; i++) {
            const nytp_sub *s = &p->subs[f->subs[i]];
            if (s->fid != fid || s->first_line == NYTP_NONE || s->last_line == NYTP_NONE ||
                !s->first_line || s->last_line < s->first_line)
                continue;
            subs[n++] = f->subs[i];
        }
        qsort_r(subs, n, sizeof *subs, cmp_longer_first, (void *)p);
        for (uint32_t i = 0; i < n; i++) {
            const nytp_sub *s = &p->subs[subs[i]];
            for (uint32_t j = lower_bound(lines, m, s->first_line); j < m && lines[j] <= s->last_line; j++)
                own[j] = subs[i];
        }
        free(subs);
        R->oline[fid] = lines;
        R->owner[fid] = own;
        R->owner_n[fid] = m;
    }
    return true;
}

static uint32_t owner_of(const cg_run *R, uint32_t fid, uint32_t line)
{
    if (fid >= R->p->n_files || !R->owner_n[fid])
        return NYTP_NONE;
    uint32_t j = lower_bound(R->oline[fid], R->owner_n[fid], line);
    return j < R->owner_n[fid] && R->oline[fid][j] == line ? R->owner[fid][j] : NYTP_NONE;
}

/* Where (fid, line) counts: lines of a string eval that are in no sub of
 * the eval move to the line that ran the eval, until a sub or a real file
 * is reached.  Returns the sub found, or NONE for top-level code of *fid. */
static uint32_t position(const cg_run *R, uint32_t *fid, uint32_t *line)
{
    uint32_t s = owner_of(R, *fid, *line);
    if (s != NYTP_NONE)
        return s;
    const nytp_file *f = nytp_profile_file(R->p, *fid);
    if (!f || !f->eval_depth)
        return NYTP_NONE;
    *fid = R->ran_at[f->fid].fid;
    *line = R->ran_at[f->fid].line;
    return R->ran_at[f->fid].sub;
}

/* ran_at of every string eval, each found from its parent's (parents come
 * first in evals_by_depth): linear however deep evals nest. */
static bool build_ran_at(cg_run *R)
{
    const nytp_profile *p = R->p;
    R->ran_at = malloc(((size_t)p->n_files + 1) * sizeof *R->ran_at);
    if (!R->ran_at)
        return false;
    for (uint32_t i = 0; i < p->n_evals_by_depth; i++) {
        const nytp_file *f = &p->files[p->evals_by_depth[i]];
        uint32_t up = f->eval_fid, s = owner_of(R, up, f->eval_line);
        if (s != NYTP_NONE || !p->files[up].eval_depth)
            R->ran_at[f->fid] = (struct at){s, up, f->eval_line};
        else
            R->ran_at[f->fid] = R->ran_at[up];
    }
    return true;
}

/* The caller name of a call site: its one recorded caller, or all of them
 * sorted and joined with " or " (nytprofcg's rule), or "__main". */
static int cmp_bytes(const void *a, const void *b, void *ctx)
{
    const nytp_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t lx = nytp_profile_strlen(p, x), ly = nytp_profile_strlen(p, y);
    int c = memcmp(nytp_profile_str(p, x), nytp_profile_str(p, y), lx < ly ? lx : ly);
    return c ? c : (lx < ly ? -1 : lx > ly);
}

static uint32_t caller_name(cg_run *R, const nytp_site *s)
{
    const nytp_profile *p = R->p;
    if (s->n_callers == 0)
        return intern(&R->names, "__main", 6);
    if (s->n_callers == 1)
        return model_name(R, s->callers[0]);
    uint32_t *ids = malloc(s->n_callers * sizeof *ids);
    size_t len = 0;
    if (!ids)
        return NYTP_NONE;
    memcpy(ids, s->callers, s->n_callers * sizeof *ids);
    qsort_r(ids, s->n_callers, sizeof *ids, cmp_bytes, (void *)p);
    for (uint32_t i = 0; i < s->n_callers; i++)
        len += nytp_profile_strlen(p, ids[i]) + 4;
    char *buf = malloc(len + 1);
    uint32_t id = NYTP_NONE;
    if (buf) {
        char *o = buf;
        for (uint32_t i = 0; i < s->n_callers; i++) {
            if (i) {
                memcpy(o, " or ", 4);
                o += 4;
            }
            memcpy(o, nytp_profile_str(p, ids[i]), nytp_profile_strlen(p, ids[i]));
            o += nytp_profile_strlen(p, ids[i]);
        }
        id = intern(&R->names, buf, (size_t)(o - buf));
        free(buf);
    }
    free(ids);
    return id;
}

static uint64_t ticks(const nytp_profile *p, double secs)
{
    return fmt_time_units(secs, p->ticks_per_sec);
}

/* The function of the top-level code of real file fid: the caller the
 * profiler recorded most (by calls) on its lines outside subs, else
 * main::RUNTIME. */
static uint32_t top_func(cg_run *R, uint32_t fid)
{
    if (R->top[fid] != NYTP_NONE)
        return R->top[fid];
    const nytp_profile *p = R->p;
    const nytp_file *f = &p->files[fid];
    uint32_t best = NYTP_NONE;
    uint64_t best_calls = 0;
    for (uint32_t i = 0; i < f->n_sites; i++) {
        const nytp_site *s = &p->sites[f->sites[i]];
        if (s->n_callers != 1 || owner_of(R, fid, s->line) != NYTP_NONE)
            continue;
        if (best == NYTP_NONE || s->count > best_calls) {
            best = s->callers[0];
            best_calls = s->count;
        }
    }
    uint32_t name = best != NYTP_NONE ? model_name(R, best) : intern(&R->names, "main::RUNTIME", 13);
    R->top[fid] = name == NYTP_NONE ? NYTP_NONE : named_func(R, name, file_name(R, fid));
    return R->top[fid];
}

/* Whether the file: patterns keep file fid (a string eval goes with the
 * file it was run from). */
static bool shown(const cg_run *R, uint32_t fid)
{
    const nytp_profile *p = R->p;
    if (!R->vo || fid >= p->n_files)
        return true;
    const nytp_file *root = &p->files[p->files[fid].root_fid];
    return !root->defined || nytp_view_file(R->vo->v, nytp_profile_str(p, root->name)) == NYTP_VIEW_SHOWN;
}

static void collect(cg_run *R)
{
    const nytp_profile *p = R->p;
    /* self cost: statement time per line */
    for (uint32_t fid = 1; fid < p->n_files && !R->oom; fid++) {
        const nytp_file *f = &p->files[fid];
        if (!f->defined)
            continue;
        for (uint32_t i = 0; i < f->line.n && !R->oom; i++) {
            uint64_t t = ticks(p, f->line.v[i].time);
            if (!t)
                continue;
            uint32_t pf = fid, pl = f->line.v[i].line;
            R->view_all += (double)t;
            if (!shown(R, fid))
                continue;
            R->view_kept += (double)t;
            uint32_t sid = position(R, &pf, &pl);
            uint32_t fn = sid != NYTP_NONE ? sub_func(R, sid) : top_func(R, pf);
            add_entry(R, (entry){fn, file_name(R, pf), pl, t, NYTP_NONE, 0, 0});
        }
    }
    /* calls: one record per call site */
    for (uint32_t i = 0; i < p->n_sites && !R->oom; i++) {
        const nytp_site *s = &p->sites[i];
        if (!nytp_profile_file(p, s->fid) || s->called == NYTP_NONE)
            continue;
        uint32_t pf = s->fid, pl = s->line;
        if (!shown(R, s->fid))
            continue;
        position(R, &pf, &pl);
        uint32_t file = file_name(R, pf);
        uint32_t name = caller_name(R, s);
        uint32_t caller = name == NYTP_NONE ? NYTP_NONE : named_func(R, name, file);
        const nytp_sub *callee = &p->subs[s->called];
        uint32_t target = callee->first_line == NYTP_NONE ? 0 : callee->first_line;
        add_entry(R, (entry){caller, file, pl, ticks(p, s->incl), sub_func(R, s->called), s->count,
                             target});
    }
}

/* ---- output ----------------------------------------------------------------- */

static int cmp_func_names(const void *a, const void *b, void *ctx)
{
    const cg_run *R = ctx;
    const func *x = &R->funcs[*(const uint32_t *)a], *y = &R->funcs[*(const uint32_t *)b];
    int c = strcmp(strmap_str(&R->names, x->fl), strmap_str(&R->names, y->fl));
    if (!c)
        c = strcmp(strmap_str(&R->names, x->fn), strmap_str(&R->names, y->fn));
    return c;
}

static int cmp_entries(const void *a, const void *b, void *ctx)
{
    const cg_run *R = ctx;
    const entry *x = a, *y = b;
    uint32_t rx = R->funcs[x->func].rank, ry = R->funcs[y->func].rank;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    bool cx = x->callee != NYTP_NONE, cy = y->callee != NYTP_NONE;
    if (cx != cy)
        return cx ? 1 : -1;
    if (x->file != y->file) /* the function's own file first */
        return x->file == R->funcs[x->func].fl ? -1
             : y->file == R->funcs[y->func].fl ? 1
             : strcmp(strmap_str(&R->names, x->file), strmap_str(&R->names, y->file));
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (cx && R->funcs[x->callee].rank != R->funcs[y->callee].rank)
        return R->funcs[x->callee].rank < R->funcs[y->callee].rank ? -1 : 1;
    return 0;
}

/* A name as one line of valid UTF-8: bytes that are not UTF-8 are read as
 * Latin-1 (how Devel::NYTProf writes such names), LF and CR become \n and
 * \r, other control bytes \xHH. */
static char *put_name(char *o, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    bool valid = true;
    for (size_t i = 0; i < len && valid;) {
        size_t k = fmt_utf8_seq(s + i, len - i);
        valid = k > 0;
        i += k;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned c = s[i];
        if (c == '\n' || c == '\r') {
            *o++ = '\\';
            *o++ = c == '\n' ? 'n' : 'r';
        } else if ((c < 0x20 && c != '\t') || c == 0x7F) {
            o += sprintf(o, "\\x%02x", c);
        } else if (c >= 0x80 && !valid) {
            *o++ = (char)(0xC0 | c >> 6);
            *o++ = (char)(0x80 | (c & 0x3F));
        } else {
            *o++ = (char)c;
        }
    }
    return o;
}

typedef struct emitter {
    nytp_out *out;
    const cg_run *R;
    bool *fl_done, *fn_done;    /* per name id: compressed id given */
} emitter;

/* "KEY=(id)" plus " name" the first time id is used in this context. */
static int put_ref(emitter *E, const char *key, uint32_t id, bool *done)
{
    const strmap *t = &E->R->names;
    size_t room = strlen(key) + 32 + (done[id] ? 0 : 4 * (size_t)t->v[id].len);
    char *o = (char *)nytp_out_reserve(E->out, room);
    if (!o)
        return -1;
    char *start = o;
    o += sprintf(o, "%s=(%u)", key, id + 1);
    if (!done[id]) {
        *o++ = ' ';
        o = put_name(o, strmap_str(t, id), t->v[id].len);
        done[id] = true;
    }
    *o++ = '\n';
    nytp_out_commit(E->out, (size_t)(o - start));
    return 0;
}

static int put_numbers(nytp_out *out, const char *prefix, uint64_t a, uint64_t b)
{
    char *o = (char *)nytp_out_reserve(out, 64);
    if (!o)
        return -1;
    char *start = o;
    size_t n = strlen(prefix);
    memcpy(o, prefix, n);
    o = fmt_u64(o + n, a);
    *o++ = ' ';
    o = fmt_u64(o, b);
    *o++ = '\n';
    nytp_out_commit(out, (size_t)(o - start));
    return 0;
}

static int emit(cg_run *R, nytp_out *out)
{
    const nytp_profile *p = R->p;
    uint32_t *order = malloc((R->n_funcs + 1) * sizeof *order);
    emitter E = {out, R, calloc(R->names.n + 1, 1), calloc(R->names.n + 1, 1)};
    if (!order || !E.fl_done || !E.fn_done) {
        free(order);
        free(E.fl_done);
        free(E.fn_done);
        return -2;
    }
    for (uint32_t i = 0; i < R->n_funcs; i++)
        order[i] = i;
    qsort_r(order, R->n_funcs, sizeof *order, cmp_func_names, R);
    for (uint32_t i = 0; i < R->n_funcs; i++)
        R->funcs[order[i]].rank = i;
    if (R->n_entries)
        qsort_r(R->entries, R->n_entries, sizeof *R->entries, cmp_entries, R);

    const char *app = nytp_profile_attr(p, "application");
    nytp_out_printf(out, "# callgrind format\nversion: 1\ncreator: nytp %s\n", NYTP_VERSION_STRING);
    if (app) {
        char *o = (char *)nytp_out_reserve(out, 4 * strlen(app) + 8);
        if (o) {
            char *start = o;
            memcpy(o, "cmd: ", 5);
            o = put_name(o + 5, app, strlen(app));
            *o++ = '\n';
            nytp_out_commit(out, (size_t)(o - start));
        }
    }
    /* What a Tick is: KCachegrind shows the event's long name, and
     * callgrind_annotate prints the desc: lines above its table. */
    const char *tps_attr = nytp_profile_attr(p, "ticks_per_sec");
    double tps = tps_attr ? atof(tps_attr) : 0;
    if (!(tps > 0))
        tps = 1e7; /* NYTProf's usual clock: 100 ns */
    char tick[64];
    double ns = 1e9 / tps;
    if (ns >= 1 && ns == (double)(long long)ns)
        snprintf(tick, sizeof tick, "%lld ns", (long long)ns);
    else
        snprintf(tick, sizeof tick, "%g s", 1 / tps);
    nytp_out_printf(out, "desc: Tick: %s of the profiler's clock (ticks_per_sec %.15g)\n", tick, tps);
    if (R->vo) {
        static const char *const words[] = {"focus", "ignore", "hide"};
        nytp_out_printf(out, "desc: View:");
        for (int op = 0, k = 0; op < NYTP_VIEW_N_OPS; op++)
            for (size_t i = 0; i < nytp_view_count(R->vo->v, (enum nytp_view_op)op); i++, k++)
                nytp_out_printf(out, "%s %s '%s'", k ? "," : "", words[op],
                                nytp_view_pattern(R->vo->v, (enum nytp_view_op)op, i));
        nytp_out_printf(out, ": %.1f%% of the statement ticks shown (the files' lines and call sites "
                             "left out)\n", R->view_all > 0 ? 100 * R->view_kept / R->view_all : 0.0);
    }
    char note[160];
    if (cli_sampled_note(p, note, sizeof note))
        nytp_out_printf(out, "desc: Sampled: %s (calls= are the calls the sampler saw, not how "
                             "often each sub was called)\n", note);
    nytp_out_printf(out, "positions: line\nevent: Ticks : Ticks (%s each)\nevents: Ticks\n", tick);

    uint32_t cur_func = NYTP_NONE, cur_file = NYTP_NONE, cur_fl = NYTP_NONE;
    int st = 0;
    for (size_t i = 0; i < R->n_entries && !st; i++) {
        const entry *e = &R->entries[i];
        const func *f = &R->funcs[e->func];
        if (e->func != cur_func) {
            nytp_out_write(out, "\n", 1);
            if (cur_fl != f->fl || cur_file != f->fl)
                st |= put_ref(&E, "fl", f->fl, E.fl_done);
            st |= put_ref(&E, "fn", f->fn, E.fn_done);
            cur_func = e->func;
            cur_fl = cur_file = f->fl;
        }
        if (e->file != cur_file) {
            st |= put_ref(&E, e->file == f->fl ? "fe" : "fi", e->file, E.fl_done);
            cur_file = e->file;
        }
        if (e->callee == NYTP_NONE) {
            st |= put_numbers(out, "", e->line, e->ticks);
        } else {
            const func *c = &R->funcs[e->callee];
            st |= put_ref(&E, "cfl", c->fl, E.fl_done);
            st |= put_ref(&E, "cfn", c->fn, E.fn_done);
            st |= put_numbers(out, "calls=", e->calls, e->target);
            st |= put_numbers(out, "", e->line, e->ticks);
        }
    }
    free(order);
    free(E.fl_done);
    free(E.fn_done);
    return st;
}

/* The callgrind file of p (its evals collapsed here) into out: 0, or
 * NYTP_E_NOMEM (said by the caller), or the output's error status. */
static int cachegrind_write(nytp_profile *p, nytp_out *out, const viewopt *vo)
{
    if (nytp_profile_collapse_evals(p) < 0)
        return NYTP_E_NOMEM;
    cg_run R = {0};
    R.p = p;
    R.vo = vo && viewopt_active(vo) ? vo : NULL;
    R.unknown = intern(&R.names, "Unknown", 7);
    if (R.unknown == NYTP_NONE || !build_owners(&R) || !build_ran_at(&R))
        R.oom = true;
    if (!R.oom)
        collect(&R);
    int st = R.oom ? NYTP_E_NOMEM : emit(&R, out) ? -1 : 0;
    if (R.owner)
        for (uint32_t i = 0; i < p->n_files; i++)
            free(R.owner[i]);
    if (R.oline)
        for (uint32_t i = 0; i < p->n_files; i++)
            free(R.oline[i]);
    free(R.owner);
    free(R.oline);
    free(R.owner_n);
    free(R.top);
    free(R.ran_at);
    free(R.funcs);
    strmap_release(&R.func_keys);
    free(R.entries);
    strmap_release(&R.names);
    return st;
}

int cmd_cachegrind(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},
        {"output", required_argument, NULL, 'o'},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"focus", required_argument, NULL, OPT_VIEW_FOCUS},
        {"ignore", required_argument, NULL, OPT_VIEW_IGNORE},
        {"hide", required_argument, NULL, OPT_VIEW_HIDE},
        {NULL, 0, NULL, 0},
    };
    cg_opts o = {"nytprof.callgrind", false, {NULL, 0}};
    viewopt_init(&o.vo);
    int first = cli_parse(argc, argv, "f:o:", longopts, usage, on_opt, &o);
    cli_output_not_input(o.out, argc - first, argv + first, "nytprof.out");
    if (!*o.out)
        cli_usage_error("--out needs a file name");

    int rc;
    nytp_profile *p = cli_load_profile(argc - first, argv + first, o.strict, &rc);
    if (!p) {
        viewopt_release(&o.vo);
        return rc;
    }
    nytp_out *out = cli_output_open(o.out);
    if (!out) {
        nytp_profile_free(p);
        return EXIT_BAD_INPUT;
    }
    int st = cachegrind_write(p, out, &o.vo);
    if (st == NYTP_E_NOMEM) {
        nytp_out_abort(out);
        cli_error("out of memory");
        rc = EXIT_BAD_INPUT;
    } else {
        rc = cli_output_finish(out, o.out, st);
    }
    nytp_profile_free(p);
    viewopt_release(&o.vo);
    return rc;
}

int cachegrind_write_memory(nytp_profile *p)
{
    nytp_out *out;
    nytp_error e = {0};
    int st = nytp_out_open_mem(&out, &e);
    if (st < 0)
        return st;
    st = cachegrind_write(p, out, NULL);
    nytp_out_abort(out);
    return st;
}

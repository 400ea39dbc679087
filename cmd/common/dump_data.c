/* dump_data.c — 'nytp dump --data': the loaded model as sorted text in
 * the layout of Devel::NYTProf::Data's dump_profile_data (with a TAB
 * separator), or as one JSON document. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_data.h"
#include "fmt.h"
#include "json.h"

/* ---- sorting ------------------------------------------------------------ */

static const nytp_profile *sort_p; /* qsort has no context argument */

static int cmp_name_ids(uint32_t a, uint32_t b)
{
    const nytp_profile *p = sort_p;
    uint32_t la = nytp_profile_strlen(p, a), lb = nytp_profile_strlen(p, b);
    int c = memcmp(nytp_profile_str(p, a), nytp_profile_str(p, b), la < lb ? la : lb);
    if (c)
        return c;
    return la < lb ? -1 : la > lb;
}

static int cmp_kv(const void *x, const void *y)
{
    return cmp_name_ids(((const nytp_kv *)x)->key, ((const nytp_kv *)y)->key);
}

static int cmp_sub_ids(const void *x, const void *y)
{
    const nytp_profile *p = sort_p;
    return cmp_name_ids(p->subs[*(const uint32_t *)x].name, p->subs[*(const uint32_t *)y].name);
}

static int cmp_str_ids(const void *x, const void *y)
{
    return cmp_name_ids(*(const uint32_t *)x, *(const uint32_t *)y);
}

/* call lines of a file: by line, then called sub name */
static int cmp_site_line_name(const void *x, const void *y)
{
    const nytp_site *a = &sort_p->sites[*(const uint32_t *)x];
    const nytp_site *b = &sort_p->sites[*(const uint32_t *)y];
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return cmp_name_ids(sort_p->subs[a->called].name, sort_p->subs[b->called].name);
}

/* called_by lines of a sub: by calling fid, then line */
static int cmp_site_fid_line(const void *x, const void *y)
{
    const nytp_site *a = &sort_p->sites[*(const uint32_t *)x];
    const nytp_site *b = &sort_p->sites[*(const uint32_t *)y];
    if (a->fid != b->fid)
        return a->fid < b->fid ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* A sorted copy of v, or NULL with out failed (so that a dump with a
 * list left out is never taken for a whole one). */
static uint32_t *sorted_copy(nytp_out *out, const uint32_t *v, uint32_t n,
                             int (*cmp)(const void *, const void *))
{
    uint32_t *c = malloc((n ? n : 1) * sizeof *c);
    if (!c) {
        nytp_out_fail(out, NYTP_E_NOMEM, "out of memory");
        return NULL;
    }
    if (n)
        memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp);
    return c;
}

/* ---- file names as Devel::NYTProf shows them ----------------------------- */

/* Does an anchor of the @INC-stripping rule end just before position i of
 * s?  Anchors: the start, a '[', or whitespace "defined" whitespace "at"
 * whitespace.  Returns the anchor's start, or -1. */
static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Length of the "\sdefined\sat\s" anchor at s+i, or 0. */
static size_t defined_at(const char *s, size_t len, size_t i)
{
    static const char mid[] = "defined";
    if (i + 12 > len || !is_space((unsigned char)s[i]) || memcmp(s + i + 1, mid, 7) != 0 ||
        !is_space((unsigned char)s[i + 8]) || s[i + 9] != 'a' || s[i + 10] != 't' ||
        !is_space((unsigned char)s[i + 11]))
        return 0;
    return 12;
}

/* Strip the first @INC prefix (longest entries first, then an optional
 * '/'), then a leading "VERSION/" where '.' matches any byte.  Writes into
 * out (at least len + 1 bytes); returns the new length. */
size_t dump_data_strip_inc(const char *s, size_t len, const dump_data_opts *o, char *out)
{
    size_t done = len;
    memcpy(out, s, len);
    if (len && !(len == 1 && s[0] == '0')) {
        for (size_t i = 0; i <= len && done == len; i++) {
            size_t anchor_end;
            if (i == 0)
                anchor_end = 0;
            else if (s[i - 1] == '[')
                anchor_end = i;
            else
                anchor_end = SIZE_MAX;
            size_t starts[2] = {anchor_end, SIZE_MAX};
            size_t da = defined_at(s, len, i);
            if (da)
                starts[1] = i + da;
            for (int k = 0; k < 2 && done == len; k++) {
                size_t at = starts[k];
                if (at == SIZE_MAX)
                    continue;
                for (size_t e = 0; e < o->n_inc; e++) {
                    size_t il = strlen(o->inc[e]);
                    if (il && at + il <= len && memcmp(s + at, o->inc[e], il) == 0) {
                        size_t cut = il + (at + il < len && s[at + il] == '/');
                        memcpy(out + at, s + at + cut, len - at - cut);
                        done = len - cut;
                        break;
                    }
                }
            }
        }
    }
    size_t n = done;
    const char *v = o->perl_version;
    size_t vl = v ? strlen(v) : 0;
    if (vl && n > vl) {
        bool match = out[vl] == '/';
        for (size_t i = 0; match && i < vl; i++)
            match = v[i] == '.' || v[i] == out[i];
        if (match) {
            memmove(out, out + vl + 1, n - vl - 1);
            n -= vl + 1;
        }
    }
    out[n] = 0;
    return n;
}

/* Split DIRS at ':' into a NULL-free array (pointers into a copy). */
const char **dump_data_split_dirs(const char *dirs, size_t *n, char **storage)
{
    char *copy = strdup(dirs);
    *storage = copy;
    size_t cap = 1;
    for (const char *c = dirs; *c; c++)
        cap += *c == ':';
    const char **v = calloc(cap + 1, sizeof *v);
    if (!copy || !v) {
        free(copy);
        free(v);
        *storage = NULL;
        return NULL;
    }
    *n = 0;
    for (char *tok = strtok(copy, ":"); tok; tok = strtok(NULL, ":"))
        v[(*n)++] = tok;
    /* longest first, as Devel::NYTProf tries them (stable for equal lengths) */
    for (size_t a = 1; a < *n; a++)
        for (size_t b = a; b > 0 && strlen(v[b - 1]) < strlen(v[b]); b--) {
            const char *t = v[b];
            v[b] = v[b - 1];
            v[b - 1] = t;
        }
    return v;
}

/* ---- text ---------------------------------------------------------------- */

typedef struct writer {
    nytp_out *out;
    int err;
} writer;

static void put(writer *w, const char *s, size_t n)
{
    if (!w->err && nytp_out_write(w->out, s, n) < 0)
        w->err = nytp_out_error(w->out)->status;
}

static void puts_(writer *w, const char *s)
{
    put(w, s, strlen(s));
}

static void put_id(writer *w, const nytp_profile *p, uint32_t id)
{
    put(w, nytp_profile_str(p, id), nytp_profile_strlen(p, id));
}

static void put_u(writer *w, uint64_t v)
{
    char b[32];
    put(w, b, (size_t)(fmt_u64(b, v) - b));
}

static void put_i(writer *w, int64_t v)
{
    char b[32];
    put(w, b, (size_t)(fmt_i64(b, v) - b));
}

static void put_nv(writer *w, double d)
{
    char b[40];
    put(w, b, (size_t)(fmt_nv(b, d) - b));
}

/* A line number that may be unknown. */
static void put_line_or_undef(writer *w, uint32_t v)
{
    if (v == NYTP_NONE)
        puts_(w, "undef");
    else
        put_u(w, v);
}

static void put_attr(writer *w, const char *key, const char *val)
{
    puts_(w, "attribute\t");
    puts_(w, key);
    put(w, "\t", 1);
    puts_(w, val);
    put(w, "\n", 1);
}

/* Attributes: those of the file, with the derived ones put in (replacing
 * any of the same name), all sorted by key. */
static void dump_attributes(writer *w, const nytp_profile *p)
{
    struct derived {
        const char *key;
        char val[48];
        bool present;
    } d[] = {
        {"complete", "", true},
        {"profiler_active", "", true},
        {"profiler_duration", "", p->have_end},
        {"profiler_end_time", "", p->have_end},
        {"profiler_start_time", "", p->have_start},
        {"total_stmts_discounted", "", true},
        {"total_stmts_duration", "", true},
        {"total_stmts_measured", "", true},
        {"total_sub_calls", "", true},
    };
    const char *overhead = nytp_profile_attr(p, "cumulative_overhead_ticks");
    const char *tps = nytp_profile_attr(p, "ticks_per_sec");
    double tpsv = tps ? strtod(tps, NULL) : 0;
    double active = (p->have_end ? p->profiler_duration : 0) -
                    (overhead && tpsv ? strtod(overhead, NULL) / tpsv : 0);
    strcpy(d[0].val, p->complete ? "1" : "");
    *fmt_nv(d[1].val, active) = 0;
    *fmt_nv(d[2].val, p->profiler_duration) = 0;
    *fmt_nv(d[3].val, p->profiler_end_time) = 0;
    *fmt_nv(d[4].val, p->profiler_start_time) = 0;
    *fmt_nv(d[5].val, (double)p->total_stmts_discounted) = 0;
    *fmt_nv(d[6].val, p->total_stmts_duration) = 0;
    *fmt_nv(d[7].val, (double)p->total_stmts_measured) = 0;
    *fmt_nv(d[8].val, (double)p->total_sub_calls) = 0;
    size_t nd = sizeof d / sizeof d[0];

    nytp_kv *kv = malloc((p->n_attrs + 1) * sizeof *kv);
    if (!kv) {
        w->err = NYTP_E_NOMEM;
        return;
    }
    if (p->n_attrs) /* attrs is NULL without any */
        memcpy(kv, p->attrs, p->n_attrs * sizeof *kv);
    qsort(kv, p->n_attrs, sizeof *kv, cmp_kv);
    size_t di = 0;
    for (uint32_t i = 0; i <= p->n_attrs; i++) {
        const char *key = i < p->n_attrs ? nytp_profile_str(p, kv[i].key) : NULL;
        /* derived keys that sort before this one */
        while (di < nd && (!key || strcmp(d[di].key, key) <= 0)) {
            if (d[di].present)
                put_attr(w, d[di].key, d[di].val);
            bool same = key && strcmp(d[di].key, key) == 0;
            di++;
            if (same)
                goto next;
        }
        if (key)
            put_attr(w, key, nytp_profile_str(p, kv[i].value));
    next:;
    }
    free(kv);
}

static void dump_kvs(writer *w, const nytp_profile *p, const char *section, const nytp_kv *v,
                     uint32_t n)
{
    nytp_kv *kv = malloc((n + 1) * sizeof *kv);
    if (!kv) {
        w->err = NYTP_E_NOMEM;
        return;
    }
    if (n) /* v is NULL without any */
        memcpy(kv, v, n * sizeof *kv);
    qsort(kv, n, sizeof *kv, cmp_kv);
    for (uint32_t i = 0; i < n; i++) {
        puts_(w, section);
        put(w, "\t", 1);
        put_id(w, p, kv[i].key);
        put(w, "\t", 1);
        put_id(w, p, kv[i].value);
        put(w, "\n", 1);
    }
    free(kv);
}

/* The file id a profile gave model file fid (they differ only for ids far
 * beyond the others); NYTP_NONE stays. */
static uint32_t fno(const nytp_profile *p, uint32_t fid)
{
    return fid < p->n_files ? p->files[fid].number : fid;
}

/* fid_line_time, fid_block_time, fid_sub_time */
static void dump_times(writer *w, const nytp_profile *p, const char *section, size_t which)
{
    bool any = false;
    for (uint32_t fid = 0; fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        const nytp_lines *l = which == 0 ? &f->line : which == 1 ? &f->block : &f->sub;
        for (uint32_t i = 0; i < l->n; i++) {
            const nytp_linestat *s = &l->v[i];
            uint32_t line = s->line;
            any = true;
            puts_(w, section);
            put(w, "\t", 1);
            put_u(w, fno(p, fid));
            put(w, "\t", 1);
            put_u(w, line);
            puts_(w, "\t[ ");
            put_nv(w, s->time);
            put(w, " ", 1);
            put_i(w, s->count);
            puts_(w, " ]\n");
        }
    }
    if (!any) {
        puts_(w, section);
        puts_(w, "\t[  ]\n");
    }
}

/* The 8-element bracket of a call site, shared by call and called_by. */
static void put_site(writer *w, const nytp_profile *p, const nytp_site *s)
{
    puts_(w, "[ ");
    put_u(w, s->count);
    put(w, " ", 1);
    put_nv(w, s->incl);
    put(w, " ", 1);
    put_nv(w, s->excl);
    puts_(w, " 0 0 ");
    put_nv(w, s->reci);
    put(w, " ", 1);
    put_u(w, s->rec_depth);
    put(w, " ", 1);
    uint32_t *callers = sorted_copy(w->out, s->callers, s->n_callers, cmp_str_ids);
    for (uint32_t i = 0; callers && i < s->n_callers; i++) {
        if (i)
            put(w, "|", 1);
        put_id(w, p, callers[i]);
    }
    free(callers);
    puts_(w, " ]\n");
}

/* For every file, the number of string evals run inside it, nested ones
 * included: one pass over the eval trees (a chain of nested evals costs
 * its length, not its square).  A cycle (a corrupt profile) counts once.
 * NULL when out of memory. */
static uint64_t *count_descendants(const nytp_profile *p)
{
    uint32_t n = p->n_files;
    uint64_t *desc = calloc((size_t)n + 1, sizeof *desc);
    unsigned char *state = calloc((size_t)n + 1, 1); /* 1 on the stack, 2 done */
    uint32_t *stack = malloc(((size_t)n + 1) * sizeof *stack);
    uint32_t *next = calloc((size_t)n + 1, sizeof *next); /* next child to visit */
    if (!desc || !state || !stack || !next) {
        free(desc);
        desc = NULL;
        goto out;
    }
    for (uint32_t root = 0; root < n; root++) {
        if (state[root])
            continue;
        uint32_t sp = 0;
        stack[sp++] = root;
        state[root] = 1;
        while (sp) {
            uint32_t f = stack[sp - 1];
            const nytp_file *fi = &p->files[f];
            if (next[f] < fi->n_evals) {
                uint32_t c = fi->evals[next[f]++];
                if (c < n && !state[c]) {
                    state[c] = 1;
                    stack[sp++] = c;
                }
                continue;
            }
            uint64_t d = fi->n_evals;
            for (uint32_t i = 0; i < fi->n_evals; i++)
                if (fi->evals[i] < n && state[fi->evals[i]] == 2)
                    d += desc[fi->evals[i]];
            desc[f] = d;
            state[f] = 2;
            sp--;
        }
    }
out:
    free(state);
    free(stack);
    free(next);
    return desc;
}

/* Evals of one file ordered by the line they ran on, then by their order. */
typedef struct eval_at {
    uint32_t line, i;
} eval_at;

static int cmp_eval_at(const void *a, const void *b)
{
    const eval_at *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void file_prefix(writer *w, uint32_t fid)
{
    puts_(w, "fid_fileinfo\t");
    put_u(w, fid);
    put(w, "\t", 1);
}

static void dump_fileinfo(writer *w, const nytp_profile *p, const dump_data_opts *o)
{
    bool any = false;
    uint64_t *desc = count_descendants(p);
    if (!desc) {
        w->err = NYTP_E_NOMEM;
        return;
    }
    for (uint32_t fid = 0; fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        if (!f->defined) {
            if (f->line.n) { /* used by statements but never declared */
                any = true;
                file_prefix(w, f->number);
                put(w, "\n", 1);
            }
            continue;
        }
        any = true;
        /* header */
        file_prefix(w, f->number);
        puts_(w, "[ ");
        uint32_t nl = nytp_profile_strlen(p, f->name);
        char *name = malloc((size_t)nl + 1);
        if (!name) {
            w->err = NYTP_E_NOMEM;
            return;
        }
        size_t n = dump_data_strip_inc(nytp_profile_str(p, f->name), nl, o, name);
        put(w, name, n);
        free(name);
        put(w, " ", 1);
        if (f->eval_fid) {
            put_u(w, fno(p, f->eval_fid));
            put(w, " ", 1);
            put_u(w, f->eval_line);
        } else {
            put(w, " ", 1);
        }
        put(w, " ", 1);
        put_u(w, f->number);
        put(w, " ", 1);
        put_u(w, f->flags);
        put(w, " ", 1);
        put_u(w, f->size);
        put(w, " ", 1);
        put_u(w, f->mtime);
        puts_(w, " ]\n");

        /* sub lines */
        uint32_t *subs = sorted_copy(w->out, f->subs, f->n_subs, cmp_sub_ids);
        for (uint32_t i = 0; subs && i < f->n_subs; i++) {
            const nytp_sub *s = &p->subs[subs[i]];
            file_prefix(w, f->number);
            puts_(w, "sub\t");
            put_id(w, p, s->name);
            put(w, "\t", 1);
            put_line_or_undef(w, s->first_line);
            put(w, "-", 1);
            put_line_or_undef(w, s->last_line);
            put(w, "\n", 1);
        }
        free(subs);

        /* call lines */
        uint32_t *sites = sorted_copy(w->out, f->sites, f->n_sites, cmp_site_line_name);
        for (uint32_t i = 0; sites && i < f->n_sites; i++) {
            const nytp_site *s = &p->sites[sites[i]];
            file_prefix(w, f->number);
            puts_(w, "call\t");
            put_u(w, s->line);
            put(w, "\t", 1);
            put_id(w, p, p->subs[s->called].name);
            put(w, "\t", 1);
            put_site(w, p, s);
        }
        free(sites);

        /* eval lines: direct child evals grouped by the line they ran on */
        eval_at *ev = malloc(((size_t)f->n_evals + 1) * sizeof *ev);
        if (!ev) {
            w->err = NYTP_E_NOMEM;
            break;
        }
        for (uint32_t i = 0; i < f->n_evals; i++)
            ev[i] = (eval_at){p->files[f->evals[i]].eval_line, i};
        qsort(ev, f->n_evals, sizeof *ev, cmp_eval_at);
        for (uint32_t i = 0; i < f->n_evals;) {
            uint64_t count = 0, nested = 0, merged = 0;
            uint32_t line = ev[i].line;
            for (; i < f->n_evals && ev[i].line == line; i++) {
                uint32_t efid = f->evals[ev[i].i];
                count++;
                nested += desc[efid];
                merged += p->files[efid].merged_evals;
            }
            file_prefix(w, f->number);
            puts_(w, "eval\t");
            put_u(w, line);
            puts_(w, "\t[ count ");
            put_u(w, count);
            puts_(w, " nested ");
            put_u(w, nested);
            puts_(w, " merged ");
            put_u(w, merged);
            puts_(w, " ]\n");
        }
        free(ev);
    }
    free(desc);
    if (!any)
        puts_(w, "fid_fileinfo\t[  ]\n");
}

static void dump_subinfo(writer *w, const nytp_profile *p)
{
    uint32_t *ids = malloc((p->n_subs + 1) * sizeof *ids);
    if (!ids) {
        w->err = NYTP_E_NOMEM;
        return;
    }
    for (uint32_t i = 0; i < p->n_subs; i++)
        ids[i] = i;
    qsort(ids, p->n_subs, sizeof *ids, cmp_sub_ids);
    for (uint32_t i = 0; i < p->n_subs; i++) {
        const nytp_sub *s = &p->subs[ids[i]];
        puts_(w, "sub_subinfo\t");
        put_id(w, p, s->name);
        puts_(w, "\t[ ");
        put_line_or_undef(w, fno(p, s->fid));
        put(w, ":", 1);
        put_line_or_undef(w, s->first_line);
        put(w, "-", 1);
        put_line_or_undef(w, s->last_line);
        puts_(w, " calls ");
        put_u(w, s->calls);
        puts_(w, " times ");
        put_nv(w, s->incl);
        put(w, " ", 1);
        put_nv(w, s->excl);
        put(w, " ", 1);
        put_u(w, s->rec_depth);
        put(w, " ", 1);
        put_nv(w, s->reci);
        puts_(w, " ]\n");
        uint32_t *sites = sorted_copy(w->out, s->sites, s->n_sites, cmp_site_fid_line);
        for (uint32_t k = 0; sites && k < s->n_sites; k++) {
            const nytp_site *c = &p->sites[sites[k]];
            puts_(w, "sub_subinfo\t");
            put_id(w, p, s->name);
            puts_(w, "\tcalled_by\t");
            put_u(w, fno(p, c->fid));
            put(w, ":", 1);
            put_u(w, c->line);
            put(w, "\t", 1);
            put_site(w, p, c);
        }
        free(sites);
    }
    free(ids);
}

int dump_data_text(nytp_out *out, const nytp_profile *p, const dump_data_opts *o)
{
    writer w = {out, 0};
    sort_p = p;
    dump_attributes(&w, p);
    if (p->has_blocks)
        dump_times(&w, p, "fid_block_time", 1);
    dump_fileinfo(&w, p, o);
    dump_times(&w, p, "fid_line_time", 0);
    if (p->has_blocks)
        dump_times(&w, p, "fid_sub_time", 2);
    dump_kvs(&w, p, "option", p->options, p->n_options);
    if (p->has_blocks)
        puts_(&w, "profile_modes\tfid_block_time\tblock\n");
    puts_(&w, "profile_modes\tfid_line_time\tline\n");
    if (p->has_blocks)
        puts_(&w, "profile_modes\tfid_sub_time\tsub\n");
    dump_subinfo(&w, p);
    return w.err;
}

/* ---- JSON ---------------------------------------------------------------- */


static void jid(json *j, const nytp_profile *p, uint32_t id)
{
    json_str(j, nytp_profile_str(p, id), nytp_profile_strlen(p, id));
}



static void jline_or_null(json *j, uint32_t v)
{
    if (v == NYTP_NONE)
        json_null(j);
    else
        json_u64(j, v);
}

static int jkvs(json *j, const nytp_profile *p, const nytp_kv *v, uint32_t n)
{
    nytp_kv *kv = malloc((n + 1) * sizeof *kv);
    if (!kv)
        return NYTP_E_NOMEM;
    if (n) /* v is NULL without any */
        memcpy(kv, v, n * sizeof *kv);
    qsort(kv, n, sizeof *kv, cmp_kv);
    json_object(j);
    for (uint32_t i = 0; i < n; i++) {
        json_key_str(j, nytp_profile_str(p, kv[i].key), nytp_profile_strlen(p, kv[i].key));
        jid(j, p, kv[i].value);
    }
    json_end(j);
    free(kv);
    return NYTP_OK;
}

static void jlines(json *j, const nytp_lines *l)
{
    json_array(j);
    for (uint32_t i = 0; i < l->n; i++) {
        const nytp_linestat *s = &l->v[i];
        uint32_t line = s->line;
        json_array(j);
        json_u64(j, line);
        json_num(j, s->time);
        json_i64(j, s->count);
        json_end(j);
    }
    json_end(j);
}

static void jsite(json *j, const nytp_profile *p, const nytp_site *s, bool with_sub)
{
    json_object(j);
    json_key(j, "fid");
    json_u64(j, fno(p, s->fid));
    json_key(j, "line");
    json_u64(j, s->line);
    if (with_sub) {
        json_key(j, "sub");
        jid(j, p, p->subs[s->called].name);
    }
    json_key(j, "count");
    json_u64(j, s->count);
    json_key(j, "incl");
    json_num(j, s->incl);
    json_key(j, "excl");
    json_num(j, s->excl);
    json_key(j, "reci");
    json_num(j, s->reci);
    json_key(j, "rec_depth");
    json_u64(j, s->rec_depth);
    json_key(j, "callers");
    json_array(j);
    uint32_t *callers = sorted_copy(j->out, s->callers, s->n_callers, cmp_str_ids);
    for (uint32_t i = 0; callers && i < s->n_callers; i++) {
        jid(j, p, callers[i]);
    }
    free(callers);
    json_end(j);
    json_end(j);
}

int dump_data_json(nytp_out *out, const nytp_profile *p, const dump_data_opts *o)
{
    json J, *j = &J;
    json_init(j, out);
    int st = NYTP_OK;
    sort_p = p;
    const char *overhead = nytp_profile_attr(p, "cumulative_overhead_ticks");
    double active = p->profiler_duration - (overhead ? strtod(overhead, NULL) / p->ticks_per_sec : 0);

    json_object(j);
    json_key(j, "format");
    json_cstr(j, "nytp-profile-1");
    json_key(j, "inputs");
    json_u64(j, p->n_inputs);
    json_key(j, "complete");
    json_bool(j, p->complete);
    json_key(j, "attributes");
    st = jkvs(j, p, p->attrs, p->n_attrs);
    json_key(j, "options");
    if (st == NYTP_OK)
        st = jkvs(j, p, p->options, p->n_options);
    json_key(j, "totals");
    json_object(j);
    json_key(j, "profiler_start_time");
    if (p->have_start)
        json_num(j, p->profiler_start_time);
    else
        json_null(j);
    json_key(j, "profiler_end_time");
    if (p->have_end)
        json_num(j, p->profiler_end_time);
    else
        json_null(j);
    json_key(j, "profiler_duration");
    json_num(j, p->profiler_duration);
    json_key(j, "profiler_active");
    json_num(j, active);
    json_key(j, "total_stmts_measured");
    json_u64(j, p->total_stmts_measured);
    json_key(j, "total_stmts_discounted");
    json_u64(j, p->total_stmts_discounted);
    json_key(j, "total_stmts_duration");
    json_num(j, p->total_stmts_duration);
    json_key(j, "total_sub_calls");
    json_u64(j, p->total_sub_calls);
    json_end(j);

    json_key(j, "processes");
    json_array(j);
    for (uint32_t i = 0; i < p->n_procs; i++) {
        const nytp_process *pr = &p->procs[i];
        json_object(j);
        json_key(j, "pid");
        json_u64(j, pr->pid);
        json_key(j, "ppid");
        json_u64(j, pr->ppid);
        json_key(j, "input");
        json_u64(j, pr->input);
        json_key(j, "start_time");
        json_num(j, pr->start);
        json_key(j, "end_time");
        if (pr->ended)
            json_num(j, pr->end);
        else
            json_null(j);
        json_end(j);
    }
    json_end(j);

    json_key(j, "files");
    json_array(j);
    for (uint32_t fid = 0; fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        if (!f->defined && !f->line.n)
            continue;
        json_object(j);
        json_key(j, "fid");
        json_u64(j, f->number);
        json_key(j, "defined");
        json_bool(j, f->defined);
        if (f->defined) {
            json_key(j, "name");
            jid(j, p, f->name);
            uint32_t nl = nytp_profile_strlen(p, f->name);
            char *shown = malloc((size_t)nl + 1);
            if (shown) {
                size_t n = dump_data_strip_inc(nytp_profile_str(p, f->name), nl, o, shown);
                json_key(j, "display_name");
                json_str(j, shown, n);
                free(shown);
            }
            json_key(j, "eval_fid");
            if (f->eval_fid)
                json_u64(j, fno(p, f->eval_fid));
            else
                json_null(j);
            json_key(j, "eval_line");
            if (f->eval_fid)
                json_u64(j, f->eval_line);
            else
                json_null(j);
            json_key(j, "flags");
            json_u64(j, f->flags);
            json_key(j, "size");
            json_u64(j, f->size);
            json_key(j, "mtime");
            json_u64(j, f->mtime);
            json_key(j, "merged_evals");
            json_u64(j, f->merged_evals);
        }
        json_key(j, "evals");
        json_array(j);
        for (uint32_t i = 0; i < f->n_evals; i++) {
            json_u64(j, f->evals[i]);
        }
        json_end(j);
        json_key(j, "subs_defined");
        json_array(j);
        uint32_t *subs = sorted_copy(j->out, f->subs, f->n_subs, cmp_sub_ids);
        for (uint32_t i = 0; subs && i < f->n_subs; i++) {
            jid(j, p, p->subs[subs[i]].name);
        }
        free(subs);
        json_end(j);
        json_key(j, "calls");
        json_array(j);
        uint32_t *sites = sorted_copy(j->out, f->sites, f->n_sites, cmp_site_line_name);
        for (uint32_t i = 0; sites && i < f->n_sites; i++) {
            jsite(j, p, &p->sites[sites[i]], true);
        }
        free(sites);
        json_end(j);
        json_key(j, "lines");
        jlines(j, &f->line);
        if (p->has_blocks) {
            json_key(j, "blocks");
            jlines(j, &f->block);
            json_key(j, "sub_lines");
            jlines(j, &f->sub);
        }
        uint32_t saved = f->src.n;
        json_key(j, "source_lines_saved");
        json_u64(j, saved);
        json_end(j);
    }
    json_end(j);

    json_key(j, "subs");
    json_array(j);
    uint32_t *ids = malloc((p->n_subs + 1) * sizeof *ids);
    if (!ids)
        return NYTP_E_NOMEM;
    for (uint32_t i = 0; i < p->n_subs; i++)
        ids[i] = i;
    qsort(ids, p->n_subs, sizeof *ids, cmp_sub_ids);
    for (uint32_t i = 0; i < p->n_subs; i++) {
        const nytp_sub *s = &p->subs[ids[i]];
        json_object(j);
        json_key(j, "name");
        jid(j, p, s->name);
        json_key(j, "fid");
        jline_or_null(j, fno(p, s->fid));
        json_key(j, "first_line");
        jline_or_null(j, s->first_line);
        json_key(j, "last_line");
        jline_or_null(j, s->last_line);
        json_key(j, "xsub");
        json_bool(j, s->xsub || (s->first_line == 0 && s->last_line == 0));
        json_key(j, "calls");
        json_u64(j, s->calls);
        json_key(j, "incl");
        json_num(j, s->incl);
        json_key(j, "excl");
        json_num(j, s->excl);
        json_key(j, "reci");
        json_num(j, s->reci);
        json_key(j, "rec_depth");
        json_u64(j, s->rec_depth);
        json_key(j, "called_by");
        json_array(j);
        uint32_t *sites = sorted_copy(j->out, s->sites, s->n_sites, cmp_site_fid_line);
        for (uint32_t k = 0; sites && k < s->n_sites; k++) {
            jsite(j, p, &p->sites[sites[k]], false);
        }
        free(sites);
        json_end(j);
        json_end(j);
    }
    free(ids);
    json_end(j);
    json_end(j);
    json_raw(j, "\n");
    return st != NYTP_OK ? st : nytp_out_error(out)->status;
}

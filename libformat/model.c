/* model.c — loading profiles into the in-memory model (nytp/model.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nytp/model.h"
#include "codec_decode.h"
#include "kmap.h"
#include "reader_impl.h"
#include "stmtcount.h"
#include "strtab.h"

/* A hash index from a 64-bit key to a 32-bit value: the shared kmap with
 * a second key of 0. */
typedef kmap u64map;

static inline uint32_t u64map_get(const u64map *m, uint64_t key)
{
    return kmap_get(m, key, 0);
}

static inline bool u64map_put(u64map *m, uint64_t key, uint32_t val)
{
    return kmap_put(m, key, 0, val);
}

static inline void u64map_free(u64map *m)
{
    kmap_free(m);
}

struct nytp_model_impl {
    strtab strs;
    u64map file_by_name;    /* name id -> fid (real files only) */
    u64map sub_by_name;     /* name id -> sub id */
    u64map site_by_key;     /* (called, fid, line) -> site id */
    u64map fid_by_number;   /* file id of the profile -> fid, where they differ */
};

#define PUSH(arr, n, cap, val)                                                      \
    (kmap_grow_array((void **)&(arr), (n), &(cap), sizeof *(arr)) ? ((arr)[(n)++] = (val), true) : false)

/* ---- the profile -------------------------------------------------------- */

int nytp_profile_new(nytp_profile **pp, nytp_error *err)
{
    nytp_profile *p = calloc(1, sizeof *p);
    if (!p)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    p->impl = calloc(1, sizeof *p->impl);
    if (!p->impl) {
        free(p);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    strtab_init(&p->impl->strs);
    p->ticks_per_sec = 10000000.0;
    p->complete = true;
    *pp = p;
    return NYTP_OK;
}

static void free_lines(nytp_lines *l)
{
    free(l->v);
}

const nytp_linestat *nytp_lines_get(const nytp_lines *l, uint32_t line)
{
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->v[mid].line < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->n && l->v[lo].line == line ? &l->v[lo] : NULL;
}

uint32_t nytp_lines_last(const nytp_lines *l)
{
    return l->n ? l->v[l->n - 1].line : 0;
}

static void free_src(nytp_src *s)
{
    for (uint32_t k = 0; k < s->n; k++)
        free(s->v[k].text.ptr);
    free(s->v);
}

const nytp_text *nytp_src_get(const nytp_src *s, uint32_t line)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].line < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->v[lo].line == line ? &s->v[lo].text : NULL;
}

uint32_t nytp_src_last(const nytp_src *s)
{
    return s->n ? s->v[s->n - 1].line : 0;
}

static int cmp_srcline(const void *a, const void *b)
{
    const nytp_srcline *x = a, *y = b;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Sort the saved lines by line if they are not. */
static void sort_src(nytp_src *s)
{
    for (uint32_t i = 1; i < s->n; i++) {
        if (s->v[i - 1].line > s->v[i].line) {
            qsort(s->v, s->n, sizeof *s->v, cmp_srcline);
            return;
        }
    }
}

static int cmp_linestat(const void *a, const void *b)
{
    const nytp_linestat *x = a, *y = b;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Sort the entries by line if they are not. */
static void sort_lines(nytp_lines *l)
{
    for (uint32_t i = 1; i < l->n; i++) {
        if (l->v[i - 1].line > l->v[i].line) {
            qsort(l->v, l->n, sizeof *l->v, cmp_linestat);
            return;
        }
    }
}

void nytp_profile_free(nytp_profile *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; i < p->n_files; i++) {
        nytp_file *f = &p->files[i];
        free(f->evals);
        free(f->subs);
        free(f->sites);
        free_lines(&f->line);
        free_lines(&f->block);
        free_lines(&f->sub);
        free_src(&f->src);
    }
    free(p->files);
    for (uint32_t i = 0; i < p->n_subs; i++) {
        free(p->subs[i].sites);
        free(p->subs[i].callees);
    }
    free(p->subs);
    for (uint32_t i = 0; i < p->n_sites; i++)
        free(p->sites[i].callers);
    free(p->sites);
    free(p->procs);
    free(p->evals_by_depth);
    free(p->attrs);
    free(p->options);
    if (p->impl) {
        strtab_free(&p->impl->strs);
        u64map_free(&p->impl->file_by_name);
        u64map_free(&p->impl->sub_by_name);
        u64map_free(&p->impl->site_by_key);
        u64map_free(&p->impl->fid_by_number);
        free(p->impl);
    }
    free(p);
}

const char *nytp_profile_str(const nytp_profile *p, uint32_t id)
{
    return strtab_str(&p->impl->strs, id);
}

uint32_t nytp_profile_strlen(const nytp_profile *p, uint32_t id)
{
    return strtab_len(&p->impl->strs, id);
}

const nytp_file *nytp_profile_file(const nytp_profile *p, uint32_t fid)
{
    return fid < p->n_files && p->files[fid].defined ? &p->files[fid] : NULL;
}

uint32_t nytp_profile_fid_by_name(const nytp_profile *p, const char *name, size_t len)
{
    uint32_t id = strtab_find(&p->impl->strs, name, len);
    return id == STRTAB_NONE ? NYTP_NONE : u64map_get(&p->impl->file_by_name, id);
}

uint32_t nytp_profile_sub_by_name(const nytp_profile *p, const char *name, size_t len)
{
    uint32_t id = strtab_find(&p->impl->strs, name, len);
    return id == STRTAB_NONE ? NYTP_NONE : u64map_get(&p->impl->sub_by_name, id);
}

const nytp_linestat *nytp_profile_line(const nytp_profile *p, uint32_t fid, uint32_t line)
{
    if (fid >= p->n_files)
        return NULL;
    return nytp_lines_get(&p->files[fid].line, line);
}

static const char *kv_get(const nytp_profile *p, const nytp_kv *v, uint32_t n, const char *key)
{
    uint32_t id = strtab_find(&p->impl->strs, key, strlen(key));
    if (id == STRTAB_NONE)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (v[i].key == id)
            return nytp_profile_str(p, v[i].value);
    return NULL;
}

const char *nytp_profile_attr(const nytp_profile *p, const char *key)
{
    return kv_get(p, p->attrs, p->n_attrs, key);
}

const char *nytp_profile_option(const nytp_profile *p, const char *key)
{
    return kv_get(p, p->options, p->n_options, key);
}

/* ---- loading ------------------------------------------------------------ */

/* Statements of fewer ticks than this (nearly all: perltidy.out has 653
 * of 24.4 million at 4096 or more) take their seconds from a table,
 * which gives the same double as the division. */
#define SECS_OF 1024

/* State of loading one input. */
typedef struct loader {
    nytp_profile *p;
    const char *name;
    const nytp_load_opts *opts;
    nytp_reader *r;          /* for where warnings and errors happened */
    kidx fidmap;             /* input fid -> model fid (NYTP_NONE: unknown) */
    uint64_t discount;       /* DISCOUNTs waiting for the next statement */
    double ticks_per_sec;
    uint32_t live[64];       /* pids started, not ended (first 64) */
    uint32_t n_live;
    u64map eval_seen;        /* (model parent fid, line) -> evals seen there in this input */
    kmap eval_at;            /* ((parent fid, line), k) -> the model's k-th eval there */
    kmap eval_count;         /* ((parent fid, line), 0) -> the evals in eval_at there */
    kmap line_idx;           /* (fid << 2 | kind, line) -> entry in that file's lines */
    struct line_at {         /* by fid * 3 + kind: entry at each line, KMAP_NONE: */
        uint32_t *at;        /* not here (see line_entry); loops run over a few */
        uint32_t cap;        /* nearby lines, so most lookups end in a cache */
    } *dense;                /* line of this table, where the hashed index's */
    uint32_t n_dense;        /* probes went anywhere */
    uint64_t dense_slots;    /* in all of them */
    uint64_t n_entries;      /* line entries, of this input and those before */
    double secs_of[SECS_OF]; /* ticks / ticks_per_sec for few ticks, computed once */
    kmap listed;             /* (owner, id): id is in a long list (see listed_has) */
    bool first_input;
    bool oom;
    bool sampled;            /* a sample_hz attribute was seen */
    bool have_samples;       /* and a sample_count */
    double sample_hz;
    uint64_t samples;
} loader;
/* Where the reader is: the chunk being applied. */
static void set_where(nytp_error *e, nytp_reader *r)
{
    e->offset = nytp_reader_chunk_offset(r);
    e->inflated = nytp_reader_chunk_inflated(r);
    e->deflate_start = nytp_in_deflate_start(nytp_reader_input(r));
    e->chunk = nytp_reader_chunk_number(r);
}

static void lwarn(loader *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void lwarn(loader *L, const char *fmt, ...)
{
    if (!L->opts || !L->opts->warn)
        return;
    nytp_error w = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w.msg, sizeof w.msg, fmt, ap);
    va_end(ap);
    w.kind = fmt;
    if (L->r)
        set_where(&w, L->r);
    L->opts->warn(L->opts->warn_ctx, &w);
}

static uint32_t intern(loader *L, const char *s, size_t len)
{
    uint32_t id = strtab_intern(&L->p->impl->strs, s, len);
    if (id == STRTAB_NONE)
        L->oom = true;
    return id;
}

/* The file at model index fid, the array grown to hold it. */
static nytp_file *file_at(loader *L, uint32_t fid)
{
    nytp_profile *p = L->p;
    if (fid >= p->cap_files) {
        uint64_t cap = p->cap_files ? p->cap_files : 16;
        while (cap <= fid)
            cap *= 2;
        nytp_file *nf = cap > UINT32_MAX ? NULL : realloc(p->files, (size_t)cap * sizeof *nf);
        if (!nf) {
            L->oom = true;
            return NULL;
        }
        memset(nf + p->cap_files, 0, (size_t)(cap - p->cap_files) * sizeof *nf);
        for (uint32_t i = p->cap_files; i < cap; i++)
            nf[i].fid = nf[i].number = i;
        p->files = nf;
        p->cap_files = (uint32_t)cap;
    }
    if (fid >= p->n_files)
        p->n_files = fid + 1;
    return &p->files[fid];
}

/* The model index of file id number of the first input: the number
 * itself, unless it lies far beyond the files there are (an array indexed
 * by it would cost memory for every id below it) or its place is taken:
 * then the next index, remembered by number.  NYTP_NONE: out of memory. */
static uint32_t fid_of_number(loader *L, uint32_t number)
{
    nytp_profile *p = L->p;
    if (number < p->n_files && p->files[number].number == number)
        return number;
    uint32_t fid = u64map_get(&p->impl->fid_by_number, number);
    if (fid != NYTP_NONE)
        return fid;
    if (number >= p->n_files && number < 2 * (uint64_t)p->n_files + 1024)
        return file_at(L, number) ? number : NYTP_NONE;
    fid = p->n_files ? p->n_files : 1;
    nytp_file *f = file_at(L, fid);
    if (!f || !u64map_put(&p->impl->fid_by_number, number, fid)) {
        L->oom = true;
        return NYTP_NONE;
    }
    f->number = number;
    return fid;
}

/* The model fid of an input fid: for the first input the same number (see
 * fid_of_number); for later inputs whatever NEW_FID mapped it to. */
static uint32_t map_fid(loader *L, uint32_t fid)
{
    if (L->first_input) {
        nytp_profile *p = L->p;
        if (fid < p->n_files && p->files[fid].number == fid)
            return fid;
        return fid_of_number(L, fid);
    }
    uint32_t m = kidx_get(&L->fidmap, fid);
    if (m != NYTP_NONE)
        return m;
    return fid == 0 ? 0 : NYTP_NONE;
}

/* Remember entry i of line in the dense table of (fid, kind) (see
 * kmap_dense_put: within a budget per line entry loaded). */
static void dense_put(loader *L, uint32_t fid, unsigned kind, uint32_t line, uint32_t i)
{
    uint64_t slot = (uint64_t)fid * 3 + kind;
    if (slot >= L->n_dense) {
        uint64_t n = L->n_dense ? L->n_dense : 48;
        while (n <= slot)
            n *= 2;
        struct line_at *nd = n > UINT32_MAX ? NULL : realloc(L->dense, (size_t)n * sizeof *nd);
        if (!nd)
            return; /* only slower: the hashed index has every line */
        memset(nd + L->n_dense, 0, (size_t)(n - L->n_dense) * sizeof *nd);
        L->dense = nd;
        L->n_dense = (uint32_t)n;
    }
    struct line_at *d = &L->dense[slot];
    (void)kmap_dense_put(&d->at, &d->cap, &L->dense_slots, L->n_entries, line, i);
}

/* The entry of line in l from the dense table, or NULL. */
static inline nytp_linestat *dense_hit(const loader *L, uint32_t fid, unsigned kind, nytp_lines *l,
                                       uint32_t line)
{
    uint64_t slot = (uint64_t)fid * 3 + kind;
    if (slot < L->n_dense) {
        const struct line_at *d = &L->dense[slot];
        if (line < d->cap && d->at[line] != KMAP_NONE)
            return &l->v[d->at[line]];
    }
    return NULL;
}

/* The entry of line in l (lines of kind 0, 1 or 2 of model file fid),
 * appended if new: found in the dense table of the file's nearby lines,
 * else through the loader's hashed index (which has every line), so the
 * entries stay in the order they came until the load ends. */
static nytp_linestat *line_entry(loader *L, uint32_t fid, unsigned kind, nytp_lines *l, uint32_t line,
                                 bool *fresh)
{
    nytp_linestat *hit = dense_hit(L, fid, kind, l, line);
    if (hit) {
        *fresh = false;
        return hit;
    }
    uint64_t key = ((uint64_t)fid << 2 | kind) + 1;
    uint32_t i = kmap_get(&L->line_idx, key, line);
    *fresh = i == KMAP_NONE;
    if (*fresh) {
        if (!kmap_grow_array((void **)&l->v, l->n, &l->cap, sizeof *l->v) ||
            !kmap_put(&L->line_idx, key, line, l->n)) {
            L->oom = true;
            return NULL;
        }
        i = l->n++;
        l->v[i] = (nytp_linestat){0, 0, line, true};
        L->n_entries++;
    }
    dense_put(L, fid, kind, line, i);
    return &l->v[i];
}

/* Add one statement's time to a line, with Devel::NYTProf's count rule:
 * delta is 1, or 0 after a DISCOUNT (or negative after several). */
/* A statement's seconds: ticks / ticks_per_sec, from the table when
 * 0 <= ticks < SECS_OF (ticks can be negative: the division then). */
static inline double stmt_secs(const loader *L, int32_t ticks)
{
    return (uint32_t)ticks < SECS_OF ? L->secs_of[ticks] : (double)ticks / L->ticks_per_sec;
}

/* One more statement on a line seen before. */
static inline void linestat_add(nytp_linestat *s, double secs, int64_t delta)
{
    s->time += secs;
    if (delta == 1)
        s->count++;
    else if (delta != 0)
        s->count = (int64_t)secs + s->count; /* as the reference loader does */
}

static void add_stmt(loader *L, uint32_t fid, unsigned kind, nytp_lines *l, uint32_t line,
                     double secs, int64_t delta)
{
    bool fresh;
    nytp_linestat *s = line_entry(L, fid, kind, l, line, &fresh);
    if (!s)
        return;
    if (fresh) {
        s->time = secs;
        s->count = delta;
        return;
    }
    linestat_add(s, secs, delta);
}

/* Saved source lines share the loader's line index as kind 3 (after
 * lines, blocks and subs). */
#define SRC_KIND 3u

/* Index the lines already in the model, for a new input to add to. */
static bool index_lines(loader *L)
{
    nytp_profile *p = L->p;
    for (uint32_t fid = 0; fid < p->n_files; fid++) {
        nytp_lines *ls[3] = {&p->files[fid].line, &p->files[fid].block, &p->files[fid].sub};
        for (unsigned k = 0; k < 3; k++)
            for (uint32_t i = 0; i < ls[k]->n; i++) {
                if (!kmap_put(&L->line_idx, ((uint64_t)fid << 2 | k) + 1, ls[k]->v[i].line, i))
                    return false;
                L->n_entries++;
            }
        const nytp_src *src = &p->files[fid].src;
        for (uint32_t i = 0; i < src->n; i++)
            if (!kmap_put(&L->line_idx, ((uint64_t)fid << 2 | SRC_KIND) + 1, src->v[i].line, i))
                return false;
    }
    return true;
}

static void on_time(loader *L, const nytp_chunk *c)
{
    nytp_profile *p = L->p;
    double secs = stmt_secs(L, c->u.time.ticks);
    /* map_fid's common case inline: a statement per chunk comes here */
    uint32_t in = c->u.time.fid;
    uint32_t fid = L->first_input && in < p->n_files && p->files[in].number == in ? in : map_fid(L, in);
    int64_t delta = stmt_count_delta(L->discount);
    if (fid == NYTP_NONE) {
        lwarn(L, "statement in file id %u, which was never declared", c->u.time.fid);
    } else {
        nytp_file *f = fid < p->n_files ? &p->files[fid] : file_at(L, fid);
        if (f) {
            add_stmt(L, fid, 0, &f->line, c->u.time.line, secs, delta);
            if (c->tag == NYTP_TAG_TIME_BLOCK) {
                p->has_blocks = true;
                f = &p->files[fid];
                add_stmt(L, fid, 1, &f->block, c->u.time.block_line, secs, delta);
                add_stmt(L, fid, 2, &f->sub, c->u.time.sub_line, secs, delta);
            }
        }
    }
    p->total_stmts_measured++;
    p->total_stmts_duration += secs;
    L->discount = 0;
}

static void set_kv(loader *L, nytp_kv **v, uint32_t *n, uint32_t *cap, const nytp_chunk *c)
{
    uint32_t key = intern(L, c->u.kv.key.ptr, c->u.kv.key.len);
    uint32_t val = intern(L, c->u.kv.value.ptr, c->u.kv.value.len);
    if (L->oom)
        return;
    for (uint32_t i = 0; i < *n; i++) {
        if ((*v)[i].key == key) {
            (*v)[i].value = val;
            return;
        }
    }
    nytp_kv kv = {key, val};
    if (!PUSH(*v, *n, *cap, kv))
        L->oom = true;
}

/* Attributes whose difference between inputs makes sums doubtful. */
static void check_agreement(loader *L, const nytp_chunk *c)
{
    static const char *const keys[] = {"perl_version", "nv_size", "ticks_per_sec", "clock_id"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        size_t kl = strlen(keys[i]);
        if (c->u.kv.key.len != kl || memcmp(c->u.kv.key.ptr, keys[i], kl) != 0)
            continue;
        const char *old = nytp_profile_attr(L->p, keys[i]);
        if (old && (strlen(old) != c->u.kv.value.len ||
                    memcmp(old, c->u.kv.value.ptr, c->u.kv.value.len) != 0))
            lwarn(L, "inputs disagree on %s: %s in an earlier input, %.*s in %s", keys[i], old,
                  (int)c->u.kv.value.len, c->u.kv.value.ptr, L->name);
    }
}

static void set_ticks_per_sec(loader *L, double t)
{
    L->ticks_per_sec = t;
    for (uint32_t i = 0; i < SECS_OF; i++)
        L->secs_of[i] = (double)i / t;
}

static bool kv_key_is(const nytp_chunk *c, const char *key)
{
    size_t n = strlen(key);
    return c->u.kv.key.len == n && memcmp(c->u.kv.key.ptr, key, n) == 0;
}

/* An attribute's value as a number (0 when it is none). */
static double kv_number(const nytp_chunk *c)
{
    char buf[32];
    size_t n = c->u.kv.value.len < sizeof buf - 1 ? c->u.kv.value.len : sizeof buf - 1;
    memcpy(buf, c->u.kv.value.ptr, n);
    buf[n] = 0;
    char *end;
    double v = strtod(buf, &end);
    return end != buf && v >= 0 && v < 1e19 ? v : 0;
}

static void on_attribute(loader *L, const nytp_chunk *c)
{
    if (!L->first_input)
        check_agreement(L, c);
    if (kv_key_is(c, "sample_hz")) {
        L->sampled = true;
        L->sample_hz = kv_number(c);
    } else if (kv_key_is(c, "sample_count")) {
        L->have_samples = true;
        L->samples = (uint64_t)kv_number(c);
    }
    if (c->u.kv.key.len == 13 && memcmp(c->u.kv.key.ptr, "ticks_per_sec", 13) == 0) {
        char buf[32];
        size_t n = c->u.kv.value.len < sizeof buf - 1 ? c->u.kv.value.len : sizeof buf - 1;
        memcpy(buf, c->u.kv.value.ptr, n);
        buf[n] = 0;
        double t = strtod(buf, NULL);
        if (t > 0) {
            set_ticks_per_sec(L, t);
            L->p->ticks_per_sec = t;
        }
    }
    set_kv(L, &L->p->attrs, &L->p->n_attrs, &L->p->cap_attrs, c);
}

/* Index eval fid, in the list of parent's evals, as the next on its
 * line: the k-th eval run there in an input is the k-th the model has
 * there, whatever the input numbered it.  False when out of memory. */
static bool eval_at_add(loader *L, uint32_t parent, uint32_t fid)
{
    uint64_t key = ((uint64_t)parent << 32) | L->p->files[fid].eval_line;
    uint32_t k = kmap_get(&L->eval_count, key, 0);
    k = k == KMAP_NONE ? 0 : k;
    return kmap_put(&L->eval_at, key, k, fid) && kmap_put(&L->eval_count, key, 0, k + 1);
}

/* Index the evals of the inputs loaded before this one. */
static bool index_evals(loader *L)
{
    nytp_profile *p = L->p;
    if (L->first_input)
        return true;
    for (uint32_t fid = 0; fid < p->n_files; fid++)
        for (uint32_t i = 0; i < p->files[fid].n_evals; i++)
            if (!eval_at_add(L, fid, p->files[fid].evals[i]))
                return false;
    return true;
}

static void on_new_fid(loader *L, const nytp_chunk *c)
{
    nytp_profile *p = L->p;
    uint32_t name = intern(L, c->u.new_fid.name.ptr, c->u.new_fid.name.len);
    if (L->oom)
        return;
    uint32_t parent = c->u.new_fid.eval_fid ? map_fid(L, c->u.new_fid.eval_fid) : 0;
    uint32_t eval_line = c->u.new_fid.eval_line;
    bool is_eval = c->u.new_fid.eval_fid != 0;
    if (is_eval && (parent == NYTP_NONE || parent >= p->n_files || !p->files[parent].defined)) {
        lwarn(L, "string eval %s (file id %u) names an unknown parent file id %u; treated as a file",
              nytp_profile_str(p, name), c->u.new_fid.fid, c->u.new_fid.eval_fid);
        is_eval = false;
        parent = 0;
        eval_line = 0;
    }

    uint32_t fid;
    if (L->first_input) {
        fid = fid_of_number(L, c->u.new_fid.fid);
        if (fid == NYTP_NONE)
            return;
    } else if (!is_eval) {
        fid = u64map_get(&p->impl->file_by_name, name);
        if (fid == NYTP_NONE)
            fid = p->n_files ? p->n_files : 1;
    } else {
        /* The k-th eval on this parent line in this input matches the k-th
         * the model has there. */
        uint64_t key = ((uint64_t)parent << 32) | eval_line;
        uint32_t k = u64map_get(&L->eval_seen, key);
        k = k == NYTP_NONE ? 0 : k + 1;
        u64map_put(&L->eval_seen, key, k);
        fid = kmap_get(&L->eval_at, key, k);
        if (fid == KMAP_NONE)
            fid = p->n_files ? p->n_files : 1;
    }
    if (!L->first_input && !kidx_set(&L->fidmap, c->u.new_fid.fid, fid)) {
        L->oom = true;
        return;
    }
    nytp_file *f = file_at(L, fid);
    if (!f)
        return;
    if (f->defined) {
        if (L->first_input)
            lwarn(L, "file id %u declared again, as %s (it was %s)", fid, nytp_profile_str(p, name),
                  nytp_profile_str(p, f->name));
        else
            return; /* the same file, seen in an earlier input */
    }
    bool was_defined = f->defined;
    f->defined = true;
    f->name = name;
    f->eval_fid = is_eval ? parent : 0;
    f->eval_line = is_eval ? eval_line : 0;
    f->flags = c->u.new_fid.flags;
    f->size = c->u.new_fid.size;
    f->mtime = c->u.new_fid.mtime;
    if (is_eval && !was_defined) {
        nytp_file *pf = &p->files[parent];
        if (!PUSH(pf->evals, pf->n_evals, pf->cap_evals, fid) || (!L->first_input && !eval_at_add(L, parent, fid)))
            L->oom = true;
    }
    if (!is_eval && u64map_get(&p->impl->file_by_name, name) == NYTP_NONE &&
        !u64map_put(&p->impl->file_by_name, name, fid))
        L->oom = true;
}

static void on_src_line(loader *L, const nytp_chunk *c)
{
    uint32_t fid = map_fid(L, c->u.src_line.fid);
    if (fid == NYTP_NONE)
        return;
    nytp_file *f = file_at(L, fid);
    if (!f)
        return;
    uint32_t line = c->u.src_line.line;
    uint64_t key = ((uint64_t)fid << 2 | SRC_KIND) + 1;
    uint32_t i = kmap_get(&L->line_idx, key, line);
    if (i != KMAP_NONE && !L->first_input)
        return; /* kept once */
    char *copy = malloc((size_t)c->u.src_line.text.len + 1);
    if (!copy) {
        L->oom = true;
        return;
    }
    memcpy(copy, c->u.src_line.text.ptr, c->u.src_line.text.len);
    copy[c->u.src_line.text.len] = 0;
    if (i == KMAP_NONE) {
        nytp_src *s = &f->src;
        if (!kmap_grow_array((void **)&s->v, s->n, &s->cap, sizeof *s->v) ||
            !kmap_put(&L->line_idx, key, line, s->n)) {
            free(copy);
            L->oom = true;
            return;
        }
        i = s->n++;
        s->v[i].line = line;
    } else {
        free(f->src.v[i].text.ptr); /* the same input saved it again: the last wins */
    }
    f->src.v[i].text = (nytp_text){copy, c->u.src_line.text.len, c->u.src_line.text.utf8};
}

/* Lists kept without duplicates (a file's subs, a call site's callers):
 * a short list is scanned, one of LISTED_SCAN entries or more also has
 * its entries in L->listed under its owner's key, so that a list of
 * 400,000 subs or callers is not scanned for each of them. */
#define LISTED_SCAN 16
#define OWNER_FILE(fid) ((uint64_t)1 << 32 | (fid))
#define OWNER_SITE(sid) ((uint64_t)2 << 32 | (sid))

static bool listed_has(const loader *L, uint64_t owner, const uint32_t *v, uint32_t n, uint32_t id)
{
    if (n >= LISTED_SCAN)
        return kmap_get(&L->listed, owner, id) != KMAP_NONE;
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

/* Index what was just appended to v (now n entries long); false when out
 * of memory. */
static bool listed_added(loader *L, uint64_t owner, const uint32_t *v, uint32_t n)
{
    if (n < LISTED_SCAN)
        return true;
    for (uint32_t i = n == LISTED_SCAN ? 0 : n - 1; i < n; i++)
        if (!kmap_put(&L->listed, owner, v[i], 0))
            return false;
    return true;
}

/* Index the long lists of the inputs loaded before this one. */
static bool index_listed(loader *L)
{
    nytp_profile *p = L->p;
    for (uint32_t fid = 0; fid < p->n_files; fid++)
        for (uint32_t i = 0; p->files[fid].n_subs >= LISTED_SCAN && i < p->files[fid].n_subs; i++)
            if (!kmap_put(&L->listed, OWNER_FILE(fid), p->files[fid].subs[i], 0))
                return false;
    for (uint32_t sid = 0; sid < p->n_sites; sid++)
        for (uint32_t i = 0; p->sites[sid].n_callers >= LISTED_SCAN && i < p->sites[sid].n_callers; i++)
            if (!kmap_put(&L->listed, OWNER_SITE(sid), p->sites[sid].callers[i], 0))
                return false;
    return true;
}

/* The sub named name, created with no file and no lines if new. */
static uint32_t sub_of(loader *L, uint32_t name)
{
    nytp_profile *p = L->p;
    uint32_t id = u64map_get(&p->impl->sub_by_name, name);
    if (id != NYTP_NONE)
        return id;
    nytp_sub s = {0};
    s.name = name;
    s.fid = NYTP_NONE;
    s.first_line = s.last_line = NYTP_NONE;
    id = p->n_subs;
    if (!PUSH(p->subs, p->n_subs, p->cap_subs, s) || !u64map_put(&p->impl->sub_by_name, name, id)) {
        L->oom = true;
        return NYTP_NONE;
    }
    return id;
}

static void on_sub_info(loader *L, const nytp_chunk *c)
{
    nytp_profile *p = L->p;
    uint32_t name = intern(L, c->u.sub_info.name.ptr, c->u.sub_info.name.len);
    uint32_t fid = map_fid(L, c->u.sub_info.fid);
    if (L->oom || fid == NYTP_NONE)
        return;
    uint32_t id = sub_of(L, name);
    if (id == NYTP_NONE)
        return;
    nytp_sub *s = &p->subs[id];
    /* Defined again (anon subs in string evals): the lowest fid wins. */
    if (s->fid == NYTP_NONE || fid <= s->fid) {
        s->fid = fid;
        s->first_line = c->u.sub_info.first_line;
        s->last_line = c->u.sub_info.last_line;
    }
    nytp_file *f = file_at(L, fid);
    if (!f || listed_has(L, OWNER_FILE(fid), f->subs, f->n_subs, id))
        return;
    if (!PUSH(f->subs, f->n_subs, f->cap_subs, id) || !listed_added(L, OWNER_FILE(fid), f->subs, f->n_subs))
        L->oom = true;
}

static void on_sub_callers(loader *L, const nytp_chunk *c)
{
    nytp_profile *p = L->p;
    const __typeof__(c->u.sub_callers) *a = &c->u.sub_callers;
    uint32_t called_name = intern(L, a->called.ptr, a->called.len);
    uint32_t caller_name = intern(L, a->caller.ptr, a->caller.len);
    if (L->oom)
        return;
    uint32_t id = sub_of(L, called_name);
    if (id == NYTP_NONE)
        return;
    uint32_t fid = map_fid(L, a->fid);
    if (fid == NYTP_NONE) {
        lwarn(L, "call of %s from file id %u, which was never declared", nytp_profile_str(p, called_name),
              a->fid);
        return;
    }
    if (fid) {
        uint64_t key = ((uint64_t)id << 40) ^ ((uint64_t)fid << 24) ^ a->line;
        /* key collisions are resolved by checking the site itself */
        uint32_t sid = u64map_get(&p->impl->site_by_key, key);
        while (sid != NYTP_NONE && (p->sites[sid].called != id || p->sites[sid].fid != fid ||
                                    p->sites[sid].line != a->line)) {
            key = kmap_mix64(key + 1);
            sid = u64map_get(&p->impl->site_by_key, key);
        }
        if (sid == NYTP_NONE) {
            nytp_site s = {0};
            s.called = id;
            s.fid = fid;
            s.line = a->line;
            s.count = a->count;
            s.incl = a->incl;
            s.excl = a->excl;
            s.reci = a->reci;
            s.rec_depth = a->rec_depth;
            sid = p->n_sites;
            if (!PUSH(p->sites, p->n_sites, p->cap_sites, s) ||
                !u64map_put(&p->impl->site_by_key, key, sid)) {
                L->oom = true;
                return;
            }
            nytp_sub *sub = &p->subs[id];
            nytp_file *f = file_at(L, fid);
            if (!f || !PUSH(sub->sites, sub->n_sites, sub->cap_sites, sid) ||
                !PUSH(f->sites, f->n_sites, f->cap_sites, sid)) {
                L->oom = true;
                return;
            }
        } else {
            nytp_site *s = &p->sites[sid];
            s->count += a->count;
            s->incl += a->incl;
            s->excl += a->excl;
            s->reci += a->reci;
            if (a->rec_depth > s->rec_depth)
                s->rec_depth = a->rec_depth;
        }
        nytp_site *s = &p->sites[sid];
        if (!listed_has(L, OWNER_SITE(sid), s->callers, s->n_callers, caller_name) &&
            (!PUSH(s->callers, s->n_callers, s->cap_callers, caller_name) ||
             !listed_added(L, OWNER_SITE(sid), s->callers, s->n_callers)))
            L->oom = true;
    } else {
        /* fid 0, line 0: not a call, a mark that the sub is an xsub */
        nytp_sub *s = &p->subs[id];
        s->xsub = true;
        s->first_line = s->last_line = 0;
    }
    nytp_sub *s = &p->subs[id];
    s->calls += a->count;
    s->incl += a->incl;
    s->excl += a->excl;
    s->reci += a->reci;
    if (a->rec_depth > s->rec_depth)
        s->rec_depth = a->rec_depth;
    p->total_sub_calls += a->count;
}

static void on_pid_start(loader *L, const nytp_chunk *c)
{
    nytp_profile *p = L->p;
    nytp_process pr = {c->u.pid_start.pid, c->u.pid_start.ppid, c->u.pid_start.time, 0, false,
                       p->n_inputs};
    if (!PUSH(p->procs, p->n_procs, p->cap_procs, pr))
        L->oom = true;
    p->profiler_start_time = c->u.pid_start.time;
    p->have_start = true;
    if (L->n_live < sizeof L->live / sizeof L->live[0])
        L->live[L->n_live] = c->u.pid_start.pid;
    L->n_live++;
}

static void on_pid_end(loader *L, const nytp_chunk *c)
{
    nytp_profile *p = L->p;
    uint32_t pid = c->u.pid_end.pid;
    bool found = false;
    uint32_t kept = L->n_live < 64 ? L->n_live : 64;
    for (uint32_t i = 0; i < kept; i++) {
        if (L->live[i] == pid) {
            L->live[i] = L->live[kept - 1];
            L->n_live--;
            found = true;
            break;
        }
    }
    if (!found && L->n_live > kept) {
        L->n_live--;
        found = true;
    }
    if (!found)
        lwarn(L, "process %u ends without having started", pid);
    for (uint32_t i = p->n_procs; i-- > 0;) {
        if (p->procs[i].pid == pid && !p->procs[i].ended && p->procs[i].input == p->n_inputs) {
            p->procs[i].end = c->u.pid_end.time;
            p->procs[i].ended = true;
            break;
        }
    }
    p->profiler_end_time = c->u.pid_end.time;
    p->have_end = true;
    p->profiler_duration += p->profiler_end_time - p->profiler_start_time;
}

static int apply(loader *L, const nytp_chunk *c)
{
    switch (c->tag) {
    case NYTP_TAG_TIME_LINE:
    case NYTP_TAG_TIME_BLOCK: on_time(L, c); break;
    case NYTP_TAG_DISCOUNT:
        L->discount++;
        L->p->total_stmts_discounted++;
        break;
    case NYTP_TAG_NEW_FID: on_new_fid(L, c); break;
    case NYTP_TAG_SRC_LINE: on_src_line(L, c); break;
    case NYTP_TAG_SUB_INFO: on_sub_info(L, c); break;
    case NYTP_TAG_SUB_CALLERS: on_sub_callers(L, c); break;
    case NYTP_TAG_PID_START: on_pid_start(L, c); break;
    case NYTP_TAG_PID_END: on_pid_end(L, c); break;
    case NYTP_TAG_ATTRIBUTE: on_attribute(L, c); break;
    case NYTP_TAG_OPTION:
        set_kv(L, &L->p->options, &L->p->n_options, &L->p->cap_options, c);
        break;
    default: break; /* VERSION, COMMENT, START_DEFLATE, SUB_ENTRY, SUB_RETURN */
    }
    return L->oom ? NYTP_E_NOMEM : NYTP_OK;
}

/* The common case of the load, straight from the reader's window: the
 * TIME_LINE and DISCOUNT chunks ahead, up to the first that is of another
 * kind, cut off by the window's end, in a file not yet known, or on a line
 * not in the dense tables.  Those go the general way, through
 * nytp_reader_next, which decodes them again and says what is wrong. */
static void statement_run(loader *L, nytp_reader *r, double *duration, uint64_t *measured)
{
    const uint8_t *q, *end;
    if (!nytp_reader_window(r, &q, &end))
        return;
    nytp_profile *p = L->p;
    const uint8_t *last = NULL;
    uint64_t n = 0;
    double dur = *duration;
    uint64_t meas = *measured;
    while (q < end) {
        if (*q == NYTP_TAG_DISCOUNT) {
            L->discount++;
            p->total_stmts_discounted++;
            last = q++;
            n++;
            continue;
        }
        if (*q != NYTP_TAG_TIME_LINE)
            break;
        int32_t ticks;
        uint32_t fid, line;
        size_t used = nytp_decode_time_line_inline(q, end, &ticks, &fid, &line);
        if (!used || fid >= p->n_files || p->files[fid].number != fid)
            break;
        nytp_linestat *e = dense_hit(L, fid, 0, &p->files[fid].line, line);
        if (!e)
            break;
        double secs = stmt_secs(L, ticks);
        linestat_add(e, secs, stmt_count_delta(L->discount));
        L->discount = 0;
        meas++;
        dur += secs;
        last = q;
        q += used;
        n++;
    }
    *duration = dur;
    *measured = meas;
    if (n)
        nytp_reader_took(r, q, last, n);
}

int nytp_profile_load_reader(nytp_profile *p, nytp_reader *r, const char *name,
                             const nytp_load_opts *opts, nytp_error *err)
{
    loader L = {0};
    L.p = p;
    L.name = name;
    L.opts = opts;
    set_ticks_per_sec(&L, 10000000.0);
    L.first_input = p->n_inputs == 0;
    L.r = r;
    if (!index_lines(&L) || !index_listed(&L) || !index_evals(&L)) {
        kmap_free(&L.line_idx);
        kmap_free(&L.listed);
        kmap_free(&L.eval_at);
        kmap_free(&L.eval_count);
        nytp_reader_close(r);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory indexing the lines loaded so far");
    }
    if (opts && opts->warn)
        nytp_reader_set_warn(r, opts->warn, opts->warn_ctx);
    nytp_chunk c;
    int st;
    int (*on_chunk)(void *ctx, const nytp_chunk *c) = opts ? opts->on_chunk : NULL;
    bool skip = opts && opts->skip_statements;
    /* The statement sums stay in registers while statements come (stores
     * through a line entry could otherwise be the same memory), and are
     * in p whenever anything else is applied. */
    double duration = p->total_stmts_duration;
    uint64_t measured = p->total_stmts_measured;
    /* Statements and discounts of the first input that nobody else sees
     * are decoded in place, a run at a time (statement_run). */
    bool runs = L.first_input && (!on_chunk || skip);
    for (;;) {
        if (runs)
            statement_run(&L, r, &duration, &measured);
        if ((st = nytp_reader_next(r, &c, err)) != NYTP_OK)
            break;
        int ast;
        if (c.tag == NYTP_TAG_TIME_LINE && L.first_input && c.u.time.fid < p->n_files &&
            p->files[c.u.time.fid].number == c.u.time.fid) {
            /* on_time's common case: a known file of the first input */
            double secs = stmt_secs(&L, c.u.time.ticks);
            int64_t delta = stmt_count_delta(L.discount);
            nytp_linestat *e = dense_hit(&L, c.u.time.fid, 0, &p->files[c.u.time.fid].line, c.u.time.line);
            if (e) /* add_stmt on a line seen before, inline */
                linestat_add(e, secs, delta);
            else
                add_stmt(&L, c.u.time.fid, 0, &p->files[c.u.time.fid].line, c.u.time.line, secs, delta);
            measured++;
            duration += secs;
            L.discount = 0;
            ast = L.oom ? NYTP_E_NOMEM : NYTP_OK;
        } else {
            p->total_stmts_duration = duration;
            p->total_stmts_measured = measured;
            ast = apply(&L, &c);
            duration = p->total_stmts_duration;
            measured = p->total_stmts_measured;
        }
        if (ast >= 0 && on_chunk &&
            !(skip && (c.tag == NYTP_TAG_TIME_LINE || c.tag == NYTP_TAG_DISCOUNT || c.tag == NYTP_TAG_TIME_BLOCK)) &&
            (ast = on_chunk(opts->chunk_ctx, &c)) < 0) {
            /* NOMEM has no place in the caller's message: say it here */
            st = nytp_error_set(err, ast, "%s while loading, at chunk %llu",
                                ast == NYTP_E_NOMEM ? "out of memory" : "stopped by the caller",
                                (unsigned long long)nytp_reader_chunk_number(r));
            if (err)
                set_where(err, r);
            break;
        }
        if (ast < 0) {
            st = nytp_error_set(err, NYTP_E_NOMEM, "out of memory while loading, at chunk %llu",
                                (unsigned long long)nytp_reader_chunk_number(r));
            if (err)
                set_where(err, r);
            break;
        }
    }
    p->total_stmts_duration = duration;
    p->total_stmts_measured = measured;
    L.r = NULL;
    nytp_reader_close(r);
    /* A DISCOUNT with no statement after it counts for nothing. */
    p->total_stmts_discounted -= L.discount;
    if (L.n_live)
        p->complete = false;
    kidx_free(&L.fidmap);
    u64map_free(&L.eval_seen);
    kmap_free(&L.line_idx);
    kmap_free(&L.listed);
    kmap_free(&L.eval_at);
    kmap_free(&L.eval_count);
    for (uint32_t i = 0; i < L.n_dense; i++)
        free(L.dense[i].at);
    free(L.dense);
    for (uint32_t fid = 0; fid < p->n_files; fid++) {
        sort_lines(&p->files[fid].line);
        sort_lines(&p->files[fid].block);
        sort_lines(&p->files[fid].sub);
        sort_src(&p->files[fid].src);
    }
    p->n_inputs++;
    if (L.sampled) {
        p->counts_unknown = true;
        if (!p->n_sampled)
            p->sample_hz = L.sample_hz;
        else if (p->sample_hz != L.sample_hz)
            p->sample_hz_mixed = true;
        p->n_sampled++;
        if (L.have_samples) {
            p->samples += L.samples;
            p->n_sample_counts++;
        }
    }
    if (st == NYTP_END)
        return NYTP_OK;
    if (st == NYTP_E_TRUNCATED) {
        p->truncated = true;
        p->complete = false;
    }
    return st;
}

int nytp_profile_load(nytp_profile *p, const char *path, const nytp_load_opts *opts,
                      nytp_error *err)
{
    nytp_reader *r;
    int st = nytp_reader_open(&r, path, err);
    if (st < 0)
        return st;
    return nytp_profile_load_reader(p, r, path, opts, err);
}

/* The callee lists: every site lists its calling subs by name; turn that
 * around so a report can go from a sub to the calls it made.  Two passes
 * (count, then fill) keep it to one allocation per sub. */
static int build_callees(nytp_profile *p)
{
    for (uint32_t i = 0; i < p->n_subs; i++) {
        free(p->subs[i].callees);
        p->subs[i].callees = NULL;
        p->subs[i].n_callees = 0;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < p->n_sites; i++) {
            const nytp_site *st = &p->sites[i];
            for (uint32_t k = 0; k < st->n_callers; k++) {
                uint32_t sub = u64map_get(&p->impl->sub_by_name, st->callers[k]);
                if (sub == NYTP_NONE)
                    continue;
                nytp_sub *s = &p->subs[sub];
                if (pass)
                    s->callees[s->n_callees] = i;
                s->n_callees++;
            }
        }
        if (pass)
            break;
        for (uint32_t i = 0; i < p->n_subs; i++) {
            nytp_sub *s = &p->subs[i];
            if (s->n_callees && !(s->callees = malloc(s->n_callees * sizeof *s->callees)))
                return NYTP_E_NOMEM;
            s->n_callees = 0;
        }
    }
    return NYTP_OK;
}

/* eval_depth, root_fid and root_line of every file, and evals_by_depth:
 * each file's chain of parents is walked once, the walk stopping at the
 * first file already resolved, so the work is linear in the files however
 * deep the nesting. */
static int derive_eval_roots(nytp_profile *p)
{
    uint32_t n = p->n_files;
    free(p->evals_by_depth);
    p->evals_by_depth = NULL;
    p->n_evals_by_depth = 0;
    if (!n)
        return NYTP_OK;
    /* state: 0 not seen, 1 on the walk in progress, 2 resolved */
    unsigned char *state = calloc(n, 1);
    uint32_t *path = malloc((size_t)n * sizeof *path);
    if (!state || !path) {
        free(state);
        free(path);
        return NYTP_E_NOMEM;
    }
    uint32_t n_evals = 0, max_depth = 0;
    for (uint32_t fid = 0; fid < n; fid++) {
        uint32_t np = 0, at = fid;
        while (!state[at]) {
            state[at] = 1;
            path[np++] = at;
            uint32_t up = p->files[at].eval_fid;
            if (!up || up >= n || !p->files[up].defined)
                break;
            at = up;
        }
        /* path[np-1] is a file, or its parent is resolved or on this walk
         * (a cycle, cut here) */
        while (np) {
            nytp_file *f = &p->files[path[--np]];
            uint32_t up = f->eval_fid;
            if (!up || up >= n || !p->files[up].defined || state[up] != 2) {
                f->eval_depth = 0;
                f->root_fid = f->fid;
                f->root_line = 0;
            } else {
                const nytp_file *pf = &p->files[up];
                f->eval_depth = pf->eval_depth + 1;
                f->root_fid = pf->root_fid;
                f->root_line = pf->eval_depth ? pf->root_line : f->eval_line;
                n_evals++;
                if (f->eval_depth > max_depth)
                    max_depth = f->eval_depth;
            }
            state[f->fid] = 2;
        }
    }
    free(state);
    /* order by depth (a counting sort; path holds the counts) */
    uint32_t *order = n_evals ? malloc((size_t)n_evals * sizeof *order) : NULL;
    uint32_t *start = n_evals ? calloc((size_t)max_depth + 2, sizeof *start) : NULL;
    if (n_evals && (!order || !start)) {
        free(order);
        free(start);
        free(path);
        return NYTP_E_NOMEM;
    }
    for (uint32_t fid = 0; fid < n && n_evals; fid++)
        if (p->files[fid].eval_depth)
            start[p->files[fid].eval_depth + 1]++;
    for (uint32_t d = 1; n_evals && d <= max_depth + 1; d++)
        start[d] += start[d - 1];
    for (uint32_t fid = 0; fid < n && n_evals; fid++)
        if (p->files[fid].eval_depth)
            order[start[p->files[fid].eval_depth]++] = fid;
    free(start);
    free(path);
    p->evals_by_depth = order;
    p->n_evals_by_depth = n_evals;
    return NYTP_OK;
}

int nytp_profile_finish(nytp_profile *p)
{
    /* Subs that were called but have no file (xsubs that died, subs that
     * never existed, opcodes of packages with no file) are given file 1,
     * as Devel::NYTProf::Data does; with no file 1 their fid becomes 0. */
    bool have1 = p->n_files > 1 && p->files[1].defined;
    for (uint32_t i = 0; i < p->n_subs; i++) {
        nytp_sub *s = &p->subs[i];
        if (!s->calls || (s->fid != NYTP_NONE && s->fid != 0))
            continue;
        if (!have1) {
            s->fid = 0;
            continue;
        }
        s->fid = 1;
        nytp_file *f = &p->files[1];
        bool present = false;
        for (uint32_t k = 0; k < f->n_subs; k++)
            present |= f->subs[k] == i;
        if (!present && !PUSH(f->subs, f->n_subs, f->cap_subs, i))
            return NYTP_E_NOMEM;
    }
    int st = derive_eval_roots(p);
    return st < 0 ? st : build_callees(p);
}

/* ---- collapsing sibling string evals ------------------------------------ */

typedef struct collapser {
    nytp_profile *p;
    bool *dead_site, *dead_sub;
    kmap site_at;            /* (called, fid << 32 | line) -> site (see find_site) */
    bool site_at_built;
    uint32_t *in_survivor;   /* sub -> stamp of the survivor whose list has it */
    uint32_t stamp;
    bool oom;
} collapser;

/* A digest of a file's saved source for telling sibling evals apart: line
 * count, total length and a 64-bit FNV-1a hash of the lines (Devel::NYTProf
 * uses a 32-bit byte sum; a real hash makes "same source" mean it).
 * False when no source was saved. */
static bool src_digest(const nytp_file *f, uint64_t d[3])
{
    uint64_t len = 0, h = 14695981039346656037ULL;
    for (uint32_t i = 0; i < f->src.n; i++) {
        const nytp_srcline *sl = &f->src.v[i];
        if (sl->line == 0)
            continue;
        for (int k = 0; k < 32; k += 8) /* the line number, then the text */
            h = (h ^ ((sl->line >> k) & 0xFF)) * 1099511628211ULL;
        len += sl->text.len;
        for (uint32_t k = 0; k < sl->text.len; k++)
            h = (h ^ (unsigned char)sl->text.ptr[k]) * 1099511628211ULL;
    }
    if (len == 0)
        return false;
    d[0] = nytp_src_last(&f->src);
    d[1] = len;
    d[2] = h;
    return true;
}

static bool has_byte_seq(const char *s, uint32_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (uint32_t i = 0; i + n <= len; i++)
        if (memcmp(s + i, needle, n) == 0)
            return true;
    return false;
}

static void remove_id(uint32_t *v, uint32_t *n, uint32_t id)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (v[i] == id) {
            memmove(v + i, v + i + 1, (*n - i - 1) * sizeof *v);
            (*n)--;
            return;
        }
    }
}

/* Merge the counts of site src into dst (Devel::NYTProf's rule: sums of
 * count and times, the larger depth and recursive time, callers united). */
static void merge_site(collapser *C, nytp_site *dst, const nytp_site *src)
{
    dst->count += src->count;
    dst->incl += src->incl;
    dst->excl += src->excl;
    if (src->rec_depth > dst->rec_depth)
        dst->rec_depth = src->rec_depth;
    if (src->reci > dst->reci)
        dst->reci = src->reci;
    for (uint32_t i = 0; i < src->n_callers; i++) {
        bool have = false;
        for (uint32_t k = 0; k < dst->n_callers; k++)
            have |= dst->callers[k] == src->callers[i];
        if (!have && !PUSH(dst->callers, dst->n_callers, dst->cap_callers, src->callers[i]))
            C->oom = true;
    }
}

/* The live site of sub `called` at fid:line, or NYTP_NONE.  C->site_at
 * has every live site under its (called, fid, line), and may still have
 * a site under a key it has left or a site since merged away: checked. */
static uint32_t find_site(collapser *C, uint32_t called, uint32_t fid, uint32_t line)
{
    nytp_profile *p = C->p;
    if (!C->site_at_built) {
        for (uint32_t i = 0; i < p->n_sites; i++)
            if (!C->dead_site[i] &&
                !kmap_put(&C->site_at, p->sites[i].called, (uint64_t)p->sites[i].fid << 32 | p->sites[i].line, i))
                C->oom = true;
        C->site_at_built = true;
    }
    uint32_t sid = kmap_get(&C->site_at, called, (uint64_t)fid << 32 | line);
    if (sid == KMAP_NONE || C->dead_site[sid])
        return NYTP_NONE;
    const nytp_site *x = &p->sites[sid];
    return x->called == called && x->fid == fid && x->line == line ? sid : NYTP_NONE;
}

/* Move site sid to (called, fid): merge into an existing one or re-home
 * it.  The site stays in the lists of its old file (when that changes)
 * and of its old sub, which the caller drops whole, and when merged in the
 * lists it is in, for compact() to drop: readers skip dead sites. */
static void move_site(collapser *C, uint32_t sid, uint32_t called, uint32_t fid)
{
    nytp_profile *p = C->p;
    nytp_site *s = &p->sites[sid];
    uint32_t old_fid = s->fid, old_called = s->called;
    uint32_t into = find_site(C, called, fid, s->line);
    if (into == sid)
        return;
    if (into != NYTP_NONE) {
        merge_site(C, &p->sites[into], s);
        C->dead_site[sid] = true;
        return;
    }
    if (old_fid == fid) /* re-homed in its file: it goes to the end of its list */
        remove_id(p->files[old_fid].sites, &p->files[old_fid].n_sites, sid);
    s->fid = fid;
    nytp_file *f = &p->files[fid];
    if (!PUSH(f->sites, f->n_sites, f->cap_sites, sid))
        C->oom = true;
    if (called != old_called) {
        s->called = called;
        nytp_sub *ns = &p->subs[called];
        if (!PUSH(ns->sites, ns->n_sites, ns->cap_sites, sid))
            C->oom = true;
    }
    if (!kmap_put(&C->site_at, called, (uint64_t)fid << 32 | s->line, sid))
        C->oom = true;
}

static void add_lines(collapser *C, nytp_lines *dst, nytp_lines *src)
{
    uint32_t n0 = dst->n;
    for (uint32_t i = 0; i < src->n; i++) {
        const nytp_linestat *d = &src->v[i];
        /* dst's first n0 entries are sorted; those appended come later */
        nytp_linestat *s = (nytp_linestat *)nytp_lines_get(&(nytp_lines){dst->v, n0, n0}, d->line);
        if (!s) {
            if (!kmap_grow_array((void **)&dst->v, dst->n, &dst->cap, sizeof *dst->v)) {
                C->oom = true;
                return;
            }
            s = &dst->v[dst->n++];
            *s = (nytp_linestat){0, 0, d->line, true};
        }
        s->time += d->time;
        s->count += d->count;
    }
    sort_lines(dst);
    free(src->v);
    src->v = NULL;
    src->n = src->cap = 0;
}

/* Number the n items of v (each `stride` words, compared whole) by
 * equal value, in order of first appearance: cls[i] is item i's class,
 * and the count of classes is returned (UINT32_MAX when out of memory).
 * Hashed, so linear in n. */
static uint32_t classify(const uint64_t *v, size_t stride, uint32_t n, uint32_t *cls)
{
    kmap m = {0};
    uint32_t *rep = malloc((n ? n : 1) * sizeof *rep); /* class -> its first item */
    uint32_t ncls = 0;
    if (!rep)
        return UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t *x = v + i * stride;
        uint64_t h = 0;
        for (size_t k = 0; k < stride; k++)
            h = kmap_mix64(h ^ x[k]) + k;
        /* a hash shared by different values goes on to the next salt */
        uint64_t salt = 0;
        uint32_t c;
        while ((c = kmap_get(&m, h, salt)) != KMAP_NONE &&
               memcmp(v + (size_t)rep[c] * stride, x, stride * sizeof *x) != 0)
            salt++;
        if (c == KMAP_NONE) {
            c = ncls++;
            rep[c] = i;
            if (!kmap_put(&m, h, salt, c)) {
                ncls = UINT32_MAX;
                break;
            }
        }
        cls[i] = c;
    }
    kmap_free(&m);
    free(rep);
    return ncls;
}

/* Order the items 0..n-1 by class (of ncls), keeping their order within
 * a class: the items of class c are out[at[c]] .. out[at[c + 1] - 1]. */
static void bucket(const uint32_t *cls, uint32_t n, uint32_t ncls, uint32_t *at, uint32_t *out)
{
    memset(at, 0, (ncls + 1) * sizeof *at);
    for (uint32_t i = 0; i < n; i++)
        at[cls[i] + 1]++;
    for (uint32_t c = 0; c < ncls; c++)
        at[c + 1] += at[c];
    for (uint32_t i = 0; i < n; i++)
        out[at[cls[i]]++] = i;
    for (uint32_t c = ncls; c > 0; c--) /* back to the starts */
        at[c] = at[c - 1];
    at[0] = 0;
}

/* Merge anon subs of the survivor whose names differ only in eval
 * sequence numbers ("(eval 12)" -> "(eval 0)") into the first by name. */
static void merge_anon_subs(collapser *C, nytp_file *sf)
{
    nytp_profile *p = C->p;
    uint32_t n = sf->n_subs;
    char **norm = calloc(n ? n : 1, sizeof *norm);
    if (!norm) {
        C->oom = true;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *name = nytp_profile_str(p, p->subs[sf->subs[i]].name);
        uint32_t len = nytp_profile_strlen(p, p->subs[sf->subs[i]].name);
        if (!has_byte_seq(name, len, "::__ANON__"))
            continue;
        char *o = norm[i] = malloc((size_t)len + 1);
        if (!o) {
            C->oom = true;
            break;
        }
        uint32_t k = 0;
        while (k < len) {
            /* "(eval " or "(re_eval " then digits then ")" */
            uint32_t pre = 0;
            if (k + 6 <= len && memcmp(name + k, "(eval ", 6) == 0)
                pre = 6;
            else if (k + 9 <= len && memcmp(name + k, "(re_eval ", 9) == 0)
                pre = 9;
            uint32_t d = k + pre;
            while (pre && d < len && name[d] >= '0' && name[d] <= '9')
                d++;
            if (pre && d > k + pre && d < len && name[d] == ')') {
                memcpy(o, name + k, pre);
                o += pre;
                *o++ = '0';
                k = d;
                continue;
            }
            *o++ = name[k++];
        }
        *o = 0;
    }
    /* the groups of equal normalised names, in the order of their first
     * live member, each member in order: by hash, a generated eval may
     * define 100,000 anon subs */
    uint32_t *live = malloc((n ? n : 1) * sizeof *live), *cls = calloc(n ? n : 1, sizeof *cls);
    uint32_t *rep = malloc((n ? n : 1) * sizeof *rep), *at = malloc((n + 1) * sizeof *at);
    uint32_t *by_cls = malloc((n ? n : 1) * sizeof *by_cls);
    kmap m = {0};
    uint32_t n_live = 0, ncls = 0;
    bool ok = live && cls && rep && at && by_cls && !C->oom;
    for (uint32_t i = 0; ok && i < n; i++) {
        if (!norm[i] || C->dead_sub[sf->subs[i]])
            continue;
        uint64_t h = 14695981039346656037ULL;
        for (const char *c = norm[i]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
        uint64_t salt = 0;
        uint32_t k;
        while ((k = kmap_get(&m, h, salt)) != KMAP_NONE && strcmp(norm[rep[k]], norm[i]) != 0)
            salt++;
        if (k == KMAP_NONE) {
            k = ncls++;
            rep[k] = i;
            ok = kmap_put(&m, h, salt, k);
        }
        live[n_live] = i;
        cls[n_live++] = k;
    }
    kmap_free(&m);
    if (!ok)
        C->oom = true;
    else
        bucket(cls, n_live, ncls, at, by_cls);
    for (uint32_t g = 0; ok && g < ncls; g++) {
        const uint32_t *mem = by_cls + at[g];
        uint32_t nmem = at[g + 1] - at[g];
        /* survivor of a group: the first by full name (byte order) */
        uint32_t surv = live[mem[0]];
        for (uint32_t x = 1; x < nmem; x++) {
            uint32_t j = live[mem[x]];
            uint32_t a = p->subs[sf->subs[j]].name, b = p->subs[sf->subs[surv]].name;
            uint32_t la = nytp_profile_strlen(p, a), lb = nytp_profile_strlen(p, b);
            int c = memcmp(nytp_profile_str(p, a), nytp_profile_str(p, b), la < lb ? la : lb);
            if (c < 0 || (c == 0 && la < lb))
                surv = j;
        }
        for (uint32_t x = 0; x < nmem; x++) {
            uint32_t j = live[mem[x]];
            if (j == surv)
                continue;
            nytp_sub *keep = &p->subs[sf->subs[surv]];
            uint32_t gone_id = sf->subs[j];
            nytp_sub *gone = &p->subs[gone_id];
            if (gone->first_line != NYTP_NONE &&
                (keep->first_line == NYTP_NONE || gone->first_line < keep->first_line))
                keep->first_line = gone->first_line;
            if (gone->last_line != NYTP_NONE &&
                (keep->last_line == NYTP_NONE || gone->last_line > keep->last_line))
                keep->last_line = gone->last_line;
            keep->calls += gone->calls;
            keep->incl += gone->incl;
            keep->excl += gone->excl;
            keep->reci += gone->reci;
            if (gone->rec_depth > keep->rec_depth)
                keep->rec_depth = gone->rec_depth;
            uint32_t keep_id = sf->subs[surv];
            /* move_site adds to keep's list, never to gone's */
            for (uint32_t k = 0; k < gone->n_sites; k++) {
                uint32_t sid = gone->sites[k];
                if (!C->dead_site[sid])
                    move_site(C, sid, keep_id, p->sites[sid].fid);
                gone = &p->subs[gone_id];
            }
            gone->n_sites = 0;
            C->dead_sub[gone_id] = true;
        }
    }
    free(live);
    free(cls);
    free(rep);
    free(at);
    free(by_cls);
    for (uint32_t i = 0; i < n; i++)
        free(norm[i]);
    free(norm);
    /* drop the merged subs from the file's list */
    uint32_t k = 0;
    for (uint32_t i = 0; i < sf->n_subs; i++)
        if (!C->dead_sub[sf->subs[i]])
            sf->subs[k++] = sf->subs[i];
    sf->n_subs = k;
}

static void free_file_data(nytp_file *f)
{
    free(f->evals);
    free(f->subs);
    free(f->sites);
    free(f->line.v);
    free(f->block.v);
    free(f->sub.v);
    free_src(&f->src);
    uint32_t fid = f->fid;
    memset(f, 0, sizeof *f);
    f->fid = fid;
}

/* Fold donors (siblings of survivor) into survivor; the caller takes
 * them off their parent's list of evals. */
static void collapse_into(collapser *C, uint32_t survivor, const uint32_t *donors, uint32_t n)
{
    nytp_profile *p = C->p;
    /* the survivor's subs, marked: a file is a survivor once */
    C->stamp++;
    for (uint32_t i = 0; i < p->files[survivor].n_subs; i++)
        C->in_survivor[p->files[survivor].subs[i]] = C->stamp;
    for (uint32_t d = 0; d < n; d++) {
        nytp_file *df = &p->files[donors[d]];
        nytp_file *sf = &p->files[survivor];
        /* subs defined in the donor move to the survivor */
        for (uint32_t i = 0; i < df->n_subs; i++) {
            uint32_t id = df->subs[i];
            nytp_sub *s = &p->subs[id];
            if (s->fid != df->fid)
                continue;
            s->fid = survivor;
            if (C->in_survivor[id] != C->stamp) {
                C->in_survivor[id] = C->stamp;
                if (!PUSH(sf->subs, sf->n_subs, sf->cap_subs, id))
                    C->oom = true;
            }
        }
        /* calls made from the donor move to the survivor's lines (the
         * donor's list goes with the donor) */
        for (uint32_t i = 0; i < df->n_sites; i++) {
            uint32_t sid = df->sites[i];
            if (!C->dead_site[sid])
                move_site(C, sid, p->sites[sid].called, survivor);
        }
        df->n_sites = 0;
        sf = &p->files[survivor];
        add_lines(C, &sf->line, &df->line);
        add_lines(C, &sf->block, &df->block);
        add_lines(C, &sf->sub, &df->sub);
        sf->merged_evals += 1 + df->merged_evals;
        free_file_data(&p->files[donors[d]]);
    }
    merge_anon_subs(C, &p->files[survivor]);
}

/* Fold the sibling evals run in parent (whose own evals are folded
 * already).  Siblings are grouped by the line that ran them, then by
 * source, each by hash: a loop running 100,000 evals makes groups that
 * large. */
static void collapse_in(collapser *C, uint32_t parent)
{
    nytp_profile *p = C->p;
    nytp_file *pf = &p->files[parent];
    uint32_t n = pf->n_evals;
    if (n < 2)
        return;
    uint32_t *kids = malloc(n * sizeof *kids);
    uint64_t(*keys)[4] = malloc(n * sizeof *keys);
    uint64_t(*lines)[1] = malloc(n * sizeof *lines);
    uint32_t *line_cls = malloc(n * sizeof *line_cls), *by_line = malloc(n * sizeof *by_line);
    uint32_t *line_at = malloc((n + 1) * sizeof *line_at);
    uint64_t(*skeys)[4] = malloc(n * sizeof *skeys);
    uint32_t *src_cls = malloc(n * sizeof *src_cls), *by_src = malloc(n * sizeof *by_src);
    uint32_t *src_at = malloc((n + 1) * sizeof *src_at);
    uint32_t *group = malloc(n * sizeof *group);
    bool *gone = calloc(n, sizeof *gone);
    if (!kids || !keys || !lines || !line_cls || !by_line || !line_at || !skeys || !src_cls || !by_src ||
        !src_at || !group || !gone) {
        C->oom = true;
        goto out;
    }
    memcpy(kids, pf->evals, n * sizeof *kids);
    for (uint32_t i = 0; i < n; i++) {
        const nytp_file *f = &p->files[kids[i]];
        uint64_t d[3] = {0, 0, 0};
        bool has_src = src_digest(f, d);
        keys[i][0] = d[0];
        keys[i][1] = d[1];
        keys[i][2] = d[2];
        /* no source: tell apart by whether they run evals or define subs */
        keys[i][3] = has_src ? 0 : 1 | (f->n_evals ? 2 : 0) | (f->n_subs ? 4 : 0);
        lines[i][0] = f->eval_line;
    }
    /* the lines in the order they first ran an eval, and each line's
     * siblings in the order they ran */
    uint32_t nlines = classify(&lines[0][0], 1, n, line_cls);
    if (nlines == UINT32_MAX) {
        C->oom = true;
        goto out;
    }
    bucket(line_cls, n, nlines, line_at, by_line);
    for (uint32_t l = 0; l < nlines; l++) {
        const uint32_t *sib = by_line + line_at[l];
        uint32_t nsib = line_at[l + 1] - line_at[l];
        if (nsib < 2)
            continue;
        for (uint32_t j = 0; j < nsib; j++)
            memcpy(skeys[j], keys[sib[j]], sizeof skeys[j]);
        uint32_t nkeys = classify(&skeys[0][0], 4, nsib, src_cls);
        if (nkeys == UINT32_MAX) {
            C->oom = true;
            goto out;
        }
        if (nkeys > 200) {
            /* too many different sources: fold them all into the first */
            for (uint32_t j = 1; j < nsib; j++) {
                group[j - 1] = kids[sib[j]];
                gone[sib[j]] = true;
            }
            collapse_into(C, kids[sib[0]], group, nsib - 1);
            continue;
        }
        /* ... with the same source, none running evals of its own */
        bucket(src_cls, nsib, nkeys, src_at, by_src);
        for (uint32_t k = 0; k < nkeys; k++) {
            const uint32_t *same = by_src + src_at[k];
            uint32_t g = src_at[k + 1] - src_at[k] - 1;
            bool nested = false;
            for (uint32_t j = 0; j <= g; j++)
                nested |= p->files[kids[sib[same[j]]]].n_evals > 0;
            if (!g || nested)
                continue;
            for (uint32_t j = 1; j <= g; j++) {
                group[j - 1] = kids[sib[same[j]]];
                gone[sib[same[j]]] = true;
            }
            collapse_into(C, kids[sib[same[0]]], group, g);
        }
    }
    /* the folded siblings leave the parent's list, the others keep their
     * order */
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!gone[i])
            pf->evals[m++] = kids[i];
    pf->n_evals = m;
out:
    free(kids);
    free(keys);
    free(lines);
    free(line_cls);
    free(by_line);
    free(line_at);
    free(skeys);
    free(src_cls);
    free(by_src);
    free(src_at);
    free(group);
    free(gone);
}

/* Drop dead sites and subs and renumber what refers to them. */
static int compact(collapser *C)
{
    nytp_profile *p = C->p;
    uint32_t *site_map = malloc((p->n_sites + 1) * sizeof *site_map);
    uint32_t *sub_map = malloc((p->n_subs + 1) * sizeof *sub_map);
    if (!site_map || !sub_map) {
        free(site_map);
        free(sub_map);
        return NYTP_E_NOMEM;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->n_sites; i++) {
        if (C->dead_site[i]) {
            free(p->sites[i].callers);
            site_map[i] = NYTP_NONE;
            continue;
        }
        site_map[i] = k;
        p->sites[k++] = p->sites[i];
    }
    p->n_sites = k;
    k = 0;
    for (uint32_t i = 0; i < p->n_subs; i++) {
        if (C->dead_sub[i]) {
            free(p->subs[i].sites);
            free(p->subs[i].callees);
            sub_map[i] = NYTP_NONE;
            continue;
        }
        sub_map[i] = k;
        p->subs[k++] = p->subs[i];
    }
    p->n_subs = k;
    for (uint32_t i = 0; i < p->n_sites; i++)
        p->sites[i].called = sub_map[p->sites[i].called];
    for (uint32_t i = 0; i < p->n_subs; i++) {
        nytp_sub *s = &p->subs[i];
        uint32_t m = 0;
        for (uint32_t j = 0; j < s->n_sites; j++)
            if (site_map[s->sites[j]] != NYTP_NONE)
                s->sites[m++] = site_map[s->sites[j]];
        s->n_sites = m;
    }
    for (uint32_t f = 0; f < p->n_files; f++) {
        nytp_file *fi = &p->files[f];
        uint32_t m = 0;
        for (uint32_t j = 0; j < fi->n_sites; j++)
            if (site_map[fi->sites[j]] != NYTP_NONE)
                fi->sites[m++] = site_map[fi->sites[j]];
        fi->n_sites = m;
        m = 0;
        for (uint32_t j = 0; j < fi->n_subs; j++)
            if (sub_map[fi->subs[j]] != NYTP_NONE)
                fi->subs[m++] = sub_map[fi->subs[j]];
        fi->n_subs = m;
    }
    /* rebuild the indexes */
    u64map_free(&p->impl->sub_by_name);
    u64map_free(&p->impl->site_by_key);
    int st = NYTP_OK;
    for (uint32_t i = 0; i < p->n_subs; i++)
        if (!u64map_put(&p->impl->sub_by_name, p->subs[i].name, i))
            st = NYTP_E_NOMEM;
    for (uint32_t i = 0; i < p->n_sites; i++) {
        const nytp_site *s = &p->sites[i];
        uint64_t key = ((uint64_t)s->called << 40) ^ ((uint64_t)s->fid << 24) ^ s->line;
        while (u64map_get(&p->impl->site_by_key, key) != NYTP_NONE)
            key = kmap_mix64(key + 1);
        if (!u64map_put(&p->impl->site_by_key, key, i))
            st = NYTP_E_NOMEM;
    }
    free(site_map);
    free(sub_map);
    if (st == NYTP_OK)
        st = build_callees(p);
    return st;
}

static void collapser_free(collapser *C)
{
    free(C->dead_site);
    free(C->dead_sub);
    free(C->in_survivor);
    kmap_free(&C->site_at);
}

int nytp_profile_collapse_evals(nytp_profile *p)
{
    collapser C = {0};
    C.p = p;
    C.dead_site = calloc(p->n_sites + 1, sizeof(bool));
    C.dead_sub = calloc(p->n_subs + 1, sizeof(bool));
    C.in_survivor = calloc(p->n_subs + 1, sizeof *C.in_survivor);
    if (!C.dead_site || !C.dead_sub || !C.in_survivor) {
        collapser_free(&C);
        return NYTP_E_NOMEM;
    }
    /* the deepest evals first, so every eval's own evals are folded
     * before it is compared with its siblings; the outermost files last */
    if (derive_eval_roots(p) < 0) {
        collapser_free(&C);
        return NYTP_E_NOMEM;
    }
    for (uint32_t i = p->n_evals_by_depth; i-- > 0;)
        collapse_in(&C, p->evals_by_depth[i]);
    for (uint32_t fid = 1; fid < p->n_files; fid++)
        if (p->files[fid].defined && !p->files[fid].eval_fid)
            collapse_in(&C, fid);
    int st = compact(&C);
    if (st == NYTP_OK)
        st = derive_eval_roots(p);
    collapser_free(&C);
    return C.oom ? NYTP_E_NOMEM : st;
}

/* ---- files named more than once ----------------------------------------- */

int nytp_profile_fold_files(nytp_profile *p, const uint32_t *into)
{
    collapser C = {0};
    C.p = p;
    C.dead_site = calloc(p->n_sites + 1, sizeof(bool));
    C.dead_sub = calloc(p->n_subs + 1, sizeof(bool));
    C.in_survivor = calloc(p->n_subs + 1, sizeof *C.in_survivor);
    bool *folded = calloc((size_t)p->n_files + 1, sizeof *folded);
    if (!C.dead_site || !C.dead_sub || !C.in_survivor || !folded) {
        collapser_free(&C);
        free(folded);
        return NYTP_E_NOMEM;
    }
    bool any = false;
    for (uint32_t d = 1; d < p->n_files; d++) {
        uint32_t t = into[d];
        if (t == d || t >= p->n_files || into[t] != t || p->files[d].eval_fid || p->files[t].eval_fid)
            continue;
        any = folded[d] = true;
        /* every sub placed in the donor, defined there or only listed,
         * once on the target's list (marked: no scan per sub) */
        C.stamp++;
        for (uint32_t k = 0; k < p->files[t].n_subs; k++)
            C.in_survivor[p->files[t].subs[k]] = C.stamp;
        for (uint32_t i = 0; i < p->files[d].n_subs; i++) {
            uint32_t sid = p->files[d].subs[i];
            if (p->subs[sid].fid == d)
                p->subs[sid].fid = t;
            nytp_file *tf = &p->files[t];
            if (C.in_survivor[sid] == C.stamp)
                continue;
            C.in_survivor[sid] = C.stamp;
            if (!PUSH(tf->subs, tf->n_subs, tf->cap_subs, sid))
                C.oom = true;
        }
        /* the sites stay on the donor's list, which goes whole below */
        for (uint32_t i = 0; i < p->files[d].n_sites; i++) {
            uint32_t sid = p->files[d].sites[i];
            if (!C.dead_site[sid] && p->sites[sid].fid == d)
                move_site(&C, sid, p->sites[sid].called, t);
        }
        nytp_file *df = &p->files[d], *tf = &p->files[t];
        add_lines(&C, &tf->line, &df->line);
        add_lines(&C, &tf->block, &df->block);
        add_lines(&C, &tf->sub, &df->sub);
        for (uint32_t i = 0; i < df->n_evals; i++) {
            p->files[df->evals[i]].eval_fid = t;
            if (!PUSH(tf->evals, tf->n_evals, tf->cap_evals, df->evals[i]))
                C.oom = true;
        }
        if (!tf->src.n) { /* the first saved source of the file serves */
            nytp_src keep = tf->src;
            tf->src = df->src;
            df->src = keep;
        }
        free_file_data(df);
    }
    /* subs placed in a donor but not on its list */
    for (uint32_t i = 0; any && i < p->n_subs; i++) {
        uint32_t f = p->subs[i].fid;
        if (f != NYTP_NONE && f < p->n_files && folded[f])
            p->subs[i].fid = into[f];
    }
    int st = any ? compact(&C) : NYTP_OK;
    if (any && st == NYTP_OK)
        st = derive_eval_roots(p);
    bool oom = C.oom;
    collapser_free(&C);
    free(folded);
    return oom ? NYTP_E_NOMEM : st;
}

bool nytp_file_is_empty(const nytp_file *f)
{
    return !f->line.n && !f->block.n && !f->sub.n && !f->src.n && !f->n_subs && !f->n_sites && !f->n_evals;
}

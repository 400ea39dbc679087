/* model.c — loading profiles into the in-memory model (nytp/model.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nytp/model.h"
#include "codec_decode.h"
#include "model_impl.h"
#include "reader_impl.h"
#include "stmtcount.h"

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
        model_sort_lines(&p->files[fid].line);
        model_sort_lines(&p->files[fid].block);
        model_sort_lines(&p->files[fid].sub);
        model_sort_src(&p->files[fid].src);
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

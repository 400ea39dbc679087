/* model.c — loading profiles into the in-memory model (nytp/model.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nytp/model.h"
#include "strtab.h"

/* A hash index from a 64-bit key to a 32-bit value (open addressing). */
typedef struct u64map {
    uint64_t *keys;
    uint32_t *vals;     /* value + 1; 0 = empty */
    uint32_t n, nslots;
} u64map;

struct nytp_model_impl {
    strtab strs;
    u64map file_by_name;    /* name id -> fid (real files only) */
    u64map sub_by_name;     /* name id -> sub id */
    u64map site_by_key;     /* (called, fid, line) -> site id */
};

/* ---- small containers ------------------------------------------------- */

static uint64_t mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static uint32_t u64map_get(const u64map *m, uint64_t key)
{
    if (!m->nslots)
        return NYTP_NONE;
    uint32_t mask = m->nslots - 1;
    for (uint32_t i = (uint32_t)mix64(key) & mask;; i = (i + 1) & mask) {
        if (!m->vals[i])
            return NYTP_NONE;
        if (m->keys[i] == key)
            return m->vals[i] - 1;
    }
}

static bool u64map_grow(u64map *m)
{
    uint32_t ns = m->nslots ? m->nslots * 2 : 64;
    uint64_t *keys = calloc(ns, sizeof *keys);
    uint32_t *vals = calloc(ns, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    for (uint32_t i = 0; i < m->nslots; i++) {
        if (!m->vals[i])
            continue;
        uint32_t j = (uint32_t)mix64(m->keys[i]) & (ns - 1);
        while (vals[j])
            j = (j + 1) & (ns - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->nslots = ns;
    return true;
}

static bool u64map_put(u64map *m, uint64_t key, uint32_t val)
{
    if ((uint64_t)(m->n + 1) * 4 > (uint64_t)m->nslots * 3 && !u64map_grow(m))
        return false;
    uint32_t mask = m->nslots - 1;
    for (uint32_t i = (uint32_t)mix64(key) & mask;; i = (i + 1) & mask) {
        if (!m->vals[i]) {
            m->keys[i] = key;
            m->vals[i] = val + 1;
            m->n++;
            return true;
        }
        if (m->keys[i] == key) {
            m->vals[i] = val + 1;
            return true;
        }
    }
}

static void u64map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* Grow *v (n used, *cap allocated, elements of size sz) to hold one more. */
static bool grow(void **v, uint32_t n, uint32_t *cap, size_t sz)
{
    if (n < *cap)
        return true;
    uint32_t nc = *cap ? *cap * 2 : 8;
    void *nv = realloc(*v, (size_t)nc * sz);
    if (!nv)
        return false;
    *v = nv;
    *cap = nc;
    return true;
}

#define PUSH(arr, n, cap, val)                                                      \
    (grow((void **)&(arr), (n), &(cap), sizeof *(arr)) ? ((arr)[(n)++] = (val), true) : false)

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
        for (uint32_t k = 0; k < f->n_src; k++)
            free(f->src[k].ptr);
        free(f->src);
    }
    free(p->files);
    for (uint32_t i = 0; i < p->n_subs; i++)
        free(p->subs[i].sites);
    free(p->subs);
    for (uint32_t i = 0; i < p->n_sites; i++)
        free(p->sites[i].callers);
    free(p->sites);
    free(p->procs);
    free(p->attrs);
    free(p->options);
    if (p->impl) {
        strtab_free(&p->impl->strs);
        u64map_free(&p->impl->file_by_name);
        u64map_free(&p->impl->sub_by_name);
        u64map_free(&p->impl->site_by_key);
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
    if (fid >= p->n_files || line >= p->files[fid].line.n)
        return NULL;
    const nytp_linestat *s = &p->files[fid].line.v[line];
    return s->set ? s : NULL;
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

/* State of loading one input. */
typedef struct loader {
    nytp_profile *p;
    const char *name;
    const nytp_load_opts *opts;
    uint32_t *fidmap;        /* input fid -> model fid (NYTP_NONE: unknown) */
    uint32_t n_fidmap;
    int discount;            /* DISCOUNTs waiting for the next statement */
    double ticks_per_sec;
    uint32_t live[64];       /* pids started, not ended (first 64) */
    uint32_t n_live;
    u64map eval_seen;        /* (model parent fid, line) -> evals seen there in this input */
    bool first_input;
    bool oom;
} loader;

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
    L->opts->warn(L->opts->warn_ctx, &w);
}

static uint32_t intern(loader *L, const char *s, size_t len)
{
    uint32_t id = strtab_intern(&L->p->impl->strs, s, len);
    if (id == STRTAB_NONE)
        L->oom = true;
    return id;
}

static nytp_file *file_at(loader *L, uint32_t fid)
{
    nytp_profile *p = L->p;
    if (fid >= p->n_files) {
        uint32_t n = fid + 1;
        uint32_t cap = p->n_files;
        while (cap < n)
            cap = cap ? cap * 2 : 16;
        nytp_file *nf = realloc(p->files, (size_t)cap * sizeof *nf);
        if (!nf) {
            L->oom = true;
            return NULL;
        }
        memset(nf + p->n_files, 0, (size_t)(cap - p->n_files) * sizeof *nf);
        for (uint32_t i = p->n_files; i < cap; i++)
            nf[i].fid = i;
        p->files = nf;
        p->n_files = cap;
    }
    return &p->files[fid];
}

/* The model fid of an input fid: the same number for the first input;
 * for later inputs whatever NEW_FID mapped it to. */
static uint32_t map_fid(loader *L, uint32_t fid)
{
    if (L->first_input)
        return fid;
    if (fid < L->n_fidmap && L->fidmap[fid] != NYTP_NONE)
        return L->fidmap[fid];
    return fid == 0 ? 0 : NYTP_NONE;
}

static bool set_fidmap(loader *L, uint32_t fid, uint32_t model)
{
    if (fid >= L->n_fidmap) {
        uint32_t n = L->n_fidmap ? L->n_fidmap : 16;
        while (n <= fid)
            n *= 2;
        uint32_t *m = realloc(L->fidmap, (size_t)n * sizeof *m);
        if (!m)
            return false;
        for (uint32_t i = L->n_fidmap; i < n; i++)
            m[i] = NYTP_NONE;
        L->fidmap = m;
        L->n_fidmap = n;
    }
    L->fidmap[fid] = model;
    return true;
}

static nytp_linestat *line_slot(loader *L, nytp_lines *l, uint32_t line)
{
    if (line >= l->n) {
        uint32_t n = l->n ? l->n : 64;
        while (n <= line) {
            if (n > UINT32_MAX / 2) {
                n = line + 1;
                break;
            }
            n *= 2;
        }
        nytp_linestat *v = realloc(l->v, (size_t)n * sizeof *v);
        if (!v) {
            L->oom = true;
            return NULL;
        }
        memset(v + l->n, 0, (size_t)(n - l->n) * sizeof *v);
        l->v = v;
        l->n = n;
    }
    return &l->v[line];
}

/* Add one statement's time to a line, with Devel::NYTProf's count rule:
 * delta is 1, or 0 after a DISCOUNT (or negative after several). */
static void add_stmt(loader *L, nytp_lines *l, uint32_t line, double secs, int64_t delta)
{
    nytp_linestat *s = line_slot(L, l, line);
    if (!s)
        return;
    if (!s->set) {
        s->set = true;
        s->time = secs;
        s->count = delta;
        return;
    }
    s->time += secs;
    if (delta == 1)
        s->count++;
    else if (delta != 0)
        s->count = (int64_t)secs + s->count; /* as the reference loader does */
}

static void on_time(loader *L, const nytp_chunk *c)
{
    nytp_profile *p = L->p;
    double secs = (double)c->u.time.ticks / L->ticks_per_sec;
    uint32_t fid = map_fid(L, c->u.time.fid);
    int64_t delta = 1 - L->discount;
    if (fid == NYTP_NONE) {
        lwarn(L, "statement in file id %u, which was never declared", c->u.time.fid);
    } else {
        nytp_file *f = file_at(L, fid);
        if (f) {
            add_stmt(L, &f->line, c->u.time.line, secs, delta);
            if (c->tag == NYTP_TAG_TIME_BLOCK) {
                p->has_blocks = true;
                add_stmt(L, &f->block, c->u.time.block_line, secs, delta);
                add_stmt(L, &f->sub, c->u.time.sub_line, secs, delta);
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

static void on_attribute(loader *L, const nytp_chunk *c)
{
    if (!L->first_input)
        check_agreement(L, c);
    if (c->u.kv.key.len == 13 && memcmp(c->u.kv.key.ptr, "ticks_per_sec", 13) == 0) {
        char buf[32];
        size_t n = c->u.kv.value.len < sizeof buf - 1 ? c->u.kv.value.len : sizeof buf - 1;
        memcpy(buf, c->u.kv.value.ptr, n);
        buf[n] = 0;
        double t = strtod(buf, NULL);
        if (t > 0) {
            L->ticks_per_sec = t;
            L->p->ticks_per_sec = t;
        }
    }
    set_kv(L, &L->p->attrs, &L->p->n_attrs, &L->p->cap_attrs, c);
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
        fid = c->u.new_fid.fid;
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
        fid = NYTP_NONE;
        nytp_file *pf = &p->files[parent];
        uint32_t seen = 0;
        for (uint32_t i = 0; i < pf->n_evals; i++) {
            nytp_file *ef = &p->files[pf->evals[i]];
            if (ef->eval_line == eval_line && seen++ == k) {
                fid = ef->fid;
                break;
            }
        }
        if (fid == NYTP_NONE)
            fid = p->n_files ? p->n_files : 1;
    }
    if (!L->first_input && !set_fidmap(L, c->u.new_fid.fid, fid)) {
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
        if (!PUSH(pf->evals, pf->n_evals, pf->cap_evals, fid))
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
    if (line >= f->n_src) {
        uint32_t n = f->n_src ? f->n_src : 64;
        while (n <= line)
            n = n > UINT32_MAX / 2 ? line + 1 : n * 2;
        nytp_text *v = realloc(f->src, (size_t)n * sizeof *v);
        if (!v) {
            L->oom = true;
            return;
        }
        memset(v + f->n_src, 0, (size_t)(n - f->n_src) * sizeof *v);
        f->src = v;
        f->n_src = n;
    }
    nytp_text *t = &f->src[line];
    if (t->ptr && !L->first_input)
        return; /* kept once */
    char *copy = malloc((size_t)c->u.src_line.text.len + 1);
    if (!copy) {
        L->oom = true;
        return;
    }
    memcpy(copy, c->u.src_line.text.ptr, c->u.src_line.text.len);
    copy[c->u.src_line.text.len] = 0;
    free(t->ptr);
    t->ptr = copy;
    t->len = c->u.src_line.text.len;
    t->utf8 = c->u.src_line.text.utf8;
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
    if (!f)
        return;
    for (uint32_t i = 0; i < f->n_subs; i++)
        if (f->subs[i] == id)
            return;
    if (!PUSH(f->subs, f->n_subs, f->cap_subs, id))
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
            key = mix64(key + 1);
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
        bool have = false;
        for (uint32_t i = 0; i < s->n_callers; i++)
            if (s->callers[i] == caller_name)
                have = true;
        if (!have && !PUSH(s->callers, s->n_callers, s->cap_callers, caller_name))
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

int nytp_profile_load_reader(nytp_profile *p, nytp_reader *r, const char *name,
                             const nytp_load_opts *opts, nytp_error *err)
{
    loader L = {0};
    L.p = p;
    L.name = name;
    L.opts = opts;
    L.ticks_per_sec = 10000000.0;
    L.first_input = p->n_inputs == 0;
    if (opts && opts->warn)
        nytp_reader_set_warn(r, opts->warn, opts->warn_ctx);
    nytp_chunk c;
    int st;
    while ((st = nytp_reader_next(r, &c, err)) == NYTP_OK) {
        if (apply(&L, &c) < 0) {
            st = nytp_error_set(err, NYTP_E_NOMEM, "out of memory while loading");
            break;
        }
    }
    nytp_reader_close(r);
    /* A DISCOUNT with no statement after it counts for nothing. */
    p->total_stmts_discounted -= (uint64_t)L.discount;
    if (L.n_live)
        p->complete = false;
    free(L.fidmap);
    u64map_free(&L.eval_seen);
    p->n_inputs++;
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
    return NYTP_OK;
}

int nytp_profile_collapse_evals(nytp_profile *p)
{
    (void)p;
    return NYTP_OK;
}

/* merge.c — joining profiles into one (nytp/merge.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nytp/merge.h"
#include "kmap.h"
#include "strtab.h"

#define NONE UINT32_MAX
/* Any line number is taken, as the model takes it: memory follows the
 * lines present, not their numbers. */

/* ---- the state ------------------------------------------------------------ */

/* Statements on one line (or line, block and sub line): ticks summed,
 * statements counted, statements discounted, and the DISCOUNTs beyond
 * one before a statement, which change the count Devel::NYTProf computes
 * (stmtcount.h) when before the line's first statement (deficit), and
 * only the number of DISCOUNTs otherwise (extra). */
typedef struct stmts {
    double ticks;           /* exact for integer sums below 2^53 */
    uint64_t count, disc, deficit, extra;
} stmts;

typedef struct mline {      /* TIME_LINE data of one line */
    uint32_t line;
    stmts s;
} mline;

typedef struct mfile {
    uint32_t name;          /* string id */
    uint32_t next_same;     /* the next eval run at the same parent line */
    mline *lines;           /* the lines with statements, in the order first
                               seen (sorted by line when written) */
    uint32_t n_lines, cap_lines;
    uint32_t *at;           /* entry in lines by line number, NONE: not here
                               (see line_entry) */
    uint32_t cap_at;
} mfile;

/* A line's entry is found in its file's dense table, indexed by line
 * (kmap_dense_put), or, beyond that table's budget, in the hashed index,
 * which has every line. */

typedef struct mblock {     /* TIME_BLOCK data */
    uint32_t fid, line, block, sub;
    stmts s;
} mblock;

typedef struct msub {
    uint32_t name, fid, first, last;
} msub;

typedef struct marc {       /* one SUB_CALLERS key, summed */
    uint32_t called, caller, fid, line, rec_depth;
    uint64_t count;
    double incl, excl, reci;
} marc;

typedef struct mplace {     /* the evals run at one parent file and line */
    uint32_t first, last;
} mplace;

typedef struct mkv {        /* an attribute or option */
    char *key, *value, *from;
    double sum;             /* cumulative_overhead_ticks */
    uint32_t runs;          /* application: inputs with this value */
} mkv;

enum kv_rule { KV_FIXED, KV_MIN, KV_SUM, KV_FIRST, KV_APPLICATION, KV_LAST };

struct nytp_merge {
    nytp_writer *w;
    nytp_merge_opts o;
    bool deflating;
    strtab strs;
    bool *utf8;                 /* string id -> UTF-8 flag */
    uint32_t cap_utf8;
    mfile *files;               /* by output fid; 0 is never a file */
    uint32_t n_files, cap_files;
    kmap file_by_name;          /* name id -> fid (real files) */
    kmap line_idx;              /* (fid, line) -> entry in files[fid].lines */
    kmap src_seen;              /* (fid, line) of the SRC_LINEs written */
    uint64_t dense_slots;       /* in all the files' line tables */
    uint64_t n_line_entries;
    kmap place_idx;             /* (parent fid, line) -> place */
    mplace *places;
    uint32_t n_places, cap_places;
    kmap block_idx, sub_idx, arc_idx;
    kmap sub_owner;             /* sub name -> the input that first defined it */
    mblock *blocks;
    uint32_t n_blocks, cap_blocks;
    msub *subs;
    uint32_t n_subs, cap_subs;
    marc *arcs;
    uint32_t n_arcs, cap_arcs;
    mkv *fixed, *later, *apps, *options;
    uint32_t n_fixed, cap_fixed, n_later, cap_later, n_apps, cap_apps, n_options, cap_options;
    double out_tps;
    uint32_t n_inputs;

    /* the input being read */
    const char *name;
    kidx fidmap;                /* input fid -> output fid */
    kmap cursor;                /* (parent fid, line) -> last eval matched there */
    uint64_t discount;          /* DISCOUNTs waiting for the next statement */
    double scale;               /* output ticks per input tick */
    bool warned_undeclared;
    bool warned_huge;           /* a line's ticks beyond 2^53 */
    bool oom;
    nytp_reader *r;             /* the input being read: where a warning is */
};

static void mwarn(nytp_merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A warning about the chunk being read: "NAME: at WHERE: " before it. */
static void mwarn_here(nytp_merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mwarn_here(nytp_merge *m, const char *fmt, ...)
{
    if (!m->o.warn)
        return;
    nytp_error w = {0};
    char where[200];
    size_t n = 0;
    if (m->r) {
        w.offset = nytp_reader_chunk_offset(m->r);
        w.inflated = nytp_reader_chunk_inflated(m->r);
        w.deflate_start = nytp_in_deflate_start(nytp_reader_input(m->r));
        w.chunk = nytp_reader_chunk_number(m->r);
        nytp_error_where(&w, where, sizeof where);
        n = (size_t)snprintf(w.msg, sizeof w.msg, "%s: at %s: ", m->name, where);
    } else {
        n = (size_t)snprintf(w.msg, sizeof w.msg, "%s: ", m->name);
    }
    if (n < sizeof w.msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w.msg + n, sizeof w.msg - n, fmt, ap);
        va_end(ap);
    }
    w.kind = fmt;
    m->o.warn(m->o.warn_ctx, &w);
}

static void mwarn(nytp_merge *m, const char *fmt, ...)
{
    if (!m->o.warn)
        return;
    nytp_error w = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w.msg, sizeof w.msg, fmt, ap);
    va_end(ap);
    w.kind = fmt;
    m->o.warn(m->o.warn_ctx, &w);
}

static uint32_t intern(nytp_merge *m, nytp_str s)
{
    uint32_t before = m->strs.count;
    uint32_t id = strtab_intern(&m->strs, s.ptr, s.len);
    if (id == STRTAB_NONE) {
        m->oom = true;
        return NONE;
    }
    if (id >= m->cap_utf8) {
        uint32_t nc = kmap_grown_cap(m->cap_utf8, (uint64_t)id + 1);
        bool *v = nc ? realloc(m->utf8, nc * sizeof *v) : NULL;
        if (!v) {
            m->oom = true;
            return NONE;
        }
        memset(v + m->cap_utf8, 0, (nc - m->cap_utf8) * sizeof *v);
        m->utf8 = v;
        m->cap_utf8 = nc;
    }
    if (m->strs.count > before)
        m->utf8[id] = s.utf8; /* the first spelling's flag is kept */
    return id;
}

static nytp_str str_of(const nytp_merge *m, uint32_t id)
{
    nytp_str s = {strtab_str(&m->strs, id), strtab_len(&m->strs, id), m->utf8[id]};
    return s;
}

static char *dup_str(nytp_merge *m, const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (!d) {
        m->oom = true;
        return NULL;
    }
    memcpy(d, s, len);
    d[len] = 0;
    return d;
}

/* Binary chunks go into the compressed part. */
static void binary(nytp_merge *m)
{
    if (!m->deflating) {
        m->deflating = true;
        nytp_write_start_deflate(m->w, m->o.level);
    }
}

/* ---- lifetime ----------------------------------------------------------------- */

int nytp_merge_new(nytp_merge **mp, nytp_writer *w, const nytp_merge_opts *opts, nytp_error *err)
{
    nytp_merge *m = calloc(1, sizeof *m);
    if (!m)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    m->w = w;
    if (opts)
        m->o = *opts;
    else
        m->o.level = NYTP_DEFAULT_COMPRESSION;
    if (m->o.level < 0 || m->o.level > 9)
        m->o.level = NYTP_DEFAULT_COMPRESSION;
    strtab_init(&m->strs);
    m->out_tps = 0;
    m->n_files = 1; /* fid 0 is no file */
    m->cap_files = 64;
    m->files = calloc(m->cap_files, sizeof *m->files);
    if (!m->files) {
        free(m);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    *mp = m;
    int st = nytp_write_header(w, NYTP_FORMAT_MAJOR, NYTP_FORMAT_MINOR);
    if (st < 0 && err)
        *err = *nytp_writer_error(w);
    return st;
}

static void free_kvs(mkv *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].value);
        free(v[i].from);
    }
    free(v);
}

void nytp_merge_free(nytp_merge *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->n_files; i++) {
        free(m->files[i].lines);
        free(m->files[i].at);
    }
    free(m->files);
    strtab_free(&m->strs);
    free(m->utf8);
    kmap_free(&m->file_by_name);
    kmap_free(&m->line_idx);
    kmap_free(&m->src_seen);
    kmap_free(&m->place_idx);
    kmap_free(&m->block_idx);
    kmap_free(&m->sub_idx);
    kmap_free(&m->sub_owner);
    kmap_free(&m->arc_idx);
    kmap_free(&m->cursor);
    free(m->places);
    free(m->blocks);
    free(m->subs);
    free(m->arcs);
    kidx_free(&m->fidmap);
    free_kvs(m->fixed, m->n_fixed);
    free_kvs(m->later, m->n_later);
    free_kvs(m->apps, m->n_apps);
    free_kvs(m->options, m->n_options);
    free(m);
}

uint32_t nytp_merge_inputs(const nytp_merge *m)
{
    return m->n_inputs;
}

/* ---- attributes and options ------------------------------------------------ */

static const char *const fixed_keys[] = {"perl_version", "nv_size", "ticks_per_sec",
                                         "clock_id", "xs_version", "PL_perldb"};

static enum kv_rule rule_of(const char *key)
{
    for (size_t i = 0; i < sizeof fixed_keys / sizeof fixed_keys[0]; i++)
        if (strcmp(key, fixed_keys[i]) == 0)
            return KV_FIXED;
    if (strcmp(key, "basetime") == 0)
        return KV_MIN;
    if (strcmp(key, "cumulative_overhead_ticks") == 0 || strcmp(key, "sample_count") == 0)
        return KV_SUM;
    if (strncmp(key, "sawampersand_", 13) == 0)
        return KV_FIRST;
    if (strcmp(key, "application") == 0)
        return KV_APPLICATION;
    return KV_LAST;
}

static mkv *find_kv(mkv *v, uint32_t n, const char *key)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(v[i].key, key) == 0)
            return &v[i];
    return NULL;
}

static mkv *add_kv(nytp_merge *m, mkv **v, uint32_t *n, uint32_t *cap, const char *key,
                   const char *value)
{
    if (!kmap_grow_array((void **)v, *n, cap, sizeof **v)) {
        m->oom = true;
        return NULL;
    }
    mkv *kv = &(*v)[*n];
    memset(kv, 0, sizeof *kv);
    kv->key = dup_str(m, key, strlen(key));
    kv->value = dup_str(m, value, strlen(value));
    kv->from = dup_str(m, m->name, strlen(m->name));
    if (!kv->key || !kv->value || !kv->from) {
        free(kv->key);
        free(kv->value);
        free(kv->from);
        return NULL;
    }
    (*n)++;
    return kv;
}

static void set_value(nytp_merge *m, mkv *kv, const char *value)
{
    char *v = dup_str(m, value, strlen(value));
    if (v) {
        free(kv->value);
        kv->value = v;
    }
}

/* One program of an application value, "x.pl" or "x.pl (3 runs)", counted. */
static void add_application(nytp_merge *m, char *item)
{
    uint32_t runs = 1;
    size_t len = strlen(item);
    static const char tail[] = " runs)";
    size_t tl = sizeof tail - 1;
    if (len > tl + 3 && strcmp(item + len - tl, tail) == 0) {
        size_t d = len - tl;
        while (d > 0 && item[d - 1] >= '0' && item[d - 1] <= '9')
            d--;
        if (d >= 2 && d < len - tl && item[d - 1] == '(' && item[d - 2] == ' ') {
            unsigned long n = strtoul(item + d, NULL, 10);
            if (n >= 2 && n <= UINT32_MAX) {
                runs = (uint32_t)n;
                item[d - 2] = 0;
            }
        }
    }
    mkv *app = find_kv(m->apps, m->n_apps, item);
    if (!app)
        app = add_kv(m, &m->apps, &m->n_apps, &m->cap_apps, item, item);
    if (app)
        app->runs = app->runs + runs < app->runs ? UINT32_MAX : app->runs + runs;
}

/* The programs of an input's application value: one program, or the list
 * an earlier merge wrote ("a.pl (2 runs), b.pl and c.pl"), so that merging
 * merges counts every run once, as merging all inputs at once does. */
static void add_applications(nytp_merge *m, char *val)
{
    char *and = NULL;
    for (char *p = strstr(val, " and "); p; p = strstr(p + 1, " and "))
        and = p;
    if (!and) {
        add_application(m, val);
        return;
    }
    *and = 0;
    char *item = val;
    for (char *comma; (comma = strstr(item, ", ")) != NULL; item = comma + 2) {
        *comma = 0;
        add_application(m, item);
    }
    add_application(m, item);
    add_application(m, and + 5);
}

/* Attributes and options are lines of text, which a NUL byte ends for the
 * writer (and for Devel::NYTProf's reader): one holding a NUL cannot be
 * written as it was read.  Written cut at the NUL, "nv_size<NUL>..."
 * became an nv_size of the merged file, which then could not be read
 * (found by fuzz_reader).  A damaged header line: left out, with a word. */
static bool kv_has_nul(nytp_merge *m, const nytp_chunk *c, const char *what)
{
    const nytp_str *k = &c->u.kv.key, *v = &c->u.kv.value;
    if (!(k->len && memchr(k->ptr, 0, k->len)) && !(v->len && memchr(v->ptr, 0, v->len)))
        return false;
    mwarn_here(m, "an %s whose name or value holds a NUL byte (a damaged header): left out", what);
    return true;
}

static void on_attribute(nytp_merge *m, const nytp_chunk *c)
{
    if (kv_has_nul(m, c, "attribute"))
        return;
    char *key = dup_str(m, c->u.kv.key.ptr, c->u.kv.key.len);
    char *val = dup_str(m, c->u.kv.value.ptr, c->u.kv.value.len);
    if (!key || !val)
        goto out;
    enum kv_rule rule = rule_of(key);
    if (strcmp(key, "ticks_per_sec") == 0) {
        double t = strtod(val, NULL);
        if (t > 0) {
            if (m->out_tps == 0)
                m->out_tps = t;
            m->scale = m->out_tps / t;
        }
    }
    if (rule == KV_FIXED) {
        mkv *kv = find_kv(m->fixed, m->n_fixed, key);
        if (!kv) {
            if (add_kv(m, &m->fixed, &m->n_fixed, &m->cap_fixed, key, val))
                nytp_write_attribute(m->w, key, val);
        } else if (strcmp(kv->value, val) != 0) {
            mwarn(m, "inputs disagree on %s: %s in %s, %s in %s%s", key, kv->value, kv->from, val,
                  m->name,
                  strcmp(key, "ticks_per_sec") == 0 ? " (its ticks are converted)" : "");
        }
        goto out;
    }
    mkv *kv = find_kv(m->later, m->n_later, key);
    if (!kv) {
        kv = add_kv(m, &m->later, &m->n_later, &m->cap_later, key, val);
        if (kv)
            kv->sum = strtod(val, NULL);
    } else if (rule == KV_MIN) {
        if (strtod(val, NULL) < strtod(kv->value, NULL))
            set_value(m, kv, val);
    } else if (rule == KV_SUM) {
        kv->sum += strtod(val, NULL);
    } else if (rule == KV_LAST || rule == KV_APPLICATION) {
        set_value(m, kv, val);
    }
    if (rule == KV_APPLICATION)
        add_applications(m, val);
out:
    free(key);
    free(val);
}

static void on_option(nytp_merge *m, const nytp_chunk *c)
{
    if (kv_has_nul(m, c, "option"))
        return;
    char *key = dup_str(m, c->u.kv.key.ptr, c->u.kv.key.len);
    char *val = dup_str(m, c->u.kv.value.ptr, c->u.kv.value.len);
    if (key && val) {
        mkv *kv = find_kv(m->options, m->n_options, key);
        if (!kv) {
            if (add_kv(m, &m->options, &m->n_options, &m->cap_options, key, val))
                nytp_write_option(m->w, key, val);
        }
        /* Options differ for good reasons (a forked child has another
         * forkdepth): the first value is kept without a word. */
    }
    free(key);
    free(val);
}

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const mkv *)a)->key, ((const mkv *)b)->key);
}

/* The programs merged, as "a.pl (2 runs), b.pl and c.pl". */
static char *application(nytp_merge *m)
{
    qsort(m->apps, m->n_apps, sizeof *m->apps, cmp_kv);
    size_t len = 1;
    for (uint32_t i = 0; i < m->n_apps; i++)
        len += strlen(m->apps[i].key) + 32;
    char *s = malloc(len), *o = s;
    if (!s) {
        m->oom = true;
        return NULL;
    }
    *o = 0;
    for (uint32_t i = 0; i < m->n_apps; i++) {
        const char *sep = i == 0 ? "" : i + 1 == m->n_apps ? " and " : ", ";
        o += sprintf(o, "%s%s", sep, m->apps[i].key);
        if (m->apps[i].runs > 1)
            o += sprintf(o, " (%u runs)", m->apps[i].runs);
    }
    return s;
}

static void write_later_attributes(nytp_merge *m)
{
    if (m->n_later)
        qsort(m->later, m->n_later, sizeof *m->later, cmp_kv);
    for (uint32_t i = 0; i < m->n_later; i++) {
        mkv *kv = &m->later[i];
        enum kv_rule rule = rule_of(kv->key);
        if (rule == KV_SUM) {
            char num[64];
            snprintf(num, sizeof num, "%.15g", kv->sum);
            nytp_write_attribute(m->w, kv->key, num);
        } else if (rule == KV_APPLICATION && m->n_apps) {
            char *app = application(m);
            if (app)
                nytp_write_attribute(m->w, kv->key, app);
            free(app);
        } else {
            nytp_write_attribute(m->w, kv->key, kv->value);
        }
    }
}

/* ---- files -------------------------------------------------------------------- */

static uint32_t map_fid(const nytp_merge *m, uint32_t fid)
{
    if (fid == 0)
        return 0;
    return kidx_get(&m->fidmap, fid);
}

/* The same for statements and source lines: a file the input declared
 * with id 0 (as Devel::NYTProf's loader and every other command accept)
 * has an output file of its own; otherwise 0 is no file. */
static uint32_t map_file_fid(const nytp_merge *m, uint32_t fid)
{
    if (fid == 0) {
        uint32_t out = kidx_get(&m->fidmap, 0);
        return out != NONE ? out : 0;
    }
    return map_fid(m, fid);
}

static bool set_fidmap(nytp_merge *m, uint32_t fid, uint32_t out)
{
    if (!kidx_set(&m->fidmap, fid, out)) {
        m->oom = true;
        return false;
    }
    return true;
}

/* A new output file, written as NEW_FID. */
static uint32_t new_file(nytp_merge *m, const nytp_chunk *c, uint32_t name, uint32_t parent,
                         uint32_t line)
{
    if (!kmap_grow_array((void **)&m->files, m->n_files, &m->cap_files, sizeof *m->files)) {
        m->oom = true;
        return NONE;
    }
    uint32_t fid = m->n_files++;
    mfile *f = &m->files[fid];
    memset(f, 0, sizeof *f);
    f->name = name;
    f->next_same = NONE;
    binary(m);
    nytp_write_new_fid(m->w, fid, parent, line, c->u.new_fid.flags, c->u.new_fid.size,
                       c->u.new_fid.mtime, str_of(m, name));
    return fid;
}

static void on_new_fid(nytp_merge *m, const nytp_chunk *c)
{
    uint32_t in = c->u.new_fid.fid;
    uint32_t name = intern(m, c->u.new_fid.name);
    if (name == NONE)
        return;
    uint32_t parent = 0, line = c->u.new_fid.eval_line, fid;
    if (c->u.new_fid.eval_fid) {
        parent = map_fid(m, c->u.new_fid.eval_fid);
        if (parent == NONE) {
            mwarn_here(m, "string eval %.*s (file id %u) names an unknown parent file id %u; treated as a file",
                  (int)c->u.new_fid.name.len, c->u.new_fid.name.ptr, in,
                  c->u.new_fid.eval_fid);
            parent = 0;
        }
    }
    if (!parent) {
        fid = kmap_get(&m->file_by_name, name, 0);
        if (fid == NONE) {
            fid = new_file(m, c, name, 0, 0);
            if (fid == NONE || !kmap_put(&m->file_by_name, name, 0, fid)) {
                m->oom = true;
                return;
            }
        }
    } else {
        /* the k-th eval at this place in this input is the k-th of the output */
        uint64_t key = (uint64_t)parent << 32 | line;
        uint32_t pi = kmap_get(&m->place_idx, key, 0);
        uint32_t cur = kmap_get(&m->cursor, key, 0);
        fid = cur != NONE ? m->files[cur].next_same : pi != NONE ? m->places[pi].first : NONE;
        if (fid == NONE) {
            fid = new_file(m, c, name, parent, line);
            if (fid == NONE)
                return;
            if (pi == NONE) {
                mplace pl = {fid, fid};
                if (!kmap_grow_array((void **)&m->places, m->n_places, &m->cap_places, sizeof *m->places) ||
                    !kmap_put(&m->place_idx, key, 0, m->n_places)) {
                    m->oom = true;
                    return;
                }
                m->places[m->n_places++] = pl;
            } else {
                m->files[m->places[pi].last].next_same = fid;
                m->places[pi].last = fid;
            }
        }
        if (!kmap_put(&m->cursor, key, 0, fid)) {
            m->oom = true;
            return;
        }
    }
    set_fidmap(m, in, fid);
}

/* Remember entry i of line in f's dense table, within the budget (see
 * kmap_dense_put). */
static void dense_put(nytp_merge *m, mfile *f, uint32_t line, uint32_t i)
{
    (void)kmap_dense_put(&f->at, &f->cap_at, &m->dense_slots, m->n_line_entries, line, i);
}

/* The entry of line in file fid, appended if new (NULL: out of memory). */
static mline *line_entry(nytp_merge *m, uint32_t fid, uint32_t line)
{
    mfile *f = &m->files[fid];
    if (line < f->cap_at && f->at[line] != NONE)
        return &f->lines[f->at[line]];
    uint32_t i = kmap_get(&m->line_idx, fid, line);
    if (i == NONE) {
        if (!kmap_grow_array((void **)&f->lines, f->n_lines, &f->cap_lines, sizeof *f->lines) ||
            !kmap_put(&m->line_idx, fid, line, f->n_lines)) {
            m->oom = true;
            return NULL;
        }
        i = f->n_lines++;
        memset(&f->lines[i], 0, sizeof f->lines[i]);
        f->lines[i].line = line;
        m->n_line_entries++;
    }
    dense_put(m, f, line, i);
    return &f->lines[i];
}

/* ---- events ------------------------------------------------------------------- */

static uint32_t stmt_fid(nytp_merge *m, uint32_t in)
{
    uint32_t fid = map_file_fid(m, in);
    if ((fid == NONE || fid == 0) && !m->warned_undeclared) {
        m->warned_undeclared = true;
        mwarn_here(m, "statements in file id %u, which was never declared, are left out", in);
    }
    return fid == 0 ? NONE : fid;
}

static void on_time(nytp_merge *m, const nytp_chunk *c)
{
    uint64_t discounts = m->discount;
    m->discount = 0;
    uint32_t fid = stmt_fid(m, c->u.time.fid);
    if (fid == NONE)
        return;
    double ticks = c->u.time.ticks;
    if (m->scale != 1.0)
        ticks *= m->scale; /* rounded once per line, when written */
    uint32_t line = c->u.time.line;
    stmts *s;
    if (c->tag == NYTP_TAG_TIME_LINE) {
        mline *l = line_entry(m, fid, line);
        if (!l)
            return;
        s = &l->s;
    } else {
        uint64_t a = (uint64_t)fid << 32 | line;
        uint64_t b = (uint64_t)c->u.time.block_line << 32 | c->u.time.sub_line;
        uint32_t id = kmap_get(&m->block_idx, a, b);
        if (id == NONE) {
            mblock bl = {fid, line, c->u.time.block_line, c->u.time.sub_line, {0, 0, 0, 0, 0}};
            if (!kmap_grow_array((void **)&m->blocks, m->n_blocks, &m->cap_blocks, sizeof *m->blocks) ||
                !kmap_put(&m->block_idx, a, b, m->n_blocks)) {
                m->oom = true;
                return;
            }
            id = m->n_blocks;
            m->blocks[m->n_blocks++] = bl;
        }
        s = &m->blocks[id].s;
    }
    bool first = !s->count && !s->disc;
    s->ticks += ticks;
    if (!discounts) {
        s->count++;
    } else {
        s->disc++;
        if (first)
            s->deficit += discounts - 1;
        else
            s->extra += discounts - 1;
    }
}

static void on_src_line(nytp_merge *m, const nytp_chunk *c)
{
    uint32_t fid = map_file_fid(m, c->u.src_line.fid);
    if (fid == NONE || fid == 0)
        return;
    uint32_t line = c->u.src_line.line;
    if (kmap_get(&m->src_seen, fid, line) != NONE)
        return; /* kept once */
    if (!kmap_put(&m->src_seen, fid, line, 0)) {
        m->oom = true;
        return;
    }
    binary(m);
    nytp_write_src_line(m->w, fid, line, c->u.src_line.text);
}

static void on_sub_info(nytp_merge *m, const nytp_chunk *c)
{
    uint32_t fid = map_fid(m, c->u.sub_info.fid);
    uint32_t name = intern(m, c->u.sub_info.name);
    if (fid == NONE || name == NONE)
        return;
    /* Where a sub is, is what the first input that defines it says: a
     * later input that puts it elsewhere (Devel::NYTProf files
     * main::RUNTIME under whatever file is compiling when it is first
     * seen) would give one sub two homes. */
    uint32_t owner = kmap_get(&m->sub_owner, name, 0);
    if (owner == NONE && !kmap_put(&m->sub_owner, name, 0, m->n_inputs)) {
        m->oom = true;
        return;
    }
    if (owner != NONE && owner != m->n_inputs)
        return;
    if (kmap_get(&m->sub_idx, name, fid) != NONE)
        return; /* the first lines seen are kept */
    msub s = {name, fid, c->u.sub_info.first_line, c->u.sub_info.last_line};
    if (!kmap_grow_array((void **)&m->subs, m->n_subs, &m->cap_subs, sizeof *m->subs) ||
        !kmap_put(&m->sub_idx, name, fid, m->n_subs)) {
        m->oom = true;
        return;
    }
    m->subs[m->n_subs++] = s;
}

static void on_sub_callers(nytp_merge *m, const nytp_chunk *c)
{
    const __typeof__(c->u.sub_callers) *a = &c->u.sub_callers;
    uint32_t fid = map_fid(m, a->fid);
    if (fid == NONE) {
        mwarn_here(m, "calls of %.*s from file id %u, which was never declared, are left out",
              (int)a->called.len, a->called.ptr, a->fid);
        return;
    }
    uint32_t called = intern(m, a->called), caller = intern(m, a->caller);
    if (called == NONE || caller == NONE)
        return;
    uint64_t ka = (uint64_t)called << 32 | caller, kb = (uint64_t)fid << 32 | a->line;
    uint32_t id = kmap_get(&m->arc_idx, ka, kb);
    if (id == NONE) {
        marc r = {called, caller, fid, a->line, a->rec_depth, a->count, a->incl, a->excl, a->reci};
        if (!kmap_grow_array((void **)&m->arcs, m->n_arcs, &m->cap_arcs, sizeof *m->arcs) ||
            !kmap_put(&m->arc_idx, ka, kb, m->n_arcs)) {
            m->oom = true;
            return;
        }
        m->arcs[m->n_arcs++] = r;
        return;
    }
    marc *r = &m->arcs[id];
    r->count += a->count;
    r->incl += a->incl;
    r->excl += a->excl;
    r->reci += a->reci;
    if (a->rec_depth > r->rec_depth)
        r->rec_depth = a->rec_depth;
}

static void apply(nytp_merge *m, const nytp_chunk *c)
{
    switch (c->tag) {
    case NYTP_TAG_TIME_LINE:
    case NYTP_TAG_TIME_BLOCK: on_time(m, c); break;
    case NYTP_TAG_DISCOUNT: m->discount++; break;
    case NYTP_TAG_SUB_RETURN:
        binary(m);
        if (m->scale != 1.0)
            nytp_write_sub_return(m->w, c->u.sub_return.depth, c->u.sub_return.incl * m->scale,
                                  c->u.sub_return.excl * m->scale, c->u.sub_return.name);
        else
            nytp_write_chunk(m->w, c);
        break;
    case NYTP_TAG_SUB_ENTRY: {
        uint32_t fid = map_fid(m, c->u.sub_entry.fid);
        binary(m);
        nytp_write_sub_entry(m->w, fid == NONE ? 0 : fid, c->u.sub_entry.line);
        break;
    }
    case NYTP_TAG_NEW_FID: on_new_fid(m, c); break;
    case NYTP_TAG_SRC_LINE: on_src_line(m, c); break;
    case NYTP_TAG_SUB_INFO: on_sub_info(m, c); break;
    case NYTP_TAG_SUB_CALLERS: on_sub_callers(m, c); break;
    case NYTP_TAG_PID_START:
    case NYTP_TAG_PID_END:
        binary(m);
        nytp_write_chunk(m->w, c);
        break;
    case NYTP_TAG_ATTRIBUTE: on_attribute(m, c); break;
    case NYTP_TAG_OPTION: on_option(m, c); break;
    default: break; /* VERSION, COMMENT, START_DEFLATE: the output has its own */
    }
}

/* Reader warnings, with the input's name in front. */
static void reader_warning(void *ctx, const nytp_error *w)
{
    nytp_merge *m = ctx;
    if (!m->o.warn)
        return;
    char where[200], line[NYTP_ERROR_MSG_MAX + 512];
    nytp_error fw = *w;
    nytp_error_where(w, where, sizeof where);
    snprintf(line, sizeof line, "%s: at %s: %s", m->name, where, w->msg);
    size_t n = strlen(line);
    if (n >= sizeof fw.msg)
        n = sizeof fw.msg - 1;
    memcpy(fw.msg, line, n);
    fw.msg[n] = 0;
    m->o.warn(m->o.warn_ctx, &fw);
}

static int writer_status(nytp_merge *m, nytp_error *err)
{
    const nytp_error *we = nytp_writer_error(m->w);
    if (we && we->status) {
        if (err)
            *err = *we;
        return we->status;
    }
    return NYTP_OK;
}

int nytp_merge_add_reader(nytp_merge *m, nytp_reader *r, const char *name, nytp_error *err)
{
    m->name = name;
    m->discount = 0;
    m->warned_undeclared = false;
    m->scale = 1.0;
    kidx_clear(&m->fidmap);
    kmap_free(&m->cursor);
    nytp_reader_set_warn(r, reader_warning, m);
    m->r = r;
    nytp_chunk c;
    int st;
    while ((st = nytp_reader_next(r, &c, err)) == NYTP_OK) {
        apply(m, &c);
        if (m->oom) {
            st = nytp_error_set(err, NYTP_E_NOMEM, "out of memory while merging");
            break;
        }
        /* statements are only summed here: nothing written, nothing to check */
        if (c.tag == NYTP_TAG_TIME_LINE || c.tag == NYTP_TAG_DISCOUNT)
            continue;
        int ws = writer_status(m, err);
        if (ws < 0) {
            st = ws;
            break;
        }
    }
    m->r = NULL;
    nytp_reader_close(r);
    m->n_inputs++;
    m->name = NULL;
    if (st == NYTP_END)
        return NYTP_OK;
    return st;
}

int nytp_merge_add(nytp_merge *m, const char *path, nytp_error *err)
{
    nytp_reader *r;
    int st = nytp_reader_open(&r, path, err);
    if (st < 0)
        return st;
    return nytp_merge_add_reader(m, r, path, err);
}

/* ---- the summaries ------------------------------------------------------------- */

/* Write `times` copies of chunk c, each after a DISCOUNT if discounted.
 * A hot line repeats the same bytes millions of times: the codec encodes
 * them once and they are copied in blocks. */
static void repeat_chunk(nytp_merge *m, const nytp_chunk *c, bool discounted, uint64_t times)
{
    uint8_t one[512], block[8192];
    size_t n = 0;
    nytp_chunk d = {.tag = NYTP_TAG_DISCOUNT};
    if (nytp_chunk_max_size(c) + nytp_chunk_max_size(&d) > sizeof one)
        return;
    if (discounted)
        n += nytp_encode_chunk(one, &d);
    n += nytp_encode_chunk(one + n, c);
    uint64_t per = sizeof block / n;
    for (uint64_t i = 0; i < per && i < times; i++)
        memcpy(block + i * n, one, n);
    nytp_out *out = nytp_writer_out(m->w);
    while (times && !nytp_writer_error(m->w)->status) {
        uint64_t k = times < per ? times : per;
        nytp_out_write(out, block, (size_t)(k * n));
        times -= k;
    }
}

/* One statement of chunk c after `discounts` DISCOUNTs, with as many of
 * the ticks left (a whole number) as an i32 holds. */
static void write_one(nytp_merge *m, nytp_chunk *c, uint64_t discounts, double *left)
{
    for (uint64_t i = 0; i < discounts && !nytp_writer_error(m->w)->status; i++)
        nytp_write_discount(m->w);
    int32_t t = *left > INT32_MAX ? INT32_MAX : *left < INT32_MIN ? INT32_MIN : (int32_t)*left;
    *left -= t;
    c->u.time.ticks = t;
    nytp_write_chunk(m->w, c);
}

/* A line's statements as chunks: one per statement (a DISCOUNT before
 * each discounted one), the ticks in the first (as many as an i32 holds,
 * the rest in the next ones), zero in the others.  The DISCOUNTs beyond
 * one come back where they change the count as in the inputs: the
 * deficit before the line's first statement, the extra ones before a
 * later discounted statement.  Ticks that the line's statements cannot
 * hold (converted to finer ticks, or summed past what an i32 holds per
 * statement) go into more statements, each after one DISCOUNT, which
 * adds nothing to the line's count: no tick is dropped. */
static void write_stmts(nytp_merge *m, const stmts *s, bool block, uint32_t fid, uint32_t line,
                        uint32_t block_line, uint32_t sub_line)
{
    double left = nearbyint(s->ticks);
    /* Beyond 2^53 ticks (28 years at 10 MHz) a double no longer counts
     * single ticks, and the statements to hold them would number millions:
     * only from a ticks_per_sec that makes no sense. */
    const double most = 9007199254740992.0;
    if (!(fabs(left) <= most)) {
        if (!m->warned_huge) {
            m->warned_huge = true;
            mwarn(m, "line %u of file %u sums to %g ticks, more than a profile can hold; "
                  "kept %.0f", line, fid, s->ticks, isnan(left) ? 0 : left < 0 ? -most : most);
        }
        left = isnan(left) ? 0 : left < 0 ? -most : most;
    }
    uint64_t plain = s->count, disc = s->disc;
    nytp_chunk c = {.tag = block ? NYTP_TAG_TIME_BLOCK : NYTP_TAG_TIME_LINE};
    c.u.time.fid = fid;
    c.u.time.line = line;
    c.u.time.block_line = block_line;
    c.u.time.sub_line = sub_line;
    bool written = false;
    if (s->deficit && disc) {
        write_one(m, &c, 1 + s->deficit, &left);
        disc--;
        written = true;
    }
    if (s->extra && disc) {
        if (!written && plain) {
            write_one(m, &c, 0, &left);
            plain--;
        } else if (!written && disc > 1) {
            write_one(m, &c, 1, &left);
            disc--;
        }
        write_one(m, &c, 1 + s->extra, &left);
        disc--;
    }
    while ((plain || disc) && left != 0) {
        if (plain) {
            plain--;
            write_one(m, &c, 0, &left);
        } else {
            disc--;
            write_one(m, &c, 1, &left);
        }
    }
    /* a line always has a statement written by now, so these are not its
     * first: one DISCOUNT each keeps the count */
    while (left != 0 && (s->count || s->disc) && !nytp_writer_error(m->w)->status)
        write_one(m, &c, 1, &left);
    c.u.time.ticks = 0;
    if (plain)
        repeat_chunk(m, &c, false, plain);
    if (disc)
        repeat_chunk(m, &c, true, disc);
}

static int cmp_mline(const void *a, const void *b)
{
    const mline *x = a, *y = b;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* A file's lines in order, as written. */
static void sort_lines(mfile *f)
{
    for (uint32_t i = 1; i < f->n_lines; i++) {
        if (f->lines[i - 1].line > f->lines[i].line) {
            qsort(f->lines, f->n_lines, sizeof *f->lines, cmp_mline);
            return;
        }
    }
}

int nytp_merge_finish(nytp_merge *m, nytp_error *err)
{
    binary(m);
    for (uint32_t fid = 1; fid < m->n_files; fid++) {
        mfile *f = &m->files[fid];
        sort_lines(f);
        for (uint32_t i = 0; i < f->n_lines; i++)
            write_stmts(m, &f->lines[i].s, false, fid, f->lines[i].line, 0, 0);
        if (writer_status(m, err) < 0)
            return writer_status(m, err);
    }
    for (uint32_t i = 0; i < m->n_blocks; i++) {
        const mblock *b = &m->blocks[i];
        write_stmts(m, &b->s, true, b->fid, b->line, b->block, b->sub);
    }
    for (uint32_t i = 0; i < m->n_subs; i++) {
        const msub *s = &m->subs[i];
        nytp_write_sub_info(m->w, s->fid, s->first, s->last, str_of(m, s->name));
    }
    for (uint32_t i = 0; i < m->n_arcs; i++) {
        const marc *a = &m->arcs[i];
        uint64_t count = a->count;
        /* a count beyond a u32 is split: loaders sum the parts */
        while (count > UINT32_MAX) {
            nytp_write_sub_callers(m->w, a->fid, a->line, UINT32_MAX, 0, 0, 0, 0, str_of(m, a->called),
                                   str_of(m, a->caller));
            count -= UINT32_MAX;
        }
        nytp_write_sub_callers(m->w, a->fid, a->line, (uint32_t)count, a->incl, a->excl, a->reci,
                               a->rec_depth, str_of(m, a->called), str_of(m, a->caller));
    }
    write_later_attributes(m);
    if (m->oom)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory while merging");
    return writer_status(m, err);
}

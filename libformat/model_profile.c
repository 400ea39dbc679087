/* model_profile.c — the loaded profile: creating and freeing it, and the
 * lookups every report makes (strings, files, subs, lines, source, attributes). */
#include <stdlib.h>
#include <string.h>

#include "nytp/model.h"
#include "model_impl.h"

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

void model_free_src(nytp_src *s)
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
void model_sort_src(nytp_src *s)
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
void model_sort_lines(nytp_lines *l)
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
        model_free_src(&f->src);
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

bool nytp_file_is_empty(const nytp_file *f)
{
    return !f->line.n && !f->block.n && !f->sub.n && !f->src.n && !f->n_subs && !f->n_sites && !f->n_evals;
}

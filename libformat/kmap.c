/* kmap.c — the shared hash index and array growth (kmap.h). */
#include <stdlib.h>
#include <string.h>

#include "kmap.h"

uint64_t kmap_mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static uint32_t khash(uint64_t a, uint64_t b)
{
    return (uint32_t)kmap_mix64(a ^ kmap_mix64(b + 0x9e3779b97f4a7c15ULL));
}

uint32_t kmap_get(const kmap *m, uint64_t a, uint64_t b)
{
    if (!m->nslots)
        return KMAP_NONE;
    uint32_t mask = m->nslots - 1;
    for (uint32_t i = khash(a, b) & mask;; i = (i + 1) & mask) {
        if (!m->vals[i])
            return KMAP_NONE;
        if (m->keys[i][0] == a && m->keys[i][1] == b)
            return m->vals[i] - 1;
    }
}

static bool kmap_rehash(kmap *m)
{
    if (m->nslots >= (1u << 31))
        return false;
    uint32_t ns = m->nslots ? m->nslots * 2 : 64;
    uint64_t(*keys)[2] = calloc(ns, sizeof *keys);
    uint32_t *vals = calloc(ns, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    for (uint32_t i = 0; i < m->nslots; i++) {
        if (!m->vals[i])
            continue;
        uint32_t j = khash(m->keys[i][0], m->keys[i][1]) & (ns - 1);
        while (vals[j])
            j = (j + 1) & (ns - 1);
        keys[j][0] = m->keys[i][0];
        keys[j][1] = m->keys[i][1];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->nslots = ns;
    return true;
}

bool kmap_put(kmap *m, uint64_t a, uint64_t b, uint32_t val)
{
    if ((uint64_t)(m->n + 1) * 4 > (uint64_t)m->nslots * 3 && !kmap_rehash(m))
        return false;
    uint32_t mask = m->nslots - 1;
    for (uint32_t i = khash(a, b) & mask;; i = (i + 1) & mask) {
        if (!m->vals[i]) {
            m->keys[i][0] = a;
            m->keys[i][1] = b;
            m->vals[i] = val + 1;
            m->n++;
            return true;
        }
        if (m->keys[i][0] == a && m->keys[i][1] == b) {
            m->vals[i] = val + 1;
            return true;
        }
    }
}

void kmap_free(kmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

uint32_t kmap_grown_cap(uint32_t cap, uint64_t need)
{
    if (need > KMAP_MAX_CAP)
        return 0;
    uint64_t nc = cap ? cap : 8; /* small: a model holds many short arrays */
    while (nc < need)
        nc *= 2;
    return nc > KMAP_MAX_CAP ? KMAP_MAX_CAP : (uint32_t)nc;
}

bool kmap_grow_to(void **v, uint32_t *cap, uint64_t need, size_t sz)
{
    if (need <= *cap)
        return true;
    uint32_t nc = kmap_grown_cap(*cap, need);
    void *nv = nc && (size_t)nc <= SIZE_MAX / sz ? realloc(*v, (size_t)nc * sz) : NULL;
    if (!nv)
        return false;
    *v = nv;
    *cap = nc;
    return true;
}

bool kmap_grow_array(void **v, uint32_t n, uint32_t *cap, size_t sz)
{
    if (n >= UINT32_MAX / 2)
        return false;
    return kmap_grow_to(v, cap, (uint64_t)n + 1, sz);
}

/* The smallest doubling of *cap (from start) above idx, or 0 past 2^32. */
static uint64_t doubled(uint32_t cap, uint32_t start, uint32_t idx)
{
    uint64_t nc = cap ? cap : start;
    while (nc <= idx)
        nc *= 2;
    return nc > UINT32_MAX ? 0 : nc;
}

/* Grow the table *v of *cap entries to nc, the new ones KMAP_NONE. */
static bool grow_none(uint32_t **v, uint32_t *cap, uint64_t nc)
{
    uint32_t *nv = nc ? realloc(*v, (size_t)nc * sizeof *nv) : NULL;
    if (!nv)
        return false;
    for (uint64_t i = *cap; i < nc; i++)
        nv[i] = KMAP_NONE;
    *v = nv;
    *cap = (uint32_t)nc;
    return true;
}

bool kmap_index_set(uint32_t **v, uint32_t *n, uint32_t idx, uint32_t val)
{
    if (idx >= *n && !grow_none(v, n, doubled(*n, 16, idx)))
        return false;
    (*v)[idx] = val;
    return true;
}

bool kmap_dense_put(uint32_t **at, uint32_t *cap, uint64_t *slots, uint64_t n_entries, uint32_t line,
                    uint32_t i)
{
    if (line >= *cap) {
        uint64_t nc = doubled(*cap, 64, line), was = *cap;
        if (!nc || *slots + (nc - was) > KMAP_DENSE_FREE + KMAP_DENSE_PER * n_entries ||
            !grow_none(at, cap, nc))
            return false;
        *slots += nc - was;
    }
    (*at)[line] = i;
    return true;
}

bool kidx_set(kidx *x, uint32_t i, uint32_t val)
{
    /* a number far beyond the table would make it as large as the number */
    if (i >= (1u << 16) && i >= 2 * (uint64_t)x->n + 1024)
        return kmap_put(&x->far, i, 0, val);
    return kmap_index_set(&x->v, &x->n, i, val);
}

void kidx_clear(kidx *x)
{
    for (uint32_t i = 0; i < x->n; i++)
        x->v[i] = KMAP_NONE;
    kmap_free(&x->far);
}

void kidx_free(kidx *x)
{
    free(x->v);
    kmap_free(&x->far);
    memset(x, 0, sizeof *x);
}

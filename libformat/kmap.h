/* kmap.h — small containers the library's modules share (not public):
 * a hash index from a pair of 64-bit keys to a 32-bit value, and array
 * growth.  One implementation, used by the model, merging and the call
 * tree. */
#ifndef NYTP_KMAP_H
#define NYTP_KMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KMAP_NONE UINT32_MAX

/* Open addressing, linear probing, power-of-two slots. */
typedef struct kmap {
    uint64_t (*keys)[2];
    uint32_t *vals;         /* value + 1; 0 = empty */
    uint32_t n, nslots;
} kmap;

/* A 64-bit finaliser (MurmurHash3's): a well-mixed hash of k. */
uint64_t kmap_mix64(uint64_t k);

/* The value of (a, b), or KMAP_NONE. */
uint32_t kmap_get(const kmap *m, uint64_t a, uint64_t b);
/* Set (a, b) to val (val < KMAP_NONE); false when out of memory. */
bool kmap_put(kmap *m, uint64_t a, uint64_t b, uint32_t val);
void kmap_free(kmap *m);

/* Array growth, the one way the library does it.  Capacities are 32-bit
 * counts, and a doubling past 2^31 used to wrap to 0 (then the array was
 * written beyond its end, or the loop that doubled never ended): every
 * growth goes through kmap_grown_cap, which refuses instead. */
#define KMAP_MAX_CAP (UINT32_MAX - 2)  /* UINT32_MAX and the one below are sentinels */

/* The doubling of cap (from 8) that holds need elements, at most
 * KMAP_MAX_CAP; 0 when need is beyond that. */
uint32_t kmap_grown_cap(uint32_t cap, uint64_t need);

/* Make room in *v (*cap elements of size sz allocated) for need elements;
 * false when out of memory or beyond KMAP_MAX_CAP, *v and *cap unchanged. */
bool kmap_grow_to(void **v, uint32_t *cap, uint64_t need, size_t sz);

/* Make room in *v (n used, *cap allocated, elements of size sz) for one
 * more, doubling; false when out of memory or past 2^31 elements. */
bool kmap_grow_array(void **v, uint32_t n, uint32_t *cap, size_t sz);

/* Set (*v)[idx] = val in an index table of *n entries, growing it by
 * doubling with new entries KMAP_NONE; false when out of memory.  The
 * caller bounds idx. */
bool kmap_index_set(uint32_t **v, uint32_t *n, uint32_t idx, uint32_t val);

/* Dense line tables (the model's and merge's): (*at)[line] is a line's
 * entry, KMAP_NONE where there is none.  Loops run over a few nearby
 * lines, which share cache lines there, where a hashed index spreads
 * them.  A table grows by doubling (from 64) to the largest line set,
 * while *slots, the slots of all the caller's tables, stays within
 * KMAP_DENSE_FREE plus KMAP_DENSE_PER for each of its n_entries line
 * entries: a few words per line present, never a slot per line number.
 * Set (*at)[line] = i and return true, or return false (beyond the
 * budget or out of memory: the caller's hashed index, which has every
 * line, answers for that line). */
#define KMAP_DENSE_FREE (1u << 20)
#define KMAP_DENSE_PER 16u
bool kmap_dense_put(uint32_t **at, uint32_t *cap, uint64_t *slots, uint64_t n_entries, uint32_t line,
                    uint32_t i);

/* A map from 32-bit numbers (file ids) to values: an index table for the
 * numbers near the others, a kmap for the few far beyond them, so memory
 * follows the numbers present, never the largest.  Zero-initialised is
 * empty. */
typedef struct kidx {
    uint32_t *v;            /* KMAP_NONE: unset */
    uint32_t n;
    kmap far;
} kidx;

/* The value of number i, or KMAP_NONE. */
static inline uint32_t kidx_get(const kidx *x, uint32_t i)
{
    if (i < x->n && x->v[i] != KMAP_NONE)
        return x->v[i];
    return x->far.n ? kmap_get(&x->far, i, 0) : KMAP_NONE;
}

/* Set number i to val; false when out of memory. */
bool kidx_set(kidx *x, uint32_t i, uint32_t val);
/* Unset every number, keeping the table's memory. */
void kidx_clear(kidx *x);
void kidx_free(kidx *x);

#endif

/* model_impl.h — what the parts of the model (model*.c) share: the
 * profile's private indexes and the helpers more than one part calls.
 * nytp/model.h is the public contract. */
#ifndef NYTP_MODEL_IMPL_H
#define NYTP_MODEL_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "nytp/model.h"
#include "kmap.h"
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

/* The line and source tables (model_profile.c): sorted by line once
 * loaded or merged into; a file's source freed with the file. */
void model_sort_lines(nytp_lines *l);
void model_sort_src(nytp_src *s);
void model_free_src(nytp_src *s);

#endif

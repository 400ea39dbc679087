/* strmap.h — the one hash table of the commands: distinct byte strings
 * (names, or keys packed as bytes: two ids, an id and a line), numbered
 * 0, 1, ... in the order first added, with a 32-bit value each for the
 * caller.  The strings are kept, NUL-terminated, in one growing block;
 * ids stay valid as it grows.  Memory grows with the strings added, never
 * with their values.
 *
 *     strmap m = {0};
 *     bool added;
 *     uint32_t id = strmap_add(&m, "main::f", 7, false, &added);
 *     ... strmap_str(&m, id), m.v[id].len, m.n
 *     strmap_release(&m);
 */
#ifndef NYTP_STRMAP_H
#define NYTP_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct strmap {
    char *bytes;            /* every string, each followed by a NUL */
    size_t n_bytes, cap_bytes;
    struct strmap_entry {
        size_t at;          /* of its bytes */
        uint32_t len;
        bool utf8;
        uint32_t value;     /* the caller's (NYTP_NONE when added) */
    } *v;
    uint32_t n, cap;
    uint32_t *slots;        /* hash slots: id + 1, 0 empty */
    uint32_t n_slots;
} strmap;

/* The one hash function of the commands' tables: 64 bits of s[0..len),
 * eight bytes at a time. */
uint64_t strmap_hash(const void *s, size_t len);

/* A 32-bit hash of s for choosing a colour (FNV-1a): fixed for good,
 * since the colours of every report made depend on it; not for tables. */
uint32_t strmap_colour_hash(const char *s, size_t len);

/* The id of s (added if new, with value NYTP_NONE); *added (may be NULL)
 * says whether it was.  NYTP_NONE when out of memory or full. */
uint32_t strmap_add(strmap *m, const char *s, uint32_t len, bool utf8, bool *added);
/* The id, or NYTP_NONE. */
uint32_t strmap_find(const strmap *m, const char *s, uint32_t len);
static inline const char *strmap_str(const strmap *m, uint32_t id)
{
    return m->bytes + m->v[id].at;
}
void strmap_release(strmap *m);

#endif

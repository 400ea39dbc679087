/* strmap.c — the one hash table of the commands (strmap.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "strmap.h"

uint64_t strmap_hash(const void *p, size_t len)
{
    const unsigned char *s = p;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ len;
    for (; len >= 8; s += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    if (len)
        memcpy(&w, s, len);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
}

uint32_t strmap_colour_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static bool same(const strmap *n, uint32_t id, const char *s, uint32_t len)
{
    return n->v[id].len == len && memcmp(n->bytes + n->v[id].at, s, len) == 0;
}

uint32_t strmap_find(const strmap *n, const char *s, uint32_t len)
{
    if (!n->n_slots)
        return NYTP_NONE;
    uint32_t mask = n->n_slots - 1;
    for (uint32_t i = (uint32_t)strmap_hash(s, len) & mask;; i = (i + 1) & mask) {
        uint32_t e = n->slots[i];
        if (!e)
            return NYTP_NONE;
        if (same(n, e - 1, s, len))
            return e - 1;
    }
}

static bool grow_slots(strmap *n)
{
    if (n->n_slots >= (1u << 31))
        return false;
    uint32_t ns = n->n_slots ? n->n_slots * 2 : 256;
    uint32_t *slots = calloc(ns, sizeof *slots);
    if (!slots)
        return false;
    for (uint32_t id = 0; id < n->n; id++) {
        uint32_t i = (uint32_t)strmap_hash(n->bytes + n->v[id].at, n->v[id].len) & (ns - 1);
        while (slots[i])
            i = (i + 1) & (ns - 1);
        slots[i] = id + 1;
    }
    free(n->slots);
    n->slots = slots;
    n->n_slots = ns;
    return true;
}

uint32_t strmap_add(strmap *n, const char *s, uint32_t len, bool utf8, bool *added)
{
    if (added)
        *added = false;
    uint32_t id = strmap_find(n, s, len);
    if (id != NYTP_NONE)
        return id;
    if (n->n >= NYTP_NONE - 1)
        return NYTP_NONE;
    if ((uint64_t)(n->n + 1) * 2 > n->n_slots && !grow_slots(n))
        return NYTP_NONE;
    if (!cli_grow((void **)&n->v, (size_t)n->n + 1, &n->cap, sizeof *n->v))
        return NYTP_NONE;
    if (n->n_bytes + len + 1 > n->cap_bytes) {
        size_t cap = n->cap_bytes ? n->cap_bytes : 4096;
        while (cap < n->n_bytes + len + 1)
            cap *= 2;
        char *b = realloc(n->bytes, cap);
        if (!b)
            return NYTP_NONE;
        n->bytes = b;
        n->cap_bytes = cap;
    }
    memcpy(n->bytes + n->n_bytes, s, len);
    n->bytes[n->n_bytes + len] = 0;
    id = n->n++;
    n->v[id] = (struct strmap_entry){n->n_bytes, len, utf8, NYTP_NONE};
    n->n_bytes += len + 1;
    uint32_t mask = n->n_slots - 1, i = (uint32_t)strmap_hash(s, len) & mask;
    while (n->slots[i])
        i = (i + 1) & mask;
    n->slots[i] = id + 1;
    if (added)
        *added = true;
    return id;
}

void strmap_release(strmap *n)
{
    free(n->bytes);
    free(n->v);
    free(n->slots);
    memset(n, 0, sizeof *n);
}

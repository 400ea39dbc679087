/* strtab.c — interned strings with an open-addressing hash index. */
#include <stdlib.h>
#include <string.h>

#include "kmap.h"
#include "strtab.h"

/* Eight bytes at a time, each word mixed in by a multiply, the whole
 * finished so that the low bits (the slot) depend on every byte.  The
 * call tree interns the name of every SUB_RETURN (1.26 million in
 * perltidy.out, ~40 bytes each), where FNV-1a's multiply per byte was
 * most of the time. */
static uint32_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 29;
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, s + i, len - i);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 29;
    }
    h ^= h >> 32;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return (uint32_t)h;
}

void strtab_init(strtab *t)
{
    memset(t, 0, sizeof *t);
}

void strtab_free(strtab *t)
{
    for (uint32_t i = 0; i < t->count; i++)
        free(t->str[i]);
    free(t->str);
    free(t->len);
    free(t->hashes);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static uint32_t lookup(const strtab *t, const char *s, size_t len, uint32_t h, uint32_t *slot)
{
    if (!t->nslots)
        return STRTAB_NONE;
    uint32_t mask = t->nslots - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t v = t->slots[i];
        if (!v) {
            *slot = i;
            return STRTAB_NONE;
        }
        uint32_t id = v - 1;
        if (t->hashes[id] == h && t->len[id] == len && memcmp(t->str[id], s, len) == 0)
            return id;
    }
}

static bool rehash(strtab *t, uint32_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return false;
    for (uint32_t id = 0; id < t->count; id++) {
        uint32_t i = t->hashes[id] & (nslots - 1);
        while (slots[i])
            i = (i + 1) & (nslots - 1);
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return true;
}

uint32_t strtab_find(const strtab *t, const char *s, size_t len)
{
    uint32_t slot;
    return lookup(t, s, len, hash_bytes(s, len), &slot);
}

uint32_t strtab_intern(strtab *t, const char *s, size_t len)
{
    uint32_t h = hash_bytes(s, len), slot = 0;
    uint32_t id = lookup(t, s, len, h, &slot);
    if (id != STRTAB_NONE)
        return id;
    if (len > UINT32_MAX || t->count == STRTAB_NONE - 1)
        return STRTAB_NONE;
    if ((uint64_t)(t->count + 1) * 4 > (uint64_t)t->nslots * 3) {
        if (t->nslots >= (1u << 31) || !rehash(t, t->nslots ? t->nslots * 2 : 64))
            return STRTAB_NONE;
        lookup(t, s, len, h, &slot);
    }
    if (t->count == t->cap) {
        uint32_t ncap = kmap_grown_cap(t->cap, (uint64_t)t->count + 1);
        char **ns = ncap ? realloc(t->str, ncap * sizeof *ns) : NULL;
        if (!ns)
            return STRTAB_NONE;
        t->str = ns;
        uint32_t *nl = realloc(t->len, ncap * sizeof *nl);
        if (!nl)
            return STRTAB_NONE;
        t->len = nl;
        uint32_t *nh = realloc(t->hashes, ncap * sizeof *nh);
        if (!nh)
            return STRTAB_NONE;
        t->hashes = nh;
        t->cap = ncap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return STRTAB_NONE;
    if (len)
        memcpy(copy, s, len);
    copy[len] = 0;
    id = t->count++;
    t->str[id] = copy;
    t->len[id] = (uint32_t)len;
    t->hashes[id] = h;
    t->slots[slot] = id + 1;
    return id;
}

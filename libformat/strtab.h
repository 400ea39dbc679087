/* strtab.h — interned byte strings: each distinct string gets a small
 * integer id, looked up in O(1).  Used by the model for file and sub
 * names.  Not a public header. */
#ifndef NYTP_STRTAB_H
#define NYTP_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct strtab {
    char **str;          /* id -> bytes (NUL-terminated copy) */
    uint32_t *len;       /* id -> length */
    uint32_t count, cap;
    uint32_t *slots;     /* open addressing: id + 1, 0 = empty */
    uint32_t *hashes;    /* id -> hash */
    uint32_t nslots;     /* power of two */
} strtab;

#define STRTAB_NONE UINT32_MAX

void strtab_init(strtab *t);
void strtab_free(strtab *t);
/* The id of s, adding it if new; STRTAB_NONE if out of memory. */
uint32_t strtab_intern(strtab *t, const char *s, size_t len);
/* The id of s, or STRTAB_NONE. */
uint32_t strtab_find(const strtab *t, const char *s, size_t len);

static inline const char *strtab_str(const strtab *t, uint32_t id) { return t->str[id]; }
static inline uint32_t strtab_len(const strtab *t, uint32_t id) { return t->len[id]; }

#endif

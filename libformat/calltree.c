/* calltree.c — the call tree of nytp/calltree.h.
 *
 * Nodes live in one array and refer to each other by index.  A node's
 * children form a singly linked list; finding the child of a node by name
 * goes through one hash table keyed by (parent, name) for the whole tree.
 * Returns come deepest first, so a call's sub is known only when it
 * returns, after its callees.  They are kept in a batch (BATCH of them,
 * a fixed amount of memory) and put in the tree latest first (settle):
 * then a return's caller, the first return after it one place nearer the
 * root, is already in the tree, and each return is one lookup under a
 * known node.  Callers that had not returned when the batch ended are
 * open frames (their sub not yet known): they sit on a stack, in no list
 * or table, holding what returned into them, until a later batch's
 * return closes one, which is then merged into that return's node.
 *
 * The stack is sparse: a return deeper than the stack opens frames that
 * hold nothing, and only the frames something returned into are kept
 * (with their depth), so a depth costs nothing by itself: memory follows
 * the returns, never the depth numbers.
 *
 * Each node keeps the first return into it (seq): an unsorted walk gives
 * a node's children in the order of the first return below each, the
 * order the program first called them in, whatever order they were put
 * in the tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kmap.h"
#include "nytp/calltree.h"
#include "strtab.h"

#define NONE UINT32_MAX
#define FREED (UINT32_MAX - 1) /* name of a node on the free list */
#define ROOT 0u
#define BATCH 8192u /* returns put in the tree at a time (settle) */

typedef struct node {
    uint32_t name;      /* name id; NONE: open frame or root; FREED */
    uint32_t parent;
    uint32_t first;     /* first child */
    uint32_t next;      /* next sibling; next free node when FREED */
    uint32_t n_children;
    uint32_t hint;      /* a child: the last one found (NONE: none) */
    uint64_t calls;
    double excl, incl;
    uint64_t seq;       /* the first return into it, in the order they came
                           (t->clock); UINT64_MAX: none (open frame, root) */
} node;

struct nytp_calltree {
    node *nodes;
    uint32_t n_nodes, cap_nodes;
    uint32_t free_list;
    uint64_t live;              /* named nodes */

    uint64_t *keys;             /* (parent, name) -> node: key, EMPTY = empty */
    uint32_t *vals;             /* the node of keys[i] */
    uint32_t n_slots;           /* power of two */
    unsigned slot_shift;        /* 64 - log2(n_slots) */
    uint32_t used_slots;

    strtab names;
    bool *name_utf8;            /* flag of the first string seen per id */
    uint32_t cap_utf8;
    char *norm;                 /* normalisation buffer */
    uint32_t *recent;           /* NAME_CACHE name ids by name_key; NONE: empty */
    size_t cap_norm;
    uint32_t unreturned;        /* name id, or NONE */

    struct open_frame {
        uint64_t pos;           /* depth on the stack; the root is 0 */
        uint32_t node;
    } *open;                    /* the open frames that hold something, by pos;
                                   open[0] is the root */
    uint32_t n_open, cap_open;
    uint64_t sp;                /* frames on the stack, empty ones included */
    uint32_t *work;             /* merge work list: pairs (src, dst) */
    uint32_t cap_work;

    struct pending {            /* a return not yet in the tree */
        uint32_t pos;           /* its place on the stack (sp <= 2^32) */
        uint32_t name;
        double incl, excl;
    } *batch;                   /* BATCH of them, in order (settle) */
    uint32_t n_batch;
    struct closer {             /* the return that closed an open frame */
        uint32_t at, open;      /* index in batch, in open */
    } *closers;                 /* in the order of the batch */
    uint32_t n_closers, cap_closers;
    struct open_frame *bs;      /* settle's stack: BATCH * 2 */
    struct open_frame *fresh;   /* settle's new open frames */
    uint32_t n_fresh, cap_fresh;
    uint64_t clock;             /* returns added and nodes made by path */
    uint64_t batch_clock;       /* clock of batch[0] */
    uint64_t closing;           /* place of the deepest frame open before the
                                   batch that none of its returns closed;
                                   0 (the root's): none */
    bool oom;                   /* settle failed: the tree is incomplete */

    uint64_t returns, n_unreturned;
    double excl_in;
    uint32_t max_depth;
    double ticks_per_sec;
    uint32_t last_name;         /* of the last return added; NONE: none yet */
    double sample_hz;           /* of the first sampled input; 0: none */
    uint64_t samples;           /* sample_count attributes, summed */
};

/* ---- growing arrays ------------------------------------------------------ */

/* Inline: the call tree asks for room on every return, and has it
 * nearly always. */
static inline bool grow(void **v, uint32_t *cap, uint64_t need, size_t elem)
{
    return need <= *cap || kmap_grow_to(v, cap, need, elem);
}

/* ---- the (parent, name) table --------------------------------------------- */

/* A slot holds its key, so that probing never reads the nodes: the key
 * (parent << 32 | name) of a node in the tree is never EMPTY, as no node
 * is numbered NONE. */
#define EMPTY UINT64_MAX

static inline uint64_t slot_key(uint32_t parent, uint32_t name)
{
    return (uint64_t)parent << 32 | name;
}

/* Fibonacci hashing: the high bits of the product depend on every bit of
 * the key. */
static inline uint32_t slot_home(const nytp_calltree *t, uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> t->slot_shift);
}

static inline uint32_t child_find(nytp_calltree *t, uint32_t parent, uint32_t name)
{
    /* the child looked for last under this parent, most often asked
     * again (a loop calling one sub); hint is only ever a node in the
     * table (child_remove clears it) */
    uint32_t h = t->nodes[parent].hint;
    if (h != NONE && t->nodes[h].name == name)
        return h;
    uint64_t key = slot_key(parent, name);
    uint32_t mask = t->n_slots - 1;
    for (uint32_t i = slot_home(t, key);; i = (i + 1) & mask) {
        uint64_t k = t->keys[i];
        if (k == key) {
            t->nodes[parent].hint = t->vals[i];
            return t->vals[i];
        }
        if (k == EMPTY)
            return NONE;
    }
}

static void slot_put(nytp_calltree *t, uint64_t key, uint32_t n)
{
    uint32_t mask = t->n_slots - 1;
    uint32_t i = slot_home(t, key);
    while (t->keys[i] != EMPTY)
        i = (i + 1) & mask;
    t->keys[i] = key;
    t->vals[i] = n;
}

static bool slots_grow(nytp_calltree *t);

static inline bool slots_reserve(nytp_calltree *t)
{
    return (uint64_t)(t->used_slots + 1) * 2 <= t->n_slots || slots_grow(t);
}

static bool slots_grow(nytp_calltree *t)
{
    uint64_t ns = t->n_slots ? (uint64_t)t->n_slots * 2 : 1024;
    if (ns > (1u << 31))
        return false;
    uint64_t *ok = t->keys;
    uint32_t *ov = t->vals, on = t->n_slots;
    uint64_t *nk = malloc(ns * sizeof *nk);
    uint32_t *nv = malloc(ns * sizeof *nv);
    if (!nk || !nv) {
        free(nk);
        free(nv);
        return false;
    }
    memset(nk, 0xff, ns * sizeof *nk);
    t->keys = nk;
    t->vals = nv;
    t->n_slots = (uint32_t)ns;
    t->slot_shift = 64 - (unsigned)__builtin_ctzll(ns);
    for (uint32_t i = 0; i < on; i++)
        if (ok[i] != EMPTY)
            slot_put(t, ok[i], ov[i]);
    free(ok);
    free(ov);
    return true;
}

/* Insert node n under its (parent, name); the caller reserved room. */
static void child_insert(nytp_calltree *t, uint32_t n)
{
    slot_put(t, slot_key(t->nodes[n].parent, t->nodes[n].name), n);
    t->used_slots++;
}

/* Remove node n's entry (linear probing with backward shift). */
static void child_remove(nytp_calltree *t, uint32_t n)
{
    uint32_t parent = t->nodes[n].parent;
    if (t->nodes[parent].hint == n)
        t->nodes[parent].hint = NONE;
    uint32_t mask = t->n_slots - 1;
    uint64_t key = slot_key(parent, t->nodes[n].name);
    uint32_t i = slot_home(t, key);
    while (t->keys[i] != key)
        i = (i + 1) & mask;
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        uint64_t m = t->keys[j];
        if (m == EMPTY)
            break;
        uint32_t home = slot_home(t, m);
        /* m may move to i if its home is not in the cyclic range (i, j] */
        bool in_range = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_range) {
            t->keys[i] = m;
            t->vals[i] = t->vals[j];
            i = j;
        }
    }
    t->keys[i] = EMPTY;
    t->used_slots--;
}

/* ---- nodes ---------------------------------------------------------------- */

static uint32_t node_new(nytp_calltree *t)
{
    uint32_t n;
    if (t->free_list != NONE) {
        n = t->free_list;
        t->free_list = t->nodes[n].next;
    } else {
        if (t->n_nodes >= UINT32_MAX - 4 ||
            !grow((void **)&t->nodes, &t->cap_nodes, t->n_nodes + 1, sizeof(node)))
            return NONE;
        n = t->n_nodes++;
    }
    t->nodes[n] = (node){NONE, NONE, NONE, NONE, 0, NONE, 0, 0, 0, UINT64_MAX};
    return n;
}

static void node_free(nytp_calltree *t, uint32_t n)
{
    if (t->nodes[n].name != NONE)
        t->live--;
    t->nodes[n].name = FREED;
    t->nodes[n].next = t->free_list;
    t->free_list = n;
}

/* Make the unnamed node n the child `name` of parent. */
static void link_child(nytp_calltree *t, uint32_t parent, uint32_t n, uint32_t name)
{
    node *c = &t->nodes[n];
    c->name = name;
    c->parent = parent;
    c->next = t->nodes[parent].first;
    t->nodes[parent].first = n;
    t->nodes[parent].n_children++;
    child_insert(t, n);
    t->live++;
}

/* Merge src (not in the table: an open frame just closed, or a node
 * already removed from it) into dst, which stays; src and every node of
 * its subtree that matched one of dst's are freed, the others move. */
static int merge(nytp_calltree *t, uint32_t src, uint32_t dst)
{
    uint32_t nw = 0;
    if (!grow((void **)&t->work, &t->cap_work, 2, sizeof(uint32_t)))
        return NYTP_E_NOMEM;
    t->work[nw++] = src;
    t->work[nw++] = dst;
    while (nw) {
        uint32_t d = t->work[--nw], s = t->work[--nw];
        t->nodes[d].calls += t->nodes[s].calls;
        t->nodes[d].excl += t->nodes[s].excl;
        t->nodes[d].incl += t->nodes[s].incl;
        if (t->nodes[s].seq < t->nodes[d].seq)
            t->nodes[d].seq = t->nodes[s].seq;
        for (uint32_t c = t->nodes[s].first; c != NONE;) {
            uint32_t next = t->nodes[c].next;
            uint32_t e = child_find(t, d, t->nodes[c].name);
            child_remove(t, c);
            if (e == NONE) {
                node *cn = &t->nodes[c];
                cn->parent = d;
                cn->next = t->nodes[d].first;
                t->nodes[d].first = c;
                t->nodes[d].n_children++;
                child_insert(t, c);
            } else {
                if (!grow((void **)&t->work, &t->cap_work, nw + 2, sizeof(uint32_t)))
                    return NYTP_E_NOMEM; /* the tree stays consistent, c is lost */
                t->work[nw++] = c;
                t->work[nw++] = e;
            }
            c = next;
        }
        node_free(t, s);
    }
    return NYTP_OK;
}

/* The open frame n (already off the stack) returned as `name` to parent. */
static int close_frame(nytp_calltree *t, uint32_t n, uint32_t parent, uint32_t name)
{
    uint32_t e = child_find(t, parent, name);
    if (e != NONE)
        return merge(t, n, e);
    link_child(t, parent, n, name);
    return NYTP_OK;
}

/* ---- names ---------------------------------------------------------------- */

static bool is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Where the lookahead of one name has looked: the first ":DIGITS]" at or
 * after colon_from is at colon_at (len: none), the first newline at or
 * after nl_from at nl_at (len: none).  The positions asked about only grow
 * along a name, so each byte is looked at a bounded number of times and a
 * name of nested evals ("(eval 1)[(eval 2)[...:1]:1]") takes linear time,
 * not a scan to its innermost file for every eval. */
struct lookahead {
    size_t colon_from, colon_at, nl_from, nl_at;
};

/* The first position >= x of a ':' followed by digits and ']'. */
static size_t colon_at_or_after(struct lookahead *la, const unsigned char *s, size_t len, size_t x)
{
    if (x >= la->colon_from && x <= la->colon_at)
        return la->colon_at;
    la->colon_from = x;
    for (size_t q = x; q < len; q++) {
        if (s[q] != ':')
            continue;
        size_t r = q + 1;
        while (r < len && is_digit(s[r]))
            r++;
        if (r > q + 1 && r < len && s[r] == ']')
            return la->colon_at = q;
        q = r - 1; /* the digits after it hold no ':' */
    }
    return la->colon_at = len;
}

static size_t newline_at_or_after(struct lookahead *la, const unsigned char *s, size_t len, size_t x)
{
    if (x >= la->nl_from && x <= la->nl_at)
        return la->nl_at;
    la->nl_from = x;
    const unsigned char *nl = x < len ? memchr(s + x, '\n', len - x) : NULL;
    return la->nl_at = nl ? (size_t)(nl - s) : len;
}

/* At s[i] == '(': the end (index after ')') of "(WORDeval DIGITS)" that is
 * followed by "[...:DIGITS]", and the end of WORDeval in *word_end; or 0. */
static size_t eval_seq_at(const char *str, size_t len, size_t i, size_t *word_end, struct lookahead *la)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t k = i + 1;
    while (k < len && is_word(s[k]))
        k++;
    /* \w*eval then \s: "eval" must end the run of word characters */
    if (k - (i + 1) < 4 || memcmp(s + k - 4, "eval", 4) != 0 || k >= len || !is_space(s[k]))
        return 0;
    size_t m = k + 1;
    while (m < len && is_digit(s[m]))
        m++;
    if (m == k + 1 || m >= len || s[m] != ')')
        return 0;
    /* lookahead: '[' .+? ':' \d+ ']' where '.' is not a newline: a
     * ":DIGITS]" at b + 2 or after, with no newline from b + 1 to it */
    size_t b = m + 1;
    if (b >= len || s[b] != '[' || b + 2 >= len)
        return 0;
    size_t q = colon_at_or_after(la, s, len, b + 2);
    if (q >= len || newline_at_or_after(la, s, len, b + 1) < q)
        return 0;
    *word_end = k;
    return m + 1;
}

size_t nytp_calltree_normalise(const char *name, size_t len, char *out)
{
    struct lookahead la = {len, len, len, len};
    size_t o = 0, i = 0;
    while (i < len) {
        const char *paren = memchr(name + i, '(', len - i);
        size_t p = paren ? (size_t)(paren - name) : len;
        memmove(out + o, name + i, p - i);
        o += p - i;
        i = p;
        if (i >= len)
            break;
        size_t word_end, end = eval_seq_at(name, len, i, &word_end, &la);
        if (end) {
            size_t wl = word_end - i;      /* "(" and the word */
            memmove(out + o, name + i, wl);
            o += wl;
            memcpy(out + o, " 0)", 3);
            o += 3;
            i = end;
        } else {
            out[o++] = '(';
            i++;
        }
    }
    return o;
}

/* Where a name is looked for first, before it is normalised and hashed
 * in full: from its length and its first, middle and last eight bytes. */
#define NAME_CACHE 4096u

static inline __attribute__((always_inline)) uint32_t name_key(const char *s, size_t len)
{
    /* the first eight bytes are most often a shared package prefix: the
     * middle eight count too, and the result is mixed before its bits
     * are taken (first and last alone put perltidy's 1,199 names in 777
     * slots, and 7 % of its returns missed) */
    uint64_t a = 0, b = 0, m = 0;
    if (len >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + len - 8, 8);
        memcpy(&m, s + len / 2 - 4, 8);
    } else {
        memcpy(&a, s, len);
    }
    uint64_t h = (a ^ m * 0xFF51AFD7ED558CCDULL) * 0x9E3779B97F4A7C15ULL ^ (b + len) * 0xC2B2AE3D27D4EB4FULL;
    h ^= h >> 29;
    return (uint32_t)(h >> 20) & (NAME_CACHE - 1);
}

/* memcmp(a, b, len) == 0 for the short strings of sub names, without a
 * call: eight bytes at a time, the last eight overlapping. */
static inline bool same_bytes(const char *a, const char *b, size_t len)
{
    if (len < 8)
        return memcmp(a, b, len) == 0;
#ifdef __SSE2__
    /* sixteen at a time where every x86-64 has it: sub names are mostly
     * 20 to 60 bytes (callgrind: 31 instructions a compare on perltidy's
     * returns, eight bytes at a time) */
    if (len >= 16) {
        unsigned ne = 0;
        for (size_t i = 0; i + 16 < len; i += 16)
            ne |= 0xffffu ^ (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
                                 _mm_loadu_si128((const __m128i *)(const void *)(a + i)),
                                 _mm_loadu_si128((const __m128i *)(const void *)(b + i))));
        ne |= 0xffffu ^ (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
                            _mm_loadu_si128((const __m128i *)(const void *)(a + len - 16)),
                            _mm_loadu_si128((const __m128i *)(const void *)(b + len - 16))));
        return ne == 0;
    }
#endif
    uint64_t x, y, diff = 0;
    for (size_t i = 0; i + 8 < len; i += 8) {
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        diff |= x ^ y;
    }
    memcpy(&x, a + len - 8, 8);
    memcpy(&y, b + len - 8, 8);
    return (diff | (x ^ y)) == 0;
}

static uint32_t intern_new(nytp_calltree *t, const char *s, size_t len, bool utf8, uint32_t key);

/* The id of a name, normalised.  A name equal to the normalised name of
 * id is its own normal form (normalising is idempotent), so it is id:
 * every SUB_RETURN names a sub, and most are found in the cache without
 * normalising nor hashing them. */
/* Inlined (in add_return above all, where it is most of the work of a
 * return): a call costs as much as the lookup. */
static inline __attribute__((always_inline)) uint32_t intern(nytp_calltree *t, const char *s, size_t len,
                                                             bool utf8)
{
    uint32_t key = name_key(s, len), hit = t->recent[key];
    if (hit != NONE && strtab_len(&t->names, hit) == len && same_bytes(strtab_str(&t->names, hit), s, len))
        return hit;
    return intern_new(t, s, len, utf8, key);
}

static uint32_t intern_new(nytp_calltree *t, const char *s, size_t len, bool utf8, uint32_t key)
{
    if (memchr(s, '(', len)) {
        if (len > t->cap_norm) {
            char *b = realloc(t->norm, len);
            if (!b)
                return NONE;
            t->norm = b;
            t->cap_norm = len;
        }
        len = nytp_calltree_normalise(s, len, t->norm);
        s = t->norm;
    }
    uint32_t before = t->names.count;
    uint32_t id = strtab_intern(&t->names, s, len);
    if (id == STRTAB_NONE)
        return NONE;
    if (t->names.count != before) {
        if (!grow((void **)&t->name_utf8, &t->cap_utf8, id + 1, sizeof(bool)))
            return NONE;
        t->name_utf8[id] = utf8;
    }
    t->recent[key] = id;
    return id;
}

/* ---- building ------------------------------------------------------------- */

int nytp_calltree_new(nytp_calltree **tp, nytp_error *err)
{
    nytp_calltree *t = calloc(1, sizeof *t);
    *tp = NULL;
    if (!t)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    strtab_init(&t->names);
    t->free_list = NONE;
    t->unreturned = NONE;
    t->last_name = NONE;
    t->recent = malloc(NAME_CACHE * sizeof *t->recent);
    if (t->recent)
        memset(t->recent, 0xff, NAME_CACHE * sizeof *t->recent);
    if (!t->recent || node_new(t) != ROOT || !slots_reserve(t) ||
        !grow((void **)&t->open, &t->cap_open, 64, sizeof *t->open)) {
        nytp_calltree_free(t);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    t->open[0] = (struct open_frame){0, ROOT};
    t->n_open = 1;
    t->sp = 1;
    *tp = t;
    return NYTP_OK;
}

void nytp_calltree_free(nytp_calltree *t)
{
    if (!t)
        return;
    free(t->nodes);
    free(t->keys);
    free(t->vals);
    strtab_free(&t->names);
    free(t->name_utf8);
    free(t->norm);
    free(t->recent);
    free(t->open);
    free(t->work);
    free(t->batch);
    free(t->closers);
    free(t->bs);
    free(t->fresh);
    free(t);
}

/* The frame open at position pos once the batch's returns are in: the
 * root, a frame that was open before the batch and stayed open (the
 * first `keep` of t->open), or a new open frame, kept in t->fresh. */
static uint32_t open_at(nytp_calltree *t, uint64_t pos, uint32_t keep)
{
    if (pos == 0)
        return ROOT;
    uint32_t lo = 1, hi = keep;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->open[mid].pos < pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < keep && t->open[lo].pos == pos)
        return t->open[lo].node;
    if (!grow((void **)&t->fresh, &t->cap_fresh, t->n_fresh + 1, sizeof *t->fresh))
        return NONE;
    uint32_t n = node_new(t);
    if (n != NONE)
        t->fresh[t->n_fresh++] = (struct open_frame){pos, n};
    return n;
}

/* Put the batch's returns in the tree, latest first.  A return's parent
 * is the first return after it one place nearer the root (the places
 * between them are all deeper), so going backwards every parent is
 * already in the tree when its children come: a return is one lookup
 * under a known node, where taking them in order would build each call's
 * children under a frame not yet named and merge them when it returns.
 * Parents that had not returned when the batch ended are open frames:
 * those open before it are found on t->open; the others are new.  A
 * frame open before the batch that one of its returns closed (a closer)
 * is merged into that return's node. */
static int settle(nytp_calltree *t)
{
    uint32_t nb = t->n_batch;
    if (!nb)
        return t->oom ? NYTP_E_NOMEM : NYTP_OK;
    t->n_batch = 0;
    uint32_t keep = t->n_open - t->n_closers;  /* old frames still open */
    uint32_t nc = t->n_closers, nbs = 0;
    uint32_t closer_at = nc ? t->closers[nc - 1].at : UINT32_MAX;
    t->n_closers = 0;
    t->n_fresh = 0;
    for (uint32_t r = nb; r-- > 0;) {
        const struct pending *q = &t->batch[r];
        uint64_t p = q->pos;
        while (nbs && t->bs[nbs - 1].pos >= p)
            nbs--;
        uint32_t parent;
        if (nbs && t->bs[nbs - 1].pos == p - 1) {
            parent = t->bs[nbs - 1].node;
        } else {
            nbs = 0; /* nothing nearer the root returns after this one */
            parent = open_at(t, p - 1, keep);
            if (parent == NONE)
                goto nomem;
            t->bs[nbs++] = (struct open_frame){p - 1, parent};
        }
        if (!slots_reserve(t))
            goto nomem;
        uint32_t e = child_find(t, parent, q->name);
        if (e == NONE) {
            if ((e = node_new(t)) == NONE)
                goto nomem;
            link_child(t, parent, e, q->name);
        }
        node *d = &t->nodes[e];
        d->calls += 1;
        d->excl += 0.0 + q->excl;
        d->incl += 0.0 + q->incl;
        if (t->batch_clock + r < d->seq)
            d->seq = t->batch_clock + r;
        if (r == closer_at) {
            if (merge(t, t->open[t->closers[nc - 1].open].node, e) < 0)
                goto nomem;
            nc--;
            closer_at = nc ? t->closers[nc - 1].at : UINT32_MAX;
        }
        t->bs[nbs++] = (struct open_frame){p, e};
    }
    /* the new open frames came deepest first */
    if (!grow((void **)&t->open, &t->cap_open, (uint64_t)keep + t->n_fresh, sizeof *t->open))
        goto nomem;
    t->n_open = keep;
    while (t->n_fresh)
        t->open[t->n_open++] = t->fresh[--t->n_fresh];
    t->closing = t->open[t->n_open - 1].pos;
    return NYTP_OK;
nomem:
    t->oom = true;
    return NYTP_E_NOMEM;
}

/* Const readers see every return added: the batch is a cache of the
 * tree, put in before anything looks. */
static bool settled(const nytp_calltree *t)
{
    return settle((nytp_calltree *)t) == NYTP_OK;
}

int nytp_calltree_add_return(nytp_calltree *t, uint32_t depth, double incl, double excl,
                             nytp_str name)
{
    if (t->oom)
        return NYTP_E_NOMEM;
    t->returns++;
    t->excl_in += excl;
    uint32_t id = intern(t, name.ptr, name.len, name.utf8);
    if (id == NONE)
        return NYTP_E_NOMEM;
    t->last_name = id;
    /* the stack grows (with empty frames) until it is deeper than depth,
     * and holds one frame besides the root, which a depth 0 would
     * otherwise close; then the frame on top returns */
    uint64_t need = (uint64_t)depth + 1 < 2 ? 2 : (uint64_t)depth + 1;
    if (t->sp < need)
        t->sp = need;
    uint64_t pos = --t->sp;
    if (pos > t->max_depth)
        t->max_depth = pos > UINT32_MAX ? UINT32_MAX : (uint32_t)pos;
    if (!t->batch) {
        t->batch = malloc(BATCH * sizeof *t->batch);
        t->bs = malloc((BATCH + 1) * sizeof *t->bs);
        if (!t->batch || !t->bs)
            return NYTP_E_NOMEM;
    }
    /* the frames open before the batch close deepest first, each by the
     * first return at its place (no return can skip a place on its way
     * nearer the root) */
    if (pos == t->closing) {
        uint32_t k = t->n_open - 1 - t->n_closers;
        if (!grow((void **)&t->closers, &t->cap_closers, t->n_closers + 1, sizeof *t->closers))
            return NYTP_E_NOMEM;
        t->closers[t->n_closers++] = (struct closer){t->n_batch, k};
        t->closing = k > 1 ? t->open[k - 1].pos : 0;
    }
    if (!t->n_batch)
        t->batch_clock = t->clock;
    t->clock++;
    t->batch[t->n_batch++] = (struct pending){(uint32_t)pos, id, incl, excl};
    return t->n_batch == BATCH ? settle(t) : NYTP_OK;
}

/* The depth of the deepest node (after open frames were folded away). */
static int measure_depth(nytp_calltree *t)
{
    uint64_t *todo = malloc((size_t)t->n_nodes * sizeof *todo);
    if (!todo)
        return NYTP_E_NOMEM;
    uint32_t nt = 0, deepest = 0;
    todo[nt++] = ROOT;
    while (nt) {
        uint64_t x = todo[--nt];
        uint32_t n = (uint32_t)x, d = (uint32_t)(x >> 32);
        if (d > deepest)
            deepest = d;
        for (uint32_t c = t->nodes[n].first; c != NONE; c = t->nodes[c].next)
            todo[nt++] = ((uint64_t)(d + 1) << 32) | c;
    }
    free(todo);
    t->max_depth = deepest;
    return NYTP_OK;
}

int64_t nytp_calltree_end_input(nytp_calltree *t)
{
    if (settle(t) < 0)
        return NYTP_E_NOMEM;
    if (t->sp <= 1)
        return 0;
    uint64_t closed = t->sp - 1;
    /* The open frames never returned: their names, and how many of them
     * were between those that hold something, are unknown.  They become
     * one frame, NYTP_CALLTREE_UNRETURNED, called from the main program,
     * holding every call that returned into any of them: a chain of
     * unknown frames would only repeat one unknown name. */
    if (t->n_open > 1) {
        if (t->unreturned == NONE) {
            const char *u = NYTP_CALLTREE_UNRETURNED;
            t->unreturned = intern(t, u, strlen(u), false);
            if (t->unreturned == NONE)
                return NYTP_E_NOMEM;
        }
        if (!slots_reserve(t))
            return NYTP_E_NOMEM;
        uint32_t u = t->open[1].node;
        while (t->n_open > 2) {
            int st = merge(t, t->open[--t->n_open].node, u);
            if (st < 0)
                return st;
        }
        t->n_open = 1;
        t->closing = 0;
        int st = close_frame(t, u, ROOT, t->unreturned);
        if (st < 0)
            return st;
    }
    t->sp = 1;
    t->n_unreturned += closed;
    if (measure_depth(t) < 0)
        return NYTP_E_NOMEM;
    return closed > INT64_MAX ? INT64_MAX : (int64_t)closed;
}

/* ---- folding deep recursion ------------------------------------------------ */

/* Take child c out of parent p's list (not out of the table). */
static void unlink_child(nytp_calltree *t, uint32_t p, uint32_t c)
{
    uint32_t *at = &t->nodes[p].first;
    while (*at != c)
        at = &t->nodes[*at].next;
    *at = t->nodes[c].next;
    t->nodes[p].n_children--;
}

/* The name id of "NAME…[×N]" for name id. */
static uint32_t folded_name(nytp_calltree *t, uint32_t id, uint64_t n)
{
    nytp_str base = nytp_calltree_name(t, id);
    char *s = malloc((size_t)base.len + 40);
    if (!s)
        return NONE;
    memcpy(s, base.ptr, base.len);
    /* U+2026 HORIZONTAL ELLIPSIS, "[", U+00D7 MULTIPLICATION SIGN */
    int k = snprintf(s + base.len, 40, "\xe2\x80\xa6[\xc3\x97%llu]", (unsigned long long)n);
    bool ascii = true;
    for (size_t i = 0; i < base.len && ascii; i++)
        ascii = !((unsigned char)base.ptr[i] & 0x80);
    uint32_t r = intern(t, s, base.len + (size_t)k, base.utf8 || ascii);
    free(s);
    return r;
}

/* Fold the run below head h (the first frame beyond the limit of a run of
 * its sub): every frame of the sub called directly from it, and from
 * those, is merged into it; then it takes the folded name. */
static int fold_run(nytp_calltree *t, uint32_t h, uint64_t frames)
{
    uint32_t b = t->nodes[h].name;
    for (;;) {
        if (!slots_reserve(t))
            return NYTP_E_NOMEM;
        uint32_t c = child_find(t, h, b);
        if (c == NONE)
            break;
        child_remove(t, c);
        unlink_child(t, h, c);
        int st = merge(t, c, h);
        if (st < 0)
            return st;
    }
    uint32_t name = folded_name(t, b, frames);
    if (name == NONE || !slots_reserve(t))
        return NYTP_E_NOMEM;
    uint32_t parent = t->nodes[h].parent;
    child_remove(t, h);
    t->nodes[h].name = name;
    uint32_t e = child_find(t, parent, name);
    if (e == NONE) {
        child_insert(t, h);
        return NYTP_OK;
    }
    unlink_child(t, parent, h);
    return merge(t, h, e);
}

size_t nytp_calltree_unfolded_len(const char *name, size_t len)
{
    static const char mark[] = "\xe2\x80\xa6[\xc3\x97";   /* "…[×" */
    const size_t ml = sizeof mark - 1;
    if (len < ml + 2 || name[len - 1] != ']')
        return len;
    size_t i = len - 1;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    if (i == len - 1 || i < ml || memcmp(name + i - ml, mark, ml) != 0)
        return len;
    return i - ml;
}

int64_t nytp_calltree_fold_recursion(nytp_calltree *t, uint32_t limit)
{
    if (settle(t) < 0)
        return NYTP_E_NOMEM;
    if (limit == 0 || t->max_depth <= limit)
        return 0;
    /* run[n]: n's place in the run of frames of its sub, each called by
     * the one before (1: its caller is another sub); head[n]: for a frame
     * beyond the limit, the first such frame of its run (which the others
     * fold into), with run[head] kept and the deepest place in deep[] */
    uint32_t nn = t->n_nodes;
    uint32_t *run = malloc((size_t)nn * sizeof *run);
    uint32_t *head = malloc((size_t)nn * sizeof *head);
    uint32_t *todo = malloc((size_t)nn * sizeof *todo);
    struct fold_head { uint32_t node, deepest; } *heads = NULL;
    uint32_t n_heads = 0, cap_heads = 0;
    int64_t rc = NYTP_E_NOMEM;
    if (!run || !head || !todo)
        goto out;
    uint32_t nt = 0;
    run[ROOT] = 0;
    head[ROOT] = NONE;
    todo[nt++] = ROOT;
    while (nt) {
        uint32_t n = todo[--nt];
        for (uint32_t c = t->nodes[n].first; c != NONE; c = t->nodes[c].next) {
            bool same = n != ROOT && t->nodes[c].name == t->nodes[n].name;
            run[c] = same ? (run[n] == UINT32_MAX ? UINT32_MAX : run[n] + 1) : 1;
            head[c] = NONE;
            if (same && run[c] == (uint64_t)limit + 1) {
                if (!grow((void **)&heads, &cap_heads, (uint64_t)n_heads + 1, sizeof *heads))
                    goto out;
                head[c] = n_heads;
                heads[n_heads++] = (struct fold_head){c, run[c]};
            } else if (same && run[c] > (uint64_t)limit + 1) {
                head[c] = head[n];
                if (run[c] > heads[head[c]].deepest)
                    heads[head[c]].deepest = run[c];
            }
            todo[nt++] = c;
        }
    }
    /* a head's subtree holds only later heads: folding from the last
     * leaves every merge to frames already folded */
    rc = 0;
    for (uint32_t i = n_heads; i-- > 0;) {
        int st = fold_run(t, heads[i].node, (uint64_t)heads[i].deepest - limit);
        if (st < 0) {
            rc = st;
            goto out;
        }
        rc += heads[i].deepest - limit;
    }
    if (n_heads && measure_depth(t) < 0)
        rc = NYTP_E_NOMEM;
out:
    free(run);
    free(head);
    free(todo);
    free(heads);
    return rc;
}

int nytp_calltree_add_path(nytp_calltree *t, const nytp_str *names, size_t depth, double excl,
                           double incl, uint64_t calls)
{
    if (settle(t) < 0)
        return NYTP_E_NOMEM;
    uint32_t cur = ROOT;
    for (size_t i = 0; i < depth; i++) {
        uint32_t id = intern(t, names[i].ptr, names[i].len, names[i].utf8);
        if (id == NONE || !slots_reserve(t))
            return NYTP_E_NOMEM;
        uint32_t c = child_find(t, cur, id);
        if (c == NONE) {
            c = node_new(t);
            if (c == NONE)
                return NYTP_E_NOMEM;
            link_child(t, cur, c, id);
            t->nodes[c].seq = t->clock++;
            if (i + 1 > t->max_depth)
                t->max_depth = i + 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(i + 1);
        }
        cur = c;
    }
    if (cur != ROOT) {
        t->nodes[cur].excl += excl;
        t->nodes[cur].incl += incl;
        t->nodes[cur].calls += calls;
    }
    return NYTP_OK;
}

int nytp_calltree_add_sites(nytp_calltree *t, const nytp_profile *p)
{
    double tps = p->ticks_per_sec > 0 ? p->ticks_per_sec : 1;
    if (!(t->ticks_per_sec > 0) && p->ticks_per_sec > 0)
        t->ticks_per_sec = p->ticks_per_sec;
    for (uint32_t i = 0; i < p->n_sites; i++) {
        const nytp_site *s = &p->sites[i];
        const nytp_sub *called = &p->subs[s->called];
        nytp_str path[2];
        size_t depth = 0;
        if (s->n_callers == 1)
            path[depth++] = (nytp_str){nytp_profile_str(p, s->callers[0]), nytp_profile_strlen(p, s->callers[0]),
                                       false};
        path[depth++] = (nytp_str){nytp_profile_str(p, called->name), nytp_profile_strlen(p, called->name), false};
        int st = nytp_calltree_add_path(t, path, depth, s->excl * tps, s->incl * tps, s->count);
        if (st < 0)
            return st;
    }
    return NYTP_OK;
}

int nytp_calltree_add_chunk(nytp_calltree *t, const nytp_chunk *c)
{
    if (c->tag == NYTP_TAG_SUB_RETURN)
        return nytp_calltree_add_return(t, c->u.sub_return.depth, c->u.sub_return.incl,
                                        c->u.sub_return.excl, c->u.sub_return.name);
    if (c->tag != NYTP_TAG_ATTRIBUTE || c->u.kv.value.len >= 40)
        return NYTP_OK;
    char b[48];
    memcpy(b, c->u.kv.value.ptr, c->u.kv.value.len);
    b[c->u.kv.value.len] = 0;
    double v = strtod(b, NULL);
    if (!(v > 0 && v < 1e19))
        return NYTP_OK;
    if (c->u.kv.key.len == 13 && memcmp(c->u.kv.key.ptr, "ticks_per_sec", 13) == 0)
        t->ticks_per_sec = v;
    else if (c->u.kv.key.len == 9 && memcmp(c->u.kv.key.ptr, "sample_hz", 9) == 0 && !t->sample_hz)
        t->sample_hz = v;
    else if (c->u.kv.key.len == 12 && memcmp(c->u.kv.key.ptr, "sample_count", 12) == 0)
        t->samples += (uint64_t)v;
    return NYTP_OK;
}

int nytp_calltree_read(nytp_calltree *t, nytp_reader *r, nytp_error *err)
{
    nytp_chunk c;
    int st;
    while ((st = nytp_reader_next(r, &c, err)) == NYTP_OK) {
        int ast = nytp_calltree_add_chunk(t, &c);
        if (ast < 0) {
            nytp_error_set(err, ast,
                           "out of memory building the call tree, at chunk %llu (%llu call paths)",
                           (unsigned long long)nytp_reader_chunk_number(r),
                           (unsigned long long)t->live);
            if (err) {
                err->offset = nytp_reader_chunk_offset(r);
                err->inflated = nytp_reader_chunk_inflated(r);
                err->deflate_start = nytp_in_deflate_start(nytp_reader_input(r));
                err->chunk = nytp_reader_chunk_number(r);
            }
            st = ast;
            break;
        }
    }
    int64_t closed = nytp_calltree_end_input(t);
    if (closed < 0 && st >= 0)
        return nytp_error_set(err, NYTP_E_NOMEM,
                              "out of memory closing the calls still open at the end (%llu call paths)",
                              (unsigned long long)t->live);
    return st == NYTP_END ? NYTP_OK : st;
}

int nytp_calltree_load(nytp_calltree *t, const char *path, nytp_warn_fn warn, void *warn_ctx,
                       nytp_error *err)
{
    nytp_reader *r;
    int st = nytp_reader_open(&r, path, err);
    if (st < 0)
        return st;
    if (warn)
        nytp_reader_set_warn(r, warn, warn_ctx);
    st = nytp_calltree_read(t, r, err);
    nytp_reader_close(r);
    return st;
}

/* ---- looking ---------------------------------------------------------------- */

void nytp_calltree_get_stats(const nytp_calltree *t, nytp_calltree_stats *s)
{
    (void)settled(t); /* what failed says so at the next add or walk */
    s->returns = t->returns;
    s->excl_in = t->excl_in;
    s->nodes = t->live;
    s->node_slots = t->n_nodes;
    s->names = t->names.count;
    s->max_depth = t->max_depth;
    s->unreturned = t->n_unreturned;
}

uint32_t nytp_calltree_last_name(const nytp_calltree *t)
{
    return t->last_name;
}

void nytp_calltree_copy_attrs(nytp_calltree *dst, const nytp_calltree *src)
{
    dst->ticks_per_sec = src->ticks_per_sec;
    dst->sample_hz = src->sample_hz;
    dst->samples = src->samples;
}

double nytp_calltree_ticks_per_sec(const nytp_calltree *t)
{
    return t->ticks_per_sec;
}

double nytp_calltree_sample_hz(const nytp_calltree *t, uint64_t *samples)
{
    if (samples)
        *samples = t->samples;
    return t->sample_hz;
}

nytp_str nytp_calltree_name(const nytp_calltree *t, uint32_t id)
{
    nytp_str s = {"", 0, false};
    if (id < t->names.count) {
        s.ptr = strtab_str(&t->names, id);
        s.len = strtab_len(&t->names, id);
        s.utf8 = t->name_utf8[id];
    }
    return s;
}

int nytp_calltree_find_name(const nytp_calltree *t, const char *name, size_t len, uint32_t *id)
{
    char *norm = NULL;
    *id = UINT32_MAX;
    if (memchr(name, '(', len)) {
        if (!(norm = malloc(len ? len : 1)))
            return NYTP_E_NOMEM;
        len = nytp_calltree_normalise(name, len, norm);
        name = norm;
    }
    uint32_t found = strtab_find(&t->names, name, len);
    free(norm);
    if (found != STRTAB_NONE)
        *id = found;
    return NYTP_OK;
}

static bool is_named(const node *n)
{
    return n->name != NONE && n->name != FREED;
}

double nytp_calltree_total_excl(const nytp_calltree *t)
{
    (void)settled(t);
    double s = 0;
    for (uint32_t i = 1; i < t->n_nodes; i++)
        if (is_named(&t->nodes[i]))
            s += t->nodes[i].excl;
    return s;
}

uint64_t nytp_calltree_total_calls(const nytp_calltree *t)
{
    (void)settled(t);
    uint64_t s = 0;
    for (uint32_t i = 1; i < t->n_nodes; i++)
        if (is_named(&t->nodes[i]))
            s += t->nodes[i].calls;
    return s;
}

/* ---- walking ---------------------------------------------------------------- */

struct kid {
    uint64_t key;
    uint32_t node;
};

static int cmp_kid(const void *a, const void *b)
{
    const struct kid *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

static int cmp_name_id(const void *a, const void *b, void *ctx)
{
    const strtab *tab = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t lx = strtab_len(tab, x), ly = strtab_len(tab, y);
    int c = memcmp(strtab_str(tab, x), strtab_str(tab, y), lx < ly ? lx : ly);
    if (c)
        return c;
    return lx < ly ? -1 : lx > ly;
}

/* rank[id]: the position of name id in byte order. */
static uint32_t *name_ranks(const nytp_calltree *t)
{
    uint32_t n = t->names.count;
    uint32_t *ids = malloc((n + 1) * sizeof *ids), *rank = malloc((n + 1) * sizeof *rank);
    if (!ids || !rank) {
        free(ids);
        free(rank);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        ids[i] = i;
    qsort_r(ids, n, sizeof *ids, cmp_name_id, (void *)&t->names);
    for (uint32_t i = 0; i < n; i++)
        rank[ids[i]] = i;
    free(ids);
    return rank;
}

int nytp_calltree_walk(const nytp_calltree *t, unsigned flags, nytp_calltree_fn fn, void *ctx)
{
    if (!settled(t))
        return NYTP_E_NOMEM;
    int rc = NYTP_E_NOMEM;
    uint32_t nn = t->n_nodes;
    uint32_t *order = malloc((size_t)nn * sizeof *order);
    uint32_t *todo = malloc((size_t)nn * sizeof *todo);
    double *tot_e = calloc(nn, sizeof *tot_e);
    uint64_t *tot_c = calloc(nn, sizeof *tot_c);
    uint32_t *depth = malloc((size_t)nn * sizeof *depth);
    nytp_str *path = NULL;
    uint32_t *path_ids = NULL;
    uint32_t *rank = NULL;
    uint64_t *first = NULL;     /* unsorted: the first return below each node */
    struct kid *kids = NULL;
    uint32_t cap_kids = 0;
    if (!order || !todo || !tot_e || !tot_c || !depth)
        goto out;
    if (!(flags & NYTP_CALLTREE_SORTED) && !(first = malloc((size_t)nn * sizeof *first)))
        goto out;
    if ((flags & NYTP_CALLTREE_SORTED) && !(rank = name_ranks(t)))
        goto out;

    /* parents before children, then totals from the leaves up */
    uint32_t no = 0, nt = 0, deepest = 0;
    depth[ROOT] = 0;
    todo[nt++] = ROOT;
    while (nt) {
        uint32_t n = todo[--nt];
        order[no++] = n;
        if (depth[n] > deepest)
            deepest = depth[n];
        for (uint32_t c = t->nodes[n].first; c != NONE; c = t->nodes[c].next) {
            depth[c] = depth[n] + 1;
            todo[nt++] = c;
        }
    }
    path = malloc(((size_t)deepest + 1) * sizeof *path);
    path_ids = malloc(((size_t)deepest + 1) * sizeof *path_ids);
    if (!path || !path_ids)
        goto out;
    if (first)
        for (uint32_t i = 0; i < no; i++)
            first[order[i]] = t->nodes[order[i]].seq;
    for (uint32_t i = no; i-- > 0;) {
        uint32_t n = order[i];
        tot_e[n] += t->nodes[n].excl;
        tot_c[n] += t->nodes[n].calls;
        if (n != ROOT) {
            uint32_t up = t->nodes[n].parent;
            tot_e[up] += tot_e[n];
            tot_c[up] += tot_c[n];
            if (first && first[n] < first[up])
                first[up] = first[n];
        }
    }

    /* the walk proper: a stack of nodes to visit, each child pushed after
     * its later siblings so that it comes out first */
    nt = 0;
    depth[ROOT] = 0;
    todo[nt++] = ROOT;
    rc = 0;
    while (nt) {
        uint32_t n = todo[--nt];
        const node *nd = &t->nodes[n];
        uint32_t d = depth[n];
        if (n != ROOT) {
            path[d - 1] = nytp_calltree_name(t, nd->name);
            path_ids[d - 1] = nd->name;
            nytp_calltree_visit v = {d,         path,      path_ids, nd->calls,         nd->excl,
                                     nd->incl,  tot_e[n],  tot_c[n], nd->n_children};
            rc = fn(ctx, &v);
            if (rc)
                break;
        }
        if (nd->n_children == 1) {
            depth[nd->first] = d + 1;
            todo[nt++] = nd->first;
        } else if (nd->n_children) {
            /* sorted by name, or by the first return below each: the
             * order the program first called them in */
            if (!grow((void **)&kids, &cap_kids, nd->n_children + 1, sizeof *kids)) {
                rc = NYTP_E_NOMEM;
                break;
            }
            uint32_t k = 0;
            for (uint32_t c = nd->first; c != NONE; c = t->nodes[c].next)
                kids[k++] = (struct kid){rank ? rank[t->nodes[c].name] : first[c], c};
            qsort(kids, k, sizeof *kids, cmp_kid);
            while (k--) {
                uint32_t c = kids[k].node;
                depth[c] = d + 1;
                todo[nt++] = c;
            }
        }
    }
out:
    free(order);
    free(todo);
    free(tot_e);
    free(tot_c);
    free(depth);
    free(path);
    free(path_ids);
    free(rank);
    free(first);
    free(kids);
    return rc;
}

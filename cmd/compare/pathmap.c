/* pathmap.c — names of two sets of profiles made comparable across
 * checkouts (see pathmap.h): roots from the profiles, --strip and --map,
 * pairing by the longest common path suffix, and names rewritten. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nytp/calltree.h"
#include "pathmap.h"
#include "strmap.h"

struct pathmap {
    const pathmap_opts *o;
    strmap roots[2];        /* directories code was loaded from, per side */
    strmap files[2];        /* per side: the files' keys before pairing; value:
                               NYTP_NONE, or the id of the pair's key in pkeys */
    strmap pkeys;           /* keys of paired files */
    size_t paired;
    char *nbuf, *kbuf, *obuf;       /* normalised name, a file's key, the result */
    size_t cap_n, cap_k, cap_o;
};

static bool room(char **b, size_t *cap, size_t need)
{
    return cli_grow_size((void **)b, need, cap, 1);
}

int pathmap_new(pathmap **mp, const pathmap_opts *o)
{
    pathmap *m = calloc(1, sizeof *m);
    *mp = m;
    if (!m)
        return NYTP_E_NOMEM;
    m->o = o;
    return NYTP_OK;
}

void pathmap_free(pathmap *m)
{
    if (!m)
        return;
    for (int k = 0; k < 2; k++) {
        strmap_release(&m->roots[k]);
        strmap_release(&m->files[k]);
    }
    strmap_release(&m->pkeys);
    free(m->nbuf);
    free(m->kbuf);
    free(m->obuf);
    free(m);
}

/* Whether dir (len dl) is a directory prefix of s: s goes on with a '/'
 * after it (or dir ends with one) and something follows.  Returns how
 * much to cut (the '/' included), or 0. */
static size_t dir_prefix(const char *dir, size_t dl, const char *s, size_t len)
{
    if (!dl || dl >= len || memcmp(dir, s, dl) != 0)
        return 0;
    if (dir[dl - 1] == '/')
        return dl;
    return s[dl] == '/' && dl + 1 < len ? dl + 1 : 0;
}

/* "OLD=NEW": the length of OLD, or SIZE_MAX without an '='. */
static size_t map_split(const char *spec)
{
    const char *eq = strchr(spec, '=');
    return eq ? (size_t)(eq - spec) : SIZE_MAX;
}

/* The length of a directory without its trailing '/'s ("/" stays). */
static size_t dir_len(const char *d, size_t len)
{
    while (len > 1 && d[len - 1] == '/')
        len--;
    return len;
}

/* path with BASE's --map applied (side 0), into m->kbuf; *len updated.
 * OLD and NEW are directories, with or without a trailing '/'. */
static const char *mapped(pathmap *m, int side, const char *s, size_t *len)
{
    if (side != 0)
        return s;
    size_t best = 0, which = 0;
    for (size_t i = 0; i < m->o->n_map; i++) {
        const char *spec = m->o->map[i];
        size_t ol = map_split(spec);
        if (ol == SIZE_MAX)
            continue;
        ol = dir_len(spec, ol);
        if ((ol == 1 && spec[0] == '/') || ol <= best || ol > *len || memcmp(spec, s, ol) != 0)
            continue; /* (mapping "/" itself means nothing) */
        /* at a component's end: "/ci/ws-1" does not map "/ci/ws-12" */
        if (ol < *len && s[ol] != '/' && spec[ol - 1] != '/')
            continue;
        best = ol;
        which = i;
    }
    if (!best)
        return s;
    const char *spec = m->o->map[which], *to = spec + map_split(spec) + 1;
    size_t tl = dir_len(to, strlen(to)), rest = *len - best;
    if (!room(&m->kbuf, &m->cap_k, tl + rest + 1))
        return NULL;
    memmove(m->kbuf + tl, s + best, rest); /* s may be kbuf itself: never here */
    memcpy(m->kbuf, to, tl);
    *len = tl + rest;
    m->kbuf[*len] = 0;
    return m->kbuf;
}

/* The key of a path before pairing, in m->kbuf or inside s. */
static const char *path_key1(pathmap *m, int side, const char *s, size_t *len)
{
    s = mapped(m, side, s, len);
    if (!s)
        return NULL;
    size_t cut = 0;
    for (size_t i = 0; i < m->o->n_strip; i++) {
        size_t c = dir_prefix(m->o->strip[i], strlen(m->o->strip[i]), s, *len);
        if (c > cut)
            cut = c;
    }
    if (!cut) {
        const strmap *r = &m->roots[side];
        for (uint32_t i = 0; i < r->n; i++) {
            size_t c = dir_prefix(strmap_str(r, i), r->v[i].len, s, *len);
            if (c > cut)
                cut = c;
        }
    }
    *len -= cut;
    return s + cut;
}

static int add_root(pathmap *m, int side, const char *dir, size_t len)
{
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (!len || (len == 1 && dir[0] == '/'))
        return NYTP_OK;
    const char *d = mapped(m, side, dir, &len);
    if (!d || len > UINT32_MAX - 1)
        return NYTP_E_NOMEM;
    return strmap_add(&m->roots[side], d, (uint32_t)len, false, NULL) == NYTP_NONE ? NYTP_E_NOMEM
                                                                                  : NYTP_OK;
}

int pathmap_add_profile(pathmap *m, int side, const nytp_profile *p)
{
    /* where perl looked for code: @INC as Devel::NYTP writes it (an
     * option; an attribute in profiles written before) */
    const char *inc = nytp_profile_option(p, "inc");
    if (!inc)
        inc = nytp_profile_attr(p, "inc");
    for (const char *s = inc; s && *s;) {
        const char *colon = strchr(s, ':');
        size_t l = colon ? (size_t)(colon - s) : strlen(s);
        if (add_root(m, side, s, l) < 0)
            return NYTP_E_NOMEM;
        s += l + (colon != NULL);
    }
    /* the program's directory */
    const char *app = nytp_profile_attr(p, "application");
    const char *slash = app ? strrchr(app, '/') : NULL;
    if (slash && add_root(m, side, app, (size_t)(slash - app)) < 0)
        return NYTP_E_NOMEM;
    /* the files (their keys are found once all roots are known) */
    for (uint32_t fid = 1; fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        if (!f->defined || f->eval_fid)
            continue;
        uint32_t l = nytp_profile_strlen(p, f->name);
        const char *n = nytp_profile_str(p, f->name);
        if (l && n[0] == '(' && n[l - 1] == ']')
            continue; /* an eval whose parent is unknown */
        if (strmap_add(&m->files[side], n, l, false, NULL) == NYTP_NONE)
            return NYTP_E_NOMEM;
    }
    return NYTP_OK;
}

/* ---- pairing by the common suffix ---------------------------------------------------- */

/* A file of one side left to pair, and its key before pairing (in keys). */
typedef struct cand {
    uint32_t id;            /* in files[side] */
    const char *key;
    size_t len;
} cand;

/* The files' keys before pairing, per side, with those the other side
 * has dropped: what is left to pair. */
static int unmatched(pathmap *m, strmap keys[2], cand *c[2], size_t n[2])
{
    for (int k = 0; k < 2; k++) {
        const strmap *f = &m->files[k];
        for (uint32_t i = 0; i < f->n; i++) {
            size_t len = f->v[i].len;
            const char *key = path_key1(m, k, strmap_str(f, i), &len);
            if (!key || strmap_add(&keys[k], key, (uint32_t)len, false, NULL) == NYTP_NONE)
                return NYTP_E_NOMEM;
        }
    }
    for (int k = 0; k < 2; k++) {
        c[k] = malloc(((size_t)m->files[k].n + 1) * sizeof *c[k]);
        if (!c[k])
            return NYTP_E_NOMEM;
        n[k] = 0;
        const strmap *f = &m->files[k];
        for (uint32_t i = 0; i < f->n; i++) {
            size_t len = f->v[i].len;
            const char *key = path_key1(m, k, strmap_str(f, i), &len);
            if (!key)
                return NYTP_E_NOMEM;
            if (strmap_find(&keys[1 - k], key, (uint32_t)len) != NYTP_NONE)
                continue;
            uint32_t kid = strmap_find(&keys[k], key, (uint32_t)len);
            c[k][n[k]++] = (cand){i, strmap_str(&keys[k], kid), len};
        }
    }
    return NYTP_OK;
}

static int pair(pathmap *m, strmap keys[2], const cand *a, const cand *b, size_t suffix)
{
    /* the suffix, unless a key of either side already reads so */
    const char *key = a->key + a->len - suffix;
    size_t len = suffix;
    if (strmap_find(&keys[0], key, (uint32_t)len) != NYTP_NONE ||
        strmap_find(&keys[1], key, (uint32_t)len) != NYTP_NONE ||
        strmap_find(&m->pkeys, key, (uint32_t)len) != NYTP_NONE) {
        key = a->key;
        len = a->len;
    }
    uint32_t id = strmap_add(&m->pkeys, key, (uint32_t)len, false, NULL);
    if (id == NYTP_NONE)
        return NYTP_E_NOMEM;
    m->files[0].v[a->id].value = id;
    m->files[1].v[b->id].value = id;
    m->paired++;
    return NYTP_OK;
}

/* The rule: a file of one side pairs with the file of the other side
 * whose key shares the longest suffix of whole components with its own,
 * when that file is the only one at that length, it is the only one of
 * its own side at that length for the other, and the suffix is not empty;
 * paired files drop out and the rule is applied again until nothing
 * pairs.  (A pair that qualifies still does when others drop out, so the
 * order does not matter.)
 *
 * The keys go into a trie of their components read from the end
 * ("/a/lib/M.pm": M.pm, lib, a, ""), where the suffix two keys share is
 * their lowest common node.  Two files qualify exactly when the node
 * where they meet has them as the only files left of each side below it.
 * So one pass from the deepest nodes up pairs everything the rule would:
 * a pair made at a node changes only the counts of that node and those
 * above it, which come later.  Time and memory linear in the bytes of the
 * keys (the rule applied file by file took about n^4 steps on nested
 * paths: 95 s for 800). */
typedef struct tnode {
    uint32_t parent;        /* NYTP_NONE: a last component */
    uint32_t left[2];       /* files of each side still unpaired below it (itself included) */
    uint32_t one[2];        /* when left[k] is 1: which (index in c[k]) */
    size_t len;             /* bytes of the suffix it stands for */
} tnode;

typedef struct trie {
    strmap ids;             /* parent id (4 bytes, NYTP_NONE at the top) + component */
    tnode *v;
    size_t cap;
    char *buf;
    size_t cap_buf;
} trie;

/* The node of a key (its whole path), made as needed; NYTP_NONE when out
 * of memory. */
static uint32_t trie_node(trie *t, const char *key, size_t len)
{
    uint32_t node = NYTP_NONE;
    for (size_t end = len;;) {
        const char *sl = end ? memrchr(key, '/', end) : NULL;
        size_t start = sl ? (size_t)(sl - key) + 1 : 0, cl = end - start;
        if (!room(&t->buf, &t->cap_buf, 4 + cl + 1) || 4 + cl > UINT32_MAX - 1)
            return NYTP_NONE;
        memcpy(t->buf, &node, 4);
        memcpy(t->buf + 4, key + start, cl);
        bool added;
        uint32_t id = strmap_add(&t->ids, t->buf, (uint32_t)(4 + cl), false, &added);
        if (id == NYTP_NONE)
            return NYTP_NONE;
        if (added) {
            if (!cli_grow_size((void **)&t->v, (size_t)id + 1, &t->cap, sizeof *t->v))
                return NYTP_NONE;
            t->v[id] = (tnode){.parent = node,
                               .len = node == NYTP_NONE ? cl : t->v[node].len + 1 + cl};
        }
        node = id;
        if (!sl)
            return node;
        end = (size_t)(sl - key);
    }
}

static int pair_all(pathmap *m, strmap keys[2], cand *c[2], const size_t n[2])
{
    trie t = {0};
    int st = NYTP_OK;
    for (int k = 0; k < 2 && st == NYTP_OK; k++)
        for (size_t i = 0; i < n[k]; i++) {
            uint32_t id = trie_node(&t, c[k][i].key, c[k][i].len);
            if (id == NYTP_NONE) {
                st = NYTP_E_NOMEM;
                break;
            }
            t.v[id].left[k]++;
            t.v[id].one[k] = (uint32_t)i;
        }
    /* a node's children were made after it: higher ids first is bottom-up */
    for (uint32_t id = t.ids.n; id-- > 0 && st == NYTP_OK;) {
        tnode *v = &t.v[id];
        if (v->left[0] == 1 && v->left[1] == 1 && v->len) {
            st = pair(m, keys, &c[0][v->one[0]], &c[1][v->one[1]], v->len);
            v->left[0] = v->left[1] = 0;
        }
        if (v->parent == NYTP_NONE)
            continue;
        tnode *up = &t.v[v->parent];
        for (int k = 0; k < 2; k++) {
            if (v->left[k] == 1)
                up->one[k] = v->one[k];
            up->left[k] += v->left[k];
        }
    }
    strmap_release(&t.ids);
    free(t.v);
    free(t.buf);
    return st;
}

int pathmap_finish(pathmap *m)
{
    strmap keys[2] = {{0}, {0}};
    cand *c[2] = {NULL, NULL};
    size_t n[2] = {0, 0};
    int st = unmatched(m, keys, c, n);
    if (st == NYTP_OK)
        st = pair_all(m, keys, c, n);
    for (int k = 0; k < 2; k++) {
        free(c[k]);
        strmap_release(&keys[k]);
    }
    return st;
}

size_t pathmap_paired(const pathmap *m)
{
    return m->paired;
}

/* ---- keys of names -------------------------------------------------------------------- */

/* The key of a path of a side: paired, or its key before pairing. */
static const char *path_key(pathmap *m, int side, const char *s, size_t *len)
{
    uint32_t id = *len <= UINT32_MAX - 1 ? strmap_find(&m->files[side], s, (uint32_t)*len)
                                         : NYTP_NONE;
    if (id != NYTP_NONE && m->files[side].v[id].value != NYTP_NONE) {
        uint32_t k = m->files[side].v[id].value;
        *len = m->pkeys.v[k].len;
        return strmap_str(&m->pkeys, k);
    }
    return path_key1(m, side, s, len);
}

/* Where the file of a name ends with its "[FILE:LINE]" suffixes
 * ("M::__ANON__[(eval 0)[/x/M.pm:8]:1]": the "/x/M.pm"): *start and *end,
 * false when the name has none. */
static bool innermost_file(const char *s, size_t len, size_t *start, size_t *end)
{
    size_t pos = len, levels = 0;
    while (pos >= 4 && s[pos - 1] == ']') {
        size_t j = pos - 1;
        while (j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9')
            j--;
        if (j == pos - 1 || j == 0 || s[j - 1] != ':')
            break;
        pos = j - 1;
        levels++;
    }
    if (!levels || !pos)
        return false;
    /* the '[' that opens the innermost one, over brackets the file's
     * name itself may hold */
    size_t depth = 0;
    for (size_t i = pos; i > 0; i--) {
        if (s[i - 1] == ']') {
            depth++;
        } else if (s[i - 1] == '[') {
            if (!depth) {
                *start = i;
                *end = pos;
                return i < pos;
            }
            depth--;
        }
    }
    return false;
}

static const char *key_of(pathmap *m, int side, const char *name, size_t len, size_t *klen,
                          bool is_file)
{
    if (!room(&m->nbuf, &m->cap_n, len + 1))
        return NULL;
    size_t nl = nytp_calltree_normalise(name, len, m->nbuf);
    m->nbuf[nl] = 0;
    size_t start = 0, end = nl;
    bool inner = (!is_file || (nl && m->nbuf[0] == '(')) && innermost_file(m->nbuf, nl, &start, &end);
    if (!inner && !is_file) {
        *klen = nl;
        return m->nbuf;
    }
    size_t fl = end - start;
    const char *fk = path_key(m, side, m->nbuf + start, &fl);
    if (!fk || !room(&m->obuf, &m->cap_o, start + fl + (nl - end) + 1))
        return NULL;
    memcpy(m->obuf, m->nbuf, start);
    memmove(m->obuf + start, fk, fl);
    memcpy(m->obuf + start + fl, m->nbuf + end, nl - end);
    *klen = start + fl + nl - end;
    m->obuf[*klen] = 0;
    return m->obuf;
}

const char *pathmap_file_key(pathmap *m, int side, const char *name, size_t len, size_t *klen)
{
    return key_of(m, side, name, len, klen, true);
}

const char *pathmap_sub_key(pathmap *m, int side, const char *name, size_t len, size_t *klen)
{
    return key_of(m, side, name, len, klen, false);
}

/* subs.c — the subs and call arcs of a profile, found by address (a
 * cache keyed by what perl hands the sub hooks), and the calls waiting
 * for their start time.  Below the hooks that use them (calls.c, stmt.c)
 * and the output that writes them (output.c). */
#include "nytp_prof.h"

/* The clock was read: that is when the calls waiting for it began (the
 * innermost frames, since any reading ends the wait). */
void fill_pending(pTHX_ int64_t now)
{
    SSize_t ix = S.frame_ix;
    while (S.npending && ix != -1) {
        call_frame *f = FRAME(ix);
        if (f->t0_pending) {
            f->t0 = now;
            f->t0_pending = 0;
            S.npending--;
        }
        ix--;
    }
    S.npending = 0;
}

/* ---- subs and call arcs, by address ------------------------------------------------ */

static inline size_t mix_ptrs(const void *a, const void *b)
{
    uint64_t h = (uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uintptr_t)b + 0x7F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return (size_t)(h ^ (h >> 31));
}

/* The node named pkg::sub (pkg NULL: "(null)"), made on first use: the
 * only place a sub's name is built. */
sub_node *node_named(pTHX_ const char *pkg, STRLEN pkg_len, const char *sub, STRLEN sub_len)
{
    const char *p = pkg ? pkg : "(null)";
    STRLEN pl = pkg ? pkg_len : 6;
    if (!sub) {
        sub = "(null)";
        sub_len = 6;
    }
    STRLEN len = pl + 2 + sub_len;
    char stackbuf[256];
    char *full = len < sizeof stackbuf ? stackbuf : (char *)malloc(len + 1);
    if (!full)
        croak("Devel::NYTP: out of memory");
    memcpy(full, p, pl);
    memcpy(full + pl, "::", 2);
    memcpy(full + pl + 2, sub, sub_len);
    full[len] = 0;
    SV **svp = hv_fetch(S.nodes_hv, full, (I32)len, 1);
    if (SvIOK(*svp)) {
        if (full != stackbuf)
            free(full);
        return INT2PTR(sub_node *, SvIVX(*svp));
    }
    sub_node *n = calloc(1, sizeof *n);
    if (!n)
        croak("Devel::NYTP: out of memory");
    if (full == stackbuf) {
        full = malloc(len + 1);
        if (!full)
            croak("Devel::NYTP: out of memory");
        memcpy(full, stackbuf, len + 1);
    }
    n->full = full;
    n->full_len = len;
    n->sub_off = pl + 2;
    if (pkg) {
        n->pkg = (char *)malloc(pkg_len + 1);
        if (!n->pkg)
            croak("Devel::NYTP: out of memory");
        memcpy(n->pkg, pkg, pkg_len);
        n->pkg[pkg_len] = 0;
    }
    const char *name = n->full + n->sub_off;
    n->is_begin = pkg && strcmp(name, "BEGIN") == 0;
    n->is_own = pkg && strcmp(n->pkg, "DB") == 0
                && (strcmp(name, "_CHECK") == 0 || strcmp(name, "_INIT") == 0
                    || strcmp(name, "_END") == 0);
    n->is_posix_exit = pkg && strcmp(n->pkg, "POSIX") == 0 && strcmp(name, "_exit") == 0;
    sv_setiv(*svp, PTR2IV(n));
    return n;
}

/* The node of a glob, remembered by the glob's address in a direct-mapped
 * table in front of node_cache: a slot holds the glob and the two name
 * strings it had, and answers only while the glob still has those very
 * strings.  So it is a memo of the (package, name) -> node function that
 * node_cache computes: a glob freed and its address given to another
 * glob, a glob renamed or moved to another stash, a stash deleted (the
 * glob's stash becomes NULL), a sub redefined or a glob assigned (the
 * glob keeps its names: the node is the name's) all give the answer that
 * node_cache would.  The strings are held by node_cache (never freed while
 * it has them, so an address is never another name's); both are cleared
 * together. */
gv_slot gv_cache[GV_CACHE_SIZE];

/* The nodes of slow ops, by (package name, op) in a direct-mapped memo
 * in front of node_cache, which holds the names: as gv_cache. */
slowop_slot slowop_cache[SLOWOP_CACHE_SIZE];

static sub_node *node_cached(pTHX_ const void *k1, const void *k2)
{
    if (!S.node_cache_cap)
        return NULL;
    size_t mask = S.node_cache_cap - 1;
    for (size_t i = mix_ptrs(k1, k2) & mask;; i = (i + 1) & mask) {
        node_slot *e = &S.node_cache[i];
        if (!e->node)
            return NULL;
        if (e->k1 == k1 && e->k2 == k2)
            return e->node;
    }
}

static void node_cache_put(pTHX_ const void *k1, const void *k2, unsigned held, sub_node *n)
{
    if ((S.node_cache_used + 1) * 2 > S.node_cache_cap) {
        size_t ncap = S.node_cache_cap ? S.node_cache_cap * 2 : 1024;
        node_slot *t = calloc(ncap, sizeof *t);
        if (!t)
            croak("Devel::NYTP: out of memory");
        for (size_t j = 0; j < S.node_cache_cap; j++) {
            node_slot *e = &S.node_cache[j];
            if (!e->node)
                continue;
            size_t i = mix_ptrs(e->k1, e->k2) & (ncap - 1);
            while (t[i].node)
                i = (i + 1) & (ncap - 1);
            t[i] = *e;
        }
        free(S.node_cache);
        S.node_cache = t;
        S.node_cache_cap = ncap;
    }
    size_t mask = S.node_cache_cap - 1;
    size_t i = mix_ptrs(k1, k2) & mask;
    while (S.node_cache[i].node)
        i = (i + 1) & mask;
    if (held & 1)
        share_hek_hek((HEK *)k1);
    if (held & 2)
        share_hek_hek((HEK *)k2);
    S.node_cache[i] = (node_slot){k1, k2, n, held};
    S.node_cache_used++;
}

/* Let the names go (at the end, while the interpreter is alive). */
void node_cache_clear(pTHX)
{
    for (size_t j = 0; j < S.node_cache_cap; j++) {
        node_slot *e = &S.node_cache[j];
        if (e->node && PL_phase != PERL_PHASE_DESTRUCT) {
            if (e->held & 1)
                Perl_unshare_hek(aTHX_ (HEK *)e->k1);
            if (e->held & 2)
                Perl_unshare_hek(aTHX_ (HEK *)e->k2);
        }
    }
    free(S.node_cache);
    S.node_cache = NULL;
    S.node_cache_cap = S.node_cache_used = 0;
    memset(gv_cache, 0, sizeof gv_cache); /* their strings were let go */
    memset(site_cache, 0, sizeof site_cache);
    memset(slowop_cache, 0, sizeof slowop_cache);
}

/* "Pkg::BEGIN" becomes "Pkg::BEGIN@LINE" (in %DB::sub too), so that the
 * BEGIN blocks of a file (every 'use' is one) can be told apart. */
sub_node *name_begin_block(pTHX_ sub_node *n)
{
    SV *full = newSVpvn(n->full, n->full_len);
    SV *where = hv_delete(GvHV(PL_DBsub), SvPVX(full), (I32)SvCUR(full), 0);
    if (where) {
        const char *s = SvPV_nolen(where);
        const char *colon = strrchr(s, ':');
        UV line;
        const char *dash = colon ? strchr(colon + 1, '-') : NULL;
        if (colon && dash && colon[1] != '-' && grok_number(colon + 1, (STRLEN)(dash - colon - 1), &line)) {
            SvREFCNT_inc_simple_void(where);
            sv_catpvf(full, "@%u", (unsigned)line);
            if (hv_exists(GvHV(PL_DBsub), SvPVX(full), (I32)SvCUR(full)))
                sv_catpvf(full, ".%u", ++S.dup_begin_seq);
            (void)hv_store(GvHV(PL_DBsub), SvPVX(full), (I32)SvCUR(full), where, 0);
            n = node_named(aTHX_ n->pkg, strlen(n->pkg), SvPVX(full) + n->sub_off,
                           SvCUR(full) - n->sub_off);
        }
    }
    SvREFCNT_dec(full);
    return n;
}

/* The sub a glob names: its stash's name (ph) and its own (nh); slot is
 * the glob's in gv_cache, which missed (node_for_gv). */
sub_node *node_for_gv_slow(pTHX_ GV *gv, HEK *ph, HEK *nh, gv_slot *slot)
{
    sub_node *n = node_cached(aTHX_ ph, nh);
    if (!n) {
        n = node_named(aTHX_ ph ? HEK_KEY(ph) : NULL, ph ? (STRLEN)HEK_LEN(ph) : 0, HEK_KEY(nh),
                       (STRLEN)HEK_LEN(nh));
        node_cache_put(aTHX_ ph, nh, (ph ? 1 : 0) | 2, n);
    }
    *slot = (gv_slot){gv, ph, nh, n};
    return n;
}

/* node_for_slowop's memo missed: the node of a slow op called from
 * package ph (slowops=2), or of CORE's (slowops=1), from node_cache, or
 * made. */
sub_node *node_for_slowop_slow(pTHX_ const HEK *ph, uintptr_t k2, slowop_slot *slot,
                               OPCODE type)
{
    sub_node *n = node_cached(aTHX_ ph, (const void *)k2);
    if (!n) {
        const char *opname = PL_op_name[type];
        if (OPT(O_SLOWOPS) == 1) {
            n = node_named(aTHX_ "CORE", 4, opname, strlen(opname));
        } else {
            char buf[64];
            int len = snprintf(buf, sizeof buf, "CORE:%s", opname);
            n = node_named(aTHX_ ph ? HEK_KEY(ph) : NULL, ph ? (STRLEN)HEK_LEN(ph) : 0, buf,
                           (STRLEN)len);
        }
        node_cache_put(aTHX_ ph, (const void *)k2, ph ? 1 : 0, n);
    }
    *slot = (slowop_slot){ph, k2, n};
    return n;
}

static inline size_t arc_hash(const sub_node *called, const sub_node *caller, unsigned fid, int line)
{
    return mix_ptrs(called, (const char *)caller + ((size_t)fid << 20) + (size_t)(unsigned)line);
}

static arc_stats *arc_lookup(pTHX_ sub_node *called, sub_node *caller, unsigned fid, int line);

/* The arc of a call of called from caller at fid:line, made (zeroed) on
 * first use. */
arc_stats *arc_for(pTHX_ sub_node *called, sub_node *caller, unsigned fid, int line)
{
    /* the arc this sub was last called by, if it is this one again (a
     * loop calling it from one place): checked in full, so an arc
     * forgotten by arcs_clear or another arc at its index is no answer */
    size_t last = called->last_arc;
    if (last && last <= S.narcs) {
        arc_stats *a = &S.arcs[last - 1];
        if (a->called == called && a->caller == caller && a->fid == fid && a->line == line)
            return a;
    }
    arc_stats *a = arc_lookup(aTHX_ called, caller, fid, line);
    called->last_arc = (size_t)(a - S.arcs) + 1;
    return a;
}

static arc_stats *arc_lookup(pTHX_ sub_node *called, sub_node *caller, unsigned fid, int line)
{
    if (S.arc_index_cap) {
        size_t mask = S.arc_index_cap - 1;
        for (size_t i = arc_hash(called, caller, fid, line) & mask;; i = (i + 1) & mask) {
            uint32_t k = S.arc_index[i];
            if (!k)
                break;
            arc_stats *a = &S.arcs[k - 1];
            if (a->called == called && a->caller == caller && a->fid == fid && a->line == line)
                return a;
        }
    }
    grow_or_croak(aTHX_ (void **)&S.arcs, &S.arcs_cap, S.narcs + 1, 1024, sizeof *S.arcs);
    if ((S.narcs + 1) * 2 > S.arc_index_cap) {
        size_t ncap = S.arc_index_cap ? S.arc_index_cap * 2 : 2048;
        uint32_t *t = calloc(ncap, sizeof *t);
        if (!t)
            croak("Devel::NYTP: out of memory");
        for (size_t k = 0; k < S.narcs; k++) {
            const arc_stats *a = &S.arcs[k];
            size_t i = arc_hash(a->called, a->caller, a->fid, a->line) & (ncap - 1);
            while (t[i])
                i = (i + 1) & (ncap - 1);
            t[i] = (uint32_t)(k + 1);
        }
        free(S.arc_index);
        S.arc_index = t;
        S.arc_index_cap = ncap;
    }
    arc_stats *a = &S.arcs[S.narcs++];
    memset(a, 0, sizeof *a);
    a->called = called;
    a->caller = caller;
    a->fid = fid;
    a->line = line;
    size_t mask = S.arc_index_cap - 1;
    size_t i = arc_hash(called, caller, fid, line) & mask;
    while (S.arc_index[i])
        i = (i + 1) & mask;
    S.arc_index[i] = (uint32_t)S.narcs;
    return a;
}

/* Forget the arcs (a fork's child, the end of a profile): the subs are
 * new to the next profile. */
void arcs_clear(pTHX)
{
    S.narcs = 0;
    if (++S.arcs_gen == 0) /* wrapped: an old call site could match */
        S.arcs_gen = 1;
    if (S.arc_index)
        memset(S.arc_index, 0, S.arc_index_cap * sizeof *S.arc_index);
    if (S.nodes_hv) {
        SV *sv;
        char *key;
        I32 klen;
        hv_iterinit(S.nodes_hv);
        while ((sv = hv_iternextsv(S.nodes_hv, &key, &klen)))
            if (SvIOK(sv))
                (INT2PTR(sub_node *, SvIVX(sv)))->called_seen = 0;
    }
}

/* files.c — file ids: a file or string eval gets one when first seen,
 * written to the profile at once. */
#include "nytp_prof.h"

/* ---- files ----------------------------------------------------------------- */

/* "(eval N)" or "(re_eval N)" at the start, followed by ']' or ')' at the end. */
int name_is_eval(const char *name, STRLEN len)
{
    if (len < 6 || (name[len - 1] != ']' && name[len - 1] != ')'))
        return 0;
    const char *p;
    if (strncmp(name, "(eval ", 6) == 0)
        p = name + 6;
    else if (len > 9 && strncmp(name, "(re_eval ", 9) == 0)
        p = name + 9;
    else
        return 0;
    if (!isdigit((unsigned char)*p))
        return 0;
    while (isdigit((unsigned char)*p))
        p++;
    return *p == ')';
}

static int is_dash_e(const char *name, STRLEN len)
{
    return name[0] == '-' && (len == 1 || (len == 2 && name[1] == 'e'));
}

/* A .pm file that perl really loaded from a newer .pmc beside it. */
static int loaded_from_pmc(const char *name, STRLEN len)
{
    if (len <= 3 || memcmp(name + len - 3, ".pm", 3) != 0)
        return 0;
    char *pmc = malloc(len + 2);
    if (!pmc)
        return 0;
    memcpy(pmc, name, len);
    pmc[len] = 'c';
    pmc[len + 1] = 0;
    struct stat pm_st, pmc_st;
    int r = 0;
    if (lstat(pmc, &pmc_st) == 0)
        r = lstat(name, &pm_st) < 0 || pm_st.st_mtime < pmc_st.st_mtime;
    free(pmc);
    return r;
}

/* The latest file (not itself a split file) whose name ends with the base
 * name of the file an autosplit file was split from. */
static const fid_info *autosplit_parent(const char *name)
{
    const char *end = strstr(name, " (autosplit");
    const char *base = end;
    while (base > name && base[-1] != '/')
        base--;
    size_t blen = (size_t)(end - base);
    const fid_info *match = NULL;
    for (unsigned ix = 1; ix < S.nentries; ix++) {
        const fid_info *e = &S.fids[ix];
        if ((e->flags & NYTP_FIDF_IS_AUTOSPLIT) || e->key_len < blen)
            continue;
        const char *tail = e->key + e->key_len - blen;
        if (memcmp(tail, base, blen) != 0)
            continue;
        if (e->key_len > blen && tail[-1] != '/')
            continue;
        match = e;
    }
    return match;
}

/* The name perl uses for file id fid (that of its first entry). */
const char *file_key(unsigned fid)
{
    for (unsigned ix = fid; ix <= S.nentries; ix++)
        if (S.fids[ix].id == fid && !(S.fids[ix].flags & NYTP_FIDF_IS_ALIAS))
            return S.fids[ix].key;
    return NULL;
}

void emit_fid(const fid_info *f)
{
    const char *name = f->abs ? f->abs : f->key;
    size_t len = f->abs ? strlen(f->abs) : f->key_len;
    nytp_write_new_fid(S.w, f->id, f->eval_fid, f->eval_line, f->flags, 0, 0,
                       str_n(name, len, false));
}

/* Every file id known, into a new file's header (a later segment, a
 * forked child's file), each after the file its string eval ran in, as
 * they were first written: an eval's id can be lower than its file's (a
 * file first named by an eval's name gets its id while the eval's is
 * being made), and a reader takes an eval whose file it has not seen
 * yet for a file. */
void emit_all_fids(void)
{
    unsigned n = S.nfids;
    unsigned *entry = calloc((size_t)n + 1, sizeof *entry); /* id -> index */
    unsigned *chain = calloc((size_t)n + 1, sizeof *chain);
    unsigned char *done = calloc((size_t)n + 1, 1);
    if (!entry || !chain || !done) { /* no memory: in the order of the ids */
        for (unsigned ix = 1; ix <= S.nentries; ix++)
            if (!(S.fids[ix].flags & NYTP_FIDF_IS_ALIAS))
                emit_fid(&S.fids[ix]);
        goto out;
    }
    for (unsigned ix = 1; ix <= S.nentries; ix++) {
        const fid_info *f = &S.fids[ix];
        if (!(f->flags & NYTP_FIDF_IS_ALIAS) && f->id <= n && !entry[f->id])
            entry[f->id] = ix;
    }
    for (unsigned id = 1; id <= n; id++) {
        /* the ids not written yet from this one up through its evals'
         * files, then written from the top down (no recursion: evals in
         * evals can nest thousands deep) */
        unsigned depth = 0;
        for (unsigned at = id; at && at <= n && entry[at] && !done[at];
             at = S.fids[entry[at]].eval_fid) {
            done[at] = 1;
            chain[depth++] = at;
        }
        while (depth)
            emit_fid(&S.fids[entry[chain[--depth]]]);
    }
out:
    free(entry);
    free(chain);
    free(done);
}

/* The id of a file, or 0 if it has none and create_via is 0.  A new id is
 * written to the profile at once (after that of the file a string eval ran
 * in, which a new eval's name leads to). */
unsigned file_id(pTHX_ const char *name, STRLEN len, unsigned create_via)
{
    SV **svp = hv_fetch(S.fid_hv, name, (I32)len, 0);
    if (svp)
        return S.fids[SvUV(*svp)].id;
    if (!create_via)
        return 0;
    /* An id taken is always declared (a NEW_FID): Devel::NYTProf's reader
     * stops at a gap in the ids.  So what can run out of memory is done
     * before the id is taken, and a file of a string eval whose file
     * could not be made gives its id back (it was the last taken); the
     * name is known (fid_hv) only once it has its id for good.  Out of
     * memory, a file has no id (0): its statements are not recorded. */
    if (grow_array((void **)&S.fids, &S.fid_cap, (size_t)S.nentries + 2, 64, sizeof *S.fids) < 0)
        return 0;
    char *key = malloc(len + 1);
    if (!key)
        return 0;
    unsigned ix = ++S.nentries;
    unsigned id = ++S.nfids;
    fid_info *f = &S.fids[ix];
    memset(f, 0, sizeof *f);
    f->id = id;
    f->key = key;
    memcpy(f->key, name, len);
    f->key[len] = 0;
    f->key_len = len;

    unsigned eval_fid = 0, eval_line = 0;
    if (name[0] == '(') {
        if (name[len - 1] == ']') {
            /* "(eval 12)[file:line]": the file the eval ran in first */
            const char *open = memchr(name, '[', len);
            const char *colon = NULL;
            for (const char *p = name + len - 1; p > name; p--)
                if (*p == ':') {
                    colon = p;
                    break;
                }
            if (open && colon && open < colon) {
                eval_fid = file_id(aTHX_ open + 1, (STRLEN)(colon - open - 1),
                                   NYTP_FIDF_IS_EVAL | create_via);
                if (!eval_fid)
                    goto out_of_memory;
                eval_line = (unsigned)atoi(colon + 1);
            }
            /* else a '#line' name that only looks like an eval: a file
             * (Devel::NYTProf gives it an id it never declares) */
        } else if (name_is_eval(name, len)) {
            static const char unknown[] = "/unknown-eval-invoker";
            eval_fid = file_id(aTHX_ unknown, sizeof unknown - 1,
                               NYTP_FIDF_IS_EVAL | NYTP_FIDF_IS_FAKE | create_via);
            if (!eval_fid)
                goto out_of_memory;
            eval_line = 1;
        }
    }
    if (!eval_fid) {
        /* Class::MOP names the code it generates with '#line N "... defined
         * at FILE"': treat it as an eval run from FILE */
        static const char tag[] = " defined at ";
        const char *t = NULL;
        for (const char *p = name; p + sizeof tag - 1 <= name + len; p++)
            if (memcmp(p, tag, sizeof tag - 1) == 0) {
                t = p;
                break;
            }
        if (t) {
            const char *definer = t + sizeof tag - 1;
            eval_fid = file_id(aTHX_ definer, (STRLEN)(name + len - definer), create_via);
            if (!eval_fid)
                goto out_of_memory;
            eval_line = 1;
        }
    }
    f = &S.fids[ix]; /* the recursion may have moved the array */
    (void)hv_store(S.fid_hv, name, (I32)len, newSVuv(ix), 0);
    if (len > 1 && name[len - 1] == ')' && strstr(name, " (autosplit ")) {
        /* "lib/Foo.pm (autosplit into lib/auto/Foo/bar.al)": an AutoLoader
         * sub split out of Foo.pm is shown in Foo.pm, under its id */
        const fid_info *parent =
            ix == S.nentries && id == S.nfids ? autosplit_parent(name) : NULL;
        if (parent) {
            /* an alias: never written as a NEW_FID, but its source lines
             * are saved under the parent's id, as Devel::NYTProf does */
            f->id = parent->id;
            f->eval_fid = parent->eval_fid;
            f->eval_line = parent->eval_line;
            f->flags = parent->flags | NYTP_FIDF_IS_ALIAS;
            S.nfids--;
            return f->id;
        }
        f->flags |= NYTP_FIDF_IS_AUTOSPLIT;
    }
    f->eval_fid = eval_fid;
    f->eval_line = eval_line;

    if (!eval_fid && !is_dash_e(name, len) && name[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) {
            note("Devel::NYTP: getcwd: %s\n", strerror(errno));
        } else {
            /* f->key, not name: a file first named inside a string
             * eval's name ("(eval 3)[lib/Foo.pm:12]") is not a string of
             * its own */
            const char *rel = f->key;
            const char *sep = "/";
            if (strcmp(cwd, "/") == 0)
                sep = "";
            else if (strncmp(rel, "./", 2) == 0)
                rel += 2;
            size_t n = strlen(cwd) + strlen(sep) + strlen(rel) + 1;
            f->abs = malloc(n);
            if (f->abs)
                snprintf(f->abs, n, "%s%s%s", cwd, sep, rel);
        }
    }
    if (loaded_from_pmc(f->abs ? f->abs : f->key, f->abs ? strlen(f->abs) : len))
        f->flags |= NYTP_FIDF_IS_PMC;
    f->flags |= create_via;

    GV *gv = gv_fetchfile_flags(name, len, 0);
    AV *src = gv ? GvAV(gv) : NULL;
    if (src && av_len(src) > -1)
        f->flags |= NYTP_FIDF_HAS_SRC;
    if (is_dash_e(name, len))
        f->flags |= NYTP_FIDF_IS_EVAL;
    if (eval_fid || (f->flags & NYTP_FIDF_IS_EVAL) || S.savesrc
        || (len > 10 && strncmp(name, "/loader/0x", 10) == 0))
        f->flags |= NYTP_FIDF_SAVE_SRC;
    if (S.w)
        emit_fid(f);
    TRACE(2, "New fid %2u (after %2u:%-4u) 0x%02x e%u:%u %s %s\n", id, S.last_fid, S.last_line,
          f->flags, f->eval_fid, f->eval_line, f->key, f->abs ? f->abs : "");
    return id;

out_of_memory: /* the file of the eval got no id, and gave back any it took */
    free(S.fids[ix].key);
    S.nentries--;
    S.nfids--;
    return 0;
}

void file_cache_put(const char *file, unsigned fid, const char *name)
{
    file_slot *slot = file_set_of(file);
    if (slot[0].ptr && slot[0].gen == S.file_gen)
        slot[1] = slot[0]; /* the other address of the set keeps its place */
    S.file_cache_used = 1;
    slot->gen = S.file_gen;
    slot->ptr = file;
    slot->fid = fid;
    slot->name = name;
}

unsigned cop_file_id(pTHX_ const COP *cop, unsigned create_via)
{
    const char *file = OutCopFILE(cop);
    if (!file)
        return 0;
    if (!cop_in_tree(cop))
        return file_id(aTHX_ file, strlen(file), create_via);
    const file_slot *slot = file_cache_get(file);
    if (slot)
        return slot->fid;
    unsigned fid = file_id(aTHX_ file, strlen(file), create_via);
    const char *name = fid ? file_key(fid) : NULL;
    if (name)
        file_cache_put(file, fid, name);
    return fid;
}

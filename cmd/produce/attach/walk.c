/* walk.c — reading a perl's call stack from outside. */
#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "perl_layout.h"

/* Bounds past which a stack is not believed: a torn read, not a perl. */
#define MAX_LEVELS 4096         /* stack infos (nested sorts, signals, magic) */
#define MAX_CX (1 << 20)        /* contexts in one stack info */
#define MAX_CX_BYTES ((size_t)256 << 20)
#define MAX_NAME 1024


static uint64_t get64(const uint8_t *b, size_t off)
{
    uint64_t v;
    memcpy(&v, b + off, 8);
    return v;
}
static uint32_t get32(const uint8_t *b, size_t off)
{
    uint32_t v;
    memcpy(&v, b + off, 4);
    return v;
}
static uint16_t get16(const uint8_t *b, size_t off)
{
    uint16_t v;
    memcpy(&v, b + off, 2);
    return v;
}

const char *walker_kind_name(frame_kind k)
{
    static const char *const names[] = {"sub", "anon", "begin", "xsub", "core",
                                        "eval", "string-eval", "require", "main"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

void walker_init(walker *w, attach_target *t)
{
    memset(w, 0, sizeof *w);
    w->t = t;
}

void walker_release(walker *w)
{
    strmap_release(&w->str);
    strmap_release(&w->evals);
    strmap_release(&w->src_files);
    for (size_t i = 0; i < w->nsrcs; i++)
        subsrc_release(&w->srcs[i]);
    free(w->srcs);
    free(w->f);
    free(w->cx);
}

/* Reading failed: the process is gone, we may not read it, or the sample
 * pointed somewhere that is not mapped (torn). */
static int read_fail(walker *w)
{
    int e = w->t->read_errno;
    if (e == ESRCH)
        return WALK_GONE;
    if (e == EPERM || e == EACCES)
        return WALK_DENIED;
    return WALK_TORN;
}

static uint32_t intern(walker *w, const char *s, size_t len)
{
    if (len > MAX_NAME)
        len = MAX_NAME;
    return strmap_add(&w->str, s, (uint32_t)len, false, NULL);
}

/* ---- one sample's reads -------------------------------------------------------- */

typedef struct sample_ctx {
    walker *w;
    uint8_t interp[PL_INTERP_SIZE];
    struct { uint64_t ptr; uint32_t id; } files[64];   /* file strings of this sample */
    size_t nfiles;
    /* statements and subs already read in this sample, by address: a deep
     * recursion is a few of each, read once */
    struct { uint64_t cop; uint32_t file, line; uint64_t stashoff; } cops[256];
    struct { uint64_t cv; walk_frame f; } cvs[256];
    int err;                    /* first failure */
} sample_ctx;

#define FAIL(c, code) do { if (!(c)->err) (c)->err = (code); return false; } while (0)

static bool rd(sample_ctx *c, uint64_t addr, void *buf, size_t len, unsigned align)
{
    if (!target_ptr_ok(addr, align))
        FAIL(c, WALK_TORN);
    if (!target_read(c->w->t, addr, buf, len))
        FAIL(c, read_fail(c->w));
    return true;
}

/* A C string of the target, interned; memo by address within the sample. */
static bool rd_cstr(sample_ctx *c, uint64_t ptr, uint32_t *id)
{
    for (size_t i = 0; i < c->nfiles; i++)
        if (c->files[i].ptr == ptr) {
            *id = c->files[i].id;
            return true;
        }
    char buf[MAX_NAME + 1];
    if (!target_ptr_ok(ptr, 1))
        FAIL(c, WALK_TORN);
    if (!target_read_str(c->w->t, ptr, buf, sizeof buf))
        FAIL(c, read_fail(c->w));
    *id = intern(c->w, buf, strlen(buf));
    if (*id == NYTP_NONE)
        FAIL(c, WALK_TORN);
    if (c->nfiles < sizeof c->files / sizeof *c->files) {
        c->files[c->nfiles].ptr = ptr;
        c->files[c->nfiles++].id = *id;
    }
    return true;
}

static unsigned op_type_of(const uint8_t *op)
{
    return (get32(op, PL_OP_TYPE_OFF) >> PL_OP_TYPE_SHIFT) & PL_OP_TYPE_MASK;
}

/* A statement (COP_SIZE bytes read): a nextstate or a dbstate. */
static bool is_cop(const uint8_t *op)
{
    unsigned type = op_type_of(op);
    return type == PL_OP_NEXTSTATE || type == PL_OP_DBSTATE;
}

/* A statement: its file (raw, "(eval 3)" for a string eval's) and line.
 * PL_compiling is inside the interpreter, read with it. */
static bool rd_cop_uncached(sample_ctx *c, uint64_t cop, uint32_t *file, uint32_t *line,
                            uint64_t *stashoff);

static bool rd_cop(sample_ctx *c, uint64_t cop, uint32_t *file, uint32_t *line, uint64_t *stashoff)
{
    size_t h = (size_t)(cop >> 3) & 255;
    if (cop && c->cops[h].cop == cop) {
        *file = c->cops[h].file;
        *line = c->cops[h].line;
        if (stashoff)
            *stashoff = c->cops[h].stashoff;
        return true;
    }
    uint64_t so = 0;
    if (!rd_cop_uncached(c, cop, file, line, &so))
        return false;
    if (stashoff)
        *stashoff = so;
    c->cops[h].cop = cop;
    c->cops[h].file = *file;
    c->cops[h].line = *line;
    c->cops[h].stashoff = so;
    return true;
}

static bool rd_cop_uncached(sample_ctx *c, uint64_t cop, uint32_t *file, uint32_t *line,
                            uint64_t *stashoff)
{
    uint8_t buf[PL_COP_SIZE];
    const uint8_t *b;
    if (cop == c->w->t->interp + PL_I_COMPILING) {
        b = c->interp + PL_I_COMPILING;
    } else {
        if (!rd(c, cop, buf, sizeof buf, 8))
            return false;
        if (!is_cop(buf))
            FAIL(c, WALK_TORN);
        b = buf;
    }
    *line = PL_LINE_SIZE == 4 ? get32(b, PL_COP_LINE) : get16(b, PL_COP_LINE);
    if (stashoff)
        *stashoff = get64(b, PL_COP_STASHOFF);
    uint64_t fp = get64(b, PL_COP_FILE);
    if (!fp) {
        *file = intern(c->w, "", 0);
        return *file != NYTP_NONE;
    }
    return rd_cstr(c, fp, file);
}

/* A HEK's bytes into buf (NUL-terminated); false when unreadable. */
static bool rd_hek(sample_ctx *c, uint64_t hek, char *buf, size_t size)
{
    uint8_t h[PL_HEK_KEY];
    if (!rd(c, hek, h, sizeof h, 4))
        return false;
    int32_t len = (int32_t)get32(h, PL_HEK_LEN);
    if (len < 0 || (size_t)len >= size)
        FAIL(c, WALK_TORN);
    if (len && !rd(c, hek + PL_HEK_KEY, buf, (size_t)len, 1))
        return false;
    buf[len] = 0;
    return true;
}

/* A stash's name. */
static bool rd_stash_name(sample_ctx *c, uint64_t hv, char *buf, size_t size)
{
    uint8_t head[24];
    if (!rd(c, hv, head, sizeof head, 8))
        return false;
    uint32_t flags = get32(head, PL_SV_FLAGS);
    if ((flags & PL_SVT_MASK) != PL_SVT_PVHV || !(flags & PL_SVF_OOK))
        FAIL(c, WALK_TORN);
    uint64_t body = get64(head, PL_SV_ANY);
    uint8_t aux[PL_AUX_NAME_COUNT + 4];
    if (!rd(c, body + PL_XHV_AUX, aux, sizeof aux, 8))
        return false;
    uint64_t name = get64(aux, PL_AUX_NAME);
    int32_t count = (int32_t)get32(aux, PL_AUX_NAME_COUNT);
    if (count) {
        uint64_t names[2];
        if (!rd(c, name, names, sizeof names, 8))
            return false;
        name = names[0] ? names[0] : count < 0 ? names[1] : 0;
    }
    if (!name)
        FAIL(c, WALK_TORN);
    return rd_hek(c, name, buf, size);
}

/* The first statement of a sub (CvSTART): its line, 0 when it is not a
 * statement. */
static uint32_t first_line(sample_ctx *c, uint64_t start)
{
    uint8_t buf[PL_COP_SIZE];
    if (!target_ptr_ok(start, 8) || !target_read(c->w->t, start, buf, sizeof buf))
        return 0;
    if (!is_cop(buf))
        return 0;
    return PL_LINE_SIZE == 4 ? get32(buf, PL_COP_LINE) : get16(buf, PL_COP_LINE);
}

#define MAX_SOURCE ((size_t)32 << 20)

/* The anonymous subs of a file, read as the target sees it (through its
 * root and its current directory) on first use; an empty table when it
 * cannot be read (a string eval's "file", -e, a file gone or not a
 * regular file). */
static const subsrc *source_of(walker *w, uint32_t file)
{
    static const subsrc none = {0};
    const char *name = walker_str(w, file);
    uint32_t len = w->str.v[file].len;
    bool added;
    uint32_t id = strmap_add(&w->src_files, name, len, false, &added);
    if (id == NYTP_NONE)
        return &none;
    if (!added)
        return w->src_files.v[id].value == NYTP_NONE ? &none : &w->srcs[w->src_files.v[id].value];
    if (!name[0] || strncmp(name, "(eval ", 6) == 0 || strcmp(name, "-e") == 0 || strcmp(name, "-E") == 0)
        return &none;
    char path[PATH_MAX + 64];
    if (snprintf(path, sizeof path, name[0] == '/' ? "/proc/%d/root%s" : "/proc/%d/cwd/%s",
                 (int)w->t->pid, name) >= (int)sizeof path)
        return &none;
    /* never blocks on a FIFO nor opens a device: a regular file only */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return &none;
    struct stat st;
    char *text = NULL;
    size_t got = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= MAX_SOURCE
        && (text = malloc((size_t)st.st_size + 1)) != NULL) {
        ssize_t r;
        while (got < (size_t)st.st_size
               && ((r = read(fd, text + got, (size_t)st.st_size - got)) > 0
                   || (r < 0 && errno == EINTR)))
            if (r > 0)
                got += (size_t)r;
    }
    close(fd);
    if (!text)
        return &none;
    if (!cli_grow_size((void **)&w->srcs, w->nsrcs + 1, &w->srcs_cap, sizeof *w->srcs)
        || subsrc_scan(&w->srcs[w->nsrcs], text, got) < 0) {
        free(text);
        return &none;
    }
    free(text);
    w->src_files.v[id].value = (uint32_t)w->nsrcs;
    return &w->srcs[w->nsrcs++];
}

/* "(eval 3)" as "(eval 3)[file:line]" when the eval was seen running. */
static uint32_t eval_named(walker *w, uint32_t file)
{
    const char *s = walker_str(w, file);
    if (strncmp(s, "(eval ", 6) != 0)
        return file;
    uint32_t e = strmap_find(&w->evals, s, w->str.v[file].len);
    return e == NYTP_NONE ? file : w->evals.v[e].value;
}

/* Name and kind of a CV (checked to be one). */
static bool rd_cv(sample_ctx *c, uint64_t cv, walk_frame *f)
{
    walker *w = c->w;
    uint8_t head[24];
    if (!rd(c, cv, head, sizeof head, 8))
        return false;
    if ((get32(head, PL_SV_FLAGS) & PL_SVT_MASK) != PL_SVT_PVCV)
        FAIL(c, WALK_TORN);
    uint64_t body_at = get64(head, PL_SV_ANY);
    uint8_t body[PL_XCV_FLAGS + 4];
    if (!rd(c, body_at, body, sizeof body, 8))
        return false;
    uint64_t stash = get64(body, PL_XCV_STASH), start = get64(body, PL_XCV_START);
    uint64_t gv = get64(body, PL_XCV_GV), file = get64(body, PL_XCV_FILE);
    uint32_t flags = PL_CV_FLAGS_SIZE == 4 ? get32(body, PL_XCV_FLAGS) : get16(body, PL_XCV_FLAGS);
    f->cv = cv;
    struct walk_cv *slot = &w->cache[(cv >> 4) * 0x9E3779B97F4A7C15ull >> 54 & (WALK_CACHE - 1)];
    if (slot->cv == cv && slot->gv == gv && slot->start == start && slot->file == file) {
        f->kind = slot->kind;
        f->name = slot->name;
        f->def_file = slot->def_file;
        f->def_line = slot->def_line;
        f->def_end = slot->def_end;
        return true;
    }
    char pkg[MAX_NAME + 1] = "", sub[MAX_NAME + 1] = "__ANON__";
    if (flags & PL_CVF_NAMED) {
        if (!rd_hek(c, gv, sub, sizeof sub) || (stash && !rd_stash_name(c, stash, pkg, sizeof pkg)))
            return false;
    } else if (gv) {
        uint8_t gh[24];
        if (!rd(c, gv, gh, sizeof gh, 8))
            return false;
        if ((get32(gh, PL_SV_FLAGS) & PL_SVT_MASK) != PL_SVT_PVGV)
            FAIL(c, WALK_TORN);
        uint8_t gb[PL_XGV_STASH + 8];
        if (!rd(c, get64(gh, PL_SV_ANY), gb, sizeof gb, 8))
            return false;
        uint64_t gstash = get64(gb, PL_XGV_STASH), hek = get64(gb, PL_XGV_NAMEHEK);
        if (!rd_hek(c, hek, sub, sizeof sub))
            return false;
        if (gstash && !rd_stash_name(c, gstash, pkg, sizeof pkg))
            return false;
    } else if (stash && !rd_stash_name(c, stash, pkg, sizeof pkg)) {
        return false;
    }
    if (!pkg[0])
        strcpy(pkg, "main");
    uint32_t def_file = NYTP_NONE, def_line = 0, def_end = 0;
    bool xsub = flags & PL_CVF_ISXSUB;
    if (file && !rd_cstr(c, file, &def_file))
        return false;
    if (!xsub)
        def_line = first_line(c, start);
    char name[3 * MAX_NAME];
    frame_kind kind = xsub ? FRAME_XSUB : FRAME_SUB;
    bool cacheable = true;
    if (!xsub && ((flags & PL_CVF_ANON) || strcmp(sub, "__ANON__") == 0)) {
        kind = FRAME_ANON;
        /* named as perl names it under the debugger's flags (as the
         * in-process profilers run it): by the line of the closing brace,
         * which the source tells; the first statement's when it cannot */
        if (def_file != NYTP_NONE && def_line)
            def_end = subsrc_end(source_of(w, def_file), def_line);
        uint32_t df = def_file == NYTP_NONE ? NYTP_NONE : eval_named(w, def_file);
        /* an eval's file not named yet: named once its eval is seen */
        cacheable = df == def_file || df != NYTP_NONE;
        if (df != NYTP_NONE && strncmp(walker_str(w, df), "(eval ", 6) == 0
            && !strchr(walker_str(w, df), '['))
            cacheable = false;
        if (strncmp(sub, "__ANON__[", 9) == 0) /* perl has named it so */
            snprintf(name, sizeof name, "%s::%s", pkg, sub);
        else
            snprintf(name, sizeof name, "%s::__ANON__[%s:%u]", pkg,
                     df == NYTP_NONE ? "" : walker_str(w, df), def_end ? def_end : def_line);
    } else if (!xsub && strcmp(sub, "BEGIN") == 0) {
        kind = FRAME_BEGIN;
        snprintf(name, sizeof name, "%s::BEGIN@%u", pkg, def_line);
    } else {
        snprintf(name, sizeof name, "%s::%s", pkg, sub);
    }
    f->kind = kind;
    f->name = intern(w, name, strlen(name));
    f->def_file = def_file;
    f->def_line = def_line;
    f->def_end = def_end;
    if (f->name == NYTP_NONE)
        FAIL(c, WALK_TORN);
    if (cacheable) {
        slot->cv = cv;
        slot->gv = gv;
        slot->start = start;
        slot->file = file;
        slot->kind = kind;
        slot->name = f->name;
        slot->def_file = def_file;
        slot->def_line = def_line;
        slot->def_end = def_end;
    }
    return true;
}

static const struct { int type; const char *name; } slowops[] = {PL_SLOWOPS};

static const char *slowop_name(unsigned type)
{
    for (size_t i = 0; i < sizeof slowops / sizeof *slowops; i++)
        if ((unsigned)slowops[i].type == type)
            return slowops[i].name;
    return NULL;
}

/* The xsub running now, if one is: while pp_entersub runs an xsub,
 * PL_op is the entersub and the sub it popped (a CV, a reference to one
 * or a glob) is still just above the stack pointer, until the xsub
 * returns values over it.  0 when that is not an xsub's CV (a perl sub
 * being entered; a slot already overwritten): not determinable then.
 * An xsub that has called back into perl is not seen (PL_op is the
 * callback's). */
static uint64_t running_xsub(sample_ctx *c, unsigned optype)
{
    attach_target *t = c->w->t;
    if (optype != PL_OP_ENTERSUB)
        return 0;
    uint64_t sp = get64(c->interp, PL_I_STACK_SP), sv = 0;
    if (!target_ptr_ok(sp, 8) || !target_read(t, sp + 8, &sv, 8))
        return 0;
    for (int hop = 0; hop < 2 && target_ptr_ok(sv, 8); hop++) {
        uint8_t head[24];
        if (!target_read(t, sv, head, sizeof head))
            return 0;
        uint32_t flags = get32(head, PL_SV_FLAGS);
        unsigned type = flags & PL_SVT_MASK;
        if (type == PL_SVT_PVCV) {
            uint8_t body[PL_XCV_FLAGS + 4];
            uint64_t any = get64(head, PL_SV_ANY);
            if (!target_ptr_ok(any, 8) || !target_read(t, any, body, sizeof body))
                return 0;
            uint32_t cvf = PL_CV_FLAGS_SIZE == 4 ? get32(body, PL_XCV_FLAGS) : get16(body, PL_XCV_FLAGS);
            return cvf & PL_CVF_ISXSUB ? sv : 0;
        }
        if (type == PL_SVT_PVGV) {
            uint64_t gp = get64(head, PL_SV_U);
            if (!target_ptr_ok(gp, 8) || !target_read(t, gp + PL_GP_CV, &sv, 8))
                return 0;
        } else if (flags & PL_SVF_ROK) {
            sv = get64(head, PL_SV_U);
        } else {
            return 0;
        }
    }
    return 0;
}

static walk_frame *push(walker *w)
{
    if (w->n == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 64;
        walk_frame *nf = realloc(w->f, ncap * sizeof *nf);
        if (!nf)
            return NULL;
        w->f = nf;
        w->cap = ncap;
    }
    walk_frame *f = &w->f[w->n++];
    memset(f, 0, sizeof *f);
    f->def_file = NYTP_NONE;
    return f;
}

/* The stack infos from the current one out: their contexts read into
 * w->cx, one block per level; levels[i] = (offset in w->cx, count). */
typedef struct { size_t at; int32_t n; } level;

static int sample(sample_ctx *c)
{
    walker *w = c->w;
    attach_target *t = w->t;
    w->n = 0;
    if (!target_read(t, t->interp, c->interp, sizeof c->interp))
        return read_fail(w);
    uint64_t si = get64(c->interp, PL_I_CURSTACKINFO);
    uint64_t curcop = get64(c->interp, PL_I_CURCOP);
    uint64_t op = get64(c->interp, PL_I_OP);
    uint64_t stashpad = get64(c->interp, PL_I_STASHPAD);
    uint32_t phase = get32(c->interp, PL_I_PHASE);
    w->compiling = phase == PL_PHASE_START;
    if (!target_ptr_ok(si, 8) || !target_ptr_ok(curcop, 8))
        return WALK_TORN;

    static level levels[MAX_LEVELS];
    size_t nlevels = 0, used = 0;
    while (si) {
        uint8_t sib[PL_SI_SIZE];
        if (nlevels == MAX_LEVELS || !rd(c, si, sib, sizeof sib, 8))
            return c->err ? c->err : WALK_TORN;
        int32_t cxix = (int32_t)get32(sib, PL_SI_CXIX), cxmax = (int32_t)get32(sib, PL_SI_CXMAX);
        uint64_t cxstack = get64(sib, PL_SI_CXSTACK);
        if (cxix < -1 || cxix > cxmax || cxmax >= MAX_CX)
            return WALK_TORN;
        size_t bytes = (size_t)(cxix + 1) * PL_CX_SIZE;
        if (used + bytes > MAX_CX_BYTES)
            return WALK_TORN;
        if (used + bytes > w->cx_cap) {
            size_t ncap = w->cx_cap ? w->cx_cap : 65536;
            while (ncap < used + bytes)
                ncap *= 2;
            uint8_t *n = realloc(w->cx, ncap);
            if (!n)
                return WALK_TORN;
            w->cx = n;
            w->cx_cap = ncap;
        }
        if (bytes && !rd(c, cxstack, w->cx + used, bytes, 8))
            return c->err;
        levels[nlevels].at = used;
        levels[nlevels++].n = cxix + 1;
        used += bytes;
        si = get64(sib, PL_SI_PREV);
    }

    /* the raw frames, innermost first: each frame's place is where it is
     * now (file names of string evals not yet resolved) */
    uint64_t cur = curcop;
    uint32_t file, line;
    w->at_compiling = curcop == t->interp + PL_I_COMPILING;
    uint64_t stashoff;
    if (!rd_cop(c, cur, &file, &line, &stashoff))
        return c->err;
    unsigned optype = 0;
    if (target_ptr_ok(op, 8)) {
        uint8_t ob[PL_OP_TYPE_OFF + 4];
        if (target_read(t, op, ob, sizeof ob))
            optype = op_type_of(ob);
    }
    const char *core = slowop_name(optype);
    if (core) {
        char pkg[MAX_NAME + 1] = "main";
        uint64_t stash = 0;
        if (target_ptr_ok(stashpad, 8) && stashoff < (1u << 24)
            && target_read(t, stashpad + 8 * stashoff, &stash, 8) && stash) {
            if (!rd_stash_name(c, stash, pkg, sizeof pkg))
                return c->err;
        }
        char name[MAX_NAME + 64];
        snprintf(name, sizeof name, "%s::CORE:%s", pkg, core);
        walk_frame *f = push(w);
        if (!f)
            return WALK_TORN;
        f->kind = FRAME_CORE;
        f->name = intern(w, name, strlen(name));
        if (f->name == NYTP_NONE)
            return WALK_TORN;
        f->level = (int32_t)nlevels - 1;
        f->ix = INT32_MAX;
        f->cv = optype;
        f->cop = curcop;
        f->file = file;
        f->line = line;
    }
    uint64_t xsub = core ? 0 : running_xsub(c, optype);
    if (xsub) {
        walk_frame *f = push(w);
        if (!f)
            return WALK_TORN;
        f->kind = FRAME_SUB; /* named below; an xsub is checked to be one */
        f->file = file;
        f->line = line;
        f->level = (int32_t)nlevels - 1;
        f->ix = INT32_MAX;
        f->cv = xsub;
        f->cop = curcop;
    }
    for (size_t l = 0; l < nlevels; l++) {
        for (int32_t ix = levels[l].n - 1; ix >= 0; ix--) {
            const uint8_t *cx = w->cx + levels[l].at + (size_t)ix * PL_CX_SIZE;
            unsigned type = cx[PL_CX_TYPE] & PL_CXTYPEMASK;
            if (type != PL_CXT_SUB && type != PL_CXT_FORMAT && type != PL_CXT_EVAL)
                continue;
            walk_frame *f = push(w);
            if (!f)
                return WALK_TORN;
            f->file = file;
            f->line = line;
            f->level = (int32_t)(nlevels - 1 - l);
            f->ix = ix;
            f->saveix = (int32_t)get32(cx, PL_CX_OLDSAVEIX);
            f->cop = get64(cx, PL_CX_OLDCOP);
            if (type == PL_CXT_EVAL) {
                unsigned old = get16(cx, PL_CX_U16) >> 7;
                f->kind = old == PL_OP_ENTEREVAL ? FRAME_STRING_EVAL
                          : old == PL_OP_REQUIRE || old == PL_OP_DOFILE ? FRAME_REQUIRE
                                                                       : FRAME_EVAL;
                f->name = intern(w, "(eval)", 6);
                if (f->name == NYTP_NONE)
                    return WALK_TORN;
            } else {
                f->kind = FRAME_SUB; /* named below, once evals are */
                f->cv = get64(cx, PL_CX_SUB_CV);
                if (!f->cv) {
                    /* entersub has pushed the block, not yet the sub (seen
                     * with the perl stopped): the caller is still calling */
                    w->n--;
                    continue;
                }
            }
            cur = get64(cx, PL_CX_OLDCOP);
            if (!rd_cop(c, cur, &file, &line, NULL))
                return c->err;
        }
    }
    walk_frame *m = push(w);
    if (!m)
        return WALK_TORN;
    m->kind = FRAME_MAIN;
    m->name = intern(w, "main::RUNTIME", 13);
    if (m->name == NYTP_NONE)
        return WALK_TORN;
    m->file = file;
    m->line = line;

    /* string evals named as Devel::NYTProf names them, outermost first:
     * "(eval N)[where it was called:line]" */
    for (size_t i = w->n; i-- > 0;) {
        walk_frame *f = &w->f[i];
        f->file = eval_named(w, f->file);
        if (f->kind == FRAME_STRING_EVAL && i + 1 < w->n) {
            const char *raw = walker_str(w, f->file);
            if (strncmp(raw, "(eval ", 6) == 0 && !strchr(raw, '[')) {
                char full[3 * MAX_NAME];
                const walk_frame *up = &w->f[i + 1];
                snprintf(full, sizeof full, "%s[%s:%u]", raw, walker_str(w, up->file), up->line);
                /* raw points into w->str, which interning may move: the
                 * eval's own name is added first */
                uint32_t e = strmap_add(&w->evals, raw, (uint32_t)strlen(raw), false, NULL);
                uint32_t id = intern(w, full, strlen(full));
                if (id == NYTP_NONE || e == NYTP_NONE)
                    return WALK_TORN;
                w->evals.v[e].value = id;
                f->file = id;
            }
        }
    }
    /* frames above a string eval were read before it was named */
    for (size_t i = 0; i < w->n; i++) {
        walk_frame *f = &w->f[i];
        f->file = eval_named(w, f->file);
        if (f->kind == FRAME_SUB && f->cv) {
            size_t h = (size_t)(f->cv >> 3) & 255;
            if (c->cvs[h].cv == f->cv) {
                walk_frame keep = *f;
                *f = c->cvs[h].f;
                f->file = keep.file;
                f->line = keep.line;
                f->level = keep.level;
                f->ix = keep.ix;
                f->saveix = keep.saveix;
                f->cop = keep.cop;
            } else {
                if (!rd_cv(c, f->cv, f))
                    return c->err;
                c->cvs[h].cv = f->cv;
                c->cvs[h].f = *f;
            }
        }
    }
    return WALK_OK;
}

int walker_sample(walker *w)
{
    static sample_ctx c;    /* the interpreter's bytes are large for a stack */
    memset(&c.cops, 0, sizeof c.cops);
    memset(&c.cvs, 0, sizeof c.cvs);
    c.nfiles = 0;
    c.err = 0;
    c.w = w;
    w->samples++;
    int rc = sample(&c);
    if (rc == WALK_TORN)
        w->torn++;
    return rc;
}

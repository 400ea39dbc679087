/* walk.h — one sample of a running perl's call stack, read from outside
 * (target.h) with the layout generated from this perl's headers.
 *
 * The stack is read as caller() sees it: the interpreter's current
 * statement, then every context of every stack level (sort blocks,
 * signal handlers and magic run on stacks of their own, linked through
 * si_prev), innermost first.  Nothing is written to the target and
 * nothing stops it, so a context may change while it is read: every
 * pointer, type and index is checked, and a sample that does not hold
 * together is reported torn (WALK_TORN), to be dropped, never retried.
 *
 *     walker w;
 *     walker_init(&w, &target);
 *     if (walker_sample(&w) == WALK_OK)
 *         for (size_t i = 0; i < w.n; i++) ... w.f[i], walker_str(&w, w.f[i].name)
 *     walker_release(&w);
 */
#ifndef NYTP_ATTACH_WALK_H
#define NYTP_ATTACH_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strmap.h"
#include "subsrc.h"
#include "target.h"

typedef enum {
    FRAME_SUB,      /* a perl sub: Pkg::name */
    FRAME_ANON,     /* Pkg::__ANON__[file:line] */
    FRAME_BEGIN,    /* Pkg::BEGIN@line, run while its file compiles */
    FRAME_XSUB,     /* a sub written in C */
    FRAME_CORE,     /* a builtin Devel::NYTP profiles: Pkg::CORE:name */
    FRAME_EVAL,     /* eval BLOCK or try */
    FRAME_STRING_EVAL,  /* eval STRING */
    FRAME_REQUIRE,  /* require or do FILE */
    FRAME_MAIN,     /* the program's top level: main::RUNTIME */
} frame_kind;

typedef struct walk_frame {
    frame_kind kind;
    uint32_t name;      /* strmap ids: the sub's name */
    uint32_t file;      /* where the frame is now (string evals named) */
    uint32_t line;
    uint32_t def_file;  /* where the sub is defined (subs), else NYTP_NONE */
    uint32_t def_line;  /* its first statement's line, 0 unknown */
    uint32_t def_end;   /* an anonymous sub's closing brace's line, 0 unknown */
    uint64_t cv;        /* the CV's address (0: none) */
    /* a call's place and identity, to tell a call seen again from a new
     * one: its stack level (0 the outermost) and context index, the
     * statement it was called from and the save stack index at entry */
    int32_t level, ix, saveix;
    uint64_t cop;
} walk_frame;

enum { WALK_OK = 0, WALK_TORN = -1, WALK_GONE = -2, WALK_DENIED = -3 };

#define WALK_CACHE 1024

typedef struct walker {
    attach_target *t;
    strmap str;             /* every name and file seen */
    strmap evals;           /* "(eval N)" -> value: id in str of its full name */
    walk_frame *f;          /* the last sample, innermost first */
    size_t n, cap;
    bool compiling;         /* the program's main file is being compiled */
    bool at_compiling;      /* the current statement is the compiler's (PL_compiling) */
    uint8_t *cx;            /* contexts read */
    size_t cx_cap;
    struct walk_cv {        /* names of subs by address, kept across samples */
        uint64_t cv, gv, start, file;
        uint32_t name, def_file, def_line, def_end;
        frame_kind kind;
    } cache[WALK_CACHE];
    /* the anonymous subs of each source file read (by file name; value:
     * index in srcs), for the lines perl would name them by */
    strmap src_files;
    subsrc *srcs;
    size_t nsrcs, srcs_cap;
    uint64_t samples, torn; /* counts of walker_sample calls and torn ones */
} walker;

void walker_init(walker *w, attach_target *t);
void walker_release(walker *w);
/* Read the stack now; WALK_OK with w->f[0..n) filled, or why not. */
int walker_sample(walker *w);
static inline const char *walker_str(const walker *w, uint32_t id)
{
    return strmap_str(&w->str, id);
}
/* A frame's kind as --json names it ("sub", "anon", ...). */
const char *walker_kind_name(frame_kind k);

#endif

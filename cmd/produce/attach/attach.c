/* attach.c — 'nytp attach PID': sample a running perl from outside into an
 * ordinary sampled NYTProf profile.
 *
 * Each sample is one walk of the target's stack (walk.h), weighted by
 * the wall time since the previous attempt, and kept as the in-process
 * sampler (profiler/sample.c, sample=HZ) keeps its own, so the two
 * profiles mean the same: line times by (file, line); a shadow stack of
 * the calls seen, each matched to perl's by its place (stack level,
 * context index) and identity (CV, calling statement, save stack index),
 * a call that is gone ending with its SUB_RETURN and one more call on
 * its arc.  Counts are the calls seen, a lower bound; the profile says
 * it was sampled (sample_hz, sample_count) so reports show them as
 * unknown.  A torn sample (the stack changed while it was read) is
 * dropped and counted (sample_invalid), never read again: a retry would
 * favour the states that last longest.  Its time is no sample's.
 *
 * Everything is kept in memory and written when sampling ends (the
 * duration is over, ^C or TERM, or the target exits), through
 * libformat's writer to a file written under a temporary name. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "strmap.h"
#include "nytp/writer.h"
#include "perl_layout.h"
#include "target.h"
#include "walk.h"

static const char usage[] =
    "usage: nytp attach [-o FILE] [--hz=N] [--duration=SECONDS] [--children] [--stop] PID\n"
    "\n"
    "Profile the running perl PID by sampling its call stack from outside,\n"
    "N times a second, until SECONDS have passed, ^C (or TERM, HUP), or it\n"
    "exits, and write an ordinary sampled NYTProf profile, as\n"
    "'nytp run --sample' writes: times estimated, counts unknown; every\n"
    "nytp report and Devel::NYTProf's readers take it.  Nothing is loaded\n"
    "into the perl or written to it, and it is not stopped (unless --stop).\n"
    "Only a perl of the version and build nytp was built with is read.\n"
    "\n"
    "  -o, --output=FILE   write the profile to FILE (default nytprof.out);\n"
    "                      --out is the same; written atomically\n"
    "  --hz=N              samples a second, 1 to 10000 (default 100)\n"
    "  --duration=SECONDS  stop after SECONDS (default: until ^C or exit)\n"
    "  --children          also sample every descendant perl of PID (the\n"
    "                      workers of a preforking server; new ones are\n"
    "                      found within a second), each into FILE.PID\n"
    "                      (PID's own too; one that exits keeps its samples)\n"
    "  --stop              stop the perl (ptrace) for each sample: a\n"
    "                      consistent stack, at a cost to it the summary says\n"
    "  -h, --help          this help\n"
    "\n"
    "Source lines are read from the files on disk when a report is made;\n"
    "a string eval's source is not available (nytp top and html say so).\n"
    "At the end one line on standard error says what was written:\n"
    "samples, dropped (torn) samples.\n"
    "Exit status: 0 ok, 1 the perl could not be read or the profile written,\n"
    "2 usage.\n";

enum { OPT_HZ = 256, OPT_DURATION, OPT_CHILDREN, OPT_STOP };

struct attach_opts {
    const char *output;
    unsigned hz;
    double duration;
    bool children, stop;
};

#define TICKS_PER_SEC 10000000.0

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct attach_opts *o = ctx;
    switch (opt) {
    case 'o': o->output = arg; break;
    case OPT_HZ: {
        unsigned long v = cli_parse_count("--hz", arg);
        if (v < 1 || v > 10000)
            cli_usage_error("--hz takes 1 to 10000 samples a second, not %lu", v);
        o->hz = (unsigned)v;
        break;
    }
    case OPT_DURATION: {
        char *end;
        errno = 0;
        double d = strtod(arg, &end);
        if (errno || end == arg || *end || !(d > 0) || d > 1e7)
            cli_usage_error("--duration takes a number of seconds, not '%s'", arg);
        o->duration = d;
        break;
    }
    case OPT_CHILDREN: o->children = true; break;
    case OPT_STOP: o->stop = true; break;
    default: break;
    }
}

/* ---- one process's samples ----------------------------------------------------- */

typedef struct arc {
    uint32_t called, caller, fid, line;   /* caller NYTP_NONE: an xsub's marker */
    uint32_t count, rec_depth;
    double incl, excl, reci;
} arc;

typedef struct sub_info {
    uint32_t def_file;      /* walker string id, or NYTP_NONE */
    uint32_t def_line;
    uint32_t def_end;       /* an anonymous sub's last line, 0 unknown */
    uint32_t depth;         /* frames of it on the shadow stack */
    bool xs, seen;
} sub_info;

typedef struct aframe {
    int32_t level, ix, saveix;
    uint64_t cv, cop;
    uint32_t node, caller;      /* sub ids */
    uint32_t fid, line;         /* the call site */
    uint32_t rec;
    double w0, excl;
    bool xs;
} aframe;

typedef struct ret_event {
    uint32_t depth, node;
    double incl, excl;
} ret_event;

typedef struct session {
    attach_target t;
    walker w;
    char *path;                 /* the profile file */
    bool open, done;
    bool traced;                /* --stop: seized */
    strmap files;               /* file names: fid = id + 1 */
    strmap subs;                /* sub names */
    sub_info *si;
    uint32_t si_cap;
    strmap arc_keys;            /* (called, caller, fid, line) -> arcs[] */
    arc *arcs;
    uint32_t arcs_cap;
    strmap line_keys;           /* (fid, line) -> ticks[] */
    double *ticks;
    uint32_t ticks_cap;
    aframe *st;
    size_t n, cap;
    aframe *fresh;
    size_t fresh_cap;
    ret_event *rets;
    size_t nrets, rets_cap;
    uint32_t runtime;           /* main::RUNTIME's sub id */
    double weight;              /* ticks of all samples */
    uint64_t samples, invalid;
    double last_t;              /* when the last sample was tried (ticks) */
    double period_ticks;        /* the mean period */
    double start_wall, end_wall;
    double stopped_us;          /* --stop: time the perl was stopped */
    uint64_t stops;
    char program[1024];
    char cwd[PATH_MAX];         /* the perl's working directory at the start */
    bool oom;
} session;

static double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool eval_parent(const char *name, char *buf, size_t size, uint32_t *line);

/* The file id of a name, made on first use; a string eval's file
 * "(eval N)[parent:line]" after its parent's, so that every file's parent
 * is declared before it (Devel::NYTProf's reader needs that). */
static uint32_t fid_of_name(session *s, const char *name, uint32_t len, int depth)
{
    uint32_t id = strmap_find(&s->files, name, len);
    if (id != NYTP_NONE)
        return id + 1;
    char parent[2048];
    uint32_t line;
    if (depth < 64 && eval_parent(name, parent, sizeof parent, &line))
        fid_of_name(s, parent, (uint32_t)strlen(parent), depth + 1);
    id = strmap_add(&s->files, name, len, false, NULL);
    if (id == NYTP_NONE) {
        s->oom = true;
        return 0;
    }
    return id + 1;
}

static uint32_t fid_of(session *s, uint32_t file)
{
    if (file == NYTP_NONE)
        return 0;
    return fid_of_name(s, walker_str(&s->w, file), s->w.str.v[file].len, 0);
}

static uint32_t sub_of(session *s, const walk_frame *f, bool xs)
{
    const char *n = walker_str(&s->w, f->name);
    bool added;
    uint32_t id = strmap_add(&s->subs, n, s->w.str.v[f->name].len, false, &added);
    if (id == NYTP_NONE || !cli_grow_zeroed((void **)&s->si, (size_t)id + 1, &s->si_cap, sizeof *s->si)) {
        s->oom = true;
        return NYTP_NONE;
    }
    if (added) {
        s->si[id].def_file = f->def_file;
        s->si[id].def_line = f->def_line;
        s->si[id].def_end = f->def_end;
        s->si[id].xs = xs;
    }
    return id;
}

static arc *arc_for(session *s, uint32_t called, uint32_t caller, uint32_t fid, uint32_t line)
{
    uint32_t key[4] = {called, caller, fid, line};
    bool added;
    uint32_t id = strmap_add(&s->arc_keys, (const char *)key, sizeof key, false, &added);
    if (id == NYTP_NONE || !cli_grow_zeroed((void **)&s->arcs, (size_t)id + 1, &s->arcs_cap, sizeof *s->arcs)) {
        s->oom = true;
        return NULL;
    }
    arc *a = &s->arcs[id];
    if (added) {
        a->called = called;
        a->caller = caller;
        a->fid = fid;
        a->line = line;
    }
    return a;
}

static void line_add(session *s, uint32_t fid, uint32_t line, double w)
{
    uint32_t key[2] = {fid, line};
    uint32_t id = strmap_add(&s->line_keys, (const char *)key, sizeof key, false, NULL);
    if (id == NYTP_NONE || !cli_grow_zeroed((void **)&s->ticks, (size_t)id + 1, &s->ticks_cap, sizeof *s->ticks)) {
        s->oom = true;
        return;
    }
    s->ticks[id] += w;
}

/* A call ends: its arc gets one more call and its times, and its
 * SUB_RETURN is kept. */
static void frame_end(session *s, const aframe *f, size_t depth)
{
    double incl = s->weight - f->w0;
    sub_info *si = &s->si[f->node];
    if (!si->seen) {
        si->seen = true;
        if (f->xs)
            arc_for(s, f->node, NYTP_NONE, 0, 0); /* the marker of an xsub */
    }
    arc *a = arc_for(s, f->node, f->caller, f->fid, f->line);
    if (a) {
        a->count++;
        if (f->rec <= 1) {
            a->incl += incl;
        } else {
            a->reci += incl / TICKS_PER_SEC;
            if (f->rec - 1 > a->rec_depth)
                a->rec_depth = f->rec - 1;
        }
        a->excl += f->excl;
    }
    if (!cli_grow_size((void **)&s->rets, s->nrets + 1, &s->rets_cap, sizeof *s->rets)) {
        s->oom = true;
        return;
    }
    s->rets[s->nrets++] = (ret_event){(uint32_t)depth, f->node, incl, f->excl};
}

static void pop_to(session *s, size_t keep)
{
    while (s->n > keep) {
        aframe *f = &s->st[s->n - 1];
        frame_end(s, f, s->n);
        s->si[f->node].depth--;
        s->n--;
    }
}

static int place_cmp(const aframe *a, int32_t level, int32_t ix)
{
    if (a->level != level)
        return a->level < level ? -1 : 1;
    return a->ix < ix ? -1 : a->ix > ix;
}

/* As sample.c's: false once the candidate matches the shadow frame at its
 * place (everything below is unchanged). */
static bool candidate(const session *s, size_t *k, const aframe *c)
{
    while (*k > 0 && place_cmp(&s->st[*k - 1], c->level, c->ix) > 0)
        (*k)--;
    if (*k > 0 && place_cmp(&s->st[*k - 1], c->level, c->ix) == 0) {
        const aframe *o = &s->st[*k - 1];
        if (o->cv == c->cv && o->cop == c->cop && o->saveix == c->saveix)
            return false;
        (*k)--;
    }
    return true;
}

static bool is_call(frame_kind k)
{
    return k == FRAME_SUB || k == FRAME_ANON || k == FRAME_BEGIN || k == FRAME_XSUB
           || k == FRAME_CORE;
}

/* One good sample of weight w: the shadow stack brought up to date, the
 * time charged. */
static void take(session *s, double w)
{
    walker *wk = &s->w;
    size_t k = s->n, nf = 0;
    bool matched = false;
    /* candidates innermost first; each call's site is the place of the
     * frame around it (an eval's, or the caller's) */
    for (size_t i = 0; i < wk->n && !matched; i++) {
        const walk_frame *f = &wk->f[i];
        if (!is_call(f->kind))
            continue;
        if (strncmp(walker_str(wk, f->name), "DB::", 4) == 0)
            continue;
        if (!cli_grow_size((void **)&s->fresh, nf + 1, &s->fresh_cap, sizeof *s->fresh)) {
            s->oom = true;
            return;
        }
        aframe *c = &s->fresh[nf];
        memset(c, 0, sizeof *c);
        c->level = f->level;
        c->ix = f->ix;
        c->saveix = f->saveix;
        c->cv = f->cv;
        c->cop = f->cop;
        c->xs = f->kind == FRAME_XSUB || f->kind == FRAME_CORE;
        if (!candidate(s, &k, c)) {
            matched = true;
            break;
        }
        c->node = sub_of(s, f, c->xs);
        if (c->node == NYTP_NONE)
            return;
        if (f->kind == FRAME_BEGIN && f->def_file != NYTP_NONE) {
            /* called while its file compiles: at its own first line */
            c->fid = fid_of(s, f->def_file);
            c->line = f->def_line;
        } else if (i + 1 < wk->n) {
            c->fid = fid_of(s, wk->f[i + 1].file);
            c->line = wk->f[i + 1].line;
        }
        nf++;
    }
    if (!matched)
        k = 0;
    pop_to(s, k);
    if (!cli_grow_size((void **)&s->st, s->n + nf + 1, &s->cap, sizeof *s->st)) {
        s->oom = true;
        return;
    }
    while (nf > 0) {
        aframe *f = &s->st[s->n];
        *f = s->fresh[--nf];
        f->caller = s->n ? s->st[s->n - 1].node : s->runtime;
        f->rec = ++s->si[f->node].depth;
        f->w0 = s->weight;
        f->excl = 0;
        s->n++;
    }
    s->weight += w;
    if (s->n)
        s->st[s->n - 1].excl += w;
    /* the line: the current statement's; while a file compiles, the line
     * of the innermost call (a 'use' line for a BEGIN block) */
    const walk_frame *top = &wk->f[0];
    if (top->kind == FRAME_CORE && wk->n > 1)
        top = &wk->f[1];
    if (!wk->at_compiling) {
        uint32_t fid = fid_of(s, top->file);
        if (fid && top->line)
            line_add(s, fid, top->line, w);
    } else {
        for (size_t i = s->n; i > 0; i--)
            if (s->st[i - 1].fid && s->st[i - 1].line && !s->st[i - 1].xs) {
                line_add(s, s->st[i - 1].fid, s->st[i - 1].line, w);
                break;
            }
    }
}

/* ---- ptrace stops (--stop) --------------------------------------------------- */

static bool trace_start(session *s)
{
    if (ptrace(PTRACE_SEIZE, s->t.pid, NULL, NULL) < 0)
        return false;
    s->traced = true;
    return true;
}

/* Stop the perl (for a sample, or to detach, which needs it stopped);
 * true when it is stopped.  A signal for the perl that arrived first
 * stopped it instead: it is in *sig, to be given back to the perl when it
 * goes on, and the interrupt's own stop still comes (trace_service takes
 * it); 0 when this is the interrupt's stop. */
static bool trace_interrupt(session *s, int *sig)
{
    *sig = 0;
    if (ptrace(PTRACE_INTERRUPT, s->t.pid, NULL, NULL) < 0)
        return false;
    for (;;) {
        int st;
        pid_t r = waitpid(s->t.pid, &st, __WALL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || !WIFSTOPPED(st))
            return false;
        if (st >> 16 != PTRACE_EVENT_STOP)
            *sig = WSTOPSIG(st);
        return true;
    }
}

static void trace_go(session *s, int sig)
{
    ptrace(PTRACE_CONT, s->t.pid, NULL, (void *)(intptr_t)sig);
}

/* Between samples: signals for a traced perl are handed on at once. */
static void trace_service(session *s)
{
    for (;;) {
        int st;
        pid_t r = waitpid(s->t.pid, &st, __WALL | WNOHANG);
        if (r <= 0)
            return;
        if (!WIFSTOPPED(st)) {
            s->traced = false;
            return;
        }
        int event = st >> 16;
        if (event == PTRACE_EVENT_STOP) {
            int sg = WSTOPSIG(st);
            if (sg == SIGSTOP || sg == SIGTSTP || sg == SIGTTIN || sg == SIGTTOU)
                ptrace(PTRACE_LISTEN, s->t.pid, NULL, NULL); /* a job-control stop stays */
            else
                trace_go(s, 0);
        } else {
            trace_go(s, WSTOPSIG(st));
        }
    }
}

/* Detach, which needs the perl stopped: a signal it is being stopped
 * for is handed on by the detach itself (detaching a running tracee
 * fails, and leaving it to our exit would lose such a signal). */
static void trace_end(session *s)
{
    if (!s->traced)
        return;
    s->traced = false;
    int sig;
    if (trace_interrupt(s, &sig))
        ptrace(PTRACE_DETACH, s->t.pid, NULL, (void *)(intptr_t)sig);
}

/* ---- writing the profile --------------------------------------------------------- */

static void write_num(nytp_writer *w, const char *key, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.0f", v);
    nytp_write_attribute(w, key, buf);
}

/* "(eval 3)[file:12]": the parent's name (into buf) and the line. */
static bool eval_parent(const char *name, char *buf, size_t size, uint32_t *line)
{
    if (strncmp(name, "(eval ", 6) != 0)
        return false;
    const char *open = strchr(name, '[');
    size_t len = strlen(name);
    if (!open || len < 4 || name[len - 1] != ']')
        return false;
    const char *colon = name + len - 1;
    while (colon > open && *colon != ':')
        colon--;
    if (colon <= open + 1 || (size_t)(colon - open - 1) >= size)
        return false;
    memcpy(buf, open + 1, (size_t)(colon - open - 1));
    buf[colon - open - 1] = 0;
    char *end;
    unsigned long l = strtoul(colon + 1, &end, 10);
    if (*end != ']')
        return false;
    *line = (uint32_t)l;
    return true;
}

static const char *const options[][2] = {
    {"usecputime", "0"}, {"subs", "1"}, {"blocks", "0"}, {"leave", "1"}, {"expand", "0"},
    {"trace", "0"}, {"use_db_sub", "0"}, {"compress", "6"}, {"clock", "1"}, {"stmts", "1"},
    {"slowops", "2"}, {"findcaller", "0"}, {"forkdepth", "-1"}, {"perldb", "0"},
    {"nameevals", "1"}, {"nameanonsubs", "1"}, {"calls", "1"}, {"evals", "0"},
};

static int write_profile(session *s, const struct attach_opts *o)
{
    nytp_out *out = cli_output_open(s->path);
    if (!out)
        return EXIT_BAD_INPUT;
    nytp_error e = {0};
    if (nytp_out_set_deflater(out, "isal", &e) < 0)
        nytp_out_set_deflater(out, "zlib", &e);
    nytp_writer *w;
    if (nytp_writer_open(&w, out, &e) < 0) {
        cli_error("%s: %s", s->path, e.msg);
        return EXIT_BAD_INPUT;
    }
    /* every file a sub is defined in has its id before the ids are written */
    for (uint32_t i = 0; i < s->subs.n; i++)
        if (!s->si[i].xs && s->si[i].def_file != NYTP_NONE)
            fid_of(s, s->si[i].def_file);
    char buf[256];
    time_t base = (time_t)s->start_wall;
    char when[64];
    ctime_r(&base, when);
    when[strcspn(when, "\n")] = 0;
    nytp_write_header(w, 5, 0);
    snprintf(buf, sizeof buf, "Perl profile database. Generated by nytp attach on %s", when);
    nytp_write_comment(w, buf);
    write_num(w, "basetime", floor(s->start_wall));
    nytp_write_attribute(w, "application", s->program);
    snprintf(buf, sizeof buf, "%d.%d.%d", PL_REVISION, PL_VERSION, PL_SUBVERSION);
    nytp_write_attribute(w, "perl_version", buf);
    nytp_write_attribute(w, "nv_size", "8");
    nytp_write_attribute(w, "PL_perldb", "0");
    nytp_write_attribute(w, "clock_id", "1");
    write_num(w, "ticks_per_sec", TICKS_PER_SEC);
    write_num(w, "sample_hz", o->hz);
    nytp_write_attribute(w, "sampled_by", "nytp attach");
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        nytp_write_option(w, options[i][0], options[i][1]);
    nytp_write_start_deflate(w, NYTP_DEFAULT_COMPRESSION);
    nytp_write_pid_start(w, (uint32_t)s->t.pid, 0, s->start_wall);
    for (uint32_t i = 0; i < s->files.n; i++) {
        const char *name = strmap_str(&s->files, i);
        char parent[2048];
        uint32_t line = 0, pfid = 0, flags = NYTP_FIDF_VIA_STMT;
        if (eval_parent(name, parent, sizeof parent, &line)) {
            uint32_t p = strmap_find(&s->files, parent, (uint32_t)strlen(parent));
            if (p != NYTP_NONE && p < i) {
                pfid = p + 1;
                flags |= NYTP_FIDF_IS_EVAL;
            } else {
                line = 0;
            }
        }
        /* a file perl names relatively, by the perl's directory: as
         * Devel::NYTP names its files, so that the profiles pair */
        char abs[PATH_MAX + 1024];
        uint32_t len = s->files.v[i].len;
        if (!pfid && s->cwd[0] && name[0] && name[0] != '/' && strncmp(name, "(eval ", 6) != 0
            && strcmp(name, "-e") != 0 && strcmp(name, "-E") != 0) {
            const char *rel = strncmp(name, "./", 2) == 0 ? name + 2 : name;
            int k = snprintf(abs, sizeof abs, "%s%s%s", s->cwd, strcmp(s->cwd, "/") ? "/" : "", rel);
            if (k > 0 && (size_t)k < sizeof abs) {
                name = abs;
                len = (uint32_t)k;
            }
        }
        nytp_write_new_fid(w, i + 1, pfid, line, flags, 0, 0, (nytp_str){name, len, false});
    }
    for (size_t i = 0; i < s->nrets; i++) {
        const ret_event *r = &s->rets[i];
        nytp_write_sub_return(w, r->depth, r->incl, r->excl,
                              (nytp_str){strmap_str(&s->subs, r->node), s->subs.v[r->node].len, false});
    }
    for (uint32_t i = 0; i < s->line_keys.n; i++) {
        uint32_t key[2];
        memcpy(key, strmap_str(&s->line_keys, i), sizeof key);
        double t = s->ticks[i] + 0.5;
        do { /* a TIME_LINE holds 31 bits of ticks */
            int32_t part = t > INT32_MAX ? INT32_MAX : (int32_t)t;
            nytp_write_discount(w);
            nytp_write_time_line(w, part, key[0], key[1]);
            t -= part;
        } while (t >= 1);
    }
    write_num(w, "sample_hz", o->hz);
    write_num(w, "sample_count", (double)s->samples);
    write_num(w, "sample_invalid", (double)s->invalid);
    nytp_write_attribute(w, "cumulative_overhead_ticks", "0");
    if (o->stop) {
        snprintf(buf, sizeof buf, "%.1f", s->stops ? s->stopped_us / (double)s->stops : 0.0);
        nytp_write_attribute(w, "sample_stop_us", buf);
    }
    /* main::RUNTIME is in the program's file */
    uint32_t main_fid = 0;
    if (s->program[0]) {
        uint32_t p = strmap_find(&s->files, s->program, (uint32_t)strlen(s->program));
        main_fid = p == NYTP_NONE ? 0 : p + 1;
    }
    for (uint32_t i = 0; i < s->subs.n; i++) {
        const sub_info *si = &s->si[i];
        uint32_t fid = 0, first = 0, last = 0;
        if (i == s->runtime) {
            fid = main_fid ? main_fid : 1;
            first = last = 1;
        } else if (!si->xs && si->def_file != NYTP_NONE) {
            fid = fid_of(s, si->def_file);
            first = last = si->def_line;
            if (si->def_end > last)
                last = si->def_end;
        } else {
            /* an xsub or builtin: in the file it was first called from */
            for (uint32_t a = 0; a < s->arc_keys.n && !fid; a++)
                if (s->arcs[a].called == i && s->arcs[a].fid)
                    fid = s->arcs[a].fid;
        }
        if (!fid || fid > s->files.n)
            continue;
        nytp_write_sub_info(w, fid, first, last,
                            (nytp_str){strmap_str(&s->subs, i), s->subs.v[i].len, false});
    }
    for (uint32_t i = 0; i < s->arc_keys.n; i++) {
        const arc *a = &s->arcs[i];
        nytp_str called = {strmap_str(&s->subs, a->called), s->subs.v[a->called].len, false};
        nytp_str caller = a->caller == NYTP_NONE
                              ? (nytp_str){"", 0, false}
                              : (nytp_str){strmap_str(&s->subs, a->caller), s->subs.v[a->caller].len, false};
        nytp_write_sub_callers(w, a->fid, a->line, a->count, a->incl / TICKS_PER_SEC,
                               a->excl / TICKS_PER_SEC, a->reci, a->rec_depth, called, caller);
    }
    nytp_write_pid_end(w, (uint32_t)s->t.pid, s->end_wall);
    if (s->oom) {
        cli_error("%s: out of memory", s->path);
        nytp_writer_abort(w);
        return EXIT_BAD_INPUT;
    }
    if (nytp_writer_close(w, &e) < 0) {
        cli_error("%s: %s", s->path, e.msg);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

static void session_free(session *s)
{
    trace_end(s);
    walker_release(&s->w);
    strmap_release(&s->files);
    strmap_release(&s->subs);
    strmap_release(&s->arc_keys);
    strmap_release(&s->line_keys);
    free(s->si);
    free(s->arcs);
    free(s->ticks);
    free(s->st);
    free(s->fresh);
    free(s->rets);
    free(s->path);
}

/* ---- the run ---------------------------------------------------------------------- */

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
}

static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        /* one ignored when nytp started (nohup) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Open pid as a session: 0, or -1 after saying why (unless quiet). */
static int session_open(session *s, pid_t pid, const struct attach_opts *o, bool with_pid, bool quiet)
{
    memset(s, 0, sizeof *s);
    char why[512];
    if (target_open(&s->t, pid, why, sizeof why) < 0) {
        if (!quiet)
            cli_error("%s", why);
        return -1;
    }
    walker_init(&s->w, &s->t);
    uint64_t p = 0;
    if (target_read(&s->t, s->t.interp + PL_I_ORIGFILENAME, &p, 8) && p)
        target_read_str(&s->t, p, s->program, sizeof s->program);
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
    ssize_t n = readlink(link, s->cwd, sizeof s->cwd - 1);
    s->cwd[n > 0 && s->cwd[0] == '/' ? n : 0] = 0;
    size_t len = strlen(o->output) + 16;
    s->path = malloc(len);
    if (!s->path) {
        cli_error("out of memory");
        walker_release(&s->w);
        return -1;
    }
    if (with_pid)
        snprintf(s->path, len, "%s.%d", o->output, (int)pid);
    else
        snprintf(s->path, len, "%s", o->output);
    s->runtime = strmap_add(&s->subs, "main::RUNTIME", 13, false, NULL);
    if (s->runtime == NYTP_NONE || !cli_grow_zeroed((void **)&s->si, 1, &s->si_cap, sizeof *s->si)) {
        cli_error("out of memory");
        return -1;
    }
    s->si[s->runtime].def_file = NYTP_NONE;
    if (o->stop && !trace_start(s)) {
        if (!quiet)
            cli_error("%d: cannot stop it with ptrace: %s", (int)pid, strerror(errno));
        session_free(s);
        return -1;
    }
    s->open = true;
    s->start_wall = now_wall();
    s->last_t = floor(now_mono() * TICKS_PER_SEC);
    s->period_ticks = TICKS_PER_SEC / o->hz;
    return 0;
}

/* One sample of s; false when the process is gone. */
static bool session_sample(session *s)
{
    double t0 = 0;
    int sig = 0;
    bool stopped = false;
    if (s->traced) {
        trace_service(s);
        stopped = trace_interrupt(s, &sig);
        t0 = now_mono(); /* stopped since (the wait for the stop is not) */
        if (!stopped && !target_alive(&s->t))
            return false;
    }
    int rc = walker_sample(&s->w);
    if (stopped) {
        double t1 = now_mono();
        s->stopped_us += (t1 - t0) * 1e6;
        s->stops++;
        trace_go(s, sig);
    }
    /* whole ticks, as the in-process sampler's clock gives them: sums of
     * integers stay exact, so inclusive and exclusive times add up */
    double t = floor(now_mono() * TICKS_PER_SEC);
    double w = t - s->last_t;
    s->last_t = t;
    /* A sample that comes late (nytp was not scheduled) would give the
     * whole gap to the state the perl is in when nytp runs again, which
     * it may have reached only then: it counts for two periods at most,
     * and the rest of the gap is no sample's. */
    if (w > 2 * s->period_ticks)
        w = 2 * s->period_ticks;
    if (rc == WALK_OK) {
        /* a pid reused by another process would be read as if it were
         * the perl: its start time is checked every tenth sample */
        if (s->samples % 10 == 9 && !target_alive(&s->t))
            return false;
        s->samples++;
        take(s, w < 0 ? 0 : w);
        return true;
    }
    if (rc == WALK_GONE || !target_alive(&s->t))
        return false;
    s->invalid++;
    return true;
}

static void session_finish(session *s)
{
    pop_to(s, 0);
    s->end_wall = now_wall();
    trace_end(s);
    s->done = true;
}

static void summary(const session *s, const struct attach_opts *o)
{
    double secs = s->end_wall - s->start_wall;
    char stop[128] = "";
    if (o->stop)
        snprintf(stop, sizeof stop, "; stopped %.0f us a sample",
                 s->stops ? s->stopped_us / (double)s->stops : 0.0);
    cli_note("%s: %d (%s): %llu samples in %.1f s at %u Hz, %llu dropped as torn (%.2f%%)%s",
             s->path, (int)s->t.pid, s->program[0] ? s->program : "?",
             (unsigned long long)s->samples, secs, o->hz, (unsigned long long)s->invalid,
             s->samples + s->invalid ? 100.0 * (double)s->invalid / (double)(s->samples + s->invalid) : 0.0,
             stop);
}

int cmd_attach(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"hz", required_argument, NULL, OPT_HZ},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"children", no_argument, NULL, OPT_CHILDREN},
        {"stop", no_argument, NULL, OPT_STOP},
        {NULL, 0, NULL, 0},
    };
    struct attach_opts o = {"nytprof.out", 100, 0, false, false};
    int first = cli_parse(argc, argv, "o:", longopts, usage, on_opt, &o);
    if (first >= argc)
        cli_usage_error("which process? (nytp attach PID)");
    if (first + 1 < argc)
        cli_usage_error("one process at a time (--children for its descendants)");
    pid_t root = target_parse_pid(argv[first]);
    if (!root)
        cli_usage_error("'%s' is not a process id", argv[first]);
    if (strcmp(o.output, "-") == 0 && o.children)
        cli_usage_error("--children writes FILE.PID files: -o names FILE, not standard output");
    catch_stop_signals();

    session *ss = NULL;
    size_t ns = 0, cap = 0;
    if (!cli_grow_size((void **)&ss, 1, &cap, sizeof *ss)) {
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    if (session_open(&ss[0], root, &o, o.children, false) < 0) {
        free(ss);
        return EXIT_BAD_INPUT;
    }
    ns = 1;
    double period = 1.0 / o.hz, start = now_mono(), next = start, next_scan = start;
    size_t live = 1;
    uint64_t rng = (uint64_t)(now_wall() * 1e6) | 1;
    /* pids seen that are not perls (or could not be opened): not tried again */
    pid_t *skip = NULL;
    size_t nskip = 0, skip_cap = 0;
    while (!stop_signal && live > 0) {
        double now = now_mono();
        if (o.duration > 0 && now - start >= o.duration)
            break;
        if (o.children && now >= next_scan) {
            pid_t *kids = NULL;
            size_t nk = 0, kc = 0;
            target_children(root, &kids, &nk, &kc);
            for (size_t i = 0; i < nk; i++) {
                bool known = false;
                for (size_t j = 0; j < ns && !known; j++)
                    known = ss[j].t.pid == kids[i];
                for (size_t j = 0; j < nskip && !known; j++)
                    known = skip[j] == kids[i];
                if (known)
                    continue;
                if (!cli_grow_size((void **)&ss, ns + 1, &cap, sizeof *ss))
                    break;
                if (session_open(&ss[ns], kids[i], &o, true, true) == 0) {
                    ns++;
                    live++;
                } else if (cli_grow_size((void **)&skip, nskip + 1, &skip_cap, sizeof *skip)) {
                    skip[nskip++] = kids[i];
                }
            }
            free(kids);
            next_scan = now + 1.0;
        }
        for (size_t i = 0; i < ns; i++) {
            if (ss[i].done)
                continue;
            if (!session_sample(&ss[i])) {
                session_finish(&ss[i]);
                live--;
            }
        }
        /* periods drawn around the mean, so that a program looping in step
         * with the sampling is not always seen at the same place */
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        next += period * (0.5 + (double)(rng >> 11) / 9007199254740992.0);
        now = now_mono();
        if (next < now) /* behind (a slow read, a suspended nytp): no burst to catch up */
            next = now;
        /* sleep to the next sample, handing a traced perl its signals */
        while (!stop_signal && now < next) {
            double d = next - now;
            if (o.stop && d > 0.001)
                d = 0.001;
            struct timespec ts = {(time_t)d, (long)((d - floor(d)) * 1e9)};
            nanosleep(&ts, NULL);
            if (o.stop)
                for (size_t i = 0; i < ns; i++)
                    if (!ss[i].done && ss[i].traced)
                        trace_service(&ss[i]);
            now = now_mono();
        }
    }
    int rc = EXIT_OK;
    for (size_t i = 0; i < ns; i++) {
        if (!ss[i].done)
            session_finish(&ss[i]);
        int r = write_profile(&ss[i], &o);
        if (r != EXIT_OK)
            rc = r;
        else
            summary(&ss[i], &o);
        session_free(&ss[i]);
    }
    free(ss);
    free(skip);
    return rc;
}

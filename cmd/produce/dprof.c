/* dprof.c — nytp dprof-convert: Devel::DProf's tmon.out to an NYTProf v5
 * profile, written through libformat's writer.
 *
 * Times follow dprofpp -r: the real clock, with DProf's estimated
 * profiling overhead ($over_rtime / $over_tests per call, half at entry
 * and half at exit) taken off every time stamp, and the time spent in
 * Devel::DProf::write (DProf flushing its buffer) taken off too.  A sub's
 * inclusive time counts only its outermost calls; the time of calls made
 * while the same sub was already running goes to reci, as NYTProf does.
 * 'goto &sub' ends the running call and starts one of the target, called
 * by the same caller (as NYTProf records it); with --goto=dprofpp it is
 * booked as dprofpp books it instead (see on_event_dprofpp).
 *
 * DProf records no files or lines, so the profile has one stand-in file
 * (IS_FAKE) with one line per sub, whose saved source names the sub; a
 * call is placed on the line of the sub it was made from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "strmap.h"
#include "nytp/dprof.h"
#include "perl_config.h"

static const char usage[] =
    "usage: nytp dprof-convert [-o OUT] [--fake-exits] [--no-overhead]\n"
    "                          [--dprofpp-times] [--goto=nytprof|dprofpp] [TMON|-]\n"
    "\n"
    "Convert Devel::DProf's tmon.out (default TMON: tmon.out; '-' reads\n"
    "standard input) into an NYTProf v5 profile (default OUT: nytprof.out)\n"
    "that every nytp command and Devel::NYTProf's tools read.  Each DProf sub\n"
    "becomes a sub with its calls, inclusive and exclusive times, call arcs\n"
    "and call events; times are real (wall clock) times as 'dprofpp -r' shows\n"
    "them.  DProf records no source files or lines: the subs live in one\n"
    "stand-in file flagged IS_FAKE, one line per sub.\n"
    "\n"
    "  -f, --file=TMON   read TMON (the same as naming it)\n"
    "  -o, --output=OUT  write OUT (atomically; '-' is standard output);\n"
    "                    --out is the same\n"
    "  -F, --fake-exits  a profile that ends with subs still running (the\n"
    "                    program was killed) is closed at its last time\n"
    "                    stamp, as 'dprofpp -F' does, instead of refused; a\n"
    "                    last line cut short is left out, with a warning\n"
    "      --no-overhead do not subtract DProf's estimated profiling\n"
    "                    overhead from the times (dprofpp always does)\n"
    "      --dprofpp-times\n"
    "                    take the overhead off every time stamp as dprofpp\n"
    "                    does (its figures, negative ones included), not\n"
    "                    only as the clock moves on (times that add up)\n"
    "      --goto=HOW    book 'goto &sub' as Devel::NYTProf does (nytprof, the\n"
    "                    default: each sub keeps its own time) or exactly as\n"
    "                    dprofpp does (dprofpp: the sub that did the goto and\n"
    "                    its target swap times; see the man page)\n"
    "  -h, --help        this help\n"
    "\n"
    "Exit status: 0 ok, 1 bad or unreadable input, 2 usage.\n";

enum { OPT_NO_OVERHEAD = 256, OPT_GOTO, OPT_DPROFPP_TIMES };

struct opts {
    const char *output;
    bool fake_exits, no_overhead, goto_dprofpp, dprofpp_times;
};

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct opts *o = ctx;
    switch (opt) {
    case 'o': o->output = arg; break;
    case 'F': o->fake_exits = true; break;
    case OPT_NO_OVERHEAD: o->no_overhead = true; break;
    case OPT_DPROFPP_TIMES: o->dprofpp_times = true; break;
    case OPT_GOTO:
        if (strcmp(arg, "dprofpp") == 0)
            o->goto_dprofpp = true;
        else if (strcmp(arg, "nytprof") == 0)
            o->goto_dprofpp = false;
        else
            cli_usage_error("--goto takes 'nytprof' or 'dprofpp', not '%s'", arg);
        break;
    }
}

#define NO_SUB UINT32_MAX
#define TICKS_PER_SEC 1e7

typedef struct frame {
    uint32_t sub;
    uint32_t caller;    /* sub that called it, NO_SUB: the main program */
    uint32_t site;      /* sub on whose line the call was made (the caller,
                           or the sub that did 'goto &sub') */
    uint32_t nested;    /* calls of the same sub running when it started */
    double start;       /* ticks, overhead taken off */
    double kids;        /* inclusive ticks of the calls it made */
    bool skip;          /* Devel::DProf::write: DProf's own time */
} frame;

typedef struct arc {
    uint32_t callee, caller, site;  /* caller/site NO_SUB: main program */
    uint64_t count;
    double incl, excl, reci;        /* ticks */
    uint32_t rec_depth;
    bool listed;                    /* --goto=dprofpp: a pending arc that
                                       is in its level's list */
} arc;

/* --goto=dprofpp: the callees of the frame at one stack level whose arcs
 * wait for that frame's booked name (see dpp_enter). */
typedef struct pending {
    uint32_t *callee;
    uint32_t n, cap;
} pending;

/* Pending arcs have the caller PENDING + level: no sub has such a number. */
#define PENDING 0x80000000u

typedef struct conv {
    nytp_dprof *d;
    nytp_writer *w;
    double per_call;        /* overhead ticks at each entry and each exit */
    double scale;           /* DProf ticks -> profile ticks */
    double overhead;        /* subtracted so far */
    double now;             /* the corrected clock (see corrected) */
    bool dprofpp_times;     /* --dprofpp-times: dprofpp's own correction */
    double write_start;     /* when Devel::DProf::write was entered */
    frame *stack;
    uint32_t depth, cap, real_depth;
    uint32_t *active;       /* per sub: calls running now */
    uint64_t *calls;        /* per sub */
    int64_t *outer;         /* per sub, --goto=dprofpp: dprofpp's %outer */
    bool dprofpp;           /* --goto=dprofpp */
    pending *pend;          /* per stack level, --goto=dprofpp */
    uint32_t pend_cap;
    uint32_t nsubs;         /* size of active/calls */
    uint32_t named;         /* subs checked for Devel::DProf::write */
    arc *arcs;              /* in the order first seen, as written */
    uint32_t narcs, cap_arcs;
    strmap arc_keys;        /* (callee, caller, site) as 12 bytes -> index in arcs */
    uint32_t write_sub;     /* Devel::DProf::write, NO_SUB until seen */
} conv;

/* The arc (callee, caller, site), made if new; NULL when out of memory.
 * A pointer into the arcs: good until the next call. */
static arc *get_arc(conv *c, uint32_t callee, uint32_t caller, uint32_t site)
{
    uint32_t key[3] = {callee, caller, site};
    uint32_t id = strmap_find(&c->arc_keys, (const char *)key, sizeof key);
    if (id != NYTP_NONE)
        return &c->arcs[id];
    if (!cli_grow((void **)&c->arcs, (size_t)c->narcs + 1, &c->cap_arcs, sizeof *c->arcs))
        return NULL;
    id = strmap_add(&c->arc_keys, (const char *)key, sizeof key, false, NULL);
    if (id == NYTP_NONE)
        return NULL;
    c->arcs[id] = (arc){.callee = callee, .caller = caller, .site = site};
    c->narcs++;
    return &c->arcs[id];
}

/* Make the per-sub arrays cover every sub the reader has named. */
static bool grow_subs(conv *c)
{
    uint32_t n = nytp_dprof_sub_count(c->d);
    for (; c->named < n; c->named++)
        if (strcmp(nytp_dprof_sub_name(c->d, c->named), "Devel::DProf::write") == 0)
            c->write_sub = c->named;
    if (n <= c->nsubs)
        return true;
    /* three arrays, one count: each grows to the same doubling */
    uint32_t was = c->nsubs, ca = was, ck = was, co = was;
    if (!cli_grow((void **)&c->active, n, &ca, sizeof *c->active) ||
        !cli_grow((void **)&c->calls, n, &ck, sizeof *c->calls) ||
        !cli_grow((void **)&c->outer, n, &co, sizeof *c->outer))
        return false;
    uint32_t cap = ca < ck ? ca : ck;
    cap = cap < co ? cap : co;
    memset(c->outer + was, 0, (size_t)(cap - was) * sizeof *c->outer);
    memset(c->active + was, 0, (size_t)(cap - was) * sizeof *c->active);
    memset(c->calls + was, 0, (size_t)(cap - was) * sizeof *c->calls);
    c->nsubs = cap;
    return true;
}

static frame *top_real(conv *c)
{
    for (uint32_t i = c->depth; i > 0; i--)
        if (!c->stack[i - 1].skip)
            return &c->stack[i - 1];
    return NULL;
}

/* Time stamp t (real ticks) with the overhead taken off, on a clock that
 * never runs backwards.  DProf's clock is coarse (100 Hz): most records
 * share a tick, and dprofpp, taking the estimate off every record, makes
 * time run backwards there, which gives negative times and a callee whose
 * inclusive time is more than its caller's and than the whole run.  Here
 * the estimate is taken off only as the clock moves on: all of it, but
 * from the time that was measured, so that a profile's views add up (every
 * sub's time within the run, a caller's within its callers', the call
 * events within the subs').  --dprofpp-times keeps dprofpp's figures. */
static double corrected(conv *c, double t)
{
    double v = t - c->overhead;
    if (c->dprofpp_times)
        return v;
    if (v < c->now)
        v = c->now;
    c->now = v;
    return v;
}

static bool enter(conv *c, uint32_t sub, uint32_t caller, uint32_t site, double t)
{
    if (!cli_grow((void **)&c->stack, (size_t)c->depth + 1, &c->cap, sizeof *c->stack))
        return false;
    frame *f = &c->stack[c->depth++];
    *f = (frame){.sub = sub, .caller = caller, .site = site, .start = t};
    if (sub == c->write_sub) {
        f->skip = true;
        c->write_start = t;
        return true;
    }
    c->overhead += c->per_call;
    f->start = corrected(c, t);
    f->nested = c->active[sub]++;
    c->calls[sub]++;
    c->real_depth++;
    return true;
}

/* End the top frame at real time t: totals, arc, call event.  A faked
 * exit (the profile ended first) has no overhead, as in dprofpp -F. */
static bool leave(conv *c, double t, bool faked)
{
    frame f = c->stack[--c->depth];
    if (!faked)
        c->overhead += c->per_call;
    if (f.skip) {
        c->overhead += t - c->write_start;
        return true;
    }
    double incl = corrected(c, t) - f.start;
    double excl = incl - f.kids;
    uint32_t depth = c->real_depth--;
    frame *parent = top_real(c);
    if (parent)
        parent->kids += incl;
    c->active[f.sub]--;
    arc *a = get_arc(c, f.sub, f.caller, f.site);
    if (!a)
        return false;
    a->count++;
    a->excl += excl;
    if (f.nested == 0) {
        a->incl += incl;
    } else {
        a->reci += incl;
        if (f.nested > a->rec_depth)
            a->rec_depth = f.nested;
    }
    /* Call events hold whole ticks that are never negative, as the
     * profiler writes them: tools that sum them (flame graphs) expect
     * that.  The arcs keep dprofpp's figures, negative ones included. */
    nytp_write_sub_return(c->w, depth, round(fmax(incl, 0) * c->scale),
                          round(fmax(excl, 0) * c->scale),
                          nytp_cstr(nytp_dprof_sub_name(c->d, f.sub), false));
    return true;
}

/* ---- --goto=dprofpp: dprofpp's own bookkeeping --------------------------
 *
 * dprofpp keeps a stack of (name, start) frames.  A record that leaves a
 * frame ('-', '/', '*', and the faked exits of -F) pops the top frame and
 * books its time to the NAME THE RECORD GIVES, not to the frame's sub:
 * exclusive time always, inclusive time only when the named sub's count
 * of open calls (%outer, raised at each entry, lowered at each such exit)
 * drops to zero.  '*' pops the frame of the sub that did the goto and
 * books it to the target, then pushes a frame of the target (a call of
 * it), which the later '-' naming the jumper books to the jumper.  A sub's
 * totals are reset when it is first entered, so time booked to a target
 * before its first call (the first goto to it) is lost.  Here every pop
 * writes a call event with the booked name, at the frame's depth, and
 * adds its times to the arc from the frame below; every push counts a call
 * on the arc from the frame below.  The caller of an arc is the name the
 * frame below is booked to, so that the arcs make the call tree the call
 * events show.  Times in ticks, overhead taken off. */

/* The arc of callee called from the frame at level (0: the outermost
 * sub; -1: the main program).  The caller of a frame is the name that
 * frame is booked to, known only when it ends: until then the arc is
 * pending, under PENDING + level, and listed to be moved by dpp_resolve. */
static arc *dpp_arc(conv *c, uint32_t callee, int64_t level)
{
    if (level < 0)
        return get_arc(c, callee, NO_SUB, NO_SUB);
    uint32_t lv = (uint32_t)level;
    arc *a = get_arc(c, callee, PENDING + lv, PENDING + lv);
    if (!a || a->listed)
        return a;
    if (lv >= c->pend_cap) {
        uint32_t was = c->pend_cap;
        if (!cli_grow((void **)&c->pend, (size_t)lv + 1, &c->pend_cap, sizeof *c->pend))
            return NULL;
        memset(c->pend + was, 0, (size_t)(c->pend_cap - was) * sizeof *c->pend);
    }
    pending *p = &c->pend[lv];
    if (!cli_grow((void **)&p->callee, (size_t)p->n + 1, &p->cap, sizeof *p->callee))
        return NULL;
    p->callee[p->n++] = callee;
    a->listed = true;
    return a;
}

/* The frame at level ended, booked to name: its callees' arcs get name as
 * their caller.  The pending slot stays, emptied, for the next frame. */
static bool dpp_resolve(conv *c, uint32_t level, uint32_t name)
{
    if (level >= c->pend_cap)
        return true;
    pending *p = &c->pend[level];
    for (uint32_t i = 0; i < p->n; i++) {
        arc *t = get_arc(c, p->callee[i], PENDING + level, PENDING + level);
        if (!t)
            return false;
        arc v = *t;
        *t = (arc){.callee = v.callee, .caller = v.caller, .site = v.site};
        arc *a = get_arc(c, p->callee[i], name, name);
        if (!a)
            return false;
        a->count += v.count;
        a->incl += v.incl;
        a->excl += v.excl;
        a->reci += v.reci;
        if (v.rec_depth > a->rec_depth)
            a->rec_depth = v.rec_depth;
    }
    p->n = 0;
    return true;
}

static bool dpp_enter(conv *c, uint32_t sub, double t)
{
    if (!cli_grow((void **)&c->stack, (size_t)c->depth + 1, &c->cap, sizeof *c->stack))
        return false;
    c->overhead += c->per_call;
    arc *a = dpp_arc(c, sub, (int64_t)c->depth - 1);
    if (!a)
        return false;
    a->count++;
    c->stack[c->depth++] = (frame){.sub = sub, .start = t - c->overhead};
    c->calls[sub]++;
    c->outer[sub]++;
    return true;
}

/* Pop the top frame at time t (overhead already off), booked to name. */
static bool dpp_leave(conv *c, uint32_t name, double t)
{
    if (!c->depth)
        return true;    /* the reader keeps records balanced */
    frame f = c->stack[--c->depth];
    if (!dpp_resolve(c, c->depth, name))
        return false;
    double z = t - f.start, excl = z - f.kids;
    if (c->depth)
        c->stack[c->depth - 1].kids += z;
    int64_t outer = --c->outer[name];
    /* A sub never entered is not shown by dprofpp; its totals are reset
     * at its first entry anyway. */
    if (c->calls[name] > 0) {
        arc *a = dpp_arc(c, name, (int64_t)c->depth - 1);
        if (!a)
            return false;
        a->excl += excl;
        if (outer == 0) {
            a->incl += z;
        } else if (outer > 0) {
            a->reci += z;
            if ((uint64_t)outer > a->rec_depth)
                a->rec_depth = (uint32_t)(outer > UINT32_MAX ? UINT32_MAX : outer);
        }
    } else {
        z = excl = 0;
    }
    nytp_write_sub_return(c->w, c->depth + 1, round(fmax(z, 0) * c->scale),
                          round(fmax(excl, 0) * c->scale),
                          nytp_cstr(nytp_dprof_sub_name(c->d, name), false));
    return true;
}

static bool on_event_dprofpp(conv *c, const nytp_dprof_event *ev)
{
    double t = ev->real;
    switch (ev->kind) {
    case NYTP_DPROF_ENTER:
        if (ev->sub == c->write_sub) {      /* DProf's own time starts */
            c->write_start = t;
            return true;
        }
        return dpp_enter(c, ev->sub, t);
    case NYTP_DPROF_FAKE_LEAVE:             /* dprofpp -F: no overhead */
        if (ev->sub == c->write_sub || !c->depth)
            return true;
        return dpp_leave(c, c->stack[c->depth - 1].sub, t - c->overhead);
    default:                                /* '-', '/', '*' */
        c->overhead += c->per_call;
        if (ev->named == c->write_sub) {
            c->overhead += t - c->write_start;
            return true;
        }
        if (!dpp_leave(c, ev->named, t - c->overhead))
            return false;
        return ev->kind == NYTP_DPROF_GOTO ? dpp_enter(c, ev->sub, t) : true;
    }
}

static bool on_event(conv *c, const nytp_dprof_event *ev)
{
    if (!grow_subs(c))
        return false;
    if (c->dprofpp)
        return on_event_dprofpp(c, ev);
    frame *caller;
    switch (ev->kind) {
    case NYTP_DPROF_ENTER:
        caller = top_real(c);
        return enter(c, ev->sub, caller ? caller->sub : NO_SUB, caller ? caller->sub : NO_SUB,
                     ev->real);
    case NYTP_DPROF_GOTO: {
        frame old = c->stack[c->depth - 1];
        if (!leave(c, ev->real, false))
            return false;
        return enter(c, ev->sub, old.caller, old.skip ? old.site : old.sub, ev->real);
    }
    default:
        return leave(c, ev->real, ev->kind == NYTP_DPROF_FAKE_LEAVE);
    }
}

static void free_conv(conv *c)
{
    free(c->stack);
    free(c->active);
    free(c->calls);
    free(c->outer);
    for (uint32_t i = 0; i < c->pend_cap; i++)
        free(c->pend[i].callee);
    free(c->pend);
    free(c->arcs);
    strmap_release(&c->arc_keys);
}

/* The stand-in file's line of each called sub (line 1: the main program). */
static uint32_t *assign_lines(conv *c, uint32_t nsubs, uint32_t *nlines)
{
    uint32_t *line = calloc(nsubs ? nsubs : 1, sizeof *line);
    if (!line)
        return NULL;
    uint32_t next = 2;
    for (uint32_t s = 0; s < nsubs; s++)
        if (s < c->nsubs && c->calls[s])
            line[s] = next++;
    *nlines = next - 1;
    return line;
}

static bool write_summary(conv *c, double hz)
{
    nytp_writer *w = c->w;
    uint32_t nsubs = nytp_dprof_sub_count(c->d), nlines;
    uint32_t *line = assign_lines(c, nsubs, &nlines);
    if (!line)
        return false;
    char text[600];
    nytp_write_src_line(w, 1, 1,
                        nytp_cstr("# main program (converted from Devel::DProf, which records "
                                  "no source files or lines: each line stands for one sub)\n",
                                  false));
    for (uint32_t s = 0; s < nsubs; s++) {
        if (!line[s])
            continue;
        snprintf(text, sizeof text, "sub %s;  # no source: converted from Devel::DProf\n",
                 nytp_dprof_sub_name(c->d, s));
        nytp_write_src_line(w, 1, line[s], nytp_cstr(text, false));
    }
    nytp_write_sub_info(w, 1, 1, 1, nytp_cstr("main::RUNTIME", false));
    for (uint32_t s = 0; s < nsubs; s++)
        if (line[s])
            nytp_write_sub_info(w, 1, line[s], line[s], nytp_cstr(nytp_dprof_sub_name(c->d, s), false));
    for (uint32_t i = 0; i < c->narcs; i++) {
        arc *a = &c->arcs[i];
        if (a->caller >= PENDING && a->caller != NO_SUB)
            continue;   /* an emptied pending arc of --goto=dprofpp */
        uint32_t callee = a->callee;
        const char *caller = a->caller == NO_SUB ? "main::RUNTIME" : nytp_dprof_sub_name(c->d, a->caller);
        uint32_t at = a->site == NO_SUB || !line[a->site] ? 1 : line[a->site];
        nytp_write_sub_callers(w, 1, at, (uint32_t)(a->count > UINT32_MAX ? UINT32_MAX : a->count),
                               a->incl / hz, a->excl / hz, a->reci / hz, a->rec_depth,
                               nytp_cstr(nytp_dprof_sub_name(c->d, callee), false),
                               nytp_cstr(caller, false));
    }
    free(line);
    return true;
}

static void fmt_num(char *buf, size_t n, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%.17g", v);
}

/* When the run started: the tmon.out's modification time (DProf rewrites
 * its header when the program ends) minus the run time; else now. */
static double start_time(const char *file, double seconds)
{
    struct stat sb;
    int rc = strcmp(file, "-") == 0 ? fstat(0, &sb) : stat(file, &sb);
    if (rc == 0 && S_ISREG(sb.st_mode))
        return (double)sb.st_mtim.tv_sec + sb.st_mtim.tv_nsec / 1e9 - seconds;
    return (double)time(NULL) - seconds;
}

int cmd_dprof_convert(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"fake-exits", no_argument, NULL, 'F'},
        {"no-overhead", no_argument, NULL, OPT_NO_OVERHEAD},
        {"dprofpp-times", no_argument, NULL, OPT_DPROFPP_TIMES},
        {"goto", required_argument, NULL, OPT_GOTO},
        {NULL, 0, NULL, 0},
    };
    struct opts o = {0};
    int first = cli_parse(argc, argv, "f:o:F", longopts, usage, on_opt, &o);
    if (argc - first > 1)
        cli_usage_error("takes one tmon.out file, not %d", argc - first);
    const char *file = first < argc ? argv[first] : "tmon.out";
    const char *output = o.output ? o.output : "nytprof.out";
    cli_output_not_input(output, argc - first, argv + first, "tmon.out");
    const char *shown = strcmp(file, "-") == 0 ? "(standard input)" : file;

    nytp_error e = {0};
    nytp_in *in;
    nytp_dprof *d;
    if (nytp_in_open_file(&in, file, &e) < 0) {
        cli_error("%s: %s", shown, e.msg);
        return EXIT_BAD_INPUT;
    }
    if (nytp_dprof_open(&d, in, o.fake_exits ? NYTP_DPROF_FAKE_EXITS : 0, &e) < 0) {
        cli_error("%s: %s", shown, e.msg);
        return EXIT_BAD_INPUT;
    }
    const nytp_dprof_header *h = nytp_dprof_get_header(d);
    double hz = h->hz;

    nytp_out *out = cli_output_open(output);
    if (!out) {
        nytp_dprof_close(d);
        return EXIT_BAD_INPUT;
    }
    /* Profile ticks are NYTProf's usual 100 ns, finer than any $hz, so that
     * tools that round ticks to whole numbers lose nothing. */
    conv c = {.d = d, .write_sub = NO_SUB, .scale = TICKS_PER_SEC / hz,
              .dprofpp = o.goto_dprofpp, .dprofpp_times = o.dprofpp_times || o.goto_dprofpp};
    if (!o.no_overhead)
        c.per_call = h->over_rtime / (2 * (h->over_tests > 0 ? h->over_tests : 1));
    if (nytp_writer_open(&c.w, out, &e) < 0) { /* it has aborted out: not again */
        cli_error("%s: %s", output, e.msg);
        nytp_dprof_close(d);
        return EXIT_BAD_INPUT;
    }

    /* The run time is only known at the end, but basetime comes first:
     * DProf's header (written at exit) says how long the run was. */
    double run = h->rrun_rtime / hz;
    double t0 = start_time(file, run);
    char num[64], fake[4200];
    snprintf(fake, sizeof fake, "dprof:%s", shown);
    nytp_writer *w = c.w;
    nytp_write_header(w, 5, 0);
    snprintf(num, sizeof num, "%.0f", floor(t0));
    nytp_write_attribute(w, "basetime", num);
    nytp_write_attribute(w, "application", shown);
    nytp_write_attribute(w, "perl_version", NYTP_PERL_VERSION[0] ? NYTP_PERL_VERSION : "5.0.0");
    nytp_write_attribute(w, "nv_size", "8");
    nytp_write_attribute(w, "xs_version", h->xs_version[0] ? h->xs_version : "DProf");
    nytp_write_attribute(w, "PL_perldb", "0");
    nytp_write_attribute(w, "clock_id", "-1");
    nytp_write_attribute(w, "ticks_per_sec", "10000000");
    static const char *const options[][2] = {
        {"usecputime", "0"}, {"subs", "1"}, {"blocks", "0"}, {"leave", "1"},
        {"stmts", "0"},      {"slowops", "0"}, {"calls", "1"}, {"evals", "0"},
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        nytp_write_option(w, options[i][0], options[i][1]);
    nytp_write_start_deflate(w, NYTP_DEFAULT_COMPRESSION);
    nytp_write_pid_start(w, 0, 0, t0);
    nytp_write_new_fid(w, 1, 0, 0, 0x080 | 0x004 | 0x010 | 0x020, 0, 0, nytp_cstr(fake, false));

    nytp_dprof_event ev;
    int st;
    double last = 0;
    bool ok = true;
    while ((st = nytp_dprof_next(d, &ev, &e)) == NYTP_OK) {
        last = ev.real;
        if (!on_event(&c, &ev)) {
            ok = false;
            break;
        }
        if (nytp_writer_error(w)->status)
            break;
    }
    int rc = EXIT_OK;
    if (!ok) {
        cli_error("%s: out of memory", shown);
        rc = EXIT_BAD_INPUT;
    } else if (st < 0) {
        /* a run that was killed: -F is what makes a profile of it */
        if (st == NYTP_E_TRUNCATED && !o.fake_exits)
            cli_error("%s: %s (a killed run: -F ends the subs still running at the last time "
                      "stamp, as dprofpp -F does)", shown, e.msg);
        else
            cli_error("%s: %s", shown, e.msg);
        rc = EXIT_BAD_INPUT;
    } else if (!nytp_writer_error(w)->status) {
        if (nytp_dprof_cut_line(d))
            cli_warn("%s: line %llu is cut short (the run was killed); the records before it "
                     "are converted", shown, (unsigned long long)nytp_dprof_cut_line(d));
        if (!write_summary(&c, hz)) {
            cli_error("%s: out of memory", shown);
            rc = EXIT_BAD_INPUT;
        }
        /* What dprofpp took off as DProf's own time: reports subtract it
         * from the run time as they do NYTProf's overhead. */
        /* What the corrected clock took off in the end (it may have had
         * no measured time left to take the last estimates from). */
        double taken = c.overhead;
        if (!c.dprofpp_times && last - c.now < taken)
            taken = last - c.now > 0 ? last - c.now : 0;
        fmt_num(num, sizeof num, round(taken * c.scale));
        nytp_write_attribute(w, "cumulative_overhead_ticks", num);
        double end = last > h->rrun_rtime ? last : h->rrun_rtime;
        nytp_write_pid_end(w, 0, t0 + end / hz);
    }
    if (rc != EXIT_OK) {
        nytp_writer_abort(w);
    } else if (nytp_writer_close(w, &e) < 0) {
        cli_error("%s: %s", strcmp(output, "-") ? output : "(standard output)", e.msg);
        rc = EXIT_BAD_INPUT;
    }
    free_conv(&c);
    nytp_dprof_close(d);
    return rc;
}

/* speedscope.c — 'nytp speedscope': the profile in speedscope's JSON file
 * format (https://www.speedscope.app/file-format-schema.json).
 *
 * With call events, one evented profile per process: every call is
 * rebuilt from the SUB_RETURN stream (the rules of the call tree, see
 * nytp/calltree.h) and laid on a time line that starts at 0: a call opens
 * where its caller's earlier calls ended (the first at its caller's
 * opening), and closes its inclusive time later.  The events hold
 * inclusive and exclusive time but not where in the caller a call
 * happened, so a caller's own time is drawn after its calls.  Without call
 * events, one sampled profile of the caller;called paths of the call-site
 * data, weighted by exclusive time.
 *
 * Memory: the calls of one process at a time (24 bytes each), since a
 * call's place on the time line is known only when its outermost caller
 * returns; the open calls are a sparse stack, so depth numbers cost
 * nothing.
 *
 * What is drawn is the view of the time line (nytp_view_apply_calls):
 * direct recursion deeper than --max-recursion folded as the call tree
 * folds it (the call beyond the limit in a run of calls of one sub drawn
 * as "NAME…[×N]", the deeper calls of the run not drawn, their time inside
 * it, the calls they made to other subs drawn inside it, in the order they
 * ran), and with --focus, --ignore or --hide the calls filtered, call by
 * call.  A filtered time line needs the subs' files of the whole profile
 * ("file:" patterns) and the view's totals for its name, so its processes
 * are kept until the profile is read, then written.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "export.h"
#include "fmt.h"
#include "json.h"

static const char usage[] =
    "usage: nytp speedscope [--sampled] " VIEWOPT_SYNOPSIS "\n"
    "                       [--strict] [-o FILE] [-f FILE] [FILE...]\n"
    "\n"
    "Write NYTProf profiles (default FILE: nytprof.out; '-' reads standard\n"
    "input; several files add up) as a speedscope file, for the speedscope\n"
    "viewer (https://www.speedscope.app, or the npm package 'speedscope').\n"
    "\n"
    "  -f, --file=FILE   read FILE (the same as naming it)\n"
    "  -o, --output=FILE write FILE (default: nytprof.speedscope.json; '-':\n"
    "                    standard output), atomically; --out is the same\n"
    "  --sampled         one sampled profile of the call paths (those of\n"
    "                    'nytp calls'), weighted by exclusive time: no time\n"
    "                    line, but a file of the size of the call tree, not of\n"
    "                    the number of calls\n"
    VIEWOPT_USAGE
    "  --strict          a truncated profile is an error (exit 1)\n"
    "  -h, --help        this help\n"
    "\n"
    "With call events: one evented profile per process, every call on a time\n"
    "line (calls of a sub laid one after another from its start, its own time\n"
    "after them).  Without (calls=0): one sampled profile of caller;called\n"
    "paths from the call-site data, weighted by exclusive time.  Times are in\n"
    "nanoseconds.  With --focus, --ignore or --hide each profile's name says\n"
    "what was left out and the share of the time in subs in it; on the time\n"
    "line an ignored call goes with its calls and its time (the line closes\n"
    "up), outside a focus only the calls leading to it stay (their own time\n"
    "goes), a hidden call is not drawn: its calls are drawn in its caller\n"
    "where they ran and its own time stays in place, inside its caller's,\n"
    "as the caller's own time (main::RUNTIME's when no caller is drawn).\n"
    "Exit status: 0 ok (a truncated file only warns), 1 bad input, 2 usage.\n";

/* frame 0: (unreturned), the calls still open at the end; incl: ticks */
typedef nytp_view_call node;

/* A process read, kept until the view can be applied. */
typedef struct kept_process {
    node *nodes;
    uint32_t n_nodes, cap_nodes, first;
    double tps;
    char *name;
} kept_process;

/* An open frame that holds something: the calls it made that completed.
 * The stack is sparse, as the call tree's: a return far deeper than the
 * stack opens frames that hold nothing, and only those something returned
 * into are kept, with their depth, so that memory follows the returns and
 * never the depth numbers (a return at depth 4e9 is one frame). */
typedef struct open_frame {
    uint64_t pos;           /* depth on the stack; the main program is 0 */
    uint32_t first, last;   /* completed calls made from it, in order */
} open_frame;

typedef struct ss {
    nytp_out *out;
    strmap frames;    /* normalised names; value: NYTP_NONE */
    char *norm;
    size_t cap_norm;
    /* the process being read */
    node *nodes;
    uint32_t n_nodes, cap_nodes;
    open_frame *stack;      /* by pos; stack[0]: the main program */
    uint32_t n_open, cap_stack;
    uint64_t sp;            /* frames on the stack, empty ones included */
    uint32_t pid;
    bool have_pid;
    uint32_t input;
    double tps;             /* ticks_per_sec of the current input */
    char *app;              /* its application attribute */
    /* the walk that writes a process */
    struct walk {
        uint32_t node, child;
        double open;
    } *walk;
    uint32_t cap_walk;
    nytp_view *view;        /* folds (--max-recursion) and filters */
    bool keep;              /* the view filters: keep the processes until the end */
    kept_process *kept;
    uint32_t n_kept, cap_kept;
    const char *left_out;   /* what the view left out (viewopt_header), or NULL */
    /* output */
    uint32_t n_profiles;
    bool oom;
    json j;                 /* the file: its profiles array stays open */
} ss;

/* A failed write of the output (the output's error, reported when it is
 * closed): writing stops; loading goes on. */
static int out_status(const ss *S)
{
    return nytp_out_error(S->out)->status;
}

/* One event: a call opens or closes a frame at a time. */
static void put_event(ss *S, const char *type, uint32_t frame, double at)
{
    json *j = &S->j;
    json_object(j);
    json_key(j, "type");
    json_cstr(j, type);
    json_key(j, "frame");
    json_u64(j, frame);
    json_key(j, "at");
    json_num(j, at);
    json_end(j);
}

static uint32_t frame_of(ss *S, const char *name, uint32_t len, bool utf8)
{
    if (len + 1 > S->cap_norm) {
        size_t cap = (size_t)len + 256;
        char *b = realloc(S->norm, cap);
        if (!b) {
            S->oom = true;
            return 0;
        }
        S->norm = b;
        S->cap_norm = cap;
    }
    uint32_t n = (uint32_t)nytp_calltree_normalise(name, len, S->norm);
    bool added;
    uint32_t id = strmap_add(&S->frames, S->norm, n, utf8, &added);
    if (id == NYTP_NONE) {
        S->oom = true;
        return 0;
    }
    return id;
}

/* ---- calls of one process --------------------------------------------------- */

/* Room for one more node and one more open frame, so that a return either
 * goes in whole or not at all. */
static bool reserve_return(ss *S)
{
    return cli_grow((void **)&S->nodes, S->n_nodes + 1, &S->cap_nodes, sizeof *S->nodes) &&
           cli_grow((void **)&S->stack, S->n_open + 2, &S->cap_stack, sizeof *S->stack);
}

/* Append the new call id to the completed calls of the open frame f. */
static void add_call(ss *S, open_frame *f, uint32_t id)
{
    if (f->last == NYTP_NONE)
        f->first = id;
    else
        S->nodes[f->last].next = id;
    f->last = id;
}

/* A return at depth d: frames are opened until the stack (the main
 * program counts as one) is deeper than d, then the top one closes, as a
 * call of the frame below it (which now holds something).  A return at
 * depth 0 (only a corrupt profile has one) is taken as at depth 1, as the
 * call tree takes it: the main program never closes. */
static bool add_return(ss *S, uint32_t d, double incl, nytp_str name)
{
    if (!reserve_return(S))
        return false;
    if (S->n_open == 0) {
        S->stack[S->n_open++] = (open_frame){0, NYTP_NONE, NYTP_NONE};
        S->sp = 1;
    }
    uint64_t need = d == 0 ? 2 : (uint64_t)d + 1;
    if (S->sp < need)
        S->sp = need;
    uint32_t f = frame_of(S, name.ptr, name.len, name.utf8);
    if (S->oom)
        return false;
    uint64_t pos = --S->sp;
    uint32_t first = NYTP_NONE;
    if (S->stack[S->n_open - 1].pos == pos)
        first = S->stack[--S->n_open].first;
    if (S->stack[S->n_open - 1].pos != pos - 1)
        S->stack[S->n_open++] = (open_frame){pos - 1, NYTP_NONE, NYTP_NONE};
    uint32_t id = S->n_nodes++;
    /* NaN, an infinity, a negative time: a call of no length (speedscope
     * has no number for them; flame --svg draws them so) */
    S->nodes[id] = (node){f, first, NYTP_NONE, fmt_time_scaled(incl, 1)};
    add_call(S, &S->stack[S->n_open - 1], id);
    return true;
}

/* The process ended with frames still open: their names, and how many of
 * them there were between those that hold something, are unknown.  As in
 * the call tree, they become one call "(unreturned)" (frame 0) from the
 * main program, holding the calls that completed in any of them, the
 * outermost frame's first (they were made before the deeper frames were
 * entered). */
static bool close_unreturned(ss *S)
{
    if (S->n_open > 1) {
        if (!reserve_return(S))
            return false;
        uint32_t id = S->n_nodes++;
        S->nodes[id] = (node){0, NYTP_NONE, NYTP_NONE, 0};
        open_frame u = {0, NYTP_NONE, NYTP_NONE};
        for (uint32_t i = 1; i < S->n_open; i++) {
            if (S->stack[i].first == NYTP_NONE)
                continue;
            if (u.last == NYTP_NONE)
                u.first = S->stack[i].first;
            else
                S->nodes[u.last].next = S->stack[i].first;
            u.last = S->stack[i].last;
        }
        S->nodes[id].first_child = u.first;
        add_call(S, &S->stack[0], id);
    }
    S->n_open = S->n_open ? 1 : 0;
    S->sp = S->n_open;
    return true;
}

/* Room in the walk for entry sp (the walk is as deep as the calls nest,
 * which the sparse stack does not bound). */
static bool walk_push(ss *S, uint32_t sp)
{
    if (cli_grow((void **)&S->walk, (size_t)sp + 1, &S->cap_walk, sizeof *S->walk))
        return true;
    S->oom = true;
    return false;
}

/* ---- writing a process ------------------------------------------------------ */

static nytp_str frame_name(void *ctx, uint32_t frame)
{
    ss *S = ctx;
    return (nytp_str){strmap_str(&S->frames, frame), S->frames.v[frame].len, true};
}

static uint32_t frame_intern(void *ctx, const char *name, uint32_t len)
{
    ss *S = ctx;
    uint32_t id = frame_of(S, name, len, true);
    return S->oom ? NYTP_VIEW_NOT_DRAWN : id;
}

/* Write the calls in S->nodes whose outermost ones are the list at first,
 * as one evented profile named name, through the view. */
static void write_process(ss *S, const char *name, uint32_t first)
{
    nytp_view_names names = {frame_name, frame_intern, S};
    nytp_error e = {0};
    if (nytp_view_apply_calls(S->view, &S->nodes, &S->n_nodes, &S->cap_nodes, &first, &names, &e) < 0) {
        S->oom = true;
        return;
    }
    double k = S->tps > 0 ? 1e9 / S->tps : 1;
    json *j = &S->j;
    S->n_profiles++;
    json_break(j, "\n");
    json_object(j);
    json_key(j, "type");
    json_cstr(j, "evented");
    json_key(j, "name");
    json_cstr(j, name);
    json_key(j, "unit");
    json_cstr(j, S->tps > 0 ? "nanoseconds" : "none");
    json_key(j, "startValue");
    json_u64(j, 0);
    json_key(j, "events");
    json_array(j);
    double cursor = 0;
    uint32_t sp = 0;
    for (uint32_t top = first; top != NYTP_VIEW_NO_CALL && !out_status(S); top = S->nodes[top].next) {
        /* depth first; each entry: a call and the next of its calls to lay */
        sp = 0;
        if (!walk_push(S, sp))
            return;
        S->walk[sp++] = (struct walk){top, S->nodes[top].first_child, cursor};
        bool opened = false;
        while (sp && !out_status(S) && !S->oom) {
            struct walk *w = &S->walk[sp - 1];
            const node *n = &S->nodes[w->node];
            if (!opened && n->frame != NYTP_VIEW_NOT_DRAWN)
                put_event(S, "O", n->frame, w->open);
            if (w->child != NYTP_VIEW_NO_CALL) {
                uint32_t c = w->child;
                w->child = S->nodes[c].next;
                if (!walk_push(S, sp))
                    return;
                S->walk[sp] = (struct walk){c, S->nodes[c].first_child, cursor};
                sp++;
                opened = false;
                continue;
            }
            double close = w->open + fmt_time_scaled(n->incl, k);
            if (close < cursor || !isfinite(close)) /* huge times add up to Inf */
                close = cursor;
            cursor = close;
            if (n->frame != NYTP_VIEW_NOT_DRAWN)
                put_event(S, "C", n->frame, close);
            sp--;
            opened = true;
        }
    }
    json_end(j);
    json_key(j, "endValue");
    json_num(j, cursor);
    json_end(j);
}

/* Write the calls of the process read so far as one evented profile (or
 * keep them for the end), and forget them. */
static void end_process(ss *S)
{
    if (!close_unreturned(S)) {
        S->oom = true;
        return;
    }
    if (S->n_nodes == 0) {
        S->n_open = 0;
        S->sp = 0;
        return;
    }
    char name[200];
    if (S->have_pid)
        snprintf(name, sizeof name, "%s (pid %u)", S->app ? S->app : "perl", S->pid);
    else
        snprintf(name, sizeof name, "%s", S->app ? S->app : "perl");
    if (S->keep) {
        char *nm = strdup(name);
        if (!nm || !cli_grow((void **)&S->kept, (size_t)S->n_kept + 1, &S->cap_kept, sizeof *S->kept)) {
            free(nm);
            S->oom = true;
            return;
        }
        S->kept[S->n_kept++] = (kept_process){S->nodes, S->n_nodes, S->cap_nodes, S->stack[0].first, S->tps, nm};
        S->nodes = NULL;
        S->cap_nodes = 0;
    } else {
        write_process(S, name, S->stack[0].first);
    }
    S->n_nodes = 0;
    S->n_open = 0;
    S->sp = 0;
}

/* The processes kept, through the view, their names saying what it left
 * out. */
static void write_kept(ss *S)
{
    free(S->nodes);
    double tps = S->tps;
    for (uint32_t i = 0; i < S->n_kept && !S->oom && !out_status(S); i++) {
        kept_process *k = &S->kept[i];
        S->nodes = k->nodes;
        S->n_nodes = k->n_nodes;
        S->cap_nodes = k->cap_nodes;
        S->tps = k->tps;
        k->nodes = NULL;
        char name[1400];
        snprintf(name, sizeof name, "%s \xe2\x80\x94 %s", k->name, S->left_out ? S->left_out : "");
        write_process(S, name, k->first);
        free(S->nodes);
        S->nodes = NULL;
        S->n_nodes = S->cap_nodes = 0;
    }
    S->tps = tps;
}

static int on_chunk(void *ctx, const nytp_chunk *c)
{
    ss *S = ctx;
    switch (c->tag) {
    case NYTP_TAG_VERSION:
        end_process(S);
        S->have_pid = false;
        S->tps = 0;
        break;
    case NYTP_TAG_PID_START:
        end_process(S);
        S->pid = c->u.pid_start.pid;
        S->have_pid = true;
        break;
    case NYTP_TAG_ATTRIBUTE: {
        const nytp_str *k = &c->u.kv.key, *v = &c->u.kv.value;
        if (k->len == 13 && memcmp(k->ptr, "ticks_per_sec", 13) == 0) {
            char b[40];
            size_t n = v->len < sizeof b - 1 ? v->len : sizeof b - 1;
            memcpy(b, v->ptr, n);
            b[n] = 0;
            S->tps = strtod(b, NULL);
        } else if (k->len == 11 && memcmp(k->ptr, "application", 11) == 0) {
            char *a = malloc((size_t)v->len + 1);
            if (!a)
                return NYTP_E_NOMEM;
            memcpy(a, v->ptr, v->len);
            a[v->len] = 0;
            free(S->app);
            S->app = a;
        }
        break;
    }
    case NYTP_TAG_SUB_RETURN:
        if (!add_return(S, c->u.sub_return.depth, c->u.sub_return.incl, c->u.sub_return.name))
            return NYTP_E_NOMEM;
        break;
    default: break;
    }
    /* a write error is the output's, reported when it is closed, not the
     * input's: loading goes on, writing stopped at the error */
    return S->oom ? NYTP_E_NOMEM : 0;
}

/* ---- without call events ------------------------------------------------------- */

typedef struct sampled {
    ss *S;
    double *weights;
    uint32_t n, cap;
    double total;
} sampled;

/* One sample: a path (outermost first) weighing ns nanoseconds. */
static int add_sample(sampled *W, const nytp_str *path, uint32_t depth, double ns)
{
    ss *S = W->S;
    if (!cli_grow((void **)&W->weights, (size_t)W->n + 1, &W->cap, sizeof *W->weights))
        return NYTP_E_NOMEM;
    W->weights[W->n] = ns;
    /* huge weights add up to Inf, which JSON cannot say */
    W->total = isfinite(W->total + ns) ? W->total + ns : DBL_MAX;
    W->n++;
    json_array(&S->j);
    for (uint32_t i = 0; i < depth; i++)
        json_u64(&S->j, frame_of(S, path[i].ptr, path[i].len, path[i].utf8));
    json_end(&S->j);
    if (S->oom)
        return NYTP_E_NOMEM;
    return out_status(S);
}

static int on_site_path(void *ctx, const nytp_str *path, uint32_t depth, uint32_t fid,
                        uint32_t line, double excl, uint64_t calls)
{
    (void)fid, (void)line, (void)calls;
    return add_sample(ctx, path, depth, fmt_time_scaled(excl, 1e9));
}

/* --sampled with call events: a sample per call path of the call tree
 * (the paths of 'nytp calls') that has time of its own. */
typedef struct tree_sampled {
    sampled W;
    double ns_per_tick;
} tree_sampled;

static int on_tree_node(void *ctx, const nytp_calltree_visit *v)
{
    tree_sampled *T = ctx;
    double ns = fmt_time_scaled(v->excl, T->ns_per_tick);
    return ns > 0 ? add_sample(&T->W, v->path, v->depth, ns) : 0;
}

static int write_sampled(ss *S, export_profile *x)
{
    const char *app = nytp_profile_attr(x->p, "application");
    json *j = &S->j;
    json_break(j, "\n");
    json_object(j);
    json_key(j, "type");
    json_cstr(j, "sampled");
    json_key(j, "name");
    if (S->left_out) { /* speedscope shows the name above the graph */
        char name[1200];
        snprintf(name, sizeof name, "%s \xe2\x80\x94 %s", app ? app : "perl", S->left_out);
        json_cstr(j, name);
    } else {
        json_cstr(j, app ? app : "perl");
    }
    json_key(j, "unit");
    json_cstr(j, "nanoseconds");
    json_key(j, "startValue");
    json_u64(j, 0);
    json_key(j, "samples");
    json_array(j);
    tree_sampled T = {{S, NULL, 0, 0, 0}, 0};
    sampled *W = &T.W;
    int st;
    if ((x->returns || x->viewed) && x->p->ticks_per_sec > 0) {
        T.ns_per_tick = 1e9 / x->p->ticks_per_sec;
        /* folded as in nytp calls (a view is folded already) */
        nytp_error e = {0};
        st = !x->viewed && nytp_view_apply(S->view, &x->t, &e) < 0 ? NYTP_E_NOMEM : 0;
        if (st == 0)
            st = nytp_calltree_walk(x->t, 0, on_tree_node, &T);
    } else {
        st = export_site_paths(x, on_site_path, W);
    }
    if (st == 0) {
        json_end(j);
        json_key(j, "weights");
        json_array(j);
        for (uint32_t i = 0; i < W->n; i++)
            json_num(j, W->weights[i]);
        json_end(j);
        json_key(j, "endValue");
        json_num(j, W->total);
        json_end(j);
        S->n_profiles++;
    }
    free(W->weights);
    return st;
}

/* The frames, last: every name is known, and the model says where each
 * sub is. */
static void write_frames(ss *S, export_profile *x)
{
    json *j = &S->j;
    json_raw(j, "\n");
    json_end(j); /* the profiles */
    json_key(j, "shared");
    json_object(j);
    json_key(j, "frames");
    json_array(j);
    for (uint32_t i = 0; i < S->frames.n && !out_status(S); i++) {
        const char *name = strmap_str(&S->frames, i);
        uint32_t len = S->frames.v[i].len;
        json_break(j, "\n");
        json_object(j);
        json_key(j, "name");
        json_str(j, name, len);
        const nytp_sub *s = export_find_sub(x, name, len);
        const char *file = export_sub_file(x, s);
        if (*file) {
            json_key(j, "file");
            json_cstr(j, file);
        }
        if (s && s->first_line != NYTP_NONE && s->first_line > 0) {
            json_key(j, "line");
            json_u64(j, s->first_line);
        }
        json_end(j);
    }
    json_end(j);
    json_end(j);
    json_end(j);
    json_raw(j, "\n");
}

/* ---- the command ------------------------------------------------------------- */

struct ss_opts {
    bool strict;
    const char *output;
    bool sampled;
    viewopt vo;
};

enum { OPT_STRICT = 256, OPT_SAMPLED };

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct ss_opts *o = ctx;
    if (viewopt_on_opt(&o->vo, opt, arg))
        return;
    switch (opt) {
    case OPT_STRICT: o->strict = true; break;
    case OPT_SAMPLED: o->sampled = true; break;
    case 'o': o->output = arg; break;
    }
}

/* The opening of the file, and frame 0, which names the calls whose
 * return was never seen. */
static void ss_begin(ss *S, nytp_out *out)
{
    memset(S, 0, sizeof *S);
    S->out = out;
    frame_of(S, NYTP_CALLTREE_UNRETURNED, (uint32_t)strlen(NYTP_CALLTREE_UNRETURNED), false);
    json *j = &S->j;
    json_init(j, out);
    json_object(j);
    json_key(j, "$schema");
    json_cstr(j, "https://www.speedscope.app/file-format-schema.json");
    json_key(j, "exporter");
    json_cstr(j, "nytp " NYTP_VERSION_STRING);
    json_key(j, "activeProfileIndex");
    json_u64(j, 0);
    json_key(j, "profiles");
    json_array(j);
}

/* The rest, once x is loaded (through on_chunk): the last process, or
 * without call events the sampled profile (said on standard error with
 * the name of the input when what is not NULL), and the frames. */
static int ss_end(ss *S, export_profile *x, const char *what, bool as_samples)
{
    int st = NYTP_OK;
    end_process(S);
    if (S->keep && x->returns) {
        write_kept(S);
    } else if (x->viewed) {
        st = write_sampled(S, x);
    } else if (as_samples && x->returns) {
        st = write_sampled(S, x);
    } else if (!x->returns) {
        if (what)
            cli_warn("%s: no sub return events (profiled with calls=0?): a sampled profile of "
                     "caller;called paths from the call-site data",
                     what);
        st = write_sampled(S, x);
    }
    if (st == 0)
        write_frames(S, x);
    if (S->oom)
        st = NYTP_E_NOMEM;
    else if (out_status(S))
        st = out_status(S);
    return st < 0 ? st : st ? NYTP_E_NOMEM : NYTP_OK;
}

static void ss_release(ss *S)
{
    strmap_release(&S->frames);
    free(S->norm);
    free(S->nodes);
    free(S->stack);
    free(S->walk);
    for (uint32_t i = 0; i < S->n_kept; i++) {
        free(S->kept[i].nodes);
        free(S->kept[i].name);
    }
    free(S->kept);
    free(S->app);
}

int cmd_speedscope(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"strict", no_argument, NULL, OPT_STRICT},
        VIEWOPT_LONGOPTS,
        {"output", required_argument, NULL, 'o'},
        {"sampled", no_argument, NULL, OPT_SAMPLED},
        {NULL, 0, NULL, 0},
    };
    struct ss_opts o = {false, "nytprof.speedscope.json", false, {NULL, 0}};
    viewopt_init(&o.vo);
    int first = cli_parse(argc, argv, "f:o:", longopts, usage, on_opt, &o);
    cli_output_not_input(o.output, argc - first, argv + first, "nytprof.out");
    nytp_out *out = cli_output_open(o.output);
    if (!out) {
        viewopt_release(&o.vo);
        return EXIT_BAD_INPUT;
    }
    ss S;
    ss_begin(&S, out);
    S.view = viewopt_view(&o.vo);
    S.keep = viewopt_active(&o.vo) && !o.sampled;
    char left_out[1024];
    export_profile x;
    /* --sampled: no time line, so the call events are not laid out */
    int rc = export_load(&x, argc - first, argv + first, o.strict, o.sampled ? NULL : on_chunk, &S);
    int st = NYTP_OK;
    if (rc == EXIT_OK && viewopt_active(&o.vo)) {
        if (export_apply_view(&x, &o.vo) < 0) {
            export_release(&x);
            rc = EXIT_BAD_INPUT;
        } else {
            viewopt_header(&o.vo, left_out, sizeof left_out, x.p->ticks_per_sec);
            S.left_out = left_out;
        }
    }
    if (rc == EXIT_OK) {
        st = ss_end(&S, &x,
                    argc - first == 1 ? argv[first]
                    : argc > first    ? "the profiles"
                                      : "nytprof.out",
                    o.sampled);
        export_release(&x);
    }
    ss_release(&S);
    viewopt_release(&o.vo);
    if (rc != EXIT_OK) {
        nytp_out_abort(out);
        return rc;
    }
    return cli_output_finish(out, o.output, st);
}

int speedscope_write_memory(const void *data, size_t size)
{
    nytp_out *out;
    nytp_error e = {0};
    int st = nytp_out_open_mem(&out, &e);
    if (st < 0)
        return st;
    ss S;
    ss_begin(&S, out);
    if (nytp_view_new(&S.view, &e) < 0) {
        ss_release(&S);
        nytp_out_abort(out);
        return NYTP_E_NOMEM;
    }
    nytp_view_set_max_recursion(S.view, 2); /* small, so that the fuzz target's inputs reach the folding */
    export_profile x;
    st = export_load_mem(&x, data, size, 2, on_chunk, &S);
    if (st == NYTP_OK) {
        st = ss_end(&S, &x, NULL, false);
        export_release(&x);
    }
    nytp_view_free(S.view);
    ss_release(&S);
    nytp_out_abort(out);
    return st;
}

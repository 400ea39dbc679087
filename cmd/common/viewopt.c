/* viewopt.c — the view options of the reports (see viewopt.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fmt.h"
#include "viewopt.h"

void viewopt_init(viewopt *o)
{
    o->v = NULL;
    o->max_recursion = NYTP_CALLTREE_MAX_RECURSION;
}

void viewopt_release(viewopt *o)
{
    nytp_view_free(o->v);
    o->v = NULL;
}

static nytp_view *view(viewopt *o)
{
    nytp_error e = {0};
    if (!o->v && nytp_view_new(&o->v, &e) < 0) {
        cli_error("out of memory");
        exit(EXIT_BAD_INPUT);
    }
    return o->v;
}

bool viewopt_on_opt(viewopt *o, int opt, const char *arg)
{
    static const char *const names[] = {"--focus", "--ignore", "--hide"};
    enum nytp_view_op op;
    switch (opt) {
    case OPT_VIEW_FOCUS: op = NYTP_VIEW_FOCUS; break;
    case OPT_VIEW_IGNORE: op = NYTP_VIEW_IGNORE; break;
    case OPT_VIEW_HIDE: op = NYTP_VIEW_HIDE; break;
    case OPT_VIEW_MAX_RECURSION: o->max_recursion = cli_parse_max_recursion(arg); return true;
    default: return false;
    }
    nytp_error e = {0};
    int st = nytp_view_add(view(o), op, arg, &e);
    if (st == NYTP_E_USAGE)
        cli_usage_error("%s: %s", names[op], e.msg);
    if (st < 0) {
        cli_error("out of memory");
        exit(EXIT_BAD_INPUT);
    }
    return true;
}

nytp_view *viewopt_view(viewopt *o)
{
    nytp_view_set_max_recursion(view(o), o->max_recursion);
    return o->v;
}

bool viewopt_active(const viewopt *o)
{
    return nytp_view_active(o->v, NYTP_VIEW_N_OPS);
}

int viewopt_apply(viewopt *o, nytp_calltree **t)
{
    nytp_view_set_max_recursion(view(o), o->max_recursion);
    nytp_error e = {0};
    int st = nytp_view_apply(o->v, t, &e);
    if (st < 0)
        cli_error("%s", e.msg);
    return st;
}

static double pct(double part, double whole)
{
    return whole > 0 ? 100 * part / whole : 0;
}

size_t viewopt_header(const viewopt *o, char *buf, size_t size, double tps)
{
    nytp_view_stats s = {0};
    if (o->v)
        nytp_view_get_stats(o->v, &s);
    return viewopt_header_of(o, &s, buf, size, tps);
}

void viewopt_stats_add(nytp_view_stats *a, const nytp_view_stats *b)
{
    a->total += b->total;
    a->shown += b->shown;
    a->unfocused += b->unfocused;
    a->ignored += b->ignored;
    a->hidden += b->hidden;
    a->hidden_subs = a->hidden_subs > b->hidden_subs ? a->hidden_subs : b->hidden_subs;
    a->folded += b->folded;
}

size_t viewopt_header_of(const viewopt *o, const nytp_view_stats *sp, char *buf, size_t size, double tps)
{
    static const char *const words[] = {"focus", "ignore", "hide"};
    size_t n = 0;
    buf[0] = 0;
    if (!viewopt_active(o))
        return 0;
#define PUT(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__), n = n < size ? n : size - 1)
    for (int op = 0; op < NYTP_VIEW_N_OPS; op++)
        for (size_t i = 0; i < nytp_view_count(o->v, (enum nytp_view_op)op); i++)
            PUT("%s%s '%s'", n ? ", " : "", words[op], nytp_view_pattern(o->v, (enum nytp_view_op)op, i));
    nytp_view_stats s = *sp;
    double scale = tps > 0 ? 1 / tps : 1;
    char total[40];
    *fmt_duration(total, s.total * scale) = 0;
    PUT(": %.1f%% of %s in subs shown", pct(s.shown, s.total), total);
    if (s.unfocused > 0 || s.ignored > 0) {
        PUT(" (");
        if (s.unfocused > 0)
            PUT("%.1f%% outside the focus", pct(s.unfocused, s.total));
        if (s.ignored > 0)
            PUT("%s%.1f%% ignored", s.unfocused > 0 ? ", " : "", pct(s.ignored, s.total));
        PUT(")");
    }
    if (s.hidden_subs) {
        char moved[40];
        *fmt_duration(moved, s.hidden * scale) = 0;
        PUT("; %llu sub%s hidden, %s (%.1f%%) of exclusive time given to their callers",
            (unsigned long long)s.hidden_subs, s.hidden_subs == 1 ? "" : "s", moved,
            pct(s.hidden, s.total));
    }
#undef PUT
    return n;
}

/* viewopt.h — the options every report that shows subs or call stacks
 * shares (--focus, --ignore, --hide, --max-recursion), their help text,
 * and the line that says what a filtered report leaves out.  The filter
 * itself is libformat's view (nytp/view.h): commands only parse and say.
 *
 *     static const struct option longopts[] = { ..., VIEWOPT_LONGOPTS, ...};
 *     viewopt vo;  viewopt_init(&vo);
 *     on_opt: if (viewopt_on_opt(&vo, opt, arg)) break;
 *     ... load the call tree t ...
 *     if (viewopt_apply(&vo, &t) < 0) ...;     // filtered and folded
 *     viewopt_header(&vo, buf, sizeof buf, tps) // "" when nothing left out
 *     viewopt_release(&vo);
 */
#ifndef NYTP_VIEWOPT_H
#define NYTP_VIEWOPT_H

#include <stdbool.h>
#include <stddef.h>

#include "nytp/calltree.h"
#include "nytp/view.h"

enum { OPT_VIEW_FOCUS = 0x1100, OPT_VIEW_IGNORE, OPT_VIEW_HIDE, OPT_VIEW_MAX_RECURSION };

#define VIEWOPT_LONGOPTS                                               \
    {"focus", required_argument, NULL, OPT_VIEW_FOCUS},                \
    {"ignore", required_argument, NULL, OPT_VIEW_IGNORE},              \
    {"hide", required_argument, NULL, OPT_VIEW_HIDE},                  \
    {"max-recursion", required_argument, NULL, OPT_VIEW_MAX_RECURSION}

/* The options' lines in a command's --help. */
#define VIEWOPT_USAGE                                                                   \
    "  --focus=RE        keep only the call stacks through a sub matching RE\n"         \
    "                    (a POSIX extended regular expression; repeatable)\n"          \
    "  --ignore=RE       drop the call stacks through a sub matching RE\n"             \
    "  --hide=RE         take the subs matching RE out of the stacks: their\n"         \
    "                    exclusive time goes to their nearest shown caller\n"          \
    "                    (main::RUNTIME when none); totals stay\n"                      \
    "                    RE 'file:RE2' matches a sub by the file it is in\n"           \
    "  --max-recursion=N fold direct recursion deeper than N frames into one\n"        \
    "                    frame 'NAME\xe2\x80\xa6[\xc3\x97K]' (default: 1000; 0: never)\n"

#define VIEWOPT_SYNOPSIS "[--focus=RE] [--ignore=RE] [--hide=RE] [--max-recursion=N]"

typedef struct viewopt {
    nytp_view *v;
    uint32_t max_recursion;
} viewopt;

void viewopt_init(viewopt *o);
void viewopt_release(viewopt *o);
/* Take opt if it is one of VIEWOPT_LONGOPTS (true), exiting 2 on a bad
 * value; false for any other option. */
bool viewopt_on_opt(viewopt *o, int opt, const char *arg);
/* The view of the options (made when no pattern was given), its
 * --max-recursion set: for a report that applies it itself
 * (nytp_view_apply_calls).  Owned by o. */
nytp_view *viewopt_view(viewopt *o);
/* Whether a pattern was given. */
bool viewopt_active(const viewopt *o);
/* Filter and fold *t (nytp_view_apply); says what went wrong and returns
 * < 0 on failure. */
int viewopt_apply(viewopt *o, nytp_calltree **t);
/* What the view left out, for a report's first line or header:
 *   "focus '^main::handle': 41.2% of 3.20s in subs shown (58.8% outside the focus)"
 * "" when no pattern was given.  tps converts ticks to seconds. */
size_t viewopt_header(const viewopt *o, char *buf, size_t size, double tps);
/* The same of given stats (several views added up: diff's runs). */
size_t viewopt_header_of(const viewopt *o, const nytp_view_stats *s, char *buf, size_t size, double tps);
/* a += b */
void viewopt_stats_add(nytp_view_stats *a, const nytp_view_stats *b);

#endif

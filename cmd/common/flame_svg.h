/* flame_svg.h — draw a call tree as one self-contained, interactive SVG
 * flame graph (used by 'nytp flame --svg' and by the HTML report).
 *
 * The SVG has no external reference: inline CSS and a small script give
 * tooltips (each frame's <title>: sub name, time, share of the total,
 * calls), click to zoom (click the bottom frame, "all", or "Reset zoom"
 * to reset), search by regular expression (button or Ctrl-F) which
 * highlights the matching frames and shows the share of the total they
 * cover, and Escape to clear both.  Frames are sized by inclusive time
 * (or calls), sorted by name at each level, coloured by a hash of their
 * package so a package keeps its colour across graphs.  Frames narrower
 * than minwidth pixels are not drawn: a run of such neighbours is drawn
 * as one grey frame when together they are wide enough, so huge trees
 * stay small and fast.  Everything from the profile is XML-escaped; bytes
 * that are not UTF-8 are shown as Latin-1.
 *
 * Links: with link_template, each frame is a link (target _top, so it
 * works from inside an <object> or <iframe>).  In the template "%s"
 * becomes the sub name percent-encoded (every byte but A-Z a-z 0-9 - . _ ~
 * as %XX, so "Foo::bar" gives "Foo%3A%3Abar") and "%%" a '%'; e.g.
 * "subs.html#%s".  link_fn, when set, is used instead and returns the
 * URL for a name (or NULL for no link); it is written XML-escaped.  A
 * plain click on a linked frame zooms; clicking the frame already zoomed
 * to, or a Ctrl/Cmd/middle click, follows the link.
 *
 * Styles: with style_fn, the caller picks each frame's colour and adds a
 * note to its tooltip ('nytp diff' colours frames by their change).  It is
 * called for every node of the sorted walk, parents before children, also
 * for nodes too narrow to be drawn (so that it can follow the paths), and
 * once first with v NULL for the bottom frame ("all").  It sets *rgb to
 * 0xRRGGBB, or leaves it at -1 for the usual colour, and may write a
 * NUL-terminated note (escaped when written; line ends become spaces)
 * into note, which has room for note_size bytes.  A non-zero return stops
 * drawing with that status.  Merged narrow frames stay grey.
 */
#ifndef NYTP_FLAME_SVG_H
#define NYTP_FLAME_SVG_H

#include <stdbool.h>

#include "nytp/calltree.h"
#include "nytp/nytp.h"

#define FLAME_SVG_WIDTH 1200
#define FLAME_SVG_MINWIDTH 0.5

typedef struct flame_svg_opts {
    const char *title;          /* NULL: "Flame Graph" */
    unsigned width;             /* pixels; 0: FLAME_SVG_WIDTH */
    double minwidth;            /* pixels; negative: FLAME_SVG_MINWIDTH; 0 draws all */
    bool by_calls;              /* size frames by calls, not exclusive ticks */
    bool inverted;              /* icicle: callers at the top, callees below */
    const char *link_template;  /* see above; NULL: no links */
    const char *(*link_fn)(void *ctx, nytp_str name);
    void *link_ctx;
    bool fragment;              /* no XML declaration: for inlining in HTML */
    double ticks_per_sec;       /* 0: the tree's, else times are shown in ticks */
    int (*style_fn)(void *ctx, const nytp_calltree_visit *v, long *rgb, char *note,
                    size_t note_size);
    void *style_ctx;
    const char *subtitle_note;  /* appended to the subtitle (a legend); NULL: none */
    bool counts_unknown;        /* a sampled profile: no call counts are shown */
} flame_svg_opts;

/* Fill o with the defaults (all of the above zero/NULL, minwidth -1). */
void flame_svg_opts_init(flame_svg_opts *o);

/* Write the SVG of t (filtered and folded by the view before, if at all)
 * to out.  NYTP_OK, NYTP_E_NOMEM, or the out's error status. */
int flame_svg_write(nytp_out *out, const nytp_calltree *t, const flame_svg_opts *o);

#endif

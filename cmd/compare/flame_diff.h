/* flame_diff.h — the differential flame graph: NEW's call tree drawn by
 * flame_svg.c with each frame coloured by how the time of its call path
 * changed against the same path in BASE's tree (white: no change, red:
 * slower, blue: faster, deeper the larger the change), the change in its
 * tooltip.  With several runs a side, a frame whose sub's change the
 * comparison's test does not find significant is drawn neutral: summed
 * trees have no per-run values of a path, and without the test every
 * frame shows the runs' noise as a change.  Names are matched across checkouts through a pathmap.  Used
 * by 'nytp diff --svg' and the report of 'nytp html --base'.
 *
 *     flame_diff *d;
 *     flame_diff_new(&d, &o);          // BASE's paths, the largest change
 *     flame_svg_opts fo;  flame_svg_opts_init(&fo);  ... links, width ...
 *     flame_diff_style(d, &fo);        // colours, notes, legend
 *     flame_svg_write(out, o.tree[1], &fo);
 *     flame_diff_free(d);
 */
#ifndef NYTP_FLAME_DIFF_H
#define NYTP_FLAME_DIFF_H

#include "compare.h"
#include "flame_svg.h"
#include "nytp/calltree.h"
#include "pathmap.h"

typedef struct flame_diff_opts {
    const nytp_calltree *tree[2];   /* BASE's and NEW's */
    double ticks_per_sec[2];        /* of each tree (0: the tree's own) */
    double runs[2];                 /* runs added up in each tree: times are
                                       compared per run (0 counts as 1) */
    double new_scale;               /* NEW's times multiplied by it (--normalize); 0: 1 */
    pathmap *paths;                 /* names of each side to keys; NULL: as they are */
    bool normalized;                /* for the legend */
    const comparison *cmp;          /* the runs compared (its paths are paths): with
                                       2 runs a side or more, a frame is coloured only
                                       when its sub's exclusive time changed
                                       significantly (p < alpha); NULL: every frame */
    double alpha;                   /* 0: 0.05 */
} flame_diff_opts;

typedef struct flame_diff flame_diff;

/* NYTP_OK or NYTP_E_NOMEM.  o's trees and pathmap must outlive d. */
int flame_diff_new(flame_diff **d, const flame_diff_opts *o);
/* Set fo's style_fn, style_ctx and subtitle_note for drawing NEW's tree. */
void flame_diff_style(flame_diff *d, flame_svg_opts *fo);
void flame_diff_free(flame_diff *d);

#endif

/* stats.h — statistics of repeated runs, for comparisons (diff, html
 * --base): the centre of a side's runs and whether two sides differ by
 * more than their run-to-run noise.
 *
 *     double c = stats_median(v, n);                    // v is sorted
 *     double p = stats_welch_log(a, na, b, nb, floor, res, NULL, NULL);
 *     double q = stats_welch_log_above(a, na, b, nb, floor, res, 1.10); // grew > 10%?
 *     stats_holm(p, n, adjusted);                       // many at once
 *
 * The test is Welch's t-test on the logarithms of the values: a slowdown
 * multiplies a time, so its log shifts by the same amount whatever the
 * sub's size; the spread of each side is estimated on its own (Welch),
 * and the t distribution with the Welch-Satterthwaite degrees of freedom
 * gives the p-value.  Unlike a rank test it reaches small p-values with 3
 * runs a side (an exact Mann-Whitney U test of 3 + 3 runs cannot go
 * below p = 0.1 two-sided).  nytp-diff(1) says why, and what it assumes.
 */
#ifndef NYTP_STATS_H
#define NYTP_STATS_H

#include <stddef.h>

/* The median of v[0..n) (sorted in place; the mean of the two middle
 * values when n is even); NAN when n is 0. */
double stats_median(double *v, size_t n);

/* The two-sided p-value of Student's t distribution with df degrees of
 * freedom (df > 0, not necessarily whole) at t: P(|T| >= |t|).  NAN for a
 * NAN argument or df <= 0. */
double stats_t_p2(double t, double df);

/* Welch's two-sided t-test of the means of log(x + floor) of a[0..na) and
 * b[0..nb) (floor > 0 keeps a 0 finite: a time floor or a count of 1).
 * resolution > 0 (times: the clock's) is the least spread a side is taken
 * to have: values known to +-resolution, whose logs vary by at least
 * resolution / (their geometric mean, floor added); 0 for exact counts.
 * Returns p in [0, 1]; NAN when a side has fewer than 2 values or a value
 * is not a finite number >= 0.  Both sides without spread (resolution 0):
 * 1 when their means are equal, else 0 (counts that never vary differ for
 * certain).  With t and df non-NULL, the statistic and the degrees of
 * freedom (0 and 0 without spread). */
double stats_welch_log(const double *a, size_t na, const double *b, size_t nb, double floor,
                       double resolution, double *t, double *df);

/* The one-sided test that b's values are more than ratio times a's (in
 * the means of the logs, as above): the p-value of "no more than ratio
 * times".  Without spread: 0 when they are, else 1.  NAN as above, or for
 * ratio <= 0. */
double stats_welch_log_above(const double *a, size_t na, const double *b, size_t nb, double floor,
                             double resolution, double ratio);

/* Holm's step-down adjustment of p[0..n) for n tests at once: adj[i] is
 * the smallest family-wise level at which test i is rejected, so that
 * "adj[i] < alpha" keeps the chance of any false alarm among the n below
 * alpha.  NAN p-values (no test) are left NAN and do not count in n.
 * adj may be p.  Returns 0, or -1 when out of memory (adj unchanged). */
int stats_holm(const double *p, size_t n, double *adj);

#endif

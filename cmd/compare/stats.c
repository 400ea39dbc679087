/* stats.c — the statistics of repeated runs (see stats.h): median,
 * Welch's t-test on log values through the regularized incomplete beta
 * function, Holm's adjustment for many tests. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

double stats_median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The continued fraction of the incomplete beta function,
 *     1 / (1 + d1 / (1 + d2 / (1 + ...)))
 * with d(2m) = m(b-m)x / ((a+2m-1)(a+2m)) and
 *      d(2m+1) = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)),
 * evaluated front to back by Lentz's method (each step multiplies the
 * value so far by a ratio of two running quotients; a quotient that
 * comes out 0 is replaced by a tiny number). */
static double beta_fraction(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double f = tiny, c = f, d = 0;
    for (int j = 1; j <= 1000; j++) {
        double num;
        if (j == 1) {
            num = 1;
        } else {
            int k = j - 1; /* the index of d(k) */
            int m = k / 2;
            if (k % 2 == 0)
                num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
            else
                num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
        }
        d = 1 + num * d;
        if (fabs(d) < tiny)
            d = tiny;
        c = 1 + num / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        double step = c * d;
        f *= step;
        if (fabs(step - 1) < eps)
            break;
    }
    return f;
}

/* The regularized incomplete beta function I_x(a, b), for a, b > 0. */
static double incomplete_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    /* x^a (1-x)^b / B(a, b), in logs */
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    /* the fraction converges fast below the mean of the distribution;
     * above it, I_x(a, b) = 1 - I_(1-x)(b, a) */
    if (x < (a + 1) / (a + b + 2))
        return front * beta_fraction(a, b, x) / a;
    return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double stats_t_p2(double t, double df)
{
    if (isnan(t) || isnan(df) || !(df > 0))
        return NAN;
    if (isinf(t))
        return 0;
    /* P(|T| >= |t|) = I_(df / (df + t^2))(df / 2, 1 / 2) */
    double p = incomplete_beta(df / 2, 0.5, df / (df + t * t));
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

/* Mean and sample variance of log(v + floor). */
static int log_moments(const double *v, size_t n, double floor, double *mean, double *var)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] >= 0) || !isfinite(v[i]))
            return -1;
        s += log(v[i] + floor);
    }
    *mean = s / (double)n;
    double q = 0;
    for (size_t i = 0; i < n; i++) {
        double d = log(v[i] + floor) - *mean;
        q += d * d;
    }
    *var = q / (double)(n - 1);
    return 0;
}

/* The two-sided test (margin 0, two_sided) or the one-sided one that b's
 * mean log exceeds a's by more than margin. */
static double welch(const double *a, size_t na, const double *b, size_t nb, double floor,
                    double resolution, double margin, bool two_sided, double *t, double *df)
{
    if (t)
        *t = NAN;
    if (df)
        *df = NAN;
    if (na < 2 || nb < 2 || !(floor > 0))
        return NAN;
    double ma, va, mb, vb;
    if (log_moments(a, na, floor, &ma, &va) < 0 || log_moments(b, nb, floor, &mb, &vb) < 0)
        return NAN;
    /* a value is known to +-resolution at best: each side's spread is at
     * least that, in logs (a 600ns line that is 600ns in every run does
     * not differ for certain from one that is 700ns) */
    if (resolution > 0) {
        double ra = resolution / exp(ma), rb = resolution / exp(mb);
        if (va < ra * ra)
            va = ra * ra;
        if (vb < rb * rb)
            vb = rb * rb;
    }
    double sa = va / (double)na, sb = vb / (double)nb, se2 = sa + sb;
    /* no spread at all (rounding of equal values included): the means
     * are equal or they differ for certain */
    double scale = fabs(ma) + fabs(mb) + 1;
    if (se2 <= DBL_EPSILON * DBL_EPSILON * scale * scale) {
        if (t)
            *t = 0;
        if (df)
            *df = 0;
        if (two_sided)
            return fabs(mb - ma) <= 1e-12 * scale ? 1 : 0;
        return mb - ma - margin > 1e-12 * scale ? 0 : 1;
    }
    double tv = (mb - ma - margin) / sqrt(se2);
    double dfv = se2 * se2 / (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
    if (t)
        *t = tv;
    if (df)
        *df = dfv;
    double p2 = stats_t_p2(tv, dfv);
    if (two_sided)
        return p2;
    return tv > 0 ? p2 / 2 : 1 - p2 / 2;
}

double stats_welch_log(const double *a, size_t na, const double *b, size_t nb, double floor,
                       double resolution, double *t, double *df)
{
    return welch(a, na, b, nb, floor, resolution, 0, true, t, df);
}

double stats_welch_log_above(const double *a, size_t na, const double *b, size_t nb, double floor,
                             double resolution, double ratio)
{
    if (!(ratio > 0))
        return NAN;
    return welch(a, na, b, nb, floor, resolution, log(ratio), false, NULL, NULL);
}

typedef struct ranked {
    double p;
    size_t i;
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

int stats_holm(const double *p, size_t n, double *adj)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += !isnan(p[i]);
    ranked *r = malloc((m ? m : 1) * sizeof *r);
    if (!r)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(p[i]))
            r[k++] = (ranked){p[i], i};
    qsort(r, m, sizeof *r, cmp_ranked);
    /* the j-th smallest (from 0) is compared with alpha / (m - j): its
     * adjusted value is (m - j) p, never below the one before it */
    double running = 0;
    for (size_t j = 0; j < m; j++) {
        double v = (double)(m - j) * r[j].p;
        if (v > 1)
            v = 1;
        if (v < running)
            v = running;
        running = v;
        r[j].p = v;
    }
    for (size_t i = 0; i < n; i++)
        if (isnan(p[i]))
            adj[i] = NAN;
    for (size_t j = 0; j < m; j++)
        adj[r[j].i] = r[j].p;
    free(r);
    return 0;
}

/* test_stats.c — the statistics of repeated runs (cmd/compare/stats.c, compiled
 * in here): the median, the t distribution's tail against closed forms
 * and printed tables, Welch's test on logs, Holm's adjustment. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#include "../../cmd/compare/stats.c"

static void median_cases(void **state)
{
    (void)state;
    double a[] = {3, 1, 2};
    assert_true(stats_median(a, 3) == 2);
    double b[] = {4, 1, 3, 2};
    assert_true(stats_median(b, 4) == 2.5);
    double c[] = {7};
    assert_true(stats_median(c, 1) == 7);
    assert_true(isnan(stats_median(c, 0)));
}

/* With 1 and 2 degrees of freedom the tail has a closed form. */
static void t_tail_closed_forms(void **state)
{
    (void)state;
    for (double t = 0; t < 200; t = t * 1.3 + 0.01) {
        double p1 = 1 - 2 * atan(t) / M_PI;
        double p2 = 1 - t / sqrt(2 + t * t);
        assert_true(fabs(stats_t_p2(t, 1) - p1) < 1e-12 * (1 + p1));
        assert_true(fabs(stats_t_p2(-t, 1) - p1) < 1e-12 * (1 + p1));
        assert_true(fabs(stats_t_p2(t, 2) - p2) < 1e-10 * (1 + p2) + 1e-15);
    }
    assert_true(stats_t_p2(0, 3.7) == 1);
    assert_true(stats_t_p2(INFINITY, 3) == 0);
    assert_true(isnan(stats_t_p2(NAN, 3)));
    assert_true(isnan(stats_t_p2(1, 0)));
}

/* The two-sided critical values of printed t tables: p is the level. */
static void t_tail_tables(void **state)
{
    (void)state;
    static const struct {
        double df, t, p;
    } table[] = {
        {1, 12.706, 0.05}, {2, 4.303, 0.05},  {3, 3.182, 0.05},  {4, 2.776, 0.05},
        {5, 2.571, 0.05},  {10, 2.228, 0.05}, {30, 2.042, 0.05}, {4, 4.604, 0.01},
        {10, 3.169, 0.01}, {3, 5.841, 0.01},  {2, 9.925, 0.01},  {1e7, 1.95996, 0.05},
        {1e7, 2.57583, 0.01},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        double p = stats_t_p2(table[i].t, table[i].df);
        assert_true(fabs(p - table[i].p) < 2e-3 * table[i].p);
    }
    /* monotone in t, between the integer degrees of freedom in df */
    assert_true(stats_t_p2(3, 2.5) > stats_t_p2(3, 3) && stats_t_p2(3, 2.5) < stats_t_p2(3, 2));
}

static void welch_on_logs(void **state)
{
    (void)state;
    /* logs 0, 1, 2 against 1, 2, 3: means 1 and 2, variances 1 and 1,
     * t = 1 / sqrt(2/3), df = 4 */
    double a[] = {1, M_E, M_E * M_E}, b[] = {M_E, M_E * M_E, M_E * M_E * M_E};
    double t, df;
    double p = stats_welch_log(a, 3, b, 3, 1e-300, 0, &t, &df);
    assert_true(fabs(t - 1 / sqrt(2.0 / 3)) < 1e-12);
    assert_true(fabs(df - 4) < 1e-12);
    assert_true(fabs(p - stats_t_p2(t, 4)) < 1e-15);
    /* the other way round: the same p, t negative */
    assert_true(fabs(stats_welch_log(b, 3, a, 3, 1e-300, 0, &t, NULL) - p) < 1e-15 && t < 0);
    /* a 50% slowdown over 5% noise is significant; the same noise alone is not */
    double base[] = {6.69e-3, 6.14e-3, 6.45e-3}, slow[] = {10.84e-3, 10.25e-3, 11.63e-3},
           same[] = {6.35e-3, 6.33e-3, 6.72e-3};
    assert_true(stats_welch_log(base, 3, slow, 3, 1e-6, 0, NULL, NULL) < 0.005);
    assert_true(stats_welch_log(base, 3, same, 3, 1e-6, 0, NULL, NULL) > 0.5);
    /* no spread: equal is p 1, different is p 0 */
    double c1[] = {100, 100, 100}, c2[] = {101, 101, 101};
    assert_true(stats_welch_log(c1, 3, c1, 3, 1, 0, &t, &df) == 1 && t == 0 && df == 0);
    assert_true(stats_welch_log(c1, 3, c2, 3, 1, 0, NULL, NULL) == 0);
    /* zeros are kept finite by the floor */
    double z[] = {0, 0, 0};
    assert_true(stats_welch_log(z, 3, c1, 3, 1, 0, NULL, NULL) == 0);
    /* too few runs, bad values */
    assert_true(isnan(stats_welch_log(a, 1, b, 3, 1, 0, NULL, NULL)));
    double bad[] = {1, NAN, 2}, neg[] = {1, -1, 2};
    assert_true(isnan(stats_welch_log(bad, 3, b, 3, 1, 0, NULL, NULL)));
    assert_true(isnan(stats_welch_log(a, 3, neg, 3, 1, 0, NULL, NULL)));
    assert_true(isnan(stats_welch_log(a, 3, b, 3, 0, 0, NULL, NULL)));
    /* times at the clock's resolution: 600ns and 700ns in every run do not
     * differ for certain, 6ms and 9ms do */
    double q1[] = {600e-9, 600e-9, 600e-9}, q2[] = {700e-9, 700e-9, 700e-9};
    assert_true(stats_welch_log(q1, 3, q2, 3, 1e-6, 1e-6, NULL, NULL) > 0.5);
    double m1[] = {6e-3, 6e-3, 6e-3}, m2[] = {9e-3, 9e-3, 9e-3};
    assert_true(stats_welch_log(m1, 3, m2, 3, 1e-6, 1e-6, NULL, NULL) < 1e-6);
}

/* The one-sided test against a ratio: what the check of --fail-above asks. */
static void welch_above(void **state)
{
    (void)state;
    double base[] = {6.69e-3, 6.14e-3, 6.45e-3}, slow[] = {10.84e-3, 10.25e-3, 11.63e-3},
           same[] = {6.35e-3, 6.33e-3, 6.72e-3};
    /* 1.68 times: more than 1.1 times for sure, not more than 2 times */
    assert_true(stats_welch_log_above(base, 3, slow, 3, 1e-6, 1e-6, 1.1) < 0.001);
    assert_true(stats_welch_log_above(base, 3, slow, 3, 1e-6, 1e-6, 2.0) > 0.9);
    /* the same code is not more than 1.1 times, nor more than 1 time */
    assert_true(stats_welch_log_above(base, 3, same, 3, 1e-6, 1e-6, 1.1) > 0.9);
    assert_true(stats_welch_log_above(base, 3, same, 3, 1e-6, 1e-6, 1.0) > 0.3);
    /* one-sided p and the two-sided one at ratio 1 */
    double t;
    double p2 = stats_welch_log(base, 3, slow, 3, 1e-6, 1e-6, &t, NULL);
    assert_true(fabs(stats_welch_log_above(base, 3, slow, 3, 1e-6, 1e-6, 1.0) - p2 / 2) < 1e-15);
    /* exact counts: 60 against 40 is more than 1.1 times for certain */
    double c1[] = {40, 40, 40}, c2[] = {60, 60, 60}, c3[] = {43, 43, 43};
    assert_true(stats_welch_log_above(c1, 3, c2, 3, 1, 0, 1.1) == 0);
    assert_true(stats_welch_log_above(c1, 3, c3, 3, 1, 0, 1.1) == 1);
    assert_true(isnan(stats_welch_log_above(c1, 3, c2, 3, 1, 0, 0)));
}

static void holm(void **state)
{
    (void)state;
    double p[] = {0.01, 0.04, 0.03, NAN, 0.005}, adj[5];
    assert_int_equal(stats_holm(p, 5, adj), 0);
    double want[] = {0.03, 0.06, 0.06, NAN, 0.02};
    for (int i = 0; i < 5; i++) {
        if (isnan(want[i]))
            assert_true(isnan(adj[i]));
        else
            assert_true(fabs(adj[i] - want[i]) < 1e-15);
    }
    /* in place, capped at 1 */
    double q[] = {0.9, 0.6};
    assert_int_equal(stats_holm(q, 2, q), 0);
    assert_true(q[0] == 1 && q[1] == 1);
    assert_int_equal(stats_holm(q, 0, q), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_cases),
        cmocka_unit_test(t_tail_closed_forms),
        cmocka_unit_test(t_tail_tables),
        cmocka_unit_test(welch_on_logs),
        cmocka_unit_test(welch_above),
        cmocka_unit_test(holm),
    };
    return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}

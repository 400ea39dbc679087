/* clock_cost.c — what one reading of the clock costs on this machine.
 *
 *     clock_cost
 *
 * Devel::NYTP reads the clock once per statement event and at the end of
 * every call (twice for an xsub or a slow op): with trace=1 it says how
 * many times at its end.  That many readings times their cost is time no
 * per-event profiler can avoid here, whatever else it does, so the bench
 * prints it as a floor under the profiled/unprofiled ratio.
 *
 * Prints two lines, nanoseconds per reading, the fastest of 5 runs of 4
 * million readings each:
 *
 *   tsc NS            (x86-64 only) what the profiler's time-stamp
 *                     counter clock does per reading: rdtsc, the scaling
 *                     to ticks, the never-backwards test and store
 *   clock_gettime NS  CLOCK_MONOTONIC (the profiler's clock without the
 *                     time-stamp counter)
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define READS 4000000
#define ROUNDS 5

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the state the profiler keeps for its conversion, volatile so that
 * every reading does its loads and stores as the profiler's does */
static volatile struct {
    uint64_t tsc_a, span, mult;
    int64_t ticks_a, last;
} clk = {0, UINT64_MAX / 4096, 20452669, 0, 0};

#if defined(__x86_64__)
static double tsc_ns(void)
{
    clk.tsc_a = __rdtsc();
    double t0 = mono_s();
    for (int i = 0; i < READS; i++) {
        uint64_t d = __rdtsc() - clk.tsc_a;
        int64_t ticks = d < clk.span ? clk.ticks_a + (int64_t)((d * clk.mult) >> 32) : 0;
        if (ticks < clk.last)
            ticks = clk.last;
        clk.last = ticks;
    }
    return (mono_s() - t0) * 1e9 / READS;
}
#endif

static double gettime_ns(void)
{
    int64_t sum = 0;
    double t0 = mono_s();
    for (int i = 0; i < READS; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += ts.tv_nsec;
    }
    double ns = (mono_s() - t0) * 1e9 / READS;
    clk.last = sum; /* used */
    return ns;
}

static double fastest(double (*f)(void))
{
    double best = f();
    for (int r = 1; r < ROUNDS; r++) {
        double v = f();
        if (v < best)
            best = v;
    }
    return best;
}

int main(void)
{
#if defined(__x86_64__)
    printf("tsc %.1f\n", fastest(tsc_ns));
#endif
    printf("clock_gettime %.1f\n", fastest(gettime_ns));
    return 0;
}

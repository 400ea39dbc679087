/* clock.c — the clock of every event: the time-stamp counter where the
 * CPU keeps it steady, clock_gettime otherwise. */
#include "nytp_prof.h"

struct tsc_clock T;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#ifdef HAVE_TSC
/* A reading of the counter and of CLOCK_MONOTONIC taken together (the
 * closest of a few tries). */
static void tsc_pair(uint64_t *tsc, int64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = __rdtsc();
        int64_t m = mono_ns();
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = m;
        }
    }
}

int cpu_has_stable_tsc(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return 0;
    char line[8192];
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
        break;
    }
    fclose(f);
    return ok;
}

static int tsc_calibrate(void)
{
    if (!cpu_has_stable_tsc())
        return 0;
    uint64_t t0, t1;
    int64_t m0, m1;
    tsc_pair(&t0, &m0);
    do
        tsc_pair(&t1, &m1);
    while (m1 - m0 < 2000000);
    if (t1 <= t0)
        return 0;
    double cycles_per_ns = (double)(t1 - t0) / (double)(m1 - m0);
    if (cycles_per_ns < 0.1 || cycles_per_ns > 100)
        return 0;
    T.tsc0 = t0;
    T.mono0 = m0;
    T.mult = (uint64_t)(4294967296.0 / (100.0 * cycles_per_ns));
    T.span = (uint64_t)(cycles_per_ns * 1e9);
    T.tsc_a = t1;
    T.ticks_a = m1 / 100;
    T.last = T.ticks_a;
    T.mhz = cycles_per_ns * 1000;
    T.on = 1;
    return 1;
}

/* A second has passed: the rate again, from the whole run. */
int64_t tsc_reanchor(uint64_t c)
{
    if ((int64_t)(c - T.tsc_a) < 0) /* another CPU's counter, behind */
        return T.last;
    int64_t ticks = T.ticks_a + (int64_t)(((c - T.tsc_a) >> 8) * T.mult >> 24);
    uint64_t t;
    int64_t m;
    tsc_pair(&t, &m);
    if (t > T.tsc0 && m > T.mono0) {
        double cycles_per_ns = (double)(t - T.tsc0) / (double)(m - T.mono0);
        if (cycles_per_ns >= 0.1 && cycles_per_ns <= 100)
            T.mult = (uint64_t)(4294967296.0 / (100.0 * cycles_per_ns));
    }
    T.tsc_a = c;
    T.ticks_a = ticks;
    return ticks;
}
#endif
int64_t clock_ticks_syscall(void)
{
    struct timespec ts;
    clock_gettime(S.clock, &ts);
    if (UNLIKELY(S.rotate_wall)) /* rotate= on a CPU-time clock (segment.c) */
        rotate_wall_check();
    return (int64_t)ts.tv_sec * TICKS_PER_SEC + ts.tv_nsec / 100;
}

NV wall_time(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (NV)tv.tv_sec + tv.tv_usec / 1e6;
}


void init_clock(void)
{
    struct timespec ts;
    if (OPT(O_CLOCK) == -1) {
        OPT(O_CLOCK) = CLOCK_MONOTONIC;
#ifdef HAVE_TSC
        /* sampling reads the clock a thousand times a second, not per
         * statement: clock_gettime, and no 2 ms of calibration */
        const char *e = getenv("NYTP_TSC");
        if (!(e && strcmp(e, "0") == 0) && !S.sample_hz)
            tsc_calibrate();
#endif
    }
    S.clock = (clockid_t)OPT(O_CLOCK);
    if (clock_gettime(S.clock, &ts) != 0) {
        S.clock = CLOCK_REALTIME;
        OPT(O_CLOCK) = CLOCK_REALTIME;
    }
    S.rotate_wall = S.rotate_ticks && (S.clock == CLOCK_PROCESS_CPUTIME_ID ||
                                       S.clock == CLOCK_THREAD_CPUTIME_ID || S.clock < 0);
}

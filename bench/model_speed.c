/* model_speed.c — how long and how much memory loading a profile into
 * the model takes.
 *
 *     model_speed [-n RUNS] PROFILE...
 *
 * Each run forks a child that loads every PROFILE into one nytp_profile
 * (nytp_profile_load, then nytp_profile_finish) and exits; the parent
 * takes the child's wall time and its peak resident memory (wait4).  The
 * fastest run and the largest peak are printed.  Exit status: 0, 1 when a
 * load fails, 2 on usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nytp/model.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int load_all(int n, char **files)
{
    nytp_profile *p;
    nytp_error e = {0};
    if (nytp_profile_new(&p, &e) < 0)
        return 1;
    for (int i = 0; i < n; i++) {
        int st = nytp_profile_load(p, files[i], NULL, &e);
        if (st < 0 && st != NYTP_E_TRUNCATED) {
            fprintf(stderr, "model_speed: %s: %s\n", files[i], e.msg);
            return 1;
        }
    }
    nytp_profile_finish(p);
    /* Touch the result so nothing is optimised away. */
    printf("files %u, subs %u, call sites %u, statements %llu\n", p->n_files, p->n_subs,
           p->n_sites, (unsigned long long)p->total_stmts_measured);
    nytp_profile_free(p);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 3, opt;
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt == 'n' && atoi(optarg) > 0) {
            runs = atoi(optarg);
        } else {
            fprintf(stderr, "usage: model_speed [-n RUNS] PROFILE...\n");
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: model_speed [-n RUNS] PROFILE...\n");
        return 2;
    }
    double best = 0;
    long peak_kb = 0;
    for (int r = 0; r < runs; r++) {
        fflush(stdout);
        double t0 = now();
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            if (r > 0 && !freopen("/dev/null", "w", stdout))
                _exit(1);
            _exit(load_all(argc - optind, argv + optind));
        }
        int status;
        struct rusage ru;
        if (wait4(pid, &status, 0, &ru) < 0) {
            perror("wait4");
            return 1;
        }
        double secs = now() - t0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
        if (r == 0 || secs < best)
            best = secs;
        if (ru.ru_maxrss > peak_kb)
            peak_kb = ru.ru_maxrss;
    }
    printf("load into the model: %.3f s (fastest of %d), peak memory %.1f MB\n", best, runs,
           (double)peak_kb / 1024.0);
    return 0;
}

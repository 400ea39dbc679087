/* cli_progress.c — progress of a long command on a terminal. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_impl.h"

static void progress_draw(cli_progress *pg)
{
    unsigned total = pg->total ? atomic_load(pg->total) : 0;
    if (total)
        fprintf(stderr, "\rnytp %s: %s %u/%u %s \033[K\r", cli_command, pg->phase,
                atomic_load(pg->done), total, pg->unit);
    else
        fprintf(stderr, "\rnytp %s: %s \033[K\r", cli_command, pg->phase);
    pg->shown = true;
}

static void *progress_main(void *arg)
{
    cli_progress *pg = arg;
    struct timespec start, t;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_mutex_lock(&pg->lock);
    for (;;) {
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 250 * 1000 * 1000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&pg->cond, &pg->lock, &t);
        if (pg->stop)
            break;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double secs = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
        if (secs >= pg->after)
            progress_draw(pg);
    }
    if (!pg->shown && pg->after <= 0) /* NYTP_PROGRESS_AFTER=0: always, even if quick */
        progress_draw(pg);
    if (pg->shown)
        fputs("\r\033[K", stderr);
    pthread_mutex_unlock(&pg->lock);
    return NULL;
}

void cli_progress_start(cli_progress *pg, const char *phase)
{
    memset(pg, 0, sizeof *pg);
    pg->phase = phase;
    if (!isatty(2) || getenv("NYTP_NO_PROGRESS"))
        return;
    const char *after = getenv("NYTP_PROGRESS_AFTER"); /* for tests */
    pg->after = after ? strtod(after, NULL) : 1.0;
    pthread_mutex_init(&pg->lock, NULL);
    pthread_cond_init(&pg->cond, NULL);
    pg->running = pthread_create(&pg->thread, NULL, progress_main, pg) == 0;
}

void cli_progress_phase(cli_progress *pg, const char *phase, const atomic_uint *done,
                        const atomic_uint *total, const char *unit)
{
    if (!pg->running)
        return;
    pthread_mutex_lock(&pg->lock);
    pg->phase = phase;
    pg->done = done;
    pg->total = total;
    pg->unit = unit;
    pthread_mutex_unlock(&pg->lock);
}

void cli_progress_end(cli_progress *pg)
{
    if (!pg->running)
        return;
    pthread_mutex_lock(&pg->lock);
    pg->stop = true;
    pthread_cond_signal(&pg->cond);
    pthread_mutex_unlock(&pg->lock);
    pthread_join(pg->thread, NULL);
    pthread_mutex_destroy(&pg->lock);
    pthread_cond_destroy(&pg->cond);
    pg->running = false;
}

/* deflate_cost.c — what a profile's size costs in compression work.
 *
 *     deflate_cost [-n RUNS] PROFILE
 *
 * Takes the stream that PROFILE (a compressed profile) holds after its
 * START_DEFLATE, as libformat's reader inflates it, and deflates it again
 * with each deflater libformat has and a few levels, on this thread
 * (NYTP threads off), through nytp_out: the very code Devel::NYTP's
 * writer thread runs.  For each it prints one line:
 *
 *   ENGINE LEVEL BYTES SECONDS
 *
 * BYTES is the compressed size; SECONDS the CPU time of the fastest of
 * RUNS (default 3) runs.  The first line, "inflated - BYTES -", is the
 * size of the stream itself.  bench/run profiler prints these beside the
 * unprofiled run's CPU time and Devel::NYTProf's file size: the price, in
 * CPU seconds, of a profile as small as Devel::NYTProf's at its level. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nytp/io.h"
#include "nytp/reader.h"

static const char *prog = "deflate_cost";

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die_err(const char *what, const nytp_error *e)
{
    fprintf(stderr, "%s: %s: %s\n", prog, what, e->msg);
    exit(1);
}

/* The inflated stream of path, in a malloc'd buffer of *len bytes. */
static uint8_t *inflated_stream(const char *path, size_t *len)
{
    nytp_reader *r;
    nytp_error e;
    nytp_chunk c;
    if (nytp_reader_open(&r, path, &e) < 0)
        die_err(path, &e);
    int st;
    while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK && c.tag != NYTP_TAG_START_DEFLATE)
        ;
    if (st == NYTP_END) {
        fprintf(stderr, "%s: %s: not a compressed profile (no START_DEFLATE)\n", prog, path);
        exit(1);
    }
    if (st < 0)
        die_err(path, &e);
    /* the reader inflates from its next call on: start it here */
    nytp_in *in = nytp_reader_input(r);
    if (!nytp_in_inflating(in) && nytp_in_start_inflate(in, &e) < 0)
        die_err(path, &e);
    size_t cap = 1u << 24, n = 0;
    uint8_t *buf = NULL;
    for (;;) {
        st = nytp_in_fill(in, 1u << 16, &e);
        if (st < 0)
            die_err(path, &e);
        size_t avail;
        const uint8_t *p = nytp_in_peek(in, &avail);
        if (n + avail > cap || !buf) {
            while (n + avail > cap)
                cap *= 2;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                fprintf(stderr, "%s: %s: out of memory\n", prog, path);
                exit(1);
            }
            buf = nb;
        }
        memcpy(buf + n, p, avail);
        n += avail;
        nytp_in_skip(in, avail);
        if (st == NYTP_END)
            break;
    }
    nytp_reader_close(r);
    *len = n;
    return buf;
}

/* Deflate data with engine at level into memory; *bytes gets the size. */
static double deflate_once(const uint8_t *data, size_t len, const char *engine, int level,
                           size_t *bytes)
{
    nytp_out *o;
    nytp_error e;
    if (nytp_out_open_mem(&o, &e) < 0)
        die_err("memory output", &e);
    nytp_out_set_threads(o, false);
    if (nytp_out_set_deflater(o, engine, &e) < 0)
        die_err(engine, &e);
    double t0 = cpu_s();
    if (nytp_out_start_deflate(o, level) < 0)
        die_err("start deflate", nytp_out_error(o));
    for (size_t at = 0; at < len; at += 1u << 16) {
        size_t k = len - at < (1u << 16) ? len - at : 1u << 16;
        if (nytp_out_write(o, data + at, k) < 0)
            die_err("deflate", nytp_out_error(o));
    }
    uint8_t *out;
    size_t olen;
    if (nytp_out_close_mem(o, &out, &olen, &e) < 0)
        die_err("deflate", &e);
    double t = cpu_s() - t0;
    free(out);
    *bytes = olen;
    return t;
}

int main(int argc, char **argv)
{
    int runs = 3, opt;
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt == 'n' && atoi(optarg) > 0) {
            runs = atoi(optarg);
        } else {
            fprintf(stderr, "usage: %s [-n RUNS] PROFILE\n", prog);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: %s [-n RUNS] PROFILE\n", prog);
        return 2;
    }
    size_t len;
    uint8_t *data = inflated_stream(argv[optind], &len);
    printf("inflated - %zu -\n", len);
    static const struct {
        const char *engine;
        int level;
    } cases[] = {{"isal", 1}, {"isal", 6}, {"isal", 9}, {"zlib", 1}, {"zlib", 3}, {"zlib", 6}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nytp_out *probe;
        nytp_error e;
        if (nytp_out_open_mem(&probe, &e) < 0)
            die_err("memory output", &e);
        bool have = nytp_out_set_deflater(probe, cases[i].engine, &e) == NYTP_OK;
        nytp_out_abort(probe);
        if (!have)
            continue; /* a build without ISA-L */
        double best = 0;
        size_t bytes = 0;
        for (int r = 0; r < runs; r++) {
            double t = deflate_once(data, len, cases[i].engine, cases[i].level, &bytes);
            if (r == 0 || t < best)
                best = t;
        }
        printf("%s %d %zu %.3f\n", cases[i].engine, cases[i].level, bytes, best);
        fflush(stdout);
    }
    free(data);
    return 0;
}

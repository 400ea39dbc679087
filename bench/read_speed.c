/* read_speed.c — how much does reading chunks cost on top of zlib?
 *
 *     read_speed [-n RUNS] [-m both|inflate|read] [-v] PROFILE
 *
 * Two measurements over the same compressed profile, each repeated RUNS
 * times (default 3), keeping the fastest:
 *
 *   inflate only   open a reader, pull the plain header chunks up to
 *                  START_DEFLATE, then hand the input to nytp_in_drain:
 *                  zlib through libformat's own I/O path (same buffers,
 *                  same read() sizes) and no chunk decoding.
 *   read all       nytp_reader_next until NYTP_END: the same I/O plus
 *                  decoding every chunk.  A few fields are summed so the
 *                  work cannot be optimised away.
 *
 * -m runs only one of them (for perf or callgrind; no ratio then).
 * Both timings run from opening the file to closing it.  The ratio
 * read/inflate says what the reader adds; the target is <= 1.30.
 *
 * Exit status: 0 done, 1 a reader error (printed), 2 usage or a profile
 * that is not compressed (nothing to compare against).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nytp/nytp.h"

#define TARGET_RATIO 1.30
#define MAX_RUNS 1000

static const char *prog = "read_speed";

/* What one pass over the profile saw. */
typedef struct totals {
    uint64_t chunks;            /* every chunk nytp_reader_next returned */
    uint64_t by_tag[256];
    uint64_t inflated;          /* bytes of the inflated stream */
    int64_t stmt_ticks;         /* TIME_LINE + TIME_BLOCK ticks */
    uint64_t str_bytes;         /* lengths of every string field */
} totals;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int report(const char *path, const nytp_error *e)
{
    char where[128];
    fprintf(stderr, "%s: %s: %s: %s (%s)\n", prog, path, nytp_status_name(e->status), e->msg,
            nytp_error_where(e, where, sizeof where));
    return 1;
}

/* Open path and pull chunks until START_DEFLATE has been returned.
 * Returns NYTP_OK with *rp open, NYTP_END if the profile has no
 * compressed part (*rp closed), or a negative status (*rp closed). */
static int open_to_deflate(nytp_reader **rp, const char *path, nytp_error *err)
{
    nytp_reader *r;
    int st = nytp_reader_open(&r, path, err);
    if (st < 0)
        return st;
    nytp_chunk c;
    while ((st = nytp_reader_next(r, &c, err)) == NYTP_OK)
        if (c.tag == NYTP_TAG_START_DEFLATE) {
            *rp = r;
            return NYTP_OK;
        }
    nytp_reader_close(r);
    return st;
}

/* The inflater the last run used ("isal" or "zlib"; NYTP_INFLATE chooses). */
static const char *inflater = "?";

/* (a) inflate alone: everything after START_DEFLATE inflated and dropped. */
static int time_inflate(const char *path, double *secs, uint64_t *bytes, nytp_error *err)
{
    double t0 = now();
    nytp_reader *r;
    int st = open_to_deflate(&r, path, err);
    if (st != NYTP_OK)
        return st;
    nytp_in *in = nytp_reader_input(r);
    st = nytp_in_start_inflate(in, err);
    inflater = nytp_in_inflater(in);
    if (st == NYTP_OK)
        st = nytp_in_drain(in, bytes, err);
    nytp_reader_close(r);
    *secs = now() - t0;
    return st;
}

/* (b) every chunk through the reader. */
static int time_read_all(const char *path, double *secs, totals *t, nytp_error *err)
{
    memset(t, 0, sizeof *t);
    double t0 = now();
    nytp_reader *r;
    int st = nytp_reader_open(&r, path, err);
    if (st < 0)
        return st;
    nytp_chunk c;
    while ((st = nytp_reader_next(r, &c, err)) == NYTP_OK) {
        t->chunks++;
        t->by_tag[c.tag & 0xFF]++;
        switch (c.tag) {
        case NYTP_TAG_TIME_LINE:
        case NYTP_TAG_TIME_BLOCK:
            t->stmt_ticks += c.u.time.ticks;
            break;
        case NYTP_TAG_SUB_RETURN:
            t->str_bytes += c.u.sub_return.name.len;
            break;
        case NYTP_TAG_NEW_FID:
            t->str_bytes += c.u.new_fid.name.len;
            break;
        case NYTP_TAG_SUB_INFO:
            t->str_bytes += c.u.sub_info.name.len;
            break;
        case NYTP_TAG_SUB_CALLERS:
            t->str_bytes += c.u.sub_callers.called.len + c.u.sub_callers.caller.len;
            break;
        case NYTP_TAG_SRC_LINE:
            t->str_bytes += c.u.src_line.text.len;
            break;
        case NYTP_TAG_COMMENT:
            t->str_bytes += c.u.comment.text.len;
            break;
        case NYTP_TAG_ATTRIBUTE:
        case NYTP_TAG_OPTION:
            t->str_bytes += c.u.kv.key.len + c.u.kv.value.len;
            break;
        default:
            break;
        }
    }
    nytp_in *in = nytp_reader_input(r);
    t->inflated = nytp_in_inflating(in) ? nytp_in_offset(in) : 0;
    inflater = nytp_in_inflater(in);
    nytp_reader_close(r);
    *secs = now() - t0;
    return st == NYTP_END ? NYTP_OK : st;
}

/* Read the file once so that the first timed run does not pay for the
 * disk; the benchmark is about CPU. */
static void warm_page_cache(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    static char buf[1 << 16];
    while (read(fd, buf, sizeof buf) > 0)
        ;
    close(fd);
}

static void usage(void)
{
    fprintf(stderr, "usage: %s [-n RUNS] [-m both|inflate|read] [-v] PROFILE\n"
                    "  times zlib inflate alone and a full chunk read of a compressed\n"
                    "  NYTProf profile; -n runs of each (default 3), fastest kept;\n"
                    "  -m runs only one of the two (for profiling the benchmark);\n"
                    "  -v also lists the chunk count of each kind\n",
            prog);
}

int main(int argc, char **argv)
{
    int runs = 3;
    bool verbose = false;
    bool do_inflate = true, do_read = true;
    int opt;
    while ((opt = getopt(argc, argv, "n:m:vh")) != -1) {
        switch (opt) {
        case 'n': {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || v < 1 || v > MAX_RUNS) {
                fprintf(stderr, "%s: -n wants a number of runs from 1 to %d\n", prog, MAX_RUNS);
                return 2;
            }
            runs = (int)v;
            break;
        }
        case 'm':
            do_inflate = strcmp(optarg, "both") == 0 || strcmp(optarg, "inflate") == 0;
            do_read = strcmp(optarg, "both") == 0 || strcmp(optarg, "read") == 0;
            if (!do_inflate && !do_read) {
                fprintf(stderr, "%s: -m wants both, inflate or read\n", prog);
                return 2;
            }
            break;
        case 'v':
            verbose = true;
            break;
        case 'h':
            usage();
            return 0;
        default:
            usage();
            return 2;
        }
    }
    if (optind != argc - 1) {
        usage();
        return 2;
    }
    const char *path = argv[optind];
    nytp_error err = {0};

    warm_page_cache(path);

    double best_inflate = 0, best_read = 0;
    uint64_t inflated = 0;
    totals t = {0};
    for (int i = 0; i < runs; i++) {
        double secs = 0;
        int st;
        if (do_inflate) {
            st = time_inflate(path, &secs, &inflated, &err);
            if (st == NYTP_END) {
                fprintf(stderr, "%s: %s: not compressed (no START_DEFLATE chunk): "
                                "nothing to compare the reader with\n", prog, path);
                return 2;
            }
            if (st < 0)
                return report(path, &err);
            if (i == 0 || secs < best_inflate)
                best_inflate = secs;
        }
        if (do_read) {
            st = time_read_all(path, &secs, &t, &err);
            if (st < 0)
                return report(path, &err);
            if (!t.inflated) {
                fprintf(stderr, "%s: %s: not compressed (no START_DEFLATE chunk): "
                                "nothing to compare the reader with\n", prog, path);
                return 2;
            }
            if (i == 0 || secs < best_read)
                best_read = secs;
        }
    }
    if (do_inflate && do_read && t.inflated != inflated)
        fprintf(stderr, "%s: warning: the reader saw %llu inflated bytes, the drain %llu\n", prog,
                (unsigned long long)t.inflated, (unsigned long long)inflated);
    if (!do_inflate)
        inflated = t.inflated;

    double mb = (double)inflated / 1e6;
    printf("file:               %s\n", path);
    printf("inflated size:      %.1f MB (%llu bytes)\n", mb, (unsigned long long)inflated);
    if (do_read)
        printf("chunks:             %llu\n", (unsigned long long)t.chunks);
    printf("inflater:           %s (NYTP_INFLATE=zlib|isal)\n", inflater);
    printf("runs:               %d of each, fastest kept\n", runs);
    if (do_inflate)
        printf("inflate only:       %.3f s (%.0f MB/s)\n", best_inflate, mb / best_inflate);
    if (do_read)
        printf("read all chunks:    %.3f s (%.0f MB/s, %.1f M chunks/s)\n", best_read,
               mb / best_read, (double)t.chunks / best_read / 1e6);
    if (do_inflate && do_read) {
        double ratio = best_read / best_inflate;
        printf("reader/inflate ratio: %.2f (target <= %.2f)%s\n", ratio, TARGET_RATIO,
               ratio > TARGET_RATIO ? "  ABOVE TARGET" : "");
    }
    if (do_read) {
        printf("checksums:          statement ticks %lld, string bytes %llu\n",
               (long long)t.stmt_ticks, (unsigned long long)t.str_bytes);
        if (verbose)
            for (int tag = 0; tag < 256; tag++)
                if (t.by_tag[tag])
                    printf("  %-14s %llu\n", nytp_tag_name(tag) ? nytp_tag_name(tag) : "?",
                           (unsigned long long)t.by_tag[tag]);
    }
    return 0;
}

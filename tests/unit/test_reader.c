/* test_reader.c — the streaming reader on every testdata file: real
 * profiles end cleanly, each broken file stops with its exact error, and
 * no cut anywhere makes it misbehave. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static const char *real_profiles[] = {
    "demo.out",       "demo-compress0.out", "demo-calls2.out",  "demo-blocks.out",
    "demo-savesrc0.out", "recursion.out",   "evals.out",        "anon.out",
    "utf8-names.out", "tricky-strings.out", "tricky-strings-compress0.out",
    "fork.out",       "fork-child.out",
};

static void real_profiles_read_to_a_clean_end(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof real_profiles / sizeof real_profiles[0]; i++) {
        size_t len, n;
        int st;
        nytp_error e = {0};
        uint8_t *d = slurp(td_path(real_profiles[i]), &len);
        saved_chunk *v = read_all(d, len, &n, &st, &e);
        if (st != NYTP_END)
            fail_msg("%s: %s", real_profiles[i], e.msg);
        assert_true(n > 30);
        assert_int_equal(v[0].c.tag, NYTP_TAG_VERSION);
        assert_int_equal(v[0].c.u.version.major, 5);
        int pid_start = 0, pid_end = 0, fids = 0, deflate = 0;
        for (size_t k = 0; k < n; k++) {
            pid_start += v[k].c.tag == NYTP_TAG_PID_START;
            pid_end += v[k].c.tag == NYTP_TAG_PID_END;
            fids += v[k].c.tag == NYTP_TAG_NEW_FID;
            deflate += v[k].c.tag == NYTP_TAG_START_DEFLATE;
        }
        assert_int_equal(pid_start, 1);
        assert_int_equal(pid_end, 1);
        assert_true(fids >= 1);
        assert_int_equal(deflate, strstr(real_profiles[i], "compress0") ? 0 : 1);
        free_chunks(v, n);
        free(d);
    }
}

/* Each broken file: the status, where, and the exact message. */
static const struct broken_case {
    const char *file;
    int status;
    uint64_t chunk;     /* chunk number in the error */
    bool inflated;
    const char *msg;
    size_t min_chunks;  /* chunks delivered before the error */
    int byte_at;        /* the file's byte at the reported offset, or -1 */
} broken[] = {
#include "broken_cases.inc"
};

static void broken_files_give_their_exact_error(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        const struct broken_case *b = &broken[i];
        char name[128];
        snprintf(name, sizeof name, "broken/%s", b->file);
        size_t len, n;
        int st;
        nytp_error e = {0};
        uint8_t *d = slurp(td_path(name), &len);
        saved_chunk *v = read_all(d, len, &n, &st, &e);
        if (st != b->status || strcmp(e.msg, b->msg) != 0 || e.chunk != b->chunk ||
            e.inflated != b->inflated || n < b->min_chunks)
            fail_msg("%s: got status %d chunk %llu inflated %d after %zu chunks: '%s'", b->file,
                     st, (unsigned long long)e.chunk, e.inflated, n, e.msg);
        /* the offset points at the damage the generator made */
        if (b->byte_at >= 0) {
            assert_true(e.offset < len);
            if (d[e.offset] != b->byte_at)
                fail_msg("%s: byte at offset %llu is 0x%02x, not 0x%02x", b->file,
                         (unsigned long long)e.offset, d[e.offset], b->byte_at);
        }
        if (b->status == NYTP_E_TRUNCATED && !b->inflated)
            assert_true(e.offset <= len);
        free_chunks(v, n);
        free(d);
    }
}

/* The same file from a file descriptor that is a pipe (like standard
 * input) gives the same chunks as from memory. */
static void pipe_gives_the_same_chunks(void **state)
{
    (void)state;
    size_t len, n;
    int st;
    nytp_error e = {0};
    uint8_t *d = slurp(td_path("demo.out"), &len);
    saved_chunk *v = read_all(d, len, &n, &st, &e);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        for (size_t off = 0; off < len; off += 97) /* odd-sized pieces */
            if (write(fds[1], d + off, len - off < 97 ? len - off : 97) < 0)
                _exit(1);
        _exit(0);
    }
    close(fds[1]);
    nytp_in *in;
    nytp_reader *r;
    assert_int_equal(nytp_in_open_fd(&in, fds[0], true, &e), NYTP_OK);
    assert_int_equal(nytp_reader_open_in(&r, in, &e), NYTP_OK);
    nytp_chunk c;
    size_t k = 0;
    while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK) {
        assert_true(k < n);
        assert_true(chunk_equal(&c, &v[k].c));
        k++;
    }
    assert_int_equal(st, NYTP_END);
    assert_int_equal(k, n);
    nytp_reader_close(r);
    waitpid(pid, NULL, 0);
    free_chunks(v, n);
    free(d);
}

/* A long text line that arrives through a pipe in small pieces: the
 * reader decodes a chunk again from its start after each refill, so it
 * must not refill one piece at a time (that scanned a line of n bytes
 * n / piece times: 17 s for 256 MiB).  The writer hands over 256 bytes at
 * a time, waiting until the reader has taken them.  The reader's own CPU
 * time (not the writer's, not waiting) for one 8 MiB line handed over so
 * is compared with what its parts cost: the same bytes as 32768 lines of
 * 256 bytes handed over the same way (the same reads, one scan each), and
 * the 8 MiB line written at once (the same buffer).  Rescanning the line
 * at every piece would be 128 GiB of memchr, seconds more. */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec
           + ru.ru_stime.tv_usec / 1e6;
}

enum { LINE = 8u << 20, PIECE = 256 };

/* Reads "NYTProf 5 0", then either one comment line of LINE bytes or
 * LINE / PIECE comment lines of PIECE bytes, then an attribute; paced:
 * handed over PIECE bytes at a time.  Returns the reader's CPU seconds. */
static double read_from_pipe(bool one_line, bool paced)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static char piece[PIECE];
        memset(piece, 'x', sizeof piece);
        if (!one_line) {
            piece[0] = '#';
            piece[PIECE - 1] = '\n';
        }
        const char *head = one_line ? "NYTProf 5 0\n#" : "NYTProf 5 0\n";
        const char *tail = one_line ? "\n:ticks_per_sec=10000000\n" : ":ticks_per_sec=10000000\n";
        if (write(fds[1], head, strlen(head)) < 0)
            _exit(1);
        for (size_t off = 0; off < LINE; off += PIECE) {
            if (write(fds[1], piece, PIECE) != PIECE)
                _exit(1);
            int unread = 1;
            while (paced && ioctl(fds[0], FIONREAD, &unread) == 0 && unread > 0)
                sched_yield();
        }
        if (write(fds[1], tail, strlen(tail)) < 0)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    nytp_in *in;
    nytp_reader *r;
    nytp_error e = {0};
    assert_int_equal(nytp_in_open_fd(&in, fds[0], true, &e), NYTP_OK);
    assert_int_equal(nytp_reader_open_in(&r, in, &e), NYTP_OK);
    double t0 = cpu_seconds();
    nytp_chunk c;
    int st;
    size_t comments = 0, comment_bytes = 0;
    bool saw_attr = false;
    while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK) {
        if (c.tag == NYTP_TAG_COMMENT) {
            comments++;
            comment_bytes += c.u.comment.text.len;
        }
        if (c.tag == NYTP_TAG_ATTRIBUTE)
            saw_attr = true;
    }
    double cpu = cpu_seconds() - t0;
    nytp_reader_close(r);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* no PID_START: the reader calls it cut short, after every chunk */
    assert_int_equal(st, NYTP_E_TRUNCATED);
    assert_int_equal(comments, one_line ? 1 : LINE / PIECE);
    assert_int_equal(comment_bytes, one_line ? LINE + 1 : LINE - LINE / PIECE);
    assert_true(saw_attr);
    return cpu;
}

static void long_line_through_a_pipe_is_scanned_once(void **state)
{
    (void)state;
    double lines = read_from_pipe(false, true);
    double at_once = read_from_pipe(true, false);
    double line = read_from_pipe(true, true);
    print_message("CPU: 8 MiB line in pieces %.3f s; 32768 lines in pieces %.3f s; "
                  "the line at once %.3f s\n", line, lines, at_once);
    if (line > 2 * (lines + at_once) + 0.5)
        fail_msg("one 8 MiB line through a pipe in pieces cost %.2f s of CPU; its reads (as "
                 "short lines) %.2f s, its buffer (written at once) %.2f s", line, lines, at_once);
}

/* Cut a real file at many points: the reader stops with "truncated" (or,
 * inside the header line's first bytes, a format error for the empty
 * file), never crashes, and what it delivered is the uncut file's start. */
static void every_cut_is_truncated(const char *file, size_t stride)
{
    size_t len, n;
    int st;
    nytp_error e = {0};
    uint8_t *d = slurp(td_path(file), &len);
    saved_chunk *full = read_all(d, len, &n, &st, &e);
    assert_int_equal(st, NYTP_END);
    /* A cut inside the plain trailer after a complete zlib stream loses
     * nothing: find where that trailer starts. */
    size_t trailer = len;
    static const char mark[] = "#\n# Compressed ";
    for (size_t i = len >= 16 ? len - 16 : 0; i > 0; i--)
        if (memcmp(d + i, mark, sizeof mark - 1) == 0) {
            trailer = i;
            break;
        }
    for (size_t cut = 0; cut < len; cut += (cut < 600 ? 1 : stride)) {
        uint8_t *part = malloc(cut ? cut : 1);
        memcpy(part, d, cut);
        size_t m;
        saved_chunk *v = read_all(part, cut, &m, &st, &e);
        if (cut == 0) {
            assert_int_equal(st, NYTP_E_FORMAT);
        } else if (cut >= trailer) {
            assert_int_equal(st, NYTP_END);
            assert_int_equal(m, n);
        } else if (st != NYTP_E_TRUNCATED) {
            fail_msg("%s cut at %zu: status %d (%s)", file, cut, st, e.msg);
        }
        assert_true(m <= n);
        for (size_t k = 0; k < m; k++)
            assert_true(chunk_equal(&v[k].c, &full[k].c));
        free_chunks(v, m);
        free(part);
    }
    free_chunks(full, n);
    free(d);
}

/* Under ThreadSanitizer (10-20 times slower) fewer cuts past the first
 * 600 bytes: the plain and ASan runs make every one of them, and the
 * threads' interplay does not depend on where the file ends. */
#if defined(__SANITIZE_THREAD__)
#define CUT_SPREAD 8
#else
#define CUT_SPREAD 1
#endif

static void cuts_of_a_plain_profile(void **state)
{
    (void)state;
    every_cut_is_truncated("demo-compress0.out", 7 * CUT_SPREAD);
}

static void cuts_of_a_compressed_profile(void **state)
{
    (void)state;
    /* up to the zlib trailer: cuts inside the trailer lose no data */
    every_cut_is_truncated("demo.out", 5 * CUT_SPREAD);
}

static void errors_are_sticky(void **state)
{
    (void)state;
    size_t len;
    uint8_t *d = slurp(td_path("broken/bad-tag.out"), &len);
    nytp_reader *r;
    nytp_error e = {0}, e2 = {0};
    nytp_chunk c;
    assert_int_equal(nytp_reader_open_mem(&r, d, len, &e), NYTP_OK);
    int st;
    while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK)
        ;
    assert_int_equal(st, NYTP_E_FORMAT);
    assert_int_equal(nytp_reader_next(r, &c, &e2), NYTP_E_FORMAT);
    assert_string_equal(e.msg, e2.msg);
    assert_int_equal(e.offset, e2.offset);
    nytp_reader_close(r);
    free(d);
}

struct warnings {
    int count;
    char last[NYTP_ERROR_MSG_MAX];
};

static void collect(void *ctx, const nytp_error *w)
{
    struct warnings *ws = ctx;
    ws->count++;
    snprintf(ws->last, sizeof ws->last, "%s", w->msg);
}

static void newer_minor_warns_once_and_reads(void **state)
{
    (void)state;
    size_t len;
    uint8_t *d = slurp(td_path("broken/minor9.out"), &len);
    nytp_reader *r;
    nytp_error e = {0};
    nytp_chunk c;
    struct warnings ws = {0};
    assert_int_equal(nytp_reader_open_mem(&r, d, len, &e), NYTP_OK);
    nytp_reader_set_warn(r, collect, &ws);
    int st, n = 0;
    while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK)
        n++;
    assert_int_equal(st, NYTP_END);
    assert_true(n > 100);
    assert_int_equal(ws.count, 1);
    assert_string_equal(ws.last,
                        "profile format version 5.9 is newer than 5.0; reading it as 5.0, errors are likely");
    nytp_reader_close(r);
    free(d);
}

/* A text line without '=' is skipped with a warning, as Devel::NYTProf
 * does; the chunk numbers still count it. */
static void attribute_without_equals_is_skipped(void **state)
{
    (void)state;
    static const char prof[] = "NYTProf 5 0\n:broken\n:ok=1\nP\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"
                               "p\x01\x00\x00\x00\x00\x00\x00\x00\x00";
    nytp_reader *r;
    nytp_error e = {0};
    nytp_chunk c;
    struct warnings ws = {0};
    assert_int_equal(nytp_reader_open_mem(&r, prof, sizeof prof - 1, &e), NYTP_OK);
    nytp_reader_set_warn(r, collect, &ws);
    assert_int_equal(nytp_reader_next(r, &c, &e), NYTP_OK); /* VERSION */
    assert_int_equal(nytp_reader_next(r, &c, &e), NYTP_OK);
    assert_int_equal(c.tag, NYTP_TAG_ATTRIBUTE);
    assert_int_equal(nytp_reader_chunk_number(r), 2);
    assert_int_equal(ws.count, 1);
    assert_string_equal(ws.last, "attribute line without '=' ignored: 'broken'");
    assert_int_equal(nytp_reader_next(r, &c, &e), NYTP_OK);
    assert_int_equal(c.tag, NYTP_TAG_PID_START);
    assert_int_equal(nytp_reader_next(r, &c, &e), NYTP_OK);
    assert_int_equal(c.tag, NYTP_TAG_PID_END);
    assert_int_equal(nytp_reader_next(r, &c, &e), NYTP_END);
    nytp_reader_close(r);
}

/* Chunks larger than the reader's buffers, plain (read in 256 KiB steps)
 * and compressed (inflated in 1 MiB steps). */
static void chunks_larger_than_the_buffers(void **state)
{
    (void)state;
    size_t big = 3 * 1024 * 1024 + 5;
    char *text = malloc(big);
    for (size_t i = 0; i < big; i++)
        text[i] = (char)('a' + i % 26);
    for (int level = 0; level <= 1; level++) {
        char path[] = "/tmp/nytp-test-reader-XXXXXX";
        int fd = mkstemp(path);
        close(fd);
        nytp_out *o;
        nytp_writer *w;
        nytp_error e = {0};
        assert_int_equal(nytp_out_open_file(&o, path, 0, &e), NYTP_OK);
        assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
        nytp_write_header(w, 5, 0);
        nytp_write_start_deflate(w, level);
        nytp_write_pid_start(w, 1, 0, 0);
        for (int k = 0; k < 3; k++) {
            nytp_write_src_line(w, 1, (uint32_t)k + 1, (nytp_str){text, (uint32_t)big, false});
            nytp_write_time_line(w, k, 1, 1);
        }
        nytp_write_pid_end(w, 1, 0);
        assert_int_equal(nytp_writer_close(w, &e), NYTP_OK);

        nytp_reader *r;
        assert_int_equal(nytp_reader_open(&r, path, &e), NYTP_OK);
        nytp_chunk c;
        int st, src = 0, lines = 0;
        while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK) {
            if (c.tag == NYTP_TAG_SRC_LINE) {
                assert_int_equal(c.u.src_line.text.len, big);
                assert_memory_equal(c.u.src_line.text.ptr, text, big);
                src++;
            }
            lines += c.tag == NYTP_TAG_TIME_LINE;
        }
        assert_int_equal(st, NYTP_END);
        assert_int_equal(src, 3);
        assert_int_equal(lines, 3);
        nytp_reader_close(r);
        unlink(path);
    }
    free(text);
}

static int count_until_ten(void *ctx, const nytp_chunk *c)
{
    int *n = ctx;
    (void)c;
    return ++*n == 10 ? 42 : 0;
}

static int count_all(void *ctx, const nytp_chunk *c)
{
    int *n = ctx;
    (void)c;
    ++*n;
    return 0;
}

static void foreach_walks_and_stops(void **state)
{
    (void)state;
    size_t len;
    uint8_t *d = slurp(td_path("demo.out"), &len);
    nytp_reader *r;
    nytp_error e = {0};
    int n = 0;
    assert_int_equal(nytp_reader_open_mem(&r, d, len, &e), NYTP_OK);
    assert_int_equal(nytp_reader_foreach(r, count_until_ten, &n, &e), 42);
    assert_int_equal(n, 10);
    nytp_reader_close(r);
    n = 0;
    assert_int_equal(nytp_reader_open_mem(&r, d, len, &e), NYTP_OK);
    assert_int_equal(nytp_reader_foreach(r, count_all, &n, &e), NYTP_OK);
    assert_true(n > 100);
    nytp_reader_close(r);
    free(d);
    d = slurp(td_path("broken/bad-tag.out"), &len);
    assert_int_equal(nytp_reader_open_mem(&r, d, len, &e), NYTP_OK);
    assert_int_equal(nytp_reader_foreach(r, count_all, &n, &e), NYTP_E_FORMAT);
    nytp_reader_close(r);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_profiles_read_to_a_clean_end),
        cmocka_unit_test(broken_files_give_their_exact_error),
        cmocka_unit_test(pipe_gives_the_same_chunks),
        cmocka_unit_test(long_line_through_a_pipe_is_scanned_once),
        cmocka_unit_test(cuts_of_a_plain_profile),
        cmocka_unit_test(cuts_of_a_compressed_profile),
        cmocka_unit_test(errors_are_sticky),
        cmocka_unit_test(newer_minor_warns_once_and_reads),
        cmocka_unit_test(attribute_without_equals_is_skipped),
        cmocka_unit_test(chunks_larger_than_the_buffers),
        cmocka_unit_test(foreach_walks_and_stops),
    };
    return cmocka_run_group_tests_name("reader", tests, NULL, NULL);
}

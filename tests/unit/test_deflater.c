/* test_deflater.c — deflating on a writer thread (nytp_out_set_threads):
 * the same stream as without the thread, errors of the writer reach the
 * caller, and a child after fork can drop the parent's out.  Also built
 * with ThreadSanitizer (make unit-tsan). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "helpers.h"

/* Compressible but not trivial bytes: a few MB of text-like records. */
static uint8_t *make_input(size_t len)
{
    uint8_t *p = malloc(len);
    assert_non_null(p);
    uint32_t x = 12345;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (i % 61 == 60) ? '\n' : (uint8_t)('a' + ((x >> 16) % 7));
    }
    return p;
}

/* Write input through a memory out in odd-sized pieces, flushing now and
 * then, with or without the writer thread; returns the out's bytes. */
static uint8_t *write_through(const char *deflater, bool threads, int level, const uint8_t *in,
                              size_t len, size_t *out_len)
{
    nytp_out *o;
    nytp_error err;
    assert_int_equal(nytp_out_open_mem(&o, &err), NYTP_OK);
    assert_int_equal(nytp_out_set_deflater(o, deflater, &err), NYTP_OK);
    assert_string_equal(nytp_out_deflater(o), deflater);
    nytp_out_set_threads(o, threads);
    assert_int_equal(nytp_out_write(o, "plain header\n", 13), NYTP_OK);
    assert_int_equal(nytp_out_start_deflate(o, level), NYTP_OK);
    size_t at = 0, step = 1;
    int n = 0;
    while (at < len) {
        size_t k = step < len - at ? step : len - at;
        assert_int_equal(nytp_out_write(o, in + at, k), NYTP_OK);
        at += k;
        step = step * 7 % 40009 + 1;
        if (++n % 97 == 0)
            assert_int_equal(nytp_out_flush(o), NYTP_OK);
    }
    uint8_t *data;
    assert_int_equal(nytp_out_close_mem(o, &data, out_len, &err), NYTP_OK);
    return data;
}

/* The same stream with and without the writer thread, and it inflates
 * (with zlib) back to the input, the trailer after it. */
static void check_deflater(const char *deflater)
{
    size_t len = 5u << 20;
    uint8_t *in = make_input(len);
    for (int level = 1; level <= 6; level += 5) {
        size_t a_len, b_len;
        uint8_t *a = write_through(deflater, true, level, in, len, &a_len);
        uint8_t *b = write_through(deflater, false, level, in, len, &b_len);
        assert_int_equal(a_len, b_len);
        assert_memory_equal(a, b, a_len);

        assert_memory_equal(a, "plain header\n", 13);
        uint8_t *back = malloc(len + 1);
        z_stream zs = {0};
        assert_int_equal(inflateInit(&zs), Z_OK);
        zs.next_in = a + 13;
        zs.avail_in = (uInt)(a_len - 13);
        zs.next_out = back;
        zs.avail_out = (uInt)len + 1;
        assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
        assert_int_equal(zs.total_out, len);
        assert_memory_equal(back, in, len);
        const char *trailer = (const char *)a + 13 + zs.total_in;
        char want[128];
        snprintf(want, sizeof want, "#\n# zlib stream ended: %zu bytes deflated to %lu ", len,
                 (unsigned long)zs.total_in);
        assert_true(strncmp(trailer, want, strlen(want)) == 0);
        inflateEnd(&zs);
        free(back);
        free(a);
        free(b);
    }
    free(in);
}

static void threaded_stream_is_the_plain_stream(void **state)
{
    (void)state;
    check_deflater("zlib");
}

static void isal_stream_inflates_with_zlib(void **state)
{
    (void)state;
    nytp_out *o;
    nytp_error err;
    assert_int_equal(nytp_out_open_mem(&o, &err), NYTP_OK);
    int st = nytp_out_set_deflater(o, "isal", &err);
    nytp_out_abort(o);
    if (st != NYTP_OK)
        skip(); /* a build without ISA-L */
    check_deflater("isal");
}

static void unknown_deflater_is_a_usage_error(void **state)
{
    (void)state;
    nytp_out *o;
    nytp_error err;
    assert_int_equal(nytp_out_open_mem(&o, &err), NYTP_OK);
    assert_int_equal(nytp_out_set_deflater(o, "lz4", &err), NYTP_E_USAGE);
    assert_non_null(strstr(err.msg, "unknown deflater 'lz4'"));
    assert_string_equal(nytp_out_deflater(o), "zlib");
    nytp_out_abort(o);
}

/* The writer thread's write error is the caller's: at the latest at the
 * next flush, sticky, and close fails with it. */
static void writer_error_reaches_the_caller(void **state)
{
    (void)state;
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        skip();
    nytp_out *o;
    nytp_error err;
    assert_int_equal(nytp_out_open_fd(&o, fd, true, &err), NYTP_OK);
    nytp_out_set_threads(o, true);
    assert_int_equal(nytp_out_start_deflate(o, 1), NYTP_OK);
    size_t len = 3u << 20;
    uint8_t *in = make_input(len);
    nytp_out_write(o, in, len); /* may or may not have failed yet */
    assert_int_equal(nytp_out_flush(o), NYTP_E_IO);
    assert_non_null(strstr(nytp_out_error(o)->msg, "No space"));
    assert_int_equal(nytp_out_write(o, in, 100), NYTP_E_IO);
    assert_int_equal(nytp_out_close(o, &err), NYTP_E_IO);
    assert_non_null(strstr(err.msg, "write failed"));
    free(in);
}

/* After fork the child drops its copy of the parent's out (the writer
 * thread stayed in the parent) and writes its own; the parent's file is
 * complete. */
static void child_after_fork_drops_the_parents_out(void **state)
{
    (void)state;
    char path[] = "/tmp/nytp-test-deflater-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    nytp_out *o;
    nytp_error err;
    assert_int_equal(nytp_out_open_fd(&o, fd, true, &err), NYTP_OK);
    nytp_out_set_threads(o, true);
    assert_int_equal(nytp_out_start_deflate(o, 6), NYTP_OK);
    size_t len = 2u << 20;
    uint8_t *in = make_input(len);
    assert_int_equal(nytp_out_write(o, in, len / 2), NYTP_OK);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        nytp_out_abort(o);
        nytp_out *c;
        int ok = nytp_out_open_mem(&c, &err) == NYTP_OK;
#ifdef __SANITIZE_THREAD__
        /* ThreadSanitizer cannot start threads after a multi-threaded fork */
        nytp_out_set_threads(c, false);
#else
        nytp_out_set_threads(c, true); /* the child's own writer thread */
#endif
        ok = ok && nytp_out_start_deflate(c, 1) == NYTP_OK && nytp_out_write(c, in, len) == NYTP_OK;
        uint8_t *d;
        size_t dl;
        ok = ok && nytp_out_close_mem(c, &d, &dl, &err) == NYTP_OK;
        _exit(ok ? 0 : 1);
    }
    assert_int_equal(nytp_out_write(o, in + len / 2, len - len / 2), NYTP_OK);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(nytp_out_close(o, &err), NYTP_OK);

    size_t flen;
    uint8_t *file = slurp(path, &flen);
    uint8_t *back = malloc(len);
    uLongf blen = len;
    assert_int_equal(uncompress(back, &blen, file, (uLong)flen), Z_OK);
    assert_int_equal(blen, len);
    assert_memory_equal(back, in, len);
    unlink(path);
    free(back);
    free(file);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threaded_stream_is_the_plain_stream),
        cmocka_unit_test(isal_stream_inflates_with_zlib),
        cmocka_unit_test(unknown_deflater_is_a_usage_error),
        cmocka_unit_test(writer_error_reaches_the_caller),
        cmocka_unit_test(child_after_fork_drops_the_parents_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_io.c — byte input and output: memory, files, pipes, zlib, atomic
 * replacement. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "helpers.h"

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/nytp-test-io-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp(const char *name)
{
    static char buf[2][256];
    static int slot;
    char *b = buf[slot++ % 2];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
    return b;
}

static int count_files(void)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 0", tmpdir);
    return system(cmd) == 0 ? 0 : 1;
}

/* Write plain bytes, switch to deflate, write more; read it all back. */
static void mem_plain_then_deflate(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_out *o;
    assert_int_equal(nytp_out_open_mem(&o, &e), NYTP_OK);
    assert_int_equal(nytp_out_write(o, "plain:", 6), NYTP_OK);
    assert_int_equal(nytp_out_start_deflate(o, 9), NYTP_OK);
    assert_true(nytp_out_deflating(o));
    size_t big = 3 * 1024 * 1024 + 17; /* several internal buffers */
    for (size_t i = 0; i < big; i++) {
        uint8_t *p = nytp_out_reserve(o, 1);
        assert_non_null(p);
        *p = (uint8_t)(i % 251);
        nytp_out_commit(o, 1);
    }
    assert_int_equal(nytp_out_total(o), 6 + big);
    uint8_t *data;
    size_t len;
    assert_int_equal(nytp_out_close_mem(o, &data, &len, &e), NYTP_OK);
    assert_true(len < big / 10); /* it did compress */
    assert_memory_equal(data, "plain:", 6);

    nytp_in *in;
    assert_int_equal(nytp_in_open_mem(&in, data, len, &e), NYTP_OK);
    size_t avail;
    const uint8_t *p = nytp_in_peek(in, &avail);
    assert_true(avail >= 6);
    assert_memory_equal(p, "plain:", 6);
    nytp_in_skip(in, 6);
    assert_int_equal(nytp_in_offset(in), 6);
    assert_int_equal(nytp_in_start_inflate(in, &e), NYTP_OK);
    assert_int_equal(nytp_in_deflate_start(in), 6);
    size_t seen = 0;
    for (;;) {
        int st = nytp_in_fill(in, 4096, &e);
        p = nytp_in_peek(in, &avail);
        for (size_t i = 0; i < avail; i++)
            assert_int_equal(p[i], (seen + i) % 251);
        seen += avail;
        nytp_in_skip(in, avail);
        if (st == NYTP_END)
            break;
        assert_int_equal(st, NYTP_OK);
    }
    assert_int_equal(seen, big);
    assert_true(nytp_in_stream_ended(in));
    /* the trailer comment after the stream is not data */
    assert_memory_equal(data + len - 2, ")\n", 2);
    nytp_in_close(in);
    free(data);
}

/* A zlib stream cut short is "truncated"; flipped bytes are a format error. */
static void zlib_cut_and_corrupt(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_out *o;
    assert_int_equal(nytp_out_open_mem(&o, &e), NYTP_OK);
    assert_int_equal(nytp_out_start_deflate(o, 6), NYTP_OK);
    for (int i = 0; i < 20000; i++)
        nytp_out_printf(o, "line %d of some text\n", i);
    uint8_t *data;
    size_t len;
    assert_int_equal(nytp_out_close_mem(o, &data, &len, &e), NYTP_OK);

    nytp_in *in;
    uint64_t bytes;
    assert_int_equal(nytp_in_open_mem(&in, data, len / 2, &e), NYTP_OK);
    assert_int_equal(nytp_in_start_inflate(in, &e), NYTP_OK);
    assert_int_equal(nytp_in_drain(in, &bytes, &e), NYTP_E_TRUNCATED);
    nytp_in_close(in);

    uint8_t *bad = malloc(len);
    memcpy(bad, data, len);
    for (size_t i = len / 3; i < len / 3 + 8; i++)
        bad[i] ^= 0x5a;
    assert_int_equal(nytp_in_open_mem(&in, bad, len, &e), NYTP_OK);
    assert_int_equal(nytp_in_start_inflate(in, &e), NYTP_OK);
    int st = nytp_in_drain(in, &bytes, &e);
    assert_int_equal(st, NYTP_E_FORMAT);
    assert_non_null(strstr(e.msg, "corrupt zlib data"));
    assert_false(e.inflated); /* a file offset: where zlib noticed, */
    assert_true(e.offset >= len / 3 && e.offset <= len); /* at or after the damage */
    nytp_in_close(in);
    free(bad);
    free(data);
}

/* Standard input is a pipe: not seekable, arrives in pieces. */
static void pipe_input_in_small_pieces(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        for (int i = 0; i < 3000; i++) {
            char b = (char)('a' + i % 26);
            if (write(fds[1], &b, 1) != 1)
                _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    nytp_in *in;
    nytp_error e = {0};
    assert_int_equal(nytp_in_open_fd(&in, fds[0], true, &e), NYTP_OK);
    assert_int_equal(nytp_in_fill(in, 3000, &e), NYTP_OK);
    size_t avail;
    const uint8_t *p = nytp_in_peek(in, &avail);
    assert_int_equal(avail, 3000);
    assert_int_equal(p[2999], 'a' + 2999 % 26);
    nytp_in_skip(in, avail);
    assert_int_equal(nytp_in_fill(in, 1, &e), NYTP_END);
    nytp_in_close(in);
    int status;
    waitpid(pid, &status, 0);
    assert_int_equal(status, 0);
}

static void missing_file(void **state)
{
    (void)state;
    nytp_in *in;
    nytp_error e = {0};
    assert_int_equal(nytp_in_open_file(&in, tmp("no-such-file"), &e), NYTP_E_IO);
    assert_string_equal(e.msg, "cannot open: No such file or directory");
}

static void atomic_file_replaces_only_on_success(void **state)
{
    (void)state;
    const char *target = tmp("report.txt");
    FILE *f = fopen(target, "w");
    fputs("old\n", f);
    fclose(f);

    nytp_error e = {0};
    nytp_out *o;
    assert_int_equal(nytp_out_open_file(&o, target, NYTP_OUT_ATOMIC, &e), NYTP_OK);
    nytp_out_printf(o, "new %d\n", 1);
    nytp_out_flush(o);
    /* while writing, the old file is still there, whole */
    size_t len;
    uint8_t *d = slurp(target, &len);
    assert_int_equal(len, 4);
    free(d);
    nytp_out_abort(o);
    d = slurp(target, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(d, "old\n", 4);
    free(d);

    assert_int_equal(nytp_out_open_file(&o, target, NYTP_OUT_ATOMIC, &e), NYTP_OK);
    nytp_out_printf(o, "new %d\n", 2);
    assert_int_equal(nytp_out_close(o, &e), NYTP_OK);
    d = slurp(target, &len);
    assert_int_equal(len, 6);
    assert_memory_equal(d, "new 2\n", 6);
    free(d);
    struct stat sb;
    assert_int_equal(stat(target, &sb), 0);
    assert_true((sb.st_mode & 0444) == 0444 || (sb.st_mode & 0400)); /* readable */
    unlink(target);
    assert_int_equal(count_files(), 0); /* no temporary left behind */
}

static void unwritable_output(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_out *o;
    assert_int_equal(nytp_out_open_file(&o, tmp("no-dir/x.out"), NYTP_OUT_ATOMIC, &e), NYTP_E_IO);
    assert_non_null(strstr(e.msg, "No such file or directory"));
    assert_int_equal(nytp_out_open_file(&o, tmp("no-dir/x.out"), 0, &e), NYTP_E_IO);
}

/* A write error (a full disk) is sticky and reported at close. */
static void write_error_is_sticky(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    nytp_error e = {0};
    nytp_out *o;
    int fd = open("/dev/full", O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(nytp_out_open_fd(&o, fd, true, &e), NYTP_OK);
    for (int i = 0; i < 100000; i++)
        nytp_out_printf(o, "%d\n", i);
    assert_int_equal(nytp_out_error(o)->status, NYTP_E_IO);
    assert_int_equal(nytp_out_close(o, &e), NYTP_E_IO);
    assert_non_null(strstr(e.msg, "No space left on device"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mem_plain_then_deflate),
        cmocka_unit_test(zlib_cut_and_corrupt),
        cmocka_unit_test(pipe_input_in_small_pieces),
        cmocka_unit_test(missing_file),
        cmocka_unit_test(atomic_file_replaces_only_on_success),
        cmocka_unit_test(unwritable_output),
        cmocka_unit_test(write_error_is_sticky),
    };
    return cmocka_run_group_tests_name("io", tests, setup, teardown);
}

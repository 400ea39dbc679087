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

/* A gzip out is one gzip member that zlib's gunzip reads back whole, with
 * nothing after it (a .gz reader would take a trailer for a next member). */
static void mem_gzip(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_out *o;
    assert_int_equal(nytp_out_open_mem(&o, &e), NYTP_OK);
    assert_int_equal(nytp_out_start_gzip(o, 6), NYTP_OK);
    assert_true(nytp_out_deflating(o));
    size_t big = 2 * 1024 * 1024 + 5;
    for (size_t i = 0; i < big; i++) {
        uint8_t *p = nytp_out_reserve(o, 1);
        assert_non_null(p);
        *p = (uint8_t)(i % 241);
        nytp_out_commit(o, 1);
    }
    uint8_t *data;
    size_t len;
    assert_int_equal(nytp_out_close_mem(o, &data, &len, &e), NYTP_OK);
    assert_true(len > 18 && len < big / 10);
    assert_int_equal(data[0], 0x1f);
    assert_int_equal(data[1], 0x8b);

    z_stream zs = {0};
    assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
    uint8_t *back = malloc(big + 1);
    assert_non_null(back);
    zs.next_in = data;
    zs.avail_in = (uInt)len;
    zs.next_out = back;
    zs.avail_out = (uInt)(big + 1);
    assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
    assert_int_equal(zs.total_out, big);
    assert_int_equal(zs.avail_in, 0); /* no byte after the member */
    inflateEnd(&zs);
    for (size_t i = 0; i < big; i++)
        if (back[i] != (uint8_t)(i % 241))
            fail_msg("byte %zu differs", i);
    free(back);
    free(data);
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

/* ---- ISA-L and zlib inflate the same way ------------------------------- */

/* What inflating gave: the bytes (their length and crc32) and the end. */
typedef struct inflate_result {
    int status;
    uint64_t len;
    uLong crc;
    bool ended;
    nytp_error err;
    const char *inflater;
} inflate_result;

enum { PLAIN_PREFIX = 5 }; /* "head\n" before the zlib stream */

/* Inflate data[0..len) (a 5-byte plain prefix, then the stream) with the
 * named inflater, from memory or (path != NULL) from a file. */
static inflate_result inflate_with(const uint8_t *data, size_t len, const char *inflater,
                                   const char *path, bool threads)
{
    inflate_result r = {0};
    nytp_in *in;
    nytp_error e = {0};
    if (path) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(nytp_in_open_file(&in, path, &e), NYTP_OK);
    } else {
        assert_int_equal(nytp_in_open_mem(&in, data, len, &e), NYTP_OK);
    }
    nytp_in_set_threads(in, threads);
    assert_int_equal(nytp_in_set_inflater(in, inflater, &e), NYTP_OK);
    assert_int_equal(nytp_in_fill(in, PLAIN_PREFIX, &e), NYTP_OK);
    nytp_in_skip(in, PLAIN_PREFIX);
    assert_int_equal(nytp_in_start_inflate(in, &e), NYTP_OK);
    r.inflater = nytp_in_inflater(in);
    r.crc = crc32(0, NULL, 0);
    for (;;) {
        int st = nytp_in_fill(in, 100000, &r.err);
        size_t avail;
        const uint8_t *p = nytp_in_peek(in, &avail);
        r.crc = crc32(r.crc, p, (uInt)avail);
        r.len += avail;
        nytp_in_skip(in, avail);
        if (st != NYTP_OK) {
            r.status = st;
            break;
        }
    }
    r.ended = nytp_in_stream_ended(in);
    nytp_in_close(in);
    return r;
}

static void same_result(const inflate_result *a, const inflate_result *b, const char *what, size_t at)
{
    if (a->status != b->status || a->len != b->len || a->crc != b->crc || a->ended != b->ended ||
        a->err.offset != b->err.offset || a->err.inflated != b->err.inflated ||
        strcmp(a->err.msg, b->err.msg) != 0)
        fail_msg("%s at %zu: %s: status %d, %llu bytes, offset %llu%s '%s'; "
                 "%s: status %d, %llu bytes, offset %llu%s '%s'", what, at,
                 a->inflater, a->status, (unsigned long long)a->len,
                 (unsigned long long)a->err.offset, a->err.inflated ? " inflated" : "", a->err.msg,
                 b->inflater, b->status, (unsigned long long)b->len,
                 (unsigned long long)b->err.offset, b->err.inflated ? " inflated" : "", b->err.msg);
}

/* A plain prefix, a zlib stream made with the given level and strategy
 * (stored, fixed and dynamic blocks), and a trailer of '#' lines. */
static uint8_t *make_stream(size_t plain_len, int level, int strategy, size_t *len)
{
    uint8_t *plain = malloc(plain_len);
    assert_non_null(plain);
    uint32_t x = 12345;
    for (size_t i = 0; i < plain_len; i++) {
        x = x * 1103515245u + 12345u;
        /* text-like runs with some noise, so matches and literals mix */
        plain[i] = (i / 4096) % 3 == 2 ? (uint8_t)(x >> 24) : (uint8_t)("abcdefgh\n"[(i + (x >> 29)) % 9]);
    }
    z_stream zs = {0};
    assert_int_equal(deflateInit2(&zs, level, Z_DEFLATED, 15, 8, strategy), Z_OK);
    size_t cap = deflateBound(&zs, plain_len) + 64;
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    memcpy(out, "head\n", PLAIN_PREFIX);
    zs.next_in = plain;
    zs.avail_in = (uInt)plain_len;
    zs.next_out = out + PLAIN_PREFIX;
    zs.avail_out = (uInt)(cap - PLAIN_PREFIX - 40);
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t n = PLAIN_PREFIX + zs.total_out;
    deflateEnd(&zs);
    const char *trailer = "#\n# Compressed: trailer comment\n";
    memcpy(out + n, trailer, strlen(trailer));
    *len = n + strlen(trailer);
    free(plain);
    return out;
}

/* Whole, cut short at many points, and corrupted at many points: ISA-L
 * gives exactly what zlib gives (bytes, status, message, offset). */
static void isal_matches_zlib(void **state)
{
    (void)state;
    nytp_in *probe;
    nytp_error e = {0};
    assert_int_equal(nytp_in_open_mem(&probe, "", 0, &e), NYTP_OK);
    bool have_isal = nytp_in_set_inflater(probe, "isal", &e) == NYTP_OK;
    assert_int_equal(nytp_in_set_inflater(probe, "zlib", &e), NYTP_OK);
    assert_int_equal(nytp_in_set_inflater(probe, "gzip", &e), NYTP_E_USAGE);
    nytp_in_close(probe);
    if (!have_isal)
        skip();

    static const struct { size_t plain; int level, strategy; } kinds[] = {
        {1100 * 1024, 6, Z_DEFAULT_STRATEGY}, /* more than one 1 MiB block */
        {40000, 0, Z_DEFAULT_STRATEGY},       /* stored blocks */
        {40000, 9, Z_FIXED},                  /* fixed Huffman codes */
        {40000, 1, Z_HUFFMAN_ONLY},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t len;
        uint8_t *data = make_stream(kinds[k].plain, kinds[k].level, kinds[k].strategy, &len);
        inflate_result z = inflate_with(data, len, "zlib", NULL, false);
        inflate_result i = inflate_with(data, len, "isal", NULL, false);
        assert_string_equal(i.inflater, "isal");
        assert_int_equal(z.status, NYTP_END);
        assert_int_equal(z.len, kinds[k].plain);
        assert_true(z.ended);
        same_result(&z, &i, "whole", len);
        /* the same from a file, with and without the producer thread */
        inflate_result f = inflate_with(data, len, "isal", tmp("s.out"), true);
        assert_string_equal(f.inflater, "isal");
        same_result(&z, &f, "whole file", len);
        f = inflate_with(data, len, "isal", tmp("s.out"), false);
        same_result(&z, &f, "whole file", len);

        /* the trailer comment starts 32 bytes from the end; the stream
         * itself (header, blocks, adler32) is before it */
        size_t zend = len - 32;
        /* every byte near the ends of the small streams; a sample elsewhere */
        bool big = kinds[k].plain > 100000;
        size_t step = big ? 99991 : 997;
        for (size_t cut = PLAIN_PREFIX; cut < len;
             cut += (cut < PLAIN_PREFIX + 40 || (!big && cut + 48 > len)) ? 1 : step) {
            z = inflate_with(data, cut, "zlib", NULL, false);
            i = inflate_with(data, cut, "isal", NULL, false);
            same_result(&z, &i, "cut", cut);
            assert_int_equal(z.status, cut < zend ? NYTP_E_TRUNCATED : NYTP_END);
        }
        uint8_t *bad = malloc(len);
        assert_non_null(bad);
        if (big) /* and its trailer */
            for (size_t cut = zend - 6; cut < len; cut += 3) {
                z = inflate_with(data, cut, "zlib", NULL, false);
                i = inflate_with(data, cut, "isal", NULL, false);
                same_result(&z, &i, "cut", cut);
            }
        for (size_t at = PLAIN_PREFIX; at < zend;
             at += (at < PLAIN_PREFIX + 40 || (!big && at + 12 > zend)) ? 1 : step / 3) {
            for (unsigned flip = 1; flip < 256; flip += 126) {
                memcpy(bad, data, len);
                bad[at] ^= (uint8_t)flip;
                z = inflate_with(bad, len, "zlib", NULL, false);
                i = inflate_with(bad, len, "isal", NULL, false);
                same_result(&z, &i, "flip", at);
            }
        }
        /* a corrupt stream read from a file, threaded: zlib reads it again */
        memcpy(bad, data, len);
        bad[zend - 2] ^= 0x10; /* the adler32 */
        z = inflate_with(bad, len, "zlib", NULL, false);
        assert_int_equal(z.status, NYTP_E_FORMAT);
        f = inflate_with(bad, len, "isal", tmp("s.out"), true);
        same_result(&z, &f, "bad adler32 file", zend - 2);
        assert_int_equal(unlink(tmp("s.out")), 0);
        free(bad);
        free(data);
    }
}

/* The one known difference: a dynamic block whose literal/length code is
 * incomplete (here 'a' = 1 bit, end-of-block = 2 bits: a quarter of the
 * code space unused) is rejected by zlib but inflated by ISA-L when no
 * unused code occurs and the adler32 matches.  No zlib-based writer makes
 * such a block, and a damaged stream almost surely hits an unused code or
 * the checksum (then zlib has the last word as usual). */
static void isal_accepts_incomplete_codes(void **state)
{
    (void)state;
    static const uint8_t s[] = {'h', 'e', 'a', 'd', '\n', 0x78, 0x9c, 0x05, 0xc0, 0x01, 0x09, 0x00,
                                0x00, 0x00, 0x80, 0xa0, 0xad, 0xfe, 0x3f, 0x91, 0x10, 0x03, 0xce,
                                0x01, 0x85};
    inflate_result z = inflate_with(s, sizeof s, "zlib", NULL, false);
    assert_int_equal(z.status, NYTP_E_FORMAT);
    assert_string_equal(z.err.msg, "corrupt zlib data (invalid literal/lengths set)");
    nytp_in *probe;
    nytp_error e = {0};
    assert_int_equal(nytp_in_open_mem(&probe, "", 0, &e), NYTP_OK);
    bool have_isal = nytp_in_set_inflater(probe, "isal", &e) == NYTP_OK;
    nytp_in_close(probe);
    if (!have_isal)
        skip();
    inflate_result i = inflate_with(s, sizeof s, "isal", NULL, false);
    assert_int_equal(i.status, NYTP_END);
    assert_int_equal(i.len, 4);
    assert_int_equal(i.crc, crc32(crc32(0, NULL, 0), (const Bytef *)"aaaa", 4));
}

/* A pipe cannot be read twice, so it is inflated with zlib. */
static void pipe_input_uses_zlib(void **state)
{
    (void)state;
    size_t len;
    uint8_t *data = make_stream(100000, 6, Z_DEFAULT_STRATEGY, &len);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        _exit(write(fds[1], data, len) == (ssize_t)len ? 0 : 1);
    }
    close(fds[1]);
    nytp_in *in;
    nytp_error e = {0};
    assert_int_equal(nytp_in_open_fd(&in, fds[0], true, &e), NYTP_OK);
    assert_int_equal(nytp_in_fill(in, PLAIN_PREFIX, &e), NYTP_OK);
    nytp_in_skip(in, PLAIN_PREFIX);
    assert_int_equal(nytp_in_start_inflate(in, &e), NYTP_OK);
    assert_string_equal(nytp_in_inflater(in), "zlib");
    uint64_t bytes;
    assert_int_equal(nytp_in_drain(in, &bytes, &e), NYTP_OK);
    assert_int_equal(bytes, 100000);
    nytp_in_close(in);
    int status;
    waitpid(pid, &status, 0);
    assert_int_equal(status, 0);
    free(data);
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

/* Write "text" to path through an atomic out; the status of close. */
static int write_atomic(const char *path, const char *text, nytp_error *e)
{
    nytp_out *o;
    int st = nytp_out_open_file(&o, path, NYTP_OUT_ATOMIC, e);
    if (st < 0)
        return st;
    nytp_out_printf(o, "%s", text);
    return nytp_out_close(o, e);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static void assert_file(const char *path, const char *text)
{
    size_t len;
    uint8_t *d = slurp(path, &len);
    assert_non_null(d);
    assert_int_equal(len, strlen(text));
    assert_memory_equal(d, text, len);
    free(d);
}

/* A symbolic link, or a chain of them, is followed: the final target is
 * replaced in its own directory and every link stays a link. */
static void atomic_follows_symlinks(void **state)
{
    (void)state;
    nytp_error e = {0};
    struct stat sb;
    assert_int_equal(mkdir(tmp("sub"), 0777), 0);
    write_file(tmp("sub/target"), "old\n", 0640);
    assert_int_equal(symlink("sub/target", tmp("l1")), 0);
    assert_int_equal(symlink("l1", tmp("l2")), 0);
    assert_int_equal(write_atomic(tmp("l2"), "new\n", &e), NYTP_OK);
    assert_int_equal(lstat(tmp("l2"), &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(lstat(tmp("l1"), &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(lstat(tmp("sub/target"), &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0640); /* the replaced file's permissions */
    assert_file(tmp("sub/target"), "new\n");

    bool magic = true;
    char *t = nytp_path_follow_links(tmp("l2"), &magic, &e);
    assert_non_null(t);
    assert_false(magic);
    assert_string_equal(t, tmp("sub/target"));
    free(t);

    /* dangling: the target is created, the link stays */
    assert_int_equal(symlink("sub/made", tmp("dangling")), 0);
    assert_int_equal(write_atomic(tmp("dangling"), "made\n", &e), NYTP_OK);
    assert_int_equal(lstat(tmp("dangling"), &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_file(tmp("sub/made"), "made\n");

    /* a loop of links is an error, not a hang */
    assert_int_equal(symlink("loop-b", tmp("loop-a")), 0);
    assert_int_equal(symlink("loop-a", tmp("loop-b")), 0);
    assert_int_equal(write_atomic(tmp("loop-a"), "x", &e), NYTP_E_IO);
    assert_non_null(strstr(e.msg, "symbolic links"));

    /* a directory is an error */
    assert_int_equal(write_atomic(tmp("sub"), "x", &e), NYTP_E_IO);
    assert_non_null(strstr(e.msg, "is a directory"));

    const char *names[] = {"sub/target", "sub/made", "l1", "l2", "dangling", "loop-a", "loop-b"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        unlink(tmp(names[i]));
    assert_int_equal(rmdir(tmp("sub")), 0); /* no temporary left in it */
    assert_int_equal(count_files(), 0);
}

/* A FIFO is written straight into (its reader gets the bytes) and stays
 * a FIFO; nothing is left beside it. */
static void atomic_writes_through_fifo(void **state)
{
    (void)state;
    nytp_error e = {0};
    assert_int_equal(mkfifo(tmp("fifo"), 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(tmp("fifo"), O_RDONLY);
        char buf[64];
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
        _exit(n == 9 && memcmp(buf, "via fifo\n", 9) == 0 ? 0 : 1);
    }
    nytp_out *o;
    assert_int_equal(nytp_out_open_file(&o, tmp("fifo"), NYTP_OUT_ATOMIC, &e), NYTP_OK);
    assert_null(nytp_out_temp_path(o)); /* no temporary: written in place */
    nytp_out_printf(o, "via fifo\n");
    assert_int_equal(nytp_out_close(o, &e), NYTP_OK);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat sb;
    assert_int_equal(lstat(tmp("fifo"), &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    unlink(tmp("fifo"));
    assert_int_equal(count_files(), 0);
}

/* /dev/stdout leads into /proc, where a link names an open file: it is
 * written through, not followed to a path. */
static void proc_links_are_not_paths(void **state)
{
    (void)state;
    nytp_error e = {0};
    bool magic = false;
    char *t = nytp_path_follow_links("/dev/stdout", &magic, &e);
    if (!t && e.status == NYTP_E_IO)
        skip(); /* no /dev/stdout here */
    assert_non_null(t);
    assert_true(magic);
    free(t);
    /* written through: a pipe as standard output gets the bytes */
    int p[2];
    assert_int_equal(pipe(p), 0);
    int saved = dup(1);
    assert_int_equal(dup2(p[1], 1), 1);
    nytp_out *o;
    int st = nytp_out_open_file(&o, "/dev/stdout", NYTP_OUT_ATOMIC, &e);
    if (st == NYTP_OK) {
        nytp_out_printf(o, "piped\n");
        st = nytp_out_close(o, &e);
    }
    dup2(saved, 1);
    close(saved);
    close(p[1]);
    assert_int_equal(st, NYTP_OK);
    char buf[16];
    assert_int_equal(read(p[0], buf, sizeof buf), 6);
    assert_memory_equal(buf, "piped\n", 6);
    close(p[0]);

    /* standard output opened for appending ('>>') is appended to: the
     * descriptor is shared, not reopened and truncated */
    write_file(tmp("log"), "head\n", 0644);
    int fd = open(tmp("log"), O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    saved = dup(1);
    assert_int_equal(dup2(fd, 1), 1);
    close(fd);
    st = nytp_out_open_file(&o, "/dev/stdout", NYTP_OUT_ATOMIC, &e);
    if (st == NYTP_OK) {
        nytp_out_printf(o, "tail\n");
        st = nytp_out_close(o, &e);
    }
    dup2(saved, 1);
    close(saved);
    assert_int_equal(st, NYTP_OK);
    assert_file(tmp("log"), "head\ntail\n");
    unlink(tmp("log"));
}

/* Replacing a file needs the right to write it, as '>' does.  Root may
 * write anything, so as root the check runs in a child that is 'nobody'. */
static void atomic_respects_readonly_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/nytp-test-ro-XXXXXX";
    assert_non_null(mkdtemp(dir));
    chmod(dir, 0777);
    char file[64];
    snprintf(file, sizeof file, "%s/ro", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
            _exit(2);
        FILE *f = fopen(file, "w");
        if (!f)
            _exit(3);
        fputs("keep\n", f);
        fclose(f);
        chmod(file, 0444);
        nytp_error e = {0};
        int st = write_atomic(file, "new\n", &e);
        size_t len;
        uint8_t *d = slurp(file, &len);
        bool kept = d && len == 5 && memcmp(d, "keep\n", 5) == 0;
        _exit(st == NYTP_E_IO && strstr(e.msg, "Permission denied") && kept ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    unlink(file);
    rmdir(dir);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
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

/* An output to /dev/full, where every write fails (a full disk); the
 * test is skipped where there is none. */
static nytp_out *open_dev_full(void)
{
    if (access("/dev/full", W_OK) != 0)
        skip();
    nytp_error e = {0};
    nytp_out *o;
    int fd = open("/dev/full", O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(nytp_out_open_fd(&o, fd, true, &e), NYTP_OK);
    return o;
}

/* A write error (a full disk) is sticky and reported at close. */
static void write_error_is_sticky(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_out *o = open_dev_full();
    for (int i = 0; i < 100000; i++)
        nytp_out_printf(o, "%d\n", i);
    assert_int_equal(nytp_out_error(o)->status, NYTP_E_IO);
    assert_int_equal(nytp_out_close(o, &e), NYTP_E_IO);
    assert_non_null(strstr(e.msg, "No space left on device"));
}

/* nytp_out_fail: a writer's own failure becomes the out's error, which is
 * sticky (nothing more is written, a later failure does not replace it),
 * is returned by close, and leaves the old file in place of an atomic one
 * with no temporary behind. */
static void fail_is_the_outs_error(void **state)
{
    (void)state;
    const char *target = tmp("failed.txt");
    write_file(target, "old\n", 0644);
    nytp_error e = {0};
    nytp_out *o;
    assert_int_equal(nytp_out_open_file(&o, target, NYTP_OUT_ATOMIC, &e), NYTP_OK);
    nytp_out_printf(o, "part of a report\n");
    assert_int_equal(nytp_out_error(o)->status, NYTP_OK);
    assert_int_equal(nytp_out_fail(o, NYTP_E_NOMEM, "out of memory"), NYTP_E_NOMEM);
    assert_int_equal(nytp_out_fail(o, NYTP_E_IO, "later"), NYTP_E_NOMEM);
    assert_true(nytp_out_printf(o, "the rest\n") < 0);
    assert_string_equal(nytp_out_error(o)->msg, "out of memory");
    assert_int_equal(nytp_out_close(o, &e), NYTP_E_NOMEM);
    assert_string_equal(e.msg, "out of memory");
    assert_file(target, "old\n");
    unlink(target);
    assert_int_equal(count_files(), 0);
}

/* nytp_out_reserve leaves errno as it was, also when it hands the buffer
 * on and the write fails (a profiler writes between a program's system
 * call and its look at errno). */
static void reserve_keeps_errno(void **state)
{
    (void)state;
    nytp_out *o = open_dev_full();
    int reached_error = 0;
    for (int i = 0; i < 1000 && !reached_error; i++) {
        errno = EDOM;
        uint8_t *p = nytp_out_reserve(o, 1000);
        assert_int_equal(errno, EDOM);
        if (!p) {
            reached_error = 1;
            break;
        }
        memset(p, 'x', 1000);
        nytp_out_commit(o, 1000);
    }
    assert_true(reached_error); /* the buffer was handed on, and failed */
    assert_int_equal(nytp_out_error(o)->status, NYTP_E_IO);
    nytp_out_abort(o);
}

/* The descriptors of this process that are open on path (its link in
 * /proc/self/fd names it): at most 4, into fds; their number. */
static int fds_on(const char *path, int *fds)
{
    int n = 0;
    for (int fd = 3; fd < 1024 && n < 4; fd++) {
        char link[64], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len < 0)
            continue;
        target[len] = 0;
        if (strcmp(target, path) == 0)
            fds[n++] = fd;
    }
    return n;
}

/* A guarded output whose descriptor the program closes and whose number a
 * file of the program's then gets (dup2, as a daemon closing every
 * descriptor and opening its own files would): the program's file is
 * never written, the output goes on in its own file under its path, at
 * the same offset, and closing it leaves the program's descriptor open.
 * When the path is no longer that file, the output fails naming it. */
static void guard_survives_a_closed_descriptor(void **state)
{
    (void)state;
    for (int gone = 0; gone <= 1; gone++) {
        const char *out = tmp("guarded.out");
        const char *victim = tmp("program.txt");
        write_file(victim, "the program's\n", 0644);
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        nytp_out *o;
        nytp_error e = {0};
        assert_int_equal(nytp_out_open_fd(&o, fd, true, &e), NYTP_OK);
        assert_int_equal(nytp_out_guard_fd(o, out, &e), NYTP_OK);
        int fds[4];
        assert_int_equal(fds_on(out, fds), 1);
        assert_true(fds[0] >= NYTP_OUT_GUARD_FD_MIN); /* moved up */
        nytp_out_printf(o, "first half\n");
        assert_int_equal(nytp_out_flush(o), NYTP_OK);

        int theirs = open(victim, O_WRONLY | O_APPEND);
        assert_true(theirs >= 0);
        assert_int_equal(dup2(theirs, fds[0]), fds[0]); /* our number, their file */
        close(theirs);
        if (gone)
            unlink(out);
        nytp_out_printf(o, "second half\n");
        nytp_out_flush(o);
        int st = nytp_out_close(o, &e);
        assert_file(victim, "the program's\n");
        /* the program's descriptor is still open: write through it */
        assert_int_equal(write(fds[0], "more\n", 5), 5);
        close(fds[0]);
        assert_file(victim, "the program's\nmore\n");
        if (!gone) {
            assert_int_equal(st, NYTP_OK);
            assert_file(out, "first half\nsecond half\n");
            unlink(out);
        } else {
            assert_int_equal(st, NYTP_E_IO);
            assert_non_null(strstr(e.msg, out));
        }
        unlink(victim);
    }
}

/* A descriptor that is not a regular file is not guarded (nor moved). */
static void guard_leaves_devices_alone(void **state)
{
    (void)state;
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    nytp_out *o;
    nytp_error e = {0};
    assert_int_equal(nytp_out_open_fd(&o, fd, true, &e), NYTP_OK);
    assert_int_equal(nytp_out_guard_fd(o, "/dev/null", &e), NYTP_OK);
    nytp_out_printf(o, "x\n");
    assert_int_equal(nytp_out_close(o, &e), NYTP_OK);
    assert_int_equal(fcntl(fd, F_GETFD), -1); /* closed, by its own number */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mem_plain_then_deflate),
        cmocka_unit_test(mem_gzip),
        cmocka_unit_test(zlib_cut_and_corrupt),
        cmocka_unit_test(pipe_input_in_small_pieces),
        cmocka_unit_test(isal_matches_zlib),
        cmocka_unit_test(isal_accepts_incomplete_codes),
        cmocka_unit_test(pipe_input_uses_zlib),
        cmocka_unit_test(missing_file),
        cmocka_unit_test(atomic_file_replaces_only_on_success),
        cmocka_unit_test(atomic_follows_symlinks),
        cmocka_unit_test(atomic_writes_through_fifo),
        cmocka_unit_test(proc_links_are_not_paths),
        cmocka_unit_test(atomic_respects_readonly_files),
        cmocka_unit_test(unwritable_output),
        cmocka_unit_test(write_error_is_sticky),
        cmocka_unit_test(fail_is_the_outs_error),
        cmocka_unit_test(reserve_keeps_errno),
        cmocka_unit_test(guard_survives_a_closed_descriptor),
        cmocka_unit_test(guard_leaves_devices_alone),
    };
    return cmocka_run_group_tests_name("io", tests, setup, teardown);
}

/* test_writer.c — the writer: byte-exact round trip of real profiles,
 * compression, every chunk call, and errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "helpers.h"
#include "nytp/writer_inline.h"

/* A writer on a new memory out (*o). */
static nytp_writer *mem_writer(nytp_out **o)
{
    nytp_error e = {0};
    nytp_writer *w;
    assert_int_equal(nytp_out_open_mem(o, &e), NYTP_OK);
    assert_int_equal(nytp_writer_open(&w, *o, &e), NYTP_OK);
    return w;
}

/* Decode a real uncompressed profile and write every chunk again: the
 * bytes must be the same as Devel::NYTProf wrote them. */
static void roundtrip_bytes(const char *name)
{
    size_t len;
    uint8_t *orig = slurp(td_path(name), &len);
    size_t n;
    int st;
    nytp_error e = {0};
    saved_chunk *v = read_all(orig, len, &n, &st, &e);
    assert_int_equal(st, NYTP_END);
    assert_true(n > 20);

    nytp_out *o;
    nytp_writer *w;
    w = mem_writer(&o);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(nytp_write_chunk(w, &v[i].c), NYTP_OK);
    size_t got_len;
    const uint8_t *got = nytp_out_mem_data(o, &got_len);
    (void)got;
    nytp_out_flush(o);
    got = nytp_out_mem_data(o, &got_len);
    assert_int_equal(got_len, len);
    assert_memory_equal(got, orig, len);
    nytp_writer_abort(w);
    free_chunks(v, n);
    free(orig);
}

static void uncompressed_profiles_roundtrip_byte_for_byte(void **state)
{
    (void)state;
    roundtrip_bytes("demo-compress0.out");
    roundtrip_bytes("tricky-strings-compress0.out");
    roundtrip_bytes("broken/minor9.out"); /* a newer minor version is kept too */
}

/* A compressed profile re-written through the writer reads back as the
 * same chunks (the deflated bytes may differ). */
static void compressed_profile_roundtrips_chunkwise(void **state)
{
    (void)state;
    const char *names[] = {"demo.out",        "demo-calls2.out", "demo-blocks.out",
                           "demo-savesrc0.out", "recursion.out",  "evals.out",
                           "anon.out",        "utf8-names.out",  "tricky-strings.out",
                           "fork.out",        "fork-child.out"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t len;
        uint8_t *orig = slurp(td_path(names[k]), &len);
        size_t n, n2;
        int st;
        nytp_error e = {0};
        saved_chunk *v = read_all(orig, len, &n, &st, &e);
        assert_int_equal(st, NYTP_END);

        char path[] = "/tmp/nytp-test-writer-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        nytp_out *o;
        nytp_writer *w;
        assert_int_equal(nytp_out_open_file(&o, path, NYTP_OUT_ATOMIC, &e), NYTP_OK);
        assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(nytp_write_chunk(w, &v[i].c), NYTP_OK);
        assert_true(nytp_out_deflating(o));
        assert_int_equal(nytp_writer_close(w, &e), NYTP_OK);
        size_t dlen;
        uint8_t *data = slurp(path, &dlen);
        unlink(path);
        saved_chunk *v2 = read_all(data, dlen, &n2, &st, &e);
        assert_int_equal(st, NYTP_END);
        assert_int_equal(n2, n);
        for (size_t i = 0; i < n; i++)
            assert_true(chunk_equal(&v[i].c, &v2[i].c));
        free_chunks(v, n);
        free_chunks(v2, n2);
        free(data);
        free(orig);
    }
}

/* Every chunk call, to a file, compressed; read back with the reader. */
static void every_call_to_a_file(void **state)
{
    (void)state;
    char path[] = "/tmp/nytp-test-writer-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    nytp_error e = {0};
    nytp_out *o;
    nytp_writer *w;
    assert_int_equal(nytp_out_open_file(&o, path, NYTP_OUT_ATOMIC, &e), NYTP_OK);
    assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
    nytp_write_header(w, 5, 0);
    nytp_write_comment(w, "made by test_writer");
    nytp_write_attribute(w, "ticks_per_sec", "10000000");
    nytp_write_option(w, "calls", "2");
    assert_int_equal(nytp_write_start_deflate(w, 6), NYTP_OK);
    nytp_write_pid_start(w, 100, 1, 1.5);
    nytp_write_new_fid(w, 1, 0, 0, NYTP_FIDF_HAS_SRC, 10, 20, nytp_cstr("x.pl", false));
    nytp_write_time_line(w, 5, 1, 1);
    nytp_write_discount(w);
    nytp_write_time_block(w, -3, 1, 2, 1, 0);
    nytp_write_sub_entry(w, 1, 2);
    nytp_write_sub_return(w, 1, 7.0, 6.0, nytp_cstr("main::f", false));
    nytp_write_src_line(w, 1, 1, nytp_cstr("sub f {}\n", false));
    nytp_write_sub_info(w, 1, 1, 1, nytp_cstr("main::f", false));
    nytp_write_sub_callers(w, 1, 2, 1, 0.5, 0.25, 0.0, 0, nytp_cstr("main::f", false),
                           nytp_cstr("main::RUNTIME", false));
    nytp_write_pid_end(w, 100, 2.5);
    assert_int_equal(nytp_writer_close(w, &e), NYTP_OK);

    size_t len, n;
    int st;
    uint8_t *data = slurp(path, &len);
    unlink(path);
    saved_chunk *v = read_all(data, len, &n, &st, &e);
    assert_int_equal(st, NYTP_END);
    const int want[] = {NYTP_TAG_VERSION,  NYTP_TAG_COMMENT,     NYTP_TAG_ATTRIBUTE,
                        NYTP_TAG_OPTION,   NYTP_TAG_COMMENT,     NYTP_TAG_START_DEFLATE,
                        NYTP_TAG_PID_START, NYTP_TAG_NEW_FID,    NYTP_TAG_TIME_LINE,
                        NYTP_TAG_DISCOUNT, NYTP_TAG_TIME_BLOCK,  NYTP_TAG_SUB_ENTRY,
                        NYTP_TAG_SUB_RETURN, NYTP_TAG_SRC_LINE,  NYTP_TAG_SUB_INFO,
                        NYTP_TAG_SUB_CALLERS, NYTP_TAG_PID_END};
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(v[i].c.tag, want[i]);
    assert_int_equal(v[10].c.u.time.ticks, -3);
    assert_string_equal(v[15].strs[1], "main::RUNTIME");
    assert_true(strncmp(v[4].strs[0], "Compressed at level 6 with zlib ", 32) == 0);
    free_chunks(v, n);
    free(data);
}

/* A chunk that cannot be encoded is a sticky error; close reports it and
 * the atomic target is never created. */
static void bad_chunk_is_sticky_and_discards(void **state)
{
    (void)state;
    char dir[] = "/tmp/nytp-test-writer-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/p.out", dir);
    nytp_error e = {0};
    nytp_out *o;
    nytp_writer *w;
    assert_int_equal(nytp_out_open_file(&o, path, NYTP_OUT_ATOMIC, &e), NYTP_OK);
    assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
    nytp_write_header(w, 5, 0);
    assert_int_equal(nytp_write_attribute(w, "application", "two\nlines"), NYTP_E_USAGE);
    assert_int_equal(nytp_write_time_line(w, 1, 1, 1), NYTP_E_USAGE);
    assert_int_equal(nytp_writer_error(w)->status, NYTP_E_USAGE);
    assert_int_equal(nytp_writer_close(w, &e), NYTP_E_USAGE);
    assert_non_null(strstr(e.msg, "ATTRIBUTE"));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(rmdir(dir), 0); /* empty: no temporary left */
}

/* After an error of the writer's own, the inline writers return it and
 * add nothing, as the writer's functions do; so after an error of the
 * output (here: a compression level it refuses). */
static void inline_writers_stop_at_an_error(void **state)
{
    (void)state;
    nytp_out *o;
    nytp_writer *w = mem_writer(&o);
    assert_int_equal(nytp_write_header(w, 5, 0), NYTP_OK);
    assert_int_equal(nytp_write_time_line_inline(w, 1, 1, 1), NYTP_OK);
    uint64_t before = nytp_out_total(o);
    assert_int_equal(nytp_write_attribute(w, "application", "two\nlines"), NYTP_E_USAGE);
    assert_int_equal(nytp_write_time_line_inline(w, 1, 1, 1), NYTP_E_USAGE);
    assert_int_equal(nytp_write_discount_inline(w), NYTP_E_USAGE);
    assert_int_equal(nytp_write_sub_return_inline(w, 1, 0.5, 0.5, (nytp_str){"main::f", 7, false}),
                     NYTP_E_USAGE);
    assert_int_equal(nytp_out_total(o), before);
    nytp_writer_abort(w);

    w = mem_writer(&o);
    assert_int_equal(nytp_write_header(w, 5, 0), NYTP_OK);
    assert_true(nytp_out_start_deflate(o, 42) < 0);
    before = nytp_out_total(o);
    assert_true(nytp_write_time_line_inline(w, 1, 1, 1) < 0);
    assert_true(nytp_write_discount_inline(w) < 0);
    assert_int_equal(nytp_out_total(o), before);
    nytp_writer_abort(w);
}

static void level_zero_stays_plain(void **state)
{
    (void)state;
    nytp_out *o;
    nytp_writer *w;
    w = mem_writer(&o);
    assert_int_equal(nytp_write_start_deflate(w, 0), NYTP_OK);
    assert_false(nytp_out_deflating(o));
    uint64_t before = nytp_out_total(o);
    assert_int_equal(nytp_write_start_deflate(w, 12), NYTP_E_USAGE);
    /* the writer's own error stops the inline writers too */
    assert_int_equal(nytp_write_time_line_inline(w, 1, 1, 1), NYTP_E_USAGE);
    assert_int_equal(nytp_out_total(o), before);
    nytp_writer_abort(w);
}

/* The per-statement and per-call calls (TIME_LINE, TIME_BLOCK, DISCOUNT,
 * SUB_RETURN) take a path of their own, and so do their inline versions
 * (nytp/writer_inline.h, used on odd rounds): their bytes must be
 * nytp_encode_chunk's for every size of number, also where a chunk does
 * not fit in what is left of the buffer (enough chunks are written to
 * fill it several times). */
static void statement_chunks_match_the_encoder(void **state)
{
    (void)state;
    static const uint32_t v[] = {0,         1,          0x7F,       0x80,       0x3FFF,
                                 0x4000,    0x1FFFFF,   0x200000,   0xFFFFFFF,  0x10000000,
                                 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF};
    const size_t nv = sizeof v / sizeof v[0];
    char name[300];
    for (size_t i = 0; i < sizeof name; i++)
        name[i] = (char)('a' + i % 26);
    nytp_out *o;
    nytp_writer *w;
    w = mem_writer(&o);
    size_t cap = 256u * 1024 * 1024, len = 0;
    uint8_t *want = malloc(cap);
    assert_non_null(want);
    for (int round = 0; round < 300; round++)
        for (size_t a = 0; a < nv; a++)
            for (size_t b = 0; b < nv; b++) {
                uint32_t x = v[a], y = v[b], z = v[(a + b + (size_t)round) % nv];
                nytp_chunk c = {.tag = NYTP_TAG_TIME_LINE};
                c.u.time.ticks = (int32_t)x;
                c.u.time.fid = y;
                c.u.time.line = z;
                int in = round & 1;
                assert_int_equal(in ? nytp_write_time_line_inline(w, (int32_t)x, y, z)
                                    : nytp_write_time_line(w, (int32_t)x, y, z),
                                 NYTP_OK);
                len += nytp_encode_chunk(want + len, &c);
                c.tag = NYTP_TAG_TIME_BLOCK;
                c.u.time.block_line = v[(a * 7 + b) % nv];
                c.u.time.sub_line = v[(a + b * 5) % nv];
                assert_int_equal(nytp_write_time_block(w, (int32_t)x, y, z, c.u.time.block_line,
                                                       c.u.time.sub_line),
                                 NYTP_OK);
                len += nytp_encode_chunk(want + len, &c);
                nytp_chunk d = {.tag = NYTP_TAG_DISCOUNT};
                assert_int_equal(in ? nytp_write_discount_inline(w) : nytp_write_discount(w), NYTP_OK);
                len += nytp_encode_chunk(want + len, &d);
                nytp_chunk r = {.tag = NYTP_TAG_SUB_RETURN};
                r.u.sub_return.depth = z;
                r.u.sub_return.incl = (double)x / 3.0;
                r.u.sub_return.excl = -(double)y;
                /* names of 0 to 299 bytes (lengths of 1 and 2 bytes), some UTF-8 */
                r.u.sub_return.name = (nytp_str){name, (uint32_t)((a * 31 + b * 7 + (size_t)round) % 300),
                                                 (a + b) % 3 == 0};
                nytp_str nm = r.u.sub_return.name;
                double ri = r.u.sub_return.incl, re = r.u.sub_return.excl;
                assert_int_equal(in ? nytp_write_sub_return_inline(w, z, ri, re, nm)
                                    : nytp_write_sub_return(w, z, ri, re, nm),
                                 NYTP_OK);
                len += nytp_encode_chunk(want + len, &r);
                assert_true(len + 64 < cap);
            }
    assert_true(len > 1024 * 1024); /* past the output's buffer several times */
    nytp_out_flush(o);
    size_t got_len;
    const uint8_t *got = nytp_out_mem_data(o, &got_len);
    assert_int_equal(got_len, len);
    assert_memory_equal(got, want, len);
    nytp_writer_abort(w);
    free(want);
}

/* A memory writer's file, handed over whole: compressed, it reads back
 * to its end; after an error nothing is handed over. */
/* Text chunks (COMMENT, ATTRIBUTE, OPTION) of a compressed stream never
 * run over a multiple of 163,840 inflated bytes, where Devel::NYTProf's
 * reader (which inflates that much at a time) splits a line wrongly: for
 * a text chunk whose tag falls 1 to 6 bytes before such a boundary, and
 * the chunks after it. */
static void text_chunks_stay_inside_the_oracles_inflate_buffers(void **state)
{
    (void)state;
    const size_t B = 4096 * 40;
    char fill[2100], val[96];
    memset(val, 'v', 95);
    val[95] = '\0';
    for (size_t d = 1; d <= 6; d++) {
        nytp_error e = {0};
        nytp_out *o;
        nytp_writer *w = mem_writer(&o);
        assert_int_equal(nytp_write_header(w, 5, 0), NYTP_OK);
        assert_int_equal(nytp_write_start_deflate(w, 1), NYTP_OK);
        uint64_t base = nytp_out_total(o);
        size_t at = 0;
        while (B - d - at > 2000) { /* comments of 1,000 bytes */
            memset(fill, 'f', 998);
            fill[998] = '\0';
            assert_int_equal(nytp_write_comment(w, fill), NYTP_OK);
            at += 1000;
        }
        size_t rest = B - d - at; /* one more, up to B - d */
        memset(fill, 'g', rest - 2);
        fill[rest - 2] = '\0';
        assert_int_equal(nytp_write_comment(w, fill), NYTP_OK);
        /* its tag at B - d, a line of 100 bytes after it */
        assert_int_equal(nytp_write_attribute(w, "key", val), NYTP_OK);
        assert_int_equal(nytp_write_option(w, "opt", val), NYTP_OK);
        assert_int_equal(nytp_write_comment(w, val), NYTP_OK);
        uint8_t *data;
        size_t len;
        assert_int_equal(nytp_writer_close_mem(w, &data, &len, &e), NYTP_OK);

        size_t cap = 2 * B;
        uint8_t *back = malloc(cap);
        z_stream zs = {0};
        assert_int_equal(inflateInit(&zs), Z_OK);
        zs.next_in = data + base;
        zs.avail_in = (uInt)(len - base);
        zs.next_out = back;
        zs.avail_out = (uInt)cap;
        assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
        size_t n = zs.total_out;
        inflateEnd(&zs);
        int seen_key = 0;
        for (size_t p = 0; p < n;) {
            assert_true(back[p] == '#' || back[p] == ':' || back[p] == '!');
            const uint8_t *nl = memchr(back + p + 1, '\n', n - p - 1);
            assert_non_null(nl);
            size_t last = (size_t)(nl - back);
            if ((p + 1) / B != last / B)
                fail_msg("d=%zu: the chunk at %zu has its line at %zu..%zu, across %zu", d, p,
                         p + 1, last, (last / B) * B);
            if (back[p] == ':' && memcmp(back + p + 1, "key=", 4) == 0)
                seen_key = 1;
            p = last + 1;
        }
        assert_true(seen_key);
        free(back);
        free(data);
    }
}

static void close_mem_hands_over_the_file(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_out *o;
    nytp_writer *w;
    w = mem_writer(&o);
    assert_int_equal(nytp_write_header(w, 5, 0), NYTP_OK);
    assert_int_equal(nytp_write_start_deflate(w, 6), NYTP_OK);
    assert_int_equal(nytp_write_pid_start(w, 7, 1, 1.5), NYTP_OK);
    for (uint32_t i = 0; i < 100000; i++)
        assert_int_equal(nytp_write_time_line(w, (int32_t)i, 1, i % 1000 + 1), NYTP_OK);
    assert_int_equal(nytp_write_pid_end(w, 7, 2.5), NYTP_OK);
    uint8_t *data;
    size_t len;
    assert_int_equal(nytp_writer_close_mem(w, &data, &len, &e), NYTP_OK);
    assert_non_null(data);
    size_t n;
    int st;
    saved_chunk *v = read_all(data, len, &n, &st, &e);
    assert_int_equal(st, NYTP_END);
    /* VERSION, COMMENT, START_DEFLATE, PID_START, statements, PID_END */
    assert_int_equal(n, 4 + 100000 + 1);
    assert_int_equal(v[n - 2].c.u.time.ticks, 99999);
    assert_int_equal(v[n - 1].c.tag, NYTP_TAG_PID_END);
    free_chunks(v, n);
    free(data);

    w = mem_writer(&o);
    assert_int_equal(nytp_write_attribute(w, "a", "two\nlines"), NYTP_E_USAGE);
    assert_int_equal(nytp_writer_close_mem(w, &data, &len, &e), NYTP_E_USAGE);
    assert_null(data);
    assert_int_equal(len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uncompressed_profiles_roundtrip_byte_for_byte),
        cmocka_unit_test(compressed_profile_roundtrips_chunkwise),
        cmocka_unit_test(every_call_to_a_file),
        cmocka_unit_test(bad_chunk_is_sticky_and_discards),
        cmocka_unit_test(level_zero_stays_plain),
        cmocka_unit_test(statement_chunks_match_the_encoder),
        cmocka_unit_test(inline_writers_stop_at_an_error),
        cmocka_unit_test(close_mem_hands_over_the_file),
        cmocka_unit_test(text_chunks_stay_inside_the_oracles_inflate_buffers),
    };
    return cmocka_run_group_tests_name("writer", tests, NULL, NULL);
}

/* test_codec.c — numbers, strings and every chunk kind, both directions. */
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "nytp/encode.h"

static const struct {
    uint32_t v;
    size_t size;
    uint8_t bytes[5];
} u32_cases[] = {
    {0, 1, {0x00}},
    {127, 1, {0x7f}},
    {128, 2, {0x80, 0x80}},
    {0x3fff, 2, {0xbf, 0xff}},
    {0x4000, 3, {0xc0, 0x40, 0x00}},
    {0x1fffff, 3, {0xdf, 0xff, 0xff}},
    {0x200000, 4, {0xe0, 0x20, 0x00, 0x00}},
    {0xfffffff, 4, {0xef, 0xff, 0xff, 0xff}},
    {0x10000000, 5, {0xff, 0x10, 0x00, 0x00, 0x00}},
    {0xffffffff, 5, {0xff, 0xff, 0xff, 0xff, 0xff}},
};

static void u32_boundaries(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof u32_cases / sizeof u32_cases[0]; i++) {
        uint8_t buf[8] = {0};
        size_t n = nytp_encode_u32(buf, u32_cases[i].v);
        assert_int_equal(n, u32_cases[i].size);
        assert_int_equal(nytp_u32_size(u32_cases[i].v), u32_cases[i].size);
        assert_memory_equal(buf, u32_cases[i].bytes, n);
        uint32_t back = 0;
        assert_int_equal(nytp_decode_u32(buf, buf + n, &back), n);
        assert_int_equal(back, u32_cases[i].v);
        /* every shorter prefix asks for more */
        for (size_t k = 0; k < n; k++)
            assert_int_equal(nytp_decode_u32(buf, buf + k, &back), 0);
    }
}

static void u32_every_width_roundtrips(void **state)
{
    (void)state;
    /* a walk over all magnitudes, both sides of each power of two */
    for (int bit = 0; bit < 32; bit++) {
        uint32_t base = (uint32_t)1 << bit;
        uint32_t vals[] = {base - 1, base, base + 1};
        for (int j = 0; j < 3; j++) {
            uint8_t buf[8];
            uint32_t back;
            size_t n = nytp_encode_u32(buf, vals[j]);
            assert_int_equal(nytp_decode_u32(buf, buf + n, &back), n);
            assert_int_equal(back, vals[j]);
        }
    }
}

static size_t encode(const nytp_chunk *c, uint8_t **out)
{
    *out = malloc(nytp_chunk_max_size(c));
    assert_non_null(*out);
    return nytp_encode_chunk(*out, c);
}

static void roundtrip(const nytp_chunk *c)
{
    uint8_t *buf;
    size_t n = encode(c, &buf);
    assert_true(n > 0);
    assert_true(n <= nytp_chunk_max_size(c));
    nytp_chunk d;
    size_t used = 0;
    const char *why = NULL;
    int r = c->tag == NYTP_TAG_VERSION ? nytp_decode_header(buf, buf + n, &d, &used, &why)
                                       : nytp_decode_chunk(buf, buf + n, &d, &used, &why);
    assert_int_equal(r, NYTP_DECODE_OK);
    assert_int_equal(used, n);
    assert_true(chunk_equal(c, &d));
    /* every proper prefix is "need more", with a need beyond the prefix */
    for (size_t k = 0; k < n; k++) {
        size_t need = 0;
        r = c->tag == NYTP_TAG_VERSION ? nytp_decode_header(buf, buf + k, &d, &need, &why)
                                       : nytp_decode_chunk(buf, buf + k, &d, &need, &why);
        assert_int_equal(r, NYTP_DECODE_NEED_MORE);
        assert_true(need > k);
        assert_true(need <= n);
    }
    free(buf);
}

static nytp_str S(const char *s) { return nytp_cstr(s, false); }

static void every_chunk_roundtrips(void **state)
{
    (void)state;
    nytp_chunk c;

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_VERSION;
    c.u.version.major = 5;
    c.u.version.minor = 0;
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_COMMENT;
    c.u.comment.text = S("a comment\n");
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_ATTRIBUTE;
    c.u.kv.key = S("ticks_per_sec");
    c.u.kv.value = S("10000000");
    roundtrip(&c);
    c.tag = NYTP_TAG_OPTION;
    c.u.kv.value = S(""); /* empty value is fine */
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_START_DEFLATE;
    roundtrip(&c);
    c.tag = NYTP_TAG_DISCOUNT;
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_PID_START;
    c.u.pid_start.pid = 4242;
    c.u.pid_start.ppid = 1;
    c.u.pid_start.time = 1795269522.80832;
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_PID_END;
    c.u.pid_end.pid = 0xffffffff;
    c.u.pid_end.time = -0.0;
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_NEW_FID;
    c.u.new_fid.fid = 3;
    c.u.new_fid.eval_fid = 1;
    c.u.new_fid.eval_line = 0x4000;
    c.u.new_fid.flags = NYTP_FIDF_IS_EVAL | NYTP_FIDF_HAS_SRC;
    c.u.new_fid.size = 0x10000000;
    c.u.new_fid.mtime = 1700000000;
    c.u.new_fid.name = nytp_cstr("(eval 3)[gr\xc3\xbc\xc3\x9f" "e.pl:12]", true);
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_TIME_LINE;
    c.u.time.ticks = -5;
    c.u.time.fid = 1;
    c.u.time.line = 128;
    roundtrip(&c);
    c.tag = NYTP_TAG_TIME_BLOCK;
    c.u.time.ticks = INT32_MAX;
    c.u.time.block_line = 127;
    c.u.time.sub_line = 0x3fff;
    roundtrip(&c);
    c.u.time.ticks = INT32_MIN;
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_SUB_INFO;
    c.u.sub_info.fid = 2;
    c.u.sub_info.first_line = 10;
    c.u.sub_info.last_line = 20;
    c.u.sub_info.name = S("Foo::bar");
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_SUB_CALLERS;
    c.u.sub_callers.fid = 1;
    c.u.sub_callers.line = 7;
    c.u.sub_callers.count = 176;
    c.u.sub_callers.incl = 0.25;
    c.u.sub_callers.excl = 1e-7;
    c.u.sub_callers.reci = 3.5;
    c.u.sub_callers.rec_depth = 9;
    c.u.sub_callers.called = S("main::fib");
    c.u.sub_callers.caller = S("");
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_SRC_LINE;
    c.u.src_line.fid = 1;
    c.u.src_line.line = 1;
    c.u.src_line.text = S("print \"\\t<script>\";\n");
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_SUB_ENTRY;
    c.u.sub_entry.fid = 1;
    c.u.sub_entry.line = 0xffffffff;
    roundtrip(&c);

    memset(&c, 0, sizeof c);
    c.tag = NYTP_TAG_SUB_RETURN;
    c.u.sub_return.depth = 10000;
    c.u.sub_return.incl = 77;
    c.u.sub_return.excl = 64;
    c.u.sub_return.name = S("main::__ANON__[x.pl:12]");
    roundtrip(&c);
}

/* The inline TIME_LINE encoder (the profiler's per-statement writer)
 * gives the tag and the three numbers as nytp_encode_u32 writes them, for
 * every width of each number, writes nothing past the chunk, and the
 * decoder reads back what went in. */
/* nytp_chunk_line_size is what the encoder writes after a text chunk's
 * tag (comments with and without their newline, empty ones), 0 for the
 * other kinds. */
static void line_size_is_what_the_encoder_writes(void **state)
{
    (void)state;
    const char *texts[] = {"", "\n", "a comment", "a comment\n"};
    uint8_t buf[256];
    for (size_t i = 0; i < 4; i++) {
        nytp_chunk c = {.tag = NYTP_TAG_COMMENT};
        c.u.comment.text = nytp_cstr(texts[i], false);
        size_t n = nytp_encode_chunk(buf, &c);
        assert_true(n > 0);
        assert_int_equal(nytp_chunk_line_size(&c), n - 1);
    }
    const char *vals[] = {"", "v", "a longer value"};
    for (int tag = 0; tag < 2; tag++) {
        for (size_t i = 0; i < 3; i++) {
            nytp_chunk c = {.tag = tag ? NYTP_TAG_OPTION : NYTP_TAG_ATTRIBUTE};
            c.u.kv.key = nytp_cstr("key", false);
            c.u.kv.value = nytp_cstr(vals[i], false);
            size_t n = nytp_encode_chunk(buf, &c);
            assert_true(n > 0);
            assert_int_equal(nytp_chunk_line_size(&c), n - 1);
        }
    }
    nytp_chunk t = {.tag = NYTP_TAG_TIME_LINE};
    assert_int_equal(nytp_chunk_line_size(&t), 0);
}

/* An inline encoder's n bytes in got (of size bytes, filled with 0xAA
 * before) against the wn bytes of want, made number by number: the same
 * bytes, nothing written past them, and one chunk that decodes whole;
 * returns that chunk. */
static nytp_chunk check_encoded(const uint8_t *got, size_t size, size_t n, const uint8_t *want,
                                size_t wn)
{
    assert_int_equal(n, wn);
    assert_memory_equal(got, want, n);
    for (size_t b = n; b < size; b++)
        assert_int_equal(got[b], 0xAA);
    nytp_chunk c;
    size_t used = 0;
    const char *why = NULL;
    assert_int_equal(nytp_decode_chunk(got, got + n, &c, &used, &why), NYTP_DECODE_OK);
    assert_int_equal(used, n);
    return c;
}

static void time_line_inline_every_width(void **state)
{
    (void)state;
    static const int32_t ticks[] = {0, 1, 0x7f, 0x80, 0x3fff, 0x4000, INT32_MAX, -1, INT32_MIN};
    static const uint32_t fids[] = {0, 1, 0x7f, 0x80, 0x3fff, 0x4000};
    static const uint32_t lines[] = {0,      1,        0x7f,     0x80,      0xff,
                                     0x100,  0x3fff,   0x4000,   0x1fffff,  0x200000,
                                     0xffff, 0x12345,  0xfffffff, 0xffffffff};
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++)
        for (size_t j = 0; j < sizeof fids / sizeof fids[0]; j++)
            for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++) {
                uint8_t want[NYTP_TIME_CHUNK_MAX], got[NYTP_TIME_CHUNK_MAX];
                memset(got, 0xAA, sizeof got);
                size_t wn = 0;
                want[wn++] = NYTP_TAG_TIME_LINE;
                wn += nytp_encode_u32(want + wn, (uint32_t)ticks[i]);
                wn += nytp_encode_u32(want + wn, fids[j]);
                wn += nytp_encode_u32(want + wn, lines[k]);
                size_t n = nytp_encode_time_line_inline(got, ticks[i], fids[j], lines[k]);
                nytp_chunk c = check_encoded(got, sizeof got, n, want, wn);
                assert_int_equal(c.tag, NYTP_TAG_TIME_LINE);
                assert_int_equal(c.u.time.ticks, ticks[i]);
                assert_int_equal(c.u.time.fid, fids[j]);
                assert_int_equal(c.u.time.line, lines[k]);
            }
}

static void negative_i32_is_five_bytes(void **state)
{
    (void)state;
    nytp_chunk c = {.tag = NYTP_TAG_TIME_LINE};
    c.u.time.ticks = -1;
    c.u.time.fid = 1;
    c.u.time.line = 2;
    uint8_t buf[64];
    size_t n = nytp_encode_chunk(buf, &c);
    const uint8_t want[] = {'+', 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02};
    assert_int_equal(n, sizeof want);
    assert_memory_equal(buf, want, n);
}

static void strings_empty_and_one_megabyte(void **state)
{
    (void)state;
    nytp_chunk c = {.tag = NYTP_TAG_SRC_LINE};
    c.u.src_line.fid = 1;
    c.u.src_line.line = 1;
    c.u.src_line.text = S("");
    roundtrip(&c);

    size_t big = 1024 * 1024;
    char *text = malloc(big);
    assert_non_null(text);
    for (size_t i = 0; i < big; i++)
        text[i] = (char)(i * 7 + 3); /* every byte value, newlines included */
    c.u.src_line.text = (nytp_str){text, (uint32_t)big, false};
    uint8_t *buf;
    size_t n = encode(&c, &buf);
    assert_int_equal(n, 1 + 1 + 1 + 1 + 3 + big); /* tag fid line strtag len(3: < 0x200000) bytes */
    nytp_chunk d;
    size_t used;
    const char *why;
    assert_int_equal(nytp_decode_chunk(buf, buf + n, &d, &used, &why), NYTP_DECODE_OK);
    assert_int_equal(d.u.src_line.text.len, big);
    assert_memory_equal(d.u.src_line.text.ptr, text, big);
    /* cut anywhere inside the string: need the whole chunk */
    assert_int_equal(nytp_decode_chunk(buf, buf + n - 1, &d, &used, &why), NYTP_DECODE_NEED_MORE);
    assert_int_equal(used, n);
    free(buf);
    free(text);
}

static void utf8_flag_is_kept(void **state)
{
    (void)state;
    nytp_chunk c = {.tag = NYTP_TAG_SUB_INFO};
    c.u.sub_info.name = nytp_cstr("main::gr\xc3\xbc\xc3\x9f" "e", true);
    uint8_t buf[128];
    size_t n = nytp_encode_chunk(buf, &c);
    assert_int_equal(buf[2], '"');
    nytp_chunk d;
    size_t used;
    const char *why;
    assert_int_equal(nytp_decode_chunk(buf, buf + n, &d, &used, &why), NYTP_DECODE_OK);
    assert_true(d.u.sub_info.name.utf8);
    c.u.sub_info.name.utf8 = false;
    n = nytp_encode_chunk(buf, &c);
    assert_int_equal(buf[2], '\'');
}

static void bad_bytes_are_reported(void **state)
{
    (void)state;
    nytp_chunk d;
    size_t used = 99;
    const char *why = NULL;
    const uint8_t bad_tag[] = {'Q', 1, 2};
    assert_int_equal(nytp_decode_chunk(bad_tag, bad_tag + 3, &d, &used, &why), NYTP_DECODE_BAD);
    assert_int_equal(used, 0);
    assert_ptr_equal(why, nytp_why_tag);

    /* SUB_INFO fid=1 then 'X' where the string tag belongs */
    const uint8_t bad_str[] = {'s', 1, 'X', 3, 'a', 'b', 'c', 1, 1};
    assert_int_equal(nytp_decode_chunk(bad_str, bad_str + sizeof bad_str, &d, &used, &why),
                     NYTP_DECODE_BAD);
    assert_int_equal(used, 2);
    assert_ptr_equal(why, nytp_why_string_tag);

    /* a string length of 0x7fffffff is over the limit: bad, not "need more" */
    const uint8_t huge[] = {'s', 1, '\'', 0xff, 0x7f, 0xff, 0xff, 0xff, 'a'};
    assert_int_equal(nytp_decode_chunk(huge, huge + sizeof huge, &d, &used, &why),
                     NYTP_DECODE_BAD);
    assert_int_equal(used, 2);
    assert_ptr_equal(why, nytp_why_string_length);
}

static void header_forms(void **state)
{
    (void)state;
    nytp_chunk c;
    size_t used;
    const char *why;
    const char *good = "NYTProf 5 0\n";
    assert_int_equal(nytp_decode_header((const uint8_t *)good, (const uint8_t *)good + 12, &c,
                                        &used, &why),
                     NYTP_DECODE_OK);
    assert_int_equal(used, 12);
    assert_int_equal(c.u.version.major, 5);
    const char *minor = "NYTProf 5 9\nrest";
    assert_int_equal(nytp_decode_header((const uint8_t *)minor, (const uint8_t *)minor + 16, &c,
                                        &used, &why),
                     NYTP_DECODE_OK);
    assert_int_equal(c.u.version.minor, 9);
    const char *bad = "NYTProX 5 0\n";
    assert_int_equal(nytp_decode_header((const uint8_t *)bad, (const uint8_t *)bad + 12, &c, &used,
                                        &why),
                     NYTP_DECODE_BAD);
    const char *garbage = "NYTProf five\n";
    assert_int_equal(nytp_decode_header((const uint8_t *)garbage, (const uint8_t *)garbage + 13,
                                        &c, &used, &why),
                     NYTP_DECODE_BAD);
    const char *cut = "NYTProf 5";
    assert_int_equal(nytp_decode_header((const uint8_t *)cut, (const uint8_t *)cut + 9, &c, &used,
                                        &why),
                     NYTP_DECODE_NEED_MORE);
}

static void text_lines(void **state)
{
    (void)state;
    nytp_chunk c;
    size_t used;
    const char *why;
    const char *noeq = ":novalue\n";
    assert_int_equal(nytp_decode_chunk((const uint8_t *)noeq, (const uint8_t *)noeq + 9, &c,
                                       &used, &why),
                     NYTP_DECODE_OK);
    assert_null(c.u.kv.value.ptr);
    const char *two = ":a=b=c\n";
    assert_int_equal(nytp_decode_chunk((const uint8_t *)two, (const uint8_t *)two + 7, &c, &used,
                                       &why),
                     NYTP_DECODE_OK);
    assert_int_equal(c.u.kv.key.len, 1);
    assert_int_equal(c.u.kv.value.len, 3); /* split at the first '=' */

    /* the encoder refuses what the decoder could not give back */
    uint8_t buf[128];
    nytp_chunk e = {.tag = NYTP_TAG_ATTRIBUTE};
    e.u.kv.key = S("k");
    e.u.kv.value = S("two\nlines");
    assert_int_equal(nytp_encode_chunk(buf, &e), 0);
    e.u.kv.key = S("a=b");
    e.u.kv.value = S("v");
    assert_int_equal(nytp_encode_chunk(buf, &e), 0);
    nytp_chunk cm = {.tag = NYTP_TAG_COMMENT};
    cm.u.comment.text = S("no newline at the end");
    size_t n = nytp_encode_chunk(buf, &cm);
    assert_int_equal(n, 1 + 21 + 1);
    assert_int_equal(buf[n - 1], '\n');
    cm.u.comment.text = S("two\nlines\n");
    assert_int_equal(nytp_encode_chunk(buf, &cm), 0);
}

static void tag_names(void **state)
{
    (void)state;
    assert_string_equal(nytp_tag_name(NYTP_TAG_SUB_CALLERS), "SUB_CALLERS");
    assert_null(nytp_tag_name('Q'));
    assert_int_equal(nytp_tag_from_name("TIME_BLOCK", 10), NYTP_TAG_TIME_BLOCK);
    assert_int_equal(nytp_tag_from_name("TIME", 4), 0);
}

/* SUB_RETURN as the profiler writes it: every width of depth and of the
 * name's length (the short path for both under 0x80, the general one
 * otherwise), names of every length from 0 to 300 bytes copied exactly,
 * nothing written past the chunk; against an encoding made number by
 * number, and decoded back. */
static void sub_return_inline_every_width(void **state)
{
    (void)state;
    static const uint32_t depths[] = {0, 1, 0x7f, 0x80, 0x3fff, 0x4000, UINT32_MAX};
    char name[305]; /* a name starts at one of its first 5 bytes */
    for (size_t i = 0; i < sizeof name; i++)
        name[i] = (char)('A' + (i * 7) % 53);
    for (size_t di = 0; di < sizeof depths / sizeof depths[0]; di++)
        for (uint32_t len = 0; len <= 300; len++)
            for (int utf8 = 0; utf8 < 2; utf8++) {
                const double incl = 12345.0 + len, excl = -0.25 * di;
                nytp_str nm = {name + (len % 5), len, utf8};
                uint8_t want[NYTP_SUB_RETURN_MAX(305)], got[NYTP_SUB_RETURN_MAX(305) + 8];
                size_t wn = 0;
                want[wn++] = NYTP_TAG_SUB_RETURN;
                wn += nytp_encode_u32(want + wn, depths[di]);
                memcpy(want + wn, &incl, 8);
                memcpy(want + wn + 8, &excl, 8);
                wn += 16;
                want[wn++] = utf8 ? NYTP_STR_UTF8 : NYTP_STR_BYTES;
                wn += nytp_encode_u32(want + wn, len);
                memcpy(want + wn, nm.ptr, len);
                wn += len;
                memset(got, 0xAA, sizeof got);
                size_t n = nytp_encode_sub_return_inline(got, depths[di], incl, excl, nm);
                nytp_chunk c = check_encoded(got, sizeof got, n, want, wn);
                assert_int_equal(c.tag, NYTP_TAG_SUB_RETURN);
                assert_int_equal(c.u.sub_return.depth, depths[di]);
                assert_true(c.u.sub_return.incl == incl && c.u.sub_return.excl == excl);
                assert_int_equal(c.u.sub_return.name.len, len);
                assert_int_equal(c.u.sub_return.name.utf8, utf8);
                if (len)
                    assert_memory_equal(c.u.sub_return.name.ptr, nm.ptr, len);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(u32_boundaries),
        cmocka_unit_test(u32_every_width_roundtrips),
        cmocka_unit_test(every_chunk_roundtrips),
        cmocka_unit_test(time_line_inline_every_width),
        cmocka_unit_test(sub_return_inline_every_width),
        cmocka_unit_test(line_size_is_what_the_encoder_writes),
        cmocka_unit_test(negative_i32_is_five_bytes),
        cmocka_unit_test(strings_empty_and_one_megabyte),
        cmocka_unit_test(utf8_flag_is_kept),
        cmocka_unit_test(bad_bytes_are_reported),
        cmocka_unit_test(header_forms),
        cmocka_unit_test(text_lines),
        cmocka_unit_test(tag_names),
    };
    return cmocka_run_group_tests_name("codec", tests, NULL, NULL);
}

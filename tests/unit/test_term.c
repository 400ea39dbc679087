/* test_term.c — the terminal tables of 'nytp top' and 'nytp diff'
 * (cmd/common/term.c and cmd/common/fmt.c, compiled in here: the command's helpers are
 * not in the library): escaping, cutting to a width, shares. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#include "../../cmd/common/fmt.c"
#include "../../cmd/common/term.c"

/* Every byte pair comes out printable: no C0, DEL or C1 control, valid
 * UTF-8, and the column count is the number of characters. */
static void clean_is_printable(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++) {
            char in[3] = {(char)a, (char)b, 'x'};
            char out[8 * sizeof in + 1];
            size_t cols;
            size_t n = term_clean(in, sizeof in, a == '\t', out, &cols);
            assert_true(n <= (a == '\t' ? 8 : 4) * sizeof in);
            size_t chars = 0;
            for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char)out[i];
                uint32_t cp;
                size_t l = fmt_utf8_decode((const unsigned char *)out + i, n - i, &cp);
                assert_true(l > 0);
                assert_false(cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0));
                (void)c;
                i += l;
                chars++;
            }
            assert_int_equal(chars, cols);
        }
}

/* The one UTF-8 check of the commands (fmt_utf8_decode, used by term,
 * fmt's JSON, flame_svg and cachegrind): malformed, overlong, surrogate,
 * too large and cut-short sequences are refused, and what term_clean
 * makes of them (each byte as its Latin-1 character). */
static void utf8_decode_cases(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t n, len;
        uint32_t cp;
    } cases[] = {
        {"A", 1, 1, 0x41},
        {"\xc3\xa9", 2, 2, 0xE9},
        {"\xe2\x82\xac", 3, 3, 0x20AC},
        {"\xf0\x9f\x98\x80", 4, 4, 0x1F600},
        {"\xef\xbf\xbf", 3, 3, 0xFFFF},       /* a noncharacter is UTF-8 (flame_svg refuses it) */
        {"\xf4\x8f\xbf\xbf", 4, 4, 0x10FFFF},
        {"\xc0\x80", 2, 0, 0},                /* overlong NUL */
        {"\xc1\xbf", 2, 0, 0},                /* overlong */
        {"\xe0\x80\xaf", 3, 0, 0},            /* overlong '/' */
        {"\xf0\x8f\xbf\xbf", 4, 0, 0},        /* overlong U+FFFF */
        {"\xed\xa0\x80", 3, 0, 0},            /* surrogate D800 */
        {"\xed\xbf\xbf", 3, 0, 0},            /* surrogate DFFF */
        {"\xf4\x90\x80\x80", 4, 0, 0},        /* U+110000 */
        {"\xf5\x80\x80\x80", 4, 0, 0},
        {"\x80", 1, 0, 0},                     /* a lone continuation byte */
        {"\xc3", 1, 0, 0},                     /* cut short */
        {"\xe2\x82", 2, 0, 0},
        {"\xc3" "A", 2, 0, 0},                /* not a continuation */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t cp = 0;
        size_t len = fmt_utf8_decode((const unsigned char *)cases[i].in, cases[i].n, &cp);
        assert_int_equal(len, cases[i].len);
        assert_int_equal(fmt_utf8_seq((const unsigned char *)cases[i].in, cases[i].n), cases[i].len);
        if (len)
            assert_int_equal(cp, cases[i].cp);
    }
    char out[64];
    size_t cols;
    /* a surrogate: each byte its Latin-1 character, the C1 control 0x80 escaped */
    term_clean("\xed\xa0\x80", 3, false, out, &cols);
    assert_string_equal(out, "\xc3\xad\xc2\xa0\\x80");
    assert_int_equal(cols, 6);
    term_clean("\xc0\xaf", 2, false, out, &cols);
    assert_string_equal(out, "\xc3\x80\xc2\xaf");
    assert_int_equal(cols, 2);
}

static void clean_examples(void **state)
{
    (void)state;
    char out[64];
    size_t cols;
    term_clean("a\x1b[31mb", 7, false, out, &cols);
    assert_string_equal(out, "a\\x1B[31mb");
    assert_int_equal(cols, 10);
    term_clean("caf\xc3\xa9 \xe9", 7, false, out, &cols); /* UTF-8 kept, a stray byte as Latin-1 */
    assert_string_equal(out, "caf\xc3\xa9 \xc3\xa9");
    assert_int_equal(cols, 6);
    term_clean("\xc2\x85|\x85", 4, false, out, &cols); /* C1 control, as UTF-8 and as a byte */
    assert_string_equal(out, "\\x85|\\x85");
    term_clean("ab\tc\t", 5, true, out, &cols);
    assert_string_equal(out, "ab      c       ");
    assert_int_equal(cols, 16);
    term_clean("a\tb", 3, false, out, &cols);
    assert_string_equal(out, "a\\x09b");
}

static char *collect(void (*fn)(nytp_out *, void *), void *ctx, size_t *len)
{
    nytp_out *o;
    nytp_error e = {0};
    assert_int_equal(nytp_out_open_mem(&o, &e), NYTP_OK);
    fn(o, ctx);
    uint8_t *data = NULL;
    assert_int_equal(nytp_out_close_mem(o, &data, len, &e), NYTP_OK);
    char *s = malloc(*len + 1);
    memcpy(s, data, *len);
    s[*len] = 0;
    free(data);
    return s;
}

struct put_case {
    const char *text;
    size_t cols;
    enum term_align how;
};

static void do_put(nytp_out *o, void *ctx)
{
    struct put_case *c = ctx;
    size_t len = strlen(c->text), w = 0;
    for (size_t i = 0; i < len; i++)
        w += ((unsigned char)c->text[i] & 0xC0) != 0x80;
    term_put(o, c->text, len, w, c->cols, c->how);
}

static void put_cuts_and_pads(void **state)
{
    (void)state;
    static const struct {
        struct put_case c;
        const char *want;
    } cases[] = {
        {{"main::fib", 12, TERM_LEFT}, "main::fib   "},
        {{"main::fib", 12, TERM_RIGHT}, "   main::fib"},
        {{"main::fibonacci", 8, TERM_LEFT}, "main::.."},
        {{"/usr/lib/x/demo.pl:21", 12, TERM_KEEP_END}, "..demo.pl:21"},
        {{"d\xc3\xa9j\xc3\xa0 vu", 5, TERM_LEFT}, "d\xc3\xa9j.."}, /* characters, not bytes */
        {{"abc", 0, TERM_LEFT}, "abc"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        struct put_case c = cases[i].c;
        char *got = collect(do_put, &c, &len);
        assert_string_equal(got, cases[i].want);
        free(got);
    }
}

struct fit_case {
    term t;
    const char *text;
};

static void do_fit(nytp_out *o, void *ctx)
{
    struct fit_case *c = ctx;
    term_write_fitted(&c->t, o, c->text, strlen(c->text));
}

/* Lines are cut at the width; colour sequences take no columns, and a
 * cut inside a coloured stretch ends with a reset. */
static void fitted_lines(void **state)
{
    (void)state;
    struct fit_case c = {{10, true}, "0123456789abc\n\033[31m0123456789x\033[0m\nshort\n\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5"};
    size_t len;
    char *got = collect(do_fit, &c, &len);
    assert_string_equal(got, "0123456789\n\033[31m0123456789\033[0m\nshort\n"
                             "\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5");
    free(got);
    struct fit_case wide = {{0, false}, "no limit at all, as it is"};
    got = collect(do_fit, &wide, &len);
    assert_string_equal(got, wide.text);
    free(got);
}

/* Shares of any size fit their 32 bytes (a corrupt profile's times). */
static void shares(void **state)
{
    (void)state;
    static const struct {
        double pct;
        bool sign;
        const char *want;
    } cases[] = {
        {12.34, false, "12.3%"}, {12.34, true, "+12.3%"}, {-5.04, true, "-5.0%"},
        {0, true, "0%"},         {100, false, "100%"},    {20310.4, true, "+20310%"},
        {1e300, true, "+1e+300%"}, {-1e300, true, "-1e+300%"}, {NAN, true, "-"},
        {INFINITY, true, "-"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char b[32];
        *term_pct(b, cases[i].pct, cases[i].sign) = 0;
        assert_string_equal(b, cases[i].want);
    }
    char d[40];
    *term_dur(d, 2.5e-3, true) = 0;
    assert_string_equal(d, "+2.50ms");
    *term_dur(d, -2.5e-3, true) = 0;
    assert_string_equal(d, "-2.50ms");
}


/* Names cut for a column stay apart and keep the sub's own name. */
static size_t utf8_cols(const char *s)
{
    size_t c = 0;
    for (; *s; s++)
        c += ((unsigned char)*s & 0xC0) != 0x80;
    return c;
}

static char **fit(const char *const *names, size_t n, size_t cols, size_t *w)
{
    size_t lens[16];
    for (size_t i = 0; i < n; i++)
        lens[i] = strlen(names[i]);
    char **out = term_fit_names((char *const *)names, lens, n, cols, w);
    assert_non_null(out);
    return out;
}

static void fit_names_examples(void **state)
{
    (void)state;
    size_t w[16];
    const char *a[] = {"Perl::Tidy::Tokenizer::tokenize_this_line",
                       "Perl::Tidy::Tokenizer::tokenizer_main_loop", "main::short"};
    char **o = fit(a, 3, 34, w);
    assert_string_equal(o[0], "Perl::Tidy::\xE2\x80\xA6::tokenize_this_line");
    assert_string_equal(o[1], "Perl::Tidy::\xE2\x80\xA6::tokenizer_main_loop");
    assert_string_equal(o[2], "main::short");
    assert_int_equal(w[0], utf8_cols(o[0]));
    assert_true(w[0] <= 34 && w[1] <= 34);
    term_free_names(o, 3);
    /* the same own name in two packages: the end shows which */
    const char *b[] = {"Perl::Tidy::Tokenizer::tokenize_this_line",
                       "Perl::Tidy::Formatter::tokenize_this_line"};
    o = fit(b, 2, 30, w);
    assert_string_not_equal(o[0], o[1]);
    assert_true(w[0] <= 30 && w[1] <= 30);
    assert_non_null(strstr(o[0], "tokenize_this_line"));
    term_free_names(o, 2);
    /* the same own name, packages that differ in the middle: the window
     * on the difference, the own name kept */
    const char *d[] = {"Perl::Tidy::Tokenizer::Very::Long::Package::tokenize_this_line",
                       "Perl::Tidy::Formatter::Very::Long::Package::tokenize_this_line",
                       "Perl::Tidy::Tokenizer::Very::Long::Package::tokenizer_main_loop"};
    o = fit(d, 3, 28, w);
    assert_string_equal(o[0], "\xE2\x80\xA6" "Tokeni\xE2\x80\xA6::tokenize_this_line");
    assert_string_equal(o[1], "\xE2\x80\xA6" "Format\xE2\x80\xA6::tokenize_this_line");
    assert_string_equal(o[2], "Perl::\xE2\x80\xA6::tokenizer_main_loop");
    term_free_names(o, 3);
    /* anonymous subs of long paths that differ in the middle */
    const char *c[] = {"M::__ANON__[/very/long/path/to/the/ws-1/lib/M.pm:4]",
                       "M::__ANON__[/very/long/path/to/the/ws-2/lib/M.pm:4]",
                       "M::__ANON__[/very/long/path/to/the/ws-3/lib/M.pm:4]"};
    o = fit(c, 3, 20, w);
    assert_string_not_equal(o[0], o[1]);
    assert_string_not_equal(o[1], o[2]);
    assert_string_not_equal(o[0], o[2]);
    for (int i = 0; i < 3; i++)
        assert_true(w[i] <= 20);
    term_free_names(o, 3);
    /* no limit, or room enough: as they are */
    o = fit(a, 3, 0, w);
    for (int i = 0; i < 3; i++)
        assert_string_equal(o[i], a[i]);
    term_free_names(o, 3);
}

/* Random names of a few parts: never two alike, never wider than the
 * column (but for equal names, which are numbered). */
static void fit_names_random(void **state)
{
    (void)state;
    static const char *parts[] = {"A", "Bb", "Ccc", "Tokenizer", "Formatter", "x", "::", "[", "]",
                                  "/lib/", "\xC3\xA9", ":12", "__ANON__"};
    srand(7);
    for (int round = 0; round < 300; round++) {
        size_t n = 2 + (size_t)rand() % 14;
        char buf[16][200];
        const char *names[16];
        size_t lens[16];
        for (size_t i = 0; i < n; i++) {
            size_t k = 0, parts_n = 1 + (size_t)rand() % 14;
            for (size_t j = 0; j < parts_n; j++) {
                const char *p = parts[rand() % (int)(sizeof parts / sizeof parts[0])];
                memcpy(buf[i] + k, p, strlen(p));
                k += strlen(p);
            }
            buf[i][k] = 0;
            names[i] = buf[i];
            lens[i] = k;
        }
        /* distinct inputs, as a table's names are */
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            bool dup = false;
            for (size_t j = 0; j < m; j++)
                dup = dup || strcmp(names[i], names[j]) == 0;
            if (!dup) {
                names[m] = names[i];
                lens[m++] = lens[i];
            }
        }
        size_t cols = 8 + (size_t)rand() % 30, w[16];
        char **o = term_fit_names((char *const *)names, lens, m, cols, w);
        assert_non_null(o);
        for (size_t i = 0; i < m; i++) {
            assert_int_equal(w[i], utf8_cols(o[i]));
            assert_true(w[i] <= cols || strstr(o[i], " #"));
            for (size_t j = 0; j < i; j++)
                assert_string_not_equal(o[i], o[j]);
        }
        term_free_names(o, m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clean_is_printable),
        cmocka_unit_test(clean_examples),
        cmocka_unit_test(utf8_decode_cases),
        cmocka_unit_test(put_cuts_and_pads),
        cmocka_unit_test(fitted_lines),
        cmocka_unit_test(shares),
        cmocka_unit_test(fit_names_examples),
        cmocka_unit_test(fit_names_random),
    };
    return cmocka_run_group_tests_name("term", tests, NULL, NULL);
}

/* test_fmt_html.c — the escaping and duration formats of the HTML report
 * (cmd/common/fmt.c, compiled in here: the command's helpers are not in the
 * library). */
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#include "../../cmd/common/fmt.c"

/* Is s[0..n) valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF)? */
static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = fmt_utf8_seq(s + i, n - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

/* The output is valid UTF-8 and holds nothing that could end text or an
 * attribute, or start a tag: no < > " ', and & only as an entity. */
static void check_safe(const char *in, size_t n)
{
    char *out = malloc(6 * n + 1);
    assert_non_null(out);
    size_t len = (size_t)(fmt_html_str(out, in, n) - out);
    assert_true(len <= 6 * n);
    assert_true(valid_utf8((const unsigned char *)out, len));
    for (size_t i = 0; i < len; i++) {
        assert_true(out[i] != '<' && out[i] != '>' && out[i] != '"' && out[i] != '\'');
        assert_true((unsigned char)out[i] >= 0x20 || out[i] == '\t');
        if (out[i] == '&')
            assert_true(strncmp(out + i, "&amp;", 5) == 0 || strncmp(out + i, "&lt;", 4) == 0 ||
                        strncmp(out + i, "&gt;", 4) == 0 || strncmp(out + i, "&quot;", 6) == 0 ||
                        strncmp(out + i, "&#39;", 5) == 0);
    }
    free(out);
}

static void every_byte_pair_is_safe(void **state)
{
    (void)state;
    char two[2];
    for (int a = 0; a < 256; a++)
        for (int b = 0; b < 256; b++) {
            two[0] = (char)a;
            two[1] = (char)b;
            check_safe(two, 2);
        }
    /* sequences cut short, overlong, surrogates, beyond U+10FFFF */
    const char *odd[] = {"\xe2\x82", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x9f\x98"};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        check_safe(odd[i], strlen(odd[i]));
}

static void escapes_and_passes_through(void **state)
{
    (void)state;
    char out[256];
    const char *in = "</script><script>alert(1)</script> & \"q\" 'a'";
    *fmt_html_str(out, in, strlen(in)) = 0;
    assert_string_equal(out, "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot; &#39;a&#39;");
    /* valid UTF-8 unchanged; a stray Latin-1 byte becomes its character */
    in = "\xce\xa9 caf\xe9";
    *fmt_html_str(out, in, strlen(in)) = 0;
    assert_string_equal(out, "\xce\xa9 caf\xc3\xa9");
    /* control bytes become visible pictures: NUL, CR, DEL; TAB stays */
    static const char ctl[] = {0, '\r', 0x7f, '\t'};
    *fmt_html_str(out, ctl, sizeof ctl) = 0;
    assert_string_equal(out, "\xe2\x90\x80\xe2\x90\x8d\xe2\x90\xa1\t");
}

/* As Devel::NYTProf::Util::fmt_time shows them (values checked against it):
 * 3 significant digits, ns/µs/ms/s; e-notation only for absurd values. */
static void durations(void **state)
{
    (void)state;
    static const struct {
        double s;
        const char *want;
    } cases[] = {
        {0, "0s"},          {4e-7, "400ns"},      {1.4e-6, "1\xc2\xb5s"}, {6.619e-4, "662\xc2\xb5s"},
        {2.76e-3, "2.76ms"}, {0.0366, "36.6ms"},  {0.4712, "471ms"},     {4.86, "4.86s"},
        {20.2, "20.2s"},    {123.4, "123s"},      {-2.5e-6, "-2\xc2\xb5s"}, {9.6e95, "9.6e+95s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char b[40];
        *fmt_duration(b, cases[i].s) = 0;
        assert_string_equal(b, cases[i].want);
    }
}

/* The bar of the top row is full: 100.0 * x / x is 100.00000000000001 for
 * x = 0.1866861 (and about 6% of values), which dropped the top sub's bar
 * from the index (seen as a flaky tests/76-diff-gate.t). */
static void bars(void **state)
{
    (void)state;
    assert_true(100.0 * 0.1866861 / 0.1866861 > 100); /* the trap itself */
    assert_true(fmt_bar_pct(0.1866861, 0.1866861) == 100);
    unsigned seed = 1;
    for (int i = 0; i < 100000; i++) {
        seed = seed * 1103515245u + 12345u;
        double x = (double)(seed >> 1) / 2147483648.0 + 1e-9;
        assert_true(fmt_bar_pct(x, x) == 100);
        double h = fmt_bar_pct(x / 2, x);
        assert_true(h > 49.999 && h < 50.001);
    }
    assert_true(fmt_bar_pct(0, 1) == 0);
    assert_true(fmt_bar_pct(1, 0) == 0);
    assert_true(fmt_bar_pct(-1, 2) == 0);
    assert_true(fmt_bar_pct(3, 2) == 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_byte_pair_is_safe),
        cmocka_unit_test(escapes_and_passes_through),
        cmocka_unit_test(durations),
        cmocka_unit_test(bars),
    };
    return cmocka_run_group_tests_name("fmt_html", tests, NULL, NULL);
}

/* test_dprof.c — the tmon.out reader: both formats, goto and die records,
 * the header, and every error with its line number. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "nytp/dprof.h"

#define HEADER "#fOrTyTwO\n$hz=100;\n$XS_VERSION='DProf 20110802.00';\n" \
               "# All values are given in HZ\n"                               \
               "$over_utime=1; $over_stime=0; $over_rtime=2;\n"              \
               "$over_tests=10000;\n"                                         \
               "$rrun_utime=3; $rrun_stime=1; $rrun_rtime=7;\n"               \
               "$total_marks=12      \n\nPART2\n"

static int open_text(nytp_dprof **d, const char *text, unsigned flags, nytp_error *e)
{
    nytp_in *in;
    assert_int_equal(nytp_in_open_mem(&in, text, strlen(text), e), NYTP_OK);
    return nytp_dprof_open(d, in, flags, e);
}

/* All events of text, as one line each "K sub depth real", in out ("K
 * sub=named depth real" when the record books to another sub). */
static int events(const char *text, unsigned flags, char *out, size_t size, nytp_error *e)
{
    nytp_dprof *d;
    int st = open_text(&d, text, flags, e);
    if (st < 0)
        return st;
    nytp_dprof_event ev;
    size_t n = 0;
    out[0] = 0;
    while ((st = nytp_dprof_next(d, &ev, e)) == NYTP_OK) {
        static const char kinds[] = "?+-/*F";
        n += (size_t)snprintf(out + n, size - n, "%c%s%s%s%s%s %u %g;", kinds[ev.kind],
                              nytp_dprof_sub_name(d, ev.sub), ev.kind == NYTP_DPROF_GOTO ? "<" : "",
                              ev.kind == NYTP_DPROF_GOTO ? nytp_dprof_sub_name(d, ev.goto_from) : "",
                              ev.named != ev.sub ? "=" : "",
                              ev.named != ev.sub ? nytp_dprof_sub_name(d, ev.named) : "",
                              ev.depth, ev.real);
        assert_true(n < size);
    }
    nytp_dprof_close(d);
    return st;
}

static void header_values(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_dprof *d;
    assert_int_equal(open_text(&d, HEADER, 0, &e), NYTP_OK);
    const nytp_dprof_header *h = nytp_dprof_get_header(d);
    assert_true(h->have_hz);
    assert_true(h->hz == 100);
    assert_string_equal(h->xs_version, "DProf 20110802.00");
    assert_true(h->over_utime == 1 && h->over_stime == 0 && h->over_rtime == 2);
    assert_true(h->over_tests == 10000);
    assert_true(h->rrun_utime == 3 && h->rrun_stime == 1 && h->rrun_rtime == 7);
    assert_true(h->total_marks == 12);
    nytp_dprof_event ev;
    assert_int_equal(nytp_dprof_next(d, &ev, &e), NYTP_END);
    assert_int_equal(nytp_dprof_sub_count(d), 0);
    nytp_dprof_close(d);
}

static void new_format(void **state)
{
    (void)state;
    char out[1024];
    nytp_error e = {0};
    const char *t = HEADER "& 2 main outer\n+ 2\n& a Foo inner\n+ a\n@ 1 0 3\n- a\n"
                           "+ a\n+ a\n@ 0 0 2\n- a\n- a\n# a comment\n- 2\n";
    assert_int_equal(events(t, 0, out, sizeof out, &e), NYTP_END);
    assert_string_equal(out, "+main::outer 1 0;+Foo::inner 2 0;-Foo::inner 2 3;"
                             "+Foo::inner 2 3;+Foo::inner 3 3;-Foo::inner 3 5;-Foo::inner 2 5;"
                             "-main::outer 1 5;");
}

/* User and system clocks advance too; the line number comes with it. */
static void clocks_and_lines(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_dprof *d;
    nytp_dprof_event ev;
    assert_int_equal(open_text(&d, HEADER "& 1 main f\n+ 1\n@ 4 5 6\n@ 1 1 1\n- 1\n", 0, &e),
                     NYTP_OK);
    assert_int_equal(nytp_dprof_next(d, &ev, &e), NYTP_OK);
    assert_int_equal(ev.line, 12);
    assert_int_equal(nytp_dprof_next(d, &ev, &e), NYTP_OK);
    assert_int_equal(ev.kind, NYTP_DPROF_LEAVE);
    assert_true(ev.user == 5 && ev.sys == 6 && ev.real == 7);
    assert_int_equal(ev.line, 15);
    assert_int_equal(nytp_dprof_line(d), 15);
    nytp_dprof_close(d);
}

static void old_format(void **state)
{
    (void)state;
    char out[1024];
    nytp_error e = {0};
    const char *t = HEADER "+ 0 0 0 main::a\n+ 1 0 2 main::b\n- 3 0 4 main::b\n"
                           "+ 3 0 5 main::b\n- & main::b\n- 9 1 11 main::a\n";
    assert_int_equal(events(t, 0, out, sizeof out, &e), NYTP_END);
    assert_string_equal(out, "+main::a 1 0;+main::b 2 2;-main::b 2 4;+main::b 2 5;-main::b 2 5;"
                             "-main::a 1 11;");
    /* An old-format '/' books to the sub it names, as dprofpp reads it. */
    t = HEADER "+ 0 0 0 main::a\n+ 1 0 2 main::b\n/ 2 0 3 main::a\n- 3 0 4 main::a\n";
    assert_int_equal(events(t, 0, out, sizeof out, &e), NYTP_END);
    assert_string_equal(out, "+main::a 1 0;+main::b 2 2;/main::b=main::a 2 3;-main::a 1 4;");
}

/* '*' replaces the running sub; the '-' after it may name the sub that
 * did the goto.  '/' leaves whatever runs. */
static void goto_and_die(void **state)
{
    (void)state;
    char out[1024];
    nytp_error e = {0};
    const char *t = HEADER "& 1 main j\n& 2 main t\n& 3 main x\n+ 1\n@ 0 0 1\n* 2\n@ 0 0 1\n- 1\n"
                           "+ 3\n+ 1\n* 2\n/ 2\n/ 3\n+ 1\n* 2\n- 2\n";
    assert_int_equal(events(t, 0, out, sizeof out, &e), NYTP_END);
    assert_string_equal(out, "+main::j 1 0;*main::t<main::j 1 1;-main::t=main::j 1 2;"
                             "+main::x 1 2;+main::j 2 2;*main::t<main::j 2 2;/main::t 2 2;"
                             "/main::x 1 2;+main::j 1 2;*main::t<main::j 1 2;-main::t 1 2;");
}

/* Ids are names of subs, not numbers; two ids of one name are one sub. */
static void ids_and_names(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_dprof *d;
    nytp_dprof_event ev;
    assert_int_equal(open_text(&d, HEADER "& 1f main __ANON__\n& 20 main __ANON__\n+ 1f\n- 1f\n+ 20\n- 20\n",
                               0, &e),
                     NYTP_OK);
    int n = 0;
    while (nytp_dprof_next(d, &ev, &e) == NYTP_OK) {
        assert_int_equal(ev.sub, 0);
        n++;
    }
    assert_int_equal(n, 4);
    assert_int_equal(nytp_dprof_sub_count(d), 1);
    assert_string_equal(nytp_dprof_sub_name(d, 0), "main::__ANON__");
    assert_null(nytp_dprof_sub_name(d, 1));
    nytp_dprof_close(d);
}

/* A later PART line ends the records, as in dprofpp. */
static void part_line_ends(void **state)
{
    (void)state;
    char out[256];
    nytp_error e = {0};
    assert_int_equal(events(HEADER "& 1 main f\n+ 1\n- 1\nPART3\ngarbage\n", 0, out, sizeof out, &e),
                     NYTP_END);
    assert_string_equal(out, "+main::f 1 0;-main::f 1 0;");
}

static void fake_exits(void **state)
{
    (void)state;
    char out[256];
    nytp_error e = {0};
    const char *t = HEADER "& 1 main a\n& 2 main b\n+ 1\n+ 2\n@ 0 0 3\n";
    assert_int_equal(events(t, NYTP_DPROF_FAKE_EXITS, out, sizeof out, &e), NYTP_END);
    assert_string_equal(out, "+main::a 1 0;+main::b 2 0;Fmain::b 2 3;Fmain::a 1 3;");
    assert_int_equal(events(t, 0, out, sizeof out, &e), NYTP_E_TRUNCATED);
    assert_non_null(strstr(e.msg, "line 15: "));
    assert_non_null(strstr(e.msg, "2 subs still running (main::b and its callers)"));
}

/* A killed run's last line, cut anywhere: an error, except with fake
 * exits, where the records before it are the profile and the cut line is
 * named. */
static void fake_exits_leave_out_a_cut_line(void **state)
{
    (void)state;
    char out[256], out2[256];
    nytp_error e = {0};
    const char *whole = HEADER "& 1 main a\n& 2 main b\n+ 1\n+ 2\n@ 0 0 3\n";
    const char *cut = HEADER "& 1 main a\n& 2 main b\n+ 1\n+ 2\n@ 0 0 3\n- 2 @ 0 0";
    assert_int_equal(events(cut, 0, out, sizeof out, &e), NYTP_E_TRUNCATED);
    assert_non_null(strstr(e.msg, "line 16: the file ends in the middle of a line"));
    assert_int_equal(events(cut, NYTP_DPROF_FAKE_EXITS, out, sizeof out, &e), NYTP_END);
    assert_int_equal(events(whole, NYTP_DPROF_FAKE_EXITS, out2, sizeof out2, &e), NYTP_END);
    assert_string_equal(out, out2);
    nytp_dprof *d;
    assert_int_equal(open_text(&d, cut, NYTP_DPROF_FAKE_EXITS, &e), NYTP_OK);
    nytp_dprof_event ev;
    int st;
    while ((st = nytp_dprof_next(d, &ev, &e)) == NYTP_OK)
        ;
    assert_int_equal(st, NYTP_END);
    assert_int_equal(nytp_dprof_cut_line(d), 16);
    nytp_dprof_close(d);
    assert_int_equal(open_text(&d, whole, NYTP_DPROF_FAKE_EXITS, &e), NYTP_OK);
    while ((st = nytp_dprof_next(d, &ev, &e)) == NYTP_OK)
        ;
    assert_int_equal(nytp_dprof_cut_line(d), 0);
    nytp_dprof_close(d);
}

/* Errors while opening: (text, status, line, words in the message). */
static void open_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int status;
        uint64_t line;
        const char *words;
    } cases[] = {
        {"", NYTP_E_FORMAT, 1, "empty file"},
        {"#fOrTyTwO", NYTP_E_FORMAT, 1, "magic"},
        {"NYTProf 5 0\n", NYTP_E_FORMAT, 1, "an NYTProf profile already"},
        {"\x1f\x8b\x08\x08", NYTP_E_FORMAT, 1, "gzip file: gunzip it first"},
        {"#fOrTyTwO\n$hz=100;\n", NYTP_E_TRUNCATED, 2, "before the PART2 line"},
        {"#fOrTyTwO\n$hz=100;\n$over_rtime", NYTP_E_TRUNCATED, 3, "middle of a line"},
        {"#fOrTyTwO\n$XS_VERSION='x';\nPART2\n", NYTP_E_FORMAT, 3, "$hz"},
        {"#fOrTyTwO\n$hz=0;\nPART2\n", NYTP_E_FORMAT, 3, "$hz"},
        {"#fOrTyTwO\n$hz=100;\nprint 1;\nPART2\n", NYTP_E_FORMAT, 3, "header line"},
        {"#fOrTyTwO\n$hz=;\nPART2\n", NYTP_E_FORMAT, 2, "no value"},
        {"#fOrTyTwO\n$hz=100; $XS_VERSION='abc\nPART2\n", NYTP_E_FORMAT, 2, "unterminated"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nytp_error e = {0};
        nytp_dprof *d = (nytp_dprof *)1;
        int st = open_text(&d, cases[i].text, 0, &e);
        if (st != cases[i].status || e.chunk != cases[i].line || !strstr(e.msg, cases[i].words))
            fail_msg("case %zu: status %d line %llu: %s", i, st, (unsigned long long)e.chunk, e.msg);
        assert_null(d);
        char prefix[32];
        snprintf(prefix, sizeof prefix, "line %llu: ", (unsigned long long)cases[i].line);
        assert_memory_equal(e.msg, prefix, strlen(prefix));
    }
}

/* Errors in the records; the header has 10 lines, so the first record
 * is line 11. */
static void record_errors(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        int status;
        uint64_t line;
        const char *words;
    } cases[] = {
        {"& 1 main f\n+ 1\n? 1\n", NYTP_E_FORMAT, 13, "unknown record '?'"},
        {"& 1 main f\n++ 1\n", NYTP_E_FORMAT, 12, "unknown record '++'"},
        {"& 1 main f\n\n", NYTP_E_FORMAT, 12, "empty line"},
        {"& 1 main f\n+ 1\n- 1\n- 1\n", NYTP_E_FORMAT, 14, "no sub is running"},
        {"& 1 main f\n* 1\n", NYTP_E_FORMAT, 12, "no sub is running"},
        {"& 1 main f\n/ 1\n", NYTP_E_FORMAT, 12, "no sub is running"},
        {"& 1 main f\n& 2 main g\n+ 1\n- 2\n", NYTP_E_FORMAT, 14, "leaves main::g, but main::f is running"},
        {"& 1 main f\n+ 2\n", NYTP_E_FORMAT, 12, "sub id '2' was not declared"},
        {"& 1 main f\n+ 1\n- 1", NYTP_E_TRUNCATED, 13, "middle of a line"},
        {"& 1 main f\n+ 1\n", NYTP_E_TRUNCATED, 12, "still running (main::f)"},
        {"& 1 main\n", NYTP_E_FORMAT, 11, "needs an id, a package and a name"},
        {"@ 1 2\n", NYTP_E_FORMAT, 11, "three tick counts"},
        {"@ 1 2 x\n", NYTP_E_FORMAT, 11, "three tick counts"},
        {"+ 1 2\n", NYTP_E_FORMAT, 11, "needs a sub id"},
        {"+ 1 x 3 main::f\n", NYTP_E_FORMAT, 11, "bad times"},
        {"+ 1 2 3 4 5 6 7 8 9\n", NYTP_E_FORMAT, 11, "too many fields"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        char out[1024];
        snprintf(text, sizeof text, "%s%s", HEADER, cases[i].body);
        nytp_error e = {0};
        int st = events(text, 0, out, sizeof out, &e);
        if (st != cases[i].status || e.chunk != cases[i].line || !strstr(e.msg, cases[i].words))
            fail_msg("case %zu: status %d line %llu: %s", i, st, (unsigned long long)e.chunk, e.msg);
    }
}

/* The committed profiles DProf wrote read to the end, balanced. */
static void real_files(void **state)
{
    (void)state;
    const char *names[] = {"dprof/recursion.tmon", "dprof/die.tmon", "dprof/goto.tmon",
                           "dprof/many.tmon", "dprof/old-format.tmon"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        nytp_error e = {0};
        nytp_in *in;
        nytp_dprof *d;
        assert_int_equal(nytp_in_open_file(&in, td_path(names[i]), &e), NYTP_OK);
        assert_int_equal(nytp_dprof_open(&d, in, 0, &e), NYTP_OK);
        nytp_dprof_event ev;
        int st;
        int64_t depth = 0, enters = 0;
        while ((st = nytp_dprof_next(d, &ev, &e)) == NYTP_OK) {
            if (ev.kind == NYTP_DPROF_ENTER) {
                depth++;
                enters++;
                assert_int_equal(ev.depth, depth);
            } else if (ev.kind != NYTP_DPROF_GOTO) {
                assert_int_equal(ev.depth, depth);
                depth--;
            }
        }
        if (st != NYTP_END)
            fail_msg("%s: %s", names[i], e.msg);
        assert_int_equal(depth, 0);
        assert_true(enters > 0);
        nytp_dprof_close(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_values),  cmocka_unit_test(new_format),
        cmocka_unit_test(clocks_and_lines), cmocka_unit_test(old_format),
        cmocka_unit_test(goto_and_die),   cmocka_unit_test(ids_and_names),
        cmocka_unit_test(part_line_ends), cmocka_unit_test(fake_exits),
        cmocka_unit_test(fake_exits_leave_out_a_cut_line),
        cmocka_unit_test(open_errors),    cmocka_unit_test(record_errors),
        cmocka_unit_test(real_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

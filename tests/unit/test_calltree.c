/* test_calltree.c — the call tree rebuilt from SUB_RETURN streams written
 * by hand with the writer: merging, the depth rules of nytprofcalls, eval
 * name normalisation, truncation, deep and long streams. */
#include <stdio.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "nytp/calltree.h"
#include "nytp/writer.h"

/* ---- streams ---------------------------------------------------------------- */

typedef struct ret {
    uint32_t depth;
    double incl, excl;
    const char *name;
} ret;

/* A profile holding these returns (no compression, so it can be cut
 * anywhere); malloc'd bytes. */
static uint8_t *make_stream(const ret *r, size_t n, size_t *len)
{
    nytp_out *o;
    nytp_writer *w;
    nytp_error e = {0};
    assert_int_equal(nytp_out_open_mem(&o, &e), NYTP_OK);
    assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
    assert_int_equal(nytp_write_header(w, 5, 0), NYTP_OK);
    assert_int_equal(nytp_write_attribute(w, "ticks_per_sec", "1000"), NYTP_OK);
    assert_int_equal(nytp_write_pid_start(w, 42, 1, 1.5), NYTP_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(nytp_write_sub_return(w, r[i].depth, r[i].incl, r[i].excl,
                                               nytp_cstr(r[i].name, false)),
                         NYTP_OK);
    assert_int_equal(nytp_write_pid_end(w, 42, 2.5), NYTP_OK);
    assert_int_equal(nytp_out_flush(o), NYTP_OK);
    uint8_t *data;
    /* the writer owns o: take the bytes, then drop the writer */
    const uint8_t *d = nytp_out_mem_data(o, len);
    data = malloc(*len);
    assert_non_null(data);
    memcpy(data, d, *len);
    nytp_writer_abort(w);
    return data;
}

static int read_into(nytp_calltree *t, const uint8_t *data, size_t len, nytp_error *e)
{
    nytp_reader *r;
    assert_int_equal(nytp_reader_open_mem(&r, data, len, e), NYTP_OK);
    int st = nytp_calltree_read(t, r, e);
    nytp_reader_close(r);
    return st;
}

/* Every node as "a;b excl=E incl=I calls=C total=T\n", sorted walk. */
typedef struct text {
    char *s;
    size_t len, cap;
    uint64_t visits;
    uint32_t deepest;
} text;

static int collect(void *ctx, const nytp_calltree_visit *v)
{
    text *t = ctx;
    t->visits++;
    if (v->depth > t->deepest)
        t->deepest = v->depth;
    if (t->cap - t->len < 4096) {
        t->cap = t->cap * 2 + 8192;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    if (t->len > (1u << 20))
        return 0; /* huge trees: count only */
    for (uint32_t i = 0; i < v->depth; i++) {
        int n = snprintf(t->s + t->len, t->cap - t->len, "%s%.*s", i ? ";" : "",
                         (int)v->path[i].len, v->path[i].ptr);
        t->len += (size_t)n;
        if (t->cap - t->len < 4096) {
            t->cap *= 2;
            t->s = realloc(t->s, t->cap);
            assert_non_null(t->s);
        }
    }
    t->len += (size_t)snprintf(t->s + t->len, t->cap - t->len,
                               " excl=%g incl=%g calls=%llu total=%g\n", v->excl, v->incl,
                               (unsigned long long)v->calls, v->total_excl);
    return 0;
}

static char *tree_text(const nytp_calltree *t)
{
    text x = {0};
    x.s = malloc(1);
    x.s[0] = 0;
    assert_int_equal(nytp_calltree_walk(t, NYTP_CALLTREE_SORTED, collect, &x), 0);
    return x.s;
}

static void check_stream(const ret *r, size_t n, const char *want)
{
    size_t len;
    uint8_t *data = make_stream(r, n, &len);
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    assert_int_equal(read_into(t, data, len, &e), NYTP_OK);
    char *got = tree_text(t);
    assert_string_equal(got, want);
    free(got);
    nytp_calltree_free(t);
    free(data);
}

/* ---- tests ------------------------------------------------------------------ */

/* main -> A -> B (twice); main -> C -> A -> B.  Values by hand. */
static void builds_paths_from_returns(void **state)
{
    (void)state;
    static const ret r[] = {
        {2, 5, 5, "main::B"}, {2, 3, 3, "main::B"}, {1, 20, 12, "main::A"},
        {3, 1, 1, "main::B"}, {2, 3, 2, "main::A"}, {1, 7, 4, "main::C"},
    };
    check_stream(r, 6,
                 "main::A excl=12 incl=20 calls=1 total=20\n"
                 "main::A;main::B excl=8 incl=8 calls=2 total=8\n"
                 "main::C excl=4 incl=7 calls=1 total=7\n"
                 "main::C;main::A excl=2 incl=3 calls=1 total=3\n"
                 "main::C;main::A;main::B excl=1 incl=1 calls=1 total=1\n");
}

/* The second call of A has a different subtree: merged into the first. */
static void merges_repeated_calls(void **state)
{
    (void)state;
    static const ret r[] = {
        {2, 1, 1, "B"}, {1, 3, 2, "A"}, {3, 4, 4, "D"}, {2, 7, 3, "B"},
        {2, 5, 5, "E"}, {1, 18, 6, "A"},
    };
    check_stream(r, 6,
                 "A excl=8 incl=21 calls=2 total=21\n"
                 "A;B excl=4 incl=8 calls=2 total=8\n"
                 "A;B;D excl=4 incl=4 calls=1 total=4\n"
                 "A;E excl=5 incl=5 calls=1 total=5\n");
}

/* nytprofcalls' rules at odd depths: a depth past the stack opens unnamed
 * frames; a depth above the top still closes the top frame; depth 0 is a
 * call from the main program; frames left open end up "(unreturned)". */
static void depth_rules_of_nytprofcalls(void **state)
{
    (void)state;
    static const ret r[] = {{3, 1, 1, "Z"}, {1, 2, 2, "X"}};
    check_stream(r, 2,
                 "(unreturned) excl=0 incl=0 calls=0 total=3\n"
                 "(unreturned);X excl=2 incl=2 calls=1 total=3\n"
                 "(unreturned);X;Z excl=1 incl=1 calls=1 total=1\n");
    static const ret r0[] = {{0, 4, 4, "Q"}, {1, 1, 1, "Q"}};
    check_stream(r0, 2, "Q excl=5 incl=5 calls=2 total=5\n");
}

static void normalises_eval_sequence_numbers(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"main::__ANON__[(eval 34)[demo.pl:37]:1]", "main::__ANON__[(eval 0)[demo.pl:37]:1]"},
        {"(eval 3)[(eval 2)[x.pl:1]:5]", "(eval 0)[(eval 0)[x.pl:1]:5]"},
        {"Foo::bar[(re_eval 12)[a.pm:9]:1]", "Foo::bar[(re_eval 0)[a.pm:9]:1]"},
        {"(eval\t7)[x:1]", "(eval 0)[x:1]"},          /* the space is literal */
        {"(eval 12)", "(eval 12)"},                  /* no [file:line] after it */
        {"(eval 12)[x.pl]", "(eval 12)[x.pl]"},      /* no :line */
        {"(eval 12)[:3]", "(eval 12)[:3]"},          /* nothing before the ':' */
        {"(eval 1)[a\n:3]", "(eval 1)[a\n:3]"},      /* '.' does not match a newline */
        {"(evalx 1)[a:3]", "(evalx 1)[a:3]"},
        {"(eval  1)[a:3]", "(eval  1)[a:3]"},        /* one space only */
        {"(eval 1x)[a:3]", "(eval 1x)[a:3]"},
        {"((eval 15)[a:b:3]", "((eval 0)[a:b:3]"},
        {"(eval 9)[a:3x] (eval 8)[b:4]", "(eval 0)[a:3x] (eval 0)[b:4]"}, /* .+? runs on */
        {"(eval 1)[a\n:3]:4]", "(eval 1)[a\n:3]:4]"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[128];
        size_t n = nytp_calltree_normalise(cases[i].in, strlen(cases[i].in), out);
        out[n] = 0;
        assert_string_equal(out, cases[i].out);
    }
    /* and sibling evals share one node */
    static const ret r[] = {{1, 1, 1, "main::__ANON__[(eval 3)[x.pl:1]:1]"},
                            {1, 2, 2, "main::__ANON__[(eval 4)[x.pl:1]:1]"}};
    check_stream(r, 2, "main::__ANON__[(eval 0)[x.pl:1]:1] excl=3 incl=3 calls=2 total=3\n");
}

/* The regular expression of Devel::NYTProf's readers, done the slow way
 * for reference: at each "(WORDeval DIGITS)" look ahead for "[", then at
 * least one character other than a newline up to ":DIGITS]". */
static size_t slow_normalise(const char *s, size_t len, char *out)
{
    size_t o = 0, i = 0;
    while (i < len) {
        if (s[i] != '(') {
            out[o++] = s[i++];
            continue;
        }
        size_t k = i + 1;
        while (k < len && (isalnum((unsigned char)s[k]) || s[k] == '_'))
            k++;
        size_t m = k + 1;
        while (m < len && isdigit((unsigned char)s[m]))
            m++;
        bool ok = k - i - 1 >= 4 && memcmp(s + k - 4, "eval", 4) == 0 && k < len && isspace((unsigned char)s[k]) &&
                  m > k + 1 && m < len && s[m] == ')' && m + 1 < len && s[m + 1] == '[';
        bool found = false;
        for (size_t q = m + 3; ok && !found && q < len && s[q - 1] != '\n'; q++) {
            size_t r = q + 1;
            while (r < len && isdigit((unsigned char)s[r]))
                r++;
            found = s[q] == ':' && r > q + 1 && r < len && s[r] == ']';
        }
        if (!found) {
            out[o++] = s[i++];
            continue;
        }
        memcpy(out + o, s + i, k - i);
        o += k - i;
        memcpy(out + o, " 0)", 3);
        o += 3;
        i = m + 1;
    }
    return o;
}

/* Random names of the pieces that matter (evals, brackets, colons,
 * digits, newlines) normalise as the reference does; and a name of
 * 200,000 nested evals, which took a scan to its innermost file for each
 * eval (20,000 took 2.7 s, 40,000 13 s), is normalised in one pass. */
static void normalising_is_linear_and_right(void **state)
{
    (void)state;
    static const char *const pieces[] = {"(eval 1)", "(eval 22)", "(re_eval 3)", "[", "]", ":", ":7]",
                                         "\n", "x", "(", "eval", " ", "9", "(eval 4)[", ":1]"};
    unsigned seed = 7;
    char in[256], a[1024], b[1024];
    for (int t = 0; t < 200000; t++) {
        size_t n = 0;
        int pieces_n = 1 + (int)(t % 12);
        for (int k = 0; k < pieces_n; k++) {
            seed = seed * 1103515245u + 12345u;
            const char *p = pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])];
            size_t pl = strlen(p);
            memcpy(in + n, p, pl);
            n += pl;
        }
        size_t x = nytp_calltree_normalise(in, n, a), y = slow_normalise(in, n, b);
        if (x != y || memcmp(a, b, x) != 0)
            fail_msg("'%.*s': '%.*s', want '%.*s'", (int)n, in, (int)x, a, (int)y, b);
    }
    size_t k, w;
    char *deep = nested_evals(200000, "x.pl:3]", 1, &k), *want = nested_evals(200000, "x.pl:3]", 0, &w);
    char *got = malloc(k + 1);
    assert_non_null(deep);
    assert_non_null(want);
    assert_non_null(got);
    size_t g = nytp_calltree_normalise(deep, k, got);
    assert_int_equal(g, w);
    assert_memory_equal(got, want, w);
    free(deep);
    free(want);
    free(got);
}

/* A cut in the last SUB_RETURN: everything before it is kept and the open
 * frame is closed as "(unreturned)". */
static void truncated_stream_keeps_what_came_before(void **state)
{
    (void)state;
    static const ret r[] = {{2, 1, 1, "B"}, {1, 3, 2, "A"}, {2, 3, 3, "B"}, {1, 9, 9, "A"}};
    size_t len;
    uint8_t *data = make_stream(r, 4, &len);
    /* cut before the end of the last return's name: the PID_END (10 bytes)
     * and 1 byte of the name "A" */
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    assert_int_equal(read_into(t, data, len - 11, &e), NYTP_E_TRUNCATED);
    char *got = tree_text(t);
    assert_string_equal(got, "(unreturned) excl=0 incl=0 calls=0 total=3\n"
                             "(unreturned);B excl=3 incl=3 calls=1 total=3\n"
                             "A excl=2 incl=3 calls=1 total=3\n"
                             "A;B excl=1 incl=1 calls=1 total=1\n");
    free(got);
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    assert_int_equal(s.unreturned, 1);
    assert_int_equal(s.returns, 3);
    assert_true(s.excl_in == 6.0);
    assert_true(nytp_calltree_total_excl(t) == 6.0);
    assert_true(nytp_calltree_ticks_per_sec(t) == 1000.0);
    nytp_calltree_free(t);
    free(data);
}

/* Two inputs add up in one tree. */
static void several_inputs_add_up(void **state)
{
    (void)state;
    static const ret r[] = {{2, 1, 1, "B"}, {1, 3, 2, "A"}};
    size_t len;
    uint8_t *data = make_stream(r, 2, &len);
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    assert_int_equal(read_into(t, data, len, &e), NYTP_OK);
    assert_int_equal(read_into(t, data, len, &e), NYTP_OK);
    char *got = tree_text(t);
    assert_string_equal(got, "A excl=4 incl=6 calls=2 total=6\n"
                             "A;B excl=2 incl=2 calls=2 total=2\n");
    free(got);
    assert_int_equal(nytp_calltree_total_calls(t), 4);
    nytp_calltree_free(t);
    free(data);
}

/* A recursion 300,000 deep, twice: no stack overflow in building,
 * merging or walking, and one node per level. */
static void deep_recursion(void **state)
{
    (void)state;
    const uint32_t N = 300000;
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    nytp_str name = nytp_cstr("main::r", false);
    for (int round = 0; round < 2; round++)
        for (uint32_t d = N; d >= 1; d--)
            assert_int_equal(nytp_calltree_add_return(t, d, N - d + 1, 1, name), NYTP_OK);
    assert_int_equal(nytp_calltree_end_input(t), 0);
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    assert_int_equal(s.nodes, N);
    assert_int_equal(s.max_depth, N);
    text x = {0};
    x.cap = 1u << 21;
    x.s = malloc(x.cap);
    assert_int_equal(nytp_calltree_walk(t, 0, collect, &x), 0);
    assert_int_equal(x.visits, N);
    assert_int_equal(x.deepest, N);
    /* the first line: the outermost call, twice, holding everything */
    char want[128];
    snprintf(want, sizeof want, "main::r excl=2 incl=%u calls=2 total=%u\n", 2 * N, 2 * N);
    assert_memory_equal(x.s, want, strlen(want));
    free(x.s);
    nytp_calltree_free(t);
}

/* A million returns over a handful of paths: memory stays at the paths. */
static void memory_bounded_by_paths(void **state)
{
    (void)state;
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    assert_int_equal(nytp_calltree_last_name(t), UINT32_MAX); /* no return yet */
    nytp_str a = nytp_cstr("A", false), b = nytp_cstr("B", false), c = nytp_cstr("C", false),
             d = nytp_cstr("D", false);
    for (int i = 0; i < 250000; i++) {
        assert_int_equal(nytp_calltree_add_return(t, 3, 1, 1, c), NYTP_OK);
        assert_int_equal(nytp_calltree_add_return(t, 2, 2, 1, b), NYTP_OK);
        assert_int_equal(nytp_calltree_add_return(t, 1, 3, 1, a), NYTP_OK);
        assert_int_equal(nytp_calltree_add_return(t, 1, 1, 1, d), NYTP_OK);
    }
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    assert_int_equal(s.returns, 1000000);
    /* the id of the last return's name, as nytp_calltree_name gives it */
    nytp_str last = nytp_calltree_name(t, nytp_calltree_last_name(t));
    assert_int_equal(last.len, 1);
    assert_memory_equal(last.ptr, "D", 1);
    assert_int_equal(s.nodes, 4);
    assert_true(s.node_slots <= 10);
    char *got = tree_text(t);
    assert_string_equal(got, "A excl=250000 incl=750000 calls=250000 total=750000\n"
                             "A;B excl=250000 incl=500000 calls=250000 total=500000\n"
                             "A;B;C excl=250000 incl=250000 calls=250000 total=250000\n"
                             "D excl=250000 incl=250000 calls=250000 total=250000\n");
    free(got);
    nytp_calltree_free(t);
}

/* Trees built by path; walks sorted by name bytes, or stopped early. */
static int stop_at_second(void *ctx, const nytp_calltree_visit *v)
{
    (void)v;
    return ++*(int *)ctx == 2 ? 7 : 0;
}

static void paths_by_hand_and_walk_order(void **state)
{
    (void)state;
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    nytp_str p1[] = {nytp_cstr("b", false), nytp_cstr("z", false)};
    nytp_str p2[] = {nytp_cstr("b", false), nytp_cstr("(eval 5)[q:1]", false)};
    nytp_str p3[] = {nytp_cstr("a", false)};
    nytp_str p4[] = {nytp_cstr("b", false), nytp_cstr("(eval 6)[q:1]", false)};
    assert_int_equal(nytp_calltree_add_path(t, p1, 2, 1, 1, 1), NYTP_OK);
    assert_int_equal(nytp_calltree_add_path(t, p2, 2, 2, 2, 1), NYTP_OK);
    assert_int_equal(nytp_calltree_add_path(t, p3, 1, 4, 4, 1), NYTP_OK);
    assert_int_equal(nytp_calltree_add_path(t, p4, 2, 8, 8, 1), NYTP_OK);
    char *got = tree_text(t);
    assert_string_equal(got, "a excl=4 incl=4 calls=1 total=4\n"
                             "b excl=0 incl=0 calls=0 total=11\n"
                             "b;(eval 0)[q:1] excl=10 incl=10 calls=2 total=10\n"
                             "b;z excl=1 incl=1 calls=1 total=1\n");
    free(got);
    int seen = 0;
    assert_int_equal(nytp_calltree_walk(t, 0, stop_at_second, &seen), 7);
    assert_int_equal(seen, 2);
    assert_true(nytp_calltree_total_excl(t) == 15.0);
    /* a name is found as the tree normalised it: any eval number finds
     * the one frame, a name never added finds none */
    uint32_t id, ev;
    assert_int_equal(nytp_calltree_find_name(t, "(eval 99)[q:1]", 14, &ev), NYTP_OK);
    assert_int_not_equal(ev, UINT32_MAX);
    nytp_str n = nytp_calltree_name(t, ev);
    assert_int_equal(n.len, 13);
    assert_memory_equal(n.ptr, "(eval 0)[q:1]", 13);
    assert_int_equal(nytp_calltree_find_name(t, "z", 1, &id), NYTP_OK);
    assert_true(id != UINT32_MAX && id != ev);
    assert_int_equal(nytp_calltree_find_name(t, "y", 1, &id), NYTP_OK);
    assert_int_equal(id, UINT32_MAX);
    nytp_calltree_free(t);
}

/* Direct recursion deeper than the limit folds into one frame
 * "NAME…[×N]" holding the deeper frames' values and calls (merged by
 * name, themselves folded when they recurse too deep), every total kept
 * (issue 21, item 5); a tree within the limit is left as it is. */
static void deep_recursion_folds(void **state)
{
    (void)state;
    static const char *paths[] = {
        "a", "a;b", "a;b;b", "a;b;b;b", "a;b;b;b;b", "a;b;b;b;b;c", "a;b;b;b;c",
        "a;b;b;b;b;b", "a;b;b;b;b;b;c;c;c;c",
    };
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        nytp_str p[16];
        size_t d = 0;
        for (const char *s = paths[i]; *s; s++)
            if (*s != ';')
                p[d++] = (nytp_str){s, 1, false};
        assert_int_equal(nytp_calltree_add_path(t, p, d, 1, 1, 1), NYTP_OK);
    }
    char *before = tree_text(t);
    assert_int_equal(nytp_calltree_fold_recursion(t, 0), 0);
    assert_int_equal(nytp_calltree_fold_recursion(t, 5), 0);
    char *same = tree_text(t);
    assert_string_equal(same, before);
    assert_int_equal(nytp_calltree_fold_recursion(t, 2), 3 + 2);
    char *got = tree_text(t);
    assert_string_equal(got, "a excl=1 incl=1 calls=1 total=9\n"
                             "a;b excl=1 incl=1 calls=1 total=8\n"
                             "a;b;b excl=1 incl=1 calls=1 total=7\n"
                             "a;b;b;b\xe2\x80\xa6[\xc3\x97" "3] excl=3 incl=3 calls=3 total=6\n"
                             "a;b;b;b\xe2\x80\xa6[\xc3\x97" "3];c excl=2 incl=2 calls=2 total=3\n"
                             "a;b;b;b\xe2\x80\xa6[\xc3\x97" "3];c;c excl=0 incl=0 calls=0 total=1\n"
                             "a;b;b;b\xe2\x80\xa6[\xc3\x97" "3];c;c;c\xe2\x80\xa6[\xc3\x97" "2] excl=1 incl=1 calls=1 total=1\n");
    assert_true(nytp_calltree_total_excl(t) == 9.0);
    assert_int_equal(nytp_calltree_total_calls(t), 9);
    const char *fb = "b\xe2\x80\xa6[\xc3\x97" "3]";
    assert_int_equal(nytp_calltree_unfolded_len(fb, strlen(fb)), 1);
    assert_int_equal(nytp_calltree_unfolded_len("b[x3]", 5), 5);
    assert_int_equal(nytp_calltree_unfolded_len("b\xe2\x80\xa6[\xc3\x97]", 7), 7);
    assert_int_equal(nytp_calltree_unfolded_len("]", 1), 1);
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    assert_int_equal(s.max_depth, 7);
    assert_int_equal(s.nodes, 7);
    free(before);
    free(same);
    free(got);
    nytp_calltree_free(t);
}

/* Any depth is a depth: no fixed limit, and a return at depth 4e9 costs a
 * few nodes, not one per level; the frames it leaves open are one
 * "(unreturned)" frame, not a chain of four billion. */
static void any_depth_costs_only_its_returns(void **state)
{
    (void)state;
    static const ret r[] = {{4000000000u, 1, 1, "B"}};
    size_t len;
    uint8_t *data = make_stream(r, 1, &len);
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    assert_int_equal(read_into(t, data, len, &e), NYTP_OK);
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    assert_int_equal(s.unreturned, 3999999999u);
    assert_int_equal(s.max_depth, 2);
    assert_true(s.node_slots <= 4);
    char *got = tree_text(t);
    assert_string_equal(got, "(unreturned) excl=0 incl=0 calls=0 total=1\n"
                             "(unreturned);B excl=1 incl=1 calls=1 total=1\n");
    free(got);
    /* a second input adds to the same "(unreturned)" */
    assert_int_equal(read_into(t, data, len, &e), NYTP_OK);
    got = tree_text(t);
    assert_string_equal(got, "(unreturned) excl=0 incl=0 calls=0 total=2\n"
                             "(unreturned);B excl=2 incl=2 calls=2 total=2\n");
    free(got);
    nytp_calltree_free(t);
    free(data);
}

/* Open frames at several depths, each holding calls: they fold into one
 * "(unreturned)" with all those calls below it, whatever the gaps between
 * them; the frames on the stack are all counted as unreturned. */
static void open_frames_fold_into_one(void **state)
{
    (void)state;
    static const ret r[] = {{5, 1, 1, "C"}, {9, 2, 2, "D"}, {3, 5, 3, "E"}, {12, 1, 1, "C"}};
    size_t len;
    uint8_t *data = make_stream(r, 4, &len);
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    assert_int_equal(read_into(t, data, len, &e), NYTP_OK);
    char *got = tree_text(t);
    assert_string_equal(got, "(unreturned) excl=0 incl=0 calls=0 total=7\n"
                             "(unreturned);C excl=2 incl=2 calls=2 total=2\n"
                             "(unreturned);E excl=3 incl=5 calls=1 total=5\n"
                             "(unreturned);E;D excl=2 incl=2 calls=1 total=2\n");
    free(got);
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    assert_int_equal(s.unreturned, 11); /* depths 1 to 11 */
    assert_int_equal(s.max_depth, 3);
    assert_true(nytp_calltree_total_excl(t) == s.excl_in);
    nytp_calltree_free(t);
    free(data);
}

/* ---- a random program's calls, many batches long ------------------------------- */

/* The tree puts returns in a batch at a time, latest first (settle in
 * calltree.c): a program of nested calls over a few names, long enough to
 * fill several batches with frames open across their ends, and ended with
 * frames still open, gives the tree its calls made: every path's values,
 * and, walked unsorted, each node's children in the order of the first
 * return below each (the order the program first called them in). */
#define RP_MAX 4096
typedef struct rp_entry {
    char path[96];
    double excl, incl;
    uint64_t calls, first; /* first: the first return below, 0-based */
    bool own;              /* a frame of it returned (else only below) */
} rp_entry;

typedef struct rp_map {
    rp_entry v[RP_MAX];
    size_t n;
    uint32_t slot[RP_MAX * 2]; /* index + 1 in v; 0: empty */
} rp_map;

static uint32_t *rp_slot(rp_map *m, const char *path)
{
    uint32_t h = 2166136261u;
    for (const char *c = path; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    for (uint32_t i = h % (RP_MAX * 2);; i = (i + 1) % (RP_MAX * 2))
        if (!m->slot[i] || strcmp(m->v[m->slot[i] - 1].path, path) == 0)
            return &m->slot[i];
}

static rp_entry *rp_at(rp_map *m, const char *path, uint64_t first)
{
    uint32_t *sl = rp_slot(m, path);
    if (*sl)
        return &m->v[*sl - 1];
    assert_true(m->n < RP_MAX);
    rp_entry *e = &m->v[m->n++];
    *sl = (uint32_t)m->n;
    memset(e, 0, sizeof *e);
    snprintf(e->path, sizeof e->path, "%s", path);
    e->first = first;
    return e;
}

static int rp_cmp(const void *a, const void *b)
{
    return strcmp(((const rp_entry *)a)->path, ((const rp_entry *)b)->path);
}

typedef struct rp_walk {
    rp_map *m;
    uint64_t last_first[64]; /* per depth: the previous sibling's first */
    uint64_t visits;
} rp_walk;

static int rp_visit(void *ctx, const nytp_calltree_visit *v)
{
    rp_walk *w = ctx;
    char path[96] = "";
    size_t o = 0;
    for (uint32_t i = 0; i < v->depth; i++)
        o += (size_t)snprintf(path + o, sizeof path - o, "%s%.*s", i ? ";" : "", (int)v->path[i].len,
                              v->path[i].ptr);
    uint32_t *sl = rp_slot(w->m, path);
    assert_true(*sl != 0);
    rp_entry *e = &w->m->v[*sl - 1];
    assert_true(v->depth < 64);
    /* siblings come in the order of their first return below */
    if (w->last_first[v->depth] != UINT64_MAX)
        assert_true(e->first > w->last_first[v->depth]);
    w->last_first[v->depth] = e->first;
    w->last_first[v->depth + 1] = UINT64_MAX;
    w->visits++;
    return 0;
}

static void batches_give_the_calls_made(void **state)
{
    (void)state;
    enum { N = 150000, MAXD = 7, FRAMES = N + 64 };
    static const char *names[] = {"n0", "n1", "n2"};
    uint32_t *name = malloc(FRAMES * sizeof *name), *parent = malloc(FRAMES * sizeof *parent);
    double *f_excl = malloc(FRAMES * sizeof *f_excl), *f_incl = calloc(FRAMES, sizeof *f_incl);
    bool *returned = calloc(FRAMES, sizeof *returned);
    uint32_t *order = malloc(FRAMES * sizeof *order); /* frames in the order they returned */
    rp_map *m = calloc(1, sizeof *m);
    assert_true(name && parent && f_excl && f_incl && returned && order && m);
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);

    uint64_t rng = 88172645463325252ull;
    uint32_t stack[MAXD + 1], d = 0, frames = 1, n_ret = 0; /* frame 0: the main program */
    while (n_ret < N) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if (d == 0 || (d < MAXD && rng % 100 < 52)) {
            uint32_t f = frames++;
            name[f] = (uint32_t)((rng >> 8) % 3);
            parent[f] = d ? stack[d - 1] : 0;
            stack[d++] = f;
        } else {
            uint32_t f = stack[--d];
            f_excl[f] = (double)((rng >> 16) % 7 + 1);
            f_incl[f] += f_excl[f];
            if (d)
                f_incl[stack[d - 1]] += f_incl[f];
            returned[f] = true;
            order[n_ret++] = f;
            assert_int_equal(nytp_calltree_add_return(t, d + 1, f_incl[f], f_excl[f],
                                                      nytp_cstr(names[name[f]], false)),
                             NYTP_OK);
        }
    }
    uint32_t left_open = d;
    assert_true(left_open > 0); /* the seed leaves frames open, as a killed program */
    assert_int_equal(nytp_calltree_end_input(t), (int64_t)left_open);

    /* what the tree should hold: a frame's path is its callers' that
     * returned, below "(unreturned)" when one of them never did */
    for (uint32_t i = 0; i < n_ret; i++) {
        uint32_t chain[MAXD + 1], k = 0, f = order[i];
        bool open_above = false;
        for (uint32_t g = f; g != 0; g = parent[g]) {
            if (!returned[g]) {
                open_above = true;
                break;
            }
            chain[k++] = g;
        }
        char path[96];
        size_t o = (size_t)snprintf(path, sizeof path, "%s", open_above ? NYTP_CALLTREE_UNRETURNED : "");
        if (open_above)
            rp_at(m, path, i);
        while (k--) {
            o += (size_t)snprintf(path + o, sizeof path - o, "%s%s", o ? ";" : "", names[name[chain[k]]]);
            rp_entry *x = rp_at(m, path, i);
            if (k == 0) {
                x->calls++;
                x->excl += f_excl[f];
                x->incl += f_incl[f];
                x->own = true;
            }
        }
    }
    rp_entry *sorted = malloc(m->n * sizeof *sorted);
    assert_non_null(sorted);
    memcpy(sorted, m->v, m->n * sizeof *sorted);
    qsort(sorted, m->n, sizeof *sorted, rp_cmp);
    size_t cap = m->n * 128 + 1, len = 0;
    char *want = malloc(cap);
    want[0] = 0;
    for (size_t i = 0; i < m->n; i++) {
        double total = 0;
        size_t pl = strlen(sorted[i].path);
        for (size_t j = i; j < m->n && strncmp(sorted[j].path, sorted[i].path, pl) == 0; j++)
            if (sorted[j].path[pl] == 0 || sorted[j].path[pl] == ';')
                total += sorted[j].excl;
        len += (size_t)snprintf(want + len, cap - len, "%s excl=%g incl=%g calls=%llu total=%g\n", sorted[i].path,
                                sorted[i].excl, sorted[i].incl, (unsigned long long)sorted[i].calls, total);
    }
    free(sorted);
    char *got = tree_text(t);
    assert_string_equal(got, want);
    free(got);
    free(want);

    rp_walk w = {m, {0}, 0};
    for (int i = 0; i < 64; i++)
        w.last_first[i] = UINT64_MAX;
    assert_int_equal(nytp_calltree_walk(t, 0, rp_visit, &w), 0);
    assert_int_equal(w.visits, m->n);
    nytp_calltree_stats s;
    nytp_calltree_get_stats(t, &s);
    assert_int_equal(s.returns, N);
    assert_true(m->n > 200); /* many paths, and the stream many batches long */
    nytp_calltree_free(t);
    free(name);
    free(parent);
    free(f_excl);
    free(f_incl);
    free(returned);
    free(order);
    free(m);
}

/* Real profiles read to the end without open frames. */
static void real_profiles_close_every_frame(void **state)
{
    (void)state;
    const char *names[] = {"demo.out", "recursion.out", "evals.out", "anon.out", "demo-calls2.out"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        nytp_calltree *t;
        nytp_error e = {0};
        assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
        assert_int_equal(nytp_calltree_load(t, td_path(names[i]), NULL, NULL, &e), NYTP_OK);
        nytp_calltree_stats s;
        nytp_calltree_get_stats(t, &s);
        assert_int_equal(s.unreturned, 0);
        assert_true(s.returns > 10);
        assert_true(s.nodes > 5);
        assert_true(nytp_calltree_total_excl(t) == s.excl_in);
        assert_int_equal(nytp_calltree_total_calls(t), s.returns);
        nytp_calltree_free(t);
    }
}

/* The sample rate of a sampled input and its samples, from attributes. */
static void sampled_attributes(void **state)
{
    (void)state;
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    uint64_t n = 99;
    assert_true(nytp_calltree_sample_hz(t, &n) == 0);
    assert_int_equal(n, 0);
    const char *kv[][2] = {{"ticks_per_sec", "10000000"}, {"sample_hz", "1000"},
                           {"sample_count", "250"}, {"sample_hz", "100"}, /* a later input */
                           {"sample_count", "50"}, {"sample_count", "junk"}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        nytp_chunk c;
        memset(&c, 0, sizeof c);
        c.tag = NYTP_TAG_ATTRIBUTE;
        c.u.kv.key = nytp_cstr(kv[i][0], false);
        c.u.kv.value = nytp_cstr(kv[i][1], false);
        assert_int_equal(nytp_calltree_add_chunk(t, &c), NYTP_OK);
    }
    assert_true(nytp_calltree_sample_hz(t, &n) == 1000); /* the first */
    assert_int_equal(n, 300);
    assert_true(nytp_calltree_sample_hz(t, NULL) == 1000);
    nytp_calltree_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sampled_attributes),
        cmocka_unit_test(builds_paths_from_returns),
        cmocka_unit_test(merges_repeated_calls),
        cmocka_unit_test(depth_rules_of_nytprofcalls),
        cmocka_unit_test(normalises_eval_sequence_numbers),
        cmocka_unit_test(normalising_is_linear_and_right),
        cmocka_unit_test(truncated_stream_keeps_what_came_before),
        cmocka_unit_test(several_inputs_add_up),
        cmocka_unit_test(deep_recursion),
        cmocka_unit_test(deep_recursion_folds),
        cmocka_unit_test(memory_bounded_by_paths),
        cmocka_unit_test(paths_by_hand_and_walk_order),
        cmocka_unit_test(any_depth_costs_only_its_returns),
        cmocka_unit_test(open_frames_fold_into_one),
        cmocka_unit_test(batches_give_the_calls_made),
        cmocka_unit_test(real_profiles_close_every_frame),
    };
    return cmocka_run_group_tests_name("calltree", tests, NULL, NULL);
}

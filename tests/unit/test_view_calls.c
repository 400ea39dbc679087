/* test_view_calls.c — the view of a time line (nytp_view_apply_calls) on
 * calls written by hand: hidden calls not drawn with their own time in
 * place (main::RUNTIME's with no caller drawn), ignored calls gone with
 * their time, focus keeping the calls that lead to a match, and recursion
 * folded through hidden calls, as the path view folds it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "nytp/view.h"

typedef struct names {
    char *s[64];
    uint32_t n;
} names;

static nytp_str name_of(void *ctx, uint32_t id)
{
    names *N = ctx;
    assert_true(id < N->n);
    return (nytp_str){N->s[id], (uint32_t)strlen(N->s[id]), true};
}

static uint32_t intern(void *ctx, const char *s, uint32_t len)
{
    names *N = ctx;
    for (uint32_t i = 0; i < N->n; i++)
        if (strlen(N->s[i]) == len && memcmp(N->s[i], s, len) == 0)
            return i;
    assert_true(N->n < 64);
    N->s[N->n] = strndup(s, len);
    return N->n++;
}

typedef struct line {
    names N;
    nytp_view_call *c;
    uint32_t n, cap, first;
} line;

/* "A:10{H:6{B:2},C:1},D:3": calls, their inclusive ticks, {their calls}. */
static uint32_t parse(line *L, const char **s)
{
    uint32_t first = NYTP_VIEW_NO_CALL, last = NYTP_VIEW_NO_CALL;
    while (**s && **s != '}') {
        const char *colon = strchr(*s, ':');
        assert_non_null(colon);
        uint32_t frame = intern(&L->N, *s, (uint32_t)(colon - *s));
        char *end;
        double incl = strtod(colon + 1, &end);
        *s = end;
        if (L->n == L->cap) {
            L->cap = L->cap ? 2 * L->cap : 16;
            L->c = realloc(L->c, L->cap * sizeof *L->c);
            assert_non_null(L->c);
        }
        uint32_t id = L->n++;
        L->c[id] = (nytp_view_call){frame, NYTP_VIEW_NO_CALL, NYTP_VIEW_NO_CALL, incl};
        if (**s == '{') {
            (*s)++;
            uint32_t kids = parse(L, s);
            L->c[id].first_child = kids;
            assert_int_equal(**s, '}');
            (*s)++;
        }
        if (last == NYTP_VIEW_NO_CALL)
            first = id;
        else
            L->c[last].next = id;
        last = id;
        if (**s == ',')
            (*s)++;
    }
    return first;
}

static void print(const line *L, uint32_t first, char *o, size_t *at, size_t size)
{
    for (uint32_t i = first; i != NYTP_VIEW_NO_CALL; i = L->c[i].next) {
        const nytp_view_call *c = &L->c[i];
        *at += (size_t)snprintf(o + *at, size - *at, "%s%s:%g", i == first ? "" : ",",
                                c->frame == NYTP_VIEW_NOT_DRAWN ? "-" : L->N.s[c->frame], c->incl);
        if (c->first_child != NYTP_VIEW_NO_CALL) {
            *at += (size_t)snprintf(o + *at, size - *at, "{");
            print(L, c->first_child, o, at, size);
            *at += (size_t)snprintf(o + *at, size - *at, "}");
        }
    }
}

/* The view of spec with one pattern (op, re; op NYTP_VIEW_N_OPS: none)
 * and a recursion limit, printed as spec is written. */
static void check(const char *spec, enum nytp_view_op op, const char *re, uint32_t limit, const char *want)
{
    line L = {0};
    const char *s = spec;
    L.first = parse(&L, &s);
    nytp_view *v;
    nytp_error e = {0};
    assert_int_equal(nytp_view_new(&v, &e), NYTP_OK);
    if (op != NYTP_VIEW_N_OPS)
        assert_int_equal(nytp_view_add(v, op, re, &e), NYTP_OK);
    nytp_view_set_max_recursion(v, limit);
    nytp_view_names nn = {name_of, intern, &L.N};
    assert_int_equal(nytp_view_apply_calls(v, &L.c, &L.n, &L.cap, &L.first, &nn, &e), NYTP_OK);
    char got[2048];
    size_t at = 0;
    got[0] = 0;
    print(&L, L.first, got, &at, sizeof got);
    assert_string_equal(got, want);
    nytp_view_free(v);
    free(L.c);
    for (uint32_t i = 0; i < L.N.n; i++)
        free(L.N.s[i]);
}

static void hidden_calls_are_not_drawn(void **state)
{
    (void)state;
    /* H's own 4 ticks stay inside A's 10, after B; the time line keeps
     * every time where it was */
    check("A:10{H:6{B:2},C:1}", NYTP_VIEW_HIDE, "^H$", 0, "A:10{-:6{B:2},C:1}");
    /* no caller drawn: its own time is main::RUNTIME's, after its calls */
    check("H:5{B:2},D:1", NYTP_VIEW_HIDE, "^H$", 0, "-:5{B:2,main::RUNTIME:3},D:1");
    /* nested hidden calls: the outer one holds the inner one's calls */
    check("H:5{H:3{B:1}}", NYTP_VIEW_HIDE, "^H$", 0, "-:5{-:3{B:1,main::RUNTIME:2},main::RUNTIME:2}");
}

/* main::RUNTIME is added when a hidden call ends, after its calls: two
 * hidden calls ending one after the other add two, the second when the
 * copy's first room (64 calls) is full. */
static void main_runtime_when_the_room_is_full(void **state)
{
    (void)state;
    char spec[1024] = "H:200{H:100{", want[1024] = "-:200{-:100{";
    for (int i = 0; i < 61; i++) {
        strcat(spec, i ? ",B:1" : "B:1");
        strcat(want, i ? ",B:1" : "B:1");
    }
    strcat(spec, "}}");
    strcat(want, ",main::RUNTIME:39},main::RUNTIME:100}");
    check(spec, NYTP_VIEW_HIDE, "^H$", 0, want);
}

static void ignored_calls_go_with_their_time(void **state)
{
    (void)state;
    check("A:10{X:4{B:1},C:2},X:3,D:1", NYTP_VIEW_IGNORE, "^X$", 0, "A:6{C:2},D:1");
}

static void focus_keeps_the_calls_leading_to_a_match(void **state)
{
    (void)state;
    /* A stays with F alone (its own 3 ticks and B go); D leads to no F */
    check("A:10{B:3,F:4{C:1}},D:2{E:1}", NYTP_VIEW_FOCUS, "^F$", 0, "A:4{F:4{C:1}}");
}

static void recursion_folds_through_hidden_calls(void **state)
{
    (void)state;
    /* h between two r: after hiding it, r;r;r;r;r;x runs 5 deep: with a
     * limit of 2, the third holds the three deepest, not drawn */
    check("r:9{r:8{h:7{r:6{r:5{r:4{x:1}}}}}}", NYTP_VIEW_HIDE, "^h$", 2,
          "r:9{r:8{-:7{r\xe2\x80\xa6[\xc3\x97" "3]:6{-:5{-:4{x:1}}}}}}");
    /* not hidden: no run is deeper than 2 */
    check("r:9{r:8{h:7{r:6{r:5{x:1}}}}}", NYTP_VIEW_N_OPS, NULL, 2, "r:9{r:8{h:7{r:6{r:5{x:1}}}}}");
    /* unfiltered folding: in place, the longest chain counted */
    check("r:9{r:8{r:7{r:2,r:4{r:3}}}}", NYTP_VIEW_N_OPS, NULL, 2, "r:9{r:8{r\xe2\x80\xa6[\xc3\x97" "3]:7{-:2,-:4{-:3}}}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hidden_calls_are_not_drawn),
        cmocka_unit_test(main_runtime_when_the_room_is_full),
        cmocka_unit_test(ignored_calls_go_with_their_time),
        cmocka_unit_test(focus_keeps_the_calls_leading_to_a_match),
        cmocka_unit_test(recursion_folds_through_hidden_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

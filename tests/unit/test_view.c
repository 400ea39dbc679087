/* test_view.c — focus, ignore and hide over call trees built by hand:
 * which paths stay, where hidden time goes, what the stats say, per-sub
 * totals, "file:" patterns, and recursion folding after filtering. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "nytp/view.h"

typedef struct path {
    const char *names;      /* "a;b;c" */
    double excl, incl;
    uint64_t calls;
} path;

static nytp_calltree *tree_of(const path *p, size_t n)
{
    nytp_calltree *t;
    nytp_error e = {0};
    assert_int_equal(nytp_calltree_new(&t, &e), NYTP_OK);
    for (size_t i = 0; i < n; i++) {
        nytp_str names[16];
        size_t depth = 0;
        const char *s = p[i].names;
        while (*s) {
            const char *end = strchr(s, ';');
            size_t len = end ? (size_t)(end - s) : strlen(s);
            names[depth++] = (nytp_str){s, (uint32_t)len, false};
            s += len + (end != NULL);
        }
        assert_int_equal(nytp_calltree_add_path(t, names, depth, p[i].excl, p[i].incl, p[i].calls),
                         NYTP_OK);
    }
    return t;
}

/* Every node with values as "a;b excl incl calls\n", sorted walk. */
typedef struct text {
    char s[4096];
    size_t len;
} text;

static int collect(void *ctx, const nytp_calltree_visit *v)
{
    text *t = ctx;
    if (v->excl == 0 && v->incl == 0 && v->calls == 0)
        return 0;
    for (uint32_t i = 0; i < v->depth; i++)
        t->len += (size_t)snprintf(t->s + t->len, sizeof t->s - t->len, "%s%.*s", i ? ";" : "",
                                   (int)v->path[i].len, v->path[i].ptr);
    t->len += (size_t)snprintf(t->s + t->len, sizeof t->s - t->len, " %g %g %llu\n", v->excl,
                               v->incl, (unsigned long long)v->calls);
    return 0;
}

static const char *text_of(const nytp_calltree *t, text *buf)
{
    buf->len = 0;
    buf->s[0] = 0;
    assert_int_equal(nytp_calltree_walk(t, NYTP_CALLTREE_SORTED, collect, buf), 0);
    return buf->s;
}

/* A calls M, M calls B, B calls M again; M is also called from the main
 * program; A calls D. */
static const path sample[] = {
    {"A", 1, 79, 1},
    {"A;M", 2, 14, 2},
    {"A;M;B", 4, 12, 2},
    {"A;M;B;M", 8, 8, 1},
    {"M", 32, 32, 1},
    {"A;D", 64, 64, 3},
};
#define N_SAMPLE (sizeof sample / sizeof *sample)

static nytp_view *view_of(enum nytp_view_op op, const char *re)
{
    nytp_view *v;
    nytp_error e = {0};
    assert_int_equal(nytp_view_new(&v, &e), NYTP_OK);
    if (re)
        assert_int_equal(nytp_view_add(v, op, re, &e), NYTP_OK);
    return v;
}

static void hide_moves_time_to_callers(void **state)
{
    (void)state;
    nytp_calltree *t = tree_of(sample, N_SAMPLE);
    nytp_view *v = view_of(NYTP_VIEW_HIDE, "^M$");
    nytp_error e = {0};
    assert_int_equal(nytp_view_apply(v, &t, &e), NYTP_OK);
    text b;
    /* M's own time goes to its caller; B under M under A is B under A, and
     * the M below B gives its time to B; M called from the main program
     * gives its time to the main program */
    assert_string_equal(text_of(t, &b), "A 3 79 1\n"
                                        "A;B 12 12 2\n"
                                        "A;D 64 64 3\n"
                                        "main::RUNTIME 32 0 0\n");
    nytp_view_stats s;
    nytp_view_get_stats(v, &s);
    assert_true(s.total == 111 && s.shown == 111);
    assert_true(s.hidden == 42 && s.hidden_subs == 1);
    assert_true(s.unfocused == 0 && s.ignored == 0);
    assert_true(nytp_calltree_total_excl(t) == 111);
    nytp_view_free(v);
    nytp_calltree_free(t);
}

static void focus_keeps_paths_through_a_match(void **state)
{
    (void)state;
    nytp_calltree *t = tree_of(sample, N_SAMPLE);
    nytp_view *v = view_of(NYTP_VIEW_FOCUS, "B");
    nytp_error e = {0};
    assert_int_equal(nytp_view_apply(v, &t, &e), NYTP_OK);
    text b;
    assert_string_equal(text_of(t, &b), "A;M;B 4 12 2\n"
                                        "A;M;B;M 8 8 1\n");
    nytp_view_stats s;
    nytp_view_get_stats(v, &s);
    assert_true(s.total == 111 && s.shown == 12 && s.unfocused == 99 && s.ignored == 0);
    nytp_view_free(v);
    nytp_calltree_free(t);
}

static void ignore_drops_paths_through_a_match(void **state)
{
    (void)state;
    nytp_calltree *t = tree_of(sample, N_SAMPLE);
    nytp_view *v = view_of(NYTP_VIEW_IGNORE, "B");
    nytp_error e = {0};
    assert_int_equal(nytp_view_apply(v, &t, &e), NYTP_OK);
    text b;
    assert_string_equal(text_of(t, &b), "A 1 79 1\n"
                                        "A;D 64 64 3\n"
                                        "A;M 2 14 2\n"
                                        "M 32 32 1\n");
    nytp_view_stats s;
    nytp_view_get_stats(v, &s);
    assert_true(s.total == 111 && s.shown == 99 && s.ignored == 12 && s.unfocused == 0);
    nytp_view_free(v);
    nytp_calltree_free(t);
}

static void patterns_repeat_and_combine(void **state)
{
    (void)state;
    nytp_calltree *t = tree_of(sample, N_SAMPLE);
    nytp_view *v = view_of(NYTP_VIEW_FOCUS, "^A$");
    nytp_error e = {0};
    assert_int_equal(nytp_view_add(v, NYTP_VIEW_IGNORE, "^D$", &e), NYTP_OK);
    assert_int_equal(nytp_view_add(v, NYTP_VIEW_IGNORE, "^Z$", &e), NYTP_OK);
    assert_int_equal(nytp_view_count(v, NYTP_VIEW_IGNORE), 2);
    assert_string_equal(nytp_view_pattern(v, NYTP_VIEW_IGNORE, 1), "^Z$");
    assert_true(nytp_view_active(v, NYTP_VIEW_N_OPS));
    assert_false(nytp_view_active(v, NYTP_VIEW_HIDE));
    assert_int_equal(nytp_view_apply(v, &t, &e), NYTP_OK);
    nytp_view_stats s;
    nytp_view_get_stats(v, &s);
    assert_true(s.shown == 15 && s.unfocused == 32 && s.ignored == 64);
    nytp_view_free(v);
    nytp_calltree_free(t);
}

static void sub_totals_count_a_path_once(void **state)
{
    (void)state;
    nytp_calltree *t = tree_of(sample, N_SAMPLE);
    double *excl, *incl;
    uint64_t *calls;
    assert_int_equal(nytp_view_sub_totals(t, &excl, &incl, &calls), NYTP_OK);
    nytp_calltree_stats st;
    nytp_calltree_get_stats(t, &st);
    for (uint32_t id = 0; id < st.names; id++) {
        nytp_str n = nytp_calltree_name(t, id);
        if (n.len == 1 && *n.ptr == 'M') {
            /* M recurs through B: the path A;M;B;M counts once in M's incl */
            assert_true(excl[id] == 42 && incl[id] == 2 + 4 + 8 + 32 && calls[id] == 4);
        } else if (n.len == 1 && *n.ptr == 'A') {
            assert_true(excl[id] == 1 && incl[id] == 79 && calls[id] == 1);
        }
    }
    free(excl);
    free(incl);
    free(calls);
    nytp_calltree_free(t);
}

static const char *file_of(void *ctx, const char *name, uint32_t len)
{
    (void)ctx, (void)len;
    return *name == 'M' || *name == 'D' ? "/lib/M.pm" : "/app/x.pl";
}

static void file_patterns_match_subs_by_file(void **state)
{
    (void)state;
    nytp_calltree *t = tree_of(sample, N_SAMPLE);
    nytp_view *v = view_of(NYTP_VIEW_HIDE, "file:^/lib/");
    nytp_view_set_sub_files(v, file_of, NULL);
    assert_true(nytp_view_has_file_patterns(v));
    nytp_error e = {0};
    assert_int_equal(nytp_view_apply(v, &t, &e), NYTP_OK);
    text b;
    assert_string_equal(text_of(t, &b), "A 67 79 1\n"
                                        "A;B 12 12 2\n"
                                        "main::RUNTIME 32 0 0\n");
    assert_int_equal(nytp_view_file(v, "/lib/M.pm"), NYTP_VIEW_HIDDEN);
    assert_int_equal(nytp_view_file(v, "/app/x.pl"), NYTP_VIEW_SHOWN);
    nytp_view_free(v);
    nytp_calltree_free(t);

    v = view_of(NYTP_VIEW_FOCUS, "file:^/app/");
    assert_int_equal(nytp_view_add(v, NYTP_VIEW_IGNORE, "file:y\\.pl$", &e), NYTP_OK);
    assert_int_equal(nytp_view_add(v, NYTP_VIEW_HIDE, "^A$", &e), NYTP_OK); /* not a file pattern */
    assert_int_equal(nytp_view_file(v, "/lib/M.pm"), NYTP_VIEW_LEFT_OUT);
    assert_int_equal(nytp_view_file(v, "/app/y.pl"), NYTP_VIEW_LEFT_OUT);
    assert_int_equal(nytp_view_file(v, "/app/x.pl"), NYTP_VIEW_SHOWN);
    nytp_view_free(v);
}

static void recursion_folds_after_filtering(void **state)
{
    (void)state;
    static const path deep[] = {
        {"A;R;H;R;H;R;H;R;H;R", 1, 1, 1},
        {"A;R;H;R;H;R;H;R", 1, 2, 1},
    };
    nytp_calltree *t = tree_of(deep, 2);
    nytp_view *v = view_of(NYTP_VIEW_HIDE, "^H$");
    nytp_view_set_max_recursion(v, 2);
    nytp_error e = {0};
    assert_int_equal(nytp_view_apply(v, &t, &e), NYTP_OK);
    /* with H hidden, R calls itself directly: 5 frames, 2 kept, the rest
     * one folded frame standing for 3 */
    text b;
    assert_string_equal(text_of(t, &b), "A;R;R;R\xe2\x80\xa6[\xc3\x97" "3] 2 3 2\n");
    nytp_view_stats s;
    nytp_view_get_stats(v, &s);
    /* folded counts what the folded frame stands for, as nytp_calltree_fold_recursion */
    assert_true(s.folded == 3 && s.total == 2 && s.shown == 2);
    nytp_view_free(v);
    nytp_calltree_free(t);

    /* no pattern: only folded, in place */
    t = tree_of(deep, 2);
    v = view_of(NYTP_VIEW_HIDE, NULL);
    nytp_view_set_max_recursion(v, 1);
    nytp_calltree *before = t;
    assert_int_equal(nytp_view_apply(v, &t, &e), NYTP_OK);
    assert_ptr_equal(t, before);
    nytp_view_free(v);
    nytp_calltree_free(t);
}

static void bad_expression_is_a_usage_error(void **state)
{
    (void)state;
    nytp_view *v = view_of(NYTP_VIEW_HIDE, NULL);
    nytp_error e = {0};
    assert_int_equal(nytp_view_add(v, NYTP_VIEW_HIDE, "(Moose", &e), NYTP_E_USAGE);
    assert_non_null(strstr(e.msg, "(Moose"));
    assert_false(nytp_view_active(v, NYTP_VIEW_N_OPS));
    nytp_view_free(v);
}

/* ---- the model's call sites (nytp_view_apply_sites) ----------------------- */

/* main::c calls Moose::h from lines 11 (3 calls) and 12 (1), h calls
 * main::x 8 times, c calls main::y from line 13 and main::z (not in the
 * call tree) from 14; the tree has the same calls. */
static nytp_profile *sites_profile(void)
{
    nytp_error e = {0};
    nytp_out *o;
    nytp_writer *w;
    assert_int_equal(nytp_out_open_mem(&o, &e), NYTP_OK);
    assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
    nytp_write_header(w, 5, 0);
    nytp_write_attribute(w, "ticks_per_sec", "1");
    nytp_write_pid_start(w, 7, 1, 1.5);
    nytp_write_new_fid(w, 1, 0, 0, 0, 0, 0, nytp_cstr("/p.pl", false));
    nytp_str c = nytp_cstr("main::c", false), h = nytp_cstr("Moose::h", false), x = nytp_cstr("main::x", false),
             y = nytp_cstr("main::y", false), z = nytp_cstr("main::z", false),
             rt = nytp_cstr("main::RUNTIME", false);
    nytp_write_sub_info(w, 1, 10, 20, c);
    nytp_write_sub_info(w, 1, 30, 40, h);
    nytp_write_sub_info(w, 1, 50, 55, x);
    nytp_write_sub_info(w, 1, 60, 65, y);
    nytp_write_sub_info(w, 1, 70, 75, z);
    nytp_write_sub_callers(w, 1, 2, 1, 10, 3, 0, 0, c, rt);
    nytp_write_sub_callers(w, 1, 11, 3, 6, 1.5, 0, 0, h, c);
    nytp_write_sub_callers(w, 1, 12, 1, 2, 0.5, 0, 0, h, c);
    nytp_write_sub_callers(w, 1, 31, 8, 4, 4, 0, 0, x, h);
    nytp_write_sub_callers(w, 1, 13, 2, 1, 1, 0.25, 3, y, c);
    nytp_write_sub_callers(w, 1, 14, 1, 0.5, 0.5, 0, 0, z, c);
    nytp_write_pid_end(w, 7, 9.5);
    uint8_t *data;
    size_t len;
    assert_int_equal(nytp_writer_close_mem(w, &data, &len, &e), NYTP_OK);
    nytp_profile *p;
    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    nytp_reader *r;
    assert_int_equal(nytp_reader_open_mem(&r, data, len, &e), NYTP_OK);
    nytp_load_opts lo = {NULL, NULL, NULL, NULL, false};
    assert_int_equal(nytp_profile_load_reader(p, r, "mem", &lo, &e), NYTP_OK);
    assert_int_equal(nytp_profile_finish(p), NYTP_OK);
    free(data);
    return p;
}

static const path sites_tree[] = {
    {"main::c", 3, 10, 1},
    {"main::c;Moose::h", 2, 8, 4},
    {"main::c;Moose::h;main::x", 4, 4, 8},
    {"main::c;main::y", 1, 1, 2},
};

/* The site of sub name at line, or NULL. */
static const nytp_site *site_at(const nytp_profile *p, const char *name, uint32_t line)
{
    uint32_t sid = nytp_profile_sub_by_name(p, name, strlen(name));
    for (uint32_t i = 0; sid != NYTP_NONE && i < p->subs[sid].n_sites; i++)
        if (p->sites[p->subs[sid].sites[i]].line == line)
            return &p->sites[p->subs[sid].sites[i]];
    return NULL;
}

static void sites_follow_hide(void **state)
{
    (void)state;
    nytp_profile *p = sites_profile();
    nytp_calltree *t = tree_of(sites_tree, sizeof sites_tree / sizeof *sites_tree);
    nytp_view *v = view_of(NYTP_VIEW_HIDE, "^Moose::");
    assert_int_equal(nytp_view_apply_sites(v, p, t), NYTP_OK);
    /* the calls to the hidden h are calls to x, on the same lines, shared
     * 3:1 as the profile's calls to h */
    const nytp_site *x11 = site_at(p, "main::x", 11), *x12 = site_at(p, "main::x", 12);
    assert_non_null(x11);
    assert_non_null(x12);
    assert_int_equal(x11->count, 6);
    assert_int_equal(x12->count, 2);
    assert_true(fabs(x11->incl - 4) < 1e-12 && fabs(x12->incl - 4.0 / 3) < 1e-12);
    assert_true(fabs(x11->excl - 3) < 1e-12 && fabs(x12->excl - 1) < 1e-12);
    assert_true(x11->view & NYTP_SITE_SHARED);
    assert_int_equal(x11->n_callers, 1);
    assert_string_equal(nytp_profile_str(p, x11->callers[0]), "main::c");
    /* h's exclusive time is c's own, at those lines */
    const nytp_site *h11 = site_at(p, "Moose::h", 11), *h12 = site_at(p, "Moose::h", 12);
    assert_non_null(h11);
    assert_non_null(h12);
    assert_true(h11->view & NYTP_SITE_HIDDEN);
    assert_int_equal(h11->count, 0);
    assert_true(fabs(h11->incl - 2) < 1e-12 && fabs(h12->incl - 2.0 / 3) < 1e-12);
    assert_true(fabs(x11->incl + h11->incl - 6) < 1e-12); /* the line's time stays */
    /* h's own calls go; c's excl holds h's; y's site is as it was; z's,
     * not in the tree, stays and says so */
    assert_null(site_at(p, "main::x", 31));
    const nytp_site *c2 = site_at(p, "main::c", 2), *y13 = site_at(p, "main::y", 13), *z14 = site_at(p, "main::z", 14);
    assert_non_null(c2);
    assert_true(fabs(c2->excl - 5) < 1e-12 && fabs(c2->incl - 10) < 1e-12);
    assert_int_equal(c2->count, 1);
    assert_non_null(y13);
    assert_int_equal(y13->count, 2);
    assert_int_equal(y13->rec_depth, 3);
    assert_true(y13->reci == 0.25 && y13->view == 0);
    assert_non_null(z14);
    assert_true(z14->view & NYTP_SITE_UNVIEWED);
    /* the lists follow: c now calls x, y, z and (hidden) h */
    uint32_t cid = nytp_profile_sub_by_name(p, "main::c", 7), hid = nytp_profile_sub_by_name(p, "Moose::h", 8);
    assert_int_equal(p->subs[cid].n_callees, 6);
    assert_int_equal(p->subs[hid].n_callees, 0);
    assert_int_equal(p->files[1].n_sites, 7);
    nytp_view_free(v);
    nytp_calltree_free(t);
    nytp_profile_free(p);
}

static void sites_follow_focus(void **state)
{
    (void)state;
    nytp_profile *p = sites_profile();
    nytp_calltree *t = tree_of(sites_tree, sizeof sites_tree / sizeof *sites_tree);
    nytp_view *v = view_of(NYTP_VIEW_FOCUS, "^main::y$");
    assert_int_equal(nytp_view_apply_sites(v, p, t), NYTP_OK);
    /* only the stacks through y: c's call keeps the time below it that is
     * y's, no calls of its own (the frame above the focus) */
    const nytp_site *c2 = site_at(p, "main::c", 2);
    assert_non_null(c2);
    assert_int_equal(c2->count, 0);
    assert_true(fabs(c2->incl - 1) < 1e-12);
    assert_null(site_at(p, "Moose::h", 11));
    assert_null(site_at(p, "main::x", 31));
    assert_non_null(site_at(p, "main::y", 13));
    assert_int_equal(site_at(p, "main::y", 13)->count, 2);
    nytp_view_free(v);
    nytp_calltree_free(t);
    nytp_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hide_moves_time_to_callers),
        cmocka_unit_test(focus_keeps_paths_through_a_match),
        cmocka_unit_test(ignore_drops_paths_through_a_match),
        cmocka_unit_test(patterns_repeat_and_combine),
        cmocka_unit_test(sub_totals_count_a_path_once),
        cmocka_unit_test(file_patterns_match_subs_by_file),
        cmocka_unit_test(recursion_folds_after_filtering),
        cmocka_unit_test(bad_expression_is_a_usage_error),
        cmocka_unit_test(sites_follow_hide),
        cmocka_unit_test(sites_follow_focus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

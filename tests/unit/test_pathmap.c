/* test_pathmap.c — names across checkouts (cmd/pathmap.c, compiled in
 * here with the command helpers it uses): --strip and --map on file
 * names, the file part of sub and eval names found and rewritten however
 * deeply evals nest, eval numbers made 0, and the common path suffix. */
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#include "../../cmd/cli.c"
#include "../../cmd/strmap.c"
#include "../../cmd/pathmap.c"

static pathmap *made(const char *const *strip, size_t ns, const char *const *map, size_t nm,
                     pathmap_opts *o)
{
    *o = (pathmap_opts){.strip = strip, .n_strip = ns, .map = map, .n_map = nm};
    pathmap *m;
    assert_int_equal(pathmap_new(&m, o), NYTP_OK);
    assert_int_equal(pathmap_finish(m), NYTP_OK);
    return m;
}

static void want_file(pathmap *m, int side, const char *name, const char *key)
{
    size_t len;
    const char *k = pathmap_file_key(m, side, name, strlen(name), &len);
    assert_non_null(k);
    assert_int_equal(len, strlen(key));
    assert_memory_equal(k, key, len);
}

static void want_sub(pathmap *m, int side, const char *name, const char *key)
{
    size_t len;
    const char *k = pathmap_sub_key(m, side, name, strlen(name), &len);
    assert_non_null(k);
    assert_int_equal(len, strlen(key));
    assert_memory_equal(k, key, len);
}

static void strip_and_map(void **state)
{
    (void)state;
    static const char *const strip[] = {"/ci/ws-1", "/ci/ws-2/"};
    static const char *const map[] = {"/ci/a/=/ci/b", "/ci/a/lib=/elsewhere/", "/=/x"};
    pathmap_opts o;
    pathmap *m = made(strip, 2, map, 3, &o);
    /* --strip: either side, whole directories, the longest */
    want_file(m, 0, "/ci/ws-1/lib/M.pm", "lib/M.pm");
    want_file(m, 1, "/ci/ws-2/lib/M.pm", "lib/M.pm");
    want_file(m, 1, "/ci/ws-12/lib/M.pm", "/ci/ws-12/lib/M.pm");
    want_file(m, 0, "/ci/ws-1", "/ci/ws-1");
    /* --map: BASE only, the longest OLD, with or without '/' */
    want_file(m, 0, "/ci/a/bin/x.pl", "/ci/b/bin/x.pl");
    want_file(m, 0, "/ci/a/lib/M.pm", "/elsewhere/M.pm");
    want_file(m, 1, "/ci/a/bin/x.pl", "/ci/a/bin/x.pl");
    want_file(m, 0, "/ci/ab/x.pl", "/ci/ab/x.pl");
    want_file(m, 0, "/usr/lib/x.pm", "/usr/lib/x.pm"); /* "/" maps nothing */
    pathmap_free(m);
}

static void names(void **state)
{
    (void)state;
    static const char *const strip[] = {"/ci/ws-1"};
    pathmap_opts o;
    pathmap *m = made(strip, 1, NULL, 0, &o);
    want_sub(m, 0, "M::__ANON__[/ci/ws-1/lib/M.pm:4]", "M::__ANON__[lib/M.pm:4]");
    want_sub(m, 0, "M::__ANON__[(eval 12)[/ci/ws-1/lib/M.pm:8]:1]", "M::__ANON__[(eval 0)[lib/M.pm:8]:1]");
    want_sub(m, 0, "main::foo", "main::foo");
    want_sub(m, 0, "main::BEGIN@3", "main::BEGIN@3");
    want_sub(m, 0, "M::x[abc]", "M::x[abc]");            /* no ":LINE]" */
    want_sub(m, 0, "M::x[:5]", "M::x[:5]");              /* no file */
    want_sub(m, 0, "M::x[/ci/ws-1/a[1].pl:5]", "M::x[a[1].pl:5]"); /* brackets in the file */
    want_file(m, 0, "(eval 3)[(re_eval 2)[/ci/ws-1/x.pl:5]:1]", "(eval 0)[(re_eval 0)[x.pl:5]:1]");
    want_file(m, 0, "/ci/ws-1/a[1].pl", "a[1].pl");      /* a file's own brackets */
    want_file(m, 0, "(eval 7)[-e:1]", "(eval 0)[-e:1]");
    /* deep nesting: linear, and the file found */
    size_t k, w;
    char *deep = nested_evals(20000, "/ci/ws-1/x.pl:3]", 1, &k), *want = nested_evals(20000, "x.pl:3]", 0, &w);
    assert_non_null(deep);
    assert_non_null(want);
    want_file(m, 0, deep, want);
    free(deep);
    free(want);
    pathmap_free(m);
}

static void suffixes(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b;
        size_t n;
    } cases[] = {
        {"/a/lib/M.pm", "/b/lib/M.pm", 8}, {"lib/M.pm", "/x/lib/M.pm", 8},
        {"M.pm", "XM.pm", 0},              {"/a/M.pm", "/b/N.pm", 0},
        {"/a/x/M.pm", "/b/x/M.pm", 6},     {"M.pm", "/x/M.pm", 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(common_suffix(cases[i].a, strlen(cases[i].a), cases[i].b, strlen(cases[i].b)),
                         cases[i].n);
        assert_int_equal(common_suffix(cases[i].b, strlen(cases[i].b), cases[i].a, strlen(cases[i].a)),
                         cases[i].n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strip_and_map),
        cmocka_unit_test(names),
        cmocka_unit_test(suffixes),
    };
    return cmocka_run_group_tests_name("pathmap", tests, NULL, NULL);
}

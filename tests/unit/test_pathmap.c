/* test_pathmap.c — names across checkouts (cmd/compare/pathmap.c, compiled in
 * here with the command helpers it uses): --strip and --map on file
 * names, the file part of sub and eval names found and rewritten however
 * deeply evals nest, eval numbers made 0, and the common path suffix. */
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#include "../../cmd/common/cli_msg.c"
#include "../../cmd/common/cli_parse.c"
#include "../../cmd/common/cli_output.c"
#include "../../cmd/common/cli_grow.c"
#include "../../cmd/common/cli_input.c"
#include "../../cmd/common/cli_outdir.c"
#include "../../cmd/common/cli_progress.c"
#include "../../cmd/common/strmap.c"
#include "../../cmd/compare/pathmap.c"

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

/* Files only one side has pair by their longest common suffix of whole
 * components, when that suffix is theirs alone on both sides; the pair
 * takes the suffix as its key. */
static pathmap *paired(const char *const *base, size_t nb, const char *const *new_, size_t nn)
{
    static pathmap_opts o; /* the map keeps a pointer to it */
    pathmap *m;
    assert_int_equal(pathmap_new(&m, &o), NYTP_OK);
    for (size_t i = 0; i < nb; i++)
        assert_int_not_equal(strmap_add(&m->files[0], base[i], (uint32_t)strlen(base[i]), false, NULL),
                             NYTP_NONE);
    for (size_t i = 0; i < nn; i++)
        assert_int_not_equal(strmap_add(&m->files[1], new_[i], (uint32_t)strlen(new_[i]), false, NULL),
                             NYTP_NONE);
    assert_int_equal(pathmap_finish(m), NYTP_OK);
    return m;
}

static void suffixes(void **state)
{
    (void)state;
    /* one candidate each: the suffix, at a component's start only */
    static const char *const b1[] = {"/a/lib/M.pm", "/a/x/N.pm", "/a/XM.pm"};
    static const char *const n1[] = {"/b/lib/M.pm", "/b/y/x/N.pm", "/b/M.pm"};
    pathmap *m = paired(b1, 3, n1, 3);
    want_file(m, 0, "/a/lib/M.pm", "lib/M.pm");
    want_file(m, 1, "/b/lib/M.pm", "lib/M.pm");
    want_file(m, 0, "/a/x/N.pm", "x/N.pm");
    want_file(m, 1, "/b/y/x/N.pm", "x/N.pm");
    want_file(m, 0, "/a/XM.pm", "/a/XM.pm"); /* "M.pm" is no whole component of it */
    want_file(m, 1, "/b/M.pm", "/b/M.pm");
    assert_int_equal(pathmap_paired(m), 2);
    pathmap_free(m);

    /* two of one side at the same length: neither pairs there; once the
     * longer suffix has paired one of them, the other pairs too */
    static const char *const b2[] = {"/a/p/lib/M.pm", "/a/q/lib/M.pm"};
    static const char *const n2[] = {"/b/lib/M.pm"};
    m = paired(b2, 2, n2, 1);
    want_file(m, 1, "/b/lib/M.pm", "/b/lib/M.pm");
    assert_int_equal(pathmap_paired(m), 0);
    pathmap_free(m);
    static const char *const n3[] = {"/c/lib/M.pm", "/c/q/lib/M.pm"};
    m = paired(b2, 2, n3, 2);
    want_file(m, 0, "/a/q/lib/M.pm", "q/lib/M.pm");
    want_file(m, 1, "/c/q/lib/M.pm", "q/lib/M.pm");
    want_file(m, 0, "/a/p/lib/M.pm", "lib/M.pm");
    want_file(m, 1, "/c/lib/M.pm", "lib/M.pm");
    assert_int_equal(pathmap_paired(m), 2);
    pathmap_free(m);

    /* a relative name and an absolute one ("M.pm", "/x/M.pm") */
    static const char *const b4[] = {"M.pm"};
    static const char *const n4[] = {"/x/M.pm"};
    m = paired(b4, 1, n4, 1);
    want_file(m, 0, "M.pm", "M.pm");
    want_file(m, 1, "/x/M.pm", "M.pm");
    pathmap_free(m);
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

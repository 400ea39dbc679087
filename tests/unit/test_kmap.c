/* test_kmap.c — the library's shared hash index and array growth. */
#include <stdlib.h>

#include "helpers.h"
#include "../../libformat/kmap.h"

/* Many pairs that differ only in one half, read back after every growth;
 * absent pairs stay absent; a second put replaces the value. */
static void pairs_round_trip(void **state)
{
    (void)state;
    kmap m = {0};
    assert_int_equal(kmap_get(&m, 1, 2), KMAP_NONE);
    const uint32_t n = 50000;
    for (uint32_t i = 0; i < n; i++) {
        assert_true(kmap_put(&m, i % 7, i, i * 3));
        assert_true(kmap_put(&m, i, 0, i));
    }
    assert_int_equal(m.n, 2 * n - 1);  /* (0, 0) was put twice */
    for (uint32_t i = 1; i < n; i++) {
        assert_int_equal(kmap_get(&m, i % 7, i), i * 3);
        assert_int_equal(kmap_get(&m, i, 0), i);
        assert_int_equal(kmap_get(&m, i % 7 + 7, i), KMAP_NONE);
        assert_int_equal(kmap_get(&m, i, 1), i == 1 ? 3 : KMAP_NONE);
    }
    assert_true(kmap_put(&m, 3, 99, 5));
    assert_int_equal(kmap_get(&m, 3, 99), 5);
    assert_true((m.nslots & (m.nslots - 1)) == 0 && (uint64_t)m.n * 4 <= (uint64_t)m.nslots * 3);
    kmap_free(&m);
    assert_int_equal(m.nslots, 0);
    assert_int_equal(kmap_get(&m, 0, 0), KMAP_NONE);
}

static void arrays_grow(void **state)
{
    (void)state;
    uint32_t *v = NULL, n = 0, cap = 0;
    for (uint32_t i = 0; i < 1000; i++) {
        assert_true(kmap_grow_array((void **)&v, n, &cap, sizeof *v));
        assert_true(cap > n);
        v[n++] = i;
    }
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(v[i], i);
    uint32_t big = UINT32_MAX / 2;
    assert_false(kmap_grow_array((void **)&v, big, &big, sizeof *v));
    free(v);
}

/* Index tables grow to hold any index set, with the gaps empty. */
/* Doublings of a 32-bit capacity stop at KMAP_MAX_CAP instead of
 * wrapping to 0 (issue 21, item 3), and refuse what is beyond it. */
static void capacities_never_wrap(void **state)
{
    (void)state;
    assert_int_equal(kmap_grown_cap(0, 1), 8);
    assert_int_equal(kmap_grown_cap(16, 17), 32);
    assert_int_equal(kmap_grown_cap(100, 50), 100);
    assert_int_equal(kmap_grown_cap(1u << 31, (1ull << 31) + 1), KMAP_MAX_CAP);
    assert_int_equal(kmap_grown_cap(3u << 30, (3ull << 30) + 1), KMAP_MAX_CAP);
    assert_int_equal(kmap_grown_cap(KMAP_MAX_CAP, KMAP_MAX_CAP), KMAP_MAX_CAP);
    assert_int_equal(kmap_grown_cap(KMAP_MAX_CAP, (uint64_t)KMAP_MAX_CAP + 1), 0);
    assert_int_equal(kmap_grown_cap(0, UINT64_MAX), 0);
    /* refused without touching the array */
    uint32_t *v = NULL, cap = 0;
    assert_true(kmap_grow_to((void **)&v, &cap, 3, sizeof *v));
    assert_int_equal(cap, 8);
    uint32_t *was = v;
    assert_false(kmap_grow_to((void **)&v, &cap, (uint64_t)UINT32_MAX + 5, sizeof *v));
    assert_ptr_equal(v, was);
    assert_int_equal(cap, 8);
    free(v);
}

static void index_tables(void **state)
{
    (void)state;
    uint32_t *v = NULL, n = 0;
    assert_true(kmap_index_set(&v, &n, 3, 30));
    assert_true(n > 3);
    assert_true(kmap_index_set(&v, &n, 1000, 7));
    assert_true(n > 1000 && (n & (n - 1)) == 0);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(v[i], i == 3 ? 30 : i == 1000 ? 7 : KMAP_NONE);
    assert_true(kmap_index_set(&v, &n, 3, 31));
    assert_int_equal(v[3], 31);
    free(v);
}

/* Number maps: the numbers near the others in the table, those far
 * beyond it (the largest a u32 holds included) in the hash, so the table
 * stays small; every number reads back what was set, until cleared. */
static void number_maps(void **state)
{
    (void)state;
    kidx x = {0};
    assert_int_equal(kidx_get(&x, 0), KMAP_NONE);
    assert_true(kidx_set(&x, 0, 5));
    assert_true(kidx_set(&x, 7, 6));
    assert_true(kidx_set(&x, 4194304, 7));
    assert_true(kidx_set(&x, UINT32_MAX, 8));
    assert_true(kidx_set(&x, 100, 9));
    assert_true(x.n <= 1024);
    assert_int_equal(kidx_get(&x, 0), 5);
    assert_int_equal(kidx_get(&x, 7), 6);
    assert_int_equal(kidx_get(&x, 4194304), 7);
    assert_int_equal(kidx_get(&x, UINT32_MAX), 8);
    assert_int_equal(kidx_get(&x, 100), 9);
    assert_int_equal(kidx_get(&x, 8), KMAP_NONE);
    assert_int_equal(kidx_get(&x, 4194305), KMAP_NONE);
    /* numbers that come in order fill the table */
    for (uint32_t i = 1; i < 200000; i++)
        assert_true(kidx_set(&x, i, i));
    assert_true(x.n >= 200000 && x.n <= 1u << 19);
    assert_int_equal(kidx_get(&x, 199999), 199999);
    assert_int_equal(kidx_get(&x, 4194304), 7);
    kidx_clear(&x);
    assert_int_equal(kidx_get(&x, 7), KMAP_NONE);
    assert_int_equal(kidx_get(&x, 4194304), KMAP_NONE);
    assert_true(kidx_set(&x, 4194304, 1));
    assert_int_equal(kidx_get(&x, 4194304), 1);
    kidx_free(&x);
    assert_int_equal(kidx_get(&x, 4194304), KMAP_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pairs_round_trip),
        cmocka_unit_test(arrays_grow),
        cmocka_unit_test(capacities_never_wrap),
        cmocka_unit_test(index_tables),
        cmocka_unit_test(number_maps),
    };
    return cmocka_run_group_tests_name("kmap", tests, NULL, NULL);
}

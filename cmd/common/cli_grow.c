/* cli_grow.c — arrays that grow by doubling, with overflow checked. */
#include <stdlib.h>
#include <string.h>

#include "cli_impl.h"

/* The doubling of cap (from 16) that holds need elements, at most max; 0
 * when none does or its bytes would not fit in a size_t. */
static size_t grown_cap(size_t cap, size_t need, size_t max, size_t elem)
{
    if (need > max || (elem && need > SIZE_MAX / elem))
        return 0;
    size_t n = cap ? cap : 16;
    while (n < need)
        n = n > max / 2 ? max : n * 2;
    if (elem && n > SIZE_MAX / elem)
        n = need;
    return n;
}

/* Grow *v (room for *cap) to hold need elements, at most max. */
static bool grow_to(void **v, size_t need, size_t *cap, size_t elem, size_t max)
{
    if (need <= *cap)
        return true;
    size_t n = grown_cap(*cap, need, max, elem);
    void *p = n ? realloc(*v, n * elem) : NULL;
    if (!p)
        return false;
    *v = p;
    *cap = n;
    return true;
}

bool cli_grow(void **v, size_t need, uint32_t *cap, size_t elem)
{
    size_t c = *cap;
    bool ok = grow_to(v, need, &c, elem, UINT32_MAX);
    *cap = (uint32_t)c;
    return ok;
}

bool cli_grow_size(void **v, size_t need, size_t *cap, size_t elem)
{
    return grow_to(v, need, cap, elem, SIZE_MAX);
}

bool cli_grow_zeroed(void **v, size_t need, uint32_t *cap, size_t elem)
{
    uint32_t was = *cap;
    if (!cli_grow(v, need, cap, elem))
        return false;
    memset((char *)*v + (size_t)was * elem, 0, (size_t)(*cap - was) * elem);
    return true;
}

/* stmtcount.h — Devel::NYTProf's statement count rule, shared by the
 * model and merging (not public).
 *
 * A statement adds 1 to its line's count; after k DISCOUNT chunks it adds
 * 1 - k instead (0 after one, negative after several), which is what
 * Devel::NYTProf's loader does with consecutive DISCOUNTs (it warns
 * "multiple statement discount").  k is a 64-bit count: a profile may
 * hold more than 2^31 DISCOUNTs in a row. */
#ifndef NYTP_STMTCOUNT_H
#define NYTP_STMTCOUNT_H

#include <stdint.h>

static inline int64_t stmt_count_delta(uint64_t discounts)
{
    /* 1 - k, exact up to k = 2^63; beyond, the most negative delta */
    return discounts > (uint64_t)INT64_MAX ? INT64_MIN : 1 - (int64_t)discounts;
}

#endif

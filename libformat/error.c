/* error.c — filling and describing nytp_error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nytp/error.h"

int nytp_error_set(nytp_error *err, int status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->status = status;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *nytp_status_name(int status)
{
    switch (status) {
    case NYTP_OK: return "ok";
    case NYTP_END: return "end";
    case NYTP_E_IO: return "I/O error";
    case NYTP_E_FORMAT: return "format error";
    case NYTP_E_TRUNCATED: return "truncated";
    case NYTP_E_VERSION: return "unsupported version";
    case NYTP_E_NOMEM: return "out of memory";
    case NYTP_E_USAGE: return "invalid use";
    default: return "error";
    }
}

const char *nytp_error_where(const nytp_error *err, char *buf, size_t size)
{
    if (err->inflated)
        snprintf(buf, size,
                 "offset %llu of the inflated data (zlib stream starts at file offset %llu), chunk %llu",
                 (unsigned long long)err->offset, (unsigned long long)err->deflate_start,
                 (unsigned long long)err->chunk);
    else
        snprintf(buf, size, "offset %llu, chunk %llu", (unsigned long long)err->offset,
                 (unsigned long long)err->chunk);
    return buf;
}

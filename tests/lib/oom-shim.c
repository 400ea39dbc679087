/* oom-shim.c — a library preloaded by tests/47-oom.t into perl running
 * Devel::NYTP, or into nytp: the Nth allocation that code of one object
 * makes (malloc, calloc, realloc, strdup, called from that object itself,
 * libnytpformat included) fails; those of other objects (perl's, libc's)
 * never do.
 *
 *   OOM_OBJ=PART  the object: the one whose file name holds PART
 *                 (default "/NYTP.so"; "/build/nytp" for the nytp binary)
 *   OOM_AT=N      the allocation to fail (none if unset or 0)
 *   OOM_COUNT=1   at exit, "nytp-oom: N allocations" on stderr
 *
 * When the failure happens it says "nytp-oom: failed allocation N" on
 * stderr.  The real allocator is glibc's, under its __libc_ names (no
 * dlsym, which itself allocates). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);

static long fail_at = -1; /* -1: not read yet */
static long seen;

static int from_profiler(void *caller)
{
    static const char *obj;
    if (!obj) {
        obj = getenv("OOM_OBJ");
        if (!obj || !*obj)
            obj = "/NYTP.so";
    }
    Dl_info info;
    return dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, obj);
}

static void say(const char *what, long n)
{
    char line[64];
    int len = snprintf(line, sizeof line, "nytp-oom: %s %ld\n", what, n);
    if (len > 0)
        (void)!write(2, line, (size_t)len);
}

static int fails(void *caller)
{
    if (fail_at < 0) {
        const char *at = getenv("OOM_AT");
        fail_at = at ? atol(at) : 0;
    }
    if (!from_profiler(caller))
        return 0;
    if (++seen != fail_at)
        return 0;
    say("failed allocation", seen);
    return 1;
}

void *malloc(size_t n)
{
    return fails(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    return fails(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    return fails(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}

char *strdup(const char *s)
{
    if (fails(__builtin_return_address(0)))
        return NULL;
    size_t n = strlen(s) + 1;
    char *copy = __libc_malloc(n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

__attribute__((destructor)) static void count_at_exit(void)
{
    const char *count = getenv("OOM_COUNT");
    if (count && *count == '1')
        say("allocations", seen);
}

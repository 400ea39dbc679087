/* out.c — buffered byte output to a file descriptor or memory, with an
 * optional switch to zlib deflate, and atomic replacement of files.  The
 * deflating itself (on a writer thread unless threads are off) is
 * deflater.c's. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <zlib.h>

#include "deflater.h"
#include "nytp/io.h"
#include "out_impl.h"

static int fail(nytp_out *o, int status, const char *fmt, const char *detail)
{
    if (o->err.status == 0)
        nytp_error_set(&o->err, status, fmt, detail);
    out_sync_limit(o);
    return o->err.status;
}

static int alloc_out(nytp_out **op, nytp_error *err)
{
    nytp_out *o = calloc(1, sizeof *o);
    if (!o)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    o->cap = BUF_SIZE;
    o->ob.buf = malloc(o->cap);
    if (!o->ob.buf) {
        free(o);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    out_sync_limit(o);
    o->fd = -1;
    const char *t = getenv("NYTP_THREADS");
    o->threads = !(t && strcmp(t, "0") == 0);
#ifdef NYTP_HAVE_ISAL
    const char *d = getenv("NYTP_DEFLATE");
    o->isal = d && strcmp(d, "isal") == 0;
#endif
    *op = o;
    return NYTP_OK;
}

int nytp_out_open_fd(nytp_out **op, int fd, bool close_fd, nytp_error *err)
{
    int st = alloc_out(op, err);
    if (st < 0)
        return st;
    (*op)->fd = fd;
    (*op)->close_fd = close_fd;
    return NYTP_OK;
}

int nytp_out_open_mem(nytp_out **op, nytp_error *err)
{
    return alloc_out(op, err);
}

/* Whether the symbolic link at path lives in /proc (/proc/self/fd/N, and
 * /dev/fd/N and /dev/stdout lead there): its target names an open file,
 * which may be a pipe, not a path to follow. */
static bool in_procfs(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct statfs fs;
    return statfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

char *nytp_path_follow_links(const char *path, bool *magic, nytp_error *err)
{
    char *p = strdup(path);
    *magic = false;
    if (!p) {
        nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
        return NULL;
    }
    for (int hops = 0;; hops++) {
        struct stat sb;
        if (lstat(p, &sb) < 0 || !S_ISLNK(sb.st_mode))
            return p; /* missing (created there), or what the links lead to */
        if (in_procfs(p)) {
            *magic = true;
            return p;
        }
        if (hops == 40) {
            free(p);
            nytp_error_set(err, NYTP_E_IO, "%s", strerror(ELOOP));
            return NULL;
        }
        char link[PATH_MAX];
        ssize_t n = readlink(p, link, sizeof link - 1);
        if (n < 0 || (size_t)n >= sizeof link - 1) {
            int e = n < 0 ? errno : ENAMETOOLONG;
            free(p);
            nytp_error_set(err, NYTP_E_IO, "cannot follow the link: %s", strerror(e));
            return NULL;
        }
        link[n] = 0;
        /* a relative target is relative to the link's directory */
        const char *slash = strrchr(p, '/');
        size_t dirlen = link[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1;
        char *next = malloc(dirlen + (size_t)n + 1);
        if (!next) {
            free(p);
            nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
            return NULL;
        }
        memcpy(next, p, dirlen);
        memcpy(next + dirlen, link, (size_t)n + 1);
        free(p);
        p = next;
    }
}

/* A temporary file beside target (same directory, so rename is atomic):
 * "target.tmpXXXXXX", or ".nytp-tmpXXXXXX" when that name is too long. */
static int make_temp(const char *target, char **tmp_out)
{
    size_t n = strlen(target) + 32;
    char *tmp = malloc(n);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(tmp, n, "%s.tmpXXXXXX", target);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0 && errno == ENAMETOOLONG) {
        const char *slash = strrchr(target, '/');
        int dl = slash ? (int)(slash - target) + 1 : 0;
        snprintf(tmp, n, "%.*s.nytp-tmpXXXXXX", dl, target);
        fd = mkostemp(tmp, O_CLOEXEC);
    }
    if (fd < 0) {
        int e = errno;
        free(tmp);
        errno = e;
        return -1;
    }
    *tmp_out = tmp;
    return fd;
}

/* N when path names one of this process's own descriptors
 * (/dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N),
 * else -1. */
static int own_fd(const char *path)
{
    char self[64];
    snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
    const char *num = NULL;
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs && !num; i++)
        if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
            num = path + strlen(dirs[i]);
    if (!num && strncmp(path, self, strlen(self)) == 0)
        num = path + strlen(self);
    if (!num || *num < '0' || *num > '9')
        return -1;
    char *end;
    long n = strtol(num, &end, 10);
    return *end || n > 1 << 30 ? -1 : (int)n;
}

/* Open what path names, as it is, for writing: a device, a FIFO, a
 * socket, an open file of /proc.  No temporary, no rename. */
static int open_direct(nytp_out **op, const char *path, bool magic, nytp_error *err)
{
    /* One of our own descriptors (/dev/stdout) is shared, not reopened, as
     * the shell does: its offset and O_APPEND stay, so '>>' appends. */
    int own = magic ? own_fd(path) : -1;
    if (own >= 0) {
        int fd = fcntl(own, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            return nytp_error_set(err, NYTP_E_IO, "cannot open: %s", strerror(errno));
        int st = nytp_out_open_fd(op, fd, true, err);
        if (st < 0)
            close(fd);
        return st;
    }
    /* O_TRUNC matters only for a regular file behind another process's
     * /proc/PID/fd/N, where it does what the shell's '>' does. */
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | (magic ? O_TRUNC : O_NOFOLLOW));
    if (fd < 0)
        return nytp_error_set(err, NYTP_E_IO, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (!magic && (fstat(fd, &sb) < 0 || S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode))) {
        close(fd);
        return nytp_error_set(err, NYTP_E_IO, "changed while it was being opened");
    }
    int st = nytp_out_open_fd(op, fd, true, err);
    if (st < 0)
        close(fd);
    return st;
}

int nytp_out_open_file(nytp_out **op, const char *path, unsigned flags, nytp_error *err)
{
    if (strcmp(path, "-") == 0)
        return nytp_out_open_fd(op, STDOUT_FILENO, false, err);
    if (!(flags & NYTP_OUT_ATOMIC)) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0)
            return nytp_error_set(err, NYTP_E_IO, "cannot create: %s", strerror(errno));
        int st = nytp_out_open_fd(op, fd, true, err);
        if (st < 0)
            close(fd);
        return st;
    }

    /* Links are followed to the file they lead to, which is replaced in
     * its own directory, so the links stay links. */
    bool magic;
    char *target = nytp_path_follow_links(path, &magic, err);
    if (!target)
        return err->status;
    struct stat sb;
    bool exists = lstat(target, &sb) == 0;
    if (!exists && errno != ENOENT) {
        int e = errno;
        free(target);
        return nytp_error_set(err, NYTP_E_IO, "cannot create: %s", strerror(e));
    }
    if (magic || (exists && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))) {
        int st = open_direct(op, target, magic, err);
        free(target);
        return st;
    }
    if (exists && S_ISDIR(sb.st_mode)) {
        free(target);
        return nytp_error_set(err, NYTP_E_IO, "is a directory");
    }
    /* Replacing a file needs the right to write it, as '>' would. */
    if (exists && faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) < 0) {
        int e = errno;
        free(target);
        return nytp_error_set(err, NYTP_E_IO, "cannot write: %s", strerror(e));
    }
    char *tmp = NULL;
    int fd = make_temp(target, &tmp);
    if (fd < 0) {
        int e = errno;
        free(target);
        return nytp_error_set(err, NYTP_E_IO, "cannot create: %s", strerror(e));
    }
    if (exists) {
        /* The new file takes the old one's place: its owner (when we may)
         * and its permissions. */
        if ((sb.st_uid != geteuid() || sb.st_gid != getegid()) &&
            fchown(fd, sb.st_uid, sb.st_gid) < 0) {
            /* not ours to give away; the permissions still apply */
        }
        fchmod(fd, sb.st_mode & 0777);
    } else {
        /* Honour the umask as a plain open() would. */
        mode_t um = umask(0);
        umask(um);
        fchmod(fd, 0666 & ~um);
    }
    int st = nytp_out_open_fd(op, fd, true, err);
    if (st < 0) {
        close(fd);
        unlink(tmp);
        free(tmp);
        free(target);
        return st;
    }
    (*op)->tmp_path = tmp;
    (*op)->path = target;
    return NYTP_OK;
}

const char *nytp_out_temp_path(const nytp_out *o) { return o->tmp_path; }

/* fd, moved to NYTP_OUT_GUARD_FD_MIN or above (close-on-exec) where that
 * is possible; else fd itself. */
static int move_high(int fd)
{
    int high = fcntl(fd, F_DUPFD_CLOEXEC, NYTP_OUT_GUARD_FD_MIN);
    if (high < 0)
        return fd;
    close(fd);
    return high;
}

int nytp_out_guard_fd(nytp_out *o, const char *path, nytp_error *err)
{
    struct stat sb;
    if (o->fd < 0 || fstat(o->fd, &sb) < 0 || !S_ISREG(sb.st_mode))
        return NYTP_OK;
    char *copy = strdup(path);
    if (!copy)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    free(o->guard_path);
    o->guard_path = copy;
    o->guard_dev = sb.st_dev;
    o->guard_ino = sb.st_ino;
    off_t at = lseek(o->fd, 0, SEEK_CUR);
    o->sunk = at > 0 ? (uint64_t)at : 0;
    if (o->close_fd && o->fd < NYTP_OUT_GUARD_FD_MIN)
        o->fd = move_high(o->fd);
    return NYTP_OK;
}

/* A guarded descriptor that is no longer the guarded file. */
static bool guard_lost(const nytp_out *o)
{
    struct stat sb;
    return o->lost
           || (o->guard_path
               && (fstat(o->fd, &sb) < 0 || sb.st_dev != o->guard_dev
                   || sb.st_ino != o->guard_ino));
}

/* The guarded descriptor was closed by someone else (and perhaps its
 * number reused): go on in the file under its path, if it is still the
 * same file, at the offset written so far; the old number is left alone.
 * Runs where the sink runs. */
static int guard_reopen(nytp_out *o, nytp_error *err)
{
    /* non-blocking: what is there now may be a FIFO with no reader */
    int fd = open(o->guard_path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_dev == o->guard_dev && sb.st_ino == o->guard_ino
        && lseek(fd, (off_t)o->sunk, SEEK_SET) == (off_t)o->sunk
        && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0) {
        o->fd = move_high(fd);
        o->close_fd = true;
        return NYTP_OK;
    }
    if (fd >= 0)
        close(fd);
    o->lost = true; /* nothing more is written, nor closed */
    return nytp_error_set(err, NYTP_E_IO,
                          "its file descriptor was closed by the program, and %s is not the "
                          "file it was any more",
                          o->guard_path);
}

/* Hand len bytes at p to the destination (file or memory); a failure is
 * set in *err.  Runs on the deflater's writer thread when there is one,
 * so it touches only the destination, never o->err. */
static int sink_to(nytp_out *o, const uint8_t *p, size_t len, nytp_error *err)
{
    if (len == 0)
        return NYTP_OK;
    if (o->lost)
        return nytp_error_set(err, NYTP_E_IO, "its file descriptor was lost");
    if (o->fd < 0) {
        if (o->mem_len + len > o->mem_cap) {
            size_t ncap = o->mem_cap ? o->mem_cap * 2 : BUF_SIZE;
            while (ncap < o->mem_len + len)
                ncap *= 2;
            uint8_t *n = realloc(o->mem, ncap);
            if (!n)
                return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
            o->mem = n;
            o->mem_cap = ncap;
        }
        memcpy(o->mem + o->mem_len, p, len);
        o->mem_len += len;
        return NYTP_OK;
    }
    if (guard_lost(o) && guard_reopen(o, err) < 0)
        return err->status;
    while (len) {
        ssize_t n = write(o->fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return nytp_error_set(err, NYTP_E_IO, "write failed: %s", strerror(errno));
        }
        p += n;
        len -= (size_t)n;
        o->sunk += (uint64_t)n;
    }
    return NYTP_OK;
}

static int deflater_sink(void *ctx, const uint8_t *p, size_t len, nytp_error *err)
{
    return sink_to(ctx, p, len, err);
}

static int sink(nytp_out *o, const uint8_t *p, size_t len)
{
    nytp_error e;
    if (sink_to(o, p, len, &e) < 0 && o->err.status == 0)
        o->err = e;
    out_sync_limit(o);
    return o->err.status;
}

/* Push o->ob.buf through deflate (with flush mode) to the sink. */
static int deflate_buf(nytp_out *o, int flush)
{
    nytp_error e;
    int st = deflater_push(o->def, &o->ob.buf, &o->cap, o->ob.len, flush, &e);
    o->ob.len = 0;
    if (st < 0 && o->err.status == 0)
        o->err = e;
    out_sync_limit(o);
    return o->err.status;
}

static int drain(nytp_out *o)
{
    if (o->err.status)
        return o->err.status;
    if (o->def)
        return deflate_buf(o, Z_NO_FLUSH);
    int st = sink(o, o->ob.buf, o->ob.len);
    o->ob.len = 0;
    return st;
}

/* Leaves errno as it was: a profiler writes between a program's system
 * call and its look at errno.  (A failure's message is made when it
 * happens.) */
uint8_t *nytp_out_reserve(nytp_out *o, size_t n)
{
    if (o->err.status)
        return NULL;
    if (o->cap - o->ob.len >= n)
        return o->ob.buf + o->ob.len;
    int saved_errno = errno;
    uint8_t *p = NULL;
    if (drain(o) < 0)
        goto done;
    if (n > o->cap) {
        uint8_t *b = realloc(o->ob.buf, n);
        if (!b) {
            fail(o, NYTP_E_NOMEM, "out of memory%s", "");
            goto done;
        }
        o->ob.buf = b;
        o->cap = n;
        out_sync_limit(o);
    }
    p = o->ob.buf + o->ob.len;
done:
    errno = saved_errno;
    return p;
}

void nytp_out_commit(nytp_out *o, size_t n)
{
    nytp_outbuf_commit(&o->ob, n);
}

int nytp_out_write(nytp_out *o, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        size_t step = len < BUF_SIZE ? len : BUF_SIZE;
        uint8_t *d = nytp_out_reserve(o, step);
        if (!d)
            return o->err.status;
        memcpy(d, p, step);
        nytp_out_commit(o, step);
        p += step;
        len -= step;
    }
    return o->err.status;
}

int nytp_out_printf(nytp_out *o, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return fail(o, NYTP_E_USAGE, "bad format%s", "");
    if ((size_t)n < sizeof small)
        return nytp_out_write(o, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return fail(o, NYTP_E_NOMEM, "out of memory%s", "");
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int st = nytp_out_write(o, big, (size_t)n);
    free(big);
    return st;
}

void nytp_out_set_threads(nytp_out *o, bool on)
{
    if (!o->def)
        o->threads = on;
}

int nytp_out_set_deflater(nytp_out *o, const char *name, nytp_error *err)
{
    if (strcmp(name, "zlib") == 0) {
        o->isal = false;
        return NYTP_OK;
    }
#ifdef NYTP_HAVE_ISAL
    if (strcmp(name, "isal") == 0) {
        o->isal = true;
        return NYTP_OK;
    }
#endif
    return nytp_error_set(err, NYTP_E_USAGE, "unknown deflater '%s' (this build has: %s)", name,
#ifdef NYTP_HAVE_ISAL
                          "isal, zlib"
#else
                          "zlib"
#endif
    );
}

const char *nytp_out_deflater(const nytp_out *o) { return o->isal ? "isal" : "zlib"; }

static int start_deflate(nytp_out *o, int level, bool gzip)
{
    if (o->err.status)
        return o->err.status;
    if (o->def)
        return fail(o, NYTP_E_USAGE, "already deflating%s", "");
    if (level < 0 || level > 9)
        return fail(o, NYTP_E_USAGE, "compression level must be 0..9%s", "");
    if (drain(o) < 0)
        return o->err.status;
    o->deflate_base = o->ob.total;
    nytp_error e;
    const char *engine = gzip ? "gzip" : o->isal ? "isal" : "zlib";
    if (deflater_start(&o->def, level, engine, o->threads, deflater_sink, o, &e) < 0) {
        o->err = e;
        out_sync_limit(o);
        return e.status;
    }
    o->gzip = gzip;
    return NYTP_OK;
}

int nytp_out_start_deflate(nytp_out *o, int level)
{
    return start_deflate(o, level, false);
}

int nytp_out_start_gzip(nytp_out *o, int level)
{
    return start_deflate(o, level, true);
}

bool nytp_out_deflating(const nytp_out *o) { return o->def != NULL; }
uint64_t nytp_out_total(const nytp_out *o) { return o->ob.total; }
const nytp_error *nytp_out_error(const nytp_out *o) { return &o->err; }

int nytp_out_fail(nytp_out *o, int status, const char *msg)
{
    return fail(o, status, "%s", msg);
}

int nytp_out_flush(nytp_out *o)
{
    if (o->err.status)
        return o->err.status;
    if (o->def)
        return deflate_buf(o, Z_SYNC_FLUSH);
    return drain(o);
}

/* End the zlib stream and write the plain trailer after it (not after a
 * gzip stream). */
static int finish_deflate(nytp_out *o)
{
    if (deflate_buf(o, Z_FINISH) < 0)
        return o->err.status;
    uint64_t in, out;
    deflater_totals(o->def, &in, &out);
    deflater_free(o->def);
    o->def = NULL;
    if (o->gzip)
        return NYTP_OK;     /* gzip readers take anything after as a next member */
    char trailer[160];
    int n = snprintf(trailer, sizeof trailer,
                     "#\n# zlib stream ended: %llu bytes deflated to %llu (%.1f%% of the original)\n",
                     (unsigned long long)in, (unsigned long long)out, in ? 100.0 * (double)out / (double)in : 100.0);
    return sink(o, (const uint8_t *)trailer, (size_t)n);
}

static void release(nytp_out *o)
{
    deflater_free(o->def);
    free(o->ob.buf);
    free(o->mem);
    free(o->path);
    free(o->tmp_path);
    free(o->guard_path);
    free(o);
}

int nytp_out_close(nytp_out *o, nytp_error *err)
{
    if (o->def && !o->err.status)
        finish_deflate(o);
    else if (!o->err.status)
        drain(o);
    if (o->fd >= 0 && o->close_fd && !guard_lost(o)) {
        if (close(o->fd) < 0)
            fail(o, NYTP_E_IO, "close failed: %s", strerror(errno));
        o->fd = -1;
    }
    if (o->tmp_path) {
        if (o->err.status == 0 && rename(o->tmp_path, o->path) < 0)
            fail(o, NYTP_E_IO, "cannot rename into place: %s", strerror(errno));
        if (o->err.status)
            unlink(o->tmp_path);
    }
    int st = o->err.status;
    if (st && err)
        *err = o->err;
    release(o);
    return st;
}

void nytp_out_abort(nytp_out *o)
{
    if (!o)
        return;
    if (o->fd >= 0 && o->close_fd && !guard_lost(o))
        close(o->fd);
    if (o->tmp_path)
        unlink(o->tmp_path);
    release(o);
}

const uint8_t *nytp_out_mem_data(const nytp_out *o, size_t *len)
{
    *len = o->mem_len;
    return o->mem;
}

int nytp_out_close_mem(nytp_out *o, uint8_t **data, size_t *len, nytp_error *err)
{
    if (o->def && !o->err.status)
        finish_deflate(o);
    else if (!o->err.status)
        drain(o);
    int st = o->err.status;
    if (st) {
        if (err)
            *err = o->err;
        release(o);
        return st;
    }
    *data = o->mem;
    *len = o->mem_len;
    o->mem = NULL;
    release(o);
    return NYTP_OK;
}

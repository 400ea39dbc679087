/* target.c — finding and reading the interpreter of another process. */
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <dirent.h>
#include <signal.h>

#include "elf.h"
#include "perl_layout.h"

/* The fields of /proc/PID/stat after the command name (which may hold
 * spaces and parentheses: they start after the last ')'), in buf; NULL
 * when it cannot be read. */
static const char *stat_fields(pid_t pid, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return p ? p + 1 : NULL;
}

unsigned long long target_start_time(pid_t pid)
{
    char buf[1024];
    const char *p = stat_fields(pid, buf, sizeof buf);
    if (!p)
        return 0;
    /* p is at the space before field 3 (the state): on to the one before
     * field 22 (the next one, 23, is the virtual memory size, which
     * changes as the perl allocates) */
    for (int field = 3; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

bool target_alive(const attach_target *t)
{
    unsigned long long st = target_start_time(t->pid);
    if (!st) {
        /* not read (once seen in a test run at a high load, the process
         * alive): a process that exists is taken to be the same */
        return kill(t->pid, 0) == 0 || errno == EPERM;
    }
    return st == t->start_time;
}

bool target_readv(attach_target *t, size_t n, const uint64_t *addr, void *const *buf,
                  const size_t *len)
{
    struct iovec local[64], remote[64];
    size_t want = 0;
    if (n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!target_ptr_ok(addr[i], 1) || len[i] > ((uint64_t)1 << 47) - addr[i]) {
            t->read_errno = EFAULT;
            return false;
        }
        local[i].iov_base = buf[i];
        local[i].iov_len = len[i];
        remote[i].iov_base = (void *)(uintptr_t)addr[i];
        remote[i].iov_len = len[i];
        want += len[i];
    }
    ssize_t got = process_vm_readv(t->pid, local, n, remote, n, 0);
    if (got < 0) {
        t->read_errno = errno;
        return false;
    }
    if ((size_t)got != want) {
        t->read_errno = EFAULT;
        return false;
    }
    return true;
}

bool target_read(attach_target *t, uint64_t addr, void *buf, size_t len)
{
    void *b[1] = {buf};
    return target_readv(t, 1, &addr, b, &len);
}

bool target_read_str(attach_target *t, uint64_t addr, char *buf, size_t size)
{
    size_t have = 0;
    if (!size)
        return false;
    while (have + 1 < size) {
        /* never across a page: the next one may not be mapped */
        uint64_t at = addr + have;
        size_t chunk = 4096 - (size_t)(at & 4095);
        if (chunk > size - 1 - have)
            chunk = size - 1 - have;
        if (!target_read(t, at, buf + have, chunk))
            return false;
        char *nul = memchr(buf + have, 0, chunk);
        if (nul)
            return true;
        have += chunk;
    }
    buf[size - 1] = 0;
    return true;
}

static const char *errno_why(int e)
{
    switch (e) {
    case EPERM:
    case EACCES:
        return "permission denied: run as the same user with ptrace allowed "
               "(kernel.yama.ptrace_scope 0 or 1 as its parent, or CAP_SYS_PTRACE)";
    case ESRCH:
    case ENOENT:
        return "no such process";
    default:
        return strerror(e);
    }
}

/* Open name as the target sees it (through its root: a container's
 * files are not ours). */
static int open_in_root(pid_t pid, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, name);
    return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

static int count_threads(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n ? n : 1;
}

enum { SYM_CURINTERP, SYM_REVISION, SYM_VERSION, SYM_SUBVERSION, SYM_INTERP_SIZE, SYM_BINCOMPAT,
       NSYMS };
static const char *const sym_names[NSYMS] = {"PL_curinterp", "PL_revision", "PL_version",
                                             "PL_subversion", "PL_interp_size",
                                             "PL_bincompat_options"};

/* The perl in one mapped file: 1 found (t filled), 0 not a perl, -1 error (why). */
static int try_file(attach_target *t, const char *name, uint64_t map_start, char *why,
                    size_t whysize)
{
    int fd = open_in_root(t->pid, name);
    if (fd < 0)
        return 0;
    char err[128];
    elf_syms s = {.names = sym_names, .n = NSYMS};
    int rc = elf_find_syms(fd, &s, err, sizeof err);
    close(fd);
    if (rc < 0 || !s.found[SYM_CURINTERP])
        return 0;
    for (int i = 0; i < NSYMS; i++)
        if (!s.found[i]) {
            snprintf(why, whysize, "%d: %s has PL_curinterp but no %s: not a perl nytp can read",
                     (int)t->pid, name, sym_names[i]);
            return -1;
        }
    uint64_t bias = map_start - s.load_vaddr;
    uint8_t rev = 0, ver = 0, sub = 0;
    uint16_t isize = 0;
    char bincompat[1024];
    uint64_t curinterp = 0;
    if (!target_read(t, bias + s.value[SYM_REVISION], &rev, 1)
        || !target_read(t, bias + s.value[SYM_VERSION], &ver, 1)
        || !target_read(t, bias + s.value[SYM_SUBVERSION], &sub, 1)
        || !target_read(t, bias + s.value[SYM_INTERP_SIZE], &isize, 2)
        || !target_read_str(t, bias + s.value[SYM_BINCOMPAT], bincompat, sizeof bincompat)
        || !target_read(t, bias + s.value[SYM_CURINTERP], &curinterp, 8)) {
        snprintf(why, whysize, "%d: cannot read its memory: %s", (int)t->pid,
                 errno_why(t->read_errno));
        return -1;
    }
    if (rev != PL_REVISION || ver != PL_VERSION || sub != PL_SUBVERSION || isize != PL_INTERP_SIZE
        || strcmp(bincompat, PL_BINCOMPAT) != 0) {
        snprintf(why, whysize,
                 "%d: is perl %u.%u.%u (%s, interpreter of %u bytes); this nytp reads %s "
                 "(%u bytes) only: build nytp with that perl",
                 (int)t->pid, rev, ver, sub, name, isize, PL_BUILT_FOR, (unsigned)PL_INTERP_SIZE);
        return -1;
    }
    if (!target_ptr_ok(curinterp, 8)) {
        snprintf(why, whysize, "%d: perl has no interpreter (yet, or any more)", (int)t->pid);
        return -1;
    }
    t->interp = curinterp;
    snprintf(t->perl, sizeof t->perl, "%s", name);
    return 1;
}

int target_open(attach_target *t, pid_t pid, char *why, size_t whysize)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->start_time = target_start_time(pid);
    if (!t->start_time) {
        snprintf(why, whysize, "%d: no such process", (int)pid);
        return -1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(why, whysize, "%d: cannot read %s: %s", (int)pid, path, errno_why(errno));
        return -1;
    }
    char line[PATH_MAX + 256], last[PATH_MAX] = "";
    int found = 0, lines = 0;
    while (found == 0 && fgets(line, sizeof line, f)) {
        lines++;
        unsigned long long start, end, off;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &name_at) < 4
            || !name_at)
            continue;
        char *name = line + name_at;
        name[strcspn(name, "\n")] = 0;
        /* a file's first mapping (offset 0), once per file, perls only */
        if (name[0] != '/' || off != 0 || strcmp(name, last) == 0)
            continue;
        snprintf(last, sizeof last, "%s", name);
        const char *base = strrchr(name, '/') + 1;
        if (!strstr(base, "perl"))
            continue;
        found = try_file(t, name, start, why, whysize);
    }
    int read_err = ferror(f) ? errno : 0;
    fclose(f);
    if (found < 0)
        return -1;
    if (!found) {
        if (!lines)
            snprintf(why, whysize, "%d: cannot read /proc/%d/maps: %s", (int)pid, (int)pid,
                     read_err ? errno_why(read_err) : errno_why(EACCES));
        else
            snprintf(why, whysize, "%d: not a perl (no perl binary or libperl with PL_curinterp mapped)",
                     (int)pid);
        return -1;
    }
    t->threads = count_threads(pid);
    if (!target_alive(t)) {
        snprintf(why, whysize, "%d: exited while being read", (int)pid);
        return -1;
    }
    return 0;
}

pid_t target_parse_pid(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0 || v > 0x3fffffff)
        return 0;
    return (pid_t)v;
}

static pid_t parent_of(pid_t pid)
{
    char buf[1024];
    const char *p = stat_fields(pid, buf, sizeof buf);
    int ppid = 0;
    if (!p || sscanf(p, " %*c %d", &ppid) != 1)
        return 0;
    return (pid_t)ppid;
}

int target_children(pid_t pid, pid_t **pids, size_t *n, size_t *cap)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    /* every (pid, parent) once, then the tree from pid */
    struct pp { pid_t pid, parent; } *all = NULL;
    size_t nall = 0, capall = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t p = target_parse_pid(e->d_name);
        if (!p)
            continue;
        if (nall == capall) {
            size_t nc = capall ? capall * 2 : 256;
            struct pp *na = realloc(all, nc * sizeof *na);
            if (!na) {
                free(all);
                closedir(d);
                return -1;
            }
            all = na;
            capall = nc;
        }
        all[nall].pid = p;
        all[nall++].parent = parent_of(p);
    }
    closedir(d);
    size_t first = *n;
    int added = 0;
    /* breadth first: the list grows while it is walked */
    pid_t from = pid;
    for (size_t at = first;; at++) {
        for (size_t i = 0; i < nall; i++) {
            if (all[i].parent != from || all[i].pid == pid)
                continue;
            if (*n == *cap) {
                size_t nc = *cap ? *cap * 2 : 16;
                pid_t *np = realloc(*pids, nc * sizeof *np);
                if (!np) {
                    free(all);
                    return -1;
                }
                *pids = np;
                *cap = nc;
            }
            (*pids)[(*n)++] = all[i].pid;
            added++;
        }
        if (at >= *n)
            break;
        from = (*pids)[at];
    }
    free(all);
    return added;
}

/* target.h — a running perl seen from outside: its interpreter found
 * through the dynamic symbols of the perl binary or libperl.so it maps,
 * its memory read with process_vm_readv (never written, never stopped
 * unless asked), and the checks that it is the perl this nytp was built
 * for.
 *
 *     attach_target t;
 *     char why[256];
 *     if (target_open(&t, pid, why, sizeof why) < 0) ... why names the pid
 *     target_read(&t, addr, buf, len)   // false: unmapped, or the pid is gone
 *     target_alive(&t)                   // still the same process
 */
#ifndef NYTP_ATTACH_TARGET_H
#define NYTP_ATTACH_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct attach_target {
    pid_t pid;
    unsigned long long start_time;  /* /proc/PID/stat field 22: a reused pid differs */
    uint64_t interp;                /* the main interpreter (PL_curinterp) */
    char perl[PATH_MAX];            /* the file PL_curinterp was found in */
    int threads;                    /* tasks of the process when opened */
    int read_errno;                 /* of the last failed read */
} attach_target;

/* Find the interpreter of pid and check its version and build.  0, or -1
 * with a one-line reason (naming the pid) in why. */
int target_open(attach_target *t, pid_t pid, char *why, size_t whysize);

/* Read len bytes at addr of the target: all of them, or false (EFAULT:
 * not mapped; ESRCH: gone; EPERM: not allowed) with t->read_errno set. */
bool target_read(attach_target *t, uint64_t addr, void *buf, size_t len);
/* Several reads in one system call: each of n (addr, buf, len); true
 * only when every byte was read. */
bool target_readv(attach_target *t, size_t n, const uint64_t *addr, void *const *buf,
                  const size_t *len);
/* A NUL-terminated string at addr, at most size - 1 bytes (cut there);
 * false when unreadable. */
bool target_read_str(attach_target *t, uint64_t addr, char *buf, size_t size);

/* The process is still the one opened (not exited, not a reused pid). */
bool target_alive(const attach_target *t);
/* The start time of pid (field 22 of /proc/PID/stat), 0 when gone. */
unsigned long long target_start_time(pid_t pid);

/* Pointer checks of sampled values: a user-space address, aligned. */
static inline bool target_ptr_ok(uint64_t p, unsigned align)
{
    return p >= 4096 && p < ((uint64_t)1 << 47) && (p & (align - 1)) == 0;
}

/* The descendants of pid (children, their children...) now, from the
 * parent of each process in /proc, appended to *pids (grown with
 * realloc).  Returns how many were added, -1 out of memory. */
int target_children(pid_t pid, pid_t **pids, size_t *n, size_t *cap);
/* Parse a pid operand ("1234"); 0 when it is not one. */
pid_t target_parse_pid(const char *s);
#endif

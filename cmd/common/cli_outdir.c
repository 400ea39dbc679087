/* cli_outdir.c — report directories: written beside the target and moved
 * into place, replacing only what nytp wrote (the marker file). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli_impl.h"

#define MARKER ".nytp-report"

/* One line of the marker: a report kind and a file it wrote. */
typedef struct {
    char *kind, *name;
} mark;

typedef struct {
    mark *v;
    size_t n, cap;
} marks;

static void marks_free(marks *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].kind);
        free(m->v[i].name);
    }
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

static int marks_add(marks *m, const char *kind, const char *name)
{
    if (m->n == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        mark *nv = realloc(m->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        m->v = nv;
        m->cap = ncap;
    }
    m->v[m->n].kind = strdup(kind);
    m->v[m->n].name = strdup(name);
    if (!m->v[m->n].kind || !m->v[m->n].name) {
        free(m->v[m->n].kind);
        free(m->v[m->n].name);
        return -1;
    }
    m->n++;
    return 0;
}

static int mark_cmp(const void *a, const void *b)
{
    return strcmp(((const mark *)a)->name, ((const mark *)b)->name);
}

/* The kind that wrote name, or NULL: nytp did not write it.  m sorted. */
static const char *marks_kind(const marks *m, const char *name)
{
    mark key = {NULL, (char *)name};
    const mark *hit = m->n ? bsearch(&key, m->v, m->n, sizeof *m->v, mark_cmp) : NULL;
    return hit ? hit->kind : NULL;
}

/* A name a report may have: one path component, not ours to reserve. */
static bool report_name_ok(const char *name)
{
    return *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
           strncmp(name, ".nytp-", 6) != 0;
}

/* The marker keeps names as bytes; %XX stands for a control byte, a
 * space, '%' and DEL, so that one line is one file. */
static void put_escaped(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == '%' || *p == 0x7f)
            fprintf(f, "%%%02X", *p);
        else
            fputc(*p, f);
}

static bool unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '%') {
            unsigned v;
            if (sscanf(p + 1, "%2x", &v) != 1 || !isxdigit((unsigned char)p[1]) ||
                !isxdigit((unsigned char)p[2]) || v == 0)
                return false;
            *o++ = (char)v;
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return true;
}

/* Read dir's marker into m (sorted by name).  A missing marker is an
 * empty list; a line that is not "KIND NAME" with a valid name is not
 * trusted (skipped).  Returns 0, or -1 after reporting (shown: dir as the
 * user named it). */
static int marks_read(const char *dir, const char *shown, marks *m)
{
    m->v = NULL;
    m->n = m->cap = 0;
    size_t n = strlen(dir) + sizeof MARKER + 2;
    char *path = malloc(n);
    if (!path) {
        cli_error("out of memory");
        return -1;
    }
    snprintf(path, n, "%s/%s", dir, MARKER);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    free(path);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        cli_error("%s/%s: %s", shown, MARKER, strerror(errno));
        return -1;
    }
    struct stat sb;
    FILE *f = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? fdopen(fd, "r") : NULL;
    if (!f) {
        close(fd);
        cli_error("%s/%s: not a regular file; not trusting it", shown, MARKER);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        char *sp = strchr(line, ' ');
        if (line[0] == '#' || !sp || sp == line)
            continue;
        *sp = 0;
        if (!unescape(sp + 1) || !report_name_ok(sp + 1))
            continue;
        if (marks_add(m, line, sp + 1) < 0) {
            cli_error("out of memory");
            rc = -1;
        }
    }
    free(line);
    fclose(f);
    if (rc < 0)
        marks_free(m);
    else if (m->n)
        qsort(m->v, m->n, sizeof *m->v, mark_cmp);
    return rc;
}

/* Write the marker into d->tmp, listing the other kinds' files of old,
 * then also old's files of d's kind when keep_old (a report half moved in
 * must not lose them), then d's names; move it to dir/MARKER when dir is
 * not NULL.  Returns 0, or -1 after reporting. */
static int marks_write(cli_outdir *d, const marks *old, bool keep_old, const char *dir)
{
    size_t n = strlen(d->tmp) + sizeof MARKER + 2;
    char *path = malloc(n);
    if (!path) {
        cli_error("out of memory");
        return -1;
    }
    snprintf(path, n, "%s/%s", d->tmp, MARKER);
    FILE *f = fopen(path, "we");
    if (!f) {
        cli_error("%s/%s: %s", d->path, MARKER, strerror(errno));
        free(path);
        return -1;
    }
    fputs("# Files written by nytp's reports (kind, name; %XX is a byte): nytp\n"
          "# replaces or removes only the files listed here.\n", f);
    for (size_t i = 0; old && i < old->n; i++) {
        bool mine = strcmp(old->v[i].kind, d->kind) == 0 || d->delete_old;
        if (mine && !keep_old)
            continue;
        fprintf(f, "%s ", old->v[i].kind);
        put_escaped(f, old->v[i].name);
        fputc('\n', f);
    }
    for (size_t i = 0; i < d->n_names; i++) {
        fprintf(f, "%s ", d->kind);
        put_escaped(f, d->names[i]);
        fputc('\n', f);
    }
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0)
        bad = true;
    int rc = 0;
    if (bad) {
        cli_error("%s/%s: %s", d->path, MARKER, strerror(errno));
        rc = -1;
    } else if (dir) {
        char *to = malloc(strlen(dir) + sizeof MARKER + 2);
        if (!to) {
            cli_error("out of memory");
            rc = -1;
        } else {
            sprintf(to, "%s/%s", dir, MARKER);
            if (rename(path, to) < 0) {
                cli_error("%s/%s: %s", d->path, MARKER, strerror(errno));
                rc = -1;
            }
            free(to);
        }
    }
    if (rc < 0)
        unlink(path);
    free(path);
    return rc;
}

static void outdir_free(cli_outdir *d)
{
    cli_temp_unregister(d->slot);
    d->slot = -1;
    for (size_t i = 0; i < d->n_names; i++)
        free(d->names[i]);
    free(d->names);
    free(d->path);
    free(d->target);
    free(d->tmp);
    d->names = NULL;
    d->n_names = d->cap_names = 0;
    d->path = d->target = d->tmp = NULL;
}

/* path without trailing slashes, with its links followed: the directory
 * to write.  NULL after reporting. */
static char *outdir_target(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    char *trimmed = strndup(path, n);
    if (!trimmed) {
        cli_error("out of memory");
        return NULL;
    }
    bool magic;
    nytp_error e = {0};
    char *t = nytp_path_follow_links(trimmed, &magic, &e);
    free(trimmed);
    if (!t) {
        cli_error("%s: %s", path, e.msg);
        return NULL;
    }
    if (magic) {
        cli_error("%s: not a directory", path);
        free(t);
        return NULL;
    }
    return t;
}

/* Whether a file name in dir is in the way of a report: there, and not
 * a regular file that the marker lists.  Reports it. */
static bool in_the_way(const char *shown, const char *dir, const marks *m, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *full = malloc(n);
    if (!full) {
        cli_error("out of memory");
        return true;
    }
    snprintf(full, n, "%s/%s", dir, name);
    struct stat sb;
    int st = lstat(full, &sb);
    free(full);
    if (st < 0)
        return false;
    if (!marks_kind(m, name)) {
        cli_error("%s: %s there was not written by nytp (no %s lists it); not replacing it "
                  "(move it away or choose another -o)", shown, name, MARKER);
        return true;
    }
    if (!S_ISREG(sb.st_mode)) {
        cli_error("%s: %s there is not a regular file; not replacing it", shown, name);
        return true;
    }
    return false;
}

/* The checks of cli_outdir_check on a target; *exists says whether it is
 * there.  m gets its marker when it is. */
static int outdir_check_target(const char *path, const char *target, const char *const *always,
                               bool *exists, marks *m)
{
    struct stat sb;
    m->v = NULL;
    m->n = m->cap = 0;
    *exists = stat(target, &sb) == 0;
    if (!*exists) {
        if (errno != ENOENT) {
            cli_error("%s: %s", path, strerror(errno));
            return EXIT_BAD_INPUT;
        }
        /* say which part of the path is missing */
        char *parent = strdup(target);
        if (!parent) {
            cli_error("out of memory");
            return EXIT_BAD_INPUT;
        }
        char *slash = strrchr(parent, '/');
        if (!slash)
            strcpy(parent, ".");
        else if (slash == parent)
            slash[1] = 0;
        else
            *slash = 0;
        int rc = EXIT_OK, err = 0;
        if (stat(parent, &sb) < 0)
            err = errno;
        else if (!S_ISDIR(sb.st_mode))
            err = ENOTDIR;
        if (err) {
            cli_error("%s: cannot create a directory beside it: %s: %s", path, parent,
                      strerror(err));
            rc = EXIT_BAD_INPUT;
        }
        free(parent);
        return rc;
    }
    if (!S_ISDIR(sb.st_mode)) {
        cli_error("%s: exists and is not a directory", path);
        return EXIT_BAD_INPUT;
    }
    if (access(target, W_OK | X_OK) < 0) {
        cli_error("%s: cannot write into it: %s", path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (marks_read(target, path, m) < 0)
        return EXIT_BAD_INPUT;
    for (size_t i = 0; always && always[i]; i++)
        if (in_the_way(path, target, m, always[i])) {
            marks_free(m);
            return EXIT_BAD_INPUT;
        }
    return EXIT_OK;
}

int cli_outdir_check(const char *path, const char *kind, const char *const *always)
{
    (void)kind;
    char *target = outdir_target(path);
    if (!target)
        return EXIT_BAD_INPUT;
    bool exists;
    marks m;
    int rc = outdir_check_target(path, target, always, &exists, &m);
    marks_free(&m);
    free(target);
    return rc;
}

int cli_outdir_open(cli_outdir *d, const char *path, const char *kind, const char *const *always)
{
    memset(d, 0, sizeof *d);
    d->slot = -1;
    d->kind = kind;
    d->target = outdir_target(path);
    d->path = strdup(path);
    if (!d->target || !d->path) {
        if (d->target)
            cli_error("out of memory");
        outdir_free(d);
        return EXIT_BAD_INPUT;
    }
    marks m;
    if (outdir_check_target(path, d->target, always, &d->into, &m) != EXIT_OK) {
        outdir_free(d);
        return EXIT_BAD_INPUT;
    }
    marks_free(&m);
    size_t n = strlen(d->target) + 32;
    d->tmp = malloc(n);
    if (!d->tmp) {
        cli_error("out of memory");
        outdir_free(d);
        return EXIT_BAD_INPUT;
    }
    /* Beside a new directory, which it becomes; inside an existing one, so
     * that its files move into it on the same file system. */
    snprintf(d->tmp, n, d->into ? "%s/.nytp-tmpXXXXXX" : "%s.tmpXXXXXX", d->target);
    cli_signals_hold();
    if (!mkdtemp(d->tmp)) {
        cli_signals_release();
        if (d->into)
            cli_error("%s: cannot write into it: %s", path, strerror(errno));
        else
            cli_error("%s: cannot create a directory beside it: %s", path, strerror(errno));
        free(d->tmp);
        d->tmp = NULL;
        outdir_free(d);
        return EXIT_BAD_INPUT;
    }
    d->slot = cli_temp_register(d->tmp, true);
    cli_signals_release();
    if (!d->into) {
        /* mkdtemp makes it 0700; a report is for reading */
        mode_t um = umask(0);
        umask(um);
        chmod(d->tmp, 0777 & ~um);
    }
    return EXIT_OK;
}

nytp_out *cli_outdir_file(cli_outdir *d, const char *name)
{
    if (!report_name_ok(name)) {
        cli_error("%s: refusing to write '%s' outside the report", d->path, name);
        return NULL;
    }
    if (d->n_names == d->cap_names) {
        size_t ncap = d->cap_names ? d->cap_names * 2 : 64;
        char **nv = realloc(d->names, ncap * sizeof *nv);
        if (!nv) {
            cli_error("out of memory");
            return NULL;
        }
        d->names = nv;
        d->cap_names = ncap;
    }
    size_t n = strlen(d->tmp) + strlen(name) + 2;
    char *full = malloc(n);
    char *copy = strdup(name);
    if (!full || !copy) {
        free(full);
        free(copy);
        cli_error("out of memory");
        return NULL;
    }
    snprintf(full, n, "%s/%s", d->tmp, name);
    park_if_dying();
    nytp_out *out;
    nytp_error e = {0};
    int st = nytp_out_open_file(&out, full, 0, &e);
    free(full);
    if (st < 0) {
        free(copy);
        cli_error("%s/%s: %s", d->path, name, e.msg);
        return NULL;
    }
    d->names[d->n_names++] = copy;
    return out;
}

int cli_outdir_close_file(cli_outdir *d, nytp_out *out, const char *name)
{
    nytp_error e = {0};
    if (nytp_out_close(out, &e) < 0) {
        cli_error("%s/%s: %s", d->path, name, e.msg);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Move the finished files into the existing target: check that nothing
 * foreign is in the way, list old and new files in the marker, move, then
 * remove this kind's files that the new report no longer has, and list
 * only what is there. */
static int commit_into(cli_outdir *d)
{
    marks m;
    if (marks_read(d->target, d->path, &m) < 0)
        return EXIT_BAD_INPUT;
    for (size_t i = 0; i < d->n_names; i++)
        if (in_the_way(d->path, d->target, &m, d->names[i])) {
            marks_free(&m);
            return EXIT_BAD_INPUT;
        }
    int rc = EXIT_OK;
    if (marks_write(d, &m, true, d->target) < 0)
        rc = EXIT_BAD_INPUT;
    size_t n = strlen(d->target) + strlen(d->tmp) + PATH_MAX;
    char *from = malloc(n), *to = malloc(n);
    if (!from || !to) {
        cli_error("out of memory");
        rc = EXIT_BAD_INPUT;
    }
    for (size_t i = 0; rc == EXIT_OK && i < d->n_names; i++) {
        snprintf(from, n, "%s/%s", d->tmp, d->names[i]);
        snprintf(to, n, "%s/%s", d->target, d->names[i]);
        if (rename(from, to) < 0) {
            cli_error("%s/%s: cannot move it into place: %s", d->path, d->names[i],
                      strerror(errno));
            rc = EXIT_BAD_INPUT;
        }
    }
    for (size_t i = 0; rc == EXIT_OK && i < m.n; i++) {
        const char *name = m.v[i].name;
        struct stat sb;
        if ((strcmp(m.v[i].kind, d->kind) && !d->delete_old) ||
            bsearch(&name, d->names, d->n_names, sizeof *d->names, str_cmp))
            continue;
        snprintf(to, n, "%s/%s", d->target, name);
        if (lstat(to, &sb) == 0 && S_ISREG(sb.st_mode))
            unlink(to); /* a page of the earlier report that this one has not */
    }
    if (rc == EXIT_OK && marks_write(d, &m, false, d->target) < 0)
        rc = EXIT_BAD_INPUT;
    free(from);
    free(to);
    marks_free(&m);
    return rc;
}

int cli_outdir_commit(cli_outdir *d)
{
    int rc = EXIT_OK;
    /* sorted, each name once */
    if (d->n_names)
        qsort(d->names, d->n_names, sizeof *d->names, str_cmp);
    size_t k = 0;
    for (size_t i = 0; i < d->n_names; i++) {
        if (k && strcmp(d->names[k - 1], d->names[i]) == 0)
            free(d->names[i]);
        else
            d->names[k++] = d->names[i];
    }
    d->n_names = k;
    cli_signals_hold();
    if (d->into) {
        rc = commit_into(d);
    } else if (marks_write(d, NULL, false, NULL) < 0) {
        rc = EXIT_BAD_INPUT;
    } else if (renameat2(AT_FDCWD, d->tmp, AT_FDCWD, d->target, RENAME_NOREPLACE) < 0) {
        if (errno == EEXIST || errno == ENOTEMPTY)
            cli_error("%s: appeared while the report was being written; run again to write "
                      "into it", d->path);
        else
            cli_error("%s: %s", d->path, strerror(errno));
        rc = EXIT_BAD_INPUT;
    } else {
        free(d->tmp);
        d->tmp = NULL;
    }
    if (d->tmp)
        remove_flat_dir(d->tmp);
    outdir_free(d);
    cli_signals_release();
    return rc;
}

void cli_outdir_abort(cli_outdir *d)
{
    if (d->tmp)
        remove_flat_dir(d->tmp);
    outdir_free(d);
}

/* cli.c — messages, option parsing and output files shared by commands. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LIBBSD_OPENBSD_VIS
#include <bsd/vis.h>

#include "cli.h"

const char *cli_command = NULL;

/* Length of the UTF-8 sequence at s that a terminal shows as text, or 0
 * when s[0] starts something it may act on: a C0 control or DEL, a C1
 * control (U+0080..U+009F; U+009B is a CSI), or a byte that is not valid
 * UTF-8 (a lone 0x9B is a CSI to an 8-bit terminal). */
static size_t printable_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x20 || c == 0x7f)
        return 0;
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f)
        return 0;
    return len;
}

size_t cli_escape(char *dst, size_t size, const char *src)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t n = strlen(src), k = 0;
    if (!size)
        return 0;
    for (size_t i = 0; i < n;) {
        size_t ok = printable_len(s + i, n - i);
        if (ok) {
            if (k + ok >= size)
                break;
            memcpy(dst + k, s + i, ok);
            k += ok;
            i += ok;
            continue;
        }
        /* \ooo, or \n \t \r ... (at most 4 bytes and the NUL) */
        char enc[8];
        strnvisx(enc, sizeof enc, src + i, 1, VIS_OCTAL | VIS_CSTYLE);
        size_t el = strlen(enc);
        if (k + el >= size)
            break;
        memcpy(dst + k, enc, el);
        k += el;
        i++;
    }
    dst[k] = 0;
    return k;
}

/* Every message goes through cli_escape: file and sub names come from
 * profiles, and a name holding ESC [ or ESC ] would drive the terminal. */
static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
    char line[1024], safe[4 * sizeof line];
    vsnprintf(line, sizeof line, fmt, ap);
    cli_escape(safe, sizeof safe, line);
    if (cli_command)
        fprintf(stderr, "nytp %s: %s%s\n", cli_command, prefix, safe);
    else
        fprintf(stderr, "nytp: %s%s\n", prefix, safe);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("warning: ", fmt, ap);
    va_end(ap);
}

_Noreturn void cli_usage_error(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char safe[4 * sizeof line];
    cli_escape(safe, sizeof safe, line);
    if (cli_command)
        fprintf(stderr, "nytp %s: %s (see 'nytp %s --help')\n", cli_command, safe, cli_command);
    else
        fprintf(stderr, "nytp: %s (see 'nytp --help')\n", safe);
    exit(EXIT_USAGE);
}

static const char *display_name(const char *file)
{
    return strcmp(file, "-") == 0 ? "(standard input)" : file;
}

void cli_report(const char *file, const nytp_error *e, bool as_warning)
{
    char where[200];
    const char *what = nytp_status_name(e->status);
    if (e->status == NYTP_E_IO || e->status == NYTP_E_NOMEM) {
        if (as_warning)
            cli_warn("%s: %s", display_name(file), e->msg);
        else
            cli_error("%s: %s", display_name(file), e->msg);
        return;
    }
    nytp_error_where(e, where, sizeof where);
    if (as_warning)
        cli_warn("%s: %s at %s: %s", display_name(file), what, where, e->msg);
    else
        cli_error("%s: %s at %s: %s", display_name(file), what, where, e->msg);
}

void cli_reader_warning(void *ctx, const nytp_error *w)
{
    char where[200];
    nytp_error_where(w, where, sizeof where);
    cli_warn("%s: at %s: %s", display_name(ctx), where, w->msg);
}

static bool has_long(const struct option *o, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(o[i].name, name) == 0)
            return true;
    return false;
}

int cli_parse(int argc, char **argv, const char *shortopts, const struct option *longopts,
              const char *usage, void (*on_opt)(int opt, const char *arg, void *ctx), void *ctx)
{
    /* Our own messages, one line each; '+' stops at the first operand
     * only when POSIXLY_CORRECT asks, so options may follow files. */
    char spec[128];
    snprintf(spec, sizeof spec, ":h%s", shortopts);
    bool takes_file = strstr(shortopts, "f:") != NULL;
    opterr = 0;
    optind = 1;
    int n = 0;
    while (longopts[n].name)
        n++;
    /* the command's options, the spellings every command shares, --help */
    struct option *all = calloc((size_t)n + 5, sizeof *all);
    /* -f FILE values, at most one per word of argv */
    char **files = calloc((size_t)argc + 1, sizeof *files);
    if (!all || !files) {
        cli_error("out of memory");
        exit(EXIT_BAD_INPUT);
    }
    memcpy(all, longopts, (size_t)n * sizeof *all);
    int k = n;
    if (strstr(shortopts, "o:")) {
        /* nytprofhtml says --out, nytprofcalls --output: both, everywhere */
        if (!has_long(all, k, "out"))
            all[k++] = (struct option){"out", required_argument, NULL, 'o'};
        if (!has_long(all, k, "output"))
            all[k++] = (struct option){"output", required_argument, NULL, 'o'};
    }
    if (takes_file && !has_long(all, k, "file"))
        all[k++] = (struct option){"file", required_argument, NULL, 'f'};
    all[k] = (struct option){"help", no_argument, NULL, 'h'};
    int nfiles = 0;
    int opt;
    int longindex;
    while ((opt = getopt_long(argc, argv, spec, all, &longindex)) != -1) {
        if (opt == 'h') {
            fputs(usage, stdout);
            free(all);
            free(files);
            exit(EXIT_OK);
        }
        if (opt == '?') {
            free(all);
            free(files);
            if (optopt)
                cli_usage_error("unknown option '-%c'", optopt);
            cli_usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (opt == ':') {
            free(all);
            free(files);
            if (optopt && optopt < 256)
                cli_usage_error("option '-%c' needs a value", optopt);
            cli_usage_error("option '%s' needs a value", argv[optind - 1]);
        }
        if (opt == 'f' && takes_file) {
            if (!*optarg)
                cli_usage_error("-f needs a file name");
            files[nfiles++] = optarg;
            continue;
        }
        on_opt(opt, optarg, ctx);
    }
    free(all);
    /* -f FILE, as the nytprof* scripts take it: the files go before the
     * operands, in the slots the options used (each -f took at least one
     * word before optind, so there is room and argv[0] stays). */
    int first = optind - nfiles;
    for (int i = 0; i < nfiles; i++)
        argv[first + i] = files[i];
    free(files);
    return first;
}

unsigned long cli_parse_count(const char *opt, const char *arg)
{
    char *end;
    errno = 0;
    if (!arg || !*arg || *arg == '-')
        cli_usage_error("%s needs a non-negative whole number, not '%s'", opt, arg ? arg : "");
    unsigned long v = strtoul(arg, &end, 10);
    if (errno || *end)
        cli_usage_error("%s needs a non-negative whole number, not '%s'", opt, arg);
    return v;
}

nytp_out *cli_output_open(const char *path)
{
    nytp_out *out;
    nytp_error e = {0};
    if (!path)
        path = "-";
    if (nytp_out_open_file(&out, path, NYTP_OUT_ATOMIC, &e) < 0) {
        cli_error("%s: %s", path, e.msg);
        return NULL;
    }
    return out;
}

int cli_output_close(nytp_out *out, const char *path)
{
    nytp_error e = {0};
    if (nytp_out_close(out, &e) < 0) {
        cli_error("%s: %s", path && strcmp(path, "-") ? path : "(standard output)", e.msg);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

int cli_output_finish(nytp_out *out, const char *path, int status)
{
    if (status >= 0)
        return cli_output_close(out, path);
    const nytp_error *e = nytp_out_error(out);
    cli_error("%s: %s", path && strcmp(path, "-") ? path : "(standard output)",
              e && e->status ? e->msg : "out of memory");
    nytp_out_abort(out);
    return EXIT_BAD_INPUT;
}

int cli_unique_inputs(int nfiles, char **files)
{
    struct stat *seen = calloc((size_t)nfiles + 1, sizeof *seen);
    bool *known = calloc((size_t)nfiles + 1, sizeof *known);
    if (!seen || !known) { /* keep them all: at worst counted twice */
        free(seen);
        free(known);
        return nfiles;
    }
    int k = 0;
    for (int i = 0; i < nfiles; i++) {
        struct stat sb;
        bool is_stdin = strcmp(files[i], "-") == 0;
        if ((is_stdin ? fstat(0, &sb) : stat(files[i], &sb)) < 0) {
            known[k] = false;
            files[k++] = files[i]; /* opening it reports why not */
            continue;
        }
        int dup = -1;
        for (int j = 0; j < k && dup < 0; j++)
            if (known[j] && seen[j].st_dev == sb.st_dev && seen[j].st_ino == sb.st_ino)
                dup = j;
        if (dup >= 0) {
            if (strcmp(files[dup], files[i]) == 0)
                cli_warn("%s: given twice; read once", display_name(files[i]));
            else
                cli_warn("%s: the same file as %s; read once", display_name(files[i]),
                         display_name(files[dup]));
            continue;
        }
        seen[k] = sb;
        known[k] = true;
        files[k++] = files[i];
    }
    free(seen);
    free(known);
    return k;
}

nytp_profile *cli_load_profile(int nfiles, char **files, bool strict, int *rc)
{
    return cli_load_profile_with(nfiles, files, strict, NULL, NULL, rc);
}

nytp_profile *cli_load_profile_with(int nfiles, char **files, bool strict,
                                    int (*on_chunk)(void *ctx, const nytp_chunk *c), void *ctx,
                                    int *rc)
{
    static char *default_file[] = {"nytprof.out"};
    if (nfiles == 0) {
        nfiles = 1;
        files = default_file;
    }
    nytp_profile *p;
    nytp_error e = {0};
    *rc = EXIT_OK;
    if (nytp_profile_new(&p, &e) < 0) {
        cli_error("%s", e.msg);
        *rc = EXIT_BAD_INPUT;
        return NULL;
    }
    nfiles = cli_unique_inputs(nfiles, files);
    for (int i = 0; i < nfiles; i++) {
        nytp_load_opts lo = {cli_reader_warning, files[i], on_chunk, ctx};
        int st = nytp_profile_load(p, files[i], &lo, &e);
        if (st == NYTP_E_TRUNCATED) {
            size_t n = strlen(e.msg);
            snprintf(e.msg + n, sizeof e.msg - n, "%s",
                     strict ? "" : "; loaded everything before the cut");
            cli_report(files[i], &e, !strict);
            if (strict)
                *rc = EXIT_BAD_INPUT;
        } else if (st < 0) {
            cli_report(files[i], &e, false);
            *rc = EXIT_BAD_INPUT;
        }
        if (*rc != EXIT_OK) {
            nytp_profile_free(p);
            return NULL;
        }
    }
    nytp_profile_finish(p);
    return p;
}

/* ---- directory outputs ---------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void remove_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void outdir_free(cli_outdir *d)
{
    free(d->path);
    free(d->tmp);
    d->path = d->tmp = NULL;
}

int cli_outdir_check(const char *path, cli_outdir_ours ours)
{
    struct stat sb;
    if (stat(path, &sb) < 0)
        return EXIT_OK;
    if (!S_ISDIR(sb.st_mode)) {
        cli_error("%s: exists and is not a directory", path);
        return EXIT_BAD_INPUT;
    }
    DIR *dir = opendir(path);
    if (!dir) {
        cli_error("%s: %s", path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(dir));)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(dir);
    if (empty || (ours && ours(path)))
        return EXIT_OK;
    cli_error("%s: not empty and not an earlier report; not replacing it (remove it or choose "
              "another -o)", path);
    return EXIT_BAD_INPUT;
}

int cli_outdir_open(cli_outdir *d, const char *path, cli_outdir_ours ours)
{
    d->path = d->tmp = NULL;
    if (cli_outdir_check(path, ours) != EXIT_OK)
        return EXIT_BAD_INPUT;
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    d->path = strndup(path, n);
    d->tmp = malloc(n + 16);
    if (!d->path || !d->tmp) {
        outdir_free(d);
        cli_error("out of memory");
        return EXIT_BAD_INPUT;
    }
    snprintf(d->tmp, n + 16, "%s.tmpXXXXXX", d->path);
    if (!mkdtemp(d->tmp)) {
        cli_error("%s: cannot create a directory beside it: %s", d->path, strerror(errno));
        outdir_free(d);
        return EXIT_BAD_INPUT;
    }
    /* mkdtemp makes it 0700; a report is for reading */
    mode_t um = umask(0);
    umask(um);
    chmod(d->tmp, 0777 & ~um);
    return EXIT_OK;
}

nytp_out *cli_outdir_file(cli_outdir *d, const char *name)
{
    if (!*name || name[0] == '/' || strstr(name, "..")) {
        cli_error("%s: refusing to write '%s' outside the report", d->path, name);
        return NULL;
    }
    size_t n = strlen(d->tmp) + strlen(name) + 2;
    char *full = malloc(n);
    if (!full) {
        cli_error("out of memory");
        return NULL;
    }
    snprintf(full, n, "%s/%s", d->tmp, name);
    for (char *slash = strchr(full + strlen(d->tmp) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        if (mkdir(full, 0777) < 0 && errno != EEXIST) {
            cli_error("%s/%s: %s", d->path, name, strerror(errno));
            free(full);
            return NULL;
        }
        *slash = '/';
    }
    nytp_out *out;
    nytp_error e = {0};
    int st = nytp_out_open_file(&out, full, 0, &e);
    free(full);
    if (st < 0) {
        cli_error("%s/%s: %s", d->path, name, e.msg);
        return NULL;
    }
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

int cli_outdir_commit(cli_outdir *d)
{
    int rc = EXIT_OK;
    struct stat sb;
    if (lstat(d->path, &sb) == 0) {
        /* Swap old and new in one step, then remove the old one. */
        if (renameat2(AT_FDCWD, d->tmp, AT_FDCWD, d->path, RENAME_EXCHANGE) < 0) {
            cli_error("%s: cannot replace it: %s", d->path, strerror(errno));
            remove_tree(d->tmp);
            rc = EXIT_BAD_INPUT;
        } else {
            remove_tree(d->tmp);
        }
    } else if (rename(d->tmp, d->path) < 0) {
        cli_error("%s: %s", d->path, strerror(errno));
        remove_tree(d->tmp);
        rc = EXIT_BAD_INPUT;
    }
    outdir_free(d);
    return rc;
}

void cli_outdir_abort(cli_outdir *d)
{
    if (d->tmp)
        remove_tree(d->tmp);
    outdir_free(d);
}

/* ---- progress on a terminal ------------------------------------------------ */

static void progress_draw(cli_progress *pg)
{
    unsigned total = pg->total ? atomic_load(pg->total) : 0;
    if (total)
        fprintf(stderr, "\rnytp %s: %s %u/%u %s \033[K\r", cli_command, pg->phase,
                atomic_load(pg->done), total, pg->unit);
    else
        fprintf(stderr, "\rnytp %s: %s \033[K\r", cli_command, pg->phase);
    pg->shown = true;
}

static void *progress_main(void *arg)
{
    cli_progress *pg = arg;
    struct timespec start, t;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_mutex_lock(&pg->lock);
    for (;;) {
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 250 * 1000 * 1000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&pg->cond, &pg->lock, &t);
        if (pg->stop)
            break;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double secs = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
        if (secs >= pg->after)
            progress_draw(pg);
    }
    if (!pg->shown && pg->after <= 0) /* NYTP_PROGRESS_AFTER=0: always, even if quick */
        progress_draw(pg);
    if (pg->shown)
        fputs("\r\033[K", stderr);
    pthread_mutex_unlock(&pg->lock);
    return NULL;
}

void cli_progress_start(cli_progress *pg, const char *phase)
{
    memset(pg, 0, sizeof *pg);
    pg->phase = phase;
    if (!isatty(2) || getenv("NYTP_NO_PROGRESS"))
        return;
    const char *after = getenv("NYTP_PROGRESS_AFTER"); /* for tests */
    pg->after = after ? strtod(after, NULL) : 1.0;
    pthread_mutex_init(&pg->lock, NULL);
    pthread_cond_init(&pg->cond, NULL);
    pg->running = pthread_create(&pg->thread, NULL, progress_main, pg) == 0;
}

void cli_progress_phase(cli_progress *pg, const char *phase, const atomic_uint *done,
                        const atomic_uint *total, const char *unit)
{
    if (!pg->running)
        return;
    pthread_mutex_lock(&pg->lock);
    pg->phase = phase;
    pg->done = done;
    pg->total = total;
    pg->unit = unit;
    pthread_mutex_unlock(&pg->lock);
}

void cli_progress_end(cli_progress *pg)
{
    if (!pg->running)
        return;
    pthread_mutex_lock(&pg->lock);
    pg->stop = true;
    pthread_cond_signal(&pg->cond);
    pthread_mutex_unlock(&pg->lock);
    pthread_join(pg->thread, NULL);
    pthread_mutex_destroy(&pg->lock);
    pthread_cond_destroy(&pg->cond);
    pg->running = false;
}

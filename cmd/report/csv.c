/* csv.c — 'nytp csv': one CSV file of line times per profiled source
 * file, named and laid out as Devel::NYTProf's nytprofcsv (through
 * Devel::NYTProf::Reader) writes them, into a directory written atomically.
 *
 * The rules followed, so that the rows line up with nytprofcsv's:
 *  - reports per level: "sub", "block", "line" when the profile has
 *    blocks, else "line" only; string evals get only the line level;
 *  - sibling string evals are collapsed first (Devel::NYTProf::Data's
 *    default);
 *  - a line's time adds the statement time of every string eval run on
 *    it (nested evals included); a line with statements but a zero count
 *    shows 1 call;
 *  - the source is the one saved in the profile, else the file on disk,
 *    else a one-line message, numbered from line 0;
 *  - runs of three or more blank lines without data shrink to one row.
 * The deliberate differences: a code field holding a comma, a double
 * quote, CR or LF is quoted as RFC 4180 says (nytprofcsv writes it raw,
 * which breaks CSV readers); a control byte in a file name is %XX. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "dump_data.h"
#include "fmt.h"
#include "perl_config.h"
#include "viewopt.h"

static const char usage[] =
    "usage: nytp csv [-f FILE] [-o DIR] [-d] [--strict]\n"
    "                [--focus=file:RE] [--ignore=file:RE] [--hide=file:RE] [FILE...]\n"
    "\n"
    "Write one CSV file per profiled source file (time, calls, time/call,\n"
    "code for every source line), with the file names and layout of\n"
    "Devel::NYTProf's nytprofcsv, into DIR (default: ./nytprof), only when\n"
    "every file is written; only files nytp wrote there are ever replaced.\n"
    "Several FILEs are added up into one profile (default FILE: nytprof.out;\n"
    "'-' reads standard input).\n"
    "\n"
    "  -f, --file=FILE   read FILE (the same as naming it)\n"
    "  -o, --out=DIR     write the CSV files into DIR (default: nytprof);\n"
    "                    --output is the same\n"
    "  -d, --delete      first remove every file of earlier nytp reports in DIR\n"
    "                    (an html report's too); files nytp did not write never go\n"
    "  --strict          a truncated profile is an error (exit 1)\n"
    "  --focus=file:RE   write only the files whose name matches RE (POSIX\n"
    "                    extended; repeatable)\n"
    "  --ignore=file:RE, --hide=file:RE\n"
    "                    leave out the files whose name matches RE (the\n"
    "                    files' lines have no call stacks: only file: patterns)\n"
    "                    every file written then says in a '# View:' line what\n"
    "                    was left out\n"
    "  -h, --help        this help\n"
    "\n"
    "A code field holding a comma, double quote, CR or LF is quoted (RFC 4180).\n"
    "Exit status: 0 ok (a truncated file only warns), 1 bad input, 2 usage.\n";

typedef struct csv_opts {
    const char *out;
    bool strict;
    bool del;               /* -d */
    viewopt vo;             /* only file: patterns */
} csv_opts;

enum { OPT_STRICT = 256 };

static void on_opt(int opt, const char *arg, void *ctx)
{
    csv_opts *o = ctx;
    if (viewopt_on_opt(&o->vo, opt, arg)) {
        if (strncmp(arg, "file:", 5) != 0)
            cli_usage_error("'%s': nytp csv writes the lines of files, which have no call stacks: "
                            "only 'file:RE' patterns apply", arg);
        return;
    }
    switch (opt) {
    case 'o': o->out = arg; break;
    case OPT_STRICT: o->strict = true; break;
    case 'd': o->del = true; break;
    }
}

/* ---- state of one run --------------------------------------------------- */

typedef struct span {
    const char *s;
    size_t len;
} span;

typedef struct csv_run {
    const nytp_profile *p;
    cli_outdir dir;
    dump_data_opts inc;     /* perl's @INC, no version strip */
    size_t fname_max;       /* NYTPROF_FNAME_TRIM, default 50 */
    double basetime;
    uint32_t sawampersand_fid;
    double *eval_time;      /* per fid: statement time of it and its nested evals */
    const nytp_view *view;  /* file: patterns, or NULL */
    char view_line[1400];   /* "# View: ...\n", or "" */
    bool *warned;           /* per fid: "no source" said once */
    /* per-file scratch */
    bool *has;              /* line has some data (Reader's %stats_by_line) */
    double *evtime;         /* time of evals run on the line */
    uint32_t cap;
    span *lines;
    uint32_t n_lines, cap_lines;
    char *buf;              /* a source file read from disk */
} csv_run;

static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool blank(span l)
{
    for (size_t i = 0; i < l.len; i++)
        if (!is_ws((unsigned char)l.s[i]))
            return false;
    return true;
}

/* ---- report file names (Reader's fname_for_fileinfo) -------------------- */

static char *report_name(csv_run *R, const nytp_file *f, const char *level)
{
    const nytp_profile *p = R->p;
    uint32_t nl = nytp_profile_strlen(p, f->name);
    /* room for every byte as %XX, and the -FID-LEVEL.csv suffix */
    char *name = malloc(3 * (size_t)nl + 64);
    if (!name)
        return NULL;
    size_t n = dump_data_strip_inc(nytp_profile_str(p, f->name), nl, &R->inc, name);
    if (n > R->fname_max) {
        /* s!/.*!/.../! : from the first to the last '/' */
        char *a = memchr(name, '/', n);
        char *b = a ? memrchr(a + 1, '/', n - (size_t)(a + 1 - name)) : NULL;
        if (a && b) {
            size_t tail = n - (size_t)(b + 1 - name);
            memmove(a + 5, b + 1, tail);
            memcpy(a, "/.../", 5);
            n = (size_t)(a + 5 - name) + tail;
        }
    }
    if (n > R->fname_max) {
        memcpy(name, "TOOLONG", 7);
        n = 7;
    }
    /* html_safe_filename: runs of -/\:*?"'<>|. become one '-', and a
     * leading and a trailing '-' go */
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (strchr("-/\\:*?\"'<>|.", name[i]) && name[i]) {
            while (i < n && name[i] && strchr("-/\\:*?\"'<>|.", name[i]))
                i++;
            name[k++] = '-';
        } else {
            name[k++] = name[i++];
        }
    }
    size_t start = k && name[0] == '-';
    if (k > start && name[k - 1] == '-')
        k--;
    memmove(name, name + start, k - start);
    k -= start;
    /* A NUL would cut the name (two files "a\0x.pl" and "a\0y.pl" would
     * both be written as "a"), and control bytes make names no one can
     * type: they become %XX, from the end so it works in place.  '%'
     * itself stays, as nytprofcsv leaves it: names stay unique all the
     * same, since the file id is part of every name. */
    size_t extra = 0;
    for (size_t i = 0; i < k; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            extra += 2;
    for (size_t i = k, j = k + extra; i-- > 0;) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f) {
            static const char hex[] = "0123456789ABCDEF";
            name[--j] = hex[c & 15];
            name[--j] = hex[c >> 4];
            name[--j] = '%';
        } else {
            name[--j] = (char)c;
        }
    }
    k += extra;
    snprintf(name + k, 64, "-%u-%s.csv", f->fid, level);
    return name;
}

/* ---- source lines --------------------------------------------------------- */

static bool push_line(csv_run *R, const char *s, size_t len)
{
    if (!cli_grow((void **)&R->lines, (size_t)R->n_lines + 1, &R->cap_lines, sizeof *R->lines))
        return false;
    R->lines[R->n_lines++] = (span){s, len};
    return true;
}

/* The largest source file read from disk (a FIFO, device or anything
 * but a regular file is never read: see cli_open_source). */
#define SOURCE_MAX ((uint64_t)256 << 20)

/* The file as FileInfo's abs_filename finds it: autosplit note removed,
 * ".pmc" preferred, a relative name searched in @INC. */
static FILE *open_source(csv_run *R, const nytp_file *f, int *err)
{
    const char *name = nytp_profile_str(R->p, f->name);
    size_t len = strlen(name);
    char *base = malloc(len + 2);
    if (!base) {
        *err = ENOMEM;
        return NULL;
    }
    memcpy(base, name, len + 1);
    char *auto_note = strstr(base, " (autosplit into ");
    if (auto_note)
        *auto_note = 0;
    if (f->flags & NYTP_FIDF_IS_PMC)
        strcat(base, "c");
    struct stat sb;
    FILE *fp = NULL;
    if (base[0] != '/') {
        for (size_t i = 0; i < R->inc.n_inc && !fp; i++) {
            size_t n = strlen(R->inc.inc[i]) + strlen(base) + 2;
            char *path = malloc(n);
            if (!path) { /* not "unable to open": the report would lack its source */
                free(base);
                *err = ENOMEM;
                return NULL;
            }
            snprintf(path, n, "%s/%s", R->inc.inc[i], base);
            if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
                fp = cli_open_source(path, SOURCE_MAX);
            free(path);
        }
    }
    if (!fp)
        fp = cli_open_source(base, SOURCE_MAX);
    *err = errno;
    free(base);
    return fp;
}

static bool read_lines(csv_run *R, FILE *fp)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return false;
    for (;;) {
        if (n == cap) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                return false;
            }
            buf = b;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (got == 0)
            break;
    }
    R->buf = buf;
    for (size_t i = 0; i < n;) {
        char *nl = memchr(buf + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - buf) + 1 : n;
        if (!push_line(R, buf + i, e - i))
            return false;
        i = e;
    }
    return true;
}

/* The one-line stand-in for missing source (Reader's wording). */
static char *no_source_message(csv_run *R, const nytp_file *f, int err)
{
    const char *name = nytp_profile_str(R->p, f->name);
    size_t len = strlen(name);
    size_t n = 2 * len + 300;
    char *msg = malloc(n);
    if (!msg)
        return NULL;
    if (f->flags & NYTP_FIDF_IS_FAKE) {
        snprintf(msg, n, "No source code available for synthetic (fake) file %s.", name);
    } else if (f->eval_fid) {
        snprintf(msg, n,
                 "No source code available for string eval %s.\nYou probably need to use a "
                 "more recent version of perl. See savesrc option in documentation.",
                 name);
    } else if (strncmp(name, "/loader/0x", 10) == 0 && strchr(name + 10, '/')) {
        snprintf(msg, n,
                 "No source code available for 'file' loaded via CODE reference in @INC.\n"
                 "See savesrc option in documentation.");
    } else if (f->flags & NYTP_FIDF_IS_EVAL) {
        snprintf(msg, n,
                 "No source code available for non-file '%s'.\nYou probably need to use a "
                 "more recent version of perl. See savesrc option in documentation.",
                 name);
    } else {
        /* what cli_open_source refuses, said plainly */
        const char *why = err == EINVAL ? "not a regular file (a FIFO, device or socket is not read)"
                          : err == EFBIG ? "larger than a source file can be (256 MiB)"
                                         : strerror(err);
        const char *acc = strstr(name, "/accessor ");
        const char *def = NULL;
        for (const char *d = acc ? strstr(acc, " defined at /") : NULL; d;
             d = strstr(d + 1, " defined at /"))
            def = d;
        const char *gen = strstr(name, "/generated method (unknown origin)");
        if (acc && def)
            snprintf(msg, n, "Source for generated Moose %.*s isn't available (%s: %s)",
                     (int)(def - acc - 1), acc + 1, name, why);
        else if (gen)
            snprintf(msg, n, "Source for Moose generated method (unknown origin) isn't "
                             "available (%s: %s)", name, why);
        else
            snprintf(msg, n, "Unable to open '%s' for reading: %s", name, why);
        if (!R->warned[f->fid]) {
            R->warned[f->fid] = true;
            cli_warn("%s", msg);
        }
    }
    return msg;
}

/* ---- one report --------------------------------------------------------- */

/* counts_unknown: a sampled profile, whose lines have a time and an
 * unknown count: the calls and time/call fields are left empty. */
static int put_row(nytp_out *out, const nytp_linestat *st, double evtime, span code,
                   bool counts_unknown)
{
    double time = (st ? st->time : 0) + evtime;
    double calls = st ? (double)(st->count ? st->count : 1) : 0;
    /* the code, leading whitespace trimmed, quoted when CSV needs it */
    size_t i = 0;
    while (i < code.len && is_ws((unsigned char)code.s[i]))
        i++;
    const char *s = code.s + i;
    size_t len = code.len - i;
    bool quote = false;
    for (size_t k = 0; k < len && !quote; k++)
        quote = s[k] == ',' || s[k] == '"' || s[k] == '\r' || s[k] == '\n';
    size_t room = 120 + (quote ? 2 * len + 2 : len);
    char *o = (char *)nytp_out_reserve(out, room);
    if (!o)
        return -1;
    char *start = o;
    if (counts_unknown)
        o += snprintf(o, 120, "%f,,,", time);
    else
        o += snprintf(o, 120, "%f,%g,%f,", time, calls, calls != 0 ? time / calls : 0.0);
    if (quote) {
        *o++ = '"';
        for (size_t k = 0; k < len; k++) {
            if (s[k] == '"')
                *o++ = '"';
            *o++ = s[k];
        }
        *o++ = '"';
    } else {
        memcpy(o, s, len);
        o += len;
    }
    *o++ = '\n';
    nytp_out_commit(out, (size_t)(o - start));
    return 0;
}

static const nytp_lines *level_lines(const nytp_file *f, const char *level)
{
    if (strcmp(level, "sub") == 0)
        return &f->sub;
    if (strcmp(level, "block") == 0)
        return &f->block;
    return &f->line;
}

static bool ensure_scratch(csv_run *R, uint32_t n)
{
    if (n <= R->cap)
        return true;
    bool *h = realloc(R->has, n * sizeof *h);
    if (h)
        R->has = h;
    double *t = realloc(R->evtime, n * sizeof *t);
    if (t)
        R->evtime = t;
    if (!h || !t)
        return false;
    R->cap = n;
    return true;
}

static const char header[] =
    "# Profile data generated by nytp csv\n"
    "# Version: v" NYTP_VERSION_STRING "\n"
    "# More information: nytp-csv(1)\n"
    "# Format: time,calls,time/call,code\n";
static const char taintmsg[] =
    "# WARNING!\n"
    "# The source file used in generating this report has been modified\n"
    "# since generating the profiler database.  It might be out of sync\n";
static const char sawampersand[] =
    "# NOTE!\n"
    "# This file uses special regexp match variables that impact the performance\n"
    "# of all regular expression in the program!\n"
    "# See WARNING in http://perldoc.perl.org/perlre.html#Capture-buffers\n";

/* A CSV has a row per line, so lines are written densely up to the last
 * one with something to show: a line number far beyond the others (more
 * than LINE_LIMIT past the number of lines with anything) is left out,
 * with a warning, rather than written as billions of empty rows. */
#define LINE_LIMIT 65536u

static int write_report(csv_run *R, const nytp_file *f, const char *level)
{
    const nytp_profile *p = R->p;
    const nytp_lines *L = level_lines(f, level);

    /* the highest line with anything to show */
    uint64_t limit = (uint64_t)LINE_LIMIT + L->n + f->n_sites + f->n_subs + f->n_evals + f->src.n;
    bool cut = false;
    uint32_t src_max = L->n ? nytp_lines_last(L) + 1 : 0;
    uint32_t calls_max = 0, defs_max = 0, evals_max = 0;
    for (uint32_t i = 0; i < f->n_sites; i++)
        if (p->sites[f->sites[i]].line > calls_max)
            calls_max = p->sites[f->sites[i]].line;
    for (uint32_t i = 0; i < f->n_subs; i++) {
        uint32_t l = p->subs[f->subs[i]].first_line;
        if (l != NYTP_NONE && l > defs_max)
            defs_max = l;
    }
    for (uint32_t i = 0; i < f->n_evals; i++)
        if (p->files[f->evals[i]].eval_line > evals_max)
            evals_max = p->files[f->evals[i]].eval_line;
    uint32_t *maxes[] = {&src_max, &calls_max, &defs_max, &evals_max};
    uint32_t max = 0;
    for (int i = 0; i < 4; i++) {
        if (*maxes[i] > limit) {
            *maxes[i] = (uint32_t)limit;
            cut = true;
        }
        if (*maxes[i] > max)
            max = *maxes[i];
    }
    if (!ensure_scratch(R, max + 1))
        return -1;
    memset(R->has, 0, (max + 1) * sizeof *R->has);
    memset(R->evtime, 0, (max + 1) * sizeof *R->evtime);
    for (uint32_t i = 0; i < f->n_subs; i++) {
        uint32_t l = p->subs[f->subs[i]].first_line;
        if (l != NYTP_NONE && l && l <= max)
            R->has[l] = true;
    }
    for (uint32_t i = 0; i < f->n_sites; i++) {
        uint32_t l = p->sites[f->sites[i]].line;
        if (l <= max)
            R->has[l] = true;
    }
    for (uint32_t i = 0; i < f->n_evals; i++) {
        const nytp_file *e = &p->files[f->evals[i]];
        if (e->eval_line <= max) {
            R->has[e->eval_line] = true;
            R->evtime[e->eval_line] += R->eval_time[e->fid];
        }
    }
    for (uint32_t i = 0; i < L->n && L->v[i].line <= max; i++)
        R->has[L->v[i].line] = true;

    char *fname = report_name(R, f, level);
    if (!fname)
        return -1;
    nytp_out *out = cli_outdir_file(&R->dir, fname);
    if (!out) {
        free(fname);
        return 1;
    }

    /* the source lines */
    R->n_lines = 0;
    free(R->buf);
    R->buf = NULL;
    uint32_t lineno = 1;
    char *msg = NULL;
    /* saved lines are stored sparse: the gaps are filled up to the limit */
    const nytp_src *S = &f->src;
    bool saved = S->n > 0, ok = true;
    if (saved) {
        uint32_t i = 0;
        while (i < S->n && S->v[i].line == 0)
            i++;
        for (; i < S->n && ok; i++) {
            if (S->v[i].line > limit) {
                cut = true;
                break;
            }
            while (ok && R->n_lines + 1 < S->v[i].line)
                ok = push_line(R, "", 0);
            if (ok)
                ok = push_line(R, S->v[i].text.ptr, S->v[i].text.len);
        }
    } else {
        int err = 0;
        FILE *fp = open_source(R, f, &err);
        if (fp) {
            ok = read_lines(R, fp);
            fclose(fp);
        } else if (err == ENOMEM) {
            ok = false;
        } else {
            msg = no_source_message(R, f, err);
            ok = msg && push_line(R, msg, strlen(msg));
            lineno = 0;
        }
    }
    if (cut)
        cli_warn("%s: lines beyond %llu are far beyond the others (a corrupt profile?): not in its %s report",
                 nytp_profile_str(p, f->name), (unsigned long long)limit, level);
    while (ok && max > 1 && R->n_lines < max - 1)
        ok = push_line(R, "", 0);
    static const char line0[] = "Profile data that couldn't be associated with a specific line:";
    if (ok && R->has[0]) {
        lineno = 0;
        ok = push_line(R, "", 0);
        if (ok) {
            memmove(R->lines + 1, R->lines, (R->n_lines - 1) * sizeof *R->lines);
            R->lines[0] = (span){line0, sizeof line0 - 1};
        }
    }

    int st = ok ? 0 : -1;
    if (!st) {
        nytp_out_write(out, header, sizeof header - 1);
        if (*R->view_line)
            nytp_out_write(out, R->view_line, strlen(R->view_line));
        if (!saved) {
            struct stat sb;
            const char *name = nytp_profile_str(p, f->name);
            if (stat(name, &sb) == 0 && S_ISREG(sb.st_mode) && (double)sb.st_mtime > R->basetime)
                nytp_out_write(out, taintmsg, sizeof taintmsg - 1);
        }
        if (R->sawampersand_fid == f->fid)
            nytp_out_write(out, sawampersand, sizeof sawampersand - 1);
        char note[160];
        if (cli_sampled_note(p, note, sizeof note))
            nytp_out_printf(out, "# NOTE: %s: calls and time/call are left empty\n", note);
    }
    bool prev_empty = false;
    for (uint32_t i = 0; i < R->n_lines && !st; lineno++) {
        span line = R->lines[i++];
        if (line.len && line.s[line.len - 1] == '\n')
            line.len--;
        bool skip = prev_empty && line.len == 0 && i < R->n_lines && blank(R->lines[i]) &&
                    !(lineno <= max && R->has[lineno]);
        bool data = lineno <= max && R->has[lineno];
        const nytp_linestat *ls = data ? nytp_lines_get(L, lineno) : NULL;
        st = put_row(out, ls, data ? R->evtime[lineno] : 0, line, p->counts_unknown);
        if (skip)
            while (i < R->n_lines && blank(R->lines[i]) && !(lineno + 1 <= max && R->has[lineno + 1])) {
                i++;
                lineno++;
            }
        prev_empty = line.len == 0;
    }
    free(msg);
    if (st < 0) {
        cli_error("%s/%s: %s", R->dir.path, fname,
                  nytp_out_error(out) ? nytp_out_error(out)->msg : "out of memory");
        nytp_out_abort(out);
        free(fname);
        return 1;
    }
    int rc = cli_outdir_close_file(&R->dir, out, fname);
    free(fname);
    return rc;
}

/* eval_time: the statement time of every string eval with the evals
 * nested in it, however deep (the deepest are added to their parents
 * first). */
static void sum_eval_times(csv_run *R)
{
    const nytp_profile *p = R->p;
    for (uint32_t i = 0; i < p->n_evals_by_depth; i++) {
        const nytp_file *f = &p->files[p->evals_by_depth[i]];
        double t = 0;
        for (uint32_t k = 0; k < f->line.n; k++)
            t += f->line.v[k].time;
        R->eval_time[f->fid] = t;
    }
    for (uint32_t i = p->n_evals_by_depth; i-- > 0;) {
        const nytp_file *f = &p->files[p->evals_by_depth[i]];
        if (f->eval_depth > 1)
            R->eval_time[f->eval_fid] += R->eval_time[f->fid];
    }
}

/* What the file: patterns make of file fid (a string eval: of the file
 * it was run from). */
static bool shown(const csv_run *R, uint32_t fid)
{
    const nytp_profile *p = R->p;
    const nytp_file *root = &p->files[p->files[fid].root_fid];
    return !R->view || !root->defined ||
           nytp_view_file(R->view, nytp_profile_str(p, root->name)) == NYTP_VIEW_SHOWN;
}

/* R->view_line: the patterns, the files left out and their share of the
 * statement time. */
static void describe_view(csv_run *R, const viewopt *vo)
{
    static const char *const words[] = {"focus", "ignore", "hide"};
    const nytp_profile *p = R->p;
    size_t n = 0, size = sizeof R->view_line - 1;
    n += (size_t)snprintf(R->view_line, size, "# View: ");
    for (int op = 0; op < NYTP_VIEW_N_OPS; op++)
        for (size_t i = 0; i < nytp_view_count(vo->v, (enum nytp_view_op)op) && n < size; i++)
            n += (size_t)snprintf(R->view_line + n, size - n, "%s%s '%s'", i || op ? ", " : "", words[op],
                                  nytp_view_pattern(vo->v, (enum nytp_view_op)op, i));
    double all = 0, kept = 0;
    uint32_t files = 0, left = 0;
    for (uint32_t fid = 1; fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        double t = 0;
        for (uint32_t k = 0; k < f->line.n; k++)
            t += f->line.v[k].time;
        all += t;
        bool keep = shown(R, fid);
        kept += keep ? t : 0;
        if (f->defined && !f->eval_fid && !nytp_file_is_empty(f)) {
            files++;
            left += !keep;
        }
    }
    char total[40];
    *fmt_duration(total, all) = 0;
    if (n < size)
        snprintf(R->view_line + n, size - n, ": %u of %u files left out; %.1f%% of %s of statements shown\n",
                 left, files, all > 0 ? 100 * kept / all : 0.0, total);
}

static int write_reports(csv_run *R)
{
    const nytp_profile *p = R->p;
    const char *levels[3];
    int nlevels = 0;
    if (p->has_blocks) {
        levels[nlevels++] = "sub";
        levels[nlevels++] = "block";
    }
    levels[nlevels++] = "line";
    sum_eval_times(R);
    for (int lv = 0; lv < nlevels; lv++) {
        for (uint32_t fid = 1; fid < p->n_files; fid++) {
            const nytp_file *f = &p->files[fid];
            if (!f->defined || nytp_file_is_empty(f) || (f->eval_fid && strcmp(levels[lv], "line") != 0) ||
                !shown(R, fid))
                continue;
            int rc = write_report(R, f, levels[lv]);
            if (rc < 0) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
            }
            if (rc)
                return rc;
        }
    }
    return EXIT_OK;
}

int cmd_csv(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},
        {"output", required_argument, NULL, 'o'},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"delete", no_argument, NULL, 'd'},
        {"focus", required_argument, NULL, OPT_VIEW_FOCUS},
        {"ignore", required_argument, NULL, OPT_VIEW_IGNORE},
        {"hide", required_argument, NULL, OPT_VIEW_HIDE},
        {NULL, 0, NULL, 0},
    };
    csv_opts o = {"nytprof", false, false, {NULL, 0}};
    viewopt_init(&o.vo);
    int first = cli_parse(argc, argv, "f:o:d", longopts, usage, on_opt, &o);
    if (!*o.out)
        cli_usage_error("--out needs a directory name");
    if (cli_outdir_check(o.out, "csv", NULL) != EXIT_OK)
        return EXIT_BAD_INPUT;

    int rc;
    nytp_profile *p = cli_load_profile(argc - first, argv + first, o.strict, &rc);
    if (!p)
        return rc;
    if (cli_fold_aliases(p) < 0 || nytp_profile_collapse_evals(p) < 0) {
        cli_error("out of memory");
        nytp_profile_free(p);
        return EXIT_BAD_INPUT;
    }

    csv_run R = {0};
    R.p = p;
    char *storage = NULL;
    R.inc.inc = dump_data_split_dirs(NYTP_PERL_INC, &R.inc.n_inc, &storage);
    const char *trim = getenv("NYTPROF_FNAME_TRIM");
    R.fname_max = trim && atol(trim) > 0 ? (size_t)atol(trim) : 50;
    const char *bt = nytp_profile_attr(p, "basetime");
    R.basetime = bt ? atof(bt) : 0;
    const char *amp = nytp_profile_attr(p, "sawampersand_fid");
    R.sawampersand_fid = amp && atol(amp) > 0 ? (uint32_t)atol(amp) : NYTP_NONE;
    R.eval_time = calloc(p->n_files + 1, sizeof *R.eval_time);
    R.warned = calloc(p->n_files + 1, sizeof *R.warned);
    if (viewopt_active(&o.vo)) {
        R.view = o.vo.v;
        describe_view(&R, &o.vo);
    }
    if (!R.inc.inc || !R.eval_time || !R.warned) {
        cli_error("out of memory");
        rc = EXIT_BAD_INPUT;
    } else if ((rc = cli_outdir_open(&R.dir, o.out, "csv", NULL)) == EXIT_OK) {
        R.dir.delete_old = o.del;
        rc = write_reports(&R);
        if (rc == EXIT_OK)
            rc = cli_outdir_commit(&R.dir);
        else
            cli_outdir_abort(&R.dir);
    }
    free(R.inc.inc);
    free(storage);
    free(R.eval_time);
    free(R.warned);
    free(R.has);
    free(R.evtime);
    free(R.lines);
    free(R.buf);
    nytp_profile_free(p);
    viewopt_release(&o.vo);
    return rc;
}

/* cli_input.c — the inputs of a command: each named once, none also the
 * output, of one run, loaded into one profile. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_impl.h"

/* An input's file identity, and where it was named. */
typedef struct {
    dev_t dev;
    ino_t ino;
    int at;
} input_id;

static int input_id_cmp(const void *a, const void *b)
{
    const input_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* Sorted by identity, each file named again points at its first naming:
 * n log n, as a day of a service's profile segments is tens of
 * thousands of names (comparing each with all before it took 2 s of the
 * 3.3 s that 40,000 small profiles took to load). */
int cli_unique_inputs(int nfiles, char **files)
{
    input_id *ids = calloc((size_t)nfiles + 1, sizeof *ids);
    int *first = calloc((size_t)nfiles + 1, sizeof *first);
    char **named = calloc((size_t)nfiles + 1, sizeof *named); /* files moves down */
    if (!ids || !first || !named) { /* keep them all: at worst counted twice */
        free(ids);
        free(first);
        free(named);
        return nfiles;
    }
    memcpy(named, files, (size_t)nfiles * sizeof *named);
    int n = 0;
    for (int i = 0; i < nfiles; i++) {
        struct stat sb;
        bool is_stdin = strcmp(files[i], "-") == 0;
        first[i] = i;
        if ((is_stdin ? fstat(0, &sb) : stat(files[i], &sb)) < 0)
            continue; /* kept: opening it reports why not */
        ids[n].dev = sb.st_dev;
        ids[n].ino = sb.st_ino;
        ids[n].at = i;
        n++;
    }
    qsort(ids, (size_t)n, sizeof *ids, input_id_cmp);
    for (int k = 1; k < n; k++)
        if (ids[k].dev == ids[k - 1].dev && ids[k].ino == ids[k - 1].ino)
            first[ids[k].at] = first[ids[k - 1].at];
    int k = 0;
    for (int i = 0; i < nfiles; i++) {
        if (first[i] != i) {
            const char *was = named[first[i]];
            if (strcmp(was, files[i]) == 0)
                cli_warn("%s: given twice; read once", display_name(files[i]));
            else
                cli_warn("%s: the same file as %s; read once", display_name(files[i]),
                         display_name(was));
            continue;
        }
        files[k++] = files[i];
    }
    free(ids);
    free(first);
    free(named);
    return k;
}

void cli_output_not_input(const char *output, int nfiles, char *const *files,
                          const char *default_input)
{
    struct stat ob;
    bool to_stdout = !output || strcmp(output, "-") == 0;
    if ((to_stdout ? fstat(1, &ob) : stat(output, &ob)) < 0 || !S_ISREG(ob.st_mode))
        return; /* a new file, a device, a FIFO: nothing to destroy */
    char *const def[] = {(char *)default_input};
    if (nfiles == 0 && default_input) {
        files = def;
        nfiles = 1;
    }
    for (int i = 0; i < nfiles; i++) {
        struct stat ib;
        bool is_stdin = strcmp(files[i], "-") == 0;
        if ((is_stdin ? fstat(0, &ib) : stat(files[i], &ib)) < 0)
            continue;
        if (ib.st_dev != ob.st_dev || ib.st_ino != ob.st_ino)
            continue;
        const char *in = is_stdin ? "standard input" : display_name(files[i]);
        if (to_stdout)
            cli_error("standard output is the same file as %s%s: it would be overwritten; refusing",
                      is_stdin ? "" : "the input ", in);
        else if (files == def)
            cli_error("-o %s is the input read when no file is named: it would be overwritten; "
                      "refusing", display_name(output));
        else if (strcmp(output, files[i]) == 0)
            cli_error("-o %s is also an input: it would be overwritten; refusing", display_name(output));
        else
            cli_error("-o %s is the same file as the input %s: it would be overwritten; refusing",
                      display_name(output), in);
        exit(EXIT_USAGE);
    }
}

/* The name a file is known by whichever way the profile spelled it: its
 * real path when it exists, else the name with "//" and "/./" squeezed
 * and a leading "./" dropped ("a/../b" is left alone: "a" may be a
 * symlink). */
static char *file_key(const char *name)
{
    char *real = realpath(name, NULL);
    if (real)
        return real;
    char *k = strdup(name);
    if (!k)
        return NULL;
    char *o = k;
    for (const char *s = name; *s;) {
        if (s == name && s[0] == '.' && s[1] == '/' && s[2]) {
            s += 2;
            while (*s == '/')
                s++;
            continue;
        }
        if (*s == '/' && o > k && o[-1] == '/') {
            s++;
            continue;
        }
        if (*s == '.' && o > k && o[-1] == '/' && s[1] == '/') {
            s += 2;
            continue;
        }
        *o++ = *s++;
    }
    *o = 0;
    return k;
}

typedef struct keyed_fid {
    char *key;
    uint32_t fid;
} keyed_fid;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed_fid *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->fid > y->fid) - (x->fid < y->fid);
}

int cli_fold_aliases(nytp_profile *p)
{
    keyed_fid *v = calloc((size_t)p->n_files + 1, sizeof *v);
    uint32_t *into = malloc(((size_t)p->n_files + 1) * sizeof *into);
    uint32_t n = 0;
    int st = v && into ? NYTP_OK : NYTP_E_NOMEM;
    for (uint32_t fid = 0; st == NYTP_OK && fid < p->n_files; fid++) {
        const nytp_file *f = &p->files[fid];
        into[fid] = fid;
        if (!fid || !f->defined || f->eval_fid || nytp_file_is_empty(f) || memchr(nytp_profile_str(p, f->name), 0,
                                                                                     nytp_profile_strlen(p, f->name)))
            continue;
        if (!(v[n].key = file_key(nytp_profile_str(p, f->name))))
            st = NYTP_E_NOMEM;
        else
            v[n++].fid = fid;
    }
    bool any = false;
    if (st == NYTP_OK && n > 1) {
        qsort(v, n, sizeof *v, cmp_keyed);
        for (uint32_t i = 1; i < n; i++)
            if (strcmp(v[i].key, v[i - 1].key) == 0) {
                into[v[i].fid] = into[v[i - 1].fid]; /* the lowest fid of the group */
                any = true;
            }
    }
    if (any)
        st = nytp_profile_fold_files(p, into);
    for (uint32_t i = 0; i < n; i++)
        free(v[i].key);
    free(v);
    free(into);
    return st;
}

/* ---- which run an input is of ----------------------------------------------------- */

typedef struct run_of {
    char id[96];            /* "nytp_run=...", "run_id=..." or "basetime=..." */
    bool segment;
    uint32_t pid;
    long long basetime;
} run_of;

static void kv_copy(char *dst, size_t size, const char *key, const nytp_str *v)
{
    snprintf(dst, size, "%s=%.*s", key, (int)(v->len < 64 ? v->len : 64), v->ptr);
}

/* From the header, up to PID_START (a few chunks): false when it cannot
 * be read or is not a regular file. */
static bool read_run_of(const char *path, run_of *r)
{
    struct stat st;
    memset(r, 0, sizeof *r);
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    nytp_reader *rd;
    nytp_error e;
    if (nytp_reader_open(&rd, path, &e) < 0)
        return false;
    nytp_reader_set_warn(rd, NULL, NULL);
    char nytp_run[96] = "", run_id[96] = "", base[96] = "";
    nytp_chunk c;
    for (int k = 0; k < 256 && nytp_reader_next(rd, &c, &e) == NYTP_OK; k++) {
        if (c.tag == NYTP_TAG_PID_START) {
            r->pid = c.u.pid_start.pid;
            break;
        }
        if (c.tag != NYTP_TAG_ATTRIBUTE)
            continue;
        const nytp_str *key = &c.u.kv.key, *v = &c.u.kv.value;
#define KEY_IS(s) (key->len == sizeof s - 1 && memcmp(key->ptr, s, sizeof s - 1) == 0)
        if (KEY_IS("segment"))
            r->segment = true;
        else if (KEY_IS("nytp_run"))
            kv_copy(nytp_run, sizeof nytp_run, "nytp_run", v);
        else if (KEY_IS("run_id"))
            kv_copy(run_id, sizeof run_id, "run_id", v);
        else if (KEY_IS("basetime")) {
            kv_copy(base, sizeof base, "basetime", v);
            r->basetime = strtoll(base + 9, NULL, 10);
        }
#undef KEY_IS
    }
    nytp_reader_close(rd);
    snprintf(r->id, sizeof r->id, "%s", nytp_run[0] ? nytp_run : run_id[0] ? run_id : base);
    return true;
}

static void describe_run(const run_of *r, char *buf, size_t size)
{
    time_t t = (time_t)r->basetime;
    struct tm tm;
    char when[32] = "?";
    if (localtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, size, "started %s, pid %u", when, (unsigned)r->pid);
}

void cli_check_runs(int nfiles, char *const *files)
{
    if (nfiles < 2)
        return;
    run_of *r = malloc((size_t)nfiles * sizeof *r);
    if (!r)
        return; /* a check, not the report: the loading says it if memory is short */
    int segments = 0;
    for (int i = 0; i < nfiles; i++) {
        if (!read_run_of(files[i], &r[i]))
            r[i].id[0] = 0;
        segments += r[i].segment;
    }
    int a = -1, b = -1;
    for (int i = 0; i < nfiles && segments && b < 0; i++) {
        if (!r[i].id[0])
            continue;
        if (a < 0)
            a = i;
        else if (strcmp(r[i].id, r[a].id) != 0)
            b = i;
    }
    if (b >= 0) {
        char da[96], db[96];
        describe_run(&r[a], da, sizeof da);
        describe_run(&r[b], db, sizeof db);
        cli_warn("%s (%s) and %s (%s) are of different runs, with segments among the inputs: "
                 "their numbers are added up as one; give the files of one run",
                 files[a], da, files[b], db);
    }
    free(r);
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
    cli_check_runs(nfiles, files);
    for (int i = 0; i < nfiles; i++) {
        nytp_load_opts lo = {cli_reader_warning, files[i], on_chunk, ctx, true};
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
    if (nytp_profile_finish(p) < 0) {
        cli_error("out of memory");
        *rc = EXIT_BAD_INPUT;
        nytp_profile_free(p);
        return NULL;
    }
    return p;
}

/* Append to buf (of size bytes, n used), cut to fit. */
static void __attribute__((format(printf, 4, 5)))
note_add(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *n, size - *n, fmt, ap);
    va_end(ap);
    if (k > 0)
        *n = (size_t)k < size - *n ? *n + (size_t)k : size - 1;
}

const char *cli_sampled_note(const nytp_profile *p, char *buf, size_t size)
{
    if (!p->counts_unknown || !size)
        return NULL;
    size_t n = 0;
    buf[0] = 0;
    if (p->n_sampled < p->n_inputs)
        note_add(buf, size, &n, "%u of %u inputs ", p->n_sampled, p->n_inputs);
    if (p->sample_hz_mixed)
        note_add(buf, size, &n, "sampled at several rates");
    else
        note_add(buf, size, &n, "sampled at %.0f Hz", p->sample_hz);
    note_add(buf, size, &n, ", %llu samples", (unsigned long long)p->samples);
    if (p->n_sample_counts < p->n_sampled)
        note_add(buf, size, &n, " (%u cut short: their samples not counted)",
                 p->n_sampled - p->n_sample_counts);
    note_add(buf, size, &n, "; counts unknown");
    return buf;
}

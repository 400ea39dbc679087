/* output.c — the profile file: header, opening and closing, a new file
 * after fork, and what is written at the end of a run. */
#include "nytp_prof.h"
#include <sys/file.h>
#include <limits.h>
#include <dirent.h>

/* ---- end of a run: source, sub line ranges, call arcs -------------------------- */

static void write_sources(pTHX)
{
    for (unsigned ix = 1; ix <= S.nentries; ix++) {
        fid_info *f = &S.fids[ix];
        if (!(f->flags & NYTP_FIDF_HAS_SRC) || !(f->flags & NYTP_FIDF_SAVE_SRC))
            continue;
        /* a segment (rotate=) has the source of the files it has data for */
        if (S.rotate_ticks && !(f->id < S.fid_used_cap && S.fid_used[f->id]))
            continue;
        GV *gv = gv_fetchfile_flags(f->key, f->key_len, 0);
        AV *src = gv ? GvAV(gv) : NULL;
        if (!src)
            continue;
        SSize_t n = av_len(src);
        for (SSize_t line = 1; line <= n; line++) {
            SV **svp = av_fetch(src, line, 0);
            STRLEN len = 0;
            const char *text = svp ? SvPV(*svp, len) : "";
            nytp_write_src_line(S.w, f->id, (uint32_t)line,
                                str_n(text, len, svp && SvUTF8(*svp)));
        }
    }
}

/* The package part of a qualified sub name. */
static STRLEN pkg_len_of(const char *name, STRLEN len)
{
    for (STRLEN i = len; i >= 2; i--)
        if (name[i - 1] == ':' && name[i - 2] == ':')
            return i - 2;
    return 0;
}

static SV *pkg_file_sv(pTHX_ const char *sub, STRLEN len)
{
    STRLEN pl = pkg_len_of(sub, len);
    if (!pl)
        return NULL;
    SV **svp = hv_fetch(S.pkg_files_hv, sub, (I32)pl, 0);
    return svp ? *svp : NULL;
}

/* "file:first-last" from %DB::sub.  perl keeps the first line in an I32
 * (PL_subline) and the last in a line_t (32 bits, unsigned): a sub that
 * starts on line 2**31 or later (after a #line directive) has a negative
 * first line there, which is the line less 2**32, so it is given back
 * exactly (Devel::NYTProf warns and makes it 0). */
static int parse_dbsub(pTHX_ SV *sv, STRLEN *file_len, UV *first, UV *last, const char *sub)
{
    const char *s = SvPV_nolen(sv);
    const char *colon = strrchr(s, ':');
    if (!colon)
        return 0;
    if (file_len)
        *file_len = (STRLEN)(colon - s);
    const char *p = colon + 1;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    const char *dash = strchr(p, '-');
    UV f = 0;
    if (!dash || !grok_number(p, (STRLEN)(dash - p), &f))
        return 0;
    if (neg) {
        if (f >= 1 && f <= (UV)0x80000000u) {
            f = (UV)(U32)(0u - (U32)f); /* 2**32 - f, also where a UV is 32 bits */
        } else {
            note("Negative first line number in %%DB::sub entry '%s' for %s\n", s, sub);
            f = 0;
        }
    }
    const char *l = dash + 1;
    UV lv = 0;
    if (*l == '-') {
        note("Negative last line number in %%DB::sub entry '%s' for %s\n", s, sub);
    } else if (!grok_number(l, strlen(l), &lv) || lv > UINT32_MAX) {
        lv = 0; /* not a line number perl makes */
    }
    if (first)
        *first = f;
    if (last)
        *last = lv;
    return 1;
}

static void write_sub_infos(pTHX)
{
    HV *hv = GvHV(PL_DBsub);
    char *name;
    I32 name_len;
    SV *sv;

    /* Which file each called package lives in (xsubs have none of their
     * own, and are shown in that file). */
    hv_iterinit(hv);
    while ((sv = hv_iternextsv(hv, &name, &name_len))) {
        STRLEN vlen;
        const char *v = SvPV(sv, vlen);
        STRLEN nlen = (STRLEN)(name_len < 0 ? -name_len : name_len);
        /* entries like "file:12-0" are bogus (an attribute on an xsub at
         * boot time); they would associate the package with a wrong file */
        if (vlen > 4 && v[vlen - 2] == '-' && v[vlen - 1] == '0' && v[vlen - 4] != ':'
            && v[vlen - 3] != '0')
            continue;
        const char *colon = strrchr(v, ':');
        STRLEN flen = colon ? (STRLEN)(colon - v) : 0;
        SV *pf = pkg_file_sv(aTHX_ name, nlen);
        if (!pf)
            continue;
        if (SvOK(pf)) {
            STRLEN clen;
            const char *cached = SvPV(pf, clen);
            if (flen > 0 && name_is_eval(cached, clen) && !name_is_eval(v, flen))
                sv_setpvn(pf, v, flen);
            continue;
        }
        if (!flen)
            continue;
        sv_setpvn(pf, v, flen);
        file_id(aTHX_ v, flen, NYTP_FIDF_VIA_SUB);
    }

    if (S.main_runtime_used) {
        SV **svp = hv_fetchs(hv, "main::RUNTIME", 1);
        SV *pf = pkg_file_sv(aTHX_ "main::RUNTIME", 13);
        if (!pf) {
            if (S.nentries)
                sv_setpvn(*svp, S.fids[1].key, S.fids[1].key_len);
            else
                sv_setpvs(*svp, "");
        } else if (SvOK(pf)) {
            sv_setsv(*svp, pf);
        } else {
            sv_setpvs(*svp, "");
        }
        sv_catpvs(*svp, ":1-1");
    }

    hv_iterinit(hv);
    while ((sv = hv_iternextsv(hv, &name, &name_len))) {
        STRLEN nlen = (STRLEN)(name_len < 0 ? -name_len : name_len);
        STRLEN flen;
        UV first, last;
        if (!parse_dbsub(aTHX_ sv, &flen, &first, &last, name)) {
            note("Can't parse %%DB::sub entry for %s '%s'\n", name, SvPV_nolen(sv));
            continue;
        }
        const char *file = SvPV_nolen(sv);
        if (!flen) {
            SV *pf = pkg_file_sv(aTHX_ name, nlen);
            if (pf && SvOK(pf))
                file = SvPV(pf, flen);
        }
        unsigned fid = file_id(aTHX_ file, flen, 0);
        if (!fid)
            continue;
        nytp_write_sub_info(S.w, fid, (uint32_t)first, (uint32_t)last,
                            str_n(name, nlen, name_len < 0));
    }
}

/* The arcs into S.callers_hv as Devel::NYTProf keeps them, called name ->
 * { "caller[fid:line]" -> arc number }, inserted in the order the arcs
 * were made: the hashes, and so the order the arcs are written in, are
 * those a profiler filling them call by call would have (the same order as
 * Devel::NYTProf's under PERL_HASH_SEED=0, PERL_PERTURB_KEYS=0).  With
 * keys_only, the called names alone (a fork's child clears them, keeping
 * the size of the table as it would). */
static void fill_callers_hv(pTHX_ int keys_only)
{
    char key[64];
    for (size_t k = 0; k < S.narcs; k++) {
        const arc_stats *a = &S.arcs[k];
        SV **svp = hv_fetch(S.callers_hv, a->called->full, (I32)a->called->full_len, 1);
        if (keys_only)
            continue;
        if (!SvROK(*svp)) {
            HV *by_caller = newHV();
            sv_setsv(*svp, sv_2mortal(newRV_noinc((SV *)by_caller)));
        }
        HV *by_caller = (HV *)SvRV(*svp);
        SV *name = sv_2mortal(a->caller ? newSVpvn(a->caller->full, a->caller->full_len)
                                        : newSVpvs(""));
        int n = snprintf(key, sizeof key, "[%u:%d]", a->fid, a->line);
        sv_catpvn(name, key, (STRLEN)n);
        (void)hv_store(by_caller, SvPVX(name), (I32)SvCUR(name), newSVuv(k), 0);
    }
}

/* The call arcs, named now (a caller's "Pkg::name" as written; an xsub's
 * marker has none and is at 0:0). */
static void write_call_arcs(pTHX)
{
    fill_callers_hv(aTHX_ 0);
    char *called;
    I32 called_len;
    SV *rv;
    hv_iterinit(S.callers_hv);
    while ((rv = hv_iternextsv(S.callers_hv, &called, &called_len))) {
        if (!SvROK(rv))
            continue;
        HV *by_caller = (HV *)SvRV(rv);
        char *key;
        I32 key_len;
        SV *sv;
        hv_iterinit(by_caller);
        while ((sv = hv_iternextsv(by_caller, &key, &key_len))) {
            const arc_stats *a = &S.arcs[SvUV(sv)];
            nytp_write_sub_callers(S.w, a->fid, (uint32_t)a->line, (uint32_t)a->count,
                                   a->incl / TICKS_PER_SEC, a->excl / TICKS_PER_SEC, a->reci,
                                   (uint32_t)a->rec_depth,
                                   str_n(a->called->full, a->called->full_len, false),
                                   a->caller ? str_n(a->caller->full, a->caller->full_len, false)
                                             : str_n("", 0, false));
        }
    }
}

/* ---- the output file ------------------------------------------------------------ */

static void write_header(pTHX)
{
    char buf[64];
    time_t base = PL_basetime;
    char when[64];
    ctime_r(&base, when);
    when[strcspn(when, "\n")] = 0;
    snprintf(buf, sizeof buf, "%s", when);

    nytp_write_header(S.w, 5, 0);
    char comment[128];
    snprintf(comment, sizeof comment, "Perl profile database. Generated by Devel::NYTP on %s", buf);
    nytp_write_comment(S.w, comment);
    snprintf(buf, sizeof buf, "%lu", (unsigned long)PL_basetime);
    nytp_write_attribute(S.w, "basetime", buf);
    SV *app = get_sv("0", GV_ADDWARN);
    STRLEN alen;
    const char *a = SvPV(app, alen);
    char *appname = savepvn(a, alen);
    for (char *p = appname; *p; p++)
        if (*p == '\n')
            *p = ' ';
    nytp_write_attribute(S.w, "application", appname);
    /* nytp run's mark on the profiles of the processes it runs, so that it
     * names those and not another run's with the same file name */
    const char *run = getenv("NYTP_RUN");
    if (run && *run && strlen(run) < 64)
        nytp_write_attribute(S.w, "nytp_run", run);
    Safefree(appname);
    snprintf(buf, sizeof buf, "%d.%d.%d", PERL_REVISION, PERL_VERSION, PERL_SUBVERSION);
    nytp_write_attribute(S.w, "perl_version", buf);
    snprintf(buf, sizeof buf, "%u", (unsigned)sizeof(NV));
    nytp_write_attribute(S.w, "nv_size", buf);
    nytp_write_attribute(S.w, "xs_version", NYTP_XS_VERSION);
    snprintf(buf, sizeof buf, "%lu", (unsigned long)PL_perldb);
    nytp_write_attribute(S.w, "PL_perldb", buf);
    snprintf(buf, sizeof buf, "%ld", (long)OPT(O_CLOCK));
    nytp_write_attribute(S.w, "clock_id", buf);
    snprintf(buf, sizeof buf, "%ld", TICKS_PER_SEC);
    nytp_write_attribute(S.w, "ticks_per_sec", buf);
    if (S.rotate_ticks) {
        snprintf(buf, sizeof buf, "%g", (double)S.rotate_ticks / TICKS_PER_SEC);
        nytp_write_attribute(S.w, "rotate_seconds", buf);
        snprintf(buf, sizeof buf, "%u", S.seg);
        nytp_write_attribute(S.w, "segment", buf);
        nytp_write_attribute(S.w, "run_id", S.run_id);
    }
    if (S.sample_hz) {
        snprintf(buf, sizeof buf, "%u", S.sample_hz);
        nytp_write_attribute(S.w, "sample_hz", buf);
    }
    for (int i = 0; i < O_COUNT; i++) {
        snprintf(buf, sizeof buf, "%" IVdf, S.opt[i].value);
        nytp_write_option(S.w, S.opt[i].name, buf);
    }
    if (OPT(O_COMPRESS))
        nytp_write_start_deflate(S.w, (int)OPT(O_COMPRESS));
    nytp_write_pid_start(S.w, (uint32_t)getpid(), (uint32_t)getppid(), wall_time());
    emit_all_fids(); /* known before a fork or a new segment */
    nytp_out_flush(nytp_writer_out(S.w));
}

/* The deflater: NYTP_DEFLATE=zlib|isal, else ISA-L where the build has
 * it (an order of magnitude less CPU than zlib at compress=6, for a file
 * about a quarter larger), else zlib. */
static int set_deflater(nytp_out *o, nytp_error *err)
{
    const char *name = getenv("NYTP_DEFLATE");
    if (name && *name)
        return nytp_out_set_deflater(o, name, err);
    nytp_error ignored;
    if (nytp_out_set_deflater(o, "isal", &ignored) < 0)
        nytp_out_set_deflater(o, "zlib", &ignored);
    return NYTP_OK;
}

/* Whether the regular file path is a profile that another process is
 * writing now: every profile is written under an exclusive flock. */
static bool written_by_another(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return false;
    bool busy = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
    close(fd);
    return busy;
}

/* What a file that is not a regular one is, for a message. */
static const char *file_kind(mode_t mode)
{
    return S_ISLNK(mode)    ? "a symbolic link"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISDIR(mode)  ? "a directory"
                            : "not a regular file";
}

/* Remove path, a temporary of a segment (.FILE.sN.PID.partial) that its
 * writer left when it was killed before renaming it: a regular file of
 * this user that no process holds locked (a writer locks its temporary
 * from the moment it makes it until it is renamed), whose writer pid is
 * gone, or which is old enough that pid is another process now (pid -1:
 * the pid is this process's own, so the file is a dead one's).  Never a
 * live process's: true when it was removed. */
static bool remove_if_stale(const char *path, pid_t pid)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return false;
    struct stat sb, now;
    bool stale = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid()
                 && flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (stale && pid > 0 && !(kill(pid, 0) < 0 && errno == ESRCH))
        stale = sb.st_mtime < time(NULL) - 600; /* pid reused: a writer has long renamed it */
    /* still the file examined: not one put in its place meanwhile */
    stale = stale && lstat(path, &now) == 0 && now.st_dev == sb.st_dev && now.st_ino == sb.st_ino
            && unlink(path) == 0;
    close(fd);
    return stale;
}

/* The hidden name a segment is written under until its header is out:
 * .FILE.sN.PID.partial beside FILE.sN, with as much of FILE.sN as fits in
 * NAME_MAX (a long FILE.sN fits where that would not). */
static void temporary_name(char *dst, size_t size, const char *name)
{
    const char *slash = strrchr(name, '/');
    size_t dl = slash ? (size_t)(slash - name + 1) : 0;
    char tail[32];
    int tl = snprintf(tail, sizeof tail, ".%d.partial", (int)getpid());
    size_t keep = strlen(name + dl);
    if (1 + keep + (size_t)tl > NAME_MAX)
        keep = NAME_MAX - 1 - (size_t)tl;
    snprintf(dst, size, "%.*s.%.*s%s", (int)dl, name, (int)keep, name + dl, tail);
}

/* Whether s (len bytes) is a segment's part of a made name, after FILE:
 * (".N")* ".sM", a child's pid or a time before the segment's number. */
static bool segment_parts(const char *s, size_t len)
{
    const char *e = s + len;
    while (s < e) {
        if (*s++ != '.')
            return false;
        bool seg = s < e && *s == 's';
        s += seg;
        const char *d = s;
        while (s < e && *s >= '0' && *s <= '9')
            s++;
        if (s == d)
            return false;
        if (seg)
            return s == e;
    }
    return false;
}

/* The temporaries of segments of file (those of every process that
 * wrote file: FILE.sN, FILE.PID.sN ...) that a process killed between
 * making one and renaming it left behind (kill -9): removed when the next
 * run of file starts, if stale (remove_if_stale: never a live process's).
 * Once per process: a child leaves it to the run's first process. */
static void remove_stale_temporaries(const char *file)
{
    static bool done;
    if (done)
        return;
    done = true;
    const char *slash = strrchr(file, '/');
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash == file ? 1 : slash - file) : 1,
             slash ? file : ".");
    const char *base = slash ? slash + 1 : file;
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    int saved_errno = errno;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        size_t len = strlen(n);
        static const char suffix[] = ".partial";
        if (n[0] != '.' || len < sizeof suffix + 2 || strcmp(n + len - (sizeof suffix - 1), suffix))
            continue;
        const char *end = n + len - (sizeof suffix - 1); /* at ".partial" */
        const char *p = end;
        while (p > n + 1 && p[-1] >= '0' && p[-1] <= '9')
            p--;
        if (p == end || p[-1] != '.' || p - 1 <= n + 1)
            continue;
        pid_t pid = (pid_t)strtol(p, NULL, 10);
        const char *mid = n + 1; /* FILE.sN, or as much of it as fitted */
        size_t mlen = (size_t)(p - 1 - mid);
        bool ours = (mlen > blen && memcmp(mid, base, blen) == 0
                     && segment_parts(mid + blen, mlen - blen))
                    || (len == NAME_MAX && mlen <= blen + 24 && memcmp(mid, base, mlen < blen ? mlen : blen) == 0);
        if (!ours || pid <= 0)
            continue;
        char path[PATH_MAX + NAME_MAX + 2];
        snprintf(path, sizeof path, "%s/%s", dir, n);
        if (remove_if_stale(path, pid))
            TRACE(1, "~ removed %s, left by a process that is gone\n", path);
    }
    closedir(d);
    errno = saved_errno;
}

/* FILE cannot be this process's profile (why): it writes FILE.PID. */
static void write_beside(const char *name, const char *why)
{
    S.addpid = 1;
    note("Devel::NYTP: %s %s; this process writes %s.%d instead\n", name, why, name,
         (int)getpid());
}

/* Open the profile file and write its header: FILE (with .PID, .TIME),
 * or a later segment of it, FILE.sN.  On failure, croak (when profiling
 * starts: a file that cannot be written is an error before the program
 * runs) or, with croak_on_error 0, say so and return -1. */
int open_output(pTHX_ int croak_on_error)
{
    char name[sizeof S.seg_base + 16];
again:
    if (S.seg == 0) {
        snprintf(name, sizeof name, "%s", S.file);
        if (S.addpid)
            snprintf(name + strlen(name), sizeof name - strlen(name), ".%d", (int)getpid());
        if (S.addtimestamp)
            snprintf(name + strlen(name), sizeof name - strlen(name), ".%.0f", (double)wall_time());
        snprintf(S.seg_base, sizeof S.seg_base, "%s", name);
    } else {
        /* ".sN", never a number alone: FILE.N would be a child's FILE.PID */
        snprintf(name, sizeof name, "%s.s%u", S.seg_base, S.seg);
    }

    /* One process per file: a stale profile is removed first, and the
     * file is created exclusively.  Only a regular file is removed.  The
     * name the user gave (file=, DB::enable_profile) may also be a
     * device, a FIFO or a symbolic link, opened and written through (as
     * the user meant), never replaced.  A name made here (FILE.PID,
     * FILE.TIME, a segment) is predictable, in a directory others may
     * write to (/var/tmp): what is found there that is not a regular
     * file was not made by a profiler, and is neither opened (a link
     * would have its target overwritten, a FIFO would block for ever)
     * nor removed: this process's profiling stops there, saying so.
     * A later segment (rotate=) is written under a hidden name until its
     * header is out, then renamed: a kill -9 between the two never
     * leaves an empty FILE.sN (which a reader would take for a broken
     * file, not a cut one). */
    char msg[NYTP_ERROR_MSG_MAX + 64];
    if (S.seg == 0)
        remove_stale_temporaries(S.file);
    bool given = S.seg == 0 && !S.addpid && !S.addtimestamp;
    struct stat sb;
    bool exists = lstat(name, &sb) == 0;
    bool plain = !exists || S_ISREG(sb.st_mode);
    if (!plain && !given) {
        snprintf(msg, sizeof msg, "it is %s, which this process did not make: not opened",
                 file_kind(sb.st_mode));
        goto fail;
    }
    /* A profile that another process is writing (a perl this one ran
     * with -d:NYTP in PERL5OPT, the same program run twice at once) is
     * never removed: this process writes FILE.PID instead. */
    if (exists && plain && S.seg == 0 && written_by_another(name)) {
        if (S.addpid) {
            snprintf(msg, sizeof msg, "it is being written by another process");
            goto fail;
        }
        write_beside(name, "is being written by another process");
        goto again;
    }
    char tmp[sizeof name + 32];
    const char *path = name;
    if (plain && S.seg > 0) {
        temporary_name(tmp, sizeof tmp, name);
        path = tmp;
    }
    /* a segment's temporary is renamed over FILE.sN: nothing to remove */
    if (plain && path == name)
        unlink(path);
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 2; tries++) {
        fd = open(path,
                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY
                      | (plain ? O_EXCL | O_NOFOLLOW : 0),
                  0666);
        /* a temporary left by a dead process of this pid (kill -9) */
        if (fd < 0 && errno == EEXIST && path != name && !remove_if_stale(path, -1))
            break;
    }
    if (fd < 0 && errno == EEXIST && S.seg == 0 && !S.addpid) {
        /* it could not be removed (immutable), or another process made
         * it between the unlink and the open */
        write_beside(name, "is there and could not be replaced");
        goto again;
    }
    if (fd >= 0 && plain) {
        (void)flock(fd, LOCK_EX | LOCK_NB); /* ours: see written_by_another */
        /* made here, exclusively and not through a link: a regular file
         * (checked all the same, on a file system that might differ) */
        if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
            close(fd);
            snprintf(msg, sizeof msg, "it is not a regular file once made");
            goto fail;
        }
    }
    if (fd < 0) {
        int e = errno;
        snprintf(msg, sizeof msg, "%s%s", strerror(e),
                 e == EEXIST && !S.addpid ? " (use the addpid option against concurrent writes)" : "");
        goto fail;
    }
    nytp_out *o = NULL;
    nytp_error err;
    bool ok = nytp_out_open_fd(&o, fd, true, &err) == NYTP_OK;
    if (!ok)
        close(fd);
    /* a daemon closes every descriptor it did not open and opens its own
     * files, which may get this one's number: the writes check first
     * that it is still this file (a later segment's: once renamed).  The
     * descriptor may move: from here on o owns it, and nytp_out_abort
     * (nytp_writer_open's too, when it fails) closes it. */
    if (ok && nytp_out_guard_fd(o, name, &err) < 0) {
        nytp_out_abort(o);
        ok = false;
    }
    /* sampling writes little, mostly as a file closes: no writer thread,
     * whose existence alone makes every malloc of the program dearer;
     * threads=0: none asked for (unshare(CLONE_NEWUSER) and the like) */
    if (ok && (S.sample_hz || S.no_threads))
        nytp_out_set_threads(o, false);
    if (ok && set_deflater(o, &err) < 0) {
        nytp_out_abort(o);
        ok = false;
    }
    if (!ok || nytp_writer_open(&S.w, o, &err) < 0) {
        if (plain) /* made here, exclusively: no empty file is left */
            unlink(path);
        snprintf(msg, sizeof msg, "%s", err.msg);
        goto fail;
    }
    snprintf(S.out_name, sizeof S.out_name, "%s", name);
    TRACE(1, "~ opened %s\n", name);
    write_header(aTHX); /* flushed: a file that cannot be written fails here */
    const nytp_error *e = nytp_writer_error(S.w);
    if (!(e && e->status) && path != name && rename(path, name) < 0) {
        snprintf(msg, sizeof msg, "renaming it from its temporary name: %s", strerror(errno));
        nytp_writer_abort(S.w);
        S.w = NULL;
        fast_update();
        unlink(path);
        goto fail;
    }
    if (e && e->status) {
        /* the header could not be written (a full disk, a file size
         * limit): the file made above, exclusively, goes, as when the
         * writer cannot start; a device, FIFO or symlink stays */
        snprintf(msg, sizeof msg, "%s", e->msg);
        nytp_writer_abort(S.w);
        S.w = NULL;
        fast_update();
        if (plain)
            unlink(path);
        goto fail;
    }
    fast_update();
    return 0;
fail:
    disable_profile(aTHX);
    if (croak_on_error)
        croak("Devel::NYTP: cannot write profile '%s': %s\n", name, msg);
    note("Devel::NYTP: cannot write profile '%s': %s; profiling stopped\n", name, msg);
    return -1;
}

/* "inc": @INC at the end of the run, its directories joined with ':' (a
 * hook, or a directory whose name holds a ':' or a newline, left out), so
 * that 'nytp diff' can make file names relative to where code was loaded
 * from and match two checkouts of one program.  It is an option, not an
 * attribute: Devel::NYTProf's tests compare profiles with their options
 * cleared, and would see an attribute it does not write.  The line stays
 * within INC_LINE_MAX bytes (directories that would not fit are left out):
 * Devel::NYTProf's reader loses a longer line of a compressed file (it
 * starts with a buffer of 8,192 bytes and reads wrongly into a bigger
 * one). */
#define INC_LINE_MAX 8191
static void write_inc(pTHX)
{
    AV *inc = GvAVn(PL_incgv);
    SV *all = sv_2mortal(newSVpvs(""));
    for (SSize_t i = 0; i <= av_len(inc); i++) {
        SV **svp = av_fetch(inc, i, 0);
        if (!svp || !SvOK(*svp) || SvROK(*svp))
            continue;
        STRLEN len;
        const char *dir = SvPV(*svp, len);
        if (!len || memchr(dir, ':', len) || memchr(dir, '\n', len) || memchr(dir, 0, len))
            continue;
        if (sizeof "inc=" + SvCUR(all) + 1 + len > INC_LINE_MAX) /* "inc=", ':', dir, '\n' */
            continue;
        if (SvCUR(all))
            sv_catpvs(all, ":");
        sv_catpvn(all, dir, len);
    }
    nytp_write_option(S.w, "inc", SvPV_nolen(all));
}

void close_output(pTHX)
{
    if (!S.w)
        return;
    hold_signals(); /* the ending must be written whole */
    NV now = wall_time();
    char buf[64];
    snprintf(buf, sizeof buf, "%" NVgf, S.overhead_ticks);
    nytp_write_attribute(S.w, "cumulative_overhead_ticks", buf);
    write_inc(aTHX);
    if (S.rotate_ticks) /* the call sites' files have data here too */
        for (size_t k = 0; k < S.narcs; k++)
            fid_mark(S.arcs[k].fid);
    write_sources(aTHX);
    write_sub_infos(aTHX);
    write_call_arcs(aTHX);
    nytp_write_pid_end(S.w, (uint32_t)S.pid, now);
    TRACE(1, "~ closing %s\n", S.out_name);
    nytp_error err;
    if (nytp_writer_close(S.w, &err) < 0)
        fprintf(stderr, "Devel::NYTP: writing %s failed: %s\n", S.out_name, err.msg);
    S.w = NULL;
    fast_update();
    release_signals(aTHX);
}

int disable_profile(pTHX)
{
    int was = S.profiling;
    if (OTHER_INTERP())
        return 0;
    TRACE(1, "~ disable_profile (previously %s, pid %d)\n", was ? "enabled" : "disabled",
          (int)getpid());
    if (S.profiling) {
        if (S.on_stop)
            S.on_stop(aTHX); /* sampling: the time up to now first */
        if (OPT(O_USE_DB_SUB))
            sv_setiv(PL_DBsingle, 0);
        if (S.w)
            nytp_out_flush(nytp_writer_out(S.w));
        S.profiling = 0;
        fast_update();
    }
    return was;
}

/* In a child after fork: drop the parent's unwritten data and state, and
 * (within forkdepth) start the child's own file, FILE.PID. */
/* Set in a child by fork() (pthread_atfork), however it was called: perl's
 * fork, an xsub, a piped open.  Checking a flag per statement is much
 * cheaper than getpid(), a system call in glibc. */
void note_fork(void)
{
    S.forked = 1;
    fast_update();
    hold_forked();
    if (S.on_atfork)
        S.on_atfork();
}

int reinit_if_forked(pTHX)
{
    if (!S.forked)
        return 0;
    S.forked = 0;
    fast_update();
    if (getpid() == S.pid)
        return 0;
    TRACE(1, "~ new pid %d (was %d) forkdepth %ld\n", (int)getpid(), (int)S.pid,
          (long)OPT(O_FORKDEPTH));
    S.pid = getpid();
    S.clock_reads = 0;
    S.last_fileptr = NULL;
    S.last_fid = 0;
    S.seg = 0;
    if (S.fid_used)
        memset(S.fid_used, 0, S.fid_used_cap);
    fill_callers_hv(aTHX_ 1);
    hv_clear(S.callers_hv);
    arcs_clear(aTHX);
    int reopen = S.w != NULL;
    if (S.w) {
        nytp_writer_abort(S.w); /* a plain file: only the descriptor closes */
        S.w = NULL;
        fast_update();
        /* a child writes FILE.PID beside a file; into a device (-o
         * /dev/null) it writes as the parent did, never a file beside it */
        struct stat sb;
        if (!(stat(S.file, &sb) == 0 && (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode))))
            S.addpid = 1;
    }
    if (OPT(O_FORKDEPTH) == 0) {
        disable_profile(aTHX);
        reopen = 0;
    } else {
        S.opt[O_FORKDEPTH].value--;
    }
    /* A child whose file cannot be made (a directory it may not write
     * after dropping privileges, a full disk, a directory gone) runs on
     * unprofiled, with the one message open_output gives: croaking here
     * would kill it inside its fork, or make it a second parent in
     * eval { fork }. */
    if (reopen && open_output(aTHX_ 0) == 0) {
        S.rotate_at = INT64_MAX; /* the child's intervals start now */
        rotate_schedule(clock_ticks());
    }
    if (S.on_child)
        S.on_child(aTHX);
    return 1;
}

/* cli.h — what every nytp command shares: option parsing, messages in
 * one format, exit codes, input opening and output files. */
#ifndef NYTP_CLI_H
#define NYTP_CLI_H

#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "nytp/model.h"
#include "nytp/nytp.h"

enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

/* A command: its name, a one-line summary, its usage text (printed by
 * --help) and its entry point. */
typedef struct nytp_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} nytp_command;

/* Name of the running command, for messages ("dump"). */
extern const char *cli_command;

/* src with every byte a terminal could act on (C0 controls, LF and TAB
 * included, C1 controls, DEL, bytes that are not UTF-8) written as strnvis
 * does with VIS_OCTAL | VIS_CSTYLE | VIS_NL | VIS_TAB (\033, \n, \t), so
 * that a message is always one line; UTF-8 text is left as it is.  Cut to fit size
 * (at most 4 bytes out per byte in).  Returns the length written. */
size_t cli_escape(char *dst, size_t size, const char *src);

/* "nytp dump: <message>" on stderr, escaped (cli_escape). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "nytp dump: warning: <message>", capped: only the first 10 warnings of
 * a kind (the same fmt) are shown; at exit one line per capped kind says
 * "... and N more warnings like this: <the last one shown>". */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A library's warning as it is (w->msg), capped by w->kind as cli_warn
 * caps by its format. */
void cli_warn_error(const nytp_error *w);
/* The same for what is neither an error nor a warning ("profile written
 * to x.out"). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What calls, flame and diff --svg say of a profile without call events
 * (after "NAME: "), whose paths then come from its call sites
 * (nytp_calltree_add_sites); pprof and speedscope say the same of theirs. */
#define CLI_NO_RETURNS "no sub return events (profiled with calls=0?): caller;called paths from the call-site data"

/* One-line usage error and exit 2. */
_Noreturn void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "FILE: truncated at offset N, chunk C: message" as an error or a warning. */
void cli_report(const char *file, const nytp_error *e, bool as_warning);
/* Warning callback for readers: ctx is the file name; capped by the
 * warning's kind as cli_warn is. */
void cli_reader_warning(void *ctx, const nytp_error *w);

/* getopt_long over argv with --help (prints usage, exits 0) and unknown
 * options (one line, exit 2) handled.  Calls on_opt for every other option;
 * returns the index of the first operand.  Spellings every command shares
 * are added here: with "o:" in shortopts, --out and --output both mean -o;
 * with "f:", -f FILE and --file=FILE name an input (as the nytprof*
 * scripts take it) and are not passed to on_opt: the files are returned
 * as the first operands, in the order given, before the other operands. */
int cli_parse(int argc, char **argv, const char *shortopts, const struct option *longopts,
              const char *usage, void (*on_opt)(int opt, const char *arg, void *ctx),
              void *ctx);

/* Whether an output path names an SVG file (ends in ".svg", any case);
 * false for NULL. */
bool cli_names_svg(const char *path);

/* Parse a non-negative integer option value or exit 2. */
unsigned long cli_parse_count(const char *opt, const char *arg);
/* --max-recursion=N, the same in every command that rebuilds calls: a
 * number of frames up to UINT32_MAX (0: no folding), or exit 2. */
uint32_t cli_parse_max_recursion(const char *arg);

/* Output for reports: "-" or NULL is stdout, anything else through
 * nytp_out_open_file(NYTP_OUT_ATOMIC): a regular file or a new path is
 * written under a temporary name and renamed into place at close (a
 * symbolic link is followed and its target replaced), anything else (a
 * device, a FIFO, /dev/stdout) is written straight into.  The temporary
 * file is removed if the process is killed by a signal (any whose default
 * action ends the process: see cli_temp_register).  cli_output_close reports errors;
 * returns an exit code. */
nytp_out *cli_output_open(const char *path);
int cli_output_close(nytp_out *out, const char *path);
/* After writing a report: status < 0 (the writer failed) reports why
 * (the output's error, else out of memory), discards the output and
 * returns EXIT_BAD_INPUT; otherwise cli_output_close. */
int cli_output_finish(nytp_out *out, const char *path, int status);

/* Temporary files and directories that must not outlive the process: on
 * any signal whose default action ends the process (SIGINT, SIGTERM,
 * SIGHUP, SIGPIPE, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGXFSZ, SIGXCPU,
 * SIGVTALRM, SIGPROF, the faults, the real-time signals; not SIGKILL),
 * unless it was ignored or handled by something else when nytp started,
 * they are removed and the process dies of the same signal.  A directory
 * must hold only files (no subdirectories).  Register returns a slot (or
 * -1 when the table is full or the path too long: then nothing is removed);
 * removing a path that no longer exists is harmless, so a slot may stay
 * registered after its file was renamed or removed. */
int cli_temp_register(const char *path, bool is_dir);
void cli_temp_unregister(int slot);
/* Between hold and release a fatal signal waits: for steps that must not
 * be cut in the middle (moving a finished report into place).  release
 * then cleans up and dies if one came. */
void cli_signals_hold(void);
void cli_signals_release(void);

/* For atexit(): flush standard output and, when anything written to it
 * failed (a full disk, /dev/full), say so in one line and exit 1. */
void cli_close_stdout(void);
/* Drop the inputs that name a file named before (the same st_dev and
 * st_ino: "x.out x.out*" names x.out twice), warning for each, so that no
 * profile is counted twice; '-' is standard input's file.  Files that
 * cannot be stat'ed are kept (opening them reports why).  Compacts files
 * in place; returns how many are left. */
int cli_unique_inputs(int nfiles, char **files);
/* Refuse (one line, exit 2) an output that is the same regular file as
 * one of the inputs (the same st_dev and st_ino, so through symbolic
 * links, hard links and /proc/self/fd too): writing it would destroy the
 * input before or while it is read.  output NULL or "-" is standard
 * output; input "-" is standard input; with no inputs, default_input
 * (NULL: none) is the one the command reads.  Call it before anything is
 * read or written. */
void cli_output_not_input(const char *output, int nfiles, char *const *files,
                          const char *default_input);

/* Growing arrays, the one way every command does it.  Make room in *v
 * (*cap elements of elem bytes allocated) for need elements, doubling from
 * 16: false when out of memory, or when the size would pass what *cap
 * counts (cli_grow: UINT32_MAX elements, as the uint32_t counts that index
 * such arrays) or what size_t holds, where a doubling wrapped before.  *v
 * and *cap are unchanged on failure. */
bool cli_grow(void **v, size_t need, uint32_t *cap, size_t elem);
bool cli_grow_size(void **v, size_t need, size_t *cap, size_t elem);
/* cli_grow with the new room zeroed. */
bool cli_grow_zeroed(void **v, size_t need, uint32_t *cap, size_t elem);

/* A source file a profile names, opened to be read: only a regular file
 * of at most max_size bytes.  A FIFO, device, socket or directory (which
 * could block the open or a read for ever, or never end) is not opened.
 * NULL with errno set (EISDIR for a directory, EINVAL for any other kind
 * that is not a file, EFBIG when too large) when it cannot be read. */
FILE *cli_open_source(const char *path, uint64_t max_size);

/* Several inputs of one report, when any of them is a segment (a file of
 * rotate=SECONDS): a warning, naming two, when they are not all of one
 * run, as when a shorter run left an earlier run's segments beside its
 * own.  A run is known by the header: the "nytp_run" of nytp run, else
 * the "run_id" Devel::NYTP writes in segments (one for a process and the
 * children it forks), else "basetime".  Only regular files are looked at
 * (standard input or a FIFO cannot be read twice). */
void cli_check_runs(int nfiles, char *const *files);

/* Load files (none: "nytprof.out") into one finished profile, reporting
 * warnings and errors as every command does: a truncated input warns
 * (loaded everything before the cut) unless strict, which makes it an
 * error; a file named twice is read once (cli_unique_inputs); segments of
 * different runs are warned of (cli_check_runs).  Returns NULL and sets
 * *rc to the exit code on failure. */
nytp_profile *cli_load_profile(int nfiles, char **files, bool strict, int *rc);
/* The same, calling on_chunk(ctx, chunk) for every chunk of every input
 * but the statements (TIME_LINE, TIME_BLOCK, DISCOUNT: most chunks, and
 * nothing a caller builds from them) as it is loaded (see
 * nytp_load_opts), to build more in the same pass. */
nytp_profile *cli_load_profile_with(int nfiles, char **files, bool strict,
                                    int (*on_chunk)(void *ctx, const nytp_chunk *c), void *ctx,
                                    int *rc);

/* What a report says of a sampled profile (nytp_profile's counts_unknown):
 * "sampled at 1000 Hz, 2000 samples", with how many of the inputs were
 * when only some were, the rates when they differ, and that an input cut
 * short has no count.  NULL (buf untouched) for a profile not sampled. */
const char *cli_sampled_note(const nytp_profile *p, char *buf, size_t size);

/* Fold the files of p that are one file named several ways ("/a/./b.pl",
 * "/a//b.pl", a symlink to it) into the first of them: the same real
 * path when the file exists, else the same name once "//" and "/./" are
 * squeezed.  Files with nothing in them are left as they are.  Returns
 * NYTP_OK or NYTP_E_NOMEM. */
int cli_fold_aliases(nytp_profile *p);

/* A report written as a directory.  Its files are written into a
 * temporary directory first; only when all are written does
 * cli_outdir_commit put them in place, so a failed or interrupted run
 * changes nothing.  A missing DIR is created by renaming the temporary
 * directory (made beside it).  An existing DIR is written into: the
 * temporary directory is made inside it and each file moved into DIR.
 * What nytp wrote is listed in DIR/.nytp-report (kind and file name per
 * line); a file there is replaced or removed only when that list names it,
 * so reports of different kinds (html, csv) share a directory and nothing
 * foreign is ever deleted or overwritten: a file in the way that the list
 * does not name stops the report with one line.  A symbolic link DIR is
 * followed (the link stays).  File names are single path components. */
typedef struct cli_outdir {
    char *path;     /* the directory as given, for messages */
    char *target;   /* the directory written: path with its links followed */
    char *tmp;      /* where files are written until commit */
    const char *kind;       /* "html", "csv": the marker's first word */
    bool into;              /* target existed: files are moved into it */
    bool delete_old;        /* -d: every file of earlier reports goes, of any kind */
    char **names;           /* files written so far */
    size_t n_names, cap_names;
    int slot;               /* cli_temp_register's slot of tmp */
} cli_outdir;

/* EXIT_OK when path is missing (and its parent a directory) or a
 * directory that a report of this kind may be written into: none of the
 * names in always (NULL-terminated: files this report always writes, may
 * be NULL) is there unless the marker lists it.  Otherwise reports why
 * not and returns EXIT_BAD_INPUT.  Commands call it before their work, to
 * fail early; cli_outdir_open and cli_outdir_commit check again. */
int cli_outdir_check(const char *path, const char *kind, const char *const *always);
/* Returns EXIT_OK, or reports and returns EXIT_BAD_INPUT. */
int cli_outdir_open(cli_outdir *d, const char *path, const char *kind,
                    const char *const *always);
/* Open name (one path component, not starting ".nytp-") inside the report
 * for writing; NULL after reporting an error. */
nytp_out *cli_outdir_file(cli_outdir *d, const char *name);
/* Close a file of the report; reports errors; returns an exit code. */
int cli_outdir_close_file(cli_outdir *d, nytp_out *out, const char *name);
/* Put the finished report in place; returns an exit code.  Frees d's
 * strings either way.  The files of an earlier report of the same kind
 * that this one lacks are removed; with d->delete_old (-d, set after
 * cli_outdir_open) every file the marker lists is, whatever its kind:
 * never one that nytp did not write. */
int cli_outdir_commit(cli_outdir *d);
/* Remove the temporary directory and free d's strings. */
void cli_outdir_abort(cli_outdir *d);

/* Progress of a long run, on a terminal only: once the run has taken a
 * second (NYTP_PROGRESS_AFTER seconds: 0 shows it at once, for tests), a
 * line on stderr, "nytp html: writing 12/40 pages", redrawn four times a
 * second and erased at the end; nothing when stderr is not a terminal or
 * NYTP_NO_PROGRESS is set.  The line ends with the cursor at its start, so
 * that a warning printed meanwhile overwrites it. */
typedef struct cli_progress {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    bool running, stop, shown;
    double after;                       /* seconds before the line appears */
    const char *phase;                  /* a literal: "loading the profile" */
    const atomic_uint *done, *total;    /* counts, or NULL */
    const char *unit;                   /* of the counts: "pages" */
} cli_progress;

void cli_progress_start(cli_progress *pg, const char *phase);
/* A new phase; done/total (NULL: none) are read while it lasts. */
void cli_progress_phase(cli_progress *pg, const char *phase, const atomic_uint *done,
                        const atomic_uint *total, const char *unit);
void cli_progress_end(cli_progress *pg);

#endif

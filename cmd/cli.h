/* cli.h — what every nytp command shares: option parsing, messages in
 * one format, exit codes, input opening and output files. */
#ifndef NYTP_CLI_H
#define NYTP_CLI_H

#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

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

/* src with every byte a terminal could act on (C0 and C1 controls, DEL,
 * bytes that are not UTF-8) written as strnvis does with VIS_OCTAL |
 * VIS_CSTYLE (\033, \n); UTF-8 text is left as it is.  Cut to fit size
 * (at most 4 bytes out per byte in).  Returns the length written. */
size_t cli_escape(char *dst, size_t size, const char *src);

/* "nytp dump: <message>" on stderr, escaped (cli_escape). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for what is neither an error nor a warning ("profile written
 * to x.out"). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One-line usage error and exit 2. */
_Noreturn void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "FILE: truncated at offset N, chunk C: message" as an error or a warning. */
void cli_report(const char *file, const nytp_error *e, bool as_warning);
/* Warning callback for readers: ctx is the file name. */
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

/* Parse a non-negative integer option value or exit 2. */
unsigned long cli_parse_count(const char *opt, const char *arg);

/* Output for reports: "-" or NULL is stdout, anything else is written
 * atomically.  cli_output_close reports errors; returns an exit code. */
nytp_out *cli_output_open(const char *path);
int cli_output_close(nytp_out *out, const char *path);
/* After writing a report: status < 0 (the writer failed) reports why
 * (the output's error, else out of memory), discards the output and
 * returns EXIT_BAD_INPUT; otherwise cli_output_close. */
int cli_output_finish(nytp_out *out, const char *path, int status);

/* Drop the inputs that name a file named before (the same st_dev and
 * st_ino: "x.out x.out*" names x.out twice), warning for each, so that no
 * profile is counted twice; '-' is standard input's file.  Files that
 * cannot be stat'ed are kept (opening them reports why).  Compacts files
 * in place; returns how many are left. */
int cli_unique_inputs(int nfiles, char **files);

/* Load files (none: "nytprof.out") into one finished profile, reporting
 * warnings and errors as every command does: a truncated input warns
 * (loaded everything before the cut) unless strict, which makes it an
 * error; a file named twice is read once (cli_unique_inputs).  Returns
 * NULL and sets *rc to the exit code on failure. */
nytp_profile *cli_load_profile(int nfiles, char **files, bool strict, int *rc);
/* The same, calling on_chunk(ctx, chunk) for every chunk of every input
 * as it is loaded (see nytp_load_opts), to build more in the same pass. */
nytp_profile *cli_load_profile_with(int nfiles, char **files, bool strict,
                                    int (*on_chunk)(void *ctx, const nytp_chunk *c), void *ctx,
                                    int *rc);

/* A report written as a directory, atomically: files are written into a
 * temporary directory beside path, and cli_outdir_commit swaps it into
 * place (the previous report, if any, is removed only then), so a failed
 * run leaves the previous report intact and no half-written one. */
typedef struct cli_outdir {
    char *path;     /* the final directory */
    char *tmp;      /* where files are written until commit */
} cli_outdir;

/* Whether an existing, non-empty directory holds an earlier report of
 * this kind, which may be replaced.  Anything else (someone's home, a
 * source tree) is never replaced. */
typedef bool (*cli_outdir_ours)(const char *dir);

/* EXIT_OK when path is missing, an empty directory, or a directory that
 * ours() recognises; otherwise reports why not and returns
 * EXIT_BAD_INPUT.  Commands call it before their work, to fail early;
 * cli_outdir_open checks again. */
int cli_outdir_check(const char *path, cli_outdir_ours ours);
/* Returns EXIT_OK, or reports and returns EXIT_BAD_INPUT. */
int cli_outdir_open(cli_outdir *d, const char *path, cli_outdir_ours ours);
/* Open name (relative; may not contain "..") inside the report for
 * writing, creating subdirectories; NULL after reporting an error. */
nytp_out *cli_outdir_file(cli_outdir *d, const char *name);
/* Close a file of the report; reports errors; returns an exit code. */
int cli_outdir_close_file(cli_outdir *d, nytp_out *out, const char *name);
/* Swap the finished report into place; returns an exit code.  Frees d's
 * strings either way. */
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

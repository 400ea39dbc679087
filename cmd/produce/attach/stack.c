/* stack.c — 'nytp stack PID...': the perl call stack of running perls,
 * innermost first, as caller() sees it, read from outside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "json.h"
#include "perl_layout.h"
#include "target.h"
#include "walk.h"

static const char usage[] =
    "usage: nytp stack [--json] [--children] PID...\n"
    "\n"
    "Print the perl call stack of each running perl PID, innermost first, as\n"
    "caller() sees it: the sub and where it is (file and line); anonymous\n"
    "subs as Pkg::__ANON__[file:line], by the line of their closing brace\n"
    "as Devel::NYTProf names them (found in the file on disk), string\n"
    "evals' files as (eval N)[file:line], BEGIN blocks as Pkg::BEGIN@line\n"
    "while their file compiles, a builtin Devel::NYTP profiles (sleep, I/O,\n"
    "regex, sort) as Pkg::CORE:name, an xsub that is running as Pkg::name,\n"
    "the top level as main::RUNTIME.  The stack is read\n"
    "with process_vm_readv: nothing is loaded into the perl, nothing written\n"
    "to it, and it is not stopped.  Only a perl of the version and build\n"
    "nytp was built with is read; of a threaded program, the main\n"
    "interpreter.\n"
    "\n"
    "  --json        one JSON object per process, one per line\n"
    "  --children    also every descendant process of each PID (a preforking\n"
    "                server's workers), after the PIDs given; those that\n"
    "                are not perls are skipped\n"
    "  -h, --help    this help\n"
    "\n"
    "Reading another user's process needs the permission ptrace needs\n"
    "(the same user and kernel.yama.ptrace_scope 0, or CAP_SYS_PTRACE).\n"
    "Exit status: 0 ok, 1 a PID could not be read, 2 usage.\n";

enum { OPT_JSON = 256, OPT_CHILDREN };

struct stack_opts {
    bool json, children;
};

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct stack_opts *o = ctx;
    (void)arg;
    if (opt == OPT_JSON)
        o->json = true;
    else if (opt == OPT_CHILDREN)
        o->children = true;
}

/* A hung perl's stack does not change; one being read while it runs may
 * be torn: read again, a few times (a single snapshot has no statistics
 * that retrying could bias). */
#define STACK_TRIES 50

static void print_text(const walker *w, const attach_target *t, const char *program)
{
    printf("Process %d: %s%s\n", (int)t->pid, program,
           w->compiling ? " (compiling)" : "");
    if (t->threads > 1)
        printf("  (%d threads: the main interpreter's stack is shown)\n", t->threads);
    for (size_t i = 0; i < w->n; i++) {
        const walk_frame *f = &w->f[i];
        printf("    %s at %s line %u\n", walker_str(w, f->name), walker_str(w, f->file), f->line);
    }
}

static void print_json(const walker *w, const attach_target *t, const char *program)
{
    nytp_out *out = NULL;
    nytp_error e;
    fflush(stdout);
    if (nytp_out_open_fd(&out, 1, false, &e) < 0)
        return;
    json j;
    json_init(&j, out);
    json_object(&j);
    json_key(&j, "pid");
    json_u64(&j, (uint64_t)t->pid);
    json_key(&j, "program");
    json_cstr(&j, program);
    json_key(&j, "perl");
    json_cstr(&j, t->perl);
    json_key(&j, "threads");
    json_u64(&j, (uint64_t)t->threads);
    json_key(&j, "compiling");
    json_bool(&j, w->compiling);
    json_key(&j, "frames");
    json_array(&j);
    for (size_t i = 0; i < w->n; i++) {
        const walk_frame *f = &w->f[i];
        json_object(&j);
        json_key(&j, "sub");
        json_cstr(&j, walker_str(w, f->name));
        json_key(&j, "kind");
        json_cstr(&j, walker_kind_name(f->kind));
        json_key(&j, "file");
        json_cstr(&j, walker_str(w, f->file));
        json_key(&j, "line");
        json_u64(&j, f->line);
        json_end(&j);
    }
    json_end(&j);
    json_end(&j);
    json_raw(&j, "\n");
    json_flush(&j);
    nytp_out_close(out, &e);
}

/* One process: 0 printed (or skipped: a descendant that is not a perl),
 * 1 an error said.  *printed: a stack was printed before (a blank line
 * separates them). */
static int stack_one(pid_t pid, const struct stack_opts *o, bool quiet_not_perl, bool *printed)
{
    attach_target t;
    char why[512];
    if (target_open(&t, pid, why, sizeof why) < 0) {
        if (quiet_not_perl && strstr(why, "not a perl"))
            return 0;
        cli_error("%s", why);
        return 1;
    }
    walker w;
    walker_init(&w, &t);
    int rc = WALK_TORN;
    for (int i = 0; i < STACK_TRIES && rc == WALK_TORN; i++)
        rc = walker_sample(&w);
    int status = 0;
    if (rc == WALK_OK) {
        char program[1024] = "?";
        uint64_t p = 0;
        if (target_read(&t, t.interp + PL_I_ORIGFILENAME, &p, 8) && p)
            target_read_str(&t, p, program, sizeof program);
        if (*printed && !o->json)
            printf("\n");
        if (o->json)
            print_json(&w, &t, program);
        else
            print_text(&w, &t, program);
        *printed = true;
    } else if (rc == WALK_GONE || !target_alive(&t)) {
        cli_error("%d: exited while being read", (int)pid);
        status = 1;
    } else if (rc == WALK_DENIED) {
        cli_error("%d: permission denied reading its memory (ptrace rules: the same user "
                  "and kernel.yama.ptrace_scope, or CAP_SYS_PTRACE)", (int)pid);
        status = 1;
    } else {
        cli_error("%d: its stack changed under each of %d reads, or is not a stack this "
                  "nytp can read", (int)pid, STACK_TRIES);
        status = 1;
    }
    walker_release(&w);
    return status;
}

int cmd_stack(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"children", no_argument, NULL, OPT_CHILDREN},
        {NULL, 0, NULL, 0},
    };
    struct stack_opts o = {false, false};
    int first = cli_parse(argc, argv, "", longopts, usage, on_opt, &o);
    if (first >= argc)
        cli_usage_error("which process? (nytp stack PID...)");
    pid_t *pids = NULL;
    size_t n = 0, cap = 0;
    for (int i = first; i < argc; i++) {
        pid_t pid = target_parse_pid(argv[i]);
        if (!pid)
            cli_usage_error("'%s' is not a process id", argv[i]);
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            pid_t *np = realloc(pids, cap * sizeof *np);
            if (!np) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
            }
            pids = np;
        }
        pids[n++] = pid;
    }
    size_t given = n;
    if (o.children)
        for (size_t i = 0; i < given; i++)
            if (target_children(pids[i], &pids, &n, &cap) < 0) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
            }
    int status = 0;
    bool printed = false;
    for (size_t i = 0; i < n; i++) {
        if (stack_one(pids[i], &o, i >= given, &printed))
            status = EXIT_BAD_INPUT;
    }
    free(pids);
    return status;
}

/* fuzz_dprof.c — libFuzzer target: the tmon.out reader and nytp
 * dprof-convert on arbitrary bytes.  Beyond "no crash": the reader ends
 * with a clean end or an error that names a line, its events nest, and
 * whatever the command converts loads back into the model without error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "nytp/dprof.h"
#include "nytp/model.h"
#include "nytp/nytp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_events(const uint8_t *data, size_t size, unsigned flags)
{
    nytp_error e = {0};
    nytp_in *in;
    nytp_dprof *d;
    if (nytp_in_open_mem(&in, data, size, &e) < 0)
        return;
    if (nytp_dprof_open(&d, in, flags, &e) < 0) {
        if (strncmp(e.msg, "line ", 5) != 0)
            __builtin_trap();
        return;
    }
    nytp_dprof_event ev;
    int st;
    uint64_t depth = 0;
    while ((st = nytp_dprof_next(d, &ev, &e)) == NYTP_OK) {
        if (ev.sub >= nytp_dprof_sub_count(d))
            __builtin_trap();
        if (ev.kind == NYTP_DPROF_ENTER)
            depth++;
        if (ev.depth != depth || depth == 0)
            __builtin_trap();
        if (ev.kind != NYTP_DPROF_ENTER && ev.kind != NYTP_DPROF_GOTO)
            depth--;
    }
    if (st == NYTP_END ? depth != 0 : (st != NYTP_E_NOMEM && strncmp(e.msg, "line ", 5) != 0))
        __builtin_trap();
    nytp_dprof_close(d);
}

static char dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_events(data, size, 0);
    read_events(data, size, NYTP_DPROF_FAKE_EXITS);

    if (!dir[0]) {
        strcpy(dir, "/tmp/nytp-fuzz-dprof-XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    char in[128], out[128];
    snprintf(in, sizeof in, "%s/tmon.out", dir);
    snprintf(out, sizeof out, "%s/nytprof.out", dir);
    FILE *f = fopen(in, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    /* Both ways of booking 'goto &sub'. */
    for (int mode = 0; mode < 2; mode++) {
        unlink(out);
        char *argv[] = {"dprof-convert", "-F",
                        mode ? "--goto=dprofpp" : "--goto=nytprof", "-o", out, in, NULL};
        int saved = dup(2);
        FILE *null = freopen("/dev/null", "w", stderr);
        (void)null;
        int rc = cmd_dprof_convert(6, argv);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        if (rc == 0) {
            nytp_profile *p;
            nytp_error e = {0};
            nytp_load_opts opts = {0};
            if (nytp_profile_new(&p, &e) < 0)
                return 0;
            if (nytp_profile_load(p, out, &opts, &e) != NYTP_OK)
                __builtin_trap();
            nytp_profile_free(p);
        } else if (access(out, F_OK) == 0) {
            __builtin_trap();   /* a failed conversion leaves no output */
        }
    }
    return 0;
}

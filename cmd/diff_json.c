/* diff_json.c — 'nytp diff --json': the comparison as one JSON document,
 * every row with both sides and the check's result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "diff_impl.h"

/* ---- JSON ------------------------------------------------------------------------ */

static void jchange(json *j, const char *what, double base, double now)
{
    json_key(j, what);
    json_num(j, now - base);
    char k[40];
    snprintf(k, sizeof k, "%s_pct", what);
    json_key(j, k);
    json_num(j, diff_pct_change(base, now)); /* null when BASE is 0 */
}

static const char *status(const bool present[2])
{
    return !present[0] ? "added" : !present[1] ? "removed" : "both";
}

static void json_side(json *j, const side *S)
{
    json_object(j);
    json_key(j, "files");
    json_array(j);
    for (int i = 0; i < S->nfiles; i++)
        json_cstr(j, S->files[i]);
    json_end(j);
    json_key(j, "statements");
    json_num(j, S->stmt_total);
    json_key(j, "sub_excl");
    json_num(j, S->sub_total);
    json_key(j, "sub_calls");
    json_u64(j, S->calls);
    json_key(j, "total");
    json_num(j, S->total);
    json_key(j, "complete");
    json_bool(j, S->p->complete);
    json_end(j);
}

void diff_write_json(diff *D, nytp_out *out, double min)
{
    json J, *j = &J;
    json_init(j, out);
    json_object(j);
    json_key(j, "format");
    json_cstr(j, "nytp-diff-1");
    json_key(j, "base");
    json_side(j, &D->s[0]);
    json_key(j, "new");
    json_side(j, &D->s[1]);
    json_key(j, "total_kind");
    json_cstr(j, D->s[0].stmt_total > 0 && D->s[1].stmt_total > 0 ? "statements" : "subs");
    json_key(j, "normalized");
    json_bool(j, D->o->normalize);
    json_key(j, "scale");
    json_num(j, D->scale);
    json_key(j, "total");
    json_object(j);
    json_key(j, "base");
    json_num(j, D->s[0].total);
    json_key(j, "new");
    json_num(j, D->s[1].total * D->scale);
    jchange(j, "delta", D->s[0].total, D->s[1].total * D->scale);
    json_end(j);

    /* the check */
    json_key(j, "check");
    if (D->o->fail_above < 0) {
        json_null(j);
    } else {
        json_object(j);
        json_key(j, "fail_above");
        json_num(j, D->o->fail_above);
        json_key(j, "min_time");
        json_num(j, min);
        json_key(j, "total_grew");
        json_bool(j, diff_total_grew(D));
        json_key(j, "subs_grew");
        json_array(j);
        bool any = false;
        for (uint32_t i = 0; i < D->subs.n; i++) {
            uint32_t id = D->order_sub[i];
            if (!diff_sub_grew(D, &D->sub[id], min))
                continue;
            any = true;
            json_str(j, strmap_str(&D->subs, id), D->subs.v[id].len);
        }
        json_end(j);
        json_key(j, "failed");
        json_bool(j, diff_total_grew(D) || any);
        json_end(j);
    }

    json_key(j, "rows");
    json_object(j);
    json_key(j, "subs");
    json_u64(j, D->subs.n);
    json_key(j, "lines");
    json_u64(j, D->lines.n);
    json_key(j, "files");
    json_u64(j, D->files.n);
    json_end(j);
    json_key(j, "subs");
    json_array(j);
    for (size_t i = 0; i < diff_limit(D, D->subs.n); i++) {
        uint32_t id = D->order_sub[i];
        const sub_row *r = &D->sub[id];
        json_object(j);
        json_key(j, "name");
        json_str(j, strmap_str(&D->subs, id), D->subs.v[id].len);
        json_key(j, "status");
        json_cstr(j, status(r->present));
        for (int k = 0; k < 2; k++) {
            json_key(j, k ? "new" : "base");
            if (!r->present[k]) {
                json_null(j);
                continue;
            }
            const nytp_profile *p = D->s[k].p;
            const nytp_sub *s = &p->subs[r->sid[k]];
            json_object(j);
            json_key(j, "excl");
            json_num(j, r->excl[k]);
            json_key(j, "incl");
            json_num(j, r->incl[k]);
            json_key(j, "calls");
            json_u64(j, r->calls[k]);
            json_key(j, "file");
            if (s->fid != NYTP_NONE && s->fid < p->n_files && p->files[s->fid].defined)
                json_str(j, nytp_profile_str(p, p->files[s->fid].name),
                         nytp_profile_strlen(p, p->files[s->fid].name));
            else
                json_null(j);
            json_key(j, "first_line");
            if (s->first_line == NYTP_NONE)
                json_null(j);
            else
                json_u64(j, s->first_line);
            json_end(j);
        }
        jchange(j, "excl_delta", r->excl[0], r->excl[1]);
        jchange(j, "incl_delta", r->incl[0], r->incl[1]);
        json_key(j, "calls_delta");
        json_i64(j, (int64_t)(r->calls[1] - r->calls[0]));
        json_end(j);
    }
    json_end(j);
    for (int lines = 1; lines >= 0; lines--) {
        strmap *m = lines ? &D->lines : &D->files;
        time_row *rows = lines ? D->line : D->file;
        uint32_t *order = lines ? D->order_line : D->order_file;
        json_key(j, lines ? "lines" : "files");
        json_array(j);
        for (size_t i = 0; i < diff_limit(D, m->n); i++) {
            const time_row *r = &rows[order[i]];
            json_object(j);
            json_key(j, "file");
            if (lines) {
                json_str(j, strmap_str(&D->line_files, r->file), D->line_files.v[r->file].len);
                json_key(j, "line");
                json_u64(j, r->line);
            } else {
                json_str(j, strmap_str(&D->files, order[i]), D->files.v[order[i]].len);
            }
            json_key(j, "status");
            json_cstr(j, status(r->present));
            json_key(j, "base");
            json_num(j, r->time[0]);
            json_key(j, "new");
            json_num(j, r->time[1]);
            jchange(j, "delta", r->time[0], r->time[1]);
            json_key(j, "count_base");
            json_i64(j, r->count[0]);
            json_key(j, "count_new");
            json_i64(j, r->count[1]);
            json_end(j);
        }
        json_end(j);
    }
    json_end(j);
    json_raw(j, "\n");
}

/* dump.c — 'nytp dump': every chunk of a profile as text or JSON Lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "dump.h"
#include "dump_data.h"
#include "fmt.h"
#include "json.h"
#include "perl_config.h"

static const char usage[] =
    "usage: nytp dump [options] [FILE|-]\n"
    "       nytp dump --data [--collapse-evals] [--json] [FILE...]\n"
    "\n"
    "Print every chunk of an NYTProf profile, one per line, in file order\n"
    "(default FILE: nytprof.out; '-' reads standard input).  With --data,\n"
    "load the files into one profile and print that instead, in the layout\n"
    "of Devel::NYTProf::Data's dump_profile_data.\n"
    "\n"
    "  --data            print the loaded profile, not the chunks\n"
    "  --collapse-evals  with --data: fold sibling string evals with the same\n"
    "                    source into one, as reports show them\n"
    "  --inc=DIRS        with --data: strip these directories (':'-separated)\n"
    "                    from file names instead of the built-in perl @INC\n"
    "  --json            JSON Lines: one object per chunk with named fields;\n"
    "                    with --data, one JSON document\n"
    "  --tags=LIST       only these chunks (comma-separated names, e.g.\n"
    "                    TIME_LINE,SUB_RETURN)\n"
    "  --limit=N         stop after N printed chunks\n"
    "  --strict          a truncated profile is an error (exit 1)\n"
    "  -f, --file=FILE   read FILE (the same as naming it)\n"
    "  -o, --output=FILE write to FILE (atomically) instead of standard output;\n"
    "                    --out is the same\n"
    "  -h, --help        this help\n"
    "\n"
    "Text lines are the chunk name and its fields separated by TAB; strings\n"
    "escape \\ TAB LF CR as \\\\ \\t \\n \\r and other control bytes as \\xHH.\n"
    "Exit status: 0 ok (a truncated file only warns), 1 bad input, 2 usage.\n";

/* ---- text ------------------------------------------------------------- */

static const char hexdigits[] = "0123456789abcdef";

static char *put_escaped(char *o, nytp_str s)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    for (uint32_t i = 0; i < s.len; i++) {
        unsigned char b = p[i];
        if (b >= 0x20 && b != 0x7f && b != '\\') {
            *o++ = (char)b;
            continue;
        }
        *o++ = '\\';
        switch (b) {
        case '\\': *o++ = '\\'; break;
        case '\t': *o++ = 't'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        default:
            *o++ = 'x';
            *o++ = hexdigits[b >> 4];
            *o++ = hexdigits[b & 15];
        }
    }
    return o;
}

/* Room for any chunk's line: numbers, names, and strings at 4 bytes per
 * byte at worst. */
static size_t line_room(const nytp_chunk *c)
{
    size_t strings = 0;
    switch (c->tag) {
    case NYTP_TAG_COMMENT: strings = c->u.comment.text.len; break;
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION: strings = c->u.kv.key.len + c->u.kv.value.len; break;
    case NYTP_TAG_NEW_FID: strings = c->u.new_fid.name.len; break;
    case NYTP_TAG_SUB_INFO: strings = c->u.sub_info.name.len; break;
    case NYTP_TAG_SUB_CALLERS:
        strings = (size_t)c->u.sub_callers.called.len + c->u.sub_callers.caller.len;
        break;
    case NYTP_TAG_SRC_LINE: strings = c->u.src_line.text.len; break;
    case NYTP_TAG_SUB_RETURN: strings = c->u.sub_return.name.len; break;
    default: break;
    }
    return 256 + 6 * strings;
}

#define TAB() (*o++ = '\t')

int dump_chunk_text(nytp_out *out, const nytp_chunk *c)
{
    char *start = (char *)nytp_out_reserve(out, line_room(c));
    if (!start)
        return nytp_out_error(out)->status;
    char *o = start;
    const char *name = nytp_tag_name(c->tag);
    size_t nl = strlen(name);
    memcpy(o, name, nl);
    o += nl;
    switch (c->tag) {
    case NYTP_TAG_VERSION:
        TAB(); o = fmt_u64(o, c->u.version.major);
        TAB(); o = fmt_u64(o, c->u.version.minor);
        break;
    case NYTP_TAG_COMMENT:
        TAB(); o = put_escaped(o, c->u.comment.text);
        break;
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION:
        TAB(); o = put_escaped(o, c->u.kv.key);
        TAB(); o = put_escaped(o, c->u.kv.value);
        break;
    case NYTP_TAG_START_DEFLATE:
    case NYTP_TAG_DISCOUNT:
        break;
    case NYTP_TAG_PID_START:
        TAB(); o = fmt_u64(o, c->u.pid_start.pid);
        TAB(); o = fmt_u64(o, c->u.pid_start.ppid);
        TAB(); o = fmt_nv(o, c->u.pid_start.time);
        break;
    case NYTP_TAG_PID_END:
        TAB(); o = fmt_u64(o, c->u.pid_end.pid);
        TAB(); o = fmt_nv(o, c->u.pid_end.time);
        break;
    case NYTP_TAG_NEW_FID:
        TAB(); o = fmt_u64(o, c->u.new_fid.fid);
        TAB(); o = fmt_u64(o, c->u.new_fid.eval_fid);
        TAB(); o = fmt_u64(o, c->u.new_fid.eval_line);
        TAB(); o = fmt_u64(o, c->u.new_fid.flags);
        TAB(); o = fmt_u64(o, c->u.new_fid.size);
        TAB(); o = fmt_u64(o, c->u.new_fid.mtime);
        TAB(); o = put_escaped(o, c->u.new_fid.name);
        break;
    case NYTP_TAG_TIME_LINE:
    case NYTP_TAG_TIME_BLOCK:
        TAB(); o = fmt_i64(o, c->u.time.ticks);
        TAB(); o = fmt_u64(o, c->u.time.fid);
        TAB(); o = fmt_u64(o, c->u.time.line);
        if (c->tag == NYTP_TAG_TIME_BLOCK) {
            TAB(); o = fmt_u64(o, c->u.time.block_line);
            TAB(); o = fmt_u64(o, c->u.time.sub_line);
        }
        break;
    case NYTP_TAG_SUB_INFO:
        TAB(); o = fmt_u64(o, c->u.sub_info.fid);
        TAB(); o = fmt_u64(o, c->u.sub_info.first_line);
        TAB(); o = fmt_u64(o, c->u.sub_info.last_line);
        TAB(); o = put_escaped(o, c->u.sub_info.name);
        break;
    case NYTP_TAG_SUB_CALLERS:
        TAB(); o = fmt_u64(o, c->u.sub_callers.fid);
        TAB(); o = fmt_u64(o, c->u.sub_callers.line);
        TAB(); o = fmt_u64(o, c->u.sub_callers.count);
        TAB(); o = fmt_nv(o, c->u.sub_callers.incl);
        TAB(); o = fmt_nv(o, c->u.sub_callers.excl);
        TAB(); o = fmt_nv(o, c->u.sub_callers.reci);
        TAB(); o = fmt_u64(o, c->u.sub_callers.rec_depth);
        TAB(); o = put_escaped(o, c->u.sub_callers.called);
        TAB(); o = put_escaped(o, c->u.sub_callers.caller);
        break;
    case NYTP_TAG_SRC_LINE:
        TAB(); o = fmt_u64(o, c->u.src_line.fid);
        TAB(); o = fmt_u64(o, c->u.src_line.line);
        TAB(); o = put_escaped(o, c->u.src_line.text);
        break;
    case NYTP_TAG_SUB_ENTRY:
        TAB(); o = fmt_u64(o, c->u.sub_entry.fid);
        TAB(); o = fmt_u64(o, c->u.sub_entry.line);
        break;
    case NYTP_TAG_SUB_RETURN:
        TAB(); o = fmt_u64(o, c->u.sub_return.depth);
        TAB(); o = fmt_nv(o, c->u.sub_return.incl);
        TAB(); o = fmt_nv(o, c->u.sub_return.excl);
        TAB(); o = put_escaped(o, c->u.sub_return.name);
        break;
    }
    *o++ = '\n';
    nytp_out_commit(out, (size_t)(o - start));
    return NYTP_OK;
}

/* ---- JSON ------------------------------------------------------------- */

/* JSON Lines: one flat record per chunk, written by the JSON writer
 * straight into room reserved once per record (json_init_into). */
#define JU(k, v) json_field_u64(&j, k, (v))
#define JI(k, v) json_field_i64(&j, k, (v))
#define JN(k, v) json_field_num(&j, k, (v))
/* A string field, and "<name>_utf8":true after it when the writer flagged
 * the string as UTF-8 text. */
static void json_str_field(json *j, const char *k, const char *k_utf8, nytp_str v)
{
    json_field_str(j, k, v.ptr, v.len);
    if (v.utf8) {
        json_key(j, k_utf8);
        json_bool(j, true);
    }
}

#define JS(k, v) json_str_field(&j, k, k "_utf8", (v))

int dump_chunk_json(nytp_out *out, const nytp_chunk *c)
{
    /* the text's worst case (line_room) and the keys, commas and braces */
    char *room = (char *)nytp_out_reserve(out, line_room(c) + 256);
    if (!room)
        return nytp_out_error(out)->status;
    json j;
    json_init_into(&j, out, room);
    json_object(&j);
    const char *tag = nytp_tag_name(c->tag);
    json_field_str(&j, "tag", tag, strlen(tag));
    switch (c->tag) {
    case NYTP_TAG_VERSION:
        JU("major", c->u.version.major);
        JU("minor", c->u.version.minor);
        break;
    case NYTP_TAG_COMMENT:
        JS("text", c->u.comment.text);
        break;
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION:
        JS("key", c->u.kv.key);
        JS("value", c->u.kv.value);
        break;
    case NYTP_TAG_START_DEFLATE:
    case NYTP_TAG_DISCOUNT:
        break;
    case NYTP_TAG_PID_START:
        JU("pid", c->u.pid_start.pid);
        JU("parent_pid", c->u.pid_start.ppid);
        JN("start_time", c->u.pid_start.time);
        break;
    case NYTP_TAG_PID_END:
        JU("pid", c->u.pid_end.pid);
        JN("end_time", c->u.pid_end.time);
        break;
    case NYTP_TAG_NEW_FID:
        JU("fid", c->u.new_fid.fid);
        JU("eval_fid", c->u.new_fid.eval_fid);
        JU("eval_line", c->u.new_fid.eval_line);
        JU("flags", c->u.new_fid.flags);
        JU("size", c->u.new_fid.size);
        JU("mtime", c->u.new_fid.mtime);
        JS("name", c->u.new_fid.name);
        break;
    case NYTP_TAG_TIME_LINE:
    case NYTP_TAG_TIME_BLOCK:
        JI("ticks", c->u.time.ticks);
        JU("fid", c->u.time.fid);
        JU("line", c->u.time.line);
        if (c->tag == NYTP_TAG_TIME_BLOCK) {
            JU("block_line", c->u.time.block_line);
            JU("sub_line", c->u.time.sub_line);
        }
        break;
    case NYTP_TAG_SUB_INFO:
        JU("fid", c->u.sub_info.fid);
        JU("first_line", c->u.sub_info.first_line);
        JU("last_line", c->u.sub_info.last_line);
        JS("name", c->u.sub_info.name);
        break;
    case NYTP_TAG_SUB_CALLERS:
        JU("fid", c->u.sub_callers.fid);
        JU("line", c->u.sub_callers.line);
        JU("count", c->u.sub_callers.count);
        JN("incl", c->u.sub_callers.incl);
        JN("excl", c->u.sub_callers.excl);
        JN("reci", c->u.sub_callers.reci);
        JU("rec_depth", c->u.sub_callers.rec_depth);
        JS("called_name", c->u.sub_callers.called);
        JS("caller_name", c->u.sub_callers.caller);
        break;
    case NYTP_TAG_SRC_LINE:
        JU("fid", c->u.src_line.fid);
        JU("line", c->u.src_line.line);
        JS("text", c->u.src_line.text);
        break;
    case NYTP_TAG_SUB_ENTRY:
        JU("caller_fid", c->u.sub_entry.fid);
        JU("caller_line", c->u.sub_entry.line);
        break;
    case NYTP_TAG_SUB_RETURN:
        JU("depth", c->u.sub_return.depth);
        JN("incl_ticks", c->u.sub_return.incl);
        JN("excl_ticks", c->u.sub_return.excl);
        JS("name", c->u.sub_return.name);
        break;
    }
    json_end(&j);
    json_raw(&j, "\n");
    nytp_out_commit(out, json_used(&j));
    return NYTP_OK;
}

/* ---- the command ------------------------------------------------------ */

struct dump_opts {
    bool json, strict, data, collapse;
    const char *inc;
    bool tags[256];
    bool filter;
    unsigned long limit;
    bool limited;
    const char *output;
};

enum { OPT_JSON = 256, OPT_TAGS, OPT_LIMIT, OPT_STRICT, OPT_DATA, OPT_COLLAPSE, OPT_INC };

static void parse_tags(struct dump_opts *o, const char *list)
{
    o->filter = true;
    const char *p = list;
    if (!*p)
        cli_usage_error("--tags needs a comma-separated list of chunk names");
    for (;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char name[32];
        if (n == 0 || n >= sizeof name)
            cli_usage_error("--tags: '%.*s' is not a chunk name", (int)(n > 40 ? 40 : n), p);
        for (size_t i = 0; i < n; i++)
            name[i] = (char)(p[i] >= 'a' && p[i] <= 'z' ? p[i] - 32 : p[i]);
        int tag = nytp_tag_from_name(name, n);
        if (!tag)
            cli_usage_error("--tags: '%.*s' is not a chunk name", (int)n, p);
        o->tags[tag] = true;
        p += n;
        if (!*p)
            break;
        p++; /* the comma; an empty name after it is an error above */
    }
}

static void on_opt(int opt, const char *arg, void *ctx)
{
    struct dump_opts *o = ctx;
    switch (opt) {
    case OPT_JSON: o->json = true; break;
    case OPT_STRICT: o->strict = true; break;
    case OPT_DATA: o->data = true; break;
    case OPT_COLLAPSE: o->collapse = true; break;
    case OPT_INC: o->inc = arg; break;
    case OPT_TAGS: parse_tags(o, arg); break;
    case OPT_LIMIT:
        o->limit = cli_parse_count("--limit", arg);
        o->limited = true;
        break;
    case 'o': o->output = arg; break;
    }
}


static int dump_data(struct dump_opts *o, int nfiles, char **files)
{
    int rc;
    nytp_profile *p = cli_load_profile(nfiles, files, o->strict, &rc);
    if (!p)
        return rc;
    char note[160];
    if (cli_sampled_note(p, note, sizeof note))
        cli_note("%s (the counts below are the calls the sampler saw, and 0 statements)", note);
    if (o->collapse)
        nytp_profile_collapse_evals(p);

    dump_data_opts dopts = {0};
    char *storage;
    const char **inc = dump_data_split_dirs(o->inc ? o->inc : NYTP_PERL_INC, &dopts.n_inc, &storage);
    if (!inc) {
        cli_error("out of memory");
        nytp_profile_free(p);
        return EXIT_BAD_INPUT;
    }
    dopts.inc = inc;
    dopts.perl_version = NYTP_PERL_VERSION;
    nytp_out *out = cli_output_open(o->output);
    if (!out) {
        nytp_profile_free(p);
        return EXIT_BAD_INPUT;
    }
    int st = o->json ? dump_data_json(out, p, &dopts) : dump_data_text(out, p, &dopts);
    nytp_profile_free(p);
    free(storage);
    free(inc);
    return cli_output_finish(out, o->output, st);
}

int cmd_dump(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"tags", required_argument, NULL, OPT_TAGS},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"output", required_argument, NULL, 'o'},
        {"data", no_argument, NULL, OPT_DATA},
        {"collapse-evals", no_argument, NULL, OPT_COLLAPSE},
        {"inc", required_argument, NULL, OPT_INC},
        {NULL, 0, NULL, 0},
    };
    struct dump_opts o = {0};
    int first = cli_parse(argc, argv, "f:o:", longopts, usage, on_opt, &o);
    cli_output_not_input(o.output, argc - first, argv + first, "nytprof.out");
    if (o.data) {
        if (o.filter || o.limited)
            cli_usage_error("--tags and --limit select chunks; they do not go with --data");
        return dump_data(&o, argc - first, argv + first);
    }
    if (o.collapse || o.inc)
        cli_usage_error("--collapse-evals and --inc go with --data");
    if (argc - first > 1)
        cli_usage_error("takes one profile file, not %d", argc - first);
    const char *file = first < argc ? argv[first] : "nytprof.out";

    nytp_error e = {0};
    nytp_reader *r;
    if (nytp_reader_open(&r, file, &e) < 0) {
        cli_report(file, &e, false);
        return EXIT_BAD_INPUT;
    }
    nytp_reader_set_warn(r, cli_reader_warning, (void *)file);
    nytp_out *out = cli_output_open(o.output);
    if (!out) {
        nytp_reader_close(r);
        return EXIT_BAD_INPUT;
    }

    int (*emit)(nytp_out *, const nytp_chunk *) = o.json ? dump_chunk_json : dump_chunk_text;
    unsigned long printed = 0;
    int last_tag = 0;
    uint64_t last_no = 0, last_off = 0;
    bool last_inflated = false;
    nytp_chunk c;
    int st = NYTP_END;
    while (!(o.limited && printed >= o.limit) && (st = nytp_reader_next(r, &c, &e)) == NYTP_OK) {
        last_tag = c.tag;
        last_no = nytp_reader_chunk_number(r);
        last_off = nytp_reader_chunk_offset(r);
        last_inflated = nytp_reader_chunk_inflated(r);
        if (o.filter && !o.tags[c.tag & 0xff])
            continue;
        if (emit(out, &c) < 0)
            break;
        printed++;
    }
    nytp_reader_close(r);

    int rc = EXIT_OK;
    if (nytp_out_error(out)->status) {
        cli_error("%s: %s", o.output ? o.output : "(standard output)", nytp_out_error(out)->msg);
        nytp_out_abort(out);
        return EXIT_BAD_INPUT;
    }
    if (st == NYTP_E_TRUNCATED) {
        /* One line: where the cut is, and what was kept before it. */
        char kept[200] = "; no chunk before it was complete";
        if (last_tag)
            snprintf(kept, sizeof kept, "; the last complete chunk is number %llu, %s %s at offset %llu%s",
                     (unsigned long long)last_no, strchr("AEIOU", nytp_tag_name(last_tag)[0]) ? "an" : "a",
                     nytp_tag_name(last_tag), (unsigned long long)last_off,
                     last_inflated ? " of the inflated data" : "");
        size_t n = strlen(e.msg);
        snprintf(e.msg + n, sizeof e.msg - n, "%s", kept);
        cli_report(file, &e, !o.strict);
        if (o.strict)
            rc = EXIT_BAD_INPUT;
    } else if (st < 0) {
        cli_report(file, &e, false);
        rc = EXIT_BAD_INPUT;
    }
    if (rc != EXIT_OK && o.output) {
        nytp_out_abort(out);
        return rc;
    }
    int crc = cli_output_close(out, o.output);
    return rc != EXIT_OK ? rc : crc;
}

/* dump_data.h — printing the loaded model for 'nytp dump --data'. */
#ifndef NYTP_DUMP_DATA_H
#define NYTP_DUMP_DATA_H

#include "nytp/model.h"
#include "nytp/nytp.h"

typedef struct dump_data_opts {
    /* Path prefixes stripped from file names as Devel::NYTProf strips its
     * perl's @INC (longest first), and that perl's version, stripped
     * after them when it leads the name. */
    const char **inc;
    size_t n_inc;
    const char *perl_version;
} dump_data_opts;

/* Split ':'-separated DIRS into an array for dump_data_opts.inc, longest
 * first (pointers into *storage); free both.  (In dump.c.) */
const char **dump_data_split_inc(const char *dirs, size_t *n, char **storage);
/* The name Devel::NYTProf shows for a file: the first @INC prefix and a
 * leading version directory stripped.  Writes len + 1 bytes at out;
 * returns the new length. */
size_t dump_data_short_name(const char *s, size_t len, const dump_data_opts *o, char *out);

/* Devel::NYTProf::Data's dump_profile_data layout, TAB separated. */
int dump_data_text(nytp_out *out, const nytp_profile *p, const dump_data_opts *o);
/* One JSON document; its schema is in nytp-dump(1). */
int dump_data_json(nytp_out *out, const nytp_profile *p, const dump_data_opts *o);

#endif

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

/* A file name as Devel::NYTProf shows it (filename_without_inc): the
 * first o->inc prefix (anchored at the start, after a '[' or after
 * " defined at ") removed with a '/' after it, then, if o->perl_version is
 * set, a leading "VERSION/".  out needs len + 1 bytes; returns the new
 * length. */
size_t dump_data_strip_inc(const char *s, size_t len, const dump_data_opts *o, char *out);
/* DIRS split at ':', longest first (pointers into *storage; free both).
 * NULL when out of memory. */
const char **dump_data_split_dirs(const char *dirs, size_t *n, char **storage);

/* Devel::NYTProf::Data's dump_profile_data layout, TAB separated. */
int dump_data_text(nytp_out *out, const nytp_profile *p, const dump_data_opts *o);
/* One JSON document; its schema is in nytp-dump(1). */
int dump_data_json(nytp_out *out, const nytp_profile *p, const dump_data_opts *o);

#endif

/* dump.h — the chunk formatting of 'nytp dump', shared with the fuzz target. */
#ifndef NYTP_DUMP_H
#define NYTP_DUMP_H

#include "nytp/nytp.h"

/* One line: NAME TAB field TAB field ... LF, the fields in the order
 * Devel::NYTProf::ReadStream hands them to its callback. */
int dump_chunk_text(nytp_out *out, const nytp_chunk *c);
/* One JSON object per line with named fields. */
int dump_chunk_json(nytp_out *out, const nytp_chunk *c);

#endif

/* top.h — 'nytp top' without its command line: what the fuzz target
 * runs. */
#ifndef NYTP_TOP_H
#define NYTP_TOP_H

#include "nytp/model.h"

/* Collapse p's evals and write every form of the report (tables at a
 * width of 80 with colour, JSON, each sort order) into memory, dropping
 * it; source lines only from the profile, never from disk.  Returns
 * NYTP_OK or NYTP_E_NOMEM. */
int top_write_memory(nytp_profile *p);

#endif

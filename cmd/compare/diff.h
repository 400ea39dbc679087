/* diff.h — 'nytp diff' without its command line: what the fuzz target
 * runs. */
#ifndef NYTP_DIFF_H
#define NYTP_DIFF_H

#include "nytp/calltree.h"
#include "nytp/model.h"

/* Compare base with new (loaded and finished; the profiles are not
 * changed or freed) and write the tables (width 80, colour), the JSON
 * with a check, and, when both call trees are given, the differential
 * flame graph into memory, dropping them.  Returns NYTP_OK or
 * NYTP_E_NOMEM. */
int diff_write_memory(nytp_profile *base, nytp_profile *new_, const nytp_calltree *tbase,
                      const nytp_calltree *tnew);

#endif

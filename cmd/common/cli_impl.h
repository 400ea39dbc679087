/* cli_impl.h — what the parts of cli (cli_*.c) share among themselves and
 * no command may call: cli.h is their public contract. */
#ifndef NYTP_CLI_IMPL_H
#define NYTP_CLI_IMPL_H

#include "cli.h"

/* Once a fatal signal is being handled, wait for the end of the process
 * (cli_output.c): every message and every file created checks first. */
void park_if_dying(void);
/* Empty a directory of files and remove it, async-signal-safe
 * (cli_output.c; also what an aborted report directory leaves). */
void remove_flat_dir(const char *path);

/* A file name for messages: "-" is "(standard input)" (cli_msg.c). */
const char *display_name(const char *file);

#endif

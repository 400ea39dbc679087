#include "commands.h"
int cmd_diff(int argc, char **argv) { (void)argc; (void)argv; return 2; }

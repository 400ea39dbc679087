/* commands.h — the entry point of every nytp command. */
#ifndef NYTP_COMMANDS_H
#define NYTP_COMMANDS_H

int cmd_dump(int argc, char **argv);
int cmd_csv(int argc, char **argv);
int cmd_cachegrind(int argc, char **argv);
int cmd_dprof_convert(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_calls(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_html(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_speedscope(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_stack(int argc, char **argv);
int cmd_attach(int argc, char **argv);

#endif

/* SPDX-License-Identifier: MIT */
/*
** libFuzzer harness of the command line (issue 22): the tool's own
** option tables and parser (tools/parplan.c, tools/cli.c), fed argv
** built from the input (one argument per line).  Every argv must come
** back as "run", a usage error or help, never a crash, a sanitizer
** report or a leak; the command itself is not run (the reader harnesses
** cover what it reads).  parplan.c is included with its main renamed, so
** the harness sees its static tables; scripts/fuzz.sh runs it with
** -close_fd_mask=3, so help and usage text are dropped while libFuzzer
** still reports.
*/
#define main parplan_main
int parplan_main(int argc, char **argv);
#include "../../tools/parplan.c"
#undef main

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ARGS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char name[] = "parplan";
  char *buf, *argv[MAX_ARGS + 1], *p;
  const struct cli_cmd *cmd;
  int argc = 1, at;
  size_t i;
  if (!(buf = malloc(size + 1)))
    return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  argv[0] = name;
  for (p = buf, i = 0; i <= size && argc < MAX_ARGS; i++)
    if (buf[i] == '\n' || buf[i] == '\0') {
      buf[i] = '\0';
      argv[argc++] = p;
      p = buf + i + 1;
      if (i == size)
        break;
    }
  argv[argc] = NULL;
  if (cli_command(&tool, argc, argv, &cmd, &at) == CLI_RUN) {
    struct cli_common *o = calloc(1, cmd->size);
    if (o) {
      common_init(o);
      if (cmd->init)
        cmd->init(o);
      cli_parse(&tool, cmd, at, argc, argv, o);
    }
    free(o);
  }
  free(buf);
  return 0;
}

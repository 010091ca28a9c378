/* SPDX-License-Identifier: MIT */
/*
** The command line as tables: a command table (name, handler, its entry
** in the help) and, per command, option tables (name, kind, the field it
** sets, range, help).  Parsing, range checks, --opt=value, per-command
** --help, the tool's --help and the usage errors are all generated from
** them (cli.c), so that an option is written in one place.
**
** Every command's options struct begins with struct cli_common, whose
** fields the tables that several commands share set: one row serves all
** of them.
*/
#ifndef PARPLAN_CLI_H
#define PARPLAN_CLI_H

#include "parplan.h"

#include <stddef.h>

enum cli_kind {
  CLI_FLAG,    /* no value: stores .value */
  CLI_INT,     /* an integer in [lo, hi] */
  CLI_DOUBLE,  /* a number in [lo, hi] */
  CLI_GIB,     /* GiB in [lo, hi], stored as bytes in an integer */
  CLI_SEED,    /* any unsigned 64-bit integer */
  CLI_STRING,  /* stores the argument itself */
  CLI_ENUM,    /* one of .names: stores its index */
  CLI_HELP,    /* prints the command's help, then stops */
  CLI_VERSION, /* prints the version, then stops */
};

/* One option.  The row keeps the size of its field, so that one kind
** serves int32_t, int64_t, int and enum fields alike. */
struct cli_opt {
  const char *name;
  enum cli_kind kind;
  size_t off, size; /* CLI_FIELD: the field in the command's options */
  double lo, hi;
  const char *(*names)(int i); /* CLI_ENUM: NULL past the last */
  int value;                   /* CLI_FLAG */
  const char *help; /* its entry in the help, as printed less the first
                       two columns; NULL: a neighbour's entry tells */
};

#define CLI_FIELD(type, f) offsetof(type, f), sizeof(((type *)0)->f)

/* The first member of every command's options. */
struct cli_common {
  const char *arg; /* the command's positional argument */
  unsigned long long seed;
  double max_memory_gib; /* --max-memory; 0: none */
  const char *model, *cluster, *out, *gantt_image;
  int json;
  int optimizer; /* -1: the library's default */
  /* the run's settings (run_opts), -1 when not given: precision an index
  ** of precision_at, engine a pp_engine, zero 0-3 or 4 for auto */
  int precision, engine, zero;
  const char *calibration; /* --calibration FILE; main loads it into
                              cost.calibration (and frees it) */
  pp_cost_params cost;
};

struct cli_cmd {
  const char *name;
  const char *arg;   /* what its positional argument is ("PLAN"), NULL:
                        it takes none */
  const char *usage; /* its entry in the commands of parplan --help */
  const struct cli_opt *const *tables; /* NULL-terminated */
  size_t size;                         /* of its options */
  void (*init)(void *opts);            /* sets up the options past cli_common;
                                          NULL: there are none */
  int (*run)(pp_ctx *ctx, void *opts); /* the exit status */
};

/* A piece of the tool's --help after the commands: a heading or a line,
** then a table's entries; either may be NULL. */
struct cli_section {
  const char *text;
  const struct cli_opt *opts;
};

struct cli_tool {
  const char *head, *foot;             /* of its --help */
  const struct cli_cmd *const *cmds;   /* NULL-terminated, in help order */
  const struct cli_cmd *implicit;      /* run when no command is named */
  const struct cli_opt *const *common; /* every command's, NULL-terminated */
  const struct cli_section *sections;  /* ends with {NULL, NULL} */
};

/* cli_command and cli_parse return CLI_RUN to go on, else the exit
** status for main to return (0 after --help). */
enum { CLI_RUN = -1 };

/* The command argv names in *cmd, its index in *at (0 when none is
** named: the implicit command).  Options may come before the command:
** it is the first argument that is neither an option nor an option's
** value (an option takes a value under every command or under none). */
int cli_command(const struct cli_tool *t, int argc, char **argv,
                const struct cli_cmd **cmd, int *at);
/* Fill opts, set up by main, from argv but argv[at]. */
int cli_parse(const struct cli_tool *t, const struct cli_cmd *cmd, int at,
              int argc, char **argv, void *opts);

/* "a|b|c": the names an enum option takes, into buf. */
void cli_names(const char *(*names)(int i), char *buf, size_t n);

/* "parplan: MESSAGE", then where to read more: parplan CMD --help (the
** tool's --help for a NULL cmd).  Returns 1, the usage exit status. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int cli_usage(const char *cmd, const char *fmt, ...);

/* Report a library error; the exit status: 2 internal, else 1. */
int cli_fail(pp_ctx *ctx, pp_status rc);

/* Catch SIGINT and SIGTERM while a search runs: the first sets the flag
** returned (the library's params.stop) to the signal's number, a second
** SIGINT or SIGTERM exits at once with status 128 + its number (stop.c). */
const volatile sig_atomic_t *cli_catch_stop(void);
/* The signal that stopped the search (0: none) and the handlers back to
** the defaults. */
int cli_release_stop(void);
/* The command's clock (stop.c): started by main; what is left of a time
** limit counted from then (at least 1 ms, so a spent limit still gives
** the library a valid one that stops it at once). */
void cli_clock_start(void);

/* --max-memory (memguard.c): the allocator hook that keeps the library's
** memory under gib GiB (nothing when gib is 0); whether it refused an
** allocation; the limit. */
void cli_memory_guard(pp_ctx_params *cp, double gib);
int cli_memory_refused(void);
double cli_memory_limit_gib(void);
double cli_clock_left(double limit_s);

#endif

/* SPDX-License-Identifier: MIT */
/*
** The table-driven command line (cli.h): finding the command, parsing its
** options, the help texts and the usage errors.  Nothing here knows a
** command or an option: parplan.c and the cmd_*.c files hold the tables.
*/
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  fputs("parplan: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(see parplan %s%s--help)\n", cmd ? cmd : "",
          cmd ? " " : "");
  return 1;
}

/* s with its control characters (an escape sequence in an input's cell
** or file name would drive the user's terminal) written as \xNN. */
static void put_printable(FILE *f, const char *s)
{
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == 0x7f)
      fprintf(f, "\\x%02x", c);
    else
      fputc(c, f);
  }
}

int cli_fail(pp_ctx *ctx, pp_status rc)
{
  const char *msg = ctx ? pp_ctx_errmsg(ctx) : "";
  fputs("parplan: ", stderr);
  put_printable(stderr, *msg ? msg : pp_status_str(rc));
  fputc('\n', stderr);
  if (rc == PP_ENOMEM && cli_memory_refused()) {
    /* the user's limit, not a failure of the machine or of parplan */
    fprintf(stderr,
            "parplan: stopped at the memory limit of %g GiB "
            "(--max-memory)\n",
            cli_memory_limit_gib());
    return 1;
  }
  return rc == PP_ENOMEM || rc == PP_EINTERNAL ? 2 : 1;
}

void cli_names(const char *(*names)(int i), char *buf, size_t n)
{
  size_t len = 0;
  int i;
  buf[0] = '\0';
  for (i = 0; names(i) && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "|" : "", names(i));
}

/* "-" alone is an argument, as it always was, not an option. */
static int is_option(const char *a)
{
  return a[0] == '-' && a[1];
}

/* The length of the option's name: a long option's stops at '=', which
** starts its value. */
static size_t name_len(const char *a)
{
  /* a[0] first: "" has no a[1] (fuzz_options' first finding) */
  const char *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
  return eq ? (size_t)(eq - a) : strlen(a);
}

static int takes_value(const struct cli_opt *o)
{
  return o->kind != CLI_FLAG && o->kind != CLI_HELP && o->kind != CLI_VERSION;
}

/* The row named a[0:n] in the NULL-terminated tables, or NULL. */
static const struct cli_opt *find_in(const struct cli_opt *const *tables,
                                     const char *a, size_t n)
{
  const struct cli_opt *o;
  for (; *tables; tables++)
    for (o = *tables; o->name; o++)
      if (strlen(o->name) == n && !strncmp(o->name, a, n))
        return o;
  return NULL;
}

static const struct cli_opt *find(const struct cli_tool *t,
                                  const struct cli_cmd *cmd, const char *a,
                                  size_t n)
{
  const struct cli_opt *o = find_in(cmd->tables, a, n);
  return o ? o : find_in(t->common, a, n);
}

/* An option some command takes, or NULL. */
static const struct cli_opt *find_any(const struct cli_tool *t, const char *a,
                                      size_t n)
{
  const struct cli_opt *o = find_in(t->common, a, n);
  int k;
  for (k = 0; !o && t->cmds[k]; k++)
    o = find_in(t->cmds[k]->tables, a, n);
  return o;
}

int cli_command(const struct cli_tool *t, int argc, char **argv,
                const struct cli_cmd **cmd, int *at)
{
  int i, k;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    size_t n = name_len(a);
    const struct cli_opt *o;
    if (is_option(a)) {
      if (!a[n] && (o = find_any(t, a, n)) && takes_value(o))
        i++;
      continue;
    }
    for (k = 0; t->cmds[k] && strcmp(t->cmds[k]->name, a); k++)
      ;
    if (!t->cmds[k])
      return cli_usage(NULL, "unknown command '%s'", a);
    *cmd = t->cmds[k];
    *at = i;
    return CLI_RUN;
  }
  *cmd = t->implicit;
  *at = 0;
  return CLI_RUN;
}

/* Every line of an entry, two columns in. */
static void print_entry(const char *s)
{
  while (*s) {
    size_t len = strcspn(s, "\n");
    printf("  %.*s\n", (int)len, s);
    s += len + (s[len] == '\n');
  }
}

static void print_opts(const struct cli_opt *o)
{
  for (; o->name; o++)
    if (o->help)
      print_entry(o->help);
}

static void tool_help(const struct cli_tool *t)
{
  const struct cli_section *s;
  int k;
  fputs(t->head, stdout);
  for (k = 0; t->cmds[k]; k++)
    print_entry(t->cmds[k]->usage);
  putchar('\n');
  for (s = t->sections; s->text || s->opts; s++) {
    if (s->text)
      puts(s->text);
    if (s->opts)
      print_opts(s->opts);
  }
  fputs(t->foot, stdout);
}

static void cmd_help(const struct cli_tool *t, const struct cli_cmd *cmd)
{
  const struct cli_opt *const *tab;
  printf("usage: parplan %s%s%s [OPTIONS]\n\n", cmd->name, cmd->arg ? " " : "",
         cmd->arg ? cmd->arg : "");
  print_entry(cmd->usage);
  puts("\noptions:");
  for (tab = cmd->tables; *tab; tab++)
    print_opts(*tab);
  for (tab = t->common; *tab; tab++)
    print_opts(*tab);
}

static void store_int(char *p, size_t size, long long v)
{
  if (size == sizeof(int64_t)) {
    int64_t x = v;
    memcpy(p, &x, sizeof x);
  } else {
    int32_t x = (int32_t)v;
    memcpy(p, &x, sizeof x);
  }
}

/* A number in [lo, hi]; 0 when v is not one. */
static int parse_double(const char *v, double lo, double hi, double *x)
{
  char *end;
  errno = 0;
  *x = strtod(v, &end);
  return end != v && !*end && !errno && *x >= lo && *x <= hi;
}

static int parse_int(const char *v, double lo, double hi, long long *x)
{
  char *end;
  errno = 0;
  *x = strtoll(v, &end, 10);
  return end != v && !*end && !errno && *x >= (long long)lo &&
         *x <= (long long)hi;
}

static int parse_seed(const char *v, unsigned long long *x)
{
  char *end;
  errno = 0;
  *x = strtoull(v, &end, 10);
  return end != v && !*end && !errno && *v != '-';
}

static int parse_enum(const char *(*names)(int i), const char *v, int *x)
{
  for (*x = 0; names(*x); ++*x)
    if (!strcmp(names(*x), v))
      return 1;
  return 0;
}

/* Set o's field from v (NULL for an option that takes no value). */
static int apply(const struct cli_tool *t, const struct cli_cmd *cmd,
                 const char *where, const struct cli_opt *o, const char *v,
                 void *opts)
{
  char *p = (char *)opts + o->off, list[256];
  double x;
  long long n;
  unsigned long long u;
  int e;
  if (v && !takes_value(o))
    return cli_usage(where, "%s takes no value", o->name);
  switch (o->kind) {
  case CLI_HELP:
    if (where)
      cmd_help(t, cmd);
    else
      tool_help(t);
    return 0;
  case CLI_VERSION: printf("parplan %s\n", pp_version()); return 0;
  case CLI_FLAG: store_int(p, o->size, o->value); break;
  case CLI_INT:
    if (!parse_int(v, o->lo, o->hi, &n))
      return cli_usage(where, "%s needs an integer from %lld to %lld, not '%s'",
                       o->name, (long long)o->lo, (long long)o->hi, v);
    store_int(p, o->size, n);
    break;
  case CLI_DOUBLE:
  case CLI_GIB:
    if (!parse_double(v, o->lo, o->hi, &x))
      return cli_usage(where, "%s needs a number from %g to %g, not '%s'",
                       o->name, o->lo, o->hi, v);
    if (o->kind == CLI_GIB)
      store_int(p, o->size, (long long)(x * 1073741824.0));
    else
      memcpy(p, &x, sizeof x);
    break;
  case CLI_SEED:
    if (!parse_seed(v, &u))
      return cli_usage(where, "%s needs a non-negative integer, not '%s'",
                       o->name, v);
    memcpy(p, &u, sizeof u);
    break;
  case CLI_STRING: memcpy(p, &v, sizeof v); break;
  case CLI_ENUM:
    if (!parse_enum(o->names, v, &e)) {
      cli_names(o->names, list, sizeof list);
      return cli_usage(where, "%s needs one of %s, not '%s'", o->name, list, v);
    }
    store_int(p, o->size, e);
    break;
  }
  return CLI_RUN;
}

/* An option cmd does not take: another command's, or nobody's. */
static int refuse(const struct cli_tool *t, const struct cli_cmd *cmd,
                  const char *where, const char *a, size_t n)
{
  if (find_any(t, a, n))
    return cli_usage(where, "%s does not take %.*s", cmd->name, (int)n, a);
  return cli_usage(where, "unknown option '%.*s'", (int)n, a);
}

int cli_parse(const struct cli_tool *t, const struct cli_cmd *cmd, int at,
              int argc, char **argv, void *opts)
{
  struct cli_common *c = opts;
  const char *where = at ? cmd->name : NULL;
  int i, ret;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    const struct cli_opt *o;
    size_t n = name_len(a);
    if (i == at)
      continue;
    if (!is_option(a)) {
      if (!cmd->arg)
        return cli_usage(where, "%s takes no argument '%s'", cmd->name, a);
      if (c->arg)
        return cli_usage(where, "unexpected argument '%s' (%s takes one %s)", a,
                         cmd->name, cmd->arg);
      c->arg = a;
      continue;
    }
    if (!(o = find(t, cmd, a, n)))
      return refuse(t, cmd, where, a, n);
    if (a[n])
      v = a + n + 1;
    else if (takes_value(o)) {
      if (i + 1 >= argc)
        return cli_usage(where, "%s needs a value", o->name);
      v = argv[++i];
    }
    if ((ret = apply(t, cmd, where, o, v, opts)) != CLI_RUN)
      return ret;
  }
  return CLI_RUN;
}

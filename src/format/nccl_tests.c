/* SPDX-License-Identifier: MIT */
/*
** The text NVIDIA's nccl-tests print (all_reduce_perf, sendrecv_perf,
** all_gather_perf, reduce_scatter_perf, broadcast_perf, alltoall_perf,
** ...) as a table of delivered bandwidths (docs/FORMATS.md, "nccl-tests
** output"; [nccl-tests]).  Checked against NVIDIA/nccl-tests at a0b82b2
** (v2.19.6, the newest), bc5f7cf (v2.13.0) and 863fcc8 (v2.11.0, the
** layout of 2019 to mid-2022); each rule cites owner/repo:path:line
** @commit.
**
** - The column header: a '#' line whose first cell is "size" and which
**   holds "time algbw busbw" once per block, out-of-place then in-place
**   (NVIDIA/nccl-tests:src/util.cu:757 @a0b82b2, with "#wrong"; "cputime"
**   under -C 1, NVIDIA/nccl-tests:src/util.cu:743 @a0b82b2; the
**   per-iteration columns i_min i_max i_p99 i_cv% after each block under
**   -I 1, NVIDIA/nccl-tests:src/util.cu:747 @a0b82b2; a last "timestamp"
**   column under -S 1, printed in rows as the two cells of "%Y-%m-%d
**   %H:%M:%S", NVIDIA/nccl-tests:src/util.cu:54 @a0b82b2).  Before v2.13
**   each collective printed its own, "error" for "#wrong" and only the
**   cells it uses: "redop" for reductions, "root" for rooted ones
**   (NVIDIA/nccl-tests:src/all_reduce.cu:12 @863fcc8,
**   NVIDIA/nccl-tests:src/all_gather.cu:12 @863fcc8).  The header says
**   where each value is in a row; nothing else is assumed about the
**   leading columns.
** - A row: "%12li  %12li  %8s  %6s  %6s" of size (bytes), count, type,
**   redop and root (NVIDIA/nccl-tests:src/util.cu:457 @a0b82b2), then
**   per block time (us), algbw and busbw (GB/s of 1e9 bytes,
**   NVIDIA/nccl-tests:src/all_reduce.cu:59 @a0b82b2) and the count of
**   wrong elements, "%6g", or "N/A" when validation is off (-c 0) or
**   undefined (NVIDIA/nccl-tests:src/util.cu:507 @a0b82b2); a value too
**   wide for its column in "%.1e" form (getFloatStr,
**   NVIDIA/nccl-tests:src/util.cu:487 @a0b82b2).  Before v2.13 the error
**   column held the largest deviation, "%5.0le" (0e+00;
**   NVIDIA/nccl-tests:src/common.cu:737 @863fcc8).  v2.13.0 to v2.13.3
**   printed redop and root in every header but an empty redop cell for
**   all_gather, broadcast and alltoall (opName "":
**   NVIDIA/nccl-tests:src/common.cu:577 @bc5f7cf,
**   NVIDIA/nccl-tests:src/all_gather.cu:81 @bc5f7cf; "none" since
**   v2.13.4, NVIDIA/nccl-tests:src/all_gather.cu:87 @a0b82b2): a row one
**   cell short whose redop cell is an integer (the root) has it empty.
**   sendrecv prints its op, "sum" (NVIDIA/nccl-tests:src/sendrecv.cu:120
**   @a0b82b2).  Sizes repeat under -d all, -o all and -N, and for each
**   root of broadcast (NVIDIA/nccl-tests:src/broadcast.cu:103 @a0b82b2):
**   every row is kept, in order.
** - "# Avg bus bandwidth    : %g" (NVIDIA/nccl-tests:src/util.cu:778
**   @a0b82b2; NVIDIA/nccl-tests:src/common.cu:1201 @863fcc8) and "# Out
**   of bounds values" (NVIDIA/nccl-tests:src/util.cu:777 @a0b82b2) end
**   the table.
** - "# Using devices" (NVIDIA/nccl-tests:src/util.cu:667 @a0b82b2), then
**   a "#  Rank %2d ..." line per rank, every process's in rank order
**   (NVIDIA/nccl-tests:src/util.cu:687 @a0b82b2, gathered at line 706;
**   "#   Rank %2d Pid ...", NVIDIA/nccl-tests:src/common.cu:1044
**   @863fcc8): nranks.  A process's lines past 2048 bytes end in "..."
**   (NVIDIA/nccl-tests:src/util.cu:693 @a0b82b2); the ranks are then
**   counted in processes of nThread x nGpus ranks, from "# nThread T
**   nGpus G ..." (NVIDIA/nccl-tests:src/util.cu:625 @a0b82b2).
** - The collective: "# Collective test starting: NAME_perf", the
**   binary's name (NVIDIA/nccl-tests:src/util.cu:624 @a0b82b2, since
**   v2.16.7), else the first NAME_perf or NAME_perf_mpi binary of a
**   command line pasted before the table.
**
** Anything else is skipped: NCCL's log lines ("host:pid:tid [dev] NCCL
** INFO ..."), launcher messages, the shell prompt; Open MPI's
** --tag-output prefix "[1,0]<stdout>:" and srun -l's "0: " are removed
** first.  After the column header, a line is a row when its first two
** cells (size, count) are unsigned integers.
**
** Refused, with the source, the line and what is wrong: a row whose
** size, time, algbw or busbw is not a number, negative or out of range
** (an in-place "N/A" reads as NaN); a row with more cells than the
** header, or with fewer unless it is the text's last line (a paste cut
** short: that row is dropped, never completed); a row broken by an NCCL
** log line; a CPU-time table (-C 1), whose time is not the collective's;
** the 2017 layout ("bytes N type op", time in ms); two runs in one text
** (a second nThread line, column header or average: under mpirun a
** binary built without MPI=1 prints one run per process); ranks listed
** twice or out of order; NUL bytes; no column header; no row.
**
** One pass over the text, O(bytes); the rows collect in a vector, then
** move to one array of exactly nrows.
*/
#include "base/pp_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One whitespace-separated cell of a line. */
struct cell {
  const char *s;
  size_t n;
  long col; /* 1-based, in the line as given */
};

/* Where the column header puts each value (cell indices from "size"). */
struct layout {
  long line;   /* of the column header; 0 before one */
  int ncols;   /* cells it names, the timestamp excluded */
  bool stamp;  /* a "timestamp" column: two more cells per row */
  int time[2]; /* "time" of the out-of-place and in-place blocks (algbw
                  and busbw follow); -1 absent */
  int redop;   /* "redop" followed by "root", else -1 */
};

struct nt_run {
  pp_ctx *ctx;
  const char *src;
  struct layout lay;
  struct ppi_vec rows;
  long run_line;     /* "# nThread ..."; 0 none */
  long per_proc;     /* its nThread x nGpus; 0 unknown */
  long devices_line; /* "# Using devices"; 0 none */
  long nlisted;      /* rank lines */
  long last_rank;    /* the last rank listed; -1 none */
  long last_rank_line;
  bool cut;      /* a process's rank lines end in "..." */
  long avg_line; /* "# Avg bus bandwidth"; 0 none */
  double avg;
  bool ended; /* the footer was read: row-like lines are noise */
  long stray; /* a row-like line before any column header; 0 none */
  char name_header[32], name_command[32];
};

static bool is(const struct cell *c, const char *s)
{
  return c->n == strlen(s) && !memcmp(c->s, s, c->n);
}

/* Split [p, e) on white space into at most max cells, columns counted
** from line0; max + 1 when there are more. */
static int cells_of(const char *line0, const char *p, const char *e,
                    struct cell *c, int max)
{
  int n = 0;
  for (;;) {
    const char *b;
    while (p < e && isspace((unsigned char)*p))
      p++;
    if (p == e)
      return n;
    if (n == max)
      return max + 1;
    for (b = p; p < e && !isspace((unsigned char)*p); p++)
      ;
    c[n].s = b;
    c[n].n = (size_t)(p - b);
    c[n].col = (long)(b - line0) + 1;
    n++;
  }
}

/* The text after a launcher's tag: Open MPI's --tag-output
** "[job,rank]<stdout>:" (or <stderr>) and srun -l's "task: ". */
static const char *untag(const char *p, const char *e)
{
  const char *q = p;
  if (q < e && *q == '[') {
    static const char *const tags[] = {"]<stdout>:", "]<stderr>:"};
    int k;
    for (q++; q < e && (isdigit((unsigned char)*q) || *q == ','); q++)
      ;
    for (k = 0; k < 2; k++)
      if ((size_t)(e - q) >= 10 && !memcmp(q, tags[k], 10))
        return q + 10;
    return p;
  }
  while (q < e && (*q == ' ' || *q == '\t'))
    q++;
  if (q == e || !isdigit((unsigned char)*q))
    return p;
  while (q < e && isdigit((unsigned char)*q))
    q++;
  if (q < e && *q == ':' && (q + 1 == e || isspace((unsigned char)q[1])))
    return q + 1;
  return p;
}

static bool all_digits(const struct cell *c)
{
  size_t i;
  for (i = 0; i < c->n; i++)
    if (!isdigit((unsigned char)c->s[i]))
      return false;
  return c->n > 0;
}

/* The value of an unsigned integer cell of at most 9 digits; -1 for any
** other cell. */
static long small_int(const struct cell *c)
{
  long v = 0;
  size_t i;
  if (!all_digits(c) || c->n > 9)
    return -1;
  for (i = 0; i < c->n; i++)
    v = v * 10 + (c->s[i] - '0');
  return v;
}

/* An integer cell, optionally negative (a root of -1). */
static bool is_int(const struct cell *c)
{
  struct cell d = *c;
  if (d.n > 1 && d.s[0] == '-')
    d.s++, d.n--;
  return all_digits(&d);
}

/* The text [p, e) holds s. */
static bool holds(const char *p, const char *e, const char *s)
{
  size_t n = strlen(s);
  for (; (size_t)(e - p) >= n; p++)
    if (!memcmp(p, s, n))
      return true;
  return false;
}

/* "NAME_perf" or "NAME_perf_mpi" (a path, quotes around it) -> NAME in
** out; false for anything else. */
static bool perf_binary(const struct cell *c, char *out, size_t cap)
{
  static const char *const suffix[] = {"_perf_mpi", "_perf"};
  const char *s = c->s, *e = c->s + c->n, *b;
  int k;
  while (s < e && (*s == '"' || *s == '\''))
    s++;
  while (e > s && (e[-1] == '"' || e[-1] == '\''))
    e--;
  for (b = e; b > s && b[-1] != '/'; b--)
    ;
  for (k = 0; k < 2; k++) {
    size_t m = strlen(suffix[k]), n = (size_t)(e - b), i;
    if (n <= m || memcmp(e - m, suffix[k], m) || n - m >= cap)
      continue;
    for (i = 0; i < n - m; i++)
      if (!isalnum((unsigned char)b[i]) && b[i] != '_')
        return false;
    memcpy(out, b, n - m);
    out[n - m] = '\0';
    return true;
  }
  return false;
}

/* The number in cell c, finite and non-negative, into *x; what names the
** column for messages. */
static pp_status number(struct nt_run *r, long line, const struct cell *c,
                        const char *what, double *x)
{
  char buf[PPI_NCCL_TESTS_MAX_NUMBER], *end;
  int shown = c->n > 32 ? 32 : (int)c->n;
  size_t i;
  for (i = 0; i < c->n; i++)
    if (!isdigit((unsigned char)c->s[i]) &&
        (!c->s[i] || !strchr(".eE+-", c->s[i])))
      break;
  if (i < c->n || c->n >= sizeof buf)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, c->col,
                       "%s '%.*s%s' is not a number", what, shown, c->s,
                       shown < (int)c->n ? "..." : "");
  memcpy(buf, c->s, c->n);
  buf[c->n] = '\0';
  *x = strtod(buf, &end);
  if (end != buf + c->n)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, c->col,
                       "%s '%s' is not a number", what, buf);
  if (!isfinite(*x))
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, line, c->col,
                       "%s '%s' is out of range", what, buf);
  if (*x < 0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, line, c->col,
                       "%s '%s' is negative", what, buf);
  *x += 0.0; /* -0 reads as 0 */
  return PP_OK;
}

/* A second run's line: one run per text. */
static pp_status second_run(struct nt_run *r, long line, long first,
                            const char *what)
{
  return ppi_fail_at(r->ctx, PP_EINPUT, r->src, line, 0,
                     "a second %s (the first on line %ld): one nccl-tests "
                     "run per text (under mpirun, a binary built without "
                     "MPI=1 prints one run per process)",
                     what, first);
}

/* The column header: c[0] is "size". */
static pp_status header(struct nt_run *r, long line, const struct cell *c,
                        int n)
{
  struct layout *l = &r->lay;
  int i, blocks = 0;
  if (l->line)
    return second_run(r, line, l->line, "column header");
  if (n > PPI_NCCL_TESTS_MAX_CELLS)
    return ppi_fail_at(r->ctx, PP_ELIMIT, r->src, line, 0,
                       "a column header of more than %d cells",
                       PPI_NCCL_TESTS_MAX_CELLS);
  l->stamp = is(&c[n - 1], "timestamp");
  l->ncols = n - l->stamp;
  l->time[0] = l->time[1] = l->redop = -1;
  for (i = 0; i + 2 < l->ncols; i++) {
    if (!is(&c[i + 1], "algbw") || !is(&c[i + 2], "busbw"))
      continue;
    if (is(&c[i], "cputime"))
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, line, c[i].col,
                         "the table reports cputime (-C 1), the CPU's time "
                         "rather than the collective's: run without -C");
    if (is(&c[i], "time") && blocks < 2)
      l->time[blocks++] = i;
  }
  if (!blocks)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, 0,
                       "a column header without 'time algbw busbw'");
  for (i = 0; i + 1 < l->ncols; i++)
    if (is(&c[i], "redop") && is(&c[i + 1], "root"))
      l->redop = i;
  l->line = line;
  return PP_OK;
}

/* A '#' line, its cells after the '#'. */
static pp_status hash_line(struct nt_run *r, long line, const struct cell *c,
                           int n)
{
  if (n == 0)
    return PP_OK;
  if (is(&c[0], "nThread")) {
    if (r->run_line)
      return second_run(r, line, r->run_line, "'# nThread' line");
    r->run_line = line;
    if (n >= 4 && is(&c[2], "nGpus") && small_int(&c[1]) > 0 &&
        small_int(&c[3]) > 0 && c[1].n < 5 && c[3].n < 5)
      r->per_proc = small_int(&c[1]) * small_int(&c[3]);
  } else if (n == 2 && is(&c[0], "Using") && is(&c[1], "devices")) {
    if (r->devices_line)
      return second_run(r, line, r->devices_line, "'# Using devices' line");
    r->devices_line = line;
  } else if (r->devices_line && !r->lay.line && n >= 2 && is(&c[0], "Rank")) {
    long k = small_int(&c[1]);
    if (k < 0)
      return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, c[1].col,
                         "rank '%.*s' is not a rank number",
                         c[1].n > 32 ? 32 : (int)c[1].n, c[1].s);
    if (k <= r->last_rank)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, line, c[1].col,
                         "rank %ld listed after rank %ld (line %ld): each "
                         "rank once, in order (under mpirun, a binary built "
                         "without MPI=1 runs one job per process)",
                         k, r->last_rank, r->last_rank_line);
    r->last_rank = k;
    r->last_rank_line = line;
    r->nlisted++;
  } else if (is(&c[0], "size")) {
    int i;
    for (i = 1; i < n && i < PPI_NCCL_TESTS_MAX_CELLS; i++)
      if (is(&c[i], "busbw"))
        return header(r, line, c, n);
  } else if (n >= 2 && is(&c[0], "bytes") && is(&c[1], "N"))
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, line, 0,
                       "nccl-tests output of 2017-2018 ('bytes N type "
                       "op', time in ms): not read; rerun with nccl-tests "
                       "v2.0 or later");
  else if (n >= 4 && is(&c[0], "Collective") && is(&c[1], "test") &&
           is(&c[2], "starting:"))
    perf_binary(&c[3], r->name_header, sizeof r->name_header);
  else if (n >= 3 && is(&c[0], "Avg") && is(&c[1], "bus") &&
           is(&c[2], "bandwidth")) {
    pp_status rc;
    if (r->avg_line)
      return second_run(r, line, r->avg_line, "'# Avg bus bandwidth' line");
    if (n < 5 || !is(&c[3], ":"))
      return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, 0,
                         "'Avg bus bandwidth' without ': value'");
    if ((rc = number(r, line, &c[4], "Avg bus bandwidth", &r->avg)))
      return rc;
    r->avg_line = line;
    r->ended = true;
  } else if (n >= 3 && is(&c[0], "Out") && is(&c[1], "of") &&
             is(&c[2], "bounds"))
    r->ended = true;
  /* past PPI_NCCL_TESTS_MAX_CELLS cells_of says max + 1 and c[max] is
  ** not a cell (a garbage pointer, found by fuzz_nccl_tests) */
  if (r->devices_line && !r->lay.line && n <= PPI_NCCL_TESTS_MAX_CELLS &&
      c[n - 1].n >= 3 && !memcmp(c[n - 1].s + c[n - 1].n - 3, "...", 3))
    r->cut = true;
  return PP_OK;
}

/* A row: c[0] and c[1] are unsigned integers (or c[0] alone). */
static pp_status row(struct nt_run *r, long line, const char *p, const char *e,
                     const struct cell *c, int n, bool last)
{
  const struct layout *l = &r->lay;
  int full = l->ncols + (l->stamp ? 2 : 0), shift = 0, t;
  pp_nccl_row w;
  pp_status rc;
  if (!l->line) {
    if (!r->stray)
      r->stray = line;
    return PP_OK;
  }
  if (r->ended)
    return PP_OK;
  if (holds(p, e, " NCCL INFO") || holds(p, e, " NCCL WARN") ||
      holds(p, e, " NCCL TRACE"))
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, 0,
                       "a table row broken by an NCCL log line: join the "
                       "row by hand, or rerun with NCCL_DEBUG=WARN or "
                       "NCCL_DEBUG_FILE set");
  if (n > PPI_NCCL_TESTS_MAX_CELLS)
    return ppi_fail_at(r->ctx, PP_ELIMIT, r->src, line, 0,
                       "a row of more than %d cells", PPI_NCCL_TESTS_MAX_CELLS);
  if (l->redop >= 0 && n == full - 1 && is_int(&c[l->redop]))
    shift = 1; /* the empty redop cell of v2.13.0-3 */
  if (n < full - shift) {
    if (last)
      return PP_OK; /* cut short: dropped, not completed */
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, 0,
                       "a row of %d cells where the column header (line "
                       "%ld) has %d: the row is cut short",
                       n, l->line, full);
  }
  if (n > full - shift)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, 0,
                       "a row of %d cells where the column header (line "
                       "%ld) has %d",
                       n, l->line, full);
#define AT(j) (&c[(j) - (shift && (j) > l->redop)])
  if ((rc = number(r, line, &c[0], "size", &w.bytes)))
    return rc;
  if (w.bytes > 9223372036854775807.0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, line, c[0].col,
                       "size '%.*s' is out of range", (int)c[0].n, c[0].s);
  t = l->time[0];
  if ((rc = number(r, line, AT(t), "time", &w.time_us)) ||
      (rc = number(r, line, AT(t + 1), "algbw", &w.algbw_gbps)) ||
      (rc = number(r, line, AT(t + 2), "busbw", &w.busbw_gbps)))
    return rc;
  t = l->time[1];
  w.in_busbw_gbps = NAN;
  if (t >= 0 && !is(AT(t + 2), "N/A") &&
      (rc = number(r, line, AT(t + 2), "in-place busbw", &w.in_busbw_gbps)))
    return rc;
#undef AT
  if (r->rows.n >= INT32_MAX)
    return ppi_fail_at(r->ctx, PP_ELIMIT, r->src, line, 0, "more than %d rows",
                       INT32_MAX - 1);
  return ppi_vec_push(r->ctx, &r->rows, &w);
}

static pp_status one_line(struct nt_run *r, long line, const char *line0,
                          const char *e, bool last)
{
  struct cell c[PPI_NCCL_TESTS_MAX_CELLS + 1];
  const char *p = untag(line0, e);
  int n;
  while (p < e && isspace((unsigned char)*p))
    p++;
  if (p < e && *p == '#')
    return hash_line(r, line, c,
                     cells_of(line0, p + 1, e, c, PPI_NCCL_TESTS_MAX_CELLS));
  n = cells_of(line0, p, e, c, PPI_NCCL_TESTS_MAX_CELLS);
  if (n > 0 && all_digits(&c[0]) && (n == 1 || all_digits(&c[1])))
    return row(r, line, p, e, c, n, last);
  if (!r->lay.line && !r->name_command[0] && !holds(p, e, " NCCL ")) {
    int i;
    for (i = 0; i < n && i < PPI_NCCL_TESTS_MAX_CELLS; i++)
      if (perf_binary(&c[i], r->name_command, sizeof r->name_command))
        break;
  }
  return PP_OK;
}

/* nranks from the rank lines, into *out. */
static pp_status ranks(struct nt_run *r, int32_t *out)
{
  long n = r->nlisted;
  *out = 0;
  if (!r->devices_line)
    return PP_OK;
  if (r->cut) {
    if (r->per_proc <= 0)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, r->devices_line, 0,
                         "the rank list is cut ('...') and no '# nThread T "
                         "nGpus G' line says how many ranks a process has");
    n = (r->last_rank / r->per_proc + 1) * r->per_proc;
  } else if (n != r->last_rank + 1)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, r->devices_line, 0,
                       "the rank list names %ld ranks, the last rank %ld", n,
                       r->last_rank);
  if (n > INT32_MAX)
    return ppi_fail_at(r->ctx, PP_ELIMIT, r->src, r->devices_line, 0,
                       "more than %d ranks", INT32_MAX);
  *out = (int32_t)n;
  return PP_OK;
}

pp_status pp_nccl_tests_read(pp_ctx *ctx, const char *text, size_t len,
                             const char *source, pp_nccl_tests *out)
{
  struct nt_run r;
  const char *p = text ? text : "", *end = p + len, *tail = end;
  long line = 0;
  pp_status rc = PP_OK;
  pp_nccl_tests t;

  if (!ctx || (!text && len) || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_nccl_tests_read: NULL argument")
               : PP_EINVAL;
  memset(out, 0, sizeof *out);
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.src = source ? source : "<nccl-tests>";
  r.last_rank = -1;
  r.avg = NAN;
  ppi_vec_init(&r.rows, sizeof(pp_nccl_row));
  while (tail > p && isspace((unsigned char)tail[-1]))
    tail--; /* past the last line that is not blank */
  while (p < end && !rc) {
    const char *e = memchr(p, '\n', (size_t)(end - p));
    if (!e)
      e = end;
    line++;
    if (memchr(p, '\0', (size_t)(e - p)))
      rc = ppi_fail_at(ctx, PP_EPARSE, r.src, line, 0,
                       "a NUL byte: not nccl-tests text output");
    else
      rc = one_line(&r, line, p, e, e >= tail);
    p = e < end ? e + 1 : end;
  }
  if (rc)
    goto done;
  if (!r.lay.line) {
    if (r.stray)
      rc = ppi_fail_at(ctx, PP_EPARSE, r.src, r.stray, 0,
                       "a table row before any column header of nccl-tests "
                       "('#  size  count  type ... time  algbw  busbw ...'): "
                       "give the output from the column header on");
    else
      rc = ppi_fail_at(ctx, PP_EPARSE, r.src, 0, 0,
                       "no nccl-tests table: no column header ('#  size  "
                       "count  type ... time  algbw  busbw ...') of "
                       "all_reduce_perf, sendrecv_perf or another "
                       "nccl-tests binary");
    goto done;
  }
  if (r.rows.n == 0) {
    rc = ppi_fail_at(ctx, PP_EPARSE, r.src, r.lay.line, 0,
                     "no complete row under this column header");
    goto done;
  }
  memset(&t, 0, sizeof t);
  if ((rc = ranks(&r, &t.nranks)))
    goto done;
  snprintf(t.collective, sizeof t.collective, "%s",
           r.name_header[0] ? r.name_header : r.name_command);
  t.avg_busbw_gbps = r.avg;
  if (!PPI_NEW(ctx, t.rows, r.rows.n)) {
    rc = PP_ENOMEM;
    goto done;
  }
  memcpy(t.rows, r.rows.data, r.rows.n * sizeof *t.rows);
  t.nrows = (int32_t)r.rows.n;
  *out = t;
done:
  ppi_vec_free(ctx, &r.rows);
  return rc;
}

pp_status pp_nccl_tests_load(pp_ctx *ctx, const char *path, pp_nccl_tests *out)
{
  char *text;
  size_t len;
  pp_status rc;
  if (!ctx || !path || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_nccl_tests_load: NULL argument")
               : PP_EINVAL;
  memset(out, 0, sizeof *out);
  if ((rc = ppi_read_file(ctx, path, &text, &len)))
    return rc;
  rc = pp_nccl_tests_read(ctx, text, len, path, out);
  ppi_free(ctx, text, len + 1);
  return rc;
}

void pp_nccl_tests_free(pp_ctx *ctx, pp_nccl_tests *t)
{
  if (!ctx || !t)
    return;
  if (t->rows)
    ppi_free(ctx, t->rows,
             (size_t)(t->nrows > 0 ? t->nrows : 1) * sizeof *t->rows);
  memset(t, 0, sizeof *t);
}

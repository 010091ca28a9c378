/* SPDX-License-Identifier: MIT */
/*
** The nccl-tests reader (src/format/nccl_tests.c, issue 19): the outputs
** of tests/data/nccl_tests/ (written by make_nccl_tests.py there with
** nccl-tests' own printf formats, tests/data/nccl_tests/README.md) read
** value for value; the layouts of the versions checked (v2.19.6 at
** a0b82b2, per-iteration columns and timestamps; v2.13.6 at 0b4c4cb,
** "#wrong" and an in-place N/A; v2.13.0 at bc5f7cf, the empty redop cell
** of NVIDIA/nccl-tests:src/all_gather.cu:81 @bc5f7cf; v2.11.0 at 863fcc8,
** the "error" column "%5.0le" of NVIDIA/nccl-tests:src/common.cu:737
** @863fcc8); NCCL log lines and launcher noise between the lines; the
** errors (a malformed row with its line and field, no table, a row cut
** short, a row broken by a log line, two runs in one text, NUL bytes,
** huge numbers); a mutation fuzz and an allocation-failure sweep.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define DIR "tests/data/nccl_tests/"

static char *slurp(const char *rel, size_t *len)
{
  char *t = tu_slurp(tu_path(rel), len);
  if (!t)
    fail_msg("cannot read %s", rel);
  return t;
}

/* Read text (n bytes) and fail the test on an error. */
static void read_ok(pp_ctx *ctx, const char *text, size_t n, const char *src,
                    pp_nccl_tests *t)
{
  if (pp_nccl_tests_read(ctx, text, n, src, t) != PP_OK)
    fail_msg("%s: %s", src, pp_ctx_errmsg(ctx));
  assert_true(t->nrows > 0);
  assert_non_null(t->rows);
}

static void load_ok(pp_ctx *ctx, const char *rel, pp_nccl_tests *t)
{
  if (pp_nccl_tests_load(ctx, tu_path(rel), t) != PP_OK)
    fail_msg("%s: %s", rel, pp_ctx_errmsg(ctx));
  assert_true(t->nrows > 0);
}

static void row_is(const pp_nccl_row *r, double bytes, double us, double alg,
                   double bus, double in_bus)
{
  if (r->bytes != bytes || r->time_us != us || r->algbw_gbps != alg ||
      r->busbw_gbps != bus ||
      (isnan(in_bus) ? !isnan(r->in_busbw_gbps) : r->in_busbw_gbps != in_bus))
    fail_msg("row %.17g %.17g %.17g %.17g %.17g, expected %g %g %g %g %g",
             r->bytes, r->time_us, r->algbw_gbps, r->busbw_gbps,
             r->in_busbw_gbps, bytes, us, alg, bus, in_bus);
}

/* Sizes double from lo, busbw = factor x algbw to the printed precision
** (2 decimals), and the average line is the mean of every busbw printed,
** in place included (NVIDIA/nccl-tests:src/common.cu:895 @a0b82b2). */
static void consistent(const pp_nccl_tests *t, double lo, double step,
                       double factor)
{
  double sum = 0, want = lo;
  int32_t i;
  for (i = 0; i < t->nrows; i++, want *= step) {
    const pp_nccl_row *r = &t->rows[i];
    assert_true(r->bytes == want);
    if (fabs(r->busbw_gbps - factor * r->algbw_gbps) > 0.005 * (1 + factor))
      fail_msg("row %d: busbw %g, algbw %g x %g", (int)i, r->busbw_gbps,
               r->algbw_gbps, factor);
    sum += r->busbw_gbps + r->in_busbw_gbps;
  }
  if (fabs(sum / (2 * t->nrows) - t->avg_busbw_gbps) > 0.005)
    fail_msg("mean busbw %g, the average line %g", sum / (2 * t->nrows),
             t->avg_busbw_gbps);
}

/* ---- the layouts ------------------------------------------------------ */

/* Each file of tests/data/nccl_tests/ with what it must give: one row in
** full, the sizes (lo, x step), busbw / algbw (the collective's factor:
** AllReduceGetBw and the others). */
static const struct layout_case {
  const char *file, *collective;
  int32_t nranks, nrows, at;
  pp_nccl_row row;
  double avg, lo, step, factor;
} layouts[] = {
    /* v2.19.6: 8 ranks on one node, the collective from "# Collective
    ** test starting", a command line before it */
    {DIR "all_reduce_8xh100_v2.19.txt",
     "all_reduce",
     8,
     25,
     24,
     {134217728, 666.45, 201.39, 352.44, 359.46},
     87.9819,
     8,
     2,
     2.0 * 7 / 8},
    /* v2.13.6 under mpirun between two nodes: NCCL INFO lines before the
    ** table and between its rows, the collective from the command line,
    ** the in-place #wrong "N/A" (not a value read) */
    {DIR "sendrecv_2node_info_v2.13.txt",
     "sendrecv",
     2,
     28,
     27,
     {1073741824, 92594, 11.60, 11.60, 11.65},
     5.01895,
     8,
     2,
     1},
    /* v2.11.0: the all_reduce header without root, "error" columns of
    ** "%5.0le" (0e+00, 1e-06), 16 ranks of two processes of 8 GPUs; no
    ** name anywhere */
    {DIR "all_reduce_16xv100_v2.11.txt",
     "",
     16,
     26,
     25,
     {268435456, 12631, 21.25, 39.85, 40.66},
     13.2623,
     8,
     2,
     2.0 * 15 / 16},
    /* v2.13.0's all_gather: the header names redop and root, the rows
    ** leave the redop cell empty */
    {DIR "all_gather_blank_redop_v2.13.0.txt",
     "",
     4,
     8,
     6,
     {4194304, 217.7, 19.26, 14.45, 14.72},
     6.43684,
     1024,
     4,
     3.0 / 4},
    /* v2.19.6 with -I 1 -S 1: four per-iteration columns after each
    ** block, a timestamp of two cells at the end */
    {DIR "reduce_scatter_periter_v2.19.txt",
     "reduce_scatter",
     4,
     4,
     3,
     {67108864, 394.83, 169.97, 127.48, 129.98},
     84.305,
     1048576,
     4,
     3.0 / 4},
};

static void t_layouts(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  size_t k;
  for (k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
    const struct layout_case *c = &layouts[k];
    const pp_nccl_row *r = &c->row;
    pp_nccl_tests t;
    load_ok(ctx, c->file, &t);
    assert_string_equal(t.collective, c->collective);
    assert_int_equal(t.nranks, c->nranks);
    assert_int_equal(t.nrows, c->nrows);
    row_is(&t.rows[c->at], r->bytes, r->time_us, r->algbw_gbps, r->busbw_gbps,
           r->in_busbw_gbps);
    assert_true(t.avg_busbw_gbps == c->avg);
    consistent(&t, c->lo, c->step, c->factor);
    pp_nccl_tests_free(ctx, &t);
    assert_null(t.rows);
    assert_int_equal(t.nrows, 0);
  }
}

/* Rows of the first file as printed: zeros, and a middle one. */
static void t_small_rows(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_nccl_tests t;
  load_ok(ctx, layouts[0].file, &t);
  row_is(&t.rows[0], 8, 14.00, 0.00, 0.00, 0.00);
  row_is(&t.rows[17], 1048576, 19.10, 54.91, 96.09, 96.50);
  pp_nccl_tests_free(ctx, &t);
  load_ok(ctx, layouts[1].file, &t);
  row_is(&t.rows[9], 4096, 30.35, 0.13, 0.13, 0.13);
  pp_nccl_tests_free(ctx, &t);
}

/* The lines as launchers tag them (Open MPI's --tag-output, srun -l) and
** with CRLF ends read as the plain file. */
static void t_tags_crlf(void **state)
{
  static const char *const prefix[] = {"[1,0]<stdout>:", "0: ", ""};
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_nccl_tests a, b;
  size_t len, i;
  char *t = slurp(layouts[1].file, &len);
  int k;
  read_ok(ctx, t, len, "plain", &a);
  for (k = 0; k < 3; k++) {
    size_t cap = len * 2 + 4096, n = 0;
    char *u = malloc(cap);
    const char *p = t;
    assert_non_null(u);
    while (p < t + len) {
      const char *e = memchr(p, '\n', (size_t)(t + len - p));
      size_t m = e ? (size_t)(e - p) : (size_t)(t + len - p);
      n += (size_t)sprintf(u + n, "%s", prefix[k]);
      memcpy(u + n, p, m);
      n += m;
      if (k == 2)
        u[n++] = '\r';
      u[n++] = '\n';
      p += m + 1;
    }
    read_ok(ctx, u, n, "tagged", &b);
    assert_int_equal(b.nrows, a.nrows);
    assert_int_equal(b.nranks, a.nranks);
    assert_string_equal(b.collective, a.collective);
    for (i = 0; i < (size_t)a.nrows; i++)
      assert_memory_equal(&a.rows[i], &b.rows[i], sizeof a.rows[i]);
    pp_nccl_tests_free(ctx, &b);
    free(u);
  }
  pp_nccl_tests_free(ctx, &a);
  free(t);
}

/* ---- small texts -------------------------------------------------------- */

#define HDR                                                                    \
  "#       size         count      type   redop    root     time   algbw   "   \
  "busbw #wrong     time   algbw   busbw #wrong\n"
#define ROW(size, busbw, in_busbw)                                             \
  "  " size "  1  float  sum  -1  10.00  1.00  " busbw                         \
  "  0  10.00  1.00  " in_busbw "  0\n"

static pp_status rd(pp_ctx *ctx, const char *text, pp_nccl_tests *t)
{
  return pp_nccl_tests_read(ctx, text, strlen(text), "t.txt", t);
}

/* An in-place busbw of "N/A" is NaN; a table without an in-place block
** gives NaN too; no average line, no device block: NaN and 0. */
static void t_in_place_na(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_nccl_tests t;
  assert_int_equal(rd(ctx, HDR ROW("8", "1.75", "N/A") ROW("16", "2", "3"), &t),
                   PP_OK);
  assert_int_equal(t.nrows, 2);
  row_is(&t.rows[0], 8, 10, 1, 1.75, NAN);
  row_is(&t.rows[1], 16, 10, 1, 2, 3);
  assert_true(isnan(t.avg_busbw_gbps));
  assert_int_equal(t.nranks, 0);
  assert_string_equal(t.collective, "");
  pp_nccl_tests_free(ctx, &t);
  assert_int_equal(
      rd(ctx, "# size count type time algbw busbw\n 64 16 float 2 0.03 4e+01\n",
         &t),
      PP_OK);
  row_is(&t.rows[0], 64, 2, 0.03, 40, NAN);
  pp_nccl_tests_free(ctx, &t);
}

/* A row whose value does not parse: the source, the line, the column and
** the cell. */
static void t_malformed(void **state)
{
  static const struct {
    const char *text, *what[3];
    pp_status rc;
  } bad[] = {
      {HDR ROW("8", "1.0", "1.0") ROW("16", "1.2.3", "1.0"),
       {"t.txt:3:", "busbw '1.2.3' is not a number", NULL},
       PP_EPARSE},
      {HDR ROW("8", "abc", "1.0"),
       {"t.txt:2:", "busbw 'abc'", NULL},
       PP_EPARSE},
      {HDR ROW("8", "1.0", "x"),
       {"t.txt:2:", "in-place busbw 'x'", NULL},
       PP_EPARSE},
      {HDR "  8  2  float  sum  -1  -3  1  1  0  1  1  1  0\n",
       {"t.txt:2:", "time '-3' is negative", NULL},
       PP_EINPUT},
      {HDR ROW("8", "1e999", "1"),
       {"t.txt:2:", "'1e999' is out of range", NULL},
       PP_EINPUT},
      {HDR ROW("99999999999999999999999", "1", "1"),
       {"t.txt:2:", "size", "out of range"},
       PP_EINPUT},
      {HDR ROW("8", "nan", "1"),
       {"t.txt:2:", "'nan' is not a number", NULL},
       PP_EPARSE},
      {HDR ROW("8", "0x10", "1"),
       {"t.txt:2:", "not a number", NULL},
       PP_EPARSE},
      {HDR ROW("8",
               "11111111111111111111111111111111111111111111111111111111111"
               "111111111111111111111",
               "1"),
       {"t.txt:2:", "...' is not a number", NULL},
       PP_EPARSE},
      {HDR "  8  2  float  sum  -1  1  1  1  0  1  1  1  0  extra\n",
       {"t.txt:2:", "14 cells", "has 13"},
       PP_EPARSE},
      {HDR ROW("8", "1", "1") "# Avg bus bandwidth    : fast\n",
       {"t.txt:3:", "Avg bus bandwidth 'fast' is not a number", NULL},
       PP_EPARSE},
      {"# Using devices\n#  Rank  x Group 0\n" HDR ROW("8", "1", "1"),
       {"t.txt:2:", "rank 'x'", NULL},
       PP_EPARSE},
  };
  pp_ctx *ctx = tu_fix_ctx(state);
  size_t k;
  for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    pp_nccl_tests t;
    pp_status rc = rd(ctx, bad[k].text, &t);
    if (rc != bad[k].rc)
      fail_msg("case %d: status %d: %s", (int)k, rc, pp_ctx_errmsg(ctx));
    assert_int_equal(t.nrows, 0);
    assert_null(t.rows);
    tu_expect_error(ctx, rc, bad[k].rc, bad[k].what[0],
                    bad[k].what[1] ? bad[k].what[1] : "",
                    bad[k].what[1] && bad[k].what[2] ? bad[k].what[2] : "",
                    NULL);
  }
}

/* No table: what was looked for; a row without its header; a header
** without a row. */
/* A '#' line of more than PPI_NCCL_TESTS_MAX_CELLS words inside the
** device list: the reader read a 65th cell that is not there (found by
** fuzz_nccl_tests; ASan catches a regression).  The line is noise. */
static void t_long_hash_line(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_nccl_tests t;
  char text[4096];
  size_t off = 0;
  int i;
  off += (size_t)snprintf(text + off, sizeof text - off,
                          "# nThread 1 nGpus 1 minBytes 8\n"
                          "# Using devices\n#");
  for (i = 0; i < 70; i++)
    off += (size_t)snprintf(text + off, sizeof text - off, " w%d", i);
  snprintf(text + off, sizeof text - off, "\n" HDR ROW("8", "1", "1"));
  assert_int_equal(rd(ctx, text, &t), PP_OK);
  assert_int_equal(t.nrows, 1);
  pp_nccl_tests_free(ctx, &t);
}

static void t_no_table(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_nccl_tests t;
  tu_expect_error(ctx, pp_nccl_tests_read(ctx, NULL, 0, "empty.txt", &t),
                  PP_EPARSE, "empty.txt: ", "no nccl-tests table",
                  "column header", "size  count", "busbw", NULL);
  tu_expect_error(ctx, pp_nccl_tests_read(ctx, "", 0, NULL, &t), PP_EPARSE,
                  "<nccl-tests>: no nccl-tests table", NULL);
  tu_expect_error(ctx,
                  rd(ctx,
                     "n1:1:1 [0] NCCL INFO Bootstrap : Using ib0\n"
                     "mpirun noticed that process rank 0 exited\n\n",
                     &t),
                  PP_EPARSE, "t.txt: no nccl-tests table", NULL);
  tu_expect_error(ctx, rd(ctx, "hello\n" ROW("8", "1", "1"), &t), PP_EPARSE,
                  "t.txt:2: a table row before any column header", NULL);
  tu_expect_error(ctx, rd(ctx, "x\n" HDR "# Avg bus bandwidth    : 0\n", &t),
                  PP_EPARSE, "t.txt:2: no complete row", NULL);
  /* the footer ends the table: a row-like line after it is noise */
  assert_int_equal(rd(ctx,
                      HDR ROW("8", "1", "1") "# Avg bus bandwidth    : 1 \n"
                                             "2 3 processes killed\n",
                      &t),
                   PP_OK);
  assert_int_equal(t.nrows, 1);
  assert_true(t.avg_busbw_gbps == 1);
  pp_nccl_tests_free(ctx, &t);
  tu_expect_error(
      ctx, rd(ctx, "#  bytes  N  type  op  time  algbw  busbw  res\n", &t),
      PP_EINPUT, "t.txt:1:", "2017", NULL);
  tu_expect_error(ctx,
                  rd(ctx,
                     "# size count type redop root cputime algbw busbw #wrong\n"
                     "  8  2  float  sum  -1  1  1  1  0\n",
                     &t),
                  PP_EINPUT, "t.txt:1:", "cputime", NULL);
  tu_expect_error(ctx, rd(ctx, "# size count type time algbw\n", &t), PP_EPARSE,
                  "no nccl-tests table", NULL);
  tu_expect_error(ctx, rd(ctx, "# size count type busbw time algbw\n", &t),
                  PP_EPARSE, "t.txt:1:", "without 'time algbw busbw'", NULL);
}

/* A paste cut short: the last row is dropped when it lacks columns; a
** row short of columns elsewhere is an error, and never completed. */
static void t_truncated(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_nccl_tests t, whole;
  size_t len, cut;
  char *f = slurp(layouts[0].file, &len);
  const char *last = strstr(f, "   134217728  ");
  assert_non_null(last);
  read_ok(ctx, f, len, "whole", &whole);
  /* every cut inside the last row drops it */
  for (cut = (size_t)(last - f) + 1; f[cut] != '\n'; cut++) {
    read_ok(ctx, f, cut, "cut", &t);
    assert_int_equal(t.nrows, 24);
    assert_memory_equal(t.rows, whole.rows, 24 * sizeof *t.rows);
    assert_true(isnan(t.avg_busbw_gbps));
    pp_nccl_tests_free(ctx, &t);
  }
  /* cut, then more lines: an error naming the line */
  {
    char *g = malloc(len + 64), where[32];
    size_t at = (size_t)(last - f) + 60, i;
    long line = 1;
    assert_non_null(g);
    for (i = 0; i < (size_t)(last - f); i++)
      line += f[i] == '\n';
    memcpy(g, f, at);
    strcpy(g + at, "\nmpirun: Forwarding signal 18 to job\n");
    snprintf(where, sizeof where, "cut.txt:%ld:", line);
    tu_expect_error(ctx, pp_nccl_tests_read(ctx, g, strlen(g), "cut.txt", &t),
                    PP_EPARSE, where, "cut short", NULL);
    free(g);
  }
  /* the truncated row with a blank line after it is still the last */
  assert_int_equal(
      rd(ctx, HDR ROW("8", "1", "1") "  16  4  float  sum\n\n\n", &t), PP_OK);
  assert_int_equal(t.nrows, 1);
  pp_nccl_tests_free(ctx, &t);
  /* a lone size on the last line */
  assert_int_equal(rd(ctx, HDR ROW("8", "1", "1") "  1", &t), PP_OK);
  assert_int_equal(t.nrows, 1);
  pp_nccl_tests_free(ctx, &t);
  tu_expect_error(ctx, rd(ctx, HDR "  16  4  float  sum\n", &t), PP_EPARSE,
                  "t.txt:1: no complete row", NULL);
  pp_nccl_tests_free(ctx, &whole);
  free(f);
}

/* NCCL's log lines between rows are skipped; one inside a row (the
** preamble printed, then a log line before the timings) is an error. */
static void t_interleaved(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_nccl_tests t;
  assert_int_equal(
      rd(ctx,
         "n1:77:77 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n" HDR
         "n1:77:90 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n" ROW(
             "8", "1",
             "1") "n2:81:99 [3] NCCL WARN NET/IB : retrying\n"
                  "[n1:00070] 1 more process has sent help message "
                  "help-mpi-btl-openib.txt / no active ports found\n" ROW(
                      "16", "2", "2"),
         &t),
      PP_OK);
  assert_int_equal(t.nrows, 2);
  pp_nccl_tests_free(ctx, &t);
  tu_expect_error(
      ctx,
      rd(ctx,
         HDR "           8             2     float     sum      -1n1:77:90 [0] "
             "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
             "    14.00    0.00    0.00       0    14.02    0.00    0.00     "
             "  0\n",
         &t),
      PP_EPARSE, "t.txt:2:", "broken by an NCCL log line", NULL);
}

/* Two runs in one text (a binary without MPI=1 under mpirun: every
** process prints its own run), ranks out of order, a cut rank list. */
static void t_runs_and_ranks(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_nccl_tests t;
  tu_expect_error(
      ctx,
      rd(ctx,
         "# nThread 1 nGpus 1 minBytes 8 maxBytes 8\n#\n# Using devices\n"
         "# nThread 1 nGpus 1 minBytes 8 maxBytes 8\n#\n# Using devices\n",
         &t),
      PP_EINPUT, "t.txt:4:", "a second '# nThread' line (the first on line 1)",
      "MPI=1", NULL);
  tu_expect_error(ctx,
                  rd(ctx,
                     "# Using devices\n#   Rank  0 Pid 1 on a device 0 [0x00] "
                     "V100\n#   Rank  0 Pid 2 on b device 0 [0x00] V100\n",
                     &t),
                  PP_EINPUT, "t.txt:3:", "rank 0 listed after rank 0 (line 2)",
                  NULL);
  tu_expect_error(ctx,
                  rd(ctx, HDR ROW("8", "1", "1") HDR ROW("8", "1", "1"), &t),
                  PP_EINPUT, "t.txt:3:", "a second column header", NULL);
  tu_expect_error(ctx,
                  rd(ctx,
                     HDR ROW("8", "1", "1") "# Avg bus bandwidth    : 1\n"
                                            "# Avg bus bandwidth    : 1\n",
                     &t),
                  PP_EINPUT, "t.txt:4:", "second '# Avg bus bandwidth'", NULL);
  tu_expect_error(ctx,
                  rd(ctx,
                     "# Using devices\n#  Rank  0 Group  0\n#  Rank  2 Group  "
                     "0\n" HDR ROW("8", "1", "1"),
                     &t),
                  PP_EINPUT, "t.txt:1:", "names 2 ranks, the last rank 2",
                  NULL);
  /* a process's lines cut at 2048 bytes end in "...": 2 x 24 ranks */
  {
    char text[8192];
    size_t n = 0;
    int r;
    n += (size_t)sprintf(text + n, "# nThread 1 nGpus 24 minBytes 8 maxBytes "
                                   "8 step: 2(factor)\n#\n# Using devices\n");
    for (r = 0; r < 48; r++)
      if (r % 24 < 20)
        n += (size_t)sprintf(text + n,
                             "#  Rank %2d Group  0 Pid  1234 on   node%d "
                             "device %2d [0000:%02x:00] NVIDIA H100%s\n",
                             r, r / 24, r % 24, r, r % 24 == 19 ? "..." : "");
    strcpy(text + n, HDR ROW("8", "1", "1"));
    assert_int_equal(rd(ctx, text, &t), PP_OK);
    assert_int_equal(t.nranks, 48);
    pp_nccl_tests_free(ctx, &t);
    tu_expect_error(ctx, rd(ctx, strstr(text, "# Using"), &t), PP_EINPUT,
                    "t.txt:1:", "cut", "nThread", NULL);
  }
}

/* NUL bytes, huge inputs, misuse. */
static void t_robust(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_nccl_tests t;
  static const char nul[] = HDR "  8  2  float\0sum -1 1 1 1 0 1 1 1 0\n";
  char *big;
  size_t i;
  tu_expect_error(ctx, pp_nccl_tests_read(ctx, nul, sizeof nul - 1, "z", &t),
                  PP_EPARSE, "z:2:", "NUL", NULL);
  assert_int_equal(pp_nccl_tests_read(NULL, "", 0, "z", &t), PP_EINVAL);
  tu_expect_error(ctx, pp_nccl_tests_read(ctx, "", 0, "z", NULL), PP_EINVAL,
                  "NULL", NULL);
  tu_expect_error(ctx, pp_nccl_tests_read(ctx, NULL, 5, "z", &t), PP_EINVAL,
                  "NULL", NULL);
  tu_expect_error(ctx, pp_nccl_tests_load(ctx, "/nonexistent/x.txt", &t),
                  PP_EIO, "/nonexistent/x.txt", NULL);
  pp_nccl_tests_free(ctx, NULL);
  memset(&t, 0, sizeof t);
  pp_nccl_tests_free(ctx, &t);
  /* 200 cells in a row, a header of 100 */
  big = malloc(4096);
  assert_non_null(big);
  strcpy(big, HDR "  8  2");
  for (i = 0; i < 200; i++)
    strcat(big, " 1");
  strcat(big, "\n");
  tu_expect_error(ctx, rd(ctx, big, &t), PP_ELIMIT,
                  "t.txt:2:", "more than 64 cells", NULL);
  strcpy(big, "# size");
  for (i = 0; i < 100; i++)
    strcat(big, " busbw");
  tu_expect_error(ctx, rd(ctx, big, &t), PP_ELIMIT, "t.txt:1:", "more than 64",
                  NULL);
  free(big);
  /* a million blank lines after the table: one pass, not one per line */
  {
    size_t n = strlen(HDR ROW("8", "1", "1")), m = 1000000;
    char *text = malloc(n + m + 1);
    assert_non_null(text);
    memcpy(text, HDR ROW("8", "1", "1"), n);
    memset(text + n, '\n', m);
    assert_int_equal(pp_nccl_tests_read(ctx, text, n + m, "blank", &t), PP_OK);
    assert_int_equal(t.nrows, 1);
    pp_nccl_tests_free(ctx, &t);
    free(text);
  }
  /* a hundred thousand rows: the vector grows */
  {
    size_t n = 0, cap = 40u * 100000 + 512;
    char *text = malloc(cap);
    assert_non_null(text);
    n += (size_t)sprintf(text, "# size count time algbw busbw\n");
    for (i = 0; i < 100000; i++)
      n += (size_t)sprintf(text + n, "%zu 1 1 1 1\n", i);
    assert_int_equal(pp_nccl_tests_read(ctx, text, n, "big", &t), PP_OK);
    assert_int_equal(t.nrows, 100000);
    assert_true(t.rows[99999].bytes == 99999);
    pp_nccl_tests_free(ctx, &t);
    free(text);
  }
}

/* ---- fuzz and allocation failures ----------------------------------- */

/* Each mutant reads or fails with a message naming the source; a result
** has rows of finite, non-negative values. */
static void t_fuzz(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 0x9e3779b97f4a7c15u;
  size_t f;
  for (f = 0; f < sizeof layouts / sizeof layouts[0]; f++) {
    size_t len;
    char *orig = slurp(layouts[f].file, &len), *m = malloc(len + 64);
    int k;
    assert_non_null(m);
    for (k = 0; k < 400; k++) {
      size_t n = len, j;
      int edits = 1 + (int)tu_rand(&rng, 4), e;
      pp_nccl_tests t;
      static const char pool[] = "0123456789.e+-# \n\tN/A\0x";
      memcpy(m, orig, len);
      for (e = 0; e < edits; e++) {
        size_t at = tu_rand(&rng, (uint32_t)n);
        switch (tu_rand(&rng, 4)) {
        case 0: /* replace a byte */
          m[at] = pool[tu_rand(&rng, sizeof pool - 1)];
          break;
        case 1: /* delete a run */
          j = 1 + tu_rand(&rng, 16);
          if (at + j > n)
            j = n - at;
          memmove(m + at, m + at + j, n - at - j);
          n -= j;
          break;
        case 2: /* duplicate a byte */
          if (n < len + 60) {
            memmove(m + at + 1, m + at, n - at);
            n++;
          }
          break;
        default: /* cut */ n = at + 1;
        }
        if (n == 0)
          break;
      }
      if (pp_nccl_tests_read(ctx, m, n, "fz", &t) == PP_OK) {
        for (j = 0; j < (size_t)t.nrows; j++) {
          const pp_nccl_row *r = &t.rows[j];
          assert_true(isfinite(r->bytes) && r->bytes >= 0);
          assert_true(isfinite(r->time_us) && r->time_us >= 0);
          assert_true(isfinite(r->busbw_gbps) && r->busbw_gbps >= 0);
          assert_true(isnan(r->in_busbw_gbps) || r->in_busbw_gbps >= 0);
        }
        assert_true(t.nranks >= 0);
        assert_true(strlen(t.collective) < sizeof t.collective);
        pp_nccl_tests_free(ctx, &t);
      } else {
        assert_null(t.rows);
        if (strncmp(pp_ctx_errmsg(ctx), "fz", 2))
          fail_msg("%s: %s", layouts[f].file, pp_ctx_errmsg(ctx));
        pp_ctx_clear_error(ctx);
      }
    }
    free(m);
    free(orig);
  }
}

/* Every allocation failing in turn: PP_ENOMEM, nothing leaked (the
** fixture's teardown counts). */
static void t_alloc_failure(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  size_t len;
  char *text = slurp(layouts[1].file, &len);
  long k;
  for (k = 1; k < 64; k++) {
    pp_nccl_tests t;
    pp_status rc;
    tu_reset(&fx->a, k);
    rc = pp_nccl_tests_read(ctx, text, len, "a", &t);
    tu_reset(&fx->a, 0);
    if (rc == PP_OK) {
      assert_int_equal(t.nrows, 28);
      pp_nccl_tests_free(ctx, &t);
      break;
    }
    tu_expect_error(ctx, rc, PP_ENOMEM, NULL);
    assert_null(t.rows);
  }
  assert_true(k > 1 && k < 64);
  free(text);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_layouts),        TU_CTX_TEST(t_small_rows),
      TU_CTX_TEST(t_tags_crlf),      TU_CTX_TEST(t_in_place_na),
      TU_CTX_TEST(t_malformed),      TU_CTX_TEST(t_no_table),
      TU_CTX_TEST(t_long_hash_line), TU_CTX_TEST(t_truncated),
      TU_CTX_TEST(t_interleaved),    TU_CTX_TEST(t_runs_and_ranks),
      TU_CTX_TEST(t_robust),         TU_CTX_TEST(t_fuzz),
      TU_CTX_TEST(t_alloc_failure)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

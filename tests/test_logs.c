/* SPDX-License-Identifier: MIT */
/*
** Training logs read for calibration (src/format/log_read.c, issue 19):
** Megatron-LM's, DeepSpeed's and nvidia-smi's memory.used CSV, each
** well-formed, cut at every byte, with several ranks interleaved, with
** malformed figures (the message names the line and what is wrong), and
** ending in an out-of-memory traceback; the median after the warm-up and
** the peak in bytes; texts of no known format; bad bytes.  The files are
** in tests/data/logs/ (tests/data/logs/README.md says where each line
** comes from: tests/data/logs/make_logs.py prints them with the engines'
** own format strings); the malformed lines below are those lines with
** one figure spoiled.
*/
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0
#define GIB 1073741824.0

static char *slurp(const char *rel, size_t *len)
{
  char *t = tu_slurp(tu_path(rel), len);
  if (!t)
    fail_msg("cannot read %s", rel);
  return t;
}

static pp_log_summary load(pp_ctx *ctx, const char *rel)
{
  pp_log_summary s;
  if (pp_log_load(ctx, tu_path(rel), &s))
    fail_msg("%s: %s", rel, pp_ctx_errmsg(ctx));
  return s;
}

static pp_status read_str(pp_ctx *ctx, const char *text, pp_log_summary *s)
{
  return pp_log_read(ctx, text, strlen(text), "run.log", s);
}

static void expect(const pp_log_summary *s, const char *format, double ms,
                   int32_t iterations, double peak, int failed)
{
  assert_non_null(s->format);
  assert_string_equal(s->format, format);
  if (isnan(ms))
    assert_true(isnan(s->iteration_ms));
  else
    tu_near(s->iteration_ms, ms, "iteration_ms");
  assert_int_equal(s->iterations, iterations);
  if (isnan(peak))
    assert_true(isnan(s->peak_memory_bytes));
  else
    tu_near(s->peak_memory_bytes, peak, "peak_memory_bytes");
  assert_int_equal(s->failed, failed);
}

/* A malformed text: PP_EPARSE, a message naming "run.log:LINE:" and
** holding what. */
static void bad(pp_ctx *ctx, const char *text, const char *where,
                const char *what)
{
  pp_log_summary s;
  pp_status rc = read_str(ctx, text, &s);
  tu_expect_error(ctx, rc, PP_EPARSE, where, what, NULL);
  assert_null(s.format);
}

/* ---- Megatron-LM ------------------------------------------------------- */

/* training_log's lines (megatron/training/training.py @ d98e8a64, lines
** 3567-3576): iteration 1 is the warm-up, the median of 1000, 1010, 990
** and 1005 ms is 1002.5; report_memory's (common_utils.py @ d98e8a64,
** lines 320-334) largest max reserved is rank 1's 14336.00 MiB. */
static void t_megatron(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s = load(ctx, "tests/data/logs/megatron.log");
  expect(&s, "megatron", 1002.5, 5, 14336 * MIB, 0);
}

/* The same run through torchrun, every line "[rankN]: ", the ranks'
** memory reports out of order. */
static void t_megatron_ranks(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s = load(ctx, "tests/data/logs/megatron-ranks.log");
  expect(&s, "megatron", 1002.5, 5, 14336 * MIB, 0);
}

/* Died in the first iteration: the arguments banner says Megatron-LM,
** PyTorch's "CUDA out of memory." says how it ended. */
static void t_megatron_oom(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s = load(ctx, "tests/data/logs/megatron-oom.log");
  expect(&s, "megatron", NAN, 0, NAN, 1);
}

#define MG_IT(n, ms)                                                           \
  " [2025-06-02 09:30:39.876500] iteration " n "/     100 | consumed "         \
  "samples:            8 | elapsed time per iteration (ms): " ms               \
  " | learning rate: 1.500000E-06 | global batch size:     8 |\n"
#define MG_MEM(maxres)                                                         \
  "[Rank 0] (after 10 iterations) memory (MB) | allocated: 9288.00 | max "     \
  "allocated: 11288.00 | reserved: 11776.00 | max reserved: " maxres "\n"

/* Two runs in one file: both reports of iteration 1 are the warm-up; a
** run of one report keeps it. */
static void t_megatron_warmup(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s;
  assert_int_equal(
      read_str(ctx,
               MG_IT("       1", "9000.0") MG_IT("      10", "1000.0")
                   MG_IT("       1", "8000.0") MG_IT("      10", "1100.0"),
               &s),
      PP_OK);
  expect(&s, "megatron", 1050, 4, NAN, 0);
  assert_int_equal(read_str(ctx, MG_IT("       1", "9000.0"), &s), PP_OK);
  expect(&s, "megatron", 9000, 1, NAN, 0);
}

static void t_megatron_malformed(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  bad(ctx,
      "> building GPT model ...\n" MG_IT("       1", "9876.5")
          MG_IT("      10", "abc"),
      "run.log:3:",
      "'elapsed time per iteration (ms)' is followed by 'abc | learning "
      "rate: 1.5...', not a number");
  bad(ctx, MG_IT("       1", "nan"), "run.log:1:", "not a finite number");
  bad(ctx, MG_IT("       1", "1000.0x"), "run.log:1:",
      "'elapsed time per iteration (ms)' 1000.0 is followed by 'x |");
  bad(ctx, MG_IT("       1", "1.2.3"), "run.log:1:", "1.2.3: not a number");
  bad(ctx, MG_IT("       1", "1e999"), "run.log:1:", "out of range");
  bad(ctx, "\n" MG_MEM("-12.00"),
      "run.log:2:", "'max reserved' -12.00: negative");
  bad(ctx,
      MG_MEM("1234567890123456789012345678901234567890123456789012345678901234"
             "5"),
      "run.log:1:", "more than 63 characters");
  bad(ctx, MG_MEM("1e308"), "run.log:1:", "out of range");
  /* a complete report without max reserved */
  bad(ctx,
      "[Rank 0] (after 10 iterations) memory (MB) | allocated: 9288.00 | "
      "max allocated: 11288.00 | reserved: 11776.00\n",
      "run.log:1:", "a megatron memory report without 'max reserved'");
  /* the column: "run.log:1:COL:" */
  {
    pp_log_summary s;
    long line, col;
    assert_int_equal(read_str(ctx, MG_IT("       1", "?"), &s), PP_EPARSE);
    pp_ctx_errloc(ctx, NULL, &line, &col);
    assert_int_equal(line, 1);
    assert_int_equal(col, (long)(strstr(MG_IT("       1", "?"), "?") -
                                 MG_IT("       1", "?")) +
                              1);
    pp_ctx_clear_error(ctx);
  }
}

/* ---- DeepSpeed --------------------------------------------------------- */

/* The pipeline engine's "iter time (s)" (deepspeed/runtime/pipe/engine.py
** @ 38327e07, lines 401-406): step 10 is the warm-up, the median of 1.2,
** 1.25 and 1.21 s is 1210 ms; see_memory_usage (deepspeed/runtime/utils.py
** @ 38327e07, lines 782-785) Max_CA 21 GB beats CA 19.75. */
static void t_deepspeed_pipe(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s = load(ctx, "tests/data/logs/deepspeed-pipe.log");
  expect(&s, "deepspeed", 1210, 4, 21 * GIB, 0);
}

/* ZeRO on two nodes, pdsh's "worker-N: " before each line: rank 0's
** ThroughputTimer lines (deepspeed/utils/timer.py @ 38327e07, lines
** 264-274) at train_batch_size 32 (the configuration dump,
** deepspeed/runtime/config.py @ 38327e07, line 1005); global step 10 is
** the warm-up; 500, 512, 500, 520, 512, 500 ms remain.  CA 12.4 GB beats
** Max_CA, rounded down to 12. */
static void t_deepspeed_zero(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s = load(ctx, "tests/data/logs/deepspeed-zero.log");
  size_t len;
  char *t, *k;
  expect(&s, "deepspeed", 506, 7, 12.4 * GIB, 0);
  /* without the batch size the rate gives no time */
  t = slurp("tests/data/logs/deepspeed-zero.log", &len);
  k = strstr(t, "train_batch_size ...");
  assert_non_null(k);
  memcpy(k, "train_b_tch_size", 16);
  assert_int_equal(pp_log_read(ctx, t, len, "zero.log", &s), PP_OK);
  expect(&s, "deepspeed", NAN, 0, 12.4 * GIB, 0);
  free(t);
}

/* Two reports, then the message of PyTorch 1.13 to 2.4. */
static void t_deepspeed_oom(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s = load(ctx, "tests/data/logs/deepspeed-oom.log");
  expect(&s, "deepspeed", 1200, 2, 21 * GIB, 1);
  /* a failed CUDA call: "CUDA error: out of memory" (c10_cuda_check_
  ** implementation, c10/cuda/CUDAException.cpp @ d545da44 of
  ** pytorch/pytorch, lines 31-32) */
  assert_int_equal(
      read_str(ctx,
               "[2025-06-02 09:30:01,000] [INFO] [logging.py:128:log_dist] "
               "[Rank 0] DeepSpeed info: version=0.16.4, git-hash=unknown, "
               "git-branch=unknown\n"
               "[rank0]: RuntimeError: CUDA error: out of memory\n",
               &s),
      PP_OK);
  expect(&s, "deepspeed", NAN, 0, NAN, 1);
}

#define DS_MEM(ca, maxca)                                                      \
  "[2025-06-02 09:30:20,000] [INFO] [utils.py:782:see_memory_usage] MA 11.5 "  \
  "GB         Max_MA 17.25 GB         CA " ca " GB         Max_CA " maxca      \
  " GB \n"

static void t_deepspeed_malformed(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s;
  bad(ctx,
      "steps: 10 loss: 10.8000 iter time (s): 2.500 samples/sec: 12.800\n"
      "steps: 20 loss: 10.7000 iter time (s): 1.2s samples/sec: 26.667\n",
      "run.log:2:", "'iter time (s)' 1.2 is followed by 's samples/sec:");
  bad(ctx, "\n\n" DS_MEM("19.75", "nan"),
      "run.log:3:", "'Max_CA' nan: not a finite number");
  bad(ctx, DS_MEM("-1.0", "21"), "run.log:1:", "'CA' -1.0: negative");
  bad(ctx,
      "[2025-06-02 09:30:20,000] [INFO] [utils.py:782:see_memory_usage] MA "
      "11.5 GB         Max_MA 17.25 GB         CA 19.75 GB\n",
      "run.log:1:", "a deepspeed memory report without 'Max_CA'");
  bad(ctx,
      "[2025-06-02 09:30:02,000] [INFO] [config.py:1005:print]   "
      "train_batch_size ............. None\n",
      "run.log:1:", "'train_batch_size' is followed by 'None', not a number");
  bad(ctx,
      "[2025-06-02 09:30:02,000] [INFO] [config.py:1005:print]   "
      "train_batch_size ............. 2.5\n",
      "run.log:1:", "train_batch_size 2.5 is not a positive integer");
  bad(ctx,
      "  train_batch_size ............. 32\n"
      "[2025-06-02 09:30:30,000] [INFO] [timer.py:264:stop] "
      "epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=-inf, "
      "CurrSamplesPerSec=0.0, MemAllocated=6.4GB, MaxMemAllocated=9.87GB\n",
      "run.log:2:", "'CurrSamplesPerSec' is 0");
  /* RunningAvgSamplesPerSec is not read: -inf there is no error */
  assert_int_equal(
      read_str(ctx,
               "  train_batch_size ............. 32\n"
               "epoch=0/micro_step=40/global_step=10, "
               "RunningAvgSamplesPerSec=-inf, CurrSamplesPerSec=64.0, "
               "MemAllocated=6.4GB, MaxMemAllocated=9.87GB\n",
               &s),
      PP_OK);
  expect(&s, "deepspeed", 500, 1, NAN, 0);
}

/* ---- nvidia-smi --------------------------------------------------------- */

static void t_nvsmi(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s = load(ctx, "tests/data/logs/nvsmi-used.csv");
  expect(&s, "nvidia-smi", NAN, 0, 14012 * MIB, 0);
  s = load(ctx, "tests/data/logs/nvsmi-used-gpus.csv");
  expect(&s, "nvidia-smi", NAN, 0, 15012 * MIB, 0);
  s = load(ctx, "tests/data/logs/nvsmi-used-noheader.csv");
  expect(&s, "nvidia-smi", NAN, 0, 22016 * MIB, 0);
  /* nounits under a header; [N/A] skipped; CRLF; a prompt after the
  ** table ends it */
  assert_int_equal(read_str(ctx,
                            "$ nvidia-smi --query-gpu=index,memory.used "
                            "--format=csv,nounits -l 1\r\n"
                            "index, memory.used [MiB]\r\n0, 812\r\n1, [N/A]\r\n"
                            "0, 900\r\n1, 1024\r\n^C$ exit\r\n",
                            &s),
                   PP_OK);
  expect(&s, "nvidia-smi", NAN, 0, 1024 * MIB, 0);
  /* noheader with units */
  assert_int_equal(read_str(ctx, "812 MiB\n900 MiB\n", &s), PP_OK);
  expect(&s, "nvidia-smi", NAN, 0, 900 * MIB, 0);
  bad(ctx, "memory.used [MiB]\n812 MiB\n9x0 MiB\n", "run.log:3:",
      "'memory.used' 9 is followed by 'x0 MiB', not ' MiB' or its end");
  bad(ctx, "index, memory.used [MiB]\n0, -5 MiB\n",
      "run.log:2:", "'memory.used' -5: negative");
  bad(ctx, "memory.used [MiB]\n1e308 MiB\n", "run.log:2:", "out of range");
}

/* ---- cut logs ------------------------------------------------------------ */

static bool in(double x, const double *set, int n)
{
  int i;
  for (i = 0; i < n; i++)
    if (fabs(x - set[i]) <= 1e-9 * fabs(set[i]))
      return true;
  return false;
}

/* Every prefix of rel reads, or is not yet a log; what it reads is never
** more than the whole says, and its median and peak are among those the
** complete reports before the cut give: a figure cut short is never
** counted. */
static void every_cut(pp_ctx *ctx, const char *rel, const double *medians,
                      int nm, const double *peaks, int np)
{
  size_t len, n;
  char *t = slurp(rel, &len);
  pp_log_summary all, s;
  assert_int_equal(pp_log_read(ctx, t, len, rel, &all), PP_OK);
  for (n = 0; n <= len; n++) {
    char *c = malloc(n + 1);
    pp_status rc;
    assert_non_null(c);
    memcpy(c, t, n); /* its own block: a read past n is ASan's to see */
    rc = pp_log_read(ctx, c, n, rel, &s);
    free(c);
    if (rc) {
      tu_expect_error(ctx, rc, PP_EPARSE, "no training log found", NULL);
      continue;
    }
    assert_string_equal(s.format, all.format);
    assert_true(s.iterations <= all.iterations);
    assert_true(s.failed <= all.failed);
    if (!isnan(s.iteration_ms) && !in(s.iteration_ms, medians, nm))
      fail_msg("%s cut at %zu: median %.17g", rel, n, s.iteration_ms);
    if (!isnan(s.peak_memory_bytes) && !in(s.peak_memory_bytes, peaks, np))
      fail_msg("%s cut at %zu: peak %.17g", rel, n, s.peak_memory_bytes);
  }
  free(t);
}

/* The log read as far as the end of the first occurrence of mark after
** the last of after. */
static pp_log_summary cut_at(pp_ctx *ctx, const char *rel, const char *after,
                             const char *mark)
{
  size_t len;
  char *t = slurp(rel, &len), *a = t, *k;
  pp_log_summary s;
  while ((k = strstr(a + 1, after)) != NULL)
    a = k;
  k = strstr(a, mark);
  assert_non_null(k);
  assert_int_equal(pp_log_read(ctx, t, (size_t)(k - t) + strlen(mark), rel, &s),
                   PP_OK);
  free(t);
  return s;
}

static void t_cut(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  /* Megatron: the medians of the first 1 to 5 reports; every max reserved
  ** (MiB) */
  static const double mg_ms[] = {9876.5, 1000, 1005, 1000, 1002.5};
  static const double mg_mib[] = {10240, 12288, 11264, 10752,
                                  14336, 13312, 12800};
  static const double ds_ms[] = {2500, 1200, 1225, 1210};
  static const double nv_mib[] = {20480, 20500, 21000, 22016};
  double mg_peak[7], ds_peak[] = {2.75 * GIB, 3 * GIB, 19.75 * GIB, 21 * GIB},
                     nv_peak[4];
  pp_log_summary s;
  int i;
  for (i = 0; i < 7; i++)
    mg_peak[i] = mg_mib[i] * MIB;
  for (i = 0; i < 4; i++)
    nv_peak[i] = nv_mib[i] * MIB;
  every_cut(ctx, "tests/data/logs/megatron.log", mg_ms, 5, mg_peak, 7);
  every_cut(ctx, "tests/data/logs/megatron-ranks.log", mg_ms, 5, mg_peak, 7);
  every_cut(ctx, "tests/data/logs/deepspeed-pipe.log", ds_ms, 4, ds_peak, 4);
  every_cut(ctx, "tests/data/logs/nvsmi-used-noheader.csv", NULL, 0, nv_peak,
            4);
  /* ZeRO: the medians of the first 1 to 7 reports */
  {
    const double zero_ms[] = {800, 500, 506, 512};
    const double zero_peak[] = {12.4 * GIB};
    double gpus_peak[9];
    every_cut(ctx, "tests/data/logs/deepspeed-zero.log", zero_ms, 4, zero_peak,
              1);
    for (i = 0; i < 8; i++)
      gpus_peak[i] = (14000 + 100 * i) * MIB;
    gpus_peak[8] = 15012 * MIB;
    every_cut(ctx, "tests/data/logs/nvsmi-used-gpus.csv", NULL, 0, gpus_peak,
              9);
  }
  /* cut inside the last report's figure: 1005.0 read as "100" is not
  ** counted, nor is "1005.0" (it might go on) */
  s = cut_at(ctx, "tests/data/logs/megatron.log", "iteration       40/",
             "(ms): 100");
  expect(&s, "megatron", 1000, 4, 14336 * MIB, 0);
  s = cut_at(ctx, "tests/data/logs/megatron.log", "iteration       40/",
             "(ms): 1005.0");
  assert_int_equal(s.iterations, 4);
  /* past the figure: counted */
  s = cut_at(ctx, "tests/data/logs/megatron.log", "iteration       40/",
             "(ms): 1005.0 ");
  expect(&s, "megatron", 1002.5, 5, 14336 * MIB, 0);
  /* rank 1's max reserved 14336 cut to 143: the peak is rank 0's */
  s = cut_at(ctx, "tests/data/logs/megatron.log",
             "[Rank 0] (after 10 iterations)",
             "[Rank 1] (after 10 iterations) memory (MB) | allocated: 11336.00 "
             "| max allocated: 13336.00 | reserved: 13824.00 | max reserved: "
             "143");
  expect(&s, "megatron", 1000, 2, 12288 * MIB, 0);
  /* DeepSpeed: "iter time (s): 1.2" of step 40 is not counted */
  s = cut_at(ctx, "tests/data/logs/deepspeed-pipe.log", "steps: 40",
             "iter time (s): 1.2");
  expect(&s, "deepspeed", 1225, 3, 21 * GIB, 0);
}

/* ---- no known format, bad bytes ----------------------------------------- */

static void t_unknown(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_log_summary s;
  pp_status rc;
  static const char nul[] = "elapsed time per iteration (ms): 12\0 |\n";
  rc = read_str(ctx, "Epoch 1/10\nloss: 2.3, accuracy: 0.41\n", &s);
  tu_expect_error(ctx, rc, PP_EPARSE, "run.log: no training log found",
                  "Megatron-LM's", "DeepSpeed's", "nvidia-smi", NULL);
  assert_null(s.format);
  rc = pp_log_read(ctx, "", 0, NULL, &s);
  tu_expect_error(ctx, rc, PP_EPARSE, "<log>: no training log found", NULL);
  rc = pp_log_read(ctx, NULL, 0, "empty.log", &s);
  tu_expect_error(ctx, rc, PP_EPARSE, "no training log found", NULL);
  /* an out-of-memory error alone says no engine */
  rc = read_str(ctx,
                "torch.OutOfMemoryError: CUDA out of memory. Tried to "
                "allocate 2.00 GiB.\n",
                &s);
  tu_expect_error(ctx, rc, PP_EPARSE, "CUDA out-of-memory error", NULL);
  /* a NUL byte after a figure */
  rc = pp_log_read(ctx, nul, sizeof nul - 1, "nul.log", &s);
  tu_expect_error(ctx, rc, PP_EPARSE, "nul.log:1:", "is followed by '? |'",
                  NULL);
  /* bytes that are no text at all */
  {
    static const char bin[] = "\x7f"
                              "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0";
    rc = pp_log_read(ctx, bin, sizeof bin - 1, "a.out", &s);
    tu_expect_error(ctx, rc, PP_EPARSE, "a.out: no training log found", NULL);
  }
  /* a file that is not there; NULL arguments */
  rc = pp_log_load(ctx, tu_path("tests/data/logs/absent.log"), &s);
  tu_expect_error(ctx, rc, PP_EIO, "absent.log", NULL);
  assert_int_equal(pp_log_read(ctx, "x", 1, "x", NULL), PP_EINVAL);
  pp_ctx_clear_error(ctx);
  assert_int_equal(pp_log_load(ctx, NULL, &s), PP_EINVAL);
  pp_ctx_clear_error(ctx);
  assert_int_equal(pp_log_read(NULL, "x", 1, "x", &s), PP_EINVAL);
}

/* Random splices of the engines' lines and random bytes: a status, never
** a crash or a leak (the fixture counts blocks). */
static void t_fuzz(void **state)
{
  static const char *const parts[] = {
      "elapsed time per iteration (ms): ",
      " iteration       10/     100 |",
      " memory (MB) | allocated: ",
      "| max reserved: ",
      "iter time (s): ",
      "steps: ",
      "CurrSamplesPerSec=",
      "global_step=",
      "Max_MA ",
      " CA ",
      "Max_CA ",
      "  train_batch_size ....... ",
      "memory.used [MiB]",
      ", ",
      " MiB",
      " GB",
      " |",
      " samples/sec",
      "\n",
      "\r\n",
      "1234.5",
      "-7",
      "nan",
      "inf",
      "1e308",
      "0",
      "00000000000000000000000000000000000000000000000000000000000000001",
      "CUDA out of memory.",
      "[rank3]: ",
      "------------------------ arguments ------------------------",
  };
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  int round;
  for (round = 0; round < 3000; round++) {
    char buf[512];
    size_t n = 0;
    pp_log_summary s;
    pp_status rc;
    while (n < 400) {
      uint32_t k =
          tu_rand(&seed, (uint32_t)(sizeof parts / sizeof parts[0]) + 4);
      if (k < (sizeof parts / sizeof parts[0])) {
        size_t m = strlen(parts[k]);
        memcpy(buf + n, parts[k], m);
        n += m;
      } else
        buf[n++] = (char)tu_rand(&seed, 256);
      if (tu_rand(&seed, 40) == 0)
        break;
    }
    rc = pp_log_read(ctx, buf, n, "fuzz", &s);
    if (rc) {
      assert_int_equal(rc, PP_EPARSE);
      assert_null(s.format);
      pp_ctx_clear_error(ctx);
    } else {
      assert_non_null(s.format);
      assert_true(s.iterations >= 0);
      assert_true(isnan(s.iteration_ms) || s.iteration_ms >= 0);
      assert_true(isnan(s.peak_memory_bytes) ||
                  (s.peak_memory_bytes >= 0 && isfinite(s.peak_memory_bytes)));
    }
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_megatron),
      TU_CTX_TEST(t_megatron_ranks),
      TU_CTX_TEST(t_megatron_oom),
      TU_CTX_TEST(t_megatron_warmup),
      TU_CTX_TEST(t_megatron_malformed),
      TU_CTX_TEST(t_deepspeed_pipe),
      TU_CTX_TEST(t_deepspeed_zero),
      TU_CTX_TEST(t_deepspeed_oom),
      TU_CTX_TEST(t_deepspeed_malformed),
      TU_CTX_TEST(t_nvsmi),
      TU_CTX_TEST(t_cut),
      TU_CTX_TEST(t_unknown),
      TU_CTX_TEST(t_fuzz),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

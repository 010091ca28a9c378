/* SPDX-License-Identifier: MIT */
/*
** The base layer's shared pieces: the binary heap (heap.c) against a
** sort on random records and on the fixed order of equal ones, the
** quoter's two styles (strbuf.c), and the fan-out (fanout.c): its own
** context per job, the caller's thread for one job, the first error in job
** order whatever finishes first, and an
** error the caller already holds kept.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "base/heap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct ppi_heap_el rec(double key, uint64_t tie, int64_t id)
{
  struct ppi_heap_el e;
  memset(&e, 0, sizeof e);
  e.key = key;
  e.tie = tie;
  e.id = id;
  return e;
}

static int cmp_rec(const void *x, const void *y)
{
  const struct ppi_heap_el *a = x, *b = y;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return (a->tie > b->tie) - (a->tie < b->tie);
}

/* Random records (few distinct keys, distinct ties), pushes and pops
** interleaved past the first growth: every pop is the least left. */
static void t_heap_sorts(void **state)
{
  enum { N = 5000 };
  pp_ctx *ctx;
  struct ppi_heap h;
  struct ppi_heap_el *left = malloc(N * sizeof *left);
  size_t nleft = 0, i;
  uint64_t seed = 12345;
  (void)state;
  assert_non_null(left);
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  ppi_heap_init(&h);
  for (i = 0; i < N; i++) {
    left[nleft] = rec(tu_rand(&seed, 50),
                      tu_rand(&seed, 1000) * (uint64_t)N + i, (int64_t)i);
    assert_int_equal(ppi_heap_push(ctx, &h, left[nleft++]), PP_OK);
    if (tu_rand(&seed, 3) == 0) { /* pop now and then */
      struct ppi_heap_el top = ppi_heap_pop(&h);
      size_t k, least = 0;
      for (k = 1; k < nleft; k++)
        if (cmp_rec(&left[k], &left[least]) < 0)
          least = k;
      assert_int_equal(top.id, left[least].id);
      left[least] = left[--nleft];
    }
  }
  qsort(left, nleft, sizeof *left, cmp_rec);
  for (i = 0; i < nleft; i++)
    assert_int_equal(ppi_heap_pop(&h).id, left[i].id);
  assert_int_equal(h.n, 0);
  ppi_heap_free(ctx, &h);
  pp_ctx_destroy(ctx);
  free(left);
}

/* Records equal in (key, tie) leave in the order the sift rules fix: a
** push never passes an equal parent, a pop moves the last record to the
** root and it stays there.  So the first pushed, then the rest from the
** last: the order the simulator and the clustering always had. */
static void t_heap_equal_records(void **state)
{
  static const int64_t want[] = {0, 6, 5, 4, 3, 2, 1};
  pp_ctx *ctx;
  struct ppi_heap h;
  int64_t i;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  ppi_heap_init(&h);
  for (i = 0; i < 7; i++)
    assert_int_equal(ppi_heap_push(ctx, &h, rec(1.5, 7, i)), PP_OK);
  for (i = 0; i < 7; i++)
    assert_int_equal(ppi_heap_pop(&h).id, want[i]);
  ppi_heap_free(ctx, &h);
  pp_ctx_destroy(ctx);
}

/* ---- the quoter -------------------------------------------------------- */

static void sink(void *ud, const char *s, size_t n)
{
  strncat(ud, s, n);
}

/* The two styles' bytes, as the JSON writers and the exporters have
** always written them. */
static void t_quote_styles(void **state)
{
  static const char in[] = "a\"b\\c\n\r\t\x01\x7f \xc3\xa9 \xff";
  char out[128];
  (void)state;
  out[0] = 0;
  ppi_quote(in, PPI_QUOTE_JSON, sink, out);
  assert_string_equal(out,
                      "\"a\\\"b\\\\c\\n\\r\\t\\u0001\x7f \xc3\xa9 \\ufffd\"");
  out[0] = 0;
  ppi_quote(in, PPI_QUOTE_PORTABLE, sink, out);
  assert_string_equal(out, "\"a\\\"b\\\\c\\u000a\\u000d\\u0009\\u0001\\u007f "
                           "\xc3\xa9 \xff\"");
}

/* ---- fan-out ------------------------------------------------------------ */

struct tjob {
  pp_ctx ctx;
  int32_t index;
  int fail_ms; /* > 0: fail after this many milliseconds */
  bool saw_clean, saw_own;
  pthread_t thread;
};

static pp_status tjob_run(pp_ctx *ctx, void *arg)
{
  struct tjob *j = arg;
  j->saw_own = ctx == &j->ctx;
  j->saw_clean = pp_ctx_errcode(ctx) == PP_OK;
  j->thread = pthread_self();
  if (j->fail_ms > 0) {
    struct timespec ts = {0, j->fail_ms * 1000000L};
    nanosleep(&ts, NULL);
    return ppi_fail(ctx, PP_EINPUT, "job %d failed", (int)j->index);
  }
  return PP_OK;
}

static pp_status fan(pp_ctx *ctx, struct tjob *jobs, int32_t n)
{
  return ppi_fanout(ctx, "test", tjob_run, jobs, sizeof *jobs,
                    offsetof(struct tjob, ctx), n);
}

/* n jobs that succeed, numbered, and a fresh context. */
static pp_ctx *new_jobs(struct tjob *jobs, int32_t n)
{
  pp_ctx *ctx;
  int32_t i;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  memset(jobs, 0, (size_t)n * sizeof *jobs);
  for (i = 0; i < n; i++)
    jobs[i].index = i;
  return ctx;
}

static void t_fanout_contexts(void **state)
{
  struct tjob jobs[8];
  pp_ctx *ctx = new_jobs(jobs, 8);
  int32_t i;
  (void)state;
  /* the caller's error is not the jobs' */
  ppi_fail(ctx, PP_EIO, "earlier");
  assert_int_equal(fan(ctx, jobs, 8), PP_OK);
  for (i = 0; i < 8; i++) {
    assert_true(jobs[i].saw_own);
    assert_true(jobs[i].saw_clean);
    assert_false(pthread_equal(jobs[i].thread, pthread_self()));
  }
  assert_string_equal(pp_ctx_errmsg(ctx), "earlier");
  /* one job: the caller's thread */
  assert_int_equal(fan(ctx, jobs, 1), PP_OK);
  assert_true(pthread_equal(jobs[0].thread, pthread_self()));
  pp_ctx_destroy(ctx);
}

/* Job 1 fails late, job 3 early: job 1's error wins, every run. */
static void t_fanout_first_error(void **state)
{
  struct tjob jobs[4];
  pp_ctx *ctx = new_jobs(jobs, 4);
  (void)state;
  jobs[1].fail_ms = 30;
  jobs[3].fail_ms = 1;
  assert_int_equal(fan(ctx, jobs, 4), PP_EINPUT);
  assert_string_equal(pp_ctx_errmsg(ctx), "job 1 failed");
  /* a caller that already holds an error keeps it, and gets the status */
  pp_ctx_clear_error(ctx);
  ppi_fail(ctx, PP_EIO, "earlier");
  assert_int_equal(fan(ctx, jobs, 4), PP_EINPUT);
  assert_string_equal(pp_ctx_errmsg(ctx), "earlier");
  pp_ctx_destroy(ctx);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_heap_sorts),
      cmocka_unit_test(t_heap_equal_records),
      cmocka_unit_test(t_quote_styles),
      cmocka_unit_test(t_fanout_contexts),
      cmocka_unit_test(t_fanout_first_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

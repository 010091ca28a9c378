/* SPDX-License-Identifier: MIT */
/*
** The one fan-out (ppi_fanout): the planner's rounds of points
** (plan_search.c), the exact mapping search's targets (map_search.c) and
** part and solve's parts (map_parts.c) each run n jobs side by side.
**
** Objective: run n jobs on n threads (in the caller's thread when n is
** 1), join them all, and report as if one thread had run them in order.
**
** Invariant: every job works on its own copy of the caller's context,
** error cleared, so no job sees another's first error and the caller's
** context is not written while they run (the allocator hook is shared:
** with n > 1 it is called from several threads, as the `threads' fields
** of parplan.h say).  After the join the first failed job in job order,
** not in time, gives the result, and its error (only that: the rest of
** the caller's context stays its own) goes into the caller's context
** unless that already holds one:
** the same inputs give the same error on every run.  A thread that
** cannot start fails the whole fan-out with PP_EINTERNAL, after the
** started ones are joined; their results are dropped.
**
** Complexity: n thread starts and joins, O(n) besides.
**
** Why this design: each job's context copy lives in the caller's job
** record (at ctx_off), not here, because the jobs' code reaches it there
** (a planner worker's functions take &w->ctx); this file keeps only the
** thread handles and statuses, on its stack, so a fan-out allocates
** nothing and cannot fail for memory.  A pool of threads kept across
** calls would save the starts, but a round runs for milliseconds to
** seconds and a start costs microseconds.
*/
#include "base/pp_int.h"

#include <pthread.h>
#include <string.h>

struct slot {
  ppi_job_fn fn;
  void *job;
  pp_ctx *ctx; /* the job's copy */
  pp_status rc;
  pthread_t th;
};

static void *run_slot(void *arg)
{
  struct slot *s = arg;
  s->rc = s->fn(s->ctx, s->job);
  return NULL;
}

pp_status ppi_fanout(pp_ctx *ctx, const char *who, ppi_job_fn fn, void *jobs,
                     size_t stride, size_t ctx_off, int32_t n)
{
  struct slot sl[PPI_MAX_THREADS];
  int32_t i, started = 0;
  if (n > PPI_MAX_THREADS)
    return ppi_fail(ctx, PP_EINTERNAL, "%s: %d jobs for at most %d threads",
                    who, (int)n, PPI_MAX_THREADS);
  for (i = 0; i < n; i++) {
    char *job = (char *)jobs + (size_t)i * stride;
    sl[i].fn = fn;
    sl[i].job = job;
    sl[i].ctx = (pp_ctx *)(void *)(job + ctx_off);
    memcpy(sl[i].ctx, ctx, sizeof *ctx);
    pp_ctx_clear_error(sl[i].ctx);
    sl[i].rc = PP_OK;
  }
  if (n == 1) {
    run_slot(&sl[0]);
    started = 1;
  } else {
    while (started < n &&
           pthread_create(&sl[started].th, NULL, run_slot, &sl[started]) == 0)
      started++;
    for (i = 0; i < started; i++)
      pthread_join(sl[i].th, NULL);
  }
  if (started < n)
    return ppi_fail(ctx, PP_EINTERNAL, "%s: could not start a thread", who);
  for (i = 0; i < n; i++)
    if (sl[i].rc) {
      if (ctx->err == PP_OK)
        ppi_ctx_copy_error(ctx, sl[i].ctx);
      return sl[i].rc;
    }
  return PP_OK;
}

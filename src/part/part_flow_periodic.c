/* SPDX-License-Identifier: MIT */
/*
** The periodic flow: MadPipe ([MadPipe], 4) and PipeDream + 1F1B* (5.1),
** both in part_madpipe.c, put N stages on P identical processors with a
** periodic schedule and its period; this flow turns their allocation
** into the partition, prices memory per processor (MadPipe's special
** processor holds several stages) and, when it fits, has the simulator
** confirm period and memory (part_verify.c).  With madpipe_phase1, the
** allocation of phase 1 alone: not verified, fits as phase 1 judged it.
**
** Objective: the period of the schedule (objective_ms = period_ms).
** Invariant: "nothing fits" is still a result: PipeDream's partition
** with one activation in flight per stage, the least any schedule keeps,
** names the stage that overflows, with fits = 0.  The result is never
** exact: MadPipe is a heuristic ([MadPipe]).
** Complexity: the kernel's (part_madpipe.c), plus O(N) here and one
** simulation when the result fits.
** Source: docs/PARTITION.md, "MadPipe".
*/
#include "part/partition.h"

#include <string.h>

pp_status ppi_part_flow_periodic(const struct ppi_part_job *j,
                                 ppi_periodic_kernel kernel)
{
  pp_ctx *ctx = j->ctx;
  struct pp_partition *pt = j->pt;
  const struct ppi_chain *c = j->c;
  const pp_part_params *p = j->p;
  struct ppi_arena *tmp = j->tmp;
  struct ppi_madpipe r;
  int32_t P = p->stages, s;
  double t0 = ppi_now_s(), *load;
  pp_status rc;

  rc = kernel(j, &r);
  pt->sum.seconds = ppi_now_s() - t0;
  if (rc == PP_EINPUT) {
    /* nothing fits: PipeDream's partition with one activation each, the
    ** least any schedule keeps, names the stage that overflows */
    rc = ppi_part_pipedream_star(ctx, tmp, c, P, &r);
    if (rc == PP_OK)
      for (s = 0; s < r.N; s++)
        r.inflight[s] = 1;
    r.fits = 0;
  }
  if (rc)
    return rc;
  if ((rc = ppi_partition_fill_chain(ctx, pt, c, j->m, j->v, r.first, r.N,
                                     r.proc, r.special, r.inflight)))
    return rc;
  pt->sum.nstage = r.N;
  pt->sum.period_ms = r.period;
  if (r.sig && r.fits) {
    if (!(pt->sig = ppi_arena_alloc(&pt->arena, ctx, 4 * (size_t)r.N,
                                    sizeof *pt->sig)))
      return PP_ENOMEM;
    memcpy(pt->sig, r.sig, 4 * (size_t)r.N * sizeof *pt->sig);
  }
  pt->sum.objective_ms = r.period;
  pt->sum.work = r.labels;
  pt->sum.exact = 0; /* MadPipe is a heuristic ([MadPipe]) */
  pt->sum.timed_out = r.cut;
  pt->sum.interrupted = r.cut && p->stop && *p->stop;
  for (s = 0; s < r.N; s++)
    pt->st[s].time_ms = pt->st[s].compute_ms;
  /* memory per processor: the special one holds several stages */
  if (!(load = ppi_arena_alloc(tmp, ctx, (size_t)P, sizeof *load)))
    return PP_ENOMEM;
  pt->sum.fits = r.fits;
  for (s = 0; s < r.N; s++)
    load[r.proc[s]] +=
        pt->st[s].memory_bytes - (load[r.proc[s]] > 0 ? c->reserve : 0);
  {
    double worst = -1;
    for (s = 0; s < r.N; s++) {
      double x = load[r.proc[s]] / c->mem[0];
      if (x > 1)
        pt->sum.fits = 0;
      if (x > worst) {
        worst = x;
        pt->sum.worst_stage = s;
      }
    }
  }
  pt->sum.lower_bound_ms = ppi_ch_lower_bound(c, PP_OBJ_MADPIPE);
  if (p->madpipe_phase1) { /* phase 1's allocation, as phase 1 judged it */
    pt->sum.fits = r.fits;
    return PP_OK;
  }
  if (pt->sum.fits)
    return ppi_part_verify(ctx, pt, j->m, &r, p, c->mem[0]);
  return PP_OK;
}

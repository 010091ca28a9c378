/* SPDX-License-Identifier: MIT */
/*
** Pipeline schedules: GPipe, 1F1B and MadPipe's 1F1B* ([MadPipe] 4.1).
**
** Objective: for every stage, the number of micro-batches whose
** activations it keeps (its in-flight count n_s) and the order in which
** each of its replicas runs forwards and backwards.
**
**   GPipe:  n_s = gas_s; F_0 .. F_{gas-1}, then B_{gas-1} .. B_0.
**   1F1B:   n_s = min(S - s, gas_s); n_s forwards, then B_i and F_{n+i}
**           alternate, then the remaining backwards.
**   1F1B*:  resources in chain order (stage 0, link 0|1, stage 1, ...,
**           stage S-1: P stages make 2P - 1 resources, the paper's
**           transformation of communications into layers), each with its
**           load per micro-batch; groups are built from the last resource
**           while the group's load fits in the period T; a stage of group
**           g keeps g activations (Proposition 1: no periodic pattern of
**           period T keeps fewer), n_s = min(g, gas_s), and the order is
**           1F1B's with that count.
**
** Invariant: n_s is non-increasing along the stages for 1F1B and 1F1B*
** (groups are numbered from the last stage), which is what makes the
** orders deadlock-free on a chain: stage s+1 never waits for a forward
** that stage s runs only after a backward stage s+1 has not produced.
** When replica counts differ (PipeDream), counts are raised until the
** orders provably cannot block (ppi_sched_feedable gives the proof).  A device
** shared by several stages cannot block either, since a replica that
** waits does not hold its devices.
**
** The load of a stage is its slowest replica's compute per micro-batch
** divided by its replica count (replicas share the stage's micro-batches);
** a link's is the forward activations plus the backward gradients across
** the cut between consecutive stages, the slowest replica pair, divided
** by the larger replica count.  T is the plan's period_ms, or the largest
** load (the period of the bottleneck) when it has none.
**
** Complexity: O(S) for GPipe's and 1F1B's counts, O(S x stage edges)
** for the feedability pass (each stage scans the edge list); O(gas) per
** order.
**
** The kernels here see plain arrays only; cost_model.c (ppi_cost_plan_
** schedule) computes the loads of a priced plan and calls them.
*/
#include "cost/cost.h"

#include <math.h>
#include <string.h>

void ppi_sched_groups(const double *load, int32_t n, double T, int32_t *group)
{
  int32_t i, g = 1;
  double sum = 0, tol = T * PPI_REL_ROUNDING;
  for (i = n - 1; i >= 0; i--) {
    if (sum + load[i] <= T + tol || sum == 0) {
      sum += load[i];
    } else {
      g++;
      sum = load[i];
    }
    group[i] = g;
  }
}

void ppi_sched_counts(pp_schedule sc, int32_t S, const int64_t *gas,
                      int32_t *inflight)
{
  int32_t s;
  for (s = 0; s < S; s++) {
    int64_t c = sc == PP_SCHED_GPIPE ? gas[s] : S - s;
    inflight[s] = (int32_t)(c < gas[s] ? c : gas[s]);
  }
}

/* Replica counts that differ per stage: raise in-flight counts until the
** orders provably cannot block.
**
** Give every task a key: F_s(m) the key m + phi_s, B_s(m) the key
** m + phi_s + delta_s, for global micro-batch m.  Every task waits only
** for tasks of smaller key (so nothing waits forever) when:
**   - along a stage edge a -> b, F_b(m) waits for F_a(m) and B_a(m) for
**     B_b(m): phi_a < phi_b (stages in plan order, phi_s = s x eps) and
**     delta_a > delta_b;
**   - a replica of s runs B_s(m) after its forwards up to m + (n_s-1) R_s
**     and F_s(m) after its B_s(m - n_s R_s): (n_s - 1) R_s < delta_s, and
**     delta_s < n_s R_s unless n_s = gas_s (then every forward comes
**     before every backward and there is no upper limit).
** From the last stage back, delta_s is the least value above its lower
** limit and above every successor's delta, kept exactly as x + k eps
** (x an integer, eps infinitesimal, compared lexicographically); when it
** reaches n_s R_s, n_s grows to floor(x / R_s) + 1, capped at gas_s.
** With equal replica counts and n_a >= n_b on every edge (GPipe, 1F1B,
** 1F1B*) nothing changes. */
struct dkey {
  int64_t x, k;
};

static struct dkey dmax(struct dkey a, struct dkey b)
{
  return a.x > b.x || (a.x == b.x && a.k >= b.k) ? a : b;
}

pp_status ppi_sched_feedable(pp_ctx *ctx, int32_t S, const int32_t *nrep,
                             const int64_t *gas, int32_t ne,
                             const int32_t *from, const int32_t *to,
                             int32_t *inflight)
{
  int32_t s, i;
  struct dkey *delta = ppi_calloc(ctx, (size_t)S, sizeof *delta);
  if (!delta)
    return PP_ENOMEM;
  for (s = S - 1; s >= 0; s--) {
    int64_t R = nrep[s], w = inflight[s];
    struct dkey d = {(w - 1) * R, 1};
    for (i = 0; i < ne; i++)
      if (from[i] == s) {
        struct dkey b = delta[to[i]];
        b.k++;
        d = dmax(d, b);
      }
    if (w < gas[s] && d.x >= w * R) {
      w = d.x / R + 1;
      if (w > gas[s])
        w = gas[s];
      inflight[s] = (int32_t)w;
    }
    delta[s] = d;
  }
  ppi_free(ctx, delta, (size_t)S * sizeof *delta);
  return PP_OK;
}

void ppi_sched_order(pp_schedule sc, int64_t gas, int32_t inflight,
                     pp_sched_op *buf, int64_t cap)
{
  int64_t i, n = 0, w = inflight;
#define PUT(k, mb)                                                             \
  do {                                                                         \
    if (n < cap) {                                                             \
      buf[n].kind = (k);                                                       \
      buf[n].micro_batch = (int32_t)(mb);                                      \
    }                                                                          \
    n++;                                                                       \
  } while (0)
  if (sc == PP_SCHED_GPIPE) {
    for (i = 0; i < gas; i++)
      PUT(PP_TASK_FWD, i);
    for (i = gas - 1; i >= 0; i--)
      PUT(PP_TASK_BWD, i);
    return;
  }
  if (w < 1)
    w = 1;
  if (w > gas)
    w = gas;
  for (i = 0; i < w; i++)
    PUT(PP_TASK_FWD, i);
  for (i = 0; i < gas; i++) {
    PUT(PP_TASK_BWD, i);
    if (w + i < gas)
      PUT(PP_TASK_FWD, w + i);
  }
#undef PUT
}

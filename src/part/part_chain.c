/* SPDX-License-Identifier: MIT */
/*
** The layer chain the partitioners work on (part.h), built from a model
** (a chain, or the chain view of a DAG: pp_model_chain_view), the
** positions the stages run on and the memory model of docs/DESIGN.md ("Units
** and the cost model"); and the
** objective values of a partition and the lower bound of any, priced
** from the same arrays.
**
** Times come from pp_model_op_time at each position's tensor-parallel
** degree (the parameters' tp, or stage_tp) and the partition's
** micro-batch size, once per (device type, degree) among the positions
** (a "profile"); sizes from pp_model_op_sizes at the degree; the bytes
** after a layer from the chain edge to the next layer, scaled with the
** micro-batch size, per rank of the sending position.
**
** Complexity: O(L x profiles) lookups, O(L x profiles + S) memory.
*/
#include "part/part.h"

#include <math.h>
#include <string.h>

pp_status ppi_chain_build(pp_ctx *ctx, struct ppi_arena *ar, const pp_model *v,
                          const pp_part_params *p, int32_t npos, int32_t mbs,
                          struct ppi_chain *c, unsigned *est)
{
  int32_t L = pp_model_nop(v), s, l, q, *types, *tps;
  double scale = (double)mbs / pp_model_micro_batch(v);
  const pp_cluster *cl = p->cluster;
  pp_status rc;

  memset(c, 0, sizeof *c);
  c->L = L;
  c->S = npos;
  c->R = p->replicas;
  c->gas = p->gas;
  c->fac = pp_optimizer_factor(p->optimizer);
  c->reserve = (double)p->reserve_bytes;
  c->allreduce = p->allreduce;
  c->recompute = p->recompute;
  if (!PPI_ARENA_NEW(ar, ctx, c->prof, npos) ||
      !PPI_ARENA_NEW(ar, ctx, types, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->bw, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->mem, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->nf, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->ar_a, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->ar_b, npos) ||
      !PPI_ARENA_NEW(ar, ctx, tps, npos))
    return PP_ENOMEM;
  /* profiles: one per distinct (device type, tp degree) among the
  ** positions */
  for (s = 0; s < npos; s++) {
    int32_t t = p->devices ? pp_cluster_device_type(cl, p->devices[s])
                : p->flat_device >= 0
                    ? pp_cluster_device_type(cl, p->flat_device)
                    : -1;
    int32_t tp = p->stage_tp ? p->stage_tp[s] : p->tp;
    for (q = 0; q < c->nprof && (types[q] != t || tps[q] != tp); q++)
      ;
    if (q == c->nprof) {
      types[c->nprof] = t;
      tps[c->nprof++] = tp;
    }
    c->prof[s] = q;
  }
  if (!PPI_ARENA_NEW(ar, ctx, c->wp, (size_t)c->nprof * (L + 1)) ||
      !PPI_ARENA_NEW(ar, ctx, c->fp, (size_t)c->nprof * (L + 1)) ||
      !PPI_ARENA_NEW(ar, ctx, c->pp, (size_t)c->nprof * (L + 1)) ||
      !PPI_ARENA_NEW(ar, ctx, c->sp, (size_t)c->nprof * (L + 1)) ||
      !PPI_ARENA_NEW(ar, ctx, c->cut, (size_t)c->nprof * L))
    return PP_ENOMEM;
  for (q = 0; q < c->nprof; q++) {
    pp_type_key key = {.name = NULL, .speed = 1};
    double *w = c->wp + (size_t)q * (L + 1), *f = c->fp + (size_t)q * (L + 1);
    double *pp = c->pp + (size_t)q * (L + 1), *sp = c->sp + (size_t)q * (L + 1);
    double *cut = c->cut + (size_t)q * L;
    if (types[q] >= 0 && !p->devices) {
      key = pp_model_type_key(v, cl, p->flat_device);
    } else if (types[q] >= 0) {
      for (s = 0; pp_cluster_device_type(cl, p->devices[s]) != types[q]; s++)
        ;
      key = pp_model_type_key(v, cl, p->devices[s]);
    }
    for (l = 0; l < L; l++) {
      pp_op_time t;
      if ((rc = pp_model_op_time(v, l, &key, tps[q], mbs, &t)))
        return rc;
      *est |= t.est;
      w[l + 1] = w[l] + t.fwd_ms + t.bwd_ms + (p->recompute ? t.fwd_ms : 0);
      f[l + 1] = f[l] + t.fwd_ms;
    }
    for (l = 0; l < L; l++) {
      pp_op_sizes z;
      const int32_t *oe;
      int32_t n, k;
      if ((rc = pp_model_op_sizes(v, l, tps[q], mbs, &z)))
        return rc;
      *est |= z.est;
      pp[l + 1] = pp[l] + z.param_bytes;
      sp[l + 1] = sp[l] + z.saved_bytes;
      pp_model_op_edges(v, l, 0, &oe, &n);
      for (k = 0; k < n; k++) {
        int32_t a, b;
        int64_t bytes;
        pp_model_edge(v, oe[k], &a, &b, &bytes);
        if (b == l + 1)
          cut[l] = (double)bytes * scale / tps[q]; /* per rank */
      }
    }
  }
  c->lat_ms =
      (cl && p->devices ? pp_cluster_latency(cl) : p->latency_us) / 1000;
  for (s = 0; s < npos; s++) {
    double lim = p->memory_bytes > 0 ? p->memory_bytes : INFINITY;
    int64_t R = p->replicas;
    double arbw = p->allreduce_gbps > 0 ? p->allreduce_gbps : p->bandwidth_gbps;
    if (p->devices) {
      double cap = (double)pp_cluster_type_memory(
          cl, pp_cluster_device_type(cl, p->devices[s]));
      lim = cap < lim ? cap : lim;
      c->bw[s] = s + 1 < npos ? pp_cluster_bandwidth(cl, p->devices[s],
                                                     p->devices[s + 1])
                              : p->bandwidth_gbps;
      if (!(c->bw[s] > 0))
        c->bw[s] = INFINITY; /* the same device twice: no transfer */
    } else {
      c->bw[s] = p->bandwidth_gbps;
      if (p->flat_device >= 0) {
        double cap = (double)pp_cluster_type_memory(
            cl, pp_cluster_device_type(cl, p->flat_device));
        lim = cap < lim ? cap : lim;
      }
    }
    c->mem[s] = lim;
    if (p->schedule == PP_SCHED_GPIPE)
      c->nf[s] = (double)p->gas;
    else
      c->nf[s] = (double)(npos - s < p->gas ? npos - s : p->gas);
    c->ar_a[s] = R > 1 ? 2.0 * (R - 1) / (R * arbw * 1e6) : 0;
    c->ar_b[s] = R > 1 ? 2.0 * (R - 1) * c->lat_ms : 0;
  }
  return PP_OK;
}

double ppi_ch_minmax_of(const struct ppi_chain *c, const int32_t *first)
{
  double worst = 0;
  int32_t s;
  for (s = 0; s < c->S; s++) {
    double t = ppi_ch_minmax(c, s, first[s], first[s + 1] - 1);
    if (t > worst)
      worst = t;
  }
  return worst;
}

double ppi_ch_amp_of(const struct ppi_chain *c, const int32_t *first)
{
  double m = 0, sig = 0, r = 0;
  int32_t s;
  for (s = 0; s < c->S; s++) {
    int32_t i = first[s], j = first[s + 1] - 1;
    double t = ppi_ch_work(c, s, i, j), a = ppi_ch_ar(c, s, i, j);
    m = t > m ? t : m;
    r = a > r ? a : r;
    sig += t + (s + 1 < c->S ? ppi_ch_comm(c, s, j) : 0);
  }
  return (double)(c->gas - 1) * m + sig + r;
}

double ppi_ch_lower_bound(const struct ppi_chain *c, pp_part_objective o)
{
  double tot = 0, big = 0;
  int32_t l, q;
  for (l = 0; l < c->L; l++) {
    double w = INFINITY;
    for (q = 0; q < c->nprof; q++) {
      const double *wp = c->wp + (size_t)q * (c->L + 1);
      if (wp[l + 1] - wp[l] < w)
        w = wp[l + 1] - wp[l];
    }
    tot += w;
    big = w > big ? w : big;
  }
  {
    double mx = tot / c->S > big ? tot / c->S : big;
    if (o == PP_OBJ_AMP)
      return (double)(c->gas - 1) * mx + tot;
    return mx / (o == PP_OBJ_MINMAX ? c->R : 1);
  }
}

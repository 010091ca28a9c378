/* SPDX-License-Identifier: MIT */
/*
** AMP's cost model ([AMP] Eq. 4-5, as its public code computes it:
** data/amp/COST_MODEL.md, section 3), for `--cost-model amp`.  It exists
** to pin our reading of AMP down: a plan made from a row of
** data/amp/amp_cached_trials.csv evaluates to that row's pred_s.
**
**   e_l    = 3 mbs fwd_l      fwd_l: the per-type forward time at mbs 1
**                             and tp = mp, blended by the cluster's mix
**                             of device types (0.75 V100 + 0.25 T4 on
**                             the mixed cluster)
**   t_i    = sum of e_l over stage i; entries of kind "other" (31 of
**            TransGAN's 56) are not AMP work layers and count 0
**   c_j    = mean over replicas d of vol_l / min_k bw(stage j, d, k ->
**            stage j+1, d, k), l the last entry of stage j; vol in 32-bit
**            elements: the entry's output (S H, or S V / mp for embed2v),
**            or gf_dim x bottom_width^2 for every TransGAN boundary
**   T_pipe = (gas - 1) max_i t_i + sum_j c_j + sum_i t_i
**   T_dp   = max over stages i and tp ranks m of 2 (dp - 1) / dp x P_i /
**            bw(replica dp-1 -> replica 0): the ring's wrap-around link
**            only (AMP's indentation bug); P_i = 12 H^2 / mp per
**            transformer layer, the stored 12 dim^2 of a TransGAN block,
**            and H V / mp once if the stage holds either embedding end
**   T      = T_pipe + T_dp
**
** Bandwidth: AMP's Gbps x 1e9 / 32 elements/s is our GB/s x 1e9 / 4.
** The plan must have one replica count (dp) for all stages.
**
** The same e and c are what AMP's driver gives its layer-assignment DP
** (data/amp/COST_MODEL.md 3.1): ppi_amp_dp_inputs builds them per work
** layer for a pipeline shape in rank order, for the amp-original method
** with amp_inputs (part.h), with AMP's B = 1 uniform split beside it.
** Complexity: O(devices + ops x types + S x dp x tp).
*/
#include "cost/cost.h"

#include <math.h>
#include <string.h>

static double hyper(const struct pp_model *m, const char *key)
{
  int32_t i;
  for (i = 0; i < m->nhyper; i++)
    if (strcmp(m->hyper_key[i], key) == 0)
      return m->hyper_val[i];
  return 0;
}

static bool kind_is(const struct pp_model *m, int32_t v, const char *k)
{
  return m->op_kind[v] && strcmp(m->op_kind[v], k) == 0;
}

/* A device type of the cluster: how many devices have it and its
** lookup key for the model. */
struct amp_type {
  int32_t n;
  pp_type_key key;
};

/* AMP's p2p volume after layer v at micro-batch mbs, 32-bit elements:
** the layer's output (fp16 bytes / 2), over mp after the logits; one
** gf_dim x bottom_width^2 for every TransGAN boundary. */
static double amp_vol(const struct pp_model *m, int32_t v, int32_t mbs,
                      int32_t mp)
{
  double gf = hyper(m, "gf_dim"), bottom = hyper(m, "bottom_width");
  double vol;
  if (gf > 0 && bottom > 0)
    return gf * bottom * bottom * mbs;
  vol = (double)m->out[v] / 2 * mbs / m->micro_batch;
  return kind_is(m, v, "embed2v") ? vol / mp : vol;
}

/* One lookup key per type, taken once: finding a device of the type
** for every operator would cost O(ops x devices).  NULL when out of
** memory; free with ppi_free (c->ntype entries). */
static struct amp_type *amp_types(pp_ctx *ctx, const struct pp_model *m,
                                  const struct pp_cluster *c)
{
  struct amp_type *ty = ppi_calloc(ctx, (size_t)c->ntype, sizeof *ty);
  int32_t d;
  if (ty)
    for (d = 0; d < c->ndev; d++)
      if (!ty[c->dev_type[d]].n++)
        ty[c->dev_type[d]].key = pp_model_type_key(m, c, d);
  return ty;
}

/* Layer v's forward time at tp mp, blended over the cluster's mix of
** device types as AMP blends its profiles: each type's fwd_ms / div
** (div 1: ms; 1000: seconds, divided first as AMP's numbers are). */
static pp_status amp_fwd(const struct pp_model *m, const struct pp_cluster *c,
                         const struct amp_type *ty, int32_t v, int32_t mp,
                         double div, double *fwd)
{
  int32_t t;
  pp_status rc;
  *fwd = 0;
  for (t = 0; t < c->ntype; t++) {
    pp_op_time x;
    if (!ty[t].n)
      continue;
    if ((rc = ppi_model_op_time_profiled(m, v, &ty[t].key, mp, 1, &x)))
      return rc;
    *fwd += x.fwd_ms / div * ty[t].n / c->ndev;
  }
  return PP_OK;
}

/* Elements per second of the link between two devices. */
static double elems_per_s(const struct pp_cluster *c, int32_t a, int32_t b)
{
  return pp_cluster_bandwidth(c, a, b) * 1e9 / 4;
}

pp_status ppi_cost_amp(pp_ctx *ctx, const struct ppi_cost *k,
                       struct ppi_amp_terms *out)
{
  const struct pp_model *m = k->m;
  const struct pp_cluster *c = k->c;
  int32_t S = k->S, dp = ppi_cost_nrep(k, 0), mp = pp_plan_uniform_tp(k->p);
  int32_t s, i, n, t, d;
  int32_t mbs = k->p->p.micro_batch;
  double H = hyper(m, "hidden"), V = hyper(m, "vocab");
  struct amp_type *ty;
  pp_status rc = PP_OK;

  memset(out, 0, sizeof *out);
  if (mp == 0)
    return ppi_fail(ctx, PP_EINPUT,
                    "%s: AMP's cost model needs one tp degree in every stage "
                    "(stage 0 has %d, a later stage another)",
                    k->p->source, (int)ppi_cost_tp(k, 0));
  for (s = 1; s < S; s++)
    if (ppi_cost_nrep(k, s) != dp)
      return ppi_fail(ctx, PP_EINPUT,
                      "%s: AMP's cost model needs one replica count in every "
                      "stage (stage 0 has %d, stage %d has %d)",
                      k->p->source, (int)dp, (int)s, (int)ppi_cost_nrep(k, s));
  if (!(ty = amp_types(ctx, m, c)))
    return PP_ENOMEM;
  for (s = 0; s < S && !rc; s++) {
    const int32_t *ops = pp_plan_stage_ops(k->p, s, &n);
    double ts = 0, P = 0;
    bool emb = false;
    int32_t last = -1;
    for (i = 0; i < n && !rc; i++) {
      int32_t v = ops[i];
      double fwd = 0;
      if (v > last)
        last = v;
      if (!kind_is(m, v, "other") && (rc = amp_fwd(m, c, ty, v, mp, 1, &fwd)))
        break;
      ts += 3.0 * mbs * fwd;
      if (kind_is(m, v, "transformer_layer"))
        P += 12.0 * H * H / mp;
      else if (m->op_kind[v] && strncmp(m->op_kind[v], "block", 5) == 0)
        P += (double)m->param[v] / 2 / mp;
      else if (kind_is(m, v, "embed2h") || kind_is(m, v, "embed2v"))
        emb = true;
    }
    if (rc)
      break;
    if (emb)
      P += H * V / mp;
    out->sum_stage_ms += ts;
    if (ts > out->max_stage_ms)
      out->max_stage_ms = ts;
    if (s + 1 < S) {
      double vol = amp_vol(m, last, mbs, mp), mean = 0;
      for (d = 0; d < dp; d++) {
        double bw = 0;
        for (t = 0; t < mp; t++) {
          double x = elems_per_s(k->c, ppi_cost_dev(k, s, d, t),
                                 ppi_cost_dev(k, s + 1, d, t));
          if (t == 0 || x < bw)
            bw = x;
        }
        mean += vol / bw;
      }
      out->p2p_ms += mean / dp * 1000;
    }
    if (dp > 1)
      for (t = 0; t < mp; t++) {
        double bw = elems_per_s(k->c, ppi_cost_dev(k, s, dp - 1, t),
                                ppi_cost_dev(k, s, 0, t));
        double x = 2.0 * (dp - 1) / (dp * bw) * P * 1000;
        if (x > out->dp_ms)
          out->dp_ms = x;
      }
  }
  ppi_free(ctx, ty, (size_t)c->ntype * sizeof *ty);
  out->pipe_ms = (double)(k->gas[0] - 1) * out->max_stage_ms + out->p2p_ms +
                 out->sum_stage_ms;
  return rc;
}

/* The inputs AMP's driver gives its DP (data/amp/COST_MODEL.md 3, 3.1),
** built with the same blend, volumes and links as ppi_cost_amp above, in
** seconds as AMP has them (the DP's near-ties are decided in that
** arithmetic). */
pp_status ppi_amp_dp_inputs(pp_ctx *ctx, struct ppi_arena *ar,
                            const struct pp_model *m,
                            const struct pp_cluster *c, const int32_t *dev0,
                            int32_t k, int32_t R, int32_t tp, int32_t mbs,
                            struct ppi_amp_dp *out)
{
  int32_t v, w, j, d, t, L = 0, lead = 0;
  int32_t nb = k > 1 ? k - 1 : 1;
  struct amp_type *ty;
  pp_status rc = PP_OK;

  memset(out, 0, sizeof *out);
  for (v = 0; v < m->nop; v++)
    L += !kind_is(m, v, "other");
  if (L < k)
    return ppi_fail(ctx, PP_EINPUT,
                    "amp-original: %d stages for the %d work layers of '%s' "
                    "(AMP drops layers of kind \"other\")",
                    (int)k, (int)L, m->name);
  for (j = 0; j < k; j++) {
    int32_t lo = dev0 ? dev0[j] : tp * R * j;
    if (lo < 0 || lo + tp * R > c->ndev)
      return ppi_fail(ctx, PP_EINPUT,
                      "amp-original: stage %d's %d ranks from device %d run "
                      "past the %d devices of '%s'",
                      (int)j, (int)(tp * R), (int)lo, (int)c->ndev, c->name);
  }
  out->layer = ppi_arena_alloc(ar, ctx, (size_t)L, sizeof *out->layer);
  out->e = ppi_arena_alloc(ar, ctx, (size_t)L, sizeof *out->e);
  out->cc = ppi_arena_alloc(ar, ctx, (size_t)L * nb, sizeof *out->cc);
  if (!out->layer || !out->e || !out->cc)
    return PP_ENOMEM;
  if (!(ty = amp_types(ctx, m, c)))
    return PP_ENOMEM;
  /* AMP's uniform split for B = 1 puts GPT-2's embedding and the noop
  ** after it into stage 0 on top of its share of the blocks; it has no
  ** such rule for other leading layers (TransGAN's input linear). */
  for (v = 0; v < m->nop && (kind_is(m, v, "embed2h") || kind_is(m, v, "noop"));
       v++)
    lead++;
  for (v = 0; v < m->nop && !rc; v++) {
    double fwd = 0;
    if (kind_is(m, v, "other"))
      continue;
    if (kind_is(m, v, "transformer_layer") ||
        (m->op_kind[v] && strncmp(m->op_kind[v], "block", 5) == 0))
      out->nblock++;
    if ((rc = amp_fwd(m, c, ty, v, tp, 1000, &fwd)))
      break;
    out->layer[out->L] = v;
    out->e[out->L++] = 3.0 * mbs * fwd;
  }
  ppi_free(ctx, ty, (size_t)c->ntype * sizeof *ty);
  if (rc)
    return rc;
  out->head = out->nblock > 0 ? lead : 0;
  for (w = 0; w + 1 < L; w++) {
    double vol = amp_vol(m, out->layer[w], mbs, tp);
    for (j = 0; j + 1 < k; j++) {
      int32_t a0 = dev0 ? dev0[j] : tp * R * j;
      int32_t b0 = dev0 ? dev0[j + 1] : tp * R * (j + 1);
      double sum = 0;
      for (d = 0; d < R; d++) {
        double slowest = INFINITY;
        for (t = 0; t < tp; t++) {
          double x = elems_per_s(c, a0 + tp * d + t, b0 + tp * d + t);
          slowest = x < slowest ? x : slowest;
        }
        sum += vol / slowest;
      }
      out->cc[(size_t)w * nb + j] = sum / R;
    }
  }
  return PP_OK;
}

/* SPDX-License-Identifier: MIT */
/*
** The priced plan shared by the analytic estimate (cost_eval.c), AMP's
** conventions (cost_amp.c), the schedules (sched.c) and the simulator
** (sim.c): every per-micro-batch time and size the plan needs, computed
** once from the model, the cluster and the plan (cost_model.c).
*/
#ifndef PP_COST_H
#define PP_COST_H

#include "plan/plan.h"

/* One edge of the stage graph: the tensors stage a sends to the later
** stage b for one micro-batch (each source operator's tensor once per
** destination stage), whole (not per tensor-parallel rank). */
struct ppi_sedge {
  int32_t a, b;
  double bytes;
};

/* The stage graph of an operator -> stage map: per source operator and
** destination stage the largest edge (a tensor is sent once per
** destination stage), summed per stage pair, bytes x scale; sorted by
** (a, b).  Free with ppi_stage_edges_free. */
PP_INTERNAL pp_status ppi_stage_edges(pp_ctx *ctx, const struct pp_model *m,
                                      const int32_t *stage_of, double scale,
                                      struct ppi_sedge **out, int32_t *n);
PP_INTERNAL void ppi_stage_edges_free(pp_ctx *ctx, const struct pp_model *m,
                                      struct ppi_sedge *e);

struct ppi_cost {
  const struct pp_plan *p;
  const struct pp_model *m;
  const struct pp_cluster *c;
  pp_cost_params cp;
  int32_t S, ndev, nrep; /* stages, devices, replicas */
  int64_t nmb;           /* micro-batches per iteration, all replicas */
  int64_t *gas;          /* [S] micro-batches per replica */
  int32_t *stage_of;     /* [nop] */

  /* per replica q (index into the plan's replicas): the slowest tp
  ** rank's time for one micro-batch */
  double *f, *b, *rc, *u; /* forward, backward, recompute, update */
  double *comp;           /* f + b + rc */

  /* per stage, per tensor-parallel rank */
  double *param;      /* parameter bytes, a tied group once */
  double *saved;      /* activations kept for backward, one micro-batch */
  double *xin, *xout; /* bytes received / sent per micro-batch */
  double *act;        /* kept per in-flight micro-batch: saved, or xin
                         with recomputation */
  double *peak_extra; /* with recomputation: saved (the re-forward) */

  int32_t ne;
  struct ppi_sedge *e; /* sorted by (a, b) */
  double *xf, *xb;     /* [ne] under a blocking engine: each edge's forward
                          and backward transfer (blocking_p2p), else NULL */

  /* schedule */
  int32_t *inflight; /* [S] */
  int32_t *group;    /* [S] 1F1B* group (0 otherwise) */
  double period_ms;  /* 1F1B* target period */

  /* allreduce per stage */
  double *ar_ms;
  uint8_t *ar_hier;

  /* the run's settings (engine.c): the precision resolved against the
  ** model's dtype, and the factor byte counts of the model take */
  pp_engine engine;
  pp_precision prec;
  int32_t zero;
  double ratio;   /* bytes(prec) / bytes(model dtype) */
  double *nparam; /* [S] parameters per tp rank, a tied group once */
  double *gbytes; /* [S] gradient bytes reduced after the last
                     backward (the exposed share, engine.c) */
  const struct ppi_engine_rules *rules; /* the engine's (engine.c) */
  double *ar_slow;   /* [3 S] per stage, ring / hierarchical intra-node /
                        inter-node hops: slowdown of shared links against
                        the pairwise bandwidths (1 without a link graph) */
  double *state;     /* [S] weights, grads, optimizer state per rank */
  double *transient; /* [S] optimizer step / reduction peak per rank */
  double *keep;      /* [S] bytes kept beyond the schedule's in-flight
                        activations (DeepSpeed's last stage output) */
  double *opmax;     /* [S] parameters of its largest operator per rank */

  unsigned est;
  struct ppi_share_cache *cache; /* borrowed; NULL: none */
};

/* Fill *k for plan p, model m, cluster c (all checked).  Allocates with
** the context; free with ppi_cost_free. */
PP_INTERNAL pp_status ppi_cost_init(pp_ctx *ctx, struct ppi_cost *k,
                                    const pp_plan *p, const pp_model *m,
                                    const pp_cluster *c,
                                    const pp_cost_params *cp);
/* The same with a cache of the reductions' slowest hops (cost_eval.h),
** which plans of one device layout share. */
PP_INTERNAL pp_status ppi_cost_init_cached(pp_ctx *ctx, struct ppi_cost *k,
                                           const pp_plan *p, const pp_model *m,
                                           const pp_cluster *c,
                                           const pp_cost_params *cp,
                                           struct ppi_share_cache *cache);
PP_INTERNAL void ppi_cost_free(pp_ctx *ctx, struct ppi_cost *k);
/* The lower bound of k's run settings at the ntp degrees tps kept in k's
** cache (cost_model.c): found (into *lb), and keep one. */
PP_INTERNAL bool ppi_share_lb_get(const struct ppi_cost *k, const int32_t *tps,
                                  int32_t ntp, double *lb);
PP_INTERNAL void ppi_share_lb_put(const struct ppi_cost *k, const int32_t *tps,
                                  int32_t ntp, double lb);

/* Engine rules (engine.c). */
struct ppi_engine_mem {
  double state;  /* between steps */
  double step;   /* extra during the optimizer step */
  double reduce; /* extra during the gradient reduction */
};
PP_INTERNAL void ppi_engine_state(pp_engine e, pp_precision prec, int32_t zero,
                                  int32_t d, double n,
                                  struct ppi_engine_mem *out);
PP_INTERNAL double ppi_engine_grad_bytes(pp_engine e, pp_precision prec);
struct ppi_engine_rules {
  int overlap;         /* the last backward hides all but the last bucket
                          of the gradient reduction */
  double bucket_bytes; /* that bucket */
  int blocking;        /* point-to-point blocks both ends: the transfers
                          are inside the stages' compute */
  int whole;           /* every tp rank sends the whole boundary tensor
                          (else 1/tp of it) */
  int partitioned;     /* blocking p2p with tp > 1: 1/tp of the activation
                          and of its gradient, all-gathered at both ends
                          (blocking_p2p) */
  int keeps;           /* the last stage keeps the previous micro-batch's
                          output */
  double slack;        /* the allocator's reserve, share of the live peak */
};
PP_INTERNAL const struct ppi_engine_rules *ppi_engine_rules(pp_engine e);
/* Bytes the optimizer step streams through memory per parameter. */
PP_INTERNAL double ppi_engine_step_bytes(pp_engine e, pp_precision prec,
                                         int32_t zero, int32_t d);
/* Bytes the gradient reduction streams through memory per gradient
** element beside the network (flattening, conversion, scaling, copying
** back), for a stage of d replicas. */
PP_INTERNAL double ppi_engine_reduce_pass_bytes(pp_engine e, pp_precision prec,
                                                int32_t zero, int32_t d);
PP_INTERNAL double ppi_engine_runtime_bytes(pp_engine e, const char *type);

/* A device's memory from its parts (cost_model.c): stat = the
** stages' state, buffers and kept bytes; live = the activations at
** their peak; trans = the largest transient of its stages.  Fills *x
** (used, capacity and reserve set by the caller) and returns the
** total. */
PP_INTERNAL double ppi_cost_device_memory(const struct ppi_cost *k, int32_t d,
                                          double state, double buffers,
                                          double live, double trans,
                                          pp_device_memory *x);

/* Stage s's tensor-parallel degree. */
static inline int32_t ppi_cost_tp(const struct ppi_cost *k, int32_t s)
{
  return k->p->stp[s];
}

/* The bytes one tp rank of stage s sends of a boundary tensor of
** `bytes'. */
static inline double ppi_cost_p2p_bytes(const struct ppi_cost *k, int32_t s,
                                        double bytes)
{
  return k->rules->whole ? bytes : bytes / ppi_cost_tp(k, s);
}

/* The rank pairs of a transfer from stage a to stage b: pair t runs
** from rank t mod tp_a to rank t mod tp_b.  An engine whose ranks send
** the whole tensor feeds each receiving rank once; one that splits it
** sends 1/n of it over each of the n = max(tp_a, tp_b) pairs (each
** receiver then gathers).  Stages of one degree: tp pairs, rank to
** rank, as before. */
static inline int32_t ppi_cost_npair(const struct ppi_cost *k, int32_t a,
                                     int32_t b)
{
  int32_t ta = ppi_cost_tp(k, a), tb = ppi_cost_tp(k, b);
  return k->rules->whole ? tb : (ta > tb ? ta : tb);
}
/* The bytes of a boundary tensor of `bytes' one pair carries. */
static inline double ppi_cost_pair_bytes(const struct ppi_cost *k, int32_t a,
                                         int32_t b, double bytes)
{
  return k->rules->whole ? bytes : bytes / ppi_cost_npair(k, a, b);
}
/* How many pairs share one rank at either end (they run one after the
** other there): 1 when the degrees are equal. */
static inline int32_t ppi_cost_pair_fan(const struct ppi_cost *k, int32_t a,
                                        int32_t b)
{
  int32_t n = ppi_cost_npair(k, a, b), ta = ppi_cost_tp(k, a),
          tb = ppi_cost_tp(k, b);
  int32_t fa = (n + ta - 1) / ta, fb = (n + tb - 1) / tb;
  return fa > fb ? fa : fb;
}

/* What a transfer of those bytes puts on the wire: nothing when the
** engine's transfers block (they are inside the stages' compute). */
static inline double ppi_cost_wire_bytes(const struct ppi_cost *k, int32_t a,
                                         int32_t b, double bytes)
{
  return k->rules->blocking ? 0 : ppi_cost_pair_bytes(k, a, b, bytes);
}

/* Transfer time of the bytes of one tp rank over devices i -> j. */
/* The calibration's entry for device type `type` under the plan's engine
** and precision; NULL when none. */
PP_INTERNAL const pp_calib_entry *ppi_cost_calib(const struct ppi_cost *k,
                                                 int32_t type);
/* The relative standard deviations of a prediction (docs/COST_MODEL.md,
** "Calibration"): device d's memory (live: what the slack multiplies),
** and the iteration time (the largest over the plan's device types);
** *calibrated: whether a calibration measured it, else the default. */
PP_INTERNAL double ppi_cost_memory_spread(const struct ppi_cost *k, int32_t d,
                                          double live, double total,
                                          int *calibrated);
PP_INTERNAL double ppi_cost_time_spread(const struct ppi_cost *k,
                                        double iter_ms, double comm_ms,
                                        int *calibrated);
/* A calibration's delivered share of the bandwidth between devices i and
** j (its net_scale across nodes, intra_scale inside one; 1 without
** them), and the bandwidth in GB/s with it. */
PP_INTERNAL double ppi_cost_net_share(const struct ppi_cost *k, int32_t i,
                                      int32_t j);
PP_INTERNAL double ppi_cost_bw(const struct ppi_cost *k, int32_t i, int32_t j);
PP_INTERNAL double ppi_cost_comm(const struct ppi_cost *k, int32_t i, int32_t j,
                                 double bytes);
/* The device of tp rank t of replica r of stage s. */
static inline int32_t ppi_cost_dev(const struct ppi_cost *k, int32_t s,
                                   int32_t r, int32_t t)
{
  return k->p->dev[k->p->dev_off[k->p->rep_off[s] + r] + t];
}
static inline int32_t ppi_cost_nrep(const struct ppi_cost *k, int32_t s)
{
  return k->p->rep_off[s + 1] - k->p->rep_off[s];
}
/* Time of one transfer of stage edge e between replica ra of stage a and
** rb of stage b: the slowest of the rank pairs.  Stages of one tp degree
** pair rank t with rank t; otherwise every rank of the larger group
** receives from rank t mod tp of the smaller (or sends to it), which
** sends its share to each (docs/COST_MODEL.md, "Tensor parallelism"). */
PP_INTERNAL double ppi_cost_edge_ms(const struct ppi_cost *k,
                                    const struct ppi_sedge *e, int32_t ra,
                                    int32_t rb);

/* Schedules (sched.c).  1F1B* groups of a chain of n resource loads for
** target period T: group[i] for every resource, 1 holding the last. */
PP_INTERNAL void ppi_sched_groups(const double *load, int32_t n, double T,
                                  int32_t *group);
/* GPipe's and 1F1B's in-flight counts of S stages: gas[s] and
** min(S - s, gas[s]). */
PP_INTERNAL void ppi_sched_counts(pp_schedule sc, int32_t S, const int64_t *gas,
                                  int32_t *inflight);
/* Raise inflight[] (never past gas[]) until the orders of S stages of
** nrep[s] replicas, joined by the ne stage edges from[i] -> to[i], cannot
** block.  Nothing changes when replica counts are equal along every edge
** and counts never grow along an edge (GPipe's, 1F1B's and 1F1B*'s own);
** fixed counts that grow along an edge are raised even then. */
PP_INTERNAL pp_status ppi_sched_feedable(pp_ctx *ctx, int32_t S,
                                         const int32_t *nrep,
                                         const int64_t *gas, int32_t ne,
                                         const int32_t *from, const int32_t *to,
                                         int32_t *inflight);
/* The compute order of a replica of stage s: 2*gas entries. */
PP_INTERNAL void ppi_sched_order(pp_schedule sc, int64_t gas, int32_t inflight,
                                 pp_sched_op *buf, int64_t cap);

/* AMP's predicted iteration time of the plan, ms (cost_amp.c), with its
** terms. */
struct ppi_amp_terms {
  double pipe_ms, p2p_ms, dp_ms, max_stage_ms, sum_stage_ms;
};
PP_INTERNAL pp_status ppi_cost_amp(pp_ctx *ctx, const struct ppi_cost *k,
                                   struct ppi_amp_terms *out);

/* What AMP's driver gives that DP (data/amp/COST_MODEL.md 3, 3.1; built
** in cost_amp.c beside AMP's cost model; part_amp_original.c runs it) for k
** stages x R replicas x tp
** ranks of model m (a chain) at micro-batch mbs on cluster c, rank
** (stage s, replica d, tp rank t) on device dev0[s] + tp d + t (dev0
** NULL: AMP's own order, tp R s + tp d + t).  e and cc in seconds:
**   - work layers: m's layers not of kind "other" (TransGAN's 31
**     non-work entries; a general model's layers are all work layers);
**   - e[w] = 3 mbs fwd at tp, the profiles blended by the cluster's mix
**     of device types (AMP's 0.75 V100 + 0.25 T4);
**   - cc[w (k-1) + j] = the mean over replicas of AMP's volume after
**     work layer w (32-bit elements) / the slowest tp rank's link from
**     stage j to j + 1.
** Arrays in ar.  PP_EINPUT when there are fewer work layers than stages
** or the ranks run past the cluster. */
struct ppi_amp_dp {
  int32_t L;      /* work layers */
  int32_t nblock; /* transformer layers and blocks: AMP's num_layers */
  int32_t head;   /* work layers AMP's uniform split adds to stage 0 */
  int32_t *layer; /* [L] m's layer of each work layer, increasing */
  double *e;      /* [L] */
  double *cc;     /* [L x max(k - 1, 1)] */
};
PP_INTERNAL pp_status ppi_amp_dp_inputs(pp_ctx *ctx, struct ppi_arena *ar,
                                        const struct pp_model *m,
                                        const struct pp_cluster *c,
                                        const int32_t *dev0, int32_t k,
                                        int32_t R, int32_t tp, int32_t mbs,
                                        struct ppi_amp_dp *out);

#endif /* PP_COST_H */

/* SPDX-License-Identifier: MIT */
/*
** The partitioners' shared vocabulary: a layer chain on plain arrays
** (part_chain.c builds it from a model, a device sequence and the
** parameters), the stage-cost functions every algorithm prices stages
** with, and the kernels (one file each).
**
** A partition of L layers into S stages is given by first[0..S]: stage s
** holds layers first[s] .. first[s+1]-1, first[0] = 0, first[S] = L, every
** stage non-empty.
*/
#ifndef PP_PART_H
#define PP_PART_H

#include "plan/plan.h"
#include "cost/cost.h"

#include <math.h>

/* The chain as the partitioners see it.  Stage s of a partition runs on
** "position" s: a profile (prof[s], the device type's times), the
** bandwidth and latency of the boundary after it (to position s+1), the
** in-flight count and memory limit that apply to it. */
struct ppi_chain {
  int32_t L, S, R;
  int32_t nprof;
  double *wp; /* [nprof][L+1] prefix sums of fwd+bwd per profile */
  double *fp; /* [nprof][L+1] prefix sums of fwd */
  /* per profile too (its tp degree), profile 0's first: */
  double *pp;    /* [nprof][L+1] prefix sums of parameter bytes */
  double *sp;    /* [nprof][L+1] prefix sums of saved activation bytes */
  double *cut;   /* [nprof][L] bytes sent after layer l (cut[L-1] = 0) */
  int32_t *prof; /* [S] profile of position s: its device type and tp */
  double *bw;    /* [S] GB/s from position s to s+1 (bw[S-1] unused) */
  double lat_ms; /* latency of every transfer, ms */
  double *mem;   /* [S] memory limit of position s (INFINITY: none) */
  double *nf;    /* [S] in-flight micro-batches of position s */
  double fac;    /* optimizer bytes per parameter byte */
  double reserve;
  int64_t gas;
  /* AMP's allreduce term of position s: ar_a[s] x params + ar_b[s] */
  double *ar_a, *ar_b;
  int allreduce;
  int recompute; /* activations: the stage input kept, one re-forward */
};

/* Compute (fwd + bwd) of layers i..j on position s. */
static inline double ppi_ch_work(const struct ppi_chain *c, int32_t s,
                                 int32_t i, int32_t j)
{
  const double *w = c->wp + (size_t)c->prof[s] * (c->L + 1);
  return w[j + 1] - w[i];
}

/* Position s's parameter and saved bytes prefix sums, and the bytes its
** ranks send after each layer. */
static inline const double *ppi_ch_pp(const struct ppi_chain *c, int32_t s)
{
  return c->pp + (size_t)c->prof[s] * (c->L + 1);
}
static inline const double *ppi_ch_sp(const struct ppi_chain *c, int32_t s)
{
  return c->sp + (size_t)c->prof[s] * (c->L + 1);
}
static inline const double *ppi_ch_cut(const struct ppi_chain *c, int32_t s)
{
  return c->cut + (size_t)c->prof[s] * c->L;
}

/* One transfer of the bytes after layer l from position s to s+1. */
static inline double ppi_ch_comm(const struct ppi_chain *c, int32_t s,
                                 int32_t l)
{
  double n = ppi_ch_cut(c, s)[l];
  /* bw INFINITY: both positions on one device, nothing is sent */
  return n > 0 && c->bw[s] < INFINITY ? c->lat_ms + n / (c->bw[s] * 1e6) : 0;
}

/* Activations of layers i..j on position s with g micro-batches in
** flight: their saved bytes each, or with recomputation their input each
** plus one micro-batch's saved bytes (the re-forward;
** docs/COST_MODEL.md). */
static inline double ppi_ch_act(const struct ppi_chain *c, int32_t s, int32_t i,
                                int32_t j, double g)
{
  const double *sp = ppi_ch_sp(c, s), *cut = ppi_ch_cut(c, s);
  double in = i > 0 ? cut[i - 1] : 0;
  return c->recompute ? g * in + (sp[j + 1] - sp[i]) : g * (sp[j + 1] - sp[i]);
}

/* Memory of layers i..j on position s with g in-flight micro-batches:
** parameters x factor, the activations, send/receive buffers of both
** boundaries, reserve. */
static inline double ppi_ch_mem_sg(const struct ppi_chain *c, int32_t s,
                                   int32_t i, int32_t j, double g)
{
  const double *pp = ppi_ch_pp(c, s), *cut = ppi_ch_cut(c, s);
  double in = i > 0 ? cut[i - 1] : 0, out = cut[j];
  return c->fac * (pp[j + 1] - pp[i]) + ppi_ch_act(c, s, i, j, g) +
         2 * (in + out) + c->reserve;
}

/* The same on a chain of one tp degree (MadPipe's: one device type). */
static inline double ppi_ch_mem_g(const struct ppi_chain *c, int32_t i,
                                  int32_t j, double g)
{
  return ppi_ch_mem_sg(c, 0, i, j, g);
}

/* Memory of layers i..j on position s with its in-flight count. */
static inline double ppi_ch_mem(const struct ppi_chain *c, int32_t s, int32_t i,
                                int32_t j)
{
  return ppi_ch_mem_sg(c, s, i, j, c->nf[s]);
}

/* The min-max stage time ([Parmesan] Eq. 3): compute plus both boundary
** transfers, over the replicas. */
static inline double ppi_ch_minmax(const struct ppi_chain *c, int32_t s,
                                   int32_t i, int32_t j)
{
  double t = ppi_ch_work(c, s, i, j);
  if (i > 0)
    t += ppi_ch_comm(c, s - 1, i - 1);
  if (j < c->L - 1)
    t += ppi_ch_comm(c, s, j);
  return t / c->R;
}

/* AMP's allreduce term of layers i..j on position s (0 when off). */
static inline double ppi_ch_ar(const struct ppi_chain *c, int32_t s, int32_t i,
                               int32_t j)
{
  const double *pp = ppi_ch_pp(c, s);
  if (!c->allreduce)
    return 0;
  return c->ar_a[s] * (pp[j + 1] - pp[i]) + c->ar_b[s];
}

/* The chain of view v (the chain view of the model) for the npos
** positions of p at micro-batch size mbs, its arrays in ar; *est gets
** the estimate flags of the times and sizes it read (part_chain.c). */
PP_INTERNAL pp_status ppi_chain_build(pp_ctx *ctx, struct ppi_arena *ar,
                                      const pp_model *v,
                                      const pp_part_params *p, int32_t npos,
                                      int32_t mbs, struct ppi_chain *c,
                                      unsigned *est);

/* Objective values of a partition, priced from the arrays. */
PP_INTERNAL double ppi_ch_minmax_of(const struct ppi_chain *c,
                                    const int32_t *first);
PP_INTERNAL double ppi_ch_amp_of(const struct ppi_chain *c,
                                 const int32_t *first);
/* The lower bound of objective o for any partition of c into c->S
** stages: the work spread evenly, or the heaviest layer alone. */
PP_INTERNAL double ppi_ch_lower_bound(const struct ppi_chain *c,
                                      pp_part_objective o);

/* Kernels.  Each fills first[0..S] and returns PP_OK, or PP_EINPUT when
** no partition fits in memory (nothing recorded: the caller explains). */
PP_INTERNAL pp_status ppi_part_minmax(pp_ctx *ctx, const struct ppi_chain *c,
                                      int mem, int32_t *first, double *obj);
/* The partition whose largest memory / limit ratio is the smallest (what
** to report when nothing fits). */
PP_INTERNAL pp_status ppi_part_minmem(pp_ctx *ctx, const struct ppi_chain *c,
                                      int32_t *first, double *ratio);
/* The contiguous allocation of least period: max over stages of the
** work and over cuts of the link load (forward + backward transfer). */
PP_INTERNAL pp_status ppi_part_period(pp_ctx *ctx, const struct ppi_chain *c,
                                      int32_t *first, double *period);
PP_INTERNAL pp_status ppi_part_amp(pp_ctx *ctx, const struct ppi_chain *c,
                                   int32_t *first, double *obj,
                                   int64_t *labels);
/* AMP's own DP (data/amp/COST_MODEL.md 3.1), quirks included: e[L]
** per-layer costs, c[(L-1) x k] cut costs, k stages, B micro-batches. */
PP_INTERNAL pp_status ppi_part_amp_original(pp_ctx *ctx, const double *e,
                                            const double *cc, int32_t L,
                                            int32_t k, int64_t B,
                                            int32_t *first);
/* A split of the work layers (wfirst[0..k]) as AMP's driver maps it to
** m's nlayer layers: a stage ends after its last work layer, and the
** last stage takes every layer left. */
PP_INTERNAL void ppi_amp_dp_layers(const struct ppi_amp_dp *in, int32_t k,
                                   int32_t nlayer, const int32_t *wfirst,
                                   int32_t *first);
/* AMP's driver's split when B = 1, instead of its DP: the nblock blocks
** evenly, the first nblock mod k stages one more, head more work layers
** in stage 0, the rest in the last stage (TransGAN: its 25th work
** layer, AMP's bug).  Without blocks enough for k stages (a general
** model), the work layers evenly. */
PP_INTERNAL void ppi_amp_uniform(const struct ppi_amp_dp *in, int32_t k,
                                 int32_t *wfirst);
/* Baselines: layer counts as even as possible (the first stages take
** the extra layers) / parameter bytes as even as possible (DeepSpeed's
** 'parameters': balanced prefix sums). */
PP_INTERNAL void ppi_part_uniform_layers(int32_t L, int32_t S, int32_t *first);
PP_INTERNAL pp_status ppi_part_uniform_params(pp_ctx *ctx, const double *pp,
                                              int32_t L, int32_t S,
                                              int32_t *first);

/* MadPipe's pattern of stage s of a partition (the 4 offsets of its
** F, B, CF, CB in the period, part_madpipe.c): 1 when it has one. */
PP_INTERNAL int ppi_partition_pattern(const pp_partition *pt, int32_t s,
                                      double sig[4]);

/* MadPipe (part_madpipe.c) and PipeDream + 1F1B* on chain c (a flat
** network: every position alike, c->mem[0] the memory of every
** processor): N stages first[0..N], each on processor proc[s] (special[s]
** when it is MadPipe's special processor), keeping inflight[s]
** activations, with the allocation's period; arrays in ar. */
struct ppi_madpipe {
  int32_t N, P;
  int32_t *first, *proc, *inflight;
  uint8_t *special;
  double *sig;         /* phase 2's pattern, 4 per stage (MadPipe), else NULL */
  double period;       /* the schedule's period */
  double dp_period;    /* phase 1's target (MadPipe) */
  double alloc_period; /* the load of the most loaded resource */
  int64_t labels;      /* DP labels kept */
  int ilp;             /* phase 2: 1 optimal, 2 feasible (limit), 0 none */
  int fits;
  int cut; /* the stop (time or flag) ended it early: the best
              pattern found by then */
};
/* stop bounds the whole of it (both phases, every ILP). */
PP_INTERNAL pp_status ppi_part_madpipe(pp_ctx *ctx, struct ppi_arena *ar,
                                       const struct ppi_chain *c, int32_t P,
                                       int32_t iterations,
                                       const struct ppi_stop *stop,
                                       int max_nodes, double period_cap,
                                       int phase1, struct ppi_madpipe *out);
/* Phase 1's question alone (for the tests): is there an allocation of
** period <= T (That = T), with the paper's optimistic count for the
** special processor or the pessimistic one? */
PP_INTERNAL pp_status ppi_madpipe_feasible(pp_ctx *ctx,
                                           const struct ppi_chain *c, int32_t P,
                                           double T, int pessimistic, int *ok);
PP_INTERNAL pp_status ppi_part_pipedream_star(pp_ctx *ctx, struct ppi_arena *ar,
                                              const struct ppi_chain *c,
                                              int32_t P,
                                              struct ppi_madpipe *out);
/* Phase 2 of MadPipe (sched_ilp.c): stages 0..N-1 on processors proc[],
** forward and backward times, one-way transfer time of every cut (0
** when both sides are on one processor), activation bytes kept per
** in-flight micro-batch, memory left for them per processor, the period.
** scale divides bytes in the ILP (numerics); max_nodes and time_limit
** bound CBC.  status: 1 optimal, 2 a pattern (a limit stopped the proof),
** 0 none exists, -1 a limit stopped CBC before it found one. */
struct ppi_ilp_in {
  int32_t N, P;
  const int32_t *proc;
  const double *uf, *ub, *c, *abar, *room;
  double T, scale, time_limit;
  int max_nodes;
  int minimize; /* 1: the least memory; 0: any pattern that fits (faster:
                   no optimality proof) */
  const struct ppi_stop *stop; /* NULL: none; else the solve ends within
                                  one branch-and-bound node of it */
};
PP_INTERNAL pp_status ppi_ilp_pattern(pp_ctx *ctx, const struct ppi_ilp_in *in,
                                      int32_t *n_out, double *sig, int *status);

/* ---- operator graphs (part_dag.c, part_cluster.c, part_refine.c) ---- */

/* A DAG to partition into S stages of R replicas on a flat network: its
** nodes are operators or hyper-operators (clusters), its edges carry
** their transfer time (ec, one transfer, latency included) and bytes. */
struct ppi_dag {
  int32_t n, ne;
  double *w, *param, *saved; /* [n]: fwd + bwd, parameter, saved bytes */
  int32_t *esrc, *edst;      /* [ne] */
  double *ec, *eb;           /* [ne] */
  int32_t *out_off, *out_e;  /* CSR of edge indices by source */
  int32_t *in_off, *in_e;    /* and by destination */
  int32_t S, R;
  double fac, reserve;
  const double *mem, *nf; /* [S]: limit, in-flight of stage s */
};

/* t[s] (the objective's stage times) and mem[s] (may be NULL) of a
** staging; the objective; scratch holds S doubles. */
PP_INTERNAL void ppi_dag_eval(const struct ppi_dag *g, const int32_t *stage_of,
                              double *t, double *mem);
PP_INTERNAL double ppi_dag_objective(const struct ppi_dag *g,
                                     const int32_t *stage_of, double *scratch);
/* A topological order whose prefixes cut little transfer time. */
PP_INTERNAL pp_status ppi_dag_order(pp_ctx *ctx, const struct ppi_dag *g,
                                    int32_t *order);
/* The min-max DP over the prefixes of order (PP_EINPUT: nothing fits). */
PP_INTERNAL pp_status ppi_dag_dp_prefix(pp_ctx *ctx, const struct ppi_dag *g,
                                        const int32_t *order, int mem,
                                        int32_t *stage_of, double *obj);
/* The min-max DP over every down-set; *done = false when there are more
** than limit of them (nothing else is set then). */
PP_INTERNAL pp_status ppi_dag_dp_ideals(pp_ctx *ctx, const struct ppi_dag *g,
                                        int64_t limit, int mem,
                                        int32_t *stage_of, double *obj,
                                        bool *done);

/* Build the CSR arrays of g (n, ne, esrc, edst set) in ar. */
PP_INTERNAL pp_status ppi_dag_index(pp_ctx *ctx, struct ppi_arena *ar,
                                    struct ppi_dag *g);
/* Clustering (part_cluster.c): of[v] = the hyper-operator of v, numbered
** 0..*nclusters-1 in a topological order of the hyper-operator graph;
** mlimit bounds fac x parameters + nfmax x saved of a cluster (INFINITY:
** none). */
PP_INTERNAL pp_status ppi_dag_cluster(pp_ctx *ctx, const struct ppi_dag *g,
                                      int32_t K, double alpha, double mlimit,
                                      double nfmax, int32_t *of,
                                      int32_t *nclusters);
/* The hyper-operator graph of a clustering: summed nodes, edges between
** clusters with summed transfer times and bytes. */
PP_INTERNAL pp_status ppi_dag_contract(pp_ctx *ctx, struct ppi_arena *ar,
                                       const struct ppi_dag *g,
                                       const int32_t *of, int32_t K,
                                       struct ppi_dag *h);
/* Refinement (part_refine.c): moves of single operators between
** neighbouring stages that strictly lower (max t, stages at max, sum
** t^2), keeping every prefix down-closed and memory within limits; at
** most steps moves.  *moves gets how many were made. */
PP_INTERNAL pp_status ppi_dag_refine(pp_ctx *ctx, const struct ppi_dag *g,
                                     int32_t steps, int mem, int32_t *stage_of,
                                     int32_t *moves);

#endif /* PP_PART_H */

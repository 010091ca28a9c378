/* SPDX-License-Identifier: MIT */
/*
** Device mapping (Parmesan phase 2, [Parmesan] 5): the problem on plain
** arrays, its objectives, bounds, the exact search and the baselines.
**
** Stage replica v = (s, r) is numbered v = r * S + s.  A mapping p gives
** every stage replica a distinct device.
*/
#ifndef PP_MAP_H
#define PP_MAP_H

#include "cluster/cluster.h"

enum { MAP_P2P = 0, MAP_AR = 1, MAP_FULL = 2 };

/* A stage graph (docs/DESIGN.md, "Stage graph"): stages with their
** speed-1 compute and parameter bytes, edges with the bytes of one
** micro-batch. */
struct pp_stage_graph {
  struct ppi_arena arena;
  char *source;
  int32_t S, ne;
  char **name;
  double *compute, *param;
  int32_t *from, *to;
  double *bytes;
};

/* Validate and freeze the graph built in g (names unique, indices in
** range, numbers finite and >= 0, no self edge). */
PP_INTERNAL pp_status ppi_stage_graph_check(pp_ctx *ctx,
                                            const struct pp_stage_graph *g);

struct ppi_map {
  int32_t S, R, D, n;   /* stages, replicas, devices, n = S R */
  struct ppi_stop stop; /* the caller's flag (pp_map_params.stop); the
                           searches keep their own deadlines */
  int obj;              /* MAP_P2P, MAP_AR, MAP_FULL */
  double *cu;           /* [S * D]: compute of stage s on device d, ms */
  int32_t ne;           /* stage-graph edges (undirected for cost) */
  int32_t *ea, *eb;
  double *em;      /* bytes */
  double *P;       /* [S] parameter bytes */
  const double *B; /* [D * D] GB/s */
  double lat;      /* ms per transfer */
  /* adjacency of stages: off[S+1], nbr (stage), nm (bytes) */
  int32_t *adj_off, *adj_s;
  double *adj_m;
  /* per device, the bandwidths to the others, highest first */
  double *bw_sorted; /* [D * (D-1)] */
  int32_t *twin;     /* [D]: the lowest device interchangeable with d */
  bool twins;        /* some class has two devices or more */
  /* classes that swap as a whole (a node of twins for another): for a
  ** class's lowest device c, its swappable classes' lowest devices below
  ** it, swap[swap_off[c] ..]; none when !twins */
  int32_t *swap_off, *swap; /* [D + 1], [swap_off[D]] */
  int32_t *csize;           /* [D] class size, by its lowest device */
};

/* One transfer of m bytes between devices a and b, ms. */
static inline double ppi_map_comm(const struct ppi_map *q, int32_t a, int32_t b,
                                  double m)
{
  return m > 0 ? q->lat + m / (q->B[(size_t)a * q->D + b] * 1e6) : 0;
}

/* The allreduce factor of a ring pair: term = ar(s) / B + lat_ar. */
static inline double ppi_map_pair(const struct ppi_map *q, int32_t s, int32_t a,
                                  int32_t b)
{
  if (q->R < 2 || q->P[s] <= 0)
    return 0;
  return 2.0 * (q->R - 1) / q->R * q->P[s] /
             (q->B[(size_t)a * q->D + b] * 1e6) +
         2.0 * (q->R - 1) * q->lat;
}

/* A value meets a lower bound: equal up to the rounding of the same
** terms summed in another order (relative 1e-12). */
static inline bool ppi_map_meets(double v, double lower)
{
  return v <= lower * (1 + PPI_REL_ROUNDING);
}

/* The problem of R replicas of g on c under objective obj (MAP_*), its
** arrays in ar (map.c). */
PP_INTERNAL pp_status ppi_map_build(pp_ctx *ctx, struct ppi_arena *ar,
                                    const pp_stage_graph *g,
                                    const pp_cluster *c, int32_t R, int obj,
                                    struct ppi_map *q);

/* Fill q's bw_sorted and twin from its B and cu (ppi_map_build, and the
** sub-problems of map_parts.c). */
PP_INTERNAL pp_status ppi_map_finish(pp_ctx *ctx, struct ppi_arena *ar,
                                     struct ppi_map *q);

/* Stage s's allreduce term under p (0 under p2p), and the time of stage
** replica v given that term: the objective is the largest such time. */
PP_INTERNAL double ppi_map_ring(const struct ppi_map *q, const int32_t *p,
                                int32_t s);
PP_INTERNAL double ppi_map_time(const struct ppi_map *q, const int32_t *p,
                                int32_t v, double ring);

/* The objective of a complete mapping (p[v] devices); t[v] (may be NULL)
** receives every stage replica's time. */
PP_INTERNAL double ppi_map_value(const struct ppi_map *q, const int32_t *p,
                                 double *t);
/* Eq. (8)/(9) per stage and device, tightened by a bottleneck assignment
** (replicas need distinct devices): a lower bound on every mapping. */
PP_INTERNAL double ppi_map_lower_bound(const pp_ctx *ctx,
                                       const struct ppi_map *q);
/* The Eq. 8/9 bound with the bottleneck assignment alone (map_cost.c). */
PP_INTERNAL double ppi_map_matching_bound(const pp_ctx *ctx,
                                          const struct ppi_map *q);

/* The group bound (map_bound.c): grp[d] in 0..G-1 a partition of the
** devices; labelling steps stop after `budget' nodes (the bound stays
** valid).  0 under the allreduce objective.
** TUNING: MAP_GROUP_BUDGET nodes per labelling step: the step runs on
** every lower bound the search asks for, so it must stay at milliseconds;
** cut short, the bound is only weaker (387d41b; no sweep recorded). */
enum { MAP_GROUP_BUDGET = 200000 };
PP_INTERNAL double ppi_map_group_bound(const pp_ctx *ctx,
                                       const struct ppi_map *q,
                                       const int32_t *grp, int64_t budget);
/* Up to max_parts partitions found from the bandwidths, grp[i D + d];
** returns how many. */
PP_INTERNAL int32_t ppi_map_groups(const pp_ctx *ctx, const struct ppi_map *q,
                                   int32_t *grp, int32_t max_parts);
/* The largest group bound over the partitions ppi_map_groups finds. */
PP_INTERNAL double ppi_map_group_bounds(const pp_ctx *ctx,
                                        const struct ppi_map *q,
                                        int64_t budget);

/* The exact search (map_search.c). */
struct ppi_map_search {
  double time_limit; /* seconds, whole search */
  int32_t threads;
  double parts_s;    /* at most this for map_parts.c's start; 0: none */
  int64_t max_nodes; /* a budget of nodes (0: none; pp_map_params) */
  /* results */
  double value, lower;
  bool optimal, timed_out; /* timed_out: the clock or the stop flag */
  int64_t nodes;
  double seconds;
};
PP_INTERNAL pp_status ppi_map_exact(pp_ctx *ctx, const struct ppi_map *q,
                                    const int32_t *start, int32_t *p,
                                    struct ppi_map_search *out);
/* A solver of one part for part and solve: the exact search, passed down
** by map_search.c (the search starts from part and solve, which solves
** each part with the search; the pointer keeps map_parts.c below
** map_search.c, with no circle between the files). */
typedef pp_status (*ppi_map_solver)(pp_ctx *ctx, const struct ppi_map *q,
                                    const int32_t *start, int32_t *p,
                                    struct ppi_map_search *out);

/* Part and solve (map_parts.c): under p2p, split the devices into one
** part per replica and solve each part alone, on up to `threads' threads
** (each with a copy of ctx: the allocator hook is called from several
** threads), within budget_s seconds, stopping early once the value
** reaches `goal' (a lower bound); *found is false when it does not apply
** (the allreduce and full objectives, one replica, more than
** PPI_MAP_PARTS_MAX_DEVICES devices) or Scotch fails.  Each part is solved
** by solve. */
PP_INTERNAL pp_status ppi_map_parts(pp_ctx *ctx, const struct ppi_map *q,
                                    double budget_s, double goal,
                                    int32_t threads, ppi_map_solver solve,
                                    int32_t *p, bool *found);

/* Baselines (map_baseline.c, map_scotch.c). */
PP_INTERNAL void ppi_map_cs(const struct ppi_map *q, int32_t *p);
PP_INTERNAL void ppi_map_megatron(const struct ppi_map *q, int32_t *p);
PP_INTERNAL pp_status ppi_map_random(pp_ctx *ctx, const struct ppi_map *q,
                                     int64_t samples, uint64_t seed,
                                     int32_t *p);
PP_INTERNAL pp_status ppi_map_anneal(pp_ctx *ctx, const struct ppi_map *q,
                                     int64_t steps, uint64_t seed,
                                     const int32_t *start, int32_t *p);
/* TUNING: the steps of an annealed start for n stage replicas (the exact
** search's upper end, and each part's in part and solve): 200 random
** moves per replica plus 2000 for the smallest problems, linear so the
** start costs little next to the search; set with the annealed start and
** bench_map's grid of [Parmesan] Table 2 (0618c49), no sweep of the value
** recorded.  One value for both callers (map.c and map_parts.c wrote it
** twice). */
static inline int64_t ppi_map_anneal_steps(int32_t n)
{
  return 200 * (int64_t)n + 2000;
}
PP_INTERNAL pp_status ppi_map_scotch(pp_ctx *ctx, const struct ppi_map *q,
                                     int32_t *p);

#endif /* PP_MAP_H */

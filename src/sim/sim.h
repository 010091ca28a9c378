/* SPDX-License-Identifier: MIT */
/*
** The simulator's internals shared between sim.c (the engine),
** sim_route.c (paths for link sharing) and sim_write.c (its writers).
*/
#ifndef PP_SIM_H
#define PP_SIM_H

#include "cost/cost.h"

/* Paths over a link graph. */
struct ppi_routes {
  const struct pp_cluster *c;
  int32_t nvert;
  uint8_t *keep;      /* links of the routing graph */
  int32_t *off, *adj; /* adjacency (link ids) of kept links */
  int32_t **tree;     /* per source device, NULL until used */
};
PP_INTERNAL pp_status ppi_routes_init(pp_ctx *ctx, struct ppi_routes *rt,
                                      const struct pp_cluster *c);
/* The directed link resources from device i to j, source first; *n = 0
** for a cluster without a link graph. */
PP_INTERNAL pp_status ppi_route_path(pp_ctx *ctx, struct ppi_routes *rt,
                                     int32_t i, int32_t j, int32_t *res,
                                     int32_t cap, int32_t *n);
PP_INTERNAL double ppi_route_gbps(const struct ppi_routes *rt, int32_t res);
PP_INTERNAL void ppi_routes_free(pp_ctx *ctx, struct ppi_routes *rt);

/* A memory sample: device d holds bytes from time t on. */
struct ppi_memsample {
  double t, bytes;
  int32_t d;
};

/* The finished simulation. */
struct pp_sim {
  struct ppi_arena arena;
  pp_sim_summary sum;
  int32_t ndev, S;
  pp_sim_device *dev;
  char **dev_name;
  char *plan_src, *model_name, *cluster_name;
  pp_schedule sched;
  pp_precision precision; /* the run's: the model's dtype for PREC_MODEL */
  pp_engine engine;
  int32_t zero;
  pp_sim_network net;
  int64_t nev;
  pp_sim_event *ev; /* sorted by start */
  int64_t ncrit;
  int64_t *crit; /* indices into ev */
  int64_t nmem;
  struct ppi_memsample *mem; /* by time */
};

#endif /* PP_SIM_H */

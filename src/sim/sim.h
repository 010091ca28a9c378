/* SPDX-License-Identifier: MIT */
/*
** The simulator's internals shared between sim.c (the engine) and
** sim_write.c (its writers).
*/
#ifndef PP_SIM_H
#define PP_SIM_H

#include "cost/cost.h"

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

/* pp_simulate, stopping with PP_ECANCELED (and the context's message)
** once stop says so (NULL: never): the planner's bound on the time it
** spends simulating its best plans. */
PP_INTERNAL pp_status ppi_simulate_until(pp_ctx *ctx, const pp_plan *p,
                                         const pp_model *m, const pp_cluster *c,
                                         const pp_cost_params *cp,
                                         const struct ppi_stop *stop,
                                         pp_sim **out);

#endif /* PP_SIM_H */

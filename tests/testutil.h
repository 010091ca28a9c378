/* SPDX-License-Identifier: MIT */
/*
** Helpers shared by the unit tests: a context whose allocator can be
** told to fail the k-th allocation and that counts live bytes (the
** allocation-failure sweep), loading from strings, and running the tool.
*/
#ifndef PP_TESTUTIL_H
#define PP_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "parplan.h"

/* A counting allocator.  fail_at > 0 makes the fail_at-th allocation
** (counting from 1 since the last reset) return NULL. */
struct tu_alloc {
  long count;   /* allocations so far */
  long fail_at; /* 0: never fail */
  long live;    /* blocks not yet freed */
  size_t bytes; /* bytes not yet freed */
};

pp_ctx *tu_ctx(struct tu_alloc *a);
void tu_reset(struct tu_alloc *a, long fail_at);

/* Load from text through the public readers. */
pp_status tu_model_json(pp_ctx *ctx, const char *json, pp_model **out);
pp_status tu_cluster_json(pp_ctx *ctx, const char *json, pp_cluster **out);

/* One operator for tu_model_ops. */
struct tu_op {
  double f, b, u; /* forward, backward, update ms */
  int64_t param, out, saved;
};
/* A model of n operators o0, o1, ...: a chain (edges implied), or, with
** nextra > 0, the chain plus the extra (from, to) edges, each carrying
** the source's output.  Fails the test on error. */
pp_model *tu_model_ops(pp_ctx *ctx, int n, const struct tu_op *ops,
                       const int (*extra)[2], int nextra);

/* A path under the source tree (static buffer). */
const char *tu_path(const char *rel);
/* A fresh temporary directory path + name (static buffer). */
const char *tu_tmp(const char *name);

/* Run the tool with arguments (a shell command line after "parplan"),
** capture stdout and stderr into buffers (NUL-terminated, static), and
** return the exit status. */
int tu_run(const char *args, char **out, char **err);
/* The same for any shell command line. */
int tu_sh(const char *command, char **out, char **err);

/* Random cuts of n operators into S non-empty runs: cut[0] = 0 <
** cut[1] < ... < cut[S] = n. */
void tu_random_cuts(uint64_t *rng, int n, int S, int *cut);

/* A plan of the model's operators in order, stage s holding operators
** cut[s] .. cut[s+1]-1 with R[s] replicas of pa->tp devices each, the
** stages round-robin over P groups of devices (stage s on group s mod P;
** P = S: a device per stage replica), devices numbered group by group,
** replica by replica, tp rank fastest (Megatron's and DeepSpeed's rank
** order).  Returns pp_plan_builder_finish's status (*out NULL on error). */
pp_status tu_cut_plan(pp_ctx *ctx, const pp_plan_params *pa, int S,
                      const int *cut, const int *R, int P, pp_plan **out);

/* Whether one of x's warnings contains needle. */
bool tu_export_warned(const pp_export *x, const char *needle);

/* Assert that an error happened, with code rc and a message containing
** every string of the NULL-terminated list. */
void tu_expect_error(pp_ctx *ctx, pp_status got, pp_status rc, ...);

/* A deterministic xorshift64 stream for random test instances: a value
** in [0, n), n > 0.  *state must start non-zero. */
uint32_t tu_rand(uint64_t *state, uint32_t n);
/* The next permutation of p[0:n-1] in lexicographic order; false after
** the last. */
bool tu_next_perm(int *p, int n);

/* 1F1B*'s groups ([MadPipe] 4.1) computed independently of sched.c:
** prefix sums from the end and, for each group, the farthest start whose
** sum still fits T, by binary search.  g[i] = 1 for the last resource. */
void tu_star_groups(const double *load, int n, double T, int *g);

/* Read a whole file into a malloc'd string (NULL if unreadable). */
char *tu_slurp(const char *path, size_t *len);

/* ---- fixtures (cmocka_unit_test_setup_teardown) ----------------------- */

/* What a fixture hands a test in *state: a context on a counting
** allocator and, when the setup names them, a model and a cluster loaded
** from specs (pp_model_load, pp_cluster_load). */
struct tu_fix {
  struct tu_alloc a;
  pp_ctx *ctx;
  pp_model *m;
  pp_cluster *c;
};
/* Set *state to a new tu_fix with a context, loading model and cluster
** when not NULL; 0, or -1 (the test is not run) when a load fails. */
int tu_fix_setup(void **state, const char *model, const char *cluster);
/* A context only: for cmocka_unit_test_setup_teardown(t, tu_setup_ctx,
** tu_teardown). */
int tu_setup_ctx(void **state);
/* Destroy what tu_fix_setup made, then fail the test if a block the
** context allocated is still live (a leak) or the sizes freed differ
** from the sizes allocated. */
int tu_teardown(void **state);
/* The fixture's context, in a test run with one of the setups above. */
pp_ctx *tu_fix_ctx(void **state);
/* A test run with a fresh context and checked for leaks. */
#define TU_CTX_TEST(f)                                                         \
  cmocka_unit_test_setup_teardown(f, tu_setup_ctx, tu_teardown)
/* The same with AMP's GPT-2 and its heterogeneous cluster loaded (the
** model and cluster of examples/plan-gpt2-amp.json): fx->m, fx->c. */
int tu_setup_gpt2(void **state);
#define TU_GPT2_TEST(f)                                                        \
  cmocka_unit_test_setup_teardown(f, tu_setup_gpt2, tu_teardown)

/* ---- small models, clusters and plans built in code ------------------- */

#define TU_MAXOP 32
#define TU_MAXDEV 16

/* got equals want to 1e-9, relative above 1 and absolute below. */
void tu_near(double got, double want, const char *what);

/* ndev devices "g0", "g1", ...; type[d] indexes speeds[] (types "t0",
** "t1", ..., each of mem_gib), node[d] their nodes (NULL: one node
** each); bw a full matrix or NULL for a uniform gbps; latency lat_us. */
pp_cluster *tu_cluster(pp_ctx *ctx, int ndev, const int *type,
                       const double *speeds, int ntype, const int *node,
                       const double *bw, double gbps, double lat_us,
                       double mem_gib);

/* A plan of contiguous stages: stage s holds operators lo[s] ..
** lo[s+1]-1 and R[s] replicas, replica r on devices dev[s][r*tp ..]. */
struct tu_plan_spec {
  int S, tp;
  int64_t gbs;
  int mbs; /* 0: 1 */
  pp_schedule sched;
  int recompute;
  pp_optimizer opt;
  double period;
  int lo[TU_MAXOP + 1];
  int R[TU_MAXOP];
  int dev[TU_MAXOP][TU_MAXDEV * 2];
};
pp_plan *tu_plan(pp_ctx *ctx, const struct tu_plan_spec *x);
/* R replicas per stage, replica r of stage s, rank t on device
** (s * R + r) * tp + t. */
void tu_lay_out(struct tu_plan_spec *x, int R);
/* A spec of S stages of per operators each (stage s holds operators
** s * per ..), R replicas per stage laid out as above, global batch gbs,
** schedule sc; everything else zero (tp 1, SGD, no recomputation). */
void tu_spec(struct tu_plan_spec *x, int S, int per, int R, int64_t gbs,
             pp_schedule sc);

/* What a test case builds, destroyed together (NULL members skipped). */
struct tu_built {
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_eval *e;
  pp_sim *s;
};
void tu_built_free(struct tu_built *b);

/* pp_evaluate and pp_simulate with default parameters but for the
** allreduce (and the network); fail the test on error. */
pp_eval *tu_eval(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                 const pp_cluster *c, pp_allreduce ar);
pp_sim *tu_sim(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
               const pp_cluster *c, pp_allreduce ar, pp_sim_network net);
double tu_eval_ms(const pp_eval *e);
double tu_sim_ms(const pp_sim *s);

/* Check a replica's compute order of n entries over gas micro-batches:
** every micro-batch forward once, then backward once, nothing else.
** Returns the most micro-batches whose forward ran and backward did not
** (the activations kept at the peak). */
int tu_order_inflight(const pp_sched_op *o, int64_t n, int64_t gas);

#endif

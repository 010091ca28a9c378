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

#endif

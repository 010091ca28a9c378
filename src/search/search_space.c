/* SPDX-License-Identifier: MIT */
/*
** The planner's space ([AMP] 3; docs/PLANNER.md, "The search
** space"): the points
**     device set E x tp x pp x dp (pp dp tp = |E|) x micro-batch size
**     x schedule x recomputation.
** Device sets: every non-empty set of device types (beyond AMP: slow
** types may stay idle), and each of them without its slowest node or
** cut to a power of two.  Devices are ordered by node, nodes fastest
** first (their slowest device), so stage s of a point holds devices
** [s dp tp, (s+1) dp tp) of the order, replica r the tp devices
** [(s dp + r) tp, ...) inside one node: Megatron's rank order, where the
** fast nodes hold the first stages and the partition gives the slow
** ones less work; a set of several types also with its type blocks in
** every other order (add_orders: a slow node may hold the first or a
** middle stage).  Micro-batch sizes: every divisor of the per-replica
** batch.  Each point carries its lower bound (pp_lower_bound at its tp,
** micro-batch size and recomputation, computed once per triple), and
** the points are sorted by it, lowest first, so that a good K-th time is
** found early and prunes the rest.
**
** Objective: every point the planner may price, the most promising
** first, with a bound that is never above any plan of the point.
** Invariant: a point's idx is its place in the enumeration order, which
** breaks every tie, so the order does not depend on qsort.
** Complexity: O(sets x orders x tp x pp x divisors x 2 x 3) points
** (orders at most ORDERS_MAX), each O(1) after its bound; O(D^2) to
** order the devices.
** Source: docs/PLANNER.md, "The search space".
*/
#include "search/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIVISORS 16384 /* two halves: the large divisors from 8,192 */

static int cmp_dev(const void *x, const void *y, const double *key,
                   const int32_t *node)
{
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  if (key[a] != key[b])
    return key[a] > key[b] ? -1 : 1;
  if (node[a] != node[b])
    return node[a] < node[b] ? -1 : 1;
  return (a > b) - (a < b);
}

/* qsort has no user pointer: sort indices by insertion (D is at most
** PP_MAX_DEVICES and this runs once). */
static void sort_devices(int32_t *d, int32_t n, const double *key,
                         const int32_t *node)
{
  int32_t i, j;
  for (i = 1; i < n; i++) {
    int32_t x = d[i];
    for (j = i; j > 0 && cmp_dev(&d[j - 1], &x, key, node) > 0; j--)
      d[j] = d[j - 1];
    d[j] = x;
  }
}

static bool same_set(const struct dset *a, const int32_t *dev, int32_t n)
{
  return a->n == n && !memcmp(a->dev, dev, (size_t)n * sizeof *dev);
}

static pp_status add_set(pp_ctx *ctx, struct space *sp, const pp_cluster *c,
                         const int32_t *dev, int32_t n)
{
  int32_t i;
  struct dset *s;
  if (n < 1)
    return PP_OK;
  for (i = 0; i < sp->nset; i++)
    if (same_set(&sp->sets[i], dev, n))
      return PP_OK;
  s = &sp->sets[sp->nset];
  if (!(s->dev = ppi_alloc(ctx, (size_t)n * sizeof *dev)))
    return PP_ENOMEM;
  memcpy(s->dev, dev, (size_t)n * sizeof *dev);
  s->n = n;
  s->mixed = false;
  for (i = 1; i < n; i++)
    if (pp_cluster_device_type(c, dev[i]) != pp_cluster_device_type(c, dev[0]))
      s->mixed = true;
  sp->nset++;
  return PP_OK;
}

/* TUNING: a mixed set of at most 3 type blocks is tried in every order
** of its blocks (at most 6), one of more blocks fastest first and
** slowest first only: the points grow with the orders, and 4 types
** already give 24. */
#define ORDER_BLOCKS_MAX 3
#define ORDERS_MAX 6

/* Set k again with its type blocks (the runs of one device type in its
** order, which keep their own order) in every other order, or only
** reversed when it has more than ORDER_BLOCKS_MAX blocks: the stage
** order over device types (a slow node need not hold the last stages). */
static pp_status add_orders(pp_ctx *ctx, struct space *sp, const pp_cluster *c,
                            int32_t k, int32_t *buf)
{
  const struct dset *s = &sp->sets[k];
  int32_t st[ORDER_BLOCKS_MAX + 2], perm[ORDER_BLOCKS_MAX], K = 0, i, j, n;
  int32_t total = 1, p;
  pp_status rc;
  for (i = 0; i < s->n; i++)
    if (i == 0 || pp_cluster_device_type(c, s->dev[i]) !=
                      pp_cluster_device_type(c, s->dev[i - 1])) {
      if (K > ORDER_BLOCKS_MAX)
        break;
      st[K++] = i;
    }
  if (K > ORDER_BLOCKS_MAX) { /* reversed only: each run from its end */
    int32_t end = s->n;
    for (i = s->n - 1, n = 0; i >= 0; i--)
      if (i == 0 || pp_cluster_device_type(c, s->dev[i]) !=
                        pp_cluster_device_type(c, s->dev[i - 1])) {
        memcpy(buf + n, s->dev + i, (size_t)(end - i) * sizeof *buf);
        n += end - i;
        end = i;
      }
    return add_set(ctx, sp, c, buf, n);
  }
  st[K] = s->n;
  for (i = 2; i <= K; i++)
    total *= i;
  /* the permutations in lexicographic order by their rank (factorial
  ** base), the identity (rank 0) left out */
  for (p = 1; p < total; p++) {
    int32_t used = 0, r = p, f = total;
    for (i = 0; i < K; i++) {
      int32_t q, c2 = 0;
      f /= K - i;
      q = r / f;
      r %= f;
      for (j = 0; j < K; j++)
        if (!(used >> j & 1) && c2++ == q)
          break;
      perm[i] = j;
      used |= 1 << j;
    }
    for (i = 0, n = 0; i < K; i++) {
      int32_t b = perm[i], len = st[b + 1] - st[b];
      memcpy(buf + n, s->dev + st[b], (size_t)len * sizeof *buf);
      n += len;
    }
    if ((rc = add_set(ctx, sp, c, buf, n)))
      return rc;
  }
  return PP_OK;
}

static pp_status make_sets(pp_ctx *ctx, struct space *sp)
{
  const pp_cluster *c = sp->c;
  int32_t D = pp_cluster_ndev(c), T = pp_cluster_ntype(c), d, i, n, cap;
  double *speed = NULL, *key = NULL;
  int32_t *node = NULL, *order = NULL, *buf = NULL;
  unsigned mask, full = 0, nmask;
  pp_status rc = PP_ENOMEM;

  speed = ppi_alloc(ctx, (size_t)D * sizeof *speed);
  key = ppi_alloc(ctx, (size_t)D * sizeof *key);
  node = ppi_alloc(ctx, (size_t)D * sizeof *node);
  order = ppi_alloc(ctx, (size_t)D * sizeof *order);
  buf = ppi_alloc(ctx, (size_t)D * sizeof *buf);
  if (!speed || !key || !node || !order || !buf)
    goto done;
  for (d = 0; d < D; d++) {
    pp_type_key k = pp_model_type_key(sp->m, c, d);
    speed[d] = k.speed;
    node[d] = pp_cluster_device_node(c, d);
    order[d] = d;
    if (T <= 16)
      full |= 1u << pp_cluster_device_type(c, d);
  }
  /* a node's key: its slowest device's speed (the node's pace) */
  for (d = 0; d < D; d++) {
    key[d] = speed[d];
    for (i = 0; i < D; i++)
      if (node[i] == node[d] && speed[i] < key[d])
        key[d] = speed[i];
  }
  sort_devices(order, D, key, node);
  /* TUNING: every subset of device types up to 6 types (64 subsets, 3
  ** device sets each); a cluster of more types keeps them all */
  nmask = sp->p->subsets && T <= 6 ? 1u << T : 0;
  cap = 3 * (int32_t)(nmask ? nmask : 2) * ORDERS_MAX;
  if (!(sp->sets = ppi_calloc(ctx, (size_t)cap, sizeof *sp->sets)))
    goto done;
  sp->setcap = cap;
  if ((rc = add_set(ctx, sp, c, order, D)))
    goto done;
  for (mask = 1; mask < nmask; mask++) {
    if ((mask & full) != mask)
      continue;
    for (d = 0, n = 0; d < D; d++)
      if (mask >> pp_cluster_device_type(c, order[d]) & 1)
        buf[n++] = order[d];
    if ((rc = add_set(ctx, sp, c, buf, n)))
      goto done;
  }
  if (sp->p->subsets) { /* each set less its slowest node, or cut to 2^k */
    int32_t k, ns = sp->nset;
    for (k = 0; k < ns; k++) {
      const struct dset *s = &sp->sets[k];
      int32_t last = node[s->dev[s->n - 1]], m = s->n, pw = 1;
      while (m > 0 && node[s->dev[m - 1]] == last)
        m--;
      memcpy(buf, s->dev, (size_t)s->n * sizeof *buf);
      if (m > 0 && (rc = add_set(ctx, sp, c, buf, m)))
        goto done;
      while (pw * 2 <= sp->sets[k].n)
        pw *= 2;
      if (pw < sp->sets[k].n && (rc = add_set(ctx, sp, c, buf, pw)))
        goto done;
    }
  }
  {
    int32_t k, ns = sp->nset;
    for (k = 0; k < ns; k++)
      if (sp->sets[k].mixed && (rc = add_orders(ctx, sp, c, k, buf)))
        goto done;
  }
  rc = PP_OK;
done:
  ppi_free(ctx, speed, (size_t)D * sizeof *speed);
  ppi_free(ctx, key, (size_t)D * sizeof *key);
  ppi_free(ctx, node, (size_t)D * sizeof *node);
  ppi_free(ctx, order, (size_t)D * sizeof *order);
  ppi_free(ctx, buf, (size_t)D * sizeof *buf);
  return rc;
}

/* Every tp block of the order inside one node (Megatron keeps tensor
** parallelism on NVLink). */
static bool tp_fits(const pp_cluster *c, const struct dset *s, int32_t tp)
{
  int32_t i;
  for (i = 0; i < s->n; i++)
    if (pp_cluster_device_node(c, s->dev[i]) !=
        pp_cluster_device_node(c, s->dev[i - i % tp]))
      return false;
  return true;
}

int32_t ppi_node_size(const pp_cluster *c)
{
  int32_t D = pp_cluster_ndev(c), d, run = 0, best = 1, prev = -1;
  /* devices of a node are usually listed together; count runs */
  for (d = 0; d < D; d++) {
    int32_t nd = pp_cluster_device_node(c, d);
    run = nd == prev ? run + 1 : 1;
    prev = nd;
    best = run > best ? run : best;
  }
  return best;
}

/* TUNING: per-stage degrees (tpv_points) up to TPV_MAX_DEGREE (each
** block's choices sit in a stack array), on sets of at most
** TPV_MAX_BLOCKS type blocks (the vectors grow as degrees^blocks). */
#define TPV_MAX_DEGREE 30
#define TPV_MAX_BLOCKS 3

/* The lower bounds by (tp, micro-batch, recomputation), computed once;
** a point with per-stage degrees keys its bound by its types' degrees
** (nk pairs, type kt[i] at degree kd[i]; tp 0). */
struct lbent {
  int32_t tp, mbs, nk;
  int32_t kt[TPV_MAX_BLOCKS], kd[TPV_MAX_BLOCKS];
  int8_t rec;
  double lb;
};
struct lbtab {
  struct ppi_vec e; /* struct lbent */
};

static pp_status lb_get(pp_ctx *ctx, struct lbtab *t, const struct space *sp,
                        const struct lbent *key, double *out)
{
  size_t i;
  struct lbent x = *key;
  for (i = 0; i < t->e.n; i++) {
    const struct lbent *y = &PPI_VEC_AT(&t->e, struct lbent, i);
    if (y->tp == x.tp && y->mbs == x.mbs && y->rec == x.rec && y->nk == x.nk &&
        !memcmp(y->kt, x.kt, (size_t)x.nk * sizeof *x.kt) &&
        !memcmp(y->kd, x.kd, (size_t)x.nk * sizeof *x.kd)) {
      *out = y->lb;
      return PP_OK;
    }
  }
  {
    int32_t T = pp_cluster_ntype(sp->c), tps[TPV_MAX_BLOCKS + 1], ntp = 0, j, q,
            *type_tp = NULL;
    double spd = INFINITY;
    pp_status rc;
    if (x.tp > 0)
      tps[ntp++] = x.tp;
    for (j = 0; j < x.nk; j++) {
      for (q = 0; q < ntp && tps[q] != x.kd[j]; q++)
        ;
      if (q == ntp)
        tps[ntp++] = x.kd[j];
    }
    if (x.nk > 0) {
      if (!(type_tp = ppi_calloc(ctx, (size_t)T, sizeof *type_tp)))
        return PP_ENOMEM;
      for (j = 0; j < x.nk; j++)
        type_tp[x.kt[j]] = x.kd[j];
    }
    rc = ppi_lower_bound_tps(ctx, sp->m, sp->c, sp->p->global_batch, tps, ntp,
                             type_tp, x.mbs, x.rec, PP_PREC_MODEL, out);
    if (type_tp)
      ppi_free(ctx, type_tp, (size_t)T * sizeof *type_tp);
    if (rc)
      return rc;
    /* a calibration that makes compute or the network faster lowers the
    ** bound with it (fixed costs only add): the scaled bound stays a
    ** bound (at the degree it speeds up most) */
    for (j = 0; j < ntp; j++) {
      double y = ppi_calib_speedup(sp->p->calibration, x.mbs,
                                   pp_model_micro_batch(sp->m), tps[j]);
      if (y < spd)
        spd = y;
    }
    *out *= spd;
  }
  x.lb = *out;
  return ppi_vec_push(ctx, &t->e, &x);
}

static void lb_free(pp_ctx *ctx, struct lbtab *t)
{
  ppi_vec_free(ctx, &t->e);
}

int ppi_point_cmp(const void *x, const void *y)
{
  const struct point *a = x, *b = y;
  if (a->lb != b->lb)
    return a->lb < b->lb ? -1 : 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

/* The divisors of B (at most lim when lim > 0, and below 2^31) in
** increasing order, into d[MAX_DIVISORS]: trial division up to sqrt(B).
** No number below 2^40 has more than 6,720 divisors. */
static int64_t divisors(int64_t B, int64_t lim, int64_t *d)
{
  int64_t n = 0, i, nhi = 0;
  int64_t *hi = d + MAX_DIVISORS / 2;
  for (i = 1; i <= B / i; i++) {
    if (B % i)
      continue;
    d[n++] = i;
    if (i != B / i)
      hi[nhi++] = B / i;
  }
  while (nhi > 0) /* the large ones, increasing */
    d[n++] = hi[--nhi];
  for (i = 0; i < n && (!lim || d[i] <= lim) && d[i] <= INT32_MAX; i++)
    ;
  return i;
}

/* The fill bound (fill_bound) of a point on one device type: per (tp,
** micro-batch, recomputation, type), the prefix sums over the chain
** view's layers of forward + backward (+ the recomputed forward) as the
** estimate and the simulator look them up, and the calibration's factor
** and fixed cost per micro-batch. */
struct fill_ent {
  int32_t tp, mbs, type;
  int8_t rec, ok; /* ok 0: a time could not be looked up (no bound) */
  double fac, step;
  double *pre;  /* [L + 1] */
  double *fpre; /* [L + 1] the forward's alone */
  double *par;  /* [L + 1] parameter bytes per rank (ppi_size_prefix), or
                   NULL: no reduction term */
};

static pp_status fill_get(pp_ctx *ctx, struct ppi_vec *t,
                          const struct space *sp, int32_t tp, int32_t mbs,
                          int rec, int32_t dev, const struct fill_ent **out)
{
  int32_t type = pp_cluster_device_type(sp->c, dev), L = sp->L;
  struct fill_ent e;
  size_t k;
  for (k = 0; k < t->n; k++) {
    const struct fill_ent *x = &PPI_VEC_AT(t, struct fill_ent, k);
    if (x->tp == tp && x->mbs == mbs && x->rec == rec && x->type == type) {
      *out = x;
      return PP_OK;
    }
  }
  memset(&e, 0, sizeof e);
  e.tp = tp;
  e.mbs = mbs;
  e.rec = (int8_t)rec;
  e.type = type;
  if (!(e.pre = ppi_calloc(ctx, 4 * ((size_t)L + 1), sizeof *e.pre)))
    return PP_ENOMEM;
  e.fpre = e.pre + 3 * ((size_t)L + 1);
  e.ok = (int8_t)ppi_layer_prefix(ctx, sp, dev, tp, mbs, rec, e.pre, e.fpre,
                                  &e.fac, &e.step);
  if (sp->ar_ms_per_byte > 0 &&
      ppi_size_prefix(ctx, sp, tp, mbs, e.pre + L + 1, e.pre + 2 * (L + 1)))
    e.par = e.pre + L + 1;
  if (ppi_vec_push(ctx, t, &e)) {
    ppi_free(ctx, e.pre, 4 * ((size_t)L + 1) * sizeof *e.pre);
    return ctx->err;
  }
  *out = &PPI_VEC_AT(t, struct fill_ent, t->n - 1);
  return PP_OK;
}

static void fill_free(pp_ctx *ctx, struct ppi_vec *t, int32_t L)
{
  size_t k;
  for (k = 0; k < t->n; k++)
    ppi_free(ctx, PPI_VEC_AT(t, struct fill_ent, k).pre,
             4 * ((size_t)L + 1) * sizeof(double));
  ppi_vec_free(ctx, t);
}

/* A lower bound on every plan of a point on one device type with S
** stages of contiguous layers and m micro-batches per replica, estimated
** or simulated: stage j's replica is busy m w_j (forward, backward and
** recomputation of its layers, fac x their times + the fixed cost), and
** before its first task the micro-batch's forward, after its last the
** backward, has to pass every earlier stage, so an iteration takes at
** least P_j + m w_j, P_j the earlier stages' work (transfers,
** collectives, the reduction and the step only add; the estimate's fill
** and steady state exceed it too).  On one type, with stage j on layers
** [a, b): fac (m pre[b] - (m - 1) pre[a]) + (j + m) step, which grows
** with b and, m >= 1, does not with a, so the greedy that makes each
** stage as long as the target allows (leaving one layer to each later
** stage) decides whether a target is reachable, and bisection finds the
** least max over j (returned from below: the largest target shown
** unreachable).  O(S log L) per target, 60 targets.
** With a reduction (ar > 0: ms per parameter byte, ppi_ar_rate), stage
** j's gradients are reduced after its last backward, while the earlier
** stages' backward passes drain: with F and B the earlier forwards' and
** backwards' share of P_j, the term is F + m w_j + max(B, ar x the
** stage's parameter bytes) (the estimate adds the largest reduction
** after the fill and the steady state; the simulator starts a stage's
** rings after its last backward).  The max still grows with b and does
** not with a (B grows by a layer's backward, the reduction shrinks), so
** the greedy stays exact. */
static double fill_term(const struct fill_ent *e, int32_t j, int32_t a,
                        int32_t b, double M, double ar)
{
  double F = e->fac * e->fpre[a] + j * e->step;
  double B = e->fac * (e->pre[a] - e->fpre[a]);
  double r = ar > 0 ? ar * (e->par[b] - e->par[a]) : 0;
  return F + M * (e->fac * (e->pre[b] - e->pre[a]) + e->step) + (r > B ? r : B);
}

static double fill_bound(const struct fill_ent *e, int32_t S, int32_t L,
                         int64_t m, double ar)
{
  double lo = 0, hi, M = (double)m;
  int it;
  if (!e->ok || S < 1 || S > L || m < 1)
    return 0;
  if (!e->par)
    ar = 0;
  hi = e->fac * M * e->pre[L] + (S - 1 + M) * e->step + e->fac * e->pre[L] +
       (ar > 0 ? ar * e->par[L] : 0); /* any partition */
  for (it = 0; it < 60; it++) {
    double T = (lo + hi) / 2;
    int32_t a = 0, j;
    bool ok = true;
    for (j = 0; j < S && ok; j++) {
      int32_t bl = a + 1, bh = L - (S - 1 - j), b;
      if (fill_term(e, j, a, bl, M, ar) > T) {
        ok = false;
        break;
      }
      while (bl < bh) { /* the largest b in [bl, bh] within T */
        b = bl + (bh - bl + 1) / 2;
        if (fill_term(e, j, a, b, M, ar) <= T)
          bl = b;
        else
          bh = b - 1;
      }
      a = bl;
    }
    if (ok && a == L)
      hi = T;
    else
      lo = T;
  }
  return lo;
}

/* Per-stage degrees (docs/PLANNER.md, "Per-stage tensor parallelism"):
** on a set of several device types, the stages of each type block (a
** run of one type in the set's order) take the block's own degree, so
** that a slow type of little memory may split its layers over more
** devices.  Block b of n_b devices at degree t_b and dp replicas holds
** n_b / (dp t_b) stages, every stage inside its block and every tp group
** inside a node.  Vectors of one degree are the points make_points
** already has (up to where their stages cross a block).  Degrees up to
** TPV_MAX_DEGREE, sets of at most TPV_MAX_BLOCKS blocks. */

/* What make_points builds the points with. */
struct mk {
  struct lbtab *lt;
  struct ppi_vec *ft; /* struct fill_ent */
  struct ppi_vec *v;  /* struct point */
  int64_t *idx, *div;
  double *space_lb;
};

/* The points of one shape (proto: set, tp, tpv, pp, dp), every
** micro-batch size, recomputation and schedule, with their bounds
** (kproto: the bound's key but micro-batch and recomputation). */
static pp_status shape_points(pp_ctx *ctx, const struct space *sp, struct mk *x,
                              const struct point *proto,
                              const struct lbent *kproto)
{
  const pp_search_params *p = sp->p;
  const struct dset *s = &sp->sets[proto->set];
  int64_t B = p->global_batch / proto->dp, nd, di;
  pp_status rc = PP_OK;
  nd = divisors(B, p->max_micro_batch, x->div);
  for (di = 0; di < nd && !rc; di++) {
    int32_t mbs = (int32_t)x->div[di];
    int sc, rec;
    for (rec = 0; rec <= 1 && !rc; rec++) {
      double lb;
      struct lbent key = *kproto;
      if (p->recompute >= 0 && rec != p->recompute)
        continue;
      key.mbs = mbs;
      key.rec = (int8_t)rec;
      if ((rc = lb_get(ctx, x->lt, sp, &key, &lb)))
        break;
      /* one device type, partitions of the chain view (not an
      ** operator DAG's): the fill bound too */
      if (proto->tpv < 0 && !s->mixed && !sp->dag) {
        const struct fill_ent *fe = NULL;
        double f;
        if ((rc =
                 fill_get(ctx, x->ft, sp, proto->tp, mbs, rec, s->dev[0], &fe)))
          break;
        f = fill_bound(fe, proto->pp, sp->L, B / mbs,
                       ppi_ar_rate(sp, proto->dp));
        if (f > lb)
          lb = f;
      }
      if (lb < *x->space_lb)
        *x->space_lb = lb;
      for (sc = 0; sc < 3 && !rc; sc++) {
        struct point pt = *proto;
        if (!(p->schedules >> sc & 1))
          continue;
        pt.mbs = mbs;
        pt.sched = (int8_t)sc;
        pt.rec = (int8_t)rec;
        pt.lb = pt.mlb = lb;
        pt.idx = (*x->idx)++;
        rc = ppi_vec_push(ctx, x->v, &pt);
      }
    }
  }
  return rc;
}

/* Block b's degree t fits: it divides the block and every group of t
** devices from the block's start lies in one node. */
static bool block_tp_fits(const pp_cluster *c, const struct dset *s, int32_t a,
                          int32_t n, int32_t t)
{
  int32_t i;
  if (n % t)
    return false;
  for (i = a; i < a + n; i++)
    if (pp_cluster_device_node(c, s->dev[i]) !=
        pp_cluster_device_node(c, s->dev[i - (i - a) % t]))
      return false;
  return true;
}

static pp_status tpv_points(pp_ctx *ctx, struct space *sp, int32_t k,
                            int32_t maxtp, struct mk *x)
{
  const pp_search_params *p = sp->p;
  const struct dset *s = &sp->sets[k];
  int32_t st[TPV_MAX_BLOCKS + 1], K = 0, i, b, dp, t[TPV_MAX_BLOCKS];
  int32_t choice[TPV_MAX_BLOCKS][TPV_MAX_DEGREE], nch[TPV_MAX_BLOCKS];
  int32_t pos[TPV_MAX_BLOCKS];
  pp_status rc = PP_OK;

  for (i = 0; i < s->n; i++)
    if (i == 0 || pp_cluster_device_type(sp->c, s->dev[i]) !=
                      pp_cluster_device_type(sp->c, s->dev[i - 1])) {
      if (K == TPV_MAX_BLOCKS)
        return PP_OK;
      st[K++] = i;
    }
  if (K < 2)
    return PP_OK;
  st[K] = s->n;
  for (b = 0; b < K; b++) {
    nch[b] = 0;
    for (i = 1; i <= maxtp && i <= TPV_MAX_DEGREE; i++)
      if (block_tp_fits(sp->c, s, st[b], st[b + 1] - st[b], i))
        choice[b][nch[b]++] = i;
    if (!nch[b])
      return PP_OK;
    pos[b] = 0;
  }
  for (;;) { /* every vector, the first block's degree slowest */
    bool same = true;
    for (b = 0; b < K; b++) {
      t[b] = choice[b][pos[b]];
      same = same && t[b] == t[0];
    }
    for (dp = 1; !same && dp <= s->n && !rc; dp++) {
      int32_t pp = 0, j, first;
      struct point proto;
      struct lbent key;
      bool ok = p->global_batch % dp == 0;
      for (b = 0; b < K && ok; b++) {
        int32_t n = st[b + 1] - st[b];
        ok = (n / t[b]) % dp == 0;
        pp += n / t[b] / (ok ? dp : 1);
      }
      if (!ok || pp > sp->L || !ppi_search_zero_mask(p, pp))
        continue;
      /* the entry: degrees, then the stages' first devices */
      first = (int32_t)sp->tpv_pool.n;
      for (b = 0; b < K && !rc; b++)
        for (j = 0; j < (st[b + 1] - st[b]) / t[b] / dp && !rc; j++)
          rc = ppi_vec_push(ctx, &sp->tpv_pool, &t[b]);
      for (b = 0; b < K && !rc; b++)
        for (j = 0; j < (st[b + 1] - st[b]) / t[b] / dp && !rc; j++) {
          int32_t o = st[b] + j * dp * t[b];
          rc = ppi_vec_push(ctx, &sp->tpv_pool, &o);
        }
      if (!rc)
        rc = ppi_vec_push(ctx, &sp->tpv_pool, &s->n);
      if (!rc)
        rc = ppi_vec_push(ctx, &sp->tpv_first, &first);
      if (rc)
        break;
      memset(&proto, 0, sizeof proto);
      proto.set = k;
      proto.tp = t[0];
      for (b = 1; b < K; b++)
        proto.tp = t[b] < proto.tp ? t[b] : proto.tp;
      proto.tpv = (int32_t)sp->tpv_first.n - 1;
      proto.pp = pp;
      proto.dp = dp;
      memset(&key, 0, sizeof key);
      key.nk = K;
      for (b = 0; b < K; b++) {
        key.kt[b] = pp_cluster_device_type(sp->c, s->dev[st[b]]);
        key.kd[b] = t[b];
      }
      rc = shape_points(ctx, sp, x, &proto, &key);
    }
    if (rc)
      return rc;
    for (b = K - 1; b >= 0 && ++pos[b] == nch[b]; b--)
      pos[b] = 0;
    if (b < 0)
      return PP_OK;
  }
}

/* The points in v (struct point), the most promising first. */
static pp_status make_points(pp_ctx *ctx, struct space *sp, struct ppi_vec *vp,
                             double *space_lb)
{
  const pp_search_params *p = sp->p;
  struct lbtab lt;
  struct ppi_vec v, ft;
  int32_t k, tp, pp, maxtp = p->max_tp ? p->max_tp : ppi_node_size(sp->c);
  pp_status rc = PP_OK;
  int64_t idx = 0, *div;
  struct mk x;

  if (!(div = ppi_alloc(ctx, MAX_DIVISORS * sizeof *div)))
    return PP_ENOMEM;

  /* TUNING: tensor parallelism up to 8 unless asked: the NVLink domain
  ** of the nodes Megatron targets; beyond it tp crosses slow links */
  if (!p->max_tp && maxtp > 8)
    maxtp = 8;
  *space_lb = INFINITY;
  ppi_vec_init(&v, sizeof(struct point));
  ppi_vec_init(&ft, sizeof(struct fill_ent));
  ppi_vec_init(&lt.e, sizeof(struct lbent));
  x.lt = &lt;
  x.ft = &ft;
  x.v = &v;
  x.idx = &idx;
  x.div = div;
  x.space_lb = space_lb;
  for (k = 0; k < sp->nset && !rc; k++) {
    const struct dset *s = &sp->sets[k];
    for (tp = 1; tp <= maxtp && tp <= s->n && !rc; tp++) {
      if (s->n % tp || !tp_fits(sp->c, s, tp))
        continue;
      for (pp = 1; pp <= s->n / tp && pp <= sp->L && !rc; pp++) {
        int32_t dp = s->n / tp / pp;
        struct point proto;
        struct lbent key;
        /* a depth the engine cannot run at the ZeRO stage asked for */
        if ((s->n / tp) % pp || p->global_batch % dp ||
            !ppi_search_zero_mask(p, pp))
          continue;
        memset(&proto, 0, sizeof proto);
        proto.set = k;
        proto.tp = tp;
        proto.tpv = -1;
        proto.pp = pp;
        proto.dp = dp;
        memset(&key, 0, sizeof key);
        key.tp = tp;
        rc = shape_points(ctx, sp, &x, &proto, &key);
      }
    }
  }
  for (k = 0; k < sp->nset && !rc && !p->uniform_tp; k++)
    if (sp->sets[k].mixed)
      rc = tpv_points(ctx, sp, k, maxtp, &x);
  lb_free(ctx, &lt);
  fill_free(ctx, &ft, sp->L);
  ppi_free(ctx, div, MAX_DIVISORS * sizeof *div);
  if (rc) {
    ppi_vec_free(ctx, &v);
    return rc;
  }
  /* the most promising first: a good K-th time early prunes the rest */
  if (v.n)
    qsort(v.data, v.n, sizeof(struct point), ppi_point_cmp);
  *vp = v;
  return PP_OK;
}

pp_status ppi_space_open(pp_ctx *ctx, struct space *sp, struct ppi_vec *pts,
                         double *space_lb)
{
  int32_t D = pp_cluster_ndev(sp->c), i;
  pp_status rc;
  ppi_vec_init(&sp->tpv_first, sizeof(int32_t));
  ppi_vec_init(&sp->tpv_pool, sizeof(int32_t));
  sp->dag = !pp_model_is_chain(sp->m);
  if ((rc = pp_model_chain_view(ctx, sp->m, 0, &sp->view)))
    return rc;
  sp->L = pp_model_nop(sp->view);
  if (!(sp->speed = ppi_alloc(ctx, (size_t)D * sizeof *sp->speed)))
    return PP_ENOMEM;
  for (i = 0; i < D; i++)
    sp->speed[i] = pp_model_type_key(sp->m, sp->c, i).speed;
  /* the fill bounds' reduction term: under the engine-free model a
  ** stage reduces all its gradients after its last backward (engines
  ** overlap all but a bucket, and ZeRO moves them, so they get none),
  ** by a ring or the hierarchical reduction, both moving at least 2 (R
  ** - 1) / R of the bytes over hops no faster than the fastest pair of
  ** the cluster; a calibration may speed the network up (none then).
  ** TUNING: up to 2,048 devices, the pairs read once (4 M) */
  sp->ar_ms_per_byte = 0;
  if (sp->p->engine == PP_ENGINE_GENERIC && !sp->p->calibration && D > 1 &&
      D <= 2048) {
    double x = 0;
    int32_t j;
    for (i = 0; i < D; i++)
      for (j = 0; j < D; j++)
        if (i != j && pp_cluster_bandwidth(sp->c, i, j) > x)
          x = pp_cluster_bandwidth(sp->c, i, j);
    if (x > 0 && isfinite(x))
      sp->ar_ms_per_byte = 1 / (x * 1e6);
  }
  if ((rc = make_sets(ctx, sp)))
    return rc;
  return make_points(ctx, sp, pts, space_lb);
}

void ppi_space_close(pp_ctx *ctx, struct space *sp, struct ppi_vec *pts)
{
  int32_t i;
  for (i = 0; i < sp->nset; i++)
    ppi_free(ctx, sp->sets[i].dev, (size_t)sp->sets[i].n * sizeof(int32_t));
  ppi_free(ctx, sp->sets, (size_t)sp->setcap * sizeof *sp->sets);
  if (sp->speed)
    ppi_free(ctx, sp->speed,
             (size_t)pp_cluster_ndev(sp->c) * sizeof *sp->speed);
  pp_model_destroy(sp->view);
  ppi_vec_free(ctx, &sp->tpv_first);
  ppi_vec_free(ctx, &sp->tpv_pool);
  ppi_vec_free(ctx, pts);
}

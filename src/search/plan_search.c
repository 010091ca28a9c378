/* SPDX-License-Identifier: MIT */
/*
** The planner: AMP's strategy search ([AMP] 3) over every parallel
** dimension, on top of the partitioners, the mapper, the cost model and
** the simulator.
**
** Objective: the plan of least iteration time (the simulator's, among
** the K plans of least analytic time) that fits in every device's
** memory, over the points
**     device set E x tp x pp x dp (pp dp tp = |E|) x micro-batch size
**     x schedule x recomputation.
** Device sets: every non-empty set of device types (beyond AMP: slow
** types may stay idle), and each of them without its slowest node or
** cut to a power of two.  Devices are ordered by node, nodes fastest
** first (their slowest device), so stage s of a point holds devices
** [s dp tp, (s+1) dp tp) of the order, replica r the tp devices
** [(s dp + r) tp, ...) inside one node: Megatron's rank order, where the
** fast nodes hold the first stages and the partition gives the slow
** ones less work.  Micro-batch sizes: every divisor of the per-replica
** batch.
**
** Per point: (1) a lower bound (pp_lower_bound at the point's tp,
** micro-batch size and recomputation) prunes the point when it exceeds
** the K-th best time found; (2) the chain is partitioned exactly under
** AMP's objective with the allreduce term AMP leaves out, each stage on
** the slowest device of its group (mixed types: fast stages get more
** layers), memory-aware under the schedule's in-flight counts (1F1B*
** uses 1F1B's, which are never lower); an operator DAG on one device
** type is also partitioned at the operator level (Parmesan phase 1) and
** the better one is kept; short chains (at most 2,000 partitions) are
** partitioned by trying every partition under the estimate itself; (3)
** the plan is checked and priced (pp_evaluate); a plan that does not fit
** in memory is never kept; (4) a 1F1B* point on one device type (tp 1,
** no recomputation) whose best plan does not fit or fills a device past
** 90% is recorded.  After the enumeration, MadPipe ([MadPipe]) runs on
** the recorded points, lowest bound first, until p->madpipe of them gave
** a plan that fits (3 p->madpipe tried at most); its period cap (the best
** estimate / gas) stops runs that cannot win.  The best K of the
** enumeration and the best K of MadPipe are then placed by the exact
** mapper (tp = 1, up to 512 devices, map_time_s each; kept only when the
** estimate improves) and simulated; the K best by simulated time are the
** result, so MadPipe never displaces a plan that simulates better.
**
** Invariant: the kept list holds the K best fitting points seen, by
** (estimate, enumeration index); a point is pruned only when its bound
** exceeds the K-th kept estimate, so it could not have entered the list.
** Determinism: points are split among the threads in rounds, each
** thread prunes against the list as it stood at the round's start plus
** its own finds, and the lists are merged in index order after every
** round: the result does not depend on timing (unless the time limit
** stops the enumeration, which the summary says).  Threads share no
** mutable state: each has its own context (allocator hook shared).
**
** Complexity: O(points x (partition + estimate)); the partition is
** AMP's label DP (O(L^2 S) labels in practice), the estimate linear in
** the plan's devices and stages.
*/
#include "search/plan_search.h"
#include "part/part.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* TUNING: points per thread per round: threads prune against the list
** of the round's start, so short rounds prune as a single thread would,
** long ones share the merge; 8 (298aa13, no sweep recorded). */
#define ROUND 8
/* TUNING: chains with at most this many partitions into pp runs are
** partitioned by pricing every one with the estimate (exact under it);
** 2,000 estimates cost about one label DP (docs/PLANNER.md). */
#define SHORT_CHAIN 2000
#define MAX_DIVISORS 16384 /* two halves: the large divisors from 8,192 */
/* TUNING: MadPipe runs where memory binds: where the best plan fills a
** device past this share (docs/PLANNER.md: 90%). */
#define MADPIPE_SHARE 0.9
/* TUNING: MadPipe's ILP is bounded by branch-and-bound nodes, not time,
** so the result is deterministic: 50 nodes per ILP, and 120 s as a safety
** net the node limit reaches first (8a30765: the determinism test under
** ASan). */
#define MADPIPE_ILP_S 120
#define MADPIPE_NODES 50
/* TUNING: points MadPipe tries per plan asked for (--madpipe N: at most
** 3N tried), so a memory-bound space does not spend the run on it. */
#define MADPIPE_TRIES 3

/* ---- parameters --------------------------------------------------------- */

void pp_search_params_init(pp_search_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  /* TUNING: the defaults of parplan plan (docs/PLANNER.md): 5 plans
  ** simulated, a minute, a second of exact mapping each, 4 MadPipe plans
  ** (298aa13, 2766d50; no sweep recorded) */
  p->top_k = 5;
  p->time_limit_s = 60;
  p->threads = 2;
  p->optimizer = PP_OPT_ADAM_MIXED;
  p->allreduce = PP_AR_AUTO;
  p->schedules =
      1u << PP_SCHED_GPIPE | 1u << PP_SCHED_1F1B | 1u << PP_SCHED_1F1B_STAR;
  p->recompute = -1;
  p->subsets = 1;
  p->map_time_s = 1;
  p->simulate = 1;
  p->madpipe = 4;
}

static pp_status check_params(pp_ctx *ctx, const pp_search_params *p)
{
  if (p->global_batch < 1 || p->global_batch > PPI_MAX_GLOBAL_BATCH)
    return ppi_fail(ctx, PP_EINPUT,
                    "plan: global batch %lld; it must be at least 1",
                    (long long)p->global_batch);
  if (p->top_k < 1 || p->top_k > 1000)
    return ppi_fail(ctx, PP_EINPUT, "plan: top %d; 1 to 1000", (int)p->top_k);
  if (!(p->time_limit_s > 0) || !isfinite(p->time_limit_s))
    return ppi_fail(ctx, PP_EINPUT, "plan: the time limit must be positive");
  if (p->threads < 1 || p->threads > PPI_MAX_THREADS)
    return ppi_fail(ctx, PP_EINPUT, "plan: %d threads; 1 to %d",
                    (int)p->threads, PPI_MAX_THREADS);
  if (!pp_optimizer_name(p->optimizer))
    return ppi_fail(ctx, PP_EINVAL, "plan: unknown optimizer %d",
                    (int)p->optimizer);
  if (p->reserve_bytes < 0)
    return ppi_fail(ctx, PP_EINPUT, "plan: negative reserve");
  if ((p->schedules & 7u) == 0 || (p->schedules & ~7u))
    return ppi_fail(ctx, PP_EINPUT, "plan: no schedule to try (mask %u)",
                    p->schedules);
  if (p->recompute < -1 || p->recompute > 1)
    return ppi_fail(ctx, PP_EINPUT, "plan: recompute must be -1, 0 or 1");
  if (p->max_tp < 0 || p->max_micro_batch < 0)
    return ppi_fail(ctx, PP_EINPUT,
                    "plan: tensor-parallel and micro-batch limits must be "
                    ">= 0");
  if (!(p->map_time_s >= 0) || !isfinite(p->map_time_s))
    return ppi_fail(ctx, PP_EINPUT, "plan: the mapping time must be >= 0");
  if (p->madpipe < 0 || p->madpipe > 1000)
    return ppi_fail(ctx, PP_EINPUT, "plan: madpipe runs %d; 0 to 1000",
                    (int)p->madpipe);
  return PP_OK;
}

/* ---- the search space --------------------------------------------------- */

struct dset {
  int32_t n;
  int32_t *dev; /* in rank order */
  bool mixed;   /* more than one device type */
};

struct point {
  int32_t set, tp, pp, dp, mbs;
  int8_t sched, rec;
  double lb;
  int64_t idx; /* enumeration order: the tie-break */
};

struct cand {
  struct point pt;
  pp_plan *plan;
  pp_partition *part; /* for the mapper (NULL for tried-all partitions) */
  double est, sim, bubble, peak;
  int mapped, madpipe;
};

struct pp_search {
  pp_search_summary sum;
  struct ppi_alloc a;
  int32_t n, cap; /* plans; entries of c */
  struct cand *c;
  pp_search_plan *info;
};

struct space {
  const pp_model *m;
  const pp_cluster *c;
  const pp_search_params *p;
  pp_model *view; /* the chain view */
  int32_t L;      /* its layers */
  bool dag;       /* an operator DAG (not a chain) */
  double *speed;  /* [D] relative to the model's reference type */
  struct dset *sets;
  int32_t nset, setcap;
};

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
  cap = 3 * (int32_t)(nmask ? nmask : 2);
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

/* The lower bounds by (tp, micro-batch, recomputation), computed once. */
struct lbtab {
  int32_t n, cap;
  int32_t *tp, *mbs;
  int8_t *rec;
  double *lb;
};

static pp_status lb_get(pp_ctx *ctx, struct lbtab *t, const struct space *sp,
                        int32_t tp, int32_t mbs, int rec, double *out)
{
  int32_t i;
  for (i = 0; i < t->n; i++)
    if (t->tp[i] == tp && t->mbs[i] == mbs && t->rec[i] == rec) {
      *out = t->lb[i];
      return PP_OK;
    }
  if (t->n == t->cap) {
    int32_t nc = t->cap ? 2 * t->cap : 64;
    int32_t *a = ppi_alloc(ctx, (size_t)nc * sizeof *a);
    int32_t *b = ppi_alloc(ctx, (size_t)nc * sizeof *b);
    int8_t *r = ppi_alloc(ctx, (size_t)nc);
    double *l = ppi_alloc(ctx, (size_t)nc * sizeof *l);
    if (!a || !b || !r || !l) {
      ppi_free(ctx, a, (size_t)nc * sizeof *a);
      ppi_free(ctx, b, (size_t)nc * sizeof *b);
      ppi_free(ctx, r, (size_t)nc);
      ppi_free(ctx, l, (size_t)nc * sizeof *l);
      return PP_ENOMEM;
    }
    if (t->n) {
      memcpy(a, t->tp, (size_t)t->n * sizeof *a);
      memcpy(b, t->mbs, (size_t)t->n * sizeof *b);
      memcpy(r, t->rec, (size_t)t->n);
      memcpy(l, t->lb, (size_t)t->n * sizeof *l);
    }
    ppi_free(ctx, t->tp, (size_t)t->cap * sizeof *a);
    ppi_free(ctx, t->mbs, (size_t)t->cap * sizeof *b);
    ppi_free(ctx, t->rec, (size_t)t->cap);
    ppi_free(ctx, t->lb, (size_t)t->cap * sizeof *l);
    t->tp = a;
    t->mbs = b;
    t->rec = r;
    t->lb = l;
    t->cap = nc;
  }
  {
    pp_status rc = pp_lower_bound(ctx, sp->m, sp->c, sp->p->global_batch, tp,
                                  mbs, rec, out);
    if (rc)
      return rc;
  }
  t->tp[t->n] = tp;
  t->mbs[t->n] = mbs;
  t->rec[t->n] = (int8_t)rec;
  t->lb[t->n++] = *out;
  return PP_OK;
}

static void lb_free(pp_ctx *ctx, struct lbtab *t)
{
  ppi_free(ctx, t->tp, (size_t)t->cap * sizeof *t->tp);
  ppi_free(ctx, t->mbs, (size_t)t->cap * sizeof *t->mbs);
  ppi_free(ctx, t->rec, (size_t)t->cap);
  ppi_free(ctx, t->lb, (size_t)t->cap * sizeof *t->lb);
}

static int cmp_point(const void *x, const void *y)
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

/* The points in v (struct point), the most promising first. */
static pp_status make_points(pp_ctx *ctx, const struct space *sp,
                             struct ppi_vec *vp, double *space_lb)
{
  const pp_search_params *p = sp->p;
  struct lbtab lt = {0, 0, NULL, NULL, NULL, NULL};
  struct ppi_vec v;
  int32_t k, tp, pp, maxtp = p->max_tp ? p->max_tp : ppi_node_size(sp->c);
  pp_status rc = PP_OK;
  int64_t idx = 0, *div, nd, di;

  if (!(div = ppi_alloc(ctx, MAX_DIVISORS * sizeof *div)))
    return PP_ENOMEM;

  /* TUNING: tensor parallelism up to 8 unless asked: the NVLink domain
  ** of the nodes Megatron targets; beyond it tp crosses slow links */
  if (!p->max_tp && maxtp > 8)
    maxtp = 8;
  *space_lb = INFINITY;
  ppi_vec_init(&v, sizeof(struct point));
  for (k = 0; k < sp->nset && !rc; k++) {
    const struct dset *s = &sp->sets[k];
    for (tp = 1; tp <= maxtp && tp <= s->n && !rc; tp++) {
      if (s->n % tp || !tp_fits(sp->c, s, tp))
        continue;
      for (pp = 1; pp <= s->n / tp && pp <= sp->L && !rc; pp++) {
        int32_t dp = s->n / tp / pp, mbs;
        int64_t B;
        if ((s->n / tp) % pp || p->global_batch % dp)
          continue;
        B = p->global_batch / dp;
        nd = divisors(B, p->max_micro_batch, div);
        for (di = 0; di < nd && !rc; di++) {
          int sc, rec;
          mbs = (int32_t)div[di];
          for (rec = 0; rec <= 1 && !rc; rec++) {
            double lb;
            if (p->recompute >= 0 && rec != p->recompute)
              continue;
            if ((rc = lb_get(ctx, &lt, sp, tp, mbs, rec, &lb)))
              break;
            if (lb < *space_lb)
              *space_lb = lb;
            for (sc = 0; sc < 3 && !rc; sc++) {
              struct point pt;
              if (!(p->schedules >> sc & 1))
                continue;
              memset(&pt, 0, sizeof pt);
              pt.set = k;
              pt.tp = tp;
              pt.pp = pp;
              pt.dp = dp;
              pt.mbs = mbs;
              pt.sched = (int8_t)sc;
              pt.rec = (int8_t)rec;
              pt.lb = lb;
              pt.idx = idx++;
              rc = ppi_vec_push(ctx, &v, &pt);
            }
          }
        }
      }
    }
  }
  lb_free(ctx, &lt);
  ppi_free(ctx, div, MAX_DIVISORS * sizeof *div);
  if (rc) {
    ppi_vec_free(ctx, &v);
    return rc;
  }
  /* the most promising first: a good K-th time early prunes the rest */
  if (v.n)
    qsort(v.data, v.n, sizeof(struct point), cmp_point);
  *vp = v;
  return PP_OK;
}

/* ---- one point ---------------------------------------------------------- */

struct worker {
  struct pp_ctx ctx; /* its copy (ppi_fanout) */
  const struct space *sp;
  const struct point *pts;
  int64_t from, to, step; /* points from, from + step, ... below to */
  double bar;             /* the K-th kept estimate at the round's start */
  double deadline;
  struct cand *kept; /* [K] its finds this round, best first */
  int32_t nkept, K;
  int32_t *opbuf, *off, *reps, *first;
  int64_t pruned, evaluated, fitting, madpipe, madpipe_fit;
  struct ppi_vec bound; /* points where memory binds (MadPipe's pass) */
  bool madpipe_pass;    /* run MadPipe on pts, not the enumeration */
  bool offer_madpipe;   /* offer(): the plan is MadPipe's */
  double mp_cap;        /* MadPipe's pass: the best estimate kept */
  bool timed_out;
  pp_status rc;
  /* the closest point that does not fit */
  double close_share;
  int64_t close_idx;
  int32_t close_dev;
  double close_need, close_cap;
};

static void cand_free(struct cand *x)
{
  pp_plan_destroy(x->plan);
  pp_partition_destroy(x->part);
  x->plan = NULL;
  x->part = NULL;
}

static bool better(const struct cand *a, const struct cand *b)
{
  return a->est < b->est || (a->est == b->est && a->pt.idx < b->pt.idx);
}

/* Insert x (owned) into the sorted list l[0:*n] of at most K. */
static void keep(struct cand *l, int32_t *n, int32_t K, struct cand *x)
{
  int32_t i;
  if (*n == K) {
    if (!better(x, &l[K - 1])) {
      cand_free(x);
      return;
    }
    cand_free(&l[K - 1]);
    (*n)--;
  }
  for (i = *n; i > 0 && better(x, &l[i - 1]); i--)
    l[i] = l[i - 1];
  l[i] = *x;
  (*n)++;
}

pp_status ppi_plan_of(pp_ctx *ctx, int64_t gbs, pp_optimizer opt,
                      const struct ppi_shape *sh, const int32_t *ops,
                      const int32_t *off, const int32_t *devs, pp_plan **out)
{
  pp_plan_params pl;
  pp_plan_builder *b;
  int32_t s, r;
  pp_status rc;
  pp_plan_params_init(&pl);
  pl.global_batch = gbs;
  pl.micro_batch = sh->mbs;
  pl.tp = sh->tp;
  pl.schedule = sh->sched;
  pl.recompute = sh->rec;
  pl.optimizer = opt;
  if ((rc = pp_plan_builder_create(ctx, &pl, "parplan plan", &b)))
    return rc;
  for (s = 0; s < sh->pp; s++) {
    int32_t id;
    if ((rc = pp_plan_builder_add_stage(b, ops + off[s], off[s + 1] - off[s],
                                        &id)))
      goto fail;
    for (r = 0; r < sh->dp; r++)
      if ((rc = pp_plan_builder_add_replica(
               b, id, devs + ((size_t)s * sh->dp + r) * sh->tp)))
        goto fail;
  }
  return pp_plan_builder_finish(b, out);
fail:
  pp_plan_builder_destroy(b);
  return rc;
}

static struct ppi_shape shape_of(const struct point *pt)
{
  struct ppi_shape sh;
  sh.pp = pt->pp;
  sh.dp = pt->dp;
  sh.tp = pt->tp;
  sh.mbs = pt->mbs;
  sh.sched = (pp_schedule)pt->sched;
  sh.rec = pt->rec;
  return sh;
}

static pp_status build_plan(pp_ctx *ctx, const struct space *sp,
                            const struct point *pt, const int32_t *ops,
                            const int32_t *off, const int32_t *devs,
                            pp_plan **out)
{
  struct ppi_shape sh = shape_of(pt);
  return ppi_plan_of(ctx, sp->p->global_batch, sp->p->optimizer, &sh, ops, off,
                     devs, out);
}

/* How every plan of the search is priced (the summary reports it). */
static void cost_params(const struct space *sp, pp_cost_params *cp)
{
  pp_cost_params_init(cp);
  cp->allreduce = sp->p->allreduce;
  cp->reserve_bytes = sp->p->reserve_bytes;
  cp->record = 0;
}

/* Price plan; a non-fitting plan reports its worst device. */
static pp_status price(pp_ctx *ctx, const struct space *sp, const pp_plan *pl,
                       double *est, bool *fits, double *share, int32_t *worst,
                       double *need, double *cap)
{
  pp_cost_params cp;
  pp_eval *e;
  pp_eval_summary es;
  pp_device_memory dm;
  pp_status rc;
  cost_params(sp, &cp);
  if ((rc = pp_evaluate(ctx, pl, sp->m, sp->c, &cp, &e)))
    return rc;
  pp_eval_get_summary(e, &es);
  *est = es.iteration_ms;
  *fits = es.fits != 0;
  *worst = es.worst_device;
  *share = 0;
  *need = *cap = 0;
  if (es.worst_device >= 0 &&
      pp_eval_device(e, es.worst_device, &dm) == PP_OK &&
      dm.capacity_bytes > 0) {
    *share = dm.total_bytes / (double)dm.capacity_bytes;
    *need = dm.total_bytes;
    *cap = (double)dm.capacity_bytes;
  }
  pp_eval_destroy(e);
  return PP_OK;
}

/* A candidate plan of the point: keep it in *best when it fits and is
** better, else note how close it came. */
static pp_status offer(struct worker *w, const struct point *pt, pp_plan *pl,
                       pp_partition *part, struct cand *best, bool *have)
{
  double est, share, need, cap;
  bool fits;
  int32_t worst;
  pp_status rc =
      price(&w->ctx, w->sp, pl, &est, &fits, &share, &worst, &need, &cap);
  if (rc) {
    pp_plan_destroy(pl);
    pp_partition_destroy(part);
    return rc;
  }
  if (!fits) {
    if (share < w->close_share ||
        (share == w->close_share && pt->idx < w->close_idx)) {
      w->close_share = share;
      w->close_idx = pt->idx;
      w->close_dev = worst;
      w->close_need = need;
      w->close_cap = cap;
    }
    pp_plan_destroy(pl);
    pp_partition_destroy(part);
    return PP_OK;
  }
  if (*have && !(est < best->est)) {
    pp_plan_destroy(pl);
    pp_partition_destroy(part);
    return PP_OK;
  }
  if (*have)
    cand_free(best);
  memset(best, 0, sizeof *best);
  best->pt = *pt;
  best->plan = pl;
  best->part = part;
  best->est = est;
  best->peak = share;
  best->madpipe = w->offer_madpipe;
  *have = true;
  return PP_OK;
}

/* Partitions the point's problem does not admit (more stages than the
** model allows, a limit) skip the point; anything else is an error. */
static bool skippable(pp_status rc)
{
  return rc == PP_EINPUT || rc == PP_ELIMIT;
}

static pp_status from_partition(struct worker *w, const struct point *pt,
                                pp_partition *part, const int32_t *devs,
                                struct cand *best, bool *have)
{
  const struct space *sp = w->sp;
  int32_t s, n, k = 0;
  pp_plan *pl = NULL;
  pp_status rc;
  pp_part_summary ps;
  pp_partition_summary(part, &ps);
  if (ps.nstage != pt->pp) { /* not this point's shape */
    pp_partition_destroy(part);
    return PP_OK;
  }
  for (s = 0; s < pt->pp; s++) {
    const int32_t *ops = pp_partition_stage_ops(part, s, &n);
    w->off[s] = k;
    memcpy(w->opbuf + k, ops, (size_t)n * sizeof *ops);
    k += n;
  }
  w->off[pt->pp] = k;
  rc = build_plan(&w->ctx, sp, pt, w->opbuf, w->off, devs, &pl);
  if (rc) {
    pp_partition_destroy(part);
    return rc;
  }
  return offer(w, pt, pl, part, best, have);
}

static double speed_of(const struct space *sp, int32_t d)
{
  return sp->speed[d];
}

/* Every partition of the chain view into pp contiguous runs, in
** lexicographic order of the cuts, priced by the estimate itself. */
static pp_status try_all(struct worker *w, const struct point *pt,
                         const int32_t *devs, struct cand *best, bool *have)
{
  const struct space *sp = w->sp;
  int32_t S = pt->pp, L = sp->L, s, i;
  int32_t *f = w->first; /* f[s]: first layer of stage s; f[S] = L */
  pp_status rc = PP_OK;
  for (s = 0; s < S; s++)
    f[s] = s;
  f[S] = L;
  for (;;) {
    int32_t k = 0;
    pp_plan *pl = NULL;
    for (s = 0; s < S; s++) {
      w->off[s] = k;
      for (i = f[s]; i < f[s + 1]; i++) {
        int32_t n;
        const int32_t *mem = pp_model_layer_members(sp->view, i, &n);
        memcpy(w->opbuf + k, mem, (size_t)n * sizeof *mem);
        k += n;
      }
    }
    w->off[S] = k;
    if ((rc = build_plan(&w->ctx, sp, pt, w->opbuf, w->off, devs, &pl)) ||
        (rc = offer(w, pt, pl, NULL, best, have)))
      return rc;
    /* the next cut vector: the last movable cut moves right */
    for (s = S - 1; s >= 1 && f[s] == L - (S - s); s--)
      ;
    if (s < 1)
      break;
    f[s]++;
    for (i = s + 1; i < S; i++)
      f[i] = f[i - 1] + 1;
  }
  return PP_OK;
}

/* MadPipe ([MadPipe]) when memory binds: a 1F1B* point on one device type
** whose 1F1B-count partitions do not fit, or fill a device past
** MADPIPE_SHARE.  MadPipe may give a processor (its special one) several
** stages and keeps per-stage in-flight counts below 1F1B's; the plan
** carries both, and the estimate and the simulator price it like any
** other.  Flat network at the point's slowest link between stages (the
** model MadPipe assumes); the ILP is bounded by nodes, not time, so the
** result stays deterministic. */
static pp_status try_madpipe(struct worker *w, const struct point *pt,
                             const int32_t *devs, double linkbw, int64_t gas,
                             struct cand *best, bool *have)
{
  const struct space *sp = w->sp;
  const pp_search_params *p = sp->p;
  pp_part_params pa;
  pp_partition *part = NULL;
  pp_part_summary ps;
  pp_plan_params pl;
  pp_plan_builder *b = NULL;
  pp_plan *plan = NULL;
  int32_t s, r;
  double sig[4];
  pp_status rc;

  pp_part_params_init(&pa);
  pa.objective = PP_OBJ_MADPIPE;
  pa.stages = pt->pp;
  pa.replicas = pt->dp;
  pa.bandwidth_gbps = linkbw;
  pa.latency_us = pp_cluster_latency(sp->c);
  pa.micro_batch = pt->mbs;
  pa.gas = gas;
  pa.optimizer = p->optimizer;
  pa.reserve_bytes = p->reserve_bytes;
  pa.cluster = sp->c;
  pa.flat_device = devs[0]; /* the set's one type: its times and memory */
  pa.time_limit_s = MADPIPE_ILP_S;
  /* its plan runs gas periods at least: not worth phase 2 when that alone
  ** is slower than the best plan found */
  if (isfinite(w->mp_cap))
    pa.period_cap_ms = w->mp_cap / (double)gas;
  pa.max_nodes = MADPIPE_NODES;
  rc = pp_partition_chain(&w->ctx, sp->m, &pa, &part);
  if (rc) {
    if (skippable(rc)) {
      pp_ctx_clear_error(&w->ctx);
      rc = PP_OK;
    }
    return rc;
  }
  w->madpipe++;
  pp_partition_summary(part, &ps);
  if (!ps.fits) {
    pp_partition_destroy(part);
    return PP_OK;
  }
  pp_plan_params_init(&pl);
  pl.global_batch = p->global_batch;
  pl.micro_batch = pt->mbs;
  pl.schedule = PP_SCHED_1F1B_STAR;
  pl.optimizer = p->optimizer;
  pl.period_ms = pt->dp == 1 ? ps.period_ms : 0;
  if ((rc = pp_plan_builder_create(&w->ctx, &pl, "parplan plan (madpipe)", &b)))
    goto done;
  for (s = 0; s < ps.nstage; s++) {
    pp_part_stage st;
    int32_t id, n;
    const int32_t *ops = pp_partition_stage_ops(part, s, &n);
    pp_partition_stage(part, s, &st);
    if ((rc = pp_plan_builder_add_stage(b, ops, n, &id)))
      goto done;
    for (r = 0; r < pt->dp; r++)
      if ((rc = pp_plan_builder_add_replica(
               b, id, devs + (size_t)st.proc * pt->dp + r)))
        goto done;
    if ((rc = pp_plan_builder_set_in_flight(b, id, st.in_flight)))
      goto done;
    /* the pattern is one replica's (the plan checker's rule); replicated
    ** stages keep the counts and run 1F1B* order */
    if (pt->dp == 1 && ppi_partition_pattern(part, s, sig) &&
        (rc = pp_plan_builder_set_pattern(b, id, sig)))
      goto done;
  }
  rc = pp_plan_builder_finish(b, &plan);
  b = NULL;
  pp_partition_destroy(part);
  part = NULL;
  if (rc == PP_OK) {
    w->offer_madpipe = true;
    rc = offer(w, pt, plan, NULL, best, have);
    w->offer_madpipe = false;
  }
done:
  pp_plan_builder_destroy(b);
  pp_partition_destroy(part);
  return rc;
}

static double binom_capped(int32_t n, int32_t k, double cap)
{
  double x = 1;
  int32_t i;
  if (k < 0 || k > n)
    return 0;
  for (i = 1; i <= k && x <= cap; i++)
    x = x * (n - k + i) / i;
  return x;
}

/* Each stage at the pace of its slowest device (w->reps); the slowest
** ring link of the replicas' first ranks; the slowest link between
** stages. */
static void point_net(struct worker *w, const struct point *pt,
                      double *arbw_out, double *linkbw_out)
{
  const struct space *sp = w->sp;
  const struct dset *set = &sp->sets[pt->set];
  const pp_cluster *c = sp->c;
  double arbw = INFINITY, linkbw = INFINITY;
  int32_t s, r, k;
  for (s = 0; s < pt->pp; s++) {
    const int32_t *g = set->dev + (size_t)s * pt->dp * pt->tp;
    int32_t slow = g[0];
    for (k = 1; k < pt->dp * pt->tp; k++)
      if (speed_of(sp, g[k]) < speed_of(sp, slow))
        slow = g[k];
    w->reps[s] = slow;
    for (r = 0; r < pt->dp && pt->dp > 1; r++) {
      double b = pp_cluster_bandwidth(c, g[(size_t)r * pt->tp],
                                      g[(size_t)((r + 1) % pt->dp) * pt->tp]);
      arbw = b < arbw ? b : arbw;
    }
    if (s + 1 < pt->pp) {
      double b = pp_cluster_bandwidth(c, g[0], g[pt->dp * pt->tp]);
      linkbw = b < linkbw ? b : linkbw;
    }
  }
  if (!isfinite(arbw))
    arbw = 0;
  /* TUNING: one stage has no link between stages: the allreduce's
  ** bandwidth, or 100 GB/s, stands in (no transfer between stages uses
  ** it, so the value changes nothing) */
  if (!isfinite(linkbw))
    linkbw = arbw > 0 ? arbw : 100;
  *arbw_out = arbw;
  *linkbw_out = linkbw;
}

static pp_status eval_point(struct worker *w, const struct point *pt)
{
  const struct space *sp = w->sp;
  const pp_search_params *p = sp->p;
  const struct dset *set = &sp->sets[pt->set];
  const pp_cluster *c = sp->c;
  struct cand best;
  bool have = false;
  double bar = w->bar, arbw = INFINITY, linkbw = INFINITY;
  int64_t gas = p->global_batch / pt->dp / pt->mbs;
  pp_status rc = PP_OK;

  if (w->nkept == w->K && w->kept[w->K - 1].est < bar)
    bar = w->kept[w->K - 1].est;
  if (pt->lb > bar) {
    w->pruned++;
    return PP_OK;
  }
  w->evaluated++;
  memset(&best, 0, sizeof best);
  point_net(w, pt, &arbw, &linkbw);
  if (binom_capped(sp->L - 1, pt->pp - 1, SHORT_CHAIN) <= SHORT_CHAIN) {
    rc = try_all(w, pt, set->dev, &best, &have);
  } else {
    pp_part_params pa;
    pp_partition *part = NULL;
    pp_part_params_init(&pa);
    pa.objective = PP_OBJ_AMP;
    pa.stages = pt->pp;
    pa.replicas = pt->dp;
    pa.tp = pt->tp;
    pa.recompute = pt->rec;
    pa.cluster = c;
    pa.devices = w->reps;
    pa.micro_batch = pt->mbs;
    pa.gas = gas;
    pa.schedule = pt->sched == PP_SCHED_GPIPE ? PP_SCHED_GPIPE : PP_SCHED_1F1B;
    pa.optimizer = p->optimizer;
    pa.reserve_bytes = p->reserve_bytes;
    pa.allreduce = pt->dp > 1;
    pa.allreduce_gbps = arbw;
    pa.bandwidth_gbps = linkbw;
    rc = pp_partition_chain(&w->ctx, sp->m, &pa, &part);
    if (rc == PP_OK)
      rc = from_partition(w, pt, part, set->dev, &best, &have);
    else if (skippable(rc)) {
      pp_ctx_clear_error(&w->ctx);
      rc = PP_OK;
    }
    /* an operator DAG on one device type: Parmesan's operator level */
    if (rc == PP_OK && sp->dag && !set->mixed && pt->tp == 1 && !pt->rec) {
      pp_part_params_init(&pa);
      pa.objective = PP_OBJ_MINMAX;
      pa.stages = pt->pp;
      pa.replicas = pt->dp;
      pa.bandwidth_gbps = linkbw;
      pa.latency_us = pp_cluster_latency(c);
      pa.micro_batch = pt->mbs;
      pa.gas = gas;
      pa.schedule =
          pt->sched == PP_SCHED_GPIPE ? PP_SCHED_GPIPE : PP_SCHED_1F1B;
      pa.optimizer = p->optimizer;
      pa.reserve_bytes = p->reserve_bytes;
      pa.memory_bytes = (double)pp_cluster_type_memory(
          c, pp_cluster_device_type(c, set->dev[0]));
      part = NULL;
      rc = pp_partition_chain(&w->ctx, sp->m, &pa, &part);
      if (rc == PP_OK)
        rc = from_partition(w, pt, part, set->dev, &best, &have);
      else if (skippable(rc)) {
        pp_ctx_clear_error(&w->ctx);
        rc = PP_OK;
      }
    }
  }
  if (rc == PP_OK && pt->sched == PP_SCHED_1F1B_STAR && pt->tp == 1 &&
      !pt->rec && !set->mixed && pt->pp >= 2 &&
      sp->L <= PPI_MADPIPE_MAX_LAYERS && (!have || best.peak >= MADPIPE_SHARE))
    rc = ppi_vec_push(&w->ctx, &w->bound, pt);
  if (rc) {
    if (have)
      cand_free(&best);
    return rc;
  }
  if (have) {
    w->fitting++;
    keep(w->kept, &w->nkept, w->K, &best);
  }
  return PP_OK;
}

/* MadPipe's pass: the point's MadPipe plan, kept when it fits. */
static pp_status madpipe_point(struct worker *w, const struct point *pt)
{
  const struct space *sp = w->sp;
  struct cand best;
  bool have = false;
  double arbw, linkbw;
  int64_t gas = sp->p->global_batch / pt->dp / pt->mbs;
  pp_status rc;
  if (pt->lb > w->bar) /* a better plan came since it was recorded */
    return PP_OK;
  memset(&best, 0, sizeof best);
  point_net(w, pt, &arbw, &linkbw);
  rc = try_madpipe(w, pt, sp->sets[pt->set].dev, linkbw, gas, &best, &have);
  if (rc) {
    if (have)
      cand_free(&best);
    return rc;
  }
  if (have) {
    w->fitting++;
    w->madpipe_fit++;
    keep(w->kept, &w->nkept, w->K, &best);
  }
  return PP_OK;
}

static pp_status run_worker(pp_ctx *ctx, void *arg)
{
  struct worker *w = arg;
  int64_t i;
  (void)ctx; /* w->ctx, where the point functions find it */
  for (i = w->from; i < w->to && !w->rc; i += w->step) {
    if (ppi_now_s() > w->deadline) {
      w->timed_out = true;
      break;
    }
    w->rc = w->madpipe_pass ? madpipe_point(w, &w->pts[i])
                            : eval_point(w, &w->pts[i]);
  }
  return w->rc;
}

/* ---- the search --------------------------------------------------------- */

static int cmp_final(const void *x, const void *y)
{
  const struct cand *a = x, *b = y;
  double ka = a->sim > 0 ? a->sim : a->est, kb = b->sim > 0 ? b->sim : b->est;
  if (ka != kb)
    return ka < kb ? -1 : 1;
  return (a->pt.idx > b->pt.idx) - (a->pt.idx < b->pt.idx);
}

static void worker_free(pp_ctx *ctx, struct worker *w, int32_t nop, int32_t S)
{
  int32_t i;
  for (i = 0; i < w->nkept; i++)
    cand_free(&w->kept[i]);
  ppi_free(ctx, w->kept, (size_t)w->K * sizeof *w->kept);
  ppi_free(ctx, w->opbuf, (size_t)nop * sizeof *w->opbuf);
  ppi_free(ctx, w->off, (size_t)(S + 1) * sizeof *w->off);
  ppi_free(ctx, w->reps, (size_t)S * sizeof *w->reps);
  ppi_free(ctx, w->first, (size_t)(S + 1) * sizeof *w->first);
  ppi_vec_free(ctx, &w->bound);
}

/* Place a kept plan by the exact mapper; keep the placement when it
** fits and the estimate improves. */
static pp_status remap(pp_ctx *ctx, const struct space *sp, struct cand *x,
                       int32_t *opbuf, int32_t *off)
{
  const pp_search_params *p = sp->p;
  pp_stage_graph *g = NULL;
  pp_mapping *mp = NULL;
  pp_map_params mpp;
  pp_plan *pl = NULL;
  int32_t S = x->pt.pp, R = x->pt.dp, s, r, k = 0, n, *devs;
  double est, share, need, cap;
  bool fits;
  int32_t worst;
  pp_status rc;

  if (!x->part || x->pt.tp != 1 || p->map_time_s <= 0 ||
      pp_cluster_ndev(sp->c) > PPI_PLAN_MAP_MAX_DEVICES || S * R < 2)
    return PP_OK;
  if (!(devs = ppi_alloc(ctx, (size_t)S * R * sizeof *devs)))
    return PP_ENOMEM;
  if ((rc = pp_partition_stage_graph(ctx, x->part, &g)))
    goto done;
  pp_map_params_init(&mpp);
  mpp.replicas = R;
  mpp.time_limit_s = p->map_time_s;
  mpp.threads =
      p->threads < PPI_MAX_MAP_THREADS ? p->threads : PPI_MAX_MAP_THREADS;
  if ((rc = pp_map(ctx, g, sp->c, &mpp, &mp)))
    goto done;
  for (s = 0; s < S; s++) {
    const int32_t *ops = pp_partition_stage_ops(x->part, s, &n);
    off[s] = k;
    memcpy(opbuf + k, ops, (size_t)n * sizeof *ops);
    k += n;
    for (r = 0; r < R; r++)
      devs[(size_t)s * R + r] = pp_mapping_device(mp, s, r);
  }
  off[S] = k;
  if ((rc = build_plan(ctx, sp, &x->pt, opbuf, off, devs, &pl)) ||
      (rc = price(ctx, sp, pl, &est, &fits, &share, &worst, &need, &cap)))
    goto done;
  if (fits && est < x->est) {
    pp_plan_destroy(x->plan);
    x->plan = pl;
    pl = NULL;
    x->est = est;
    x->peak = share;
    x->mapped = 1;
  }
done:
  pp_plan_destroy(pl);
  pp_mapping_destroy(mp);
  pp_stage_graph_destroy(g);
  ppi_free(ctx, devs, (size_t)S * R * sizeof *devs);
  return rc;
}

static pp_status simulate(pp_ctx *ctx, const struct space *sp, struct cand *x,
                          bool *fits)
{
  pp_cost_params cp;
  pp_sim *sim;
  pp_sim_summary ss;
  int32_t d, used = 0;
  double bub = 0;
  pp_status rc;
  cost_params(sp, &cp);
  if ((rc = pp_simulate(ctx, x->plan, sp->m, sp->c, &cp, &sim)))
    return rc;
  pp_sim_get_summary(sim, &ss);
  x->sim = ss.iteration_ms;
  *fits = ss.fits != 0;
  for (d = 0; d < pp_cluster_ndev(sp->c); d++) {
    pp_sim_device sd;
    if (pp_sim_device_get(sim, d, &sd) == PP_OK && sd.used &&
        ss.iteration_ms > 0) {
      bub += sd.idle_ms / ss.iteration_ms;
      used++;
    }
  }
  x->bubble = used ? bub / used : 0;
  pp_sim_destroy(sim);
  return PP_OK;
}

/* The estimate's bubble: the share of the iteration a stage's devices
** do not compute, averaged over the stages. */
static pp_status est_bubble(pp_ctx *ctx, const struct space *sp, struct cand *x)
{
  pp_cost_params cp;
  pp_eval *e;
  pp_eval_summary es;
  int32_t s, S = pp_plan_nstage(x->plan);
  double idle = 0;
  pp_status rc;
  cost_params(sp, &cp);
  if ((rc = pp_evaluate(ctx, x->plan, sp->m, sp->c, &cp, &e)))
    return rc;
  pp_eval_get_summary(e, &es);
  for (s = 0; s < S; s++) {
    pp_stage_cost sc;
    pp_eval_stage(e, s, &sc);
    if (es.iteration_ms > 0)
      idle += 1 - (double)sc.micro_batches * sc.compute_ms / es.iteration_ms;
  }
  x->bubble = S ? idle / S : 0;
  pp_eval_destroy(e);
  return PP_OK;
}

/* The space of sp (m, c, p set): the chain view, speeds, device sets
** and the points; sp.m, sp.c, sp.p must be set.  On failure the caller
** still calls space_close. */
static pp_status space_open(pp_ctx *ctx, struct space *sp, struct ppi_vec *pts,
                            double *space_lb)
{
  int32_t D = pp_cluster_ndev(sp->c), i;
  pp_status rc;
  sp->dag = !pp_model_is_chain(sp->m);
  if ((rc = pp_model_chain_view(ctx, sp->m, 0, &sp->view)))
    return rc;
  sp->L = pp_model_nop(sp->view);
  if (!(sp->speed = ppi_alloc(ctx, (size_t)D * sizeof *sp->speed)))
    return PP_ENOMEM;
  for (i = 0; i < D; i++)
    sp->speed[i] = pp_model_type_key(sp->m, sp->c, i).speed;
  if ((rc = make_sets(ctx, sp)))
    return rc;
  return make_points(ctx, sp, pts, space_lb);
}

static void space_close(pp_ctx *ctx, struct space *sp, struct ppi_vec *pts)
{
  int32_t i;
  for (i = 0; i < sp->nset; i++)
    ppi_free(ctx, sp->sets[i].dev, (size_t)sp->sets[i].n * sizeof(int32_t));
  ppi_free(ctx, sp->sets, (size_t)sp->setcap * sizeof *sp->sets);
  if (sp->speed)
    ppi_free(ctx, sp->speed,
             (size_t)pp_cluster_ndev(sp->c) * sizeof *sp->speed);
  pp_model_destroy(sp->view);
  ppi_vec_free(ctx, pts);
}

/* One round: threads take points start, start + 1, ... below end in
** turn (MadPipe's pass when madpipe), then their finds are merged into
** kept in a fixed order. */
static pp_status run_round(pp_ctx *ctx, struct worker *ws, int32_t T,
                           const struct point *pts, int64_t start, int64_t end,
                           bool madpipe, struct cand *kept, int32_t *nkept,
                           struct cand *pool, bool *timed_out)
{
  int32_t i, npool = 0, K = ws[0].K;
  double bar = *nkept == K ? kept[K - 1].est : INFINITY;
  pp_status rc;
  for (i = 0; i < T; i++) {
    struct worker *w = &ws[i];
    w->pts = pts;
    w->madpipe_pass = madpipe;
    w->from = start + i;
    w->to = end;
    w->step = T;
    w->bar = bar;
    w->rc = PP_OK;
  }
  if ((rc = ppi_fanout(ctx, "plan", run_worker, ws, sizeof *ws,
                       offsetof(struct worker, ctx), T)))
    return rc;
  /* merge: the kept list and every thread's finds, best first */
  for (i = 0; i < *nkept; i++)
    pool[npool++] = kept[i];
  for (i = 0; i < T; i++) {
    int32_t j;
    struct worker *w = &ws[i];
    for (j = 0; j < w->nkept; j++)
      pool[npool++] = w->kept[j];
    w->nkept = 0;
    *timed_out = *timed_out || w->timed_out;
  }
  *nkept = 0;
  for (i = 0; i < npool; i++)
    keep(kept, nkept, K, &pool[i]);
  return PP_OK;
}

static int cmp_bound(const void *x, const void *y)
{
  const struct point *a = x, *b = y;
  if (a->lb != b->lb)
    return a->lb < b->lb ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

pp_status pp_plan_search(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                         const pp_search_params *p, pp_search **out)
{
  struct space sp;
  struct ppi_vec pts;
  struct worker *ws = NULL;
  struct cand *kept = NULL, *pool = NULL, *mkept = NULL;
  int32_t nmkept = 0;
  struct point *bpts = NULL;
  size_t nbpts = 0;
  int32_t T, K, i, nkept = 0, nop, maxS = 1;
  int64_t start, np;
  double t0 = ppi_now_s(), deadline, space_lb = INFINITY;
  pp_search *res = NULL;
  pp_status rc;
  bool timed_out = false;
  struct worker close;

  if (!ctx)
    return PP_EINVAL;
  if (!m || !c || !p || !out)
    return ppi_fail(ctx, PP_EINVAL, "pp_plan_search: NULL argument");
  *out = NULL;
  if ((rc = check_params(ctx, p)))
    return rc;
  memset(&sp, 0, sizeof sp);
  ppi_vec_init(&pts, sizeof(struct point));
  sp.m = m;
  sp.c = c;
  sp.p = p;
  nop = pp_model_nop(m);
  deadline = t0 + p->time_limit_s;
  T = p->threads;
  K = p->top_k;
  memset(&close, 0, sizeof close);
  close.close_share = INFINITY;
  close.close_idx = INT64_MAX;
  close.close_dev = -1;
  if ((rc = space_open(ctx, &sp, &pts, &space_lb)))
    goto done;
  np = (int64_t)pts.n;
  for (start = 0; start < np; start++) {
    const struct point *pt = &PPI_VEC_AT(&pts, struct point, start);
    maxS = pt->pp > maxS ? pt->pp : maxS;
  }
  if (!(ws = ppi_calloc(ctx, (size_t)T, sizeof *ws)) ||
      !(kept = ppi_calloc(ctx, 2 * (size_t)K, sizeof *kept)) ||
      !(mkept = ppi_calloc(ctx, (size_t)K, sizeof *mkept)) ||
      !(pool = ppi_calloc(ctx, (size_t)K * (T + 1), sizeof *pool))) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < T; i++) {
    struct worker *w = &ws[i];
    w->K = K;
    w->sp = &sp;
    w->pts = pts.data;
    w->deadline = deadline;
    if (!(w->kept = ppi_calloc(ctx, (size_t)K, sizeof *w->kept)) ||
        !(w->opbuf =
              ppi_alloc(ctx, (size_t)(nop > 0 ? nop : 1) * sizeof *w->opbuf)) ||
        !(w->off = ppi_alloc(ctx, (size_t)(maxS + 1) * sizeof *w->off)) ||
        !(w->reps = ppi_alloc(ctx, (size_t)maxS * sizeof *w->reps)) ||
        !(w->first = ppi_alloc(ctx, (size_t)(maxS + 1) * sizeof *w->first))) {
      rc = PP_ENOMEM;
      goto done;
    }
    w->close_share = INFINITY;
    w->close_idx = INT64_MAX;
    w->close_dev = -1;
    ppi_vec_init(&w->bound, sizeof(struct point));
  }
  for (start = 0; start < np && !timed_out; start += (int64_t)T * ROUND) {
    int64_t end =
        start + (int64_t)T * ROUND < np ? start + (int64_t)T * ROUND : np;
    if ((rc = run_round(ctx, ws, T, pts.data, start, end, false, kept, &nkept,
                        pool, &timed_out)))
      goto done;
    if (p->progress && p->progress(p->progress_ud, (double)end / np)) {
      rc = ppi_fail(ctx, PP_ECANCELED, "plan: stopped by the caller");
      goto done;
    }
  }
  /* MadPipe where memory binds, on the points whose bound still leaves
  ** them a chance, lowest bound first */
  if (!timed_out && p->madpipe > 0) {
    size_t nb = 0, k;
    for (i = 0; i < T; i++)
      nb += ws[i].bound.n;
    if (nb > 0) {
      if (!(bpts = ppi_alloc(ctx, nb * sizeof *bpts))) {
        rc = PP_ENOMEM;
        goto done;
      }
      nbpts = nb;
      nb = 0;
      for (i = 0; i < T; i++)
        for (k = 0; k < ws[i].bound.n; k++) {
          const struct point *q = &PPI_VEC_AT(&ws[i].bound, struct point, k);
          if (nkept < K || q->lb <= kept[K - 1].est)
            bpts[nb++] = *q;
        }
      qsort(bpts, nb, sizeof *bpts, cmp_bound);
      for (i = 0; i < T; i++)
        ws[i].mp_cap = nkept ? kept[0].est : INFINITY;
      /* T points per round until p->madpipe of them gave a plan that
      ** fits, MADPIPE_TRIES x p->madpipe points at most: how many are
      ** tried depends on the results only */
      if (nb > (size_t)MADPIPE_TRIES * (size_t)p->madpipe)
        nb = (size_t)MADPIPE_TRIES * (size_t)p->madpipe;
      for (k = 0; k < nb && !timed_out; k += (size_t)T) {
        int64_t fit = 0;
        size_t end = k + (size_t)T < nb ? k + (size_t)T : nb;
        if ((rc = run_round(ctx, ws, T, bpts, (int64_t)k, (int64_t)end, true,
                            mkept, &nmkept, pool, &timed_out)))
          goto done;
        for (i = 0; i < T; i++)
          fit += ws[i].madpipe_fit;
        if (fit >= p->madpipe)
          break;
      }
    }
  }
  /* MadPipe's plans join the kept ones: all are simulated, the best K
  ** stay, so MadPipe never pushes out a plan that simulates better */
  for (i = 0; i < nmkept; i++)
    kept[nkept++] = mkept[i];
  nmkept = 0;
  /* place the kept plans, then simulate them */
  for (i = 0; i < nkept && !rc; i++)
    rc = remap(ctx, &sp, &kept[i], ws[0].opbuf, ws[0].off);
  for (i = 0; i < nkept && !rc; i++) {
    bool fits = true;
    if (p->simulate)
      rc = simulate(ctx, &sp, &kept[i], &fits);
    else
      rc = est_bubble(ctx, &sp, &kept[i]);
    if (!rc && !fits) { /* the simulator's peak is the truth */
      cand_free(&kept[i]);
      kept[i] = kept[--nkept];
      i--;
    }
  }
  if (rc)
    goto done;
  if (nkept > 1)
    qsort(kept, (size_t)nkept, sizeof *kept, cmp_final);
  while (nkept > K)
    cand_free(&kept[--nkept]);
  if (!(res = ppi_calloc(ctx, 1, sizeof *res))) {
    rc = PP_ENOMEM;
    goto done;
  }
  res->a = ppi_ctx_alloc(ctx);
  if (!(res->info =
            ppi_calloc(ctx, (size_t)(nkept ? nkept : 1), sizeof *res->info))) {
    rc = PP_ENOMEM;
    goto done;
  }
  res->c = kept;
  res->n = nkept;
  res->cap = 2 * K;
  kept = NULL;
  for (i = 0; i < T; i++) {
    struct worker *w = &ws[i];
    res->sum.pruned += w->pruned;
    res->sum.evaluated += w->evaluated;
    res->sum.fitting += w->fitting;
    res->sum.madpipe += w->madpipe;
    if (w->close_share < close.close_share ||
        (w->close_share == close.close_share && w->close_idx < close.close_idx))
      close = *w;
  }
  res->sum.points = np;
  cost_params(&sp, &res->sum.cost);
  res->sum.global_batch = p->global_batch;
  res->sum.nplans = res->n;
  res->sum.lower_bound_ms = isfinite(space_lb) ? space_lb : 0;
  res->sum.timed_out = timed_out;
  res->sum.closest_device = res->n ? -1 : close.close_dev;
  res->sum.closest_need_bytes = res->n ? 0 : close.close_need;
  res->sum.closest_capacity_bytes = res->n ? 0 : close.close_cap;
  for (i = 0; i < res->n; i++) {
    const struct cand *x = &res->c[i];
    pp_search_plan *y = &res->info[i];
    y->devices = x->pt.pp * x->pt.dp * x->pt.tp;
    y->pp = x->pt.pp;
    y->dp = x->pt.dp;
    y->tp = x->pt.tp;
    y->micro_batch = x->pt.mbs;
    y->gas = p->global_batch / x->pt.dp / x->pt.mbs;
    y->schedule = (pp_schedule)x->pt.sched;
    y->recompute = x->pt.rec;
    y->estimate_ms = x->est;
    y->simulated_ms = x->sim;
    y->lower_bound_ms = x->pt.lb;
    y->throughput =
        (double)p->global_batch * 1000 / (x->sim > 0 ? x->sim : x->est);
    y->bubble = x->bubble;
    y->mapped = x->mapped;
    y->peak_share = x->peak;
    y->madpipe = x->madpipe;
  }
  res->sum.seconds = ppi_now_s() - t0;
  *out = res;
  res = NULL;
done:
  if (ws)
    for (i = 0; i < T; i++)
      worker_free(ctx, &ws[i], nop > 0 ? nop : 1, maxS);
  ppi_free(ctx, ws, (size_t)T * sizeof *ws);
  if (kept) {
    for (i = 0; i < nkept; i++)
      cand_free(&kept[i]);
    ppi_free(ctx, kept, 2 * (size_t)K * sizeof *kept);
  }
  if (mkept) {
    for (i = 0; i < nmkept; i++)
      cand_free(&mkept[i]);
    ppi_free(ctx, mkept, (size_t)K * sizeof *mkept);
  }
  ppi_free(ctx, pool, (size_t)K * (T + 1) * sizeof *pool);
  ppi_free(ctx, bpts, nbpts * sizeof *bpts);
  space_close(ctx, &sp, &pts);
  pp_search_destroy(res);
  return rc;
}

void pp_search_destroy(pp_search *s)
{
  int32_t i;
  if (!s)
    return;
  for (i = 0; i < s->n; i++)
    cand_free(&s->c[i]);
  if (s->c) /* allocated for K entries */
    ppi_raw_free(s->a, s->c, (size_t)s->cap * sizeof *s->c);
  if (s->info)
    ppi_raw_free(s->a, s->info, (size_t)(s->n ? s->n : 1) * sizeof *s->info);
  ppi_raw_free(s->a, s, sizeof *s);
}

pp_status pp_search_get_summary(const pp_search *s, pp_search_summary *out)
{
  if (!s || !out)
    return PP_EINVAL;
  *out = s->sum;
  return PP_OK;
}

pp_status pp_search_plan_get(const pp_search *s, int32_t i, pp_search_plan *out)
{
  if (!s || !out || i < 0 || i >= s->n)
    return PP_EINVAL;
  *out = s->info[i];
  return PP_OK;
}

pp_plan *ppi_search_take_plan(pp_search *s, int32_t i)
{
  pp_plan *p = NULL;
  if (s && i >= 0 && i < s->n) {
    p = s->c[i].plan;
    s->c[i].plan = NULL;
  }
  return p;
}

const pp_plan *pp_search_plan_at(const pp_search *s, int32_t i)
{
  return s && i >= 0 && i < s->n ? s->c[i].plan : NULL;
}

/* ---- random search (the comparison's baseline) -------------------------- */

pp_status ppi_search_random(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                            const pp_search_params *p, int64_t evals,
                            pp_plan **out, struct ppi_shape *shape)
{
  struct space sp;
  struct ppi_vec pts;
  struct ppi_rng rng;
  double lb, best = INFINITY;
  int32_t *ops = NULL, *off = NULL, *first = NULL, nop = pp_model_nop(m);
  int64_t e;
  pp_status rc;

  *out = NULL;
  memset(&sp, 0, sizeof sp);
  ppi_vec_init(&pts, sizeof(struct point));
  sp.m = m;
  sp.c = c;
  sp.p = p;
  ppi_rng_seed(&rng, pp_ctx_seed(ctx));
  if ((rc = space_open(ctx, &sp, &pts, &lb)))
    goto done;
  if (!(ops = ppi_alloc(ctx, (size_t)(nop > 0 ? nop : 1) * sizeof *ops)) ||
      !(off = ppi_alloc(ctx, (size_t)(sp.L + 1) * sizeof *off)) ||
      !(first = ppi_alloc(ctx, (size_t)(sp.L + 1) * sizeof *first))) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (e = 0; e < evals && pts.n; e++) {
    const struct point *pt =
        &PPI_VEC_AT(&pts, struct point, ppi_rng_below(&rng, pts.n));
    struct ppi_shape sh = shape_of(pt);
    int32_t s, i, k = 0, chosen = 0;
    double est, share, need, cap;
    bool fits;
    int32_t worst;
    pp_plan *pl = NULL;
    /* a uniform (pp-1)-subset of the L-1 cut positions, in order */
    first[0] = 0;
    for (i = 1; i < sp.L && chosen < pt->pp - 1; i++)
      if (ppi_rng_below(&rng, (uint64_t)(sp.L - i)) <
          (uint64_t)(pt->pp - 1 - chosen))
        first[++chosen] = i;
    first[pt->pp] = sp.L;
    for (s = 0; s < pt->pp; s++) {
      off[s] = k;
      for (i = first[s]; i < first[s + 1]; i++) {
        int32_t n;
        const int32_t *mem = pp_model_layer_members(sp.view, i, &n);
        memcpy(ops + k, mem, (size_t)n * sizeof *mem);
        k += n;
      }
    }
    off[pt->pp] = k;
    if ((rc = build_plan(ctx, &sp, pt, ops, off, sp.sets[pt->set].dev, &pl)) ||
        (rc = price(ctx, &sp, pl, &est, &fits, &share, &worst, &need, &cap))) {
      pp_plan_destroy(pl);
      goto done;
    }
    if (fits && est < best) {
      best = est;
      pp_plan_destroy(*out);
      *out = pl;
      *shape = sh;
    } else {
      pp_plan_destroy(pl);
    }
  }
done:
  if (rc) {
    pp_plan_destroy(*out);
    *out = NULL;
  }
  ppi_free(ctx, ops, (size_t)(nop > 0 ? nop : 1) * sizeof *ops);
  ppi_free(ctx, off, (size_t)(sp.L + 1) * sizeof *off);
  ppi_free(ctx, first, (size_t)(sp.L + 1) * sizeof *first);
  space_close(ctx, &sp, &pts);
  return rc;
}

/* SPDX-License-Identifier: MIT */
/*
** The mapping object: parameters, the problem on plain arrays built from
** a stage graph and a cluster (map.h), a table of the algorithms that
** dispatches to the exact search (map_search.c) or a baseline
** (map_baseline.c, map_scotch.c), and the result.
**
** The exact search starts from the best of the consecutive and Megatron
** mappings and a few random ones, annealed from there, so its upper end
** is never worse than what a user gets today and is usually close; under
** p2p the search also tries a replica per part of the machine
** (map_parts.c).  The time limit covers all of it.
*/
#include "map/map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const obj_names[] = {"p2p", "allreduce", "full", "auto"};
static const char *const alg_names[] = {"exact",  "cs",     "megatron",
                                        "random", "anneal", "scotch"};

const char *pp_map_objective_name(pp_map_objective o)
{
  return ppi_enum_name(obj_names, PPI_COUNT(obj_names), (int)o);
}

pp_status pp_map_objective_parse(const char *name, pp_map_objective *out)
{
  int v;
  pp_status rc = ppi_enum_parse(obj_names, PPI_COUNT(obj_names), name, &v);
  if (rc == PP_OK)
    *out = (pp_map_objective)v;
  return rc;
}

const char *pp_map_algorithm_name(pp_map_algorithm a)
{
  return ppi_enum_name(alg_names, PPI_COUNT(alg_names), (int)a);
}

pp_status pp_map_algorithm_parse(const char *name, pp_map_algorithm *out)
{
  int v;
  pp_status rc = ppi_enum_parse(alg_names, PPI_COUNT(alg_names), name, &v);
  if (rc == PP_OK)
    *out = (pp_map_algorithm)v;
  return rc;
}

void pp_map_params_init(pp_map_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->objective = PP_MAP_AUTO;
  p->algorithm = PP_MAP_EXACT;
  p->replicas = 1;
  /* TUNING: the defaults of parplan map.  With 10 s and 2 threads every
  ** cell of bench_map's grid up to 256 devices is proven optimal or within
  ** 1% of the bound on a 2-core machine (docs/MAPPING.md); 10,000 samples
  ** for the random and annealing baselines, no measurement recorded */
  p->time_limit_s = 10;
  p->threads = 2;
  p->samples = 10000;
}

/* ---- the stage graph ---------------------------------------------------- */

void pp_stage_graph_destroy(pp_stage_graph *g)
{
  if (g)
    ppi_arena_free_owner(&g->arena, g, sizeof *g);
}

int32_t pp_stage_graph_nstage(const pp_stage_graph *g)
{
  return g ? g->S : 0;
}

struct epair {
  int64_t key; /* min(from, to) x S + max(from, to) */
  int32_t e;
};

static int cmp_epair(const void *x, const void *y)
{
  const struct epair *a = x, *b = y;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return a->e < b->e ? -1 : a->e > b->e;
}

/* Two edges between the same two stages (either way: a cycle of two)
** would be one link twice in the mappers' undirected graph, which Scotch
** refuses as inconsistent: an input error naming both.  O(E log E). */
static pp_status check_pairs(pp_ctx *ctx, const struct pp_stage_graph *g)
{
  struct epair *p;
  int32_t e;
  pp_status rc = PP_OK;
  if (g->ne < 2)
    return PP_OK;
  if (!(p = ppi_alloc(ctx, (size_t)g->ne * sizeof *p)))
    return PP_ENOMEM;
  for (e = 0; e < g->ne; e++) {
    int32_t a = g->from[e] < g->to[e] ? g->from[e] : g->to[e];
    int32_t b = g->from[e] < g->to[e] ? g->to[e] : g->from[e];
    p[e].key = (int64_t)a * g->S + b;
    p[e].e = e;
  }
  qsort(p, (size_t)g->ne, sizeof *p, cmp_epair);
  for (e = 1; e < g->ne && !rc; e++)
    if (p[e].key == p[e - 1].key)
      rc = ppi_fail_at(ctx, PP_EINPUT, g->source, 0, 0,
                       "edges %d and %d both join stages %d and %d: give "
                       "one edge per pair of stages, with the bytes of both",
                       (int)p[e - 1].e, (int)p[e].e, (int)g->from[p[e - 1].e],
                       (int)g->to[p[e - 1].e]);
  ppi_free(ctx, p, (size_t)g->ne * sizeof *p);
  return rc;
}

struct sname {
  const char *name;
  int32_t s;
};

static int cmp_sname(const void *x, const void *y)
{
  const struct sname *a = x, *b = y;
  int c = strcmp(a->name, b->name);
  return c ? c : (a->s > b->s) - (a->s < b->s);
}

/* Stage names are unique: sorted, not compared pairwise (64k stages took
** 54 s that way).  The error names the later stage of the first pair, as
** the pairwise check did for the lowest such stage.  O(S log S). */
static pp_status check_names(pp_ctx *ctx, const struct pp_stage_graph *g)
{
  struct sname *v;
  int32_t s, bad = -1, first = -1;
  pp_status rc = PP_OK;
  if (g->S < 2)
    return PP_OK;
  if (!(v = ppi_alloc(ctx, (size_t)g->S * sizeof *v)))
    return PP_ENOMEM;
  for (s = 0; s < g->S; s++) {
    v[s].name = g->name[s];
    v[s].s = s;
  }
  qsort(v, (size_t)g->S, sizeof *v, cmp_sname);
  for (s = 1; s < g->S; s++)
    if (!strcmp(v[s].name, v[s - 1].name) && (bad < 0 || v[s].s < bad)) {
      bad = v[s].s;
      first = v[s - 1].s;
    }
  if (bad >= 0)
    rc = ppi_fail_at(ctx, PP_EINPUT, g->source, 0, 0,
                     "stage %d: the name '%s' is taken by stage %d", (int)bad,
                     g->name[bad], (int)first);
  ppi_free(ctx, v, (size_t)g->S * sizeof *v);
  return rc;
}

pp_status ppi_stage_graph_check(pp_ctx *ctx, const struct pp_stage_graph *g)
{
  int32_t s, e;
  pp_status rc;
  for (s = 0; s < g->S; s++) {
    const char *why = ppi_name_problem(g->name[s]);
    if (why)
      return ppi_fail_at(ctx, PP_EINPUT, g->source, 0, 0,
                         "stage %d: its name %s", (int)s, why);
    if (!(g->compute[s] >= 0) || !isfinite(g->compute[s]) ||
        !(g->param[s] >= 0) || !isfinite(g->param[s]))
      return ppi_fail_at(ctx, PP_EINPUT, g->source, 0, 0,
                         "stage %d ('%s'): compute_ms and param_bytes must be "
                         "finite and >= 0",
                         (int)s, g->name[s]);
  }
  if ((rc = check_names(ctx, g)))
    return rc;
  for (e = 0; e < g->ne; e++) {
    if (g->from[e] == g->to[e])
      return ppi_fail_at(ctx, PP_EINPUT, g->source, 0, 0,
                         "edge %d: from stage %d to itself", (int)e,
                         (int)g->from[e]);
    if (!(g->bytes[e] >= 0) || !isfinite(g->bytes[e]))
      return ppi_fail_at(ctx, PP_EINPUT, g->source, 0, 0,
                         "edge %d: bytes must be finite and >= 0", (int)e);
  }
  return check_pairs(ctx, g);
}

/* ---- the result --------------------------------------------------------- */

struct pp_mapping {
  struct ppi_arena arena;
  pp_map_summary sum;
  int32_t S, R;
  int32_t *dev; /* [S R], v = r S + s */
  double *t;
  char **stage_name, **dev_name;
  char *cluster_name, *graph_source;
};

void pp_mapping_destroy(pp_mapping *m)
{
  if (m)
    ppi_arena_free_owner(&m->arena, m, sizeof *m);
}

pp_status pp_mapping_summary(const pp_mapping *m, pp_map_summary *out)
{
  if (!m || !out)
    return PP_EINVAL;
  *out = m->sum;
  return PP_OK;
}

int32_t pp_mapping_device(const pp_mapping *m, int32_t s, int32_t r)
{
  if (!m || s < 0 || s >= m->S || r < 0 || r >= m->R)
    return -1;
  return m->dev[(size_t)r * m->S + s];
}

double pp_mapping_time(const pp_mapping *m, int32_t s, int32_t r)
{
  if (!m || s < 0 || s >= m->S || r < 0 || r >= m->R)
    return NAN;
  return m->t[(size_t)r * m->S + s];
}

/* For map_write.c. */
#include "map/map_view.h"
const struct ppi_map_view *ppi_map_view(const pp_mapping *m,
                                        struct ppi_map_view *v)
{
  v->sum = &m->sum;
  v->S = m->S;
  v->R = m->R;
  v->dev = m->dev;
  v->t = m->t;
  v->stage_name = (const char *const *)m->stage_name;
  v->dev_name = (const char *const *)m->dev_name;
  v->cluster_name = m->cluster_name;
  v->graph_source = m->graph_source;
  return v;
}

/* ---- the problem --------------------------------------------------------- */

struct adjx {
  int32_t s;
  double m;
};

static int cmp_adj(const void *x, const void *y)
{
  const struct adjx *a = x, *b = y;
  if (a->m != b->m)
    return a->m > b->m ? -1 : 1;
  return (a->s > b->s) - (a->s < b->s);
}

pp_status ppi_map_build(pp_ctx *ctx, struct ppi_arena *ar,
                        const pp_stage_graph *g, const pp_cluster *c, int32_t R,
                        int obj, struct ppi_map *q)
{
  int32_t S = g->S, D = pp_cluster_ndev(c), s, d, e, k;
  struct adjx *tmp;
  memset(q, 0, sizeof *q);
  q->stop.deadline = INFINITY; /* the caller may set stop.flag */
  q->S = S;
  q->R = R;
  q->D = D;
  q->n = S * R;
  q->obj = obj;
  q->ne = g->ne;
  q->B = pp_cluster_bandwidth_matrix(c);
  q->lat = pp_cluster_latency(c) / 1000;
  if (!PPI_ARENA_NEW(ar, ctx, q->cu, (size_t)S * D) ||
      !PPI_ARENA_NEW(ar, ctx, q->P, S) ||
      !PPI_ARENA_NEW(ar, ctx, q->adj_off, S + 1) ||
      !PPI_ARENA_NEW(ar, ctx, q->adj_s, 2 * g->ne) ||
      !PPI_ARENA_NEW(ar, ctx, q->adj_m, 2 * g->ne) ||
      !PPI_ARENA_NEW(ar, ctx, q->ea, g->ne) ||
      !PPI_ARENA_NEW(ar, ctx, q->eb, g->ne) ||
      !PPI_ARENA_NEW(ar, ctx, q->em, g->ne) ||
      !PPI_ARENA_NEW(ar, ctx, tmp, 2 * g->ne))
    return PP_ENOMEM;
  for (s = 0; s < S; s++) {
    q->P[s] = g->param[s];
    for (d = 0; d < D; d++) {
      pp_type_key k0 = pp_cluster_type_key(c, d);
      q->cu[(size_t)s * D + d] = g->compute[s] / k0.speed;
    }
  }
  for (e = 0; e < g->ne; e++) {
    q->ea[e] = g->from[e];
    q->eb[e] = g->to[e];
    q->em[e] = g->bytes[e];
    q->adj_off[g->from[e] + 1]++;
    q->adj_off[g->to[e] + 1]++;
  }
  for (s = 0; s < S; s++)
    q->adj_off[s + 1] += q->adj_off[s];
  {
    int32_t *fill;
    if (!PPI_ARENA_NEW(ar, ctx, fill, S))
      return PP_ENOMEM;
    for (e = 0; e < g->ne; e++) {
      int32_t a = g->from[e], b = g->to[e];
      tmp[q->adj_off[a] + fill[a]].s = b;
      tmp[q->adj_off[a] + fill[a]++].m = g->bytes[e];
      tmp[q->adj_off[b] + fill[b]].s = a;
      tmp[q->adj_off[b] + fill[b]++].m = g->bytes[e];
    }
  }
  for (s = 0; s < S; s++) { /* each stage's neighbours, largest first */
    int32_t a = q->adj_off[s], n = q->adj_off[s + 1] - a;
    qsort(tmp + a, (size_t)n, sizeof *tmp, cmp_adj);
    for (k = 0; k < n; k++) {
      q->adj_s[a + k] = tmp[a + k].s;
      q->adj_m[a + k] = tmp[a + k].m;
    }
  }
  return ppi_map_finish(ctx, ar, q);
}

/* ---- the algorithms ------------------------------------------------------ */

/* What an algorithm gets: the problem, the parameters, the context's
** seed, and two scratch mappings of q->n entries. */
struct map_job {
  pp_ctx *ctx;
  const struct ppi_map *q;
  const pp_map_params *p;
  uint64_t seed;
  int32_t *start, *alt;
};

/* start becomes alt when alt is the better mapping. */
static void keep_better(const struct ppi_map *q, int32_t *start,
                        const int32_t *alt)
{
  if (ppi_map_value(q, alt, NULL) < ppi_map_value(q, start, NULL))
    memcpy(start, alt, (size_t)q->n * sizeof *alt);
}

/* The better of what users get today: consecutive or Megatron's. */
static void best_baseline(const struct ppi_map *q, int32_t *start, int32_t *alt)
{
  ppi_map_cs(q, start);
  ppi_map_megatron(q, alt);
  keep_better(q, start, alt);
}

static pp_status run_cs(const struct map_job *j, int32_t *dev,
                        pp_map_summary *sum)
{
  (void)sum;
  ppi_map_cs(j->q, dev);
  return PP_OK;
}

static pp_status run_megatron(const struct map_job *j, int32_t *dev,
                              pp_map_summary *sum)
{
  (void)sum;
  ppi_map_megatron(j->q, dev);
  return PP_OK;
}

static pp_status run_random(const struct map_job *j, int32_t *dev,
                            pp_map_summary *sum)
{
  (void)sum;
  return ppi_map_random(j->ctx, j->q, j->p->samples, j->seed, dev);
}

static pp_status run_anneal(const struct map_job *j, int32_t *dev,
                            pp_map_summary *sum)
{
  (void)sum;
  best_baseline(j->q, j->start, j->alt);
  return ppi_map_anneal(j->ctx, j->q, j->p->samples, j->seed, j->start, dev);
}

static pp_status run_scotch(const struct map_job *j, int32_t *dev,
                            pp_map_summary *sum)
{
  (void)sum;
  return ppi_map_scotch(j->ctx, j->q, dev);
}

static pp_status run_exact(const struct map_job *j, int32_t *dev,
                           pp_map_summary *sum)
{
  const struct ppi_map *q = j->q;
  const pp_map_params *p = j->p;
  struct ppi_map_search sr;
  double t0 = ppi_now_s();
  pp_status rc;
  /* the best of what users get today as the first upper end */
  best_baseline(q, j->start, j->alt);
  /* TUNING: 64 random mappings, a cheap extra candidate; the annealing
  ** below does the real work */
  if ((rc = ppi_map_random(j->ctx, q, 64, j->seed, j->alt)))
    return rc;
  keep_better(q, j->start, j->alt);
  /* and annealed from there: a close upper end prunes most */
  if ((rc = ppi_map_anneal(j->ctx, q, ppi_map_anneal_steps(q->n), j->seed,
                           j->start, j->alt)))
    return rc;
  keep_better(q, j->start, j->alt);
  memset(&sr, 0, sizeof sr);
  /* TUNING: the search keeps at least a hundredth of the limit when the
  ** starts took it all, enough to try the lower bound's proof on small
  ** problems; part and solve (map_parts.c) may take three quarters:
  ** random_blk_1:512 16x32 ends 0.12% above the bound with it (c6044b8) */
  sr.time_limit = p->time_limit_s - (ppi_now_s() - t0);
  if (sr.time_limit < p->time_limit_s / 100)
    sr.time_limit = p->time_limit_s / 100;
  sr.threads = p->threads;
  /* part and solve shares time, not nodes: not with a budget of nodes */
  sr.parts_s = p->max_nodes > 0 ? 0 : p->time_limit_s * 3 / 4;
  sr.max_nodes = p->max_nodes;
  if ((rc = ppi_map_exact(j->ctx, q, j->start, dev, &sr)))
    return rc;
  sum->optimal = sr.optimal;
  sum->timed_out = sr.timed_out;
  sum->nodes = sr.nodes;
  sum->seconds = ppi_now_s() - t0; /* the parts too */
  sum->lower_bound_ms = sr.lower;
  return PP_OK;
}

/* Each algorithm's function; the exact search proves its own lower
** bound, the others get the problem's. */
static const struct map_algorithm {
  pp_map_algorithm algorithm;
  pp_status (*run)(const struct map_job *j, int32_t *dev, pp_map_summary *sum);
  bool own_bound;
} algorithms[] = {
    {PP_MAP_EXACT, run_exact, true},        /* map_search.c, map_parts.c */
    {PP_MAP_CS, run_cs, false},             /* map_baseline.c */
    {PP_MAP_MEGATRON, run_megatron, false}, /* map_baseline.c */
    {PP_MAP_RANDOM, run_random, false},     /* map_baseline.c */
    {PP_MAP_ANNEAL, run_anneal, false},     /* map_baseline.c */
    {PP_MAP_SCOTCH, run_scotch, false},     /* map_scotch.c */
};

static const struct map_algorithm *find_algorithm(pp_map_algorithm a)
{
  size_t i;
  for (i = 0; i < sizeof algorithms / sizeof algorithms[0]; i++)
    if (algorithms[i].algorithm == a)
      return &algorithms[i];
  return NULL;
}

/* ---- the mapping --------------------------------------------------------- */

/* The paper's rule: the allreduce when its bytes exceed the transfers'. */
static int resolve(const pp_stage_graph *g, int32_t R, pp_map_objective o)
{
  double ar = 0, pp = 0;
  int32_t s, e;
  if (o != PP_MAP_AUTO)
    return (int)o;
  if (R < 2)
    return MAP_P2P;
  for (s = 0; s < g->S; s++)
    ar += 2.0 * (R - 1) / R * g->param[s] * R;
  for (e = 0; e < g->ne; e++)
    pp += 2 * g->bytes[e] * R;
  return ar > pp ? MAP_AR : MAP_P2P;
}

pp_status pp_map(pp_ctx *ctx, const pp_stage_graph *g, const pp_cluster *c,
                 const pp_map_params *p, pp_mapping **out)
{
  struct pp_mapping *m = NULL;
  struct ppi_arena tmp;
  struct ppi_map q;
  const struct map_algorithm *alg;
  struct map_job job;
  int32_t R, n, i, s, d;
  pp_status rc;

  if (!ctx || !g || !c || !p || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_map: NULL argument") : PP_EINVAL;
  *out = NULL;
  R = p->replicas;
  if (!pp_map_objective_name(p->objective) ||
      !pp_map_algorithm_name(p->algorithm))
    return ppi_fail(ctx, PP_EINVAL, "map: unknown objective or algorithm");
  if (R < 1 || R > PP_MAX_DEVICES)
    return ppi_fail(ctx, PP_EINPUT, "map: %d replicas; 1 to %d", (int)R,
                    PP_MAX_DEVICES);
  if (!(p->time_limit_s > 0) || p->threads < 1 || p->samples < 1 ||
      p->max_nodes < 0)
    return ppi_fail(ctx, PP_EINPUT,
                    "map: time limit, threads and samples must be positive, "
                    "max_nodes not negative");
  n = g->S * R;
  if (n > pp_cluster_ndev(c))
    return ppi_fail(ctx, PP_EINPUT,
                    "map: %d stages x %d replicas = %d stage replicas, but "
                    "cluster '%s' has %d devices",
                    (int)g->S, (int)R, (int)n, pp_cluster_name(c),
                    (int)pp_cluster_ndev(c));
  ppi_arena_init(&tmp, ppi_ctx_alloc(ctx));
  if ((rc = ppi_map_build(ctx, &tmp, g, c, R, resolve(g, R, p->objective), &q)))
    goto done;
  q.stop.flag = p->stop;
  if (!(m = ppi_calloc(ctx, 1, sizeof *m))) {
    rc = PP_ENOMEM;
    goto done;
  }
  ppi_arena_init(&m->arena, ppi_ctx_alloc(ctx));
  {
    struct ppi_arena *ar = &m->arena;
    if (!PPI_ARENA_NEW(ar, ctx, m->dev, n) ||
        !PPI_ARENA_NEW(ar, ctx, m->t, n) ||
        !PPI_ARENA_NEW(ar, ctx, m->stage_name, g->S) ||
        !PPI_ARENA_NEW(ar, ctx, m->dev_name, pp_cluster_ndev(c)) ||
        !(m->cluster_name = ppi_arena_strdup(ar, ctx, pp_cluster_name(c))) ||
        !(m->graph_source = ppi_arena_strdup(ar, ctx, g->source))) {
      rc = PP_ENOMEM;
      goto done;
    }
    for (s = 0; s < g->S; s++)
      if (!(m->stage_name[s] = ppi_arena_strdup(ar, ctx, g->name[s]))) {
        rc = PP_ENOMEM;
        goto done;
      }
    for (d = 0; d < pp_cluster_ndev(c); d++) {
      pp_device_desc dd;
      pp_cluster_device(c, d, &dd);
      if (!(m->dev_name[d] = ppi_arena_strdup(ar, ctx, dd.name))) {
        rc = PP_ENOMEM;
        goto done;
      }
    }
  }
  m->S = g->S;
  m->R = R;
  m->sum.objective = (pp_map_objective)q.obj;
  m->sum.algorithm = p->algorithm;
  m->sum.stages = g->S;
  m->sum.replicas = R;
  m->sum.devices = pp_cluster_ndev(c);
  job.ctx = ctx;
  job.q = &q;
  job.p = p;
  job.seed = pp_ctx_seed(ctx);
  if (!(job.start = ppi_arena_alloc(&tmp, ctx, (size_t)n, sizeof *job.start)) ||
      !(job.alt = ppi_arena_alloc(&tmp, ctx, (size_t)n, sizeof *job.alt))) {
    rc = PP_ENOMEM;
    goto done;
  }
  if (!(alg = find_algorithm(p->algorithm))) {
    rc = ppi_fail(ctx, PP_EINVAL, "map: unknown algorithm");
    goto done;
  }
  rc = alg->run(&job, m->dev, &m->sum);
  if (rc)
    goto done;
  m->sum.objective_ms = ppi_map_value(&q, m->dev, m->t);
  if (!alg->own_bound)
    m->sum.lower_bound_ms = ppi_map_lower_bound(ctx, &q);
  if (m->sum.lower_bound_ms > m->sum.objective_ms)
    m->sum.lower_bound_ms = m->sum.objective_ms;
  for (i = 0; i < n; i++) /* a baseline's own check: injective */
    for (s = 0; s < i; s++)
      if (m->dev[s] == m->dev[i]) {
        rc = ppi_fail(ctx, PP_EINTERNAL, "map: device %d used twice",
                      (int)m->dev[i]);
        goto done;
      }
  *out = m;
  m = NULL;
done:
  pp_mapping_destroy(m);
  ppi_arena_free(&tmp);
  return rc;
}

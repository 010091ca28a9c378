/* SPDX-License-Identifier: MIT */
/*
** RUNS.json, the measured runs `parplan calibrate` fits (docs/FORMATS.md,
** "Runs"):
**
**   {"runs": [{"plan": "p1.json", "model": "gpt2-amp",
**              "cluster": "amp-homogeneous", "iteration_ms": 1320.0,
**              "peak_memory_bytes": 14012345678},
**             {"plan": {...inline plan...}, "model": "m.json",
**              "cluster": "c.json", "failed": "oom"}]}
**
** Paths (of plans, and of models and clusters given as files) are
** relative to the RUNS.json; a model or cluster spec that names no file
** there is taken as given (a built-in, a generator, an absolute path).
** Each distinct model and cluster spec is loaded once.  The pp_runs
** object owns everything it loaded.
*/
#define _POSIX_C_SOURCE 200809L
#include "format/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct pp_runs {
  pp_ctx *ctx;
  struct ppi_vec rec;                     /* pp_run_record */
  struct ppi_vec models, clusters, plans; /* owned objects */
  struct ppi_vec mspec, cspec;            /* char *, parallel to them */
  struct ppi_vec names;                   /* char *, owned run names */
};
/* A link record's device list is owned through the record itself
** (ppi_calloc'd, freed with it). */

static char *dup_str(pp_ctx *ctx, const char *s)
{
  size_t n = strlen(s) + 1;
  char *d = ppi_alloc(ctx, n);
  if (d)
    memcpy(d, s, n);
  return d;
}

static void free_strs(pp_ctx *ctx, struct ppi_vec *v)
{
  size_t i;
  for (i = 0; i < v->n; i++) {
    char *s = PPI_VEC_AT(v, char *, i);
    ppi_free(ctx, s, strlen(s) + 1);
  }
  ppi_vec_free(ctx, v);
}

void pp_runs_destroy(pp_runs *r)
{
  size_t i;
  if (!r)
    return;
  for (i = 0; i < r->plans.n; i++)
    pp_plan_destroy(PPI_VEC_AT(&r->plans, pp_plan *, i));
  for (i = 0; i < r->models.n; i++)
    pp_model_destroy(PPI_VEC_AT(&r->models, pp_model *, i));
  for (i = 0; i < r->clusters.n; i++)
    pp_cluster_destroy(PPI_VEC_AT(&r->clusters, pp_cluster *, i));
  ppi_vec_free(r->ctx, &r->plans);
  ppi_vec_free(r->ctx, &r->models);
  ppi_vec_free(r->ctx, &r->clusters);
  free_strs(r->ctx, &r->mspec);
  free_strs(r->ctx, &r->cspec);
  free_strs(r->ctx, &r->names);
  for (i = 0; i < r->rec.n; i++) {
    pp_run_record *x = &PPI_VEC_AT(&r->rec, pp_run_record, i);
    if (x->devices)
      ppi_free(r->ctx, (int32_t *)x->devices,
               (size_t)x->ndevices * sizeof *x->devices);
  }
  ppi_vec_free(r->ctx, &r->rec);
  ppi_free(r->ctx, r, sizeof *r);
}

int32_t pp_runs_count(const pp_runs *r)
{
  return r ? (int32_t)r->rec.n : 0;
}

const pp_run_record *pp_runs_records(const pp_runs *r)
{
  return r && r->rec.n ? (const pp_run_record *)r->rec.data : NULL;
}

/* spec resolved against dir (the RUNS.json's folder) into buf: dir/spec
** when the file part of spec (up to a ':' of options) exists there. */
static const char *resolve(const char *dir, const char *spec, char *buf,
                           size_t n)
{
  const char *colon = strchr(spec, ':');
  size_t flen = colon ? (size_t)(colon - spec) : strlen(spec);
  if (!dir[0] || spec[0] == '/' || flen == 0 ||
      (size_t)snprintf(buf, n, "%s/%.*s", dir, (int)flen, spec) >= n ||
      access(buf, R_OK) != 0)
    return spec;
  if ((size_t)snprintf(buf, n, "%s/%s", dir, spec) >= n)
    return spec;
  return buf;
}

/* The object loaded for spec (once per distinct spec). */
static pp_status get_obj(pp_runs *r, const char *dir, const char *spec,
                         int model, void **out)
{
  struct ppi_vec *specs = model ? &r->mspec : &r->cspec;
  struct ppi_vec *objs = model ? &r->models : &r->clusters;
  char path[4096];
  const char *p;
  char *copy;
  void *o = NULL;
  size_t i;
  pp_status rc;
  for (i = 0; i < specs->n; i++)
    if (strcmp(PPI_VEC_AT(specs, char *, i), spec) == 0) {
      *out = PPI_VEC_AT(objs, void *, i);
      return PP_OK;
    }
  p = resolve(dir, spec, path, sizeof path);
  rc = model ? pp_model_load(r->ctx, p, (pp_model **)&o)
             : pp_cluster_load(r->ctx, p, (pp_cluster **)&o);
  if (rc)
    return rc;
  if (!(copy = dup_str(r->ctx, spec)) || ppi_vec_push(r->ctx, objs, &o)) {
    if (copy)
      ppi_free(r->ctx, copy, strlen(copy) + 1);
    if (model)
      pp_model_destroy(o);
    else
      pp_cluster_destroy(o);
    return r->ctx->err ? r->ctx->err : PP_ENOMEM;
  }
  if (ppi_vec_push(r->ctx, specs, &copy)) {
    ppi_free(r->ctx, copy, strlen(copy) + 1);
    objs->n--;
    if (model)
      pp_model_destroy(o);
    else
      pp_cluster_destroy(o);
    return r->ctx->err;
  }
  *out = o;
  return PP_OK;
}

/* A failure inside a run: the file and the run first. */
static pp_status in_run(pp_ctx *ctx, pp_status rc, const char *src,
                        const char *what)
{
  char msg[1024];
  if (rc != PP_EINPUT && rc != PP_EIO && rc != PP_ELIMIT && rc != PP_EPARSE)
    return rc;
  snprintf(msg, sizeof msg, "%s", pp_ctx_errmsg(ctx));
  pp_ctx_clear_error(ctx);
  return ppi_fail_at(ctx, rc, src, 0, 0, "%s: %s", what, msg);
}

/* The run's "log": one file name or an array of them (training logs,
** nvidia-smi samples; docs/FORMATS.md "Training logs").  What the run
** gives itself wins; else the logs' median iteration time (of the first
** log that has one), their largest peak, and out of memory if any says
** so. */
static pp_status read_logs(pp_runs *r, const char *src, const char *dir,
                           const json_t *o, const char *w, double *t,
                           double *mem, int *failed)
{
  const json_t *lg = json_object_get(o, "log");
  double lt = NAN, lm = NAN;
  size_t i, n;
  if (!lg)
    return PP_OK;
  if (!json_is_string(lg) && !json_is_array(lg))
    return ppi_fail_at(r->ctx, PP_EINPUT, src, 0, 0,
                       "%s: \"log\" must be a file name or an array of them, "
                       "not %s",
                       w, ppi_json_type(lg));
  n = json_is_array(lg) ? json_array_size(lg) : 1;
  for (i = 0; i < n; i++) {
    const json_t *f = json_is_array(lg) ? json_array_get(lg, i) : lg;
    char path[4096];
    pp_log_summary ls;
    pp_status rc;
    if (!json_is_string(f))
      return ppi_fail_at(r->ctx, PP_EINPUT, src, 0, 0,
                         "%s: \"log\" entry %zu is not a file name", w, i);
    if ((rc = pp_log_load(r->ctx,
                          resolve(dir, json_string_value(f), path, sizeof path),
                          &ls)))
      return in_run(r->ctx, rc, src, w);
    if (isnan(lt) && ls.iteration_ms > 0)
      lt = ls.iteration_ms;
    if (ls.peak_memory_bytes > 0 && !(lm >= ls.peak_memory_bytes))
      lm = ls.peak_memory_bytes;
    /* what the run gives itself wins: a time it gives says it ran */
    if (ls.failed && !*failed && isnan(*t))
      *failed = 1;
  }
  if (isnan(*t))
    *t = lt;
  if (isnan(*mem))
    *mem = lm;
  return PP_OK;
}

/* A copy of the run's name that r owns, in *out. */
static pp_status keep_name(pp_runs *r, const char *name, const char **out)
{
  char *nm = dup_str(r->ctx, name);
  if (!nm || ppi_vec_push(r->ctx, &r->names, &nm)) {
    if (nm)
      ppi_free(r->ctx, nm, strlen(nm) + 1);
    return r->ctx->err ? r->ctx->err : PP_ENOMEM;
  }
  *out = nm;
  return PP_OK;
}

/* A measurement of the links: {"nccl_tests": FILE, "cluster": SPEC,
** "devices": [...]} (default: every device of the cluster, in order). */
static pp_status read_links(pp_runs *r, const char *src, const char *dir,
                            const json_t *o, const char *w, const char *name)
{
  pp_ctx *ctx = r->ctx;
  char path[4096];
  const char *cs, *file;
  const json_t *dv;
  pp_run_record rec;
  pp_nccl_tests nt;
  int32_t k, n, ranks, *devs;
  double best = 0;
  pp_status rc;
  memset(&rec, 0, sizeof rec);
  memset(&nt, 0, sizeof nt);
  if ((rc = ppi_jstr(ctx, src, w, o, "nccl_tests", true, &file)) ||
      (rc = ppi_jstr(ctx, src, w, o, "cluster", true, &cs)))
    return rc;
  if ((rc = get_obj(r, dir, cs, 0, (void **)&rec.cluster)))
    return in_run(ctx, rc, src, w);
  if ((rc =
           pp_nccl_tests_load(ctx, resolve(dir, file, path, sizeof path), &nt)))
    return in_run(ctx, rc, src, w);
  if (strcmp(nt.collective, "all_reduce") == 0)
    rec.link = 0;
  else if (strcmp(nt.collective, "sendrecv") == 0)
    rec.link = 1;
  else {
    rc = ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                     "%s: %s is %s; only all_reduce and sendrecv tables "
                     "calibrate the links",
                     w, file, nt.collective[0] ? nt.collective : "not named");
    pp_nccl_tests_free(ctx, &nt);
    return rc;
  }
  for (k = 0; k < nt.nrows; k++)
    if (nt.rows[k].busbw_gbps > best)
      best = nt.rows[k].busbw_gbps;
  ranks = nt.nranks;
  pp_nccl_tests_free(ctx, &nt);
  if (!(best > 0))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: %s shows no bus bandwidth above 0", w, file);
  rec.busbw_gbps = best;
  dv = json_object_get(o, "devices");
  n = dv ? (int32_t)json_array_size(dv) : pp_cluster_ndev(rec.cluster);
  if ((dv && !json_is_array(dv)) || n < 2 || (rec.link == 1 && n != 2))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: \"devices\" must list at least two devices of "
                       "the cluster (exactly two for sendrecv)",
                       w);
  /* the devices, read once and checked; owned by the record from here */
  if (!(devs = ppi_calloc(ctx, (size_t)n, sizeof *devs)))
    return PP_ENOMEM;
  for (k = 0; k < n && !rc; k++) {
    const json_t *x = dv ? json_array_get(dv, (size_t)k) : NULL;
    json_int_t d = x ? json_integer_value(x) : k;
    if ((x && !json_is_integer(x)) || d < 0 ||
        d >= pp_cluster_ndev(rec.cluster))
      rc = ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: entry %d of \"devices\" is not a device of the "
                       "cluster (0 to %d)",
                       w, (int)k, (int)pp_cluster_ndev(rec.cluster) - 1);
    devs[k] = (int32_t)d;
  }
  if (!rc && ranks > 0 && ranks != n)
    rc = ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                     "%s: %s ran on %d ranks, but %d devices are given "
                     "(\"devices\", or the cluster's all)",
                     w, file, (int)ranks, (int)n);
  /* one device type: what it calibrates (the links across nodes where a
  ** hop leaves one, else those inside the node) */
  for (k = 0; k < n && !rc; k++) {
    int32_t a = devs[k], b = devs[(k + 1) % n];
    if (pp_cluster_device_type(rec.cluster, a) !=
        pp_cluster_device_type(rec.cluster, b))
      rc = ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: its devices are of several types; a link "
                       "measurement calibrates one",
                       w);
  }
  if (!rc)
    rc = keep_name(r, name ? name : w, &rec.name);
  if (rc) {
    ppi_free(ctx, devs, (size_t)n * sizeof *devs);
    return rc;
  }
  rec.devices = devs;
  rec.ndevices = n;
  rec.iteration_ms = rec.peak_memory_bytes = NAN;
  if ((rc = ppi_vec_push(ctx, &r->rec, &rec))) {
    ppi_free(ctx, (int32_t *)rec.devices, (size_t)n * sizeof *rec.devices);
    return rc;
  }
  return PP_OK;
}

static pp_status read_run(pp_runs *r, const char *src, const char *dir,
                          const json_t *o, size_t i)
{
  pp_ctx *ctx = r->ctx;
  char w[96], path[4096];
  const char *ms, *cs, *name, *failed;
  const json_t *pj;
  pp_run_record rec;
  pp_plan *plan = NULL;

  double t, mem;
  pp_status rc;
  snprintf(w, sizeof w, "run %zu", i);
  if (!json_is_object(o))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0, "%s: not an object, %s", w,
                       ppi_json_type(o));
  if ((rc = ppi_jstr(ctx, src, w, o, "name", false, &name)))
    return rc;
  if (name)
    snprintf(w, sizeof w, "run %zu (%s)", i, name);
  if (json_object_get(o, "nccl_tests"))
    return read_links(r, src, dir, o, w, name);
  if ((rc = ppi_jstr(ctx, src, w, o, "model", true, &ms)) ||
      (rc = ppi_jstr(ctx, src, w, o, "cluster", true, &cs)) ||
      (rc = ppi_jnum(ctx, src, w, o, "iteration_ms", false, NAN, 1e-6, 1e12,
                     &t)) ||
      (rc = ppi_jnum(ctx, src, w, o, "peak_memory_bytes", false, NAN, 1, 1e18,
                     &mem)) ||
      (rc = ppi_jstr(ctx, src, w, o, "failed", false, &failed)))
    return rc;
  if (name)
    snprintf(w, sizeof w, "run %zu (%s)", i, name);
  memset(&rec, 0, sizeof rec);
  if (failed && strcmp(failed, "oom") != 0 && strcmp(failed, "timeout") != 0)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: \"failed\" is \"%s\"; it must be \"oom\" or "
                       "\"timeout\"",
                       w, failed);
  rec.failed = !failed ? 0 : failed[0] == 'o' ? 1 : 2;
  if (rec.failed && !isnan(t))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: a failed run has no iteration_ms", w);
  if (!rec.failed && isnan(t) && isnan(mem) && !json_object_get(o, "log"))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: neither iteration_ms nor peak_memory_bytes nor "
                       "\"failed\" nor a \"log\": nothing was measured",
                       w);
  if ((rc = read_logs(r, src, dir, o, w, &t, &mem, &rec.failed)))
    return rc;
  if (rec.failed && !isnan(t) && !failed)
    t = NAN; /* a run that died: its earlier iterations do not count */
  if (!rec.failed && isnan(t) && isnan(mem))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: its logs measured nothing (no iteration time, no "
                       "memory, no out-of-memory error)",
                       w);
  rec.iteration_ms = t;
  rec.peak_memory_bytes = mem;
  if ((rc = get_obj(r, dir, ms, 1, (void **)&rec.model)) ||
      (rc = get_obj(r, dir, cs, 0, (void **)&rec.cluster)))
    return in_run(ctx, rc, src, w);
  pj = json_object_get(o, "plan");
  if (json_is_string(pj)) {
    const char *p = resolve(dir, json_string_value(pj), path, sizeof path);
    rc = pp_plan_load(ctx, p, rec.model, rec.cluster, &plan);
  } else if (json_is_object(pj)) {
    char *text = json_dumps(pj, JSON_COMPACT);
    char psrc[160];
    snprintf(psrc, sizeof psrc, "%s (%s's plan)", src, w);
    rc = text ? pp_plan_read_json(ctx, text, strlen(text), psrc, rec.model,
                                  rec.cluster, &plan)
              : ppi_nomem(ctx);
    free(text);
  } else {
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: \"plan\" must be a file name or a plan object, "
                       "not %s",
                       w, pj ? ppi_json_type(pj) : "missing");
  }
  if (rc)
    return in_run(ctx, rc, src, w);
  if (ppi_vec_push(ctx, &r->plans, &plan)) {
    pp_plan_destroy(plan);
    return ctx->err;
  }
  rec.plan = plan;
  if ((rc = keep_name(r, name ? name : w, &rec.name)))
    return rc;
  return ppi_vec_push(ctx, &r->rec, &rec);
}

pp_status pp_runs_read_json(pp_ctx *ctx, const char *text, size_t len,
                            const char *source, pp_runs **out)
{
  const char *src = source ? source : "runs", *slash;
  char dir[4096] = "";
  json_t *root, *arr;
  pp_runs *r;
  size_t i;
  pp_status rc;
  if (!ctx || !text || !out)
    return PP_EINVAL;
  *out = NULL;
  if ((slash = strrchr(src, '/')) && (size_t)(slash - src) < sizeof dir)
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - src), src);
  if (!(r = ppi_calloc(ctx, 1, sizeof *r)))
    return PP_ENOMEM;
  r->ctx = ctx;
  ppi_vec_init(&r->rec, sizeof(pp_run_record));
  ppi_vec_init(&r->models, sizeof(pp_model *));
  ppi_vec_init(&r->clusters, sizeof(pp_cluster *));
  ppi_vec_init(&r->plans, sizeof(pp_plan *));
  ppi_vec_init(&r->mspec, sizeof(char *));
  ppi_vec_init(&r->cspec, sizeof(char *));
  ppi_vec_init(&r->names, sizeof(char *));
  if (!(root = ppi_json_parse(ctx, text, len, src))) {
    pp_runs_destroy(r);
    return ctx->err;
  }
  rc = ppi_jarr(ctx, src, "runs file", root, "runs", true, &arr);
  for (i = 0; !rc && i < json_array_size(arr); i++)
    rc = read_run(r, src, dir, json_array_get(arr, i), i);
  if (!rc && r->rec.n == 0)
    rc = ppi_fail_at(ctx, PP_EINPUT, src, 0, 0, "\"runs\" is empty");
  json_decref(root);
  if (rc) {
    pp_runs_destroy(r);
    return rc;
  }
  *out = r;
  return PP_OK;
}

pp_status pp_runs_load(pp_ctx *ctx, const char *path, pp_runs **out)
{
  char *text;
  size_t len;
  pp_status rc;
  if (!ctx || !path || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_runs_load: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  if ((rc = ppi_read_file(ctx, path, &text, &len)))
    return rc;
  rc = pp_runs_read_json(ctx, text, len, path, out);
  ppi_free(ctx, text, len + 1);
  return rc;
}

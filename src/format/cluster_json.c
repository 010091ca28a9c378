/* SPDX-License-Identifier: MIT */
/*
** Cluster JSON: the reader (through the public builder) and the
** normalized writer.  docs/FORMATS.md, "Cluster JSON", is the contract.
** A cluster is either a bandwidth matrix or a link graph; the writer
** keeps whichever it was, so a 4,096-GPU fat tree stays a few thousand
** links rather than sixteen million matrix entries.
*/
#include "format/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct cread {
  pp_ctx *ctx;
  const char *src;
  pp_cluster_builder *b;
};

static pp_status read_types(struct cread *r, const json_t *types)
{
  const char *k;
  json_t *v;
  pp_status rc;
  if (!json_is_object(types))
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "\"device_types\" must be an object of types, not %s",
                       ppi_json_type(types));
  if (json_object_size(types) == 0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "\"device_types\" is empty");
  json_object_foreach((json_t *)types, k, v)
  {
    pp_device_type_desc d;
    const struct ppi_gpu *gpu;
    char w[PP_MAX_NAME + 32], fam[256];
    snprintf(w, sizeof w, "device type '%s'", k);
    if (!json_is_object(v))
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s must be an object, not %s", w, ppi_json_type(v));
    /* A catalog name takes the catalog's figures for what it leaves
    ** out; a name of a catalog family that is not one of its members
    ** ("A100") is an error rather than a generic device of speed 1;
    ** any other name is the user's own type (speed 1 relative to the
    ** model's reference type unless given, docs/FORMATS.md). */
    gpu = ppi_gpu_find(k);
    if (gpu)
      ppi_gpu_type_desc(gpu, &d);
    else
      pp_device_type_desc_init(&d);
    d.name = k;
    if (!gpu && ppi_gpu_family(k, fam, sizeof fam) > 0)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s: not a catalog name; did you mean one of %s?", w,
                         fam);
    if ((rc = ppi_jnum(r->ctx, r->src, w, v, "memory_gb", !gpu, d.memory_gib, 0,
                       HUGE_VAL, &d.memory_gib)) ||
        (rc = ppi_jnum(r->ctx, r->src, w, v, "speed", false, d.speed, 0,
                       HUGE_VAL, &d.speed)) ||
        (rc = ppi_jnum(r->ctx, r->src, w, v, "peak_tflops", false,
                       d.peak_tflops, 0, HUGE_VAL, &d.peak_tflops)) ||
        (rc = ppi_jnum(r->ctx, r->src, w, v, "peak_fp32_tflops", false,
                       d.peak_fp32_tflops, 0, HUGE_VAL, &d.peak_fp32_tflops)) ||
        (rc = ppi_jnum(r->ctx, r->src, w, v, "mem_gbps", false, d.mem_gbps, 0,
                       HUGE_VAL, &d.mem_gbps)) ||
        (rc = ppi_jnum(r->ctx, r->src, w, v, "peak_tf32_tflops", false,
                       d.peak_tf32_tflops, 0, HUGE_VAL, &d.peak_tf32_tflops)) ||
        (rc = pp_cluster_builder_add_type(r->b, &d)))
      return rc;
  }
  return PP_OK;
}

static pp_status read_devices(struct cread *r, const json_t *devs)
{
  size_t i;
  pp_status rc;
  if (json_array_size(devs) > PP_MAX_DEVICES)
    return ppi_fail_at(r->ctx, PP_ELIMIT, r->src, 0, 0,
                       "%zu devices exceed the limit of %d",
                       json_array_size(devs), PP_MAX_DEVICES);
  for (i = 0; i < json_array_size(devs); i++) {
    json_t *o;
    pp_device_desc d;
    int64_t node, local;
    char w[PP_MAX_NAME + 48];
    pp_device_desc_init(&d);
    snprintf(w, sizeof w, "device %zu", i);
    if ((rc = ppi_jobj_at(r->ctx, r->src, "device", devs, i, &o)) ||
        (rc = ppi_jstr(r->ctx, r->src, w, o, "name", true, &d.name)))
      return rc;
    snprintf(w, sizeof w, "device '%s' (index %zu)", d.name, i);
    if ((rc = ppi_jstr(r->ctx, r->src, w, o, "type", true, &d.type)) ||
        (rc = ppi_jint(r->ctx, r->src, w, o, "node", true, 0, 0,
                       16 * PP_MAX_DEVICES, &node)) ||
        (rc = ppi_jstr(r->ctx, r->src, w, o, "host", false, &d.host)) ||
        (rc = ppi_jint(r->ctx, r->src, w, o, "local_gpu", false, -1, 0, 1 << 20,
                       &local)))
      return rc;
    d.node = (int32_t)node;
    d.local_gpu = (int32_t)local;
    if ((rc = pp_cluster_builder_add_device(r->b, &d, NULL)))
      return rc;
  }
  return PP_OK;
}

static pp_status read_matrix(struct cread *r, const json_t *mat, int32_t ndev)
{
  size_t n = json_array_size(mat), i, j;
  double *bw;
  pp_status rc = PP_OK;
  if ((int32_t)n != ndev)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "bandwidth_GBps has %zu rows but there are %d devices",
                       n, (int)ndev);
  for (i = 0; i < n; i++) {
    const json_t *row = json_array_get(mat, i);
    if (!json_is_array(row))
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "bandwidth_GBps row %zu must be an array, not %s", i,
                         ppi_json_type(row));
    if (json_array_size(row) != n)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "bandwidth_GBps is not square: row %zu has %zu "
                         "entries, not %zu",
                         i, json_array_size(row), n);
  }
  bw = ppi_calloc(r->ctx, n * n, sizeof *bw);
  if (!bw)
    return r->ctx->err;
  for (i = 0; i < n && rc == PP_OK; i++)
    for (j = 0; j < n && rc == PP_OK; j++) {
      const json_t *v = json_array_get(json_array_get(mat, i), j);
      char label[64];
      snprintf(label, sizeof label, "bandwidth_GBps[%zu][%zu]", i, j);
      if (i == j && json_is_number(v)) /* the diagonal is ignored */
        continue;
      rc = ppi_jval_num(r->ctx, r->src, label, v, -HUGE_VAL, HUGE_VAL,
                        &bw[i * n + j]);
    }
  if (rc == PP_OK)
    rc = pp_cluster_builder_set_bandwidth(r->b, bw, (int32_t)n);
  ppi_free(r->ctx, bw, n * n * sizeof *bw);
  return rc;
}

static pp_status read_links(struct cread *r, const json_t *sws,
                            const json_t *links)
{
  size_t i;
  pp_status rc;
  for (i = 0; i < json_array_size(sws); i++) {
    const json_t *s = json_array_get(sws, i);
    const char *name = NULL;
    char w[32];
    snprintf(w, sizeof w, "switch %zu", i);
    if (json_is_object(s)) {
      if ((rc = ppi_jstr(r->ctx, r->src, w, s, "name", true, &name)))
        return rc;
    } else if (json_is_string(s))
      name = json_string_value(s);
    else
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s must be a name or an object, not %s", w,
                         ppi_json_type(s));
    if ((rc = pp_cluster_builder_add_switch(r->b, name)))
      return rc;
  }
  for (i = 0; i < json_array_size(links); i++) {
    json_t *o;
    const char *a, *b;
    double gbps;
    int64_t count;
    char w[32];
    snprintf(w, sizeof w, "link %zu", i);
    if ((rc = ppi_jobj_at(r->ctx, r->src, "link", links, i, &o)) ||
        (rc = ppi_jstr(r->ctx, r->src, w, o, "a", true, &a)) ||
        (rc = ppi_jstr(r->ctx, r->src, w, o, "b", true, &b)) ||
        (rc = ppi_jnum(r->ctx, r->src, w, o, "GBps", true, 0, -HUGE_VAL,
                       HUGE_VAL, &gbps)) ||
        (rc = ppi_jint(r->ctx, r->src, w, o, "count", false, 1, 1, 1 << 20,
                       &count)) ||
        (rc = pp_cluster_builder_add_link(r->b, a, b, gbps, (int32_t)count)))
      return rc;
  }
  return PP_OK;
}

pp_status pp_cluster_read_json(pp_ctx *ctx, const char *text, size_t len,
                               const char *source, pp_cluster **out)
{
  struct cread r;
  json_t *root, *devs, *mat, *sws, *links;
  const char *name, *routing;
  double lat;
  pp_status rc;

  if (!ctx || !text || !out)
    return PP_EINVAL;
  *out = NULL;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.src = source ? source : "cluster";
  root = ppi_json_parse(ctx, text, len, r.src);
  if (!root)
    return ctx->err;
  if ((rc = ppi_jstr(ctx, r.src, "cluster", root, "name", false, &name)) ||
      (rc = ppi_jarr(ctx, r.src, "cluster", root, "devices", true, &devs)) ||
      (rc = ppi_jarr(ctx, r.src, "cluster", root, "bandwidth_GBps", false,
                     &mat)) ||
      (rc = ppi_jarr(ctx, r.src, "cluster", root, "switches", false, &sws)) ||
      (rc = ppi_jarr(ctx, r.src, "cluster", root, "links", false, &links)) ||
      (rc =
           ppi_jstr(ctx, r.src, "cluster", root, "routing", false, &routing)) ||
      (rc = ppi_jnum(ctx, r.src, "cluster", root, "latency_us", false, 0, 0,
                     HUGE_VAL, &lat)))
    goto done;
  if (!json_object_get(root, "device_types")) {
    rc = ppi_fail_at(ctx, PP_EINPUT, r.src, 0, 0,
                     "cluster: missing field \"device_types\"");
    goto done;
  }
  if ((rc = pp_cluster_builder_create(ctx, name ? name : "cluster", r.src,
                                      &r.b)) ||
      (rc = pp_cluster_builder_set_latency(r.b, lat)) ||
      (rc = read_types(&r, json_object_get(root, "device_types"))) ||
      (rc = read_devices(&r, devs)))
    goto done;
  if (routing) {
    pp_routing rt;
    if (strcmp(routing, "widest") == 0)
      rt = PP_ROUTE_WIDEST;
    else if (strcmp(routing, "hops") == 0)
      rt = PP_ROUTE_HOPS;
    else {
      rc = ppi_fail_at(ctx, PP_EINPUT, r.src, 0, 0,
                       "cluster: \"routing\" "
                       "must be \"widest\" or \"hops\", not \"%s\"",
                       routing);
      goto done;
    }
    if ((rc = pp_cluster_builder_set_routing(r.b, rt)))
      goto done;
  }
  if (mat && (links || sws)) {
    rc = ppi_fail_at(ctx, PP_EINPUT, r.src, 0, 0,
                     "cluster: give either "
                     "\"bandwidth_GBps\" or \"links\", not both");
    goto done;
  }
  if (mat &&
      (rc = read_matrix(&r, mat, (int32_t)json_array_size(devs))) != PP_OK)
    goto done;
  if ((links || sws) && (rc = read_links(&r, sws, links)) != PP_OK)
    goto done;
  rc = pp_cluster_builder_finish(r.b, out);
  r.b = NULL;
done:
  pp_cluster_builder_destroy(r.b);
  json_decref(root);
  return rc;
}

/* ---- writer ----------------------------------------------------------- */

static void write_cluster(FILE *f, const struct pp_cluster *c)
{
  int32_t i, j;
  fputs("{\"name\": ", f);
  ppi_json_str(f, c->name);
  fputs(",\n \"device_types\": {\n", f);
  for (i = 0; i < c->ntype; i++) {
    fputs("    ", f);
    ppi_json_str(f, c->type_name[i]);
    fputs(": {\"memory_gb\": ", f);
    ppi_json_num(f, c->type_mem_gib[i]);
    fputs(", \"speed\": ", f);
    ppi_json_num(f, c->type_speed[i]);
    /* every figure, 0 included: a catalog name read back would
    ** otherwise take the catalog's figure for one left out */
    fputs(", \"peak_tflops\": ", f);
    ppi_json_num(f, c->type_peak[i]);
    fputs(", \"peak_fp32_tflops\": ", f);
    ppi_json_num(f, c->type_peak32[i]);
    fputs(", \"mem_gbps\": ", f);
    ppi_json_num(f, c->type_membw[i]);
    fputs(", \"peak_tf32_tflops\": ", f);
    ppi_json_num(f, c->type_tf32[i]);
    fputs(i + 1 < c->ntype ? "},\n" : "}\n", f);
  }
  fputs(" },\n \"devices\": [\n", f);
  for (i = 0; i < c->ndev; i++) {
    fputs("    {\"name\": ", f);
    ppi_json_str(f, c->dev_name[i]);
    fputs(", \"type\": ", f);
    ppi_json_str(f, c->type_name[c->dev_type[i]]);
    fprintf(f, ", \"node\": %d", (int)c->dev_node[i]);
    if (c->dev_host[i]) {
      fputs(", \"host\": ", f);
      ppi_json_str(f, c->dev_host[i]);
    }
    if (c->dev_local[i] >= 0)
      fprintf(f, ", \"local_gpu\": %d", (int)c->dev_local[i]);
    fputs(i + 1 < c->ndev ? "},\n" : "}\n", f);
  }
  fputs(" ],\n \"latency_us\": ", f);
  ppi_json_num(f, c->latency_us);
  if (c->has_links) {
    fputs(",\n \"routing\": ", f);
    fputs(c->routing == PP_ROUTE_HOPS ? "\"hops\"" : "\"widest\"", f);
    fputs(",\n \"switches\": [", f);
    for (i = 0; i < c->nswitch; i++) {
      fputs(i ? ", " : "", f);
      ppi_json_str(f, c->sw_name[i]);
    }
    fputs("],\n \"links\": [\n", f);
    for (i = 0; i < c->nlink; i++) {
      int32_t a = c->link_a[i], b = c->link_b[i];
      fputs("    {\"a\": ", f);
      ppi_json_str(f, a < c->ndev ? c->dev_name[a] : c->sw_name[a - c->ndev]);
      fputs(", \"b\": ", f);
      ppi_json_str(f, b < c->ndev ? c->dev_name[b] : c->sw_name[b - c->ndev]);
      fputs(", \"GBps\": ", f);
      ppi_json_num(f, c->link_gbps[i]);
      if (c->link_count[i] > 1)
        fprintf(f, ", \"count\": %d", (int)c->link_count[i]);
      fputs(i + 1 < c->nlink ? "},\n" : "}\n", f);
    }
    fputs(" ]", f);
  } else if (c->ndev > 1) {
    fputs(",\n \"bandwidth_GBps\": [\n", f);
    for (i = 0; i < c->ndev; i++) {
      fputs("    [", f);
      for (j = 0; j < c->ndev; j++) {
        if (j)
          fputs(", ", f);
        ppi_json_num(f, c->bw[(size_t)i * c->ndev + j]);
      }
      fputs(i + 1 < c->ndev ? "],\n" : "]\n", f);
    }
    fputs(" ]", f);
  }
  fputs("\n}\n", f);
}

static void emit_cluster(FILE *f, const void *c)
{
  write_cluster(f, c);
}

pp_status pp_cluster_write(pp_ctx *ctx, const pp_cluster *c, const char *path,
                           FILE *f)
{
  if (!ctx || !c || (!path && !f))
    return PP_EINVAL;
  return ppi_emit(ctx, path, f, emit_cluster, c);
}

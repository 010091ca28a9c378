/* SPDX-License-Identifier: MIT */
/*
** Descriptions of a model and a cluster, as text for people and as JSON
** for scripts (the same figures in both).  The figures come from
** pp_model_stats_get and pp_cluster_bw_classes; this file only formats.
*/
#include "plan/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct values of a small int list, in first-seen order. */
struct ilist {
  int32_t v[64];
  int n;
};

static void iadd(struct ilist *l, int32_t x)
{
  int i;
  for (i = 0; i < l->n; i++)
    if (l->v[i] == x)
      return;
  if (l->n < 64)
    l->v[l->n++] = x;
}

static int cmp_i32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static void iprint(FILE *f, struct ilist *l)
{
  int i;
  qsort(l->v, (size_t)l->n, sizeof l->v[0], cmp_i32);
  for (i = 0; i < l->n; i++)
    fprintf(f, "%s%d", i ? "," : "", (int)l->v[i]);
}

/* The distinct profile types: NULL (reference) first, then in order. */
static int profile_types(const struct pp_model *m, const char **types, int cap)
{
  int n = 0, i, t;
  for (t = 0; t < m->ntable; t++) {
    for (i = 0; i < n; i++)
      if (types[i] == m->tab_type[t] ||
          (types[i] && m->tab_type[t] && !strcmp(types[i], m->tab_type[t])))
        break;
    if (i == n && n < cap)
      types[n++] = m->tab_type[t];
  }
  return n;
}

/* Operator kinds and their counts, in first-seen order. */
struct kinds {
  struct ppi_strmap map;
  struct ppi_vec names, counts;
};

static pp_status count_kinds(pp_ctx *ctx, const struct pp_model *m,
                             struct kinds *k)
{
  int32_t v, idx, zero = 0;
  pp_status rc;
  ppi_strmap_init(&k->map);
  ppi_vec_init(&k->names, sizeof(const char *));
  ppi_vec_init(&k->counts, sizeof(int32_t));
  for (v = 0; v < m->nop; v++) {
    const char *kind = m->op_kind[v] ? m->op_kind[v] : "(none)";
    idx = ppi_strmap_get(&k->map, kind);
    if (idx < 0) {
      idx = (int32_t)k->names.n;
      if ((rc = ppi_strmap_put(ctx, &k->map, kind, idx, NULL)) ||
          (rc = ppi_vec_push(ctx, &k->names, &kind)) ||
          (rc = ppi_vec_push(ctx, &k->counts, &zero)))
        return rc;
    }
    PPI_VEC_AT(&k->counts, int32_t, idx)++;
  }
  return PP_OK;
}

static void free_kinds(pp_ctx *ctx, struct kinds *k)
{
  ppi_strmap_free(ctx, &k->map);
  ppi_vec_free(ctx, &k->names);
  ppi_vec_free(ctx, &k->counts);
}

static void model_text(FILE *f, const struct pp_model *m,
                       const pp_model_stats *st, const struct kinds *k)
{
  char b1[32], b2[32], b3[32];
  const char *types[64];
  int nt, i, t;

  fprintf(f, "model %s  (%s)\n", m->name, m->source);
  fprintf(f, "  operators    %d, %s", (int)st->nop,
          m->is_chain ? "a chain" : "a DAG");
  if (!m->is_chain)
    fprintf(f, " with %d edges; topological order %s", (int)st->nedge,
            m->topo_unique ? "unique" : "not unique");
  fprintf(f, "\n  reference    %s, micro-batch %d, tp 1\n",
          m->reftype ? m->reftype : "(any type, scaled by speed)",
          (int)m->micro_batch);
  fprintf(f,
          "  compute      fwd %.3f ms + bwd %.3f ms = %.3f ms per "
          "micro-batch",
          st->fwd_ms, st->bwd_ms, st->fwd_ms + st->bwd_ms);
  if (st->update_ms > 0)
    fprintf(f, "; optimizer step %.3f ms", st->update_ms);
  fprintf(f, "\n  longest op   %.3f ms (fwd + bwd)\n", st->max_op_ms);
  if (st->fwd_flops > 0)
    fprintf(f,
            "  flops        %.4g GFLOP fwd + %.4g GFLOP bwd per micro-batch "
            "(2 FLOPs per multiply-add), efficiency %g\n",
            st->fwd_flops / 1e9, st->bwd_flops / 1e9, m->efficiency);
  if (st->fwd_bytes > 0)
    fprintf(f,
            "  traffic      %.4g GB fwd + %.4g GB bwd of device memory per "
            "micro-batch (the roofline's bytes)\n",
            st->fwd_bytes / 1e9, st->bwd_bytes / 1e9);
  if (m->loss_fbytes + m->loss_bbytes > 0)
    fprintf(f,
            "  loss         %.4g GB fwd + %.4g GB bwd of device memory per "
            "micro-batch, not in the times (priced by the roofline on the "
            "last stage)\n",
            m->loss_fbytes / 1e9, m->loss_bbytes / 1e9);
  ppi_fmt_bytes(b1, sizeof b1, st->param_bytes);
  ppi_fmt_bytes(b2, sizeof b2, st->saved_bytes);
  ppi_fmt_bytes(b3, sizeof b3, st->out_bytes);
  fprintf(f, "  parameters   %s as trained (tied copies counted once)\n", b1);
  fprintf(f,
          "  activations  %s kept for backward, %s of outputs, per "
          "micro-batch\n",
          b2, b3);
  fprintf(f,
          "  shape        %d sources, %d sinks, depth %d, width %d, at "
          "most %d tensor%s across a cut, %d layer%s in the chain view\n",
          (int)st->nsource, (int)st->nsink, (int)st->depth, (int)st->width,
          (int)st->max_cut, st->max_cut == 1 ? "" : "s", (int)st->nlayer,
          st->nlayer == 1 ? "" : "s");
  nt = profile_types(m, types, 64);
  if (nt == 0)
    fprintf(f,
            "  profiles     none: other types scale the reference by "
            "speed%s\n",
            m->has_flops ? " or use FLOPs" : "");
  for (i = 0; i < nt; i++) {
    struct ilist tps = {{0}, 0}, mbs = {{0}, 0};
    int n = 0;
    for (t = 0; t < m->ntable; t++)
      if (types[i] == m->tab_type[t] ||
          (types[i] && m->tab_type[t] && !strcmp(types[i], m->tab_type[t]))) {
        iadd(&tps, m->tab_tp[t]);
        iadd(&mbs, m->tab_mbs[t]);
        n++;
      }
    fprintf(f, "  %-12s %-10s tp ", i ? "" : "profiles",
            types[i] ? types[i] : "(reference)");
    iprint(f, &tps);
    fputs(" x micro-batch ", f);
    iprint(f, &mbs);
    fprintf(f, " (%d point%s)\n", n, n == 1 ? "" : "s");
  }
  if (m->ntps) {
    fputs("  tp sizes     tp ", f);
    for (i = 0; i < m->ntps; i++)
      fprintf(f, "%s%d", i ? "," : "", (int)m->tps_tp[i]);
    fputc('\n', f);
  }
  fputs("  kinds       ", f); /* each entry adds its own space */
  for (i = 0; i < (int)k->names.n && i < 12; i++)
    fprintf(f, " %s %d%s", PPI_VEC_AT(&k->names, const char *, i),
            (int)PPI_VEC_AT(&k->counts, int32_t, i),
            i + 1 < (int)k->names.n ? "," : "");
  if (k->names.n > 12)
    fprintf(f, " ... (%zu kinds)", k->names.n);
  fputc('\n', f);
  if (m->nhyper) {
    fputs("  hyper       ", f);
    for (i = 0; i < m->nhyper; i++)
      fprintf(f, " %s %g%s", m->hyper_key[i], m->hyper_val[i],
              i + 1 < m->nhyper ? "," : "");
    fputc('\n', f);
  }
}

static void jkey(FILE *f, const char *k, double x, bool last)
{
  fprintf(f, "  \"%s\": ", k);
  ppi_json_num(f, x);
  fputs(last ? "\n" : ",\n", f);
}

static void model_json(FILE *f, const struct pp_model *m,
                       const pp_model_stats *st, const struct kinds *k)
{
  int32_t t, i;
  fputs("{\n  \"name\": ", f);
  ppi_json_str(f, m->name);
  fputs(",\n  \"source\": ", f);
  ppi_json_str(f, m->source);
  fputs(",\n  \"reference_type\": ", f);
  if (m->reftype)
    ppi_json_str(f, m->reftype);
  else
    fputs("null", f);
  fprintf(f, ",\n  \"chain\": %s,\n  \"topo_unique\": %s,\n",
          m->is_chain ? "true" : "false", m->topo_unique ? "true" : "false");
  jkey(f, "operators", st->nop, false);
  jkey(f, "edges", st->nedge, false);
  jkey(f, "micro_batch", m->micro_batch, false);
  jkey(f, "efficiency", m->efficiency, false);
  jkey(f, "loss_fwd_bytes", m->loss_fbytes, false);
  jkey(f, "loss_bwd_bytes", m->loss_bbytes, false);
  jkey(f, "fwd_ms", st->fwd_ms, false);
  jkey(f, "bwd_ms", st->bwd_ms, false);
  jkey(f, "update_ms", st->update_ms, false);
  jkey(f, "max_op_ms", st->max_op_ms, false);
  jkey(f, "fwd_flops", st->fwd_flops, false);
  jkey(f, "bwd_flops", st->bwd_flops, false);
  jkey(f, "fwd_bytes", st->fwd_bytes, false);
  jkey(f, "bwd_bytes", st->bwd_bytes, false);
  jkey(f, "param_bytes", st->param_bytes, false);
  jkey(f, "out_bytes", st->out_bytes, false);
  jkey(f, "saved_bytes", st->saved_bytes, false);
  jkey(f, "sources", st->nsource, false);
  jkey(f, "sinks", st->nsink, false);
  jkey(f, "depth", st->depth, false);
  jkey(f, "width", st->width, false);
  jkey(f, "max_cut", st->max_cut, false);
  jkey(f, "chain_layers", st->nlayer, false);
  fputs("  \"profiles\": [", f);
  for (t = 0; t < m->ntable; t++) {
    fputs(t ? ", {\"type\": " : "{\"type\": ", f);
    if (m->tab_type[t])
      ppi_json_str(f, m->tab_type[t]);
    else
      fputs("null", f);
    fprintf(f, ", \"tp\": %d, \"micro_batch\": %d}", (int)m->tab_tp[t],
            (int)m->tab_mbs[t]);
  }
  fputs("],\n  \"tp_sizes\": [", f);
  for (i = 0; i < m->ntps; i++)
    fprintf(f, "%s%d", i ? ", " : "", (int)m->tps_tp[i]);
  fputs("],\n  \"kinds\": {", f);
  for (i = 0; i < (int32_t)k->names.n; i++) {
    fputs(i ? ", " : "", f);
    ppi_json_str(f, PPI_VEC_AT(&k->names, const char *, i));
    fprintf(f, ": %d", (int)PPI_VEC_AT(&k->counts, int32_t, i));
  }
  fputs("},\n  \"hyper\": {", f);
  for (i = 0; i < m->nhyper; i++) {
    fputs(i ? ", " : "", f);
    ppi_json_str(f, m->hyper_key[i]);
    fputs(": ", f);
    ppi_json_num(f, m->hyper_val[i]);
  }
  fputs("}\n}\n", f);
}

pp_status pp_model_describe(pp_ctx *ctx, const pp_model *m, int json, FILE *f)
{
  pp_model_stats st;
  struct kinds k;
  pp_status rc;
  if (!ctx || !m || !f)
    return PP_EINVAL;
  if ((rc = pp_model_stats_get(ctx, m, &st)))
    return rc;
  rc = count_kinds(ctx, m, &k);
  if (rc == PP_OK) {
    if (json)
      model_json(f, m, &st, &k);
    else
      model_text(f, m, &st, &k);
    if (ferror(f))
      rc = ppi_fail(ctx, PP_EIO, "write error");
  }
  free_kinds(ctx, &k);
  return rc;
}

/* ---- clusters --------------------------------------------------------- */

#define NCLASS 16

pp_status pp_cluster_describe(pp_ctx *ctx, const pp_cluster *c, int json,
                              FILE *f)
{
  pp_bw_class cls[NCLASS];
  int32_t ncls, i, t, *count;
  double lo = INFINITY, hi = 0, mem = 0;
  double ilo = INFINITY, ihi = 0, xlo = INFINITY, xhi = 0;
  int64_t nintra = 0, ninter = 0;
  pp_status rc;

  if (!ctx || !c || !f)
    return PP_EINVAL;
  if ((rc = pp_cluster_bw_classes(ctx, c, cls, NCLASS, &ncls)))
    return rc;
  for (i = 0; i < c->ndev; i++) {
    int32_t j;
    for (j = i + 1; j < c->ndev; j++) {
      double x = c->bw[(size_t)i * c->ndev + j];
      lo = fmin(lo, x);
      hi = fmax(hi, x);
      if (c->dev_node[i] == c->dev_node[j]) {
        ilo = fmin(ilo, x);
        ihi = fmax(ihi, x);
        nintra++;
      } else {
        xlo = fmin(xlo, x);
        xhi = fmax(xhi, x);
        ninter++;
      }
    }
  }
  if (c->ndev == 1)
    lo = 0;
  count = ppi_calloc(ctx, (size_t)c->ntype, sizeof *count);
  if (!count)
    return ctx->err;
  for (i = 0; i < c->ndev; i++) {
    count[c->dev_type[i]]++;
    mem += c->type_mem_gib[c->dev_type[i]];
  }
  if (!json) {
    fprintf(f, "cluster %s  (%s)\n", c->name, c->source);
    fprintf(f, "  devices      %d on %d node%s, %.2f GiB of memory in all\n",
            (int)c->ndev, (int)c->nnode, c->nnode == 1 ? "" : "s", mem);
    for (t = 0; t < c->ntype; t++) {
      fprintf(f, "  %-12s %s x%d: %g GiB, speed %g", t ? "" : "types",
              c->type_name[t], (int)count[t], c->type_mem_gib[t],
              c->type_speed[t]);
      if (c->type_peak[t] > 0)
        fprintf(f, ", peak %g TFLOP/s", c->type_peak[t]);
      if (c->type_peak32[t] > 0 && c->type_tf32[t] > 0)
        fprintf(f, " (fp32 %g, tf32 %g)", c->type_peak32[t], c->type_tf32[t]);
      else if (c->type_peak32[t] > 0)
        fprintf(f, " (fp32 %g)", c->type_peak32[t]);
      else if (c->type_tf32[t] > 0)
        fprintf(f, " (tf32 %g)", c->type_tf32[t]);
      if (c->type_membw[t] > 0)
        fprintf(f, ", memory %g GB/s", c->type_membw[t]);
      fputc('\n', f);
    }
    fprintf(f, "  bandwidth    %g to %g GB/s between devices, latency %g us\n",
            lo, hi, c->latency_us);
    if (nintra)
      fprintf(f, "  %-12s %g to %g GB/s over %lld pairs\n", "within nodes", ilo,
              ihi, (long long)nintra);
    if (ninter)
      fprintf(f, "  %-12s %g to %g GB/s over %lld pairs\n", "across nodes", xlo,
              xhi, (long long)ninter);
    if (ncls < 0)
      fprintf(f, "  %-12s more than %d distinct values\n", "classes",
              PPI_MAX_BW_CLASSES);
    else if (ncls > NCLASS)
      fprintf(f, "  %-12s many distinct values\n", "classes");
    for (i = 0; i >= 0 && i < ncls && ncls <= NCLASS; i++) {
      int64_t pairs = cls[i].npairs / 2, intra = cls[i].nintra / 2;
      fprintf(f, "  %-12s %g GB/s: %lld pair%s", i ? "" : "classes",
              cls[i].gbps, (long long)pairs, pairs == 1 ? "" : "s");
      if (intra == pairs)
        fputs(" (within nodes)\n", f);
      else if (intra == 0)
        fputs(" (across nodes)\n", f);
      else
        fprintf(f, " (%lld within nodes)\n", (long long)intra);
    }
    if (c->has_links)
      fprintf(f, "  links        %d links, %d switches, routing %s\n",
              (int)c->nlink, (int)c->nswitch,
              c->routing == PP_ROUTE_HOPS ? "hops" : "widest");
  } else {
    fputs("{\n  \"name\": ", f);
    ppi_json_str(f, c->name);
    fputs(",\n  \"source\": ", f);
    ppi_json_str(f, c->source);
    fprintf(f, ",\n  \"devices\": %d,\n  \"nodes\": %d,\n", (int)c->ndev,
            (int)c->nnode);
    jkey(f, "memory_gb", mem, false);
    fputs("  \"types\": [", f);
    for (t = 0; t < c->ntype; t++) {
      fputs(t ? ", {\"name\": " : "{\"name\": ", f);
      ppi_json_str(f, c->type_name[t]);
      fprintf(f, ", \"count\": %d, \"memory_gb\": ", (int)count[t]);
      ppi_json_num(f, c->type_mem_gib[t]);
      fputs(", \"speed\": ", f);
      ppi_json_num(f, c->type_speed[t]);
      fputs(", \"peak_tflops\": ", f);
      ppi_json_num(f, c->type_peak[t]);
      fputs(", \"peak_fp32_tflops\": ", f);
      ppi_json_num(f, c->type_peak32[t]);
      fputs(", \"mem_gbps\": ", f);
      ppi_json_num(f, c->type_membw[t]);
      fputs(", \"peak_tf32_tflops\": ", f);
      ppi_json_num(f, c->type_tf32[t]);
      fputc('}', f);
    }
    fputs("],\n", f);
    jkey(f, "min_GBps", lo, false);
    jkey(f, "max_GBps", hi, false);
    jkey(f, "latency_us", c->latency_us, false);
    fprintf(f, "  \"distinct_bandwidths\": %d,\n  \"classes\": [", (int)ncls);
    for (i = 0; i < ncls && i < NCLASS; i++) {
      fprintf(f, "%s{\"GBps\": ", i ? ", " : "");
      ppi_json_num(f, cls[i].gbps);
      fprintf(f, ", \"pairs\": %lld, \"intra_node_pairs\": %lld}",
              (long long)(cls[i].npairs / 2), (long long)(cls[i].nintra / 2));
    }
    fprintf(f,
            "],\n  \"links\": %d,\n  \"switches\": %d,\n  \"routing\": %s\n}\n",
            (int)c->nlink, (int)c->nswitch,
            !c->has_links                 ? "null"
            : c->routing == PP_ROUTE_HOPS ? "\"hops\""
                                          : "\"widest\"");
  }
  ppi_free(ctx, count, (size_t)c->ntype * sizeof *count);
  if (ferror(f))
    return ppi_fail(ctx, PP_EIO, "write error");
  return PP_OK;
}

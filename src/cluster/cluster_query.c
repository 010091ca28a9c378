/* SPDX-License-Identifier: MIT */
/*
** Read-only accessors of a finished cluster, the transfer-time formula
** of docs/DESIGN.md ("Units and the cost model"), and the bandwidth
** classes a description reports.
** Out-of-range indices give NULL, 0 or -1.
*/
#include "cluster/cluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *pp_cluster_name(const pp_cluster *c)
{
  return c ? c->name : NULL;
}

const char *pp_cluster_source(const pp_cluster *c)
{
  return c ? c->source : NULL;
}

int32_t pp_cluster_ndev(const pp_cluster *c)
{
  return c ? c->ndev : 0;
}

int32_t pp_cluster_ntype(const pp_cluster *c)
{
  return c ? c->ntype : 0;
}

int32_t pp_cluster_nnode(const pp_cluster *c)
{
  return c ? c->nnode : 0;
}

int32_t pp_cluster_find_device(const pp_cluster *c, const char *name)
{
  int32_t v = c ? ppi_strmap_get(&c->devmap, name) : -1;
  return v >= 0 ? v : -1; /* switches are stored as negative values */
}

int32_t pp_cluster_find_type(const pp_cluster *c, const char *name)
{
  return c ? ppi_strmap_get(&c->typemap, name) : -1;
}

static bool dev_in(const pp_cluster *c, int32_t d)
{
  return c && d >= 0 && d < c->ndev;
}

pp_status pp_cluster_type(const pp_cluster *c, int32_t t,
                          pp_device_type_desc *out)
{
  if (!c || !out || t < 0 || t >= c->ntype)
    return PP_EINVAL;
  out->name = c->type_name[t];
  out->memory_gib = c->type_mem_gib[t];
  out->speed = c->type_speed[t];
  out->peak_tflops = c->type_peak[t];
  out->peak_fp32_tflops = c->type_peak32[t];
  out->mem_gbps = c->type_membw[t];
  out->peak_tf32_tflops = c->type_tf32[t];
  return PP_OK;
}

int64_t pp_cluster_type_memory(const pp_cluster *c, int32_t t)
{
  if (!c || t < 0 || t >= c->ntype)
    return 0;
  return (int64_t)floor(c->type_mem_gib[t] * 1073741824.0);
}

pp_status pp_cluster_device(const pp_cluster *c, int32_t d, pp_device_desc *out)
{
  if (!out || !dev_in(c, d))
    return PP_EINVAL;
  out->name = c->dev_name[d];
  out->type = c->type_name[c->dev_type[d]];
  out->node = c->dev_node[d];
  out->host = c->dev_host[d];
  out->local_gpu = c->dev_local[d];
  return PP_OK;
}

int32_t pp_cluster_device_type(const pp_cluster *c, int32_t d)
{
  return dev_in(c, d) ? c->dev_type[d] : -1;
}

int32_t pp_cluster_device_node(const pp_cluster *c, int32_t d)
{
  return dev_in(c, d) ? c->dev_node[d] : -1;
}

pp_type_key pp_cluster_type_key(const pp_cluster *c, int32_t d)
{
  pp_type_key k;
  memset(&k, 0, sizeof k);
  k.speed = 1;
  if (dev_in(c, d)) {
    int32_t t = c->dev_type[d];
    k.name = c->type_name[t];
    k.speed = c->type_speed[t];
    k.peak_tflops = c->type_peak[t];
    k.peak_fp32_tflops = c->type_peak32[t];
    k.mem_gbps = c->type_membw[t];
    k.peak_tf32_tflops = c->type_tf32[t];
  }
  return k;
}

double pp_cluster_bandwidth(const pp_cluster *c, int32_t i, int32_t j)
{
  if (!dev_in(c, i) || !dev_in(c, j) || i == j)
    return 0;
  return c->bw[(size_t)i * c->ndev + j];
}

const double *pp_cluster_bandwidth_matrix(const pp_cluster *c)
{
  return c ? c->bw : NULL;
}

double pp_cluster_latency(const pp_cluster *c)
{
  return c ? c->latency_us : 0;
}

double pp_cluster_comm_ms(const pp_cluster *c, int32_t i, int32_t j,
                          double bytes)
{
  double b;
  if (!dev_in(c, i) || !dev_in(c, j) || i == j || !(bytes > 0))
    return 0;
  b = c->bw[(size_t)i * c->ndev + j];
  return c->latency_us / 1000.0 + bytes / (b * 1e6);
}

int32_t pp_cluster_nswitch(const pp_cluster *c)
{
  return c ? c->nswitch : 0;
}

const char *pp_cluster_switch_name(const pp_cluster *c, int32_t s)
{
  return c && s >= 0 && s < c->nswitch ? c->sw_name[s] : NULL;
}

int32_t pp_cluster_nlink(const pp_cluster *c)
{
  return c ? c->nlink : 0;
}

pp_status pp_cluster_link(const pp_cluster *c, int32_t l, int32_t *a,
                          int32_t *b, double *gbps, int32_t *count)
{
  if (!c || l < 0 || l >= c->nlink)
    return PP_EINVAL;
  if (a)
    *a = c->link_a[l];
  if (b)
    *b = c->link_b[l];
  if (gbps)
    *gbps = c->link_gbps[l];
  if (count)
    *count = c->link_count[l];
  return PP_OK;
}

pp_routing pp_cluster_routing(const pp_cluster *c)
{
  return c ? c->routing : PP_ROUTE_WIDEST;
}

/* ---- bandwidth classes ------------------------------------------------ */

static uint64_t dbits(double x)
{
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static int cmp_class(const void *x, const void *y)
{
  const pp_bw_class *a = x, *b = y;
  return a->gbps > b->gbps ? -1 : a->gbps < b->gbps;
}

pp_status pp_cluster_bw_classes(pp_ctx *ctx, const pp_cluster *c,
                                pp_bw_class *classes, int32_t cap, int32_t *n)
{
  const uint32_t slots = 2 * PPI_MAX_BW_CLASSES;
  pp_bw_class *tab;
  uint8_t *used;
  int32_t i, j, k, nc = 0;
  bool over = false;

  if (!ctx || !c || !n || cap < 0 || (cap > 0 && !classes))
    return PP_EINVAL;
  *n = 0;
  tab = ppi_calloc(ctx, slots, sizeof *tab);
  used = ppi_calloc(ctx, slots, 1);
  if (!tab || !used) {
    ppi_free(ctx, tab, slots * sizeof *tab);
    ppi_free(ctx, used, slots);
    return ctx->err;
  }
  for (i = 0; i < c->ndev && !over; i++)
    for (j = 0; j < c->ndev; j++) {
      double x = c->bw[(size_t)i * c->ndev + j];
      uint64_t h;
      uint32_t s;
      if (i == j)
        continue;
      h = dbits(x) * 0x9e3779b97f4a7c15ull;
      s = (uint32_t)(h >> 40) & (slots - 1);
      while (used[s] && tab[s].gbps != x)
        s = (s + 1) & (slots - 1);
      if (!used[s]) {
        if (nc == PPI_MAX_BW_CLASSES) {
          over = true;
          break;
        }
        used[s] = 1;
        tab[s].gbps = x;
        nc++;
      }
      tab[s].npairs++;
      if (c->dev_node[i] == c->dev_node[j])
        tab[s].nintra++;
    }
  if (over) {
    *n = -1;
  } else {
    for (i = 0, k = 0; (uint32_t)i < slots; i++)
      if (used[i])
        tab[k++] = tab[i];
    qsort(tab, (size_t)k, sizeof *tab, cmp_class);
    for (i = 0; i < k && i < cap; i++)
      classes[i] = tab[i];
    *n = k;
  }
  ppi_free(ctx, tab, slots * sizeof *tab);
  ppi_free(ctx, used, slots);
  return PP_OK;
}

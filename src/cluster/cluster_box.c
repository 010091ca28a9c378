/* SPDX-License-Identifier: MIT */
/*
** A cluster made of copies of one machine: what a topology dump of a
** single box (nvidia-smi topo -m, rocm-smi --showtopo, an NCCL or RCCL
** XML) describes, repeated over
** `nodes' boxes joined by a network.  The dump gives the box's pairwise
** bandwidth; between boxes every pair gets one figure per GPU: inter=
** when given, else what the reader found from the box's NICs, else
** PPI_DEFAULT_INTER_GBPS, and the cluster's source says which, with how
** the GPU type was chosen when the dump does not name it.  Device names
** and hosts follow the generators (n<node>g<k>, node<node>), so launch
** scripts find each GPU.
*/
#include "cluster/cluster.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void pp_topo_params_init(pp_topo_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->nodes = 1;
}

pp_status ppi_cluster_box(pp_ctx *ctx, const char *name, const char *source,
                          const char *gpu, int32_t g, const double *bw,
                          const pp_topo_params *p,
                          const struct ppi_box_notes *notes, pp_cluster **out)
{
  /* a catalog name, or a product name as nvidia-smi prints it */
  const struct ppi_gpu *t = ppi_gpu_find(gpu)
                                ? ppi_gpu_find(gpu)
                                : ppi_gpu_find(ppi_gpu_product(gpu, 0));
  pp_cluster_builder *b = NULL;
  pp_device_type_desc td;
  double inter = p->inter_gbps > 0              ? p->inter_gbps
                 : notes && notes->nic_gbps > 0 ? notes->nic_gbps
                                                : PPI_DEFAULT_INTER_GBPS,
         *m = NULL;
  char src[PPI_SPEC_MAX + 512];
  int32_t nodes = p->nodes > 0 ? p->nodes : 1, n, k, i, j, d;
  size_t cells;
  pp_status rc;

  if (!t) {
    char list[512];
    ppi_gpu_names(list, sizeof list);
    return ppi_fail(ctx, PP_EINPUT, "%s: unknown GPU '%s' (known: %s)", source,
                    gpu, list);
  }
  if ((double)nodes * g > PP_MAX_DEVICES)
    return ppi_fail(ctx, PP_ELIMIT,
                    "%s: %d nodes of %d GPUs exceed the limit of %d devices",
                    source, (int)nodes, (int)g, PP_MAX_DEVICES);
  if (!(p->latency_us >= 0) || !isfinite(p->latency_us) || !(inter > 0) ||
      !isfinite(inter))
    return ppi_fail(ctx, PP_EINPUT,
                    "%s: latency must be >= 0 and the inter-node bandwidth "
                    "positive",
                    source);
  d = nodes * g;
  cells = (size_t)d * (size_t)d;
  m = ppi_calloc(ctx, cells, sizeof *m);
  if (!m)
    return ctx->err;
  for (i = 0; i < d; i++)
    for (j = 0; j < d; j++)
      m[(size_t)i * d + j] = i == j           ? 0
                             : i / g != j / g ? inter
                                              : bw[(i % g) * g + j % g];
  {
    const char *type_why = notes ? notes->type_why : "";
    const char *why = notes ? notes->nic_why : "";
    char nic[400] = "";
    if (nodes > 1 && p->inter_gbps > 0)
      snprintf(nic, sizeof nic, "inter-node %g GB/s per GPU, inter=", inter);
    else if (nodes > 1 && notes && notes->nic_gbps > 0)
      snprintf(nic, sizeof nic, "inter-node %g GB/s per GPU, %s", inter, why);
    else if (nodes > 1)
      snprintf(nic, sizeof nic,
               "inter-node %g GB/s per GPU, parplan's default (%s)", inter,
               why[0] ? why : "no NIC in the dump: say inter=");
    snprintf(src, sizeof src, "%s%s%s%s%s", source, type_why[0] ? "; " : "",
             type_why, nic[0] ? "; " : "", nic);
  }
  if ((rc = pp_cluster_builder_create(ctx, name, src, &b)))
    goto done;
  ppi_gpu_type_desc(t, &td);
  if (p->mem_gib > 0)
    td.memory_gib = p->mem_gib;
  if (p->speed > 0)
    td.speed = p->speed;
  if (p->peak_tflops > 0)
    td.peak_tflops = p->peak_tflops;
  if (p->peak_fp32_tflops > 0)
    td.peak_fp32_tflops = p->peak_fp32_tflops;
  if (p->mem_gbps > 0)
    td.mem_gbps = p->mem_gbps;
  if (p->peak_tf32_tflops > 0)
    td.peak_tf32_tflops = p->peak_tf32_tflops;
  if ((rc = pp_cluster_builder_add_type(b, &td)))
    goto done;
  for (n = 0; n < nodes; n++)
    for (k = 0; k < g; k++) {
      pp_device_desc dd;
      char dn[64], hn[32];
      snprintf(dn, sizeof dn, "n%dg%d", (int)n, (int)k);
      snprintf(hn, sizeof hn, "node%d", (int)n);
      pp_device_desc_init(&dd);
      dd.name = dn;
      dd.type = t->name;
      dd.node = n;
      dd.host = hn;
      dd.local_gpu = k;
      if ((rc = pp_cluster_builder_add_device(b, &dd, NULL)))
        goto done;
    }
  if (d > 1 && (rc = pp_cluster_builder_set_bandwidth(b, m, d)))
    goto done;
  if ((rc = pp_cluster_builder_set_latency(b, p->latency_us)))
    goto done;
  rc = pp_cluster_builder_finish(b, out);
  b = NULL;
done:
  pp_cluster_builder_destroy(b);
  ppi_free(ctx, m, cells * sizeof *m);
  return rc;
}

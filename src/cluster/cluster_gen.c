/* SPDX-License-Identifier: MIT */
/*
** Cluster generators.  Each one states the machine it models and where
** its numbers come from; docs/FORMATS.md lists the specs.
**
** - hier, nvswitch: nodes of G GPUs.  Each GPU links to its node's
**   switch at the intra-node bandwidth and to one spine at the
**   inter-node bandwidth (one NIC per GPU, as on DGX A100/H100).  By the
**   widest-path rule, GPUs of one node get max(intra, inter) and GPUs
**   of different nodes get inter.  nvswitch defaults: A100 NVLink3
**   through NVSwitch 300 GB/s per direction, 8 x 200 Gb/s HDR (25 GB/s
**   per GPU); H100 NVLink4 450 GB/s, 8 x 400 Gb/s NDR (50 GB/s).
** - dgx1: the V100 hybrid cube-mesh (docs/ALGORITHMS.md 1.5): 25
**   GB/s per NVLink per direction, bonded pairs 50, pairs without NVLink
**   over PCIe and QPI (default 10 GB/s), nodes joined by 25 Gb/s
**   Ethernet (3.125 GB/s), as in Parmesan's experiments ([Parmesan] 7).
** - mesh2d/3d, torus2d/3d: one device per vertex, links of equal
**   bandwidth between grid neighbours (and wrap-around for a torus);
**   routing "hops" by default, so distance matters (Parmesan Table 2).
** - random_blk_1/2, uniform_dist: Parmesan's random complete graphs
**   (docs/ALGORITHMS.md 1.5), seeded: devices shuffled into
**   blocks; bandwidths drawn i.i.d. per pair.
** - amp-*: AMP's three clusters (data/amp/clusters.json): 4 nodes of 4
**   GPUs, as a link graph.  Each GPU links to its node's switch at the
**   node's intra bandwidth; the node has ONE NIC, a link from its switch
**   to the spine at its inter bandwidth, which every transfer or ring
**   leaving the node shares (a g4dn.12xlarge has 4 T4 behind one 50
**   Gb/s network interface, a p3.8xlarge 4 V100 behind one 10 Gb/s:
**   https://aws.amazon.com/ec2/instance-types/g4/ and
**   https://aws.amazon.com/ec2/instance-types/p3/, "Network
**   Performance"; an instance's bandwidth is one aggregate limit,
**   the EC2 user guide's "ec2-instance-network-bandwidth" page on
**   docs.aws.amazon.com).
**   Pairwise, a pair inside a node gets the intra bandwidth and a pair
**   across nodes the smaller inter bandwidth of the two (inter <= intra
**   on both instance types), AMP's convention; Gb/s / 8 = GB/s.
** - clariden: CSCS Alps/Clariden, the cluster of Sailor's validation
**   runs (data/sailor/README.md): nodes of 4 GH200 ("GH-96"), NVLink
**   between every pair of a node's GPUs and one NIC per GPU (HPE
**   Slingshot, 200 Gb/s per GH200) to the fabric, modelled as one spine.
**   The bandwidths are Sailor's measured fits (below, PPI_CLARIDEN_*).
**
** Cost: O(D^2) for matrix generators, O(D) for link graphs (then the
** routing of cluster_route.c; clariden's node mesh is 6 links a node).
*/
#include "cluster/cluster_gen.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Clariden's links, GB/s per direction, from Sailor's measured fits
** (data/sailor/simulator, eth-easl/sailor @ cf2c8e3).  A fit
** [[c0, c1, c2], peak] gives c0 x^2 + c1 x + c2 GB/s at x = log2(n) -
** log2(1e6) for n-byte messages, capped at the measured peak (bytes/s);
** at a large message (n = 1 GiB, x = 10.07) the cap binds:
** - NVLink, GPU pair: intra_node_bandwidths.json "GH-96" "2": fit 134.3,
**   peak 125460726312 B/s -> 125.46;
** - across nodes, GPU pair: multizone_gh96.json (from
**   multizone_bandwidths_het.json) us-central1-a "GH-96" "1" "1": fit
**   23.08, peak 22934533176.5 B/s -> 22.93 (of the 25 GB/s of a 200
**   Gb/s Slingshot NIC).  With 4 GPUs a node on each end the fit's
**   peak is 92.55 GB/s, about 4 x 23: one NIC per GPU.
** tests/test_cluster_gen.c recomputes both from the files. */
#define PPI_CLARIDEN_NVLINK_GBPS 125.460726312
#define PPI_CLARIDEN_NIC_GBPS 22.934533176529446
/* TUNING: the default size, 32 nodes (128 GH200): enough for the
** largest of Sailor's validation runs (16 nodes, sailor/validation
** in the shared data) and a search with room; no sweep recorded. */
#define PPI_CLARIDEN_NODES 32

void ppi_gen_params_init(struct ppi_gen_params *p, int kind, uint64_t seed)
{
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->seed = seed;
  p->gpu = "V100";
  p->routing = PP_ROUTE_WIDEST;
  switch (kind) {
  case PPI_GEN_HIER:
    /* TUNING: a small two-level example, 4 nodes of 4 GPUs, 50 GB/s
    ** inside a node (two NVLink 2 links' worth, docs/ECOSYSTEM.md 2.3) and
    ** the common inter-node default; chosen in 52da8ee, no sweep
    ** recorded. */
    p->dims[0] = 4;
    p->dims[1] = 4;
    p->ndims = 2;
    p->intra = 50;
    p->inter = PPI_DEFAULT_INTER_GBPS;
    break;
  case PPI_GEN_DGX1:
    p->dims[0] = 1;
    p->ndims = 1;
    /* TUNING: 10 GB/s over PCIe/QPI for GPU pairs without NVLink, and
    ** 3.125 (25 Gb/s Ethernet) between machines, which [Parmesan] does
    ** not give (docs/ECOSYSTEM.md 2.3): assumptions of 52da8ee, no sweep
    ** recorded. */
    p->pcie = 10;
    p->inter = 3.125;
    break;
  case PPI_GEN_NVSWITCH:
    p->dims[0] = 2;
    p->dims[1] = 8;
    p->ndims = 2;
    p->gpu = "A100-80";
    break; /* intra, inter: from the GPU when left 0 */
  case PPI_GEN_MESH2D:
  case PPI_GEN_TORUS2D:
    p->dims[0] = p->dims[1] = 8;
    p->ndims = 2;
    p->link = 25; /* NVLink 2 per link (docs/ECOSYSTEM.md 2.3) */
    p->routing = PP_ROUTE_HOPS;
    break;
  case PPI_GEN_MESH3D:
  case PPI_GEN_TORUS3D:
    p->dims[0] = p->dims[1] = p->dims[2] = 4;
    p->ndims = 3;
    p->link = 25; /* NVLink 2 per link (docs/ECOSYSTEM.md 2.3) */
    p->routing = PP_ROUTE_HOPS;
    break;
  case PPI_GEN_RANDOM_BLK_1:
  case PPI_GEN_RANDOM_BLK_2:
    /* [Parmesan]'s Table 2 topologies (docs/FORMATS.md, "Cluster
    ** generators and built-in clusters"); uniform_dist likewise. */
    p->dims[0] = 64;
    p->ndims = 1;
    p->block = 8;
    p->super = 4;
    break;
  case PPI_GEN_UNIFORM_DIST:
    p->dims[0] = 64;
    p->ndims = 1;
    p->lo = 1;
    p->hi = 100;
    break;
  case PPI_GEN_CLARIDEN:
    p->dims[0] = PPI_CLARIDEN_NODES;
    p->ndims = 1;
    p->gpu = "GH-96";
    p->intra = PPI_CLARIDEN_NVLINK_GBPS;
    p->inter = PPI_CLARIDEN_NIC_GBPS;
    break;
  default: break;
  }
}

/* DGX-1 V100 NVLink counts, nvidia-smi numbering (docs/ALGORITHMS.md 1.5). */
static const int dgx1_links[8][8] = {
    {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0},
    {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
    {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
    {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};

struct gen_run {
  pp_ctx *ctx;
  const struct ppi_gen_params *p;
  pp_cluster_builder *b;
  double *bw; /* matrix generators */
  size_t bw_cells;
  int32_t ndev;
};

static pp_status gfail(struct gen_run *g, pp_status rc, const char *fmt, ...)
    PP_PRINTF(3, 4);
static pp_status gfail(struct gen_run *g, pp_status rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  ppi_vfail_at(g->ctx, rc, g->p->name, 0, 0, fmt, ap);
  va_end(ap);
  return rc;
}

/* Declare a catalog type, with the spec's overrides. */
static pp_status add_type(struct gen_run *g, const char *name)
{
  const struct ppi_gpu *gpu = ppi_gpu_find(name);
  pp_device_type_desc d;
  if (!gpu) {
    char list[512];
    ppi_gpu_names(list, sizeof list);
    return gfail(g, PP_EINPUT, "unknown GPU '%s' (known: %s)", name, list);
  }
  ppi_gpu_type_desc(gpu, &d);
  if (g->p->mem > 0)
    d.memory_gib = g->p->mem;
  if (g->p->speed > 0)
    d.speed = g->p->speed;
  if (g->p->peak > 0)
    d.peak_tflops = g->p->peak;
  if (g->p->peak32 > 0)
    d.peak_fp32_tflops = g->p->peak32;
  if (g->p->membw > 0)
    d.mem_gbps = g->p->membw;
  if (g->p->tf32 > 0)
    d.peak_tf32_tflops = g->p->tf32;
  return pp_cluster_builder_add_type(g->b, &d);
}

static pp_status add_dev(struct gen_run *g, const char *type, int32_t node,
                         int32_t local, bool host)
{
  pp_device_desc d;
  char name[64], hname[32];
  pp_device_desc_init(&d);
  if (local >= 0)
    snprintf(name, sizeof name, "n%dg%d", (int)node, (int)local);
  else
    snprintf(name, sizeof name, "d%d", (int)g->ndev);
  snprintf(hname, sizeof hname, "node%d", (int)node);
  d.name = name;
  d.type = type;
  d.node = node;
  d.host = host ? hname : NULL;
  d.local_gpu = local;
  g->ndev++;
  return pp_cluster_builder_add_device(g->b, &d, NULL);
}

static pp_status check_count(struct gen_run *g, double n)
{
  if (n > PP_MAX_DEVICES)
    return gfail(g, PP_ELIMIT, "%.0f devices exceed the limit of %d", n,
                 PP_MAX_DEVICES);
  if (n < 1)
    return gfail(g, PP_EINPUT, "no devices");
  return PP_OK;
}

/* Nodes of G GPUs; a switch per node and one spine. */
static pp_status gen_nodes(struct gen_run *g, double intra, double inter)
{
  const struct ppi_gen_params *p = g->p;
  int32_t nn = p->dims[0], ng = p->dims[1], n, k;
  char a[64], s[64];
  pp_status rc;
  if ((rc = check_count(g, (double)nn * ng)) || (rc = add_type(g, p->gpu)))
    return rc;
  for (n = 0; n < nn; n++)
    for (k = 0; k < ng; k++)
      if ((rc = add_dev(g, p->gpu, n, k, true)))
        return rc;
  if (nn * ng == 1)
    return PP_OK;
  if (nn > 1 && (rc = pp_cluster_builder_add_switch(g->b, "spine")))
    return rc;
  for (n = 0; n < nn; n++) {
    snprintf(s, sizeof s, "node%d.switch", (int)n);
    if (ng > 1 && (rc = pp_cluster_builder_add_switch(g->b, s)))
      return rc;
    for (k = 0; k < ng; k++) {
      snprintf(a, sizeof a, "n%dg%d", (int)n, (int)k);
      if ((ng > 1 &&
           (rc = pp_cluster_builder_add_link(g->b, a, s, intra, 1))) ||
          (nn > 1 &&
           (rc = pp_cluster_builder_add_link(g->b, a, "spine", inter, 1))))
        return rc;
    }
  }
  return PP_OK;
}

static pp_status gen_dgx1(struct gen_run *g)
{
  const struct ppi_gen_params *p = g->p;
  int32_t nn = p->dims[0], n, k, i, j, d;
  pp_status rc;
  if ((rc = check_count(g, 8.0 * nn)) || (rc = add_type(g, p->gpu)))
    return rc;
  for (n = 0; n < nn; n++)
    for (k = 0; k < 8; k++)
      if ((rc = add_dev(g, p->gpu, n, k, true)))
        return rc;
  d = 8 * nn;
  g->bw_cells = (size_t)d * d;
  g->bw = ppi_calloc(g->ctx, g->bw_cells, sizeof(double));
  if (!g->bw)
    return g->ctx->err;
  for (i = 0; i < d; i++)
    for (j = 0; j < d; j++) {
      double x;
      if (i / 8 != j / 8)
        x = p->inter;
      else {
        int c = dgx1_links[i % 8][j % 8];
        x = c ? 25.0 * c : p->pcie; /* NVLink 2: docs/ECOSYSTEM.md 2.3 */
      }
      g->bw[(size_t)i * d + j] = i == j ? 0 : x;
    }
  return pp_cluster_builder_set_bandwidth(g->b, g->bw, d);
}

static pp_status gen_grid(struct gen_run *g)
{
  const struct ppi_gen_params *p = g->p;
  bool torus = p->kind == PPI_GEN_TORUS2D || p->kind == PPI_GEN_TORUS3D;
  int32_t dx = p->dims[0], dy = p->dims[1], dz = p->ndims == 3 ? p->dims[2] : 1;
  int32_t x, y, z, i, axis;
  char a[64], b[64];
  pp_status rc;

  if ((rc = check_count(g, (double)dx * dy * dz)) || (rc = add_type(g, p->gpu)))
    return rc;
  for (i = 0; i < dx * dy * dz; i++) {
    pp_device_desc d;
    x = i % dx;
    y = (i / dx) % dy;
    z = i / (dx * dy);
    if (p->ndims == 3)
      snprintf(a, sizeof a, "d%d_%d_%d", (int)x, (int)y, (int)z);
    else
      snprintf(a, sizeof a, "d%d_%d", (int)x, (int)y);
    pp_device_desc_init(&d);
    d.name = a;
    d.type = p->gpu;
    d.node = i;
    if ((rc = pp_cluster_builder_add_device(g->b, &d, NULL)))
      return rc;
  }
  if (dx * dy * dz == 1)
    return PP_OK;
  for (i = 0; i < dx * dy * dz; i++) {
    int32_t c[3];
    c[0] = i % dx;
    c[1] = (i / dx) % dy;
    c[2] = i / (dx * dy);
    for (axis = 0; axis < p->ndims; axis++) {
      int32_t side = p->dims[axis], nc[3];
      memcpy(nc, c, sizeof nc);
      nc[axis] = c[axis] + 1;
      if (nc[axis] == side) {
        /* A wrap-around link, unless it would repeat the neighbour
        ** link of a side of 2 or join a vertex to itself. */
        if (!torus || side <= 2)
          continue;
        nc[axis] = 0;
      }
      if (p->ndims == 3) {
        snprintf(a, sizeof a, "d%d_%d_%d", (int)c[0], (int)c[1], (int)c[2]);
        snprintf(b, sizeof b, "d%d_%d_%d", (int)nc[0], (int)nc[1], (int)nc[2]);
      } else {
        snprintf(a, sizeof a, "d%d_%d", (int)c[0], (int)c[1]);
        snprintf(b, sizeof b, "d%d_%d", (int)nc[0], (int)nc[1]);
      }
      if ((rc = pp_cluster_builder_add_link(g->b, a, b, p->link, 1)))
        return rc;
    }
  }
  return pp_cluster_builder_set_routing(g->b, p->routing);
}

static double uniform(struct ppi_rng *r, double lo, double hi)
{
  return lo + (hi - lo) * ppi_rng_unit(r);
}

static pp_status gen_random(struct gen_run *g)
{
  const struct ppi_gen_params *p = g->p;
  int32_t d = p->dims[0], i, j, *block = NULL, *perm = NULL;
  struct ppi_rng rng;
  pp_status rc;
  int32_t bsz = p->kind == PPI_GEN_UNIFORM_DIST ? 1 : p->block;
  int32_t ssz = bsz * p->super;

  if ((rc = check_count(g, d)) || (rc = add_type(g, p->gpu)))
    return rc;
  if (bsz < 1 || d % bsz != 0)
    return gfail(g, PP_EINPUT, "%d devices do not split into blocks of %d",
                 (int)d, (int)bsz);
  if (p->kind == PPI_GEN_RANDOM_BLK_2 && (p->super < 1 || d % ssz != 0))
    return gfail(g, PP_EINPUT,
                 "%d devices do not split into super-blocks "
                 "of %d blocks of %d",
                 (int)d, (int)p->super, (int)bsz);
  block = ppi_calloc(g->ctx, (size_t)d, sizeof *block);
  perm = ppi_calloc(g->ctx, (size_t)d, sizeof *perm);
  g->bw_cells = (size_t)d * d;
  g->bw = ppi_calloc(g->ctx, g->bw_cells, sizeof(double));
  if (!block || !perm || !g->bw) {
    rc = g->ctx->err;
    goto done;
  }
  ppi_rng_seed(&rng, p->seed);
  /* A random equal partition: shuffle, then cut into runs. */
  for (i = 0; i < d; i++)
    perm[i] = i;
  for (i = d - 1; i > 0; i--) {
    int32_t k = (int32_t)ppi_rng_below(&rng, (uint64_t)i + 1), t = perm[i];
    perm[i] = perm[k];
    perm[k] = t;
  }
  for (i = 0; i < d; i++)
    block[perm[i]] = i / bsz;
  for (i = 0; i < d; i++)
    if ((rc = add_dev(g, p->gpu, block[i], -1, false)))
      goto done;
  for (i = 0; i < d; i++)
    for (j = i + 1; j < d; j++) {
      double x;
      /* The ranges of [Parmesan]'s random_blk_1/2 (docs/FORMATS.md,
      ** "Cluster generators and built-in clusters"). */
      if (p->kind == PPI_GEN_UNIFORM_DIST)
        x = uniform(&rng, p->lo, p->hi);
      else if (block[i] == block[j])
        x = uniform(&rng, 40, 50);
      else if (p->kind == PPI_GEN_RANDOM_BLK_2 &&
               block[i] / p->super == block[j] / p->super)
        x = uniform(&rng, 10, 20);
      else if (p->kind == PPI_GEN_RANDOM_BLK_2)
        x = uniform(&rng, 1, 5);
      else
        x = uniform(&rng, 2, 10);
      g->bw[(size_t)i * d + j] = g->bw[(size_t)j * d + i] = x;
    }
  rc = pp_cluster_builder_set_bandwidth(g->b, g->bw, d);
done:
  ppi_free(g->ctx, block, (size_t)d * sizeof *block);
  ppi_free(g->ctx, perm, (size_t)d * sizeof *perm);
  return rc;
}

static pp_status gen_amp(struct gen_run *g)
{
  /* {inter, intra} Gb/s per node and its GPU, from data/amp/clusters.json
  ** (AMP's own figures: the instance types' network performance, and
  ** its measured NVLink / PCIe rate inside a node). */
  static const struct {
    const char *gpu;
    double inter, intra;
  } t4 = {"T4", 50, 50}, v100 = {"V100", 10, 170};
  const struct ppi_gen_params *p = g->p;
  int32_t n, k;
  char a[64], s[64];
  pp_status rc;

  if (p->kind != PPI_GEN_AMP_HOMOGENEOUS && (rc = add_type(g, "V100")))
    return rc;
  if (p->kind != PPI_GEN_AMP_HET_MODEL && (rc = add_type(g, "T4")))
    return rc;
  for (n = 0; n < 4; n++)
    for (k = 0; k < 4; k++)
      if ((rc = add_dev(g,
                        p->kind == PPI_GEN_AMP_HOMOGENEOUS ||
                                (p->kind == PPI_GEN_AMP_HET_CLUSTER && n == 3)
                            ? t4.gpu
                            : v100.gpu,
                        n, k, true)))
        return rc;
  if ((rc = pp_cluster_builder_add_switch(g->b, "spine")))
    return rc;
  for (n = 0; n < 4; n++) {
    bool is_t4 = p->kind == PPI_GEN_AMP_HOMOGENEOUS ||
                 (p->kind == PPI_GEN_AMP_HET_CLUSTER && n == 3);
    double inter = (is_t4 ? t4.inter : v100.inter) / 8;
    double intra = (is_t4 ? t4.intra : v100.intra) / 8;
    snprintf(s, sizeof s, "node%d.switch", (int)n);
    if ((rc = pp_cluster_builder_add_switch(g->b, s)) ||
        (rc = pp_cluster_builder_add_link(g->b, s, "spine", inter, 1)))
      return rc; /* the node's one NIC */
    for (k = 0; k < 4; k++) {
      snprintf(a, sizeof a, "n%dg%d", (int)n, (int)k);
      if ((rc = pp_cluster_builder_add_link(g->b, a, s, intra, 1)))
        return rc;
    }
  }
  return PP_OK;
}

/* Clariden: nodes of 4 GH-96, NVLink between every pair of a node's
** GPUs, every GPU's own NIC to the spine. */
static pp_status gen_clariden(struct gen_run *g)
{
  const struct ppi_gen_params *p = g->p;
  int32_t nn = p->dims[0], n, i, j;
  char a[64], b[64];
  pp_status rc;
  if ((rc = check_count(g, 4.0 * nn)) || (rc = add_type(g, p->gpu)))
    return rc;
  for (n = 0; n < nn; n++)
    for (i = 0; i < 4; i++)
      if ((rc = add_dev(g, p->gpu, n, i, true)))
        return rc;
  if (nn > 1 && (rc = pp_cluster_builder_add_switch(g->b, "spine")))
    return rc;
  for (n = 0; n < nn; n++)
    for (i = 0; i < 4; i++) {
      snprintf(a, sizeof a, "n%dg%d", (int)n, (int)i);
      if (nn > 1 &&
          (rc = pp_cluster_builder_add_link(g->b, a, "spine", p->inter, 1)))
        return rc;
      for (j = i + 1; j < 4; j++) {
        snprintf(b, sizeof b, "n%dg%d", (int)n, (int)j);
        if ((rc = pp_cluster_builder_add_link(g->b, a, b, p->intra, 1)))
          return rc;
      }
    }
  return PP_OK;
}

pp_status ppi_cluster_generate(pp_ctx *ctx, const struct ppi_gen_params *p,
                               pp_cluster **out)
{
  struct gen_run g;
  pp_status rc;
  const struct ppi_gpu *gpu = ppi_gpu_find(p->gpu);

  memset(&g, 0, sizeof g);
  g.ctx = ctx;
  g.p = p;
  *out = NULL;
  if ((rc = pp_cluster_builder_create(ctx, p->name, p->name, &g.b)))
    return rc;
  if ((rc = pp_cluster_builder_set_latency(g.b, p->latency)))
    goto done;
  switch (p->kind) {
  case PPI_GEN_HIER: rc = gen_nodes(&g, p->intra, p->inter); break;
  case PPI_GEN_NVSWITCH: {
    /* TUNING: a catalogue peak above 500 TFLOP/s marks a Hopper GPU (H100
    ** and GH-96 list 989, A100 312: gpu_catalog.c), any cut between the
    ** two would do (52da8ee, no sweep recorded).  Its NVSwitch and NIC
    ** figures, 300/450 and 25/50 GB/s, are [DGX]'s (docs/ECOSYSTEM.md
    ** 2.3). */
    bool hopper = gpu && gpu->peak_tflops > 500;
    rc = gen_nodes(&g,
                   p->intra > 0 ? p->intra
                   : hopper     ? 450
                                : 300,
                   p->inter > 0 ? p->inter
                   : hopper     ? 50
                                : 25);
    break;
  }
  case PPI_GEN_DGX1: rc = gen_dgx1(&g); break;
  case PPI_GEN_MESH2D:
  case PPI_GEN_TORUS2D:
  case PPI_GEN_MESH3D:
  case PPI_GEN_TORUS3D: rc = gen_grid(&g); break;
  case PPI_GEN_RANDOM_BLK_1:
  case PPI_GEN_RANDOM_BLK_2:
  case PPI_GEN_UNIFORM_DIST: rc = gen_random(&g); break;
  case PPI_GEN_CLARIDEN: rc = gen_clariden(&g); break;
  default: rc = gen_amp(&g); break;
  }
  if (rc == PP_OK) {
    rc = pp_cluster_builder_finish(g.b, out);
    g.b = NULL;
  }
done:
  pp_cluster_builder_destroy(g.b);
  if (g.bw)
    ppi_free(ctx, g.bw, g.bw_cells * sizeof(double));
  return rc;
}

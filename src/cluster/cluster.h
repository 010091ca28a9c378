/* SPDX-License-Identifier: MIT */
/*
** The cluster layer's internal header: the cluster object behind the
** public pp_cluster handle, the routing of link graphs, the GPU catalog
** and the box builder that the generators and topology readers share.
*/
#ifndef PP_CLUSTER_H
#define PP_CLUSTER_H

#include "base/pp_int.h"

#include <pthread.h>
#include <stdatomic.h>

/* ---- the cluster ------------------------------------------------------ */

struct pp_cluster {
  struct ppi_arena arena;
  char *name, *source;

  int32_t ntype;
  char **type_name;
  double *type_mem_gib, *type_speed, *type_peak;
  double *type_peak32, *type_membw, *type_tf32;

  int32_t ndev, nnode;
  char **dev_name, **dev_host;              /* host may be NULL */
  int32_t *dev_type, *dev_node, *dev_local; /* local -1: unknown */

  double *bw; /* [i*ndev+j] GB/s, diagonal 0 */
  double latency_us;

  bool has_links;
  pp_routing routing;
  int32_t nswitch;
  char **sw_name;
  int32_t nlink;
  int32_t *link_a, *link_b, *link_count; /* vertices: devices, switches */
  double *link_gbps;
  /* hop routing: [ndev x (ndev + nswitch)], every source's paths,
  ** built on first use under route_lock (ppi_routes_init); route_state
  ** 0: not yet, 1: built, 2: too large or failed (route per use) */
  int32_t *route_tree;
  int route_state;
  pthread_mutex_t route_lock;
  /* widest routing: the paths of the pairs routed so far, shared by
  ** every evaluation and thread (cluster_paths.c): pair_path[i * ndev +
  ** j] is -1 (not yet) or the index in the pool of [n, resources...];
  ** written under route_lock, read without it (release / acquire).
  ** NULL when ndev^2 passes PPI_ROUTE_CACHE_MAX. */
  _Atomic int32_t *pair_path;
  int32_t *path_pool[PPI_PATH_CHUNKS]; /* chunks of PPI_PATH_CHUNK ints */
  int64_t path_used;                   /* ints of the pool in use */
  int pair_state;                      /* 0: not set up, 1: set up */

  struct ppi_strmap devmap; /* devices and switches by name */
  struct ppi_strmap typemap;
};

/* Pairwise bandwidth of a link graph (cluster_route.c).  nvert vertices,
** the first ndev of which are devices; links a/b/gbps (bonded counts
** already multiplied in).  Fills bw[ndev*ndev].  Returns PP_EINPUT
** naming a device no path reaches (*unreached set), else PP_OK. */
PP_INTERNAL pp_status ppi_route(pp_ctx *ctx, int32_t ndev, int32_t nvert,
                                int32_t nlink, const int32_t *a,
                                const int32_t *b, const double *gbps,
                                pp_routing r, double *bw, int32_t *unreached);

/* A known accelerator: name, memory as nvidia-smi reports it, speed
** relative to V100, dense fp16 peak (gpu_catalog.c). */
struct ppi_gpu {
  const char *name;
  double memory_gib;
  double speed;
  double peak_tflops;
  const char *why;         /* where the speed comes from */
  double mem_gbps;         /* memory bandwidth, GB/s, vendor data sheet */
  double peak_fp32_tflops; /* without tensor cores, vendor data sheet */
  const char *link;        /* GPU-to-GPU link generation, "" for none */
  double link_gbps;        /* its bandwidth per GPU, both directions */
  const char *source;      /* the data sheet of the other figures */
  double peak_tf32_tflops; /* dense TF32 tensor peak; 0: none */
};
/* A catalog entry as a device type (every figure it has). */
PP_INTERNAL void ppi_gpu_type_desc(const struct ppi_gpu *g,
                                   pp_device_type_desc *d);
PP_INTERNAL int32_t ppi_gpu_count(void);
PP_INTERNAL const struct ppi_gpu *ppi_gpu_at(int32_t i);
/* The length of name's family: up to its first '-' ("A100-40" ->
** "A100"); profiles of one family serve each other (model_time.c). */
PP_INTERNAL size_t ppi_gpu_family_len(const char *name);
/* The catalog names of the family of name ("A100" -> "A100-40, A100-80")
** into buf; returns how many there are (0: no such family). */
PP_INTERNAL int32_t ppi_gpu_family(const char *name, char *buf, size_t n);
/* Whether a device type is an NVIDIA GPU of compute capability 10 or
** later (Blackwell: B100/B200/B300, GB200/GB300, RTX 50xx), by its
** catalog name; false for anything else, unknown names included. */
PP_INTERNAL bool ppi_gpu_blackwell(const char *name);
PP_INTERNAL const struct ppi_gpu *ppi_gpu_find(const char *name);
/* "V100, V100-16, ..." into buf, for "unknown GPU" messages. */
PP_INTERNAL void ppi_gpu_names(char *buf, size_t n);
/* The catalog name of a product name as nvidia-smi or rocm-smi prints
** it ("NVIDIA A100-SXM4-80GB"), mem_mib the memory it reports (0:
** unknown); NULL when the catalog has no such GPU or the name and
** memory leave two sizes open (gpu_names.c). */
PP_INTERNAL const char *ppi_gpu_product(const char *product, double mem_mib);

/* TUNING: the bandwidth between nodes, GB/s per direction, when none is
** given: 12.5, a 100 Gb/s NIC per GPU (docs/FORMATS.md, "nvidia-smi topo
** -m"), a middle figure between the DGX-1's 25 Gb/s Ethernet and a DGX
** A100's 200 Gb/s HDR (docs/ECOSYSTEM.md 2.3); an assumption of the
** foundation and import commits (52da8ee, d35d12a), no sweep recorded.
** The default of the hier generator (cluster_gen.c) and of the boxes read
** from nvidia-smi and NCCL dumps (cluster_box.c). */
#define PPI_DEFAULT_INTER_GBPS 12.5

/* Where a box's figures come from, said in the cluster's source so that
** no figure is a silent default (cluster_box.c). */
struct ppi_box_notes {
  double nic_gbps;   /* inter-node GB/s per GPU from the NICs found; 0: none */
  char nic_why[256]; /* how nic_gbps was found */
  char type_why[96]; /* how the GPU type was chosen; "" when given */
};

/* A cluster of `nodes' copies of one box of g GPUs whose pairwise
** bandwidth is bw (g x g, GB/s; the diagonal is ignored), joined by
** p->inter_gbps, else notes->nic_gbps, else PPI_DEFAULT_INTER_GBPS
** (cluster_box.c); notes (may be NULL) are appended to the source.
** Devices are n<node>g<k> on host node<node>, GPU k. */
PP_INTERNAL pp_status ppi_cluster_box(pp_ctx *ctx, const char *name,
                                      const char *source, const char *gpu,
                                      int32_t g, const double *bw,
                                      const pp_topo_params *p,
                                      const struct ppi_box_notes *notes,
                                      pp_cluster **out);

/* Paths of transfers over a link graph (cluster_paths.c): the
** simulator's link sharing and the estimate's shared links use them. */
struct ppi_routes {
  const struct pp_cluster *c;
  const int32_t *table; /* hop routing: the cluster's table, or NULL */
  int32_t nvert;
  int32_t *off, *adj; /* adjacency (link ids) of every link */
  int32_t **tree;     /* hop routing: per source device, NULL until used */
  /* widest routing's scratch, V entries each: per side (0 from the
  ** source, 1 from the destination) the generation that reached a
  ** vertex, its distance, the BFS queue and its layers' starts; the
  ** generation that marked a vertex on a shortest path */
  uint32_t gen, *seen[2], *good;
  int32_t *dist[2], *queue[2], *layer[2];
  int32_t *path; /* ppi_route_ref's buffer, V + 1 entries */
};
PP_INTERNAL pp_status ppi_routes_init(pp_ctx *ctx, struct ppi_routes *rt,
                                      const struct pp_cluster *c);
/* The directed link resources from device i to j, source first; *n = 0
** for a cluster without a link graph. */
PP_INTERNAL pp_status ppi_route_path(pp_ctx *ctx, struct ppi_routes *rt,
                                     int32_t i, int32_t j, int32_t *res,
                                     int32_t cap, int32_t *n);
/* The same path without a copy: *path points into the cluster's kept
** paths, or into rt's own buffer until the next call on rt. */
PP_INTERNAL pp_status ppi_route_ref(pp_ctx *ctx, struct ppi_routes *rt,
                                    int32_t i, int32_t j, const int32_t **path,
                                    int32_t *n);
PP_INTERNAL double ppi_route_gbps(const struct ppi_routes *rt, int32_t res);
PP_INTERNAL void ppi_routes_free(pp_ctx *ctx, struct ppi_routes *rt);

#endif /* PP_CLUSTER_H */

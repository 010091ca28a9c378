/* SPDX-License-Identifier: MIT */
/*
** SPECs: what a user may write wherever a model or cluster is expected.
** A SPEC is a file path if such a file exists; otherwise a built-in name
** or a one-line generator spec, NAME[:ARG,...] where the first ARGs may
** be sizes ("4x8", "64") and the rest are key=value options:
**
**   hier:4x8,intra=300,inter=25,gpu=A100-80
**   torus3d:16x16x16,link=25
**   transformer:layers=24,hidden=1024,heads=16,seq=1024
**
** The grammar and every option are in docs/FORMATS.md; this file only
** turns text into the typed params of cluster_gen.c, model_transformer.c,
** model_opnet.c and the file readers, with errors that quote the spec.
** The key=value options are tables (gen_opts, topo_opts, ...) that the
** one parser, ppi_spec_parse (base/kvspec.c), reads.
*/
#include "cluster/cluster_gen.h"
#include "model/model.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

struct gen_info {
  const char *name;
  int kind;
  int dmin, dmax;   /* positional sizes accepted */
  const char *opts; /* options accepted, with the common ones if listed */
  const char *about;
};

#define COMMON_OPTS "gpu,mem,speed,peak,peak32,peak_tf32,membw,latency"

static const struct gen_info gens[] = {
    {"hier", PPI_GEN_HIER, 0, 2, "intra,inter," COMMON_OPTS,
     "hier:NODESxGPUS[,intra=GBPS][,inter=GBPS]  nodes of GPUs behind a node "
     "switch, one NIC per GPU to a spine (default 4x4, 50 / 12.5 GB/s, V100)"},
    {"dgx1", PPI_GEN_DGX1, 0, 1, "pcie,inter," COMMON_OPTS,
     "dgx1[:NODES][,pcie=GBPS][,inter=GBPS]  DGX-1 V100 hybrid cube-mesh: "
     "NVLink 25/50 GB/s, PCIe 10, Ethernet 3.125 between nodes"},
    {"nvswitch", PPI_GEN_NVSWITCH, 0, 2, "intra,inter," COMMON_OPTS,
     "nvswitch[:NODES[xGPUS]][,gpu=A100-80|H100|...]  DGX A100/H100-style "
     "nodes: NVSwitch 300 (H100: 450) GB/s, 25 (H100: 50) GB/s per GPU NIC"},
    {"mesh2d", PPI_GEN_MESH2D, 0, 2, "link,routing," COMMON_OPTS,
     "mesh2d:XxY[,link=GBPS][,routing=hops|widest]  2D mesh, one device per "
     "vertex (default 8x8, 25 GB/s links, hop-divided bandwidth)"},
    {"torus2d", PPI_GEN_TORUS2D, 0, 2, "link,routing," COMMON_OPTS,
     "torus2d:XxY[,link=GBPS][,routing=hops|widest]  2D torus"},
    {"mesh3d", PPI_GEN_MESH3D, 0, 3, "link,routing," COMMON_OPTS,
     "mesh3d:XxYxZ[,link=GBPS][,routing=hops|widest]  3D mesh (default 4x4x4)"},
    {"torus3d", PPI_GEN_TORUS3D, 0, 3, "link,routing," COMMON_OPTS,
     "torus3d:XxYxZ[,link=GBPS][,routing=hops|widest]  3D torus"},
    {"random_blk_1", PPI_GEN_RANDOM_BLK_1, 0, 1, "block,seed," COMMON_OPTS,
     "random_blk_1:D[,block=8][,seed=S]  Parmesan: random blocks; "
     "U[40,50] GB/s inside a block, U[2,10] between"},
    {"random_blk_2", PPI_GEN_RANDOM_BLK_2, 0, 1,
     "block,super,seed," COMMON_OPTS,
     "random_blk_2:D[,block=8][,super=4][,seed=S]  Parmesan: blocks in "
     "super-blocks; U[40,50], U[10,20], U[1,5] GB/s"},
    {"uniform_dist", PPI_GEN_UNIFORM_DIST, 0, 1, "lo,hi,seed," COMMON_OPTS,
     "uniform_dist:D[,lo=1][,hi=100][,seed=S]  Parmesan: every pair "
     "U[lo,hi] GB/s"},
    {"amp-homogeneous", PPI_GEN_AMP_HOMOGENEOUS, 0, 0, "latency",
     "amp-homogeneous  AMP: 4 x g4dn.12xlarge (16 T4, 50 Gb/s)"},
    {"amp-het-cluster", PPI_GEN_AMP_HET_CLUSTER, 0, 0, "latency",
     "amp-het-cluster  AMP: 3 x p3.8xlarge (V100, NVLink 170 Gb/s, 10 Gb/s "
     "out) + 1 x g4dn.12xlarge (T4)"},
    {"amp-het-model", PPI_GEN_AMP_HET_MODEL, 0, 0, "latency",
     "amp-het-model  AMP: 4 x p3.8xlarge (16 V100)"},
    {"clariden", PPI_GEN_CLARIDEN, 0, 1, "intra,inter," COMMON_OPTS,
     "clariden[:NODES]  CSCS Alps/Clariden: nodes of 4 GH-96 (GH200), NVLink "
     "125.46 GB/s per pair, one Slingshot NIC per GPU, 22.93 GB/s (default "
     "32 nodes)"},
};

#define NGENS ((int)PPI_COUNT(gens))

const char *pp_cluster_generator_name(int i)
{
  return i >= 0 && i < NGENS ? gens[i].name : NULL;
}

const char *pp_cluster_generator_about(int i)
{
  return i >= 0 && i < NGENS ? gens[i].about : NULL;
}

/* ---- sizes ------------------------------------------------------------ */

/* Sizes "AxBxC" into dims; returns the count in *nd. */
static pp_status parse_dims(const struct ppi_spec *s, const char *v,
                            int32_t *dims, int *nd)
{
  char buf[64], *p, *x;
  int n = 0;
  if (strlen(v) >= sizeof buf)
    return ppi_spec_fail(s, "sizes '%s' are too long", v);
  strcpy(buf, v);
  p = buf;
  for (;;) {
    int64_t k = 0;
    pp_status rc;
    x = strchr(p, 'x');
    if (x)
      *x = '\0';
    if (n == 3)
      return ppi_spec_fail(s, "at most 3 sizes, as in 4x4x4");
    if ((rc = ppi_spec_int(s, "each size", p, 1, PP_MAX_DEVICES, &k)))
      return rc;
    dims[n++] = (int32_t)k;
    if (!x)
      break;
    p = x + 1;
  }
  *nd = n;
  return PP_OK;
}

/* A spec of the given kind ("cluster spec", "model spec"), for errors. */
static struct ppi_spec spec_of(pp_ctx *ctx, const char *spec, const char *what)
{
  struct ppi_spec s;
  s.ctx = ctx;
  s.text = spec;
  s.what = what;
  return s;
}

/* The spec into buf, a PPI_SPEC_MAX-byte buffer to cut up. */
static pp_status spec_copy(const struct ppi_spec *s, char *buf)
{
  if (strlen(s->text) >= PPI_SPEC_MAX)
    return ppi_spec_fail(s, "longer than %d bytes", PPI_SPEC_MAX - 1);
  strcpy(buf, s->text);
  return PP_OK;
}

/* The options of a generator spec NAME[:ARG,...], NAME the first kl
** bytes, parsed from buf (spec_copy's) into target. */
static pp_status gen_args(const struct ppi_spec *s, char *buf, size_t kl,
                          const struct ppi_kv *kv, int nkv, const char *accept,
                          void *target, ppi_spec_pos_fn pos, void *pos_ud)
{
  if (s->text[kl] != ':')
    return PP_OK;
  if (!s->text[kl + 1])
    return ppi_spec_fail(s, "nothing after ':'");
  return ppi_spec_parse(s, buf + kl + 1, kv, nkv, accept, target, pos, pos_ud);
}

/* A SPEC that names no file but looks like a path gets "cannot open"
** rather than "unknown spec": the user meant a file. */
static bool looks_like_path(const char *spec)
{
  return strchr(spec, '/') || strstr(spec, ".json") || strstr(spec, ".txt") ||
         strstr(spec, ".xml") || strstr(spec, ".onnx");
}

/* ---- clusters --------------------------------------------------------- */

/* Every generator option; a generator takes those its gens[] entry lists. */
#define GEN_D(k, f)                                                            \
  {                                                                            \
    k, PPI_KV_POSITIVE, offsetof(struct ppi_gen_params, f), 0, INFINITY, 0,    \
        NULL, NULL                                                             \
  }
#define GEN_I(k, f)                                                            \
  {                                                                            \
    k, PPI_KV_INT, offsetof(struct ppi_gen_params, f), 1, PP_MAX_DEVICES, 0,   \
        NULL, NULL                                                             \
  }
static const struct ppi_kv gen_opts[] = {
    GEN_D("intra", intra),
    GEN_D("inter", inter),
    GEN_D("link", link),
    GEN_D("pcie", pcie),
    GEN_D("lo", lo),
    GEN_D("hi", hi),
    GEN_D("mem", mem),
    GEN_D("speed", speed),
    GEN_D("peak", peak),
    GEN_D("peak32", peak32),
    GEN_D("peak_tf32", tf32),
    GEN_D("membw", membw),
    {"latency", PPI_KV_NONNEG, offsetof(struct ppi_gen_params, latency), 0,
     INFINITY, 0, NULL, NULL},
    {"gpu", PPI_KV_STRING, offsetof(struct ppi_gen_params, gpu), 0, 0, 0, NULL,
     NULL},
    {"routing", PPI_KV_ENUM, offsetof(struct ppi_gen_params, routing), 0, 0, 0,
     "widest|hops", "'hops' or 'widest'"},
    {"seed", PPI_KV_U64, offsetof(struct ppi_gen_params, seed), 0, 0, 0, NULL,
     NULL},
    GEN_I("block", block),
    GEN_I("super", super),
};
/* ENUM writes the index of the choice into an int. */
_Static_assert(PP_ROUTE_WIDEST == 0 && PP_ROUTE_HOPS == 1 &&
                   sizeof(pp_routing) == sizeof(int),
               "routing's choices are in value order");

struct cl_ud {
  const struct gen_info *g;
  struct ppi_gen_params *p;
};

/* The generator's sizes. */
static pp_status cluster_sizes(const struct ppi_spec *s, void *ud,
                               const char *v)
{
  struct cl_ud *c = ud;
  struct ppi_gen_params *p = c->p;
  int32_t dims[3];
  int nd = 0, i;
  pp_status rc;
  if (c->g->dmax == 0)
    return ppi_spec_fail(s, "takes no sizes");
  if ((rc = parse_dims(s, v, dims, &nd)))
    return rc;
  if (nd > c->g->dmax || (p->kind != PPI_GEN_NVSWITCH &&
                          p->kind != PPI_GEN_DGX1 && nd != p->ndims))
    return ppi_spec_fail(s, "%s needs %d size%s, as in %s", c->g->name,
                         p->ndims, p->ndims > 1 ? "s" : "",
                         p->ndims == 3   ? "4x4x4"
                         : p->ndims == 2 ? "4x8"
                                         : "64");
  for (i = 0; i < nd; i++)
    p->dims[i] = dims[i];
  return PP_OK;
}

static pp_status cluster_spec(pp_ctx *ctx, const char *spec, pp_cluster **out)
{
  struct ppi_spec s = spec_of(ctx, spec, "cluster spec");
  struct ppi_gen_params p;
  struct cl_ud ud;
  char buf[PPI_SPEC_MAX];
  size_t kl;
  int i;
  pp_status rc;

  if ((rc = spec_copy(&s, buf)))
    return rc;
  kl = strcspn(buf, ":");
  buf[kl] = '\0';
  for (i = 0; i < NGENS && strcmp(gens[i].name, buf) != 0; i++)
    ;
  if (i == NGENS)
    return PP_EINVAL; /* not a generator: the caller reports */
  ppi_gen_params_init(&p, gens[i].kind, pp_ctx_seed(ctx));
  p.name = spec;
  ud.g = &gens[i];
  ud.p = &p;
  if ((rc = gen_args(&s, buf, kl, gen_opts, PPI_COUNT(gen_opts), gens[i].opts,
                     &p, cluster_sizes, &ud)))
    return rc;
  if (p.kind == PPI_GEN_NVSWITCH && p.dims[1] == 0)
    p.dims[1] = 8;
  if (p.kind == PPI_GEN_UNIFORM_DIST && !(p.lo <= p.hi))
    return ppi_spec_fail(&s, "lo %g is above hi %g", p.lo, p.hi);
  {
    double n = 1;
    int k;
    for (k = 0; k < (p.kind == PPI_GEN_DGX1 ? 1 : p.ndims); k++)
      n *= p.dims[k];
    if (p.kind == PPI_GEN_DGX1)
      n *= 8;
    if (n > PP_MAX_DEVICES)
      return ppi_fail(ctx, PP_ELIMIT,
                      "cluster spec '%s': %.0f devices "
                      "exceed the limit of %d",
                      spec, n, PP_MAX_DEVICES);
  }
  return ppi_cluster_generate(ctx, &p, out);
}

/* FILE:OPTIONS, where FILE exists: the path into buf and the options'
** offset into *opts; false when spec is not of that form. */
static bool file_with_options(const char *spec, char *buf, size_t n,
                              size_t *opts)
{
  const char *c = strrchr(spec, ':');
  size_t k;
  if (!c || !c[1])
    return false;
  k = (size_t)(c - spec);
  if (k == 0 || k >= n)
    return false;
  memcpy(buf, spec, k);
  buf[k] = '\0';
  if (!ppi_file_exists(buf))
    return false;
  *opts = k + 1;
  return true;
}

/* The first byte that is not white space, or 0. */
static char first_char(const char *text, size_t len)
{
  size_t i = 0;
  if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) /* a BOM (json.c) */
    i = 3;
  while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
                     text[i] == '\r'))
    i++;
  return i < len ? text[i] : 0;
}

/* The options of a topology file (FILE:OPTIONS). */
#define TOPO_D(k, f)                                                           \
  {                                                                            \
    k, PPI_KV_POSITIVE, offsetof(pp_topo_params, f), 0, INFINITY, 0, NULL,     \
        NULL                                                                   \
  }
static const struct ppi_kv topo_opts[] = {
    {"gpu", PPI_KV_STRING, offsetof(pp_topo_params, gpu), 0, 0, 0, NULL, NULL},
    {"nodes", PPI_KV_INT, offsetof(pp_topo_params, nodes), 1, PP_MAX_DEVICES, 0,
     NULL, NULL},
    TOPO_D("inter", inter_gbps),
    TOPO_D("nvlink", nvlink_gbps),
    TOPO_D("pcie", pcie_gbps),
    TOPO_D("sys", sys_gbps),
    {"latency", PPI_KV_NONNEG, offsetof(pp_topo_params, latency_us), 0,
     INFINITY, 0, NULL, NULL},
    TOPO_D("nic", nic_gbits),
    {"gpus", PPI_KV_STRING, offsetof(pp_topo_params, gpus), 0, 0, 0, NULL,
     NULL},
    TOPO_D("mem", mem_gib),
    TOPO_D("speed", speed),
    TOPO_D("peak", peak_tflops),
    TOPO_D("peak32", peak_fp32_tflops),
    TOPO_D("peak_tf32", peak_tf32_tflops),
    TOPO_D("membw", mem_gbps),
};

/* The formats a cluster file may be in, for the message that refuses
** the others. */
#define CLUSTER_FORMATS                                                        \
  "cluster JSON, 'nvidia-smi topo -m' output, an NCCL or RCCL topology "       \
  "XML (NCCL_TOPO_DUMP_FILE) or 'rocm-smi --showtopo' output"

static bool has(const char *text, const char *s)
{
  return strstr(text, s) != NULL;
}

/* A cluster file: JSON, NCCL XML, rocm-smi or nvidia-smi text, told
** apart by their first character and the marks each tool prints (the
** rocm-smi banner or its table titles; a GPU0 column); anything else
** is refused with the list of formats.  opts (may be NULL) are topology
** options. */
static pp_status cluster_file(pp_ctx *ctx, const char *spec, const char *path,
                              char *opts, pp_cluster **out)
{
  char *text;
  size_t len;
  char c;
  pp_topo_params tp;
  pp_status rc;
  struct ppi_spec s = spec_of(ctx, spec, "cluster spec");
  pp_topo_params_init(&tp);
  if (opts && (rc = ppi_spec_parse(&s, opts, topo_opts, PPI_COUNT(topo_opts),
                                   NULL, &tp, NULL, NULL)))
    return rc;
  if ((rc = ppi_read_file(ctx, path, &text, &len)))
    return rc;
  c = first_char(text, len);
  if (c == '<')
    rc = pp_cluster_read_nccl_xml(ctx, text, len, path, &tp, out);
  else if (c == '{' || c == '[') {
    if (opts)
      rc = ppi_spec_fail(&s, "options follow a cluster JSON file; they apply "
                             "to nvidia-smi, rocm-smi and NCCL topology "
                             "files");
    else
      rc = pp_cluster_read_json(ctx, text, len, path, out);
  } else if (has(text, "ROCm System Management Interface") ||
             has(text, "Link Type between two GPUs"))
    rc = pp_cluster_read_rocm_smi(ctx, text, len, path, &tp, out);
  else if (has(text, "GPU0"))
    rc = pp_cluster_read_nvsmi(ctx, text, len, path, &tp, out);
  else
    rc = ppi_fail_at(
        ctx, PP_EINPUT, path, 0, 0,
        "not a cluster format parplan reads (it reads " CLUSTER_FORMATS ")");
  ppi_free(ctx, text, len + 1);
  return rc;
}

pp_status pp_cluster_load(pp_ctx *ctx, const char *spec, pp_cluster **out)
{
  char buf[PPI_SPEC_MAX];
  size_t opts;
  pp_status rc;
  if (!ctx || !spec || !out)
    return PP_EINVAL;
  *out = NULL;
  if (ppi_file_exists(spec))
    return cluster_file(ctx, spec, spec, NULL, out);
  if (strlen(spec) < sizeof buf &&
      file_with_options(spec, buf, sizeof buf, &opts)) {
    char copy[PPI_SPEC_MAX];
    strcpy(copy, spec);
    return cluster_file(ctx, spec, buf, copy + opts, out);
  }
  rc = cluster_spec(ctx, spec, out);
  if (rc != PP_EINVAL)
    return rc;
  if (looks_like_path(spec))
    return ppi_fail_at(ctx, PP_EIO, spec, 0, 0,
                       "cannot open: No such file or directory");
  return ppi_fail(ctx, PP_EINPUT,
                  "'%s' is not a file, a built-in cluster "
                  "or a generator (try 'parplan topo --list')",
                  spec);
}

/* ---- models ----------------------------------------------------------- */

/* The options of the model generators; gpu=TYPE and eff=E every one
** takes. */
#define TF_I(k, f)                                                             \
  {                                                                            \
    k, PPI_KV_INT, offsetof(struct ppi_transformer_params, f), 1,              \
        PPI_SPEC_MAX_INT, 0, NULL, NULL                                        \
  }
static const struct ppi_kv transformer_opts[] = {
    TF_I("layers", layers),
    TF_I("hidden", hidden),
    TF_I("heads", heads),
    TF_I("seq", seq),
    TF_I("vocab", vocab),
    TF_I("ffn", ffn),
    TF_I("mbs", micro_batch),
    TF_I("bytes", bytes_per_elem),
    {"gpu", PPI_KV_STRING, offsetof(struct ppi_transformer_params, type), 0, 0,
     0, NULL, NULL},
    {"eff", PPI_KV_POSITIVE,
     offsetof(struct ppi_transformer_params, efficiency), 0, 1, 0, NULL, NULL},
    {"tie", PPI_KV_BOOL,
     offsetof(struct ppi_transformer_params, tie_embeddings), 0, 0, 0, NULL,
     NULL},
};

#define OP_I(k, f)                                                             \
  {                                                                            \
    k, PPI_KV_INT, offsetof(struct ppi_opnet_params, f), 1, PPI_SPEC_MAX_INT,  \
        0, NULL, NULL                                                          \
  }
static const struct ppi_kv opnet_opts[] = {
    OP_I("batch", batch),
    OP_I("image", image),
    OP_I("depth", depth),
    OP_I("layers", layers),
    OP_I("hidden", hidden),
    OP_I("heads", heads),
    OP_I("seq", seq),
    OP_I("vocab", vocab),
    OP_I("embed", embed),
    OP_I("window", window),
    {"stages", PPI_KV_INTS, offsetof(struct ppi_opnet_params, stages), 1, 500,
     4, NULL, "four block counts a-b-c-d (1..500)"},
    OP_I("channels", channels),
    {"gpu", PPI_KV_STRING, offsetof(struct ppi_opnet_params, type), 0, 0, 0,
     NULL, NULL},
    {"eff", PPI_KV_POSITIVE, offsetof(struct ppi_opnet_params, efficiency), 0,
     1, 0, NULL, NULL},
    {"memory_format", PPI_KV_ENUM,
     offsetof(struct ppi_opnet_params, memory_format), 0, 0, 0,
     "channels_last|contiguous", "channels_last or contiguous"},
};

/* Not JSON: PipeDream's graph.txt, the other text model format. */
static bool is_pipedream(const char *text, size_t len)
{
  char c = first_char(text, len);
  return c && c != '{' && c != '[';
}

/* The options of an ONNX file (FILE.onnx:OPTIONS), besides dim.NAME=N
** (onnx_dims). */
static const struct ppi_kv onnx_opts[] = {
    {"batch", PPI_KV_INT, offsetof(pp_onnx_params, batch), 1, PPI_SPEC_MAX_INT,
     0, NULL, NULL},
    {"dtype", PPI_KV_ENUM, offsetof(pp_onnx_params, dtype), 0, 0, 0,
     "model|fp32|fp16|bf16", "model, fp32, fp16 or bf16"},
    {"eff", PPI_KV_POSITIVE, offsetof(pp_onnx_params, efficiency), 0, 1, 0,
     NULL, NULL},
    {"memory_format", PPI_KV_ENUM, offsetof(pp_onnx_params, memory_format), 0,
     0, 0, "channels_last|contiguous", "channels_last or contiguous"},
    {"name", PPI_KV_STRING, offsetof(pp_onnx_params, name), 0, 0, 0, NULL,
     NULL},
};

/* The dim.NAME=N options of an ONNX spec into op (names pointing into
** args, cut up in place), the others copied to rest for the table. */
static pp_status onnx_dims(const struct ppi_spec *s, char *args, char *rest,
                           pp_onnx_params *op)
{
  char *rd = args, *wr = rest;
  while (*rd) {
    char *end = strchr(rd, ',');
    size_t len = end ? (size_t)(end - rd) : strlen(rd);
    if (!strncmp(rd, "dim.", 4)) {
      char *eq = memchr(rd, '=', len);
      int64_t v;
      pp_status rc;
      if (!eq || eq == rd + 4 || eq + 1 == rd + len)
        return ppi_spec_fail(s, "dim.NAME=N needs a dimension name and a "
                                "value");
      if (op->nsym == PP_ONNX_MAX_SYMS)
        return ppi_spec_fail(s, "at most %d dim.NAME=N options",
                             PP_ONNX_MAX_SYMS);
      *eq = '\0';
      if (end)
        *end = '\0';
      if ((rc = ppi_spec_int(s, rd, eq + 1, 0, PPI_SPEC_MAX_INT, &v)))
        return rc;
      op->sym_name[op->nsym] = rd + 4;
      op->sym_value[op->nsym++] = v;
    } else {
      if (wr > rest)
        *wr++ = ',';
      memcpy(wr, rd, len);
      wr += len;
    }
    rd += len + (end ? 1 : 0);
  }
  *wr = '\0';
  return PP_OK;
}

/* ONNX is binary: a .onnx name, or a NUL in the first bytes. */
static bool is_onnx(const char *path, const char *text, size_t len)
{
  size_t n = strlen(path);
  /* TUNING: a NUL within the first 64 bytes: a protobuf's small field
  ** values have zero bytes early, the text formats none; d35d12a, no sweep
  ** recorded. */
  return (n > 5 && !strcmp(path + n - 5, ".onnx")) ||
         memchr(text, '\0', len < 64 ? len : 64) != NULL;
}

pp_status pp_model_load(pp_ctx *ctx, const char *spec, pp_model **out)
{
  char *text, buf[PPI_SPEC_MAX];
  size_t len, opts;
  bool found;
  pp_status rc;

  if (!ctx || !spec || !out)
    return PP_EINVAL;
  *out = NULL;
  if (!ppi_file_exists(spec) && strlen(spec) < sizeof buf &&
      file_with_options(spec, buf, sizeof buf, &opts)) {
    struct ppi_spec s = spec_of(ctx, spec, "model spec");
    pp_onnx_params op;
    char copy[PPI_SPEC_MAX], rest[PPI_SPEC_MAX];
    strcpy(copy, spec);
    pp_onnx_params_init(&op);
    if ((rc = onnx_dims(&s, copy + opts, rest, &op)) ||
        (rest[0] &&
         (rc = ppi_spec_parse(&s, rest, onnx_opts, PPI_COUNT(onnx_opts), NULL,
                              &op, NULL, NULL))))
      return rc;
    return pp_model_load_onnx(ctx, buf, &op, out);
  }
  if (ppi_file_exists(spec)) {
    if ((rc = ppi_read_file(ctx, spec, &text, &len)))
      return rc;
    if (is_onnx(spec, text, len))
      rc = pp_model_read_onnx(ctx, text, len, spec, NULL, out);
    else if (is_pipedream(text, len))
      rc = pp_model_read_pipedream(ctx, text, len, spec, out);
    else
      rc = pp_model_read_json(ctx, text, len, spec, out);
    ppi_free(ctx, text, len + 1);
    return rc;
  }
  if ((rc = ppi_model_builtin(ctx, spec, out, &found)) || found)
    return rc;
  if (strncmp(spec, "transformer", 11) == 0 &&
      (spec[11] == ':' || spec[11] == '\0')) {
    struct ppi_spec s = spec_of(ctx, spec, "model spec");
    struct ppi_transformer_params p;
    ppi_transformer_params_init(&p);
    if ((rc = spec_copy(&s, buf)) ||
        (rc = gen_args(&s, buf, 11, transformer_opts,
                       PPI_COUNT(transformer_opts), NULL, &p, NULL, NULL)))
      return rc;
    return ppi_model_transformer(ctx, &p, spec, out);
  }
  {
    static const char *const kinds[] = {"resnet", "bert", "swin", "fpn"};
    int i;
    for (i = 0; i < (int)PPI_COUNT(kinds); i++) {
      size_t kl = strlen(kinds[i]);
      if (strncmp(spec, kinds[i], kl) == 0 &&
          (spec[kl] == ':' || spec[kl] == '\0')) {
        struct ppi_spec s = spec_of(ctx, spec, "model spec");
        struct ppi_opnet_params p;
        ppi_opnet_params_init(&p, kinds[i]);
        if ((rc = spec_copy(&s, buf)) ||
            (rc = gen_args(&s, buf, kl, opnet_opts, PPI_COUNT(opnet_opts), NULL,
                           &p, NULL, NULL)))
          return rc;
        return ppi_model_opnet(ctx, &p, spec, out);
      }
    }
  }
  if (looks_like_path(spec))
    return ppi_fail_at(ctx, PP_EIO, spec, 0, 0,
                       "cannot open: No such file or directory");
  return ppi_fail(ctx, PP_EINPUT,
                  "'%s' is not a file, a built-in model or a "
                  "generator (try 'parplan model --list')",
                  spec);
}

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
** turns text into the typed params of cluster_gen.c and
** model_transformer.c, with errors that quote the spec.
*/
#include "cluster/cluster_gen.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gen_info {
  const char *name;
  int kind;
  int dmin, dmax;   /* positional sizes accepted */
  const char *opts; /* options accepted, with the common ones if listed */
  const char *about;
};

#define COMMON_OPTS "gpu,mem,speed,peak,latency"

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
};

#define NGENS ((int)(sizeof gens / sizeof gens[0]))

const char *pp_cluster_generator_name(int i)
{
  return i >= 0 && i < NGENS ? gens[i].name : NULL;
}

const char *pp_cluster_generator_about(int i)
{
  return i >= 0 && i < NGENS ? gens[i].about : NULL;
}

/* ---- tokens ----------------------------------------------------------- */

struct spec_run {
  pp_ctx *ctx;
  const char *spec; /* the whole text, quoted in errors */
  const char *what; /* "cluster spec" or "model spec" */
};

static pp_status sfail(struct spec_run *s, const char *fmt, ...)
    PP_PRINTF(2, 3);
static pp_status sfail(struct spec_run *s, const char *fmt, ...)
{
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* A long spec is quoted by its head, so the reason always fits. */
  if (strlen(s->spec) > 120)
    return ppi_fail(s->ctx, PP_EPARSE, "%s '%.100s...': %s", s->what, s->spec,
                    msg);
  return ppi_fail(s->ctx, PP_EPARSE, "%s '%s': %s", s->what, s->spec, msg);
}

static bool in_list(const char *list, const char *key)
{
  size_t n = strlen(key);
  const char *p = list;
  while ((p = strstr(p, key)) != NULL) {
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
      return true;
    p += n;
  }
  return false;
}

static pp_status parse_double(struct spec_run *s, const char *key,
                              const char *v, double lo, double *out)
{
  char *end;
  double x;
  errno = 0;
  x = strtod(v, &end);
  if (end == v || *end || errno == ERANGE || !isfinite(x) || x < lo ||
      (lo == 0 && x == 0 && strcmp(key, "latency") != 0))
    return sfail(
        s, "option '%s' needs a %s number, not '%s'", key,
        lo > 0 || strcmp(key, "latency") != 0 ? "positive" : "non-negative", v);
  *out = x;
  return PP_OK;
}

static pp_status parse_int(struct spec_run *s, const char *key, const char *v,
                           int64_t lo, int64_t hi, int64_t *out)
{
  char *end;
  long long x;
  errno = 0;
  x = strtoll(v, &end, 10);
  if (end == v || *end || errno == ERANGE || x < lo || x > hi)
    return sfail(s, "%s needs an integer from %lld to %lld, not '%s'", key,
                 (long long)lo, (long long)hi, v);
  *out = x;
  return PP_OK;
}

/* Sizes "AxBxC" into dims; returns the count in *nd. */
static pp_status parse_dims(struct spec_run *s, const char *v, int32_t *dims,
                            int *nd)
{
  char buf[64], *p, *x;
  int n = 0;
  if (strlen(v) >= sizeof buf)
    return sfail(s, "sizes '%s' are too long", v);
  strcpy(buf, v);
  p = buf;
  for (;;) {
    int64_t k = 0;
    pp_status rc;
    x = strchr(p, 'x');
    if (x)
      *x = '\0';
    if (n == 3)
      return sfail(s, "at most 3 sizes, as in 4x4x4");
    if ((rc = parse_int(s, "each size", p, 1, PP_MAX_DEVICES, &k)))
      return rc;
    dims[n++] = (int32_t)k;
    if (!x)
      break;
    p = x + 1;
  }
  *nd = n;
  return PP_OK;
}

/* Split "name:a,b,c" in place; calls back for each argument.  The buffer
** is the caller's copy of the spec. */
typedef pp_status (*arg_fn)(struct spec_run *s, void *ud, int pos,
                            const char *key, const char *val);

static pp_status each_arg(struct spec_run *s, char *args, arg_fn fn, void *ud)
{
  char *p = args;
  int pos = 0;
  pp_status rc;
  while (p) {
    char *comma = strchr(p, ','), *eq;
    if (comma)
      *comma = '\0';
    if (!*p)
      return sfail(s, "empty argument");
    eq = strchr(p, '=');
    if (eq) {
      *eq = '\0';
      if (!*p || !eq[1])
        return sfail(s, "'%s=%s' needs a key and a value", p, eq + 1);
      rc = fn(s, ud, -1, p, eq + 1);
    } else
      rc = fn(s, ud, pos++, NULL, p);
    if (rc)
      return rc;
    p = comma ? comma + 1 : NULL;
  }
  return PP_OK;
}

/* A SPEC that names no file but looks like a path gets "cannot open"
** rather than "unknown spec": the user meant a file. */
static bool looks_like_path(const char *spec)
{
  return strchr(spec, '/') || strstr(spec, ".json") || strstr(spec, ".txt") ||
         strstr(spec, ".xml") || strstr(spec, ".onnx");
}

/* ---- clusters --------------------------------------------------------- */

struct cl_ud {
  const struct gen_info *g;
  struct ppi_gen_params *p;
};

static pp_status cluster_arg(struct spec_run *s, void *ud, int pos,
                             const char *key, const char *v)
{
  struct cl_ud *c = ud;
  struct ppi_gen_params *p = c->p;
  int64_t k = 0;
  pp_status rc;
  if (key == NULL) {
    int32_t dims[3];
    int nd = 0, i;
    if (pos > 0)
      return sfail(s, "unexpected argument '%s' (options are key=value)", v);
    if (c->g->dmax == 0)
      return sfail(s, "takes no sizes");
    if ((rc = parse_dims(s, v, dims, &nd)))
      return rc;
    if (nd > c->g->dmax || (p->kind != PPI_GEN_NVSWITCH &&
                            p->kind != PPI_GEN_DGX1 && nd != p->ndims))
      return sfail(s, "%s needs %d size%s, as in %s", c->g->name, p->ndims,
                   p->ndims > 1 ? "s" : "",
                   p->ndims == 3   ? "4x4x4"
                   : p->ndims == 2 ? "4x8"
                                   : "64");
    for (i = 0; i < nd; i++)
      p->dims[i] = dims[i];
    return PP_OK;
  }
  if (!in_list(c->g->opts, key))
    return sfail(s, "unknown option '%s' (options: %s)", key, c->g->opts);
  if (!strcmp(key, "gpu")) {
    p->gpu = v; /* points into the caller's buffer, alive for the run */
    return PP_OK;
  }
  if (!strcmp(key, "routing")) {
    if (!strcmp(v, "hops"))
      p->routing = PP_ROUTE_HOPS;
    else if (!strcmp(v, "widest"))
      p->routing = PP_ROUTE_WIDEST;
    else
      return sfail(s, "routing is 'hops' or 'widest', not '%s'", v);
    return PP_OK;
  }
  if (!strcmp(key, "seed")) {
    char *end;
    errno = 0;
    p->seed = strtoull(v, &end, 10);
    if (end == v || *end || errno == ERANGE || *v == '-')
      return sfail(s, "seed needs a non-negative integer, not '%s'", v);
    return PP_OK;
  }
  if (!strcmp(key, "block") || !strcmp(key, "super")) {
    if ((rc = parse_int(s, key, v, 1, PP_MAX_DEVICES, &k)))
      return rc;
    *(!strcmp(key, "block") ? &p->block : &p->super) = (int32_t)k;
    return PP_OK;
  }
  {
    double *dst = !strcmp(key, "intra")   ? &p->intra
                  : !strcmp(key, "inter") ? &p->inter
                  : !strcmp(key, "link")  ? &p->link
                  : !strcmp(key, "pcie")  ? &p->pcie
                  : !strcmp(key, "lo")    ? &p->lo
                  : !strcmp(key, "hi")    ? &p->hi
                  : !strcmp(key, "mem")   ? &p->mem
                  : !strcmp(key, "speed") ? &p->speed
                  : !strcmp(key, "peak")  ? &p->peak
                                          : &p->latency;
    return parse_double(s, key, v, 0, dst);
  }
}

static pp_status cluster_spec(pp_ctx *ctx, const char *spec, pp_cluster **out)
{
  struct spec_run s;
  struct ppi_gen_params p;
  struct cl_ud ud;
  char buf[1024], *colon;
  int i;
  pp_status rc;

  s.ctx = ctx;
  s.spec = spec;
  s.what = "cluster spec";
  if (strlen(spec) >= sizeof buf)
    return sfail(&s, "longer than %zu bytes", sizeof buf - 1);
  strcpy(buf, spec);
  colon = strchr(buf, ':');
  if (colon)
    *colon = '\0';
  for (i = 0; i < NGENS && strcmp(gens[i].name, buf) != 0; i++)
    ;
  if (i == NGENS)
    return PP_EINVAL; /* not a generator: the caller reports */
  ppi_gen_params_init(&p, gens[i].kind, pp_ctx_seed(ctx));
  p.name = spec;
  ud.g = &gens[i];
  ud.p = &p;
  if (colon && !colon[1])
    return sfail(&s, "nothing after ':'");
  if (colon && (rc = each_arg(&s, colon + 1, cluster_arg, &ud)))
    return rc;
  if (p.kind == PPI_GEN_NVSWITCH && p.dims[1] == 0)
    p.dims[1] = 8;
  if (p.kind == PPI_GEN_UNIFORM_DIST && !(p.lo <= p.hi))
    return sfail(&s, "lo %g is above hi %g", p.lo, p.hi);
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
  while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
                     text[i] == '\r'))
    i++;
  return i < len ? text[i] : 0;
}

static pp_status topo_arg(struct spec_run *s, void *ud, int pos,
                          const char *key, const char *v)
{
  pp_topo_params *p = ud;
  int64_t k = 0;
  pp_status rc;
  (void)pos;
  if (!key)
    return sfail(s, "unexpected argument '%s' (options are key=value)", v);
  if (!strcmp(key, "gpu")) {
    p->gpu = v;
    return PP_OK;
  }
  if (!strcmp(key, "nodes")) {
    if ((rc = parse_int(s, key, v, 1, PP_MAX_DEVICES, &k)))
      return rc;
    p->nodes = (int32_t)k;
    return PP_OK;
  }
  {
    double *dst = !strcmp(key, "inter")     ? &p->inter_gbps
                  : !strcmp(key, "nvlink")  ? &p->nvlink_gbps
                  : !strcmp(key, "pcie")    ? &p->pcie_gbps
                  : !strcmp(key, "sys")     ? &p->sys_gbps
                  : !strcmp(key, "latency") ? &p->latency_us
                                            : NULL;
    if (!dst)
      return sfail(s,
                   "unknown option '%s' (options: gpu, nodes, inter, nvlink, "
                   "pcie, sys, latency)",
                   key);
    return parse_double(s, key, v, 0, dst);
  }
}

/* A cluster file: JSON, NCCL XML or nvidia-smi text, told apart by
** their first character; opts (may be NULL) are topology options. */
static pp_status cluster_file(pp_ctx *ctx, const char *spec, const char *path,
                              char *opts, pp_cluster **out)
{
  char *text;
  size_t len;
  char c;
  pp_topo_params tp;
  pp_status rc;
  struct spec_run s;
  s.ctx = ctx;
  s.spec = spec;
  s.what = "cluster spec";
  pp_topo_params_init(&tp);
  if (opts && (rc = each_arg(&s, opts, topo_arg, &tp)))
    return rc;
  if ((rc = ppi_read_file(ctx, path, &text, &len)))
    return rc;
  c = first_char(text, len);
  if (c == '<')
    rc = pp_cluster_read_nccl_xml(ctx, text, len, path, &tp, out);
  else if (c == '{' || c == '[' || !strstr(text, "GPU0")) {
    if (opts)
      rc = sfail(&s, "options follow a cluster JSON file; they apply to "
                     "nvidia-smi and NCCL topology files");
    else
      rc = pp_cluster_read_json(ctx, text, len, path, out);
  } else
    rc = pp_cluster_read_nvsmi(ctx, text, len, path, &tp, out);
  ppi_free(ctx, text, len + 1);
  return rc;
}

pp_status pp_cluster_load(pp_ctx *ctx, const char *spec, pp_cluster **out)
{
  char buf[1024];
  size_t opts;
  pp_status rc;
  if (!ctx || !spec || !out)
    return PP_EINVAL;
  *out = NULL;
  if (ppi_file_exists(spec))
    return cluster_file(ctx, spec, spec, NULL, out);
  if (strlen(spec) < sizeof buf &&
      file_with_options(spec, buf, sizeof buf, &opts)) {
    char copy[1024];
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

/* gpu=TYPE and eff=E, which every model generator takes: true when key
** is one of them (*rc the outcome). */
static bool common_arg(struct spec_run *s, const char *key, const char *v,
                       const char **type, double *eff, pp_status *rc)
{
  *rc = PP_OK;
  if (!strcmp(key, "gpu")) {
    *type = v;
    return true;
  }
  if (!strcmp(key, "eff")) {
    if ((*rc = parse_double(s, key, v, 0, eff)))
      return true;
    if (*eff > 1)
      *rc = sfail(s, "eff must be at most 1, not '%s'", v);
    return true;
  }
  return false;
}

static pp_status model_arg(struct spec_run *s, void *ud, int pos,
                           const char *key, const char *v)
{
  struct ppi_transformer_params *p = ud;
  int64_t k = 0;
  pp_status rc;
  if (!key)
    return sfail(s, "unexpected argument '%s' (options are key=value)", v);
  if (common_arg(s, key, v, &p->type, &p->efficiency, &rc))
    return rc;
  if (!strcmp(key, "tie")) {
    if (strcmp(v, "0") && strcmp(v, "1"))
      return sfail(s, "tie is 0 or 1, not '%s'", v);
    p->tie_embeddings = v[0] == '1';
    return PP_OK;
  }
  {
    int32_t *dst = !strcmp(key, "layers")   ? &p->layers
                   : !strcmp(key, "hidden") ? &p->hidden
                   : !strcmp(key, "heads")  ? &p->heads
                   : !strcmp(key, "seq")    ? &p->seq
                   : !strcmp(key, "vocab")  ? &p->vocab
                   : !strcmp(key, "ffn")    ? &p->ffn
                   : !strcmp(key, "mbs")    ? &p->micro_batch
                   : !strcmp(key, "bytes")  ? &p->bytes_per_elem
                                            : NULL;
    (void)pos;
    if (!dst)
      return sfail(s,
                   "unknown option '%s' (options: layers, hidden, heads, "
                   "seq, vocab, ffn, mbs, bytes, gpu, eff, tie)",
                   key);
    if ((rc = parse_int(s, key, v, 1, 1 << 30, &k)))
      return rc;
    *dst = (int32_t)k;
    return PP_OK;
  }
}

static pp_status opnet_arg(struct spec_run *s, void *ud, int pos,
                           const char *key, const char *v)
{
  struct ppi_opnet_params *p = ud;
  int64_t k = 0;
  pp_status rc;
  (void)pos;
  if (!key)
    return sfail(s, "unexpected argument '%s' (options are key=value)", v);
  if (common_arg(s, key, v, &p->type, &p->efficiency, &rc))
    return rc;
  if (!strcmp(key, "stages")) { /* a-b-c-d blocks per Swin stage */
    int st;
    const char *q = v;
    for (st = 0; st < 4; st++) {
      char *end;
      long x = strtol(q, &end, 10);
      if (end == q || x < 1 || x > 500 || (st < 3 && *end != '-') ||
          (st == 3 && *end))
        return sfail(s,
                     "stages is four block counts a-b-c-d (1..500), not "
                     "'%s'",
                     v);
      p->stages[st] = (int32_t)x;
      q = end + 1;
    }
    return PP_OK;
  }
  {
    int32_t *dst = !strcmp(key, "batch")      ? &p->batch
                   : !strcmp(key, "image")    ? &p->image
                   : !strcmp(key, "depth")    ? &p->depth
                   : !strcmp(key, "layers")   ? &p->layers
                   : !strcmp(key, "hidden")   ? &p->hidden
                   : !strcmp(key, "heads")    ? &p->heads
                   : !strcmp(key, "seq")      ? &p->seq
                   : !strcmp(key, "vocab")    ? &p->vocab
                   : !strcmp(key, "embed")    ? &p->embed
                   : !strcmp(key, "window")   ? &p->window
                   : !strcmp(key, "channels") ? &p->channels
                                              : NULL;
    if (!dst)
      return sfail(s,
                   "unknown option '%s' (options: batch, image, depth, "
                   "layers, hidden, heads, seq, vocab, embed, window, "
                   "stages, channels, gpu, eff)",
                   key);
    if ((rc = parse_int(s, key, v, 1, 1 << 30, &k)))
      return rc;
    *dst = (int32_t)k;
    return PP_OK;
  }
}

static bool is_pipedream(const char *text, size_t len)
{
  size_t i = 0;
  while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
                     text[i] == '\r'))
    i++;
  return i < len && text[i] != '{' && text[i] != '[';
}

static pp_status onnx_arg(struct spec_run *s, void *ud, int pos,
                          const char *key, const char *v)
{
  pp_onnx_params *p = ud;
  int64_t k = 0;
  pp_status rc;
  (void)pos;
  if (!key)
    return sfail(s, "unexpected argument '%s' (options are key=value)", v);
  if (!strcmp(key, "batch")) {
    if ((rc = parse_int(s, key, v, 1, 1 << 30, &k)))
      return rc;
    p->batch = (int32_t)k;
    return PP_OK;
  }
  if (!strcmp(key, "eff")) {
    if ((rc = parse_double(s, key, v, 0, &p->efficiency)))
      return rc;
    return p->efficiency > 1 ? sfail(s, "eff must be at most 1, not '%s'", v)
                             : PP_OK;
  }
  if (!strcmp(key, "name")) {
    p->name = v;
    return PP_OK;
  }
  return sfail(s, "unknown option '%s' (options: batch, eff, name)", key);
}

/* ONNX is binary: a .onnx name, or a NUL in the first bytes. */
static bool is_onnx(const char *path, const char *text, size_t len)
{
  size_t n = strlen(path);
  return (n > 5 && !strcmp(path + n - 5, ".onnx")) ||
         memchr(text, '\0', len < 64 ? len : 64) != NULL;
}

pp_status pp_model_load(pp_ctx *ctx, const char *spec, pp_model **out)
{
  char *text, buf[1024];
  size_t len, opts;
  bool found;
  pp_status rc;

  if (!ctx || !spec || !out)
    return PP_EINVAL;
  *out = NULL;
  if (!ppi_file_exists(spec) && strlen(spec) < sizeof buf &&
      file_with_options(spec, buf, sizeof buf, &opts)) {
    struct spec_run s;
    pp_onnx_params op;
    char copy[1024];
    s.ctx = ctx;
    s.spec = spec;
    s.what = "model spec";
    strcpy(copy, spec);
    pp_onnx_params_init(&op);
    if ((rc = each_arg(&s, copy + opts, onnx_arg, &op)))
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
    struct spec_run s;
    struct ppi_transformer_params p;
    s.ctx = ctx;
    s.spec = spec;
    s.what = "model spec";
    if (strlen(spec) >= sizeof buf)
      return sfail(&s, "longer than %zu bytes", sizeof buf - 1);
    strcpy(buf, spec);
    ppi_transformer_params_init(&p);
    if (spec[11] == ':') {
      if (!spec[12])
        return sfail(&s, "nothing after ':'");
      if ((rc = each_arg(&s, buf + 12, model_arg, &p)))
        return rc;
    }
    return ppi_model_transformer(ctx, &p, spec, out);
  }
  {
    static const char *const kinds[] = {"resnet", "bert", "swin", "fpn"};
    int i;
    for (i = 0; i < 4; i++) {
      size_t kl = strlen(kinds[i]);
      if (strncmp(spec, kinds[i], kl) == 0 &&
          (spec[kl] == ':' || spec[kl] == '\0')) {
        struct spec_run s;
        struct ppi_opnet_params p;
        s.ctx = ctx;
        s.spec = spec;
        s.what = "model spec";
        if (strlen(spec) >= sizeof buf)
          return sfail(&s, "longer than %zu bytes", sizeof buf - 1);
        strcpy(buf, spec);
        ppi_opnet_params_init(&p, kinds[i]);
        if (spec[kl] == ':') {
          if (!spec[kl + 1])
            return sfail(&s, "nothing after ':'");
          if ((rc = each_arg(&s, buf + kl + 1, opnet_arg, &p)))
            return rc;
        }
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

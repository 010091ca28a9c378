/* SPDX-License-Identifier: MIT */
/*
** An NCCL topology dump (NCCL_TOPO_DUMP_FILE; docs/ECOSYSTEM.md 2.2) as
** a cluster.  XML is read with expat, which reports line and column.
**
** The dump is a tree: <system> holds <cpu> elements, which hold nested
** <pci> bridges and devices; a <pci> holding a <gpu> is that GPU, and a
** <gpu> lists its <nvlink target=BUSID count=N tclass=.../>.  The tree
** becomes a link graph, with NCCL's own bandwidth model
** (src/graph/topo.h @5067397c) for the figures a dump leaves out:
**   - a <pci> to its parent: link_width x lane speed / 80 GB/s (8 GT/s
**     x16 = 12, 16 GT/s x16 = 24), 12 when the attributes are missing;
**   - CPUs to each other: the socket interconnect of their arch/vendor
**     (Intel before Skylake 6, Skylake and later 10, AMD 16, POWER 32,
**     ARM 6), or sys_gbps;
**   - NVLink: count x the per-link figure of the GPU's sm (60: 18, 70
**     and 80: 20, 86: 12, 90: 20.6, 100: 40.1), or nvlink_gbps.  A link
**     to a GPU joins the two; links to NVSwitches (tclass 0x068000) all
**     join one switch vertex, as NCCL merges them; a link listed from
**     both ends is one link.
** A GPU pair's bandwidth is the bottleneck of its widest path whose
** inner vertices are CPUs, PCI bridges and switches, not GPUs: a direct
** NVLink, an NVSwitch, else the PCIe tree and the CPUs (GPUs relaying
** for others, NCCL's NVB paths, share the relay's links, which a
** pairwise figure cannot express).  A max-min Floyd-Warshall over the V
** vertices: O(V^3), V is tens.
** GPUs are numbered by their dev attribute; the type is gpu=, else
** named from sm (70 V100, 75 T4, 80 A100-80, 86 RTX-3090, 90 H100).
*/
#include "plan/plan.h"

#include <errno.h>
#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum vkind { V_CPU, V_PCI }; /* the merged NVSwitch is vertex nv, added later */

struct vert {
  int kind;
  char busid[64];
  int32_t parent;  /* -1: none */
  double up_gbps;  /* link to the parent */
  double qpi_gbps; /* CPUs: socket interconnect */
  int32_t gpu_dev; /* a PCI device holding a GPU: its dev, else -1 */
  int32_t sm;
  long line;
};

struct nvl {
  int32_t from; /* vertex of the GPU */
  char target[64];
  int32_t count;
  bool to_switch;
  long line;
};

struct xrun {
  pp_ctx *ctx;
  const char *src;
  XML_Parser xp;
  struct ppi_vec verts; /* struct vert */
  struct ppi_vec links; /* struct nvl */
  int32_t stack[PPI_NCCL_MAX_DEPTH];
  int depth;       /* open elements */
  int32_t cur;     /* innermost cpu/pci vertex, -1 */
  int32_t cur_gpu; /* vertex of the open <gpu>, -1 */
  bool seen_system;
  pp_status rc;
};

/* expat's memory hooks take no user data: the allocator of the parse
** running on this thread is kept here (threads share nothing). */
static _Thread_local struct ppi_alloc *xml_alloc;

static void *x_malloc(size_t n)
{
  return ppi_hdr_alloc(*xml_alloc, n);
}
static void *x_realloc(void *p, size_t n)
{
  return ppi_hdr_realloc(*xml_alloc, p, n);
}
static void x_free(void *p)
{
  ppi_hdr_free(*xml_alloc, p);
}

static void xfail(struct xrun *r, pp_status rc, const char *fmt, ...)
    PP_PRINTF(3, 4);
static void xfail(struct xrun *r, pp_status rc, const char *fmt, ...)
{
  va_list ap;
  if (r->rc)
    return;
  va_start(ap, fmt);
  r->rc =
      ppi_vfail_at(r->ctx, rc, r->src, (long)XML_GetCurrentLineNumber(r->xp),
                   (long)XML_GetCurrentColumnNumber(r->xp) + 1, fmt, ap);
  va_end(ap);
  XML_StopParser(r->xp, XML_FALSE);
}

static const char *att(const char **a, const char *name)
{
  for (; a[0]; a += 2)
    if (!strcmp(a[0], name))
      return a[1];
  return NULL;
}

/* An integer attribute in [lo, hi]; dv when absent. */
static bool att_int(struct xrun *r, const char **a, const char *name, long dv,
                    long lo, long hi, long *out)
{
  const char *v = att(a, name);
  char *end;
  long x;
  if (!v) {
    *out = dv;
    return true;
  }
  errno = 0;
  x = strtol(v, &end, 0);
  if (end == v || *end || errno || x < lo || x > hi) {
    xfail(r, PP_EINPUT, "attribute %s='%s' is not an integer from %ld to %ld",
          name, v, lo, hi);
    return false;
  }
  *out = x;
  return true;
}

static int32_t add_vert(struct xrun *r, int kind, const char *busid)
{
  struct vert v;
  if (r->verts.n >= PPI_NCCL_MAX_VERTICES) {
    xfail(r, PP_ELIMIT, "more than %d CPUs, PCI devices and switches",
          PPI_NCCL_MAX_VERTICES);
    return -1;
  }
  memset(&v, 0, sizeof v);
  v.kind = kind;
  v.parent = r->cur;
  v.gpu_dev = -1;
  v.line = (long)XML_GetCurrentLineNumber(r->xp);
  if (busid)
    snprintf(v.busid, sizeof v.busid, "%s", busid);
  if (ppi_vec_push(r->ctx, &r->verts, &v)) {
    r->rc = r->ctx->err;
    XML_StopParser(r->xp, XML_FALSE);
    return -1;
  }
  return (int32_t)r->verts.n - 1;
}

#define VX(r, i) PPI_VEC_AT(&(r)->verts, struct vert, i)

/* NCCL's socket interconnect figures (NVIDIA/nccl:src/graph/topo.h). */
static double qpi(const char *arch, const char *vendor, long model)
{
  if (arch && !strcmp(arch, "ppc64"))
    return 32;
  if (arch && !strcmp(arch, "arm64"))
    return 6;
  if (vendor && !strcmp(vendor, "AuthenticAMD"))
    return 16;
  return model >= 0x55 ? 10 : 6; /* Skylake-SP is model 0x55 */
}

/* A PCI link without link_speed, or without a width: Gen3 x16, 12 GB/s
** as NCCL counts it (docs/ECOSYSTEM.md 2.2). */
#define PCI_DEFAULT_GBPS 12.0

static double pci_gbps(struct xrun *r, const char **a)
{
  const char *sp = att(a, "link_speed");
  long width;
  double gts, lane;
  char *end;
  if (!att_int(r, a, "link_width", 16, 0, 64, &width))
    return 0;
  if (!sp)
    return PCI_DEFAULT_GBPS;
  gts = strtod(sp, &end);
  if (end == sp || !isfinite(gts) || gts < 0) {
    xfail(r, PP_EINPUT, "link_speed '%s' is not a speed in GT/s", sp);
    return 0;
  }
  /* NCCL's per-lane table, in units of 100 Mb/s */
  lane = gts >= 64   ? 480
         : gts >= 32 ? 240
         : gts >= 16 ? 120
         : gts >= 8  ? 60
         : gts >= 5  ? 30
                     : 15;
  return width > 0 ? (double)width * lane / 80.0 : PCI_DEFAULT_GBPS;
}

static void XMLCALL on_start(void *ud, const char *el, const char **a)
{
  struct xrun *r = ud;
  int32_t v = -2; /* -2: not a vertex */
  if (r->rc)
    return;
  if (r->depth >= PPI_NCCL_MAX_DEPTH) {
    xfail(r, PP_ELIMIT, "elements nested deeper than %d", PPI_NCCL_MAX_DEPTH);
    return;
  }
  if (r->depth == 0) {
    if (strcmp(el, "system")) {
      xfail(r, PP_EINPUT,
            "the root element is <%s>, not <system>: not an NCCL topology", el);
      return;
    }
    r->seen_system = true;
  } else if (!strcmp(el, "cpu")) {
    long model;
    if (!att_int(r, a, "modelid", 0, 0, 1L << 20, &model))
      return;
    if ((v = add_vert(r, V_CPU, NULL)) < 0)
      return;
    VX(r, v).parent = -1;
    VX(r, v).qpi_gbps = qpi(att(a, "arch"), att(a, "vendor"), model);
  } else if (!strcmp(el, "pci")) {
    const char *bus = att(a, "busid");
    double bw;
    if (!bus || !bus[0] || strlen(bus) >= 64) {
      xfail(r, PP_EINPUT, "<pci> without a busid");
      return;
    }
    if (r->cur < 0) {
      xfail(r, PP_EINPUT, "<pci busid='%s'> outside any <cpu>", bus);
      return;
    }
    bw = pci_gbps(r, a);
    if (r->rc || (v = add_vert(r, V_PCI, bus)) < 0)
      return;
    VX(r, v).up_gbps = bw;
  } else if (!strcmp(el, "gpu")) {
    long dev, sm;
    if (r->cur < 0 || VX(r, r->cur).kind != V_PCI) {
      xfail(r, PP_EINPUT, "<gpu> outside a <pci> device");
      return;
    }
    if (VX(r, r->cur).gpu_dev >= 0) {
      xfail(r, PP_EINPUT, "two <gpu> in <pci busid='%s'>", VX(r, r->cur).busid);
      return;
    }
    if (!att(a, "dev")) {
      xfail(r, PP_EINPUT, "<gpu> without a dev attribute");
      return;
    }
    if (!att_int(r, a, "dev", -1, 0, PP_MAX_DEVICES - 1, &dev) ||
        !att_int(r, a, "sm", 0, 0, 10000, &sm))
      return;
    VX(r, r->cur).gpu_dev = (int32_t)dev;
    VX(r, r->cur).sm = (int32_t)sm;
    r->cur_gpu = r->cur;
  } else if (!strcmp(el, "nvlink")) {
    struct nvl l;
    const char *t = att(a, "target"), *tc = att(a, "tclass");
    long count;
    if (r->cur_gpu < 0) {
      xfail(r, PP_EINPUT, "<nvlink> outside a <gpu>");
      return;
    }
    if (!t || !t[0] || strlen(t) >= 64) {
      xfail(r, PP_EINPUT, "<nvlink> without a target");
      return;
    }
    if (!att(a, "count")) {
      xfail(r, PP_EINPUT, "<nvlink target='%s'> without a count", t);
      return;
    }
    if (!att_int(r, a, "count", 1, 1, 64, &count))
      return;
    memset(&l, 0, sizeof l);
    l.from = r->cur_gpu;
    snprintf(l.target, sizeof l.target, "%s", t);
    l.count = (int32_t)count;
    l.to_switch = tc && strtol(tc, NULL, 16) == 0x068000;
    l.line = (long)XML_GetCurrentLineNumber(r->xp);
    if (ppi_vec_push(r->ctx, &r->links, &l)) {
      r->rc = r->ctx->err;
      XML_StopParser(r->xp, XML_FALSE);
      return;
    }
  }
  r->stack[r->depth++] = v;
  if (v >= 0)
    r->cur = v;
}

static void XMLCALL on_end(void *ud, const char *el)
{
  struct xrun *r = ud;
  int32_t v;
  if (r->rc || r->depth == 0)
    return;
  v = r->stack[--r->depth];
  if (!strcmp(el, "gpu"))
    r->cur_gpu = -1;
  if (v >= 0) { /* back to the enclosing vertex */
    int k;
    r->cur = -1;
    for (k = r->depth - 1; k >= 0; k--)
      if (r->stack[k] >= 0) {
        r->cur = r->stack[k];
        break;
      }
  }
}

/* NCCL's NVLink bandwidth per link by the GPU's sm, GB/s
** (NVIDIA/nccl:src/graph/topo.h; docs/ECOSYSTEM.md 2.2). */
static double nvlink_per_link(int32_t sm)
{
  return sm >= 100  ? 40.1
         : sm >= 90 ? 20.6
         : sm == 86 ? 12.0
         : sm >= 70 ? 20.0
         : sm >= 60 ? 18.0
                    : 20.0;
}

static const char *gpu_of_sm(int32_t sm)
{
  switch (sm) {
  case 70: return "V100";
  case 75: return "T4";
  case 80: return "A100-80";
  case 86: return "RTX-3090";
  case 90: return "H100";
  default: return NULL;
  }
}

struct gref {
  int32_t dev, vert;
};
static int cmp_gref(const void *x, const void *y)
{
  const struct gref *a = x, *b = y;
  return (a->dev > b->dev) - (a->dev < b->dev);
}

/* The widest-path matrix over the graph, then the GPUs' block of it. */
static pp_status to_cluster(struct xrun *r, const pp_topo_params *p,
                            pp_cluster **out)
{
  pp_ctx *ctx = r->ctx;
  int32_t nv = (int32_t)r->verts.n, ng = 0, i, j, k, sw = -1;
  double *w = NULL, *bw = NULL, sys = p->sys_gbps;
  struct gref *gs = NULL;
  size_t cells;
  const char *gpu = p->gpu;
  pp_status rc = PP_OK;

  for (i = 0; i < nv; i++)
    if (VX(r, i).gpu_dev >= 0)
      ng++;
  if (ng == 0)
    return ppi_fail_at(ctx, PP_EINPUT, r->src, 0, 0,
                       "no <gpu> in the topology");
  /* one more vertex for the merged NVSwitches */
  for (i = 0; i < (int32_t)r->links.n; i++)
    if (PPI_VEC_AT(&r->links, struct nvl, i).to_switch)
      sw = nv;
  cells = (size_t)(nv + 1) * (size_t)(nv + 1);
  w = ppi_calloc(ctx, cells, sizeof *w);
  gs = ppi_calloc(ctx, (size_t)ng, sizeof *gs);
  bw = ppi_calloc(ctx, (size_t)ng * (size_t)ng, sizeof *bw);
  if (!w || !gs || !bw) {
    rc = ctx->err;
    goto done;
  }
#define W(a, b) w[(size_t)(a) * (size_t)(nv + 1) + (size_t)(b)]
#define JOIN(a, b, x)                                                          \
  do {                                                                         \
    if ((x) > W(a, b))                                                         \
      W(a, b) = W(b, a) = (x);                                                 \
  } while (0)
  for (i = 0, k = 0; i < nv; i++) {
    const struct vert *v = &VX(r, i);
    if (v->kind == V_PCI && v->parent >= 0)
      JOIN(i, v->parent, v->up_gbps);
    if (v->kind == V_CPU)
      for (j = 0; j < i; j++)
        if (VX(r, j).kind == V_CPU) {
          double q = sys > 0                           ? sys
                     : v->qpi_gbps < VX(r, j).qpi_gbps ? v->qpi_gbps
                                                       : VX(r, j).qpi_gbps;
          JOIN(i, j, q);
        }
    if (v->gpu_dev >= 0) {
      gs[k].dev = v->gpu_dev;
      gs[k++].vert = i;
    }
  }
  qsort(gs, (size_t)ng, sizeof *gs, cmp_gref);
  for (i = 1; i < ng; i++)
    if (gs[i].dev == gs[i - 1].dev) {
      rc = ppi_fail_at(ctx, PP_EINPUT, r->src, VX(r, gs[i].vert).line, 0,
                       "two GPUs with dev=%d (lines %ld and %ld)",
                       (int)gs[i].dev, VX(r, gs[i - 1].vert).line,
                       VX(r, gs[i].vert).line);
      goto done;
    }
  for (i = 0; i < (int32_t)r->links.n; i++) {
    const struct nvl *l = &PPI_VEC_AT(&r->links, struct nvl, i);
    double per = p->nvlink_gbps > 0 ? p->nvlink_gbps
                                    : nvlink_per_link(VX(r, l->from).sm);
    int32_t t = -1;
    if (l->to_switch)
      t = sw;
    else
      for (j = 0; j < nv; j++)
        if (VX(r, j).kind == V_PCI && !strcmp(VX(r, j).busid, l->target)) {
          t = j;
          break;
        }
    if (t < 0) {
      rc = ppi_fail_at(ctx, PP_EINPUT, r->src, l->line, 0,
                       "<nvlink target='%s'>: no PCI device has that busid "
                       "(and its tclass is not an NVSwitch's, 0x068000)",
                       l->target);
      goto done;
    }
    if (t == l->from) {
      rc = ppi_fail_at(ctx, PP_EINPUT, r->src, l->line, 0,
                       "<nvlink target='%s'> links the GPU to itself",
                       l->target);
      goto done;
    }
    JOIN(l->from, t, per * l->count);
  }
  /* max-min closure: W(a,b) = the widest path's bottleneck */
  for (k = 0; k <= nv; k++) {
    if (k < nv && VX(r, k).gpu_dev >= 0)
      continue; /* GPUs do not relay */
    for (i = 0; i <= nv; i++) {
      double ik = W(i, k);
      if (ik <= 0 || i == k)
        continue;
      for (j = 0; j <= nv; j++) {
        double x = W(k, j) < ik ? W(k, j) : ik;
        if (j != i && x > W(i, j))
          W(i, j) = x;
      }
    }
  }
  for (i = 0; i < ng; i++)
    for (j = 0; j < ng; j++) {
      double x = i == j ? 0 : W(gs[i].vert, gs[j].vert);
      if (i != j && x <= 0) {
        rc = ppi_fail_at(ctx, PP_EINPUT, r->src, 0, 0,
                         "GPU dev=%d and GPU dev=%d are not connected (the "
                         "CPUs, PCI tree and NVLinks join them nowhere)",
                         (int)gs[i].dev, (int)gs[j].dev);
        goto done;
      }
      bw[(size_t)i * ng + j] = x;
    }
#undef JOIN
#undef W
  if (!gpu) {
    gpu = gpu_of_sm(VX(r, gs[0].vert).sm);
    if (!gpu) {
      rc = ppi_fail_at(ctx, PP_EINPUT, r->src, VX(r, gs[0].vert).line, 0,
                       "GPU sm=%d is not a known type: say which with gpu=",
                       (int)VX(r, gs[0].vert).sm);
      goto done;
    }
  }
  rc = ppi_cluster_box(ctx, "nccl-topology", r->src, gpu, ng, bw, p, out);
done:
  if (w)
    ppi_free(ctx, w, cells * sizeof *w);
  if (gs)
    ppi_free(ctx, gs, (size_t)ng * sizeof *gs);
  if (bw)
    ppi_free(ctx, bw, (size_t)ng * (size_t)ng * sizeof *bw);
  return rc;
}

pp_status pp_cluster_read_nccl_xml(pp_ctx *ctx, const char *text, size_t len,
                                   const char *source, const pp_topo_params *p,
                                   pp_cluster **out)
{
  struct xrun r;
  struct ppi_alloc al;
  XML_Memory_Handling_Suite ms;
  pp_topo_params defaults;
  pp_status rc;

  if (!ctx || (!text && len) || !out)
    return PP_EINVAL;
  *out = NULL;
  if (!p) {
    pp_topo_params_init(&defaults);
    p = &defaults;
  }
  if (!source)
    source = "<nccl-xml>";
  if (len > (size_t)INT32_MAX)
    return ppi_fail_at(ctx, PP_ELIMIT, source, 0, 0, "larger than 2 GiB");
  al = ppi_ctx_alloc(ctx);
  xml_alloc = &al;
  ms.malloc_fcn = x_malloc;
  ms.realloc_fcn = x_realloc;
  ms.free_fcn = x_free;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.src = source;
  r.cur = -1;
  r.cur_gpu = -1;
  ppi_vec_init(&r.verts, sizeof(struct vert));
  ppi_vec_init(&r.links, sizeof(struct nvl));
  r.xp = XML_ParserCreate_MM(NULL, &ms, NULL);
  if (!r.xp) {
    xml_alloc = NULL;
    return ppi_nomem(ctx);
  }
  XML_SetUserData(r.xp, &r);
  XML_SetElementHandler(r.xp, on_start, on_end);
  if (XML_Parse(r.xp, text ? text : "", (int)len, XML_TRUE) ==
          XML_STATUS_ERROR &&
      !r.rc) {
    enum XML_Error e = XML_GetErrorCode(r.xp);
    r.rc = e == XML_ERROR_NO_MEMORY
               ? ppi_nomem(ctx)
               : ppi_fail_at(ctx, PP_EPARSE, source,
                             (long)XML_GetCurrentLineNumber(r.xp),
                             (long)XML_GetCurrentColumnNumber(r.xp) + 1, "%s",
                             XML_ErrorString(e));
  }
  XML_ParserFree(r.xp);
  xml_alloc = NULL;
  rc = r.rc;
  if (!rc && !r.seen_system)
    rc = ppi_fail_at(ctx, PP_EPARSE, source, 0, 0, "no <system> element");
  if (!rc)
    rc = to_cluster(&r, p, out);
  ppi_vec_free(ctx, &r.verts);
  ppi_vec_free(ctx, &r.links);
  return rc;
}

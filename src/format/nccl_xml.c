/* SPDX-License-Identifier: MIT */
/*
** An NCCL or RCCL topology dump (NCCL_TOPO_DUMP_FILE; docs/ECOSYSTEM.md
** 2.2) as a cluster.  XML is read with expat, which reports line and
** column.
**
** The dump is a tree: <system> holds <cpu> elements, which hold nested
** <pci> bridges and devices; a <pci> holding a <gpu> is that GPU, one
** holding a <nic> is a NIC whose <net> ports give their speed in Mb/s.
** A <gpu> lists its <nvlink target=BUSID count=N tclass=...> (NVIDIA) or
** <xgmi ...> (AMD: RCCL writes gcn="gfx942" on the <gpu>).  The tree
** becomes a link graph, with NCCL's own bandwidth model
** (src/graph/topo.h @5067397c, src/graph/topo.cc @5067397c) for what a
** dump leaves out:
**   - a <pci> to its parent: link_width (0 read as 16) x the lane speed
**     of link_speed / 80 GB/s (8 GT/s x16 = 12, 16 GT/s x16 = 24;
**     ncclTopoAddPci, src/graph/topo.cc @5067397c lines 649-657), 12
**     when the attributes are missing;
**   - CPUs to each other: the socket interconnect of their arch, vendor
**     and model (ncclTopoGetInterCpuBw, src/graph/topo.cc @5067397c
**     lines 60-84: Intel before Skylake 6, Skylake 10, Sapphire Rapids
**     22, Emerald Rapids 40, AMD 16, POWER 32, ARM 6), or sys_gbps;
**   - NVLink: count x the per-link figure of the GPU's sm (60: 18, 70
**     and 80: 20, 86: 12, 90: 20.6, 100: 40.1; src/graph/topo.h
**     @5067397c lines 19-24), or nvlink_gbps; xGMI: count x the figure
**     of the gcn (gfx90a 36, gfx94x 48, else 24; ncclTopoXGMISpeed,
**     src/graph/topo.h @0cbce2a7 lines 257-265 of ROCm/rccl).
** The target class decides a link's far end as NCCL's kvConvertToInt
** does, by prefix (src/graph/topo.cc @5067397c lines 538-545, 828-866):
** 0x03... (and RCCL's 0x120000) a GPU, 0x068001 the GPU's own CPU
** (POWER's NVLink bridge), anything else an NVSwitch.  Every NVSwitch
** link of every GPU goes to one merged switch vertex and the links
** between one pair add up: ncclTopoConnectNodes sums the bandwidth of a
** link it sees again (src/graph/topo.cc @5067397c lines 168-181), so a
** DGX A100 GPU's six 2-link entries (one per NVSwitch) are 12 x 20 =
** 240 GB/s to the switch, a DGX H100 GPU's 5+4+4+5 are 18 x 20.6 =
** 370.8.  Links between two GPUs are directed in NCCL (each GPU adds
** its own); a link listed from both ends is one link, so the pair gets
** the larger direction.  A link to a GPU the dump does not hold is
** skipped, as NCCL skips it.
** A GPU pair's bandwidth is the bottleneck of its widest path whose
** inner vertices are CPUs, PCI bridges and switches, not GPUs: a direct
** NVLink, an NVSwitch, else the PCIe tree and the CPUs (GPUs relaying
** for others, NCCL's NVB paths, share the relay's links, which a
** pairwise figure cannot express).  A max-min Floyd-Warshall over the V
** vertices: O(V^3), V is tens.
** Between boxes each GPU uses its nearest NICs as NCCL does
** (ncclTopoGetLocal, src/graph/topo.cc @5067397c line 1943: the NICs of
** the best path, then of the best bandwidth): the nearest are those
** fewest PCI hops away (another socket counts as farther than any),
** then of the widest path; a <net>'s bandwidth is speed / 8000 GB/s
** (ncclTopoAddNet, src/graph/topo.cc @5067397c lines 416-418; a speed
** missing or <= 0 is 10000 Mb/s there; nic= overrides every speed),
** shared among the GPUs that use it; a GPU's sum is capped by its widest
** path to them.  The box's inter-node figure is the least sum a GPU gets
** when every GPU sends at once.
** GPUs are numbered by their dev attribute; the type is gpu=, else named
** from the gcn (gfx90a MI250X, gfx94x MI300X) or the sm (70 V100, 75 T4,
** 80 A100-80, 86 RTX-3090, 90 H100), and the cluster's source says so.
*/
#include "plan/plan.h"

#include <ctype.h>
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
  int32_t sm;      /* NVIDIA: compute capability; RCCL: compute units */
  char gcn[16];    /* AMD: the gfx name, "" for NVIDIA */
  long line;
};

enum tkind { T_ANY, T_GPU, T_CPU, T_NVS }; /* T_ANY: no tclass */

struct nvl {
  int32_t from; /* vertex of the GPU */
  char target[64];
  int32_t count;
  int tkind;
  long line;
};

struct net {
  int32_t vert; /* the NIC's vertex: its <pci>, or the <cpu> it hangs on */
  double gbps;
  char name[32];
};

struct xrun {
  pp_ctx *ctx;
  const char *src;
  XML_Parser xp;
  struct ppi_vec verts; /* struct vert */
  struct ppi_vec links; /* struct nvl */
  struct ppi_vec nets;  /* struct net */
  int32_t stack[PPI_NCCL_MAX_DEPTH];
  int depth;       /* open elements */
  int32_t cur;     /* innermost cpu/pci vertex, -1 */
  int32_t cur_gpu; /* vertex of the open <gpu>, -1 */
  int32_t cur_nic; /* vertex of the open <nic>, -1 */
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

static bool push(struct xrun *r, struct ppi_vec *v, const void *x)
{
  if (ppi_vec_push(r->ctx, v, x)) {
    r->rc = r->ctx->err;
    XML_StopParser(r->xp, XML_FALSE);
    return false;
  }
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
  if (!push(r, &r->verts, &v))
    return -1;
  return (int32_t)r->verts.n - 1;
}

#define VX(r, i) PPI_VEC_AT(&(r)->verts, struct vert, i)

/* NCCL's socket interconnect figures (ncclTopoGetInterCpuBw and the
** models of ncclTopoAddCpu, src/graph/topo.cc @5067397c). */
static double qpi(const char *arch, const char *vendor, long family, long model)
{
  if (arch && !strcmp(arch, "ppc64"))
    return 32;
  if (arch && !strcmp(arch, "arm64"))
    return 6;
  if (vendor && !strcmp(vendor, "AuthenticAMD"))
    return 16;
  if (vendor &&
      (!strcmp(vendor, "CentaurHauls") || !strcmp(vendor, "  Shanghai  ")))
    return family == 7 && model == 0x5B ? 9 : 6; /* Zhaoxin */
  if (family != 6 && family != 0)
    return 6;
  return model >= 0xCF   ? 40 /* Emerald Rapids */
         : model >= 0x8F ? 22 /* Sapphire Rapids */
         : model >= 0x55 ? 10 /* Skylake-SP */
                         : 6;
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
  if (width == 0)
    width = 16; /* NCCL: "speed was not indicated in /sys" */
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
  return (double)width * lane / 80.0;
}

/* The far end of an NVLink or xGMI link by its tclass, as NCCL's
** kvConvertToInt matches prefixes (see the top of the file). */
static int target_kind(const char *tc)
{
  if (!tc)
    return T_ANY;
  if (!strncmp(tc, "0x03", 4) || !strncmp(tc, "0x120000", 8))
    return T_GPU;
  if (!strncmp(tc, "0x068001", 8))
    return T_CPU;
  return T_NVS;
}

static void on_link(struct xrun *r, const char *el, const char **a)
{
  struct nvl l;
  const char *t = att(a, "target");
  long count;
  if (r->cur_gpu < 0) {
    xfail(r, PP_EINPUT, "<%s> outside a <gpu>", el);
    return;
  }
  if (!t || !t[0] || strlen(t) >= 64) {
    xfail(r, PP_EINPUT, "<%s> without a target", el);
    return;
  }
  if (!att(a, "count")) {
    xfail(r, PP_EINPUT, "<%s target='%s'> without a count", el, t);
    return;
  }
  if (!att_int(r, a, "count", 1, 1, 64, &count))
    return;
  memset(&l, 0, sizeof l);
  l.from = r->cur_gpu;
  snprintf(l.target, sizeof l.target, "%s", t);
  l.count = (int32_t)count;
  l.tkind = target_kind(att(a, "tclass"));
  l.line = (long)XML_GetCurrentLineNumber(r->xp);
  push(r, &r->links, &l);
}

/* A <net> port of the open <nic> (ncclTopoAddNic, ncclTopoAddNet,
** src/graph/topo.cc @5067397c): one without dev, or with net="0", is no
** network device. */
static void on_net(struct xrun *r, const char **a)
{
  struct net n;
  long speed, isnet;
  const char *name = att(a, "name");
  if (r->cur_nic < 0) {
    xfail(r, PP_EINPUT, "<net> outside a <nic>");
    return;
  }
  if (!att_int(r, a, "speed", 0, -(1L << 30), 1L << 30, &speed) ||
      !att_int(r, a, "net", 1, 0, 1, &isnet))
    return;
  if (!att(a, "dev") || !isnet)
    return;
  memset(&n, 0, sizeof n);
  n.vert = r->cur_nic;
  n.gbps = (speed > 0 ? (double)speed : 10000.0) / 8000.0;
  snprintf(n.name, sizeof n.name, "%s", name ? name : "?");
  push(r, &r->nets, &n);
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
            "the root element is <%s>, not <system>: not an NCCL or RCCL "
            "topology (NCCL_TOPO_DUMP_FILE), an unsupported XML (parplan "
            "reads cluster JSON, 'nvidia-smi topo -m' output, NCCL or RCCL "
            "topology XML and 'rocm-smi --showtopo' output)",
            el);
      return;
    }
    r->seen_system = true;
  } else if (!strcmp(el, "cpu")) {
    long model, family;
    if (!att_int(r, a, "modelid", 0, 0, 1L << 20, &model) ||
        !att_int(r, a, "familyid", 0, 0, 1L << 20, &family))
      return;
    if ((v = add_vert(r, V_CPU, NULL)) < 0)
      return;
    VX(r, v).parent = -1;
    VX(r, v).qpi_gbps = qpi(att(a, "arch"), att(a, "vendor"), family, model);
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
    const char *gcn = att(a, "gcn");
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
    if (gcn && (!gcn[0] || strlen(gcn) >= sizeof VX(r, 0).gcn)) {
      xfail(r, PP_EINPUT, "<gpu gcn='%s'> is not a gfx name", gcn);
      return;
    }
    VX(r, r->cur).gpu_dev = (int32_t)dev;
    VX(r, r->cur).sm = (int32_t)sm;
    if (gcn) /* RCCL's older numeric names (src/misc/archinfo.cc @0cbce2a7) */
      snprintf(VX(r, r->cur).gcn, sizeof VX(r, 0).gcn, "%s%s",
               isdigit((unsigned char)gcn[0]) ? "gfx" : "",
               !strcmp(gcn, "910") ? "90a" : gcn);
    r->cur_gpu = r->cur;
  } else if (!strcmp(el, "nvlink") || !strcmp(el, "xgmi")) {
    on_link(r, el, a);
  } else if (!strcmp(el, "nic")) {
    if (r->cur < 0) {
      xfail(r, PP_EINPUT, "<nic> outside any <cpu>");
      return;
    }
    r->cur_nic = r->cur;
  } else if (!strcmp(el, "net")) {
    on_net(r, a);
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
  if (!strcmp(el, "nic"))
    r->cur_nic = -1;
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

/* Bus ids compare without case: NCCL writes NVML's upper-case ids in
** lower case (src/graph/xml.cc @5067397c line 984), hand edits may not. */
static bool same_busid(const char *a, const char *b)
{
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
      return false;
  return *a == *b;
}

/* The bandwidth of one link of a GPU: NCCL's NVLink figure by sm, or
** RCCL's xGMI figure by gcn (see the top of the file). */
static double link_gbps(const struct vert *g)
{
  if (g->gcn[0])
    return !strncmp(g->gcn, "gfx90a", 6)  ? 36.0
           : !strncmp(g->gcn, "gfx94", 5) ? 48.0
                                          : 24.0;
  return g->sm >= 100  ? 40.1
         : g->sm >= 90 ? 20.6
         : g->sm == 86 ? 12.0
         : g->sm >= 80 ? 20.0
         : g->sm >= 70 ? 20.0
         : g->sm >= 60 ? 18.0
                       : 20.0;
}

/* The catalog name of a GPU the dump describes, or NULL. */
static const char *gpu_of(const struct vert *g)
{
  if (g->gcn[0]) {
    if (!strncmp(g->gcn, "gfx90a", 6))
      return "MI250X";
    /* gfx942 is also the MI300A (228 compute units), not in the catalog */
    if (!strncmp(g->gcn, "gfx94", 5) && g->sm != 228)
      return "MI300X";
    return NULL;
  }
  switch (g->sm) {
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

/* PCI hops between two vertices of the tree; another socket is farther
** than any hop count (NCCL's SYS paths come after PHB). */
static int32_t tree_dist(const struct xrun *r, int32_t a, int32_t b)
{
  int32_t da = 0, db = 0, x, y, d = 0;
  for (x = a; VX(r, x).parent >= 0; x = VX(r, x).parent)
    da++;
  for (y = b; VX(r, y).parent >= 0; y = VX(r, y).parent)
    db++;
  if (x != y)
    return 1 << 20;
  for (x = a, y = b; da > db; da--, d++)
    x = VX(r, x).parent;
  for (; db > da; db--, d++)
    y = VX(r, y).parent;
  for (; x != y; d += 2)
    x = VX(r, x).parent, y = VX(r, y).parent;
  return d;
}

/* The inter-node bandwidth per GPU that the NICs give (see the top of
** the file), into notes; w is the closed widest-path matrix. */
static double gbps_of(const struct net *x, const pp_topo_params *p)
{
  return p->nic_gbits > 0 ? p->nic_gbits / 8 : x->gbps;
}

static pp_status nic_share(struct xrun *r, const struct gref *gs, int32_t ng,
                           const double *w, int32_t nv, const pp_topo_params *p,
                           struct ppi_box_notes *notes)
{
  pp_ctx *ctx = r->ctx;
  int32_t nn = (int32_t)r->nets.n, g, n;
  int32_t *users = NULL, *best = NULL;
  double *pb = NULL, share = INFINITY;
  size_t cells = (size_t)ng * (size_t)(nn ? nn : 1);
  pp_status rc = PP_OK;
  if (nn == 0)
    return PP_OK;
  users = ppi_calloc(ctx, (size_t)nn, sizeof *users);
  best = ppi_calloc(ctx, cells, sizeof *best);
  pb = ppi_calloc(ctx, cells, sizeof *pb);
  if (!users || !best || !pb) {
    rc = ctx->err;
    goto done;
  }
  for (g = 0; g < ng; g++) {
    int32_t dmin = INT32_MAX;
    double bmax = 0;
    for (n = 0; n < nn; n++) {
      const struct net *x = &PPI_VEC_AT(&r->nets, struct net, n);
      double c = w[(size_t)gs[g].vert * (size_t)(nv + 1) + (size_t)x->vert];
      pb[(size_t)g * nn + n] = c < gbps_of(x, p) ? c : gbps_of(x, p);
      best[(size_t)g * nn + n] = tree_dist(r, gs[g].vert, x->vert);
      if (best[(size_t)g * nn + n] < dmin)
        dmin = best[(size_t)g * nn + n];
    }
    for (n = 0; n < nn; n++)
      if (best[(size_t)g * nn + n] == dmin && pb[(size_t)g * nn + n] > bmax)
        bmax = pb[(size_t)g * nn + n];
    for (n = 0; n < nn; n++) {
      bool use = best[(size_t)g * nn + n] == dmin && bmax > 0 &&
                 pb[(size_t)g * nn + n] == bmax;
      best[(size_t)g * nn + n] = use;
      users[n] += use;
    }
  }
  /* a GPU gets its part of each NIC it uses, at most what its widest
  ** path to them carries (its own PCIe link, typically) */
  for (g = 0; g < ng; g++) {
    double s = 0, cap = 0;
    for (n = 0; n < nn; n++)
      if (best[(size_t)g * nn + n]) {
        const struct net *x = &PPI_VEC_AT(&r->nets, struct net, n);
        s += gbps_of(x, p) / users[n];
        if (pb[(size_t)g * nn + n] > cap)
          cap = pb[(size_t)g * nn + n];
      }
    if (cap < s)
      s = cap;
    if (s < share)
      share = s;
  }
  if (share > 0 && isfinite(share)) {
    const struct net *first = NULL;
    int used = 0;
    for (n = 0; n < nn; n++)
      if (users[n]) {
        used++;
        if (!first)
          first = &PPI_VEC_AT(&r->nets, struct net, n);
      }
    notes->nic_gbps = share;
    snprintf(notes->nic_why, sizeof notes->nic_why,
             "the least share a GPU gets of its nearest NICs: %d of the "
             "dump's %d <net> ports, %s first, %g Gb/s%s",
             used, (int)nn, first->name, gbps_of(first, p) * 8,
             p->nic_gbits > 0 ? " (nic=)" : "");
  }
done:
  if (users)
    ppi_free(ctx, users, (size_t)nn * sizeof *users);
  if (best)
    ppi_free(ctx, best, cells * sizeof *best);
  if (pb)
    ppi_free(ctx, pb, cells * sizeof *pb);
  return rc;
}

/* The widest-path matrix over the graph, then the GPUs' block of it. */
static pp_status to_cluster(struct xrun *r, const pp_topo_params *p,
                            pp_cluster **out)
{
  pp_ctx *ctx = r->ctx;
  int32_t nv = (int32_t)r->verts.n, ng = 0, i, j, k, sw;
  double *w = NULL, *bw = NULL, *dir = NULL, *nvs = NULL, *cpu = NULL;
  double sys = p->sys_gbps;
  int32_t *gi = NULL; /* vertex -> GPU index, -1 */
  struct gref *gs = NULL;
  struct ppi_box_notes notes;
  size_t cells;
  const char *gpu = p->gpu;
  pp_status rc = PP_OK;

  memset(&notes, 0, sizeof notes);
  for (i = 0; i < nv; i++)
    if (VX(r, i).gpu_dev >= 0)
      ng++;
  if (ng == 0)
    return ppi_fail_at(ctx, PP_EINPUT, r->src, 0, 0,
                       "no <gpu> in the topology");
  sw = nv; /* one more vertex for the merged NVSwitches */
  cells = (size_t)(nv + 1) * (size_t)(nv + 1);
  w = ppi_calloc(ctx, cells, sizeof *w);
  gs = ppi_calloc(ctx, (size_t)ng, sizeof *gs);
  bw = ppi_calloc(ctx, (size_t)ng * (size_t)ng, sizeof *bw);
  dir = ppi_calloc(ctx, (size_t)ng * (size_t)ng, sizeof *dir);
  nvs = ppi_calloc(ctx, (size_t)ng, sizeof *nvs);
  cpu = ppi_calloc(ctx, (size_t)ng, sizeof *cpu);
  gi = ppi_calloc(ctx, (size_t)nv, sizeof *gi);
  if (!w || !gs || !bw || !dir || !nvs || !cpu || !gi) {
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
    gi[i] = -1;
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
  for (i = 0; i < ng; i++) {
    gi[gs[i].vert] = i;
    if (i > 0 && gs[i].dev == gs[i - 1].dev) {
      rc = ppi_fail_at(ctx, PP_EINPUT, r->src, VX(r, gs[i].vert).line, 0,
                       "two GPUs with dev=%d (lines %ld and %ld)",
                       (int)gs[i].dev, VX(r, gs[i - 1].vert).line,
                       VX(r, gs[i].vert).line);
      goto done;
    }
  }
  /* every link adds to its GPU's total toward its far end */
  for (i = 0; i < (int32_t)r->links.n; i++) {
    const struct nvl *l = &PPI_VEC_AT(&r->links, struct nvl, i);
    const struct vert *from = &VX(r, l->from);
    double x =
        (p->nvlink_gbps > 0 ? p->nvlink_gbps : link_gbps(from)) * l->count;
    int32_t t = -1;
    if (l->tkind == T_NVS) {
      nvs[gi[l->from]] += x;
      continue;
    }
    if (l->tkind == T_CPU) {
      cpu[gi[l->from]] += x;
      continue;
    }
    for (j = 0; j < nv; j++)
      if (VX(r, j).kind == V_PCI && same_busid(VX(r, j).busid, l->target)) {
        t = j;
        break;
      }
    if (t == l->from) {
      rc = ppi_fail_at(ctx, PP_EINPUT, r->src, l->line, 0,
                       "<nvlink target='%s'> links the GPU to itself",
                       l->target);
      goto done;
    }
    if (t < 0 || gi[t] < 0) {
      if (l->tkind == T_GPU)
        continue; /* a GPU the dump leaves out: NCCL skips the link */
      rc = ppi_fail_at(ctx, PP_EINPUT, r->src, l->line, 0,
                       "<nvlink target='%s'>: no GPU has that busid (and "
                       "no tclass says an NVSwitch, 0x068000)",
                       l->target);
      goto done;
    }
    dir[(size_t)gi[l->from] * ng + gi[t]] += x;
  }
  for (i = 0; i < ng; i++) {
    int32_t root = gs[i].vert;
    while (VX(r, root).parent >= 0)
      root = VX(r, root).parent;
    if (nvs[i] > 0)
      JOIN(gs[i].vert, sw, nvs[i]);
    if (cpu[i] > 0)
      JOIN(gs[i].vert, root, cpu[i]);
    for (j = 0; j < i; j++) {
      double a = dir[(size_t)i * ng + j], b = dir[(size_t)j * ng + i];
      if (a > 0 || b > 0)
        JOIN(gs[i].vert, gs[j].vert, a > b ? a : b);
    }
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
  if ((rc = nic_share(r, gs, ng, w, nv, p, &notes)))
    goto done;
  if (!gpu) {
    const struct vert *g0 = &VX(r, gs[0].vert);
    for (i = 1; i < ng; i++) {
      const struct vert *g = &VX(r, gs[i].vert);
      if (g->sm != g0->sm || strcmp(g->gcn, g0->gcn)) {
        rc = ppi_fail_at(ctx, PP_EINPUT, r->src, g->line, 0,
                         "GPU dev=%d is not of the kind of GPU dev=%d "
                         "(%s%s sm=%d against %s%s sm=%d): say the type "
                         "with gpu=",
                         (int)gs[i].dev, (int)gs[0].dev,
                         g->gcn[0] ? "gcn=" : "", g->gcn, (int)g->sm,
                         g0->gcn[0] ? "gcn=" : "", g0->gcn, (int)g0->sm);
        goto done;
      }
    }
    gpu = gpu_of(g0);
    if (!gpu) {
      if (g0->gcn[0])
        rc = ppi_fail_at(ctx, PP_EINPUT, r->src, g0->line, 0,
                         "AMD GPU gcn=%s (%d compute units) is not a known "
                         "type: say which with gpu=",
                         g0->gcn, (int)g0->sm);
      else
        rc = ppi_fail_at(
            ctx, PP_EINPUT, r->src, g0->line, 0,
            "GPU sm=%d is not a known type: say which with gpu=", (int)g0->sm);
      goto done;
    }
    if (g0->gcn[0])
      snprintf(notes.type_why, sizeof notes.type_why,
               "GPU type %s from gcn=%s (gpu= to say another)", gpu, g0->gcn);
    else
      snprintf(notes.type_why, sizeof notes.type_why,
               "GPU type %s from sm=%d (gpu= to say another)", gpu,
               (int)g0->sm);
  }
  rc = ppi_cluster_box(ctx, "nccl-topology", r->src, gpu, ng, bw, p, &notes,
                       out);
done:
  if (w)
    ppi_free(ctx, w, cells * sizeof *w);
  if (gs)
    ppi_free(ctx, gs, (size_t)ng * sizeof *gs);
  if (bw)
    ppi_free(ctx, bw, (size_t)ng * (size_t)ng * sizeof *bw);
  if (dir)
    ppi_free(ctx, dir, (size_t)ng * (size_t)ng * sizeof *dir);
  if (nvs)
    ppi_free(ctx, nvs, (size_t)ng * sizeof *nvs);
  if (cpu)
    ppi_free(ctx, cpu, (size_t)ng * sizeof *cpu);
  if (gi)
    ppi_free(ctx, gi, (size_t)nv * sizeof *gi);
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
  r.cur_nic = -1;
  ppi_vec_init(&r.verts, sizeof(struct vert));
  ppi_vec_init(&r.links, sizeof(struct nvl));
  ppi_vec_init(&r.nets, sizeof(struct net));
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
  ppi_vec_free(ctx, &r.nets);
  return rc;
}

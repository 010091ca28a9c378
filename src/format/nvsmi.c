/* SPDX-License-Identifier: MIT */
/*
** `nvidia-smi topo -m' output as a cluster (docs/ECOSYSTEM.md 2.1;
** docs/FORMATS.md, "nvidia-smi topo -m").
**
** The header row names the columns: GPU0 .. GPUn-1, then the NICs (NIC0
** .. in newer drivers, mlx5_0 .. in older ones), then the affinity
** columns ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID"), which are
** ignored.  Each GPUi row gives one cell per column: X on the diagonal,
** NV# (a bonded set of # NVLinks: # x nvlink_gbps), PIX, PXB, PHB
** (PCIe: pcie_gbps), NODE, SYS or the older SOC (across host bridges
** or sockets: sys_gbps).  Each NIC row must have a cell per column too;
** the "NIC Legend" block (NIC0: mlx5_0) names the NICs.  Cells are split
** on tabs or runs of spaces, carriage returns included, so the
** tab-separated output of newer drivers, the space-aligned one of older
** ones and CRLF files read; lines before the header and after the table
** (a shell prompt, the command echoed) are skipped.
**
** The GPU type is not in the matrix: it is gpu= (a catalog name or a
** product name), else the GPUs named in the p->gpus file, else in the
** same text, by the output of `nvidia-smi --query-gpu=name,memory.total
** --format=csv' (with or without its header) or of `nvidia-smi -q'
** (each "Product Name" and the "Total" of its "FB Memory Usage"),
** mapped by ppi_gpu_product (gpu_names.c); without any of them it is an
** error that says how to give it.
**
** Between boxes each GPU uses its nearest NICs (the least of PIX < PXB
** < PHB < NODE < SYS in its row), as NCCL picks them: with nic= (Gb/s
** per NIC, which nvidia-smi does not print) a GPU gets the sum over
** them of nic / 8 shared among the GPUs that use each, and the box the
** least such share; the cluster's source says where the figure came
** from (cluster_box.c).  One pass over the text.
*/
#include "plan/plan.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tok {
  const char *s;
  size_t n;
  long col; /* 1-based */
};

/* Split [p, e) on whitespace into at most max tokens. */
static int split(const char *p, const char *e, struct tok *t, int max)
{
  const char *b = p;
  int n = 0;
  while (p < e) {
    while (p < e && isspace((unsigned char)*p))
      p++;
    if (p >= e)
      break;
    if (n == max)
      return max + 1;
    t[n].s = p;
    t[n].col = (long)(p - b) + 1;
    while (p < e && !isspace((unsigned char)*p))
      p++;
    t[n].n = (size_t)(p - t[n].s);
    n++;
  }
  return n;
}

static bool tok_is(const struct tok *t, const char *s)
{
  return t->n == strlen(s) && !memcmp(t->s, s, t->n);
}

static bool tok_eq(const struct tok *a, const struct tok *b)
{
  return a->n == b->n && !memcmp(a->s, b->s, a->n);
}

/* "GPU<k>" -> k, else -1. */
static long gpu_index(const struct tok *t)
{
  size_t i;
  long k = 0;
  if (t->n < 4 || memcmp(t->s, "GPU", 3))
    return -1;
  for (i = 3; i < t->n; i++) {
    if (!isdigit((unsigned char)t->s[i]) || k > 100000)
      return -1;
    k = k * 10 + (t->s[i] - '0');
  }
  return k;
}

/* A PCIe cell's distance: PIX 1, PXB 2, PHB 3, NODE 4, SYS and SOC 5;
** 0 for anything else. */
static int pcie_rank(const struct tok *c)
{
  static const char *const names[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  int k;
  for (k = 0; k < 5; k++)
    if (tok_is(c, names[k]))
      return k + 1;
  return tok_is(c, "SOC") ? 5 : 0;
}

/* ---- the GPU types: --query-gpu CSV or -q ------------------------------- */

struct qgpu {
  char name[96];
  double mib;
  long line;
};

/* The GPUs that `nvidia-smi -q' or a --query-gpu CSV lists in text, in
** order, into q (at most max); header_only: a CSV needs its header (the
** text is a topo -m file, whose affinity cells hold commas). */
static int query_gpus(const char *text, size_t len, bool header_only,
                      struct qgpu *q, int max)
{
  const char *p = text, *end = text + len;
  bool dashq = false, in_fb = false, csv = false;
  int n = 0, namecol = 0, memcol = 1, ncols = 0;
  long line = 0;
  dashq = ppi_span_find(text, end, "Product Name") != NULL;
  while (p < end && n <= max) {
    const char *e = memchr(p, '\n', (size_t)(end - p)), *a, *b;
    if (!e)
      e = end;
    line++;
    a = p, b = e;
    ppi_span_trim(&a, &b);
    if (dashq) {
      const char *c = memchr(a, ':', (size_t)(b - a));
      if (!c && a < b)
        in_fb = ppi_span_is(a, b, "FB Memory Usage");
      else if (c) {
        const char *ke = c, *v = c + 1, *ve = b;
        ppi_span_trim(&a, &ke);
        ppi_span_trim(&v, &ve);
        if (ppi_span_is(a, ke, "Product Name")) {
          if (n < max) {
            snprintf(q[n].name, sizeof q[n].name, "%.*s", (int)(ve - v), v);
            q[n].mib = 0;
            q[n].line = line;
          }
          n++;
        } else if (in_fb && n > 0 && n <= max && q[n - 1].mib == 0 &&
                   ppi_span_is(a, ke, "Total"))
          q[n - 1].mib = strtod(v, NULL);
      }
    } else if (a < b) {
      /* the fields of a CSV line */
      const char *f[8], *fe[8], *x = a;
      int nf = 0, k;
      bool more = true;
      while (nf < 8 && ppi_span_field(&x, b, ',', &more, &f[nf], &fe[nf]))
        nf++;
      if (!csv) {
        for (k = 0; k < nf; k++)
          if (ppi_span_is(f[k], fe[k], "name"))
            break;
        if (k < nf) { /* the header */
          int m;
          namecol = k;
          memcol = -1;
          for (m = 0; m < nf; m++)
            if (fe[m] - f[m] >= 12 && !memcmp(f[m], "memory.total", 12))
              memcol = m;
          ncols = nf;
          csv = true;
        } else if (!header_only && nf >= 2 && fe[1] - f[1] > 3 &&
                   !memcmp(fe[1] - 3, "MiB", 3)) {
          ncols = nf; /* --format=csv,noheader: name, memory.total */
          csv = true;
        }
        if (!csv || k < nf)
          goto next;
      }
      if (nf != ncols)
        break; /* the table ended */
      if (n < max) {
        snprintf(q[n].name, sizeof q[n].name, "%.*s",
                 (int)(fe[namecol] - f[namecol]), f[namecol]);
        q[n].mib = memcol >= 0 ? strtod(f[memcol], NULL) : 0;
        q[n].line = line;
      }
      n++;
    } else if (csv)
      break;
  next:
    p = e < end ? e + 1 : end;
  }
  return n;
}

/* The one catalog type of the GPUs listed in text, into *type; found is
** false when text lists none. */
static pp_status query_type(pp_ctx *ctx, const char *text, size_t len,
                            const char *source, bool header_only, int32_t g,
                            const char **type, bool *found)
{
  struct qgpu *q;
  int n, i;
  pp_status rc = PP_OK;
  *found = false;
  /* a box has no more GPUs than a topo -m matrix has columns */
  if (!PPI_NEW(ctx, q, PPI_NVSMI_MAX_COLUMNS))
    return PP_ENOMEM;
  n = query_gpus(text, len, header_only, q, PPI_NVSMI_MAX_COLUMNS);
  if (n == 0)
    goto done;
  *found = true;
  if (n > PPI_NVSMI_MAX_COLUMNS) {
    rc = ppi_fail_at(ctx, PP_ELIMIT, source, 0, 0, "more than %d GPUs",
                     PPI_NVSMI_MAX_COLUMNS);
    goto done;
  }
  if (n != g) {
    rc = ppi_fail_at(ctx, PP_EINPUT, source, q[n - 1].line, 0,
                     "lists %d GPUs, the topology %d", n, (int)g);
    goto done;
  }
  for (i = 0; i < n; i++) {
    const char *t = ppi_gpu_product(q[i].name, q[i].mib);
    if (!t) {
      char list[512];
      ppi_gpu_names(list, sizeof list);
      rc = ppi_fail_at(ctx, PP_EINPUT, source, q[i].line, 0,
                       "GPU '%s'%s: not a type of the catalog or of two "
                       "sizes it cannot tell apart; say which with gpu= "
                       "(known: %s)",
                       q[i].name, q[i].mib > 0 ? "" : " without memory.total",
                       list);
      goto done;
    }
    if (i > 0 && strcmp(t, *type)) {
      rc = ppi_fail_at(ctx, PP_EINPUT, source, q[i].line, 0,
                       "GPU '%s' is a %s, GPU 0 a %s: a box of one type "
                       "only (say gpu= to treat all as one)",
                       q[i].name, t, *type);
      goto done;
    }
    *type = t;
  }
done:
  ppi_free(ctx, q, (size_t)PPI_NVSMI_MAX_COLUMNS * sizeof *q);
  return rc;
}

/* ---- the matrix ---------------------------------------------------------- */

/* GB/s per direction of one NVLink of a GPU type: NVLink 2, 3 and 4 run
** 25 GB/s per link and direction (V100, A100, H100: docs/ECOSYSTEM.md
** 2.3); the GeForce RTX 3090's bridge gives 112.5 GB/s both ways over
** four links (NVIDIA's GeForce RTX 3090 specifications), 14.0625 per
** link and direction. */
static double nvlink_per_link(const char *gpu)
{
  return !strcmp(gpu, "RTX-3090") ? 14.0625 : 25.0;
}

pp_status pp_cluster_read_nvsmi(pp_ctx *ctx, const char *text, size_t len,
                                const char *source, const pp_topo_params *p,
                                pp_cluster **out)
{
  pp_topo_params defaults;
  struct tok *tk = NULL, *cols = NULL;
  const char *q = text, *end = text + len;
  double *bw = NULL, nvl, pcie, sys;
  int32_t g = 0, ncol = 0, row = 0, i, j;
  int8_t *nicd = NULL; /* [GPU x NIC] pcie_rank */
  char(*nicname)[32] = NULL;
  long line = 0, header_line = 0;
  bool header = false;
  const char *gpu;
  struct ppi_box_notes notes;
  pp_status rc = PP_OK;

  if (!ctx || (!text && len) || !out)
    return PP_EINVAL;
  *out = NULL;
  if (!p) {
    pp_topo_params_init(&defaults);
    p = &defaults;
  }
  if (!source)
    source = "<nvidia-smi>";
  memset(&notes, 0, sizeof notes);
  /* Defaults, GB/s per direction: PCIe Gen3 x16 as [NCCL] models it;
  ** NVLink below, once the type is known. */
  pcie = p->pcie_gbps > 0 ? p->pcie_gbps : 12;
  /* TUNING: sys= 10, the dgx1 generator's PCIe/QPI figure (cluster_gen.c),
  ** so the DGX-1 example gives dgx1's matrix (docs/FORMATS.md, "nvidia-smi
  ** topo -m"); d35d12a, no sweep recorded. */
  sys = p->sys_gbps > 0 ? p->sys_gbps : 10;
  tk = ppi_calloc(ctx, PPI_NVSMI_MAX_COLUMNS + 1, sizeof *tk);
  cols = ppi_calloc(ctx, PPI_NVSMI_MAX_COLUMNS + 1, sizeof *cols);
  if (!tk || !cols) {
    rc = ctx->err;
    goto done;
  }

  while (q < end) {
    const char *e = memchr(q, '\n', (size_t)(end - q));
    int n;
    if (!e)
      e = end;
    line++;
    if (memchr(q, '\0', (size_t)(e - q))) {
      rc = ppi_fail_at(ctx, PP_EPARSE, source, line, 0,
                       "a NUL byte: not nvidia-smi text output");
      goto done;
    }
    n = split(q, e, tk, PPI_NVSMI_MAX_COLUMNS);
    if (n > PPI_NVSMI_MAX_COLUMNS) {
      rc = ppi_fail_at(ctx, PP_ELIMIT, source, line, 0, "more than %d columns",
                       PPI_NVSMI_MAX_COLUMNS);
      goto done;
    }
    if (!header) {
      if (n > 0 && gpu_index(&tk[0]) == 0) {
        /* the header: GPU columns, NIC columns, then the affinity ones */
        for (ncol = 0; ncol < n; ncol++) {
          if (tok_is(&tk[ncol], "CPU") || tok_is(&tk[ncol], "NUMA") ||
              tok_is(&tk[ncol], "GPU"))
            break;
          if (gpu_index(&tk[ncol]) >= 0) {
            if (gpu_index(&tk[ncol]) != ncol || g != ncol) {
              rc = ppi_fail_at(ctx, PP_EPARSE, source, line, tk[ncol].col,
                               "column '%.*s' out of order (expected GPU%d)",
                               (int)tk[ncol].n, tk[ncol].s, (int)g);
              goto done;
            }
            g++;
          }
          cols[ncol] = tk[ncol];
        }
        header = true;
        header_line = line;
        bw = ppi_calloc(ctx, (size_t)g * (size_t)g, sizeof *bw);
        nicd =
            ppi_calloc(ctx, (size_t)g * (size_t)(ncol - g + 1), sizeof *nicd);
        nicname = ppi_calloc(ctx, (size_t)(ncol - g + 1), sizeof *nicname);
        if (!bw || !nicd || !nicname) {
          rc = ctx->err;
          goto done;
        }
        for (j = g; j < ncol; j++)
          snprintf(nicname[j - g], sizeof nicname[0], "%.*s", (int)cols[j].n,
                   cols[j].s);
      }
    } else if (n > 0 && row < g && gpu_index(&tk[0]) >= 0) {
      if (gpu_index(&tk[0]) != row) {
        rc = ppi_fail_at(ctx, PP_EPARSE, source, line, 1,
                         "row '%.*s' where GPU%d was expected", (int)tk[0].n,
                         tk[0].s, (int)row);
        goto done;
      }
      if (n - 1 < ncol) {
        rc = ppi_fail_at(ctx, PP_EPARSE, source, line, 0,
                         "row GPU%d has %d cells, the header %d columns",
                         (int)row, n - 1, (int)ncol);
        goto done;
      }
      for (j = 0; j < ncol; j++) {
        const struct tok *c = &tk[j + 1];
        double x;
        int links = 0;
        if (j == row) {
          if (!tok_is(c, "X")) {
            rc = ppi_fail_at(ctx, PP_EPARSE, source, line, c->col,
                             "GPU%d to itself is '%.*s', not X", (int)row,
                             (int)c->n, c->s);
            goto done;
          }
          continue;
        }
        if (j >= g) { /* a NIC column */
          int k = pcie_rank(c);
          if (!k) {
            rc = ppi_fail_at(ctx, PP_EPARSE, source, line, c->col,
                             "GPU%d to %.*s: '%.*s' is not a PCIe path "
                             "(PIX, PXB, PHB, NODE, SYS)",
                             (int)row, (int)cols[j].n, cols[j].s, (int)c->n,
                             c->s);
            goto done;
          }
          nicd[(size_t)row * (ncol - g) + (j - g)] = (int8_t)k;
          continue;
        }
        if (c->n >= 3 && c->n <= 5 && !memcmp(c->s, "NV", 2) &&
            isdigit((unsigned char)c->s[2])) {
          size_t k;
          for (k = 2; k < c->n && isdigit((unsigned char)c->s[k]); k++)
            links = links * 10 + (c->s[k] - '0');
          if (k != c->n || links < 1)
            links = -1;
          x = -links; /* links for now: the figure needs the type */
        } else if (pcie_rank(c) >= 1 && pcie_rank(c) <= 3)
          x = pcie;
        else if (pcie_rank(c) >= 4)
          x = sys;
        else
          links = -1, x = 0;
        if (links < 0) {
          rc = ppi_fail_at(ctx, PP_EPARSE, source, line, c->col,
                           "GPU%d to GPU%d: '%.*s' is not a connection type "
                           "(X, NV#, PIX, PXB, PHB, NODE, SYS)",
                           (int)row, (int)j, (int)c->n, c->s);
          goto done;
        }
        bw[(size_t)row * g + j] = x;
      }
      row++;
    } else if (n > 0 && row == g && ncol > g) {
      /* a NIC row, or a line of the NIC legend ("NIC0: mlx5_0") */
      for (j = g; j < ncol; j++)
        if (tok_eq(&tk[0], &cols[j]))
          break;
      if (j < ncol && n - 1 < ncol) {
        rc = ppi_fail_at(ctx, PP_EPARSE, source, line, 0,
                         "row %.*s has %d cells, the header %d columns",
                         (int)tk[0].n, tk[0].s, n - 1, (int)ncol);
        goto done;
      }
      if (j < ncol)
        for (i = 0; i < g; i++)
          if (!pcie_rank(&tk[i + 1])) {
            rc = ppi_fail_at(ctx, PP_EPARSE, source, line, tk[i + 1].col,
                             "%.*s to GPU%d: '%.*s' is not a PCIe path "
                             "(PIX, PXB, PHB, NODE, SYS)",
                             (int)tk[0].n, tk[0].s, (int)i, (int)tk[i + 1].n,
                             tk[i + 1].s);
            goto done;
          }
      if (j == ncol && n == 2 && tk[0].n > 1 && tk[0].s[tk[0].n - 1] == ':')
        for (j = g; j < ncol; j++)
          if (cols[j].n == tk[0].n - 1 &&
              !memcmp(cols[j].s, tk[0].s, cols[j].n))
            snprintf(nicname[j - g], sizeof nicname[0], "%.*s", (int)tk[1].n,
                     tk[1].s);
    }
    q = e < end ? e + 1 : end;
  }
  if (!header) {
    rc = ppi_fail_at(ctx, PP_EPARSE, source, line ? line : 1, 0,
                     "no header row starting with GPU0: not the output of "
                     "'nvidia-smi topo -m'");
    goto done;
  }
  if (row < g) {
    rc = ppi_fail_at(ctx, PP_EPARSE, source, line, 0,
                     "the file ends before row GPU%d (the header on line %ld "
                     "has %d GPUs)",
                     (int)row, header_line, (int)g);
    goto done;
  }
  for (i = 0; i < g; i++)
    for (j = 0; j < i; j++)
      if (bw[(size_t)i * g + j] != bw[(size_t)j * g + i]) {
        rc = ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                         "GPU%d to GPU%d differs from GPU%d to GPU%d (the "
                         "matrix must be symmetric)",
                         (int)i, (int)j, (int)j, (int)i);
        goto done;
      }
  /* the NICs: each GPU's nearest, shared among their users */
  if (p->nic_gbits > 0 && ncol == g) {
    rc = ppi_fail_at(ctx, PP_EINPUT, source, header_line, 0,
                     "nic=%g but the header names no NIC column", p->nic_gbits);
    goto done;
  }
  if (ncol > g) {
    int32_t nn = ncol - g, k;
    double share = INFINITY;
    int32_t users[PPI_NVSMI_MAX_COLUMNS];
    memset(users, 0, sizeof users);
    for (i = 0; i < g; i++) {
      int8_t best = 127;
      for (k = 0; k < nn; k++)
        if (nicd[(size_t)i * nn + k] < best)
          best = nicd[(size_t)i * nn + k];
      for (k = 0; k < nn; k++)
        if (nicd[(size_t)i * nn + k] == best)
          users[k]++, nicd[(size_t)i * nn + k] = -1;
    }
    for (i = 0; i < g; i++) {
      double s = 0;
      for (k = 0; k < nn; k++)
        if (nicd[(size_t)i * nn + k] < 0)
          s += p->nic_gbits / 8 / users[k];
      share = s < share ? s : share;
    }
    if (p->nic_gbits > 0) {
      int32_t used = 0, first = -1;
      for (k = 0; k < nn; k++)
        if (users[k] && (used++, first < 0))
          first = k;
      notes.nic_gbps = share;
      snprintf(notes.nic_why, sizeof notes.nic_why,
               "each GPU's least share of its nearest NICs: %d of %d NICs "
               "(%s%s) at nic=%g Gb/s",
               (int)used, (int)nn, nicname[first], used > 1 ? ", ..." : "",
               p->nic_gbits);
    } else
      snprintf(notes.nic_why, sizeof notes.nic_why,
               "%d NICs (%s%s) whose speed nvidia-smi does not print: say "
               "nic=GBITS or inter=",
               (int)nn, nicname[0], nn > 1 ? ", ..." : "");
  }
  gpu = p->gpu;
  if (!gpu) {
    bool found = false;
    if (p->gpus) {
      char *t;
      size_t tl;
      if ((rc = ppi_read_file(ctx, p->gpus, &t, &tl)))
        goto done;
      rc = query_type(ctx, t, tl, p->gpus, false, g, &gpu, &found);
      ppi_free(ctx, t, tl + 1);
      if (!rc && !found)
        rc = ppi_fail_at(ctx, PP_EINPUT, p->gpus, 0, 0,
                         "names no GPU: not the output of 'nvidia-smi -q' "
                         "or 'nvidia-smi --query-gpu=name,memory.total "
                         "--format=csv'");
      if (rc)
        goto done;
      snprintf(notes.type_why, sizeof notes.type_why, "GPU type %s from %s",
               gpu, p->gpus);
    } else {
      if ((rc = query_type(ctx, text, len, source, true, g, &gpu, &found)))
        goto done;
      if (!found) {
        char list[512];
        ppi_gpu_names(list, sizeof list);
        rc = ppi_fail_at(
            ctx, PP_EINPUT, source, 0, 0,
            "'nvidia-smi topo -m' does not say the GPU type: give "
            "gpu=TYPE (known: %s) or gpus=FILE, a file with the output of "
            "'nvidia-smi --query-gpu=name,memory.total --format=csv' or of "
            "'nvidia-smi -q'",
            list);
        goto done;
      }
      snprintf(notes.type_why, sizeof notes.type_why,
               "GPU type %s from the GPU list in the file", gpu);
    }
  }
  nvl = p->nvlink_gbps > 0 ? p->nvlink_gbps : nvlink_per_link(gpu);
  for (i = 0; i < g * g; i++)
    if (bw[i] < 0)
      bw[i] *= -nvl;
  rc = ppi_cluster_box(ctx, "nvidia-smi", source, gpu, g, bw, p, &notes, out);
done:
  if (tk)
    ppi_free(ctx, tk, (PPI_NVSMI_MAX_COLUMNS + 1) * sizeof *tk);
  if (cols)
    ppi_free(ctx, cols, (PPI_NVSMI_MAX_COLUMNS + 1) * sizeof *cols);
  if (bw)
    ppi_free(ctx, bw, (size_t)g * (size_t)g * sizeof *bw);
  if (nicd)
    ppi_free(ctx, nicd, (size_t)g * (size_t)(ncol - g + 1) * sizeof *nicd);
  if (nicname)
    ppi_free(ctx, nicname, (size_t)(ncol - g + 1) * sizeof *nicname);
  return rc;
}

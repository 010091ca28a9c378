/* SPDX-License-Identifier: MIT */
/*
** `nvidia-smi topo -m' output as a cluster (docs/ECOSYSTEM.md 2.1).
**
** The header row names the columns (GPU0 .. GPUn-1, then NICs; parsing
** stops at "CPU Affinity"); each GPUi row gives one cell per column:
** X on the diagonal, NV# (a bonded set of # NVLinks: # x nvlink_gbps),
** PIX, PXB, PHB (PCIe: pcie_gbps), NODE, SYS or the older SOC (across
** host bridges or sockets: sys_gbps).  Cells are split on tabs or runs
** of spaces, so both the tab-separated output of newer drivers and the
** space-aligned one of older ones read.  NIC rows, the legend and the
** affinity columns are skipped.  The GPU type is gpu=, else guessed from
** the NVLink count: NV18 is an H100 box, NV12 an A100 box, anything
** else V100 (DGX-1).
*/
#include "plan/plan.h"

#include <ctype.h>
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

pp_status pp_cluster_read_nvsmi(pp_ctx *ctx, const char *text, size_t len,
                                const char *source, const pp_topo_params *p,
                                pp_cluster **out)
{
  pp_topo_params defaults;
  struct tok *tk = NULL;
  const char *q = text, *end = text + len;
  double *bw = NULL, nvl, pcie, sys;
  int32_t g = 0, ncol = 0, row = 0, i, j, maxnv = 0;
  long line = 0;
  bool header = false;
  const char *gpu;
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
  /* Defaults, GB/s per direction: NVLink 2 per link (docs/ECOSYSTEM.md
  ** 2.3) and PCIe Gen3 x16 as [NCCL] models it. */
  nvl = p->nvlink_gbps > 0 ? p->nvlink_gbps : 25;
  pcie = p->pcie_gbps > 0 ? p->pcie_gbps : 12;
  /* TUNING: sys= 10, the dgx1 generator's PCIe/QPI figure (cluster_gen.c),
  ** so the DGX-1 example gives dgx1's matrix (docs/FORMATS.md, "nvidia-smi
  ** topo -m"); d35d12a, no sweep recorded. */
  sys = p->sys_gbps > 0 ? p->sys_gbps : 10;
  tk = ppi_calloc(ctx, PPI_NVSMI_MAX_COLUMNS + 1, sizeof *tk);
  if (!tk)
    return ctx->err;

  while (q < end && (!header || row < g)) {
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
        /* the header: GPU and NIC columns up to the affinity ones */
        for (ncol = 0; ncol < n; ncol++) {
          if (tok_is(&tk[ncol], "CPU") || tok_is(&tk[ncol], "NUMA"))
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
        }
        header = true;
        bw = ppi_calloc(ctx, (size_t)g * (size_t)g, sizeof *bw);
        if (!bw) {
          rc = ctx->err;
          goto done;
        }
      }
    } else if (n > 0 && gpu_index(&tk[0]) >= 0) {
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
      for (j = 0; j < g; j++) {
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
        if (c->n >= 3 && c->n <= 5 && !memcmp(c->s, "NV", 2) &&
            isdigit((unsigned char)c->s[2])) {
          size_t k;
          for (k = 2; k < c->n && isdigit((unsigned char)c->s[k]); k++)
            links = links * 10 + (c->s[k] - '0');
          if (k != c->n || links < 1)
            links = -1;
          x = links * nvl;
        } else if (tok_is(c, "PIX") || tok_is(c, "PXB") || tok_is(c, "PHB"))
          x = pcie;
        else if (tok_is(c, "NODE") || tok_is(c, "SYS") || tok_is(c, "SOC"))
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
        if (links > maxnv)
          maxnv = links;
      }
      row++;
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
                     "the file ends before row GPU%d (the header has %d "
                     "GPUs)",
                     (int)row, (int)g);
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
  /* NV18 is an H100 machine's link count into its NVSwitches, NV12 a DGX
  ** A100's (docs/ECOSYSTEM.md 2.1). */
  gpu = p->gpu        ? p->gpu
        : maxnv >= 18 ? "H100"
        : maxnv >= 12 ? "A100-80"
                      : "V100";
  rc = ppi_cluster_box(ctx, "nvidia-smi", source, gpu, g, bw, p, NULL, out);
done:
  ppi_free(ctx, tk, (PPI_NVSMI_MAX_COLUMNS + 1) * sizeof *tk);
  if (bw)
    ppi_free(ctx, bw, (size_t)g * (size_t)g * sizeof *bw);
  return rc;
}

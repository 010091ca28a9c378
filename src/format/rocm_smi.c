/* SPDX-License-Identifier: MIT */
/*
** `rocm-smi --showtopo' output as a cluster (docs/FORMATS.md, "rocm-smi
** --showtopo").
**
** rocm-smi prints four blocks under '='-filled title lines
** (showHwTopology and the functions it calls, python_smi_tools/rocm_smi.py
** @a1295714 of ROCm/rocm_smi_lib, lines 3218-3390): "Weight between two
** GPUs", "Hops between two GPUs" and "Link Type between two GPUs", each
** a matrix with a header row GPU0 GPU1 ... and one row per GPU ("0" on
** the diagonal, "N/A" or "XXXX" where the library could not tell), then
** "Numa Nodes" with lines "GPU[k]\t\t: (Topology) Numa Node: N".  The
** link type is XGMI or PCIE.  A pair joined by XGMI in one hop has a
** direct xGMI link: nvlink_gbps, else RCCL's figure for the type (MI300X
** 48, MI250X 36 GB/s per link: ncclTopoXGMISpeed, src/graph/topo.h
** @0cbce2a7 lines 257-265 of ROCm/rccl); rocm-smi does not print how
** many links a pair has, so it is one.  Other pairs go over PCIe, as
** RCCL routes them (it adds an xGMI link only for one hop,
** src/graph/xml.cc @0cbce2a7 line 781 of ROCm/rccl): pcie_gbps when
** both GPUs are on one NUMA node, else sys_gbps.  The output names no
** GPU type, so gpu= is required.  The weights are read and checked, not
** used.  One pass over the text, then O(g^2).
*/
#include "plan/plan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { S_NONE, S_WEIGHT, S_HOPS, S_TYPE, S_NUMA };

#define CELL_MAX 32

struct rrun {
  pp_ctx *ctx;
  const char *src;
  int32_t g;       /* GPUs, from the first header; 0 before */
  int32_t rows[5]; /* rows read per table */
  int32_t *hops;   /* [g*g], -1: unknown */
  int32_t *xgmi;   /* [g*g] 1 XGMI, 0 PCIE, -1 unknown */
  int32_t *numa;   /* [g], -1: unknown */
  bool seen_header[5];
};

/* "GPU<k>" at p (n bytes) -> k, else -1. */
static long gpu_at(const char *p, size_t n)
{
  size_t i;
  long k = 0;
  if (n < 4 || memcmp(p, "GPU", 3))
    return -1;
  for (i = 3; i < n; i++) {
    if (!isdigit((unsigned char)p[i]) || k > 100000)
      return -1;
    k = k * 10 + (p[i] - '0');
  }
  return k;
}

/* The next word of [*p, e) into w (cut at CELL_MAX - 1); false at the
** end of the line. */
static bool word(const char **p, const char *e, char *w, long *col,
                 const char *line0)
{
  const char *b;
  while (*p < e && isspace((unsigned char)**p))
    (*p)++;
  if (*p >= e)
    return false;
  b = *p;
  while (*p < e && !isspace((unsigned char)**p))
    (*p)++;
  snprintf(w, CELL_MAX, "%.*s", (int)(*p - b), b);
  *col = (long)(b - line0) + 1;
  return true;
}

static pp_status table_line(struct rrun *r, int sec, const char *p,
                            const char *e, long line)
{
  char w[CELL_MAX];
  long col, k;
  const char *l0 = p;
  int32_t j = 0, row;
  if (!word(&p, e, w, &col, l0))
    return PP_OK;
  k = gpu_at(w, strlen(w));
  if (k < 0)
    return PP_OK; /* a line of another kind: skipped */
  if (!r->seen_header[sec]) {
    /* the header: GPU0 GPU1 ... */
    int32_t n = 0;
    do {
      if (gpu_at(w, strlen(w)) != n)
        return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, col,
                           "column '%s' out of order (expected GPU%d)", w,
                           (int)n);
      if (++n > PPI_NVSMI_MAX_COLUMNS)
        return ppi_fail_at(r->ctx, PP_ELIMIT, r->src, line, col,
                           "more than %d GPUs", PPI_NVSMI_MAX_COLUMNS);
    } while (word(&p, e, w, &col, l0));
    if (r->g && n != r->g)
      return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, 0,
                         "%d GPUs here, %d in the table above", (int)n,
                         (int)r->g);
    if (!r->g) {
      r->g = n;
      if (!PPI_NEW(r->ctx, r->hops, (size_t)n * n) ||
          !PPI_NEW(r->ctx, r->xgmi, (size_t)n * n) ||
          !PPI_NEW(r->ctx, r->numa, n))
        return PP_ENOMEM;
      for (j = 0; j < n * n; j++)
        r->hops[j] = r->xgmi[j] = -1;
      for (j = 0; j < n; j++)
        r->numa[j] = -1;
    }
    r->seen_header[sec] = true;
    return PP_OK;
  }
  row = r->rows[sec];
  if (row >= r->g)
    return PP_OK; /* past the table */
  if (k != row)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, col,
                       "row '%s' where GPU%d was expected", w, (int)row);
  for (j = 0; j < r->g; j++) {
    size_t at = (size_t)row * r->g + j;
    if (!word(&p, e, w, &col, l0))
      return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, 0,
                         "row GPU%d has %d cells, the header %d columns",
                         (int)row, (int)j, (int)r->g);
    if (j == row) {
      if (strcmp(w, "0"))
        return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, col,
                           "GPU%d to itself is '%s', not 0", (int)row, w);
      continue;
    }
    if (sec == S_TYPE) {
      if (!strcmp(w, "XGMI"))
        r->xgmi[at] = 1;
      else if (!strcmp(w, "PCIE"))
        r->xgmi[at] = 0;
      else
        return ppi_fail_at(r->ctx, PP_EINPUT, r->src, line, col,
                           "GPU%d to GPU%d: link type '%s' (XGMI or PCIE "
                           "expected; rocm-smi prints XXXX where it could "
                           "not read it)",
                           (int)row, (int)j, w);
    } else if (strcmp(w, "N/A")) {
      char *end;
      long x = strtol(w, &end, 10);
      if (end == w || *end || x < 0)
        return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, col,
                           "GPU%d to GPU%d: '%s' is not a %s", (int)row, (int)j,
                           w, sec == S_HOPS ? "hop count" : "weight");
      if (sec == S_HOPS)
        r->hops[at] = (int32_t)x;
    }
  }
  r->rows[sec]++;
  return PP_OK;
}

/* "GPU[k]\t\t: (Topology) Numa Node: N" */
static pp_status numa_line(struct rrun *r, const char *p, const char *e,
                           long line)
{
  static const char key[] = "(Topology) Numa Node:";
  const char *m;
  long k, n;
  char *end, buf[512];
  size_t len = (size_t)(e - p);
  if (e - p < 5 || memcmp(p, "GPU[", 4) || !r->g)
    return PP_OK;
  /* the line NUL-terminated: the text need not be (strtol and strstr
  ** ran past a buffer's end, found by fuzz_rocm_smi) */
  if (len >= sizeof buf)
    len = sizeof buf - 1;
  memcpy(buf, p, len);
  buf[len] = '\0';
  p = buf;
  k = strtol(p + 4, &end, 10);
  m = strstr(p, key);
  if (!m)
    return PP_OK;
  n = strtol(m + sizeof key - 1, &end, 10);
  if (k < 0 || k >= r->g || end == m + sizeof key - 1)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, line, 1,
                       "a NUMA line of GPU %ld, or without a node number, "
                       "in a box of %d GPUs",
                       k, (int)r->g);
  r->numa[k] = (int32_t)n;
  return PP_OK;
}

/* RCCL's xGMI figure per link for a catalog type (see the top). */
static double xgmi_gbps(const char *gpu)
{
  return !strcmp(gpu, "MI300X") ? 48.0 : !strcmp(gpu, "MI250X") ? 36.0 : 0;
}

pp_status pp_cluster_read_rocm_smi(pp_ctx *ctx, const char *text, size_t len,
                                   const char *source, const pp_topo_params *p,
                                   pp_cluster **out)
{
  static const char *const titles[] = {
      NULL, "Weight between two GPUs", "Hops between two GPUs",
      "Link Type between two GPUs", "Numa Nodes"};
  struct rrun r;
  pp_topo_params defaults;
  const char *q = text, *end = text + len;
  double *bw = NULL, link, pcie, sys;
  int sec = S_NONE, k;
  long line = 0;
  int32_t i, j, g;
  pp_status rc = PP_OK;

  if (!ctx || (!text && len) || !out)
    return PP_EINVAL;
  *out = NULL;
  if (!p) {
    pp_topo_params_init(&defaults);
    p = &defaults;
  }
  if (!source)
    source = "<rocm-smi>";
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.src = source;
  while (q < end && !rc) {
    const char *e = memchr(q, '\n', (size_t)(end - q));
    if (!e)
      e = end;
    line++;
    if (memchr(q, '\0', (size_t)(e - q))) {
      rc = ppi_fail_at(ctx, PP_EPARSE, source, line, 0,
                       "a NUL byte: not rocm-smi text output");
      break;
    }
    if (*q == '=') { /* a title line: which block follows */
      sec = S_NONE;
      for (k = S_WEIGHT; k <= S_NUMA; k++)
        if (ppi_span_find(q, e, titles[k]))
          sec = k;
    } else if (sec == S_NUMA)
      rc = numa_line(&r, q, e, line);
    else if (sec != S_NONE)
      rc = table_line(&r, sec, q, e, line);
    q = e < end ? e + 1 : end;
  }
  if (rc)
    goto done;
  g = r.g;
  if (!r.seen_header[S_TYPE] || r.rows[S_TYPE] < g) {
    rc = ppi_fail_at(ctx, PP_EPARSE, source, line, 0,
                     r.seen_header[S_TYPE]
                         ? "the \"Link Type between two GPUs\" table ends "
                           "before all its rows"
                         : "no \"Link Type between two GPUs\" table: not "
                           "the output of 'rocm-smi --showtopo'");
    goto done;
  }
  if (r.seen_header[S_HOPS] && r.rows[S_HOPS] < g) {
    rc = ppi_fail_at(ctx, PP_EPARSE, source, line, 0,
                     "the \"Hops between two GPUs\" table ends before all "
                     "its rows");
    goto done;
  }
  if (p->nic_gbits > 0) {
    rc = ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                     "nic=: 'rocm-smi --showtopo' lists no NIC (say inter=)");
    goto done;
  }
  if (!p->gpu) {
    rc = ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                     "'rocm-smi --showtopo' does not say the GPU type: give "
                     "gpu=TYPE (MI300X, MI250X, ...)");
    goto done;
  }
  link = p->nvlink_gbps > 0 ? p->nvlink_gbps : xgmi_gbps(p->gpu);
  if (!(link > 0)) {
    rc = ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                     "no xGMI link figure for GPU '%s': give nvlink=GBPS",
                     p->gpu);
    goto done;
  }
  pcie = p->pcie_gbps > 0 ? p->pcie_gbps : 12;
  sys = p->sys_gbps > 0 ? p->sys_gbps : 10;
  if (!PPI_NEW(ctx, bw, (size_t)g * g)) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < g; i++)
    for (j = 0; j < g; j++) {
      size_t at = (size_t)i * g + j;
      if (i == j)
        continue;
      if (r.xgmi[at] != r.xgmi[(size_t)j * g + i]) {
        rc = ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                         "GPU%d to GPU%d differs from GPU%d to GPU%d (the "
                         "link types must be symmetric)",
                         (int)i, (int)j, (int)j, (int)i);
        goto done;
      }
      bw[at] = r.xgmi[at] == 1 && r.hops[at] <= 1 ? link
               : r.numa[i] == r.numa[j]           ? pcie
                                                  : sys;
    }
  rc = ppi_cluster_box(ctx, "rocm-smi", source, p->gpu, g, bw, p, NULL, out);
done:
  if (bw)
    ppi_free(ctx, bw, (size_t)r.g * r.g * sizeof *bw);
  if (r.hops)
    ppi_free(ctx, r.hops, (size_t)r.g * r.g * sizeof *r.hops);
  if (r.xgmi)
    ppi_free(ctx, r.xgmi, (size_t)r.g * r.g * sizeof *r.xgmi);
  if (r.numa)
    ppi_free(ctx, r.numa, (size_t)r.g * sizeof *r.numa);
  return rc;
}

/* SPDX-License-Identifier: MIT */
/*
** Launch files that put every rank on the device the plan chose
** (docs/ECOSYSTEM.md 3.4): a hostfile ("host slots=N", DeepSpeed's and
** MPI's form) and, per host, a POSIX shell script that starts that host's
** ranks of the training command given as its arguments, each with
**   CUDA_DEVICE_ORDER=PCI_BUS_ID  (indices as nvidia-smi numbers them)
**   CUDA_VISIBLE_DEVICES=<the host's GPUs, in the order of its ranks>
**   RANK  LOCAL_RANK (cuda:LOCAL_RANK is the planned GPU)  WORLD_SIZE
**   LOCAL_WORLD_SIZE  MASTER_ADDR  MASTER_PORT
** the environment torch.distributed's env:// initialisation reads.
** Explicit ranks rather than torchrun: torchrun numbers ranks node by
** node with the same count on every node, which a mapped plan need not
** have (the warning says when torchrun would have done).
**
** Ranks follow Megatron's order: rank (s R + r) tp + t is rank t of the
** tensor-parallel group of replica r of stage s (every stage with R
** replicas; a plan with different counts numbers its replicas in stage
** order).  One rank per device: a device that holds several stages
** (Megatron's interleaved pipeline, torch's multi-stage schedules) is the
** rank of its first, which runs them all; two ranks on one GPU would be
** refused by NCCL.
** With tp > 1 under Megatron (or "generic") on GPUs before Blackwell,
** the scripts also set CUDA_DEVICE_MAX_CONNECTIONS=1, which Megatron
** asserts (megatron/training/arguments.py:1452-1479 @ d98e8a64), unless
** the environment sets it.
** torchrun and DeepSpeed's launcher give a host's ranks local ranks 0,
** 1, ... in order, and the training script then takes GPU LOCAL_RANK; so
** they place a plan only when ranks go host by host, the same count on
** each, and each host's k-th rank is on its GPU k (pp_launch_torchrun_ok;
** GPUs 2 and 3 of a node would otherwise run on 0 and 1).
** A device's host is its "host" field, else "node<N>"; its GPU index the
** "local_gpu" field, else its position among its node's devices in
** cluster order.  MASTER_ADDR is rank 0's host, MASTER_PORT 29500 unless
** the environment sets them.
**
** Complexity: O(devices + replicas x tp).
*/
#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pp_launch {
  struct ppi_arena arena;
  int32_t nhost, nrank;
  char **host; /* [nhost], in order of first rank */
  int32_t *rank_host, *rank_gpu, *rank_dev; /* [nrank] */
  bool torchrun_ok;
  bool max_conn; /* export CUDA_DEVICE_MAX_CONNECTIONS=1 */
};

static bool host_ok(const char *s)
{
  if (!*s || *s == '-' || *s == '.')
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
      return false;
  return true;
}

pp_status pp_export_launch(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                           const pp_cluster *c, pp_launch **out)
{
  pp_launch *x;
  struct ppi_arena *ar;
  int32_t D, d, q, k, tp, nrep, *local = NULL, *count = NULL;
  pp_plan *own = NULL;
  pp_status rc;

  if (!ctx)
    return PP_EINVAL;
  if (!p || !m || !c || !out)
    return ppi_fail(ctx, PP_EINVAL, "pp_export_launch: NULL argument");
  *out = NULL;
  if ((rc = pp_plan_check(ctx, p, m, c)))
    return rc;
  if (pp_plan_uniform_tp(p) == 0) {
    /* the ranks of the engine's files: every stage at the smallest
    ** degree, on the first devices of each group (export.h, whose
    ** exporters warn) */
    int32_t s, lo = p->stp[0];
    for (s = 1; s < p->nstage; s++)
      if (p->stp[s] < lo)
        lo = p->stp[s];
    if ((rc = ppi_plan_one_tp(ctx, p, lo, &own)))
      return rc;
    p = own;
  }
  D = c->ndev;
  tp = p->p.tp;
  nrep = p->rep_off[p->nstage];
  if (!(x = ppi_calloc(ctx, 1, sizeof *x))) {
    pp_plan_destroy(own);
    return PP_ENOMEM;
  }
  ar = &x->arena;
  ppi_arena_init(ar, ppi_ctx_alloc(ctx));
  x->nrank = 0;
  if (!(x->host = ppi_arena_alloc(ar, ctx, (size_t)D, sizeof *x->host)) ||
      !(x->rank_host = ppi_arena_alloc(ar, ctx, (size_t)nrep * tp,
                                       sizeof *x->rank_host)) ||
      !(x->rank_gpu =
            ppi_arena_alloc(ar, ctx, (size_t)nrep * tp, sizeof *x->rank_gpu)) ||
      !(x->rank_dev =
            ppi_arena_alloc(ar, ctx, (size_t)nrep * tp, sizeof *x->rank_dev)) ||
      !(local = ppi_calloc(ctx, (size_t)D, sizeof *local)) ||
      !(count = ppi_calloc(ctx, (size_t)D + 1, sizeof *count))) {
    rc = PP_ENOMEM;
    goto done;
  }
  /* every device's GPU index on its node */
  for (d = 0; d < D; d++) {
    int32_t e, n = 0;
    for (e = 0; e < d; e++)
      n += c->dev_node[e] == c->dev_node[d];
    local[d] = c->dev_local[d] >= 0 ? c->dev_local[d] : n;
  }
  for (q = 0; q < nrep; q++)
    for (k = 0; k < tp; k++) {
      int32_t r = x->nrank, dev = ppi_plan_rep_devs(p, q)[k], h, e;
      char name[64];
      const char *hn = c->dev_host[dev];
      for (e = 0; e < x->nrank && x->rank_dev[e] != dev; e++)
        ;
      if (e < x->nrank)
        continue; /* the device's rank runs this stage too */
      x->nrank++;
      if (tp > 1 && !ppi_gpu_blackwell(c->type_name[c->dev_type[dev]]) &&
          (p->p.engine == PP_ENGINE_MEGATRON ||
           p->p.engine == PP_ENGINE_GENERIC))
        x->max_conn = true;
      if (!hn) {
        snprintf(name, sizeof name, "node%d", (int)c->dev_node[dev]);
        hn = name;
      }
      if (!host_ok(hn)) {
        rc = ppi_fail(ctx, PP_EINPUT,
                      "launch: device '%s': host name '%s' may hold only "
                      "letters, digits, '.', '_' and '-' (it goes into file "
                      "names and shell scripts)",
                      c->dev_name[dev], hn);
        goto done;
      }
      for (h = 0; h < x->nhost && strcmp(x->host[h], hn); h++)
        ;
      if (h == x->nhost &&
          !(x->host[x->nhost++] = ppi_arena_strdup(ar, ctx, hn))) {
        rc = PP_ENOMEM;
        goto done;
      }
      x->rank_host[r] = h;
      x->rank_gpu[r] = local[dev];
      x->rank_dev[r] = dev;
      count[h]++;
    }
  /* torchrun's numbering: the same count per host, ranks host by host,
  ** a host's k-th rank on its GPU k */
  x->torchrun_ok = true;
  for (k = 1; k < x->nhost; k++)
    x->torchrun_ok = x->torchrun_ok && count[k] == count[0];
  for (k = 1; k < x->nrank; k++)
    x->torchrun_ok = x->torchrun_ok && x->rank_host[k] >= x->rank_host[k - 1];
  for (k = 0; k < x->nrank; k++)
    x->torchrun_ok = x->torchrun_ok && x->rank_gpu[k] == k % count[0];
  rc = PP_OK;
done:
  ppi_free(ctx, local, (size_t)D * sizeof *local);
  ppi_free(ctx, count, ((size_t)D + 1) * sizeof *count);
  pp_plan_destroy(own);
  if (rc) {
    pp_launch_destroy(x);
    return rc;
  }
  *out = x;
  return PP_OK;
}

void pp_launch_destroy(pp_launch *x)
{
  if (x)
    ppi_arena_free_owner(&x->arena, x, sizeof *x);
}

int32_t pp_launch_nhost(const pp_launch *x)
{
  return x ? x->nhost : 0;
}

const char *pp_launch_host(const pp_launch *x, int32_t h)
{
  return x && h >= 0 && h < x->nhost ? x->host[h] : NULL;
}

int pp_launch_torchrun_ok(const pp_launch *x)
{
  return x && x->torchrun_ok;
}

static void emit_hostfile(FILE *f, const void *obj)
{
  const pp_launch *x = obj;
  int32_t h, r;
  for (h = 0; h < x->nhost; h++) {
    int32_t n = 0;
    for (r = 0; r < x->nrank; r++)
      n += x->rank_host[r] == h;
    fprintf(f, "%s slots=%d\n", x->host[h], (int)n);
  }
}

struct script {
  const pp_launch *x;
  int32_t h;
};

/* The host's GPUs in order of first use (CUDA_VISIBLE_DEVICES): rank r's
** device is then cuda:LOCAL_RANK, LOCAL_RANK its GPU's position; two
** ranks on one GPU share it. */
static void emit_script(FILE *f, const void *obj)
{
  const struct script *sc = obj;
  const pp_launch *x = sc->x;
  int32_t r, q, n = 0, nv = 0;
  int32_t vis[PPI_MAX_HOST_GPUS];
  for (r = 0; r < x->nrank; r++) {
    if (x->rank_host[r] != sc->h)
      continue;
    n++;
    for (q = 0; q < nv && vis[q] != x->rank_gpu[r]; q++)
      ;
    if (q == nv && nv < PPI_MAX_HOST_GPUS)
      vis[nv++] = x->rank_gpu[r];
  }
  fprintf(f,
          "#!/bin/sh\n"
          "# parplan: the ranks of host %s; run on it as\n"
          "#   sh launch_%s.sh python train.py ARGS...\n"
          "# rank = Megatron's order (tp fastest, then data, then pipeline);\n"
          "# rank r uses cuda:LOCAL_RANK, the GPU the plan chose\n"
          "set -eu\n"
          "[ \"$#\" -gt 0 ] || { echo \"usage: $0 COMMAND [ARGS...]\" >&2; "
          "exit 2; }\n"
          "%s"
          "export CUDA_DEVICE_ORDER=PCI_BUS_ID\n"
          "export CUDA_VISIBLE_DEVICES=",
          x->host[sc->h], x->host[sc->h],
          x->max_conn ? "# tensor parallelism before Blackwell: Megatron "
                        "asserts it\n"
                        "export CUDA_DEVICE_MAX_CONNECTIONS="
                        "\"${CUDA_DEVICE_MAX_CONNECTIONS:-1}\"\n"
                      : "");
  for (q = 0; q < nv; q++)
    fprintf(f, "%s%d", q ? "," : "", (int)vis[q]);
  /* MASTER_PORT 29500: torchrun's default port ([PyTorch]). */
  fprintf(f,
          "\n"
          "export WORLD_SIZE=%d LOCAL_WORLD_SIZE=%d\n"
          "export MASTER_ADDR=\"${MASTER_ADDR:-%s}\" "
          "MASTER_PORT=\"${MASTER_PORT:-29500}\"\n"
          "pids=\"\"\n",
          (int)x->nrank, (int)n, x->host[x->rank_host[0]]);
  for (r = 0; r < x->nrank; r++) {
    if (x->rank_host[r] != sc->h)
      continue;
    for (q = 0; q < nv && vis[q] != x->rank_gpu[r]; q++)
      ;
    fprintf(f,
            "RANK=%d LOCAL_RANK=%d \"$@\" &  # device %d, GPU %d\n"
            "pids=\"$pids $!\"\n",
            (int)r, (int)q, (int)x->rank_dev[r], (int)x->rank_gpu[r]);
  }
  fputs("status=0\nfor p in $pids; do wait \"$p\" || status=$?; done\n"
        "exit \"$status\"\n",
        f);
}

pp_status pp_launch_write_hostfile(pp_ctx *ctx, const pp_launch *x,
                                   const char *path, FILE *f)
{
  if (!ctx)
    return PP_EINVAL;
  if (!x || (!path && !f))
    return ppi_fail(ctx, PP_EINVAL, "pp_launch_write_hostfile: NULL argument");
  return ppi_emit(ctx, path, f, emit_hostfile, x);
}

pp_status pp_launch_write_script(pp_ctx *ctx, const pp_launch *x, int32_t h,
                                 const char *path, FILE *f)
{
  struct script sc;
  if (!ctx)
    return PP_EINVAL;
  if (!x || h < 0 || h >= x->nhost || (!path && !f))
    return ppi_fail(ctx, PP_EINVAL, "pp_launch_write_script: bad argument");
  sc.x = x;
  sc.h = h;
  return ppi_emit(ctx, path, f, emit_script, &sc);
}

/* SPDX-License-Identifier: MIT */
/*
** The plan object: its builder, its queries and the names of its enums.
**
** A finished plan is immutable and lives in one arena: stages as a CSR
** of operator indices, replicas as a CSR per stage, and per replica the
** device indices of its tensor-parallel group, as many as its stage's
** tp (a CSR too: stages may differ).  The builder checks only what needs
*neither the
** model nor the cluster; pp_plan_check (plan_check.c) does the rest, so
** a plan can be read before the model it refers to is known.
*/
#include "plan/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pp_plan_builder {
  pp_ctx *ctx;
  struct pp_plan *p;
  struct ppi_vec ops;      /* int32: every stage's operators, in order */
  struct ppi_vec op_end;   /* int32: end of stage s in ops */
  struct ppi_vec reps;     /* struct rep */
  struct ppi_vec devs;     /* int32: the stage's tp per replica */
  struct ppi_vec stp;      /* int32 per stage: its tp */
  struct ppi_vec inflight; /* int32 per stage, 0: the schedule's */
  struct ppi_vec pat;      /* 4 doubles per stage, NaN: none */
  pp_status failed;        /* the first failed call's status, or PP_OK */
};

struct rep {
  int32_t stage, first; /* first device in devs */
  int32_t tp;
};

static const char *const sched_names[] = {"gpipe", "1f1b", "1f1b-star"};
static const char *const opt_names[] = {"sgd", "adam", "adam-mixed", "2bw"};
static const double opt_factor[] = {2.0, 4.0, 8.0, 3.0};
static const char *const task_names[] = {
    "forward",   "recompute", "backward", "send-activation",
    "send-grad", "allreduce", "update"};

const char *pp_schedule_name(pp_schedule s)
{
  return ppi_enum_name(sched_names, PPI_COUNT(sched_names), (int)s);
}

pp_status pp_schedule_parse(const char *name, pp_schedule *out)
{
  int v;
  pp_status rc = ppi_enum_parse(sched_names, PPI_COUNT(sched_names), name, &v);
  if (rc == PP_OK)
    *out = (pp_schedule)v;
  return rc;
}

static const char *const engine_names[] = {"generic", "deepspeed", "megatron",
                                           "torch"};

const char *pp_engine_name(pp_engine e)
{
  return ppi_enum_name(engine_names, PPI_COUNT(engine_names), (int)e);
}

pp_status pp_engine_parse(const char *name, pp_engine *out)
{
  int v;
  pp_status rc =
      ppi_enum_parse(engine_names, PPI_COUNT(engine_names), name, &v);
  if (rc == PP_OK)
    *out = (pp_engine)v;
  return rc;
}

/* The ZeRO stages each engine runs (docs/FORMATS.md, "Plan JSON"), from
** the engines' sources:
**   deepspeed: its PipelineEngine asserts "ZeRO-2 and ZeRO-3 are
**     incompatible with pipeline parallelism"
**     (microsoft/DeepSpeed@38327e07 deepspeed/runtime/pipe/engine.py:77),
**     so 0 or 1 with more than one stage; one stage runs on the plain
**     DeepSpeedEngine, which takes 0 to 3
**     (deepspeed/runtime/zero/config.py:91 @38327e07);
**   megatron: 0, or 1 with --use-distributed-optimizer
**     (NVIDIA/Megatron-LM@d98e8a64 megatron/training/arguments.py:3156);
**     its FSDP modes are not modelled;
**   torch: 0 (DDP), 2 or 3: FSDP2's fully_shard with
**     reshard_after_forward False (unsharded parameters kept from forward
**     to backward: ZeRO-2) or True (ZeRO-3)
**     (pytorch/pytorch@1d2fbd40, _fully_shard.py:90 in
**     torch/distributed/fsdp/_fully_shard/);
**   generic: any stage. */
unsigned ppi_engine_zero_mask(pp_engine e, int32_t pp)
{
  switch (e) {
  case PP_ENGINE_DEEPSPEED: return pp > 1 ? 0x3u : 0xfu;
  case PP_ENGINE_MEGATRON: return 0x3u;
  case PP_ENGINE_TORCH: return 0x1u | 0x4u | 0x8u;
  case PP_ENGINE_GENERIC: return 0xfu;
  }
  return 0;
}

pp_status ppi_engine_zero_check(pp_ctx *ctx, const char *src, long line,
                                pp_engine e, int32_t zero, int32_t pp)
{
  unsigned mask = ppi_engine_zero_mask(e, pp);
  char words[32];
  int z, k = 0, cnt = 0, at = 0;
  if (zero >= 0 && zero < 4 && ((mask >> zero) & 1u))
    return PP_OK;
  for (z = 0; z < 4; z++)
    cnt += (mask >> z) & 1u;
  words[0] = '\0';
  for (z = 0; z < 4; z++) /* "0, 2 or 3" */
    if ((mask >> z) & 1u) {
      k++;
      at += snprintf(words + at, sizeof words - (size_t)at, "%s%d",
                     k == 1     ? ""
                     : k == cnt ? " or "
                                : ", ",
                     z);
    }
  return ppi_fail_at(ctx, PP_EINPUT, src, line, 0,
                     "engine %s cannot run ZeRO stage %d with %d pipeline "
                     "stage%s; it takes %s (docs/FORMATS.md, \"Plan JSON\")",
                     pp_engine_name(e), (int)zero, (int)pp, pp == 1 ? "" : "s",
                     words);
}

const char *pp_optimizer_name(pp_optimizer o)
{
  return ppi_enum_name(opt_names, PPI_COUNT(opt_names), (int)o);
}

pp_status pp_optimizer_parse(const char *name, pp_optimizer *out)
{
  int v;
  pp_status rc = ppi_enum_parse(opt_names, PPI_COUNT(opt_names), name, &v);
  if (rc == PP_OK)
    *out = (pp_optimizer)v;
  return rc;
}

double pp_optimizer_factor(pp_optimizer o)
{
  return (unsigned)o < PPI_COUNT(opt_factor) ? opt_factor[o] : 0.0;
}

const char *pp_task_kind_name(pp_task_kind k)
{
  return ppi_enum_name(task_names, PPI_COUNT(task_names), (int)k);
}

void pp_plan_params_init(pp_plan_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->micro_batch = 1;
  p->tp = 1;
  p->schedule = PP_SCHED_1F1B;
  p->optimizer = PP_OPT_ADAM_MIXED;
}

static pp_status check_params(pp_ctx *ctx, const char *src,
                              const pp_plan_params *p)
{
  if (p->global_batch <= 0)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "global batch %lld must be positive",
                       (long long)p->global_batch);
  if (p->micro_batch <= 0)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "micro-batch size %d must be positive",
                       (int)p->micro_batch);
  if (p->tp <= 0 || p->tp > PP_MAX_DEVICES)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "tensor-parallel degree %d must be in 1..%d", (int)p->tp,
                       PP_MAX_DEVICES);
  if (!pp_schedule_name(p->schedule))
    return ppi_fail_at(ctx, PP_EINVAL, src, 0, 0, "unknown schedule %d",
                       (int)p->schedule);
  if (!pp_optimizer_name(p->optimizer))
    return ppi_fail_at(ctx, PP_EINVAL, src, 0, 0, "unknown optimizer %d",
                       (int)p->optimizer);
  if (!pp_precision_name(p->precision))
    return ppi_fail_at(ctx, PP_EINVAL, src, 0, 0, "unknown precision %d",
                       (int)p->precision);
  if (!pp_engine_name(p->engine))
    return ppi_fail_at(ctx, PP_EINVAL, src, 0, 0, "unknown engine %d",
                       (int)p->engine);
  if (p->zero < 0 || p->zero > 3)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "ZeRO stage %d must be 0, 1, 2 or 3", (int)p->zero);
  if (!(p->period_ms >= 0) || !isfinite(p->period_ms))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "period_ms must be a finite number >= 0");
  if (p->micro_batches < 0)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "micro_batches %d must be positive",
                       (int)p->micro_batches);
  if (p->global_batch % p->micro_batch != 0)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "micro-batch size %d does not divide the global "
                       "batch %lld",
                       (int)p->micro_batch, (long long)p->global_batch);
  return PP_OK;
}

pp_status pp_plan_builder_create(pp_ctx *ctx, const pp_plan_params *p,
                                 const char *source, pp_plan_builder **out)
{
  pp_plan_builder *b;
  struct pp_plan *pl;
  pp_status rc;

  if (!ctx || !p || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL,
                          "pp_plan_builder_create: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  if ((rc = check_params(ctx, source ? source : "plan", p)))
    return rc;
  if (!(b = ppi_calloc(ctx, 1, sizeof *b)))
    return PP_ENOMEM;
  if (!(pl = ppi_calloc(ctx, 1, sizeof *pl))) {
    ppi_free(ctx, b, sizeof *b);
    return PP_ENOMEM;
  }
  ppi_arena_init(&pl->arena, ppi_ctx_alloc(ctx));
  b->ctx = ctx;
  b->p = pl;
  pl->p = *p;
  ppi_vec_init(&b->ops, sizeof(int32_t));
  ppi_vec_init(&b->op_end, sizeof(int32_t));
  ppi_vec_init(&b->reps, sizeof(struct rep));
  ppi_vec_init(&b->devs, sizeof(int32_t));
  ppi_vec_init(&b->stp, sizeof(int32_t));
  ppi_vec_init(&b->inflight, sizeof(int32_t));
  ppi_vec_init(&b->pat, 4 * sizeof(double));
  if (!(pl->source =
            ppi_arena_name(&pl->arena, ctx, source ? source : "plan"))) {
    pp_plan_builder_destroy(b);
    return PP_ENOMEM;
  }
  *out = b;
  return PP_OK;
}

void pp_plan_builder_destroy(pp_plan_builder *b)
{
  pp_ctx *ctx;
  if (!b)
    return;
  ctx = b->ctx;
  ppi_vec_free(ctx, &b->ops);
  ppi_vec_free(ctx, &b->op_end);
  ppi_vec_free(ctx, &b->reps);
  ppi_vec_free(ctx, &b->devs);
  ppi_vec_free(ctx, &b->stp);
  ppi_vec_free(ctx, &b->inflight);
  ppi_vec_free(ctx, &b->pat);
  pp_plan_destroy(b->p);
  ppi_free(ctx, b, sizeof *b);
}

static pp_status bfail(pp_plan_builder *b, pp_status rc)
{
  if (!b->failed)
    b->failed = rc;
  return rc;
}

pp_status pp_plan_builder_add_stage(pp_plan_builder *b, const int32_t *ops,
                                    int32_t nops, int32_t *id)
{
  int32_t i, end, s;
  pp_status rc;

  if (!b)
    return PP_EINVAL;
  s = (int32_t)b->op_end.n;
  if (!ops && nops > 0)
    return bfail(b, ppi_fail(b->ctx, PP_EINVAL,
                             "pp_plan_builder_add_stage: NULL operators"));
  if (nops <= 0)
    return bfail(b, ppi_fail_at(b->ctx, PP_EINPUT, b->p->source, 0, 0,
                                "stage %d has no operators", (int)s));
  if (s >= PPI_MAX_PLAN_STAGES)
    return bfail(b, ppi_fail_at(b->ctx, PP_ELIMIT, b->p->source, 0, 0,
                                "more than %d stages", PPI_MAX_PLAN_STAGES));
  for (i = 0; i < nops; i++) {
    if (ops[i] < 0 || ops[i] >= PP_MAX_OPS)
      return bfail(b, ppi_fail_at(b->ctx, PP_EINPUT, b->p->source, 0, 0,
                                  "stage %d: operator index %d is out of "
                                  "range",
                                  (int)s, (int)ops[i]));
    if ((rc = ppi_vec_push(b->ctx, &b->ops, &ops[i])))
      return bfail(b, rc);
  }
  end = (int32_t)b->ops.n;
  if ((rc = ppi_vec_push(b->ctx, &b->op_end, &end)) ||
      (rc = ppi_vec_push(b->ctx, &b->inflight, &(int32_t){0})) ||
      (rc = ppi_vec_push(b->ctx, &b->stp, &b->p->p.tp)) ||
      (rc = ppi_vec_push(b->ctx, &b->pat, (double[4]){NAN, NAN, NAN, NAN})))
    return bfail(b, rc);
  if (id)
    *id = s;
  return PP_OK;
}

pp_status pp_plan_builder_set_in_flight(pp_plan_builder *b, int32_t s,
                                        int32_t n)
{
  if (!b)
    return PP_EINVAL;
  if (s < 0 || s >= (int32_t)b->op_end.n)
    return bfail(b, ppi_fail_at(b->ctx, PP_EINVAL, b->p->source, 0, 0,
                                "in-flight count of unknown stage %d", (int)s));
  if (n < 1)
    return bfail(b, ppi_fail_at(b->ctx, PP_EINPUT, b->p->source, 0, 0,
                                "stage %d: in-flight count %d must be at "
                                "least 1",
                                (int)s, (int)n));
  PPI_VEC_AT(&b->inflight, int32_t, s) = n;
  return PP_OK;
}

pp_status pp_plan_builder_set_pattern(pp_plan_builder *b, int32_t s,
                                      const double sigma[4])
{
  int k;
  if (!b)
    return PP_EINVAL;
  if (!sigma)
    return bfail(b, ppi_fail(b->ctx, PP_EINVAL,
                             "pp_plan_builder_set_pattern: NULL offsets"));
  if (s < 0 || s >= (int32_t)b->op_end.n)
    return bfail(b, ppi_fail_at(b->ctx, PP_EINVAL, b->p->source, 0, 0,
                                "pattern of unknown stage %d", (int)s));
  for (k = 0; k < 4; k++)
    if ((k < 2 || !isnan(sigma[k])) && (!isfinite(sigma[k]) || sigma[k] < 0))
      return bfail(b, ppi_fail_at(b->ctx, PP_EINPUT, b->p->source, 0, 0,
                                  "stage %d: pattern offset %d is %g; offsets "
                                  "are finite and >= 0 (the transfers' may "
                                  "be null)",
                                  (int)s, k, sigma[k]));
  if (sigma[1] < sigma[0])
    return bfail(b, ppi_fail_at(b->ctx, PP_EINPUT, b->p->source, 0, 0,
                                "stage %d: the pattern's backward (%g ms) "
                                "comes before its forward (%g ms)",
                                (int)s, sigma[1], sigma[0]));
  memcpy((double *)b->pat.data + 4 * (size_t)s, sigma, 4 * sizeof(double));
  return PP_OK;
}

pp_status pp_plan_builder_set_stage_tp(pp_plan_builder *b, int32_t s,
                                       int32_t tp)
{
  size_t q;
  if (!b)
    return PP_EINVAL;
  if (s < 0 || s >= (int32_t)b->op_end.n)
    return bfail(b, ppi_fail_at(b->ctx, PP_EINVAL, b->p->source, 0, 0,
                                "tp degree of unknown stage %d", (int)s));
  if (tp <= 0 || tp > PP_MAX_DEVICES)
    return bfail(b, ppi_fail_at(b->ctx, PP_EINPUT, b->p->source, 0, 0,
                                "stage %d: tensor-parallel degree %d must be "
                                "in 1..%d",
                                (int)s, (int)tp, PP_MAX_DEVICES));
  for (q = 0; q < b->reps.n; q++)
    if (PPI_VEC_AT(&b->reps, struct rep, q).stage == s)
      return bfail(b, ppi_fail_at(b->ctx, PP_EINVAL, b->p->source, 0, 0,
                                  "stage %d: its tp degree is set after its "
                                  "replicas were added",
                                  (int)s));
  PPI_VEC_AT(&b->stp, int32_t, s) = tp;
  return PP_OK;
}

pp_status pp_plan_builder_add_replica(pp_plan_builder *b, int32_t s,
                                      const int32_t *devs)
{
  struct rep r;
  int32_t k, tp;
  pp_status rc;

  if (!b)
    return PP_EINVAL;
  if (!devs)
    return bfail(b, ppi_fail(b->ctx, PP_EINVAL,
                             "pp_plan_builder_add_replica: NULL devices"));
  if (s < 0 || s >= (int32_t)b->op_end.n)
    return bfail(b, ppi_fail_at(b->ctx, PP_EINVAL, b->p->source, 0, 0,
                                "replica added to unknown stage %d", (int)s));
  tp = PPI_VEC_AT(&b->stp, int32_t, s);
  if (b->reps.n >= PPI_MAX_PLAN_REPLICAS)
    return bfail(b,
                 ppi_fail_at(b->ctx, PP_ELIMIT, b->p->source, 0, 0,
                             "more than %d replicas", PPI_MAX_PLAN_REPLICAS));
  for (k = 0; k < tp; k++)
    if (devs[k] < 0 || devs[k] >= PP_MAX_DEVICES)
      return bfail(b, ppi_fail_at(b->ctx, PP_EINPUT, b->p->source, 0, 0,
                                  "stage %d: device index %d is out of range",
                                  (int)s, (int)devs[k]));
  r.stage = s;
  r.tp = tp;
  r.first = (int32_t)b->devs.n;
  for (k = 0; k < tp; k++)
    if ((rc = ppi_vec_push(b->ctx, &b->devs, &devs[k])))
      return bfail(b, rc);
  if ((rc = ppi_vec_push(b->ctx, &b->reps, &r)))
    return bfail(b, rc);
  return PP_OK;
}

static int cmp_i32(const void *x, const void *y)
{
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

/* Structural checks on the frozen arrays. */
static pp_status check_frozen(pp_ctx *ctx, struct pp_plan *p)
{
  int32_t s, q, k, maxn = 0;
  int32_t *tmp;
  pp_status rc = PP_OK;

  if (p->nstage == 0)
    return ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                       "the plan has no stages");
  if ((rc = ppi_engine_zero_check(ctx, p->source, 0, p->p.engine, p->p.zero,
                                  p->nstage)))
    return rc;
  {
    /* a periodic pattern: on every stage or none, with a period and one
    ** replica per stage */
    int32_t with = 0;
    for (s = 0; s < p->nstage; s++)
      with += !isnan(p->pat[4 * (size_t)s]);
    if (with > 0 && with < p->nstage)
      return ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                         "%d of %d stages have a pattern; give every stage "
                         "one, or none",
                         (int)with, (int)p->nstage);
    if (with > 0 && !(p->p.period_ms > 0))
      return ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                         "the stages have a pattern but the plan no "
                         "period_ms");
    for (s = 0; with > 0 && s < p->nstage; s++)
      if (p->rep_off[s + 1] - p->rep_off[s] != 1)
        return ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                           "stage %d: a pattern needs one replica per stage, "
                           "not %d",
                           (int)s, (int)(p->rep_off[s + 1] - p->rep_off[s]));
    p->pattern = with > 0;
  }
  for (s = 0; s < p->nstage; s++) {
    int32_t nrep = p->rep_off[s + 1] - p->rep_off[s], tp = p->stp[s];
    if (nrep == 0)
      return ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                         "stage %d has no replicas", (int)s);
    if (nrep * tp > maxn)
      maxn = nrep * tp;
    if (p->p.global_batch % ((int64_t)p->p.micro_batch * nrep) != 0)
      return ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                         "stage %d: the global batch %lld is not divided by "
                         "its %d replicas x micro-batch size %d",
                         (int)s, (long long)p->p.global_batch, (int)nrep,
                         (int)p->p.micro_batch);
    if (p->p.micro_batches > 0 &&
        p->p.global_batch / ((int64_t)p->p.micro_batch * nrep) !=
            p->p.micro_batches)
      return ppi_fail_at(
          ctx, PP_EINPUT, p->source, 0, 0,
          "stage %d: micro_batches %d disagrees with global "
          "batch %lld / (micro-batch %d x %d replicas) = %lld",
          (int)s, (int)p->p.micro_batches, (long long)p->p.global_batch,
          (int)p->p.micro_batch, (int)nrep,
          (long long)(p->p.global_batch / ((int64_t)p->p.micro_batch * nrep)));
  }
  if (!(tmp = ppi_alloc(ctx, (size_t)maxn * sizeof *tmp)))
    return PP_ENOMEM;
  for (s = 0; s < p->nstage && !rc; s++) {
    int32_t first = p->rep_off[s], tp = p->stp[s],
            n = (p->rep_off[s + 1] - first) * tp;
    memcpy(tmp, p->dev + p->dev_off[first], (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_i32);
    for (k = 1; k < n && !rc; k++)
      if (tmp[k] == tmp[k - 1]) {
        int32_t d = tmp[k], where[2] = {0, 0}, nw = 0;
        for (q = first; q < p->rep_off[s + 1] && nw < 2; q++)
          for (int32_t j = 0; j < tp; j++)
            if (p->dev[p->dev_off[q] + j] == d && nw < 2)
              where[nw++] = q - first;
        if (nw < 2 || where[0] == where[1])
          rc = ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                           "stage %d: device %d appears twice in replica %d "
                           "(its tensor-parallel group); a device runs a stage "
                           "once",
                           (int)s, (int)d, (int)where[0]);
        else
          rc = ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                           "stage %d: device %d appears twice (replicas %d "
                           "and %d); a device runs a stage once",
                           (int)s, (int)d, (int)where[0], (int)where[1]);
      }
  }
  ppi_free(ctx, tmp, (size_t)maxn * sizeof *tmp);
  return rc;
}

pp_status pp_plan_builder_finish(pp_plan_builder *b, pp_plan **out)
{
  pp_ctx *ctx;
  struct pp_plan *p;
  pp_status rc;
  int32_t s, q, nrep;
  size_t nops, ndev;

  if (!b)
    return PP_EINVAL;
  ctx = b->ctx;
  p = b->p;
  if (!out) {
    pp_plan_builder_destroy(b);
    return ppi_fail(ctx, PP_EINVAL, "pp_plan_builder_finish: NULL out");
  }
  *out = NULL;
  if (b->failed) {
    /* The failed call recorded its message; this one is kept only when
    ** the caller cleared that one since. */
    rc = b->failed;
    ppi_fail_at(ctx, rc, p->source, 0, 0,
                "the plan was not built: an earlier call to the "
                "builder failed (%s)",
                pp_status_str(rc));
    pp_plan_builder_destroy(b);
    return rc;
  }
  p->nstage = (int32_t)b->op_end.n;
  nrep = (int32_t)b->reps.n;
  nops = b->ops.n;
  ndev = b->devs.n;
  p->op_off =
      ppi_arena_alloc(&p->arena, ctx, (size_t)p->nstage + 1, sizeof(int32_t));
  p->ops = ppi_arena_alloc(&p->arena, ctx, nops ? nops : 1, sizeof(int32_t));
  p->rep_off =
      ppi_arena_alloc(&p->arena, ctx, (size_t)p->nstage + 1, sizeof(int32_t));
  p->dev = ppi_arena_alloc(&p->arena, ctx, ndev ? ndev : 1, sizeof(int32_t));
  p->dev_off =
      ppi_arena_alloc(&p->arena, ctx, (size_t)nrep + 1, sizeof(int32_t));
  p->stp = ppi_arena_alloc(&p->arena, ctx, (size_t)(p->nstage ? p->nstage : 1),
                           sizeof(int32_t));
  p->inflight = ppi_arena_alloc(
      &p->arena, ctx, (size_t)(p->nstage ? p->nstage : 1), sizeof(int32_t));
  p->pat = ppi_arena_alloc(
      &p->arena, ctx, 4 * (size_t)(p->nstage ? p->nstage : 1), sizeof(double));
  if (!p->op_off || !p->ops || !p->rep_off || !p->dev || !p->inflight ||
      !p->pat || !p->dev_off || !p->stp) {
    pp_plan_builder_destroy(b);
    return PP_ENOMEM;
  }
  for (s = 0; s < p->nstage; s++) {
    p->op_off[s + 1] = PPI_VEC_AT(&b->op_end, int32_t, s);
    p->inflight[s] = PPI_VEC_AT(&b->inflight, int32_t, s);
    p->stp[s] = PPI_VEC_AT(&b->stp, int32_t, s);
    memcpy(p->pat + 4 * (size_t)s, (double *)b->pat.data + 4 * (size_t)s,
           4 * sizeof(double));
  }
  if (nops)
    memcpy(p->ops, b->ops.data, nops * sizeof(int32_t));
  /* Replicas were added in any stage order: group them by stage, keeping
  ** each stage's own order (a counting sort). */
  for (q = 0; q < nrep; q++)
    p->rep_off[PPI_VEC_AT(&b->reps, struct rep, q).stage + 1]++;
  for (s = 0; s < p->nstage; s++)
    p->rep_off[s + 1] += p->rep_off[s];
  {
    int32_t *fill = ppi_calloc(ctx, (size_t)p->nstage + 1, sizeof *fill);
    if (!fill) {
      pp_plan_builder_destroy(b);
      return PP_ENOMEM;
    }
    p->dev_off[0] = 0;
    for (s = 0; s < p->nstage; s++)
      for (q = p->rep_off[s]; q < p->rep_off[s + 1]; q++)
        p->dev_off[q + 1] = p->dev_off[q] + p->stp[s];
    for (q = 0; q < nrep; q++) {
      struct rep r = PPI_VEC_AT(&b->reps, struct rep, q);
      int32_t slot = p->rep_off[r.stage] + fill[r.stage]++;
      memcpy(p->dev + p->dev_off[slot], (int32_t *)b->devs.data + r.first,
             (size_t)r.tp * sizeof(int32_t));
    }
    ppi_free(ctx, fill, ((size_t)p->nstage + 1) * sizeof *fill);
  }
  /* the plan-wide tp is its first stage's, so that a plan whose stages
  ** all set one degree reads as a plan of that degree */
  if (p->nstage > 0)
    p->p.tp = p->stp[0];
  b->p = NULL;
  pp_plan_builder_destroy(b);
  if ((rc = check_frozen(ctx, p))) {
    pp_plan_destroy(p);
    return rc;
  }
  *out = p;
  return PP_OK;
}

void pp_plan_destroy(pp_plan *p)
{
  if (p)
    ppi_arena_free_owner(&p->arena, p, sizeof *p);
}

void pp_plan_get_params(const pp_plan *p, pp_plan_params *out)
{
  if (p && out)
    *out = p->p;
}

const char *pp_plan_source(const pp_plan *p)
{
  return p ? p->source : NULL;
}

int pp_plan_stage_pattern(const pp_plan *p, int32_t s, double sigma[4])
{
  if (!p || s < 0 || s >= p->nstage || isnan(p->pat[4 * (size_t)s]))
    return 0;
  if (sigma)
    memcpy(sigma, p->pat + 4 * (size_t)s, 4 * sizeof(double));
  return 1;
}

int32_t pp_plan_stage_in_flight(const pp_plan *p, int32_t s)
{
  return p && s >= 0 && s < p->nstage ? p->inflight[s] : 0;
}

int32_t pp_plan_nstage(const pp_plan *p)
{
  return p ? p->nstage : 0;
}

const int32_t *pp_plan_stage_ops(const pp_plan *p, int32_t s, int32_t *n)
{
  if (!p || s < 0 || s >= p->nstage) {
    if (n)
      *n = 0;
    return NULL;
  }
  if (n)
    *n = p->op_off[s + 1] - p->op_off[s];
  return p->ops + p->op_off[s];
}

int32_t pp_plan_nreplica(const pp_plan *p, int32_t s)
{
  return p && s >= 0 && s < p->nstage ? p->rep_off[s + 1] - p->rep_off[s] : 0;
}

const int32_t *pp_plan_replica(const pp_plan *p, int32_t s, int32_t r)
{
  if (!p || r < 0 || r >= pp_plan_nreplica(p, s))
    return NULL;
  return p->dev + p->dev_off[p->rep_off[s] + r];
}

int32_t pp_plan_stage_tp(const pp_plan *p, int32_t s)
{
  return p && s >= 0 && s < p->nstage ? p->stp[s] : 0;
}

int32_t pp_plan_uniform_tp(const pp_plan *p)
{
  int32_t s;
  if (!p || p->nstage == 0)
    return 0;
  for (s = 1; s < p->nstage; s++)
    if (p->stp[s] != p->stp[0])
      return 0;
  return p->stp[0];
}

int32_t ppi_plan_rep_stage(const struct pp_plan *p, int32_t q)
{
  int32_t lo = 0, hi = p->nstage - 1;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo + 1) / 2;
    if (p->rep_off[mid] <= q)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

int64_t pp_plan_stage_micro_batches(const pp_plan *p, int32_t s)
{
  int32_t r = pp_plan_nreplica(p, s);
  return r ? p->p.global_batch / ((int64_t)p->p.micro_batch * r) : 0;
}

int32_t ppi_plan_max_device(const struct pp_plan *p)
{
  int32_t m = -1;
  size_t i, n = (size_t)p->dev_off[p->rep_off[p->nstage]];
  for (i = 0; i < n; i++)
    if (p->dev[i] > m)
      m = p->dev[i];
  return m;
}

/* A copy of p's stages, replicas and schedule fields under the run
** settings q, every stage at degree tp (its first devices), or each at its
** own (tp 0). */
static pp_status rebuild(pp_ctx *ctx, const pp_plan *p, const pp_plan_params *q,
                         int32_t tp, pp_plan **out)
{
  pp_plan_builder *b;
  int32_t s, r, id;
  pp_status rc;
  if ((rc = pp_plan_builder_create(ctx, q, p->source, &b)))
    return rc;
  for (s = 0; s < p->nstage && !rc; s++) {
    rc = pp_plan_builder_add_stage(b, p->ops + p->op_off[s],
                                   p->op_off[s + 1] - p->op_off[s], &id);
    if (!rc)
      rc = pp_plan_builder_set_stage_tp(b, id, tp ? tp : p->stp[s]);
    for (r = p->rep_off[s]; r < p->rep_off[s + 1] && !rc; r++)
      rc = pp_plan_builder_add_replica(b, id, p->dev + p->dev_off[r]);
    if (!rc && p->inflight[s] > 0)
      rc = pp_plan_builder_set_in_flight(b, id, p->inflight[s]);
    if (!rc && !isnan(p->pat[4 * (size_t)s]))
      rc = pp_plan_builder_set_pattern(b, id, p->pat + 4 * (size_t)s);
  }
  if (rc) {
    pp_plan_builder_destroy(b);
    return rc;
  }
  return pp_plan_builder_finish(b, out);
}

pp_status ppi_plan_with_params(pp_ctx *ctx, const pp_plan *p,
                               const pp_plan_params *q, pp_plan **out)
{
  *out = NULL;
  if (q->global_batch != p->p.global_batch ||
      q->micro_batch != p->p.micro_batch)
    return ppi_fail(ctx, PP_EINVAL,
                    "ppi_plan_with_params: the batch sizes are the plan's");
  return rebuild(ctx, p, q, 0, out);
}

pp_status ppi_plan_one_tp(pp_ctx *ctx, const pp_plan *p, int32_t tp,
                          pp_plan **out)
{
  int32_t s;
  *out = NULL;
  for (s = 0; s < p->nstage; s++)
    if (p->stp[s] < tp)
      return ppi_fail(ctx, PP_EINVAL,
                      "ppi_plan_one_tp: stage %d has fewer than %d devices "
                      "per replica",
                      (int)s, (int)tp);
  return rebuild(ctx, p, &p->p, tp, out);
}

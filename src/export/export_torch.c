/* SPDX-License-Identifier: MIT */
/*
** Export a plan to torch.distributed.pipelining (PyTorch >= 2.4) and
** torchtitan (docs/ECOSYSTEM.md 3.3):
**
**   pp_schedule.csv  the schedule in PipelineScheduleMulti's
**                    "compute_only" format: one row per pipeline rank,
**                    its actions in order, "<stage>F<mb>" / "<stage>B<mb>"
**                    (torch/distributed/pipelining/schedules.py, _Action
**                    and _load_csv; the stage -> rank map is inferred from
**                    the rows).  The order is the one our simulator ran,
**                    so GPipe, 1F1B, 1F1B* and a rank holding several
**                    stages (MadPipe's special processor) are all what the
**                    plan predicted;
**   pp_stages.py     the module FQNs of every stage (the operators'
**                    names), the split_spec for pipeline(), the stage ->
**                    rank map and the micro-batch counts; in comments,
**                    the data parallelism and precision of the plan's
**                    ZeRO stage (DDP, or FSDP2 with its reshard and
**                    MixedPrecisionPolicy);
**   torchtitan.toml  the [parallelism] and [training] settings:
**                    pipeline degree, module_fqns_per_model_part, the CSV,
**                    micro-batch size, tensor and data-parallel degrees,
**                    batch sizes, activation checkpointing.
**
** The CSV describes one pipeline (replica 0 of every stage): data-
** parallel replicas run the same order.  Local micro-batch i of replica r
** of stage s is the simulator's global micro-batch r + i R_s.
**
** Warnings: different replica counts per stage (torch's data parallelism
** is one mesh dimension), stages that are not runs of the model's order
** (torchtitan keeps each stage's modules and runs them in forward
** order), a stage -> rank map other than torchtitan's "loop" placement
** (stage s on rank s mod P), tensor-parallel groups across nodes or
** device types, a placement other than the mesh order (tp fastest, then
** data, then pipeline).
**
** Complexity: one simulation with events recorded, then O(events).
*/
#include "export/export.h"

#include <string.h>

/* The pipeline rank of every stage: the devices of replica 0's tp rank 0,
** numbered in order of their first stage.  Returns the number of ranks. */
static int32_t stage_ranks(const pp_plan *p, int32_t *rank_of, int32_t *dev_of)
{
  int32_t s, t, P = 0;
  for (s = 0; s < p->nstage; s++) {
    dev_of[s] = p->dev[(size_t)p->rep_off[s] * p->p.tp];
    for (t = 0; t < s && dev_of[t] != dev_of[s]; t++)
      ;
    rank_of[s] = t < s ? rank_of[t] : P++;
  }
  return P;
}

/* The CSV: every rank's compute actions of replica 0, in simulated
** order. */
static pp_status schedule_csv(pp_ctx *ctx, const pp_sim *sim, const pp_plan *p,
                              const int32_t *rank_of, const int32_t *dev_of,
                              int32_t P, struct ppi_sbuf *out)
{
  struct ppi_sbuf *rows;
  int64_t i, n = pp_sim_nevent(sim);
  int32_t r;
  pp_status rc = PP_OK;

  if (!(rows = ppi_calloc(ctx, (size_t)P, sizeof *rows)))
    return PP_ENOMEM;
  for (r = 0; r < P; r++)
    ppi_sb_init(&rows[r], ctx);
  for (i = 0; i < n; i++) {
    pp_sim_event e;
    int32_t Rs;
    struct ppi_sbuf *row;
    pp_sim_event_get(sim, i, &e);
    if ((e.kind != PP_TASK_FWD && e.kind != PP_TASK_BWD) || e.replica != 0 ||
        e.device != dev_of[e.stage])
      continue;
    Rs = p->rep_off[e.stage + 1] - p->rep_off[e.stage];
    row = &rows[rank_of[e.stage]];
    ppi_sb_printf(row, "%s%d%c%lld", row->n ? "," : "", (int)e.stage,
                  e.kind == PP_TASK_FWD ? 'F' : 'B',
                  (long long)(e.micro_batch / Rs));
  }
  for (r = 0; r < P; r++) {
    if (rows[r].rc && !rc)
      rc = rows[r].rc;
    if (rows[r].s)
      ppi_sb_puts(out, rows[r].s);
    ppi_sb_puts(out, "\n");
    ppi_sb_free(&rows[r]);
  }
  ppi_free(ctx, rows, (size_t)P * sizeof *rows);
  return rc ? rc : out->rc;
}

/* One stage's module names as a list literal. */
static void stage_list(struct ppi_sbuf *b, const pp_plan *p, const pp_model *m,
                       const struct ppi_stage_ops *o, int32_t s)
{
  int32_t i;
  ppi_sb_puts(b, "[");
  for (i = p->op_off[s]; i < p->op_off[s + 1]; i++) {
    pp_op_desc d;
    pp_model_op(m, o->ord[i], &d);
    if (i > p->op_off[s])
      ppi_sb_puts(b, ", ");
    ppi_sb_quote(b, d.name);
  }
  ppi_sb_puts(b, "]");
}

/* How the plan's data parallelism and precision are set up, in comments:
** ZeRO stage 0 is DDP; 2 and 3 are FSDP2's fully_shard with
** reshard_after_forward False and True
** (pytorch/pytorch@1d2fbd40, _fully_shard.py:90 in
** torch/distributed/fsdp/_fully_shard/),
** its precision through MixedPrecisionPolicy(param_dtype=...)
** (torch/distributed/fsdp/_fully_shard/_fsdp_api.py:50 @05f814fe);
** under DDP, autocast. */
static void data_parallel_note(struct ppi_sbuf *b, const pp_plan *p,
                               pp_precision prec)
{
  static const char *const dtype[] = {"", "torch.float32", "torch.float16",
                                      "torch.bfloat16"};
  ppi_sb_printf(b,
                "#\n# Precision %s, ZeRO stage %d: ", pp_precision_name(prec),
                (int)p->p.zero);
  if (p->p.zero >= 2)
    ppi_sb_printf(b,
                  "shard every stage's modules with FSDP2 over\n"
                  "# the data-parallel mesh,\n"
                  "#   fully_shard(module, mesh=dp_mesh, "
                  "reshard_after_forward=%s,\n"
                  "#               mp_policy=MixedPrecisionPolicy("
                  "param_dtype=%s))\n",
                  p->p.zero == 3 ? "True" : "False", dtype[prec]);
  else if (prec == PP_PREC_FP32)
    ppi_sb_puts(b, "wrap every stage's module in\n"
                   "# DistributedDataParallel over the data-parallel "
                   "mesh, in fp32.\n");
  else
    ppi_sb_printf(b,
                  "wrap every stage's module in\n"
                  "# DistributedDataParallel over the data-parallel mesh and "
                  "run it under\n"
                  "#   torch.autocast(\"cuda\", dtype=%s)%s\n",
                  dtype[prec],
                  prec == PP_PREC_FP16 ? " with a GradScaler" : "");
}

static void stages_py(struct ppi_sbuf *b, const pp_plan *p, const pp_model *m,
                      const struct ppi_stage_ops *o, const int32_t *rank_of,
                      int32_t P)
{
  int32_t S = p->nstage, R = p->rep_off[1] - p->rep_off[0], s;
  int64_t gas = p->p.global_batch / ((int64_t)p->p.micro_batch * R);
  const char *src = pp_plan_source(p);
  ppi_sb_printf(
      b,
      "# parplan: torch.distributed.pipelining stages of the plan %s\n"
      "# model %s: %d stages on %d pipeline ranks, %d data-parallel "
      "replicas, tp %d;\n"
      "# micro-batch %d, %lld micro-batches per replica per step.\n"
      "#\n"
      "# Module FQNs are the model's operator names.  With the tracer:\n"
      "#   pipe = pipeline(model, mb_args=(x,), split_spec=SPLIT_SPEC)\n"
      "#   stage = pipe.build_stage(STAGE_INDEX, device, pp_group)\n"
      "# or build PipelineStage(submodule, s, NUM_STAGES, device) for every "
      "s\n"
      "# with STAGE_TO_RANK[s] == pp_rank; then run the plan's order:\n"
      "#   sched = PipelineScheduleMulti(stages, N_MICROBATCHES, "
      "loss_fn=...)\n"
      "#   sched._load_csv(SCHEDULE_CSV)   # internal API: pin PyTorch\n",
      src ? src : "(unnamed)", pp_model_name(m), (int)S, (int)P, (int)R,
      (int)p->p.tp, (int)p->p.micro_batch, (long long)gas);
  data_parallel_note(b, p, ppi_export_precision(p, m));
  ppi_sb_puts(b, "\nfrom torch.distributed.pipelining import SplitPoint\n\n");
  ppi_sb_puts(b, "# the modules of every stage, in the model's order\n"
                 "STAGE_MODULES = [\n");
  for (s = 0; s < S; s++) {
    ppi_sb_puts(b, "    ");
    stage_list(b, p, m, o, s);
    ppi_sb_puts(b, ",\n");
  }
  ppi_sb_puts(b, "]\n\n# split before the first module of every later "
                 "stage\nSPLIT_SPEC = {\n");
  for (s = 1; s < S; s++) {
    pp_op_desc d;
    pp_model_op(m, o->ord[p->op_off[s]], &d);
    ppi_sb_puts(b, "    ");
    ppi_sb_quote(b, d.name);
    ppi_sb_puts(b, ": SplitPoint.BEGINNING,\n");
  }
  ppi_sb_puts(b, "}\n\n# the pipeline rank of every stage (the CSV's "
                 "rows)\nSTAGE_TO_RANK = [");
  for (s = 0; s < S; s++)
    ppi_sb_printf(b, "%s%d", s ? ", " : "", (int)rank_of[s]);
  ppi_sb_printf(b,
                "]\n"
                "NUM_STAGES = %d\n"
                "PIPELINE_RANKS = %d\n"
                "DATA_PARALLEL = %d\n"
                "TENSOR_PARALLEL = %d\n"
                "MICROBATCH_SIZE = %d\n"
                "N_MICROBATCHES = %lld\n"
                "ACTIVATION_RECOMPUTATION = %s\n"
                "SCHEDULE_CSV = \"pp_schedule.csv\"\n",
                (int)S, (int)P, (int)R, (int)p->p.tp, (int)p->p.micro_batch,
                (long long)gas, p->p.recompute ? "True" : "False");
}

static void titan_toml(struct ppi_sbuf *b, const pp_plan *p, const pp_model *m,
                       const struct ppi_stage_ops *o, int32_t P)
{
  int32_t S = p->nstage, R = p->rep_off[1] - p->rep_off[0], s;
  const char *src = pp_plan_source(p);
  ppi_sb_printf(b,
                "# parplan: torchtitan settings of the plan %s (model %s)\n"
                "# merge into your job's TOML; run from the directory of "
                "pp_schedule.csv\n\n"
                "[parallelism]\n"
                "pipeline_parallel_degree = %d\n"
                "pipeline_parallel_schedule = \"PipelineScheduleMulti\"\n"
                "pipeline_parallel_schedule_csv = \"pp_schedule.csv\"\n"
                "pipeline_parallel_microbatch_size = %d\n"
                "module_fqns_per_model_part = [\n",
                src ? src : "(unnamed)", pp_model_name(m), (int)P,
                (int)p->p.micro_batch);
  for (s = 0; s < S; s++) {
    ppi_sb_puts(b, "  ");
    stage_list(b, p, m, o, s);
    ppi_sb_puts(b, ",\n");
  }
  ppi_sb_printf(b,
                "]\n"
                "tensor_parallel_degree = %d\n"
                "data_parallel_replicate_degree = %d\n"
                "data_parallel_shard_degree = 1\n\n"
                "[training]\n"
                "global_batch_size = %lld\n"
                "local_batch_size = %lld\n\n"
                "[activation_checkpoint]\n"
                "mode = \"%s\"\n",
                (int)p->p.tp, (int)R, (long long)p->p.global_batch,
                (long long)(p->p.global_batch / R),
                p->p.recompute ? "full" : "none");
}

pp_status pp_export_torch(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                          const pp_cluster *c, pp_export **out)
{
  static const char *engine = "torchtitan";
  pp_export *x;
  struct ppi_sbuf b;
  struct ppi_stage_ops o;
  pp_cost_params cp;
  pp_sim *sim = NULL;
  int32_t S, s, P, *rank_of = NULL, *dev_of = NULL;
  pp_status rc;

  if ((rc = ppi_export_begin(ctx, "pp_export_torch", p, m, c, out, &x, &b, &o)))
    return rc;
  S = p->nstage;
  if (!(rank_of = ppi_alloc(ctx, (size_t)S * sizeof *rank_of)) ||
      !(dev_of = ppi_alloc(ctx, (size_t)S * sizeof *dev_of))) {
    rc = PP_ENOMEM;
    goto done;
  }
  P = stage_ranks(p, rank_of, dev_of);
  if ((rc = ppi_export_check_uniform(ctx, x, p, "torch")) ||
      (rc = ppi_export_check_runs(ctx, x, p, &o, engine)) ||
      (rc = ppi_export_check_tp(ctx, x, p, c, "torch")) ||
      (rc = ppi_export_check_rank_order(ctx, x, p, rank_of, engine)) ||
      (rc = ppi_export_check_engine(ctx, x, p, PP_ENGINE_TORCH, "torch")))
    goto done;
  for (s = 0; s < S && rank_of[s] == s % P; s++)
    ;
  if (s < S &&
      (rc = ppi_export_warn(ctx, x,
                            "torchtitan places stage s on pipeline rank s mod "
                            "%d (its \"loop\" style); this plan puts stage %d "
                            "on rank %d: build the stages yourself with "
                            "STAGE_TO_RANK (pp_stages.py)",
                            (int)P, (int)s, (int)rank_of[s])))
    goto done;
  if (s == S && S % P &&
      (rc = ppi_export_warn(ctx, x,
                            "torchtitan needs the stages (%d) to be a multiple "
                            "of the pipeline ranks (%d): build the stages "
                            "yourself with STAGE_TO_RANK (pp_stages.py)",
                            (int)S, (int)P)))
    goto done;
  pp_cost_params_init(&cp);
  cp.record = 1;
  if ((rc = pp_simulate(ctx, p, m, c, &cp, &sim)) ||
      (rc = schedule_csv(ctx, sim, p, rank_of, dev_of, P, &b)) ||
      (rc = ppi_export_add(ctx, x, "pp_schedule.csv", &b)))
    goto done;
  ppi_sb_clear(&b);
  stages_py(&b, p, m, &o, rank_of, P);
  if ((rc = ppi_export_add(ctx, x, "pp_stages.py", &b)))
    goto done;
  ppi_sb_clear(&b);
  titan_toml(&b, p, m, &o, P);
  rc = ppi_export_add(ctx, x, "torchtitan.toml", &b);
done:
  pp_sim_destroy(sim);
  ppi_free(ctx, rank_of, (size_t)S * sizeof *rank_of);
  ppi_free(ctx, dev_of, (size_t)S * sizeof *dev_of);
  return ppi_export_end(ctx, x, &b, &o, rc, out);
}

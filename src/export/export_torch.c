/* SPDX-License-Identifier: MIT */
/*
** Export a plan to torch.distributed.pipelining (PyTorch >= 2.4) and
** torchtitan (docs/ECOSYSTEM.md 3.3; docs/EXPORT.md):
**
**   pp_schedule.csv      the schedule in "compute_only" format: one row per
**                        pipeline rank, its compute actions in order,
**                        "<stage>F<mb>" / "<stage>B<mb>" (the action regex,
**                        pytorch/pytorch@00722e64 torch/distributed/
**                        pipelining/schedules.py:88-90).  The rows are
**                        compact: they are for _PipelineScheduleRuntime
**                        (schedules.py:1855), whose _load_csv
**                        (schedules.py:1971-1979) validates them
**                        (_validate_schedule, schedules.py:1324) and lowers
**                        them with _add_send_recv (schedules.py:1205), which
**                        inserts every send and receive, so each action
**                        waits for its input (schedules.py:2144-2148).
**                        PipelineScheduleMulti's own runner is lock-step
**                        (schedules.py:1681, 1759: a rank posts the receive
**                        for what its neighbour runs at the same index) and
**                        would need rows padded with idle steps; it is not
**                        what we tell the user to run.  The order is the one
**                        our simulator ran, so GPipe, 1F1B, 1F1B* and a rank
**                        holding several stages are what the plan
**                        predicted;
**   pp_stages.py         the module FQNs of every stage (the operators'
**                        names), the split_spec for pipeline(), the stage ->
**                        rank map and the micro-batch counts; in comments,
**                        how to run the CSV and the data parallelism and
**                        precision of the plan's ZeRO stage (DDP, or FSDP2
**                        with its reshard and MixedPrecisionPolicy);
**   torchtitan_config.py apply_plan(config), which sets a torchtitan
**                        Trainer.Config (Python configuration: torchtitan
**                        reads no TOML since pytorch/torchtitan@9810191b)
**                        to the plan: pipeline degree, the CSV,
**                        num_pp_microbatches, module_fqns_per_model_part in
**                        torchtitan's module names, token budgets, degrees,
**                        precision, activation checkpointing.
**
** torchtitan's module names (torchtitan/models/common/decoder.py:248-255
** @b5bcd76c: tok_embeddings, layers.<i>, norm, lm_head) are given to the
** operators by kind and order (ppi_export_symbol): the embedding, the
** i-th decoder layer, a norm after the last decoder layer, the head;
** other operators (casts, no-ops, a second embedding, a loss after the
** head) travel with their stage.  A stage left without a module is a
** warning naming it, and apply_plan raises a ValueError naming it
** (torchtitan would build an empty stage); a model without decoder layers
** keeps its operator names, with a warning.
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
** data, then pipeline), fp16 (torchtitan has bf16 and fp32 only), mixed
** precision with pipeline or tensor parallelism but no FSDP sharding.
**
** Complexity: one simulation with events recorded, then O(events).
*/
#include "export/export.h"

#include <ctype.h>
#include <stdio.h>
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
      "# with STAGE_TO_RANK[s] == pp_rank; then run the plan's order with\n"
      "# the runtime that inserts the sends and receives itself (the rows\n"
      "# are compact: PipelineScheduleMulti would need them padded):\n"
      "#   from torch.distributed.pipelining.schedules import "
      "_PipelineScheduleRuntime\n"
      "#   sched = _PipelineScheduleRuntime(stages, N_MICROBATCHES, "
      "loss_fn=...)\n"
      "#   sched._load_csv(SCHEDULE_CSV, format=\"compute_only\")\n"
      "# (internal API, pytorch/pytorch@00722e64 "
      "torch/distributed/pipelining/\n"
      "# schedules.py:1855 and 1971: pin PyTorch)\n",
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

/* s names a norm ("final_layernorm", "RMSNorm"): case-insensitive. */
static bool is_norm(const char *s)
{
  size_t i;
  for (i = 0; s && s[i]; i++)
    if (tolower((unsigned char)s[i]) == 'n' &&
        tolower((unsigned char)s[i + 1]) == 'o' && s[i + 1] &&
        tolower((unsigned char)s[i + 2]) == 'r' && s[i + 2] &&
        tolower((unsigned char)s[i + 3]) == 'm')
      return true;
  return false;
}

/* torchtitan's module name of every operator (NULL: none), by kind and
** order: the embedding, the i-th decoder layer, a norm after the last
** decoder layer, the head (torchtitan/models/common/decoder.py:248-255
** @b5bcd76c).  Returns the number of decoder layers; names[k] point into
** buf (TITAN_NAME bytes per operator).  O(operators): the layers are
** numbered in one pass over the model's order (o->pos). */
#define TITAN_NAME 24 /* "layers." and any int32, with its NUL */
static int32_t titan_names(pp_ctx *ctx, const pp_model *m,
                           const struct ppi_stage_ops *o, const char **names,
                           char *buf, pp_status *rc)
{
  int32_t k, n = o->nop, last = -1, layers = 0, emb = 0, head = 0, *at;
  *rc = PP_OK;
  if (!(at = ppi_alloc(ctx, (size_t)(n > 0 ? n : 1) * sizeof *at))) {
    *rc = PP_ENOMEM;
    return 0;
  }
  for (k = 0; k < n; k++) {
    pp_op_desc d;
    at[o->pos[k]] = k;
    pp_model_op(m, k, &d);
    if (ppi_export_symbol(d.kind) == 't' && o->pos[k] > last)
      last = o->pos[k];
  }
  for (k = 0; k < n; k++) {
    int32_t v = at[k];
    pp_op_desc d;
    char sym;
    pp_model_op(m, v, &d);
    sym = ppi_export_symbol(d.kind);
    names[v] = NULL;
    if (sym == 'E') { /* the first only: a profile's wpe is in the module */
      if (!emb++)
        names[v] = "tok_embeddings";
    } else if (sym == 'L') { /* the head; a loss after it has no module */
      if (!head++)
        names[v] = "lm_head";
    } else if (sym == 't') {
      snprintf(buf + (size_t)v * TITAN_NAME, TITAN_NAME, "layers.%d",
               (int)layers++);
      names[v] = buf + (size_t)v * TITAN_NAME;
    } else if (last >= 0 && k > last && (is_norm(d.kind) || is_norm(d.name))) {
      names[v] = "norm";
    }
  }
  ppi_free(ctx, at, (size_t)(n > 0 ? n : 1) * sizeof *at);
  return layers;
}

/* One stage's torchtitan modules as a list literal; returns how many. */
static int32_t titan_list(struct ppi_sbuf *b, const pp_plan *p,
                          const struct ppi_stage_ops *o, const char **names,
                          int32_t s)
{
  int32_t i, n = 0;
  bool norm = false;
  ppi_sb_puts(b, "[");
  for (i = p->op_off[s]; i < p->op_off[s + 1]; i++) {
    const char *nm = names[o->ord[i]];
    if (!nm)
      continue;
    if (!strcmp(nm, "norm")) { /* "norm" twice in one stage is one module */
      if (norm)
        continue;
      norm = true;
    }
    ppi_sb_puts(b, n++ ? ", " : "");
    ppi_sb_quote(b, nm);
  }
  ppi_sb_puts(b, "]");
  return n;
}

/* torchtitan_config.py: apply_plan(config) sets a Trainer.Config
** (torchtitan/trainer.py:100-115 @b5bcd76c) to the plan.  The fields are
** those of torchtitan/config/configs.py @b5bcd76c: ParallelismConfig
** (:121-236), TrainingConfig (:36-105); the CSV makes torchtitan build
** _PipelineScheduleRuntime and call its _load_csv
** (torchtitan/distributed/pipeline_parallel.py:290-352);
** pipeline_parallel_schedule is still looked up (get_schedule_class) and
** picks the "loop" placement (pipeline_parallel.py:532-569).  Token
** budgets since pytorch/torchtitan@73aed7f6 (#4121): a micro-batch of mbs
** sequences is mbs x max_context_length tokens.  Returns the number of
** stages left without a module (-1 when names is NULL: operator names). */
static int32_t titan_py(struct ppi_sbuf *b, const pp_plan *p, const pp_model *m,
                        const struct ppi_stage_ops *o, const char **names,
                        int32_t P, pp_precision prec, int32_t *first_empty)
{
  int32_t S = p->nstage, R = p->rep_off[1] - p->rep_off[0], s, empty = 0;
  int64_t gas = p->p.global_batch / ((int64_t)p->p.micro_batch * R);
  const char *src = pp_plan_source(p);
  *first_empty = -1;
  ppi_sb_printf(
      b,
      "# parplan: torchtitan settings of the plan %s (model %s)\n"
      "#\n"
      "# For torchtitan's Python configuration (pytorch/torchtitan from\n"
      "# 73aed7f6, 2026-08-20, token budgets and num_pp_microbatches, to at\n"
      "# least b5bcd76c, 2026-08-21; it reads no TOML since 9810191b).  In\n"
      "# your configuration module:\n"
      "#   from torchtitan_config import apply_plan\n"
      "#   def my_run() -> Trainer.Config:\n"
      "#       return apply_plan(llama3_debugmodel())  # your full "
      "configuration\n"
      "# and run it with --module <that module> --config my_run, with\n"
      "# %d ranks (PIPELINE x DATA x TENSOR).  The CSV is read through\n"
      "# _PipelineScheduleRuntime._load_csv (pytorch/pytorch@00722e64\n"
      "# torch/distributed/pipelining/schedules.py:1971).\n\n"
      "import os\n\n"
      "PIPELINE_PARALLEL = %d\n"
      "DATA_PARALLEL = %d\n"
      "TENSOR_PARALLEL = %d\n"
      "MICROBATCH_SIZE = %d  # sequences per micro-batch\n"
      "NUM_PP_MICROBATCHES = %lld  # per data-parallel rank and step\n"
      "SCHEDULE_CSV = os.path.join(os.path.dirname(os.path.abspath("
      "__file__)),\n"
      "                            \"pp_schedule.csv\")\n"
      "# torchtitan's modules of every stage (%s)\n"
      "MODULE_FQNS_PER_MODEL_PART = [\n",
      src ? src : "(unnamed)", pp_model_name(m), (int)(P * R * p->p.tp), (int)P,
      (int)R, (int)p->p.tp, (int)p->p.micro_batch, (long long)gas,
      names ? "by operator kind: tok_embeddings, layers.<i>, norm, lm_head"
            : "the model's operator names: it has no decoder layer");
  for (s = 0; s < S; s++) {
    ppi_sb_puts(b, "    ");
    if (!names)
      stage_list(b, p, m, o, s);
    else if (!titan_list(b, p, o, names, s) && !empty++)
      *first_empty = s;
    ppi_sb_puts(b, ",\n");
  }
  ppi_sb_printf(
      b,
      "]\n\n\n"
      "def apply_plan(config):\n"
      "    \"\"\"Set the plan's parallelism on a torchtitan Trainer.Config; "
      "returns it.\"\"\"\n"
      "    for s, mods in enumerate(MODULE_FQNS_PER_MODEL_PART):\n"
      "        if not mods:  # torchtitan's _split_module would keep nothing\n"
      "            raise ValueError(\n"
      "                \"parplan: stage %%d of the plan holds no torchtitan "
      "\"\n"
      "                \"module (no embedding, decoder layer, final norm or "
      "\"\n"
      "                \"head): torchtitan would build it empty; plan again, "
      "\"\n"
      "                \"or move the stage's cut\" %% s)\n"
      "    par, tr = config.parallelism, config.training\n"
      "    par.pipeline_parallel_degree = PIPELINE_PARALLEL\n"
      "    par.pipeline_parallel_schedule = \"PipelineScheduleMulti\"\n"
      "    par.pipeline_parallel_schedule_csv = SCHEDULE_CSV\n"
      "    par.num_pp_microbatches = NUM_PP_MICROBATCHES\n"
      "    par.module_fqns_per_model_part = MODULE_FQNS_PER_MODEL_PART\n"
      "    par.tensor_parallel_degree = TENSOR_PARALLEL\n"
      "    par.data_parallel_replicate_degree = %d\n"
      "    par.data_parallel_shard_degree = %d\n"
      "%s"
      "    par.context_parallel_degree = 1\n"
      "    tr.num_tokens_per_microbatch_per_dp_rank = (\n"
      "        MICROBATCH_SIZE * tr.max_context_length)\n"
      "    tr.num_tokens_per_train_step = (\n"
      "        tr.num_tokens_per_microbatch_per_dp_rank * NUM_PP_MICROBATCHES\n"
      "        * DATA_PARALLEL)\n"
      "    tr.mixed_precision_param = \"%s\"\n"
      "    tr.disable_cuda_graphs = %s  # no CUDA graphs with pipelining\n",
      p->p.zero >= 2 ? 1 : (int)R, p->p.zero >= 2 ? (int)R : 1,
      p->p.zero >= 2
          ? (p->p.zero == 3
                 ? "    par.fsdp_reshard_after_forward = \"always\"\n"
                 : "    par.fsdp_reshard_after_forward = \"never\"\n")
          : "",
      prec == PP_PREC_FP32 ? "float32" : "bfloat16", P > 1 ? "True" : "False");
  if (p->p.recompute)
    ppi_sb_puts(b, "    from torchtitan.distributed.activation_checkpoint "
                   "import FullAC\n"
                   "    config.activation_checkpoint = FullAC.Config()\n");
  else
    ppi_sb_puts(b, "    config.activation_checkpoint = None\n");
  ppi_sb_puts(b, "    return config\n");
  return empty;
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
  int32_t S, s, P, layers, empty, first_empty, *rank_of = NULL;
  int32_t *dev_of = NULL;
  const char **names = NULL;
  char *buf = NULL;
  size_t nop = 0;
  pp_precision prec;
  pp_status rc;

  if ((rc =
           ppi_export_begin(ctx, "pp_export_torch", &p, m, c, out, &x, &b, &o)))
    return rc;
  S = p->nstage;
  nop = (size_t)o.nop;
  if (!(rank_of = ppi_alloc(ctx, (size_t)S * sizeof *rank_of)) ||
      !(dev_of = ppi_alloc(ctx, (size_t)S * sizeof *dev_of)) ||
      !(names = ppi_alloc(ctx, nop * sizeof *names)) ||
      !(buf = ppi_alloc(ctx, nop * TITAN_NAME))) {
    rc = PP_ENOMEM;
    goto done;
  }
  P = stage_ranks(p, rank_of, dev_of);
  prec = ppi_export_precision(p, m);
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
  /* torchtitan's mixed_precision_param is bfloat16 or float32 only
  ** (torchtitan/config/configs.py:94 @b5bcd76c) */
  if (prec == PP_PREC_FP16 &&
      (rc = ppi_export_warn(ctx, x,
                            "torchtitan has no fp16 mixed precision "
                            "(mixed_precision_param is bfloat16 or float32): "
                            "torchtitan_config.py sets bfloat16")))
    goto done;
  /* it applies through fully_shard (dp_shard > 1) or, with no other
  ** parallelism, autocast (configs.py:94-100 @b5bcd76c) */
  if (prec != PP_PREC_FP32 && p->p.zero < 2 && (P > 1 || p->p.tp > 1) &&
      (rc = ppi_export_warn(
           ctx, x,
           "torchtitan applies mixed precision through FSDP sharding or, "
           "without pipeline or tensor parallelism, autocast: with pp %d, "
           "tp %d and no sharding (ZeRO %d) only models whose parallelize "
           "installs FSDP's MixedPrecisionPolicy at shard degree 1 (llama3 "
           "since pytorch/torchtitan@d64eabcc) train in %s; others run in "
           "fp32",
           (int)P, (int)p->p.tp, (int)p->p.zero,
           pp_precision_name(prec == PP_PREC_FP16 ? PP_PREC_BF16 : prec))))
    goto done;
  layers = titan_names(ctx, m, &o, names, buf, &rc);
  if (rc)
    goto done;
  if (!layers &&
      (rc = ppi_export_warn(ctx, x,
                            "the model has no decoder layer (no operator of a "
                            "layer or block kind): torchtitan_config.py "
                            "lists the operators' names, which name no "
                            "module of torchtitan's models")))
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
  empty = titan_py(&b, p, m, &o, layers ? names : NULL, P, prec, &first_empty);
  if ((rc = ppi_export_add(ctx, x, "torchtitan_config.py", &b)))
    goto done;
  /* torchtitan would build an empty stage: _split_module keeps nothing */
  if (empty > 0)
    rc = ppi_export_warn(ctx, x,
                         "%d stages hold no torchtitan module (the first: "
                         "stage %d, operators %d to %d, none an embedding, "
                         "decoder layer, final norm or head): torchtitan "
                         "would build them empty",
                         (int)empty, (int)first_empty,
                         (int)p->op_off[first_empty],
                         (int)p->op_off[first_empty + 1] - 1);
done:
  pp_sim_destroy(sim);
  ppi_free(ctx, rank_of, (size_t)S * sizeof *rank_of);
  ppi_free(ctx, dev_of, (size_t)S * sizeof *dev_of);
  ppi_free(ctx, names, nop * sizeof *names);
  ppi_free(ctx, buf, nop * TITAN_NAME);
  return ppi_export_end(ctx, x, &b, &o, rc, out);
}

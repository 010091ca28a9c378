/* SPDX-License-Identifier: MIT */
/*
** Export a plan to DeepSpeed's pipeline engine (docs/ECOSYSTEM.md 3.2,
** microsoft/DeepSpeed deepspeed/runtime/pipe/module.py, topology.py):
**
**   ds_config.json  train_batch_size = micro-batch x micro-batches x dp,
**                   train_micro_batch_size_per_gpu, gradient_accumulation
**                   _steps (the micro-batches of one train_batch()),
**                   "fp16" or "bf16" for the plan's precision (a plan
**                   without one: fp16 for the mixed-precision optimizer)
**                   with the gradients reduced in fp32,
**                   the plan's ZeRO stage (its PipelineEngine refuses 2
**                   and 3 with more than one stage: a warning);
**   ds_pipeline.py  PARTS, the explicit stage boundaries, and the small
**                   PipelineModule subclass that applies them.  DeepSpeed
**                   has no public argument for explicit parts (open
**                   requests deepspeedai/DeepSpeed#2974 and #5379), so the
**                   subclass overrides _partition_layers, sets self.parts
**                   and calls _set_bounds, exactly what the built-in
**                   methods do after choosing parts.  Its topology numbers
**                   ranks tp fastest, then data, then pipe (row-major over
**                   ['pipe', 'data', 'model']), the order of our launch
**                   files.
**
** DeepSpeed's layers are the model's operators in topological order, one
** LayerSpec each; stage s holds layers PARTS[s] .. PARTS[s+1]-1.  What it
** cannot express is a warning: different replica counts per stage, a
** stage that is not one run of the operators (the parts then keep every
** stage's operator count), a device holding two stages, a DAG (DeepSpeed
** runs layers as a sequence), GPipe or 1F1B* (it runs 1F1B), PipeDream-
** 2BW's second weight version, tensor-parallel groups across nodes or
** device types, a placement other than its rank order.
**
** Complexity: O(operators + replicas x tp).
*/
#include "export/export.h"

#include <string.h>

static void config(struct ppi_sbuf *b, const pp_plan *p, const pp_model *m)
{
  pp_precision prec = ppi_export_precision(p, m);
  int32_t R = p->rep_off[1] - p->rep_off[0];
  int64_t gas = p->p.global_batch / ((int64_t)p->p.micro_batch * R);
  ppi_sb_printf(b,
                "{\n"
                "  \"train_batch_size\": %lld,\n"
                "  \"train_micro_batch_size_per_gpu\": %d,\n"
                "  \"gradient_accumulation_steps\": %lld,\n",
                (long long)((int64_t)p->p.micro_batch * gas * R),
                (int)p->p.micro_batch, (long long)gas);
  /* "fp16" and "bf16", each {"enabled": ...}
  ** (microsoft/DeepSpeed@38327e07 deepspeed/runtime/constants.py:151, 153,
  ** 123, 126); "zero_optimization": {"stage": z}
  ** (deepspeed/runtime/zero/config.py:53, 91 @38327e07) */
  if (prec == PP_PREC_FP16)
    ppi_sb_puts(b, "  \"fp16\": {\"enabled\": true, \"loss_scale\": 0},\n");
  else if (prec == PP_PREC_BF16)
    ppi_sb_puts(b, "  \"bf16\": {\"enabled\": true},\n");
  /* gradients reduced in fp32, as the cost model prices DeepSpeed's
  ** reduction (src/cost/engine.c; AMP's runs set fp32_allreduce):
  ** "communication_data_type" (deepspeed/runtime/constants.py:237-239,
  ** config.py:252-266 @38327e07; unset, it follows fp16 / bf16,
  ** engine.py:939-950) */
  if (prec == PP_PREC_FP16 || prec == PP_PREC_BF16)
    ppi_sb_puts(b, "  \"communication_data_type\": \"fp32\",\n");
  ppi_sb_printf(b, "  \"zero_optimization\": {\"stage\": %d}\n}\n",
                (int)p->p.zero);
}

static const char *optimizer_note(pp_optimizer o)
{
  switch (o) {
  case PP_OPT_SGD: return "SGD (weights and gradients)";
  case PP_OPT_ADAM: return "Adam in fp32 (weights, gradients, m, v)";
  case PP_OPT_ADAM_MIXED:
    return "Adam with fp16 weights and gradients and fp32 master, m and v";
  case PP_OPT_2BW: return "PipeDream-2BW (two weight versions)";
  }
  return "?";
}

static void module(struct ppi_sbuf *b, const pp_plan *p, const pp_model *m,
                   const struct ppi_stage_ops *o)
{
  int32_t S = p->nstage, R = p->rep_off[1] - p->rep_off[0], s, i;
  int64_t gas = p->p.global_batch / ((int64_t)p->p.micro_batch * R);
  const char *src = pp_plan_source(p);

  ppi_sb_printf(b,
                "# parplan: DeepSpeed pipeline stages of the plan %s\n"
                "# model %s: %d layers in %d stages x %d data-parallel "
                "replicas x tp %d;\n"
                "# micro-batch %d, %lld micro-batches per replica per step "
                "(ds_config.json).\n",
                src ? src : "(unnamed)", pp_model_name(m), (int)o->nop, (int)S,
                (int)R, (int)p->p.tp, (int)p->p.micro_batch, (long long)gas);
  ppi_sb_printf(b,
                "# The plan's memory assumes this optimizer; give it to\n"
                "# deepspeed.initialize:\n#   %s.\n",
                optimizer_note(p->p.optimizer));
  ppi_sb_puts(
      b, "#\n"
         "# DeepSpeed has no public argument for explicit stage boundaries\n"
         "# (deepspeedai/DeepSpeed#2974): PlannedPipelineModule sets them by\n"
         "# overriding PipelineModule._partition_layers, an internal method\n"
         "# (checked against DeepSpeed 0.16.5, commit 38327e07; the methods\n"
         "# it uses date from the first PipelineModule, 2020; pin the\n"
         "# DeepSpeed version).  Use it as\n"
         "#\n"
         "#   from ds_pipeline import PlannedPipelineModule\n"
         "#   net = PlannedPipelineModule(layers=specs, loss_fn=loss)\n"
         "#   engine, _, _, _ = deepspeed.initialize(\n"
         "#       model=net, model_parameters=net.parameters(),\n"
         "#       optimizer=..., config=\"ds_config.json\")\n"
         "#\n"
         "# where specs[i] is the LayerSpec of the model's layer i, in the "
         "order of\n"
         "# LAYER_NAMES.  Ranks: tensor-parallel rank fastest, then data, "
         "then\n"
         "# pipeline (launch each on its device: parplan export --to "
         "launch).\n\n"
         "from deepspeed.pipe import PipelineModule\n");
  if (p->p.tp > 1)
    ppi_sb_puts(b, "from deepspeed.runtime.pipe.topology import "
                   "PipeModelDataParallelTopology\n\n");
  else
    ppi_sb_puts(b, "from deepspeed.runtime.pipe.topology import "
                   "PipeDataParallelTopology\n\n");
  ppi_sb_puts(b, "# the model's layers, in order, with their stage\n"
                 "LAYER_NAMES = [\n");
  for (s = 0; s < S; s++)
    for (i = p->op_off[s]; i < p->op_off[s + 1]; i++) {
      pp_op_desc d;
      pp_model_op(m, o->ord[i], &d);
      ppi_sb_puts(b, "    ");
      ppi_sb_quote(b, d.name);
      ppi_sb_printf(b, ",  # %d, stage %d\n", (int)o->pos[o->ord[i]], (int)s);
    }
  ppi_sb_puts(b, "]\n\n# stage s holds layers PARTS[s] .. PARTS[s + 1] - 1\n"
                 "PARTS = [0");
  {
    int32_t acc = 0;
    for (s = 0; s < S; s++) {
      /* contiguous: the next stage's first position; otherwise the
      ** operator counts, as the warning says */
      acc = o->contiguous ? (s + 1 < S ? o->first[s + 1] : o->nop)
                          : acc + (p->op_off[s + 1] - p->op_off[s]);
      ppi_sb_printf(b, ", %d", (int)acc);
    }
  }
  ppi_sb_printf(b,
                "]\n"
                "NUM_STAGES = %d\n"
                "DATA_PARALLEL = %d\n"
                "TENSOR_PARALLEL = %d\n"
                "ACTIVATION_CHECKPOINT_INTERVAL = %d\n\n\n",
                (int)S, (int)R, (int)p->p.tp, p->p.recompute ? 1 : 0);
  ppi_sb_puts(b, "def planned_topology():\n"
                 "    \"\"\"The plan's ranks: tp fastest, then data, then "
                 "pipe.\"\"\"\n");
  if (p->p.tp > 1)
    ppi_sb_puts(b, "    return PipeModelDataParallelTopology(\n"
                   "        num_pp=NUM_STAGES, num_mp=TENSOR_PARALLEL, "
                   "num_dp=DATA_PARALLEL)\n\n\n");
  else
    ppi_sb_puts(b, "    return PipeDataParallelTopology(num_pp=NUM_STAGES, "
                   "num_dp=DATA_PARALLEL)\n\n\n");
  ppi_sb_puts(
      b,
      "class PlannedPipelineModule(PipelineModule):\n"
      "    \"\"\"A PipelineModule whose stages are the plan's (PARTS).\"\"\"\n"
      "\n"
      "    def __init__(self, layers, **kwargs):\n"
      "        if \"topology\" not in kwargs and \"num_stages\" not in "
      "kwargs:\n"
      "            kwargs[\"topology\"] = planned_topology()\n"
      "        kwargs.setdefault(\"activation_checkpoint_interval\",\n"
      "                          ACTIVATION_CHECKPOINT_INTERVAL)\n"
      "        super().__init__(layers, **kwargs)\n"
      "\n"
      "    def _partition_layers(self, method=\"parameters\"):\n"
      "        stages = self._topo.get_dim(\"pipe\")\n"
      "        if stages != NUM_STAGES:\n"
      "            raise RuntimeError(\n"
      "                f\"the plan has {NUM_STAGES} stages, the topology "
      "{stages}\")\n"
      "        if len(self._layer_specs) != PARTS[-1]:\n"
      "            raise RuntimeError(\n"
      "                f\"the plan has {PARTS[-1]} layers (LAYER_NAMES), \"\n"
      "                f\"the module {len(self._layer_specs)}\")\n"
      "        self.parts = list(PARTS)\n"
      "        stage_id = self._topo.get_coord(self.global_rank).pipe\n"
      "        self._set_bounds(start=self.parts[stage_id],\n"
      "                         stop=self.parts[stage_id + 1])\n");
}

pp_status pp_export_deepspeed(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                              const pp_cluster *c, pp_export **out)
{
  static const char *engine = "DeepSpeed";
  pp_export *x;
  struct ppi_sbuf b;
  struct ppi_stage_ops o;
  pp_status rc;

  if ((rc = ppi_export_begin(ctx, "pp_export_deepspeed", &p, m, c, out, &x, &b,
                             &o)))
    return rc;
  if ((rc = ppi_export_check_uniform(ctx, x, p, engine)) ||
      (rc = ppi_export_check_runs(ctx, x, p, &o, engine)) ||
      (rc = ppi_export_check_shared(ctx, x, p, engine, "")) ||
      (rc = ppi_export_check_tp(ctx, x, p, c, engine)) ||
      (rc = ppi_export_check_rank_order(ctx, x, p, NULL, engine)) ||
      (rc = ppi_export_check_1f1b(ctx, x, p, engine)) ||
      (rc = ppi_export_check_engine(ctx, x, p, PP_ENGINE_DEEPSPEED, engine)))
    goto done;
  if (!pp_model_is_chain(m) &&
      (rc = ppi_export_warn(ctx, x,
                            "the model is a DAG, not a chain: DeepSpeed runs "
                            "its layers as a sequence (here the operators in "
                            "topological order), each feeding the next")))
    goto done;
  if (p->p.optimizer == PP_OPT_2BW &&
      (rc = ppi_export_warn(ctx, x,
                            "DeepSpeed keeps one weight version and flushes "
                            "the pipeline every step: the plan's "
                            "PipeDream-2BW optimizer is not expressible")))
    goto done;
  /* PipelineEngine refuses ZeRO 2 and 3 whatever the stage count
  ** (runtime/pipe/engine.py:77-78 @ 38327e07); with one stage the plain
  ** engine runs them */
  if (p->p.zero >= 2 &&
      (rc = ppi_export_warn(
           ctx, x,
           "DeepSpeed's PipelineEngine refuses ZeRO stage %d even with one "
           "stage (runtime/pipe/engine.py:77-78): pass the model itself, "
           "not PlannedPipelineModule, to deepspeed.initialize",
           (int)p->p.zero)))
    goto done;
  config(&b, p, m);
  if ((rc = ppi_export_add(ctx, x, "ds_config.json", &b)))
    goto done;
  ppi_sb_clear(&b);
  module(&b, p, m, &o);
  rc = ppi_export_add(ctx, x, "ds_pipeline.py", &b);
done:
  return ppi_export_end(ctx, x, &b, &o, rc, out);
}

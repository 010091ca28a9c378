/* SPDX-License-Identifier: MIT */
/*
** Export a plan to PipeDream's runtime configuration (msr-fiddle/
** pipedream: the hybrid_conf.json files under runtime/, read by
** main_with_runtime.py; docs/ECOSYSTEM.md 1.2):
**
**   {"module_to_stage_map": [0, 1, ..., S-1, S-1],
**    "stage_to_rank_map": {"0": [0, 1], "1": [2], ...}, ...}
**
** PipeDream is the one common runtime whose stages may have different
** replica counts, so nothing is lost there.  Its generated model is one
** module per stage plus the loss (convert_graph_to_model.py), which runs
** on the last stage: hence S + 1 entries in module_to_stage_map.  Ranks
** are numbered stage by stage, replica by replica, the order of our
** launch files (parplan export --to launch) for tp 1.  Beside PipeDream's
** keys the file lists every operator's stage ("stage_of_operator", the
** stage_id annotations its graph converter reads) and every rank's
** device, which PipeDream ignores and users check against.
**
** "stage_to_depth_map" carries the plan's in-flight counts: PipeDream
** runs num_warmup_minibatches = stage_to_depth_map[str(stage)] forwards
** before its first backward (runtime/runtime.py:166-168 @ 7db6a1c), so
** a stage keeping k micro-batches in flight gets k - 1 (1F1B and 1F1B*
** alike; PipeDream's own default, 168-174, is 1F1B's).
**
** pipedream_run.sh: PipeDream's main_with_runtime.py takes its rank, GPU
** and master as flags (--rank, --local_rank, --master_addr:
** runtime/image_classification/main_with_runtime.py:62-71) and reads no
** environment, while the launch scripts (export --to launch) set RANK,
** LOCAL_RANK and MASTER_ADDR; the wrapper turns one into the other, and
** adds the plan's --fp16 and --recompute (main_with_runtime.py:58, 89).
** With tp > 1 the launch scripts start tp ranks per replica and PipeDream
** has no tensor parallelism: the wrapper runs PipeDream rank RANK / tp on
** the group's first device and lets the others exit.  PipeDream checks
** that its rank is below the map's rank count (runtime.py:145) and that
** module_to_stage_map has one entry per module (runtime.py:131).
**
** Warnings: tensor parallelism (PipeDream has none: each replica's first
** device stands for its group), a device holding two stages (PipeDream
** runs one stage per rank, and the launch files one rank per device), a
** GPipe schedule, and, always, PipeDream's asynchronous weight stashing
** against the plan's synchronous step.
**
** Complexity: O(operators + replicas x tp).
*/
#include "export/export.h"

#include <string.h>

static void conf(struct ppi_sbuf *b, const pp_plan *p, const pp_model *m,
                 const pp_cluster *c, const struct ppi_stage_ops *o,
                 const int32_t *inflight)
{
  int32_t S = p->nstage, s, q, i;
  ppi_sb_puts(b, "{\n  \"module_to_stage_map\": [");
  for (s = 0; s < S; s++)
    ppi_sb_printf(b, "%d, ", (int)s);
  ppi_sb_printf(b, "%d],\n  \"stage_to_rank_map\": {", (int)(S - 1));
  for (s = 0; s < S; s++) {
    ppi_sb_printf(b, "%s\"%d\": [", s ? ", " : "", (int)s);
    for (q = p->rep_off[s]; q < p->rep_off[s + 1]; q++)
      ppi_sb_printf(b, "%s%d", q > p->rep_off[s] ? ", " : "", (int)q);
    ppi_sb_puts(b, "]");
  }
  ppi_sb_puts(b, "},\n  \"stage_to_depth_map\": {");
  for (s = 0; s < S; s++)
    ppi_sb_printf(b, "%s\"%d\": %d", s ? ", " : "", (int)s,
                  (int)(inflight[s] > 0 ? inflight[s] - 1 : 0));
  ppi_sb_puts(b, "},\n  \"stage_of_operator\": {");
  for (s = 0; s < S; s++)
    for (i = p->op_off[s]; i < p->op_off[s + 1]; i++) {
      pp_op_desc d;
      pp_model_op(m, o->ord[i], &d);
      ppi_sb_puts(b, i ? ",\n    " : "\n    ");
      ppi_sb_quote(b, d.name);
      ppi_sb_printf(b, ": %d", (int)s);
    }
  ppi_sb_puts(b, "\n  },\n  \"rank_to_device\": [");
  for (q = 0; q < p->rep_off[S]; q++) {
    int32_t d = p->dev[(size_t)q * p->p.tp];
    ppi_sb_printf(b, "%s\n    {\"rank\": %d, \"device\": %d, \"name\": ",
                  q ? "," : "", (int)q, (int)d);
    ppi_sb_quote(b, c->dev_name[d]);
    ppi_sb_puts(b, "}");
  }
  ppi_sb_puts(b, "\n  ]\n}\n");
}

pp_status pp_export_pipedream(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                              const pp_cluster *c, pp_export **out)
{
  static const char *engine = "PipeDream";
  pp_precision prec;
  pp_export *x;
  struct ppi_sbuf b;
  struct ppi_stage_ops o;
  pp_status rc;

  if ((rc = ppi_export_begin(ctx, "pp_export_pipedream", &p, m, c, out, &x, &b,
                             &o)))
    return rc;
  if (p->p.tp > 1 &&
      (rc = ppi_export_warn(ctx, x,
                            "PipeDream has no tensor parallelism: each "
                            "replica runs on its group's first device (the "
                            "plan has tp %d)",
                            (int)p->p.tp)))
    goto done;
  /* the run's settings as PipeDream's flags: --fp16 and --recompute
  ** (main_with_runtime.py:58, 89); it has no bf16 */
  prec = ppi_export_precision(p, m);
  if (prec == PP_PREC_BF16 &&
      (rc = ppi_export_warn(ctx, x,
                            "PipeDream has no bf16 (only --fp16, "
                            "main_with_runtime.py:58): it runs in fp32")))
    goto done;
  if ((rc = ppi_export_check_shared(
           ctx, x, p, engine,
           ", and the launch files one rank per device: not launchable as "
           "planned")))
    goto done;
  if (p->p.schedule == PP_SCHED_GPIPE &&
      (rc = ppi_export_check_1f1b(ctx, x, p, engine)))
    goto done;
  if ((rc = ppi_export_warn(
           ctx, x,
           "PipeDream's runtime is asynchronous: it stashes one weight "
           "version per in-flight micro-batch and never flushes, so its "
           "memory and its updates differ from the plan's synchronous "
           "step (%s)",
           pp_optimizer_name(p->p.optimizer))))
    goto done;
  {
    pp_eval *e = NULL;
    int32_t s, *inflight = ppi_calloc(ctx, (size_t)p->nstage, sizeof *inflight);
    if (!inflight)
      rc = PP_ENOMEM;
    if (!rc)
      rc = pp_evaluate(ctx, p, m, c, NULL, &e);
    for (s = 0; !rc && s < p->nstage; s++) {
      pp_stage_cost sc;
      if (!(rc = pp_eval_stage(e, s, &sc)))
        inflight[s] = sc.in_flight;
    }
    pp_eval_destroy(e);
    if (!rc)
      conf(&b, p, m, c, &o, inflight);
    ppi_free(ctx, inflight, (size_t)p->nstage * sizeof *inflight);
  }
  if (!rc)
    rc = ppi_export_add(ctx, x, "pipedream_conf.json", &b);
  if (!rc) {
    ppi_sb_clear(&b);
    ppi_sb_printf(
        &b,
        "#!/bin/sh\n"
        "# parplan: run PipeDream's main_with_runtime.py under parplan's "
        "launch scripts\n"
        "# (export --to launch), which set RANK, LOCAL_RANK and MASTER_ADDR; "
        "PipeDream\n"
        "# takes them as flags (main_with_runtime.py:62-71 @ msr-fiddle/"
        "pipedream 7db6a1c).\n"
        "#   sh launch_HOST.sh sh pipedream_run.sh python "
        "main_with_runtime.py \\\n"
        "#       --config_path pipedream_conf.json <model and data flags>\n"
        "set -eu\n"
        "TP=%d  # PipeDream has no tensor parallelism: rank t > 0 of a group "
        "idles\n"
        "[ $((RANK %% TP)) -eq 0 ] || exit 0\n"
        "exec \"$@\" --rank $((RANK / TP)) --local_rank \"$LOCAL_RANK\" "
        "--master_addr \"$MASTER_ADDR\"%s%s\n",
        (int)p->p.tp, prec == PP_PREC_FP16 ? " --fp16" : "",
        p->p.recompute ? " --recompute" : "");
    rc = ppi_export_add(ctx, x, "pipedream_run.sh", &b);
  }
done:
  return ppi_export_end(ctx, x, &b, &o, rc, out);
}

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
** Warnings: tensor parallelism (PipeDream has none: each replica's first
** device stands for its group), a device holding two stages (two ranks
** then share it), a schedule other than 1F1B, and, always, PipeDream's
** asynchronous weight stashing against the plan's synchronous step.
**
** Complexity: O(operators + replicas x tp).
*/
#include "export/export.h"

#include <string.h>

static void conf(struct ppi_sbuf *b, const pp_plan *p, const pp_model *m,
                 const pp_cluster *c, const struct ppi_stage_ops *o)
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
  pp_export *x;
  struct ppi_sbuf b;
  struct ppi_stage_ops o;
  pp_status rc;

  if ((rc = ppi_export_begin(ctx, "pp_export_pipedream", p, m, c, out, &x, &b,
                             &o)))
    return rc;
  if (p->p.tp > 1 &&
      (rc = ppi_export_warn(ctx, x,
                            "PipeDream has no tensor parallelism: each "
                            "replica runs on its group's first device (the "
                            "plan has tp %d)",
                            (int)p->p.tp)))
    goto done;
  if ((rc = ppi_export_check_shared(ctx, x, p, engine,
                                    ": two ranks would share the device")) ||
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
  conf(&b, p, m, c, &o);
  rc = ppi_export_add(ctx, x, "pipedream_conf.json", &b);
done:
  return ppi_export_end(ctx, x, &b, &o, rc, out);
}

/* SPDX-License-Identifier: MIT */
/*
** The plan checker: a plan is consistent with a model and a cluster when
** every device index names a device, every operator of the model is in
** exactly one stage, and no edge runs from a later stage to an earlier
** one (stages are listed in an order that respects the model's
** dependencies, which the schedules need).  The builder has already
** checked what needs neither (plan.c).  O(ops + edges + devices of the
*replicas).
*/
#include "plan/plan.h"

#include <string.h>

pp_status pp_plan_check(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                        const pp_cluster *c)
{
  int32_t s, i, v, e, *stage_of;
  size_t k, ndevs;
  pp_status rc = PP_OK;

  if (!ctx || !p || !m || !c)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_plan_check: NULL argument")
               : PP_EINVAL;
  ndevs = (size_t)p->dev_off[p->rep_off[p->nstage]];
  for (k = 0; k < ndevs; k++)
    if (p->dev[k] >= c->ndev) {
      int32_t q = 0;
      while (p->dev_off[q + 1] <= (int32_t)k)
        q++;
      s = ppi_plan_rep_stage(p, q);
      return ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                         "stage %d, replica %d: device %d does not exist "
                         "(cluster '%s' has %d devices)",
                         (int)s, (int)(q - p->rep_off[s]), (int)p->dev[k],
                         c->name, (int)c->ndev);
    }
  if (!(stage_of = ppi_alloc(ctx, (size_t)m->nop * sizeof *stage_of)))
    return PP_ENOMEM;
  for (v = 0; v < m->nop; v++)
    stage_of[v] = -1;
  for (s = 0; s < p->nstage && !rc; s++)
    for (i = p->op_off[s]; i < p->op_off[s + 1] && !rc; i++) {
      v = p->ops[i];
      if (v >= m->nop)
        rc = ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                         "stage %d: operator %d does not exist (model '%s' "
                         "has %d operators)",
                         (int)s, (int)v, m->name, (int)m->nop);
      else if (stage_of[v] == s)
        rc = ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                         "operator '%s' (index %d) is listed twice in stage "
                         "%d",
                         m->op_name[v], (int)v, (int)s);
      else if (stage_of[v] >= 0)
        rc = ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                         "operator '%s' (index %d) is in stage %d and again "
                         "in stage %d",
                         m->op_name[v], (int)v, (int)stage_of[v], (int)s);
      else
        stage_of[v] = s;
    }
  for (v = 0; v < m->nop && !rc; v++)
    if (stage_of[v] < 0)
      rc = ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                       "operator '%s' (index %d) is in no stage", m->op_name[v],
                       (int)v);
  for (e = 0; e < m->nedge && !rc; e++) {
    int32_t a = stage_of[m->esrc[e]], b = stage_of[m->edst[e]];
    if (a > b)
      rc = ppi_fail_at(ctx, PP_EINPUT, p->source, 0, 0,
                       "operator '%s' in stage %d needs the output of '%s' "
                       "in the later stage %d; stages must follow the model's "
                       "dependencies",
                       m->op_name[m->edst[e]], (int)b, m->op_name[m->esrc[e]],
                       (int)a);
  }
  ppi_free(ctx, stage_of, (size_t)m->nop * sizeof *stage_of);
  return rc;
}

/* SPDX-License-Identifier: MIT */
/*
** Built-in models: a registry of the generated tables and their
** conversion into models through the public builder.
*/
#include "model/model_builtin.h"

#include <stdio.h>
#include <string.h>

const char *pp_model_builtin_name(int i)
{
  return i >= 0 && i < ppi_nbuiltin_models ? ppi_builtin_models[i]->name : NULL;
}

const char *pp_model_builtin_about(int i)
{
  return i >= 0 && i < ppi_nbuiltin_models ? ppi_builtin_models[i]->about
                                           : NULL;
}

static pp_status build(pp_ctx *ctx, const struct ppi_bmodel *bm, pp_model **out)
{
  pp_model_builder *b = NULL;
  char src[512];
  pp_status rc;
  int i;

  snprintf(src, sizeof src, "built-in %s", bm->name);
  if ((rc = pp_model_builder_create(ctx, bm->name, src, &b)) ||
      (rc = pp_model_builder_set_micro_batch(b, bm->micro_batch)) ||
      (rc = pp_model_builder_set_dtype(b, bm->dtype)) ||
      (rc = pp_model_builder_set_reference_type(b, bm->reftype)) ||
      (rc = pp_model_builder_set_loss(b, bm->loss_fwd_bytes,
                                      bm->loss_bwd_bytes)) ||
      (rc = pp_model_builder_set_pipe_extra(b, bm->pipe_extra_bytes)))
    goto done;
  for (i = 0; i < bm->nhyper; i++)
    if ((rc = pp_model_builder_set_hyper(b, bm->hyper[i].key,
                                         bm->hyper[i].value)))
      goto done;
  for (i = 0; i < bm->nop; i++) {
    const struct ppi_bop *o = &bm->ops[i];
    pp_op_desc d;
    pp_op_desc_init(&d);
    d.name = o->name;
    d.kind = o->kind;
    d.fwd_ms = o->fwd_ms;
    d.bwd_ms = o->bwd_ms;
    d.update_ms = o->update_ms;
    d.param_bytes = o->param_bytes;
    d.out_bytes = o->out_bytes;
    d.saved_bytes = o->saved_bytes;
    if ((rc = pp_model_builder_add_op(b, &d, NULL)))
      goto done;
  }
  for (i = 0; i < bm->nop; i++)
    if (bm->ops[i].tied_to >= 0 &&
        (rc = pp_model_builder_tie(b, i, bm->ops[i].tied_to)))
      goto done;
  for (i = 0; i < bm->ntime; i++) {
    const struct ppi_btime *t = &bm->times[i];
    if ((rc = pp_model_builder_add_time(b, t->op, bm->types[t->type], t->tp,
                                        t->mbs, t->fwd_ms, t->bwd_ms,
                                        t->update_ms)))
      goto done;
  }
  for (i = 0; i < bm->ntps; i++) {
    const struct ppi_btps *t = &bm->tps[i];
    if ((rc = pp_model_builder_add_tp_sizes(b, t->op, t->tp, t->param_bytes,
                                            t->out_bytes, t->saved_bytes)))
      goto done;
  }
  rc = pp_model_builder_finish(b, out);
  b = NULL;
done:
  pp_model_builder_destroy(b);
  return rc;
}

pp_status ppi_model_builtin(pp_ctx *ctx, const char *name, pp_model **out,
                            bool *found)
{
  int i;
  *found = false;
  for (i = 0; i < ppi_nbuiltin_models; i++)
    if (strcmp(ppi_builtin_models[i]->name, name) == 0) {
      *found = true;
      return build(ctx, ppi_builtin_models[i], out);
    }
  return PP_OK;
}

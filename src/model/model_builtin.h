/* SPDX-License-Identifier: MIT */
/*
** Built-in models as constant tables.  model_builtin_data.c is generated
** by scripts/gen_builtin_models.py from the profiles in data/ (AMP's and
** Sailor's measurements); model_builtin.c turns a table into a model
** through the public builder, so built-ins obey the same checks as
** files.
*/
#ifndef PP_MODEL_BUILTIN_H
#define PP_MODEL_BUILTIN_H

#include "model/model.h"

struct ppi_bop {
  const char *name, *kind;
  double fwd_ms, bwd_ms, update_ms;
  int64_t param_bytes, out_bytes, saved_bytes;
  int32_t tied_to; /* -1: owns its parameters */
};

struct ppi_btime {
  int16_t op, type, tp, mbs; /* type indexes the model's type names */
  double fwd_ms, bwd_ms, update_ms;
};

struct ppi_btps {
  int16_t op, tp;
  int64_t param_bytes, out_bytes, saved_bytes;
};

struct ppi_bhyper {
  const char *key;
  double value;
};

struct ppi_bmodel {
  const char *name;    /* the built-in name */
  const char *about;   /* one line for listings */
  const char *source;  /* where the numbers come from */
  const char *reftype; /* reference device type */
  int32_t micro_batch;
  pp_precision dtype; /* what every byte count is in */
  const char *const *types;
  int ntype;
  const struct ppi_bop *ops;
  int nop;
  const struct ppi_btime *times;
  int ntime;
  const struct ppi_btps *tps;
  int ntps;
  const struct ppi_bhyper *hyper;
  int nhyper;
  double loss_fwd_bytes, loss_bwd_bytes; /* pp_model_builder_set_loss */
  double pipe_extra_bytes;               /* pp_model_builder_set_pipe_extra */
};

PP_INTERNAL extern const struct ppi_bmodel *const ppi_builtin_models[];
PP_INTERNAL extern const int ppi_nbuiltin_models;

#endif /* PP_MODEL_BUILTIN_H */

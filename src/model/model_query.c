/* SPDX-License-Identifier: MIT */
/*
** Read-only accessors of a finished model.  Out-of-range indices give
** NULL, 0 or -1 rather than undefined behaviour, so a caller's bad index
** cannot read outside the arrays.
*/
#include "model/model.h"

#include <string.h>

const char *pp_model_name(const pp_model *m)
{
  return m ? m->name : NULL;
}

const char *pp_model_source(const pp_model *m)
{
  return m ? m->source : NULL;
}

int32_t pp_model_nop(const pp_model *m)
{
  return m ? m->nop : 0;
}

int32_t pp_model_nedge(const pp_model *m)
{
  return m ? m->nedge : 0;
}

int32_t pp_model_micro_batch(const pp_model *m)
{
  return m ? m->micro_batch : 0;
}

pp_precision pp_model_dtype(const pp_model *m)
{
  return m ? m->dtype : PP_PREC_MODEL;
}

static const char *const precision_names[] = {"model", "fp32", "fp16", "bf16"};
static const int32_t precision_bytes[] = {0, 4, 2, 2};

const char *pp_precision_name(pp_precision p)
{
  return ppi_enum_name(precision_names, PPI_COUNT(precision_names), (int)p);
}

pp_status pp_precision_parse(const char *name, pp_precision *out)
{
  int v;
  pp_status rc =
      ppi_enum_parse(precision_names, PPI_COUNT(precision_names), name, &v);
  if (rc == PP_OK)
    *out = (pp_precision)v;
  return rc;
}

static const char *const memory_format_names[] = {"channels_last",
                                                  "contiguous"};

const char *pp_memory_format_name(pp_memory_format f)
{
  return ppi_enum_name(memory_format_names, PPI_COUNT(memory_format_names),
                       (int)f);
}

pp_status pp_memory_format_parse(const char *name, pp_memory_format *out)
{
  int v;
  pp_status rc = ppi_enum_parse(memory_format_names,
                                PPI_COUNT(memory_format_names), name, &v);
  if (rc == PP_OK)
    *out = (pp_memory_format)v;
  return rc;
}

pp_memory_format pp_model_memory_format(const pp_model *m)
{
  return m && m->nchw ? PP_MF_CONTIGUOUS : PP_MF_CHANNELS_LAST;
}

int32_t pp_precision_bytes(pp_precision p)
{
  return (unsigned)p < PPI_COUNT(precision_bytes) ? precision_bytes[p] : 0;
}

const char *pp_model_reference_type(const pp_model *m)
{
  return m ? m->reftype : NULL;
}

double pp_model_efficiency(const pp_model *m)
{
  return m ? m->efficiency : 0;
}

void pp_model_loss(const pp_model *m, double *fwd_bytes, double *bwd_bytes)
{
  if (fwd_bytes)
    *fwd_bytes = m ? m->loss_fbytes : 0;
  if (bwd_bytes)
    *bwd_bytes = m ? m->loss_bbytes : 0;
}

double pp_model_pipe_extra(const pp_model *m)
{
  return m ? m->pipe_extra : 0;
}

int32_t pp_model_nhyper(const pp_model *m)
{
  return m ? m->nhyper : 0;
}

const char *pp_model_hyper(const pp_model *m, int32_t i, double *value)
{
  if (!m || i < 0 || i >= m->nhyper)
    return NULL;
  if (value)
    *value = m->hyper_val[i];
  return m->hyper_key[i];
}

int32_t pp_model_find_op(const pp_model *m, const char *name)
{
  return m ? ppi_strmap_get(&m->opmap, name) : -1;
}

static bool op_in(const pp_model *m, int32_t i)
{
  return m && i >= 0 && i < m->nop;
}

pp_status pp_model_op(const pp_model *m, int32_t i, pp_op_desc *out)
{
  if (!out || !op_in(m, i))
    return PP_EINVAL;
  out->name = m->op_name[i];
  out->kind = m->op_kind[i];
  out->fwd_ms = m->fwd[i];
  out->bwd_ms = m->bwd[i];
  out->update_ms = m->upd[i];
  out->fwd_flops = m->fflops[i];
  out->bwd_flops = m->bflops[i];
  out->fwd_bytes = m->fbytes[i];
  out->bwd_bytes = m->bbytes[i];
  out->param_bytes = m->param[i];
  out->out_bytes = m->out[i];
  out->saved_bytes = m->saved[i];
  return PP_OK;
}

const char *pp_model_op_name(const pp_model *m, int32_t i)
{
  return op_in(m, i) ? m->op_name[i] : NULL;
}

int32_t pp_model_op_tied(const pp_model *m, int32_t i)
{
  return op_in(m, i) ? m->tied[i] : -1;
}

pp_status pp_model_edge(const pp_model *m, int32_t e, int32_t *from,
                        int32_t *to, int64_t *bytes)
{
  if (!m || e < 0 || e >= m->nedge)
    return PP_EINVAL;
  if (from)
    *from = m->esrc[e];
  if (to)
    *to = m->edst[e];
  if (bytes)
    *bytes = m->ebytes[e];
  return PP_OK;
}

void pp_model_op_edges(const pp_model *m, int32_t v, int dir,
                       const int32_t **edges, int32_t *n)
{
  const int32_t *off;
  if (edges)
    *edges = NULL;
  if (n)
    *n = 0;
  if (!op_in(m, v))
    return;
  off = dir ? m->in_off : m->out_off;
  if (edges)
    *edges = (dir ? m->in_e : m->out_e) + off[v];
  if (n)
    *n = off[v + 1] - off[v];
}

int pp_model_edges_implied(const pp_model *m)
{
  return m ? m->edges_implied : 0;
}

int32_t pp_model_ntable(const pp_model *m)
{
  return m ? m->ntable : 0;
}

void pp_model_table_key(const pp_model *m, int32_t t, const char **type,
                        int32_t *tp, int32_t *mbs)
{
  bool ok = m && t >= 0 && t < m->ntable;
  if (type)
    *type = ok ? m->tab_type[t] : NULL;
  if (tp)
    *tp = ok ? m->tab_tp[t] : 0;
  if (mbs)
    *mbs = ok ? m->tab_mbs[t] : 0;
}

int32_t pp_model_ntp_sizes(const pp_model *m)
{
  return m ? m->ntps : 0;
}

/* SPDX-License-Identifier: MIT */
/*
** pp_export_to: an engine's exporter by its name, from the table of
** engines, whose names pp_export_engine_name lists.  The top of the export
*layer: it calls every exporter, and
** the exporters call only export.c below them.
*/
#include "export/export.h"

#include <string.h>

static const struct {
  const char *name;
  pp_status (*fn)(pp_ctx *, const pp_plan *, const pp_model *,
                  const pp_cluster *, pp_export **);
} engines[] = {{"megatron", pp_export_megatron},
               {"deepspeed", pp_export_deepspeed},
               {"torch", pp_export_torch},
               {"pipedream", pp_export_pipedream}};

const char *pp_export_engine_name(int i)
{
  return i >= 0 && (size_t)i < sizeof engines / sizeof engines[0]
             ? engines[i].name
             : NULL;
}

pp_status pp_export_to(pp_ctx *ctx, const char *engine, const pp_plan *p,
                       const pp_model *m, const pp_cluster *c, pp_export **out)
{
  size_t i;
  if (!ctx)
    return PP_EINVAL;
  if (!engine || !out)
    return ppi_fail(ctx, PP_EINVAL, "pp_export_to: NULL argument");
  for (i = 0; i < sizeof engines / sizeof engines[0]; i++)
    if (!strcmp(engines[i].name, engine))
      return engines[i].fn(ctx, p, m, c, out);
  return ppi_fail(ctx, PP_EINVAL,
                  "export: unknown engine '%s' (megatron, deepspeed, torch, "
                  "pipedream)",
                  engine);
}

/* SPDX-License-Identifier: MIT */
/*
** pp_export_to: an engine's exporter by its name, from the table of
** engines, whose names pp_export_engine_name lists.  The top of the export
** layer: it calls every exporter, and
** the exporters call only export.c below them.
*/
#include "export/export.h"

#include <stdio.h>
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
  return i >= 0 && (size_t)i < PPI_COUNT(engines) ? engines[i].name : NULL;
}

pp_status pp_export_to(pp_ctx *ctx, const char *engine, const pp_plan *p,
                       const pp_model *m, const pp_cluster *c, pp_export **out)
{
  char known[128] = "";
  size_t i, at = 0;
  if (!ctx)
    return PP_EINVAL;
  if (!engine || !out)
    return ppi_fail(ctx, PP_EINVAL, "pp_export_to: NULL argument");
  for (i = 0; i < PPI_COUNT(engines); i++)
    if (!strcmp(engines[i].name, engine))
      return engines[i].fn(ctx, p, m, c, out);
  /* the names from the table, so that the message lists a new engine */
  for (i = 0; i < PPI_COUNT(engines) && at < sizeof known; i++)
    at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", i ? ", " : "",
                           engines[i].name);
  return ppi_fail(ctx, PP_EINVAL, "export: unknown engine '%s' (%s)", engine,
                  known);
}

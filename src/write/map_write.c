/* SPDX-License-Identifier: MIT */
/*
** Writing a mapping: the report and JSON of `parplan map` (docs/FORMATS.md,
** "map output").
*/
#include "map/map_view.h"

#include <math.h>
#include <stdio.h>

static void write_json(FILE *f, const struct ppi_map_view *v)
{
  const pp_map_summary *s = v->sum;
  int32_t st, r;
  fputs("{\"stage_graph\": ", f);
  ppi_json_str(f, v->graph_source);
  fputs(", \"cluster\": ", f);
  ppi_json_str(f, v->cluster_name);
  fprintf(f,
          ", \"objective_kind\": \"%s\", \"algorithm\": \"%s\", \"stages\": "
          "%d, \"replicas\": %d, \"devices\": %d",
          pp_map_objective_name(s->objective),
          pp_map_algorithm_name(s->algorithm), (int)s->stages, (int)s->replicas,
          (int)s->devices);
  fputs(",\n \"objective\": ", f);
  ppi_json_num(f, s->objective_ms);
  fputs(", \"lower_bound\": ", f);
  ppi_json_num(f, s->lower_bound_ms);
  fprintf(f, ", \"optimal\": %s, \"timed_out\": %s",
          s->optimal ? "true" : "false", s->timed_out ? "true" : "false");
  fputs(",\n \"mapping\": [", f);
  for (st = 0; st < v->S; st++) {
    fputs(st ? ",\n  [" : "\n  [", f);
    for (r = 0; r < v->R; r++)
      fprintf(f, "%s%d", r ? ", " : "", (int)v->dev[(size_t)r * v->S + st]);
    fputc(']', f);
  }
  fputs("],\n \"stage_times\": [", f);
  for (st = 0; st < v->S; st++) {
    fputs(st ? ", [" : "[", f);
    for (r = 0; r < v->R; r++) {
      if (r)
        fputs(", ", f);
      ppi_json_num(f, v->t[(size_t)r * v->S + st]);
    }
    fputc(']', f);
  }
  fprintf(f, "],\n \"search\": {\"nodes\": %lld, \"seconds\": ",
          (long long)s->nodes);
  ppi_json_num(f, s->seconds);
  fputs("}}\n", f);
}

static void write_text(FILE *f, const struct ppi_map_view *v)
{
  const pp_map_summary *s = v->sum;
  int32_t st, r;
  fprintf(f,
          "mapping of %s (%d stages x %d replicas) onto %s (%d devices): %s "
          "objective, %s\n",
          v->graph_source, (int)s->stages, (int)s->replicas, v->cluster_name,
          (int)s->devices, pp_map_objective_name(s->objective),
          pp_map_algorithm_name(s->algorithm));
  fprintf(f, "objective %.3f ms", s->objective_ms);
  if (s->optimal)
    fputs(" (proven optimal)", f);
  fprintf(f, "; lower bound %.3f ms", s->lower_bound_ms);
  if (s->lower_bound_ms > 0)
    fprintf(f, " (gap %.2f%%)",
            100 * (s->objective_ms / s->lower_bound_ms - 1));
  if (s->algorithm == PP_MAP_EXACT)
    fprintf(f, "; %lld nodes in %.3g s%s", (long long)s->nodes, s->seconds,
            s->timed_out ? ", time limit reached" : "");
  fputs("\n\nstage             replica  device            time_ms\n", f);
  for (st = 0; st < v->S; st++)
    for (r = 0; r < v->R; r++) {
      int32_t d = v->dev[(size_t)r * v->S + st];
      fprintf(f, "%-17s %7d  %-16s %8.3f\n", r ? "" : v->stage_name[st], (int)r,
              v->dev_name[d], v->t[(size_t)r * v->S + st]);
    }
}

pp_status pp_mapping_write(pp_ctx *ctx, const pp_mapping *m, int json, FILE *f)
{
  struct ppi_map_view v;
  if (!ctx || !m || !f)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_mapping_write: NULL argument")
               : PP_EINVAL;
  ppi_map_view(m, &v);
  if (json)
    write_json(f, &v);
  else
    write_text(f, &v);
  return ferror(f) ? ppi_fail(ctx, PP_EIO, "map: write error") : PP_OK;
}

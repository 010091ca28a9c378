/* SPDX-License-Identifier: MIT */
/*
** Writing a partition: the text report and JSON of `parplan partition`
** (docs/FORMATS.md, "partition output and the stage graph") and the stage
** graph that the mapping command reads (docs/DESIGN.md, "Stage graph").
*/
#include "part/part_view.h"

#include <math.h>
#include <stdio.h>

static void json_stage(FILE *f, const pp_part_stage *x)
{
  fprintf(f, "{\"first_layer\": %d, \"layers\": %d, \"processor\": %d",
          (int)x->first_layer, (int)x->nlayer, (int)x->proc);
  if (x->special)
    fputs(", \"special\": true", f);
  fputs(", \"compute_ms\": ", f);
  ppi_json_num(f, x->compute_ms);
  fputs(", \"comm_ms\": ", f);
  ppi_json_num(f, x->comm_ms);
  fputs(", \"time_ms\": ", f);
  ppi_json_num(f, x->time_ms);
  fputs(", \"param_bytes\": ", f);
  ppi_json_num(f, x->param_bytes);
  fputs(", \"memory_bytes\": ", f);
  ppi_json_num(f, x->memory_bytes);
  fputs(", \"memory_limit_bytes\": ", f);
  ppi_json_num(f, x->memory_limit_bytes); /* null: no limit */
  fprintf(f, ", \"in_flight\": %d}", (int)x->in_flight);
}

static void write_json(FILE *f, const struct ppi_part_view *v)
{
  const pp_part_summary *s = v->sum;
  int32_t i, k;

  fputs("{\"model\": ", f);
  ppi_json_str(f, v->model_name);
  fprintf(f, ", \"objective_kind\": \"%s\", \"method\": \"%s\"",
          pp_part_objective_name(s->objective), pp_part_method_name(s->method));
  fputs(",\n \"objective\": ", f);
  ppi_json_num(f, s->objective_ms);
  fputs(", \"lower_bound_ms\": ", f);
  ppi_json_num(f, s->lower_bound_ms);
  fprintf(f, ", \"exact\": %s, \"fits\": %s", s->exact ? "true" : "false",
          s->fits ? "true" : "false");
  if (s->period_ms > 0) {
    fputs(", \"period_ms\": ", f);
    ppi_json_num(f, s->period_ms);
  }
  if (s->sim_period_ms > 0) {
    fputs(", \"simulated\": {\"period_ms\": ", f);
    ppi_json_num(f, s->sim_period_ms);
    fprintf(f,
            ", \"fits\": %s, \"peak_share\": ", s->sim_fits ? "true" : "false");
    ppi_json_num(f, s->sim_peak_share);
    fputs("}", f);
  }
  fprintf(f,
          ",\n \"layers\": %d, \"processors\": %d, \"replicas\": %d, "
          "\"micro_batch\": %d, \"gas\": %lld, \"schedule\": \"%s\", "
          "\"optimizer\": \"%s\", \"estimated_times\": %s",
          (int)s->nlayer, (int)s->nproc, (int)v->replicas, (int)v->micro_batch,
          (long long)v->gas, pp_schedule_name(v->schedule),
          pp_optimizer_name(v->optimizer), v->est ? "true" : "false");
  if (v->dev) {
    fputs(", \"devices\": [", f);
    for (i = 0; i < s->nproc; i++)
      fprintf(f, "%s%d", i ? ", " : "", (int)v->dev[i]);
    fputs("]", f);
  } else {
    fputs(", \"bandwidth_gbps\": ", f);
    ppi_json_num(f, v->bandwidth_gbps);
  }
  fputs(", \"latency_us\": ", f);
  ppi_json_num(f, v->latency_us);
  fprintf(f, ", \"worst_stage\": %d", (int)s->worst_stage);
  if (s->dag_ops > 0)
    fprintf(f,
            ",\n \"operator_level\": {\"operators\": %d, \"clusters\": %d, "
            "\"dp\": \"%s\", \"from_layer_level\": %s, \"refine_moves\": %d, "
            "\"layer_level_ms\": %.17g}",
            (int)s->dag_ops, (int)s->dag_clusters,
            s->dag_downsets ? "down-sets" : "prefixes",
            s->dag_layer_start ? "true" : "false", (int)s->dag_moves,
            s->dag_layer_ms);
  fputs(",\n \"stages\": [", f);
  for (i = 0; i < v->S; i++) {
    fputs(i ? ",\n  [" : "\n  [", f);
    for (k = v->op_off[i]; k < v->op_off[i + 1]; k++)
      fprintf(f, "%s%d", k > v->op_off[i] ? ", " : "", (int)v->ops[k]);
    fputs("]", f);
  }
  fputs("],\n \"stage_costs\": [", f);
  for (i = 0; i < v->S; i++) {
    fputs(i ? ",\n  " : "\n  ", f);
    json_stage(f, &v->st[i]);
  }
  fprintf(f,
          "],\n \"search\": {\"work\": %lld, \"timed_out\": %s, "
          "\"interrupted\": %s, \"seconds\": ",
          (long long)s->work, s->timed_out ? "true" : "false",
          s->interrupted ? "true" : "false");
  ppi_json_num(f, s->seconds);
  fputs("}}\n", f);
}

static void write_text(FILE *f, const struct ppi_part_view *v)
{
  const pp_part_summary *s = v->sum;
  char b1[32], b2[32];
  int32_t i;

  fprintf(f, "partition of %s: %d %s into %d stages (%s objective, %s)\n",
          v->model_name, (int)s->nlayer, s->dag_ops ? "operators" : "layers",
          (int)s->nstage, pp_part_objective_name(s->objective),
          pp_part_method_name(s->method));
  if (s->dag_ops)
    fprintf(f,
            "  operator level: %d hyper-operators, DP over %s%s, %d "
            "refinement moves\n",
            (int)s->dag_clusters,
            s->dag_downsets ? "every fronted subgraph (down-set)"
                            : "the prefixes of one topological order",
            s->dag_clusters < s->dag_ops ? " after clustering" : "",
            (int)s->dag_moves);
  if (v->dev) {
    fputs("  positions:", f);
    for (i = 0; i < s->nproc; i++)
      fprintf(f, " %s", v->dev_name[i]);
    fputc('\n', f);
  } else {
    fprintf(f, "  a flat network of %g GB/s", v->bandwidth_gbps);
    if (v->latency_us > 0)
      fprintf(f, ", latency %g us", v->latency_us);
    fputc('\n', f);
  }
  if (s->period_ms > 0)
    fprintf(f,
            "  %d processors (one special, marked *, may hold several "
            "stages), micro-batch %d, %s, optimizer %s\n",
            (int)s->nproc, (int)v->micro_batch,
            v->phase1 ? "MadPipe's phase 1 alone (its allocation and "
                        "1F1B*'s counts at its period; phase 2 and the "
                        "simulator not run)"
                      : "a periodic 1F1B* pattern",
            pp_optimizer_name(v->optimizer));
  else
    fprintf(f,
            "  %d replicas per stage, micro-batch %d, %lld micro-batches per "
            "replica, %s memory, optimizer %s\n",
            (int)v->replicas, (int)v->micro_batch, (long long)v->gas,
            pp_schedule_name(v->schedule), pp_optimizer_name(v->optimizer));
  fprintf(f, "objective %.3f ms%s", s->objective_ms,
          s->exact ? " (optimal)" : "");
  if (s->period_ms > 0)
    fprintf(f, ", period %.3f ms", s->period_ms);
  if (s->lower_bound_ms > 0)
    fprintf(f, "; lower bound %.3f ms (gap %.1f%%)", s->lower_bound_ms,
            100 * (s->objective_ms / s->lower_bound_ms - 1));
  fprintf(f, "; %.3g s%s\n", s->seconds,
          s->interrupted ? " (interrupted: the best schedule found so far)"
          : s->timed_out ? " (time limit reached: the best schedule found "
                           "in time)"
                         : "");
  if (s->sim_period_ms > 0)
    fprintf(f,
            "simulated: %.3f ms per micro-batch in steady state (%+.2f%% of "
            "the period), peak memory %.1f%% of a processor's: %s\n",
            s->sim_period_ms, 100 * (s->sim_period_ms / s->period_ms - 1),
            100 * s->sim_peak_share, s->sim_fits ? "fits" : "DOES NOT FIT");
  if (!s->fits) {
    const pp_part_stage *w = &v->st[s->worst_stage];
    ppi_fmt_bytes(b1, sizeof b1, w->memory_bytes);
    ppi_fmt_bytes(b2, sizeof b2, w->memory_limit_bytes);
    fprintf(f,
            "does not fit: no partition fits the memory limits; the closest "
            "has stage %d (layers %d..%d) needing %s where the device has "
            "%s\n",
            (int)s->worst_stage, (int)w->first_layer,
            (int)(w->first_layer + w->nlayer - 1), b1, b2);
  }
  if (v->est)
    fputs("  some times are estimated (not profiled at this device type or "
          "micro-batch size)\n",
          f);
  fputs("\nstage  layers        proc  compute_ms   comm_ms   time_ms   "
        "in-flight   memory / limit\n",
        f);
  for (i = 0; i < v->S; i++) {
    const pp_part_stage *x = &v->st[i];
    char lay[32];
    if (x->first_layer < 0)
      snprintf(lay, sizeof lay, "%d ops", (int)x->nlayer);
    else
      snprintf(lay, sizeof lay, "%d..%d", (int)x->first_layer,
               (int)(x->first_layer + x->nlayer - 1));
    ppi_fmt_bytes(b1, sizeof b1, x->memory_bytes);
    if (isfinite(x->memory_limit_bytes))
      ppi_fmt_bytes(b2, sizeof b2, x->memory_limit_bytes);
    else
      snprintf(b2, sizeof b2, "none");
    fprintf(f, "%5d  %-12s %4d%s %10.3f %9.3f %9.3f %11d   %s / %s\n", (int)i,
            lay, (int)x->proc, x->special ? "*" : " ", x->compute_ms,
            x->comm_ms, x->time_ms, (int)x->in_flight, b1, b2);
  }
}

pp_status pp_partition_write(pp_ctx *ctx, const pp_partition *pt, int json,
                             FILE *f)
{
  struct ppi_part_view v;
  if (!ctx || !pt || !f)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_partition_write: NULL argument")
               : PP_EINVAL;
  ppi_part_view(pt, &v);
  if (json)
    write_json(f, &v);
  else
    write_text(f, &v);
  if (ferror(f))
    return ppi_fail(ctx, PP_EIO, "partition: write error");
  return PP_OK;
}

static void emit_graph(FILE *f, const void *obj)
{
  const struct ppi_part_view *v = obj;
  int32_t i;
  fputs("{\"stages\": [", f);
  for (i = 0; i < v->S; i++) {
    fprintf(f, "%s\n  {\"name\": \"stage%d\", \"compute_ms\": ", i ? "," : "",
            (int)i);
    ppi_json_num(f, v->sg_compute[i]);
    fputs(", \"param_bytes\": ", f);
    ppi_json_num(f, v->sg_param[i]);
    fputs("}", f);
  }
  fputs("],\n \"edges\": [", f);
  for (i = 0; i < v->ne; i++) {
    fprintf(f, "%s\n  {\"from\": %d, \"to\": %d, \"bytes\": ", i ? "," : "",
            (int)v->e[i].a, (int)v->e[i].b);
    ppi_json_num(f, v->e[i].bytes);
    fputs("}", f);
  }
  fputs("]}\n", f);
}

pp_status pp_partition_write_stage_graph(pp_ctx *ctx, const pp_partition *pt,
                                         const char *path, FILE *f)
{
  struct ppi_part_view v;
  if (!ctx || !pt || (!path && !f))
    return ctx ? ppi_fail(ctx, PP_EINVAL,
                          "pp_partition_write_stage_graph: NULL argument")
               : PP_EINVAL;
  ppi_part_view(pt, &v);
  return ppi_emit(ctx, path, f, emit_graph, &v);
}

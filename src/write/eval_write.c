/* SPDX-License-Identifier: MIT */
/*
** Writing an analytic estimate: the text report of `parplan evaluate`
** and its JSON (docs/FORMATS.md, "evaluate and simulate output").
*/
#include "cost/cost.h"
#include "cost/cost_eval.h"
#include "write/write.h"

#include <math.h>
#include <stdio.h>

static void json_stage(FILE *f, const pp_stage_cost *x)
{
  fputs("{\"compute_ms\": ", f);
  ppi_json_num(f, x->compute_ms);
  fputs(", \"fwd_ms\": ", f);
  ppi_json_num(f, x->fwd_ms);
  fputs(", \"bwd_ms\": ", f);
  ppi_json_num(f, x->bwd_ms);
  fputs(", \"recompute_ms\": ", f);
  ppi_json_num(f, x->recompute_ms);
  fprintf(f, ", \"straggler\": %d, \"send_ms\": ", (int)x->straggler);
  ppi_json_num(f, x->send_ms);
  fputs(", \"recv_ms\": ", f);
  ppi_json_num(f, x->recv_ms);
  fputs(", \"allreduce_ms\": ", f);
  ppi_json_num(f, x->allreduce_ms);
  fprintf(f, ", \"allreduce\": \"%s\", \"update_ms\": ",
          x->hierarchical ? "hierarchical" : "ring");
  ppi_json_num(f, x->update_ms);
  fputs(", \"param_bytes\": ", f);
  ppi_json_num(f, x->param_bytes);
  fprintf(f,
          ", \"micro_batches\": %lld, \"in_flight\": %d, \"group\": %d, "
          "\"tp\": %d}",
          (long long)x->micro_batches, (int)x->in_flight, (int)x->group,
          (int)x->tp);
}

static int32_t stage_tp(const void *st, int32_t s)
{
  return ((const pp_stage_cost *)st)[s].tp;
}

/* The least room at the upper end of the devices' memory intervals. */
static double upper_margin(const struct ppi_eval_view *v)
{
  double room = 0;
  bool any = false;
  int32_t d;
  for (d = 0; d < v->ndev; d++)
    if (v->mem[d].used)
      ppi_upper_room(v->mem[d].total_bytes, v->mem[d].spread,
                     (double)v->mem[d].capacity_bytes, &room, &any);
  return room;
}

static void write_json(FILE *f, const struct ppi_eval_view *v)
{
  const pp_eval_summary *s = v->sum;
  int32_t i;

  fputs("{\"cost_model\": ", f);
  ppi_json_str(f, v->kind == PP_COST_AMP ? "amp" : "parplan");
  fputs(", \"plan\": ", f);
  ppi_json_str(f, v->plan_src);
  fputs(", \"model\": ", f);
  ppi_json_str(f, v->model_name);
  fputs(", \"cluster\": ", f);
  ppi_json_str(f, v->cluster_name);
  fputs(",\n \"iteration_ms\": ", f);
  ppi_json_num(f, s->iteration_ms);
  fputs(", \"lower_bound_ms\": ", f);
  ppi_json_num(f, s->lower_bound_ms);
  fputs(", \"gap\": ", f);
  ppi_json_num(
      f, s->lower_bound_ms > 0 ? s->iteration_ms / s->lower_bound_ms - 1 : NAN);
  fprintf(f, ", \"fits\": %s, \"margin_bytes\": ", s->fits ? "true" : "false");
  ppi_json_num(f, s->margin_bytes);
  fputs(", \"throughput\": ", f);
  ppi_json_num(f, s->throughput);
  fputs(", \"time_spread\": ", f);
  ppi_json_num(f, s->time_spread);
  fprintf(f, ", \"calibrated\": %s, \"upper_margin_bytes\": ",
          s->calibrated ? "true" : "false");
  ppi_json_num(f, upper_margin(v));
  fputs(",\n \"breakdown\": {\"steady_ms\": ", f);
  ppi_json_num(f, s->steady_ms);
  fputs(", \"fill_ms\": ", f);
  ppi_json_num(f, s->fill_ms);
  fputs(", \"p2p_ms\": ", f);
  ppi_json_num(f, s->p2p_ms);
  fputs(", \"allreduce_ms\": ", f);
  ppi_json_num(f, s->allreduce_ms);
  fputs(", \"update_ms\": ", f);
  ppi_json_num(f, s->update_ms);
  fprintf(f, "}, \"bottleneck_stage\": %d, \"estimated_times\": %s",
          (int)s->bottleneck, s->est ? "true" : "false");
  fprintf(f, ",\n \"schedule\": \"%s\", ", pp_schedule_name(v->sched));
  ppi_json_run(f, v->precision, v->engine, v->zero);
  if (v->period_ms > 0) {
    fputs(", \"period_ms\": ", f);
    ppi_json_num(f, v->period_ms);
  }
  fputs(",\n \"stages\": [", f);
  for (i = 0; i < v->S; i++) {
    fputs(i ? ",\n  " : "\n  ", f);
    json_stage(f, &v->st[i]);
  }
  fputs("],\n \"memory_bytes\": [", f);
  for (i = 0; i < v->ndev; i++) {
    if (i)
      fputs(", ", f);
    if (v->mem[i].used)
      ppi_json_num(f, v->mem[i].total_bytes);
    else
      fputs("null", f);
  }
  fputs("],\n \"capacity_bytes\": [", f);
  for (i = 0; i < v->ndev; i++)
    fprintf(f, i ? ", %lld" : "%lld", (long long)v->mem[i].capacity_bytes);
  fputs("],\n \"memory\": [", f);
  {
    int first = 1;
    for (i = 0; i < v->ndev; i++) {
      const pp_device_memory *x = &v->mem[i];
      if (!x->used)
        continue;
      fprintf(f,
              "%s{\"device\": %d, \"model_bytes\": ", first ? "\n  " : ",\n  ",
              (int)i);
      first = 0;
      ppi_json_num(f, x->model_bytes);
      fputs(", \"activation_bytes\": ", f);
      ppi_json_num(f, x->activation_bytes);
      fputs(", \"buffer_bytes\": ", f);
      ppi_json_num(f, x->buffer_bytes);
      fputs(", \"reserve_bytes\": ", f);
      ppi_json_num(f, x->reserve_bytes);
      fputs(", \"runtime_bytes\": ", f);
      ppi_json_num(f, x->runtime_bytes);
      fputs(", \"transient_bytes\": ", f);
      ppi_json_num(f, x->transient_bytes);
      fputs(", \"slack_bytes\": ", f);
      ppi_json_num(f, x->slack_bytes);
      fputs(", \"total_bytes\": ", f);
      ppi_json_num(f, x->total_bytes);
      fprintf(f, ", \"capacity_bytes\": %lld, \"fits\": %s}",
              (long long)x->capacity_bytes,
              x->total_bytes <= (double)x->capacity_bytes ? "true" : "false");
    }
  }
  fputs("]}\n", f);
}

static void write_text(FILE *f, const struct ppi_eval_view *v)
{
  const pp_eval_summary *s = v->sum;
  char a[64], b[64], c[64], d[64], iv[192];
  int32_t i;
  bool engine_terms = false;

  fprintf(f, "plan %s: model %s on cluster %s\n", v->plan_src, v->model_name,
          v->cluster_name);
  ppi_tp_words(b, sizeof b, stage_tp, v->st, v->S);
  fprintf(f,
          "  %d stages, tp %s, micro-batch %d, global batch %lld, schedule "
          "%s, recomputation %s, optimizer %s\n",
          (int)v->S, b, (int)v->micro_batch, (long long)v->global_batch,
          pp_schedule_name(v->sched), v->recompute ? "on" : "off",
          pp_optimizer_name(v->opt));
  ppi_run_words(a, sizeof a, v->precision, v->engine, v->zero);
  fprintf(f, "  %s\n", a);
  fprintf(f, "iteration %.3f ms (analytic, %s cost model), %.2f samples/s\n",
          s->iteration_ms, v->kind == PP_COST_AMP ? "AMP's" : "parplan",
          s->throughput);
  ppi_interval_words(iv, sizeof iv, s->iteration_ms, s->time_spread,
                     s->calibrated);
  fprintf(f, "  interval %s\n", iv);
  if (s->lower_bound_ms > 0)
    fprintf(f, "  lower bound %.3f ms: the estimate is %.1f%% above it\n",
            s->lower_bound_ms, 100 * (s->iteration_ms / s->lower_bound_ms - 1));
  fprintf(f,
          "  = steady %.3f + fill %.3f (of which transfers %.3f) + allreduce "
          "%.3f + update %.3f ms",
          s->steady_ms, s->fill_ms, s->p2p_ms, s->allreduce_ms, s->update_ms);
  if (s->bottleneck >= 0)
    fprintf(f, "; bottleneck: stage %d\n", (int)s->bottleneck);
  else
    fputs("; bottleneck: a transfer channel\n", f);
  if (s->est)
    fputs("  some times are estimated (not profiled at this device type, "
          "tp or micro-batch size)\n",
          f);
  fputs("\nstage  mbs/rep  in-flight  compute_ms  send_ms  allreduce_ms  "
        "params/rank\n",
        f);
  for (i = 0; i < v->S; i++) {
    const pp_stage_cost *x = &v->st[i];
    ppi_fmt_bytes(a, sizeof a, x->param_bytes);
    fprintf(f, "%5d  %7lld  %9d  %10.3f  %7.3f  %12.3f%s  %s\n", (int)i,
            (long long)x->micro_batches, (int)x->in_flight, x->compute_ms,
            x->send_ms, x->allreduce_ms, x->hierarchical ? "h" : " ", a);
  }
  {
    /* The order every replica of a stage runs (local micro-batch indices:
    ** replica r runs global r + i R_s), up to 32 tasks. */
    enum { SHOW = 32 };
    pp_sched_op ops[SHOW];
    fputs("\norder of each replica (F forward, B backward; local "
          "micro-batches):\n",
          f);
    for (i = 0; i < v->S; i++) {
      int64_t n = 2 * v->st[i].micro_batches, j;
      ppi_sched_order(v->sched, v->st[i].micro_batches, v->st[i].in_flight, ops,
                      SHOW);
      fprintf(f, "%5d ", (int)i);
      for (j = 0; j < n && j < SHOW; j++)
        fprintf(f, " %c%d", ops[j].kind == PP_TASK_FWD ? 'F' : 'B',
                (int)ops[j].micro_batch);
      fputs(n > SHOW ? " ...\n" : "\n", f);
    }
  }
  /* the engine's terms, in columns only when some device has one: the
  ** generic model's table stays as it was */
  for (i = 0; i < v->ndev && !engine_terms; i++)
    engine_terms = v->mem[i].used && (v->mem[i].runtime_bytes != 0 ||
                                      v->mem[i].transient_bytes != 0 ||
                                      v->mem[i].slack_bytes != 0);
  fprintf(f, "\n%-16s  %23s %5s  %10s  %11s  %10s%s\n", "device",
          "memory / capacity", "share", "model", "activations", "buffers",
          engine_terms ? "     runtime   transient       slack" : "");
  for (i = 0; i < v->ndev; i++) {
    const pp_device_memory *x = &v->mem[i];
    if (!x->used)
      continue;
    ppi_fmt_bytes(a, sizeof a, x->total_bytes);
    ppi_fmt_bytes(b, sizeof b, (double)x->capacity_bytes);
    ppi_fmt_bytes(c, sizeof c, x->model_bytes);
    ppi_fmt_bytes(d, sizeof d, x->activation_bytes);
    fprintf(f, "%-16.16s  %10s / %-10s %4.0f%%  %10s  %11s", v->dev_name[i], a,
            b, 100 * x->total_bytes / (double)x->capacity_bytes, c, d);
    ppi_fmt_bytes(a, sizeof a, x->buffer_bytes);
    fprintf(f, "  %10s", a);
    if (engine_terms) {
      ppi_fmt_bytes(a, sizeof a, x->runtime_bytes);
      ppi_fmt_bytes(b, sizeof b, x->transient_bytes);
      ppi_fmt_bytes(c, sizeof c, x->slack_bytes);
      fprintf(f, "  %10s  %10s  %10s", a, b, c);
    }
    fputs(x->total_bytes > (double)x->capacity_bytes ? "  DOES NOT FIT\n"
                                                     : "\n",
          f);
  }
  ppi_margin_words(a, sizeof a, s->margin_bytes);
  ppi_margin_words(b, sizeof b, upper_margin(v));
  fprintf(f,
          "tightest device: %s; at the upper end of its memory interval "
          "(two spreads): %s\n",
          a, b);
  if (!s->fits && s->worst_device >= 0) {
    const pp_device_memory *x = &v->mem[s->worst_device];
    ppi_fmt_bytes(a, sizeof a, x->total_bytes);
    ppi_fmt_bytes(b, sizeof b, (double)x->capacity_bytes);
    fprintf(f,
            "\nthe plan does not fit: device %d ('%s') needs %s and has %s\n",
            (int)s->worst_device, v->dev_name[s->worst_device], a, b);
  }
}

pp_status pp_eval_write(pp_ctx *ctx, const pp_eval *e, int json, FILE *f)
{
  struct ppi_eval_view v;
  if (!ctx || !e || !f)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_eval_write: NULL argument")
               : PP_EINVAL;
  ppi_eval_view(e, &v);
  if (json)
    write_json(f, &v);
  else
    write_text(f, &v);
  if (ferror(f))
    return ppi_fail(ctx, PP_EIO, "writing the estimate failed");
  return PP_OK;
}

/* SPDX-License-Identifier: MIT */
/*
** Writing a simulation: the text report of `parplan simulate` with its
** Gantt chart, its JSON (docs/FORMATS.md, "evaluate and simulate
** output"), and a Chrome trace ([TraceEvent]; docs/FORMATS.md, "Chrome
** trace") that Perfetto and chrome://tracing open: one process per
** device, thread 0 its compute stream, thread 1 + p its transfers to
** device p, and a "memory" counter.  Times in the trace are in
** microseconds, as the format wants.  Every writer streams.
*/
#include "sim/sim.h"
#include "write/write.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Capacity less the peak on the device with the least room (0 when
** none is used). */
static double sim_margin(const struct pp_sim *s)
{
  double m = 0;
  int32_t d;
  bool any = false;
  for (d = 0; d < s->ndev; d++) {
    const pp_sim_device *v = &s->dev[d];
    double room = (double)v->capacity_bytes - v->peak_memory_bytes;
    if (v->used && (!any || room < m)) {
      m = room;
      any = true;
    }
  }
  return m;
}

/* The same at the upper end of the memory intervals (two spreads). */
static double sim_upper_margin(const struct pp_sim *s)
{
  double room = 0;
  bool any = false;
  int32_t d;
  for (d = 0; d < s->ndev; d++)
    if (s->dev[d].used)
      ppi_upper_room(s->dev[d].peak_memory_bytes, s->dev[d].spread,
                     (double)s->dev[d].capacity_bytes, &room, &any);
  return room;
}

static void json_summary(FILE *f, const struct pp_sim *s)
{
  int32_t d;
  int64_t i;
  fprintf(f, "{\"plan\": ");
  ppi_json_str(f, s->plan_src);
  fputs(", \"model\": ", f);
  ppi_json_str(f, s->model_name);
  fputs(", \"cluster\": ", f);
  ppi_json_str(f, s->cluster_name);
  fprintf(f, ", \"network\": \"%s\", ",
          s->net == PP_NET_LINKS ? "links" : "channels");
  ppi_json_run(f, s->precision, s->engine, s->zero);
  fputs(",\n \"iteration_ms\": ", f);
  ppi_json_num(f, s->sum.iteration_ms);
  fputs(", \"analytic_ms\": ", f);
  ppi_json_num(f, s->sum.analytic_ms);
  fputs(", \"lower_bound_ms\": ", f);
  ppi_json_num(f, s->sum.lower_bound_ms);
  fprintf(f, ", \"events\": %lld, \"fits\": %s, \"margin_bytes\": ",
          (long long)s->sum.nevents, s->sum.fits ? "true" : "false");
  ppi_json_num(f, sim_margin(s));
  fputs(", \"upper_margin_bytes\": ", f);
  ppi_json_num(f, sim_upper_margin(s));
  fputs(", \"time_spread\": ", f);
  ppi_json_num(f, s->sum.time_spread);
  fprintf(f, ", \"calibrated\": %s", s->sum.calibrated ? "true" : "false");
  fputs(",\n \"peak_memory_bytes\": [", f);
  for (d = 0; d < s->ndev; d++) {
    if (d)
      fputs(", ", f);
    if (s->dev[d].used)
      ppi_json_num(f, s->dev[d].peak_memory_bytes);
    else
      fputs("null", f);
  }
  fputs("],\n \"devices\": [", f);
  {
    int first = 1;
    for (d = 0; d < s->ndev; d++) {
      const pp_sim_device *x = &s->dev[d];
      if (!x->used)
        continue;
      fprintf(f, "%s{\"device\": %d, \"busy_ms\": ", first ? "\n  " : ",\n  ",
              (int)d);
      first = 0;
      ppi_json_num(f, x->busy_ms);
      fputs(", \"idle_ms\": ", f);
      ppi_json_num(f, x->idle_ms);
      fputs(", \"bubble_ms\": ", f);
      ppi_json_num(f, x->bubble_ms);
      fputs(", \"comm_ms\": ", f);
      ppi_json_num(f, x->comm_ms);
      fputs(", \"peak_memory_bytes\": ", f);
      ppi_json_num(f, x->peak_memory_bytes);
      fprintf(f, ", \"capacity_bytes\": %lld}", (long long)x->capacity_bytes);
    }
  }
  fputs("],\n \"critical_path\": [", f);
  for (i = 0; i < s->ncrit; i++) {
    const pp_sim_event *e = &s->ev[s->crit[i]];
    fprintf(f,
            "%s{\"kind\": \"%s\", \"stage\": %d, \"micro_batch\": %lld, "
            "\"device\": %d, \"start_ms\": ",
            i ? ",\n  " : "\n  ", pp_task_kind_name(e->kind), (int)e->stage,
            (long long)e->micro_batch, (int)e->device);
    ppi_json_num(f, e->start_ms);
    fputs(", \"end_ms\": ", f);
    ppi_json_num(f, e->end_ms);
    fputc('}', f);
  }
  fputs("]}\n", f);
}

/* A text Gantt chart: one row per used device, one column per slice of
** the iteration; a column shows what its device computed longest in it:
** F/f forward, B/b backward (the case alternates between consecutive
** tasks so that neighbours stay apart), r recompute, U update, '~' a transfer
** leaving the device, '.' idle. */
static pp_status gantt(pp_ctx *ctx, FILE *f, const struct pp_sim *s, int cols)
{
  double T = s->sum.iteration_ms, w;
  int32_t d, nused = 0;
  int64_t i;
  static const char kc[] = {'F', 'r', 'B', '~', '~', '~', 'U'};
  double *occ; /* [cols * 8] time per kind per column, one device */
  char *line;

  for (d = 0; d < s->ndev; d++)
    nused += s->dev[d].used;
  if (nused > PPI_TEXT_GANTT_MAX_DEVICES || T <= 0 || cols < 10)
    return PP_OK;
  occ = ppi_calloc(ctx, (size_t)cols * 8, sizeof *occ);
  line = ppi_calloc(ctx, (size_t)cols + 1, 1);
  if (!occ || !line) {
    ppi_free(ctx, occ, (size_t)cols * 8 * sizeof *occ);
    ppi_free(ctx, line, (size_t)cols + 1);
    return PP_ENOMEM;
  }
  w = T / cols;
  fprintf(f, "\n%-12s|%*s|\n", "time", cols, "");
  for (d = 0; d < s->ndev; d++) {
    int c;
    if (!s->dev[d].used)
      continue;
    memset(occ, 0, (size_t)cols * 8 * sizeof *occ);
    memset(line, '.', (size_t)cols);
    int64_t nf = 0, nb = 0;
    for (i = 0; i < s->nev; i++) {
      const pp_sim_event *e = &s->ev[i];
      int slot = e->kind, c0, c1;
      if (e->device != d || e->end_ms <= e->start_ms)
        continue;
      /* alternate the case between consecutive tasks of a kind */
      if ((e->kind == PP_TASK_FWD && (nf++ & 1)) ||
          (e->kind == PP_TASK_BWD && (nb++ & 1)))
        slot = 7;
      c0 = (int)(e->start_ms / w);
      c1 = (int)(e->end_ms / w);
      if (c1 >= cols)
        c1 = cols - 1;
      for (c = c0; c <= c1 && c < cols; c++) {
        double a = fmax(e->start_ms, c * w), b = fmin(e->end_ms, (c + 1) * w);
        int k = e->kind == PP_TASK_BWD && slot == 7 ? 5 : slot;
        if (e->kind == PP_TASK_FWD && slot == 7)
          k = 4; /* odd forward */
        if (e->kind >= PP_TASK_SEND_ACT && e->kind <= PP_TASK_ALLREDUCE)
          k = 3;
        if (b > a)
          occ[c * 8 + k] += b - a;
      }
    }
    for (c = 0; c < cols; c++) {
      int k, best = -1;
      double bv = 0;
      for (k = 0; k < 8; k++) /* compute wins over transfers at equal time */
        if (occ[c * 8 + k] > bv + PPI_REL_ROUNDING * w ||
            (k != 3 && best == 3 && occ[c * 8 + k] >= bv)) {
          bv = occ[c * 8 + k];
          best = k;
        }
      if (best < 0 || bv < 0.05 * w)
        continue;
      line[c] = best == 4 ? 'f' : best == 5 ? 'b' : kc[best];
    }
    fprintf(f, "%-12.12s|%s|\n", s->dev_name[d], line);
  }
  fprintf(f, "%-12s 0%*s%.1f ms\n", "", cols - 1, "", T);
  fputs("F/f forward, B/b backward (the case alternates between tasks), r "
        "recompute,\nU update, ~ transfer out, . idle\n",
        f);
  ppi_free(ctx, occ, (size_t)cols * 8 * sizeof *occ);
  ppi_free(ctx, line, (size_t)cols + 1);
  return PP_OK;
}

static pp_status text(pp_ctx *ctx, FILE *f, const struct pp_sim *s, int cols)
{
  const pp_sim_summary *x = &s->sum;
  int32_t d;
  char a[64], b[64], iv[192];

  fprintf(f, "plan %s: model %s on cluster %s (simulated, %s)\n", s->plan_src,
          s->model_name, s->cluster_name,
          s->net == PP_NET_LINKS ? "shared links"
                                 : "a channel per device pair");
  ppi_run_words(a, sizeof a, s->precision, s->engine, s->zero);
  fprintf(f, "  %s\n", a);
  fprintf(f,
          "iteration %.3f ms; analytic estimate %.3f ms; lower bound %.3f "
          "ms (gap %.1f%%)\n",
          x->iteration_ms, x->analytic_ms, x->lower_bound_ms,
          x->lower_bound_ms > 0
              ? 100 * (x->iteration_ms / x->lower_bound_ms - 1)
              : 0.0);
  ppi_interval_words(iv, sizeof iv, x->iteration_ms, x->time_spread,
                     x->calibrated);
  fprintf(f, "  interval %s\n", iv);
  fprintf(f, "%lld tasks simulated\n\n", (long long)x->nevents);
  fputs("device              busy_ms    idle_ms  bubble_ms    comm_ms  peak "
        "memory / capacity\n",
        f);
  for (d = 0; d < s->ndev; d++) {
    const pp_sim_device *v = &s->dev[d];
    if (!v->used)
      continue;
    ppi_fmt_bytes(a, sizeof a, v->peak_memory_bytes);
    ppi_fmt_bytes(b, sizeof b, (double)v->capacity_bytes);
    fprintf(f, "%-16.16s  %9.3f  %9.3f  %9.3f  %9.3f  %s / %s%s\n",
            s->dev_name[d], v->busy_ms, v->idle_ms, v->bubble_ms, v->comm_ms, a,
            b,
            v->peak_memory_bytes > (double)v->capacity_bytes ? "  DOES NOT FIT"
                                                             : "");
  }
  ppi_margin_words(a, sizeof a, sim_margin(s));
  ppi_margin_words(b, sizeof b, sim_upper_margin(s));
  fprintf(f,
          "tightest device: %s; at the upper end of its memory interval "
          "(two spreads): %s\n",
          a, b);
  if (!x->fits && x->worst_device >= 0) {
    const pp_sim_device *v = &s->dev[x->worst_device];
    ppi_fmt_bytes(a, sizeof a, v->peak_memory_bytes);
    ppi_fmt_bytes(b, sizeof b, (double)v->capacity_bytes);
    fprintf(f,
            "\nthe plan does not fit: device %d ('%s') peaks at %s and has "
            "%s\n",
            (int)x->worst_device, s->dev_name[x->worst_device], a, b);
  }
  if (s->ncrit > 0) {
    int64_t i, shown = 0;
    fprintf(f, "\ncritical path (%lld tasks):", (long long)s->ncrit);
    for (i = 0; i < s->ncrit && shown < 24; i++, shown++) {
      const pp_sim_event *e = &s->ev[s->crit[i]];
      fprintf(f, "%s%s s%d", i ? " -> " : " ", pp_task_kind_name(e->kind),
              (int)e->stage);
      if (e->kind == PP_TASK_ALLREDUCE)
        fprintf(f, " step %lld", (long long)e->micro_batch);
      else if (e->kind != PP_TASK_UPDATE)
        fprintf(f, " mb%lld", (long long)e->micro_batch);
      fprintf(f, " @%s", s->dev_name[e->device]);
    }
    fputs(s->ncrit > shown ? " -> ...\n" : "\n", f);
  }
  return cols > 0 ? gantt(ctx, f, s, cols) : PP_OK;
}

pp_status pp_sim_write(pp_ctx *ctx, const pp_sim *s, int json, int gantt_cols,
                       FILE *f)
{
  pp_status rc;
  if (!ctx || !s || !f)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_sim_write: NULL argument")
               : PP_EINVAL;
  if (json)
    json_summary(f, s);
  else if ((rc = text(ctx, f, s, gantt_cols)))
    return rc;
  if (ferror(f))
    return ppi_fail(ctx, PP_EIO, "writing the simulation failed");
  return PP_OK;
}

static void us(FILE *f, double ms)
{
  fprintf(f, "%.3f", ms * 1000);
}

struct trace {
  const struct pp_sim *s;
  int64_t *pairs; /* device * ndev + peer of every transfer track, sorted */
  int64_t npairs;
};

static int cmp_i64(const void *x, const void *y)
{
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

static void emit_trace(FILE *f, const void *obj)
{
  const struct trace *tr = obj;
  const struct pp_sim *s = tr->s;
  int32_t d;
  int64_t i;
  int first = 1;

  fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [", f);
  for (d = 0; d < s->ndev; d++) {
    if (!s->dev[d].used)
      continue;
    fprintf(f,
            "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, "
            "\"args\": {\"name\": ",
            first ? "\n" : ",\n", (int)d);
    first = 0;
    ppi_json_str(f, s->dev_name[d]);
    fprintf(f,
            "}},\n{\"ph\": \"M\", \"name\": \"process_sort_index\", "
            "\"pid\": %d, \"args\": {\"sort_index\": %d}},\n"
            "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
            "\"tid\": 0, \"args\": {\"name\": \"compute\"}}",
            (int)d, (int)d, (int)d);
  }
  for (i = 0; i < tr->npairs; i++) { /* name the transfer tracks */
    int32_t dev = (int32_t)(tr->pairs[i] / s->ndev);
    int32_t peer = (int32_t)(tr->pairs[i] % s->ndev);
    char buf[PP_MAX_NAME + 8];
    fprintf(f,
            ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
            "\"tid\": %d, \"args\": {\"name\": ",
            (int)dev, (int)peer + 1);
    snprintf(buf, sizeof buf, "to %s", s->dev_name[peer]);
    ppi_json_str(f, buf);
    fputs("}}", f);
  }
  for (i = 0; i < s->nev; i++) {
    const pp_sim_event *e = &s->ev[i];
    fprintf(f,
            ",\n{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"name\": "
            "\"%s s%d mb%lld\", \"cat\": \"%s\", \"ts\": ",
            (int)e->device, e->peer >= 0 ? (int)e->peer + 1 : 0,
            pp_task_kind_name(e->kind), (int)e->stage,
            (long long)e->micro_batch, pp_task_kind_name(e->kind));
    us(f, e->start_ms);
    fputs(", \"dur\": ", f);
    us(f, e->end_ms - e->start_ms);
    fprintf(f, ", \"args\": {\"stage\": %d, \"micro_batch\": %lld",
            (int)e->stage, (long long)e->micro_batch);
    if (e->peer >= 0)
      fprintf(f, ", \"bytes\": %.0f", e->bytes);
    fputs("}}", f);
  }
  for (i = 0; i < s->nmem; i++) {
    const struct ppi_memsample *m = &s->mem[i];
    fprintf(f, ",\n{\"ph\": \"C\", \"pid\": %d, \"name\": \"memory\", \"ts\": ",
            (int)m->d);
    us(f, m->t);
    fprintf(f, ", \"args\": {\"bytes\": %.0f}}", m->bytes);
  }
  fputs("\n]}\n", f);
}

pp_status pp_sim_write_trace(pp_ctx *ctx, const pp_sim *s, const char *path,
                             FILE *f)
{
  if (!ctx || !s || (!path && !f))
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_sim_write_trace: NULL argument")
               : PP_EINVAL;
  {
    struct trace tr;
    int64_t i, n = 0;
    pp_status rc;
    tr.s = s;
    tr.pairs = ppi_alloc(ctx, ((size_t)s->nev + 1) * sizeof *tr.pairs);
    if (!tr.pairs)
      return PP_ENOMEM;
    for (i = 0; i < s->nev; i++)
      if (s->ev[i].peer >= 0)
        tr.pairs[n++] = (int64_t)s->ev[i].device * s->ndev + s->ev[i].peer;
    qsort(tr.pairs, (size_t)n, sizeof *tr.pairs, cmp_i64);
    tr.npairs = 0;
    for (i = 0; i < n; i++)
      if (i == 0 || tr.pairs[i] != tr.pairs[i - 1])
        tr.pairs[tr.npairs++] = tr.pairs[i];
    rc = ppi_emit(ctx, path, f, emit_trace, &tr);
    ppi_free(ctx, tr.pairs, ((size_t)s->nev + 1) * sizeof *tr.pairs);
    return rc;
  }
}

/* SPDX-License-Identifier: MIT */
/*
** The plan report: one self-contained HTML page (no external resource,
** so it opens offline and can be mailed) that shows why a plan is good:
**   - the figures: simulated and analytic iteration time, the lower bound
**     and the gap to it, throughput, degrees, schedule, memory fit;
**   - the topology with the mapping drawn on it: a box per node, a disc
**     per device coloured by the stage it runs (grey: idle), and each
**     replica's pipeline path between stages, drawn thicker and darker
**     the faster the link it crosses;
**   - the Gantt chart of one simulated iteration (gantt_write.c's SVG,
**     embedded as a data URI);
**   - memory per device against its capacity (parameters and optimizer
**     state, activations, buffers, reserve; the simulator's peak);
**   - the breakdown of the iteration time and the per-stage costs;
**   - the comparison with the baselines users would otherwise pick
**     (pp_plan_compare: our search, Megatron's heuristic, AMP, PipeDream,
**     random), all priced by the same simulator.
** pp_report_write (a public name) computes what the page shows first:
** the estimate and the recorded simulation (price_and_simulate), and the
** comparison, which runs the planner (run_comparison); then it formats
** the page from them (format_report) and writes it.
** The text is built in memory and written once (temporary file, then
** rename).  Nothing in it depends on the clock: the same inputs and seed
** give the same bytes.  A few lines of script only highlight a stage
** when its legend entry is hovered; the page reads fine without it.
*/
#include "write/write.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pp_report_params_init(pp_report_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->baselines = 1;
  p->time_limit_s = 10;
  p->threads = 2;
}

/* ---- text helpers ------------------------------------------------------- */

static void esc(struct ppi_sbuf *b, const char *s)
{
  for (; s && *s; s++)
    switch (*s) {
    case '<': ppi_sb_puts(b, "&lt;"); break;
    case '>': ppi_sb_puts(b, "&gt;"); break;
    case '&': ppi_sb_puts(b, "&amp;"); break;
    case '"': ppi_sb_puts(b, "&quot;"); break;
    case '\'': ppi_sb_puts(b, "&#39;"); break;
    default: ppi_sb_put(b, s, 1);
    }
}

static void base64(struct ppi_sbuf *b, const unsigned char *d, size_t n)
{
  static const char t[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i;
  char q[4];
  for (i = 0; i + 2 < n; i += 3) {
    q[0] = t[d[i] >> 2];
    q[1] = t[((d[i] & 3) << 4) | (d[i + 1] >> 4)];
    q[2] = t[((d[i + 1] & 15) << 2) | (d[i + 2] >> 6)];
    q[3] = t[d[i + 2] & 63];
    ppi_sb_put(b, q, 4);
  }
  if (i < n) {
    q[0] = t[d[i] >> 2];
    if (i + 1 < n) {
      q[1] = t[((d[i] & 3) << 4) | (d[i + 1] >> 4)];
      q[2] = t[(d[i + 1] & 15) << 2];
    } else {
      q[1] = t[(d[i] & 3) << 4];
      q[2] = '=';
    }
    q[3] = '=';
    ppi_sb_put(b, q, 4);
  }
}

static void gib(char *buf, size_t n, double bytes)
{
  snprintf(buf, n, "%.2f", bytes / (1024.0 * 1024.0 * 1024.0));
}

/* Stage s's colour: hues spread around the wheel. */
static void stage_color(char *buf, size_t n, int32_t s, int32_t ns)
{
  snprintf(buf, n, "hsl(%d,62%%,%d%%)",
           (int)(ns > 0 ? (s * 360 / ns + 200) % 360 : 200), s % 2 ? 58 : 46);
}

/* ---- the report --------------------------------------------------------- */

struct rep {
  pp_ctx *ctx;
  const pp_plan *p;
  const pp_model *m;
  const pp_cluster *c;
  pp_plan_params pp;
  pp_eval *e;
  pp_sim *sim;
  pp_compare *cmp;
  int32_t ndev, nstage;
  int32_t *stage_of, *replica_of; /* device -> stage, replica; -1 idle */
  struct ppi_sbuf *b;
};

static const char css[] =
    "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px;color:#222;"
    "max-width:1260px}h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;"
    "margin-top:28px;border-bottom:1px solid #ccc;padding-bottom:3px}"
    ".sub{color:#666;font-size:13px}.cards{display:flex;flex-wrap:wrap;gap:"
    "10px;margin-top:12px}.card{border:1px solid #ddd;border-radius:6px;"
    "padding:8px 12px;min-width:130px}.card b{display:block;font-size:18px}"
    ".card span{font-size:12px;color:#666}table{border-collapse:collapse;"
    "font-size:13px;margin-top:8px}td,th{border:1px solid #ddd;padding:3px "
    "8px;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}"
    ".bad{color:#b00020;font-weight:bold}.good{color:#1b7a1b}.legend span{"
    "display:inline-block;margin-right:12px;font-size:12px;cursor:default}"
    ".legend i{display:inline-block;width:12px;height:12px;margin-right:4px;"
    "vertical-align:middle;border-radius:6px}svg text{font-family:'DejaVu "
    "Sans',Arial,sans-serif}.dim{opacity:0.18}";

static const char script[] =
    "(function(){var items=document.querySelectorAll('.legend span[data-s]');"
    "items.forEach(function(it){it.addEventListener('mouseenter',function(){"
    "var s=it.getAttribute('data-s');document.querySelectorAll('.dev')."
    "forEach(function(d){if(d.getAttribute('data-s')!==s)d.classList.add("
    "'dim');});});it.addEventListener('mouseleave',function(){document."
    "querySelectorAll('.dev').forEach(function(d){d.classList.remove('dim')"
    ";});});});document.body.setAttribute('data-ready','1');})();";

static void card(struct ppi_sbuf *b, const char *value, const char *label,
                 const char *cls)
{
  ppi_sb_printf(b, "<div class=\"card\"><b%s%s%s>", cls ? " class=\"" : "",
                cls ? cls : "", cls ? "\"" : "");
  esc(b, value);
  ppi_sb_puts(b, "</b><span>");
  esc(b, label);
  ppi_sb_puts(b, "</span></div>");
}

static int32_t plan_tp(const void *p, int32_t s)
{
  return pp_plan_stage_tp(p, s);
}

static void summary(struct rep *r)
{
  struct ppi_sbuf *b = r->b;
  pp_eval_summary es;
  pp_sim_summary ss;
  char v[128];
  int32_t used = 0, d, dpmax = 0, s;
  char tps[64];
  double gap;
  pp_eval_get_summary(r->e, &es);
  pp_sim_get_summary(r->sim, &ss);
  for (d = 0; d < r->ndev; d++)
    used += r->stage_of[d] >= 0;
  for (s = 0; s < r->nstage; s++)
    if (pp_plan_nreplica(r->p, s) > dpmax)
      dpmax = pp_plan_nreplica(r->p, s);
  gap = ss.lower_bound_ms > 0 ? ss.iteration_ms / ss.lower_bound_ms - 1 : 0;
  ppi_sb_puts(b, "<div class=\"cards\">");
  snprintf(v, sizeof v, "%.3f ms", ss.iteration_ms);
  card(b, v, "iteration (simulated)", NULL);
  snprintf(v, sizeof v, "%.3f ms", es.iteration_ms);
  card(b, v, "iteration (analytic)", NULL);
  snprintf(v, sizeof v, "%.3f ms", ss.lower_bound_ms);
  card(b, v, "lower bound", NULL);
  snprintf(v, sizeof v, "%.1f %%", 100 * gap);
  card(b, v, "above the lower bound", NULL);
  snprintf(v, sizeof v, "%.1f /s",
           ss.iteration_ms > 0
               ? (double)r->pp.global_batch * 1000.0 / ss.iteration_ms
               : 0);
  card(b, v, "samples per second", NULL);
  snprintf(v, sizeof v, "%d of %d", (int)used, (int)r->ndev);
  card(b, v, "devices used", NULL);
  ppi_tp_words(tps, sizeof tps, plan_tp, r->p, r->nstage);
  snprintf(v, sizeof v, "%d x %d x %s", (int)r->nstage, (int)dpmax, tps);
  card(b, v, "stages x replicas x tp", NULL);
  snprintf(v, sizeof v, "%d / %lld", (int)r->pp.micro_batch,
           (long long)r->pp.global_batch);
  card(b, v, "micro-batch / global batch", NULL);
  snprintf(v, sizeof v, "%s%s", pp_schedule_name(r->pp.schedule),
           r->pp.recompute ? " + recompute" : "");
  card(b, v, "schedule", NULL);
  card(b, ss.fits ? "fits" : "does not fit", "memory",
       ss.fits ? "good" : "bad");
  ppi_sb_puts(b, "</div>\n");
}

/* The topology: node boxes in a flow layout, a disc per device. */
static void topology(struct rep *r)
{
  struct ppi_sbuf *b = r->b;
  pp_ctx *ctx = r->ctx;
  int32_t nn = 0, i, d, s, pass, *node_ids = NULL, *cnt = NULL;
  double *dx = NULL, *dy = NULL, cell = r->ndev > 256 ? 16 : 46, x = 10, y = 10,
         rowh = 0, width = 1200, height, maxbw = 0;
  char col[64];

  node_ids = ppi_calloc(ctx, (size_t)r->ndev, sizeof *node_ids);
  cnt = ppi_calloc(ctx, (size_t)r->ndev, sizeof *cnt);
  dx = ppi_calloc(ctx, (size_t)r->ndev, sizeof *dx);
  dy = ppi_calloc(ctx, (size_t)r->ndev, sizeof *dy);
  if (!node_ids || !cnt || !dx || !dy) {
    b->rc = ctx->err;
    goto done;
  }
  /* nodes in order of first appearance */
  for (d = 0; d < r->ndev; d++) {
    int32_t id = pp_cluster_device_node(r->c, d);
    for (i = 0; i < nn && node_ids[i] != id; i++)
      ;
    if (i == nn)
      node_ids[nn++] = id;
    cnt[i]++;
  }
  /* first pass: positions */
  {
    struct ppi_sbuf boxes;
    ppi_sb_init(&boxes, ctx);
    for (i = 0; i < nn; i++) {
      int32_t cols = cnt[i] < 8 ? cnt[i] : 8, rows = (cnt[i] + 7) / 8, k = 0;
      double bw = cols * cell + 16, bh = rows * cell + 28;
      const char *host = NULL;
      if (x + bw > width - 10 && x > 10) {
        x = 10;
        y += rowh + 12;
        rowh = 0;
      }
      for (d = 0; d < r->ndev; d++)
        if (pp_cluster_device_node(r->c, d) == node_ids[i]) {
          pp_device_desc dd;
          pp_cluster_device(r->c, d, &dd);
          if (!host)
            host = dd.host;
          dx[d] = x + 8 + (k % 8) * cell + cell / 2;
          dy[d] = y + 22 + (double)(k / 8) * cell + cell / 2;
          k++;
        }
      ppi_sb_printf(&boxes,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\" rx=\"6\" fill=\"#fafafa\" "
                    "stroke=\"#bbb\"/><text x=\"%.1f\" y=\"%.1f\" "
                    "font-size=\"11\" fill=\"#555\">",
                    x, y, bw, bh, x + 6, y + 14);
      if (host)
        esc(&boxes, host);
      else
        ppi_sb_printf(&boxes, "node %d", (int)node_ids[i]);
      ppi_sb_puts(&boxes, "</text>\n");
      x += bw + 12;
      if (bh > rowh)
        rowh = bh;
    }
    height = y + rowh + 10;
    ppi_sb_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                  "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
                  "aria-label=\"topology and mapping\">\n",
                  width, height, width, height);
    if (boxes.rc)
      b->rc = boxes.rc;
    else
      ppi_sb_put(b, boxes.s, boxes.n);
    ppi_sb_free(&boxes);
  }
  /* the pipeline path of each replica: stage s's replica k to stage
  ** s+1's replica k mod R, first tensor-parallel rank of each; a first
  ** pass finds the fastest link (the scale), the second draws */
  for (pass = 0; pass < 2; pass++)
    for (s = 0; s + 1 < r->nstage; s++) {
      int32_t ra = pp_plan_nreplica(r->p, s),
              rb = pp_plan_nreplica(r->p, s + 1), k, n = ra > rb ? ra : rb;
      for (k = 0; k < n; k++) {
        int32_t a = pp_plan_replica(r->p, s, k % ra)[0],
                c2 = pp_plan_replica(r->p, s + 1, k % rb)[0];
        double bw, f;
        if (a == c2)
          continue;
        bw = pp_cluster_bandwidth(r->c, a, c2);
        if (pass == 0) {
          maxbw = bw > maxbw ? bw : maxbw;
          continue;
        }
        f = maxbw > 0 ? bw / maxbw : 1;
        ppi_sb_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"rgb(%d,%d,%d)\" "
                      "stroke-width=\"%.1f\" stroke-opacity=\"0.8\"><title>"
                      "stage %d to %d, replica %d: %.4g GB/s</title></line>\n",
                      dx[a], dy[a], dx[c2], dy[c2], (int)(200 - 160 * f),
                      (int)(200 - 160 * f), (int)(200 - 160 * f), 1 + 4 * f,
                      (int)s, (int)s + 1, (int)k, bw);
      }
    }
  for (d = 0; d < r->ndev; d++) {
    pp_device_desc dd;
    pp_device_type_desc td;
    int32_t st = r->stage_of[d];
    pp_cluster_device(r->c, d, &dd);
    pp_cluster_type(r->c, pp_cluster_device_type(r->c, d), &td);
    if (st >= 0)
      stage_color(col, sizeof col, st, r->nstage);
    else
      snprintf(col, sizeof col, "#d5d5d5");
    ppi_sb_printf(b,
                  "<g class=\"dev\" data-s=\"%d\"><circle cx=\"%.1f\" "
                  "cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" stroke=\"#333\" "
                  "stroke-width=\"0.6\"><title>",
                  (int)st, dx[d], dy[d], cell * 0.4, col);
    esc(b, dd.name);
    ppi_sb_puts(b, " (");
    esc(b, td.name);
    if (st >= 0)
      ppi_sb_printf(b, "): stage %d, replica %d</title></circle>", (int)st,
                    (int)r->replica_of[d]);
    else
      ppi_sb_puts(b, "): idle</title></circle>");
    if (st >= 0 && cell >= 40)
      ppi_sb_printf(b,
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                    "text-anchor=\"middle\" fill=\"#fff\">S%d</text>"
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"8\" "
                    "text-anchor=\"middle\" fill=\"#fff\">r%d</text>",
                    dx[d], dy[d] - 1, (int)st, dx[d], dy[d] + 9,
                    (int)r->replica_of[d]);
    ppi_sb_puts(b, "</g>\n");
  }
  ppi_sb_puts(b, "</svg>\n<div class=\"legend\">");
  for (s = 0; s < r->nstage; s++) {
    stage_color(col, sizeof col, s, r->nstage);
    ppi_sb_printf(b,
                  "<span data-s=\"%d\"><i style=\"background:%s\"></i>stage "
                  "%d</span>",
                  (int)s, col, (int)s);
  }
  ppi_sb_puts(b, "<span data-s=\"-1\"><i style=\"background:#d5d5d5\">"
                 "</i>idle</span></div>\n<p class=\"sub\">");
  if (maxbw > 0)
    ppi_sb_printf(b,
                  "Lines: each replica's path from stage to stage, darker "
                  "and thicker the faster the link (fastest used: %.4g "
                  "GB/s). ",
                  maxbw);
  else
    ppi_sb_puts(b, "No transfers between stages on different devices. ");
  ppi_sb_puts(b, "Hover a device for its name, type, stage and "
                 "replica.</p>\n");
done:
  if (node_ids)
    ppi_free(ctx, node_ids, (size_t)r->ndev * sizeof *node_ids);
  if (cnt)
    ppi_free(ctx, cnt, (size_t)r->ndev * sizeof *cnt);
  if (dx)
    ppi_free(ctx, dx, (size_t)r->ndev * sizeof *dx);
  if (dy)
    ppi_free(ctx, dy, (size_t)r->ndev * sizeof *dy);
}

static void gantt(struct rep *r)
{
  struct ppi_sbuf svg;
  pp_status rc;
  ppi_sb_init(&svg, r->ctx);
  rc = ppi_gantt_render(r->ctx, r->sim, r->c, 0, &svg);
  if (rc)
    r->b->rc = rc;
  else {
    ppi_sb_puts(r->b, "<img alt=\"Gantt chart of one iteration\" "
                      "style=\"max-width:100%\" "
                      "src=\"data:image/svg+xml;base64,");
    base64(r->b, (const unsigned char *)svg.s, svg.n);
    ppi_sb_puts(r->b, "\">\n");
  }
  ppi_sb_free(&svg);
}

static void memory(struct rep *r)
{
  struct ppi_sbuf *b = r->b;
  int32_t d, k = 0, used = 0;
  double maxcap = 0, W = 1100, L = 150, H;
  static const char *const parts[] = {"#4a7fc1", "#e39b3a", "#8e6bbf",
                                      "#9e9e9e"};
  for (d = 0; d < r->ndev; d++) {
    pp_device_memory dm;
    if (r->stage_of[d] < 0)
      continue;
    used++;
    pp_eval_device(r->e, d, &dm);
    if ((double)dm.capacity_bytes > maxcap)
      maxcap = (double)dm.capacity_bytes;
    if (dm.total_bytes > maxcap)
      maxcap = dm.total_bytes;
  }
  if (maxcap <= 0)
    maxcap = 1;
  H = used * 18 + 30;
  ppi_sb_printf(b,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                "height=\"%.0f\" role=\"img\" aria-label=\"memory per "
                "device\">\n",
                W, H);
  for (d = 0; d < r->ndev; d++) {
    pp_device_memory dm;
    pp_sim_device sd;
    pp_device_desc dd;
    double part[4], x = L, y = 6 + k * 18.0, sc = (W - L - 140) / maxcap, cap;
    int j;
    char t1[32], t2[32];
    if (r->stage_of[d] < 0)
      continue;
    k++;
    pp_eval_device(r->e, d, &dm);
    pp_sim_device_get(r->sim, d, &sd);
    pp_cluster_device(r->c, d, &dd);
    part[0] = dm.model_bytes;
    part[1] = dm.activation_bytes;
    part[2] = dm.buffer_bytes;
    part[3] = dm.reserve_bytes;
    ppi_sb_printf(b,
                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                  "text-anchor=\"end\">",
                  L - 6, y + 11);
    esc(b, dd.name);
    ppi_sb_puts(b, "</text>");
    for (j = 0; j < 4; j++) {
      double w = part[j] * sc;
      if (w <= 0)
        continue;
      ppi_sb_printf(b,
                    "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                    "height=\"13\" fill=\"%s\"/>",
                    x, y, w, parts[j]);
      x += w;
    }
    cap = (double)dm.capacity_bytes * sc + L;
    gib(t1, sizeof t1, dm.total_bytes);
    gib(t2, sizeof t2, (double)dm.capacity_bytes);
    ppi_sb_printf(
        b,
        "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
        "stroke=\"#b00020\" stroke-width=\"2\"/>"
        "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
        "stroke=\"#000\" stroke-width=\"1\" "
        "stroke-dasharray=\"2,2\"/>"
        "<text x=\"%.2f\" y=\"%.1f\" font-size=\"10\" "
        "fill=\"%s\">%s / %s GiB</text>\n",
        cap, y - 2, cap, y + 15, L + sd.peak_memory_bytes * sc, y - 1,
        L + sd.peak_memory_bytes * sc, y + 14, (x > cap ? x : cap) + 4, y + 11,
        dm.total_bytes > (double)dm.capacity_bytes ? "#b00020" : "#333", t1,
        t2);
  }
  ppi_sb_puts(b, "</svg>\n<div class=\"legend\">"
                 "<span><i style=\"background:#4a7fc1\"></i>parameters, "
                 "gradients and optimizer state</span>"
                 "<span><i style=\"background:#e39b3a\"></i>activations in "
                 "flight</span><span><i style=\"background:#8e6bbf\"></i>"
                 "transfer buffers</span><span><i style=\"background:"
                 "#9e9e9e\"></i>reserve</span><span><i style=\"background:"
                 "#b00020;border-radius:0;width:3px\"></i>capacity</span>"
                 "<span>dotted: the simulator's peak</span></div>\n");
}

static void breakdown(struct rep *r)
{
  struct ppi_sbuf *b = r->b;
  pp_eval_summary es;
  int32_t s;
  pp_eval_get_summary(r->e, &es);
  ppi_sb_puts(b, "<table><tr><th class=\"l\">part of the analytic "
                 "estimate</th><th>ms</th><th>share</th></tr>\n");
  {
    const char *name[5] = {"steady state: (micro-batches - 1) x bottleneck",
                           "fill: one micro-batch through every stage",
                           "point-to-point transfers on the fill path",
                           "gradient allreduce (slowest stage)",
                           "optimizer step (slowest)"};
    double v[5];
    int i;
    v[0] = es.steady_ms;
    v[1] = es.fill_ms;
    v[2] = es.p2p_ms;
    v[3] = es.allreduce_ms;
    v[4] = es.update_ms;
    for (i = 0; i < 5; i++)
      ppi_sb_printf(b,
                    "<tr><td class=\"l\">%s</td><td>%.3f</td><td>%.1f "
                    "%%</td></tr>\n",
                    name[i], v[i],
                    es.iteration_ms > 0 ? 100 * v[i] / es.iteration_ms : 0);
    ppi_sb_printf(b,
                  "<tr><th class=\"l\">iteration (analytic)</th><th>%.3f"
                  "</th><th></th></tr></table>\n",
                  es.iteration_ms);
  }
  ppi_sb_printf(b, "<p class=\"sub\">Bottleneck: %s.</p>\n",
                es.bottleneck >= 0 ? "a stage's compute (marked below)"
                                   : "a transfer channel");
  ppi_sb_puts(b, "<table><tr><th>stage</th><th>operators</th><th>replicas"
                 "</th><th>micro-batches</th><th>forward ms</th><th>"
                 "backward ms</th><th>recompute ms</th><th>send ms</th>"
                 "<th>receive ms</th><th>allreduce ms</th><th>update ms</th>"
                 "<th>parameters GiB</th></tr>\n");
  for (s = 0; s < r->nstage; s++) {
    pp_stage_cost sc;
    int32_t nops;
    char g[32];
    pp_eval_stage(r->e, s, &sc);
    pp_plan_stage_ops(r->p, s, &nops);
    gib(g, sizeof g, sc.param_bytes);
    ppi_sb_printf(b,
                  "<tr><td>%s%d</td><td>%d</td><td>%d</td><td>%lld</td>"
                  "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
                  "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%s</td></tr>\n",
                  s == es.bottleneck ? "&#9654; " : "", (int)s, (int)nops,
                  (int)pp_plan_nreplica(r->p, s), (long long)sc.micro_batches,
                  sc.fwd_ms, sc.bwd_ms, sc.recompute_ms, sc.send_ms, sc.recv_ms,
                  sc.allreduce_ms, sc.update_ms, g);
  }
  ppi_sb_puts(b, "</table>\n");
}

static void baselines(struct rep *r)
{
  struct ppi_sbuf *b = r->b;
  pp_sim_summary ss;
  int32_t i;
  pp_sim_get_summary(r->sim, &ss);
  ppi_sb_puts(b, "<table><tr><th class=\"l\">method</th><th>devices</th>"
                 "<th>stages</th><th>replicas</th><th>tp</th><th>micro-"
                 "batch</th><th class=\"l\">schedule</th><th>simulated ms"
                 "</th><th>this plan's speedup</th><th>fits</th><th "
                 "class=\"l\">how it chose</th></tr>\n");
  ppi_sb_printf(b,
                "<tr><td class=\"l\"><b>this plan</b></td><td colspan=\"6\">"
                "</td><td><b>%.3f</b></td><td>1.00</td><td>%s</td><td "
                "class=\"l\">",
                ss.iteration_ms,
                ss.fits ? "yes"
                        : "<span class=\"bad\">no"
                          "</span>");
  esc(b, pp_plan_source(r->p) ? pp_plan_source(r->p) : "the plan given");
  ppi_sb_puts(b, "</td></tr>\n");
  for (i = 0; r->cmp && i < pp_compare_nrow(r->cmp); i++) {
    pp_compare_row row;
    pp_compare_row_get(r->cmp, i, &row);
    ppi_sb_puts(b, "<tr><td class=\"l\">");
    esc(b, row.method);
    if (!row.found && strcmp(row.method, "lower bound"))
      ppi_sb_puts(b, "</td><td colspan=\"9\" class=\"l\">no plan</td>");
    else if (!strcmp(row.method, "lower bound"))
      ppi_sb_printf(b,
                    "</td><td colspan=\"6\"></td><td>%.3f</td><td>%.2f</td>"
                    "<td></td>",
                    row.simulated_ms,
                    ss.iteration_ms > 0 ? row.simulated_ms / ss.iteration_ms
                                        : 0);
    else {
      char tw[64];
      if (row.tp > 0 || !pp_compare_plan(r->cmp, i))
        snprintf(tw, sizeof tw, "%d", (int)row.tp);
      else /* per-stage degrees */
        ppi_tp_words(tw, sizeof tw, plan_tp, pp_compare_plan(r->cmp, i),
                     pp_plan_nstage(pp_compare_plan(r->cmp, i)));
      ppi_sb_printf(b,
                    "</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%d"
                    "</td><td class=\"l\">%s%s</td><td>%.3f</td><td>%.2f</td>"
                    "<td>%s</td>",
                    (int)row.devices, (int)row.pp, (int)row.dp, tw,
                    (int)row.micro_batch, pp_schedule_name(row.schedule),
                    row.recompute ? " + rc" : "", row.simulated_ms,
                    ss.iteration_ms > 0 ? row.simulated_ms / ss.iteration_ms
                                        : 0,
                    row.fits ? "yes" : "<span class=\"bad\">no</span>");
    }
    ppi_sb_puts(b, "<td class=\"l\">");
    esc(b, row.about);
    ppi_sb_puts(b, "</td></tr>\n");
  }
  ppi_sb_puts(b, "</table>\n<p class=\"sub\">Every row is priced by the "
                 "same simulator. Speedup: the method's time over this "
                 "plan's (above 1: this plan is faster; the lower bound's "
                 "row is below 1 by the plan's gap).</p>\n");
}

/* ---- what the report shows, computed first ---------------------------- */

/* The plan priced by the estimate and simulated with its events
** recorded (the Gantt chart draws them). */
static pp_status price_and_simulate(struct rep *r, const pp_cost_params *cp)
{
  pp_cost_params scp = *cp;
  pp_status rc;
  if ((rc = pp_evaluate(r->ctx, r->p, r->m, r->c, cp, &r->e)))
    return rc;
  scp.record = 1;
  return pp_simulate(r->ctx, r->p, r->m, r->c, &scp, &r->sim);
}

/* The planner's comparison (pp_plan_compare: our search and the
** baselines) at the plan's global batch, optimizer, precision, engine,
** ZeRO stage and memory reserve, with the report's time limit and
** threads. */
static pp_status run_comparison(struct rep *r, const pp_report_params *rp,
                                const pp_cost_params *cp)
{
  pp_search_params sp;
  pp_search_params_init(&sp);
  sp.global_batch = r->pp.global_batch;
  sp.time_limit_s = rp->time_limit_s;
  sp.threads = rp->threads;
  sp.optimizer = r->pp.optimizer;
  sp.precision = r->pp.precision;
  sp.engine = r->pp.engine;
  sp.zero = r->pp.zero;
  sp.reserve_bytes = cp->reserve_bytes;
  sp.allreduce = cp->allreduce;
  return pp_plan_compare(r->ctx, r->m, r->c, &sp, &r->cmp);
}

/* Each device's stage and replica (-1: idle); a device that several
** stage replicas list keeps the first. */
static pp_status device_roles(struct rep *r)
{
  pp_ctx *ctx = r->ctx;
  int32_t s, k, t;
  r->stage_of = ppi_calloc(ctx, (size_t)r->ndev, sizeof *r->stage_of);
  r->replica_of = ppi_calloc(ctx, (size_t)r->ndev, sizeof *r->replica_of);
  if (!r->stage_of || !r->replica_of)
    return ctx->err;
  for (t = 0; t < r->ndev; t++)
    r->stage_of[t] = r->replica_of[t] = -1;
  for (s = 0; s < r->nstage; s++)
    for (k = 0; k < pp_plan_nreplica(r->p, s); k++) {
      const int32_t *dv = pp_plan_replica(r->p, s, k);
      for (t = 0; t < pp_plan_stage_tp(r->p, s); t++)
        if (dv[t] >= 0 && dv[t] < r->ndev && r->stage_of[dv[t]] < 0) {
          r->stage_of[dv[t]] = s;
          r->replica_of[dv[t]] = k;
        }
    }
  return PP_OK;
}

/* ---- the page ------------------------------------------------------------ */

/* The page from what r holds; formats only. */
static pp_status format_report(struct rep *r)
{
  struct ppi_sbuf *b = r->b;

  ppi_sb_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
                 "charset=\"utf-8\"><title>parplan report: ");
  esc(b, pp_model_name(r->m));
  ppi_sb_puts(b, " on ");
  esc(b, pp_cluster_name(r->c));
  ppi_sb_printf(b, "</title><style>%s</style></head><body>\n<h1>", css);
  esc(b, pp_model_name(r->m));
  ppi_sb_puts(b, " on ");
  esc(b, pp_cluster_name(r->c));
  ppi_sb_puts(b, "</h1><div class=\"sub\">model ");
  esc(b, pp_model_source(r->m) ? pp_model_source(r->m) : "");
  ppi_sb_puts(b, " &middot; cluster ");
  esc(b, pp_cluster_source(r->c) ? pp_cluster_source(r->c) : "");
  ppi_sb_printf(b, " &middot; parplan %s &middot; optimizer %s</div>\n",
                pp_version(), pp_optimizer_name(r->pp.optimizer));
  summary(r);
  ppi_sb_puts(b, "<h2 id=\"topology\">Topology and mapping</h2>\n");
  topology(r);
  ppi_sb_puts(b, "<h2 id=\"gantt\">One iteration</h2>\n");
  gantt(r);
  ppi_sb_puts(b, "<h2 id=\"memory\">Memory per device</h2>\n");
  memory(r);
  ppi_sb_puts(b, "<h2 id=\"time\">Where the time goes</h2>\n");
  breakdown(r);
  ppi_sb_puts(b, "<h2 id=\"baselines\">Against the baselines</h2>\n");
  if (r->cmp)
    baselines(r);
  else
    ppi_sb_puts(b, "<p class=\"sub\">Not computed (baselines off).</p>\n");
  ppi_sb_printf(b, "<script>%s</script>\n</body></html>\n", script);
  return b->rc;
}

pp_status pp_report_write(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                          const pp_cluster *c, const pp_cost_params *cp,
                          const pp_report_params *rp, const char *path, FILE *f)
{
  struct rep r;
  struct ppi_sbuf b;
  pp_cost_params dcp;
  pp_report_params drp;
  pp_status rc;

  if (!ctx)
    return PP_EINVAL;
  if (!p || !m || !c || (!path && !f))
    return ppi_fail(ctx, PP_EINVAL, "pp_report_write: NULL argument");
  if (!cp) {
    pp_cost_params_init(&dcp);
    cp = &dcp;
  }
  if (!rp) {
    pp_report_params_init(&drp);
    rp = &drp;
  }
  if (cp->kind != PP_COST_PARPLAN)
    return ppi_fail(ctx, PP_EINVAL,
                    "report: the simulator uses parplan's cost model, not "
                    "AMP's");
  if ((rc = pp_plan_check(ctx, p, m, c)))
    return rc;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.p = p;
  r.m = m;
  r.c = c;
  r.ndev = pp_cluster_ndev(c);
  r.nstage = pp_plan_nstage(p);
  pp_plan_get_params(p, &r.pp);
  ppi_sb_init(&b, ctx);
  r.b = &b;
  rc = price_and_simulate(&r, cp);
  if (rc == PP_OK && rp->baselines)
    rc = run_comparison(&r, rp, cp);
  if (rc == PP_OK)
    rc = device_roles(&r);
  if (rc == PP_OK)
    rc = format_report(&r);
  if (rc == PP_OK)
    rc = ppi_write_bytes(ctx, path, f, b.s, b.n);
  ppi_sb_free(&b);
  pp_eval_destroy(r.e);
  pp_sim_destroy(r.sim);
  pp_compare_destroy(r.cmp);
  if (r.stage_of)
    ppi_free(ctx, r.stage_of, (size_t)r.ndev * sizeof *r.stage_of);
  if (r.replica_of)
    ppi_free(ctx, r.replica_of, (size_t)r.ndev * sizeof *r.replica_of);
  return rc;
}

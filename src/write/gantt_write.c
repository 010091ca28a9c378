/* SPDX-License-Identifier: MIT */
/*
** The Gantt chart of one simulated iteration as SVG or PNG, drawn with
** cairo (for papers and slides; the HTML report embeds the SVG).
**
** One row per device the plan uses, ordered by stage, then replica, then
** tensor-parallel rank: forward, recomputation, backward and optimizer
** tasks in the row, each labelled with its micro-batch when there is
** room, and the transfers leaving the device (activations, gradients,
** allreduce steps) in a thin lane under it.  The x axis is milliseconds
** from the iteration's start.  Colours are fixed per task kind, so charts
** compare across plans.  The picture is drawn into memory first and
** written only when cairo succeeded (temporary file, then rename); cairo
** allocates with the C library, outside the context's allocator.
*/
#include "write/write.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 1200.0
#define LEFT 120.0
#define RIGHT 20.0
#define TOP 46.0
#define ROW 26.0
#define LANE 7.0
#define GAP 5.0
#define BOTTOM 62.0

struct grow {
  int32_t dev, stage, replica;
};

struct gantt {
  const pp_sim *s;
  const pp_cluster *c;
  int png;
  struct grow *rows;
  int32_t *row_of; /* device -> row, -1 */
  int32_t nrows, ndev;
  double t_ms; /* iteration length */
};

/* Fixed colours per task kind (ColorBrewer-like, legible in print). */
static void kind_rgb(pp_task_kind k, double rgb[3])
{
  static const double c[7][3] = {
      {0.26, 0.52, 0.80}, /* fwd */
      {0.95, 0.60, 0.20}, /* recompute */
      {0.30, 0.69, 0.35}, /* bwd */
      {0.55, 0.40, 0.75}, /* send act */
      {0.85, 0.35, 0.55}, /* send grad */
      {0.80, 0.25, 0.20}, /* allreduce */
      {0.50, 0.50, 0.50}, /* update */
  };
  int i = (int)k >= 0 && (int)k < 7 ? (int)k : 6;
  memcpy(rgb, c[i], sizeof c[i]);
}

static bool is_compute(pp_task_kind k)
{
  return k == PP_TASK_FWD || k == PP_TASK_RECOMPUTE || k == PP_TASK_BWD ||
         k == PP_TASK_UPDATE;
}

static int cmp_row(const void *x, const void *y)
{
  const struct grow *a = x, *b = y;
  if (a->stage != b->stage)
    return a->stage < b->stage ? -1 : 1;
  if (a->replica != b->replica)
    return a->replica < b->replica ? -1 : 1;
  return (a->dev > b->dev) - (a->dev < b->dev);
}

/* Rows from the compute events: each device's first stage and replica. */
static pp_status gantt_rows(pp_ctx *ctx, struct gantt *g)
{
  int64_t i, n = pp_sim_nevent(g->s);
  pp_sim_summary sum;
  int32_t d;
  pp_sim_get_summary(g->s, &sum);
  g->t_ms = sum.iteration_ms > 0 ? sum.iteration_ms : 1;
  g->ndev = pp_cluster_ndev(g->c);
  g->row_of = ppi_calloc(ctx, (size_t)g->ndev, sizeof *g->row_of);
  g->rows = ppi_calloc(ctx, (size_t)g->ndev, sizeof *g->rows);
  if (!g->row_of || !g->rows)
    return ctx->err;
  for (d = 0; d < g->ndev; d++)
    g->row_of[d] = -1;
  for (i = 0; i < n; i++) {
    pp_sim_event e;
    pp_sim_event_get(g->s, i, &e);
    if (e.end_ms > g->t_ms)
      g->t_ms = e.end_ms;
    if (!is_compute(e.kind) || e.device < 0 || e.device >= g->ndev ||
        g->row_of[e.device] >= 0)
      continue;
    g->row_of[e.device] = g->nrows;
    g->rows[g->nrows].dev = e.device;
    g->rows[g->nrows].stage = e.stage;
    g->rows[g->nrows].replica = e.replica;
    g->nrows++;
  }
  if (g->nrows == 0)
    return ppi_fail(ctx, PP_EINVAL,
                    "gantt: the simulation recorded no events (simulate "
                    "with cost params record = 1)");
  if (g->nrows > PPI_GANTT_MAX_ROWS)
    return ppi_fail(ctx, PP_ELIMIT,
                    "gantt: %d devices exceed the %d rows a "
                    "chart can show",
                    (int)g->nrows, PPI_GANTT_MAX_ROWS);
  qsort(g->rows, (size_t)g->nrows, sizeof *g->rows, cmp_row);
  for (d = 0; d < g->nrows; d++)
    g->row_of[g->rows[d].dev] = d;
  return PP_OK;
}

static double gantt_height(const struct gantt *g)
{
  return TOP + g->nrows * (ROW + LANE + GAP) + BOTTOM;
}

/* A "nice" tick step: 1, 2 or 5 x 10^k, about n ticks over t. */
static double tick_step(double t, int n)
{
  double raw = t / n, p = pow(10, floor(log10(raw))), m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void text(cairo_t *cr, double x, double y, const char *s, int align)
{
  cairo_text_extents_t te;
  cairo_text_extents(cr, s, &te);
  cairo_move_to(cr,
                align < 0    ? x
                : align == 0 ? x - te.width / 2 - te.x_bearing
                             : x - te.width - te.x_bearing,
                y);
  cairo_show_text(cr, s);
}

static void draw(cairo_t *cr, const struct gantt *g)
{
  double H = gantt_height(g), plot = W - LEFT - RIGHT, sx = plot / g->t_ms,
         step, t, rgb[3];
  int64_t i, n = pp_sim_nevent(g->s);
  int32_t r;
  char buf[128];
  pp_sim_summary sum;
  static const char *const legend[] = {
      "forward",        "recompute", "backward", "send activations",
      "send gradients", "allreduce", "optimizer"};

  pp_sim_get_summary(g->s, &sum);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         CAIRO_FONT_WEIGHT_NORMAL);
  /* title */
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  cairo_set_font_size(cr, 14);
  snprintf(buf, sizeof buf,
           "One iteration: %.3f ms simulated, lower bound "
           "%.3f ms",
           sum.iteration_ms, sum.lower_bound_ms);
  text(cr, LEFT, 22, buf, -1);
  /* grid and axis */
  cairo_set_font_size(cr, 10);
  step = tick_step(g->t_ms, 10);
  for (t = 0; t <= g->t_ms + 1e-9; t += step) {
    double x = LEFT + t * sx;
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_set_line_width(cr, 0.6);
    cairo_move_to(cr, x, TOP - 4);
    cairo_line_to(cr, x, H - BOTTOM + 4);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    snprintf(buf, sizeof buf, "%g", t);
    text(cr, x, H - BOTTOM + 16, buf, 0);
  }
  text(cr, LEFT + plot, H - BOTTOM + 30, "ms", 1);
  /* row labels */
  for (r = 0; r < g->nrows; r++) {
    double y = TOP + r * (ROW + LANE + GAP);
    pp_device_desc dd;
    pp_cluster_device(g->c, g->rows[r].dev, &dd);
    cairo_set_source_rgb(cr, 0.96, 0.96, 0.96);
    cairo_rectangle(cr, LEFT, y, plot, ROW);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    snprintf(buf, sizeof buf, "S%d r%d %.40s", (int)g->rows[r].stage,
             (int)g->rows[r].replica, dd.name);
    text(cr, LEFT - 6, y + ROW / 2 + 4, buf, 1);
  }
  /* tasks */
  for (i = 0; i < n; i++) {
    pp_sim_event e;
    double x0, x1, y;
    pp_sim_event_get(g->s, i, &e);
    if (e.device < 0 || e.device >= g->ndev || g->row_of[e.device] < 0)
      continue;
    r = g->row_of[e.device];
    y = TOP + r * (ROW + LANE + GAP);
    x0 = LEFT + e.start_ms * sx;
    x1 = LEFT + e.end_ms * sx;
    if (x1 - x0 < 0.5)
      x1 = x0 + 0.5;
    kind_rgb(e.kind, rgb);
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    if (is_compute(e.kind)) {
      cairo_rectangle(cr, x0, y + 1, x1 - x0, ROW - 2);
      cairo_fill(cr);
      if (e.kind != PP_TASK_UPDATE && x1 - x0 >= 16) {
        snprintf(buf, sizeof buf, "%lld", (long long)e.micro_batch);
        cairo_set_source_rgb(cr, 1, 1, 1);
        text(cr, (x0 + x1) / 2, y + ROW / 2 + 4, buf, 0);
      }
    } else {
      cairo_rectangle(cr, x0, y + ROW + 1, x1 - x0, LANE - 1);
      cairo_fill(cr);
    }
  }
  /* legend */
  {
    double x = LEFT, y = H - 22;
    int k;
    cairo_set_font_size(cr, 11);
    for (k = 0; k < 7; k++) {
      cairo_text_extents_t te;
      kind_rgb((pp_task_kind)k, rgb);
      cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
      cairo_rectangle(cr, x, y - 9, 12, 10);
      cairo_fill(cr);
      cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
      text(cr, x + 16, y, legend[k], -1);
      cairo_text_extents(cr, legend[k], &te);
      x += 16 + te.x_advance + 18;
    }
  }
}

/* cairo numbers SVG surfaces with a process-wide counter: the same chart
** drawn twice would differ in its ids.  Renumber them 1, 2, ... in order
** of appearance, so the same inputs give the same bytes. */
static void renumber_surfaces(pp_ctx *ctx, struct ppi_sbuf *b)
{
  struct ppi_sbuf o;
  long seen[64];
  int nseen = 0;
  size_t i = 0;
  static const char key[] = "surface";
  ppi_sb_init(&o, ctx);
  while (i < b->n) {
    const char *p = b->s + i;
    if (b->n - i > 7 && !memcmp(p, key, 7) && p[7] >= '0' && p[7] <= '9') {
      char *end;
      long v = strtol(p + 7, &end, 10);
      int k;
      for (k = 0; k < nseen && seen[k] != v; k++)
        ;
      if (k == nseen && nseen < 64)
        seen[nseen++] = v;
      ppi_sb_printf(&o, "surface%d", k + 1);
      i = (size_t)(end - b->s);
      continue;
    }
    ppi_sb_put(&o, p, 1);
    i++;
  }
  if (o.rc)
    b->rc = o.rc;
  else {
    ppi_sb_clear(b);
    ppi_sb_put(b, o.s, o.n);
  }
  ppi_sb_free(&o);
}

static cairo_status_t to_buf(void *closure, const unsigned char *data,
                             unsigned int len)
{
  struct ppi_sbuf *b = closure;
  ppi_sb_put(b, (const char *)data, len);
  return b->rc == PP_OK ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_NO_MEMORY;
}

/* Draw into out (SVG text or PNG bytes); nothing is written on failure. */
pp_status ppi_gantt_render(pp_ctx *ctx, const pp_sim *s, const pp_cluster *c,
                           int png, struct ppi_sbuf *out)
{
  struct gantt g;
  pp_status rc;
  memset(&g, 0, sizeof g);
  g.s = s;
  g.c = c;
  g.png = png;
  rc = gantt_rows(ctx, &g);
  if (rc == PP_OK) {
    double H = gantt_height(&g);
    cairo_surface_t *sf;
    cairo_t *cr;
    cairo_status_t st;
    if (png)
      sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)W, (int)ceil(H));
    else
      sf = cairo_svg_surface_create_for_stream(to_buf, out, W, H);
    cr = cairo_create(sf);
    draw(cr, &g);
    st = cairo_status(cr);
    cairo_destroy(cr);
    if (png && st == CAIRO_STATUS_SUCCESS)
      st = cairo_surface_write_to_png_stream(sf, to_buf, out);
    cairo_surface_finish(sf);
    if (st == CAIRO_STATUS_SUCCESS)
      st = cairo_surface_status(sf);
    cairo_surface_destroy(sf);
    if (!png && st == CAIRO_STATUS_SUCCESS && out->rc == PP_OK)
      renumber_surfaces(ctx, out);
    if (out->rc)
      rc = out->rc;
    else if (st != CAIRO_STATUS_SUCCESS)
      rc = ppi_fail(ctx, st == CAIRO_STATUS_NO_MEMORY ? PP_ENOMEM : PP_EIO,
                    "gantt: cairo: %s", cairo_status_to_string(st));
  }
  if (g.row_of)
    ppi_free(ctx, g.row_of, (size_t)g.ndev * sizeof *g.row_of);
  if (g.rows)
    ppi_free(ctx, g.rows, (size_t)g.ndev * sizeof *g.rows);
  return rc;
}

pp_status pp_gantt_write(pp_ctx *ctx, const pp_sim *s, const pp_cluster *c,
                         pp_image_format fmt, const char *path, FILE *f)
{
  struct ppi_sbuf b;
  pp_status rc;
  if (!ctx || !s || !c || (!path && !f) ||
      (fmt != PP_IMAGE_SVG && fmt != PP_IMAGE_PNG))
    return PP_EINVAL;
  ppi_sb_init(&b, ctx);
  rc = ppi_gantt_render(ctx, s, c, fmt == PP_IMAGE_PNG, &b);
  if (rc == PP_OK)
    rc = ppi_write_bytes(ctx, path, f, b.s, b.n);
  ppi_sb_free(&b);
  return rc;
}

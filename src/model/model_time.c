/* SPDX-License-Identifier: MIT */
/*
** Which time applies: the lookup of an operator's forward, backward and
** update time on a device type, tensor-parallel degree and micro-batch
** size, from whatever the model was given.  docs/DESIGN.md, "Units and the
** cost model": a point the profile lacks is estimated and flagged,
** never read as 0.
**
** Order of preference (docs/FORMATS.md, "Which time applies"):
**   1. profiles of the type itself (the operator's own fields are the
**      reference type's point at tp 1 and the reference micro-batch);
**   2. profiles of the same family (the name up to its first '-':
**      "V100-16" serves "V100-32"), flagged PP_EST_FAMILY;
**   3. when the operator has FLOPs or memory traffic and the type a
**      known peak: the roofline (below), flagged PP_EST_FLOPS;
**   4. the reference type's profiles divided by the type's speed,
**      flagged PP_EST_SPEED.
** Within a set of profiles the nearest point wins: the exact (tp, mbs);
** else the same tp at the nearest micro-batch (PP_EST_MBS): linear
** between the two profiled sizes around it, beyond the largest the
** last step's cost per sample (clamped to [0, the largest point's mean
** per sample]), below the smallest proportional; else the nearest tp
** (scaled by tp'/tp, PP_EST_TP).  GPUs get more efficient with larger
** micro-batches (Sailor's profiles: per-sample time at micro-batch 8 is
** 0.28-1.0 of micro-batch 1's), so proportional scaling from one point
** overstates larger ones; between measured points the measurements say
** how much.
** A run whose precision is of the other class than the model's dtype
** (fp32 against fp16/bf16) skips 1 and 2 where 3 applies: a profile
** says nothing about the other precision's speed.
** Roofline (docs/COST_MODEL.md, "Roofline"): per roofline part of the
** operator, the larger of its FLOPs over the peak of the run's precision
** times the model's efficiency and its bytes (in the run's element
** size) over the memory bandwidth times PPI_MEM_EFFICIENCY; the parts
** add up (a chain layer keeps its members' parts).
** "Nearest" is in log ratio; ties go to the larger micro-batch and the
** smaller tp.  Cost: O(ntable) per call, integer tests per table (the
** type names are resolved once per call against the model's few).
*/
#include "model/model.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static bool same_family(const char *a, const char *b)
{
  size_t la, lb;
  if (!a || !b)
    return false;
  la = ppi_gpu_family_len(a);
  lb = ppi_gpu_family_len(b);
  return la == lb && strncmp(a, b, la) == 0;
}

static bool same_name(const char *a, const char *b)
{
  return a && b && strcmp(a, b) == 0;
}

/* Selection among candidate points; index -1 is the operator's own
** reference point. */
struct pick {
  int32_t table; /* -2: none yet */
  int32_t tp, mbs;
  double tp_dist, mbs_dist;
};

/* max(a, b) / min(a, b): the order of |log(a / b)|, exact on ties */
static double ratio(int32_t a, int32_t b)
{
  return a >= b ? (double)a / b : (double)b / a;
}

static void consider(struct pick *p, int32_t table, int32_t tp, int32_t mbs,
                     int32_t want_tp, int32_t want_mbs)
{
  double dt = ratio(tp, want_tp);
  double dm = ratio(mbs, want_mbs);
  bool better;
  if (p->table == -2)
    better = true;
  else if (dt != p->tp_dist)
    better = dt < p->tp_dist;
  else if (tp != p->tp)
    better = tp < p->tp; /* equally near from both sides: smaller tp */
  else if (dm != p->mbs_dist)
    better = dm < p->mbs_dist;
  else
    better = mbs > p->mbs; /* equally near: the larger micro-batch */
  if (better) {
    p->table = table;
    p->tp = tp;
    p->mbs = mbs;
    p->tp_dist = dt;
    p->mbs_dist = dm;
  }
}

/* Which profile sets a table belongs to. */
enum { SET_EXACT, SET_FAMILY, SET_REFERENCE };

static bool in_set(const struct pp_model *m, const char *tab_type, int set,
                   const char *name)
{
  switch (set) {
  case SET_EXACT:
    if (!name) /* the reference type itself */
      return tab_type == NULL || same_name(tab_type, m->reftype);
    return same_name(tab_type, name) ||
           (tab_type == NULL && same_name(name, m->reftype));
  case SET_FAMILY: {
    const char *t = tab_type ? tab_type : m->reftype;
    return name && t && same_family(t, name);
  }
  default: return tab_type == NULL || same_name(tab_type, m->reftype);
  }
}

/* The tables' type ids (tname) in one set, as a mask; 0 when the model
** has too many type names for one (then in_set decides per table). */
static uint64_t set_mask(const struct pp_model *m, int set, const char *name,
                         bool *ok)
{
  uint64_t mask = 0;
  int32_t q;
  *ok = m->ntname <= 64;
  if (!*ok)
    return 0;
  for (q = 0; q < (m->ntname > 0 ? m->ntname : 1); q++) {
    /* id 0: the reference type (and the tables without a type) */
    const char *t = q == 0 ? m->reftype : m->tname[q];
    bool in;
    switch (set) {
    case SET_EXACT: in = name ? same_name(t, name) : q == 0; break;
    case SET_FAMILY: in = name && t && same_family(t, name); break;
    default: in = q == 0;
    }
    if (in)
      mask |= (uint64_t)1 << q;
  }
  return mask;
}

/* Pick the nearest point with times for v in one set; false if none. */
static bool pick_in(const struct pp_model *m, int32_t v, int set,
                    const char *name, int32_t tp, int32_t mbs, struct pick *p)
{
  int32_t t;
  bool fast;
  uint64_t mask = set_mask(m, set, name, &fast);
  p->table = -2;
  if (fast) { /* the same choices as below, without a string per table */
    if (mask & 1)
      consider(p, -1, 1, m->micro_batch, tp, mbs);
    if (mask && !(mask & (mask - 1)) && m->tid_off) {
      /* one type: its tables alone, in the same (ascending) order */
      int32_t q = 0, k;
      while (!(mask >> q & 1))
        q++;
      for (k = m->tid_off[q]; k < m->tid_off[q + 1]; k++) {
        size_t c;
        t = m->tid_tab[k];
        c = (size_t)t * (size_t)m->nop + (size_t)v;
        if (!isnan(m->tab_fwd[c]))
          consider(p, t, m->tab_tp[t], m->tab_mbs[t], tp, mbs);
      }
      return p->table != -2;
    }
    for (t = 0; t < m->ntable; t++) {
      size_t c = (size_t)t * (size_t)m->nop + (size_t)v;
      if (!(mask >> m->tab_tid[t] & 1) || isnan(m->tab_fwd[c]))
        continue;
      consider(p, t, m->tab_tp[t], m->tab_mbs[t], tp, mbs);
    }
    return p->table != -2;
  }
  /* The operator's own fields: reference type, tp 1, reference mbs. */
  if (in_set(m, NULL, set, name))
    consider(p, -1, 1, m->micro_batch, tp, mbs);
  for (t = 0; t < m->ntable; t++) {
    size_t c = (size_t)t * (size_t)m->nop + (size_t)v;
    if (isnan(m->tab_fwd[c]) || !in_set(m, m->tab_type[t], set, name))
      continue;
    consider(p, t, m->tab_tp[t], m->tab_mbs[t], tp, mbs);
  }
  return p->table != -2;
}

/* The raw forward (k 0) or backward (k 1) of v at table t (-1: the
** operator's own fields); NaN where not profiled. */
static double raw_time(const struct pp_model *m, int32_t v, int32_t t, int k)
{
  size_t c = (size_t)t * (size_t)m->nop + (size_t)v;
  if (t == -1)
    return k ? m->bwd[v] : m->fwd[v];
  return k ? m->tab_bwd[c] : m->tab_fwd[c];
}

void ppi_model_point_times(const struct pp_model *m, int32_t v, int32_t t,
                           double *f, double *b)
{
  if (m->fit_fwd) {
    size_t c = (size_t)(t + 1) * (size_t)m->nop + (size_t)v;
    *f = m->fit_fwd[c];
    *b = m->fit_bwd[c];
  } else {
    *f = raw_time(m, v, t, 0);
    *b = raw_time(m, v, t, 1);
  }
}

/* The series of table t: its type id and tp (the operator's own fields,
** t = -1, are the reference type's tp 1). */
static void series_of(const struct pp_model *m, int32_t t, int32_t *tid,
                      int32_t *tp, int32_t *mbs)
{
  *tid = t < 0 ? 0 : m->tab_tid[t];
  *tp = t < 0 ? 1 : m->tab_tp[t];
  *mbs = t < 0 ? m->micro_batch : m->tab_mbs[t];
}

/* Fit op v's series of table t0 (its first table) for times k: the line
** a + b x through the points (x the micro-batch, y the time) with weights
** 1 / y^2, written to fit at every point of the series; the points kept
** where there are fewer than 3, or the line falls with x or is not
** positive at each of them.  O(ntable) per call. */
static void fit_series(struct pp_model *m, int32_t v, int32_t t0, int k,
                       double *fit)
{
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, a, b, d;
  int32_t t, tid0, tp0, x0, tid, tp, x, n = 0;
  bool ok = true;
  series_of(m, t0, &tid0, &tp0, &x0);
  for (t = t0; t < m->ntable; t++) {
    double y = raw_time(m, v, t, k), w;
    series_of(m, t, &tid, &tp, &x);
    if (tid != tid0 || tp != tp0 || isnan(y))
      continue;
    if (!(y > 0))
      ok = false;
    w = y > 0 ? 1 / (y * y) : 0;
    sw += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
    n++;
  }
  d = sw * sxx - sx * sx;
  ok = ok && n >= 3 && d > 0;
  b = ok ? (sw * sxy - sx * sy) / d : 0;
  a = ok ? (sy - b * sx) / sw : 0;
  ok = ok && b >= 0; /* more samples take no less time */
  for (t = t0; ok && t < m->ntable; t++) {
    series_of(m, t, &tid, &tp, &x);
    if (tid == tid0 && tp == tp0 && !isnan(raw_time(m, v, t, k)) &&
        !(a + b * x > 0))
      ok = false;
  }
  for (t = t0; t < m->ntable; t++) {
    double y = raw_time(m, v, t, k);
    series_of(m, t, &tid, &tp, &x);
    if (tid == tid0 && tp == tp0 && !isnan(y))
      fit[(size_t)(t + 1) * (size_t)m->nop + (size_t)v] = ok ? a + b * x : y;
  }
}

int pp_model_profile_point(const pp_model *m, int32_t v, const char *type,
                           int32_t tp, int32_t mbs, double *fwd_ms,
                           double *bwd_ms)
{
  int32_t t;
  bool ref;
  if (!m || v < 0 || v >= m->nop)
    return 0;
  ref = !type || (m->reftype && strcmp(type, m->reftype) == 0);
  for (t = ref ? -1 : 0; t < m->ntable; t++) {
    const char *tt = t < 0 ? NULL : m->tab_type[t];
    int32_t tid, ttp, tmbs;
    series_of(m, t, &tid, &ttp, &tmbs);
    if (ttp != tp || tmbs != mbs || isnan(raw_time(m, v, t, 0)) ||
        (t >= 0 && !(ref ? tid == 0 : tt && strcmp(tt, type) == 0)))
      continue;
    if (fwd_ms)
      *fwd_ms = raw_time(m, v, t, 0);
    if (bwd_ms)
      *bwd_ms = raw_time(m, v, t, 1);
    return 1;
  }
  return 0;
}

pp_status ppi_model_fit_profiles(pp_ctx *ctx, struct pp_model *m)
{
  size_t cells, c;
  int32_t v, t, u, k;
  if (m->ntable == 0)
    return PP_OK;
  if (!ppi_mul_ok((size_t)m->ntable + 1, (size_t)m->nop, &cells))
    return ppi_fail(ctx, PP_ELIMIT, "too many profile tables");
  m->fit_fwd = ppi_arena_alloc(&m->arena, ctx, cells, sizeof(double));
  m->fit_bwd = ppi_arena_alloc(&m->arena, ctx, cells, sizeof(double));
  if (!m->fit_fwd || !m->fit_bwd)
    return ctx->err;
  for (c = 0; c < cells; c++) /* not profiled, as the tables */
    m->fit_fwd[c] = m->fit_bwd[c] = NAN;
  for (t = -1; t < m->ntable; t++) {
    /* the first table of its series fits it (the O(ntable^2) scan is
    ** once per model, not per lookup) */
    int32_t tid, tp, x, tid2, tp2, x2;
    series_of(m, t, &tid, &tp, &x);
    for (u = -1; u < t; u++) {
      series_of(m, u, &tid2, &tp2, &x2);
      if (tid2 == tid && tp2 == tp)
        break;
    }
    if (u < t)
      continue;
    for (v = 0; v < m->nop; v++)
      for (k = 0; k < 2; k++)
        fit_series(m, v, t, k, k ? m->fit_bwd : m->fit_fwd);
  }
  return PP_OK;
}

/* A second profiled micro-batch size beside the picked point p (same
** type table id and tp): the nearest on the other side of mbs when mbs
** lies between two, else the nearest below p's when mbs is beyond the
** largest; -2 when none (mbs below the smallest, or one point only). */
static int32_t second_point(const struct pp_model *m, int32_t v,
                            const struct pick *p, int32_t mbs, int32_t *qmbs)
{
  int32_t t, best = -2, bm = 0, tid = p->table >= 0 ? m->tab_tid[p->table] : 0;
  /* only tid's tables can qualify: with the index, those alone (the
  ** order does not matter: no two points of one type and tp share a
  ** micro-batch size, the builder refuses it) */
  int32_t k = m->tid_off ? m->tid_off[tid] : 0,
          kend = m->tid_off ? m->tid_off[tid + 1] : 0;
  for (t = -1; t < m->ntable; t = k < kend ? m->tid_tab[k++] : m->ntable) {
    int32_t tm, ttp, ttid;
    if (t == -1) {
      tm = m->micro_batch;
      ttp = 1;
      ttid = 0;
    } else {
      size_t c = (size_t)t * (size_t)m->nop + (size_t)v;
      if (isnan(m->tab_fwd[c]))
        continue;
      tm = m->tab_mbs[t];
      ttp = m->tab_tp[t];
      ttid = m->tab_tid[t];
    }
    if (t == p->table || ttp != p->tp || ttid != tid || tm == p->mbs)
      continue;
    if (mbs > p->mbs ? tm > mbs : tm < mbs) { /* the other side */
      if (best == -2 || bm < p->mbs || (mbs > p->mbs ? tm < bm : tm > bm)) {
        best = t;
        bm = tm;
      }
    } else if (mbs > p->mbs && tm < p->mbs &&
               (best == -2 || (bm < p->mbs && tm > bm))) {
      best = t; /* beyond the largest: the next point below */
      bm = tm;
    }
  }
  *qmbs = bm;
  return best;
}

static void apply(const struct pp_model *m, int32_t v, const struct pick *p,
                  int32_t tp, int32_t mbs, pp_op_time *out)
{
  double f, b, u, scale;
  int32_t q, qm;
  ppi_model_point_times(m, v, p->table, &f, &b);
  if (p->table == -1) {
    u = m->upd[v];
  } else {
    size_t c = (size_t)p->table * (size_t)m->nop + (size_t)v;
    u = m->tab_upd[c];
    if (isnan(u)) /* update not profiled there: the reference's, per tp */
      u = m->upd[v] / (double)p->tp;
  }
  scale = ((double)mbs / p->mbs) * ((double)p->tp / tp);
  out->fwd_ms = f * scale;
  out->bwd_ms = b * scale;
  if (mbs > 1 && p->mbs != mbs && (q = second_point(m, v, p, mbs, &qm)) != -2) {
    /* Between two profiled sizes: linear between them; beyond the
    ** largest: the last step's cost per sample, kept within [0, the
    ** largest point's mean] (a GPU gets no slower per sample with
    ** more of them, and noise must not make samples free).  Below the
    ** smallest profiled size, proportional scaling stays. */
    double fq, bq, x[2], y[2];
    int i;
    ppi_model_point_times(m, v, q, &fq, &bq);
    x[0] = f;
    x[1] = b;
    y[0] = fq;
    y[1] = bq;
    for (i = 0; i < 2; i++) {
      double slope = (x[i] - y[i]) / (p->mbs - qm), hi = x[i] / p->mbs;
      if (mbs > p->mbs && qm < p->mbs)
        slope = slope < 0 ? 0 : slope > hi ? hi : slope;
      x[i] = (x[i] + slope * (mbs - p->mbs)) * ((double)p->tp / tp);
    }
    out->fwd_ms = x[0];
    out->bwd_ms = x[1];
  }
  out->update_ms = u * ((double)p->tp / tp);
  if (p->tp != tp)
    out->est |= PP_EST_TP;
  if (p->mbs != mbs)
    out->est |= PP_EST_MBS;
}

double ppi_roofline_ms(double flops, double bytes, double peak_tflops,
                       double eff, double gbps)
{
  double tc =
      peak_tflops > 0 && eff > 0 ? flops / (peak_tflops * eff * 1e9) : 0;
  double tm = gbps > 0 ? bytes / (gbps * PPI_MEM_EFFICIENCY * 1e6) : 0;
  return tc > tm ? tc : tm;
}

double ppi_conv_peak(double cls, double peak_tflops, double fp32_tflops)
{
  double w = PPI_WINOGRAD_GAIN * fp32_tflops;
  return cls == PPI_CONV_WINOGRAD && w > peak_tflops ? w : peak_tflops;
}

double ppi_transpose_ms(double bytes, double gbps)
{
  return ppi_roofline_ms(0, 2 * bytes, 0, 1, gbps);
}

bool ppi_kind_is_conv(const char *kind)
{
  int i;
  for (i = 0; kind && i < 4; i++) /* stops at the end: tolower(0) is 0 */
    if (tolower((unsigned char)kind[i]) != "conv"[i])
      return false;
  return kind != NULL;
}

const double *ppi_model_parts(const struct pp_model *m, int32_t v, int32_t *n,
                              double one[PPI_PART])
{
  if (m->rf_off && m->rf_off[v + 1] > m->rf_off[v]) {
    *n = m->rf_off[v + 1] - m->rf_off[v];
    return &m->rf[PPI_PART * (size_t)m->rf_off[v]];
  }
  one[0] = m->fflops[v];
  one[1] = m->fbytes[v];
  one[2] = m->bflops[v];
  one[3] = m->bbytes[v];
  one[4] = ppi_kind_is_conv(m->op_kind[v]) ? PPI_CONV : 0;
  *n = 1;
  return one;
}

static bool can_roof(const pp_model *m, int32_t v, const pp_type_key *t)
{
  return t && t->peak_tflops > 0 &&
         m->fflops[v] + m->bflops[v] + m->fbytes[v] + m->bbytes[v] > 0;
}

/* The roofline estimate of op v on type *t at (tp, mbs) (docs/
** COST_MODEL.md, "Roofline"): per part, the larger of its FLOPs over the
** peak of the run's precision (fp32: the fp32 peak, but the TF32 tensor
** peak for convolutions where the type has one, since PyTorch lets
** cuDNN use TF32 by default and cuBLAS not; else the tensor-core peak)
** at the model's efficiency and its bytes (converted from the model's
** dtype to the run's element size) over the memory bandwidth at
** PPI_MEM_EFFICIENCY; the parts add up.  Both terms scale with the
** micro-batch ratio over tp.  A model in NCHW (PP_MF_CONTIGUOUS) adds the
** transposes of every convolution that runs on tensor cores: all of them
** in fp16/bf16, in fp32 those at a TF32 peak (ppi_transpose_ms).  A
** 3x3 stride-1 convolution runs at least as fast as Winograd on the fp32
** cores (ppi_conv_peak). */
static void roof_time(const pp_model *m, int32_t v, const pp_type_key *t,
                      int32_t tp, int32_t mbs, pp_op_time *out)
{
  pp_precision prec = t->precision ? t->precision : m->dtype;
  double scale = (double)mbs / m->micro_batch / tp;
  double speed = t->speed > 0 ? t->speed : 1;
  double peak = prec == PP_PREC_FP32 && t->peak_fp32_tflops > 0
                    ? t->peak_fp32_tflops
                    : t->peak_tflops;
  double tf32 = prec == PP_PREC_FP32 && t->peak_tf32_tflops > 0
                    ? t->peak_tf32_tflops
                    : peak;
  double conv = (double)pp_precision_bytes(prec) / pp_precision_bytes(m->dtype);
  double one[PPI_PART];
  int32_t n, i;
  const double *q = ppi_model_parts(m, v, &n, one);
  bool tcore = prec != PP_PREC_FP32 || t->peak_tf32_tflops > 0;
  out->fwd_ms = out->bwd_ms = 0;
  for (i = 0; i < n; i++, q += PPI_PART) {
    double base = q[4] != 0 ? tf32 : peak;
    double pk = ppi_conv_peak(q[4], base, t->peak_fp32_tflops);
    double fb = q[1] * scale * conv, bb = q[3] * scale * conv;
    out->fwd_ms +=
        ppi_roofline_ms(q[0] * scale, fb, pk, m->efficiency, t->mem_gbps);
    out->bwd_ms +=
        ppi_roofline_ms(q[2] * scale, bb, pk, m->efficiency, t->mem_gbps);
    /* a convolution on tensor cores (not one Winograd runs on the SIMT
    ** cores) in NCHW pays the transposes */
    if (m->nchw && q[4] != 0 && tcore && pk == base) {
      out->fwd_ms += ppi_transpose_ms(fb, t->mem_gbps);
      out->bwd_ms += ppi_transpose_ms(bb, t->mem_gbps);
    }
  }
  out->update_ms = m->upd[v] / tp / speed;
  out->est = PP_EST_FLOPS | (tp != 1 ? PP_EST_TP : 0u) |
             (mbs != m->micro_batch ? PP_EST_MBS : 0u);
}

void ppi_model_loss_ms(const pp_model *m, const pp_type_key *t, int32_t tp,
                       int32_t mbs, double *fwd, double *bwd)
{
  double sc = (double)mbs / m->micro_batch / tp;
  *fwd = *bwd = 0;
  if (!t || !(t->mem_gbps > 0) || m->loss_fbytes + m->loss_bbytes <= 0)
    return;
  *fwd = ppi_roofline_ms(0, m->loss_fbytes * sc, 0, 1, t->mem_gbps);
  *bwd = ppi_roofline_ms(0, m->loss_bbytes * sc, 0, 1, t->mem_gbps);
}

pp_status pp_model_op_time(const pp_model *m, int32_t v, const pp_type_key *t,
                           int32_t tp, int32_t mbs, pp_op_time *out)
{
  double lf, lb;
  pp_status rc = ppi_model_op_time_profiled(m, v, t, tp, mbs, out);
  /* the model's loss runs with its last operator (docs/COST_MODEL.md,
  ** "Loss") */
  if (rc == PP_OK && v == m->topo[m->nop - 1]) {
    ppi_model_loss_ms(m, t, tp, mbs, &lf, &lb);
    if (lf + lb > 0) {
      out->fwd_ms += lf;
      out->bwd_ms += lb;
      out->est |= PP_EST_FLOPS;
    }
  }
  return rc;
}

pp_status ppi_model_op_time_profiled(const pp_model *m, int32_t v,
                                     const pp_type_key *t, int32_t tp,
                                     int32_t mbs, pp_op_time *out)
{
  struct pick p;
  const char *name = t ? t->name : NULL;

  if (!m || !out || v < 0 || v >= m->nop || tp < 1 || mbs < 1)
    return PP_EINVAL;
  memset(out, 0, sizeof *out);
  /* A profile holds for the dtype it was taken in: a run in the other
  ** class (fp32 against fp16/bf16) takes the roofline where there is
  ** one. */
  if (t && t->precision != PP_PREC_MODEL &&
      (t->precision == PP_PREC_FP32) != (m->dtype == PP_PREC_FP32) &&
      can_roof(m, v, t)) {
    roof_time(m, v, t, tp, mbs, out);
    return PP_OK;
  }
  if (pick_in(m, v, SET_EXACT, name, tp, mbs, &p)) {
    apply(m, v, &p, tp, mbs, out);
    return PP_OK;
  }
  if (pick_in(m, v, SET_FAMILY, name, tp, mbs, &p)) {
    apply(m, v, &p, tp, mbs, out);
    out->est |= PP_EST_FAMILY;
    return PP_OK;
  }
  if (can_roof(m, v, t)) {
    roof_time(m, v, t, tp, mbs, out);
    return PP_OK;
  }
  /* The operator's own fields are always a reference point, so this
  ** set is never empty. */
  pick_in(m, v, SET_REFERENCE, NULL, tp, mbs, &p);
  apply(m, v, &p, tp, mbs, out);
  if (t && t->speed > 0) {
    out->fwd_ms /= t->speed;
    out->bwd_ms /= t->speed;
    out->update_ms /= t->speed;
  }
  out->est |= PP_EST_SPEED;
  return PP_OK;
}

pp_status pp_model_op_sizes(const pp_model *m, int32_t v, int32_t tp,
                            int32_t mbs, pp_op_sizes *out)
{
  double act;
  int32_t k;
  if (!m || !out || v < 0 || v >= m->nop || tp < 1 || mbs < 1)
    return PP_EINVAL;
  memset(out, 0, sizeof *out);
  act = (double)mbs / m->micro_batch;
  if (tp == 1) {
    out->param_bytes = (double)m->param[v];
    out->out_bytes = (double)m->out[v] * act;
    out->saved_bytes = (double)m->saved[v] * act;
    return PP_OK;
  }
  for (k = 0; k < m->ntps; k++) {
    size_t c = (size_t)k * (size_t)m->nop + (size_t)v;
    if (m->tps_tp[k] == tp && m->tps_param[c] >= 0) {
      out->param_bytes = (double)m->tps_param[c];
      out->out_bytes = (double)m->tps_out[c] * act;
      out->saved_bytes = (double)m->tps_saved[c] * act;
      return PP_OK;
    }
  }
  /* Megatron-style split: weights and most saved activations divide,
  ** the layer's output is all-reduced and so kept whole on every rank. */
  out->param_bytes = (double)m->param[v] / tp;
  out->out_bytes = (double)m->out[v] * act;
  out->saved_bytes = (double)m->saved[v] * act / tp;
  out->est = PP_EST_TP;
  return PP_OK;
}

pp_type_key pp_model_type_key(const pp_model *m, const pp_cluster *c, int32_t d)
{
  pp_type_key k = pp_cluster_type_key(c, d);
  double ref = 1;
  if (m && m->reftype) {
    int32_t t = pp_cluster_find_type(c, m->reftype);
    const struct ppi_gpu *g = ppi_gpu_find(m->reftype);
    if (t >= 0)
      ref = c->type_speed[t];
    else if (g)
      ref = g->speed;
  }
  k.speed /= ref;
  return k;
}

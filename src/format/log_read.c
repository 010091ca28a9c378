/* SPDX-License-Identifier: MIT */
/*
** What a training log says about a run, for calibration
** (docs/FORMATS.md, "Training logs"; docs/COST_MODEL.md, "Calibration"):
** the iteration time, the peak memory, and whether the run died out of
** GPU memory.  Three formats, recognised from the text, each read as the
** engine's source prints it:
**
**   Megatron-LM (NVIDIA/Megatron-LM @ d98e8a64): training_log's interval
**     line, " [date] iteration N/M | ... | elapsed time per iteration
**     (ms): X | ..." (megatron/training/training.py @ d98e8a64, lines
**     3567-3576), and report_memory's "[Rank R] (after N iterations)
**     memory (MB) | allocated: A | max allocated: B | reserved: C | max
**     reserved: D" in MiB (megatron/training/utils/common_utils.py
**     @ d98e8a64, lines 320-334: it divides by 1024 * 1024); the peak is
**     the largest "max reserved".
**   DeepSpeed (microsoft/DeepSpeed @ 38327e07): the pipeline engine's
**     "steps: N loss: L iter time (s): X samples/sec: Y"
**     (deepspeed/runtime/pipe/engine.py @ 38327e07, lines 401-406); else
**     ThroughputTimer's "epoch=E/micro_step=M/global_step=N,
**     RunningAvgSamplesPerSec=.., CurrSamplesPerSec=S, MemAllocated=..GB,
**     MaxMemAllocated=..GB" (deepspeed/utils/timer.py @ 38327e07, lines
**     264-274), one global step at train_batch_size / S seconds, the
**     batch taken from the engine's configuration dump "  train_batch_size
**     ...... B" (deepspeed/runtime/config.py @ 38327e07, line 1005);
**     see_memory_usage's "MA a GB  Max_MA b GB  CA c GB  Max_CA d GB"
**     (deepspeed/runtime/utils.py @ 38327e07, lines 782-785: GiB, CA to
**     two decimals, Max_CA rounded to a whole GiB), whose larger reserved
**     figure (Max_CA or CA) is the peak.
**   nvidia-smi --query-gpu=memory.used --format=csv samples: a header
**     with a field memory.used (its unit after it in square brackets;
**     other columns allowed), then rows "14012 MiB" (or "14012" with
**     nounits), "[N/A]" skipped; or, with noheader, a file whose every
**     line is one such value.  The peak is the largest.
**
** Markers say the engine without a figure (a run that died before its
** first report): Megatron's "---- arguments ----" banner
** (megatron/training/arguments.py @ d98e8a64, line 1994), DeepSpeed's
** "DeepSpeed info: version=" (deepspeed/__init__.py @ 38327e07, line
** 132) and "DeepSpeedEngine configuration:" (deepspeed/runtime/engine.py
** @ 38327e07, line 369).  A log with lines of several formats is read
** as the first of Megatron, DeepSpeed, nvidia-smi (Megatron-DeepSpeed
** prints both engines' lines); only that format's figures count.
**
** Out of memory: PyTorch's caching allocator raises "CUDA out of memory.
** Tried to allocate ..." (DeviceCachingAllocator::malloc,
** c10/cuda/CUDACachingAllocator.cpp @ eb42ad6e of pytorch/pytorch;
** Python shows it as torch.OutOfMemoryError, torch.cuda.OutOfMemoryError
** or, before PyTorch 1.13, RuntimeError), and a failed CUDA call outside
** it "CUDA error: out of memory" (c10_cuda_check_implementation,
** c10/cuda/CUDAException.cpp @ d545da44, lines 31-32, with
** cudaGetErrorString(cudaErrorMemoryAllocation)).  Either, on any line,
** sets failed.
**
** Every pattern is matched anywhere in a line, as often as it occurs, so
** that launchers' prefixes ("[rank3]: ", "0: ", "host1: ") and the lines
** of several ranks interleaved in one file read.  The last line of a
** text that does not end in a newline may be cut: a figure that runs to
** its end is not counted.  A figure of a recognised line that is not a
** finite non-negative number followed by what the engine prints after it
** is an error naming the line and column.
**
** The iteration time is the median of the reports after the warm-up:
** the reports of the first step reported (Megatron logs its first
** iteration alone, compilation and start-up included: training.py
** @ d98e8a64, line 3539), unless no other step was reported.  One pass
** over the text, then O(n log n) in the n reports.
*/
#include "base/pp_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_MEGATRON, F_DEEPSPEED, F_NVSMI, F_N };
static const char *const fmt_names[F_N] = {"megatron", "deepspeed",
                                           "nvidia-smi"};

/* where iteration times come from */
enum { T_MEGATRON, T_DS_PIPE, T_DS_TPUT, T_N };

/* what a figure is */
enum { W_TIME, W_RATE, W_MEM };

#define MIB 1048576.0
#define GIB 1073741824.0

struct report {
  double ms;
  int64_t step; /* the step reported; negative and unique: unknown */
};

struct line {
  const char *p, *e; /* without the newline and a carriage return */
  long no;           /* from 1 */
  bool cut;          /* the text's last line, without a newline */
};

struct lrun {
  pp_ctx *ctx;
  const char *src;
  bool seen[F_N];
  struct ppi_vec times[T_N]; /* struct report */
  double peak[F_N];          /* bytes; negative: none */
  double batch;              /* DeepSpeed's train_batch_size; 0: unknown */
  int failed;
  int64_t unknown_step; /* the next key of a report without a step */
  int csv_col, csv_nf;  /* the memory.used column; csv_nf 0: no table */
  bool bare_only;       /* every non-blank line is one bare value */
  double bare_peak;     /* MiB */
  int32_t bare_n;
};

/* A figure after a label.  anchor: the line must hold it first (the
** label is looked for up to its next occurrence), and then a label that
** is missing is an error; NULL: the label itself says what the line is.
** terms: what may follow the number ("" the end of the line). */
struct fig {
  int fmt, what, tsrc;
  const char *anchor, *label;
  const char *name; /* the figure, in messages */
  const char *const *terms;
  double scale;
  const char *step_key; /* the step reported, before the label */
  char step_stop;       /* the character after the step's digits */
};

static const char *const t_bar[] = {" |", NULL};
static const char *const t_eol_bar[] = {"", " |", NULL};
static const char *const t_samples[] = {" samples/sec", NULL};
static const char *const t_comma[] = {",", NULL};
static const char *const t_gb[] = {" GB", NULL};
static const char *const t_eol[] = {"", NULL};
static const char *const t_mib[] = {" MiB", "", NULL};

static const struct fig figs[] = {
    {F_MEGATRON, W_TIME, T_MEGATRON, NULL, "elapsed time per iteration (ms): ",
     "elapsed time per iteration (ms)", t_bar, 1, " iteration ", '/'},
    {F_MEGATRON, W_MEM, 0, " memory (MB) | allocated: ", "| max reserved: ",
     "max reserved", t_eol_bar, MIB, NULL, 0},
    {F_DEEPSPEED, W_TIME, T_DS_PIPE, NULL, "iter time (s): ", "iter time (s)",
     t_samples, 1000, "steps: ", ' '},
    {F_DEEPSPEED, W_RATE, T_DS_TPUT, NULL, "CurrSamplesPerSec=",
     "CurrSamplesPerSec", t_comma, 1000, "global_step=", ','},
    {F_DEEPSPEED, W_MEM, 0, "Max_MA ", "Max_CA ", "Max_CA", t_gb, GIB, NULL, 0},
    {F_DEEPSPEED, W_MEM, 0, "Max_MA ", " CA ", "CA", t_gb, GIB, NULL, 0},
};

/* Lines that name the engine without a figure. */
static const struct {
  int fmt;
  const char *text;
} markers[] = {
    {F_MEGATRON, "------------------------ arguments ------------------------"},
    {F_DEEPSPEED, "DeepSpeed info: version="},
    {F_DEEPSPEED, "DeepSpeedEngine configuration:"},
};

static const char *const oom[] = {"CUDA out of memory.",
                                  "CUDA error: out of memory"};

/* [p, e) for a message: at most 24 bytes, others than printable ASCII
** as '?'. */
static const char *snip(const char *p, const char *e, char *buf, size_t n)
{
  size_t k = 0;
  while (p < e && k + 4 < n && k < 24) {
    unsigned char c = (unsigned char)*p++;
    buf[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
  }
  if (p < e && k + 4 <= n) {
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  buf[k] = '\0';
  return buf;
}

static bool is_digit(char c)
{
  return c >= '0' && c <= '9';
}

static bool starts_nocase(const char *p, const char *e, const char *s)
{
  size_t n = strlen(s), i;
  if ((size_t)(e - p) < n)
    return false;
  for (i = 0; i < n; i++) {
    char c = p[i];
    if (c >= 'A' && c <= 'Z')
      c = (char)(c - 'A' + 'a');
    if (c != s[i])
      return false;
  }
  return true;
}

/* How a number in a line reads. */
enum {
  N_OK,   /* *x, and *q past it */
  N_CUT,  /* it runs to the end of a cut line: not counted */
  N_NONE, /* no number */
  N_NONFINITE /* nan or inf */,
  N_LONG,  /* longer than PPI_LOG_NUMBER_MAX - 1 */
  N_BAD,   /* not a decimal number */
  N_RANGE, /* too large for a double */
  N_NEGATIVE
};

/* The decimal number at p (blanks skipped) in [p, e); cut: e ends a cut
** line.  *b is where it starts. */
static int scan_num(const char *p, const char *e, bool cut, double *x,
                    const char **b, const char **q)
{
  char buf[PPI_LOG_NUMBER_MAX], *end;
  const char *s;
  size_t n;
  while (p < e && (*p == ' ' || *p == '\t'))
    p++;
  *b = *q = s = p;
  if (s < e && (*s == '+' || *s == '-'))
    s++;
  if (starts_nocase(s, e, "nan") || starts_nocase(s, e, "inf")) {
    *q = s + 3;
    return N_NONFINITE;
  }
  while (s < e &&
         (is_digit(*s) || *s == '.' || *s == 'e' || *s == 'E' ||
          ((*s == '+' || *s == '-') && (s[-1] == 'e' || s[-1] == 'E'))))
    s++;
  *q = s;
  if (s == e && cut)
    return N_CUT;
  n = (size_t)(s - p);
  if (n == 0)
    return N_NONE;
  if (n >= sizeof buf)
    return N_LONG;
  memcpy(buf, p, n);
  buf[n] = '\0';
  errno = 0;
  *x = strtod(buf, &end);
  if (end != buf + n)
    return N_BAD;
  if (isinf(*x) || (errno == ERANGE && fabs(*x) > 1))
    return N_RANGE;
  if (*x < 0)
    return N_NEGATIVE;
  return N_OK;
}

/* Whether [q, e) begins with one of terms ("" only when empty), or, on
** a cut line, is cut inside one. */
static bool term_ok(const char *q, const char *e, bool cut,
                    const char *const *terms)
{
  size_t rest = (size_t)(e - q);
  for (; *terms; terms++) {
    size_t n = strlen(*terms);
    if (n == 0 ? rest == 0 : (rest >= n && !memcmp(q, *terms, n)))
      return true;
    if (cut && rest < n && !memcmp(q, *terms, rest))
      return true;
  }
  return false;
}

/* The figure after what at p in [p, e) of line l (cut: e ends a cut
** line): *have is false when it is cut off; an error when it is not a
** finite non-negative number followed by one of terms. */
static pp_status figure(struct lrun *r, const struct line *l, const char *p,
                        const char *e, bool cut, const char *what,
                        const char *const *terms, double *x, bool *have)
{
  const char *b = p, *q = p;
  char sn[32];
  long col;
  int k = scan_num(p, e, cut, x, &b, &q);
  *have = false;
  col = (long)(b - l->p) + 1;
  switch (k) {
  case N_CUT: return PP_OK;
  case N_NONE:
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, col,
                       "'%s' is followed by '%s', not a number", what,
                       snip(b, e, sn, sizeof sn));
  case N_NONFINITE:
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, col,
                       "'%s' %s: not a finite number", what,
                       snip(b, q, sn, sizeof sn));
  case N_LONG:
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, col,
                       "'%s' is followed by a number of more than %d "
                       "characters",
                       what, PPI_LOG_NUMBER_MAX - 1);
  case N_BAD:
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, col,
                       "'%s' %s: not a number", what,
                       snip(b, q, sn, sizeof sn));
  case N_RANGE:
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, col,
                       "'%s' %s: out of range", what,
                       snip(b, q, sn, sizeof sn));
  case N_NEGATIVE:
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, col,
                       "'%s' %s: negative", what, snip(b, q, sn, sizeof sn));
  default: break;
  }
  if (!term_ok(q, e, cut, terms)) {
    char sq[32], want[64];
    size_t at = 0, i;
    want[0] = '\0';
    for (i = 0; terms[i] && at < sizeof want; i++) {
      int w =
          snprintf(want + at, sizeof want - at, "%s%s%s%s", i ? " or " : "",
                   terms[i][0] ? "'" : "", terms[i][0] ? terms[i] : "its end",
                   terms[i][0] ? "'" : "");
      at += w > 0 ? (size_t)w : 0;
    }
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, col,
                       "'%s' %s is followed by '%s', not %s", what,
                       snip(b, q, sn, sizeof sn), snip(q, e, sq, sizeof sq),
                       want);
  }
  *have = true;
  return PP_OK;
}

/* The step after key in [p, e): digits, then stop; else a new unknown
** key. */
static int64_t step_at(struct lrun *r, const char *p, const char *e,
                       const char *key, char stop)
{
  const char *k = key ? ppi_span_find(p, e, key) : NULL;
  int64_t s = 0;
  int d = 0;
  if (k) {
    k += strlen(key);
    while (k < e && *k == ' ')
      k++;
    for (; k < e && is_digit(*k) && d < 18; k++, d++)
      s = s * 10 + (*k - '0');
    if (d > 0 && k < e && *k == stop)
      return s;
  }
  return r->unknown_step--;
}

static pp_status add_time(struct lrun *r, int tsrc, double ms, int64_t step)
{
  struct report t;
  t.ms = ms;
  t.step = step;
  return ppi_vec_push(r->ctx, &r->times[tsrc], &t);
}

/* One figure of a row at k (the label's start) in [seg, e). */
static pp_status take(struct lrun *r, const struct line *l, const struct fig *f,
                      const char *seg, const char *k, const char *e)
{
  size_t ln = strlen(f->label);
  bool cut = l->cut && e == l->e, have;
  double x, v;
  long col;
  pp_status rc;
  if ((rc = figure(r, l, k + ln, e, cut, f->name, f->terms, &x, &have)) ||
      !have)
    return rc;
  col = (long)(k + ln - l->p) + 1;
  if (f->what == W_RATE && x <= 0)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, col,
                       "'%s' is 0: no iteration time", f->name);
  if (f->what == W_RATE && r->batch <= 0)
    return PP_OK; /* no train_batch_size before it: no time */
  v = f->what == W_RATE ? r->batch / x * f->scale : x * f->scale;
  if (!isfinite(v))
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, col,
                       "'%s' %g: out of range", f->name, x);
  if (f->what != W_MEM)
    return add_time(r, f->tsrc, v,
                    step_at(r, seg, k, f->step_key, f->step_stop));
  if (v > r->peak[f->fmt])
    r->peak[f->fmt] = v;
  return PP_OK;
}

static pp_status fig_line(struct lrun *r, const struct line *l,
                          const struct fig *f)
{
  pp_status rc;
  if (!f->anchor) {
    const char *k, *seg = l->p;
    for (k = ppi_span_find(l->p, l->e, f->label); k;
         k = ppi_span_find(k + 1, l->e, f->label)) {
      r->seen[f->fmt] = true;
      if ((rc = take(r, l, f, seg, k, l->e)))
        return rc;
      seg = k + strlen(f->label);
    }
  } else {
    const char *a, *next;
    for (a = ppi_span_find(l->p, l->e, f->anchor); a; a = next) {
      const char *seg_e, *k;
      next = ppi_span_find(a + 1, l->e, f->anchor);
      seg_e = next ? next : l->e;
      r->seen[f->fmt] = true;
      k = ppi_span_find(a, seg_e, f->label);
      if (!k) {
        if (l->cut && !next)
          return PP_OK; /* cut before it */
        return ppi_fail_at(
            r->ctx, PP_EPARSE, r->src, l->no, (long)(a - l->p) + 1,
            "a %s memory report without '%s'", fmt_names[f->fmt], f->name);
      }
      if ((rc = take(r, l, f, a, k, seg_e)))
        return rc;
    }
  }
  return PP_OK;
}

/* DeepSpeed's configuration dump: "  train_batch_size ....... B". */
static pp_status batch_line(struct lrun *r, const struct line *l)
{
  static const char key[] = "train_batch_size ";
  const char *k = ppi_span_find(l->p, l->e, key), *d;
  double x;
  bool have;
  pp_status rc;
  if (!k)
    return PP_OK;
  d = k + sizeof key - 1;
  if (d >= l->e || *d != '.')
    return PP_OK; /* not the dump's dotted line */
  while (d < l->e && *d == '.')
    d++;
  if ((rc = figure(r, l, d, l->e, l->cut, "train_batch_size", t_eol, &x,
                   &have)) ||
      !have)
    return rc;
  if (x < 1 || x != floor(x))
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no, 0,
                       "train_batch_size %g is not a positive integer", x);
  r->seen[F_DEEPSPEED] = true;
  r->batch = x;
  return PP_OK;
}

static void bare_value(struct lrun *r, const struct line *l)
{
  const char *b, *q;
  double x;
  int k = scan_num(l->p, l->e, l->cut, &x, &b, &q);
  if (k == N_CUT)
    return;
  if (k == N_OK && isfinite(x * MIB)) {
    if (term_ok(q, l->e, l->cut, t_mib)) {
      if (x > r->bare_peak)
        r->bare_peak = x;
      r->bare_n++;
      return;
    }
  }
  r->bare_only = false;
}

/* nvidia-smi --query-gpu CSV: a header, then rows with as many fields;
** a blank line, or a line whose value does not begin like a number,
** ends the table (a shell prompt after it). */
static pp_status nvsmi_line(struct lrun *r, const struct line *l)
{
  const char *p = l->p, *fb, *fe, *vb = NULL, *ve = NULL;
  bool more = true;
  int nf = 0, col = -1;
  while (p < l->e && (*p == ' ' || *p == '\t'))
    p++;
  if (p == l->e) {
    r->csv_nf = 0;
    return PP_OK;
  }
  while (ppi_span_field(&p, l->e, ',', &more, &fb, &fe)) {
    if (ppi_span_is(fb, fe, "memory.used [MiB]") ||
        ppi_span_is(fb, fe, "memory.used"))
      col = nf;
    if (nf == r->csv_col)
      vb = fb, ve = fe;
    nf++;
  }
  if (col >= 0) {
    r->csv_col = col;
    r->csv_nf = nf;
    r->seen[F_NVSMI] = true;
    r->bare_only = false;
    return PP_OK;
  }
  if (r->csv_nf && nf == r->csv_nf && vb < ve && *vb == '[')
    return PP_OK; /* [N/A], [Not Supported]: no figure */
  if (r->csv_nf && nf == r->csv_nf && vb < ve &&
      (is_digit(*vb) || *vb == '.' || *vb == '-' || *vb == '+')) {
    double x;
    bool have;
    pp_status rc;
    if ((rc = figure(r, l, vb, ve, l->cut && ve == l->e, "memory.used", t_mib,
                     &x, &have)) ||
        !have)
      return rc;
    if (!isfinite(x * MIB))
      return ppi_fail_at(r->ctx, PP_EPARSE, r->src, l->no,
                         (long)(vb - l->p) + 1,
                         "'memory.used' %g: out of range", x);
    if (x * MIB > r->peak[F_NVSMI])
      r->peak[F_NVSMI] = x * MIB;
    return PP_OK;
  }
  r->csv_nf = 0;
  if (r->bare_only && nf == 1)
    bare_value(r, l);
  else
    r->bare_only = false;
  return PP_OK;
}

static pp_status one_line(struct lrun *r, const struct line *l)
{
  size_t i;
  pp_status rc;
  for (i = 0; i < PPI_COUNT(oom); i++)
    if (ppi_span_find(l->p, l->e, oom[i]))
      r->failed = 1;
  for (i = 0; i < PPI_COUNT(markers); i++)
    if (ppi_span_find(l->p, l->e, markers[i].text))
      r->seen[markers[i].fmt] = true;
  if ((rc = batch_line(r, l)))
    return rc;
  for (i = 0; i < PPI_COUNT(figs); i++)
    if ((rc = fig_line(r, l, &figs[i])))
      return rc;
  return nvsmi_line(r, l);
}

/* The median of the reports after the warm-up (module comment). */
static pp_status median(struct lrun *r, const struct ppi_vec *v, double *out)
{
  const struct report *t = v->data;
  int64_t first;
  size_t i, n = 0, skip = 0;
  double *ms;
  *out = NAN;
  if (v->n == 0)
    return PP_OK;
  first = t[0].step;
  for (i = 0; i < v->n; i++)
    skip += t[i].step == first;
  if (skip == v->n)
    skip = 0;
  if (!PPI_NEW(r->ctx, ms, v->n))
    return PP_ENOMEM;
  for (i = 0; i < v->n; i++)
    if (!skip || t[i].step != first)
      ms[n++] = t[i].ms;
  qsort(ms, n, sizeof *ms, ppi_cmp_double);
  *out = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  ppi_free(r->ctx, ms, v->n * sizeof *ms);
  return PP_OK;
}

pp_status pp_log_read(pp_ctx *ctx, const char *text, size_t len,
                      const char *source, pp_log_summary *out)
{
  struct lrun r;
  const char *p = text, *end = text + len;
  int f, t;
  long no = 0;
  pp_status rc = PP_OK;
  if (!ctx || (!text && len) || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_log_read: NULL argument")
               : PP_EINVAL;
  out->format = NULL;
  out->iteration_ms = NAN;
  out->iterations = 0;
  out->peak_memory_bytes = NAN;
  out->failed = 0;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.src = source ? source : "<log>";
  for (t = 0; t < T_N; t++)
    ppi_vec_init(&r.times[t], sizeof(struct report));
  for (f = 0; f < F_N; f++)
    r.peak[f] = -1;
  r.unknown_step = -1;
  r.csv_col = -1;
  r.bare_only = true;
  r.bare_peak = -1;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    struct line l;
    l.p = p;
    l.e = nl ? nl : end;
    l.cut = !nl;
    l.no = ++no;
    if (l.e > l.p && l.e[-1] == '\r')
      l.e--;
    if ((rc = one_line(&r, &l)))
      goto done;
    p = nl ? nl + 1 : end;
  }
  for (f = 0; f < F_N && !r.seen[f]; f++)
    ;
  if (f == F_N && r.bare_only && r.bare_n > 0) {
    f = F_NVSMI;
    r.peak[f] = r.bare_peak * MIB;
  }
  if (f == F_N) {
    rc = ppi_fail_at(
        ctx, PP_EPARSE, r.src, 0, 0,
        "no training log found%s: looked for Megatron-LM's ('elapsed time "
        "per iteration (ms):', 'memory (MB) | ... | max reserved:'), "
        "DeepSpeed's ('iter time (s):', 'CurrSamplesPerSec=', "
        "see_memory_usage's 'Max_CA') and nvidia-smi "
        "--query-gpu=memory.used --format=csv samples ('memory.used [MiB]' "
        "or one value a line)",
        r.failed ? " (it holds a CUDA out-of-memory error, but no line of "
                   "an engine)"
                 : "");
    goto done;
  }
  out->format = fmt_names[f];
  t = f == F_MEGATRON    ? T_MEGATRON
      : f == F_DEEPSPEED ? (r.times[T_DS_PIPE].n ? T_DS_PIPE : T_DS_TPUT)
                         : -1;
  if (t >= 0) {
    if ((rc = median(&r, &r.times[t], &out->iteration_ms)))
      goto done;
    out->iterations = (int32_t)r.times[t].n;
  }
  if (r.peak[f] >= 0)
    out->peak_memory_bytes = r.peak[f];
  out->failed = r.failed;
done:
  for (t = 0; t < T_N; t++)
    ppi_vec_free(ctx, &r.times[t]);
  if (rc)
    out->format = NULL;
  return rc;
}

pp_status pp_log_load(pp_ctx *ctx, const char *path, pp_log_summary *out)
{
  char *text;
  size_t len;
  pp_status rc;
  if (!ctx || !path || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_log_load: NULL argument")
               : PP_EINVAL;
  if ((rc = ppi_read_file(ctx, path, &text, &len)))
    return rc;
  rc = pp_log_read(ctx, text, len, path, out);
  ppi_free(ctx, text, len + 1);
  return rc;
}

/* SPDX-License-Identifier: MIT */
/*
** The run's settings and the memory margin in words, shared by the
** writers of evaluate, simulate and plan (docs/FORMATS.md, "evaluate and
** simulate output"): "precision fp16, engine deepspeed, ZeRO stage 1";
** "fits with 1.2 GiB to spare" or "needs 3.4 GiB more" (GiB with one
** decimal); and the same settings as JSON fields.  O(1).
*/
#include "write/write.h"

#include <stdio.h>
#include <string.h>

void ppi_run_words(char *buf, size_t n, pp_precision prec, pp_engine e,
                   int32_t zero)
{
  snprintf(buf, n, "precision %s, engine %s, ZeRO stage %d",
           pp_precision_name(prec), pp_engine_name(e), (int)zero);
}

void ppi_margin_words(char *buf, size_t n, double margin_bytes)
{
  double gib = margin_bytes / (1024.0 * 1024.0 * 1024.0);
  if (margin_bytes >= 0)
    snprintf(buf, n, "fits with %.1f GiB to spare", gib);
  else
    snprintf(buf, n, "needs %.1f GiB more", -gib);
}

void ppi_interval_words(char *buf, size_t n, double ms, double sd,
                        int calibrated)
{
  double lo = ms * (1 - 2 * sd);
  snprintf(buf, n, "%.1f to %.1f ms: two spreads of %.1f%% (%s)",
           lo > 0 ? lo : 0, ms * (1 + 2 * sd), 100 * sd,
           calibrated ? "calibrated"
                      : "uncalibrated: the default spread; parplan calibrate "
                        "measures it");
}

void ppi_upper_room(double total, double spread, double capacity, double *room,
                    bool *any)
{
  double r = capacity - total * (1 + 2 * spread);
  if (!*any || r < *room) {
    *room = r;
    *any = true;
  }
}

void ppi_json_run(FILE *f, pp_precision prec, pp_engine e, int32_t zero)
{
  fprintf(f, "\"precision\": \"%s\", \"engine\": \"%s\", \"zero\": %d",
          pp_precision_name(prec), pp_engine_name(e), (int)zero);
}

void ppi_tp_words(char *buf, size_t n,
                  int32_t (*tp)(const void *arg, int32_t s), const void *arg,
                  int32_t S)
{
  int32_t s = 0, j;
  size_t k = 0;
  if (n == 0)
    return;
  buf[0] = '\0';
  while (s < S && k < n) {
    int w;
    for (j = s; j < S && tp(arg, j) == tp(arg, s); j++)
      ;
    if (s == 0 && j == S)
      w = snprintf(buf, n, "%d", (int)tp(arg, 0));
    else
      w = snprintf(buf + k, n - k, "%s%d x%d", s ? ", " : "", (int)tp(arg, s),
                   (int)(j - s));
    if (w < 0 || (size_t)w >= n - k) { /* cut: end with an ellipsis */
      if (n >= 4)
        memcpy(buf + n - 4, "...", 4);
      return;
    }
    k += (size_t)w;
    s = j;
  }
}

/* SPDX-License-Identifier: MIT */
/*
** What the writers of the write layer share among themselves: the HTML
** report embeds the Gantt chart that gantt_write.c draws; evaluate,
** simulate and plan state the run's settings and the memory margin in
** the same words (run_words.c).
*/
#ifndef PP_WRITE_H
#define PP_WRITE_H

#include "plan/plan.h"

/* The Gantt chart of a recorded simulation drawn into out: SVG text, or
** PNG bytes when png (gantt_write.c). */
PP_INTERNAL pp_status ppi_gantt_render(pp_ctx *ctx, const pp_sim *s,
                                       const pp_cluster *c, int png,
                                       struct ppi_sbuf *out);

/* "precision fp16, engine generic, ZeRO stage 0" into buf. */
PP_INTERNAL void ppi_run_words(char *buf, size_t n, pp_precision prec,
                               pp_engine e, int32_t zero);
/* "fits with 1.2 GiB to spare" (margin >= 0) or "needs 3.4 GiB more". */
PP_INTERNAL void ppi_margin_words(char *buf, size_t n, double margin_bytes);
/* The interval of a predicted time ms with relative spread sd: "X to Y
** ms: two spreads of Z% (calibrated | ...)". */
PP_INTERNAL void ppi_interval_words(char *buf, size_t n, double ms, double sd,
                                    int calibrated);
/* Fold a used device into *room, the least room at the upper end of the
** memory intervals: capacity - total x (1 + 2 x spread); *any: whether a
** device was folded in yet. */
PP_INTERNAL void ppi_upper_room(double total, double spread, double capacity,
                                double *room, bool *any);
/* The tensor-parallel degrees of S stages, tp(arg, s): "4" when they
** are one, else their runs, "1 x3, 4 x2". */
PP_INTERNAL void ppi_tp_words(char *buf, size_t n,
                              int32_t (*tp)(const void *arg, int32_t s),
                              const void *arg, int32_t S);
/* "precision": "fp16", "engine": "generic", "zero": 0 (no braces). */
PP_INTERNAL void ppi_json_run(FILE *f, pp_precision prec, pp_engine e,
                              int32_t zero);

#endif

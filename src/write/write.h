/* SPDX-License-Identifier: MIT */
/*
** What the writers of the write layer share among themselves: the HTML
** report embeds the Gantt chart that gantt_write.c draws.
*/
#ifndef PP_WRITE_H
#define PP_WRITE_H

#include "plan/plan.h"

/* The Gantt chart of a recorded simulation drawn into out: SVG text, or
** PNG bytes when png (gantt_write.c). */
PP_INTERNAL pp_status ppi_gantt_render(pp_ctx *ctx, const pp_sim *s,
                                       const pp_cluster *c, int png,
                                       struct ppi_sbuf *out);

#endif

/* SPDX-License-Identifier: MIT */
/*
** The partitions users get today, as baselines:
**
**   - uniform layer counts: Megatron-LM's default (an equal number of
**     layers per stage) and DeepSpeed's 'uniform', whose rule for a
**     remainder this follows: the first L mod S stages take one more;
**   - uniform parameters: DeepSpeed's 'parameters' method, which balances
**     the parameter counts with its partition_balanced (the min-max
**     partition of the per-layer weights); here exactly, through the
**     min-max DP of part_minmax.c on a chain whose "work" is the
**     parameter bytes and whose transfers are free.
**
** PipeDream's own DP is the min-max DP without memory (part.c calls
** part_minmax.c with the memory check off), and PipeDream + 1F1B* is in
** part_madpipe.c.
**
** Complexity: O(S) and O(S L w).
*/
#include "part/part.h"

#include <math.h>
#include <string.h>

void ppi_part_uniform_layers(int32_t L, int32_t S, int32_t *first)
{
  int32_t s, q = L / S, extra = L % S;
  first[0] = 0;
  for (s = 0; s < S; s++)
    first[s + 1] = first[s] + q + (s < extra ? 1 : 0);
}

pp_status ppi_part_uniform_params(pp_ctx *ctx, const double *pp, int32_t L,
                                  int32_t S, int32_t *first)
{
  struct ppi_chain c;
  double obj, *zero = ppi_calloc(ctx, (size_t)L, sizeof *zero);
  double *inf = ppi_alloc(ctx, (size_t)S * sizeof *inf);
  int32_t *prof = ppi_calloc(ctx, (size_t)S, sizeof *prof);
  pp_status rc = PP_ENOMEM;
  int32_t s;

  if (zero && inf && prof) {
    for (s = 0; s < S; s++)
      inf[s] = INFINITY;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.S = S;
    c.R = 1;
    c.nprof = 1;
    c.wp = (double *)pp; /* read only */
    c.cut = zero;
    c.prof = prof;
    c.bw = inf;
    c.mem = inf;
    rc = ppi_part_minmax(ctx, &c, 0, first, &obj);
  }
  ppi_free(ctx, zero, (size_t)L * sizeof *zero);
  ppi_free(ctx, inf, (size_t)S * sizeof *inf);
  ppi_free(ctx, prof, (size_t)S * sizeof *prof);
  return rc;
}

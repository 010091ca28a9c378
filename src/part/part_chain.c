/* SPDX-License-Identifier: MIT */
/*
** The layer chain the partitioners work on (part.h), built from a model
** (a chain, or the chain view of a DAG: pp_model_chain_view), the
** positions the stages run on and the memory model of docs/DESIGN.md
** ("Units and the cost model"); and the objective values of a partition,
** priced from the same arrays.
**
** Times come from pp_model_op_time at tensor-parallel degree 1 and the
** partition's micro-batch size, once per device type among the
** positions (a "profile"); sizes from pp_model_op_sizes; the bytes after
** a layer from the chain edge to the next layer, scaled with the
** micro-batch size.
**
** Complexity: O(L x profiles) lookups, O(L x profiles + S) memory.
*/
#include "part/part.h"

#include <math.h>
#include <string.h>

double ppi_ch_minmax_of(const struct ppi_chain *c, const int32_t *first)
{
  double worst = 0;
  int32_t s;
  for (s = 0; s < c->S; s++) {
    double t = ppi_ch_minmax(c, s, first[s], first[s + 1] - 1);
    if (t > worst)
      worst = t;
  }
  return worst;
}

double ppi_ch_amp_of(const struct ppi_chain *c, const int32_t *first)
{
  double m = 0, sig = 0, r = 0;
  int32_t s;
  for (s = 0; s < c->S; s++) {
    int32_t i = first[s], j = first[s + 1] - 1;
    double t = ppi_ch_work(c, s, i, j), a = ppi_ch_ar(c, s, i, j);
    m = t > m ? t : m;
    r = a > r ? a : r;
    sig += t + (s + 1 < c->S ? ppi_ch_comm(c, s, j) : 0);
  }
  return (double)(c->gas - 1) * m + sig + r;
}

double ppi_ch_mem_ratio(const struct ppi_chain *c, const int32_t *first,
                        int32_t *worst)
{
  double best = -1;
  int32_t s;
  *worst = 0;
  for (s = 0; s < c->S; s++) {
    double x = ppi_ch_mem(c, s, first[s], first[s + 1] - 1) / c->mem[s];
    if (x > best) {
      best = x;
      *worst = s;
    }
  }
  return best;
}

/* SPDX-License-Identifier: MIT */
/*
** A read-only view of a mapping for its writer (map_write.c).
*/
#ifndef PP_MAP_VIEW_H
#define PP_MAP_VIEW_H

#include "cluster/cluster.h"

struct ppi_map_view {
  const pp_map_summary *sum;
  int32_t S, R;
  const int32_t *dev;
  const double *t;
  const char *const *stage_name, *const *dev_name;
  const char *cluster_name, *graph_source;
};

PP_INTERNAL const struct ppi_map_view *ppi_map_view(const pp_mapping *m,
                                                    struct ppi_map_view *v);

#endif /* PP_MAP_VIEW_H */

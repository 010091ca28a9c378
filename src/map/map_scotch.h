/* SPDX-License-Identifier: MIT */
/*
** Scotch, made repeatable (map_scotch.c): libscotch runs some of its
** routines on several threads, and then the same graph and seed give
** different answers from run to run; a context with one thread and a
** fixed seed gives the same answer every time.  A graph is used through
** its copy bound to that context.
*/
#ifndef PP_MAP_SCOTCH_H
#define PP_MAP_SCOTCH_H

#include "cluster/cluster.h"

#include <scotch.h>

struct ppi_scotch {
  SCOTCH_Context c;
  SCOTCH_Graph g[2]; /* the bound copies */
  int32_t ng;
  bool c_ok;
};

/* Open the context; 0 on success (close it in any case). */
PP_INTERNAL int ppi_scotch_open(struct ppi_scotch *s);
/* The copy of g bound to the context, or NULL. */
PP_INTERNAL SCOTCH_Graph *ppi_scotch_bind(struct ppi_scotch *s,
                                          SCOTCH_Graph *g);
/* Free the bound copies, then the context. */
PP_INTERNAL void ppi_scotch_close(struct ppi_scotch *s);

#endif /* PP_MAP_SCOTCH_H */

/* SPDX-License-Identifier: MIT */
/*
** The internal limits a user can hit, in one place, each with what it
** limits and why it has its value.  The documented input limits (PP_MAX_*)
** are public, in parplan.h; these are the library's own.
**
** Invariant: a limit is defined here once and used by name; code that
** relies on another file's limit (the simulator on the cost model's
** hierarchical allreduce) uses the same name.
*/
#ifndef PP_LIMITS_H
#define PP_LIMITS_H

/* Threads of one search (pp_search_params.threads, 1 to this) and jobs of
** one fan-out (fanout.c keeps a slot per job on its stack).  64: beyond
** the cores of one machine the planner targets, and rounds of ROUND
** points per thread stop sharing work evenly. */
#define PPI_MAX_THREADS 64

#endif /* PP_LIMITS_H */

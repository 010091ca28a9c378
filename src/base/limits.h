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

/* Bytes of a one-line spec, its NUL included ("hier:4x8,intra=300"; a
** longer one is "longer than 1023 bytes"): specs are cut up in a stack
** buffer of this size, and no generator takes options that come near. */
#define PPI_SPEC_MAX 1024

#endif /* PP_LIMITS_H */

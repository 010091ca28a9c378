/* SPDX-License-Identifier: MIT */
/*
** --max-memory GB: the library's allocator hook (pp_ctx_params.alloc),
** counting the bytes the library holds and refusing an allocation that
** would take them past the limit.  The library then fails with
** PP_ENOMEM, or falls back where it can (the planner ranks its kept
** plans by the estimate instead of simulating them, docs/PLANNER.md), and
** the tool says the limit was reached instead of being killed by the
** kernel.  Every worker thread's context copies the same hook, so the
** count is atomic (C11 <stdatomic.h>).  Counted: what the library
** allocates through the hook (all of its memory but the CBC solver's
** own, MadPipe's ILP, docs/PLANNER.md).
*/
#include "cli.h"

#include <stdatomic.h>
#include <stdlib.h>

static atomic_size_t used;
static atomic_int refused;
static size_t limit;

static void *guard_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  size_t old = ptr ? osize : 0;
  void *q;
  (void)ud;
  if (nsize == 0) {
    free(ptr);
    atomic_fetch_sub(&used, old);
    return NULL;
  }
  if (nsize > old) {
    size_t add = nsize - old;
    if (atomic_fetch_add(&used, add) + add > limit) {
      atomic_fetch_sub(&used, add);
      atomic_store(&refused, 1);
      return NULL;
    }
  }
  q = realloc(ptr, nsize);
  if (!q) {
    if (nsize > old)
      atomic_fetch_sub(&used, nsize - old);
    return NULL;
  }
  if (nsize < old)
    atomic_fetch_sub(&used, old - nsize);
  return q;
}

void cli_memory_guard(pp_ctx_params *cp, double gib)
{
  if (!(gib > 0))
    return;
  limit = (size_t)(gib * 1073741824.0);
  cp->alloc = guard_alloc;
  cp->alloc_ud = NULL;
}

int cli_memory_refused(void)
{
  return atomic_load(&refused);
}

double cli_memory_limit_gib(void)
{
  return (double)limit / 1073741824.0;
}

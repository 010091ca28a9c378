/* SPDX-License-Identifier: MIT */
/*
** The one binary min-heap (struct ppi_heap): Kahn's ready operators in
** model_topo.c, the candidate pairs of operator clustering in
** part_cluster.c, and the simulator's event queue in sim.c.
**
** Objective: a priority queue of records (key, tie, payload), least
** (key, tie) first: the key a double, the tie an unsigned integer that
** makes the order total (the simulator's sequence numbers, the pairs'
** u << 32 | v, or the operator index itself), the payload (id, a, b)
** carried along.
**
** Invariant: no record is less than its parent.  The sift rules are
** fixed: a pushed record rises only past a parent it is strictly less
** than; a sinking record goes to the smaller child (the right one only
** when strictly less than the left) and stops at a child that is not
** strictly less than it.  These are the rules of the three heaps this one
** replaced, so even records equal in (key, tie) leave in the same order
** as before, and every output stays byte-identical.
**
** Complexity: O(log n) comparisons and 32-byte copies per push and pop;
** the array doubles from PPI_HEAP_FIRST_CAP, amortised O(1) per push.
**
** Why fixed records with a built-in order, rather than elements of any
** size with a comparator (or an index heap over a key array): the three
** users' orders are an operator index, (cost, u, v) and (time,
** sequence), all of which one (double, uint64) order expresses, and
** their payloads fit in 16 bytes.  The comparison then compiles inline
** and a record moves as four words.  Measured on bench/bench_sim.c's first
** plan (1,024 devices, 16 x 64, gas 64), instructions in pp_simulate
** (callgrind) against the simulator's own inlined heap: a comparator
** through a pointer with memcpy of elsize bytes, +17%; an inlined
** comparison with elsize copies, +8%; these records with push and pop in
** this file, +1% but 5 to 10% slower on the clock (a call per event);
** with push and pop inline in heap.h and only the growth here, -3%, and
** bench_sim's figures the same as before within run-to-run noise (57 ms
** against 57 ms, three interleaved runs).  An index heap would make every
** comparison read two key slots scattered over the callers' arrays, and
** the callers keep and recycle those slots.
*/
#include "base/heap.h"

#include <string.h>

/* TUNING: the simulator's and the clustering's queues hold thousands of
** records at once; starting here skips the first doublings (it is where
** both of the heaps this one replaced started). */
#define PPI_HEAP_FIRST_CAP 1024

void ppi_heap_init(struct ppi_heap *h)
{
  memset(h, 0, sizeof *h);
}

void ppi_heap_free(pp_ctx *ctx, struct ppi_heap *h)
{
  ppi_raw_free(ppi_ctx_alloc(ctx), h->el, h->cap * sizeof *h->el);
  ppi_heap_init(h);
}

pp_status ppi_heap_grow(pp_ctx *ctx, struct ppi_heap *h)
{
  size_t cap = h->cap ? 2 * h->cap : PPI_HEAP_FIRST_CAP;
  struct ppi_heap_el *el = ppi_raw_realloc(
      ppi_ctx_alloc(ctx), h->el, h->cap * sizeof *el, cap * sizeof *el);
  if (!el)
    return ppi_nomem(ctx);
  h->el = el;
  h->cap = cap;
  return PP_OK;
}

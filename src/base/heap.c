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
** and a record moves as four words.  Measured on the simulator's run in
** bench/bench_sim (1,024 devices, 16 x 64, gas 64; callgrind, instructions
** in pp_simulate): a generic heap with a comparator through a pointer and
** memcpy of elsize bytes cost 17% more than the simulator's own inlined
** heap, an inlined comparison with elsize copies 8% more, these fixed
** records 1% more (the call into this file), which bench_sim's figures do
** not tell from noise.  An index heap would make every comparison read
** two key slots scattered over the callers' arrays, and the callers keep
** and recycle those slots.
*/
#include "base/pp_int.h"

#include <string.h>

/* TUNING: the simulator's and the clustering's queues hold thousands of
** records at once; starting here skips the first doublings (it is where
** both of the heaps this one replaced started). */
#define PPI_HEAP_FIRST_CAP 1024

static inline bool less(const struct ppi_heap_el *a,
                        const struct ppi_heap_el *b)
{
  return a->key < b->key || (a->key == b->key && a->tie < b->tie);
}

void ppi_heap_init(struct ppi_heap *h)
{
  memset(h, 0, sizeof *h);
}

void ppi_heap_free(pp_ctx *ctx, struct ppi_heap *h)
{
  ppi_raw_free(ppi_ctx_alloc(ctx), h->el, h->cap * sizeof *h->el);
  ppi_heap_init(h);
}

pp_status ppi_heap_push(pp_ctx *ctx, struct ppi_heap *h, struct ppi_heap_el e)
{
  size_t i;
  if (h->n == h->cap) {
    size_t cap = h->cap ? 2 * h->cap : PPI_HEAP_FIRST_CAP;
    struct ppi_heap_el *el = ppi_raw_realloc(
        ppi_ctx_alloc(ctx), h->el, h->cap * sizeof *el, cap * sizeof *el);
    if (!el)
      return ppi_nomem(ctx);
    h->el = el;
    h->cap = cap;
  }
  i = h->n++;
  while (i > 0 && less(&e, &h->el[(i - 1) / 2])) {
    h->el[i] = h->el[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->el[i] = e;
  return PP_OK;
}

struct ppi_heap_el ppi_heap_pop(struct ppi_heap *h)
{
  struct ppi_heap_el top = h->el[0], last = h->el[--h->n];
  size_t i = 0, n = h->n;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && less(&h->el[c + 1], &h->el[c]))
      c++;
    if (!less(&h->el[c], &last))
      break;
    h->el[i] = h->el[c];
    i = c;
  }
  if (n > 0)
    h->el[i] = last;
  return top;
}

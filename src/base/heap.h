/* SPDX-License-Identifier: MIT */
/*
** The one binary min-heap's interface (heap.c has its users and the
** measurements).
**
** Objective: a priority queue of records (key, tie, payload), least
** (key, tie) first.
**
** Invariant: no record is less than its parent, and the sift rules below
** are fixed, so records equal in (key, tie) leave in one order.
**
** Complexity: O(log n) per push and pop.
**
** Why inline: push and pop are here, the array's growth out of line in
** heap.c.  The simulator pushes and pops an event per task, and a call
** per push and pop cost it 5 to 10% of its time on bench_sim although
** the instructions were the same within 1%.
*/
#ifndef PP_HEAP_H
#define PP_HEAP_H

#include "base/pp_int.h"

/* A record: least (key, tie) leaves first; id, a and b are the caller's
** payload. */
struct ppi_heap_el {
  double key;
  uint64_t tie;
  int64_t id;
  int32_t a, b;
};
struct ppi_heap {
  struct ppi_heap_el *el; /* cap records, the first n the heap */
  size_t n, cap;
};

PP_INTERNAL void ppi_heap_init(struct ppi_heap *h);
PP_INTERNAL void ppi_heap_free(pp_ctx *ctx, struct ppi_heap *h);
/* Room for one more record; PP_ENOMEM when the array cannot grow. */
PP_INTERNAL pp_status ppi_heap_grow(pp_ctx *ctx, struct ppi_heap *h);

static inline bool ppi_heap_less(const struct ppi_heap_el *a,
                                 const struct ppi_heap_el *b)
{
  return a->key < b->key || (a->key == b->key && a->tie < b->tie);
}

/* Add e: it rises only past parents it is strictly less than. */
static inline pp_status ppi_heap_push(pp_ctx *ctx, struct ppi_heap *h,
                                      struct ppi_heap_el e)
{
  size_t i;
  pp_status rc;
  if (h->n == h->cap && (rc = ppi_heap_grow(ctx, h)))
    return rc;
  i = h->n++;
  while (i > 0 && ppi_heap_less(&e, &h->el[(i - 1) / 2])) {
    h->el[i] = h->el[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->el[i] = e;
  return PP_OK;
}

/* Remove and return the least record (h->n > 0): the last record sinks
** from the root to the smaller child (the right one only when strictly
** less), and stops at a child not strictly less than it. */
static inline struct ppi_heap_el ppi_heap_pop(struct ppi_heap *h)
{
  struct ppi_heap_el top = h->el[0], last = h->el[--h->n];
  size_t i = 0, n = h->n;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && ppi_heap_less(&h->el[c + 1], &h->el[c]))
      c++;
    if (!ppi_heap_less(&h->el[c], &last))
      break;
    h->el[i] = h->el[c];
    i = c;
  }
  if (n > 0)
    h->el[i] = last;
  return top;
}

#endif /* PP_HEAP_H */

/* SPDX-License-Identifier: MIT */
/*
** Bump arena and growable vector.
**
** The arena hands out zero-filled, 16-byte aligned blocks from chunks
** that double in size (64 KiB first, at most 64 MiB), so a model of n
** operators costs O(log n) allocator calls.  A request larger than half
** the next chunk gets a chunk of its own, linked behind the current one
** so that its room still serves the small requests, and the doubling
** goes on from the shared chunks: a cluster's 2 GiB bandwidth matrix
** used to make the next chunk 4 GiB, for a few names (issue 22: `topo
** hier:4096x4` took 6-8 GB of address space).  Nothing is freed singly;
** ppi_arena_free releases every chunk.  The vector doubles its
** capacity, so n pushes cost O(n) copies in total.
*/
#include "base/pp_int.h"

#include <string.h>

struct ppi_arena_chunk {
  struct ppi_arena_chunk *next;
  size_t size, used; /* bytes of data[] */
  _Alignas(16) unsigned char data[];
};

/* TUNING: the first chunk holds a small model or cluster whole; chunks
** stop doubling at 64 MiB, so a chunk wastes at most that much. */
#define ARENA_FIRST_CHUNK ((size_t)64 * 1024)
#define ARENA_MAX_CHUNK ((size_t)64 * 1024 * 1024)

void ppi_arena_init(struct ppi_arena *ar, struct ppi_alloc a)
{
  ar->a = a;
  ar->head = NULL;
  ar->bytes = 0;
  ar->grow = 0;
}

void *ppi_arena_alloc(struct ppi_arena *ar, pp_ctx *ctx, size_t n, size_t size)
{
  size_t want, chunk;
  struct ppi_arena_chunk *c = ar->head;
  void *p;

  if (!ppi_mul_ok(n, size, &want) || want > SIZE_MAX / 4) {
    ppi_fail(ctx, PP_ELIMIT, "allocation of %zu x %zu bytes is too large", n,
             size);
    return NULL;
  }
  want = (want + 15) & ~(size_t)15;
  if (want == 0)
    want = 16;
  if (!c || c->size - c->used < want) {
    size_t next = !ar->grow                     ? ARENA_FIRST_CHUNK
                  : ar->grow >= ARENA_MAX_CHUNK ? ARENA_MAX_CHUNK
                                                : ar->grow * 2;
    bool own = c && want > next / 2; /* a chunk of its own, behind */
    chunk = own ? want : next < want ? want : next;
    c = ppi_raw_alloc(ar->a, sizeof *c + chunk);
    if (!c) {
      ppi_nomem(ctx);
      return NULL;
    }
    c->size = chunk;
    c->used = 0;
    if (own) {
      c->next = ar->head->next;
      ar->head->next = c;
    } else {
      c->next = ar->head;
      ar->head = c;
      ar->grow = chunk;
    }
    ar->bytes += chunk;
  }
  p = c->data + c->used;
  c->used += want;
  memset(p, 0, want);
  return p;
}

char *ppi_arena_strdup(struct ppi_arena *ar, pp_ctx *ctx, const char *s)
{
  size_t n;
  char *p;
  if (!s)
    return NULL;
  n = strlen(s) + 1;
  p = ppi_arena_alloc(ar, ctx, n, 1);
  if (p)
    memcpy(p, s, n);
  return p;
}

void ppi_arena_free(struct ppi_arena *ar)
{
  struct ppi_arena_chunk *c = ar->head, *next;
  while (c) {
    next = c->next;
    ppi_raw_free(ar->a, c, sizeof *c + c->size);
    c = next;
  }
  ar->head = NULL;
  ar->bytes = 0;
}

/* ---- vector ----------------------------------------------------------- */

void ppi_vec_init(struct ppi_vec *v, size_t elsize)
{
  v->data = NULL;
  v->n = v->cap = 0;
  v->elsize = elsize;
}

pp_status ppi_vec_push(pp_ctx *ctx, struct ppi_vec *v, const void *elem)
{
  if (v->n == v->cap) {
    size_t ncap = v->cap ? v->cap * 2 : 16, bytes;
    void *p;
    if (!ppi_mul_ok(ncap, v->elsize, &bytes) || bytes > SIZE_MAX / 4)
      return ppi_fail(ctx, PP_ELIMIT, "too many elements (%zu)", v->n);
    p = ppi_raw_realloc(ppi_ctx_alloc(ctx), v->data, v->cap * v->elsize, bytes);
    if (!p)
      return ppi_nomem(ctx);
    v->data = p;
    v->cap = ncap;
  }
  memcpy((unsigned char *)v->data + v->n * v->elsize, elem, v->elsize);
  v->n++;
  return PP_OK;
}

void ppi_vec_free(pp_ctx *ctx, struct ppi_vec *v)
{
  if (v->data)
    ppi_raw_free(ppi_ctx_alloc(ctx), v->data, v->cap * v->elsize);
  v->data = NULL;
  v->n = v->cap = 0;
}

void ppi_arena_free_owner(struct ppi_arena *ar, void *owner, size_t size)
{
  /* the allocator lives in the arena, which lives in the owner: copy it
  ** out before either is freed */
  struct ppi_alloc a = ar->a;
  ppi_arena_free(ar);
  ppi_raw_free(a, owner, size);
}

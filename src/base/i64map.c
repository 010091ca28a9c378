/* SPDX-License-Identifier: MIT */
/*
** An open-addressing hash map from int64 keys (>= 0) to int32 values:
** the channels of the cost model and the simulator, keyed by a directed
** device pair.  Linear probing, a power-of-two table kept at most half
** full; O(1) expected per operation.
*/
#include "base/pp_int.h"

#include <string.h>

static uint32_t hash64(int64_t k, uint32_t mask)
{
  uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(x >> 32) & mask;
}

void ppi_i64map_init(struct ppi_i64map *m)
{
  memset(m, 0, sizeof *m);
}

int32_t ppi_i64map_get(const struct ppi_i64map *m, int64_t key)
{
  uint32_t i;
  if (!m->cap)
    return -1;
  for (i = hash64(key, m->cap - 1); m->keys[i] >= 0; i = (i + 1) & (m->cap - 1))
    if (m->keys[i] == key)
      return m->vals[i];
  return -1;
}

static pp_status grow(pp_ctx *ctx, struct ppi_i64map *m)
{
  uint32_t cap = m->cap ? m->cap * 2 : 64, i, j;
  int64_t *keys = ppi_alloc(ctx, cap * sizeof *keys);
  int32_t *vals = ppi_alloc(ctx, cap * sizeof *vals);
  if (!keys || !vals) {
    ppi_free(ctx, keys, cap * sizeof *keys);
    ppi_free(ctx, vals, cap * sizeof *vals);
    return PP_ENOMEM;
  }
  memset(keys, 0xff, cap * sizeof *keys); /* -1: empty */
  for (i = 0; i < m->cap; i++)
    if (m->keys[i] >= 0) {
      for (j = hash64(m->keys[i], cap - 1); keys[j] >= 0;
           j = (j + 1) & (cap - 1))
        ;
      keys[j] = m->keys[i];
      vals[j] = m->vals[i];
    }
  ppi_i64map_free(ctx, m);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return PP_OK;
}

pp_status ppi_i64map_put(pp_ctx *ctx, struct ppi_i64map *m, int64_t key,
                         int32_t val)
{
  uint32_t i, n = m->n;
  pp_status rc;
  if (2 * (m->n + 1) > m->cap && (rc = grow(ctx, m)))
    return rc;
  m->n = n;
  for (i = hash64(key, m->cap - 1); m->keys[i] >= 0; i = (i + 1) & (m->cap - 1))
    if (m->keys[i] == key) {
      m->vals[i] = val;
      return PP_OK;
    }
  m->keys[i] = key;
  m->vals[i] = val;
  m->n++;
  return PP_OK;
}

void ppi_i64map_free(pp_ctx *ctx, struct ppi_i64map *m)
{
  ppi_free(ctx, m->keys, m->cap * sizeof *m->keys);
  ppi_free(ctx, m->vals, m->cap * sizeof *m->vals);
  m->keys = NULL;
  m->vals = NULL;
  m->cap = 0;
}

/* SPDX-License-Identifier: MIT */
/*
** String -> int32 map with open addressing and linear probing (FNV-1a
** hash).  Keys are borrowed: they must outlive the map (they live in the
** object's arena).  The table is kept at most half full, so a lookup
** probes O(1) slots on average; growth rehashes in O(n).
*/
#include "base/pp_int.h"

#include <string.h>

static uint32_t hash_str(const char *s)
{
  uint32_t h = 2166136261u;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 16777619u;
  }
  return h;
}

void ppi_strmap_init(struct ppi_strmap *m)
{
  memset(m, 0, sizeof *m);
}

static pp_status grow(pp_ctx *ctx, struct ppi_strmap *m)
{
  uint32_t ncap = m->cap ? m->cap * 2 : 64, i, j;
  const char **keys;
  int32_t *vals;

  if (ncap < m->cap)
    return ppi_fail(ctx, PP_ELIMIT, "too many names");
  keys = ppi_calloc(ctx, ncap, sizeof *keys);
  if (!keys)
    return ctx->err;
  vals = ppi_calloc(ctx, ncap, sizeof *vals);
  if (!vals) {
    ppi_free(ctx, keys, ncap * sizeof *keys);
    return ctx->err;
  }
  for (i = 0; i < m->cap; i++) {
    if (!m->keys[i])
      continue;
    j = hash_str(m->keys[i]) & (ncap - 1);
    while (keys[j])
      j = (j + 1) & (ncap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  ppi_strmap_free(ctx, m);
  m->keys = keys;
  m->vals = vals;
  m->cap = ncap;
  return PP_OK;
}

pp_status ppi_strmap_put(pp_ctx *ctx, struct ppi_strmap *m, const char *key,
                         int32_t val, int32_t *old)
{
  uint32_t j, n = m->n;
  pp_status rc;

  if (2 * (m->n + 1) > m->cap) {
    rc = grow(ctx, m);
    if (rc != PP_OK)
      return rc;
    m->n = n;
  }
  j = hash_str(key) & (m->cap - 1);
  while (m->keys[j]) {
    if (strcmp(m->keys[j], key) == 0) {
      if (old)
        *old = m->vals[j];
      return PP_EINVAL;
    }
    j = (j + 1) & (m->cap - 1);
  }
  m->keys[j] = key;
  m->vals[j] = val;
  m->n++;
  return PP_OK;
}

int32_t ppi_strmap_get(const struct ppi_strmap *m, const char *key)
{
  uint32_t j;
  if (!m->cap || !key)
    return -1;
  j = hash_str(key) & (m->cap - 1);
  while (m->keys[j]) {
    if (strcmp(m->keys[j], key) == 0)
      return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return -1;
}

pp_status ppi_strmap_move(pp_ctx *ctx, struct ppi_strmap *m,
                          struct ppi_arena *ar)
{
  const char **keys;
  int32_t *vals;
  if (!m->cap)
    return PP_OK;
  keys = ppi_arena_alloc(ar, ctx, m->cap, sizeof *keys);
  vals = ppi_arena_alloc(ar, ctx, m->cap, sizeof *vals);
  if (!keys || !vals)
    return ctx->err;
  memcpy(keys, m->keys, m->cap * sizeof *keys);
  memcpy(vals, m->vals, m->cap * sizeof *vals);
  ppi_free(ctx, m->keys, m->cap * sizeof *m->keys);
  ppi_free(ctx, m->vals, m->cap * sizeof *m->vals);
  m->keys = keys;
  m->vals = vals;
  return PP_OK;
}

void ppi_strmap_free(pp_ctx *ctx, struct ppi_strmap *m)
{
  if (m->keys) {
    ppi_free(ctx, m->keys, m->cap * sizeof *m->keys);
    ppi_free(ctx, m->vals, m->cap * sizeof *m->vals);
  }
  m->keys = NULL;
  m->vals = NULL;
  m->cap = m->n = 0;
}

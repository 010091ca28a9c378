/* SPDX-License-Identifier: MIT */
/*
** xoshiro256** (Blackman and Vigna, 2018) seeded through splitmix64.
** The state lives in the caller's struct: no global state, so equal
** seeds give equal streams on every platform.  Also the clock that
** time limits read (never a source of randomness): monotonic, so that
** setting the system clock neither stretches nor cuts a time limit.
*/
#define _POSIX_C_SOURCE 200809L
#include "base/pp_int.h"

#include <math.h>
#include <time.h>

static uint64_t splitmix64(uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void ppi_rng_seed(struct ppi_rng *r, uint64_t seed)
{
  int i;
  for (i = 0; i < 4; i++)
    r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

uint64_t ppi_rng_next(struct ppi_rng *r)
{
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double ppi_rng_unit(struct ppi_rng *r)
{
  return (double)(ppi_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t ppi_rng_below(struct ppi_rng *r, uint64_t n)
{
  /* Reject the top partial block so every residue is equally likely. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
  do
    x = ppi_rng_next(r);
  while (x >= limit);
  return x % n;
}

double ppi_now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

bool ppi_stopped(const struct ppi_stop *st)
{
  if (!st)
    return false;
  if (st->flag && *st->flag)
    return true;
  return isfinite(st->deadline) && ppi_now_s() > st->deadline;
}

double ppi_stop_left(const struct ppi_stop *st)
{
  double left;
  if (!st)
    return INFINITY;
  if (st->flag && *st->flag)
    return 0;
  if (!isfinite(st->deadline))
    return INFINITY;
  left = st->deadline - ppi_now_s();
  return left > 0 ? left : 0;
}

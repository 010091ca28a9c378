/* SPDX-License-Identifier: MIT */
/*
** The product names that nvidia-smi and rocm-smi print ("Tesla
** V100-SXM2-16GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3",
** "NVIDIA GeForce RTX 3090", "AMD Instinct MI300X", ...) to the names of
** the GPU catalog (gpu_catalog.c), for the readers of machine dumps
** (docs/FORMATS.md, "nvidia-smi topo -m").
**
** The name is cut into words at spaces, '-', '_', '/' and ','; a word names the
** chip (V100, A100, H100, H200, B200, GB200, GH200, T4, A10, L4, L40S,
** MI250X, MI300X; RTX with 2080, 3090 or 4090; TITAN with RTX).  Where
** one chip comes with two memory sizes (V100 16/32 GB, A100 40/80 GB)
** a word "16GB".."80GB" of the name decides, else the memory the tool
** reports (memory.total, MiB), else the name is ambiguous and NULL is
** returned, as for a product the catalog does not hold (a GeForce "Ti",
** an A10G, an L40 without S, an MI300A): the caller then asks for gpu=.
** Linear in the name's length.
*/
#include "cluster/cluster.h"

#include <ctype.h>
#include <string.h>

/* TUNING: the memory (MiB) above which a V100 is the 32 GB one and an
** A100 the 80 GB one: halfway between the sizes nvidia-smi reports
** (16160 / 32510 MiB; 40960 / 81920 MiB), so no reserve moves a card
** across. */
#define V100_32_MIB 24000.0
#define A100_80_MIB 60000.0
/* TUNING: a GH200 module reports its HBM (97871 MiB for the 96 GB
** HBM3 one, 146 GB HBM3e for the other); the catalog's GH-96 is the
** first. */
#define GH200_96_MAX_MIB 110000.0

#define MAX_WORDS 16
#define SEPARATORS " -_/,\t"

static bool word_is(const char *w, size_t n, const char *s)
{
  size_t i;
  if (strlen(s) != n)
    return false;
  for (i = 0; i < n; i++)
    if (toupper((unsigned char)w[i]) != toupper((unsigned char)s[i]))
      return false;
  return true;
}

const char *ppi_gpu_product(const char *product, double mem_mib)
{
  const char *w[MAX_WORDS], *p = product;
  size_t n[MAX_WORDS];
  int nw = 0, i, gb = 0;
  bool rtx = false, titan = false, ti = false;
  if (!product)
    return NULL;
  while (*p && nw < MAX_WORDS) {
    while (*p && strchr(SEPARATORS, *p))
      p++;
    if (!*p)
      break;
    w[nw] = p;
    while (*p && !strchr(SEPARATORS, *p))
      p++;
    n[nw] = (size_t)(p - w[nw]);
    nw++;
  }
  for (i = 0; i < nw; i++) {
    /* a size word: 16GB, 32GB, 40GB, 80GB */
    if (n[i] >= 3 && n[i] <= 5 && word_is(w[i] + n[i] - 2, 2, "GB") &&
        isdigit((unsigned char)w[i][0])) {
      int k = 0;
      size_t j;
      for (j = 0; j + 2 < n[i] && isdigit((unsigned char)w[i][j]); j++)
        k = k * 10 + (w[i][j] - '0');
      if (j + 2 == n[i])
        gb = k;
    }
    rtx |= word_is(w[i], n[i], "RTX");
    titan |= word_is(w[i], n[i], "TITAN");
    ti |= word_is(w[i], n[i], "Ti");
  }
  for (i = 0; i < nw; i++) {
    const char *s = w[i];
    size_t k = n[i];
    if (word_is(s, k, "V100"))
      return gb == 32 || (gb == 0 && mem_mib > V100_32_MIB) ? "V100-32"
             : gb == 16 || (gb == 0 && mem_mib > 0)         ? "V100-16"
                                                            : NULL;
    if (word_is(s, k, "A100"))
      return gb == 80 || (gb == 0 && mem_mib > A100_80_MIB) ? "A100-80"
             : gb == 40 || (gb == 0 && mem_mib > 0)         ? "A100-40"
                                                            : NULL;
    if (word_is(s, k, "H100"))
      return "H100";
    if (word_is(s, k, "H200"))
      return "H200";
    if (word_is(s, k, "GB200"))
      return "GB200";
    if (word_is(s, k, "B200"))
      return "B200";
    if (word_is(s, k, "GH200"))
      return mem_mib > 0 && mem_mib < GH200_96_MAX_MIB ? "GH-96" : NULL;
    if (word_is(s, k, "T4"))
      return "T4";
    if (word_is(s, k, "A10"))
      return "A10";
    if (word_is(s, k, "L4"))
      return "L4";
    if (word_is(s, k, "L40S"))
      return "L40S";
    if (word_is(s, k, "MI250X"))
      return "MI250X";
    if (word_is(s, k, "MI300X"))
      return "MI300X";
    if (rtx && !ti && word_is(s, k, "2080"))
      return "RTX-2080";
    if (rtx && !ti && word_is(s, k, "3090"))
      return "RTX-3090";
    if (rtx && !ti && word_is(s, k, "4090"))
      return "RTX-4090";
    if (titan && word_is(s, k, "RTX"))
      return "Titan-RTX";
  }
  return NULL;
}

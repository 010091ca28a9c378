/* SPDX-License-Identifier: MIT */
/*
** Machine dumps as machines print them (issue 18): NCCL and RCCL
** topology XML with NVSwitch links summed as NCCL sums them, xGMI links,
** NICs and their speeds; nvidia-smi topo -m with NIC rows and legend,
** CRLF, shell prompts, and the GPU type from nvidia-smi -q or
** --query-gpu output; rocm-smi --showtopo; the product names of
** gpu_names.c; unsupported files.  The inputs are in
** tests/data/dumps/ (tests/data/dumps/README.md says where each format
** comes from) and examples/.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "cluster/cluster.h"

typedef pp_status (*reader)(pp_ctx *, const char *, size_t, const char *,
                            const pp_topo_params *, pp_cluster **);

static char *slurp(const char *rel, size_t *len)
{
  char *t = tu_slurp(tu_path(rel), len);
  if (!t)
    fail_msg("cannot read %s", rel);
  return t;
}

static void expect_type(const pp_cluster *c, const char *name)
{
  pp_device_type_desc td;
  assert_int_equal(pp_cluster_ntype(c), 1);
  assert_int_equal(pp_cluster_type(c, 0, &td), PP_OK);
  assert_string_equal(td.name, name);
}

/* Read rel with p and check the type is want. */
static pp_cluster *read_as(pp_ctx *ctx, reader fn, const char *rel,
                           const pp_topo_params *p, const char *want)
{
  size_t len;
  char *t = slurp(rel, &len);
  pp_cluster *c = NULL;
  pp_status rc = fn(ctx, t, len, rel, p, &c);
  free(t);
  if (rc)
    fail_msg("%s: %s", rel, pp_ctx_errmsg(ctx));
  expect_type(c, want);
  return c;
}

static void all_pairs(const pp_cluster *c, int32_t lo, int32_t hi, double x)
{
  int32_t i, j;
  for (i = lo; i < hi; i++)
    for (j = lo; j < hi; j++)
      if (i != j && fabs(pp_cluster_bandwidth(c, i, j) - x) > 1e-9)
        fail_msg("%d-%d: %.17g GB/s, expected %g", (int)i, (int)j,
                 pp_cluster_bandwidth(c, i, j), x);
}

/* ---- NCCL and RCCL XML -------------------------------------------------- */

/* A DGX A100 lists its 12 NVLinks as 2 to each of 6 NVSwitches and a
** DGX H100 its 18 as 5 + 4 + 4 + 5 to 4: NCCL sums them (ncclTopoConnectNodes,
** src/graph/topo.cc @5067397c lines 168-181), 12 x 20 = 240 and 18 x
** 20.6 = 370.8 GB/s; the largest entry gave 40 and 103. */
static void t_nccl_nvswitch_sum(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_topo_params p;
  pp_cluster *c;
  pp_topo_params_init(&p);
  p.nodes = 2;
  c = read_as(ctx, pp_cluster_read_nccl_xml, "examples/nccl-topo-dgx-a100.xml",
              &p, "A100-80");
  all_pairs(c, 0, 8, 240);
  all_pairs(c, 8, 16, 240);
  /* two 200 Gb/s NICs per PCIe switch of two GPUs: each GPU uses both,
  ** shared, each capped by the Gen4 x16 path (24 GB/s) */
  assert_true(fabs(pp_cluster_bandwidth(c, 0, 8) - 24) < 1e-9);
  assert_non_null(strstr(pp_cluster_source(c), "8 of the dump's 10 <net>"));
  assert_non_null(strstr(pp_cluster_source(c), "from sm=80"));
  pp_cluster_destroy(c);
  c = read_as(ctx, pp_cluster_read_nccl_xml,
              "tests/data/dumps/nccl-topo-dgx-h100.xml", &p, "H100");
  all_pairs(c, 0, 8, 18 * 20.6);
  /* one 400 Gb/s NIC per GPU behind a Gen5 x16 switch: 48 GB/s */
  assert_true(fabs(pp_cluster_bandwidth(c, 3, 12) - 48) < 1e-9);
  pp_cluster_destroy(c);
  /* inter= wins, and says so */
  p.inter_gbps = 5;
  c = read_as(ctx, pp_cluster_read_nccl_xml,
              "tests/data/dumps/nccl-topo-dgx-h100.xml", &p, "H100");
  assert_true(pp_cluster_bandwidth(c, 3, 12) == 5);
  assert_non_null(strstr(pp_cluster_source(c), "inter="));
  pp_cluster_destroy(c);
}

#define CPU0                                                                   \
  "<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" "  \
  "modelid=\"143\">"
#define GPU(bus, dev, sm)                                                      \
  "<pci busid=\"" bus "\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "   \
  "link_width=\"16\"><gpu dev=\"" #dev "\" sm=\"" #sm "\" rank=\"" #dev        \
  "\" gdr=\"1\">"

static pp_cluster *xml(pp_ctx *ctx, const char *x, const pp_topo_params *p)
{
  pp_cluster *c = NULL;
  if (pp_cluster_read_nccl_xml(ctx, x, strlen(x), "t.xml", p, &c))
    fail_msg("%s", pp_ctx_errmsg(ctx));
  return c;
}

/* NICs: <net speed> in Mb/s, / 8000 GB/s (ncclTopoAddNet); a port
** without dev, or net="0", is no network device; speed -1 is 10000. */
static void t_nccl_nics(void **state)
{
  static const char two[] =
      "<system version=\"1\">" CPU0
      "<pci busid=\"0000:01:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s "
      "PCIe\" link_width=\"16\">" GPU("0000:02:00.0", 0, 80) "</gpu></pci>" GPU(
          "0000:03:00.0", 1,
          80) "</gpu></pci>"
              "<pci busid=\"0000:04:00.0\" class=\"0x020700\" "
              "link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"><nic>"
              "<net name=\"mlx5_0\" dev=\"0\" speed=\"100000\" port=\"1\" "
              "guid=\"0x1\" maxconn=\"131072\" gdr=\"1\"/>"
              "<net name=\"gin0\" dev=\"1\" speed=\"400000\" net=\"0\" "
              "gin=\"1\"/>"
              "<net name=\"nodev\" speed=\"400000\"/>"
              "</nic></pci></pci></cpu></system>";
  static const char far[] = "<system version=\"1\">" CPU0 GPU(
      "0000:02:00.0", 0,
      80) "</gpu></pci>" GPU("0000:03:00.0", 1,
                             80) "</gpu></pci><nic><net name=\"eth0\" "
                                 "dev=\"0\" speed=\"-1\"/></nic>"
                                 "</cpu></system>";
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_topo_params p;
  pp_cluster *c;
  pp_topo_params_init(&p);
  p.nodes = 2;
  /* one 100 Gb/s port for two GPUs: 12.5 / 2 each */
  c = xml(ctx, two, &p);
  assert_true(pp_cluster_bandwidth(c, 0, 2) == 6.25);
  assert_non_null(strstr(pp_cluster_source(c), "1 of the dump's 1 <net>"));
  pp_cluster_destroy(c);
  /* nic= overrides the speeds: 800 Gb/s, 50 GB/s per GPU, capped by
  ** each GPU's own Gen4 x16 link, 24 */
  p.nic_gbits = 800;
  c = xml(ctx, two, &p);
  assert_true(pp_cluster_bandwidth(c, 0, 2) == 24);
  assert_non_null(strstr(pp_cluster_source(c), "(nic=)"));
  pp_cluster_destroy(c);
  p.nic_gbits = 0;
  /* a NIC on the CPU itself, speed -1: 10000 Mb/s as NCCL reads it */
  c = xml(ctx, far, &p);
  assert_true(pp_cluster_bandwidth(c, 1, 3) == 1.25 / 2);
  pp_cluster_destroy(c);
  /* no NIC: the default, said as such */
  {
    static const char none[] = "<system>" CPU0 GPU(
        "0000:02:00.0", 0, 80) "</gpu></pci></cpu></system>";
    c = xml(ctx, none, &p);
    assert_true(pp_cluster_bandwidth(c, 0, 1) == PPI_DEFAULT_INTER_GBPS);
    assert_non_null(strstr(pp_cluster_source(c), "parplan's default"));
    pp_cluster_destroy(c);
  }
}

/* The far end by tclass as NCCL's prefix match reads it: 0x068001 the
** GPU's CPU (POWER), an invisible NVSwitch (fffffff:ffff:ff) a switch,
** a link to a GPU the dump leaves out skipped. */
static void t_nccl_tclass(void **state)
{
  static const char x[] = "<system>" CPU0 GPU(
      "0000:02:00.0", 0,
      70) "<nvlink target=\"0000:00:00.0\" count=\"3\" tclass=\"0x068001\"/>"
          "<nvlink target=\"0000:09:00.0\" count=\"2\" tclass=\"0x030200\"/>"
          "</gpu></pci>" GPU(
              "0000:03:00.0", 1,
              70) "<nvlink target=\"0000:00:00.0\" count=\"3\" "
                  "tclass=\"0x068001\"/>"
                  "</gpu></pci>" GPU(
                      "0000:04:00.0", 2,
                      70) "<nvlink target=\"fffffff:ffff:ff\" count=\"6\" "
                          "tclass=\"0x068000\"/>"
                          "</gpu></pci>" GPU(
                              "0000:05:00.0", 3,
                              70) "<nvlink target=\"fffffff:ffff:ff\" "
                                  "count=\"4\" tclass=\"0x068000\"/>"
                                  "<nvlink target=\"0000:02:00.0\" count=\"1\" "
                                  "tclass=\"0x030200\"/>"
                                  "</gpu></pci></cpu></system>";
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster *c = xml(ctx, x, NULL);
  /* 0 and 1 through the CPU over their NVLinks to it: 3 x 20 */
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 60);
  /* 2 and 3 through the switch: min(6, 4) x 20 */
  assert_true(pp_cluster_bandwidth(c, 2, 3) == 80);
  /* 0 and 3: the direct link (listed once) 20, or PCIe 24: 24 */
  assert_true(pp_cluster_bandwidth(c, 0, 3) == 24);
  pp_cluster_destroy(c);
}

/* RCCL: gcn names an AMD GPU (never an H100), xGMI links by gcn: gfx90a
** ("910" in older dumps) 36 GB/s, gfx94x 48 (ROCm/rccl's
** src/graph/topo.h @0cbce2a7 lines 257-265); the dumps are RCCL's own
** topology models. */
static void t_rccl(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_topo_params p;
  pp_cluster *c;
  pp_topo_params_init(&p);
  c = read_as(ctx, pp_cluster_read_nccl_xml,
              "tests/data/dumps/rccl-topo-mi300x.xml", &p, "MI300X");
  all_pairs(c, 0, 8, 48);
  pp_cluster_destroy(c);
  c = read_as(ctx, pp_cluster_read_nccl_xml,
              "tests/data/dumps/rccl-topo-mi250.xml", &p, "MI250X");
  /* GPU 0 has xGMI links to 1 (c5), 2 (c9) and 6 (d9); others go over
  ** PCIe Gen4 x16 through the CPU, 24 */
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 36);
  assert_true(pp_cluster_bandwidth(c, 0, 6) == 36);
  assert_true(pp_cluster_bandwidth(c, 0, 3) == 24);
  pp_cluster_destroy(c);
  { /* older RCCL wrote sm = the HIP major.minor, 90 for gfx90a: still
    ** an MI250X, never an H100 */
    size_t len;
    char *t = slurp("tests/data/dumps/rccl-topo-mi250.xml", &len), *k;
    while ((k = strstr(t, "sm=\"104\"")) != NULL)
      memcpy(k, "sm=\"90\" ", 8);
    c = NULL;
    pp_ctx_clear_error(ctx);
    if (pp_cluster_read_nccl_xml(ctx, t, len, "mi250-sm90.xml", &p, &c))
      fail_msg("mi250-sm90.xml: %s", pp_ctx_errmsg(ctx));
    expect_type(c, "MI250X");
    pp_cluster_destroy(c);
    free(t);
  }
  {
    static const char x[] =
        "<system>" CPU0 "<pci busid=\"0000:02:00.0\"><gpu dev=\"0\" sm=\"120\" "
        "gcn=\"gfx908\"/></pci></cpu></system>";
    pp_ctx_clear_error(ctx);
    tu_expect_error(
        ctx, pp_cluster_read_nccl_xml(ctx, x, strlen(x), "t.xml", NULL, &c),
        PP_EINPUT, "t.xml:1:", "gcn=gfx908", "gpu=", NULL);
  }
}

/* ---- nvidia-smi ------------------------------------------------------- */

static pp_cluster *smi(pp_ctx *ctx, const char *rel, const pp_topo_params *p)
{
  size_t len;
  char *t = slurp(rel, &len);
  pp_cluster *c = NULL;
  pp_status rc = pp_cluster_read_nvsmi(ctx, t, len, rel, p, &c);
  free(t);
  if (rc)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  return c;
}

/* HGX A100: NIC columns and rows, the NIC legend, a shell prompt before
** and after; the GPUs from --query-gpu CSV; nic= gives each GPU half of
** the two 200 Gb/s NICs it shares with its neighbour. */
static void t_nvsmi_nics(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_topo_params p;
  pp_cluster *c;
  char gpus[600];
  pp_topo_params_init(&p);
  snprintf(gpus, sizeof gpus, "%s",
           tu_path("tests/data/dumps/nvsmi-query-a100.csv"));
  p.gpus = gpus; /* tu_path's buffer is reused */
  p.nodes = 2;
  p.nic_gbits = 200;
  c = smi(ctx, "tests/data/dumps/nvsmi-hgx-a100.txt", &p);
  expect_type(c, "A100-80");
  all_pairs(c, 0, 8, 300);
  assert_true(pp_cluster_bandwidth(c, 0, 8) == 25);
  assert_non_null(strstr(pp_cluster_source(c), "8 of 10 NICs (mlx5_0"));
  pp_cluster_destroy(c);
  /* without nic=: the default, and the source says which NICs wait for
  ** a speed */
  p.nic_gbits = 0;
  c = smi(ctx, "tests/data/dumps/nvsmi-hgx-a100.txt", &p);
  assert_true(pp_cluster_bandwidth(c, 0, 8) == PPI_DEFAULT_INTER_GBPS);
  assert_non_null(strstr(pp_cluster_source(c), "nic=GBITS"));
  pp_cluster_destroy(c);
  /* a bad NIC cell names the row and column */
  {
    static const char x[] = "\tGPU0\tGPU1\tNIC0\n"
                            "GPU0\t X \tNV4\tPXB\n"
                            "GPU1\tNV4\t X \tFAR\n";
    pp_ctx_clear_error(ctx);
    tu_expect_error(ctx,
                    pp_cluster_read_nvsmi(ctx, x, sizeof x - 1, "t", &p, &c),
                    PP_EPARSE, "t:3:", "GPU1 to NIC0", "'FAR'", NULL);
  }
}

/* The type: never guessed; from gpu= (catalog or product name), gpus=
** (-q or --query-gpu), or a GPU list in the same file. */
static void t_nvsmi_type(void **state)
{
  static const char two[] = "\tGPU0\tGPU1\nGPU0\t X \tPHB\nGPU1\tPHB\t X \n";
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_topo_params p;
  pp_cluster *c = NULL;
  char *in, gpus[600];
  pp_topo_params_init(&p);
  tu_expect_error(ctx,
                  pp_cluster_read_nvsmi(ctx, two, strlen(two), "t", &p, &c),
                  PP_EINPUT, "does not say the GPU type", "gpu=TYPE",
                  "gpus=FILE", "nvidia-smi -q", NULL);
  assert_null(c);
  snprintf(gpus, sizeof gpus, "%s",
           tu_path("tests/data/dumps/nvsmi-q-rtx3090.txt"));
  p.gpus = gpus; /* tu_path's buffer is reused */
  c = smi(ctx, "tests/data/dumps/nvsmi-rtx3090-nv4.txt", &p);
  expect_type(c, "RTX-3090");
  /* NV4 on a 3090 bridge: 4 x 14.0625 */
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 56.25);
  assert_non_null(strstr(pp_cluster_source(c), "nvsmi-q-rtx3090.txt"));
  pp_cluster_destroy(c);
  /* 2 GPUs in -q, 8 in the matrix */
  pp_ctx_clear_error(ctx);
  {
    size_t len;
    char *t = slurp("tests/data/dumps/nvsmi-hgx-a100.txt", &len);
    tu_expect_error(ctx, pp_cluster_read_nvsmi(ctx, t, len, "t", &p, &c),
                    PP_EINPUT, "nvsmi-q-rtx3090.txt", "lists 2 GPUs",
                    "topology 8", NULL);
    free(t);
  }
  /* a product the catalog lacks, and one with two sizes open */
  snprintf(gpus, sizeof gpus, "%s", tu_tmp("q.csv"));
  {
    static const char *const bad[] = {
        "name, memory.total [MiB]\nNVIDIA A10G, 23028 MiB\nNVIDIA A10G, "
        "23028 MiB\n",
        "name\nNVIDIA A100-SXM4\nNVIDIA A100-SXM4\n"};
    static const char *const what[] = {"'NVIDIA A10G'", "without memory"};
    int k;
    for (k = 0; k < 2; k++) {
      FILE *f = fopen(p.gpus, "w");
      assert_non_null(f);
      fputs(bad[k], f);
      fclose(f);
      pp_ctx_clear_error(ctx);
      tu_expect_error(ctx,
                      pp_cluster_read_nvsmi(ctx, two, strlen(two), "t", &p, &c),
                      PP_EINPUT, "q.csv:2:", what[k], "gpu=", NULL);
    }
  }
  /* a product name as gpu=; the CSV pasted under the matrix */
  pp_topo_params_init(&p);
  p.gpu = "NVIDIA A100-SXM4-40GB";
  c = smi(ctx, "tests/data/dumps/nvsmi-rtx3090-phb.txt", &p);
  expect_type(c, "A100-40");
  pp_cluster_destroy(c);
  in = malloc(strlen(two) + 200);
  sprintf(in,
          "%s\n$ nvidia-smi --query-gpu=name,memory.total --format=csv\n"
          "name, memory.total [MiB]\nTesla V100-SXM2-32GB, 32768 MiB\n"
          "Tesla V100-SXM2-32GB, 32768 MiB\n",
          two);
  pp_topo_params_init(&p);
  pp_ctx_clear_error(ctx);
  assert_int_equal(pp_cluster_read_nvsmi(ctx, in, strlen(in), "t", &p, &c),
                   PP_OK);
  expect_type(c, "V100-32");
  pp_cluster_destroy(c);
  free(in);
}

/* CRLF line ends and a PowerShell prompt read as the LF file does; the
** PCIe box: PIX within a switch, SYS across the sockets. */
static void t_nvsmi_crlf_pcie(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_topo_params p;
  pp_cluster *a, *b;
  size_t len;
  char *t = slurp("tests/data/dumps/nvsmi-rtx3090-crlf.txt", &len);
  assert_non_null(strstr(t, "\r\n"));
  free(t);
  pp_topo_params_init(&p);
  p.gpu = "RTX-3090";
  a = smi(ctx, "tests/data/dumps/nvsmi-rtx3090-crlf.txt", &p);
  b = smi(ctx, "tests/data/dumps/nvsmi-rtx3090-phb.txt", &p);
  assert_true(pp_cluster_bandwidth(a, 0, 1) == 12);
  assert_true(pp_cluster_bandwidth(b, 0, 1) == 12);
  pp_cluster_destroy(a);
  pp_cluster_destroy(b);
  p.gpu = "L40S";
  a = read_as(ctx, pp_cluster_read_nvsmi,
              "tests/data/dumps/nvsmi-pcie-l40s.txt", &p, "L40S");
  assert_true(pp_cluster_bandwidth(a, 0, 1) == 12);
  assert_true(pp_cluster_bandwidth(a, 2, 3) == 12);
  assert_true(pp_cluster_bandwidth(a, 1, 2) == 10);
  pp_cluster_destroy(a);
}

/* ---- rocm-smi --------------------------------------------------------- */

static void t_rocm_smi(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_topo_params p;
  pp_cluster *c = NULL;
  size_t len;
  char *t;
  pp_topo_params_init(&p);
  t = slurp("tests/data/dumps/rocm-smi-showtopo-mi300x.txt", &len);
  tu_expect_error(ctx,
                  pp_cluster_read_rocm_smi(ctx, t, len, "mi300x.txt", &p, &c),
                  PP_EINPUT, "mi300x.txt", "gpu=", NULL);
  pp_ctx_clear_error(ctx);
  { /* the text cut after a NUMA line, in a buffer with no NUL after it:
    ** the reader stays inside it (it ran strstr and strtol past the end,
    ** found by fuzz_rocm_smi; ASan catches a regression) */
    const char *numa = strstr(t, "GPU[0]\t\t: (Topology) Numa Node: 0");
    size_t cut;
    char *exact;
    assert_non_null(numa);
    cut = (size_t)(numa - t) + strlen("GPU[0]\t\t: (Topology) Numa Node: 0");
    exact = malloc(cut);
    assert_non_null(exact);
    memcpy(exact, t, cut);
    p.gpu = "MI300X";
    assert_int_equal(
        pp_cluster_read_rocm_smi(ctx, exact, cut, "cut.txt", &p, &c), PP_OK);
    pp_cluster_destroy(c);
    c = NULL;
    p.gpu = NULL;
    free(exact);
  }
  free(t);
  p.gpu = "MI300X";
  p.nvlink_gbps = 48; /* MI300X's xGMI figure */
  c = read_as(ctx, pp_cluster_read_rocm_smi,
              "tests/data/dumps/rocm-smi-showtopo-mi300x.txt", &p, "MI300X");
  all_pairs(c, 0, 8, 48);
  pp_cluster_destroy(c);
  p.gpu = "MI250X";
  p.nvlink_gbps = 36;
  c = read_as(ctx, pp_cluster_read_rocm_smi,
              "tests/data/dumps/rocm-smi-showtopo-mi250x.txt", &p, "MI250X");
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 36); /* XGMI, 1 hop */
  assert_true(pp_cluster_bandwidth(c, 0, 3) == 12); /* XGMI, 2 hops */
  assert_true(pp_cluster_bandwidth(c, 0, 4) == 10); /* PCIE, 2 NUMA */
  pp_cluster_destroy(c);
  {
    static const char *const bad[] = {
        "=== Link Type between two GPUs ===\n      GPU0  GPU1\n"
        "GPU0  0  XXXX\nGPU1  XXXX  0\n",
        "=== Link Type between two GPUs ===\n      GPU0  GPU1\nGPU0  0  XGMI\n",
        "=== Hops between two GPUs ===\n      GPU0  GPU1\nGPU0  0  x\n",
        "nothing here\n"};
    static const char *const what[] = {"t:3:", "ends before",
                                       "t:3:", "not the output"};
    int k;
    for (k = 0; k < 4; k++) {
      pp_ctx_clear_error(ctx);
      c = NULL;
      assert_int_not_equal(
          pp_cluster_read_rocm_smi(ctx, bad[k], strlen(bad[k]), "t", &p, &c),
          PP_OK);
      assert_null(c);
      if (!strstr(pp_ctx_errmsg(ctx), what[k]))
        fail_msg("case %d: %s", k, pp_ctx_errmsg(ctx));
    }
  }
}

/* ---- product names, unsupported files ---------------------------------- */

static void t_gpu_names(void **state)
{
  static const struct {
    const char *product;
    double mib;
    const char *name; /* NULL: refused */
  } cases[] = {
      {"Tesla V100-SXM2-16GB", 16160, "V100-16"},
      {"Tesla V100-SXM2-32GB", 32510, "V100-32"},
      {"Tesla V100-PCIE", 32510, "V100-32"},
      {"Tesla V100-PCIE", 0, NULL},
      {"NVIDIA A100-SXM4-80GB", 81920, "A100-80"},
      {"NVIDIA A100-SXM4-40GB", 40960, "A100-40"},
      {"NVIDIA A100-PCIE", 40960, "A100-40"},
      {"NVIDIA H100 80GB HBM3", 81559, "H100"},
      {"NVIDIA H100 PCIe", 81559, "H100"},
      {"NVIDIA H200", 143771, "H200"},
      {"NVIDIA B200", 183359, "B200"},
      {"NVIDIA GB200", 189471, "GB200"},
      {"NVIDIA GH200 480GB", 97871, "GH-96"},
      {"NVIDIA GH200 144G HBM3e", 146831, NULL},
      {"Tesla T4", 15360, "T4"},
      {"NVIDIA A10", 23028, "A10"},
      {"NVIDIA A10G", 23028, NULL},
      {"NVIDIA L4", 23034, "L4"},
      {"NVIDIA L40S", 46068, "L40S"},
      {"NVIDIA L40", 46068, NULL},
      {"NVIDIA GeForce RTX 3090", 24576, "RTX-3090"},
      {"NVIDIA GeForce RTX 3090 Ti", 24564, NULL},
      {"NVIDIA GeForce RTX 4090", 24564, "RTX-4090"},
      {"NVIDIA GeForce RTX 2080", 8192, "RTX-2080"},
      {"NVIDIA TITAN RTX", 24576, "Titan-RTX"},
      {"AMD Instinct MI300X", 196592, "MI300X"},
      {"AMD INSTINCT MI250X/MI250", 65520, "MI250X"},
      {"AMD Instinct MI300A", 131072, NULL},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *got = ppi_gpu_product(cases[i].product, cases[i].mib);
    if (cases[i].name ? !got || strcmp(got, cases[i].name) : got != NULL)
      fail_msg("'%s' (%g MiB): %s, expected %s", cases[i].product, cases[i].mib,
               got ? got : "NULL", cases[i].name ? cases[i].name : "NULL");
  }
}

static void t_unsupported(void **state)
{
  char cmd[1800], path2[600], *out, *err;
  const char *path = tu_tmp("lstopo.txt");
  FILE *f = fopen(path, "w");
  (void)state;
  assert_non_null(f);
  fputs("Machine (503GB total)\n  Package L#0\n    NUMANode L#0 (P#0 251GB)\n",
        f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "topo %s", path);
  assert_int_not_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(err, "lstopo.txt"));
  assert_non_null(strstr(err, "not a cluster format"));
  assert_non_null(strstr(err, "rocm-smi --showtopo"));
  assert_non_null(strstr(err, "nvidia-smi topo -m"));
  /* an XML of another tool (hwloc's lstopo) */
  path = tu_tmp("lstopo.xml");
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version="
        "\"2.0\">\n</topology>\n",
        f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "topo %s", path);
  assert_int_not_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(err, "lstopo.xml:2:"));
  assert_non_null(strstr(err, "unsupported XML"));
  assert_non_null(strstr(err, "rocm-smi --showtopo"));
  /* rocm-smi output is told apart from nvidia-smi's by its banner */
  snprintf(cmd, sizeof cmd, "topo %s:gpu=MI300X,nodes=2",
           tu_path("tests/data/dumps/rocm-smi-showtopo-mi300x.txt"));
  tu_run(cmd, &out, &err);
  assert_null(strstr(err, "nvidia-smi"));
  /* the spec options: gpus= and nic= */
  snprintf(path2, sizeof path2, "%s",
           tu_path("tests/data/dumps/nvsmi-query-a100.csv"));
  snprintf(cmd, sizeof cmd, "topo %s:gpus=%s,nic=200,nodes=2",
           tu_path("tests/data/dumps/nvsmi-hgx-a100.txt"), path2);
  if (tu_run(cmd, &out, &err) != 0)
    fail_msg("%s", err);
  assert_non_null(strstr(out, "A100-80 x16"));
  assert_non_null(strstr(out, "across nodes 25 to 25 GB/s"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_nccl_nvswitch_sum), TU_CTX_TEST(t_nccl_nics),
      TU_CTX_TEST(t_nccl_tclass),       TU_CTX_TEST(t_rccl),
      TU_CTX_TEST(t_nvsmi_nics),        TU_CTX_TEST(t_nvsmi_type),
      TU_CTX_TEST(t_nvsmi_crlf_pcie),   TU_CTX_TEST(t_rocm_smi),
      cmocka_unit_test(t_gpu_names),    cmocka_unit_test(t_unsupported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

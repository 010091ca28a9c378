/* SPDX-License-Identifier: MIT */
/*
** libFuzzer harnesses, one per reader of user text (issue 22): built by
** scripts/fuzz.sh with clang -fsanitize=fuzzer,address,undefined, once
** per FUZZ_READER below, each a binary fuzz_<name>.  Every input must
** come back as success or a clean error: a crash, a sanitizer report, a
** leak, a hang (-timeout) or more than the memory limit (-rss_limit_mb)
** is a finding.  Seeds: tests/fuzz/corpus/<name>/; keywords:
** tests/fuzz/json.dict and tests/fuzz/text.dict.
**
** The readers take the text from memory (no file system), with the
** library's own limits; the plan reader gets the built-in gpt2-amp model
** and amp-het-cluster cluster to resolve names and is then checked
** (pp_plan_check), as evaluate does.  The spec harness gives its text to
** pp_model_load and pp_cluster_load (a model or cluster generator spec,
** "transformer:layers=2,hidden=64", "hier:2x4,gpu=H100"; texts with a
** '/' would name files elsewhere and are skipped) under a 64 MiB
** allocator limit (the tool's --max-memory hook, tools/memguard.c): a spec within the documented limits may still need
** more (a 16,384-GPU cluster's bandwidth matrix is 2 GiB), and must then
** fail cleanly with PP_ENOMEM, which exercises every generator's
** out-of-memory path.  The option parser has its own harness,
** fuzz_options.c.
*/
#include "parplan.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* FUZZ_READER's values (CMakeLists.txt numbers PARPLAN_FUZZ_READERS in
** this order) */
#define MODEL_JSON 1
#define PIPEDREAM 2
#define CLUSTER_JSON 3
#define NVSMI 4
#define NCCL_XML 5
#define ROCM_SMI 6
#define NCCL_TESTS 7
#define PLAN_JSON 8
#define CALIBRATION 9
#define LOG 10
#define STAGE_GRAPH 11
#define ONNX 12
#define RUNS 13
#define SPEC 14

#ifndef FUZZ_READER
#error "define FUZZ_READER: one of the readers above"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if FUZZ_READER == SPEC
/* the tool's --max-memory hook (tools/memguard.c, linked in) */
void cli_memory_guard(pp_ctx_params *cp, double gib);
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *text = (const char *)data;
  pp_ctx *ctx = NULL;
#if FUZZ_READER == SPEC
  pp_ctx_params cp;
  pp_ctx_params_init(&cp);
  cli_memory_guard(&cp, 1.0 / 16); /* 64 MiB */
  if (pp_ctx_create(&cp, &ctx) != PP_OK)
    return 0;
#else
  if (pp_ctx_create(NULL, &ctx) != PP_OK)
    return 0;
#endif
#if FUZZ_READER == MODEL_JSON || FUZZ_READER == PIPEDREAM
  {
    pp_model *m = NULL;
    if (FUZZ_READER == MODEL_JSON)
      pp_model_read_json(ctx, text, size, "fuzz.json", &m);
    else
      pp_model_read_pipedream(ctx, text, size, "graph.txt", &m);
    pp_model_destroy(m);
  }
#elif FUZZ_READER == CLUSTER_JSON || FUZZ_READER == NVSMI ||                   \
    FUZZ_READER == NCCL_XML || FUZZ_READER == ROCM_SMI
  {
    pp_cluster *c = NULL;
    pp_topo_params tp;
    pp_topo_params_init(&tp);
    tp.gpu = "V100";
    if (FUZZ_READER == CLUSTER_JSON)
      pp_cluster_read_json(ctx, text, size, "fuzz.json", &c);
    else if (FUZZ_READER == NVSMI)
      pp_cluster_read_nvsmi(ctx, text, size, "topo.txt", &tp, &c);
    else if (FUZZ_READER == NCCL_XML) {
      tp.gpu = NULL; /* the dump's own sm, as users run it */
      pp_cluster_read_nccl_xml(ctx, text, size, "topo.xml", &tp, &c);
    } else
      pp_cluster_read_rocm_smi(ctx, text, size, "topo.txt", &tp, &c);
    pp_cluster_destroy(c);
  }
#elif FUZZ_READER == NCCL_TESTS
  {
    pp_nccl_tests t;
    memset(&t, 0, sizeof t);
    if (pp_nccl_tests_read(ctx, text, size, "perf.txt", &t) == PP_OK)
      pp_nccl_tests_free(ctx, &t);
  }
#elif FUZZ_READER == PLAN_JSON
  {
    static pp_ctx *keep;
    static pp_model *m;
    static pp_cluster *c;
    pp_plan *p = NULL;
    if (!keep && (pp_ctx_create(NULL, &keep) != PP_OK ||
                  pp_model_load(keep, "gpt2-amp", &m) != PP_OK ||
                  pp_cluster_load(keep, "amp-het-cluster", &c) != PP_OK))
      __builtin_trap(); /* the built-ins must load */
    if (pp_plan_read_json(ctx, text, size, "plan.json", m, c, &p) == PP_OK)
      pp_plan_check(ctx, p, m, c);
    pp_plan_destroy(p);
  }
#elif FUZZ_READER == CALIBRATION
  {
    pp_calibration *cal = NULL;
    pp_calibration_read_json(ctx, text, size, "calib.json", &cal);
    pp_calibration_destroy(cal);
  }
#elif FUZZ_READER == LOG
  {
    pp_log_summary s;
    pp_log_read(ctx, text, size, "train.log", &s);
  }
#elif FUZZ_READER == STAGE_GRAPH
  {
    pp_stage_graph *g = NULL;
    pp_stage_graph_read_json(ctx, text, size, "stages.json", &g);
    pp_stage_graph_destroy(g);
  }
#elif FUZZ_READER == ONNX
  {
    pp_model *m = NULL;
    (void)text; /* binary: the bytes as they are */
    pp_model_read_onnx(ctx, data, size, "model.onnx", NULL, &m);
    pp_model_destroy(m);
  }
#elif FUZZ_READER == RUNS
  {
    pp_runs *r = NULL;
    pp_runs_read_json(ctx, text, size, "RUNS.json", &r);
    pp_runs_destroy(r);
  }
#elif FUZZ_READER == SPEC
  /* first line the model spec, the rest the cluster spec */
  (void)text;
  if (size < 256 && !memchr(data, '/', size) && !memchr(data, 0, size)) {
    char buf[256], *nl;
    pp_model *m = NULL;
    pp_cluster *c = NULL;
    memcpy(buf, data, size);
    buf[size] = '\0';
    if ((nl = strchr(buf, '\n')))
      *nl = '\0';
    if (buf[0])
      pp_model_load(ctx, buf, &m);
    pp_ctx_clear_error(ctx);
    if (nl && nl[1])
      pp_cluster_load(ctx, nl + 1, &c);
    pp_model_destroy(m);
    pp_cluster_destroy(c);
  }
#else
#error "unknown FUZZ_READER"
#endif
  pp_ctx_destroy(ctx);
  return 0;
}

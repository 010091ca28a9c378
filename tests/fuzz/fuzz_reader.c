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
** (pp_plan_check), as evaluate does.
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

#ifndef FUZZ_READER
#error "define FUZZ_READER: one of the readers above"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *text = (const char *)data;
  pp_ctx *ctx = NULL;
  if (pp_ctx_create(NULL, &ctx) != PP_OK)
    return 0;
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
#else
#error "unknown FUZZ_READER"
#endif
  pp_ctx_destroy(ctx);
  return 0;
}

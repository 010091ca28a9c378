# parplan: torchtitan settings of the plan <EX>/plan-gpt2-amp.json (model gpt2-amp)
#
# For torchtitan's Python configuration (pytorch/torchtitan from
# 73aed7f6, 2026-08-20, token budgets and num_pp_microbatches, to at
# least b5bcd76c, 2026-08-21; it reads no TOML since 9810191b).  In
# your configuration module:
#   from torchtitan_config import apply_plan
#   def my_run() -> Trainer.Config:
#       return apply_plan(llama3_debugmodel())  # your full configuration
# and run it with --module <that module> --config my_run, with
# 16 ranks (PIPELINE x DATA x TENSOR).  The CSV is read through
# _PipelineScheduleRuntime._load_csv (pytorch/pytorch@00722e64
# torch/distributed/pipelining/schedules.py:1971).

import os

PIPELINE_PARALLEL = 4
DATA_PARALLEL = 4
TENSOR_PARALLEL = 1
MICROBATCH_SIZE = 1  # sequences per micro-batch
NUM_PP_MICROBATCHES = 8  # per data-parallel rank and step
SCHEDULE_CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "pp_schedule.csv")
# torchtitan's modules of every stage (by operator kind: tok_embeddings, layers.<i>, norm, lm_head)
MODULE_FQNS_PER_MODEL_PART = [
    ["tok_embeddings", "layers.0", "layers.1", "layers.2", "layers.3", "layers.4"],
    ["layers.5", "layers.6", "layers.7", "layers.8", "layers.9", "layers.10", "layers.11"],
    ["layers.12", "layers.13", "layers.14", "layers.15", "layers.16", "layers.17"],
    ["layers.18", "layers.19", "layers.20", "layers.21", "layers.22", "layers.23", "norm", "lm_head"],
]


def apply_plan(config):
    """Set the plan's parallelism on a torchtitan Trainer.Config; returns it."""
    for s, mods in enumerate(MODULE_FQNS_PER_MODEL_PART):
        if not mods:  # torchtitan's _split_module would keep nothing
            raise ValueError(
                "parplan: stage %d of the plan holds no torchtitan "
                "module (no embedding, decoder layer, final norm or "
                "head): torchtitan would build it empty; plan again, "
                "or move the stage's cut" % s)
    par, tr = config.parallelism, config.training
    par.pipeline_parallel_degree = PIPELINE_PARALLEL
    par.pipeline_parallel_schedule = "PipelineScheduleMulti"
    par.pipeline_parallel_schedule_csv = SCHEDULE_CSV
    par.num_pp_microbatches = NUM_PP_MICROBATCHES
    par.module_fqns_per_model_part = MODULE_FQNS_PER_MODEL_PART
    par.tensor_parallel_degree = TENSOR_PARALLEL
    par.data_parallel_replicate_degree = 4
    par.data_parallel_shard_degree = 1
    par.context_parallel_degree = 1
    tr.num_tokens_per_microbatch_per_dp_rank = (
        MICROBATCH_SIZE * tr.max_context_length)
    tr.num_tokens_per_train_step = (
        tr.num_tokens_per_microbatch_per_dp_rank * NUM_PP_MICROBATCHES
        * DATA_PARALLEL)
    tr.mixed_precision_param = "bfloat16"
    tr.disable_cuda_graphs = True  # no CUDA graphs with pipelining
    config.activation_checkpoint = None
    return config

# parplan: torch.distributed.pipelining stages of the plan <EX>/plan-gpt2-amp.json
# model gpt2-amp: 4 stages on 4 pipeline ranks, 4 data-parallel replicas, tp 1;
# micro-batch 1, 8 micro-batches per replica per step.
#
# Module FQNs are the model's operator names.  With the tracer:
#   pipe = pipeline(model, mb_args=(x,), split_spec=SPLIT_SPEC)
#   stage = pipe.build_stage(STAGE_INDEX, device, pp_group)
# or build PipelineStage(submodule, s, NUM_STAGES, device) for every s
# with STAGE_TO_RANK[s] == pp_rank; then run the plan's order with
# the runtime that inserts the sends and receives itself (the rows
# are compact: PipelineScheduleMulti would need them padded):
#   from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime
#   sched = _PipelineScheduleRuntime(stages, N_MICROBATCHES, loss_fn=...)
#   sched._load_csv(SCHEDULE_CSV, format="compute_only")
# (internal API, pytorch/pytorch@00722e64 torch/distributed/pipelining/
# schedules.py:1855 and 1971: pin PyTorch)
#
# Precision fp16, ZeRO stage 0: wrap every stage's module in
# DistributedDataParallel over the data-parallel mesh and run it under
#   torch.autocast("cuda", dtype=torch.float16) with a GradScaler

from torch.distributed.pipelining import SplitPoint

# the modules of every stage, in the model's order
STAGE_MODULES = [
    ["embedding", "transpose_in", "layer1", "layer2", "layer3", "layer4", "layer5"],
    ["layer6", "layer7", "layer8", "layer9", "layer10", "layer11", "layer12"],
    ["layer13", "layer14", "layer15", "layer16", "layer17", "layer18"],
    ["layer19", "layer20", "layer21", "layer22", "layer23", "layer24", "transpose_out", "final_layernorm", "logits", "to_fp32"],
]

# split before the first module of every later stage
SPLIT_SPEC = {
    "layer6": SplitPoint.BEGINNING,
    "layer13": SplitPoint.BEGINNING,
    "layer19": SplitPoint.BEGINNING,
}

# the pipeline rank of every stage (the CSV's rows)
STAGE_TO_RANK = [0, 1, 2, 3]
NUM_STAGES = 4
PIPELINE_RANKS = 4
DATA_PARALLEL = 4
TENSOR_PARALLEL = 1
MICROBATCH_SIZE = 1
N_MICROBATCHES = 8
ACTIVATION_RECOMPUTATION = False
SCHEDULE_CSV = "pp_schedule.csv"

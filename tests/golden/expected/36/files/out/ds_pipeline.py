# parplan: DeepSpeed pipeline stages of the plan <EX>/plan-gpt2-amp.json
# model gpt2-amp: 30 layers in 4 stages x 4 data-parallel replicas x tp 1;
# micro-batch 1, 8 micro-batches per replica per step (ds_config.json).
# The plan's memory assumes this optimizer; give it to
# deepspeed.initialize:
#   Adam with fp16 weights and gradients and fp32 master, m and v.
#
# DeepSpeed has no public argument for explicit stage boundaries
# (deepspeedai/DeepSpeed#2974): PlannedPipelineModule sets them by
# overriding PipelineModule._partition_layers, an internal method
# (checked against DeepSpeed 0.16.5, commit 38327e07; the methods
# it uses date from the first PipelineModule, 2020; pin the
# DeepSpeed version).  Use it as
#
#   from ds_pipeline import PlannedPipelineModule
#   net = PlannedPipelineModule(layers=specs, loss_fn=loss)
#   engine, _, _, _ = deepspeed.initialize(
#       model=net, model_parameters=net.parameters(),
#       optimizer=..., config="ds_config.json")
#
# where specs[i] is the LayerSpec of the model's layer i, in the order of
# LAYER_NAMES.  Ranks: tensor-parallel rank fastest, then data, then
# pipeline (launch each on its device: parplan export --to launch).

from deepspeed.pipe import PipelineModule
from deepspeed.runtime.pipe.topology import PipeDataParallelTopology

# the model's layers, in order, with their stage
LAYER_NAMES = [
    "embedding",  # 0, stage 0
    "transpose_in",  # 1, stage 0
    "layer1",  # 2, stage 0
    "layer2",  # 3, stage 0
    "layer3",  # 4, stage 0
    "layer4",  # 5, stage 0
    "layer5",  # 6, stage 0
    "layer6",  # 7, stage 1
    "layer7",  # 8, stage 1
    "layer8",  # 9, stage 1
    "layer9",  # 10, stage 1
    "layer10",  # 11, stage 1
    "layer11",  # 12, stage 1
    "layer12",  # 13, stage 1
    "layer13",  # 14, stage 2
    "layer14",  # 15, stage 2
    "layer15",  # 16, stage 2
    "layer16",  # 17, stage 2
    "layer17",  # 18, stage 2
    "layer18",  # 19, stage 2
    "layer19",  # 20, stage 3
    "layer20",  # 21, stage 3
    "layer21",  # 22, stage 3
    "layer22",  # 23, stage 3
    "layer23",  # 24, stage 3
    "layer24",  # 25, stage 3
    "transpose_out",  # 26, stage 3
    "final_layernorm",  # 27, stage 3
    "logits",  # 28, stage 3
    "to_fp32",  # 29, stage 3
]

# stage s holds layers PARTS[s] .. PARTS[s + 1] - 1
PARTS = [0, 7, 14, 20, 30]
NUM_STAGES = 4
DATA_PARALLEL = 4
TENSOR_PARALLEL = 1
ACTIVATION_CHECKPOINT_INTERVAL = 0


def planned_topology():
    """The plan's ranks: tp fastest, then data, then pipe."""
    return PipeDataParallelTopology(num_pp=NUM_STAGES, num_dp=DATA_PARALLEL)


class PlannedPipelineModule(PipelineModule):
    """A PipelineModule whose stages are the plan's (PARTS)."""

    def __init__(self, layers, **kwargs):
        if "topology" not in kwargs and "num_stages" not in kwargs:
            kwargs["topology"] = planned_topology()
        kwargs.setdefault("activation_checkpoint_interval",
                          ACTIVATION_CHECKPOINT_INTERVAL)
        super().__init__(layers, **kwargs)

    def _partition_layers(self, method="parameters"):
        stages = self._topo.get_dim("pipe")
        if stages != NUM_STAGES:
            raise RuntimeError(
                f"the plan has {NUM_STAGES} stages, the topology {stages}")
        if len(self._layer_specs) != PARTS[-1]:
            raise RuntimeError(
                f"the plan has {PARTS[-1]} layers (LAYER_NAMES), "
                f"the module {len(self._layer_specs)}")
        self.parts = list(PARTS)
        stage_id = self._topo.get_coord(self.global_rank).pipe
        self._set_bounds(start=self.parts[stage_id],
                         stop=self.parts[stage_id + 1])

#!/bin/sh
# parplan: the ranks of host node1; run on it as
#   sh launch_node1.sh python train.py ARGS...
# rank = Megatron's order (tp fastest, then data, then pipeline);
# rank r uses cuda:LOCAL_RANK, the GPU the plan chose
set -eu
[ "$#" -gt 0 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export CUDA_VISIBLE_DEVICES=0,1,2,3
export WORLD_SIZE=16 LOCAL_WORLD_SIZE=4
export MASTER_ADDR="${MASTER_ADDR:-node0}" MASTER_PORT="${MASTER_PORT:-29500}"
pids=""
RANK=4 LOCAL_RANK=0 "$@" &  # device 4, GPU 0
pids="$pids $!"
RANK=5 LOCAL_RANK=1 "$@" &  # device 5, GPU 1
pids="$pids $!"
RANK=6 LOCAL_RANK=2 "$@" &  # device 6, GPU 2
pids="$pids $!"
RANK=7 LOCAL_RANK=3 "$@" &  # device 7, GPU 3
pids="$pids $!"
status=0
for p in $pids; do wait "$p" || status=$?; done
exit "$status"

#!/bin/sh
# parplan: run PipeDream's main_with_runtime.py under parplan's launch scripts
# (export --to launch), which set RANK, LOCAL_RANK and MASTER_ADDR; PipeDream
# takes them as flags (main_with_runtime.py:62-71 @ msr-fiddle/pipedream 7db6a1c).
#   sh launch_HOST.sh sh pipedream_run.sh python main_with_runtime.py \
#       --config_path pipedream_conf.json <model and data flags>
set -eu
TP=1  # PipeDream has no tensor parallelism: rank t > 0 of a group idles
[ $((RANK % TP)) -eq 0 ] || exit 0
exec "$@" --rank $((RANK / TP)) --local_rank "$LOCAL_RANK" --master_addr "$MASTER_ADDR" --fp16

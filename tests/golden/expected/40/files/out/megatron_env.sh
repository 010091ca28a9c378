# parplan export for Megatron-LM: source this file, then run
#   torchrun ... pretrain_gpt.py <model and data arguments> $(cat megatron_args.txt)
# Targets Megatron-Core v0.13.0 and later (the --pipeline-model-parallel-layout
# argument); checked against NVIDIA/Megatron-LM d98e8a64.
# no environment variable is required for this plan

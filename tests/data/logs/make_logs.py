#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the training logs of this folder (README.md here says what each
holds): what Megatron-LM, DeepSpeed and nvidia-smi print, through copies of
the engines' own format strings, with the figures of invented runs chosen
so that tests/test_logs.c can check the medians and peaks exactly.

  Megatron-LM @ d98e8a64 (NVIDIA/Megatron-LM):
    training_log's interval line, megatron/training/training.py
      @ d98e8a64, lines 3567-3653;
    report_memory, megatron/training/utils/common_utils.py @ d98e8a64,
      lines 313-334;
    the arguments banner, megatron/training/arguments.py @ d98e8a64,
      lines 1990-2001;
    the timers' report, megatron/core/timers.py @ d98e8a64, lines
      338-355.
  DeepSpeed @ 38327e07 (microsoft/DeepSpeed):
    the logger's format, deepspeed/utils/logging.py @ 38327e07, lines
      63-64, and log_dist's "[Rank N] " prefix, lines 126-128;
    "DeepSpeed info: version=", deepspeed/__init__.py @ 38327e07, line 132;
    the configuration dump, deepspeed/runtime/config.py @ 38327e07,
      lines 1000-1005;
    see_memory_usage, deepspeed/runtime/utils.py @ 38327e07, lines
      771-789;
    ThroughputTimer.stop, deepspeed/utils/timer.py @ 38327e07, lines
      246-274, reported by global rank 0 only,
      deepspeed/runtime/engine.py @ 38327e07, lines 2323-2325;
    PipelineEngine.train_batch, deepspeed/runtime/pipe/engine.py
      @ 38327e07, lines 396-406.
  PyTorch's out-of-memory message: DeviceCachingAllocator::malloc,
    c10/cuda/CUDACachingAllocator.cpp @ eb42ad6e of pytorch/pytorch.

Run from this folder:

    python3 make_logs.py
"""
from datetime import datetime, timedelta

T0 = datetime(2025, 6, 2, 9, 30, 0)
GB = 1024 * 1024 * 1024
MB = 1024.0 * 1024.0


def stamp(sec):
    return (T0 + timedelta(seconds=sec)).strftime('%Y-%m-%d %H:%M:%S.%f')


def ds_stamp(sec):
    # logging's asctime: "%Y-%m-%d %H:%M:%S,mmm"
    t = T0 + timedelta(seconds=sec)
    return t.strftime('%Y-%m-%d %H:%M:%S') + ',%03d' % (t.microsecond // 1000)


# ---- Megatron-LM ----------------------------------------------------------

def mg_args():
    out = ['------------------------ arguments ------------------------']
    for arg, v in [('global_batch_size', 8), ('log_interval', 10),
                   ('micro_batch_size', 1), ('pipeline_model_parallel_size',
                                             2),
                   ('tensor_model_parallel_size', 2), ('train_iters', 100)]:
        dots = '.' * (48 - len(arg))
        out.append('  {} {} {}'.format(arg, dots, v))
    out.append('-------------------- end of arguments ---------------------')
    return out


def mg_iteration(sec, iteration, train_iters, consumed, ms, loss):
    s = f" [{stamp(sec)}]"
    s += ' iteration {:8d}/{:8d} |'.format(iteration, train_iters)
    s += ' consumed samples: {:12d} |'.format(consumed)
    s += ' elapsed time per iteration (ms): {:.1f} |'.format(ms)
    s += f' throughput per GPU (TFLOP/s/GPU): {123.4:.1f} |'
    s += f' learning rate: {1.5e-4 * iteration / train_iters:.6E} |'
    s += f' global batch size: {8:5d} |'
    s += ' {}: {:.6E} |'.format('lm loss', loss)
    s += f' loss scale: {1.0:.1f} |'
    s += f' grad norm: {1.234:.3f} |'
    s += ' number of skipped iterations: {:3d} |'.format(0)
    s += ' number of nan iterations: {:3d} |'.format(0)
    return s


def mg_memory(rank, name, alloc, max_alloc, reserved, max_reserved):
    # bytes in, MB (1024 * 1024) out, as report_memory divides
    string = name + ' memory (MB)'
    string += f" | allocated: {alloc / MB:.2f}"
    string += f" | max allocated: {max_alloc / MB:.2f}"
    string += f" | reserved: {reserved / MB:.2f}"
    string += f" | max reserved: {max_reserved / MB:.2f}"
    return "[Rank {}] {}".format(rank, string)


def mg_timers(fwd, opt):
    s = '(min, max) time across ranks (ms):'
    for name, (lo, hi) in [('forward-backward', fwd), ('optimizer', opt)]:
        s += '\n    {}: ({:.2f}, {:.2f})'.format((name + ' ').ljust(48, '.'),
                                                 lo, hi)
    return s.split('\n')


# iteration 1 alone (the warm-up), then every 10: 1002.5 ms is the median
# of the four after it
MG_TIMES = [(1, 9876.5), (10, 1000.0), (20, 1010.0), (30, 990.0),
            (40, 1005.0)]
# max reserved of ranks 0..3 (dp rank 0 of a 2 x 2 model-parallel group),
# MiB: the largest is 14336.00
MG_RESERVED = [12288, 14336, 13312, 12800]


def megatron(prefix=None):
    """The lines, each as (rank that prints it, text)."""
    lines = [(0, 'using world size: 4, data-parallel size: 1, context-'
                 'parallel size: 1, tensor-model-parallel size: 2, pipeline-'
                 'model-parallel size: 2')]
    lines += [(0, s) for s in mg_args()]
    lines.append((0, '> building GPT model ...'))
    sec = 30.0
    for k, (it, ms) in enumerate(MG_TIMES):
        sec += ms / 1000.0 * (it - (MG_TIMES[k - 1][0] if k else 0))
        lines.append((3, mg_iteration(sec, it, 100, it * 8, ms,
                                      10.84 - 0.01 * it)))
        if it in (1, 10):
            # report_memory after the first two reports (dp rank 0 of each
            # model-parallel rank); the second holds the optimizer state
            lines.append((0, 'Theoretical memory footprints: weight and '
                             'optimizer=9123.45 MB, activation=3012.34 MB, '
                             'total=12135.79 MB'))
            for rank, mib in enumerate(MG_RESERVED):
                mib = mib if it == 10 else mib - 2048
                lines.append((rank, mg_memory(
                    rank, f'(after {it} iterations)', (mib - 3000) * MB,
                    (mib - 1000) * MB, (mib - 512) * MB, mib * MB)))
        lines += [(0, s) for s in mg_timers((ms - 40, ms - 10), (12.5, 13.1))]
    return lines


def write(name, lines):
    with open(name, 'w') as f:
        f.write(''.join(s + '\n' for s in lines))


def plain(lines):
    return [s for _, s in lines]


def torchrun(lines):
    # torchrun's "[rankN]: " before every line of rank N; the ranks'
    # memory reports come in no order, here the reverse
    out, mem = [], []
    for r, s in lines:
        if ' memory (MB) | ' in s:
            mem.append(f'[rank{r}]: {s}')
            continue
        out += mem[::-1]
        mem = []
        out.append(f'[rank{r}]: {s}')
    return out + mem[::-1]


# ---- DeepSpeed ------------------------------------------------------------

def ds_log(sec, where, msg):
    return f'[{ds_stamp(sec)}] [INFO] [{where}] {msg}'


def ds_config(sec, tbs):
    out = [ds_log(sec, 'config.py:1001:print', 'DeepSpeedEngine '
                  'configuration:')]
    for arg, v in [('gradient_accumulation_steps', 4), ('steps_per_print',
                                                        10),
                   ('train_batch_size', tbs),
                   ('train_micro_batch_size_per_gpu', 4)]:
        dots = '.' * (29 - len(arg))
        out.append(ds_log(sec, 'config.py:1005:print',
                          '  {} {} {}'.format(arg, dots, v)))
    return out


def ds_memory(sec, message, ma, max_ma, ca, max_ca):
    # see_memory_usage: the f-string's continuation lines keep their
    # indentation; Max_CA is rounded to a whole GB
    return [ds_log(sec, 'utils.py:781:see_memory_usage', message),
            ds_log(sec, 'utils.py:782:see_memory_usage',
                   f"MA {round(ma / (1024 * 1024 * 1024),2 )} GB \
        Max_MA {round(max_ma / (1024 * 1024 * 1024),2)} GB \
        CA {round(ca / (1024 * 1024 * 1024),2)} GB \
        Max_CA {round(max_ca / (1024 * 1024 * 1024))} GB "),
            ds_log(sec, 'utils.py:789:see_memory_usage',
                   'CPU Virtual Memory:  used = 61.12 GB, percent = 12.2%')]


def ds_pipe_line(step, loss, iter_time, tbs):
    tput = tbs / iter_time
    log_str = f'steps: {step} loss: {loss:0.4f} '
    log_str += f'iter time (s): {iter_time:0.3f} samples/sec: {tput:0.3f}'
    return log_str


def ds_tput_line(sec, epoch, micro, step, avg, curr, ma, max_ma):
    return ds_log(sec, 'timer.py:264:stop',
                  "epoch={}/micro_step={}/global_step={}, "
                  "RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, "
                  "MemAllocated={}GB, MaxMemAllocated={}GB".format(
                      epoch, micro, step, avg, curr, round(ma / 1024**3, 2),
                      round(max_ma / 1024**3, 2)))


DS_HEAD = [ds_log(1.0, 'logging.py:128:log_dist', '[Rank 0] DeepSpeed info: '
                  'version=0.16.4, git-hash=unknown, git-branch=unknown')]

# the pipeline engine: steps 10 (the warm-up), 20, 30, 40; the median of
# 1.2, 1.25, 1.21 s is 1210 ms
DS_PIPE = [(10, 2.5), (20, 1.2), (30, 1.25), (40, 1.21)]


def deepspeed_pipe():
    tbs = 32
    lines = list(DS_HEAD) + ds_config(2.0, tbs)
    lines += ds_memory(3.0, 'DeepSpeed Engine: After configure distributed '
                       'model', 2.5 * GB, 2.5 * GB, 2.75 * GB, 2.75 * GB)
    for step, t in DS_PIPE:
        lines.append(ds_pipe_line(step, 10.9 - 0.01 * step, t, tbs))
        # Max_CA 21 (20.6 GB rounds up), CA 19.75: the peak is 21 GB
        lines += ds_memory(10.0 + step, 'Engine after step', 11.5 * GB,
                           17.25 * GB, 19.75 * GB, 20.6 * GB)
    return lines


# ZeRO without pipeline on two nodes (pdsh's "worker-N: " before each
# line), train_batch_size 32.  Only global rank 0 reports its throughput
# (report_progress, deepspeed/runtime/engine.py @ 38327e07, line 2323);
# every rank logs "cdb=None" (deepspeed/comm/comm.py @ 38327e07, line 658),
# and rank 1's training script prints its loss.  Global step 10 is the
# warm-up; 500, 512, 500, 520, 512 and 500 ms follow: median 506.
DS_TPUT = [(10, 40.0), (20, 64.0), (30, 62.5), (40, 64.0),
           (50, 61.53846153846154), (60, 62.5), (70, 64.0)]


def deepspeed_zero():
    lines = [(0, ds_log(0.5, 'comm.py:658:init_distributed', 'cdb=None')),
             (1, ds_log(0.5, 'comm.py:658:init_distributed', 'cdb=None')),
             (0, ds_log(0.6, 'comm.py:689:init_distributed',
                        'Initializing TorchBackend in DeepSpeed with '
                        'backend nccl'))]
    lines += [(0, s) for s in DS_HEAD]
    lines += [(0, s) for s in ds_config(2.0, 32)]
    for k, (step, curr) in enumerate(DS_TPUT):
        lines.append((1, f'train.py: rank 1 step {step - 1} loss '
                         f'{10.9 - 0.01 * step:.4f}'))
        lines.append((0, ds_tput_line(20.0 + step, 0, step * 4, step, 60.25,
                                      curr, 6.4 * GB, 9.87 * GB)))
        if k == 1:
            # memory_breakdown: true max reserved 12.4 GB, Max_CA rounds to
            # 12 and CA keeps 12.4: the peak is 12.4 GB
            lines += [(0, s) for s in ds_memory(
                44.0, 'Engine after step', 6.4 * GB, 9.87 * GB, 12.4 * GB,
                12.4 * GB)]
    return lines


def pdsh(lines):
    return [f'worker-{r}: {s}' for r, s in lines]


# ---- out of memory -------------------------------------------------------

def oom_traceback(rank, gpu):
    return [f'[rank{rank}]: Traceback (most recent call last):',
            f'[rank{rank}]:   File "/workspace/Megatron-LM/pretrain_gpt.py", '
            'line 280, in <module>',
            f'[rank{rank}]:     pretrain(',
            f'[rank{rank}]:   File "/usr/lib/python3/dist-packages/torch/'
            'utils/checkpoint.py", line 496, in checkpoint',
            f'[rank{rank}]: torch.OutOfMemoryError: CUDA out of memory. Tried '
            f'to allocate 2.00 GiB. GPU {gpu} has a total capacity of 79.11 '
            'GiB of which 1.02 GiB is free. Process 12345 has 78.08 GiB '
            'memory in use. Of the allocated memory 74.50 GiB is allocated '
            'by PyTorch, and 1.83 GiB is reserved by PyTorch but '
            'unallocated. If reserved but unallocated memory is large try '
            'setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to '
            'avoid fragmentation.  See documentation for Memory Management  '
            '(https://pytorch.org/docs/stable/notes/cuda.html#environment-'
            'variables)']


def megatron_oom():
    # dies in the first iteration: the banner, no report
    lines = torchrun(megatron()[:10])
    lines += oom_traceback(1, 1) + oom_traceback(0, 0)
    lines.append('E0602 09:31:02.123000 4242 torch/distributed/elastic/'
                 'multiprocessing/api.py:869] failed (exitcode: 1) '
                 'local_rank: 0 (pid: 4243) of binary: /usr/bin/python3')
    return lines


def deepspeed_oom():
    # the older message (PyTorch 1.13 to 2.4), after two reports
    lines = deepspeed_pipe()[:14]
    lines += ['Traceback (most recent call last):',
              '  File "train.py", line 118, in <module>',
              '    loss = engine.train_batch(data_iter=it)',
              'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to '
              'allocate 1.50 GiB (GPU 0; 39.39 GiB total capacity; 36.12 GiB '
              'already allocated; 1.21 GiB free; 37.80 GiB reserved in total '
              'by PyTorch) If reserved memory is >> allocated memory try '
              'setting max_split_size_mb to avoid fragmentation.  See '
              'documentation for Memory Management and '
              'PYTORCH_CUDA_ALLOC_CONF']
    return lines


# ---- nvidia-smi ----------------------------------------------------------

# the unit after a --query-gpu field's name, in square brackets
UNIT = 'MiB'


def nvsmi_single():
    # nvidia-smi --query-gpu=memory.used --format=csv -l 1 on one GPU
    return [f'memory.used [{UNIT}]'] + [f'{m} MiB' for m in
                                    (3, 9870, 14012, 13990, 14000)]


A100 = 'NVIDIA A100-SXM4-80GB'


def nvsmi_multi():
    # --query-gpu=index,name,memory.used --format=csv, two samples of 8 GPUs
    # (the header once per sample); GPU 5 peaks at 15012 MiB
    out = []
    for sample in range(2):
        out.append(f'index, name, memory.used [{UNIT}]')
        for g in range(8):
            mib = 14000 + 100 * g + (512 if g == 5 and sample else 0)
            out.append(f'{g}, {A100}, {mib} MiB')
    return out


def nvsmi_noheader():
    # --query-gpu=memory.used --format=csv,noheader,nounits: 4 GPUs, 2 samples
    return [str(m) for m in (20480, 20500, 21000, 20990,
                             20480, 22016, 21000, 20990)]


def main():
    write('megatron.log', plain(megatron()))
    write('megatron-ranks.log', torchrun(megatron()))
    write('megatron-oom.log', megatron_oom())
    write('deepspeed-pipe.log', deepspeed_pipe())
    write('deepspeed-zero.log', pdsh(deepspeed_zero()))
    write('deepspeed-oom.log', deepspeed_oom())
    write('nvsmi-used.csv', nvsmi_single())
    write('nvsmi-used-gpus.csv', nvsmi_multi())
    write('nvsmi-used-noheader.csv', nvsmi_noheader())


if __name__ == '__main__':
    main()

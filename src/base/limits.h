/* SPDX-License-Identifier: MIT */
/*
** The internal limits a user can hit, in one place, each with what it
** limits and why it has its value.  The documented input limits
** (PP_MAX_OPS, PP_MAX_DEVICES, ...) are public, in parplan.h; these are
** the library's own: past one, a call fails with PP_ELIMIT (or PP_EINPUT
** where a parameter is out of range), or a step that would not scale is
** skipped, as each comment says.
**
** Invariant: a limit is defined here once and used by name; code that
** relies on another file's limit (the simulator on the cost model's
** hierarchical allreduce) uses the same name.  Two limits with the same
** value but different meanings keep two names.
**
** Why one header: the limits were local defines, some written twice
** with different values (MAX_STAGES) or relied on silently by another
** layer (64 nodes in the cost model and the simulator); here a reader
** sees every limit a run can meet, and docs/ can cite one place.
*/
#ifndef PP_LIMITS_H
#define PP_LIMITS_H

/* ---- threads ----------------------------------------------------------- */

/* Threads of one plan search (pp_search_params.threads, 1 to this) and
** jobs of one fan-out (fanout.c keeps a slot per job on its stack).  Set
** with the planner's threads in deterministic rounds; no measurement is
** recorded: a round of ROUND points per thread keeps 64 threads busy on
** the search spaces of docs/PLANNER.md. */
#define PPI_MAX_THREADS 64

/* Threads of one exact mapping search, and of part and solve: more are
** taken as this many.  The bisection spreads one target per thread over
** the open interval; beyond 16 targets a round settles little more. */
#define PPI_MAX_MAP_THREADS 16

/* ---- specs and input files --------------------------------------------- */

/* Bytes of a one-line spec, its NUL included ("hier:4x8,intra=300"; a
** longer one is "longer than 1023 bytes"): specs are cut up in a stack
** buffer of this size, and no generator takes options that come near. */
#define PPI_SPEC_MAX 1024

/* The largest integer a model spec takes (layers=, hidden=, batch=, ...):
** 2^30 keeps products of two sizes inside int64. */
#define PPI_SPEC_MAX_INT (1 << 30)

/* Bytes of one tensor or parameter set in a model file, and of the sums
** the chain view forms: 2^62 leaves int64 headroom, so a sum is refused
** rather than wrapped. */
#define PPI_MAX_BYTES ((int64_t)1 << 62)

/* Samples per micro-batch (model and plan files): 2^30, so that it fits
** an int32 and its products with a tensor's per-sample bytes stay in
** int64. */
#define PPI_MAX_MICRO_BATCH ((int64_t)1 << 30)

/* Samples per iteration (a plan file's and a search's global batch; a
** partition's micro-batches per replica, which cannot exceed them): far
** above any run, and 2^40 times a micro-batch count stays in int64. */
#define PPI_MAX_GLOBAL_BATCH ((int64_t)1 << 40)

/* Micro-batches of one stage in a plan file (micro_batches, in_flight);
** a plan whose count is above it is written without the field. */
#define PPI_MAX_MICRO_BATCHES ((int64_t)1 << 30)

/* Tensor-parallel degree a partition may be asked for: past the largest
** NVLink domain by far (72 GPUs in 2026), and small enough that tp times
** a device count stays in int32. */
#define PPI_MAX_TP 1024

/* Distinct tensor-parallel degrees of one plan's stages its lower bound
** reads each operator at (cost_eval.c); a plan with more gets the bound
** 0, which stays a bound.  Real plans mix two or three. */
#define PPI_MAX_TP_DEGREES 32

/* MadPipe's bisection iterations (phase 1 of its Algorithm 1): each halves
** the period interval, so 1,000 is past any double's precision. */
#define PPI_MAX_MADPIPE_ITERATIONS 1000

/* GPUs of one host a launch script lists in CUDA_VISIBLE_DEVICES: more
** than any machine has; the list stops there. */
#define PPI_MAX_HOST_GPUS 1024

/* Distinct tensor-parallel degrees of a model's size tables: the model
** builder dedupes them in a stack array; real models profile a handful. */
#define PPI_MAX_TP_SIZES 64

/* NCCL topology XML: CPUs, PCI devices and switches (real dumps have tens
** to a few hundred), and element nesting (real dumps nest under ten; the
** reader keeps a stack of this depth). */
#define PPI_NCCL_MAX_VERTICES 4096
#define PPI_NCCL_MAX_DEPTH 256

/* Columns of an nvidia-smi topo -m matrix (GPUs, NICs and the affinity
** columns: tens on real machines). */
#define PPI_NVSMI_MAX_COLUMNS 1024

/* Characters of one figure of a training log (log_read.c copies it into
** a stack buffer for strtod): Python writes a double in at most 24
** (repr), so a longer run of digits is no figure an engine printed. */
#define PPI_LOG_NUMBER_MAX 64

/* Cells of one line of an nccl-tests table (nccl_tests.c): the widest
** layout, per-iteration columns and a timestamp, has 23; a row or column
** header with more is an error. */
#define PPI_NCCL_TESTS_MAX_CELLS 64

/* Bytes of one numeric cell of an nccl-tests table: nccl-tests prints at
** most 20 (%12li of a size, %g, %.2f of a bandwidth); a longer cell is
** reported as not a number. */
#define PPI_NCCL_TESTS_MAX_NUMBER 64

/* Dimensions of an ONNX tensor whose sizes the reader keeps: the FLOPs
** of a Conv, ConvTranspose or MatMul over a tensor of higher rank are not
** counted.  Networks use rank 5 at most (3D convolutions). */
#define PPI_ONNX_MAX_DIMS 8

/* ---- plans and stage graphs -------------------------------------------- */

/* Stages and replicas of one plan (the plan builder): far above the
** device limit, so that only a malformed input meets them. */
#define PPI_MAX_PLAN_STAGES 1000000
#define PPI_MAX_PLAN_REPLICAS 16777216

/* Stages of a stage graph file, and edges per stage on average: a stage
** graph is the mapping search's input, whose tables grow with S^2; a
** plan's stages (PPI_MAX_PLAN_STAGES) are a different, larger limit, so
** the two keep their values and their names. */
#define PPI_MAX_GRAPH_STAGES 65536
#define PPI_GRAPH_EDGES_PER_STAGE 64

/* ---- partitioning ------------------------------------------------------ */

/* Layers of a chain MadPipe partitions (the planner skips MadPipe above
** it): its DP and ILP grow with the layers; [MadPipe] used 40 to 80. */
#define PPI_MADPIPE_MAX_LAYERS 512

/* Labels kept at one (layer, processors) of MadPipe's DP: beyond it the
** front is cut (least loaded first), so the DP may miss an allocation but
** never claims one that is not there.  Real fronts stay in the tens. */
#define PPI_MADPIPE_MAX_FRONT 1024

/* Down-sets the operator-level DP enumerates: automatically up to the
** first (beyond it, clustering and the DP over one topological order),
** with --exact up to the second (beyond it, PP_ELIMIT). */
#define PPI_DOWNSETS_AUTO 4096
#define PPI_DOWNSETS_EXACT ((int64_t)1 << 20)

/* Table entries of AMP's original DP (O(k L^4)): 2^26 entries of 12
** bytes are 768 MiB, as far as a workstation goes. */
#define PPI_AMP_MAX_ENTRIES ((size_t)1 << 26)

/* ---- mapping ----------------------------------------------------------- */

/* Devices up to which the mapping search starts from part and solve
** (map_parts.c), whose Scotch graph has D^2 edges. */
#define PPI_MAP_PARTS_MAX_DEVICES 1024

/* Devices up to which the planner maps its best plans exactly (larger
** clusters keep the planner's own placement). */
#define PPI_PLAN_MAP_MAX_DEVICES 512

/* TUNING: the exact mapper's budget of search nodes per kept plan in the
** planner (pp_map_params.max_nodes; --map-time still caps it in
** seconds).  Nodes, not seconds, so that the placement is the same on
** every machine; the figure is set below (measurement in docs/PLANNER.md,
** "Per point"). */
#define PPI_PLAN_MAP_NODES 20000

/* TUNING: the fraction of every device's capacity a searched plan must
** leave free (pp_search_params.memory_margin, parplan plan
** --memory-margin): a plan is kept only when each device's total is at
** most capacity x (1 - margin).  The memory model's own error on the
** calibration runs is a few per cent (docs/COST_MODEL.md, "Memory of a
** device"), so
** a plan priced right at capacity would fail as often as it runs; 5%
** covers that error with little to spare.  Not a limit: a default the
** caller may set anywhere in [0, 1). */
#define PPI_SEARCH_MEMORY_MARGIN 0.05

/* ---- cost model and simulator ------------------------------------------ */

/* The hierarchical allreduce applies to at most this many nodes, with at
** most this many of the stage's replicas on each (else the ring is used):
** the cost model groups replicas in stack arrays of these sizes, and the
** simulator, which builds the same rings, relies on it. */
#define PPI_HIER_MAX_NODES 64
#define PPI_HIER_MAX_PER_NODE 64

/* Compute tasks one simulation runs (over the stages: replicas x
** micro-batches x passes, 2 or 3 with recomputation): a task with its
** transfers and events takes about 340 bytes (a 2-stage plan of 10^6
** micro-batches peaked at 1.37 GB, measured with /usr/bin/time -f %M on
** the Release build, 2026-11-26), so this bounds the simulator near
** 1.4 GB.  Past it pp_simulate fails with PP_ELIMIT before it allocates
** (pp_evaluate prices any size; the planner ranks such plans by the
** estimate).  A 16,384-GPU plan of 16 stages, 1,024 replicas and 64
** micro-batches is 2.1 million tasks. */
#define PPI_MAX_SIM_TASKS ((int64_t)1 << 22)

/* Links on one route of the simulator's link sharing (PP_NET_LINKS): a
** longer route fails ("too long").  A route is kept on the stack; real
** fabrics route in a handful of hops, a 16x16x16 torus in 24. */
#define PPI_MAX_ROUTE_HOPS 4096

/* ---- clusters ---------------------------------------------------------- */

/* Distinct bandwidths pp_cluster_bw_classes tells apart: beyond it
** (random clusters) a class list says nothing, and the count is -1. */
#define PPI_MAX_BW_CLASSES 65536

/* ---- exports and reports ----------------------------------------------- */

/* Warnings one export keeps (later ones are dropped): more than a screen
** says nothing new. */
#define PPI_EXPORT_MAX_WARN 64

/* Megatron's --pipeline-model-parallel-layout as the exporter reads it
** back: repeat count of a group or a symbol, and characters once
** unrolled. */
#define PPI_LAYOUT_MAX_REPEAT 1000000
#define PPI_LAYOUT_MAX_SYMBOLS ((int64_t)1 << 24)

/* Devices of a text Gantt chart (wider clusters get none: one line per
** device stops being readable), and rows of a Gantt image. */
#define PPI_TEXT_GANTT_MAX_DEVICES 64
#define PPI_GANTT_MAX_ROWS 4096

/* TUNING: the most entries a cluster with a link graph keeps for its
** paths (4 bytes each, 128 MiB): under hop routing, the path trees
** (devices x vertices), built on the first pricing that needs paths;
** under widest routing, the pair index (devices^2, about 5,790 GPUs at
** most) and, separately, the pool of the routed pairs' paths, both
** filled as pairs are routed (cluster_paths.c).  Every evaluation under
** an engine routes its reductions' hops: routing each again made
** planning GPT-Neo-2.7B on 512 linked GPUs 1.9x slower (19.7 s against
** 10.0-10.2 s with the cache, one thread). */
#define PPI_ROUTE_CACHE_MAX 33554432.0
/* The pool of routed paths: up to PPI_PATH_CHUNKS chunks of
** PPI_PATH_CHUNK ints (4 MiB each; 128 MiB in all, PPI_ROUTE_CACHE_MAX),
** allocated as they fill; a pair routed once the pool is full is
** routed again on every use. */
#define PPI_PATH_CHUNK (1 << 20)
#define PPI_PATH_CHUNKS 32

#endif /* PP_LIMITS_H */

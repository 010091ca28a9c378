/* SPDX-License-Identifier: MIT */
/*
** parplan: a planner for training large neural networks on many
** accelerators.  This is the library's only public header.
**
** Conventions, stated once (hwloc style):
**
** - Every function that can fail returns a pp_status; PP_OK (0) is
**   success.  The first error message since the last
**   pp_ctx_clear_error() is kept in the context: pp_ctx_errmsg().  It
**   names the input (file, line and column, or operator, or device) and
**   what is wrong.
** - Objects are opaque handles.  Constructors fill an out-parameter
**   that the caller owns and frees with the matching *_destroy, which
**   accepts NULL.  Nothing is reference-counted.  An object keeps a
**   copy of its context's allocator hook, not the context itself, so it
**   may outlive the context.
** - Parameters structs have an *_init function that sets every field to
**   its documented default; set only what you need afterwards.
** - The library never prints, exits or aborts.  Functions that write
**   (pp_*_write_file, pp_*_describe) write only where they are told.
** - Units: time in milliseconds, sizes in bytes, bandwidth in GB/s
**   (1e9 bytes/s), latency in microseconds, device memory in bytes
**   (cluster files give it in GiB).
** - Operators and devices are 0-based indices in input order.
** - Determinism: the same inputs and seed give the same objects and the
**   same written bytes.
*/
#ifndef PARPLAN_H
#define PARPLAN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PP_VERSION_MAJOR 0
#define PP_VERSION_MINOR 1
#define PP_VERSION_PATCH 0

/** \brief The library's version as "MAJOR.MINOR.PATCH". */
const char *pp_version(void);

/* ====================================================================
** Status codes.  The numbers are fixed forever.
*/
typedef enum pp_status {
  PP_OK = 0,        /* success */
  PP_ENOMEM = 1,    /* an allocation failed */
  PP_EINVAL = 2,    /* a caller passed an invalid argument (misuse) */
  PP_EIO = 3,       /* a file could not be read or written */
  PP_EPARSE = 4,    /* input text is not well formed (JSON, spec, graph) */
  PP_EINPUT = 5,    /* input is well formed but wrong (cycle, NaN, ...) */
  PP_ELIMIT = 6,    /* input exceeds a documented size limit */
  PP_EINTERNAL = 7, /* a bug in parplan: please report it */
  PP_ECANCELED = 8  /* a progress callback asked to stop */
} pp_status;

/** \brief A fixed English phrase for a status code. */
const char *pp_status_str(pp_status rc);

/* Documented limits.  Inputs beyond them fail with PP_ELIMIT. */
#define PP_MAX_OPS 10000000            /* operators in one model */
#define PP_MAX_EDGES 100000000         /* edges in one model */
#define PP_MAX_DEVICES 16384           /* devices in one cluster */
#define PP_MAX_VERTICES 1000000        /* devices + switches of a link graph */
#define PP_MAX_NAME 4096               /* bytes in one name */
#define PP_MAX_FILE_BYTES (1ull << 32) /* bytes in one input file */

/* ====================================================================
** Context: allocator, first error, RNG seed.
*/
typedef struct pp_ctx pp_ctx;

/** \brief Allocator hook (Lua's lua_Alloc contract).
**
** ptr == NULL: allocate nsize bytes.  nsize == 0: free ptr (osize is its
** size) and return NULL.  Otherwise resize ptr from osize to nsize.
** Return NULL when an allocation fails; the library then reports
** PP_ENOMEM. */
typedef void *(*pp_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

typedef struct pp_ctx_params {
  pp_alloc_fn alloc; /* NULL: the C library's allocator */
  void *alloc_ud;    /* passed to alloc */
  uint64_t seed;     /* seed of every random choice; default 1 */
} pp_ctx_params;

void pp_ctx_params_init(pp_ctx_params *p);

/** \brief Create a context.  p may be NULL for the defaults. */
pp_status pp_ctx_create(const pp_ctx_params *p, pp_ctx **out);
void pp_ctx_destroy(pp_ctx *ctx);

/** \brief The first error message recorded since the last clear, or "". */
const char *pp_ctx_errmsg(const pp_ctx *ctx);
/** \brief The status code of that first error, or PP_OK. */
pp_status pp_ctx_errcode(const pp_ctx *ctx);
/** \brief Where the first error is, when it is in a text input.
**
** Sets *file to the input's name (or NULL), *line and *col to 1-based
** positions (0 when unknown).  Any pointer may be NULL. */
void pp_ctx_errloc(const pp_ctx *ctx, const char **file, long *line, long *col);
void pp_ctx_clear_error(pp_ctx *ctx);
uint64_t pp_ctx_seed(const pp_ctx *ctx);

/* The run's numeric precision (docs/COST_MODEL.md, "Precision"). */
typedef enum pp_precision {
  PP_PREC_MODEL = 0, /* the model's own dtype (plans without "precision") */
  PP_PREC_FP32 = 1,  /* fp32 weights, gradients, activations */
  PP_PREC_FP16 = 2,  /* mixed: fp16 compute, fp32 master weights */
  PP_PREC_BF16 = 3   /* mixed: bf16 compute, fp32 master weights */
} pp_precision;

/** \brief "model", "fp32", "fp16", "bf16"; NULL for an unknown value. */
const char *pp_precision_name(pp_precision p);
pp_status pp_precision_parse(const char *name, pp_precision *out);
/** \brief Bytes of one element in precision p (4, 2, 2; 0 for MODEL). */
int32_t pp_precision_bytes(pp_precision p);

/* How the model's convolution tensors are laid out in memory, PyTorch's
** torch.memory_format (docs/COST_MODEL.md, "Roofline"): cuDNN's
** tensor-core kernels work in NHWC, so on NCHW ("contiguous", PyTorch's
** default) tensors it transposes every operand in and every result out. */
typedef enum pp_memory_format {
  PP_MF_CHANNELS_LAST = 0, /* NHWC: no transposes (default) */
  PP_MF_CONTIGUOUS = 1     /* NCHW: tensor-core convolutions transpose */
} pp_memory_format;
/** \brief "channels_last", "contiguous"; NULL for an unknown value. */
const char *pp_memory_format_name(pp_memory_format f);
pp_status pp_memory_format_parse(const char *name, pp_memory_format *out);

/* ====================================================================
** Model: an operator DAG (a layer chain is a DAG whose edges form a
** path in listed order).
**
** An operator v has, at the model's reference micro-batch size on the
** reference device type with tensor-parallel degree 1: forward,
** backward and optimizer-update time, the bytes of its parameters as
** trained, the bytes of its output tensor (what leaves it on every edge
** unless the edge says otherwise) and the bytes it keeps for its
** backward pass.  Optional profile tables give times for other
** (device type, tensor-parallel degree, micro-batch size) points, and
** size tables give sizes per tensor-parallel degree.
*/
typedef struct pp_model pp_model;
typedef struct pp_model_builder pp_model_builder;

/** \brief One operator as given to the builder. */
typedef struct pp_op_desc {
  const char *name;    /* required, unique in the model */
  const char *kind;    /* optional free-form class ("transformer_layer") */
  double fwd_ms;       /* forward time, >= 0 */
  double bwd_ms;       /* backward time, >= 0 */
  double update_ms;    /* optimizer step for its parameters; default 0 */
  double fwd_flops;    /* optional FLOPs of the forward pass; default 0 */
  double bwd_flops;    /* optional FLOPs of the backward pass; default 0 */
  double fwd_bytes;    /* optional device-memory traffic (bytes read and
                          written) of the forward pass at the reference
                          micro-batch, in the model's dtype; default 0 */
  double bwd_bytes;    /* the same for the backward pass; default 0 */
  int64_t param_bytes; /* parameters as trained (2 per param in fp16) */
  int64_t out_bytes;   /* output tensor at the reference micro-batch */
  int64_t saved_bytes; /* activations kept for the backward pass */
} pp_op_desc;

void pp_op_desc_init(pp_op_desc *d);

/** \brief Start building a model named name (may be NULL: "model").
**
** source names the input in error messages (a file path, "built-in
** gpt2-amp", ...); it may be NULL. */
pp_status pp_model_builder_create(pp_ctx *ctx, const char *name,
                                  const char *source, pp_model_builder **out);
void pp_model_builder_destroy(pp_model_builder *b);

/** \brief The reference micro-batch size (default 1). */
pp_status pp_model_builder_set_micro_batch(pp_model_builder *b, int32_t mbs);
/** \brief The device type the top-level times were measured on (default
** none: any type without its own times scales them by its speed). */
pp_status pp_model_builder_set_reference_type(pp_model_builder *b,
                                              const char *type);
/** \brief The fraction of a device's peak FLOP/s that FLOP counts are
** turned into time with (default 0.5). */
pp_status pp_model_builder_set_efficiency(pp_model_builder *b, double eff);
/** \brief A loss the operators' times do not include (a profile of the
** pipeline's layers that stops before the engine's loss function): the
** device-memory bytes its forward and backward move at the reference
** micro-batch and tp 1, as moved (not converted by the run's precision).
** It runs with the model's last operator and is priced by the roofline
** at the device's memory bandwidth, scaled by micro-batch / reference
** and divided by tp (docs/COST_MODEL.md, "Loss").  Default 0, 0. */
pp_status pp_model_builder_set_loss(pp_model_builder *b, double fwd_bytes,
                                    double bwd_bytes);
/** \brief The model's loss bytes (pp_model_builder_set_loss); 0 if none. */
void pp_model_loss(const pp_model *m, double *fwd_bytes, double *bwd_bytes);
/** \brief Bytes that every forward transfer between pipeline stages
** carries beside the boundary tensor, per micro-batch whatever its size,
** from every tensor-parallel rank, under DeepSpeed (whose PipelineModule
** passes the tuple a layer returns; GPT-2's is the 1 x 1 x S x S
** attention mask, sent as fp16, docs/COST_MODEL.md "Point-to-point").
** Default 0. */
pp_status pp_model_builder_set_pipe_extra(pp_model_builder *b, double bytes);
/** \brief pp_model_builder_set_pipe_extra's bytes; 0 if none. */
double pp_model_pipe_extra(const pp_model *m);
/** \brief The precision the sizes (and times) were profiled in: every
** byte count of the model is in this dtype (default PP_PREC_FP16, the
** meaning of models written before the field existed); the plan's
** precision converts them (docs/COST_MODEL.md, "Precision"). */
pp_status pp_model_builder_set_dtype(pp_model_builder *b, pp_precision dtype);
/** \brief The memory format the run keeps the convolutions' tensors in
** (default PP_MF_CHANNELS_LAST, the meaning of models written before the
** field existed): under PP_MF_CONTIGUOUS every roofline-timed
** convolution on tensor cores adds its transposes. */
pp_status pp_model_builder_set_memory_format(pp_model_builder *b,
                                             pp_memory_format f);
/** \brief A named hyper-parameter kept with the model ("hidden", "seq").
** Informational; readers and writers preserve it. */
pp_status pp_model_builder_set_hyper(pp_model_builder *b, const char *key,
                                     double value);

/** \brief Add an operator; *id (may be NULL) receives its index. */
pp_status pp_model_builder_add_op(pp_model_builder *b, const pp_op_desc *d,
                                  int32_t *id);
/** \brief Find an operator added so far by name; -1 if none. */
int32_t pp_model_builder_find_op(const pp_model_builder *b, const char *name);
/** \brief The name of operator v added so far, or NULL. */
const char *pp_model_builder_op_name(const pp_model_builder *b, int32_t v);
/** \brief Declare that op shares its parameters with op `with' (tied
** embeddings): a stage holding op without `with' keeps a copy. */
pp_status pp_model_builder_tie(pp_model_builder *b, int32_t op, int32_t with);
/** \brief Add an edge from -> to carrying bytes at the reference
** micro-batch; bytes < 0 means the source's out_bytes. */
pp_status pp_model_builder_add_edge(pp_model_builder *b, int32_t from,
                                    int32_t to, int64_t bytes);
/** \brief Profiled times of op on (type, tp, mbs).  type NULL means the
** reference type.  update_ms may be negative: not profiled. */
pp_status pp_model_builder_add_time(pp_model_builder *b, int32_t op,
                                    const char *type, int32_t tp, int32_t mbs,
                                    double fwd_ms, double bwd_ms,
                                    double update_ms);
/** \brief Sizes of op per tensor-parallel rank at degree tp (tp > 1). */
pp_status pp_model_builder_add_tp_sizes(pp_model_builder *b, int32_t op,
                                        int32_t tp, int64_t param_bytes,
                                        int64_t out_bytes, int64_t saved_bytes);

/** \brief Validate and freeze the model; b is destroyed either way.
**
** Checks: at least one operator; edges without cycles (the message
** lists one cycle); no duplicate edge.  Without edges the operators
** form a chain in listed order. */
pp_status pp_model_builder_finish(pp_model_builder *b, pp_model **out);

void pp_model_destroy(pp_model *m);

/** \brief Load a model from a SPEC: a file path (model JSON, or a
** PipeDream graph.txt), else a built-in name (see
** pp_model_builtin_name), else a generator spec
** ("transformer:layers=24,hidden=1024,...").  Documented in
** docs/FORMATS.md. */
pp_status pp_model_load(pp_ctx *ctx, const char *spec, pp_model **out);
/** \brief Parse model JSON from a string; source names it in errors. */
pp_status pp_model_read_json(pp_ctx *ctx, const char *text, size_t len,
                             const char *source, pp_model **out);
/** \brief Parse a PipeDream graph.txt from a string. */
pp_status pp_model_read_pipedream(pp_ctx *ctx, const char *text, size_t len,
                                  const char *source, pp_model **out);

/** \brief The most named symbolic dimensions an ONNX import is given. */
#define PP_ONNX_MAX_SYMS 8
/** \brief How an ONNX model becomes a parplan model (pp_model_read_onnx,
** docs/FORMATS.md "ONNX models"). */
typedef struct pp_onnx_params {
  int32_t batch;      /* the batch dimension (dim 0 of the first graph
                         input): its value when symbolic (0: 1); when the
                         export is static, 0 or that size (another value
                         is an error).  The model's reference micro-batch;
                         default 0 */
  double efficiency;  /* fraction of peak FLOP/s reached; default 0.5 */
  const char *name;   /* model name; NULL: the graph's name */
  pp_precision dtype; /* PP_PREC_MODEL (default): float tensors at the
                         file's element sizes, the model's dtype the float
                         type of most parameter bytes; else every float
                         tensor counted at this dtype's size and the model
                         in this dtype */
  int32_t nsym;       /* values of other symbolic dimensions (dim_param),
                         by name: "seq" = 1024 */
  const char *sym_name[PP_ONNX_MAX_SYMS];
  int64_t sym_value[PP_ONNX_MAX_SYMS];
  pp_memory_format memory_format; /* default PP_MF_CHANNELS_LAST */
} pp_onnx_params;
void pp_onnx_params_init(pp_onnx_params *p);

/** \brief Read an ONNX ModelProto (a .onnx file's bytes) as exported:
** shapes inferred inside the reader, constants and aliases folded, one
** operator per remaining node, edges carrying the tensors between them,
** parameter bytes from the floating-point initializers, FLOPs and memory
** traffic from op_type and shapes (docs/FORMATS.md).
** params may be NULL (defaults). */
pp_status pp_model_read_onnx(pp_ctx *ctx, const void *data, size_t len,
                             const char *source, const pp_onnx_params *params,
                             pp_model **out);
/** \brief pp_model_read_onnx on a file. */
pp_status pp_model_load_onnx(pp_ctx *ctx, const char *path,
                             const pp_onnx_params *params, pp_model **out);
/** \brief The i-th built-in model name, or NULL past the end. */
const char *pp_model_builtin_name(int i);
/** \brief One line about the i-th built-in model, or NULL. */
const char *pp_model_builtin_about(int i);

/** \brief Write the normalized model JSON to path (atomically: a
** temporary file renamed over path), or to f when path is NULL. */
pp_status pp_model_write(pp_ctx *ctx, const pp_model *m, const char *path,
                         FILE *f);

/* Queries.  Indices out of range give 0, NULL or -1. */
const char *pp_model_name(const pp_model *m);
const char *pp_model_source(const pp_model *m);
int32_t pp_model_nop(const pp_model *m);
int32_t pp_model_nedge(const pp_model *m);
int32_t pp_model_micro_batch(const pp_model *m);
/** \brief The dtype the model's sizes were profiled in. */
pp_precision pp_model_dtype(const pp_model *m);
const char *pp_model_reference_type(const pp_model *m); /* NULL: none */
double pp_model_efficiency(const pp_model *m);
pp_memory_format pp_model_memory_format(const pp_model *m);
int32_t pp_model_nhyper(const pp_model *m);
const char *pp_model_hyper(const pp_model *m, int32_t i, double *value);
int32_t pp_model_find_op(const pp_model *m, const char *name);
/** \brief Operator i's reference description (strings owned by m). */
pp_status pp_model_op(const pp_model *m, int32_t i, pp_op_desc *out);
const char *pp_model_op_name(const pp_model *m, int32_t i);
int32_t pp_model_op_tied(const pp_model *m, int32_t i); /* -1: none */
/** \brief Edge e: its endpoints and bytes at the reference micro-batch. */
pp_status pp_model_edge(const pp_model *m, int32_t e, int32_t *from,
                        int32_t *to, int64_t *bytes);
/** \brief The edges leaving (dir 0) or entering (dir 1) op v: *n edge
** indices at *edges (owned by m). */
void pp_model_op_edges(const pp_model *m, int32_t v, int dir,
                       const int32_t **edges, int32_t *n);
/** \brief 1 when the edges were implied (no edges given: a chain). */
int pp_model_edges_implied(const pp_model *m);
/** \brief A topological order: nop indices owned by m.  Among the ready
** operators the smallest index comes first, so the order is
** deterministic and equals the listed order when that is valid. */
const int32_t *pp_model_topo_order(const pp_model *m);
/** \brief 1 when the topological order is the only one. */
int pp_model_topo_unique(const pp_model *m);
/** \brief 1 when the model is a chain: op i feeds op i+1, nothing else. */
int pp_model_is_chain(const pp_model *m);

/* Profile tables. */
int32_t pp_model_ntable(const pp_model *m);
/** \brief Table t's key; *type is NULL for the reference type. */
void pp_model_table_key(const pp_model *m, int32_t t, const char **type,
                        int32_t *tp, int32_t *mbs);
int32_t pp_model_ntp_sizes(const pp_model *m);

/** \brief How a time or size was obtained (bit set; 0 = as given). */
enum {
  PP_EST_SPEED = 1,  /* another type's times divided by relative speed */
  PP_EST_FAMILY = 2, /* times of a type of the same family ("V100-16") */
  PP_EST_TP = 4,     /* scaled from another tensor-parallel degree */
  PP_EST_MBS = 8,    /* scaled linearly from another micro-batch size */
  PP_EST_FLOPS = 16  /* FLOPs over the type's peak times efficiency */
};

/** \brief A device type as the time lookup sees it. */
typedef struct pp_type_key {
  const char *name;        /* NULL: the reference type */
  double speed;            /* relative to the reference type (1) */
  double peak_tflops;      /* 0: unknown */
  double peak_fp32_tflops; /* 0: unknown */
  double mem_gbps;         /* 0: unknown */
  pp_precision precision;  /* the run's; PP_PREC_MODEL: the model's dtype */
  double peak_tf32_tflops; /* dense TF32 tensor peak, what fp32
                              convolutions reach under PyTorch's defaults;
                              0: none (the fp32 peak applies) */
} pp_type_key;

typedef struct pp_op_time {
  double fwd_ms, bwd_ms, update_ms;
  unsigned est; /* PP_EST_* bits; 0 = profiled at exactly this point */
} pp_op_time;

/** \brief Times of op v on a device of type *t, at tensor-parallel
** degree tp and micro-batch size mbs.  The rule (docs/FORMATS.md,
** "Which time applies"): the profile of that exact point (read through
** the line of its series where it has three sizes or more); else the
** same type (then its family) at the nearest profiled tp and mbs,
** scaled; else FLOPs over the type's peak when the model has FLOPs;
** else the reference times divided by the type's speed, scaled. */
pp_status pp_model_op_time(const pp_model *m, int32_t v, const pp_type_key *t,
                           int32_t tp, int32_t mbs, pp_op_time *out);

typedef struct pp_op_sizes {
  double param_bytes, out_bytes, saved_bytes;
  unsigned est; /* PP_EST_TP and/or PP_EST_MBS */
} pp_op_sizes;
/** \brief The times of op v as profiled at exactly (type, tp, mbs),
** before pp_model_op_time reads the profile through its line
** (docs/FORMATS.md, "Which time applies"): 1 and *fwd_ms, *bwd_ms when
** the model holds that point (type NULL: the reference type, whose tp-1
** point at the model's micro-batch is the operator's own fields), else 0.
** Either pointer may be NULL. */
int pp_model_profile_point(const pp_model *m, int32_t v, const char *type,
                           int32_t tp, int32_t mbs, double *fwd_ms,
                           double *bwd_ms);

/** \brief Sizes of op v on one tensor-parallel rank of degree tp at
** micro-batch mbs: a size table when given, else parameters and saved
** bytes divided by tp and the output kept whole; activations scale
** linearly with mbs. */
pp_status pp_model_op_sizes(const pp_model *m, int32_t v, int32_t tp,
                            int32_t mbs, pp_op_sizes *out);

/** \brief Whole-model figures (reference type, tp 1, reference mbs). */
typedef struct pp_model_stats {
  int32_t nop, nedge;
  int32_t nsource, nsink;
  int32_t depth;   /* operators on a longest path */
  int32_t width;   /* most operators at one depth (an antichain) */
  int32_t max_cut; /* most tensors crossing one cut of the topo order */
  int32_t nlayer;  /* layers of the chain view */
  double fwd_ms, bwd_ms, update_ms;
  double max_op_ms;   /* the longest fwd+bwd of one operator */
  double param_bytes; /* each tied group counted once */
  double out_bytes, saved_bytes;
  double fwd_flops, bwd_flops;
  double fwd_bytes, bwd_bytes; /* memory traffic (roofline) */
} pp_model_stats;

pp_status pp_model_stats_get(pp_ctx *ctx, const pp_model *m,
                             pp_model_stats *out);

/** \brief The layer-level (chain) view of a DAG.
**
** Operators are laid out in the model's topological order and cut
** where the tensors crossing the cut all come from one operator (a
** "single-tensor cut"); each maximal run between such cuts becomes one
** layer, whose costs are the sums of its operators.  The chain edge
** after a layer carries the bytes crossing that cut.  With
** every_op = 1 every operator is its own layer and every position of
** the order is a cut (the edge carries all bytes crossing it).  The new
** model remembers which original operators each layer holds:
** pp_model_layer_members(). */
pp_status pp_model_chain_view(pp_ctx *ctx, const pp_model *m, int every_op,
                              pp_model **out);
/** \brief For a model made by pp_model_chain_view: the original
** operators of layer l, else NULL (and *n = 0). */
const int32_t *pp_model_layer_members(const pp_model *m, int32_t l, int32_t *n);

/** \brief Write a description (text, or JSON when json != 0) to f. */
pp_status pp_model_describe(pp_ctx *ctx, const pp_model *m, int json, FILE *f);

/* ====================================================================
** Cluster: device types, devices, and the pairwise bandwidth, given as
** a matrix or derived from a link graph (switches allowed).
*/
typedef struct pp_cluster pp_cluster;
typedef struct pp_cluster_builder pp_cluster_builder;

typedef struct pp_device_type_desc {
  const char *name;        /* required, unique; matched against profiles */
  double memory_gib;       /* required, > 0 */
  double speed;            /* relative to the model's reference type; 1 */
  double peak_tflops;      /* dense fp16/bf16 peak; 0 = unknown */
  double peak_fp32_tflops; /* fp32 peak without tensor cores (what fp32
                              runs reach: PyTorch keeps TF32 off for
                              matmuls); 0 = unknown */
  double mem_gbps;         /* device memory bandwidth, GB/s; 0 = unknown */
  double peak_tf32_tflops; /* dense TF32 tensor peak: fp32 convolutions
                              take it (PyTorch's cuDNN default); 0 =
                              none */
} pp_device_type_desc;
void pp_device_type_desc_init(pp_device_type_desc *d);

typedef struct pp_device_desc {
  const char *name;  /* required, unique among devices and switches */
  const char *type;  /* required, a declared type */
  int32_t node;      /* required, >= 0: the machine it is in */
  const char *host;  /* optional host name (launch scripts) */
  int32_t local_gpu; /* optional GPU index on its host; -1 = unknown */
} pp_device_desc;
void pp_device_desc_init(pp_device_desc *d);

/** \brief How a link graph gives the pairwise bandwidth. */
typedef enum pp_routing {
  PP_ROUTE_WIDEST = 0, /* bottleneck of the widest path */
  PP_ROUTE_HOPS = 1    /* widest shortest-hop path, divided by its hops */
} pp_routing;

pp_status pp_cluster_builder_create(pp_ctx *ctx, const char *name,
                                    const char *source,
                                    pp_cluster_builder **out);
void pp_cluster_builder_destroy(pp_cluster_builder *b);
pp_status pp_cluster_builder_add_type(pp_cluster_builder *b,
                                      const pp_device_type_desc *d);
pp_status pp_cluster_builder_add_device(pp_cluster_builder *b,
                                        const pp_device_desc *d, int32_t *id);
/** \brief Declare a switch (a link-graph vertex that is not a device). */
pp_status pp_cluster_builder_add_switch(pp_cluster_builder *b,
                                        const char *name);
/** \brief A link between two devices or switches, by name, of GBps per
** direction; count > 1 bonds count equal links (NVLink pairs). */
pp_status pp_cluster_builder_add_link(pp_cluster_builder *b, const char *a,
                                      const char *c, double gbps,
                                      int32_t count);
pp_status pp_cluster_builder_set_routing(pp_cluster_builder *b, pp_routing r);
/** \brief The full ndev x ndev bandwidth matrix, row-major, GB/s.  The
** diagonal is ignored.  Call after the last device is added. */
pp_status pp_cluster_builder_set_bandwidth(pp_cluster_builder *b,
                                           const double *gbps, int32_t n);
pp_status pp_cluster_builder_set_latency(pp_cluster_builder *b, double us);
/** \brief Validate and freeze; b is destroyed either way.  Exactly one
** of a matrix or a link graph must be given (none is accepted for a
** single device). */
pp_status pp_cluster_builder_finish(pp_cluster_builder *b, pp_cluster **out);

void pp_cluster_destroy(pp_cluster *c);

/** \brief Load a cluster from a SPEC: a file path (cluster JSON), else a
** built-in name or generator spec (pp_cluster_generator_name,
** docs/FORMATS.md). */
pp_status pp_cluster_load(pp_ctx *ctx, const char *spec, pp_cluster **out);
pp_status pp_cluster_read_json(pp_ctx *ctx, const char *text, size_t len,
                               const char *source, pp_cluster **out);
/** \brief The i-th generator or built-in name, or NULL past the end. */
const char *pp_cluster_generator_name(int i);
/** \brief Its one-line syntax and meaning, or NULL. */
const char *pp_cluster_generator_about(int i);

/** \brief Write the normalized cluster JSON (a link graph stays a link
** graph) to path atomically, or to f when path is NULL. */
pp_status pp_cluster_write(pp_ctx *ctx, const pp_cluster *c, const char *path,
                           FILE *f);

/** \brief How a single machine's topology dump (nvidia-smi topo -m, NCCL
** topology XML) becomes a cluster: that box repeated `nodes' times, the
** boxes joined by a network of inter_gbps per GPU.  Bandwidths are GB/s
** per direction; 0 means the default given with each field. */
typedef struct pp_topo_params {
  const char *gpu;    /* a known GPU type (V100, T4, A100-40, A100-80,
                         H100, ...: docs/FORMATS.md) or a product name as
                         nvidia-smi prints it; NULL: from the dump (NCCL
                         XML's sm or gcn), from gpus (nvidia-smi), else
                         an error */
  int32_t nodes;      /* copies of the box; default 1 */
  double inter_gbps;  /* between boxes, per GPU; default 12.5 */
  double nvlink_gbps; /* per NVLink or xGMI link; default 25 (nvidia-smi),
                         the type's xGMI figure (rocm-smi), NCCL's and
                         RCCL's per-architecture figure (XML) */
  double pcie_gbps;   /* PIX, PXB, PHB paths (nvidia-smi), PCIE
                         (rocm-smi); default 12 */
  double sys_gbps;    /* NODE, SYS paths (nvidia-smi); default 10 */
  double latency_us;  /* per message; default 0 */
  double nic_gbits;   /* speed of each NIC the nvidia-smi file lists, Gb/s;
                         0: unknown (NCCL XML gives its own) */
  const char *gpus;   /* nvidia-smi: a file with the output of
                         `nvidia-smi -q' or `nvidia-smi --query-gpu=name,
                         memory.total --format=csv', naming the GPUs */
  double mem_gib;     /* overrides of the GPU type's catalog figures; 0 = */
  double speed;       /* keep: memory (GiB), speed, dense fp16/bf16 peak, */
  double peak_tflops; /* fp32 peak (TFLOP/s) and memory bandwidth (GB/s) */
  double peak_fp32_tflops;
  double mem_gbps;
  double peak_tf32_tflops; /* TF32 tensor peak (TFLOP/s); 0 = keep */
} pp_topo_params;
void pp_topo_params_init(pp_topo_params *p);

/** \brief Read `nvidia-smi topo -m' output (tabs or spaces, CRLF, shell
** prompts around it; GPU and NIC columns and rows, the NIC legend; the
** affinity columns are ignored).  The GPU type is p->gpu or comes from
** the p->gpus file; without either it is an error. */
pp_status pp_cluster_read_nvsmi(pp_ctx *ctx, const char *text, size_t len,
                                const char *source, const pp_topo_params *p,
                                pp_cluster **out);
/** \brief Read an NCCL or RCCL topology dump (NCCL_TOPO_DUMP_FILE):
** GPUs, their NVLinks or xGMI links (to GPUs or NVSwitches), the PCIe
** tree, the CPUs and the NICs; the bandwidth of a pair is that of its
** widest path, the inter-node bandwidth that of the NICs. */
pp_status pp_cluster_read_nccl_xml(pp_ctx *ctx, const char *text, size_t len,
                                   const char *source, const pp_topo_params *p,
                                   pp_cluster **out);
/** \brief Read `rocm-smi --showtopo' output (its link type and hops
** tables: XGMI or PCIE between each pair of GPUs). */
pp_status pp_cluster_read_rocm_smi(pp_ctx *ctx, const char *text, size_t len,
                                   const char *source, const pp_topo_params *p,
                                   pp_cluster **out);

/** \brief One row of an nccl-tests table (pp_nccl_tests_read). */
typedef struct pp_nccl_row {
  double bytes;         /* the "size" column, bytes */
  double time_us;       /* out-of-place time, microseconds */
  double algbw_gbps;    /* out-of-place algorithm bandwidth, GB/s (1e9 B/s) */
  double busbw_gbps;    /* out-of-place bus bandwidth, GB/s */
  double in_busbw_gbps; /* in-place bus bandwidth; NaN if absent or N/A */
} pp_nccl_row;

/** \brief What an nccl-tests run printed: the collective, the ranks and
** the table.  Owned by the caller; free with pp_nccl_tests_free. */
typedef struct pp_nccl_tests {
  char collective[32]; /* "all_reduce", "sendrecv", "all_gather",
                          "reduce_scatter", "broadcast", "alltoall", ... as
                          the binary's name or header says; "" unknown */
  int32_t nranks;      /* ranks listed in the "# Using devices" block; 0
                          when the block is absent */
  int32_t nrows;
  pp_nccl_row *rows;     /* nrows rows, in the order printed */
  double avg_busbw_gbps; /* the "# Avg bus bandwidth" line; NaN if absent */
} pp_nccl_tests;
/** \brief Read the text NVIDIA's nccl-tests print (all_reduce_perf,
** sendrecv_perf, ...; the versions of 2019 on, "error" or "#wrong"
** columns), NCCL log lines and launcher noise around it skipped
** (docs/FORMATS.md, "nccl-tests output").  On success *out holds at least
** one row; on error it is zeroed and the context names the source, the
** line and what is wrong. */
pp_status pp_nccl_tests_read(pp_ctx *ctx, const char *text, size_t len,
                             const char *source, pp_nccl_tests *out);
/** \brief pp_nccl_tests_read on the file at path. */
pp_status pp_nccl_tests_load(pp_ctx *ctx, const char *path, pp_nccl_tests *out);
/** \brief Free the rows of t (read with ctx) and zero it; NULL is a no-op. */
void pp_nccl_tests_free(pp_ctx *ctx, pp_nccl_tests *t);

const char *pp_cluster_name(const pp_cluster *c);
const char *pp_cluster_source(const pp_cluster *c);
int32_t pp_cluster_ndev(const pp_cluster *c);
int32_t pp_cluster_ntype(const pp_cluster *c);
int32_t pp_cluster_nnode(const pp_cluster *c); /* distinct node ids */
int32_t pp_cluster_find_device(const pp_cluster *c, const char *name);
int32_t pp_cluster_find_type(const pp_cluster *c, const char *name);
pp_status pp_cluster_type(const pp_cluster *c, int32_t t,
                          pp_device_type_desc *out);
/** \brief Memory of type t in bytes (memory_gib * 2^30, rounded down). */
int64_t pp_cluster_type_memory(const pp_cluster *c, int32_t t);
pp_status pp_cluster_device(const pp_cluster *c, int32_t d,
                            pp_device_desc *out);
int32_t pp_cluster_device_type(const pp_cluster *c, int32_t d);
int32_t pp_cluster_device_node(const pp_cluster *c, int32_t d);
/** \brief The lookup key of device d's type, for pp_model_op_time. */
pp_type_key pp_cluster_type_key(const pp_cluster *c, int32_t d);
/** \brief The lookup key of device d's type for model m: the type's
** name and peak, and its speed relative to m's reference type.  Cluster
** speeds share one base (the GPU catalog's is V100 = 1); the reference
** type's speed comes from the cluster when it declares that type, else
** from the built-in GPU catalog, else it is taken as 1. */
pp_type_key pp_model_type_key(const pp_model *m, const pp_cluster *c,
                              int32_t d);
/** \brief Bandwidth between devices i != j in GB/s (0 when i == j). */
double pp_cluster_bandwidth(const pp_cluster *c, int32_t i, int32_t j);
/** \brief The ndev x ndev matrix, row-major, owned by c; diagonal 0. */
const double *pp_cluster_bandwidth_matrix(const pp_cluster *c);
double pp_cluster_latency(const pp_cluster *c);
/** \brief Transfer time of bytes between devices i and j, in ms:
** latency/1000 + bytes / (B(i,j) * 1e6); 0 for i == j or bytes == 0. */
double pp_cluster_comm_ms(const pp_cluster *c, int32_t i, int32_t j,
                          double bytes);
/* The link graph, when the cluster has one (else 0 links). */
int32_t pp_cluster_nswitch(const pp_cluster *c);
const char *pp_cluster_switch_name(const pp_cluster *c, int32_t s);
int32_t pp_cluster_nlink(const pp_cluster *c);
/** \brief Link l between vertices a and b: vertices 0..ndev-1 are the
** devices, ndev.. the switches. */
pp_status pp_cluster_link(const pp_cluster *c, int32_t l, int32_t *a,
                          int32_t *b, double *gbps, int32_t *count);
pp_routing pp_cluster_routing(const pp_cluster *c);

/** \brief Distinct off-diagonal bandwidths and how many ordered device
** pairs have each (sorted by bandwidth, highest first). */
typedef struct pp_bw_class {
  double gbps;
  int64_t npairs;
  int64_t nintra; /* of which both devices are in one node */
} pp_bw_class;
/** \brief Fill up to cap classes; *n receives the total number of
** distinct values (may exceed cap), or -1 when there are more than
** 65536 (a random cluster), in which case nothing is filled. */
pp_status pp_cluster_bw_classes(pp_ctx *ctx, const pp_cluster *c,
                                pp_bw_class *classes, int32_t cap, int32_t *n);

pp_status pp_cluster_describe(pp_ctx *ctx, const pp_cluster *c, int json,
                              FILE *f);

/* ====================================================================
** Plan: how one model is trained on one cluster.  Stages are lists of
** operators; every stage has one or more replicas, and every replica
** lists the devices of its tensor-parallel group (its stage's tp of
** them, rank order).  Every stage has its own tp degree (the plan's tp
** unless set): a stage of slow devices may split its layers over more
** of them.  Replica counts may differ per stage (PipeDream): global
** micro-batch m goes to replica m mod R_s of stage s.  A device may hold
** several stages (MadPipe's special processor).
*/
typedef struct pp_plan pp_plan;
typedef struct pp_plan_builder pp_plan_builder;

typedef enum pp_schedule {
  PP_SCHED_GPIPE = 0,    /* all forwards, then all backwards */
  PP_SCHED_1F1B = 1,     /* PipeDream-flush / DAPPLE */
  PP_SCHED_1F1B_STAR = 2 /* MadPipe's minimum-memory 1F1B* ([MadPipe] 4.1) */
} pp_schedule;

typedef enum pp_optimizer {
  PP_OPT_SGD = 0,        /* weights + gradients: 2 x param bytes */
  PP_OPT_ADAM = 1,       /* weights, gradients, m, v: 4 x */
  PP_OPT_ADAM_MIXED = 2, /* fp16 w, g + fp32 master, m, v: 8 x */
  PP_OPT_2BW = 3         /* two weight versions + gradients: 3 x */
} pp_optimizer;

/* The engine that runs the plan: what it keeps in memory, how it
** reduces gradients and moves activations (docs/COST_MODEL.md,
** "Engines"). */
typedef enum pp_engine {
  PP_ENGINE_GENERIC = 0,   /* the engine-free model (plans without "engine") */
  PP_ENGINE_DEEPSPEED = 1, /* DeepSpeed PipelineEngine / DeepSpeedEngine */
  PP_ENGINE_MEGATRON = 2,  /* Megatron-LM (core) */
  PP_ENGINE_TORCH = 3      /* torch.distributed.pipelining + DDP / FSDP2 */
} pp_engine;

/** \brief "generic", "deepspeed", "megatron", "torch"; NULL if unknown. */
const char *pp_engine_name(pp_engine e);
pp_status pp_engine_parse(const char *name, pp_engine *out);

/** \brief "gpipe", "1f1b", "1f1b-star"; NULL for an unknown value. */
const char *pp_schedule_name(pp_schedule s);
/** \brief Parse a schedule name; PP_EINVAL when unknown. */
pp_status pp_schedule_parse(const char *name, pp_schedule *out);
/** \brief "sgd", "adam", "adam-mixed", "2bw"; NULL for an unknown value. */
const char *pp_optimizer_name(pp_optimizer o);
pp_status pp_optimizer_parse(const char *name, pp_optimizer *out);
/** \brief Bytes of model state per parameter byte (2, 4, 8, 3). */
double pp_optimizer_factor(pp_optimizer o);

typedef struct pp_plan_params {
  int64_t global_batch;   /* samples per iteration; required, > 0 */
  int32_t micro_batch;    /* samples per micro-batch; default 1 */
  int32_t tp;             /* tensor-parallel degree of every stage that
                             does not set its own; default 1.  A
                             finished plan's is its stage 0's */
  pp_schedule schedule;   /* default PP_SCHED_1F1B */
  int recompute;          /* activation recomputation; default 0 */
  pp_optimizer optimizer; /* default PP_OPT_ADAM_MIXED */
  double period_ms;       /* 1F1B*'s target period; 0 (default): the
                             period of the plan's bottleneck resource */
  int32_t micro_batches;  /* optional (0): when given, must equal
                             global_batch / (micro_batch * R_s) */
  pp_precision precision; /* default PP_PREC_MODEL: the model's dtype */
  pp_engine engine;       /* default PP_ENGINE_GENERIC */
  int32_t zero;           /* 0-3: ZeRO stage (Megatron's distributed
                             optimizer is 1, FSDP 3); default 0 */
} pp_plan_params;
void pp_plan_params_init(pp_plan_params *p);

/** \brief Start a plan; source names it in errors (may be NULL). */
pp_status pp_plan_builder_create(pp_ctx *ctx, const pp_plan_params *p,
                                 const char *source, pp_plan_builder **out);
void pp_plan_builder_destroy(pp_plan_builder *b);
/** \brief Append a stage holding nops operators; *id gets its index. */
pp_status pp_plan_builder_add_stage(pp_plan_builder *b, const int32_t *ops,
                                    int32_t nops, int32_t *id);
/** \brief Give stage s its own tensor-parallel degree tp (1..
** PP_MAX_DEVICES), before any replica of s is added. */
pp_status pp_plan_builder_set_stage_tp(pp_plan_builder *b, int32_t s,
                                       int32_t tp);
/** \brief Append a replica to stage s: devs holds the stage's tp device
** indices. */
pp_status pp_plan_builder_add_replica(pp_plan_builder *b, int32_t s,
                                      const int32_t *devs);
/** \brief Fix the in-flight count of stage s (how many micro-batches'
** activations each replica keeps; a schedule's own count otherwise):
** the counts of a periodic pattern (MadPipe phase 2).  n >= 1; a count
** above the stage's micro-batches is capped, and counts are raised
** where replica counts differ until no order can block. */
pp_status pp_plan_builder_set_in_flight(pp_plan_builder *b, int32_t s,
                                        int32_t n);
/** \brief Give stage s its place in a periodic pattern of period
** period_ms (which the plan must set): micro-batch j runs its forward at
** j x period + sigma[0] and its backward at j x period + sigma[1]; the
** transfers to the next stage start at j x period + sigma[2]
** (activation) and sigma[3] (gradient back), NaN when there is none
** (MadPipe phase 2).  When every stage has one (and one replica), the
** simulator runs the pattern: nothing starts before its time. */
pp_status pp_plan_builder_set_pattern(pp_plan_builder *b, int32_t s,
                                      const double sigma[4]);
/** \brief Freeze; b is destroyed either way.  Checks what needs no
** model or cluster (every stage has operators and replicas, no device
** twice in one stage, the batch divides); pp_plan_check does the rest. */
pp_status pp_plan_builder_finish(pp_plan_builder *b, pp_plan **out);
void pp_plan_destroy(pp_plan *p);

/** \brief Check a plan against a model and a cluster: operators and
** devices exist, every operator is in exactly one stage, no edge goes
** from a later stage to an earlier one, the global batch is divided by
** every stage's replicas times the micro-batch size.  The message names
** the stage, replica, operator or device. */
pp_status pp_plan_check(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                        const pp_cluster *c);

/** \brief Read plan JSON (docs/FORMATS.md, "Plan JSON").  Operators and
** devices are 0-based indices, or names when m or c is given (either may
** be NULL).  Does not call pp_plan_check. */
pp_status pp_plan_read_json(pp_ctx *ctx, const char *text, size_t len,
                            const char *source, const pp_model *m,
                            const pp_cluster *c, pp_plan **out);
pp_status pp_plan_load(pp_ctx *ctx, const char *path, const pp_model *m,
                       const pp_cluster *c, pp_plan **out);
/** \brief Write the normalized plan JSON (indices) to path atomically, or
** to f when path is NULL. */
pp_status pp_plan_write(pp_ctx *ctx, const pp_plan *p, const char *path,
                        FILE *f);

void pp_plan_get_params(const pp_plan *p, pp_plan_params *out);
const char *pp_plan_source(const pp_plan *p);
int32_t pp_plan_nstage(const pp_plan *p);
/** \brief Stage s's operators: *n indices owned by p. */
const int32_t *pp_plan_stage_ops(const pp_plan *p, int32_t s, int32_t *n);
int32_t pp_plan_nreplica(const pp_plan *p, int32_t s);
/** \brief Stage s's tensor-parallel degree (0 out of range). */
int32_t pp_plan_stage_tp(const pp_plan *p, int32_t s);
/** \brief The tp degree every stage has, or 0 when stages differ. */
int32_t pp_plan_uniform_tp(const pp_plan *p);
/** \brief The tp devices of replica r of stage s, owned by p. */
const int32_t *pp_plan_replica(const pp_plan *p, int32_t s, int32_t r);
/** \brief Micro-batches each replica of stage s runs per iteration. */
int64_t pp_plan_stage_micro_batches(const pp_plan *p, int32_t s);
/** \brief The in-flight count fixed for stage s, or 0 (the schedule's). */
int32_t pp_plan_stage_in_flight(const pp_plan *p, int32_t s);
/** \brief 1 and the 4 pattern offsets of stage s when it has them. */
int pp_plan_stage_pattern(const pp_plan *p, int32_t s, double sigma[4]);

/* ====================================================================
** Cost model: stage compute, transfers, allreduce, memory, an analytic
** iteration time and a lower bound (docs/DESIGN.md, "Units and the cost
** model"; docs/COST_MODEL.md gives every formula).
*/
typedef enum pp_cost_kind {
  PP_COST_PARPLAN = 0, /* ours */
  PP_COST_AMP = 1      /* AMP's conventions (data/amp/COST_MODEL.md) */
} pp_cost_kind;

typedef enum pp_allreduce {
  PP_AR_AUTO = 0, /* the faster of ring and hierarchical */
  PP_AR_RING = 1, /* one ring in the plan's replica order */
  PP_AR_HIER = 2  /* intra-node reduce-scatter, inter-node rings,
                     intra-node all-gather; a ring when it does not apply */
} pp_allreduce;

typedef enum pp_sim_network {
  PP_NET_CHANNELS = 0, /* a FIFO channel per directed device pair */
  PP_NET_LINKS = 1     /* transfers sharing a physical link share it */
} pp_sim_network;

/* ---- calibration ------------------------------------------------------ */

/** \brief What measured runs taught the cost model about one device type
** under one engine and precision (docs/COST_MODEL.md, "Calibration").
** A NaN value is not set (the cost model's default applies); an sd of 0
** means not fitted. */
typedef struct pp_calib_entry {
  const char *type;       /* device type name, as the cluster names it */
  pp_engine engine;       /* the engine the runs used */
  pp_precision precision; /* fp32, fp16 or bf16 */
  double runtime_bytes;   /* fixed runtime memory per device */
  double slack;           /* allocator's reserve, share of the live peak */
  double compute_scale;   /* multiplies forward, backward and recompute */
  double step_ms;         /* fixed cost per micro-batch and stage replica,
                             with the forward */
  double net_scale;       /* delivered share of the bandwidth between
                             devices on different nodes */
  double mbs_exponent;    /* compute further x (micro-batch / the model's
                             reference micro-batch) ^ this: below 0, larger
                             micro-batches run more efficiently than the
                             profile says */
  double tp_exponent;     /* compute further x tp ^ this: above 0, a
                             tensor-parallel rank is slower than its
                             profile or split says */
  double intra_scale;     /* delivered share of the bandwidth between
                             devices of one node */
  double runtime_sd, slack_sd, compute_sd, step_sd, net_sd, mbs_sd, tp_sd,
      intra_sd;
  int32_t memory_runs, time_runs; /* runs each part was fitted from */
  int32_t link_runs;              /* nccl-tests measurements in net_scale */
  double time_rel_sd;   /* relative spread of the fitted time residuals */
  double memory_rel_sd; /* the same for memory */
} pp_calib_entry;
void pp_calib_entry_init(pp_calib_entry *e);

typedef struct pp_calibration pp_calibration;
pp_status pp_calibration_create(pp_ctx *ctx, pp_calibration **out);
void pp_calibration_destroy(pp_calibration *c);
/** \brief Add an entry (copied); PP_EINPUT for a bad value or a second
** entry of the same key. */
pp_status pp_calibration_add(pp_calibration *c, const pp_calib_entry *e);
int32_t pp_calibration_count(const pp_calibration *c);
pp_status pp_calibration_get(const pp_calibration *c, int32_t i,
                             pp_calib_entry *out);
/** \brief The entry of (type, engine, precision); NULL if none. */
const pp_calib_entry *pp_calibration_find(const pp_calibration *c,
                                          const char *type, pp_engine engine,
                                          pp_precision precision);
/** \brief Read a calibration JSON (docs/FORMATS.md, "Calibration"). */
pp_status pp_calibration_read_json(pp_ctx *ctx, const char *text, size_t len,
                                   const char *source, pp_calibration **out);
pp_status pp_calibration_load(pp_ctx *ctx, const char *path,
                              pp_calibration **out);
/** \brief Write it (atomically to path, or to f when path is NULL). */
pp_status pp_calibration_write(pp_ctx *ctx, const pp_calibration *c,
                               const char *path, FILE *f);

typedef struct pp_cost_params {
  pp_cost_kind kind;      /* default PP_COST_PARPLAN */
  pp_allreduce allreduce; /* default PP_AR_AUTO */
  int64_t reserve_bytes;  /* per device (CUDA context, workspace); 0 */
  pp_sim_network network; /* simulator only; default PP_NET_CHANNELS */
  int record;             /* simulator: keep every event (trace, Gantt,
                             critical path); default 1 */
  const pp_calibration *calibration; /* NULL (default): none; borrowed */
} pp_cost_params;
void pp_cost_params_init(pp_cost_params *p);

/** \brief One measured run for pp_calibrate: what ran and what was seen. */
typedef struct pp_run_record {
  const char *name; /* for messages; may be NULL */
  const pp_plan *plan;
  const pp_model *model;
  const pp_cluster *cluster;
  double iteration_ms;      /* measured; NaN or <= 0: not measured */
  double peak_memory_bytes; /* nvidia-smi's maximum over the devices;
                               NaN or <= 0: not measured */
  int failed;               /* 0 finished, 1 out of memory, 2 time-out */
  /* Or a measurement of the links (plan and model NULL): the largest
  ** bus bandwidth an nccl-tests table shows (pp_nccl_tests_read), of
  ** all_reduce over devices[0..ndevices-1] of cluster in ring order
  ** (link 0), or of sendrecv between devices[0] and devices[1] (link
  ** 1).  It calibrates the delivered share of the inter-node bandwidth
  ** of the devices' type. */
  double busbw_gbps;
  const int32_t *devices;
  int32_t ndevices;
  int link;
} pp_run_record;

typedef struct pp_calibrate_params {
  pp_cost_params cost; /* how runs are priced (allreduce, reserve) */
} pp_calibrate_params;
void pp_calibrate_params_init(pp_calibrate_params *p);

/** \brief Fit the cost model's free parameters to measured runs
** (docs/COST_MODEL.md, "Calibration"): one entry per device type, engine
** and precision of the runs, with the fitted values, their standard
** deviations and the runs behind them.  A run whose devices are of
** several types is not fitted.  p may be NULL (defaults). */
pp_status pp_calibrate(pp_ctx *ctx, const pp_run_record *runs, int32_t n,
                       const pp_calibrate_params *p, pp_calibration **out);

/** \brief What a training log says (pp_log_read): NaN or 0 where it says
** nothing.  The format is recognised from the text itself
** (docs/FORMATS.md, "Training logs"): Megatron-LM's training log,
** DeepSpeed's, or nvidia-smi --query-gpu=memory.used CSV samples. */
typedef struct pp_log_summary {
  const char *format;       /* "megatron", "deepspeed" or "nvidia-smi"
                               (static strings) */
  double iteration_ms;      /* the median of the iteration times reported
                               after the warm-up (the first step reported,
                               kept when it is the only one); NaN: none */
  int32_t iterations;       /* how many iteration-time reports were read */
  double peak_memory_bytes; /* the largest memory figure of any rank or
                               GPU: what the allocator reserved (Megatron's
                               max reserved, DeepSpeed's Max_CA or CA), or
                               what nvidia-smi saw used; NaN: none */
  int failed;               /* 1: the log holds a CUDA out-of-memory
                               error, which ends a run; 0 otherwise */
} pp_log_summary;
/** \brief Read a training log's text (source names it in messages; may
** be NULL).  PP_EPARSE when no known format is found or a figure of a
** recognised line does not parse (the message names the line). */
pp_status pp_log_read(pp_ctx *ctx, const char *text, size_t len,
                      const char *source, pp_log_summary *out);
pp_status pp_log_load(pp_ctx *ctx, const char *path, pp_log_summary *out);

/** \brief Measured runs read from a RUNS.json (docs/FORMATS.md, "Runs"):
** the records with their plans, models and clusters, all owned here. */
typedef struct pp_runs pp_runs;
pp_status pp_runs_read_json(pp_ctx *ctx, const char *text, size_t len,
                            const char *source, pp_runs **out);
pp_status pp_runs_load(pp_ctx *ctx, const char *path, pp_runs **out);
int32_t pp_runs_count(const pp_runs *r);
/** \brief The records, pp_runs_count of them, owned by r. */
const pp_run_record *pp_runs_records(const pp_runs *r);
void pp_runs_destroy(pp_runs *r);
/** \brief "parplan", "amp"; NULL for an unknown value. */
const char *pp_cost_kind_name(pp_cost_kind k);
/** \brief "auto", "ring", "hier"; NULL for an unknown value. */
const char *pp_allreduce_name(pp_allreduce a);
/** \brief "channels", "links"; NULL for an unknown value. */
const char *pp_sim_network_name(pp_sim_network n);

typedef struct pp_eval pp_eval;

/** \brief Check p against m and c, then price it analytically. */
pp_status pp_evaluate(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                      const pp_cluster *c, const pp_cost_params *cp,
                      pp_eval **out);
void pp_eval_destroy(pp_eval *e);

typedef struct pp_eval_summary {
  double iteration_ms;   /* analytic estimate of one iteration */
  double lower_bound_ms; /* no plan at this tp, micro-batch and
                            recomputation setting can be faster */
  double steady_ms;      /* (micro-batches - 1) x the bottleneck */
  double fill_ms;        /* one micro-batch through every stage */
  double p2p_ms;         /* transfers on the fill path, both ways */
  double allreduce_ms;   /* the slowest stage's gradient allreduce */
  double update_ms;      /* the slowest optimizer step */
  double throughput;     /* samples per second */
  int32_t bottleneck;    /* the stage whose load sets steady_ms, or -1
                            when a transfer channel does */
  int fits;              /* every device within its capacity */
  int32_t worst_device;  /* the device with the highest memory share */
  double margin_bytes;   /* capacity - total on the device with the least
                            room: > 0 spare, < 0 missing */
  unsigned est;          /* PP_EST_* bits of every time used */
  double time_spread;    /* relative standard deviation of iteration_ms:
                            the calibration's where it timed every device
                            type of the plan, else the default
                            (docs/COST_MODEL.md, "Calibration") */
  int calibrated;        /* time_spread comes from a calibration */
} pp_eval_summary;
pp_status pp_eval_get_summary(const pp_eval *e, pp_eval_summary *out);

typedef struct pp_stage_cost {
  double compute_ms; /* one micro-batch on the slowest replica:
                        fwd + bwd (+ fwd again with recomputation) */
  double fwd_ms, bwd_ms, recompute_ms; /* of that replica */
  int32_t straggler;                   /* that replica */
  double send_ms;      /* activations to later stages, per micro-batch */
  double recv_ms;      /* gradients back to earlier stages, per mb */
  double allreduce_ms; /* its gradient allreduce (0 with one replica) */
  int hierarchical;    /* 1 when the allreduce is the hierarchical one */
  double update_ms;
  double param_bytes;    /* per tensor-parallel rank, tied counted once */
  int64_t micro_batches; /* per replica per iteration */
  int32_t in_flight;     /* micro-batches whose activations it keeps */
  int32_t group;         /* 1F1B* group (1 = holds the last stage), else 0 */
  int32_t tp;            /* its tensor-parallel degree */
} pp_stage_cost;
pp_status pp_eval_stage(const pp_eval *e, int32_t s, pp_stage_cost *out);

typedef struct pp_device_memory {
  int used;                /* 0: the plan does not use the device */
  double model_bytes;      /* weights, gradients and optimizer state
                              between steps (generic: parameters x the
                              optimizer's factor) */
  double activation_bytes; /* in-flight activations at the peak */
  double buffer_bytes;     /* send/receive buffers */
  double reserve_bytes;    /* the user's reserve (--reserve-gb) */
  double runtime_bytes;    /* fixed: CUDA context, NCCL, workspaces and
                              the engine's own (0 under "generic") */
  double transient_bytes;  /* the largest short-lived peak on top:
                              optimizer step, gradient flattening,
                              logits and loss (0 under "generic") */
  double slack_bytes;      /* the caching allocator's reserve beyond the
                              live peak (0 under "generic") */
  double total_bytes;
  double spread;  /* relative standard deviation of total_bytes: the
                     calibration's (its residuals and fitted parameters)
                     where it measured this type, else the default
                     (docs/COST_MODEL.md, "Calibration") */
  int calibrated; /* spread comes from a calibration */
  int64_t capacity_bytes;
} pp_device_memory;
pp_status pp_eval_device(const pp_eval *e, int32_t d, pp_device_memory *out);

/** \brief One step of a stage's operation order. */
typedef enum pp_task_kind {
  PP_TASK_FWD = 0,
  PP_TASK_RECOMPUTE = 1,
  PP_TASK_BWD = 2,
  PP_TASK_SEND_ACT = 3,  /* activation to a later stage */
  PP_TASK_SEND_GRAD = 4, /* gradient to an earlier stage */
  PP_TASK_ALLREDUCE = 5, /* one ring step of a gradient allreduce */
  PP_TASK_UPDATE = 6
} pp_task_kind;
const char *pp_task_kind_name(pp_task_kind k);

typedef struct pp_sched_op {
  pp_task_kind kind;   /* PP_TASK_FWD or PP_TASK_BWD */
  int32_t micro_batch; /* local index: replica r runs global r + i*R_s */
} pp_sched_op;
/** \brief The compute order of every replica of stage s (2 x its
** micro-batches entries; recomputation runs just before each backward):
** fill buf up to cap, *n gets the full length. */
pp_status pp_eval_stage_order(const pp_eval *e, int32_t s, pp_sched_op *buf,
                              int64_t cap, int64_t *n);

/** \brief Print the estimate: text (breakdown, stages, memory per device)
** or JSON (docs/FORMATS.md, "evaluate and simulate output"). */
pp_status pp_eval_write(pp_ctx *ctx, const pp_eval *e, int json, FILE *f);

/** \brief A lower bound on the iteration time of m on c for a global
** batch of gbs samples at tensor-parallel degree tp and micro-batch
** size mbs (with or without recomputation): the work over the cluster's
** capacity, and one micro-batch's longest path. */
pp_status pp_lower_bound(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                         int64_t gbs, int32_t tp, int32_t mbs, int recompute,
                         double *out_ms);

/* ====================================================================
** Discrete-event simulator: one compute stream per device, transfers on
** channels or shared links, ring allreduce steps, optimizer updates.
*/
typedef struct pp_sim pp_sim;

pp_status pp_simulate(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                      const pp_cluster *c, const pp_cost_params *cp,
                      pp_sim **out);
void pp_sim_destroy(pp_sim *s);

typedef struct pp_sim_summary {
  double iteration_ms;
  double lower_bound_ms;
  int64_t nevents; /* tasks simulated */
  int fits;        /* every device's peak within its capacity */
  int32_t worst_device;
  double analytic_ms; /* pp_evaluate's estimate of the same plan */
  double time_spread; /* relative standard deviation of iteration_ms, as
                         pp_eval_summary's */
  int calibrated;     /* time_spread comes from a calibration */
} pp_sim_summary;
pp_status pp_sim_get_summary(const pp_sim *s, pp_sim_summary *out);

typedef struct pp_sim_device {
  int used;
  double busy_ms;   /* compute stream busy (fwd, recompute, bwd, update) */
  double idle_ms;   /* iteration_ms - busy_ms */
  double bubble_ms; /* idle before the last backward of the iteration */
  double comm_ms;   /* time with a transfer leaving the device */
  double peak_memory_bytes; /* static + the most live activations */
  int64_t capacity_bytes;
  double spread;  /* relative standard deviation of the peak, as
                     pp_device_memory's */
  int calibrated; /* spread comes from a calibration */
} pp_sim_device;
pp_status pp_sim_device_get(const pp_sim *s, int32_t d, pp_sim_device *out);

typedef struct pp_sim_event {
  pp_task_kind kind;
  int32_t stage, replica; /* replica: -1 for an allreduce step */
  int64_t micro_batch;    /* global index; ring step for allreduce */
  int32_t device, peer;   /* peer: the receiving device of a transfer */
  double start_ms, end_ms;
  double bytes; /* transfers */
} pp_sim_event;
/** \brief Recorded events (PP_TASK_* of every device), in start order. */
int64_t pp_sim_nevent(const pp_sim *s);
pp_status pp_sim_event_get(const pp_sim *s, int64_t i, pp_sim_event *out);
/** \brief The critical path: *n event indices, first to last. */
const int64_t *pp_sim_critical_path(const pp_sim *s, int64_t *n);

/** \brief Print the simulated figures (text or JSON); with gantt_cols > 0
** and text, a Gantt chart of that many columns. */
pp_status pp_sim_write(pp_ctx *ctx, const pp_sim *s, int json, int gantt_cols,
                       FILE *f);
typedef enum pp_image_format {
  PP_IMAGE_SVG = 0,
  PP_IMAGE_PNG = 1
} pp_image_format;
/** \brief The Gantt chart of the simulated iteration (simulated with
** cost params record = 1), drawn with cairo: a row per used device
** (stage, replica), compute tasks coloured by kind with their
** micro-batch, transfers in a lane under each row, a time axis in ms.
** Written to path atomically, or to f when path is NULL. */
pp_status pp_gantt_write(pp_ctx *ctx, const pp_sim *s, const pp_cluster *c,
                         pp_image_format fmt, const char *path, FILE *f);
/** \brief Chrome trace JSON (opens in Perfetto): a process per device,
** a compute track and a track per outgoing channel, memory counters. */
pp_status pp_sim_write_trace(pp_ctx *ctx, const pp_sim *s, const char *path,
                             FILE *f);

/* ====================================================================
** Partitioning a layer chain into pipeline stages (docs/PARTITION.md).
** A DAG is partitioned through its chain view (pp_model_chain_view), and
** the stages list the original operators.  Stage s runs on "position"
** s: a device of the given sequence (its type's times, its memory, the
** bandwidth to the next position), or a device of a flat homogeneous
** network.
*/
typedef enum pp_part_objective {
  PP_OBJ_MINMAX = 0, /* max_s (work + transfers in and out) / R
                        ([Parmesan] Eq. 3; [PipeDream]) */
  PP_OBJ_AMP = 1,    /* (gas-1) max t + sum t + sum e [+ allreduce]
                        ([AMP] Eq. 5-8) */
  PP_OBJ_MADPIPE = 2 /* the period of a memory-aware periodic schedule,
                        one special processor holding several stages
                        ([MadPipe] 4.2-4.3) */
} pp_part_objective;

typedef enum pp_part_method {
  PP_PART_OPTIMAL = 0,        /* the objective's own algorithm */
  PP_PART_UNIFORM_LAYERS = 1, /* Megatron's default: equal layer counts */
  PP_PART_UNIFORM_PARAMS = 2, /* DeepSpeed's 'parameters': balanced
                                 parameter bytes */
  PP_PART_PIPEDREAM = 3,      /* the min-max DP, memory ignored */
  PP_PART_PIPEDREAM_STAR = 4, /* PipeDream's partition under 1F1B*, the
                                 shortest period that fits memory
                                 ([MadPipe] 5) */
  PP_PART_AMP_ORIGINAL = 5    /* AMP's DP as its code runs it */
} pp_part_method;

/** \brief "minmax", "amp", "madpipe" / "optimal", "uniform-layers", ... */
const char *pp_part_objective_name(pp_part_objective o);
pp_status pp_part_objective_parse(const char *name, pp_part_objective *out);
const char *pp_part_method_name(pp_part_method m);
pp_status pp_part_method_parse(const char *name, pp_part_method *out);

typedef struct pp_part_params {
  pp_part_objective objective; /* default PP_OBJ_MINMAX */
  pp_part_method method;       /* default PP_PART_OPTIMAL */
  int32_t stages;              /* S (madpipe: processors P); required */
  int32_t replicas;            /* R replicas of every stage; default 1 */
  int32_t tp;                  /* tensor-parallel degree: times, sizes and
                                  transfers per rank; default 1 */
  const int32_t *stage_tp;     /* [stages] each position's own degree
                                  instead (chains, not madpipe or
                                  amp-original), or NULL (default) */
  int recompute;               /* activation recomputation: one more
                                  forward, the stage input kept; 0 */
  double bandwidth_gbps;       /* flat network (no devices); default 10 */
  double latency_us;           /* flat network; default 0 */
  const pp_cluster *cluster;   /* with devices: the positions */
  const int32_t *devices;      /* stages indices into the cluster, or NULL */
  int32_t flat_device;         /* with a cluster and no devices: every
                                  position is of this device's type (its
                                  times and memory) on the flat network;
                                  -1 (default): the model's reference */
  int32_t micro_batch;         /* 0 (default): the model's reference */
  int64_t gas;                 /* micro-batches per replica; default 1 */
  double memory_bytes;         /* limit per device, 0 (default): none;
                                  with devices, also their capacity */
  pp_schedule schedule;        /* in-flight counts of the memory model:
                                  PP_SCHED_GPIPE or PP_SCHED_1F1B
                                  (default); madpipe uses 1F1B* */
  pp_optimizer optimizer;      /* default PP_OPT_ADAM_MIXED; madpipe's
                                  paper uses PP_OPT_2BW */
  int64_t reserve_bytes;       /* per device; default 0 */
  int amp_inputs;              /* amp-original: 1 gives the DP the inputs
                                  AMP's code builds
                                  (data/amp/COST_MODEL.md 3, 3.1) instead of the
                                  chain's: layers of kind "other" left
                                  out, the profiles blended over the
                                  cluster's device types, p2p in 32-bit
                                  elements averaged over the replicas in
                                  rank order (stage s's ranks on devices
                                  devices[s] + tp d + t, or tp R s + tp d
                                  + t without devices), and AMP's uniform
                                  split when gas = 1; needs a cluster.
                                  Default 0 */
  int allreduce;               /* amp: add the slowest stage's gradient
                                  allreduce over the R replicas */
  double allreduce_gbps;       /* its ring's bandwidth; 0: bandwidth_gbps */
  int32_t iterations;          /* madpipe: bisection steps on the period
                                  (Algorithm 1's K); default 10 */
  double time_limit_s;         /* madpipe: both phases, every ILP
                                  included; default 60 */
  const volatile sig_atomic_t *stop; /* madpipe: stops as at its time
                                        limit once *stop is nonzero (a
                                        signal handler may set it);
                                        NULL (default): none */
  double period_cap_ms;        /* madpipe: stop (PP_ELIMIT) as soon as the
                                  period is known to exceed this (phase
                                  1's, or phase 2's walk up); 0 (default):
                                  none */
  int32_t max_nodes;           /* madpipe phase 2: CBC's branch-and-bound
                                  nodes per ILP (a limit that keeps the
                                  result deterministic); default 20000 */
  int32_t madpipe_phase1;      /* madpipe: 1 or 2: phase 1 alone, with the
                                  paper's optimistic count for the special
                                  processor (1) or the pessimistic one
                                  (2): the allocation of least period, with
                                  1F1B*'s counts at it, not checked by phase
                                  2 (a caller can price the allocation
                                  before paying for phase 2's ILPs); 0
                                  (default): both phases, both modes */
  /* Operator DAGs (not chains) under the minmax objective on a flat
  ** network are partitioned at the operator level (Parmesan phase 1):
  ** clustering, the DP over fronted subgraphs, refinement. */
  int layer_level;      /* 1: partition the chain view instead; default 0 */
  int32_t clusters;     /* K hyper-operators before the DP; 0 (default):
                           min(operators, max(16 S, 256)) */
  double alpha;         /* weight of communication in the clustering
                           cost c_u(u) + c_u(v) - alpha c_m(u, v); 1 */
  int32_t refine_steps; /* refinement moves at most; default 1000 */
  int exact;            /* 1: the DP over every down-set of the whole
                           graph, no clustering (refused beyond 2^20
                           down-sets); default 0: exact when there are at
                           most 4096 */
} pp_part_params;
void pp_part_params_init(pp_part_params *p);

typedef struct pp_partition pp_partition;

/** \brief Partition m's chain into stages.  "Nothing fits in memory" is
** a result, not an error: the partition that comes closest is returned
** with fits = 0 and the stage, what it needs and its limit. */
pp_status pp_partition_chain(pp_ctx *ctx, const pp_model *m,
                             const pp_part_params *p, pp_partition **out);
void pp_partition_destroy(pp_partition *pt);

typedef struct pp_part_summary {
  pp_part_objective objective;
  pp_part_method method;
  double objective_ms;   /* the objective's value of the result */
  double lower_bound_ms; /* no partition into these stages is better */
  int exact;             /* 1: the value is the proven optimum */
  int fits;              /* every stage within its memory limit */
  int32_t nstage;        /* madpipe: may exceed the processors */
  int32_t nproc;         /* processors (positions) */
  int32_t nlayer;        /* layers of the chain */
  int32_t worst_stage;   /* the highest memory / limit share */
  double period_ms;      /* madpipe, pipedream-star: the period; else 0 */
  double sim_period_ms;  /* the same schedule in the simulator: its
                            steady-state time per micro-batch; 0: not run */
  int sim_fits;          /* the simulator's peak memory fits every
                            processor */
  double sim_peak_share; /* its largest peak / capacity */
  int64_t work;          /* labels (amp), DP states (madpipe) */
  double seconds;        /* wall time of the algorithm */
  int32_t dag_ops;       /* operator-level: operators, hyper-operators the
                            DP saw, refinement moves; 0 for chains */
  int32_t dag_clusters, dag_moves;
  int dag_downsets;    /* the DP ran over every down-set (else over the
                          prefixes of one topological order) */
  int dag_layer_start; /* refinement started from the layer-level
                          partition, which beat the DP's */
  double dag_layer_ms; /* the layer-level partition (the chain view's
                          exact min-max) priced with the operator-level
                          formula; 0 when there is none */
  int timed_out;       /* madpipe: the time limit or params.stop ended
                          it early: the best schedule found by then */
  int interrupted;     /* madpipe: params.stop did */
} pp_part_summary;
pp_status pp_partition_summary(const pp_partition *pt, pp_part_summary *out);

typedef struct pp_part_stage {
  int32_t first_layer, nlayer; /* layers of the chain */
  int32_t proc;                /* the position (processor) running it */
  int special;                 /* madpipe: on the special processor */
  double compute_ms;           /* fwd + bwd on its position */
  double comm_ms;              /* transfers in and out, one micro-batch */
  double time_ms;              /* its term of the objective */
  double param_bytes;
  double memory_bytes, memory_limit_bytes; /* limit INFINITY: none */
  int32_t in_flight;
} pp_part_stage;
pp_status pp_partition_stage(const pp_partition *pt, int32_t s,
                             pp_part_stage *out);
/** \brief The operators of stage s (original indices, owned by pt). */
const int32_t *pp_partition_stage_ops(const pp_partition *pt, int32_t s,
                                      int32_t *n);

/** \brief Print the result (text, or JSON: docs/FORMATS.md). */
pp_status pp_partition_write(pp_ctx *ctx, const pp_partition *pt, int json,
                             FILE *f);
/** \brief Write the stage graph (docs/DESIGN.md, "Stage graph") to path
** atomically, or to f. */
pp_status pp_partition_write_stage_graph(pp_ctx *ctx, const pp_partition *pt,
                                         const char *path, FILE *f);

/* ====================================================================
** Device mapping ([Parmesan] 5; docs/MAPPING.md): place the R replicas of
** every stage of a stage graph on distinct devices of a cluster of any
** topology.
*/
typedef struct pp_stage_graph pp_stage_graph;

/** \brief Read a stage graph (docs/DESIGN.md, "Stage graph"). */
pp_status pp_stage_graph_load(pp_ctx *ctx, const char *path,
                              pp_stage_graph **out);
pp_status pp_stage_graph_read_json(pp_ctx *ctx, const char *text, size_t len,
                                   const char *source, pp_stage_graph **out);
/** \brief The stage graph of a partition. */
pp_status pp_partition_stage_graph(pp_ctx *ctx, const pp_partition *pt,
                                   pp_stage_graph **out);
void pp_stage_graph_destroy(pp_stage_graph *g);
int32_t pp_stage_graph_nstage(const pp_stage_graph *g);

typedef enum pp_map_objective {
  PP_MAP_P2P = 0,       /* compute + transfers to neighbour stages (Eq. 6) */
  PP_MAP_ALLREDUCE = 1, /* compute + the ring's slowest link (Eq. 7) */
  PP_MAP_FULL = 2,      /* compute + transfers + allreduce */
  PP_MAP_AUTO = 3       /* the paper's rule: allreduce when its bytes
                           exceed the transfers' */
} pp_map_objective;

typedef enum pp_map_algorithm {
  PP_MAP_EXACT = 0,    /* bisection + pruned backtracking, proven optimal
                          within the time limit */
  PP_MAP_CS = 1,       /* consecutive: replica r's stages on devices
                          r S .. r S + S - 1 */
  PP_MAP_MEGATRON = 2, /* Megatron's rank order: replicas (data
                          parallel) inside, then stages */
  PP_MAP_RANDOM = 3,   /* the best of `samples' random mappings */
  PP_MAP_ANNEAL = 4,   /* simulated annealing with swap moves */
  PP_MAP_SCOTCH = 5    /* Scotch's static mapping of the graph */
} pp_map_algorithm;

const char *pp_map_objective_name(pp_map_objective o);
pp_status pp_map_objective_parse(const char *name, pp_map_objective *out);
const char *pp_map_algorithm_name(pp_map_algorithm a);
pp_status pp_map_algorithm_parse(const char *name, pp_map_algorithm *out);

typedef struct pp_map_params {
  pp_map_objective objective; /* default PP_MAP_AUTO */
  pp_map_algorithm algorithm; /* default PP_MAP_EXACT */
  int32_t replicas;           /* R; default 1 */
  double time_limit_s;        /* exact search; default 10 */
  int32_t threads;            /* exact search; default 2; > 1 calls the
                                 context's allocator from several threads
                                 (part and solve, docs/MAPPING.md) */
  int64_t samples;            /* random: mappings; anneal: steps; 10000 */
  int64_t max_nodes;          /* exact search: a budget of search nodes
                                 (0, the default: none); with one, the
                                 search spends nodes, not seconds (part
                                 and solve is skipped), so its result
                                 does not depend on the machine */
  const volatile sig_atomic_t *stop; /* NULL (default): none; nonzero:
                                        the exact search stops as at its
                                        time limit (timed_out), keeping
                                        its best mapping */
} pp_map_params;
void pp_map_params_init(pp_map_params *p);

typedef struct pp_mapping pp_mapping;
pp_status pp_map(pp_ctx *ctx, const pp_stage_graph *g, const pp_cluster *c,
                 const pp_map_params *p, pp_mapping **out);
void pp_mapping_destroy(pp_mapping *m);

typedef struct pp_map_summary {
  pp_map_objective objective; /* the one used (auto resolved) */
  pp_map_algorithm algorithm;
  double objective_ms;   /* the mapping's value */
  double lower_bound_ms; /* no mapping is better */
  int optimal;           /* proven */
  int timed_out;         /* the time limit or the stop flag cut it (a
                            spent max_nodes is not optimal, not this) */
  int64_t nodes;         /* search nodes (exact) */
  double seconds;
  int32_t stages, replicas, devices;
} pp_map_summary;
pp_status pp_mapping_summary(const pp_mapping *m, pp_map_summary *out);
/** \brief The device of replica r of stage s (-1 out of range). */
int32_t pp_mapping_device(const pp_mapping *m, int32_t s, int32_t r);
/** \brief The time of replica r of stage s under the objective. */
double pp_mapping_time(const pp_mapping *m, int32_t s, int32_t r);
pp_status pp_mapping_write(pp_ctx *ctx, const pp_mapping *m, int json, FILE *f);

/* ====================================================================
** The planner ([AMP] 3; docs/PLANNER.md): search every parallel
** dimension - the devices used, pipeline, data and tensor-parallel
** degrees, micro-batch size, schedule, recomputation - partition and
** place each point, price it, keep the best K that fit in memory, and
** rank them by the simulator.
*/

/** \brief Progress: done in [0, 1].  Return nonzero to stop the search
** (it then fails with PP_ECANCELED).  Called from the calling thread. */
typedef int (*pp_progress_fn)(void *ud, double done);

typedef struct pp_search_params {
  int64_t global_batch;    /* samples per iteration; required, > 0 */
  int32_t top_k;           /* plans kept and simulated; default 5 */
  double time_limit_s;     /* the whole search; default 60 */
  int32_t threads;         /* default 2; > 1 calls the context's
                              allocator from several threads */
  pp_optimizer optimizer;  /* default PP_OPT_ADAM_MIXED */
  int64_t reserve_bytes;   /* per device; default 0 */
  pp_allreduce allreduce;  /* default PP_AR_AUTO */
  unsigned schedules;      /* bit 1 << pp_schedule per schedule tried;
                              default all three */
  int recompute;           /* -1 (default): with and without; 0; 1 */
  int subsets;             /* 1 (default): also leave devices idle (a
                              type, or the slowest, unused) */
  int32_t max_tp;          /* 0 (default): min(8, devices of a node) */
  int32_t max_micro_batch; /* 0 (default): no limit */
  double map_time_s;       /* exact mapping of each kept plan (tp 1);
                              default 1; 0: Megatron's order only */
  int simulate;            /* 1 (default): rank the kept plans by the
                              simulator; 0: by the estimate */
  int32_t madpipe;         /* MadPipe on the 1F1B* points where memory
                              binds, lowest bound first, until this many
                              gave a plan that fits (default 4; 0: off) */
  pp_progress_fn progress; /* NULL: none */
  void *progress_ud;
  pp_precision precision; /* of every plan; default PP_PREC_MODEL */
  pp_engine engine;       /* of every plan; default PP_ENGINE_GENERIC */
  int32_t zero;           /* ZeRO stage of every plan, 0-3 (default 0);
                             -1: each plan the best of the stages its
                             engine runs at its pipeline depth */
  double memory_margin;   /* fraction of every device's capacity a plan
                             leaves free, [0, 1); default 0.05 */
  const pp_calibration *calibration; /* prices every plan; NULL (default):
                                        none; borrowed */
  const volatile sig_atomic_t *stop; /* NULL (default): none.  Once it
                                        reads nonzero the search stops as
                                        at its time limit and returns the
                                        best plans so far (summary
                                        interrupted); a signal handler may
                                        set it */
  int64_t map_nodes; /* the exact mapping's budget of search nodes per kept
                        plan, on one thread, so that the placement does not
                        depend on the machine (map_time_s still caps it);
                        default 20000; 0: time only, on the search's
                        threads */
  int uniform_tp;    /* 1: one tensor-parallel degree per plan; 0
                        (default): on a set of several device types each
                        type's stages may take their own degree
                        (docs/PLANNER.md, "Per-stage tensor
                        parallelism") */
} pp_search_params;
void pp_search_params_init(pp_search_params *p);

typedef struct pp_search pp_search;

/** \brief Plan m on c.  "Nothing fits in memory" is a result: no plan
** is kept (nplans 0), and the summary names the closest point. */
pp_status pp_plan_search(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                         const pp_search_params *p, pp_search **out);
void pp_search_destroy(pp_search *s);

typedef struct pp_search_summary {
  int64_t points;        /* enumerated */
  int64_t pruned;        /* by the lower bound, before partitioning */
  int64_t evaluated;     /* partitioned and priced */
  int64_t fitting;       /* of which fit in memory */
  int64_t madpipe;       /* points where memory bound and MadPipe ran */
  int32_t nplans;        /* kept, best first */
  double lower_bound_ms; /* no plan of the space can be faster */
  double seconds;
  int timed_out;          /* the time limit (or stop) cut the search:
                             the enumeration, MadPipe, the mapping or
                             the simulation of the kept plans */
  int interrupted;        /* params.stop ended it */
  int32_t simulated;      /* of the nplans, how many were simulated */
  int by_estimate;        /* the plans are ranked by the estimate: 1,
                             the time ran out before all were simulated
                             (or simulation is off); 2, the simulator hit
                             its size limit or ran out of memory */
  int32_t closest_device; /* nothing fits: the worst device of the
                             closest point, what it needs and has */
  double closest_need_bytes, closest_capacity_bytes;
  pp_cost_params cost; /* how the plans were priced */
  int64_t global_batch;
} pp_search_summary;
pp_status pp_search_get_summary(const pp_search *s, pp_search_summary *out);

typedef struct pp_search_plan {
  int32_t devices; /* used */
  int32_t pp, dp, tp, micro_batch;
  int64_t gas; /* micro-batches per replica */
  pp_schedule schedule;
  int recompute;
  double estimate_ms;    /* analytic iteration time */
  double simulated_ms;   /* 0: not simulated */
  double lower_bound_ms; /* at its tp, micro-batch and recomputation */
  double throughput;     /* samples per second (simulated if run) */
  double bubble;         /* share of the iteration a device idles */
  int mapped;            /* placed by the exact mapper (else in
                            Megatron's rank order) */
  double peak_share;     /* highest device memory / capacity */
  int madpipe;           /* partitioned by MadPipe (memory bound): its
                            in-flight counts, maybe several stages on
                            one device */
  int32_t zero;          /* its ZeRO stage (the search's, or the one
                            chosen when that is -1) */
  double time_spread;    /* relative standard deviation of its times
                            (pp_eval_summary's) */
  int calibrated;        /* time_spread comes from a calibration */
} pp_search_plan;
pp_status pp_search_plan_get(const pp_search *s, int32_t i,
                             pp_search_plan *out);
/** \brief The i-th plan (best first), owned by s. */
const pp_plan *pp_search_plan_at(const pp_search *s, int32_t i);
/** \brief The report: the best plan's degrees, stages, devices, memory,
** times and gap to the lower bound, then the others in a table; or JSON
** (docs/FORMATS.md, "plan --json"). */
pp_status pp_search_write(pp_ctx *ctx, const pp_search *s, const pp_model *m,
                          const pp_cluster *c, int json, FILE *f);

/* ====================================================================
** Comparison (docs/PLANNER.md): our plan next to what users do today,
** all priced by one cost model and simulator.
*/
typedef struct pp_compare pp_compare;

typedef struct pp_compare_row {
  const char *method; /* "parplan", "megatron", "amp", "pipedream",
                         "random", "lower bound" */
  const char *about;  /* one line: how the method chose */
  int found;          /* it produced a plan */
  int fits;           /* the plan fits in memory (simulator's peak) */
  int32_t devices, pp, dp, tp, micro_batch;
  pp_schedule schedule;
  int recompute;
  double estimate_ms;  /* our analytic estimate */
  double simulated_ms; /* our simulator (the lower bound's row: it) */
  double own_ms;       /* the method's own prediction (AMP's cost
                          model); 0 when it has none */
  double speedup;      /* its simulated time / ours; 0 when not found */
  int64_t evaluations; /* plans it priced */
  double seconds;      /* its time */
} pp_compare_row;

/** \brief Plan m on c with p (pp_plan_search) and with the baselines:
** Megatron's heuristic ([AMP] 4.1), AMP's procedure (Megatron's
** placement, AMP's DP, AMP's cost model), PipeDream's DP with
** consecutive placement, random search with as many evaluations as ours. */
pp_status pp_plan_compare(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                          const pp_search_params *p, pp_compare **out);
void pp_compare_destroy(pp_compare *x);
int32_t pp_compare_nrow(const pp_compare *x);
pp_status pp_compare_row_get(const pp_compare *x, int32_t i,
                             pp_compare_row *out);
/** \brief Row i's plan, or NULL (not found; the lower bound). */
const pp_plan *pp_compare_plan(const pp_compare *x, int32_t i);
pp_status pp_compare_write(pp_ctx *ctx, const pp_compare *x, int json, FILE *f);

/* ====================================================================
** The plan report (docs/REPORT.md): one self-contained HTML page.
*/
typedef struct pp_report_params {
  int baselines;       /* 1 (default): compare with the baselines
                          (pp_plan_compare at the plan's global batch) */
  double time_limit_s; /* of that comparison's search; default 10 */
  int32_t threads;     /* of that search; default 2 */
} pp_report_params;
void pp_report_params_init(pp_report_params *p);

/** \brief Check p, price it (pp_evaluate), simulate it, and write the
** report: summary figures, the topology with the mapping drawn on it,
** the Gantt chart of one iteration, memory per device against its
** capacity, the breakdown of the iteration time, and the baselines.
** cp and rp may be NULL (defaults).  Written to path atomically, or to
** f when path is NULL. */
pp_status pp_report_write(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                          const pp_cluster *c, const pp_cost_params *cp,
                          const pp_report_params *rp, const char *path,
                          FILE *f);

/* ====================================================================
** Engine exports (docs/EXPORT.md).  An export is text to write and the
** warnings of what the engine cannot express; it never changes the plan
** silently.
*/
typedef struct pp_export pp_export;

/** \brief Megatron-LM arguments (megatron_args.txt, for
** $(cat megatron_args.txt)): tensor and pipeline sizes, micro and global
** batch, layers, precision, distributed optimizer, recomputation, and
** --pipeline-model-parallel-layout with every stage's layers (operator
** kinds: E embedding, t decoder layer, m MTP layer, L loss / head),
** interleaved where the plan's stages go round-robin over its devices;
** and megatron_env.sh, the environment Megatron requires
** (docs/EXPORT.md). */
pp_status pp_export_megatron(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                             const pp_cluster *c, pp_export **out);
/** \brief DeepSpeed: ds_config.json (batch sizes, gradient accumulation,
** precision, ZeRO 0) and ds_pipeline.py (the explicit stage boundaries
** PARTS and the PipelineModule subclass that applies them). */
pp_status pp_export_deepspeed(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                              const pp_cluster *c, pp_export **out);
/** \brief torch.distributed.pipelining / torchtitan: pp_schedule.csv (one
** row per pipeline rank, the simulated order, "0F0,1B3,..."),
** pp_stages.py (module FQNs per stage, split_spec, stage -> rank) and
** torchtitan.toml. */
pp_status pp_export_torch(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                          const pp_cluster *c, pp_export **out);
/** \brief PipeDream: pipedream_conf.json (module_to_stage_map,
** stage_to_rank_map: stages may have different replica counts). */
pp_status pp_export_pipedream(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                              const pp_cluster *c, pp_export **out);
/** \brief The export named engine: "megatron", "deepspeed", "torch" or
** "pipedream". */
pp_status pp_export_to(pp_ctx *ctx, const char *engine, const pp_plan *p,
                       const pp_model *m, const pp_cluster *c, pp_export **out);
/** \brief The engines pp_export_to knows, i = 0, 1, ...: "megatron",
** "deepspeed", "torch", "pipedream"; NULL past the last. */
const char *pp_export_engine_name(int i);
void pp_export_destroy(pp_export *x);
/** \brief The files of an export: a name (no directory) and its text. */
int32_t pp_export_nfile(const pp_export *x);
const char *pp_export_file_name(const pp_export *x, int32_t i);
const char *pp_export_file_text(const pp_export *x, int32_t i);
/** \brief The first file's text. */
const char *pp_export_text(const pp_export *x);
/** \brief What the engine cannot express, one sentence each. */
int32_t pp_export_nwarning(const pp_export *x);
const char *pp_export_warning(const pp_export *x, int32_t i);
/** \brief Write file i to path atomically, or to f. */
pp_status pp_export_write_file(pp_ctx *ctx, const pp_export *x, int32_t i,
                               const char *path, FILE *f);
/** \brief Parse a Megatron pipeline layout ("E|(tt|)*3,m|L") as
** Megatron's parse_str_to_list does: *nstage stages, counts[4 s + k] the
** symbols E, t, m, L (k = 0..3) of stage s; at most max_stages stages. */
pp_status pp_megatron_layout_parse(pp_ctx *ctx, const char *layout,
                                   int32_t max_stages, int32_t *nstage,
                                   int32_t *counts);

/** \brief Launch files that put every rank on its planned device: a
** hostfile ("host slots=N") and per host a shell script starting its
** ranks of the command it is given, with CUDA_DEVICE_ORDER=PCI_BUS_ID,
** CUDA_VISIBLE_DEVICES, RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT
** (ranks in Megatron's order; docs/EXPORT.md). */
typedef struct pp_launch pp_launch;
pp_status pp_export_launch(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                           const pp_cluster *c, pp_launch **out);
void pp_launch_destroy(pp_launch *x);
int32_t pp_launch_nhost(const pp_launch *x);
const char *pp_launch_host(const pp_launch *x, int32_t h);
/** \brief 1 when torchrun's numbering (the same ranks per host, host by
** host) would place the ranks the same way. */
int pp_launch_torchrun_ok(const pp_launch *x);
pp_status pp_launch_write_hostfile(pp_ctx *ctx, const pp_launch *x,
                                   const char *path, FILE *f);
pp_status pp_launch_write_script(pp_ctx *ctx, const pp_launch *x, int32_t h,
                                 const char *path, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* PARPLAN_H */

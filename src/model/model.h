/* SPDX-License-Identifier: MIT */
/*
** The model layer's internal header: the model object behind the public
** pp_model handle, the index and chain-view helpers its files share, and
** the built-in and generated models.  Models read the cluster layer for
** device types (times by type, the GPU catalog).
*/
#ifndef PP_MODEL_H
#define PP_MODEL_H

#include "cluster/cluster.h"

/* ---- the model -------------------------------------------------------- */

struct pp_model {
  struct ppi_arena arena;
  char *name, *source;
  char *reftype;                   /* NULL: no reference type */
  int32_t micro_batch;             /* reference micro-batch size */
  double efficiency;               /* fraction of peak for FLOP-derived times */
  pp_precision dtype;              /* what every byte count is in */
  bool nchw;                       /* PP_MF_CONTIGUOUS (ppi_transpose_ms) */
  double loss_fbytes, loss_bbytes; /* a loss no operator's time includes */
  double pipe_extra;               /* pp_model_builder_set_pipe_extra */
  int32_t nhyper;
  char **hyper_key; /* hyper_key[0:nhyper-1] */
  double *hyper_val;

  int32_t nop;
  char **op_name, **op_kind; /* kind may be NULL */
  double *fwd, *bwd, *upd;   /* ms at the reference point */
  double *fflops, *bflops;
  double *fbytes, *bbytes; /* memory traffic, for the roofline */
  /* Roofline parts (model_time.c): NULL, or a CSR over operators of
  ** (fwd FLOPs, fwd bytes, bwd FLOPs, bwd bytes, class) parts,
  ** rf[PPI_PART k..] (the class: 1 for convolutions, model.h PPI_PART);
  ** an operator without parts is its own single part.  A chain layer
  ** keeps its members' parts, since the roofline of a sum is not the
  ** sum of the rooflines. */
  int32_t *rf_off;
  double *rf;
  int64_t *param, *out, *saved;
  int32_t *tied; /* -1: owns its parameters */
  bool has_flops;

  int32_t nedge;
  int32_t *esrc, *edst; /* esrc[0:nedge-1] */
  int64_t *ebytes;
  bool edges_implied;       /* no edges given: the listed chain */
  int32_t *out_off, *out_e; /* CSR of edges by source, edges by index */
  int32_t *in_off, *in_e;   /* CSR of edges by destination */

  int32_t *topo, *topo_pos; /* an order and its inverse */
  bool topo_unique, is_chain;
  struct ppi_strmap opmap;

  int32_t ntable;  /* profile tables */
  char **tab_type; /* NULL: the reference type */
  int32_t *tab_tp, *tab_mbs;
  double *tab_fwd, *tab_bwd, *tab_upd; /* [t*nop+v], NaN: not profiled */
  /* the distinct type names of the tables, tname[0] the reference type
  ** (NULL when none, and the tables without a type), for lookups by
  ** bit mask (model_time.c) */
  int32_t ntname;
  const char **tname;
  int32_t *tab_tid;
  /* the tables of type id q, ascending: tid_tab[tid_off[q] ..
  ** tid_off[q + 1]) (pick_in scans one type's, not every table) */
  int32_t *tid_off, *tid_tab;

  int32_t ntps; /* tensor-parallel size tables */
  int32_t *tps_tp;
  int64_t *tps_param, *tps_out, *tps_saved; /* [t*nop+v], -1: absent */

  /* The profile as the times read it (ppi_model_fit_profiles): per
  ** series of profiled micro-batch sizes (one type id and tp, the
  ** reference point in its own), the line through its points;
  ** fit[(t + 1) * nop + v] for table t, t = -1 the operator's own fields.
  ** NULL without tables. */
  double *fit_fwd, *fit_bwd;

  int32_t *member_off, *member_op; /* chain view only, else NULL */
};

/* Builders and checks shared between model files. */
PP_INTERNAL pp_status ppi_model_index(pp_ctx *ctx, struct pp_model *m);
/* A roofline part: fwd FLOPs, fwd bytes, bwd FLOPs, bwd bytes, and its
** class: 0 for the rest, PPI_CONV where the FLOPs are convolutions
** (cuDNN's: an fp32 run takes the TF32 peak for them, model_time.c), and
** PPI_CONV_WINOGRAD for a convolution cuDNN can also run as Winograd's
** F(2x2, 3x3) (a 3x3 kernel, stride 1, no dilation, one group). */
#define PPI_PART 5
#define PPI_CONV 1
#define PPI_CONV_WINOGRAD 2
/* Winograd's F(2x2, 3x3) computes a 2x2 tile of a 3x3 convolution's
** output with 16 multiplications instead of 36 (Lavin and Gray, "Fast
** Algorithms for Convolutional Neural Networks", CVPR 2016, section 4:
** (m + r - 1)^2 against m^2 r^2 for F(m x m, r x r)), a gain of 2.25 in
** the FLOPs cuDNN's CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD (and its
** backward-data twin) execute, on SIMT cores.  Not a tuning constant:
** the arithmetic of the transform.  The transforms' own additions are
** left out, which the 2.25 therefore slightly overstates. */
#define PPI_WINOGRAD_GAIN 2.25
/* The FLOP rate a part of class cls reaches where its FLOPs would run at
** peak_tflops: a PPI_CONV_WINOGRAD part takes the larger of that and
** Winograd on the SIMT fp32 cores (fp32_tflops x PPI_WINOGRAD_GAIN), as
** cuDNN, which times its algorithms (cudnn.benchmark) or picks by
** heuristics, runs the faster one; fp32_tflops 0: unknown, no Winograd. */
PP_INTERNAL double ppi_conv_peak(double cls, double peak_tflops,
                                 double fp32_tflops);
/* Give operator op (already added) one more roofline part q; an
** operator with parts has the parts' sums as its FLOPs and bytes. */
PP_INTERNAL pp_status ppi_model_builder_add_part(pp_model_builder *b,
                                                 int32_t op,
                                                 const double q[PPI_PART]);
/* Give operator op (already added, with no parts) the class cls as one
** part of its own FLOPs and bytes: a convolution whose geometry the
** reader knows (PPI_CONV_WINOGRAD). */
PP_INTERNAL pp_status ppi_model_builder_set_class(pp_model_builder *b,
                                                  int32_t op, double cls);
/* The roofline parts of operator v: *n parts of PPI_PART numbers at the
** result (the operator's own totals as one part when it has none, of
** the class its kind says, ppi_kind_is_conv). */
PP_INTERNAL const double *ppi_model_parts(const struct pp_model *m, int32_t v,
                                          int32_t *n, double one[PPI_PART]);
/* Whether an operator kind is a convolution ("Conv", "Conv2d",
** "ConvTranspose", any case): PyTorch runs it through cuDNN. */
PP_INTERNAL bool ppi_kind_is_conv(const char *kind);
/* TUNING: the share of the peak memory bandwidth that memory-bound
** operators reach, 0.8: Jia et al. 2018 (docs/REFERENCES.md [JIA18])
** measured 750 of the V100's 900 GB/s (0.83) with a streaming kernel;
** rounded down for the read-modify-write mix of element-wise training
** operators.  Not fitted to the benchmarks. */
#define PPI_MEM_EFFICIENCY 0.8
/* pp_model_op_time without the model's loss (AMP's conventions, which
** have none). */
PP_INTERNAL pp_status ppi_model_op_time_profiled(const pp_model *m, int32_t v,
                                                 const pp_type_key *t,
                                                 int32_t tp, int32_t mbs,
                                                 pp_op_time *out);
/* The model's loss (pp_model_builder_set_loss) on type *t at (tp, mbs):
** its bytes scaled by mbs / reference over tp, at the type's memory
** bandwidth times PPI_MEM_EFFICIENCY; 0 where the bandwidth is unknown. */
PP_INTERNAL void ppi_model_loss_ms(const pp_model *m, const pp_type_key *t,
                                   int32_t tp, int32_t mbs, double *fwd,
                                   double *bwd);
/* Fit every profile series: the operator's times at the profiled
** micro-batch sizes of one type and tp are noisy measurements of a line,
** a fixed cost per call plus a cost per sample, so where a series has
** three sizes or more each point is replaced by the least-squares line
** through them, in relative error (weights 1 / time^2: timing noise is a
** share of the time); with fewer sizes, or where the line falls with the
** micro-batch or is not positive at every point, the points stay
** (model_time.c; docs/FORMATS.md, "Which time applies"). */
PP_INTERNAL pp_status ppi_model_fit_profiles(pp_ctx *ctx, struct pp_model *m);
/* The forward and backward of op v at table t (-1: its own fields), as
** the times read them: the fitted line's value (ppi_model_fit_profiles). */
PP_INTERNAL void ppi_model_point_times(const struct pp_model *m, int32_t v,
                                       int32_t t, double *f, double *b);
/* The roofline time in ms of flops FLOPs and bytes bytes on a device of
** peak_tflops at efficiency eff and gbps of memory bandwidth (at
** PPI_MEM_EFFICIENCY): the larger of the two; 0 where an input is 0. */
PP_INTERNAL double ppi_roofline_ms(double flops, double bytes,
                                   double peak_tflops, double eff, double gbps);
/* The transposes cuDNN wraps around a tensor-core convolution on NCHW
** tensors (PP_MF_CONTIGUOUS), in ms: every operand is rewritten in NHWC
** before the kernel and every result back after it, a read and a write
** of each, so the convolution's bytes move twice more, at gbps times
** PPI_MEM_EFFICIENCY; 0 where the bandwidth is unknown.  They are kernels
** of their own, so they add to the roofline rather than overlap it. */
PP_INTERNAL double ppi_transpose_ms(double bytes, double gbps);
/* The number of layers pp_model_chain_view would make (without building
** them, so no sum can overflow). */
PP_INTERNAL pp_status ppi_chain_nlayer(pp_ctx *ctx, const struct pp_model *m,
                                       int32_t *nlayer);

/* Built-in models (model_builtin.c) and the parametric transformer
** (model_transformer.c). */
PP_INTERNAL pp_status ppi_model_builtin(pp_ctx *ctx, const char *name,
                                        pp_model **out, bool *found);

/* TUNING: the fraction of a GPU's peak that the compute term of the
** roofline assumes when the spec gives no eff= (docs/FORMATS.md,
** docs/COST_MODEL.md "Roofline"): 0.5, the ONNX importer's default, so
** that both paths to one network use one efficiency.  Memory-bound operators
** are priced by their own term, so this is the share of peak of the
** matmul and convolution kernels, above the 0.3-0.4 whole-model
** utilisation large runs report (Megatron-LM: 39 TFLOP/s, 30% of a
** V100); bench/bench_throughput.c shows how published single-GPU
** throughputs compare (it was 0.4 before the roofline, 52da8ee; not
** fitted to the benchmark). */
#define PPI_DEFAULT_EFFICIENCY 0.5

struct ppi_transformer_params {
  int32_t layers, hidden, heads, seq, vocab, ffn; /* ffn 0: 4*hidden */
  int32_t micro_batch;
  int32_t bytes_per_elem; /* 2: fp16/bf16 */
  const char *type;       /* reference device type (catalog name) */
  double efficiency;      /* fraction of peak */
  bool tie_embeddings;
};
PP_INTERNAL void ppi_transformer_params_init(struct ppi_transformer_params *p);
PP_INTERNAL pp_status
ppi_model_transformer(pp_ctx *ctx, const struct ppi_transformer_params *p,
                      const char *source, pp_model **out);

/* Operator-level generators (model_opnet.c): kind "resnet", "bert",
** "swin" or "fpn"; each uses the fields it needs. */
struct ppi_opnet_params {
  const char *kind;
  const char *type; /* reference GPU (catalog name) */
  double efficiency;
  int32_t batch, image, depth;               /* CNNs */
  int32_t layers, hidden, heads, seq, vocab; /* BERT */
  int32_t embed, window, stages[4];          /* Swin */
  int32_t channels;                          /* FPN */
  pp_memory_format memory_format;            /* CNNs; default NHWC */
};
PP_INTERNAL void ppi_opnet_params_init(struct ppi_opnet_params *p,
                                       const char *kind);
PP_INTERNAL pp_status ppi_model_opnet(pp_ctx *ctx,
                                      const struct ppi_opnet_params *p,
                                      const char *source, pp_model **out);

#endif /* PP_MODEL_H */

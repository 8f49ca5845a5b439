// GPU kernels for the operators of the tensor language, prepared once and run many times.
//
// prepare() decodes a signature (op + child types), creates the cuDNN descriptors, picks the
// convolution algorithm (cuDNN's heuristic, gpu_ops.cu ConvSwitches) and sizes the shared
// workspace; run() only enqueues work on the context's stream (it never allocates or
// synchronizes, so it can be captured in a CUDA graph). The cuda cost model times run() on
// buffers sized to the one operator, inside a captured graph (time_op); the GPU executor runs
// a whole graph with the same kernels, so measured costs and end-to-end times agree.
//
// Implementation per operator:
//   conv       cuDNN, the heuristic's first algorithm that runs; relu (with or without bias) fused by
//              cudnnConvolutionBiasActivationForward; bias without activation by
//              cudnnAddTensor; sigmoid/tanh by a separate bias+activation kernel; asymmetric
//              pads by an explicit zero-pad kernel first (cuDNN pads symmetrically only)
//   matmul     cuBLAS SGEMM, strided-batched (broadcast batch = stride 0) or pointer-array
//              batched for partial broadcasts; bias/activation by one extra kernel
//   pools      cuDNN for symmetric pads, our direct kernel otherwise
//   ewadd/mul  our broadcasting kernel; relu/tanh/sigmoid our element-wise kernel
//   transpose  our gather kernel (any dtype of 1-8 bytes); concat/split cudaMemcpy2DAsync
//   enlarge/merge  our kernels (TASO's semantics)
// Structural nodes (has_kernel false: leaves, reshape, non-moving transpose, split_0/1,
// select, noop, opaque) have no kernel: the executor aliases or supplies them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lang/op.h"
#include "lang/types.h"
#include "gpu_cost/gpu_runtime.h"
#include "gpu_cost/op_params.h"

namespace tensat::gpu {

using Children = std::vector<const ValueType*>;

class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Enqueues the operator. args: one device pointer per child, in child order (nullptr for
  /// parameter children and a bias of `none`); out: the output (a split writes its two parts
  /// contiguously, part 0 first).
  virtual void run(const std::vector<const void*>& args, void* out) = 0;
  /// How the kernel was set up, for profiles (e.g. the convolution algorithm chosen and the
  /// candidates' times); empty where there is nothing to say.
  virtual std::string detail() const { return {}; }
};

/// Whether the operator runs a kernel (see the header comment).
inline bool has_kernel(Op op, const Children& children) {
  return op != Op::Opaque && !cost::is_free_node(op, children);
}

/// Prepares the kernel of a well-typed node; throws GpuError if the node has no kernel or
/// is not supported on the GPU (e.g. non-f32 data where float math is needed).
std::unique_ptr<Kernel> prepare(Context& ctx, Op op, const Children& children);

/// How one operator was timed (time_op).
struct OpTiming {
  double per_launch_ms = 0;  ///< the operator's time per call inside a replay, its launch overheads included
  int copies = 0;            ///< calls captured back to back in the replayed graph
  bool graph = true;         ///< false: the capture failed and the calls were launched eagerly
  std::string capture_error;
};

/// Times one operator the way a model runs it: random inputs and the output are allocated
/// and the kernel prepared outside the timed region; `copies` calls (enough for about 0.5 ms,
/// 2 to 100) are captured back to back as one CUDA graph, which is replayed `warmup` times,
/// then `repeats` times back to back with an event between replays; the result is the median
/// replay divided by `copies`. Everything is freed before returning. If the capture fails, the
/// same calls are launched eagerly back to back (OpTiming::graph false).
OpTiming time_op(Context& ctx, Op op, const Children& children, int warmup, int repeats);
/// Whether time_op reads conv's and matmul's weights from memory rather than from the L2 cache
/// (the default; TENSAT_COST_COLD_WEIGHTS=0 turns it off). Inside a model an operator's weights
/// were last read one inference ago, and a model's weights exceed the L2 cache; copies of one
/// operator back to back on the same buffers find them cached, and their costs then added up
/// to 0.76 of ResNet-50's and Inception-v3's graph time (H200, 2026-11-26; with cold weights
/// 0.98). Call i of a replay reads weight set i % S, S copies of the weight and bias holding at
/// least twice the L2 cache (at most 256; a replay then holds at least S calls). Matmul's
/// second operand counts as a weight even where it is an activation (attention). Switched off,
/// the cuda model's method ends in "-warm-weights" (measurement_variant).
bool cold_weights();
/// What the measurements of this process differ by from the default way (the conv switches of
/// gpu_ops.cu, cold_weights()), as a suffix of the cuda model's method ("" for the default), so
/// costs measured another way are never mixed with the default's in a cache, e.g.
/// "-conv-retime-cold-weights".
std::string measurement_variant();
/// time_op(...).per_launch_ms.
double measure_op(Context& ctx, Op op, const Children& children, int warmup, int repeats);

}  // namespace tensat::gpu

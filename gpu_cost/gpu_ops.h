// GPU kernels for the operators of the tensor language, prepared once and run many times.
//
// prepare() decodes a signature (op + child types), creates the cuDNN descriptors, picks the
// fastest convolution algorithm (cudnnFindConvolutionForwardAlgorithm) and sizes the shared
// workspace; run() only enqueues work on the context's stream. The cuda cost model times
// run() on buffers sized to the one operator (measure_op); the GPU executor runs a whole
// graph with the same kernels, so measured costs and end-to-end times agree.
//
// Implementation per operator:
//   conv       cuDNN, fastest algorithm; relu (with or without bias) fused by
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
};

/// Whether the operator runs a kernel (see the header comment).
inline bool has_kernel(Op op, const Children& children) {
  return op != Op::Opaque && !cost::is_free_node(op, children);
}

/// Prepares the kernel of a well-typed node; throws GpuError if the node has no kernel or
/// is not supported on the GPU (e.g. non-f32 data where float math is needed).
std::unique_ptr<Kernel> prepare(Context& ctx, Op op, const Children& children);

/// Milliseconds of one operator: allocates random inputs and the output sized to it,
/// prepares, runs `warmup` times, then the median of `repeats` event-timed runs; frees
/// everything before returning.
double measure_op(Context& ctx, Op op, const Children& children, int warmup, int repeats);

}  // namespace tensat::gpu

// GPU kernels of the opaque ONNX operators (exec/opaque_decode.h descriptions on float32 data),
// prepared once (parameters such as gather indices and batch-norm scales uploaded, geometry
// resolved) and run many times, like the language's operators in gpu_ops.h.
//
//   Unary, Binary (broadcast), Affine   element-wise kernels (exec/opaque_math.h formulas)
//   Softmax        one block per row for the last axis, one thread per row otherwise
//   Reduce         one block per output element (tree reduction in shared memory)
//   Pad            one thread per output element (constant / reflect / edge)
//   Pool           the direct pooling kernel of gpu_kernels.cu with the padded extent
//   Gather         one thread per output element, indices on the device
//   Slice, Expand, Transpose   the strided gather kernel (exec/opaque_host.h strided_map)
//   Concat         one row copy per input (cudaMemcpy2DAsync)
// View and Host descriptions have no kernel: the executor aliases views and evaluates Host
// nodes once on the host.
#pragma once

#include <memory>
#include <vector>

#include "exec/opaque_decode.h"
#include "gpu_cost/gpu_ops.h"

namespace tensat::gpu {

/// Prepares the kernel of a decoded opaque node (Decoded::f32, not a View or Host). Its run()
/// takes one device pointer per data operand, in Decoded::data order. Throws GpuError when
/// the description has no GPU kernel (e.g. a rank above 8 for the strided kernels).
std::unique_ptr<Kernel> prepare_opaque(Context& ctx, const exec::opaque::Decoded& d, const TensorType& out);

/// The number of kernels run() launches (Concat: one per input; the others: one).
int opaque_launches(const exec::opaque::Decoded& d);

}  // namespace tensat::gpu

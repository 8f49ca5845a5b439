// GPU kernels of the opaque ONNX operators (see gpu_opaque.h).
#include <algorithm>
#include <cmath>

#include "exec/opaque_host.h"
#include "gpu_cost/gpu_internal.cuh"
#include "gpu_cost/gpu_opaque.h"

namespace tensat::gpu {

namespace {

namespace op = exec::opaque;

float* fp(void* p) { return static_cast<float*>(p); }
const float* cfp(const void* p) { return static_cast<const float*>(p); }

IndexMap index_map(const Shape& dims, const std::vector<int64_t>& strides, const char* what) {
  if (dims.size() > static_cast<size_t>(kMaxDims))
    throw GpuError(std::string(what) + ": rank " + std::to_string(dims.size()) + " above " + std::to_string(kMaxDims));
  IndexMap m;
  m.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    m.out_dims[d] = dims[d];
    m.in_strides[d] = strides[d];
  }
  return m;
}

// ---- device code ------------------------------------------------------------------------------

__global__ void unary_fn_kernel(const float* x, float* y, int64_t n, op::UnaryFn fn, float a, float b) {
  GRID_STRIDE(i, n) y[i] = op::unary_apply(fn, x[i], a, b);
}

__global__ void binary_fn_kernel(op::BinaryFn fn, const float* a, IndexMap ma, const float* b, IndexMap mb, float* y,
                                 int64_t n) {
  GRID_STRIDE(i, n) y[i] = op::binary_apply<float>(fn, a[map_index(i, ma)], b[map_index(i, mb)]);
}

__global__ void affine_kernel(const float* x, const float* scale, const float* shift, int64_t channels, int64_t inner,
                              float* y, int64_t n) {
  GRID_STRIDE(i, n) {
    int64_t c = (i / inner) % channels;
    y[i] = x[i] * scale[c] + shift[c];
  }
}

// Tree reduction over the block (blockDim.x a power of two, `red` blockDim.x floats).
__device__ float block_reduce(float v, float* red, bool max) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = max ? fmaxf(red[threadIdx.x], red[threadIdx.x + s]) : red[threadIdx.x] + red[threadIdx.x + s];
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

// Softmax over contiguous rows of n elements, one block per row.
__global__ void softmax_rows_kernel(const float* x, float* y, int64_t rows, int64_t n, bool log) {
  extern __shared__ float red[];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float m = -INFINITY;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) m = fmaxf(m, xr[k]);
    m = block_reduce(m, red, true);
    float s = 0.0f;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) s += expf(xr[k] - m);
    s = block_reduce(s, red, false);
    const float ls = logf(s);
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) yr[k] = log ? xr[k] - m - ls : expf(xr[k] - m) / s;
  }
}

// Softmax over n elements at stride `inner`, one thread per (outer, inner) row.
__global__ void softmax_strided_kernel(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  GRID_STRIDE(t, outer * inner) {
    const int64_t base = (t / inner) * n * inner + t % inner;
    float m = -INFINITY;
    for (int64_t k = 0; k < n; ++k) m = fmaxf(m, x[base + k * inner]);
    float s = 0.0f;
    for (int64_t k = 0; k < n; ++k) s += expf(x[base + k * inner] - m);
    const float ls = logf(s);
    for (int64_t k = 0; k < n; ++k) {
      const float v = x[base + k * inner];
      y[base + k * inner] = log ? v - m - ls : expf(v - m) / s;
    }
  }
}

// Reduction, one block per output element: `kept` maps an output index to its first input
// element, `reduced` maps r in [0, group) to the offset of the r-th reduced element.
__global__ void reduce_kernel(const float* x, float* y, int64_t n_out, IndexMap kept, IndexMap reduced, int64_t group,
                              op::ReduceKind kind) {
  extern __shared__ float red[];
  const bool max = kind == op::ReduceKind::Max;
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    const int64_t base = map_index(o, kept);
    float acc = max ? -INFINITY : 0.0f;
    for (int64_t r = threadIdx.x; r < group; r += blockDim.x) {
      const float v = x[base + map_index(r, reduced)];
      acc = max ? fmaxf(acc, v) : acc + v;
    }
    acc = block_reduce(acc, red, max);
    if (threadIdx.x == 0) y[o] = kind == op::ReduceKind::Mean ? acc / static_cast<float>(group) : acc;
  }
}

struct PadMap {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {}, in_dims[kMaxDims] = {}, in_strides[kMaxDims] = {}, begin[kMaxDims] = {};
  op::PadMode mode = op::PadMode::Constant;
  float value = 0;
};

__global__ void pad_kernel(const float* x, float* y, int64_t n, PadMap m) {
  GRID_STRIDE(i, n) {
    int64_t rem = i, off = 0;
    bool inside = true;
    for (int d = m.rank - 1; d >= 0; --d) {
      const int64_t o = rem % m.out_dims[d];
      rem /= m.out_dims[d];
      const int64_t src = op::pad_source(m.mode, o, m.begin[d], m.in_dims[d]);
      if (src < 0) inside = false;
      else off += src * m.in_strides[d];
    }
    y[i] = inside ? x[off] : m.value;
  }
}

__global__ void gather_axis_kernel(const float* x, const int64_t* idx, int64_t nidx, int64_t axis_len, int64_t inner,
                                   float* y, int64_t n) {
  GRID_STRIDE(i, n) {
    const int64_t k = i % inner, j = (i / inner) % nidx, o = i / (inner * nidx);
    y[i] = x[(o * axis_len + idx[j]) * inner + k];
  }
}

// ---- kernels ----------------------------------------------------------------------------------

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(Context& ctx, const op::Unary& u, int64_t n) : c_(ctx.impl()), u_(u), n_(n) {}
  void run(const std::vector<const void*>& args, void* out) override {
    if (n_ == 0) return;
    clear_stale_error();
    unary_fn_kernel<<<blocks_for(n_), kThreads, 0, c_.stream>>>(cfp(args[0]), fp(out), n_, u_.fn, u_.a, u_.b);
    check_launch("unary_fn_kernel");
  }

 private:
  ContextImpl& c_;
  op::Unary u_;
  int64_t n_;
};

// Broadcast map of operand shape `in` against `out` (right-aligned; size-1 dims read stride 0).
IndexMap broadcast_of(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  auto own = op::strides_of(in);
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) st[lead + d] = in[d] == 1 ? 0 : own[d];
  return index_map(out, st, "broadcast");
}

class BinaryFnKernel final : public Kernel {
 public:
  BinaryFnKernel(Context& ctx, const op::Binary& b)
      : c_(ctx.impl()), fn_(b.fn), ma_(broadcast_of(b.a, b.out)), mb_(broadcast_of(b.b, b.out)), n_(num_elements(b.out)) {}
  void run(const std::vector<const void*>& args, void* out) override {
    if (n_ == 0) return;
    clear_stale_error();
    binary_fn_kernel<<<blocks_for(n_), kThreads, 0, c_.stream>>>(fn_, cfp(args[0]), ma_, cfp(args[1]), mb_, fp(out), n_);
    check_launch("binary_fn_kernel");
  }

 private:
  ContextImpl& c_;
  op::BinaryFn fn_;
  IndexMap ma_, mb_;
  int64_t n_;
};

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(Context& ctx, const op::Softmax& d) : c_(ctx.impl()), d_(d) {}
  void run(const std::vector<const void*>& args, void* out) override {
    const int64_t rows = d_.outer * d_.inner;
    if (rows == 0 || d_.n == 0) return;
    clear_stale_error();
    if (d_.inner == 1) {
      const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, 65535LL * 32));
      softmax_rows_kernel<<<grid, kThreads, kThreads * sizeof(float), c_.stream>>>(cfp(args[0]), fp(out), rows, d_.n,
                                                                                   d_.log);
    } else {
      softmax_strided_kernel<<<blocks_for(rows), kThreads, 0, c_.stream>>>(cfp(args[0]), fp(out), d_.outer, d_.n,
                                                                           d_.inner, d_.log);
    }
    check_launch("softmax_kernel");
  }

 private:
  ContextImpl& c_;
  op::Softmax d_;
};

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(Context& ctx, const op::Reduce& d) : c_(ctx.impl()), kind_(d.kind) {
    auto st = op::strides_of(d.in);
    Shape kd, rd;
    std::vector<int64_t> ks, rs;
    for (size_t k = 0; k < d.in.size(); ++k) {
      (d.reduced[k] ? rd : kd).push_back(d.in[k]);
      (d.reduced[k] ? rs : ks).push_back(st[k]);
    }
    kept_ = index_map(kd, ks, "reduce");
    reduced_ = index_map(rd, rs, "reduce");
    n_out_ = num_elements(kd);
    group_ = num_elements(rd);
    threads_ = 32;
    while (threads_ < kThreads && threads_ < group_) threads_ *= 2;
  }
  void run(const std::vector<const void*>& args, void* out) override {
    if (n_out_ == 0) return;
    clear_stale_error();
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(n_out_, 65535LL * 32));
    reduce_kernel<<<grid, threads_, threads_ * sizeof(float), c_.stream>>>(cfp(args[0]), fp(out), n_out_, kept_,
                                                                           reduced_, group_, kind_);
    check_launch("reduce_kernel");
  }

 private:
  ContextImpl& c_;
  op::ReduceKind kind_;
  IndexMap kept_, reduced_;
  int64_t n_out_ = 0, group_ = 0;
  unsigned threads_ = 32;
};

class AffineKernel final : public Kernel {
 public:
  AffineKernel(Context& ctx, const op::Affine& d)
      : c_(ctx.impl()), d_(d), scale_(d.scale.size() * sizeof(float)), shift_(d.shift.size() * sizeof(float)) {
    upload(ctx, scale_.data(), d.scale.data(), scale_.bytes());
    upload(ctx, shift_.data(), d.shift.data(), shift_.bytes());
  }
  void run(const std::vector<const void*>& args, void* out) override {
    const int64_t n = d_.outer * d_.channels * d_.inner;
    if (n == 0) return;
    clear_stale_error();
    affine_kernel<<<blocks_for(n), kThreads, 0, c_.stream>>>(cfp(args[0]), scale_.f32(), shift_.f32(), d_.channels,
                                                             d_.inner, fp(out), n);
    check_launch("affine_kernel");
  }

 private:
  ContextImpl& c_;
  op::Affine d_;
  DeviceBuffer scale_, shift_;
};

class PadKernel final : public Kernel {
 public:
  PadKernel(Context& ctx, const op::Pad& d) : c_(ctx.impl()), n_(num_elements(d.out)) {
    if (d.out.size() > static_cast<size_t>(kMaxDims)) throw GpuError("Pad: rank above 8");
    auto st = op::strides_of(d.in);
    m_.rank = static_cast<int>(d.out.size());
    for (size_t k = 0; k < d.out.size(); ++k) {
      m_.out_dims[k] = d.out[k];
      m_.in_dims[k] = d.in[k];
      m_.in_strides[k] = st[k];
      m_.begin[k] = d.begin[k];
    }
    m_.mode = d.mode;
    m_.value = d.value;
  }
  void run(const std::vector<const void*>& args, void* out) override {
    if (n_ == 0) return;
    clear_stale_error();
    pad_kernel<<<blocks_for(n_), kThreads, 0, c_.stream>>>(cfp(args[0]), fp(out), n_, m_);
    check_launch("pad_kernel");
  }

 private:
  ContextImpl& c_;
  PadMap m_;
  int64_t n_;
};

class OpaquePoolKernel final : public Kernel {
 public:
  OpaquePoolKernel(Context& ctx, const op::Pool& d) : c_(ctx.impl()), d_(d) {}
  void run(const std::vector<const void*>& args, void* out) override {
    launch_pool(c_.stream, d_.max, d_.count_include_pad, cfp(args[0]), d_.n * d_.c, d_.h, d_.w, d_.kh, d_.kw, d_.sh,
                d_.sw, d_.pt, d_.pl, fp(out), d_.oh, d_.ow, d_.h + d_.pt + d_.pb, d_.w + d_.pl + d_.pr);
  }

 private:
  ContextImpl& c_;
  op::Pool d_;
};

class GatherAxisKernel final : public Kernel {
 public:
  GatherAxisKernel(Context& ctx, const op::Gather& d)
      : c_(ctx.impl()), d_(d), idx_(d.indices.size() * sizeof(int64_t)) {
    upload(ctx, idx_.data(), d.indices.data(), idx_.bytes());
  }
  void run(const std::vector<const void*>& args, void* out) override {
    const auto nidx = static_cast<int64_t>(d_.indices.size());
    const int64_t n = d_.outer * nidx * d_.inner;
    if (n == 0) return;
    clear_stale_error();
    gather_axis_kernel<<<blocks_for(n), kThreads, 0, c_.stream>>>(cfp(args[0]), static_cast<const int64_t*>(idx_.data()),
                                                                  nidx, d_.axis_len, d_.inner, fp(out), n);
    check_launch("gather_axis_kernel");
  }

 private:
  ContextImpl& c_;
  op::Gather d_;
  DeviceBuffer idx_;
};

// Slice, Expand, Transpose: out[i] = in[base + map(i)].
class StridedKernel final : public Kernel {
 public:
  StridedKernel(Context& ctx, const op::StridedMap& m) : c_(ctx.impl()), base_(m.base), n_(num_elements(m.out_dims)) {
    map_ = index_map(m.out_dims, m.in_strides, "strided copy");
  }
  void run(const std::vector<const void*>& args, void* out) override {
    launch_gather(c_.stream, cfp(args[0]) + base_, map_, out, n_, sizeof(float));
  }

 private:
  ContextImpl& c_;
  IndexMap map_;
  int64_t base_, n_;
};

class OpaqueConcatKernel final : public Kernel {
 public:
  OpaqueConcatKernel(Context& ctx, const op::Concat& d) : c_(ctx.impl()) {
    const auto axis = static_cast<size_t>(d.axis);
    for (size_t k = 0; k < axis; ++k) outer_ *= static_cast<size_t>(d.out[k]);
    for (const Shape& s : d.ins) {
      size_t inner = 1;
      for (size_t k = axis; k < s.size(); ++k) inner *= static_cast<size_t>(s[k]);
      rows_.push_back(inner * sizeof(float));
      total_ += rows_.back();
    }
  }
  void run(const std::vector<const void*>& args, void* out) override {
    size_t at = 0;
    for (size_t i = 0; i < rows_.size(); ++i) {
      copy_rows(c_.stream, static_cast<char*>(out) + at, total_, args[i], rows_[i], rows_[i], outer_);
      at += rows_[i];
    }
  }

 private:
  ContextImpl& c_;
  std::vector<size_t> rows_;
  size_t total_ = 0, outer_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> prepare_opaque(Context& ctx, const op::Decoded& d, const TensorType& out) {
  if (!d.f32) throw GpuError("opaque kernel: data of another type than float32");
  if (out.dtype != DType::F32) throw GpuError("opaque kernel: the output is not float32");
  const auto& desc = d.desc;
  if (const auto* u = std::get_if<op::Unary>(&desc)) return std::make_unique<UnaryKernel>(ctx, *u, num_elements(out.shape));
  if (const auto* b = std::get_if<op::Binary>(&desc)) return std::make_unique<BinaryFnKernel>(ctx, *b);
  if (const auto* s = std::get_if<op::Softmax>(&desc)) return std::make_unique<SoftmaxKernel>(ctx, *s);
  if (const auto* r = std::get_if<op::Reduce>(&desc)) return std::make_unique<ReduceKernel>(ctx, *r);
  if (const auto* a = std::get_if<op::Affine>(&desc)) return std::make_unique<AffineKernel>(ctx, *a);
  if (const auto* p = std::get_if<op::Pad>(&desc)) return std::make_unique<PadKernel>(ctx, *p);
  if (const auto* p = std::get_if<op::Pool>(&desc)) return std::make_unique<OpaquePoolKernel>(ctx, *p);
  if (const auto* g = std::get_if<op::Gather>(&desc)) return std::make_unique<GatherAxisKernel>(ctx, *g);
  if (const auto* c = std::get_if<op::Concat>(&desc)) return std::make_unique<OpaqueConcatKernel>(ctx, *c);
  if (std::holds_alternative<op::Slice>(desc) || std::holds_alternative<op::Expand>(desc) ||
      std::holds_alternative<op::Transpose>(desc))
    return std::make_unique<StridedKernel>(ctx, *op::strided_map(desc));
  throw GpuError("opaque kernel: a view or host description has no kernel");
}

int opaque_launches(const op::Decoded& d) {
  if (const auto* c = std::get_if<op::Concat>(&d.desc)) return static_cast<int>(c->ins.size());
  return 1;
}

}  // namespace tensat::gpu

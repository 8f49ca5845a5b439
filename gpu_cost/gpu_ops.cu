// GPU kernels of the tensor language's operators (see gpu_ops.h for the choices).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "lang/weights.h"
#include "gpu_cost/gpu_internal.cuh"
#include "gpu_cost/gpu_ops.h"
#include "gpu_cost/op_params.h"
#include "gpu_cost/timing_stats.h"

namespace tensat::gpu {

namespace {

using cost::ConvDesc;
using cost::MatmulDesc;
using cost::PoolDesc;

int to_int(int64_t v, const char* what) {
  if (v > INT32_MAX || v < INT32_MIN) throw GpuError(std::string(what) + ": dimension too large for cuDNN");
  return static_cast<int>(v);
}

float* f(const void* p) { return const_cast<float*>(static_cast<const float*>(p)); }

// How convolutions are run. The defaults are what the tool does; the environment switches are
// for GPU sessions that compare the alternatives (gpu_cost/README.md, "Profiling a model"),
// read once per process:
//   TENSAT_CONV_ALGO=heur    (default) cuDNN's heuristic order (cudnnGetConvolutionForwardAlgorithm_v7),
//                            its first usable algorithm, untimed
//   TENSAT_CONV_ALGO=retime  cudnnFind, then every usable algorithm re-timed (median of 7
//                            synchronized launches) and the fastest kept (the method until 2026-11-26)
//   TENSAT_CONV_ALGO=find    cudnnFind's first usable algorithm
//   TENSAT_CONV_FUSED=0      never cudnnConvolutionBiasActivationForward (conv, then bias + act)
//   TENSAT_CONV_GEMM1X1=1    1x1 convolutions (stride 1, no padding, one group) as one cuBLAS GEMM
// Measured on an H200 (2026-11-26, three processes each, graph-mode medians): ResNet-50 heur
// 2.028/2.027/2.029 ms, retime 2.40-2.65, find 2.74-2.76; Inception-v3 heur 3.680/3.679/3.681,
// retime 4.25-5.67, find 4.89-6.72; PyTorch (cudnn.benchmark) 2.04-2.08 and 3.70-3.84 ms.
// Timing candidates at build time picks different, often slower algorithms in each process:
// the GPU sits idle between the build's short bursts, so its clocks (345 MHz idle, 1980 under
// load) are not what they are when the model runs.
struct ConvSwitches {
  bool fused = true;
  bool gemm1x1 = false;
  enum class Algo { Heuristic, Retime, Find } algo = Algo::Heuristic;
};
const ConvSwitches& conv_switches() {
  static const ConvSwitches s = [] {
    ConvSwitches c;
    if (const char* v = std::getenv("TENSAT_CONV_FUSED")) c.fused = std::string(v) != "0";
    if (const char* v = std::getenv("TENSAT_CONV_ALGO")) {
      const std::string a(v);
      if (a == "retime") c.algo = ConvSwitches::Algo::Retime;
      else if (a == "find") c.algo = ConvSwitches::Algo::Find;
    }
    if (const char* v = std::getenv("TENSAT_CONV_GEMM1X1")) c.gemm1x1 = std::string(v) == "1";
    return c;
  }();
  return s;
}

/// Maps each output index to an input of shape `in` broadcast (right-aligned) to `out`.
IndexMap broadcast_map(const Shape& in, const Shape& out) {
  if (out.size() > static_cast<size_t>(kMaxDims))
    throw GpuError("broadcast: rank " + std::to_string(out.size()) + " above " + std::to_string(kMaxDims));
  IndexMap m;
  m.rank = static_cast<int>(out.size());
  auto st = cost::row_major_strides(in);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < out.size(); ++d) {
    m.out_dims[d] = out[d];
    m.in_strides[d] = (d < lead || in[d - lead] == 1) ? 0 : st[d - lead];
  }
  return m;
}

// ---- conv -----------------------------------------------------------------------------

class ConvKernel final : public Kernel {
 public:
  ConvKernel(Context& ctx, const ConvDesc& d) : c_(ctx.impl()), d_(d) {
    explicit_pad_ = !d.symmetric_pads();
    int64_t ph = d.h, pw = d.w, pad_h = d.pads.top, pad_w = d.pads.left;
    if (explicit_pad_) {
      ph = d.h + d.pads.top + d.pads.bottom;
      pw = d.w + d.pads.left + d.pads.right;
      pad_h = pad_w = 0;
      pad_buf_ = DeviceBuffer(static_cast<size_t>(d.n * d.cin * ph * pw) * sizeof(float));
    }
    TENSAT_CUDNN(cudnnCreateTensorDescriptor(&x_));
    TENSAT_CUDNN(cudnnCreateTensorDescriptor(&y_));
    TENSAT_CUDNN(cudnnCreateTensorDescriptor(&b_));
    TENSAT_CUDNN(cudnnCreateFilterDescriptor(&w_));
    TENSAT_CUDNN(cudnnCreateConvolutionDescriptor(&conv_));
    TENSAT_CUDNN(cudnnCreateActivationDescriptor(&act_));
    TENSAT_CUDNN(cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, to_int(d.n, "conv"),
                                            to_int(d.cin, "conv"), to_int(ph, "conv"), to_int(pw, "conv")));
    TENSAT_CUDNN(cudnnSetTensor4dDescriptor(y_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, to_int(d.n, "conv"),
                                            to_int(d.cout, "conv"), to_int(d.oh, "conv"), to_int(d.ow, "conv")));
    TENSAT_CUDNN(cudnnSetTensor4dDescriptor(b_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, to_int(d.cout, "conv"), 1, 1));
    TENSAT_CUDNN(cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, to_int(d.cout, "conv"),
                                            to_int(d.cin_per_group, "conv"), to_int(d.kh, "conv"),
                                            to_int(d.kw, "conv")));
    TENSAT_CUDNN(cudnnSetConvolution2dDescriptor(conv_, to_int(pad_h, "conv"), to_int(pad_w, "conv"),
                                                 to_int(d.sh, "conv"), to_int(d.sw, "conv"), 1, 1,
                                                 CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    TENSAT_CUDNN(cudnnSetConvolutionGroupCount(conv_, to_int(d.groups, "conv")));
    TENSAT_CUDNN(cudnnSetConvolutionMathType(conv_, c_.tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    TENSAT_CUDNN(cudnnSetActivationDescriptor(act_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    gemm_ = conv_switches().gemm1x1 && d.kh == 1 && d.kw == 1 && d.sh == 1 && d.sw == 1 && d.groups == 1 &&
            d.pads.top == 0 && d.pads.bottom == 0 && d.pads.left == 0 && d.pads.right == 0;
    if (gemm_) {
      detail_ = "cublas gemm (1x1)";
      return;
    }
    choose_algorithm(ctx, d.n, d.cin, ph, pw, pad_h, pad_w);
    if (d.act == Act::Relu && !d.has_bias) {
      zero_bias_ = DeviceBuffer(static_cast<size_t>(d.cout) * sizeof(float));
      fill_zero(ctx, zero_bias_.data(), zero_bias_.bytes());
    }
  }

  ~ConvKernel() override {
    cudnnDestroyTensorDescriptor(x_);
    cudnnDestroyTensorDescriptor(y_);
    cudnnDestroyTensorDescriptor(b_);
    cudnnDestroyFilterDescriptor(w_);
    cudnnDestroyConvolutionDescriptor(conv_);
    cudnnDestroyActivationDescriptor(act_);
  }

  std::string detail() const override { return detail_; }

  void run(const std::vector<const void*>& args, void* out) override {
    const void* x = args[4];
    const void* w = args[5];
    const void* bias = args[6];
    if (gemm_) {
      // Y[n] (cout x hw) = W (cout x cin) X[n] (cin x hw), row-major: column-major Y^T = X^T W^T.
      const int hw = to_int(d_.h * d_.w, "conv"), cout = to_int(d_.cout, "conv"), cin = to_int(d_.cin, "conv");
      const float one = 1.0f, zero = 0.0f;
      TENSAT_CUBLAS(cublas_api().sgemm_strided_batched(
          c_.cublas, CUBLAS_OP_N, CUBLAS_OP_N, hw, cout, cin, &one, static_cast<const float*>(x), hw,
          static_cast<long long>(cin) * hw, static_cast<const float*>(w), cin, 0, &zero, f(out), hw,
          static_cast<long long>(cout) * hw, to_int(d_.n, "conv")));
      if (bias || d_.act != Act::None)
        launch_bias_act(c_.stream, f(out), static_cast<const float*>(bias), d_.cout, d_.oh * d_.ow, f(out),
                        d_.n * d_.cout * d_.oh * d_.ow, d_.act);
      return;
    }
    if (explicit_pad_) {
      launch_pad(c_.stream, static_cast<const float*>(x), d_.n * d_.cin, d_.h, d_.w, d_.pads.top,
                 d_.pads.left, d_.pads.bottom, d_.pads.right, pad_buf_.f32());
      x = pad_buf_.data();
    }
    const float one = 1.0f, zero = 0.0f;
    void* ws = c_.workspace;
    if (d_.act == Act::Relu && fused_ok_) {
      const void* b = bias ? bias : zero_bias_.data();
      cudnnStatus_t s = cudnnConvolutionBiasActivationForward(
          c_.cudnn, &one, x_, x, w_, w, conv_, algo_, ws, ws_bytes_, &zero, y_, out, b_, b, act_, y_, out);
      if (s == CUDNN_STATUS_SUCCESS) return;
      // cuDNN 9 reports refinements of NOT_SUPPORTED (3001, 3002, ...): compare the category.
#ifdef CUDNN_STATUS_CATEGORY
      const bool not_supported = CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED;
#else
      const bool not_supported = s == CUDNN_STATUS_NOT_SUPPORTED;
#endif
      if (!not_supported) throw_cudnn(s, "cudnnConvolutionBiasActivationForward", __FILE__, __LINE__);
      fused_ok_ = false;  // this algorithm cannot fuse: conv, then bias + relu
    }
    TENSAT_CUDNN(cudnnConvolutionForward(c_.cudnn, &one, x_, x, w_, w, conv_, algo_, ws, ws_bytes_, &zero, y_, out));
    int64_t n = d_.n * d_.cout * d_.oh * d_.ow;
    if (d_.act == Act::None) {
      if (bias) TENSAT_CUDNN(cudnnAddTensor(c_.cudnn, &one, b_, bias, &one, y_, out));
    } else {
      launch_bias_act(c_.stream, f(out), static_cast<const float*>(bias), d_.cout, d_.oh * d_.ow, f(out), n, d_.act);
    }
  }

 private:
  // Input, filter and output buffers of this convolution's geometry (the input padded), for
  // trying algorithms outside the program's arena; filled with random values.
  struct Operands {
    DeviceBuffer x, w, y;
  };
  Operands operands(Context& ctx, int64_t n, int64_t cin, int64_t ph, int64_t pw) const {
    const size_t xs = static_cast<size_t>(n * cin * ph * pw);
    const size_t ws = static_cast<size_t>(d_.cout * d_.cin_per_group * d_.kh * d_.kw);
    Operands o{DeviceBuffer(xs * sizeof(float)), DeviceBuffer(ws * sizeof(float)),
               DeviceBuffer(static_cast<size_t>(d_.n * d_.cout * d_.oh * d_.ow) * sizeof(float))};
    fill_random(ctx, o.x.f32(), xs, 1);
    fill_random(ctx, o.w.f32(), ws, 2);
    return o;
  }

  int fastest(Context& ctx, const cudnnConvolutionFwdAlgoPerf_t* perf, const std::vector<int>& usable, int64_t n,
              int64_t cin, int64_t ph, int64_t pw) {
    // The candidates run in a scratch workspace: the shared one grows only to what the chosen
    // algorithm needs (choose_algorithm).
    size_t need = 0;
    for (int i : usable) need = std::max(need, perf[i].memory);
    DeviceBuffer scratch(need);
    const Operands o = operands(ctx, n, cin, ph, pw);
    const DeviceBuffer &x = o.x, &w = o.w, &y = o.y;
    const float one = 1.0f, zero = 0.0f;
    int best = usable[0];
    double best_ms = 0;
    for (int i : usable) {
      TENSAT_CUDNN(cudnnSetConvolutionMathType(conv_, c_.tf32 ? perf[i].mathType : CUDNN_FMA_MATH));
      auto call = [&] {
        TENSAT_CUDNN(cudnnConvolutionForward(c_.cudnn, &one, x_, x.data(), w_, w.data(), conv_, perf[i].algo,
                                             scratch.data(), need, &zero, y_, y.data()));
      };
      const double ms = ctx.median_time_ms(call, 2, 7);
      candidates_ += " " + std::to_string(perf[i].algo) + ":" + std::to_string(ms);
      if (i == usable[0] || ms < best_ms) best = i, best_ms = ms;
    }
    ctx.synchronize();
    return best;
  }

  // One call of the algorithm on scratch buffers: whether cuDNN accepts and runs it within the
  // workspace budget (an allocation that fails counts as "does not run").
  bool runs(Context& ctx, const cudnnConvolutionFwdAlgoPerf_t& p, int64_t n, int64_t cin, int64_t ph, int64_t pw,
            size_t budget) {
    TENSAT_CUDNN(cudnnSetConvolutionMathType(conv_, c_.tf32 ? p.mathType : CUDNN_FMA_MATH));
    size_t ws = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(c_.cudnn, x_, w_, conv_, y_, p.algo, &ws) != CUDNN_STATUS_SUCCESS ||
        ws > budget) {
      clear_stale_error();
      return false;
    }
    std::optional<DeviceBuffer> scratch;
    std::optional<Operands> o;
    try {
      scratch.emplace(ws);
      o.emplace(operands(ctx, n, cin, ph, pw));
    } catch (const GpuError&) {  // out of memory: try the next algorithm
      clear_stale_error();
      return false;
    }
    const float one = 1.0f, zero = 0.0f;
    const cudnnStatus_t st = cudnnConvolutionForward(c_.cudnn, &one, x_, o->x.data(), w_, o->w.data(), conv_, p.algo,
                                                     scratch->data(), ws, &zero, y_, o->y.data());
    // A failure of the GPU itself (a sticky error) is an error, not a refusal.
    const cudaError_t sync = cudaStreamSynchronize(c_.stream);
    if (sync != cudaSuccess) throw_cuda(sync, "conv: trial of a heuristic algorithm", __FILE__, __LINE__);
    if (st != CUDNN_STATUS_SUCCESS) {
      clear_stale_error();
      return false;
    }
    return true;
  }

  void choose_algorithm(Context& ctx, int64_t n, int64_t cin, int64_t ph, int64_t pw, int64_t pad_h, int64_t pad_w) {
    std::vector<int64_t> key = {n, cin, ph, pw, d_.cout, d_.cin_per_group, d_.kh, d_.kw, d_.sh, d_.sw, pad_h, pad_w, c_.tf32};
    auto it = c_.conv_algos.find(key);
    if (it == c_.conv_algos.end()) {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int returned = 0;
      const auto how = conv_switches().algo;
      if (how == ConvSwitches::Algo::Heuristic) {
        TENSAT_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(c_.cudnn, x_, w_, conv_, y_,
                                                            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
      } else {
        TENSAT_CUDNN(cudnnFindConvolutionForwardAlgorithm(c_.cudnn, x_, w_, conv_, y_,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
      }
      size_t budget = ctx.free_memory() / 2 + c_.workspace_bytes;
      std::vector<int> usable;  // in cuDNN's order, best first
      for (int i = 0; i < returned; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > budget) continue;
        if (!c_.tf32 && perf[i].mathType != CUDNN_FMA_MATH && perf[i].mathType != CUDNN_DEFAULT_MATH) continue;
        usable.push_back(i);
      }
      if (usable.empty()) throw GpuError("conv: cuDNN found no usable forward algorithm");
      // The heuristic's first usable algorithm that runs (the same in every process; one trial
      // call each, as a heuristic's entry may still be refused). The timed methods are kept for
      // comparisons (see ConvSwitches).
      int chosen = usable[0];
      if (how == ConvSwitches::Algo::Heuristic) {
        chosen = -1;
        for (int i : usable) {
          if (runs(ctx, perf[i], n, cin, ph, pw, budget)) {
            chosen = i;
            break;
          }
        }
        if (chosen < 0) throw GpuError("conv: none of cuDNN's heuristic algorithms runs for this geometry");
      } else if (usable.size() > 1 && how == ConvSwitches::Algo::Retime) {
        chosen = fastest(ctx, perf, usable, n, cin, ph, pw);
      }
      it = c_.conv_algos.emplace(key, std::make_pair(static_cast<int>(perf[chosen].algo),
                                                     static_cast<int>(perf[chosen].mathType))).first;
    }
    algo_ = static_cast<cudnnConvolutionFwdAlgo_t>(it->second.first);
    // Without TF32, stay on FMA math (DEFAULT_MATH may use TF32 tensor cores on Ampere+).
    TENSAT_CUDNN(cudnnSetConvolutionMathType(
        conv_, c_.tf32 ? static_cast<cudnnMathType_t>(it->second.second) : CUDNN_FMA_MATH));
    TENSAT_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(c_.cudnn, x_, w_, conv_, y_, algo_, &ws_bytes_));
    c_.ensure_workspace(ws_bytes_);
    detail_ = "cudnn algo " + std::to_string(static_cast<int>(algo_)) + " math " +
              std::to_string(c_.tf32 ? it->second.second : static_cast<int>(CUDNN_FMA_MATH)) +
              " ws " + std::to_string(ws_bytes_) + (candidates_.empty() ? "" : "; re-timed (algo:ms)" + candidates_);
  }

  ContextImpl& c_;
  ConvDesc d_;
  bool explicit_pad_ = false;
  bool fused_ok_ = conv_switches().fused;
  bool gemm_ = false;
  std::string detail_, candidates_;
  DeviceBuffer pad_buf_, zero_bias_;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, b_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnActivationDescriptor_t act_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t ws_bytes_ = 0;
};

// ---- matmul ---------------------------------------------------------------------------

class MatmulKernel final : public Kernel {
 public:
  MatmulKernel(Context& ctx, const MatmulDesc& d) : c_(ctx.impl()), d_(d) {
    // Per output batch index, the element offsets into a and b (broadcast dims: 0).
    size_t rank = d.out_batch.size();
    auto offsets = [&](const Shape& batch, int64_t mat) {
      std::vector<int64_t> offs(static_cast<size_t>(d.batch));
      auto st = cost::row_major_strides(batch);
      size_t lead = rank - batch.size();
      for (int64_t i = 0; i < d.batch; ++i) {
        int64_t rem = i, off = 0;
        for (size_t k = rank; k-- > 0;) {
          int64_t idx = rem % d.out_batch[k];
          rem /= d.out_batch[k];
          if (k >= lead && batch[k - lead] != 1) off += idx * st[k - lead];
        }
        offs[static_cast<size_t>(i)] = off * mat;
      }
      return offs;
    };
    a_off_ = offsets(d.a_batch, d.m * d.k);
    b_off_ = offsets(d.b_batch, d.k * d.n);
    auto stride_of = [&](const std::vector<int64_t>& offs, int64_t* stride) {
      if (offs.size() < 2) return *stride = 0, true;
      int64_t s = offs[1] - offs[0];
      for (size_t i = 1; i < offs.size(); ++i)
        if (offs[i] - offs[i - 1] != s) return false;
      *stride = s;
      return true;
    };
    strided_ = stride_of(a_off_, &a_stride_) && stride_of(b_off_, &b_stride_);
  }

  void run(const std::vector<const void*>& args, void* out) override {
    const float* a = static_cast<const float*>(args[1]);
    const float* b = static_cast<const float*>(args[2]);
    float* cptr = f(out);
    const float one = 1.0f, zero = 0.0f;
    int m = to_int(d_.m, "matmul"), n = to_int(d_.n, "matmul"), k = to_int(d_.k, "matmul");
    // cuBLAS rejects a leading dimension below 1 (CUBLAS_STATUS_INVALID_VALUE) even when
    // the matrix is empty (k or n is 0).
    const int ldn = std::max(n, 1), ldk = std::max(k, 1);
    // Row-major C = A B is column-major C^T = B^T A^T.
    if (strided_) {
      TENSAT_CUBLAS(cublas_api().sgemm_strided_batched(c_.cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, ldn,
                                                       b_stride_, a, ldk, a_stride_, &zero, cptr, ldn, d_.m * d_.n,
                                                       to_int(d_.batch, "matmul")));
    } else {
      for (int64_t i = 0; i < d_.batch; ++i) {
        TENSAT_CUBLAS(cublas_api().sgemm(c_.cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
                                         b + b_off_[static_cast<size_t>(i)], ldn, a + a_off_[static_cast<size_t>(i)],
                                         ldk, &zero, cptr + i * d_.m * d_.n, ldn));
      }
    }
    if (d_.has_bias || d_.act != Act::None) {
      launch_bias_act(c_.stream, cptr, static_cast<const float*>(args[3]), d_.n, 1, cptr, d_.batch * d_.m * d_.n, d_.act);
    }
  }

 private:
  ContextImpl& c_;
  MatmulDesc d_;
  std::vector<int64_t> a_off_, b_off_;
  bool strided_ = true;
  int64_t a_stride_ = 0, b_stride_ = 0;
};

// ---- pooling --------------------------------------------------------------------------

class PoolKernel final : public Kernel {
 public:
  PoolKernel(Context& ctx, const PoolDesc& d, size_t x_index) : c_(ctx.impl()), d_(d), xi_(x_index) {
    use_cudnn_ = d.symmetric_pads();
    if (!use_cudnn_) return;
    TENSAT_CUDNN(cudnnCreateTensorDescriptor(&x_));
    TENSAT_CUDNN(cudnnCreateTensorDescriptor(&y_));
    TENSAT_CUDNN(cudnnCreatePoolingDescriptor(&pool_));
    TENSAT_CUDNN(cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, to_int(d.n, "pool"),
                                            to_int(d.c, "pool"), to_int(d.h, "pool"), to_int(d.w, "pool")));
    TENSAT_CUDNN(cudnnSetTensor4dDescriptor(y_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, to_int(d.n, "pool"),
                                            to_int(d.c, "pool"), to_int(d.oh, "pool"), to_int(d.ow, "pool")));
    cudnnPoolingMode_t mode = d.max ? CUDNN_POOLING_MAX
                              : d.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                    : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    TENSAT_CUDNN(cudnnSetPooling2dDescriptor(pool_, mode, CUDNN_NOT_PROPAGATE_NAN, to_int(d.kh, "pool"),
                                             to_int(d.kw, "pool"), to_int(d.pads.top, "pool"),
                                             to_int(d.pads.left, "pool"), to_int(d.sh, "pool"), to_int(d.sw, "pool")));
  }

  ~PoolKernel() override {
    if (x_) cudnnDestroyTensorDescriptor(x_);
    if (y_) cudnnDestroyTensorDescriptor(y_);
    if (pool_) cudnnDestroyPoolingDescriptor(pool_);
  }

  void run(const std::vector<const void*>& args, void* out) override {
    const void* x = args[xi_];
    if (use_cudnn_) {
      const float one = 1.0f, zero = 0.0f;
      TENSAT_CUDNN(cudnnPoolingForward(c_.cudnn, pool_, &one, x_, x, &zero, y_, out));
    } else {
      launch_pool(c_.stream, d_.max, d_.count_include_pad, static_cast<const float*>(x), d_.n * d_.c, d_.h, d_.w,
                  d_.kh, d_.kw, d_.sh, d_.sw, d_.pads.top, d_.pads.left, f(out), d_.oh, d_.ow);
    }
  }

 private:
  ContextImpl& c_;
  PoolDesc d_;
  size_t xi_;
  bool use_cudnn_ = true;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnPoolingDescriptor_t pool_ = nullptr;
};

// ---- element-wise and data movement -----------------------------------------------------

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(Context& ctx, bool mul, const Shape& a, const Shape& b, const Shape& out)
      : c_(ctx.impl()), mul_(mul), ma_(broadcast_map(a, out)), mb_(broadcast_map(b, out)), n_(num_elements(out)) {}
  void run(const std::vector<const void*>& args, void* out) override {
    launch_binary(c_.stream, mul_, static_cast<const float*>(args[0]), ma_, static_cast<const float*>(args[1]), mb_,
                  f(out), n_, Act::None);
  }

 private:
  ContextImpl& c_;
  bool mul_;
  IndexMap ma_, mb_;
  int64_t n_;
};

class UnaryKernel final : public Kernel {
 public:
  /// `input`: the child that holds the tensor (relu/tanh/sigmoid: 0; act: 1, after its symbol).
  UnaryKernel(Context& ctx, Act act, int64_t n, size_t input) : c_(ctx.impl()), act_(act), n_(n), input_(input) {}
  void run(const std::vector<const void*>& args, void* out) override {
    launch_bias_act(c_.stream, static_cast<const float*>(args[input_]), nullptr, 1, 1, f(out), n_, act_);
  }

 private:
  ContextImpl& c_;
  Act act_;
  int64_t n_;
  size_t input_;
};

class TransposeKernel final : public Kernel {
 public:
  TransposeKernel(Context& ctx, const std::vector<int64_t>& perm, const TensorType& x) : c_(ctx.impl()) {
    if (perm.size() > static_cast<size_t>(kMaxDims)) throw GpuError("transpose: rank above 8");
    auto st = cost::row_major_strides(x.shape);
    m_.rank = static_cast<int>(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) {
      m_.out_dims[d] = x.shape[static_cast<size_t>(perm[d])];
      m_.in_strides[d] = st[static_cast<size_t>(perm[d])];
    }
    n_ = num_elements(x.shape);
    es_ = static_cast<int>(dtype_size(x.dtype));
  }
  void run(const std::vector<const void*>& args, void* out) override {
    launch_gather(c_.stream, args[1], m_, out, n_, es_);
  }

 private:
  ContextImpl& c_;
  IndexMap m_;
  int64_t n_ = 0;
  int es_ = 4;
};

/// Rows of `outer` blocks: concat joins a's and b's rows into out's rows; split the reverse.
struct Blocks {
  int64_t outer = 1, wa = 0, wb = 0;  // elements per row of part a / part b
  int elem = 4;                       // bytes per element
};

Blocks blocks_of(const TensorType& a, const TensorType& b, int64_t axis) {
  Blocks bl;
  int64_t inner = 1;
  for (size_t d = 0; d < a.shape.size(); ++d) {
    if (static_cast<int64_t>(d) < axis) bl.outer *= a.shape[d];
    if (static_cast<int64_t>(d) > axis) inner *= a.shape[d];
  }
  bl.wa = a.shape[static_cast<size_t>(axis)] * inner;
  bl.wb = b.shape[static_cast<size_t>(axis)] * inner;
  bl.elem = static_cast<int>(dtype_size(a.dtype));
  return bl;
}

// One kernel each (the roofline model's kernel count, roofline.h op_work).
class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(Context& ctx, const Blocks& b) : c_(ctx.impl()), b_(b) {}
  void run(const std::vector<const void*>& args, void* out) override {
    launch_concat2(c_.stream, args[1], b_.wa, args[2], b_.wb, out, b_.outer, b_.elem);
  }

 private:
  ContextImpl& c_;
  Blocks b_;
};

class SplitKernel final : public Kernel {
 public:
  SplitKernel(Context& ctx, const Blocks& b) : c_(ctx.impl()), b_(b) {}
  void run(const std::vector<const void*>& args, void* out) override {
    auto* o = static_cast<char*>(out);
    launch_split2(c_.stream, args[2], b_.wa, b_.wb, o, o + static_cast<size_t>(b_.wa * b_.outer * b_.elem), b_.outer,
                  b_.elem);
  }

 private:
  ContextImpl& c_;
  Blocks b_;
};

class EnlargeKernel final : public Kernel {
 public:
  EnlargeKernel(Context& ctx, const Shape& w, const Shape& ref) : c_(ctx.impl()), w_(w), ref_(ref) {}
  void run(const std::vector<const void*>& args, void* out) override {
    launch_enlarge(c_.stream, static_cast<const float*>(args[0]), w_[0] * w_[1], w_[2], w_[3], f(out), ref_[2], ref_[3]);
  }

 private:
  ContextImpl& c_;
  Shape w_, ref_;
};

class MergeKernel final : public Kernel {
 public:
  MergeKernel(Context& ctx, int64_t count, const Shape& w) : c_(ctx.impl()), count_(count), w_(w) {}
  void run(const std::vector<const void*>& args, void* out) override {
    launch_merge(c_.stream, static_cast<const float*>(args[1]), w_[0], w_[1] * w_[2] * w_[3], count_, f(out));
  }

 private:
  ContextImpl& c_;
  int64_t count_;
  Shape w_;
};

}  // namespace

std::unique_ptr<Kernel> prepare(Context& ctx, Op op, const Children& c) {
  auto out = cost::output_type(op, c);
  if (!out) throw GpuError(std::string(op_name(op)) + ": ill-typed node");
  if (!has_kernel(op, c)) throw GpuError(std::string(op_name(op)) + ": no kernel (structural node)");
  switch (op) {
    case Op::Conv: return std::make_unique<ConvKernel>(ctx, *cost::conv_desc(c));
    case Op::Matmul: return std::make_unique<MatmulKernel>(ctx, *cost::matmul_desc(c));
    case Op::Poolmax: return std::make_unique<PoolKernel>(ctx, *cost::pool_desc(op, c), 5);
    case Op::Poolavg: return std::make_unique<PoolKernel>(ctx, *cost::pool_desc(op, c), 6);
    case Op::Ewadd:
    case Op::Ewmul:
      return std::make_unique<BinaryKernel>(ctx, op == Op::Ewmul, c[0]->shape(), c[1]->shape(), out->shape());
    case Op::Relu: return std::make_unique<UnaryKernel>(ctx, Act::Relu, num_elements(out->shape()), 0);
    case Op::Tanh: return std::make_unique<UnaryKernel>(ctx, Act::Tanh, num_elements(out->shape()), 0);
    case Op::Sigmoid: return std::make_unique<UnaryKernel>(ctx, Act::Sigmoid, num_elements(out->shape()), 0);
    case Op::Act: return std::make_unique<UnaryKernel>(ctx, *act_from_name(c[0]->sym), num_elements(out->shape()), 1);
    case Op::Transpose: return std::make_unique<TransposeKernel>(ctx, *parse_dims(*c[0]), c[1]->tensor);
    case Op::Concat: return std::make_unique<ConcatKernel>(ctx, blocks_of(c[1]->tensor, c[2]->tensor, c[0]->num));
    case Op::Split: return std::make_unique<SplitKernel>(ctx, blocks_of(out->tuple[0], out->tuple[1], c[0]->num));
    case Op::Enlarge: return std::make_unique<EnlargeKernel>(ctx, c[0]->shape(), c[1]->shape());
    case Op::Merge: return std::make_unique<MergeKernel>(ctx, c[0]->num, c[1]->shape());
    default: break;
  }
  throw GpuError(std::string(op_name(op)) + ": no GPU kernel");
}

bool cold_weights() {
  static const bool on = [] {
    const char* v = std::getenv("TENSAT_COST_COLD_WEIGHTS");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

std::string measurement_variant() {
  std::string v;
  const ConvSwitches& c = conv_switches();
  if (c.algo == ConvSwitches::Algo::Retime) v += "-conv-retime";
  if (c.algo == ConvSwitches::Algo::Find) v += "-conv-find";
  if (!c.fused) v += "-conv-unfused";
  if (c.gemm1x1) v += "-conv-gemm1x1";
  if (!cold_weights()) v += "-warm-weights";
  return v;
}

OpTiming time_op(Context& ctx, Op op, const Children& c, int warmup, int repeats) {
  auto out = cost::output_type(op, c);
  if (!out) throw GpuError(std::string(op_name(op)) + ": ill-typed node");
  std::vector<DeviceBuffer> bufs;
  std::vector<const void*> args(c.size(), nullptr);
  bufs.reserve(c.size() + 1);
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i]->kind != Kind::Tensor) continue;
    const TensorType& t = c[i]->tensor;
    bufs.emplace_back(static_cast<size_t>(cost::tensor_bytes(t)));
    if (t.dtype == DType::F32) {
      fill_random(ctx, bufs.back().f32(), static_cast<size_t>(num_elements(t.shape)), 0x5eed + i);
    } else {
      fill_zero(ctx, bufs.back().data(), bufs.back().bytes());
    }
    args[i] = bufs.back().data();
  }
  DeviceBuffer result(static_cast<size_t>(cost::value_bytes(*out)));
  OpTiming t;
  {
    auto kernel = prepare(ctx, op, c);
    auto once = [&] { kernel->run(args, result.data()); };
    // One latency sample picks how many calls a replay holds (about 0.5 ms of work).
    std::vector<double> single = ctx.latency_samples_ms(once, 1, 3);
    const double one = *std::min_element(single.begin(), single.end());
    t.copies = static_cast<int>(std::clamp(0.5 / std::max(one, 1e-4), 2.0, 100.0));
    // Weight sets for cold_weights(): set 0 is `args`; sets 1..n-1 are slices of one buffer,
    // each with its own copy of the weight and bias (conv: children 5, 6; matmul: 2, 3).
    std::vector<std::vector<const void*>> sets{args};
    if (cold_weights() && (op == Op::Conv || op == Op::Matmul)) {
      const std::vector<size_t> wi = op == Op::Conv ? std::vector<size_t>{5, 6} : std::vector<size_t>{2, 3};
      auto is_weight = [&](size_t i) {
        return i < c.size() && args[i] && c[i]->kind == Kind::Tensor && c[i]->tensor.dtype == DType::F32;
      };
      constexpr size_t kAlign = 256;
      auto aligned = [](size_t b) { return (b + kAlign - 1) / kAlign * kAlign; };
      size_t wbytes = 0;  // one set's slice
      for (size_t i : wi)
        if (is_weight(i)) wbytes += aligned(static_cast<size_t>(cost::tensor_bytes(c[i]->tensor)));
      int dev = 0, l2 = 0;
      TENSAT_CUDA(cudaGetDevice(&dev));
      TENSAT_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
      if (wbytes > 0) {
        // Enough sets (and calls per replay) that a set is evicted before its next use. Weights
        // under 2 * L2 / kMaxSets (0.4 MB on an H100, 0.47 MB on an H200) get kMaxSets sets, which
        // may stay partly cached; reading such weights from memory takes a fraction of a
        // microsecond, and fewer sets keep a replay, and the measurement, short.
        constexpr size_t kMaxSets = 256;
        const size_t n = std::min((2 * static_cast<size_t>(l2) + wbytes - 1) / wbytes, kMaxSets);
        // A whole number of rotations per replay, so no set is used twice in a row across the
        // boundary between replays.
        t.copies = static_cast<int>((std::max(static_cast<size_t>(t.copies), n) + n - 1) / n * n);
        if (n > 1) {
          bufs.emplace_back((n - 1) * wbytes);
          fill_random(ctx, bufs.back().f32(), (n - 1) * wbytes / sizeof(float), 0x5eed + 97);
          auto* base = static_cast<char*>(bufs.back().data());
          for (size_t k = 1; k < n; ++k) {
            std::vector<const void*> a = args;
            size_t off = (k - 1) * wbytes;
            for (size_t i : wi) {
              if (!is_weight(i)) continue;
              a[i] = base + off;
              off += aligned(static_cast<size_t>(cost::tensor_bytes(c[i]->tensor)));
            }
            sets.push_back(std::move(a));
          }
        }
      }
    }
    auto many = [&] {
      for (int i = 0; i < t.copies; ++i) kernel->run(sets[static_cast<size_t>(i) % sets.size()], result.data());
    };
    std::vector<double> samples;
    try {
      CudaGraph graph(ctx, many);
      samples = ctx.back_to_back_samples_ms([&] { graph.launch(); }, warmup, repeats);
    } catch (const GpuError& e) {
      t.graph = false;
      t.capture_error = e.what();
      samples = ctx.back_to_back_samples_ms(many, warmup, repeats);
    }
    t.per_launch_ms = summarize(std::move(samples)).median_ms / t.copies;
  }
  ctx.impl().release_workspace();
  return t;
}

double measure_op(Context& ctx, Op op, const Children& c, int warmup, int repeats) {
  return time_op(ctx, op, c, warmup, repeats).per_launch_ms;
}

}  // namespace tensat::gpu

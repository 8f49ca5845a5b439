// Our own CUDA kernels: broadcasting element-wise ops, bias + activation, strided gather
// (transpose), enlarge, merge, spatial zero-padding, direct pooling and a random fill.
// Everything cuDNN and cuBLAS do better (conv, GEMM, symmetric pooling) is in gpu_ops.cu.
#include <initializer_list>

#include "gpu_cost/gpu_internal.cuh"

namespace tensat::gpu {

namespace {

// The same expressions as lang/op.h act_value (clip: std::min(hi, std::max(lo, v))).
__device__ __forceinline__ float activate(float v, Act act) {
  switch (act.kind) {
    case Act::Relu: return v > 0.0f ? v : 0.0f;
    case Act::Sigmoid: return 1.0f / (1.0f + expf(-v));
    case Act::Tanh: return tanhf(v);
    case Act::Clip: {
      float m = act.lo < v ? v : act.lo;
      return m < act.hi ? m : act.hi;
    }
    case Act::Leaky: return v >= 0.0f ? v : act.alpha * v;
    default: return v;
  }
}

__global__ void binary_kernel(bool mul, const float* a, IndexMap ma, const float* b, IndexMap mb,
                              float* out, int64_t n, Act act) {
  GRID_STRIDE(i, n) {
    float x = a[map_index(i, ma)], y = b[map_index(i, mb)];
    out[i] = activate(mul ? x * y : x + y, act);
  }
}

__global__ void bias_act_kernel(const float* in, const float* bias, int64_t channels,
                                int64_t inner, float* out, int64_t n, Act act) {
  GRID_STRIDE(i, n) {
    float v = in[i];
    if (bias) v += bias[(i / inner) % channels];
    out[i] = activate(v, act);
  }
}

// Fast paths of the element-wise kernels: 32-bit indices where n < 2^31, four floats per
// thread (float4) where sizes and pointers allow, and an operand's index computed without the
// general IndexMap's per-dimension divisions when it is the output's own layout (Same), one
// value per channel (Chan: index (i / inner) % dim, a batch norm's scale), or one value.
struct Operand {
  enum Kind : int { Same, Chan, Scalar } kind = Same;
  int64_t inner = 1, dim = 1;
};

template <typename I>
__device__ __forceinline__ I operand_index(I i, const Operand& o) {
  switch (o.kind) {
    case Operand::Same: return i;
    case Operand::Chan: return (i / static_cast<I>(o.inner)) % static_cast<I>(o.dim);
    default: return 0;
  }
}

template <typename I>
__global__ void binary_fast_kernel(bool mul, const float* a, Operand oa, const float* b, Operand ob, float* out, I n,
                                   Act act) {
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < n; i += static_cast<I>(blockDim.x) * gridDim.x) {
    float x = a[operand_index(i, oa)], y = b[operand_index(i, ob)];
    out[i] = activate(mul ? x * y : x + y, act);
  }
}

__device__ __forceinline__ float4 load4(const float* p, const Operand& o, uint32_t i) {
  if (o.kind == Operand::Same) return *reinterpret_cast<const float4*>(p + i);
  float v = p[operand_index(i, o)];  // Chan with inner % 4 == 0: the four share a channel
  return make_float4(v, v, v, v);
}

// n4 = n / 4 groups of four; every Same pointer 16-byte aligned, every Chan's inner % 4 == 0.
__global__ void binary_vec4_kernel(bool mul, const float* a, Operand oa, const float* b, Operand ob, float* out,
                                   uint32_t n4, Act act) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n4; j += blockDim.x * gridDim.x) {
    const uint32_t i = 4 * j;
    float4 x = load4(a, oa, i), y = load4(b, ob, i), r;
    r.x = activate(mul ? x.x * y.x : x.x + y.x, act);
    r.y = activate(mul ? x.y * y.y : x.y + y.y, act);
    r.z = activate(mul ? x.z * y.z : x.z + y.z, act);
    r.w = activate(mul ? x.w * y.w : x.w + y.w, act);
    *reinterpret_cast<float4*>(out + i) = r;
  }
}

// bias_act_kernel four at a time: in and out 16-byte aligned, inner % 4 == 0 (or no bias).
__global__ void bias_act_vec4_kernel(const float* in, const float* bias, uint32_t channels, uint32_t inner,
                                     float* out, uint32_t n4, Act act) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n4; j += blockDim.x * gridDim.x) {
    const uint32_t i = 4 * j;
    float4 v = *reinterpret_cast<const float4*>(in + i);
    const float b = bias ? bias[(i / inner) % channels] : 0.0f;
    v.x = activate(v.x + b, act);
    v.y = activate(v.y + b, act);
    v.z = activate(v.z + b, act);
    v.w = activate(v.w + b, act);
    *reinterpret_cast<float4*>(out + i) = v;
  }
}

template <typename T>
__global__ void gather_kernel(const T* in, IndexMap m, T* out, int64_t n) {
  GRID_STRIDE(i, n) out[i] = in[map_index(i, m)];
}

__global__ void enlarge_kernel(const float* w, int64_t kh, int64_t kw, float* out, int64_t dh,
                               int64_t dw, int64_t n) {
  int64_t oh = (dh - kh) / 2, ow = (dw - kw) / 2;
  GRID_STRIDE(i, n) {
    int64_t plane = i / (dh * dw), r = i % (dh * dw);
    int64_t y = r / dw - oh, x = r % dw - ow;
    out[i] = (y < 0 || y >= kh || x < 0 || x >= kw) ? 0.0f : w[plane * kh * kw + y * kw + x];
  }
}

__global__ void merge_kernel(const float* w, int64_t cout, int64_t cin_hw, int64_t count,
                             float* out, int64_t n_out) {
  GRID_STRIDE(i, n_out) {
    int64_t row = i / (cin_hw * count), col = i % (cin_hw * count);
    int64_t block = row / (cout / count);
    int64_t c = col - block * cin_hw;
    out[i] = (c >= 0 && c < cin_hw) ? w[row * cin_hw + c] : 0.0f;
  }
}

__global__ void pad_kernel(const float* in, int64_t h, int64_t w, int64_t t, int64_t l,
                           float* out, int64_t ph, int64_t pw, int64_t n) {
  GRID_STRIDE(i, n) {
    int64_t plane = i / (ph * pw), r = i % (ph * pw);
    int64_t y = r / pw - t, x = r % pw - l;
    out[i] = (y < 0 || y >= h || x < 0 || x >= w) ? 0.0f : in[plane * h * w + y * w + x];
  }
}

__global__ void pool_kernel(bool max, bool cip, const float* in, int64_t h, int64_t w, int64_t kh,
                            int64_t kw, int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                            int64_t ph_total, int64_t pw_total, float* out, int64_t oh, int64_t ow,
                            int64_t n) {
  GRID_STRIDE(i, n) {
    int64_t plane = i / (oh * ow), r = i % (oh * ow);
    int64_t y0 = (r / ow) * sh - pt, x0 = (r % ow) * sw - pl;
    const float* p = in + plane * h * w;
    float acc = max ? -INFINITY : 0.0f;
    int64_t cnt = 0, cnt_pad = 0;
    for (int64_t dy = 0; dy < kh; ++dy) {
      int64_t y = y0 + dy;
      for (int64_t dx = 0; dx < kw; ++dx) {
        int64_t x = x0 + dx;
        if (y + pt < ph_total && x + pl < pw_total) ++cnt_pad;
        if (y < 0 || y >= h || x < 0 || x >= w) continue;
        float v = p[y * w + x];
        acc = max ? fmaxf(acc, v) : acc + v;
        ++cnt;
      }
    }
    if (!max) acc /= static_cast<float>(cip ? cnt_pad : (cnt > 0 ? cnt : 1));
    out[i] = acc;
  }
}

__global__ void empty_kernel() {}

// I: the index type (32-bit where n allows: its divisions are much cheaper).
template <typename T, typename I>
__global__ void concat2_kernel(const T* a, I wa, const T* b, I wb, T* out, I n) {
  const I row = wa + wb;
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < n; i += static_cast<I>(blockDim.x) * gridDim.x) {
    I o = i / row, r = i % row;
    out[i] = r < wa ? a[o * wa + r] : b[o * wb + (r - wa)];
  }
}

template <typename T, typename I>
__global__ void split2_kernel(const T* x, I wa, I wb, T* out0, T* out1, I n) {
  const I row = wa + wb;
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < n; i += static_cast<I>(blockDim.x) * gridDim.x) {
    I o = i / row, r = i % row;
    if (r < wa) {
      out0[o * wa + r] = x[i];
    } else {
      out1[o * wb + (r - wa)] = x[i];
    }
  }
}

__global__ void fill_random_kernel(float* out, int64_t n, uint64_t seed) {
  GRID_STRIDE(i, n) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    out[i] = static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
}

bool same_layout(const IndexMap& m) {
  int64_t expect = 1;
  for (int d = m.rank - 1; d >= 0; --d) {
    if (m.out_dims[d] != 1 && m.in_strides[d] != expect) return false;
    expect *= m.out_dims[d];
  }
  return true;
}

/// m as a fast Operand, if it is one: the output's layout, a single value, or one value per
/// index of a single output dimension (stride 1 there, 0 elsewhere).
bool fast_operand(const IndexMap& m, Operand& o) {
  if (same_layout(m)) {
    o = Operand{};
    return true;
  }
  int varying = -1;
  for (int d = 0; d < m.rank; ++d) {
    if (m.out_dims[d] == 1 || m.in_strides[d] == 0) continue;
    if (varying >= 0 || m.in_strides[d] != 1) return false;
    varying = d;
  }
  if (varying < 0) {
    o = Operand{Operand::Scalar, 1, 1};
    return true;
  }
  int64_t inner = 1;
  for (int d = varying + 1; d < m.rank; ++d) inner *= m.out_dims[d];
  o = Operand{Operand::Chan, inner, m.out_dims[varying]};
  return true;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

/// Whether four consecutive elements from i = 4j on read four consecutive values (Same, from
/// an aligned pointer) or one value (Chan with inner % 4 == 0, Scalar).
bool vec4_ok(const float* p, const Operand& o) {
  switch (o.kind) {
    case Operand::Same: return aligned16(p);
    case Operand::Chan: return o.inner % 4 == 0;
    default: return true;
  }
}

constexpr int64_t kMax32 = (int64_t{1} << 31) - 1;

// The fewest elements for four per thread (and for concat/split, the fewest bytes, 16 per
// element, for widening): below it one element per thread keeps more threads in flight. On
// an H200 (2026-11-26) four per thread took 8.7% off the DenseNet-121 export (tensors of 6k
// floats and more) but NasRNN, whose tensors are 512 floats, ran 4% slower; below this size
// one element per thread, as before (activations: the same kernel; the others with 32-bit
// indices).
constexpr int64_t kVec4Min = 4096;

/// Whether n elements go four per thread (given aligned pointers and matching operands).
bool vec4_size(int64_t n) { return n >= kVec4Min && n <= kMax32 && n % 4 == 0; }

}  // namespace

void launch_binary(cudaStream_t s, bool mul, const float* a, const IndexMap& ma, const float* b,
                   const IndexMap& mb, float* out, int64_t n, Act act) {
  if (n == 0) return;
  clear_stale_error();
  Operand oa, ob;
  if (fast_operand(ma, oa) && fast_operand(mb, ob)) {
    if (vec4_size(n) && aligned16(out) && vec4_ok(a, oa) && vec4_ok(b, ob)) {
      binary_vec4_kernel<<<blocks_for(n / 4), kThreads, 0, s>>>(mul, a, oa, b, ob, out, static_cast<uint32_t>(n / 4), act);
    } else if (n <= kMax32) {
      binary_fast_kernel<uint32_t><<<blocks_for(n), kThreads, 0, s>>>(mul, a, oa, b, ob, out, static_cast<uint32_t>(n), act);
    } else {
      binary_fast_kernel<int64_t><<<blocks_for(n), kThreads, 0, s>>>(mul, a, oa, b, ob, out, n, act);
    }
  } else {
    binary_kernel<<<blocks_for(n), kThreads, 0, s>>>(mul, a, ma, b, mb, out, n, act);
  }
  check_launch("binary_kernel");
}

void launch_bias_act(cudaStream_t s, const float* in, const float* bias, int64_t channels,
                     int64_t inner, float* out, int64_t n, Act act) {
  if (n == 0) return;
  clear_stale_error();
  if (vec4_size(n) && aligned16(in) && aligned16(out) && (!bias || inner % 4 == 0)) {
    bias_act_vec4_kernel<<<blocks_for(n / 4), kThreads, 0, s>>>(in, bias, static_cast<uint32_t>(channels),
                                                                static_cast<uint32_t>(inner), out,
                                                                static_cast<uint32_t>(n / 4), act);
  } else {
    bias_act_kernel<<<blocks_for(n), kThreads, 0, s>>>(in, bias, channels, inner, out, n, act);
  }
  check_launch("bias_act_kernel");
}

void launch_gather(cudaStream_t s, const void* in, const IndexMap& m, void* out, int64_t n,
                   int elem_size) {
  if (n == 0) return;
  clear_stale_error();
  unsigned g = blocks_for(n);
  switch (elem_size) {
    case 1: gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint8_t*>(in), m, static_cast<uint8_t*>(out), n); break;
    case 2: gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint16_t*>(in), m, static_cast<uint16_t*>(out), n); break;
    case 4: gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint32_t*>(in), m, static_cast<uint32_t*>(out), n); break;
    case 8: gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint64_t*>(in), m, static_cast<uint64_t*>(out), n); break;
    default: throw GpuError("gather: unsupported element size " + std::to_string(elem_size));
  }
  check_launch("gather_kernel");
}

void launch_enlarge(cudaStream_t s, const float* w, int64_t outer, int64_t kh, int64_t kw,
                    float* out, int64_t dh, int64_t dw) {
  int64_t n = outer * dh * dw;
  if (n == 0) return;
  clear_stale_error();
  enlarge_kernel<<<blocks_for(n), kThreads, 0, s>>>(w, kh, kw, out, dh, dw, n);
  check_launch("enlarge_kernel");
}

void launch_merge(cudaStream_t s, const float* w, int64_t cout, int64_t cin_hw, int64_t count,
                  float* out) {
  int64_t n = cout * cin_hw * count;
  if (n == 0) return;
  clear_stale_error();
  merge_kernel<<<blocks_for(n), kThreads, 0, s>>>(w, cout, cin_hw, count, out, n);
  check_launch("merge_kernel");
}

void launch_pad(cudaStream_t s, const float* in, int64_t nc, int64_t h, int64_t w, int64_t t,
                int64_t l, int64_t b, int64_t r, float* out) {
  int64_t ph = h + t + b, pw = w + l + r, n = nc * ph * pw;
  if (n == 0) return;
  clear_stale_error();
  pad_kernel<<<blocks_for(n), kThreads, 0, s>>>(in, h, w, t, l, out, ph, pw, n);
  check_launch("pad_kernel");
}

void launch_pool(cudaStream_t s, bool max, bool count_include_pad, const float* in, int64_t nc,
                 int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                 int64_t pt, int64_t pl, float* out, int64_t oh, int64_t ow, int64_t ph_total,
                 int64_t pw_total) {
  int64_t n = nc * oh * ow;
  if (n == 0) return;
  clear_stale_error();
  // By default the padded extent that windows may cover: the last window ends inside it
  // (floor mode).
  if (ph_total < 0) ph_total = (oh - 1) * sh + kh;
  if (pw_total < 0) pw_total = (ow - 1) * sw + kw;
  pool_kernel<<<blocks_for(n), kThreads, 0, s>>>(max, count_include_pad, in, h, w, kh, kw, sh, sw,
                                                 pt, pl, ph_total, pw_total, out, oh, ow, n);
  check_launch("pool_kernel");
}

void launch_fill_random(cudaStream_t s, float* out, int64_t n, uint64_t seed) {
  if (n == 0) return;
  clear_stale_error();
  fill_random_kernel<<<blocks_for(n), kThreads, 0, s>>>(out, n, seed);
  check_launch("fill_random_kernel");
}

void launch_empty(cudaStream_t s) {
  clear_stale_error();
  empty_kernel<<<1, 1, 0, s>>>();
  check_launch("empty_kernel");
}

void copy_rows(cudaStream_t s, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t rows) {
  if (width == 0 || rows == 0) return;
  if (rows == 1 || (dpitch == width && spitch == width)) {
    TENSAT_CUDA(cudaMemcpyAsync(dst, src, width * rows, cudaMemcpyDeviceToDevice, s));
  } else {
    TENSAT_CUDA(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDeviceToDevice, s));
  }
}

namespace {
// Runs fn.template operator()<T>() for the unsigned type of `elem_size` bytes.
template <typename F>
void by_elem_size(int elem_size, const char* what, F&& fn) {
  switch (elem_size) {
    case 1: fn(uint8_t{}); break;
    case 2: fn(uint16_t{}); break;
    case 4: fn(uint32_t{}); break;
    case 8: fn(uint64_t{}); break;
    case 16: fn(uint4{}); break;
    default: throw GpuError(std::string(what) + ": unsupported element size " + std::to_string(elem_size));
  }
}

/// The widest element (up to 16 bytes) whose size divides both rows (wa and wb elements of
/// elem_size bytes) and aligns every pointer: concat and split then move whole rows in fewer,
/// wider elements. wa and wb are returned in the widened elements.
int widen(int elem_size, int64_t& wa, int64_t& wb, std::initializer_list<const void*> ptrs) {
  const int64_t ba = wa * elem_size, bb = wb * elem_size;
  int e = elem_size;
  while (e < 16) {
    const int64_t w = 2 * e;
    bool ok = ba % w == 0 && bb % w == 0;
    for (const void* p : ptrs) ok = ok && reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(w) == 0;
    if (!ok) break;
    e *= 2;
  }
  wa = ba / e;
  wb = bb / e;
  return e;
}
}  // namespace

void launch_concat2(cudaStream_t s, const void* a, int64_t wa, const void* b, int64_t wb, void* out, int64_t outer,
                    int elem_size) {
  if (outer * (wa + wb) * elem_size >= 4 * kVec4Min) elem_size = widen(elem_size, wa, wb, {a, b, out});
  const int64_t n = outer * (wa + wb);
  if (n == 0) return;
  clear_stale_error();
  by_elem_size(elem_size, "concat", [&](auto t) {
    using T = decltype(t);
    if (n <= kMax32) {
      concat2_kernel<T, uint32_t><<<blocks_for(n), kThreads, 0, s>>>(
          static_cast<const T*>(a), static_cast<uint32_t>(wa), static_cast<const T*>(b), static_cast<uint32_t>(wb),
          static_cast<T*>(out), static_cast<uint32_t>(n));
    } else {
      concat2_kernel<T, int64_t><<<blocks_for(n), kThreads, 0, s>>>(static_cast<const T*>(a), wa,
                                                                    static_cast<const T*>(b), wb, static_cast<T*>(out), n);
    }
  });
  check_launch("concat2_kernel");
}

void launch_split2(cudaStream_t s, const void* x, int64_t wa, int64_t wb, void* out0, void* out1, int64_t outer,
                   int elem_size) {
  if (outer * (wa + wb) * elem_size >= 4 * kVec4Min) elem_size = widen(elem_size, wa, wb, {x, out0, out1});
  const int64_t n = outer * (wa + wb);
  if (n == 0) return;
  clear_stale_error();
  by_elem_size(elem_size, "split", [&](auto t) {
    using T = decltype(t);
    if (n <= kMax32) {
      split2_kernel<T, uint32_t><<<blocks_for(n), kThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<uint32_t>(wa), static_cast<uint32_t>(wb), static_cast<T*>(out0),
          static_cast<T*>(out1), static_cast<uint32_t>(n));
    } else {
      split2_kernel<T, int64_t><<<blocks_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), wa, wb,
                                                                   static_cast<T*>(out0), static_cast<T*>(out1), n);
    }
  });
  check_launch("split2_kernel");
}

}  // namespace tensat::gpu

// Elementwise kernels: ewadd/ewmul with numpy broadcasting, the activations, and the
// bias-plus-activation epilogue shared by conv and matmul.
#include <cassert>
#include <cmath>
#include <cstring>

#include "refexec/kernels.h"

namespace tensat::refexec {

namespace {

inline float act1(float v, const Act& act) { return act_value(act, v); }

template <BinOp OP>
inline float bin1(float a, float b) {
  if constexpr (OP == BinOp::Add) {
    return a + b;
  } else {
    return a * b;
  }
}

// The broadcast loop nest after coalescing: dims[i] with per-operand element strides
// (0 on a broadcast dimension). dims.back() is the innermost loop.
struct Nest {
  std::vector<int64_t> dims, sa, sb;
};

// Builds the loop nest for out = broadcast(a, b), merging adjacent dimensions whenever
// both operands walk them contiguously (or both broadcast them), so that the common cases
// (equal shapes, per-channel operands, scalars) become one or two long inner loops.
Nest make_nest(const Shape& out, const Shape& a, const Shape& b) {
  size_t r = out.size();
  auto strides_of = [&](const Shape& s) {
    std::vector<int64_t> st(r, 0);
    int64_t acc = 1;
    for (size_t i = r; i-- > 0;) {
      size_t off = r - s.size();
      if (i < off) continue;
      int64_t d = s[i - off];
      st[i] = (d == 1 && out[i] != 1) ? 0 : acc;
      acc *= d;
    }
    return st;
  };
  std::vector<int64_t> sa = strides_of(a), sb = strides_of(b);
  Nest n;
  for (size_t i = 0; i < r; ++i) {
    if (out[i] == 1) continue;  // a size-1 output dimension contributes nothing
    if (!n.dims.empty()) {
      int64_t d = out[i];
      // Merge into the previous (outer) dimension if it steps as d inner steps do.
      if (n.sa.back() == sa[i] * d && n.sb.back() == sb[i] * d) {
        n.dims.back() *= d;
        n.sa.back() = sa[i];
        n.sb.back() = sb[i];
        continue;
      }
    }
    n.dims.push_back(out[i]);
    n.sa.push_back(sa[i]);
    n.sb.push_back(sb[i]);
  }
  if (n.dims.empty()) {
    n.dims.push_back(1);
    n.sa.push_back(0);
    n.sb.push_back(0);
  }
  return n;
}

template <BinOp OP>
void binary_loop(const Nest& n, const float* a, const float* b, float* out) {
  size_t r = n.dims.size();
  int64_t inner = n.dims[r - 1], ia = n.sa[r - 1], ib = n.sb[r - 1];
  int64_t outer = 1;
  for (size_t i = 0; i + 1 < r; ++i) outer *= n.dims[i];
  std::vector<int64_t> idx(r, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const float* pa = a + oa;
    const float* pb = b + ob;
    if (ia == 1 && ib == 1) {
      for (int64_t j = 0; j < inner; ++j) out[j] = bin1<OP>(pa[j], pb[j]);
    } else if (ia == 1 && ib == 0) {
      float vb = *pb;
      for (int64_t j = 0; j < inner; ++j) out[j] = bin1<OP>(pa[j], vb);
    } else if (ia == 0 && ib == 1) {
      float va = *pa;
      for (int64_t j = 0; j < inner; ++j) out[j] = bin1<OP>(va, pb[j]);
    } else {
      for (int64_t j = 0; j < inner; ++j) out[j] = bin1<OP>(pa[j * ia], pb[j * ib]);
    }
    out += inner;
    // Advance the outer multi-index (odometer), keeping the operand offsets in step.
    for (size_t d = r - 1; d-- > 0;) {
      ++idx[d];
      oa += n.sa[d];
      ob += n.sb[d];
      if (idx[d] < n.dims[d]) break;
      oa -= n.sa[d] * n.dims[d];
      ob -= n.sb[d] * n.dims[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

Tensor binary(BinOp op, const View& a, const View& b) {
  auto out_shape = broadcast_shapes(a.shape, b.shape);
  assert(out_shape && "ewadd/ewmul operands do not broadcast");
  Tensor out(*out_shape);
  if (out.size() == 0) return out;
  Nest n = make_nest(out.shape, a.shape, b.shape);
  if (op == BinOp::Add) {
    binary_loop<BinOp::Add>(n, a.data, b.data, out.data.data());
  } else {
    binary_loop<BinOp::Mul>(n, a.data, b.data, out.data.data());
  }
  return out;
}

void apply_act(float* data, size_t n, Act act) {
  switch (act.kind) {
    case Act::None: return;
    case Act::Relu:
      for (size_t i = 0; i < n; ++i) data[i] = data[i] > 0.0f ? data[i] : 0.0f;
      return;
    default:
      for (size_t i = 0; i < n; ++i) data[i] = act_value(act, data[i]);
      return;
  }
}

Tensor unary(const View& x, Act act) {
  Tensor out(x.shape);
  if (out.size()) std::memcpy(out.data.data(), x.data, out.size() * sizeof(float));
  apply_act(out.data.data(), out.size(), act);
  return out;
}

void bias_act(float* x, int64_t outer, int64_t channels, int64_t inner, const float* bias,
              Act act) {
  if (!bias && act == Act::None) return;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      float* p = x + (o * channels + c) * inner;
      float bv = bias ? bias[c] : 0.0f;
      if (act == Act::Relu) {
        for (int64_t j = 0; j < inner; ++j) {
          float v = p[j] + bv;
          p[j] = v > 0.0f ? v : 0.0f;
        }
      } else {
        for (int64_t j = 0; j < inner; ++j) p[j] = act1(p[j] + bv, act);
      }
    }
  }
}

}  // namespace tensat::refexec

// CPU kernels of the opaque ONNX operators the executors run (exec/opaque_decode.h), on
// float32 data. Data movement and broadcasting arithmetic use exec's generic host code (the
// same code that evaluates shape computations); the rest is here. Semantics follow ONNX
// Runtime's CPU kernels (tests/python/opaque_ops_vs_ort.py checks them against it).
#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "exec/opaque_host.h"
#include "refexec/kernels.h"

namespace tensat::refexec {

namespace {

namespace op = exec::opaque;

Tensor softmax(const op::Softmax& d, const float* x) {
  Tensor out(Shape{d.outer * d.n * d.inner});
  float* y = out.data.data();
  for (int64_t o = 0; o < d.outer; ++o) {
    for (int64_t i = 0; i < d.inner; ++i) {
      const int64_t base = o * d.n * d.inner + i;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < d.n; ++k) m = std::max(m, x[base + k * d.inner]);
      double sum = 0;
      for (int64_t k = 0; k < d.n; ++k) sum += std::exp(static_cast<double>(x[base + k * d.inner]) - m);
      for (int64_t k = 0; k < d.n; ++k) {
        const int64_t j = base + k * d.inner;
        y[j] = d.log ? static_cast<float>(x[j] - m - std::log(sum))
                     : static_cast<float>(std::exp(static_cast<double>(x[j]) - m) / sum);
      }
    }
  }
  return out;
}

Tensor reduce(const op::Reduce& d, const float* x) {
  // Output index of every input element: the kept dims' coordinates, row-major.
  const size_t r = d.in.size();
  std::vector<int64_t> out_stride(r, 0);
  int64_t acc = 1, n_out = 1, group = 1;
  for (size_t k = r; k-- > 0;) {
    if (d.reduced[k]) {
      group *= d.in[k];
      continue;
    }
    out_stride[k] = acc;
    acc *= d.in[k];
  }
  n_out = acc;
  const bool max = d.kind == op::ReduceKind::Max;
  std::vector<double> sums(static_cast<size_t>(n_out), max ? -std::numeric_limits<double>::infinity() : 0.0);
  std::vector<int64_t> idx(r, 0);
  int64_t o = 0;
  const int64_t n_in = num_elements(d.in);
  for (int64_t i = 0; i < n_in; ++i) {
    double& s = sums[static_cast<size_t>(o)];
    s = max ? std::max(s, static_cast<double>(x[i])) : s + x[i];
    for (size_t k = r; k-- > 0;) {  // odometer step over the input dims
      if (++idx[k] < d.in[k]) {
        o += out_stride[k];
        break;
      }
      o -= out_stride[k] * (d.in[k] - 1);
      idx[k] = 0;
    }
  }
  Tensor out(Shape{n_out});
  for (int64_t k = 0; k < n_out; ++k) {
    double v = sums[static_cast<size_t>(k)];
    if (d.kind == op::ReduceKind::Mean) v = group > 0 ? v / static_cast<double>(group) : NAN;
    out.data[static_cast<size_t>(k)] = static_cast<float>(v);
  }
  return out;
}

Tensor affine(const op::Affine& d, const float* x) {
  Tensor out(Shape{d.outer * d.channels * d.inner});
  size_t i = 0;
  for (int64_t o = 0; o < d.outer; ++o)
    for (int64_t c = 0; c < d.channels; ++c)
      for (int64_t k = 0; k < d.inner; ++k, ++i)
        out.data[i] = x[i] * d.scale[static_cast<size_t>(c)] + d.shift[static_cast<size_t>(c)];
  return out;
}

Tensor pad(const op::Pad& d, const float* x) {
  Tensor out(d.out);
  const size_t r = d.out.size();
  auto in_st = exec::opaque::strides_of(d.in);
  std::vector<int64_t> idx(r, 0);
  const int64_t n = num_elements(d.out);
  for (int64_t o = 0; o < n; ++o) {
    int64_t off = 0;
    bool inside = true;
    for (size_t k = 0; k < r && inside; ++k) {
      int64_t i = op::pad_source(d.mode, idx[k], d.begin[k], d.in[k]);
      inside = i >= 0;
      off += i * in_st[k];
    }
    out.data[static_cast<size_t>(o)] = inside ? x[off] : d.value;
    for (size_t k = r; k-- > 0;) {
      if (++idx[k] < d.out[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

Tensor pool(const op::Pool& d, const float* x) {
  Tensor out(Shape{d.n, d.c, d.oh, d.ow});
  size_t i = 0;
  for (int64_t p = 0; p < d.n * d.c; ++p) {
    const float* plane = x + p * d.h * d.w;
    for (int64_t oy = 0; oy < d.oh; ++oy) {
      for (int64_t ox = 0; ox < d.ow; ++ox, ++i) {
        const int64_t y0 = oy * d.sh - d.pt, x0 = ox * d.sw - d.pl;
        // ONNX Runtime: the window clipped to the padded extent counts for count_include_pad.
        const int64_t y1p = std::min(y0 + d.kh, d.h + d.pb), x1p = std::min(x0 + d.kw, d.w + d.pr);
        const int64_t ya = std::max<int64_t>(y0, 0), yb = std::min(y0 + d.kh, d.h);
        const int64_t xa = std::max<int64_t>(x0, 0), xb = std::min(x0 + d.kw, d.w);
        float acc = d.max ? -std::numeric_limits<float>::infinity() : 0.0f;
        for (int64_t y = ya; y < yb; ++y)
          for (int64_t xx = xa; xx < xb; ++xx) acc = d.max ? std::max(acc, plane[y * d.w + xx]) : acc + plane[y * d.w + xx];
        if (!d.max) {
          const int64_t cnt = d.count_include_pad ? (y1p - y0) * (x1p - x0) : (yb - ya) * (xb - xa);
          acc = cnt > 0 ? acc / static_cast<float>(cnt) : 0.0f;
        }
        out.data[i] = acc;
      }
    }
  }
  return out;
}

}  // namespace

Tensor opaque_kernel(const exec::opaque::Decoded& dec, const std::vector<View>& data, const Shape& out_shape) {
  assert(dec.f32 && data.size() == dec.data.size());
  Tensor out;
  const auto& d = dec.desc;
  if (op::is_data_movement(d)) {
    out = Tensor(out_shape);
    std::vector<const void*> ins;
    for (const View& v : data) ins.push_back(v.data);
    op::move_elements(d, ins, sizeof(float), out_shape, out.data.data());
  } else if (const auto* u = std::get_if<op::Unary>(&d)) {
    out = Tensor(out_shape);
    for (size_t i = 0; i < out.size(); ++i) out.data[i] = op::unary_apply(u->fn, data[0].data[i], u->a, u->b);
  } else if (const auto* b = std::get_if<op::Binary>(&d)) {
    out = Tensor(out_shape);
    op::binary_broadcast<float>(b->fn, data[0].data, b->a, data[1].data, b->b, out.data.data(), b->out);
  } else if (const auto* s = std::get_if<op::Softmax>(&d)) {
    out = softmax(*s, data[0].data);
  } else if (const auto* r = std::get_if<op::Reduce>(&d)) {
    out = reduce(*r, data[0].data);
  } else if (const auto* a = std::get_if<op::Affine>(&d)) {
    out = affine(*a, data[0].data);
  } else if (const auto* p = std::get_if<op::Pad>(&d)) {
    out = pad(*p, data[0].data);
  } else if (const auto* pl = std::get_if<op::Pool>(&d)) {
    out = pool(*pl, data[0].data);
  } else {
    throw ExecError("refexec: no CPU kernel for this opaque description");
  }
  assert(static_cast<int64_t>(out.size()) == num_elements(out_shape));
  out.shape = out_shape;
  return out;
}

}  // namespace tensat::refexec

// Data-movement kernels: transpose, reshape, concat, split, and the two weight transforms
// enlarge (centred zero-padding of a kernel) and merge (TASO's merge_gconv).
#include <algorithm>
#include <cassert>
#include <cstring>

#include "refexec/kernels.h"

namespace tensat::refexec {

namespace {

// Product of the dimensions [from, to).
int64_t prod(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

void copy_floats(float* dst, const float* src, int64_t n) {
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace

Tensor transpose(const View& x, const std::vector<int64_t>& perm) {
  const size_t r = x.shape.size();
  assert(perm.size() == r);
  Shape out_shape(r);
  std::vector<int64_t> in_stride(r), src_stride(r);
  int64_t acc = 1;
  for (size_t i = r; i-- > 0;) {
    in_stride[i] = acc;
    acc *= x.shape[i];
  }
  for (size_t i = 0; i < r; ++i) {
    out_shape[i] = x.shape[static_cast<size_t>(perm[i])];
    src_stride[i] = in_stride[static_cast<size_t>(perm[i])];  // input step per output step
  }
  Tensor out(out_shape);
  if (out.size() == 0) return out;
  if (r == 0) {
    out.data[0] = x.data[0];
    return out;
  }
  std::vector<int64_t> out_stride(r);
  acc = 1;
  for (size_t i = r; i-- > 0;) {
    out_stride[i] = acc;
    acc *= out_shape[i];
  }
  // The output's innermost dimension is a strided gather from the input. Where the input's
  // innermost dimension (step 1) is another output dimension `c`, the two are copied in square
  // tiles: gathering whole rows at a large stride touches a new cache line (and, past a few KB, a
  // new page) for every element (VGG-11-BN's 25088 x 4096 Gemm weight: its whole run 10.5 s -> 5.5 s).
  const size_t last = r - 1;
  size_t c = last;
  for (size_t i = 0; i < r; ++i)
    if (src_stride[i] == 1 && out_shape[i] > 1) c = i;
  const int64_t inner = out_shape[last], istep = src_stride[last];
  constexpr int64_t kTile = 32;
  const bool tiled = c != last && inner >= kTile && out_shape[c] >= kTile;
  // Odometer over the output's dimensions other than the innermost (and `c` where tiled).
  std::vector<int64_t> idx(r, 0);
  int64_t src = 0, dst = 0;
  const int64_t outer = static_cast<int64_t>(out.size()) / inner / (tiled ? out_shape[c] : 1);
  float* o = out.data.data();
  for (int64_t t = 0; t < outer; ++t) {
    if (tiled) {
      const int64_t rows = out_shape[c], ostep = out_stride[c];  // along c: input step 1
      for (int64_t i0 = 0; i0 < rows; i0 += kTile)
        for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
          const int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(inner, j0 + kTile);
          for (int64_t i = i0; i < i1; ++i) {
            const float* s = x.data + src + i;
            float* d = o + dst + i * ostep;
            for (int64_t j = j0; j < j1; ++j) d[j] = s[j * istep];
          }
        }
    } else {
      const float* s = x.data + src;
      float* d = o + dst;
      for (int64_t j = 0; j < inner; ++j) d[j] = s[j * istep];
    }
    for (size_t d = last; d-- > 0;) {
      if (tiled && d == c) continue;
      ++idx[d];
      src += src_stride[d];
      dst += out_stride[d];
      if (idx[d] < out_shape[d]) break;
      src -= src_stride[d] * out_shape[d];
      dst -= out_stride[d] * out_shape[d];
      idx[d] = 0;
    }
  }
  return out;
}

Tensor reshape(const View& x, const Shape& shape) {
  assert(num_elements(shape) == num_elements(x.shape));
  Tensor out(shape);
  copy_floats(out.data.data(), x.data, static_cast<int64_t>(out.size()));
  return out;
}

Tensor enlarge(const View& w, int64_t kh, int64_t kw) {
  assert(w.shape.size() == 4);
  const int64_t o = w.shape[0], i = w.shape[1], kh0 = w.shape[2], kw0 = w.shape[3];
  assert(kh >= kh0 && kw >= kw0 && (kh - kh0) % 2 == 0 && (kw - kw0) % 2 == 0);
  const int64_t dy = (kh - kh0) / 2, dx = (kw - kw0) / 2;
  Tensor out({o, i, kh, kw});
  for (int64_t k = 0; k < o * i; ++k) {
    const float* src = w.data + k * kh0 * kw0;
    float* dst = out.data.data() + k * kh * kw;
    for (int64_t y = 0; y < kh0; ++y) copy_floats(dst + (y + dy) * kw + dx, src + y * kw0, kw0);
  }
  return out;
}

Tensor concat(int64_t axis, const View& a, const View& b) {
  const size_t ax = static_cast<size_t>(axis);
  assert(a.shape.size() == b.shape.size() && ax < a.shape.size());
  Shape out_shape = a.shape;
  out_shape[ax] += b.shape[ax];
  Tensor out(out_shape);
  // [outer, a_block | b_block] rows, blocks being the axis and everything inside it.
  const int64_t outer = prod(a.shape, 0, ax);
  const int64_t inner = prod(a.shape, ax + 1, a.shape.size());
  const int64_t blk_a = a.shape[ax] * inner, blk_b = b.shape[ax] * inner;
  float* o = out.data.data();
  for (int64_t t = 0; t < outer; ++t) {
    copy_floats(o, a.data + t * blk_a, blk_a);
    copy_floats(o + blk_a, b.data + t * blk_b, blk_b);
    o += blk_a + blk_b;
  }
  return out;
}

std::pair<Tensor, Tensor> split(int64_t axis, int64_t pos, const View& x) {
  const size_t ax = static_cast<size_t>(axis);
  assert(ax < x.shape.size() && pos > 0 && pos < x.shape[ax]);
  Shape s0 = x.shape, s1 = x.shape;
  s0[ax] = pos;
  s1[ax] = x.shape[ax] - pos;
  Tensor p0(s0), p1(s1);
  const int64_t outer = prod(x.shape, 0, ax);
  const int64_t inner = prod(x.shape, ax + 1, x.shape.size());
  const int64_t blk0 = s0[ax] * inner, blk1 = s1[ax] * inner;
  const float* src = x.data;
  for (int64_t t = 0; t < outer; ++t) {
    copy_floats(p0.data.data() + t * blk0, src, blk0);
    copy_floats(p1.data.data() + t * blk1, src + blk0, blk1);
    src += blk0 + blk1;
  }
  return {std::move(p0), std::move(p1)};
}

Tensor merge(int64_t count, const View& w) {
  assert(w.shape.size() == 4 && count > 0 && w.shape[0] % count == 0);
  const int64_t o = w.shape[0], i = w.shape[1], k = w.shape[2] * w.shape[3];
  const int64_t per_slot = o / count;
  Tensor out({o, i * count, w.shape[2], w.shape[3]});
  for (int64_t oc = 0; oc < o; ++oc) {
    const int64_t slot = oc / per_slot;
    // out[oc, slot*I : (slot+1)*I] = w[oc, :], the rest of row oc stays zero.
    copy_floats(out.data.data() + (oc * i * count + slot * i) * k, w.data + oc * i * k, i * k);
  }
  return out;
}

}  // namespace tensat::refexec

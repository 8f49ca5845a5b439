// Max and average pooling over NCHW windows with explicit (possibly asymmetric) padding.
//
// ONNX semantics, floor mode: padded positions never win a max (they act as -inf), and an
// average divides by kh*kw when count_include_pad, else by the number of real elements in
// the window. types.cpp guarantees pads < kernel, so every window holds a real element.
#include <algorithm>
#include <cassert>
#include <limits>

#include "refexec/kernels.h"

namespace tensat::refexec {

namespace {

template <typename Reduce>
Tensor pool(const View& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw, const Pads& p,
            Reduce reduce) {
  assert(x.shape.size() == 4);
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  auto oh = window_out(h, kh, sh, p.top, p.bottom);
  auto ow = window_out(w, kw, sw, p.left, p.right);
  assert(oh && ow);
  Tensor out({n, c, *oh, *ow});
  float* o = out.data.data();
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const float* xp = x.data + plane * h * w;
    for (int64_t r = 0; r < *oh; ++r) {
      const int64_t y0 = r * sh - p.top;
      const int64_t ya = std::max<int64_t>(y0, 0), yb = std::min(y0 + kh, h);
      for (int64_t q = 0; q < *ow; ++q) {
        const int64_t x0 = q * sw - p.left;
        const int64_t xa = std::max<int64_t>(x0, 0), xb = std::min(x0 + kw, w);
        assert(ya < yb && xa < xb && "pooling window lies entirely in the padding");
        *o++ = reduce(xp, w, ya, yb, xa, xb);
      }
    }
  }
  return out;
}

}  // namespace

Tensor pool_max(const View& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw, const Pads& p) {
  return pool(x, kh, kw, sh, sw, p,
              [](const float* xp, int64_t w, int64_t ya, int64_t yb, int64_t xa, int64_t xb) {
                float m = -std::numeric_limits<float>::infinity();
                for (int64_t y = ya; y < yb; ++y)
                  for (int64_t xx = xa; xx < xb; ++xx) m = std::max(m, xp[y * w + xx]);
                return m;
              });
}

Tensor pool_avg(const View& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw, const Pads& p,
                bool count_include_pad) {
  const float full = static_cast<float>(kh * kw);
  return pool(x, kh, kw, sh, sw, p,
              [&](const float* xp, int64_t w, int64_t ya, int64_t yb, int64_t xa, int64_t xb) {
                float s = 0.0f;
                for (int64_t y = ya; y < yb; ++y)
                  for (int64_t xx = xa; xx < xb; ++xx) s += xp[y * w + xx];
                // Floor mode: a window never reaches past the padded input, so with
                // count_include_pad the divisor is always the full kernel area.
                float count = count_include_pad ? full : static_cast<float>((yb - ya) * (xb - xa));
                return s / count;
              });
}

}  // namespace tensat::refexec

// 2-D convolution (NCHW, grouped, strided, explicitly padded) as im2col + cblas_sgemm.
//
// Per image and group: out_g [Cout/g, OH*OW] = W_g [Cout/g, Cin/g*kh*kw] @ col. The column
// matrix is built for a band of output rows at a time, so its memory stays bounded
// (col_budget floats) and hot in cache even for VGG's 224×224 layers. A 1×1, stride-1,
// unpadded convolution needs no im2col: the input itself is the column matrix.
#include <algorithm>
#include <cassert>
#include <cstring>

#include <cblas.h>

#include "refexec/kernels.h"

namespace tensat::refexec {

namespace {

struct Geometry {
  int64_t cin, h, w;          // input channels (of one group) and spatial size
  int64_t kh, kw, sh, sw;
  int64_t pt, pl;             // top/left padding (bottom/right only shape the output)
  int64_t oh, ow;
};

// Column band for output rows [r0, r1): col[(c*kh + i)*kw + j][(r - r0)*OW + q] =
// x[c][r*sh - pt + i][q*sw - pl + j], zero outside the input.
void im2col(const float* x, const Geometry& g, int64_t r0, int64_t r1, float* col) {
  const int64_t band = (r1 - r0) * g.ow;
  for (int64_t c = 0; c < g.cin; ++c) {
    const float* xc = x + c * g.h * g.w;
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        float* dst = col + ((c * g.kh + i) * g.kw + j) * band;
        // Output columns q whose input column q*sw - pl + j lies in [0, W).
        int64_t off = j - g.pl;
        int64_t q_lo = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
        int64_t q_hi = g.w - off <= 0 ? 0 : (g.w - off - 1) / g.sw + 1;  // exclusive
        q_lo = std::min(q_lo, g.ow);
        q_hi = std::clamp(q_hi, q_lo, g.ow);
        for (int64_t r = r0; r < r1; ++r, dst += g.ow) {
          int64_t y = r * g.sh - g.pt + i;
          if (y < 0 || y >= g.h) {
            std::memset(dst, 0, static_cast<size_t>(g.ow) * sizeof(float));
            continue;
          }
          if (q_lo > 0) std::memset(dst, 0, static_cast<size_t>(q_lo) * sizeof(float));
          if (q_hi > q_lo) {
            const float* src = xc + y * g.w + (q_lo * g.sw + off);  // input column of q_lo
            if (g.sw == 1) {
              std::memcpy(dst + q_lo, src, static_cast<size_t>(q_hi - q_lo) * sizeof(float));
            } else {
              for (int64_t q = q_lo; q < q_hi; ++q) dst[q] = src[(q - q_lo) * g.sw];
            }
          }
          if (q_hi < g.ow)
            std::memset(dst + q_hi, 0, static_cast<size_t>(g.ow - q_hi) * sizeof(float));
        }
      }
    }
  }
}

}  // namespace

Tensor conv2d(const View& x, const View& w, const float* bias, int64_t sh, int64_t sw,
              const Pads& pads, Act act, int64_t col_budget) {
  assert(x.shape.size() == 4 && w.shape.size() == 4);
  const int64_t n = x.shape[0], cin = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t cout = w.shape[0], cpg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  assert(cpg > 0 && cin % cpg == 0);
  const int64_t groups = cin / cpg;
  assert(cout % groups == 0);
  const int64_t opg = cout / groups;
  auto oh = window_out(h, kh, sh, pads.top, pads.bottom);
  auto ow = window_out(wd, kw, sw, pads.left, pads.right);
  assert(oh && ow);
  Tensor out({n, cout, *oh, *ow});
  const int64_t plane = *oh * *ow;
  const int64_t kdim = cpg * kh * kw;
  Geometry geo{cpg, h, wd, kh, kw, sh, sw, pads.top, pads.left, *oh, *ow};

  const bool direct = kh == 1 && kw == 1 && sh == 1 && sw == 1 && pads == Pads{};
  std::vector<float> col;
  int64_t rows_per_band = *oh;
  if (!direct) {
    rows_per_band = std::clamp<int64_t>(col_budget / std::max<int64_t>(1, kdim * *ow), 1, *oh);
    col.resize(static_cast<size_t>(kdim * rows_per_band * *ow));
  }

  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gi = 0; gi < groups; ++gi) {
      const float* xg = x.data + (b * cin + gi * cpg) * h * wd;
      const float* wg = w.data + gi * opg * kdim;
      float* og = out.data.data() + (b * cout + gi * opg) * plane;
      if (direct) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(opg),
                    static_cast<int>(plane), static_cast<int>(kdim), 1.0f, wg,
                    static_cast<int>(kdim), xg, static_cast<int>(plane), 0.0f, og,
                    static_cast<int>(plane));
        continue;
      }
      for (int64_t r0 = 0; r0 < *oh; r0 += rows_per_band) {
        int64_t r1 = std::min(*oh, r0 + rows_per_band);
        int64_t band = (r1 - r0) * *ow;
        im2col(xg, geo, r0, r1, col.data());
        // Writes columns [r0*OW, r1*OW) of every output channel row (leading dim = plane).
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(opg),
                    static_cast<int>(band), static_cast<int>(kdim), 1.0f, wg,
                    static_cast<int>(kdim), col.data(), static_cast<int>(band), 0.0f,
                    og + r0 * *ow, static_cast<int>(plane));
      }
    }
  }
  bias_act(out.data.data(), n, cout, plane, bias, act);
  return out;
}

}  // namespace tensat::refexec

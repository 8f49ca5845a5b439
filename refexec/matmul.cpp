// Batched matrix multiplication with broadcast batch dimensions, bias and fused activation:
// one cblas_sgemm per batch, or a single one when b is shared by every batch of a.
#include <cassert>

#include <cblas.h>

#include "refexec/kernels.h"

namespace tensat::refexec {

namespace {

// Element stride of an operand's matrix per step of each output batch dimension (0 where
// the operand broadcasts), for an operand with batch dims `s` and matrices of `mat` floats.
std::vector<int64_t> batch_strides(const Shape& batch, const Shape& s, int64_t mat) {
  const size_t r = batch.size(), off = r - s.size();
  std::vector<int64_t> st(r, 0);
  int64_t acc = mat;
  for (size_t i = r; i-- > off;) {
    st[i] = s[i - off] == 1 ? 0 : acc;
    acc *= s[i - off];
  }
  return st;
}

}  // namespace

Tensor matmul(const View& a, const View& b, const float* bias, Act act) {
  assert(a.shape.size() >= 2 && b.shape.size() >= 2);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  const int64_t n = b.shape.back();
  assert(b.shape[b.shape.size() - 2] == k);
  Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  auto batch = broadcast_shapes(ba, bb);
  assert(batch && "matmul batch dimensions do not broadcast");
  Shape out_shape = *batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Tensor out(out_shape);
  const int64_t nb = num_elements(*batch);
  if (out.size() == 0) return out;
  float* c = out.data.data();

  if (k == 0) {
    // Empty inner dimension: the product is all zeros (Tensor() already is).
  } else if (num_elements(bb) == 1 && num_elements(ba) == nb) {
    // b is one matrix shared by every batch of a: fold the batches into the rows.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(nb * m),
                static_cast<int>(n), static_cast<int>(k), 1.0f, a.data, static_cast<int>(k),
                b.data, static_cast<int>(n), 0.0f, c, static_cast<int>(n));
  } else {
    // General case: walk the output batch index, each operand's matrix offset following
    // its own (broadcast) strides.
    const size_t r = batch->size();
    std::vector<int64_t> sa = batch_strides(*batch, ba, m * k), sb = batch_strides(*batch, bb, k * n);
    std::vector<int64_t> idx(r, 0);
    int64_t oa = 0, ob = 0;
    for (int64_t t = 0; t < nb; ++t) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
                  static_cast<int>(n), static_cast<int>(k), 1.0f, a.data + oa,
                  static_cast<int>(k), b.data + ob, static_cast<int>(n), 0.0f, c + t * m * n,
                  static_cast<int>(n));
      for (size_t d = r; d-- > 0;) {
        ++idx[d];
        oa += sa[d];
        ob += sb[d];
        if (idx[d] < (*batch)[d]) break;
        oa -= sa[d] * (*batch)[d];
        ob -= sb[d] * (*batch)[d];
        idx[d] = 0;
      }
    }
  }
  // The bias runs along the last dimension: rows of n channels with inner size 1.
  bias_act(c, nb * m, n, 1, bias, act);
  return out;
}

Tensor matmul_transposed_b(const View& a, const View& bt, const float* bias, Act act) {
  assert(a.shape.size() >= 2 && bt.shape.size() == 2);
  const int64_t k = a.shape.back(), n = bt.shape[0];
  assert(bt.shape[1] == k);
  Shape out_shape(a.shape.begin(), a.shape.end() - 1);
  out_shape.push_back(n);
  Tensor out(out_shape);
  if (out.size() == 0) return out;
  float* c = out.data.data();
  // The batches of a fold into the rows: bt is one matrix shared by all of them.
  const int64_t rows = num_elements(out_shape) / n;
  if (k > 0)  // (an empty inner dimension: the product is all zeros, as Tensor() is)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(n),
                static_cast<int>(k), 1.0f, a.data, static_cast<int>(k), bt.data, static_cast<int>(k), 0.0f, c,
                static_cast<int>(n));
  bias_act(c, rows, n, 1, bias, act);
  return out;
}

}  // namespace tensat::refexec

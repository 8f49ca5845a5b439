// Randomized comparisons of conv, matmul, pooling and broadcasting against naive direct
// loops written here, independent of the executor's im2col/GEMM/coalescing code paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "refexec/kernels.h"
#include "test_util.h"

namespace tensat::refexec::testing {
namespace {

float act_ref(float v, const std::string& act) {
  if (act == "relu") return v > 0 ? v : 0;
  if (act == "tanh") return std::tanh(v);
  if (act == "sigmoid") return 1 / (1 + std::exp(-v));
  return v;
}

Tensor conv_ref(const Tensor& x, const Tensor& w, const Tensor* bias, int64_t sh, int64_t sw,
                const Pads& p, const std::string& act) {
  int64_t n = x.shape[0], cin = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t cout = w.shape[0], cpg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  int64_t groups = cin / cpg, opg = cout / groups;
  int64_t oh = (h + p.top + p.bottom - kh) / sh + 1, ow = (wd + p.left + p.right - kw) / sw + 1;
  Tensor out({n, cout, oh, ow});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t q = 0; q < ow; ++q) {
          double s = bias ? bias->data[static_cast<size_t>(o)] : 0.0;
          int64_t gi = o / opg;
          for (int64_t c = 0; c < cpg; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t y = r * sh - p.top + i, xx = q * sw - p.left + j;
                if (y < 0 || y >= h || xx < 0 || xx >= wd) continue;
                s += double(x.data[static_cast<size_t>(((b * cin + gi * cpg + c) * h + y) * wd + xx)]) *
                     w.data[static_cast<size_t>(((o * cpg + c) * kh + i) * kw + j)];
              }
          out.data[static_cast<size_t>(((b * cout + o) * oh + r) * ow + q)] =
              act_ref(static_cast<float>(s), act);
        }
  return out;
}

std::string dims_id(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "_" : "") + std::to_string(s[i]);
  return out;
}

TEST(RefexecRandom, ConvMatchesDirectLoops) {
  std::mt19937 rng(12345);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* acts[] = {"none", "relu", "sigmoid", "tanh"};
  for (int trial = 0; trial < 150; ++trial) {
    int64_t groups = std::vector<int64_t>{1, 1, 2, 3, 4}[static_cast<size_t>(pick(0, 4))];
    int64_t cpg = pick(1, 3), opg = pick(1, 3);
    int64_t n = pick(1, 2), cin = cpg * groups, cout = opg * groups;
    int64_t kh = pick(1, 4), kw = pick(1, 4), sh = pick(1, 3), sw = pick(1, 3);
    std::string pad;
    Pads p;
    int mode = pick(0, 3);
    if (mode == 0 && kh % 2 == 1 && kw % 2 == 1) {
      pad = "same";
      p = *resolve_pads(pad, kh, kw);
    } else if (mode == 1) {
      pad = "valid";
    } else {
      p = Pads{pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
      pad = "p" + std::to_string(p.top) + "_" + std::to_string(p.left) + "_" +
            std::to_string(p.bottom) + "_" + std::to_string(p.right);
    }
    int64_t h = std::max<int64_t>(pick(1, 9), kh), wd = std::max<int64_t>(pick(1, 9), kw);
    std::string act = acts[pick(0, 3)];
    bool with_bias = pick(0, 1) == 1;
    Shape xs{n, cin, h, wd}, ws{cout, cpg, kh, kw};
    Tensor x = random_tensor(xs, 1000 + static_cast<uint64_t>(trial));
    Tensor w = random_tensor(ws, 2000 + static_cast<uint64_t>(trial));
    Tensor b = random_tensor({cout}, 3000 + static_cast<uint64_t>(trial));
    WeightStore store;
    store.put_f32("w", ws, w.data);
    store.put_f32("b", {cout}, b.data);
    std::string term = "(conv " + std::to_string(sh) + " " + std::to_string(sw) + " " + pad + " " +
                       act + " (input x@" + dims_id(xs) + ") (weight w@" + dims_id(ws) + ") " +
                       (with_bias ? "(weight b@" + std::to_string(cout) + ")" : "none") + ")";
    SCOPED_TRACE(term);
    Tensor got = eval_term(term, {{"x", x}}, store);
    expect_close(got, conv_ref(x, w, with_bias ? &b : nullptr, sh, sw, p, act));
  }
}

TEST(RefexecRandom, ConvColumnBandsGiveTheSameResult) {
  // The im2col matrix built a few output rows at a time (down to one row per band) must
  // give the same result as the whole matrix at once.
  Shape xs{2, 6, 11, 9}, ws{4, 3, 3, 2};  // groups = 2
  Tensor x = random_tensor(xs, 1), w = random_tensor(ws, 2), b = random_tensor({4}, 3);
  Pads p{2, 0, 1, 1};
  Tensor want = conv_ref(x, w, &b, 2, 1, p, "relu");
  for (int64_t budget : {int64_t{1}, int64_t{3 * 3 * 2 * 9 * 2}, int64_t{1000}, kConvColumnBudget}) {
    SCOPED_TRACE(budget);
    expect_close(conv2d(x, w, b.data.data(), 2, 1, p, Act::Relu, budget), want);
  }
}

TEST(RefexecRandom, LargeConvMatchesDirectLoops) {
  Shape xs{1, 64, 40, 40}, ws{8, 64, 3, 3};
  Tensor x = random_tensor(xs, 1), w = random_tensor(ws, 2);
  WeightStore store;
  store.put_f32("w", ws, w.data);
  Tensor got = eval_term("(conv 1 1 same none (input x@1_64_40_40) (weight w@8_64_3_3) none)",
                         {{"x", x}}, store);
  expect_close(got, conv_ref(x, w, nullptr, 1, 1, Pads{1, 1, 1, 1}, "none"));
}

Tensor matmul_ref(const Tensor& a, const Tensor& b, const Tensor* bias, const std::string& act) {
  Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  Shape batch = *broadcast_shapes(ba, bb);
  int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  Shape os = batch;
  os.push_back(m);
  os.push_back(n);
  Tensor out(os);
  int64_t nb = num_elements(batch);
  // Offset of a broadcast operand's matrix for output batch index t.
  auto mat_index = [&](const Shape& s, int64_t t) {
    int64_t idx = 0, mul = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      int64_t coord = t % batch[d];
      t /= batch[d];
      size_t off = batch.size() - s.size();
      if (d < off) continue;
      int64_t dim = s[d - off];
      idx += (dim == 1 ? 0 : coord) * mul;
      mul *= dim;
    }
    return idx;
  };
  for (int64_t t = 0; t < nb; ++t) {
    const float* pa = a.data.data() + mat_index(ba, t) * m * k;
    const float* pb = b.data.data() + mat_index(bb, t) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = bias ? bias->data[static_cast<size_t>(j)] : 0.0;
        for (int64_t q = 0; q < k; ++q) s += double(pa[i * k + q]) * pb[q * n + j];
        out.data[static_cast<size_t>((t * m + i) * n + j)] = act_ref(static_cast<float>(s), act);
      }
  }
  return out;
}

TEST(RefexecRandom, MatmulMatchesDirectLoops) {
  std::mt19937 rng(777);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* acts[] = {"none", "relu", "sigmoid", "tanh"};
  for (int trial = 0; trial < 120; ++trial) {
    int64_t m = pick(1, 7), k = pick(1, 9), n = pick(1, 7);
    // Batch shapes of rank 0..3 that broadcast: each dim is the common size or 1, and each
    // operand may drop leading dims.
    int rank = pick(0, 3);
    Shape full;
    for (int i = 0; i < rank; ++i) full.push_back(pick(1, 3));
    auto operand_batch = [&]() {
      Shape s;
      int drop = pick(0, rank);
      for (int i = drop; i < rank; ++i) s.push_back(pick(0, 2) == 0 ? 1 : full[static_cast<size_t>(i)]);
      return s;
    };
    Shape as = operand_batch(), bs = operand_batch();
    as.push_back(m);
    as.push_back(k);
    bs.push_back(k);
    bs.push_back(n);
    std::string act = acts[pick(0, 3)];
    bool with_bias = pick(0, 1) == 1;
    Tensor a = random_tensor(as, 10 + static_cast<uint64_t>(trial));
    Tensor b = random_tensor(bs, 20 + static_cast<uint64_t>(trial));
    Tensor bias = random_tensor({n}, 30 + static_cast<uint64_t>(trial));
    WeightStore store;
    store.put_f32("bias", {n}, bias.data);
    std::string term = "(matmul " + act + " (input a@" + dims_id(as) + ") (input b@" + dims_id(bs) +
                       ") " + (with_bias ? "(weight bias@" + std::to_string(n) + ")" : "none") + ")";
    SCOPED_TRACE(term);
    Tensor got = eval_term(term, {{"a", a}, {"b", b}}, store);
    expect_close(got, matmul_ref(a, b, with_bias ? &bias : nullptr, act));
  }
}

Tensor pool_ref(const Tensor& x, bool is_max, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                const Pads& p, bool cip) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  int64_t oh = (h + p.top + p.bottom - kh) / sh + 1, ow = (w + p.left + p.right - kw) / sw + 1;
  Tensor out({n, c, oh, ow});
  size_t o = 0;
  for (int64_t pl = 0; pl < n * c; ++pl)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t q = 0; q < ow; ++q) {
        float m = -std::numeric_limits<float>::infinity();
        double s = 0;
        int cnt = 0;
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            int64_t y = r * sh - p.top + i, xx = q * sw - p.left + j;
            if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
            float v = x.data[static_cast<size_t>((pl * h + y) * w + xx)];
            m = std::max(m, v);
            s += v;
            ++cnt;
          }
        out.data[o++] = is_max ? m : static_cast<float>(s / (cip ? double(kh * kw) : double(cnt)));
      }
  return out;
}

TEST(RefexecRandom, PoolingMatchesDirectLoops) {
  std::mt19937 rng(4242);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 150; ++trial) {
    int64_t kh = pick(1, 4), kw = pick(1, 4), sh = pick(1, 3), sw = pick(1, 3);
    Pads p{pick(0, static_cast<int>(kh) - 1), pick(0, static_cast<int>(kw) - 1),
           pick(0, static_cast<int>(kh) - 1), pick(0, static_cast<int>(kw) - 1)};
    std::string pad = pad_symbol(p, kh, kw);
    Shape xs{pick(1, 2), pick(1, 3), std::max<int64_t>(pick(1, 8), kh), std::max<int64_t>(pick(1, 8), kw)};
    bool is_max = pick(0, 1) == 1, cip = pick(0, 1) == 1;
    Tensor x = random_tensor(xs, 500 + static_cast<uint64_t>(trial));
    std::string head = is_max ? "(poolmax " : "(poolavg ";
    std::string term = head + std::to_string(kh) + " " + std::to_string(kw) + " " +
                       std::to_string(sh) + " " + std::to_string(sw) + " " + pad + " " +
                       (is_max ? "" : (cip ? "1 " : "0 ")) + "(input x@" + dims_id(xs) + "))";
    SCOPED_TRACE(term);
    expect_close(eval_term(term, {{"x", x}}), pool_ref(x, is_max, kh, kw, sh, sw, p, cip));
  }
}

TEST(RefexecRandom, BroadcastMatchesIndexArithmetic) {
  std::mt19937 rng(99);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 100; ++trial) {
    int rank = pick(1, 4);
    Shape full;
    for (int i = 0; i < rank; ++i) full.push_back(pick(1, 4));
    auto operand = [&]() {
      Shape s;
      for (int i = pick(0, rank - 1); i < rank; ++i) s.push_back(pick(0, 1) ? 1 : full[static_cast<size_t>(i)]);
      return s;
    };
    Shape as = operand(), bs = operand();
    Shape os = *broadcast_shapes(as, bs);
    Tensor a = random_tensor(as, 1 + static_cast<uint64_t>(trial)), b = random_tensor(bs, 900 + static_cast<uint64_t>(trial));
    // Reference: unravel each output index and fold it into each operand.
    auto at = [&](const Tensor& t, int64_t flat) {
      int64_t idx = 0, mul = 1;
      for (size_t d = os.size(); d-- > 0;) {
        int64_t coord = flat % os[d];
        flat /= os[d];
        size_t off = os.size() - t.shape.size();
        if (d < off) continue;
        int64_t dim = t.shape[d - off];
        idx += (dim == 1 ? 0 : coord) * mul;
        mul *= dim;
      }
      return t.data[static_cast<size_t>(idx)];
    };
    Tensor add(os), mul(os);
    for (int64_t i = 0; i < num_elements(os); ++i) {
      add.data[static_cast<size_t>(i)] = at(a, i) + at(b, i);
      mul.data[static_cast<size_t>(i)] = at(a, i) * at(b, i);
    }
    std::string args = " (input a@" + dims_id(as) + ") (input b@" + dims_id(bs) + "))";
    SCOPED_TRACE(args);
    expect_close(eval_term("(ewadd" + args, {{"a", a}, {"b", b}}), add, 0);
    expect_close(eval_term("(ewmul" + args, {{"a", a}, {"b", b}}), mul, 0);
  }
}

TEST(RefexecRandom, TransposeMatchesIndexArithmetic) {
  // Shapes around the copy tile (32): the tiled path (input's innermost dimension moved) with
  // partial tiles and size-1 dimensions, and the plain strided path.
  std::mt19937 rng(2027);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int sizes[] = {1, 2, 3, 31, 32, 33, 40, 65};
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = pick(1, 4);
    Shape xs;
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) {
      xs.push_back(n > 4000 ? pick(1, 2) : sizes[pick(0, 7)]);
      n *= xs.back();
    }
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    for (int i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    const Tensor x = random_tensor(xs, 5 + static_cast<uint64_t>(trial));
    Shape os;
    for (int64_t p : perm) os.push_back(xs[static_cast<size_t>(p)]);
    // Reference: out[i0..] = x[j..] with j[perm[k]] = i[k].
    Tensor want(os);
    std::vector<int64_t> xi(xs.size());
    for (int64_t flat = 0; flat < num_elements(os); ++flat) {
      int64_t f = flat;
      for (size_t k = os.size(); k-- > 0;) {
        xi[static_cast<size_t>(perm[k])] = f % os[k];
        f /= os[k];
      }
      int64_t src = 0;
      for (size_t d = 0; d < xs.size(); ++d) src = src * xs[d] + xi[d];
      want.data[static_cast<size_t>(flat)] = x.data[static_cast<size_t>(src)];
    }
    std::string perm_id;
    for (size_t k = 0; k < perm.size(); ++k) perm_id += (k ? "_" : "") + std::to_string(perm[k]);
    const std::string term = "(transpose " + perm_id + " (input x@" + dims_id(xs) + "))";
    SCOPED_TRACE(term);
    expect_close(eval_term(term, {{"x", x}}), want, 0);
  }
}

}  // namespace
}  // namespace tensat::refexec::testing

// The calibrated model for table misses: the least-squares fit recovers known coefficients,
// neighbours correct it, the held-out fit quality on the shipped H100 table, and unseen shapes
// (other batch sizes) get plausible prices.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu_cost/calibrated_model.h"
#include "gpu_cost/embedded_tables.h"
#include "gpu_cost/roofline.h"
#include "gpu_cost/table_model.h"
#include "test_support.h"

namespace tensat::cost {
namespace {

using tensat::testing::Types;

CostCache::Entries h100_costs() {
  auto parsed = parse_cost_cache(std::string(embedded_table("h100")->text), nullptr);
  EXPECT_TRUE(parsed);
  return parsed->devices.begin()->second.costs;
}

TEST(FitLinear, RecoversExactCoefficients) {
  std::vector<Work> w;
  std::vector<double> ms;
  for (int i = 1; i <= 20; ++i) {
    Work x{1e8 * i, 1e6 * (21 - i) * (i % 3 + 1), 1 + i % 2};
    w.push_back(x);
    ms.push_back(0.004 + 0.003 * (x.kernels - 1) + 2e-11 * x.flops + 5e-10 * x.bytes);
  }
  LinearFit f = fit_linear(w, ms);
  EXPECT_EQ(f.samples, 20u);
  EXPECT_NEAR(f.per_call, 0.004, 1e-9);
  EXPECT_NEAR(f.per_extra_kernel, 0.003, 1e-9);
  EXPECT_NEAR(f.per_flop, 2e-11, 1e-17);
  EXPECT_NEAR(f.per_byte, 5e-10, 1e-16);
}

TEST(FitLinear, CoefficientsStayNonNegative) {
  // Time falls with bytes here: an unconstrained fit would give a negative per-byte term.
  std::vector<Work> w;
  std::vector<double> ms;
  for (int i = 1; i <= 10; ++i) {
    w.push_back(Work{1e9 * i, 1e7 * (11 - i), 1});
    ms.push_back(0.01 + 1e-11 * 1e9 * i - 1e-10 * 1e7 * (11 - i) * 0.5);
  }
  LinearFit f = fit_linear(w, ms);
  EXPECT_GE(f.per_call, 0.0);
  EXPECT_GE(f.per_extra_kernel, 0.0);
  EXPECT_GE(f.per_flop, 0.0);
  EXPECT_GE(f.per_byte, 0.0);
  EXPECT_GT(f.per_flop, 0.0);
}

// Relu costs that follow a line exactly: the fit reproduces them, and the neighbours change
// nothing (all ratios are 1).
TEST(CalibratedModel, FitsAKindAndPricesAnUnseenShape) {
  CostCache::Entries e;
  auto line = [](int64_t n) { return 0.005 + 8.0 * n * 1e-9 / 2.0; };  // 2 bytes per ns over 8n bytes
  for (int64_t c : {16, 32, 48, 64, 96, 128, 192, 256, 384, 512}) {
    Types t;
    t.f32({1, c, 28, 28});
    e[signature(Op::Relu, t.list())] = line(c * 28 * 28);
  }
  CalibratedModel m(e, *find_profile("h100"));
  ASSERT_NE(m.kind_fit(Op::Relu), nullptr);
  EXPECT_EQ(m.kind_fit(Op::Conv), nullptr);
  Types q;
  q.f32({8, 320, 28, 28});  // unseen: batch 8, 320 channels
  auto est = m.estimate(Op::Relu, q.list());
  EXPECT_NEAR(est.ms, line(8 * 320 * 28 * 28), 1e-9);
  EXPECT_EQ(est.by, "fit:relu + 5 neighbours");
  EXPECT_EQ(m.estimate(Op::Relu, q.list(), false).by, "fit:relu");
  // Conv has no measurements here: the roofline model of the fallback profile prices it.
  Types conv;
  conv.num(1).num(1).sym("same").sym("relu").f32({1, 64, 56, 56}).f32({64, 64, 3, 3}).sym("none");
  auto ce = m.estimate(Op::Conv, conv.list());
  EXPECT_EQ(ce.by, "roofline:h100");
  EXPECT_DOUBLE_EQ(ce.ms, RooflineModel(*find_profile("h100")).op_cost(Op::Conv, conv.list()));
}

TEST(CalibratedModel, ANearNeighbourCorrectsTheFit) {
  // Ten relus on a line, one measured 3x slower than the line: a shape next to it is priced
  // well above the line (the nearest neighbours' ratios, blended), one far from every
  // measurement stays near the line.
  CostCache::Entries e;
  auto line = [](int64_t n) { return 0.005 + n * 4e-9; };
  for (int64_t c : {16, 32, 48, 64, 96, 128, 192, 256, 384, 512}) {
    Types t;
    t.f32({1, c, 28, 28});
    e[signature(Op::Relu, t.list())] = line(c * 28 * 28) * (c == 96 ? 3.0 : 1.0);
  }
  CalibratedModel m(e, *find_profile("h100"));
  Types near_t, far_t;
  near_t.f32({1, 97, 28, 28});
  far_t.f32({64, 4096, 28, 28});
  const double near_line = m.estimate(Op::Relu, near_t.list(), false).ms;
  EXPECT_GT(m.estimate(Op::Relu, near_t.list()).ms, 1.5 * near_line);
  EXPECT_LT(m.estimate(Op::Relu, near_t.list()).ms, 3.0 * near_line);
  const double far_line = m.estimate(Op::Relu, far_t.list(), false).ms;
  EXPECT_NEAR(m.estimate(Op::Relu, far_t.list()).ms / far_line, 1.0, 0.1);
}

TEST(CalibratedModel, HeldOutErrorOnTheShippedH100Table) {
  FitReport r = held_out_fit_report(h100_costs(), *find_profile("h100"));
  EXPECT_EQ(r.signatures, 3100u);
  EXPECT_EQ(r.unusable, 0u);
  bool conv = false, matmul = false;
  for (const auto& k : r.kinds) {
    EXPECT_GT(k.held_out, 0u);
    EXPECT_GT(k.train, 0u);
    EXPECT_LE(k.median, k.p90);
    // The measured neighbours never make the estimate worse than the analytic fit alone, on
    // the kinds with enough held-out signatures to tell (10 or more: conv, concat, relu, ewadd,
    // ewmul, split, poolavg, poolmax). Of the others, on the table of 2026-11-27, matmul's 6
    // are worse with them (median 33% against 25%; its costs jump with cuBLAS's kernel choice)
    // and act's one (2.7% against 1.8%).
    if (k.held_out >= 10) {
      EXPECT_LE(k.median, k.analytic_median + 1e-9) << k.kind;
    }
    if (k.kind == "conv") {
      conv = true;
      EXPECT_LE(k.median, 0.15) << "conv held-out median relative error";
      EXPECT_EQ(k.by, "fit:conv");
    }
    // matmul: 28 signatures whose graph-replay costs jump with cuBLAS's kernel choice (a
    // 1x1024 by 1024x512 product 0.0020 ms, by 1024x1024 0.0062 ms): a held-out median error
    // of 25% (gpu_cost/tables/README.md). Version 1 of the table, which charged each product
    // its launch latency, was smoother (under 15%).
    if (k.kind == "matmul") matmul = true;
  }
  EXPECT_TRUE(conv);
  EXPECT_TRUE(matmul);
}

TEST(CalibratedModel, HeldOutSplitIsAFifth) {
  size_t held = 0, n = 0;
  for (const auto& [sig, ms] : h100_costs()) {
    held += held_out(sig);
    ++n;
  }
  EXPECT_GT(held, n / 5 - n / 25);
  EXPECT_LT(held, n / 5 + n / 25);
}

TEST(CalibratedModel, OtherBatchSizesArePricedAboveBatchOne) {
  // ResNet-50's 3x3 conv at batch 1 is measured; at batch 8 it is not: its estimate must lie
  // above the batch-1 measurement and below 8 times it plus the launch overhead.
  TableModel t(*embedded_table("h100"), *find_profile("h100"));
  Types b1, b8;
  b1.num(1).num(1).sym("same").sym("relu").f32({1, 64, 56, 56}).f32({64, 64, 3, 3}).sym("none");
  b8.num(1).num(1).sym("same").sym("relu").f32({8, 64, 56, 56}).f32({64, 64, 3, 3}).sym("none");
  Price p1 = t.price(Op::Conv, b1.list());
  ASSERT_FALSE(p1.fallback) << "the batch-1 conv is in the table";
  Price p8 = t.price(Op::Conv, b8.list());
  EXPECT_TRUE(p8.fallback);
  EXPECT_GT(p8.ms, p1.ms);
  EXPECT_LT(p8.ms, 8 * p1.ms);
  ASSERT_EQ(t.fallback_prices().size(), 1u);
  EXPECT_EQ(t.fallback_prices()[0].by.rfind("fit:conv", 0), 0u) << t.fallback_prices()[0].by;
}

}  // namespace
}  // namespace tensat::cost

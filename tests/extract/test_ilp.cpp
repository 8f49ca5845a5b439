// Tests of the CBC ILP extractor: cases greedy gets wrong, cycles, order constraints.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "extract/blocks.h"
#include "extract/formulation.h"
#include "extract/greedy.h"
#include "extract/ilp.h"
#include "extract/reduce.h"
#include "extract/serialize_json.h"
#include "tests/extract/builders.h"

namespace tensat::extract {
namespace {

IlpOptions with_order(OrderConstraints o) {
  IlpOptions opts;
  opts.order = o;
  opts.time_limit_s = 30;
  return opts;
}

// The CBC path alone: no LM-cut proof or elimination before it, no work limit (only the
// time limit).
IlpOptions cbc_only(IlpOptions opts = {}) {
  opts.landmarks = false;
  opts.work = std::numeric_limits<int64_t>::max() / 4;
  return opts;
}

// CBC finds the merge on its own (local search off: the warm start is greedy-DAG's 2.0);
// with the local search on, the warm start already has it and CBC proves it optimal.
TEST(Ilp, FindsTheSharedMatmulMerge) {
  const ExtractGraph g = testing::matmul_merge();
  for (bool local : {false, true})
    for (auto o : {OrderConstraints::None, OrderConstraints::Real, OrderConstraints::Integer}) {
      IlpOptions opts = with_order(o);
      opts.local_search = local;
      const auto r = extract_ilp(g, opts);
      EXPECT_EQ(r.status, "optimal") << to_string(o);
      EXPECT_NEAR(r.dag_cost, 1.6, 1e-9) << to_string(o);
      EXPECT_EQ(r.gap, 0.0);
      EXPECT_NEAR(r.warm_start_cost, local ? 1.6 : 2.0, 1e-9);
      EXPECT_EQ(r.choice[5], 6);  // C1 = split0(M)
      EXPECT_EQ(r.choice[6], 8);  // C2 = split1(M)
    }
}

TEST(Ilp, AvoidsTheCheapCycle) {
  for (const ExtractGraph& g : {testing::two_cycle(), testing::three_cycle()}) {
    const double best = testing::brute_force_optimum(g);
    for (auto o : {OrderConstraints::None, OrderConstraints::Real, OrderConstraints::Integer}) {
      const auto r = extract_ilp(g, with_order(o));
      EXPECT_TRUE(r.acyclic);
      EXPECT_EQ(r.status, "optimal");
      EXPECT_NEAR(r.dag_cost, best, 1e-9) << to_string(o);
    }
    // Without pre-cuts, the lazy cuts must find the cycle themselves.
    IlpOptions lazy = cbc_only();
    lazy.precut_cycle_length = 0;
    const auto r = extract_ilp(g, lazy);
    EXPECT_EQ(r.status, "optimal");  // a cut that never reached the LP: "ilp-failed-greedy"
    EXPECT_NEAR(r.dag_cost, best, 1e-9);
    EXPECT_GE(r.cycle_cuts, 1);
    EXPECT_GE(r.ilp_rounds, 2);
  }
  EXPECT_NEAR(testing::brute_force_optimum(testing::two_cycle()), 5.0, 1e-12);
  EXPECT_NEAR(testing::brute_force_optimum(testing::three_cycle()), 5.0, 1e-12);
}

TEST(Ilp, OrderConstraintsAgreeOnSmallAcyclicGraphs) {
  for (uint32_t seed = 0; seed < 15; ++seed) {
    const ExtractGraph g = testing::random_egraph(seed, 9, /*acyclic=*/true);
    const double best = testing::brute_force_optimum(g);
    for (auto o : {OrderConstraints::None, OrderConstraints::Real, OrderConstraints::Integer}) {
      const auto r = extract_ilp(g, with_order(o));
      EXPECT_EQ(r.status, "optimal") << seed;
      EXPECT_NEAR(r.dag_cost, best, 1e-9) << "seed " << seed << " order " << to_string(o);
    }
  }
}

TEST(Ilp, CycleCutsMatchBruteForceOnSmallCyclicGraphs) {
  int checked = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const ExtractGraph g = testing::random_egraph(seed, 8, /*acyclic=*/false);
    const double best = testing::brute_force_optimum(g);
    if (!std::isfinite(best)) {
      EXPECT_THROW(extract_ilp(g), InputError) << seed;
      continue;
    }
    ++checked;
    for (bool reduce : {true, false}) {
      IlpOptions opts;
      opts.reduce = reduce;
      const auto r = extract_ilp(g, opts);
      EXPECT_EQ(r.status, "optimal") << seed;
      EXPECT_NEAR(r.dag_cost, best, 1e-9) << "seed " << seed << " reduce " << reduce;
    }
    // Lazy cuts only (no pre-cuts): every cut must reach the LP before the next round.
    IlpOptions lazy;
    lazy.precut_cycle_length = 0;
    const auto r = extract_ilp(g, lazy);
    EXPECT_EQ(r.status, "optimal") << seed;
    EXPECT_NEAR(r.dag_cost, best, 1e-9) << "seed " << seed << " lazy";
    EXPECT_NEAR(extract_ilp(g, with_order(OrderConstraints::Integer)).dag_cost, best, 1e-9)
        << seed;
  }
  EXPECT_GE(checked, 20);
}

TEST(Ilp, ReductionKeepsTheOptimum) {
  for (uint32_t seed = 100; seed < 130; ++seed) {
    const ExtractGraph g = testing::random_egraph(seed, 8, /*acyclic=*/false);
    Reduction red;
    try {
      red = reduce(g);
    } catch (const InputError&) {
      continue;
    }
    // The greedy results, mapped onto the reduced problem, stay valid and not costlier.
    for (const auto& r : {extract_greedy(g), extract_greedy_dag(g)}) {
      const Choice mapped = map_to_reduced(g, red, r.choice);
      EXPECT_EQ(extraction_problem(g, mapped), "") << seed;
      EXPECT_LE(dag_cost(g, mapped), r.dag_cost + 1e-12) << seed;
    }
  }
}

TEST(Ilp, StallStopReturnsTheBestSolutionFound) {
  // A set cover CBC cannot close quickly; a stall window far below its solve time.
  const ExtractGraph g = testing::set_cover(3, 120, 60, 3);
  IlpOptions opts;
  opts.time_limit_s = 60;
  opts = cbc_only(opts);
  opts.stall_work = 300;  // three events without a better solution
  const auto r = extract_ilp(g, opts);
  EXPECT_TRUE(r.status == "stalled-greedy" || r.status == "stalled-best-found") << r.status;
  EXPECT_EQ(extraction_problem(g, r.choice), "");
  EXPECT_LE(r.dag_cost, r.warm_start_cost + 1e-9);
  EXPECT_EQ(r.status == "stalled-best-found", r.dag_cost < r.warm_start_cost - 1e-9);
  EXPECT_LE(r.best_bound, r.dag_cost + 1e-9);
  EXPECT_GT(r.gap, 0.0);
  EXPECT_NEAR(r.gap, (r.dag_cost - r.best_bound) / r.dag_cost, 1e-9);
}

// The work budget, not the clock, ends the search: a set cover CBC cannot close within a
// small budget stops with status budget-*, and the same call gives the same extraction,
// bound and work count while other threads keep every core busy (the old wall-clock budget
// gave a different answer on a loaded machine).
TEST(Ilp, WorkBudgetEndsTheSearchTheSameWayUnderLoad) {
  const ExtractGraph g = testing::set_cover(3, 120, 60, 3);
  IlpOptions opts;
  opts.time_limit_s = 60;
  opts.work = 3000;
  opts.stall_work = 0;  // the budget alone
  const ExtractResult idle = extract_ilp(g, opts);
  EXPECT_TRUE(idle.status == "budget-greedy" || idle.status == "budget-best-found") << idle.status;
  EXPECT_EQ(idle.work_budget, 3000);
  EXPECT_GT(idle.work_used, 0);
  EXPECT_GT(idle.gap, 0.0);
  std::atomic<bool> done{false};
  std::vector<std::thread> load;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i)
    load.emplace_back([&] {
      volatile uint64_t x = 0;
      while (!done.load(std::memory_order_relaxed)) x = x * 6364136223846793005ULL + 1;
    });
  const ExtractResult loaded = extract_ilp(g, opts);
  done = true;
  for (auto& t : load) t.join();
  EXPECT_EQ(loaded.status, idle.status);
  EXPECT_EQ(loaded.choice, idle.choice);
  EXPECT_EQ(loaded.work_used, idle.work_used);
  EXPECT_EQ(loaded.best_bound, idle.best_bound);
  // A larger budget never does worse.
  opts.work = 10000;
  const ExtractResult more = extract_ilp(g, opts);
  EXPECT_LE(more.dag_cost, idle.dag_cost + 1e-9);
  EXPECT_GE(more.best_bound, idle.best_bound - 1e-9);
}

// Hints are warm-start candidates: with no budget for the ILP (work 0: the LP is not even
// solved) and no local search, the result is the best of the greedy starts and the valid
// hints; an invalid hint (no node chosen anywhere) is skipped.
TEST(Ilp, ValidHintIsAWarmStartAndAnInvalidOneIsSkipped) {
  const ExtractGraph g = testing::matmul_merge();
  const ExtractResult best = extract_ilp(g);
  ASSERT_EQ(best.status, "optimal");
  IlpOptions opts;
  opts.local_search = false;
  opts.landmarks = false;
  opts.work = 0;
  const ExtractResult plain = extract_ilp(g, opts);
  ASSERT_GT(plain.dag_cost, best.dag_cost + 1e-9);  // greedy-DAG misses the merge
  EXPECT_EQ(plain.status, "budget-greedy");
  opts.hints = {Choice(g.classes.size(), -1), best.choice};
  const ExtractResult hinted = extract_ilp(g, opts);
  EXPECT_NEAR(hinted.dag_cost, best.dag_cost, 1e-12);
  EXPECT_NEAR(hinted.warm_start_cost, best.dag_cost, 1e-12);
  EXPECT_EQ(hinted.work_used, 0);
}

// The warm start takes the better of greedy DAG's two orders (greedy.h, DagOrder; each then
// improved by the local search, off here so that the orders' own results show): never dearer
// than either, nor than the tree greedy.
void expect_best_of_both_orders(const ExtractGraph& g, const std::string& what) {
  std::vector<double> costs(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) costs[n] = g.nodes[n].cost;
  const double settled = dag_cost(g, greedy_dag_choice(g, costs));
  const double worklist = dag_cost(g, greedy_dag_choice(g, costs, nullptr, 0, nullptr, DagOrder::Worklist));
  IlpOptions opts;
  opts.work = 0;  // the warm start only
  opts.local_search = false;
  const ExtractResult r = extract_ilp(g, opts);
  const double tol = 1e-12 * std::max(1.0, settled);
  EXPECT_LE(r.warm_start_cost, settled + tol) << what;
  EXPECT_LE(r.warm_start_cost, worklist + tol) << what;
  EXPECT_LE(r.warm_start_cost, extract_greedy(g).dag_cost + tol) << what;
}

// R = r(X); X = x(B, C) [0]; B = b1(M) [1] | b2(D2) [0]; C = c1(M) [1]; M = m [5];
// D2 = d2(D1) [0]; D1 = d1 [5.5]. B alone is cheaper through b2 (5.5 against 6), but X shares M
// through b1 (7 against 11.5). The worklist order sets B = b1 first (b2 waits for the chain),
// builds X on it and keeps it when B improves; the settled order builds X on B's final set.
TEST(Ilp, WarmStartIsTheBestOfBothGreedyDagOrders) {
  ExtractGraph g;
  const ClassIdx m = g.add_class("M"), d1 = g.add_class("D1"), d2 = g.add_class("D2"), b = g.add_class("B"),
                 c = g.add_class("C"), x = g.add_class("X"), r = g.add_class("R");
  g.add_node(m, "m", {}, 5.0);
  g.add_node(d1, "d1", {}, 5.5);
  g.add_node(d2, "d2", {d1}, 0.0);
  g.add_node(b, "b1", {m}, 1.0);
  g.add_node(b, "b2", {d2}, 0.0);
  g.add_node(c, "c1", {m}, 1.0);
  g.add_node(x, "x", {b, c}, 0.0);
  g.add_node(r, "r", {x}, 0.0);
  g.roots = {r};
  std::vector<double> costs(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) costs[n] = g.nodes[n].cost;
  EXPECT_NEAR(dag_cost(g, greedy_dag_choice(g, costs)), 11.5, 1e-12);
  EXPECT_NEAR(dag_cost(g, greedy_dag_choice(g, costs, nullptr, 0, nullptr, DagOrder::Worklist)), 7.0, 1e-12);
  expect_best_of_both_orders(g, "constructed");
  IlpOptions opts;
  opts.work = 0;
  opts.local_search = false;
  EXPECT_NEAR(extract_ilp(g, opts).warm_start_cost, 7.0, 1e-12);
  for (uint32_t seed = 0; seed < 40; ++seed)
    expect_best_of_both_orders(testing::module_chain(seed, 2 + static_cast<int>(seed % 6), 3 + static_cast<int>(seed % 3)),
                               "chain " + std::to_string(seed));
}

TEST(Ilp, DivePassCapReachesCbc) {
  // On this set cover CBC's root dive (DiveCoefficient) finds 42.1 within its default 100
  // passes but not within 10: CBC's log shows whether the cap set from the event handler
  // reached the heuristic. Both runs then prove the optimum, 36.4. Without the odd-cover cuts:
  // with them (on this cover, triples of elements that share sets) the LP is tighter and
  // CBC's root takes another path, without the dive.
  const ExtractGraph g = testing::set_cover(1, 30, 15, 3);
  auto dive_line = [&](int passes, ExtractResult& r) {
    IlpOptions opts = cbc_only();
    opts.odd_cover_cuts = false;
    opts.cbc_dive_passes = passes;
    opts.cbc_log_level = 3;
    ::testing::internal::CaptureStdout();
    r = extract_ilp(g, opts);
    const std::string log = ::testing::internal::GetCapturedStdout();
    const auto at = log.find("Heuristic DiveCoefficient took");
    return at == std::string::npos ? std::string() : log.substr(at, log.find('\n', at) - at);
  };
  ExtractResult uncapped, capped;
  const std::string a = dive_line(0, uncapped), b = dive_line(10, capped);
  EXPECT_NE(a.find("(good)"), std::string::npos) << a;
  EXPECT_NE(b.find("(no good)"), std::string::npos) << b;
  for (const auto* r : {&uncapped, &capped}) {
    EXPECT_EQ(r->status, "optimal");
    EXPECT_NEAR(r->dag_cost, 36.4, 1e-9);
  }
}

TEST(Ilp, TinyTimeLimitStillReturnsAValidGraph) {
  const ExtractGraph g = testing::random_egraph(7, 60, /*acyclic=*/false);
  IlpOptions opts;
  opts.time_limit_s = 1e-6;
  try {
    const auto r = extract_ilp(g, opts);
    EXPECT_TRUE(r.acyclic);
    EXPECT_LE(r.dag_cost, r.warm_start_cost + 1e-12);
    EXPECT_TRUE(r.status == "timeout-greedy" || r.status == "timeout-best-found" ||
                r.status == "optimal")
        << r.status;
  } catch (const InputError&) {
    GTEST_SKIP() << "random graph without an acyclic extraction";
  }
}

// An e-graph (onnx-tensat --cycle-filter none on a random model, 69 e-nodes) on which Debian's
// CLP 1.17 aborts on an assertion inside CBC's branch and bound (ClpNonLinearCost.cpp:1064,
// "lowerValue <= upperValue", with CBC's default cuts). With the solver isolated in a child
// process, extraction survives and returns the warm start; if a CLP without the bug is
// installed, it returns the optimum. Either way: no abort, a valid extraction.
TEST(Ilp, SolverAbortInTheChildProcessIsSurvived) {
  const ExtractGraph g =
      read_egraph_json((std::filesystem::path(TENSAT_TEST_DATA_DIR) / "clp_assertion.json").string());
  IlpOptions opts;
  opts.time_limit_s = 20;
  const auto r = extract_ilp(g, opts);
  EXPECT_TRUE(r.acyclic);
  EXPECT_TRUE(extraction_problem(g, r.choice).empty());
  EXPECT_LE(r.dag_cost, r.warm_start_cost + 1e-12);
  EXPECT_TRUE(r.status == "optimal" || r.status == "ilp-failed-greedy") << r.status;
  // The isolation must not change results where CBC works: same cost in and out of process.
  const ExtractGraph m = testing::matmul_merge();
  IlpOptions in_process;
  in_process.isolate_solver = false;
  const auto a = extract_ilp(m, in_process), b = extract_ilp(m, IlpOptions{});
  EXPECT_EQ(a.status, "optimal");
  EXPECT_EQ(b.status, "optimal");
  EXPECT_EQ(a.choice, b.choice);
}


// A pipeline e-graph that the default run proves optimal by `proof` without any CBC round
// though the warm start is not optimal; CBC alone agrees on the optimum.
void expect_proven_without_cbc(const char* file, const char* proof) {
  const ExtractGraph g = read_egraph_json((std::filesystem::path(TENSAT_TEST_DATA_DIR) / file).string());
  const ExtractResult r = extract_ilp(g);
  EXPECT_EQ(r.status, "optimal") << file;
  EXPECT_EQ(r.proof, proof) << file;
  EXPECT_EQ(r.ilp_rounds, 0) << file;
  EXPECT_LT(r.dag_cost, r.warm_start_cost - 1e-6) << file;
  IlpOptions ref = cbc_only();
  ref.time_limit_s = 60;
  const ExtractResult c = extract_ilp(g, ref);
  ASSERT_EQ(c.status, "optimal") << file;
  EXPECT_NEAR(r.dag_cost, c.dag_cost, 1e-9) << file;
}

// The pipeline's NasRNN e-graph (table version 1): the local search's warm start (1.12805) is
// not optimal; the start guided by LM-cut's residual costs finds the optimum (1.127896), which
// the LM-cut bound proves, so neither the LP nor CBC runs.
TEST(Ilp, GuidedStartClosesTheBoundWithoutCbc) { expect_proven_without_cbc("eg_nasrnn.json", "lm-cut"); }

// The same model priced by the version-2 H100 table (`onnx-tensat --dump-egraph`, 2026-11-25):
// neither the warm start (0.247437) nor the guided start finds the optimum, LM-cut's bound
// (0.245761) does not reach it, and the LP relaxation is integral at it (0.247045). Its solution
// is taken as the incumbent and meets the LP bound, so CBC never runs.
TEST(Ilp, IntegralLpSolutionClosesTheBoundWithoutCbc) { expect_proven_without_cbc("eg_nasrnn_v2.json", "lp"); }

// The odd-cover cut: the LP relaxation of the merged triangle takes every merge at 1/2 (1.8);
// with the cut it meets the optimum, 2.2, and the LP proves it without CBC. Without the cut
// CBC has to branch. LM-cut is off, so the LP alone bounds.
// Also when the convs read a mandatory input class, as one ILP or in blocks.
TEST(Ilp, OddCoverCutClosesTheMergedTriangle) {
  for (bool input : {false, true}) {
    const ExtractGraph g = testing::merged_triangle(input);
    const double best = input ? 2.3 : 2.2;  // (the relu input: 0.1)
    EXPECT_NEAR(testing::brute_force_optimum(g), best, 1e-12);
    for (bool blocks : {true, false})
      for (bool cuts : {true, false}) {
        IlpOptions opts;
        opts.landmarks = false;
        opts.blocks = blocks;
        opts.odd_cover_cuts = cuts;
        const ExtractResult r = extract_ilp(g, opts);
        const std::string what = "input " + std::to_string(input) + " blocks " + std::to_string(blocks) +
                                 " cuts " + std::to_string(cuts);
        EXPECT_EQ(r.status, "optimal") << what;
        EXPECT_NEAR(r.dag_cost, best, 1e-9) << what;
        EXPECT_EQ(r.proof, cuts ? "lp" : "cbc") << what;
        if (cuts) {
          EXPECT_EQ(r.ilp_rounds, 0) << what;
        } else {
          EXPECT_GE(r.ilp_rounds, 1) << what;
        }
      }
  }
}

// With one cut family (`family`) on and the other three off, the ILP proves g's optimum `best` by
// its LP (blocks or not); with that family off too, CBC has to.
void expect_lp_proof_by(const ExtractGraph& g, double best, bool IlpOptions::*family) {
  EXPECT_NEAR(testing::brute_force_optimum(g), best, 1e-12);
  for (bool blocks : {true, false})
    for (bool cuts : {true, false}) {
      IlpOptions opts;
      opts.landmarks = false;  // (LM-cut's landmarks may find these too)
      opts.blocks = blocks;
      opts.path_cuts = opts.odd_cover_cuts = opts.exclusive_readers = opts.read_rows = false;
      opts.*family = cuts;
      const ExtractResult r = extract_ilp(g, opts);
      const std::string what = "blocks " + std::to_string(blocks) + " cuts " + std::to_string(cuts);
      EXPECT_EQ(r.status, "optimal") << what;
      EXPECT_NEAR(r.dag_cost, best, 1e-9) << what;
      EXPECT_EQ(r.proof, cuts ? "lp" : "cbc") << what;
    }
}

// The path cut closes the LP where a class reaches one conv along two paths, each of which
// has another way out (tests/extract/builders.h); without it CBC has to prove the optimum.
// (The deep odd cover's own row for A and the exclusive-reader row of T are the same row
// here: off, to test the path cut.)
TEST(Ilp, PathCutClosesTwoPathsToOneConv) {
  expect_lp_proof_by(testing::two_paths_to_one_conv(), 12.0, &IlpOptions::path_cuts);
}

// ... and so does the deep odd cover's own row of the mandatory class A (its region's leaf T
// plus its exits, odd_covers.cpp) ...
TEST(Ilp, DeepOddCoverRowOfOneItemClosesTwoPathsToOneConv) {
  expect_lp_proof_by(testing::two_paths_to_one_conv(), 12.0, &IlpOptions::odd_cover_cuts);
}

// ... and the exclusive-reader row of T: P and Q are never used together, so u(T) + v(T) <= x(T).
TEST(Ilp, ExclusiveReadersCloseTwoPathsToOneConv) {
  expect_lp_proof_by(testing::two_paths_to_one_conv(), 12.0, &IlpOptions::exclusive_readers);
}

// Readers of one class that one extraction uses together, through two entries of a block
// (E1, E2: mandatory, read by one node outside their block) or through a fork (one node reading
// P and Q): no exclusive-reader row may join them (tests/extract/builders.h). With blocks and
// without, the ILP finds the brute-force optimum; the LP bound never exceeds it.
TEST(Ilp, ExclusiveReadersKeepReadersUsedTogether) {
  for (const auto& [name, g] : {std::pair{"two entries", testing::readers_under_two_entries()},
                                std::pair{"fork", testing::readers_under_a_fork()}}) {
    const double best = testing::brute_force_optimum(g);
    for (bool blocks : {true, false}) {
      IlpOptions opts;
      opts.landmarks = false;
      opts.blocks = blocks;
      const ExtractResult r = extract_ilp(g, opts);
      EXPECT_EQ(r.status, "optimal") << name << " blocks " << blocks;
      EXPECT_NEAR(r.dag_cost, best, 1e-9) << name << " blocks " << blocks;
    }
  }
}

// Concat trees of different shapes sharing a subtree (tests/extract/builders.h): the LP pays
// the shared subtree once for two shapes at 1/2 (6.5); the exclusive-reader row of bc closes it.
TEST(Ilp, ExclusiveReadersCloseConcatTreesSharingASubtree) {
  expect_lp_proof_by(testing::concat_tree_shapes(), 7.0, &IlpOptions::exclusive_readers);
}

// A node outside the block that no extraction can use (infinite cost) and that reads abc and
// bcd makes them no entries of the block: the exclusive-reader row of bc still closes the LP
// with blocks (counting dead readers as entries lost it: proof "cbc"; NasNet-A's restricted
// blocks needed CBC, 15k work units each, where their LP alone proves them).
TEST(Ilp, ExclusiveReadersIgnoreDeadReadersOutsideTheBlock) {
  ExtractGraph g = testing::concat_tree_shapes();
  auto named = [&](const std::string& name) {
    for (ClassIdx c = 0; c < g.classes.size(); ++c)
      if (class_name(g, c) == name) return c;
    throw std::runtime_error("no class " + name);
  };
  g.add_node(named("out"), "dead", {named("abc"), named("bcd")}, std::numeric_limits<double>::infinity());
  expect_lp_proof_by(g, 7.0, &IlpOptions::exclusive_readers);
}

// The deep odd cover closes the merged triangle whose merges are two levels below the
// mandatory classes (tests/extract/builders.h); the direct odd cover does not fire there (the
// test fails with the deep one switched off: proof "cbc").
TEST(Ilp, DeepOddCoverClosesTheTriangleTwoLevelsDown) {
  expect_lp_proof_by(testing::deep_merged_triangle(), 7.3, &IlpOptions::odd_cover_cuts);
}

// The deep odd cover with a pair of classes as its third item: C (plain) and RC (relu'd) are
// each avoidable but not both (tests/extract/builders.h). The mandatory items alone give no
// violated row (checked with the pairs switched off in odd_covers.cpp: proof "cbc").
TEST(Ilp, DeepOddCoverTakesAPlainAndReluedPairAsAnItem) {
  expect_lp_proof_by(testing::deep_merged_triangle_with_twin(), 8.4, &IlpOptions::odd_cover_cuts);
}

// Late hints (IlpOptions::late_hints) are asked for once, only where LM-cut's first bound does
// not prove the greedy extraction; an invalid one is skipped. The cheapest valid one is tried on
// its own first (the speculative run): where its LPs prove it, it is the result and the warm
// start is not waited for (its cost NaN); where they leave it open, the search runs from the
// warm start as without it, the hint offered there as the incumbent where it is cheaper.
TEST(Ilp, LateHintsAreAskedForOnlyWhereLmCutLeavesTheStartOpen) {
  ExtractGraph easy;  // one class, two leaves: the greedy extraction is optimal and LM-cut proves it
  const ClassIdx r = easy.add_class("r");
  easy.add_node(r, "a", {}, 1.0);
  easy.add_node(r, "b", {}, 2.0);
  easy.roots = {r};
  int asked = 0;
  IlpOptions opts;
  opts.late_hints = [&] {
    ++asked;
    return std::vector<Choice>{};
  };
  EXPECT_EQ(extract_ilp(easy, opts).status, "optimal");
  EXPECT_EQ(asked, 0);

  // The deep merged triangle (builders.h): the warm start is not proven by LM-cut.
  const ExtractGraph g = testing::deep_merged_triangle();
  Choice best, worse;
  double best_cost = std::numeric_limits<double>::infinity();
  testing::for_each_extraction(g, [&](const Choice& c) {
    if (dag_cost(g, c) < best_cost) {
      worse = best;
      best_cost = dag_cost(g, c);
      best = c;
    }
  });
  ASSERT_FALSE(worse.empty());
  const double worse_cost = dag_cost(g, worse);
  for (bool strong : {true, false}) {
    // Without the odd covers the LP does not prove the optimum: CBC does.
    IlpOptions plain;
    plain.odd_cover_cuts = strong;
    const ExtractResult without = extract_ilp(g, plain);
    const std::string what = strong ? "odd covers" : "no odd covers";
    ASSERT_GT(without.warm_start_cost, best_cost + 1e-9) << what;  // (else this case tests nothing)
    EXPECT_EQ(without.proof, strong ? "lp" : "cbc") << what;
    IlpOptions hinted = plain;
    for (const Choice& hint : {best, worse}) {
      asked = 0;
      hinted.late_hints = [&] {
        ++asked;
        return std::vector<Choice>{Choice(g.classes.size(), 0), hint};  // the first is no extraction
      };
      const ExtractResult with = extract_ilp(g, hinted);
      const std::string which = what + (hint == best ? ", the optimum as the hint" : ", a dearer hint");
      EXPECT_EQ(asked, 1) << which;
      EXPECT_EQ(with.status, "optimal") << which;
      EXPECT_NEAR(with.dag_cost, best_cost, 1e-9) << which;
      // The speculative run proves the optimum where it is the hint (its elimination prunes
      // the rest, also without the odd covers) and where the LP's own solution is an
      // extraction (with them); a dearer hint without them it gives up.
      const bool speculated = hint == best || strong;
      EXPECT_EQ(std::isnan(with.warm_start_cost), speculated) << which;
      if (speculated) {
        EXPECT_NEAR(with.late_hint_cost, dag_cost(g, hint), 1e-9) << which;
        EXPECT_EQ(with.proof, "lp") << which;
      } else {
        EXPECT_EQ(with.warm_start_cost, without.warm_start_cost) << which;
        EXPECT_EQ(with.proof, without.proof) << which;
        // (It is no cheaper than the warm start: not taken as the incumbent.)
        EXPECT_GE(worse_cost, without.warm_start_cost - 1e-9) << which;
        EXPECT_TRUE(std::isnan(with.late_hint_cost)) << which;
      }
      if (hint == best) {
        EXPECT_LE(with.work_used, without.work_used) << which;
      }
    }
  }
}

// IlpOptions::stop: a caller that no longer wants the result (the k_multi 0 seed) gets Stopped,
// set before the call or during it, with CBC's proof or the LP's; unset, the problem is solved.
TEST(Ilp, AStopFlagEndsTheCallWithStopped) {
  const ExtractGraph g = testing::deep_merged_triangle();
  std::atomic<bool> stop{true};
  for (bool odd_covers : {true, false}) {  // (without them CBC proves it)
    IlpOptions opts;
    opts.odd_cover_cuts = odd_covers;
    opts.stop = &stop;
    stop = true;
    EXPECT_THROW(extract_ilp(g, opts), Stopped);
    stop = false;
    const ExtractResult r = extract_ilp(g, opts);
    EXPECT_EQ(r.status, "optimal");
    EXPECT_NEAR(r.dag_cost, testing::brute_force_optimum(g), 1e-9);
    // Set during the call (when the late hints are asked for, after LM-cut's first run): the
    // phases after it see it.
    opts.late_hints = [&] {
      stop = true;
      return std::vector<Choice>{};
    };
    EXPECT_THROW(extract_ilp(g, opts), Stopped);
    opts.late_hints = nullptr;
  }
}

// A leaf of the deep odd cover's region that nothing in use reads (tests/extract/builders.h):
// the LP meets the cover by buying it alone; the read-class rows close that (with them off,
// proof "cbc"). Odd covers on, the other families off, blocks or not.
TEST(Ilp, ReadClassRowsStopTheLpBuyingAnUnreadLeaf) {
  const ExtractGraph g = testing::deep_merged_triangle_with_unread_leaf();
  EXPECT_NEAR(testing::brute_force_optimum(g), 7.3, 1e-12);
  for (bool blocks : {true, false})
    for (bool read : {true, false}) {
      IlpOptions opts;
      opts.landmarks = false;
      opts.blocks = blocks;
      opts.path_cuts = opts.exclusive_readers = false;
      opts.read_rows = read;
      const ExtractResult r = extract_ilp(g, opts);
      const std::string what = "blocks " + std::to_string(blocks) + " read rows " + std::to_string(read);
      EXPECT_EQ(r.status, "optimal") << what;
      EXPECT_NEAR(r.dag_cost, 7.3, 1e-9) << what;
      EXPECT_EQ(r.proof, read ? "lp" : "cbc") << what;
    }
}

// Every row of `model` holds at the column values of every valid extraction of g (mapped onto
// the reduced problem, as the ILP's starts are): the rows the LP rounds add are valid for
// every acyclic extraction, the read-class rows for every pruned one, which a valid extraction
// is (extraction_problem()). Returns how many extractions were checked.
int expect_rows_hold_for_every_extraction(const ExtractGraph& g, const Reduction& red, IlpModel& model,
                                          const std::string& name) {
  const OsiClpSolverInterface& lp = model.lp();
  const CoinPackedMatrix* rows = lp.getMatrixByRow();
  const double* lo = lp.getRowLower();
  const double* up = lp.getRowUpper();
  int extractions = 0, broken = 0;
  testing::for_each_extraction(g, [&](const Choice& c) {
    const std::vector<double> x = model.start_values(map_to_reduced(g, red, c));
    for (int r = 0; r < lp.getNumRows(); ++r) {
      const CoinShallowPackedVector row = rows->getVector(r);
      double act = 0.0;
      for (int k = 0; k < row.getNumElements(); ++k) act += row.getElements()[k] * x[static_cast<size_t>(row.getIndices()[k])];
      if (act < lo[r] - 1e-7 || act > up[r] + 1e-7) ++broken;
    }
    ++extractions;
  });
  EXPECT_EQ(broken, 0) << name << ": rows violated by valid extractions";
  return extractions;
}

// Every row the LP rounds add (requirement rows, odd covers, deep odd covers with their pairs,
// exclusive-reader rows lifted, read-class rows, path cuts) holds at every valid extraction,
// checked row by row, so after all rounds the LP bound never exceeds the brute-force optimum
// (a cut that is too strong would not show in extract_ilp's result, which caps the bound at
// the cost). Where the cuts close the gap it is the optimum exactly.
TEST(Ilp, SeparatedLpNeverExceedsTheOptimum) {
  struct Case {
    std::string name;
    ExtractGraph g;
    double exact;  // the LP bound the cuts reach, or NaN
  };
  std::vector<Case> cases;
  cases.push_back({"two paths", testing::two_paths_to_one_conv(), 12.0});
  cases.push_back({"deep triangle", testing::deep_merged_triangle(), 7.3});
  cases.push_back({"triangle", testing::merged_triangle(true), 2.3});
  cases.push_back({"deep triangle with twin", testing::deep_merged_triangle_with_twin(), 8.4});
  cases.push_back({"deep triangle with an unread leaf", testing::deep_merged_triangle_with_unread_leaf(), 7.3});
  cases.push_back({"concat tree shapes", testing::concat_tree_shapes(), 7.0});
  cases.push_back({"reader chain", testing::reader_chain(), 1.0});
  cases.push_back({"readers under a fork", testing::readers_under_a_fork(), 13.0});
  for (uint32_t seed = 0; seed < 40; ++seed)
    cases.push_back({"random " + std::to_string(seed), testing::random_egraph(seed, 9, seed % 2 == 0), std::nan("")});
  for (uint32_t seed = 0; seed < 20; ++seed)
    cases.push_back({"merge " + std::to_string(seed), testing::merge_egraph(seed, 3 + seed % 2), std::nan("")});
  for (uint32_t seed = 0; seed < 8; ++seed)
    cases.push_back({"chain " + std::to_string(seed), testing::module_chain(seed, 2, 3), std::nan("")});
  cases.push_back({"readers under two entries", testing::readers_under_two_entries(), 12.0});
  int checked = 0, split = 0, read_rows = 0;
  for (const Case& c : cases) {
    const double best = testing::brute_force_optimum(c.g);
    if (!std::isfinite(best)) continue;
    IlpOptions opts;
    opts.landmarks = false;
    const Reduction red = reduce(c.g);
    IlpModel model(c.g, red, opts);
    int64_t work = 1'000'000;
    const double lp = model.separate(work, IlpModel::Clock::now() + std::chrono::seconds(10), 20);
    ASSERT_TRUE(model.lp_solved()) << c.name;
    EXPECT_LE(lp, best + 1e-9) << c.name;
    EXPECT_GT(expect_rows_hold_for_every_extraction(c.g, red, model, c.name), 0) << c.name;
    read_rows += model.read_rows();
    if (!std::isnan(c.exact)) {
      EXPECT_NEAR(best, c.exact, 1e-12) << c.name;
      EXPECT_NEAR(lp, c.exact, 1e-9) << c.name;
    }
    // Split into blocks (the rows then see the block's entries): the blocks' LP bounds plus
    // the cheapest node of each one-class block never exceed the optimum either.
    const Requirements req = requirements(c.g, red);
    const Blocks blocks = find_blocks(c.g, red, req);
    if (blocks.count() > 1) {
      double total = 0.0;
      for (const auto& classes : blocks.classes) {
        if (classes.size() == 1) {
          double cheapest = std::numeric_limits<double>::infinity();
          for (NodeIdx n : c.g.classes[classes[0]].nodes)
            if (red.node_alive[n]) cheapest = std::min(cheapest, c.g.nodes[n].cost);
          total += cheapest;
          continue;
        }
        std::vector<char> mask(c.g.classes.size(), 0);
        for (ClassIdx k : classes) mask[k] = 1;
        IlpModel part(c.g, red, opts, &req, &mask);
        // A twin's model (columns only, ilp.cpp) has the same columns and no LP.
        IlpModel columns(c.g, red, opts, &req, &mask, /*columns_only=*/true);
        ASSERT_EQ(columns.num_x(), part.num_x()) << c.name;
        for (NodeIdx n = 0; n < c.g.nodes.size(); ++n) ASSERT_EQ(columns.col_of(n), part.col_of(n)) << c.name;
        int64_t none = 1'000'000;
        EXPECT_THROW(columns.separate(none, IlpModel::Clock::now() + std::chrono::seconds(10), 20), InternalError)
            << c.name;
        int64_t part_work = 1'000'000;
        total += part.separate(part_work, IlpModel::Clock::now() + std::chrono::seconds(10), 20);
        ASSERT_TRUE(part.lp_solved()) << c.name;
        expect_rows_hold_for_every_extraction(c.g, red, part, c.name + " (a block)");
        read_rows += part.read_rows();
      }
      EXPECT_LE(total, best + 1e-9) << c.name << " (blocks)";
      ++split;
    }
    ++checked;
  }
  EXPECT_GE(checked, 60);
  EXPECT_GE(split, 3);
  EXPECT_GT(read_rows, 0);  // (the read-class rows are among those checked)
}

// Split into blocks (extract/blocks.h), the ILP finds the same optimum as brute force and as
// one ILP over everything, on chains of merge modules.
TEST(Ilp, BlocksGiveTheOptimumOfTheWholeProblem) {
  for (uint32_t seed = 0; seed < 12; ++seed) {
    const ExtractGraph g = testing::module_chain(seed, 2, 3);
    const double best = testing::brute_force_optimum(g);
    for (bool landmarks : {true, false}) {
      IlpOptions opts;
      opts.landmarks = landmarks;
      const ExtractResult r = extract_ilp(g, opts);
      EXPECT_EQ(r.status, "optimal") << seed;
      EXPECT_NEAR(r.dag_cost, best, 1e-9) << seed;
      EXPECT_EQ(extraction_problem(g, r.choice), "") << seed;
      if (!landmarks) {  // (LM-cut may prove it before the ILP)
        EXPECT_GT(r.blocks, 1u) << seed;
      }
    }
  }
  for (uint32_t seed = 0; seed < 8; ++seed) {
    const ExtractGraph g = testing::module_chain(seed, 5, 5);
    IlpOptions split = cbc_only(), whole = cbc_only();
    whole.blocks = false;
    const ExtractResult a = extract_ilp(g, split), b = extract_ilp(g, whole);
    EXPECT_GT(a.blocks, 5u) << seed;
    EXPECT_EQ(b.blocks, 0u) << seed;
    ASSERT_EQ(a.status, "optimal") << seed;
    ASSERT_EQ(b.status, "optimal") << seed;
    EXPECT_NEAR(a.dag_cost, b.dag_cost, 1e-9) << seed;
  }
}

// The pipeline's Inception-v3 e-graph priced by the version-2 H100 table (`onnx-tensat
// --dump-egraph`, 2026-11-25): split into 42 blocks (the largest 323 columns instead of one ILP
// of 2186), CBC proves the optimum, 2.951939, within 25 000 work units; one ILP over
// everything without the read-class rows stops short of it with the same budget (2.9533
// found, bound 2.9497).
TEST(Ilp, BlocksProveInceptionV3WhereOneIlpWithoutReadRowsDoesNot) {
  const ExtractGraph g =
      read_egraph_json((std::filesystem::path(TENSAT_TEST_DATA_DIR) / "eg_inceptionv3_v2.json").string());
  IlpOptions opts;
  opts.work = 25000;
  opts.stall_work = 0;
  const ExtractResult split = extract_ilp(g, opts);
  EXPECT_EQ(split.status, "optimal");
  EXPECT_EQ(split.blocks, 42u);
  EXPECT_NEAR(split.dag_cost, 2.951939, 1e-6);
  EXPECT_EQ(extraction_problem(g, split.choice), "");
  opts.blocks = false;
  opts.read_rows = false;
  const ExtractResult whole = extract_ilp(g, opts);
  EXPECT_NE(whole.status, "optimal");
  EXPECT_GT(whole.dag_cost, split.dag_cost + 1e-4);
  EXPECT_LT(whole.best_bound, split.dag_cost - 1e-3);
  // Since 2026-11-28 the read-class rows (formulation.h) make one ILP over everything strong
  // enough to prove it as well.
  opts.read_rows = true;
  const ExtractResult whole_read = extract_ilp(g, opts);
  EXPECT_EQ(whole_read.status, "optimal");
  EXPECT_NEAR(whole_read.dag_cost, 2.951939, 1e-6);
}

// The pipeline's Inception-v3 and NasNet-A e-graphs priced by the graph-replay-v3 H100 table
// (`onnx-tensat --dump-egraph`, 2026-11-28). Before the read-class rows, the lifted
// exclusive-reader rows and the deep odd covers over used classes, the default budget left
// Inception-v3 at gap 0.0014 (budget-greedy, 1.2 s) and NasNet-A at 3.094376, gap 0.017
// (budget-best-found, 3.7 s; its 705-column blocks' LP rounds used up the budget). Now both are
// proven within the default budget, NasNet-A by its LPs alone. Without the read-class rows
// neither is, without the used pairs Inception-v3 is not (it stalls at gap 0.00024), and
// without the lifting NasNet-A needs CBC and almost twice the work.
TEST(Ilp, StrongerRowsProveInceptionV3AndNasNetA) {
  const auto path = [](const char* name) {
    return (std::filesystem::path(TENSAT_TEST_DATA_DIR) / name).string();
  };
  const ExtractGraph inception = read_egraph_json(path("eg_inceptionv3_v3.json"));
  const ExtractGraph nasnet = read_egraph_json(path("eg_nasneta_v3.json"));
  const IlpOptions opts;
  const ExtractResult i = extract_ilp(inception, opts);
  EXPECT_EQ(i.status, "optimal");
  EXPECT_NEAR(i.dag_cost, 3.148290, 1e-6);
  EXPECT_EQ(extraction_problem(inception, i.choice), "");
  const ExtractResult n = extract_ilp(nasnet, opts);
  EXPECT_EQ(n.status, "optimal");
  EXPECT_EQ(n.proof, "lp");
  EXPECT_NEAR(n.dag_cost, 3.093952, 1e-6);
  EXPECT_EQ(extraction_problem(nasnet, n.choice), "");
  EXPECT_LE(n.work_used, ilp_work_budget(nasnet, opts));
  {
    IlpOptions no_read = opts;
    no_read.read_rows = false;
    const ExtractResult r = extract_ilp(inception, no_read);
    EXPECT_NE(r.status, "optimal");
    EXPECT_GE(r.dag_cost, i.dag_cost - 1e-9);
    EXPECT_LE(r.best_bound, i.dag_cost + 1e-9);
    const ExtractResult s = extract_ilp(nasnet, no_read);
    EXPECT_NE(s.status, "optimal");
  }
  {
    // Without the lifting NasNet-A is still proven, but needs CBC and about twice the work.
    IlpOptions unlifted = opts;
    unlifted.lift_exclusive_readers = false;
    const ExtractResult r = extract_ilp(nasnet, unlifted);
    EXPECT_EQ(r.status, "optimal");
    EXPECT_NEAR(r.dag_cost, n.dag_cost, 1e-9);
    EXPECT_NE(r.proof, "lp");
    EXPECT_GT(r.work_used, n.work_used + n.work_used / 2);
  }
  {
    IlpOptions no_pairs = opts;
    no_pairs.used_pairs = false;
    const ExtractResult r = extract_ilp(inception, no_pairs);
    EXPECT_NE(r.status, "optimal");
    EXPECT_GE(r.dag_cost, i.dag_cost - 1e-9);
  }
}

// With the default budget on the same e-graph: the warm start (2.953876) and the start guided
// by LM-cut's residual costs (2.953296) are each optimal in some blocks only; taken block by
// block, the cheaper of the two is the optimum, 2.951939, which one ILP over everything does
// not reach. Since 2026-11-26 (deep odd covers with pairs, exclusive-reader rows, one root
// cut pass in CBC) the default budget also proves it: 4 959 of 10 000 units.
TEST(Ilp, TheCheaperStartBlockByBlockReachesInceptionV3sOptimum) {
  const ExtractGraph g =
      read_egraph_json((std::filesystem::path(TENSAT_TEST_DATA_DIR) / "eg_inceptionv3_v2.json").string());
  IlpOptions opts;
  const ExtractResult split = extract_ilp(g, opts);
  EXPECT_NEAR(split.dag_cost, 2.951939, 1e-6);
  EXPECT_NEAR(split.warm_start_cost, 2.953876, 1e-6);
  EXPECT_EQ(split.status, "optimal");
  EXPECT_LT(split.gap, 1e-6);
  opts.blocks = false;
  EXPECT_GT(extract_ilp(g, opts).dag_cost, split.dag_cost + 1e-3);
}

// The warm start runs on a second thread beside the reduction and LM-cut's first run
// (IlpOptions::concurrent_start): the same extraction, bounds, landmarks and work as one
// after the other, on an e-graph proven by LM-cut (nasrnn), one that goes on to CBC (bert)
// and one with a hint.
TEST(Ilp, ConcurrentStartGivesTheSameResultAsSequential) {
  for (const char* name : {"eg_nasrnn.json", "eg_bert.json"}) {
    const ExtractGraph g =
        read_egraph_json((std::filesystem::path(TENSAT_TEST_DATA_DIR) / name).string());
    IlpOptions seq;
    seq.concurrent_start = false;
    IlpOptions par;
    par.concurrent_start = true;
    par.hints = seq.hints = {extract_greedy(g).choice};
    const ExtractResult a = extract_ilp(g, seq), b = extract_ilp(g, par);
    EXPECT_EQ(a.choice, b.choice) << name;
    EXPECT_EQ(a.status, b.status) << name;
    EXPECT_EQ(a.warm_start_cost, b.warm_start_cost) << name;
    EXPECT_EQ(a.lm_cut_bound, b.lm_cut_bound) << name;
    EXPECT_EQ(a.landmarks, b.landmarks) << name;
    EXPECT_EQ(a.eliminated, b.eliminated) << name;
    EXPECT_EQ(a.work_used, b.work_used) << name;
    EXPECT_EQ(a.best_bound, b.best_bound) << name;
  }
}

// Phase 5a solves every part's LP with all the work left, in parallel; phase 5b takes them in
// order as if one had run after the other, and solves again the parts where the work the ones
// before had left would have stopped the LP. With budgets that run out in the LPs (100, 300 on
// Inception-v3's 42 blocks and NasRNN's 76), in CBC (1000, 2000) and the default, the result is
// that of one LP after the other. Without the redo (a part's LP taken whatever work it used)
// the results differ at 100, 300 (both files) and 1000 (Inception-v3).
TEST(Ilp, ParallelLpsGiveTheResultOfOneAfterTheOther) {
  for (const char* name : {"eg_inceptionv3_v2.json", "eg_nasrnn_v2.json"}) {
    const ExtractGraph g = read_egraph_json((std::filesystem::path(TENSAT_TEST_DATA_DIR) / name).string());
    for (int64_t work : {100, 300, 1000, 2000, -1}) {
      IlpOptions seq;
      seq.parallel_lps = false;
      seq.work = work;
      IlpOptions par = seq;
      par.parallel_lps = true;
      const ExtractResult a = extract_ilp(g, seq), b = extract_ilp(g, par);
      const std::string what = std::string(name) + " work " + std::to_string(work);
      EXPECT_EQ(a.choice, b.choice) << what;
      EXPECT_EQ(a.status, b.status) << what;
      EXPECT_EQ(a.work_used, b.work_used) << what;
      EXPECT_EQ(a.best_bound, b.best_bound) << what;
      EXPECT_EQ(a.dag_cost, b.dag_cost) << what;
    }
  }
}

}  // namespace
}  // namespace tensat::extract

#include "pipeline/seed.h"

#include <spdlog/spdlog.h>

#include "egraph/bridge.h"
#include "support/stopwatch.h"

namespace tensat {

namespace {

// An exploration of the input at one k_multi, with the seed it got from the one below.
struct Explored {
  EGraph eg;
  EClassId root;
  RunReport run;
  std::optional<Seed> lower;
};

// Explores the input at k_multi `k` with `rc`'s limits, seeded as the pipeline seeds an
// exploration at k (from k - 1 at k >= 2, computed first; never worse than it). Tells
// ctx.k0 the size of a k_multi 1 e-graph.
Explored explore_at(const SeedContext& ctx, size_t k, RunnerConfig rc) {
  Explored x;
  x.lower = lower_k_seed(ctx, k);  // (k >= 2 only; before this e-graph exists)
  x.root = add_graph(x.eg, ctx.input);
  rc.k_multi = k;
  rc.on_iteration = nullptr;
  x.run = Runner(x.eg).with_config(rc).run(ctx.rules);
  if (k == 1 && ctx.k0) ctx.k0->limit(x.run.nodes);
  return x;
}

// Extracts an exploration at k_multi `k` (at k 1 with the k 0 late hint) with `eo`.
Seed extract_at(const SeedContext& ctx, size_t k, Explored& x, extract::ExtractOptions eo) {
  std::vector<EClassId> lower_classes;
  if (x.lower) lower_classes = add_seed(x.eg, x.root, *x.lower);
  const ENodePrices prices = ctx.costing.price(x.eg);
  const ExtractView view = to_extract_graph(x.eg, x.root, prices.cost);
  eo.ilp.hints.clear();  // (eo is the larger extraction's: its hints are not this one's)
  eo.ilp.late_hints = nullptr;
  if (x.lower && !lower_classes.empty())
    if (extract::Choice hint = seed_choice(x.eg, view, *x.lower, lower_classes); !hint.empty())
      eo.ilp.hints.push_back(std::move(hint));
  LateSeed own;
  if (k == 1) eo.ilp.late_hints = k0_late_hint(ctx, x.eg, x.root, view, own);
  const extract::ExtractResult ex = extract::extract(view.graph, eo);
  spdlog::debug("seed: k_multi {} result {} ({}, {} e-nodes)", k, ex.dag_cost, ex.status, x.run.nodes);
  return Seed{choice_to_graph(x.eg, x.root, view, ex.choice), ex.dag_cost, k, 0.0};
}

}  // namespace

std::optional<Seed> lower_k_seed(const SeedContext& ctx, size_t k_multi) {
  if (ctx.extract.method != extract::Method::Ilp || k_multi < 2) return std::nullopt;
  Stopwatch t;
  Explored x = explore_at(ctx, k_multi - 1, ctx.explore);
  Seed s = extract_at(ctx, k_multi - 1, x, ctx.extract);
  s.seconds = t.seconds();
  return s;
}

K0Seed::K0Seed(const SeedContext& ctx)
    : input_(ctx.input), rules_(ctx.rules), costing_(ctx.costing), explore_(ctx.explore), extract_(ctx.extract) {
  explore_.k_multi = 0;
  explore_.on_iteration = nullptr;
  explore_.node_cap = &cap_;
  extract_.ilp.hints.clear();
  extract_.ilp.late_hints = nullptr;
  extract_.ilp.concurrent_start = false;  // (one thread: the other core explores)
  extract_.ilp.stop = &ilp_stop_;
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    spdlog::debug("seed: no second thread ({}); the k_multi 0 seed is computed when asked", e.what());
  }
}

K0Seed::~K0Seed() { stop(); }

void K0Seed::limit(size_t nodes) {
  {
    std::lock_guard lock(mu_);
    if (limit_known_) return;
    limit_known_ = true;
    limit_ = nodes / 4;
    if (peak_ != kUnexplored && peak_ >= limit_) {
      ilp_stop_ = true;  // (too large: its extraction under way is not wanted)
      spdlog::debug("seed: the k_multi 0 e-graph reached {} e-nodes, a quarter of the k_multi 1 e-graph's; no seed",
                    limit_);
    }
  }
  cap_.store(nodes / 4, std::memory_order_relaxed);
  cv_.notify_all();
}

void K0Seed::stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  ilp_stop_ = true;
  cap_.store(0, std::memory_order_relaxed);
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

const std::optional<Seed>& K0Seed::get() {
  Stopwatch t;
  if (thread_.joinable()) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_; });
  } else if (!done_) {
    run();  // (no second thread; the cap is known: the exploration stops at it)
  }
  waited_s_ = t.seconds();
  return seed_;
}

void K0Seed::run() {
  // (At the normal priority: at the lowest, on a loaded machine (a parallel build beside it)
  // the extraction that waited for it waited 60 ms for NasRNN's 5 ms, and an unprivileged
  // process cannot raise it again when it is asked for.)
  Stopwatch t;
  std::optional<Seed> seed;
  // (Every way out says it is done, also by an exception: the exploration's own errors are
  // the larger exploration's too, which reports them.)
  struct Done {
    K0Seed& s;
    std::optional<Seed>& seed;
    ~Done() {
      {
        std::lock_guard lock(s.mu_);
        s.seed_ = std::move(seed);
        s.own_s_ = s.seed_ ? s.seed_->seconds : 0.0;
        s.done_ = true;
      }
      s.cv_.notify_all();
    }
  } done{*this, seed};
  auto too_large = [&] {  // (under mu_, once the exploration has ended)
    return peak_ == SIZE_MAX || (limit_known_ && peak_ >= limit_);
  };
  try {
    const SeedContext ctx{input_, rules_, explore_, costing_, extract_, nullptr};
    Explored x = explore_at(ctx, 0, explore_);
    {
      std::lock_guard lock(mu_);
      // (An exploration the clock stopped gives no seed: where it stops would depend on the
      // machine's load.)
      const bool cut = x.run.stop_reason == StopReason::NodeLimit || x.run.stop_reason == StopReason::TimeLimit;
      if (x.run.stop_reason == StopReason::TimeLimit)
        spdlog::debug("seed: the k_multi 0 exploration reached its time limit; no seed");
      peak_ = cut ? SIZE_MAX : x.run.peak_nodes;
      if (stopped_ || too_large()) return;
    }
    // Extracted at once, where the larger exploration may still run (its core is idle
    // otherwise); limit() stops the extraction where the e-graph turns out too large, stop()
    // where the seed is no longer wanted (extract::IlpOptions::stop).
    seed = extract_at(ctx, 0, x, extract_);
    seed->seconds = t.seconds();
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return limit_known_ || stopped_; });
    if (stopped_ || too_large()) seed.reset();
  } catch (const extract::Stopped&) {
    seed.reset();
  } catch (const std::exception& e) {
    spdlog::debug("seed: the k_multi 0 seed failed: {}", e.what());
    seed.reset();
  }
}

std::function<std::vector<extract::Choice>()> k0_late_hint(const SeedContext& ctx, const EGraph& eg, EClassId root,
                                                           const ExtractView& view, LateSeed& out) {
  if (!ctx.k0 || ctx.extract.method != extract::Method::Ilp) return {};
  return [&ctx, &eg, root, &view, &out]() -> std::vector<extract::Choice> {
    out.asked = true;
    const std::optional<Seed>& seed = ctx.k0->get();
    out.seconds = ctx.k0->waited_s();
    out.beside_s = ctx.k0->own_s();
    std::vector<extract::Choice> hints;
    std::vector<EClassId> classes;
    if (!seed) return hints;
    if (const std::optional<EClassId> found = find_graph(eg, seed->graph, &classes);
        !found || eg.find(*found) != eg.find(root)) {
      spdlog::debug("seed: the k_multi 0 result is not in the k_multi 1 e-graph; not used");
    } else if (extract::Choice hint = seed_choice(eg, view, *seed, classes); !hint.empty()) {
      hints.push_back(std::move(hint));
      out.seed = seed;
    }
    return hints;
  };
}

std::vector<EClassId> add_seed(EGraph& eg, EClassId& root, const Seed& seed) {
  std::vector<EClassId> classes;
  const EClassId seed_root = add_graph(eg, seed.graph, &classes);
  if (eg.find(root) != eg.find(seed_root) && !eg.merge_checked(root, seed_root, "lower k_multi seed")) classes.clear();
  eg.rebuild();
  root = eg.find(root);
  return classes;
}

extract::Choice seed_choice(const EGraph& eg, const ExtractView& view, const Seed& seed,
                            const std::vector<EClassId>& seed_classes) {
  extract::Choice hint = graph_to_choice(eg, view, seed.graph, seed_classes);
  if (hint.empty())
    spdlog::warn("the k_multi {} result is not an extraction of the k_multi {} e-graph; not used", seed.k_multi,
                 seed.k_multi + 1);
  return hint;
}

}  // namespace tensat

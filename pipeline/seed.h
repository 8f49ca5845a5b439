// The extraction's warm start from a lower k_multi (issue #17): the same input explored with
// fewer iterations of multi-pattern rules gives a smaller e-graph whose ILP is quick, and its
// result is an extraction of the larger e-graph the ILP there can only improve on.
//   * k_multi 2 and above: the k_multi - 1 result (itself seeded so), always, computed before
//     the larger exploration and added to its e-graph (the larger e-graph's ILP stopped further
//     from its optimum without it: BERT 1.1252 at k_multi 2 against the proven 1.1021 at
//     k_multi 1, table v1). The result is then never worse than k_multi - 1's, nor k_multi 1's.
//   * k_multi 1 (and the k_multi 1 run of a k_multi 2 seed): the k_multi 0 result, as a late
//     hint (extract::IlpOptions::late_hints), where the k_multi 0 e-graph stays under a quarter
//     of the k_multi 1 e-graph's e-nodes, and used where all its terms are in the larger
//     e-graph (which is not changed). It is computed beside the explorations (K0Seed): started
//     before them on a second thread, it explores the input at k_multi 0 and extracts it,
//     stopped as soon as the k_multi 1 e-graph's size shows it too large (so a large one
//     costs at most the larger exploration's time on the other core). NasRNN (734 e-nodes
//     against 13 016): the k_multi 0 result is the optimum of the larger e-graph too, and with it as
//     the incumbent LM-cut's elimination and the LPs prove it: 2 735 work units -> 53. Where
//     LM-cut proves the greedy extraction (SqueezeNet, VGG-19, the ResNets, DenseNet) it is
//     not asked for (SqueezeNet's is extracted beside the exploration all the same, and
//     stopped or joined after the extraction); where the two e-graphs are close in size
//     (NasNet-A, Inception-v3, DenseNet) its exploration or extraction is stopped once the
//     larger exploration has ended. An exploration its time limit ended gives no seed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/rewrite.h"
#include "egraph/runner.h"
#include "extract/extract.h"
#include "lang/graph.h"
#include "pipeline/costing.h"
#include "pipeline/egraph_extract.h"

namespace tensat {

struct Seed {
  ir::Graph graph;       ///< the extracted term
  double cost = 0.0;     ///< its cost (the extraction's DAG cost)
  size_t k_multi = 0;    ///< the k_multi it was explored at
  double seconds = 0.0;  ///< the time it took (exploration and extraction)
};

/// What seeding needs of the run: the input, the rules, the exploration's configuration (its
/// k_multi is overridden), the cost model and the extraction's options (ILP).
class K0Seed;
struct SeedContext {
  const ir::Graph& input;
  const std::vector<Rewrite>& rules;
  const RunnerConfig& explore;
  const Costing& costing;
  const extract::ExtractOptions& extract;
  K0Seed* k0 = nullptr;  ///< the k_multi 0 late hint of k_multi 1 extractions (none: null)
};

/// The k_multi 0 seed, computed beside the explorations: the constructor starts a second
/// thread (where none can start, get() computes it) that explores the input at k_multi 0 with
/// the exploration's limits and extracts its e-graph at once (the ILP on one thread,
/// extract::IlpOptions::concurrent_start off), while the larger exploration runs.
/// The seed counts where the k_multi 0 e-node count stayed under a quarter of the k_multi 1
/// e-graph's at every limit check (RunReport::peak_nodes): limit() says that size, lowers the
/// k_multi 0 exploration's node limit to it (RunnerConfig::node_cap) and stops an extraction
/// under way where the e-graph turns out too large (extract::IlpOptions::stop). Whether a seed
/// comes back, and which, does not depend on timing: the same as explored with a quarter of
/// the larger e-graph's e-nodes as its node limit after the larger exploration.
/// The context's input, rules and costing must outlive it; the exploration and extraction
/// options are copied (the pipeline goes on changing its own). Costing serialises pricing.
class K0Seed {
 public:
  explicit K0Seed(const SeedContext& ctx);
  ~K0Seed();  ///< stop()
  K0Seed(const K0Seed&) = delete;
  K0Seed& operator=(const K0Seed&) = delete;

  /// The k_multi 1 e-graph has `nodes` e-nodes (its exploration has ended): the seed is for it.
  /// Every k_multi 1 exploration of a run is the same one, so a later call changes nothing.
  void limit(size_t nodes);
  /// Waits for the seed (limit() first): nullopt where the k_multi 0 e-graph was too large.
  const std::optional<Seed>& get();
  /// The seconds get() waited (0 until it is called), and the seconds the seed took beside.
  double waited_s() const { return waited_s_; }
  double own_s() const { return own_s_; }
  /// Stops the exploration or extraction where it still runs and joins the thread.
  void stop();

 private:
  void run();

  const ir::Graph& input_;
  const std::vector<Rewrite>& rules_;
  const Costing& costing_;
  RunnerConfig explore_;
  extract::ExtractOptions extract_;
  static constexpr size_t kUnexplored = SIZE_MAX - 1;
  std::atomic<size_t> cap_{SIZE_MAX};
  std::atomic<bool> ilp_stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  size_t limit_ = 0;  ///< a quarter of the larger e-graph's e-nodes, once known (under mu_)
  /// The k_multi 0 exploration's peak e-nodes (under mu_): kUnexplored until it ends, SIZE_MAX
  /// where it stopped at a node limit.
  size_t peak_ = kUnexplored;
  bool limit_known_ = false, stopped_ = false, done_ = false;
  std::optional<Seed> seed_;
  double waited_s_ = 0.0, own_s_ = 0.0;
  std::thread thread_;
};

/// The seed of an extraction at k_multi >= 2: the k_multi - 1 result (itself seeded so, and
/// with the k_multi 0 late hint where that is k_multi 1); nullopt below k_multi 2 or without
/// the ILP.
std::optional<Seed> lower_k_seed(const SeedContext& ctx, size_t k_multi);

/// What the late hint did: whether the extraction asked for it, the time it waited for it and
/// the time the seed took beside the explorations, and the seed where it was given to the
/// extraction.
struct LateSeed {
  bool asked = false;
  double seconds = 0.0;
  double beside_s = 0.0;
  std::optional<Seed> seed;
};

/// The late hint of a k_multi 1 extraction of `eg` (rooted at `root`, seen as `view`): the k_multi
/// 0 seed (ctx.k0, which limit() must have been given) as a choice of `view` where all its
/// terms are in `eg` (nothing is added); `out` says what happened. Empty function where ctx.k0
/// is null. The references must outlive the extraction.
std::function<std::vector<extract::Choice>()> k0_late_hint(const SeedContext& ctx, const EGraph& eg, EClassId root,
                                                           const ExtractView& view, LateSeed& out);

/// Adds the seed's term to `eg`, its root merged into `root`'s class (usually the class holds
/// it already); returns the seed's node classes for seed_choice(), empty where the merge was
/// refused (the seed is then not used). Rebuilds `eg` and canonicalises `root`.
std::vector<EClassId> add_seed(EGraph& eg, EClassId& root, const Seed& seed);

/// The seed as a choice of `view` (built after add_seed(), or with the classes find_graph()
/// gave), or empty (with a warning) where it is not one.
extract::Choice seed_choice(const EGraph& eg, const ExtractView& view, const Seed& seed,
                            const std::vector<EClassId>& seed_classes);

}  // namespace tensat

// The default extraction: warm start, LM-cut, elimination, ILP with CBC (see ilp.h).
#include "extract/ilp.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <system_error>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>

#include <spdlog/spdlog.h>

#include "extract/blocks.h"
#include "extract/formulation.h"
#include "extract/graph_index.h"
#include "extract/greedy.h"
#include "extract/lm_cut.h"
#include "extract/reduce.h"
#include "extract/restriction.h"
#include "extract/ilp_parts.h"
#include "extract/ilp_progress.h"
#include "extract/ilp_starts.h"
#include "extract/restricted_search.h"
#include "extract/twins.h"
#include "extract/work_units.h"
#include "support/enum_names.h"
#include "support/stopwatch.h"

namespace tensat::extract {

namespace {
constexpr EnumNames<OrderConstraints, 3> kOrderNames{
    {{{OrderConstraints::None, "none"}, {OrderConstraints::Real, "real"}, {OrderConstraints::Integer, "int"}}}};
}  // namespace

OrderConstraints parse_order(const std::string& s) {
  if (const auto o = kOrderNames.parse(s)) return *o;
  throw InputError("unknown order constraints \"" + s + "\" (expected " + kOrderNames.list(", ") + ")");
}

std::string to_string(OrderConstraints o) { return std::string(kOrderNames.name(o)); }

int64_t ilp_work_budget(const ExtractGraph& g, const IlpOptions& opts) {
  if (opts.work >= 0) return opts.work;
  return std::max(opts.min_work, static_cast<int64_t>(opts.work_per_node * static_cast<double>(g.nodes.size())));
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Threads for the parts' models and LPs (phase 5a), the calling thread included.
constexpr size_t kMaxLpThreads = 8;

// A trivial reduction (everything usable kept, nothing free) for IlpOptions::reduce = false;
// unusable nodes still get no column.
Reduction no_reduction(const ExtractGraph& g) {
  Reduction r;
  r.node_alive.resize(g.nodes.size());
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) r.node_alive[n] = g.usable(n);
  r.class_alive.assign(g.classes.size(), 1);
  r.class_free.assign(g.classes.size(), 0);
  r.free_node.assign(g.classes.size(), -1);
  r.replacement.assign(g.nodes.size(), -1);
  return r;
}

// Sets `stop` on the way out of a scope (also by an exception): a helper thread is told to
// stop before its future's destructor waits for it.
struct StopOnExit {
  std::atomic<bool>& stop;
  ~StopOnExit() { stop = true; }
};

// Runs f on another thread when `concurrent` (and a thread can be started), else when its
// result is asked for; either way the caller joins it at a fixed point, so the result is the same.
template <class F>
auto launch_beside(bool concurrent, F&& f) {
  if (concurrent) {
    try {
      return std::async(std::launch::async, std::forward<F>(f));
    } catch (const std::system_error& e) {
      spdlog::debug("ilp: no second thread ({}); one after the other", e.what());
    }
  }
  return std::async(std::launch::deferred, std::forward<F>(f));
}


// The relaxed task and LM-cut's first run (phase 2): they need the reduction, not the
// incumbent, so they run beside the warm start (WarmStart).
// A copy shares the task and carries LM-cut's state on apart (the speculative run, below).
struct Bounding {
  Bounding(const ExtractGraph& g, const Reduction& red, Clock::time_point deadline)
      : task(std::make_shared<const RelaxedTask>(g, red)), lm(*task) {
    lm.run(SIZE_MAX, &cuts, deadline);
  }
  std::shared_ptr<const RelaxedTask> task;
  LmCut lm;
  std::vector<std::vector<uint32_t>> cuts;
};

// Phases 2-3 (see ilp.h): LM-cut (its first run done by `b`), then elimination, both run to
// the end (they are deterministic and polynomial; `deadline` is the call's wall-clock safety
// net). Returns the nodes kept for the ILP (per node; all alive nodes when `b` is null, i.e.
// landmarks are off) and fills `landmarks` (as nodes). The guided start (phase 4) comes after.
std::vector<char> bound_and_eliminate(const Reduction& red, Bounding* b, Progress& p,
                                      ExtractResult& res, std::vector<std::vector<NodeIdx>>& landmarks,
                                      Clock::time_point t0, Clock::time_point deadline) {
  std::vector<char> keep(red.node_alive.begin(), red.node_alive.end());
  res.lm_cut_bound = std::nan("");
  if (!b) return keep;
  const RelaxedTask& task = *b->task;
  LmCut& lm = b->lm;
  std::vector<std::vector<uint32_t>>& cuts = b->cuts;
  res.lm_cut_bound = lm.bound();
  p.raise(lm.bound(), "lm-cut");
  spdlog::debug("ilp: [{:.4f} s] LM-cut bound {} ({} landmarks, {} facts, {} actions{})", seconds_since(t0),
                lm.bound(), cuts.size(), task.facts(), task.actions(), task.acyclic() ? "" : ", cyclic");
  if (p.closed()) return keep;
  // Elimination: every extraction that uses an eliminated node costs at least `threshold`,
  // so the optimum is at least min(threshold, the optimum without them). The incumbent's
  // nodes are kept: it stays a feasible start for CBC.
  const double threshold = p.cost * (1.0 - 0.1 * p.opts.optimality_tolerance);
  p.cap = threshold;
  std::vector<char> in_incumbent(task.actions(), 0);
  for (int64_t n : p.incumbent)
    if (n >= 0 && task.action_of(static_cast<NodeIdx>(n)) != RelaxedTask::kNone)
      in_incumbent[task.action_of(static_cast<NodeIdx>(n))] = 1;
  size_t removed = 0;
  for (int round = 0; round < 20 && Clock::now() < deadline; ++round) {
    const size_t k = eliminate(lm, threshold, in_incumbent);
    if (k == 0) break;
    removed += k;
    lm.run(SIZE_MAX, &cuts, deadline);  // continues: the bound only rises
    if (std::min(threshold, lm.bound()) >= p.cost * (1.0 - p.opts.optimality_tolerance)) break;
  }
  res.eliminated = removed;
  if (removed == 0) p.cap = kInf;
  p.raise_restricted(lm.bound(), "lm-cut");
  spdlog::debug("ilp: [{:.4f} s] eliminated {} of {} nodes; bound {}", seconds_since(t0), removed,
                task.actions() - 1, std::min(threshold, lm.bound()));
  for (uint32_t a = 0; a < task.goal_action(); ++a)
    if (!lm.enabled(a)) keep[task.node_of(a)] = 0;
  res.landmarks = cuts.size();
  landmarks.reserve(cuts.size());
  for (const auto& cut : cuts) {
    std::vector<NodeIdx> l;
    for (uint32_t a : cut)
      if (a != task.goal_action() && lm.enabled(a)) l.push_back(task.node_of(a));
    landmarks.push_back(std::move(l));
  }
  return keep;
}

}  // namespace

ExtractResult extract_ilp(const ExtractGraph& g, const IlpOptions& opts) {
  const auto t0 = Clock::now();
  ExtractResult res;
  res.method = "ilp";

  auto hard_end =  // (moved on by the time the late hints take, below)
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opts.time_limit_s));
  auto left_s = [&] { return std::chrono::duration<double>(hard_end - Clock::now()).count(); };

  // The warm start (on the unreduced graph) runs on a second thread beside the reduction and
  // LM-cut's first run: neither needs the other, both are deterministic, and they are joined
  // before anything uses both, so the result is the same as run one after the other.
  // Both read one GraphIndex, built before they start.
  const bool concurrent = opts.concurrent_start && std::thread::hardware_concurrency() > 1;
  const GraphIndex index(g);
  SharedGreedy greedy(g, index);
  std::atomic<bool> warm_stop{false};
  auto warm_future = launch_beside(
      concurrent, [&g, &index, &opts, &greedy, &warm_stop] { return warm_start(g, index, opts, greedy, &warm_stop); });
  // (On the way out, also by an exception, the warm start is told to stop before the future's
  // destructor waits for it.)
  const StopOnExit stop_warm_on_exit{warm_stop};

  // The debug lines carry the seconds since the call started, to show where the time goes.
  const Reduction red = opts.reduce ? reduce(g, index) : no_reduction(g);
  if (opts.reduce) spdlog::debug("ilp: [{:.4f} s] {}", seconds_since(t0), describe(red.stats));
  std::optional<Bounding> bounding;
  if (opts.landmarks) bounding.emplace(g, red, hard_end);
  greedy.get();  // (computed here where the warm start has not come to it yet)
  check_stop(opts);

  // Phases 3-7 from the incumbent `p` (with LM-cut's first run in `bnd`, null where landmarks are
  // off) into `res`. lp_only: the speculative run (below), which gives up (false) where the
  // LPs leave the problem open; otherwise true.
  auto solve = [&](Progress& p, ExtractResult& res, Bounding* bnd, bool lp_only) -> bool {
    // The budget starts after the warm start (which is always computed). The wall-clock time
    // limit is only a safety net: every phase that could run long is capped by counted work.
    res.work_budget = ilp_work_budget(g, opts);
    int64_t work_left = res.work_budget;

    std::vector<std::vector<NodeIdx>> landmarks;
    const std::vector<char> keep =
        bound_and_eliminate(red, bnd, p, res, landmarks, t0, hard_end);
    check_stop(opts);

    // The restricted search (step 7) has a budget of its own; only where its problem can split
    // (blocks need requirements and no order constraints).
    const bool second_budget_allowed = opts.restriction && opts.reduce && opts.blocks && opts.requirement_rows &&
                                       opts.order == OrderConstraints::None;
    bool second_budget_spent = false;  // (given to steps 5-6 instead: the swaps split the problem)
    std::string status;
    std::optional<Open> why_open;  // what ended the search of the parts left open (the largest)
    int cycle_cuts = 0;
    if (!p.closed()) {
      Reduction ilp_red = res.eliminated > 0 ? restrict_nodes(g, red, keep) : red;
      const bool with_req = opts.requirement_rows && opts.reduce;
      Requirements req;
      if (with_req) req = requirements(g, index, ilp_red);
      const bool with_blocks = opts.blocks && with_req && opts.order == OrderConstraints::None;
      // The swaps (restriction.h): the same optimum without the nodes an optimal extraction can
      // give up, taken where they at least halve the largest block (elsewhere they would only
      // change the search's path); the incumbent and the guided start are mapped onto what is
      // left (no dearer; still a warm start, not an improvement).
      std::vector<int64_t> swapped_to;
      // (Of the swapped problem where the swaps are taken, else of ilp_red: both found deciding them.)
      Blocks blocks;
      bool have_blocks = false;
      if (with_blocks && opts.swaps) {
        Swaps sw = find_swaps(g, index, ilp_red, req);
        blocks = std::move(sw.blocks);  // (none where it found none: find_blocks finds none either)
        have_blocks = true;
        if (const size_t untouched = largest_untouched_block(g, blocks, sw.replacement);
            sw.dominated + sw.swapped > 0 && 2 * untouched > sw.largest_block) {
          // (What the blocks after them would say, found without them: NasRNN, a block of 287
          // classes without swaps against the largest of 327; 2.5 ms.)
          spdlog::debug("ilp: [{:.4f} s] swaps not taken: a block of {} classes has none, the largest has {}",
                        seconds_since(t0), untouched, sw.largest_block);
        } else if (sw.dominated + sw.swapped > 0) {
          std::vector<char> kept(ilp_red.node_alive.begin(), ilp_red.node_alive.end());
          for (NodeIdx n = 0; n < g.nodes.size(); ++n)
            if (sw.replacement[n] >= 0) kept[n] = 0;
          Reduction swapped_red = restrict_nodes(g, ilp_red, kept);
          Requirements swapped_req = requirements(g, index, swapped_red);
          Blocks swapped_blocks = find_blocks(g, index, swapped_red, swapped_req);
          size_t largest_after = 0;
          for (const auto& b : swapped_blocks.classes) largest_after = std::max(largest_after, b.size());
          if (2 * largest_after > sw.largest_block) {
            spdlog::debug("ilp: [{:.4f} s] swaps not taken: the largest block {} -> {} classes", seconds_since(t0),
                          sw.largest_block, largest_after);
          } else if (const Choice mapped = apply_swaps(g, ilp_red, sw.replacement, p.incumbent);
                     extraction_problem(g, mapped).empty() &&
                     dag_cost(g, mapped) <= p.cost + 1e-9 * std::abs(p.cost)) {  // (sums in another order)
            ilp_red = std::move(swapped_red);
            req = std::move(swapped_req);
            blocks = std::move(swapped_blocks);
            p.incumbent = mapped;
            p.cost = dag_cost(g, mapped);
            swapped_to = std::move(sw.replacement);
            res.swapped = sw.dominated + sw.swapped;
            spdlog::debug("ilp: [{:.4f} s] swaps: {} nodes dominated, {} swapped for a base node; the largest block "
                          "{} -> {} classes; incumbent {}",
                          seconds_since(t0), sw.dominated, sw.swapped, sw.largest_block, largest_after, p.cost);
          } else {
            spdlog::warn("ilp: the incumbent, swapped, is no extraction or dearer (a broken invariant); swaps not taken");
          }
        }
      }
      if (with_blocks && !have_blocks) blocks = find_blocks(g, index, ilp_red, req);
      // Where the swaps were taken, the restricted search (step 7) would split the problem
      // little further. Phase 5's LPs may draw on its budget as well: where they need more than
      // this search's, steps 5-6 keep both budgets (so CBC, and its stall rule, a quarter of the
      // budget, too) and step 7 does not run (NasNet-A: 3270 -> 264 classes; its LPs prove the
      // optimum with 22 277 units, the budget is 13 764; step 7 would have to solve them again
      // from scratch). Where they need less, it is taken back for step 7: the LPs ran as within
      // this budget alone (no limit bound them).
      const int64_t lp_extra = !swapped_to.empty() && second_budget_allowed ? res.work_budget : 0;
      work_left += lp_extra;
      // The parts: the blocks (blocks.h) where the problem splits, else the whole problem.
      std::vector<std::vector<char>> masks;
      // A block of one class needs no ILP: its nodes' children are given (mandatory classes of
      // other blocks), so its cheapest node is its optimum, and the bound.
      double single_bound = 0.0;
      std::vector<std::pair<ClassIdx, int64_t>> singles;  // class, its cheapest node
      // (Free classes the choice left out are filled with their free node: a cheapest node may
      // read one.)
      auto with_singles = [&](Choice c) {
        for (const auto& [k, n] : singles) c[k] = n;
        for (ClassIdx k = 0; k < c.size(); ++k)
          if (c[k] < 0 && ilp_red.class_free[k]) c[k] = ilp_red.free_node[k];
        return prune_to_roots(g, c);
      };
      const bool split = blocks.count() > 1;
      if (split) {
        for (const auto& classes : blocks.classes) {
          if (classes.size() != 1) continue;
          double best = kInf;
          int64_t node = -1;
          for (NodeIdx n : g.classes[classes[0]].nodes)
            if (ilp_red.node_alive[n] && g.nodes[n].cost < best) {
              best = g.nodes[n].cost;
              node = static_cast<int64_t>(n);
            }
          single_bound += best;
          singles.emplace_back(classes[0], node);
        }
        if (offer(g, p, with_singles(p.incumbent)))
          spdlog::debug("ilp: [{:.4f} s] the cheapest nodes of the one-class blocks: {}", seconds_since(t0), p.cost);
        // Every model costs time and memory in the size of the whole graph (its per-node and
        // per-class arrays), so consecutive blocks share one model (a union of blocks is as
        // independent as a block) once there are more than kMaxParts. A chain of 1000 modules
        // (35k e-nodes, 1009 blocks of more than one class): a model per block 6.0 s and 1.35 GB;
        // 128 models 3.7 s and 0.81 GB, both optimal; 64 models 3.0 s, gap 0.0048 (greedy DAG
        // alone takes 0.67 GB there).
        constexpr size_t kMaxParts = 128;
        std::vector<const std::vector<ClassIdx>*> multi;
        size_t multi_classes = 0;
        for (const auto& classes : blocks.classes)
          if (classes.size() > 1) {
            multi.push_back(&classes);
            multi_classes += classes.size();
          }
        const size_t per_part = multi.size() > kMaxParts ? (multi_classes + kMaxParts - 1) / kMaxParts : 0;
        masks.reserve(multi.size());
        for (size_t i = 0; i < multi.size();) {
          std::vector<char> mask(g.classes.size(), 0);
          size_t in_mask = 0;
          do {
            for (ClassIdx c : *multi[i]) mask[c] = 1;
            in_mask += multi[i]->size();
            ++i;
          } while (i < multi.size() && in_mask + multi[i]->size() <= per_part);
          masks.push_back(std::move(mask));
        }
      }
      const size_t num_parts = split ? masks.size() : 1;
      // (A twin, known before the models are made, gets its columns only: it never has an LP.)
      auto make_model = [&](size_t i, bool columns_only = false) {
        auto m = split ? std::make_unique<IlpModel>(g, ilp_red, opts, &req, &masks[i], columns_only)
                       : std::make_unique<IlpModel>(g, ilp_red, opts, with_req ? &req : nullptr);
        if (!columns_only) m->set_landmarks(landmarks);
        return m;
      };
      // Per class its part (-1: none: a one-class block, or free).
      std::vector<int> part_of(g.classes.size(), split ? -1 : 0);
      for (size_t i = 0; split && i < num_parts; ++i)
        for (ClassIdx c = 0; c < g.classes.size(); ++c)
          if (masks[i][c]) part_of[c] = static_cast<int>(i);
      // A part's columns (IlpModel::build's): the alive nodes of its alive, non-free classes.
      std::vector<size_t> part_cols(num_parts, 0);
      for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
        const ClassIdx c = g.nodes[n].eclass;
        if (ilp_red.node_alive[n] && !ilp_red.class_free[c] && part_of[c] >= 0) ++part_cols[part_of[c]];
      }
      // A block's landmark floor (blocks.h; of the restricted problem, like every bound here):
      // a block whose incumbent part meets it is closed without its LP (DenseNet: 42 of 48).
      std::vector<double> part_floor(num_parts, 0.0);
      if (split && bnd)
        part_floor = landmark_floors(g, part_of, num_parts, landmarks, bnd->lm.landmark_costs());
      // Smallest first: a budget spent on a large LP then leaves the small parts bounded.
      std::vector<size_t> order(num_parts);
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return part_cols[a] < part_cols[b]; });
      // Parts that are the same problem as one before them (twins.h): no LP or CBC of their own;
      // they take their representative's bound and extraction (sync_twins below).
      const std::vector<std::optional<TwinMap>> twins =
          split && opts.twins ? find_twins(g, index, ilp_red, req, masks, order)
                              : std::vector<std::optional<TwinMap>>(num_parts);
      const auto is_twin = [&](size_t i) { return twins[i].has_value(); };

      // Phase 5a: every part's model and LP, on as many threads as the machine has. An LP needs
      // nothing but its model; its limit is all the work left, and phase 5b below decides in
      // order what it means.
      const size_t lp_threads =
          concurrent ? std::min<size_t>({std::thread::hardware_concurrency(), num_parts, kMaxLpThreads}) : 1;
      // Phase 4, the guided start, is for what the LPs leave open (taken after phase 5b, before
      // CBC). It needs only the landmarks' residual costs, fixed once elimination is done. It
      // starts beside phase 5a where the machine has a hardware thread the LPs leave idle, else
      // when an LP thread finds no part left (its core would idle), or one after the other: on
      // 2 cores beside the LPs it slowed them (NasRNN, whose LPs prove the optimum: 5-7 ms of
      // 25). It is taken at the same point in every case, so the result is the same; when the
      // LPs close the problem it is told to stop.
      std::atomic<bool> guided_stop{false};
      std::future<Choice> guided;
      // (After the future: on the way out, also by an exception, the guided start is told to
      // stop before the future's destructor waits for it.)
      const StopOnExit stop_guided_on_exit{guided_stop};
      std::once_flag guided_once;
      auto start_guided = [&](bool beside) {
        if (!bnd || lp_only) return;
        std::call_once(guided_once, [&] {
          guided = launch_beside(beside, [&g, &red, &opts, &b = *bnd, &guided_stop, &swapped_to] {
            Choice c = guided_start(g, red, *b.task, b.lm, guided_stop);
            if (!c.empty() && opts.reduce) c = map_to_reduced(g, red, c);
            if (!c.empty() && !swapped_to.empty()) c = apply_swaps(g, red, swapped_to, c);
            return c;  // (on the reduced problem, swapped)
          });
        });
      };
      if (concurrent && std::thread::hardware_concurrency() > lp_threads) start_guided(true);
      std::vector<std::unique_ptr<IlpModel>> models(num_parts);
      std::vector<LpRun> runs(num_parts);
      // Closed by its landmark floor against the incumbent as it stands here (before the guided
      // start, which only makes it cheaper): no LP, in parallel or one after the other.
      std::vector<char> floor_closed(num_parts, 0);
      const int64_t lp_limit = work_left;
      {
        // A part whose predecessors (in `order`) have all finished gets the work they left as
        // its limit, exactly as one after the other, so its LP is never solved twice; the last
        // part (the largest, often most of the work) waits for them where the work left could
        // bind it (below; NasRNN at k_multi 2: its 9114-column LP ran past the limit and was
        // solved again, 0.19 s, before it waited).
        std::atomic<size_t> next{0};
        std::mutex mu;
        std::condition_variable cv;
        std::vector<char> done(order.size(), 0);  // per position in `order`
        bool failed = false;
        auto worker = [&] {
          for (size_t k;;) {
            if ((k = next.fetch_add(1)) >= order.size()) {
              if (concurrent) start_guided(true);
              break;
            }
            const size_t i = order[k];
            try {
              check_stop(opts);
              models[i] = make_model(i, is_twin(i));
              if (split) {
                const double cost = part_cost(g, *models[i], p.incumbent);
                floor_closed[i] = bound_closes(part_floor[i], cost, opts.optimality_tolerance);
              }
              if (!opts.parallel_lps) continue;
              if (floor_closed[i] || is_twin(i)) {
                {
                  std::lock_guard lock(mu);
                  done[k] = 1;
                }
                cv.notify_all();
                continue;
              }
              int64_t limit = lp_limit;
              bool exact = false;
              {
                std::unique_lock lock(mu);
                auto before_done = [&] { return std::all_of(done.begin(), done.begin() + k, [](char d) { return d; }); };
                // The last part waits only where the work left could bind its LP, by an estimate
                // of four iterations per column (NasNet-A's largest parts need 1.2-2.4; NasRNN at
                // k_multi 2: its 9114-column LP needs more than the 25 830 units left, so it
                // waits). Elsewhere it starts at once, and phase 5b accepts it as it accepts any
                // part that stayed clear of its limit; where it did not, 5b solves it again (the
                // same result, later). NasNet-A: the other core idled up to 0.3 s; extraction
                // 1.27 -> 1.09 s (mean of 6 runs each).
                if (k + 1 == order.size()) {
                  int64_t avail = lp_limit;
                  for (size_t j = 0; j < k; ++j)
                    if (done[j]) avail -= runs[order[j]].work;
                  const double estimate =
                      4.0 * static_cast<double>(part_cols[i]) * iteration_work(models[i]->rows());
                  if (estimate >= static_cast<double>(avail)) cv.wait(lock, [&] { return failed || before_done(); });
                }
                if (!failed && before_done()) exact = true;
                // The work of the predecessors that have finished is gone either way: the
                // limit stays at or above the one after the other (the acceptance holds), and
                // a budget that runs out in the LPs is not spent once per thread.
                for (size_t j = 0; j < k; ++j)
                  if (done[j]) limit -= runs[order[j]].work;
              }
              LpRun r = run_lp(*models[i], limit, opts, hard_end);
              r.exact = exact;
              {
                std::lock_guard lock(mu);
                runs[i] = r;
                done[k] = 1;
              }
              cv.notify_all();
            } catch (...) {
              {
                std::lock_guard lock(mu);
                failed = true;
              }
              cv.notify_all();
              throw;
            }
          }
        };
        std::vector<std::future<void>> helpers;
        for (size_t t = 1; t < lp_threads; ++t) helpers.push_back(launch_beside(true, worker));
        worker();
        for (auto& h : helpers) h.get();
      }
      start_guided(false);  // (started already, unless one after the other)
      size_t cols = 0, largest = 0;
      for (size_t i = 0; i < num_parts; ++i) {
        if (models[i]->num_x() != part_cols[i])
          throw InternalError("ilp: a part's column count differs from its model's");
        cols += models[i]->num_x();
        largest = std::max(largest, models[i]->num_x());
      }
      res.blocks = split ? blocks.count() : 0;
      spdlog::debug("ilp: [{:.4f} s] models built and LPs solved: {} columns{}", seconds_since(t0), cols,
                    split ? fmt::format(" in {} blocks ({} of one class; {} ILPs, the largest {} columns; {} "
                                        "closed by their landmarks)",
                                        blocks.count(), singles.size(), num_parts, largest,
                                        std::count(floor_closed.begin(), floor_closed.end(), 1))
                          : std::string());
      res.twin_parts = static_cast<size_t>(
          std::count_if(twins.begin(), twins.end(), [](const auto& t) { return t.has_value(); }));
      if (res.twin_parts > 0)
        spdlog::debug("ilp: [{:.4f} s] {} parts are twins of another (twins.h)", seconds_since(t0), res.twin_parts);
      if (spdlog::should_log(spdlog::level::trace))
        for (size_t i = 0; i < num_parts; ++i)
          spdlog::trace("ilp: part {}: {} columns, landmark floor {}, incumbent {}", i, part_cols[i], part_floor[i],
                        part_cost(g, *models[i], p.incumbent));

      std::vector<Part> parts(num_parts);
      for (size_t i = 0; i < num_parts; ++i) {
        parts[i].model = models[i].get();
        parts[i].whole = !split;
        // The LM-cut bound is of the whole problem; a block's, the landmarks inside it.
        parts[i].floor = split ? part_floor[i] : p.bound;
      }
      // Phase 5b: the LPs in order, as if they had run one after the other, each within the work
      // the ones before it left: a part's LP counts when it ran with exactly that limit (`exact`:
      // its predecessors had all finished; always so for the first), or stayed clear of it by
      // more than an iteration (then the limit never bound it, and one after the other it ran
      // the same way). Otherwise that part and the rest are rebuilt and solved one by one, as the
      // limit says (only where the budget runs out in the LPs).
      for (size_t k = 0; k < order.size(); ++k) {
        if (p.closed()) break;
        const size_t i = order[k];
        if (floor_closed[i] || is_twin(i)) continue;
        if (runs[i].ran && (runs[i].exact || runs[i].work + runs[i].margin <= work_left)) {
          work_left -= runs[i].work;
          take_lp(g, opts, parts[i], p, runs[i], t0);
          continue;
        }
        if (runs[i].ran)
          spdlog::debug("ilp: [{:.4f} s] the LPs from part {} on are solved again within the work left ({})",
                        seconds_since(t0), k, work_left);
        for (; k < order.size() && !p.closed(); ++k) {
          const size_t j = order[k];
          if (floor_closed[j] || is_twin(j)) continue;
          if (runs[j].ran) {
            models[j] = make_model(j);
            parts[j].model = models[j].get();
          }
          const LpRun run = run_lp(*models[j], work_left, opts, hard_end);
          work_left -= run.work;
          take_lp(g, opts, parts[j], p, run, t0);
        }
        break;
      }
      if (lp_extra > 0) {
        if (work_left >= lp_extra) {
          work_left -= lp_extra;  // (not needed: back to step 7)
        } else {
          res.work_budget += lp_extra;
          second_budget_spent = true;
          spdlog::debug("ilp: [{:.4f} s] the LPs needed the restricted search's budget as well", seconds_since(t0));
        }
      }
      const int64_t stall_work = opts.stall_work < 0 ? res.work_budget / 4 : opts.stall_work;
      auto total_bound = [&] {
        double sum = single_bound;
        for (const Part& part : parts) sum += part.best_bound();
        return sum;
      };
      // A twin's bound is its representative's; its classes chosen as the representative's are,
      // where that makes its part cheaper (the same problem: the same cost once both are solved).
      // All twins, or (after a CBC run) those of one representative.
      std::vector<char> warned(num_parts, 0);
      auto sync_twins = [&](std::optional<size_t> of_rep = std::nullopt) {
        for (size_t i = 0; i < num_parts; ++i) {
          if (!is_twin(i) || (of_rep && twins[i]->rep != *of_rep)) continue;
          const TwinMap& t = *twins[i];
          parts[i].bound = std::max(parts[i].bound, parts[t.rep].best_bound());
          const Choice c = copy_from_rep(g, ilp_red, t, p.incumbent);
          if (c.empty() || !(part_cost(g, *parts[i].model, c) < part_cost(g, *parts[i].model, p.incumbent))) continue;
          if (const std::string why = extraction_problem(g, c); why.empty()) {
            offer(g, p, c);
          } else if (!warned[i]) {
            warned[i] = 1;
            spdlog::warn("ilp: a twin's copy of its representative's choice is no extraction ({}; a broken invariant)",
                         why);
          }
        }
      };
      sync_twins();
      if (!p.closed()) p.raise_restricted(total_bound(), "lp");
      if (lp_only && !p.closed()) return false;
      if (p.closed()) guided_stop = true;
      if (guided.valid() && !p.closed()) {
        const Choice c = guided.get();  // (on the reduced problem)
        if (!c.empty()) {
          spdlog::debug("ilp: [{:.4f} s] guided start {} (incumbent {})", seconds_since(t0), dag_cost(g, c), p.cost);
          // A warm start still (`improved` is for what the ILP finds); part by part the cheaper.
          const bool improved = p.improved;
          if (offer(g, p, with_singles(cheaper_per_part(g, parts, p.incumbent, c))))
            spdlog::debug("ilp: [{:.4f} s] with the guided start, part by part: {}", seconds_since(t0), p.cost);
          p.improved = improved;
        }
      }
      sync_twins();

      // CBC on the open parts, again smallest first.
      bool failed = false;
      for (size_t i : order) {
        if (p.closed() || failed) break;
        check_stop(opts);
        Part& part = parts[i];
        if (is_twin(i) || part.closed(opts, g, p.incumbent)) continue;
        const Open why = solve_cbc(g, red, opts, part, p, work_left, stall_work, hard_end, t0);
        res.ilp_rounds += part.rounds;
        sync_twins(i);
        if (why == Open::Failed) {
          failed = true;
          status = p.improved ? "ilp-failed-best-found" : "ilp-failed-greedy";
        } else if (!part.closed(opts, g, p.incumbent)) {
          why_open = std::max(why_open.value_or(why), why);
        }
        p.raise_restricted(total_bound(), part.used_cbc ? "cbc" : "lp");
      }
      for (const auto& m : models) cycle_cuts += m->cycle_cuts();
    }
    std::pair<int64_t, int64_t> restricted_work{0, 0};  // its budget and its use
    check_stop(opts);
    if (!p.closed() && status.empty() && second_budget_allowed && !second_budget_spent && left_s() > 0.0)
      restricted_work = restricted_search(g, index, red, opts, p, res, hard_end, t0);
    if (p.closed()) {
      status = "optimal";
    } else if (status.empty()) {
      if (left_s() <= 0.0) why_open = Open::Timeout;
      status = std::string(to_string(why_open.value_or(Open::Budget))) + (p.improved ? "-best-found" : "-greedy");
    }
    res.work_used = res.work_budget - work_left + restricted_work.second;
    res.work_budget += restricted_work.first;

    res.choice = p.incumbent;
    res.status = status;
    finish_result(g, res);
    res.best_bound = std::isfinite(p.bound) ? std::min(p.bound, res.dag_cost) : p.bound;
    res.proof = status == "optimal" ? p.bound_by : "";
    if (status == "optimal") {
      res.gap = std::max(0.0, (res.dag_cost - res.best_bound) / std::max(std::abs(res.dag_cost), 1e-12));
    } else if (std::isfinite(p.bound)) {
      res.gap = std::max(0.0, (res.dag_cost - p.bound) / std::max(std::abs(res.dag_cost), 1e-12));
    } else {
      res.gap = std::nan("");
    }
    res.cycle_cuts = cycle_cuts;
    res.time_s = seconds_since(t0);
    spdlog::debug("ilp: [{:.4f} s] {} {} bound {} gap {} (proof: {})", res.time_s, status, res.dag_cost,
                  res.best_bound, res.gap, res.proof);
    return true;
  };

  // The late hints (IlpOptions::late_hints) are asked for where LM-cut's first bound leaves the
  // greedy extraction open (where it closes it, the warm start is proven as well). Their time
  // (bounded by their own work and node limits, pipeline/seed.h) does not count against this
  // call's wall-clock safety net. The cheapest valid one is first tried on its own, beside the
  // warm start (a speculative run): where the LPs prove it optimal, it is the result and the
  // warm start is told to stop (NasRNN: its k_multi 0 result, tried at 7 ms and proven at 11,
  // where the warm start ends at 12 ms and the proof after it came at 18). Its LM-cut state is
  // a copy; where it gives up, nothing of it is kept and the search runs as without it, the
  // hints offered after the warm start. Whether it succeeds depends on the hint and the LPs
  // only, not on the timing.
  std::vector<Choice> hints;
  bool hints_asked = false;
  auto ask_hints = [&] {
    hints_asked = true;
    const auto asked = Clock::now();
    hints = opts.late_hints();
    hard_end += Clock::now() - asked;
  };
  if (opts.late_hints && bounding) {
    const double greedy_cost = greedy.get().dag_cost;
    if (!bound_closes(bounding->lm.bound(), greedy_cost, opts.optimality_tolerance)) ask_hints();
  }
  if (!hints.empty()) {
    Choice best;
    double best_cost = kInf;
    for (const Choice& hint : hints) {
      if (!extraction_problem(g, hint).empty()) continue;
      Choice c = opts.reduce ? map_to_reduced(g, red, hint) : hint;
      if (const double cost = dag_cost(g, c); cost < best_cost) {
        best_cost = cost;
        best = std::move(c);
      }
    }
    if (!best.empty()) {
      Progress sp{opts, std::move(best)};
      sp.cost = best_cost;
      sp.raise(bounding->lm.bound(), "lm-cut");
      ExtractResult sr = res;
      sr.late_hint_cost = best_cost;
      sr.warm_start_cost = std::nan("");
      Bounding copy = *bounding;
      spdlog::debug("ilp: [{:.4f} s] late hint {}, tried beside the warm start", seconds_since(t0), best_cost);
      if (solve(sp, sr, &copy, true)) {
        warm_stop = true;
        spdlog::debug("ilp: [{:.4f} s] the late hint's run closed the problem; the warm start is told to stop",
                      seconds_since(t0));
        return sr;
      }
      spdlog::debug("ilp: [{:.4f} s] the late hint's run left the problem open; on from the warm start",
                    seconds_since(t0));
    }
  }

  WarmStart warm = warm_future.get();
  Progress p{opts, std::move(warm.choice)};
  if (opts.reduce) p.incumbent = map_to_reduced(g, red, p.incumbent);
  check_extraction(g, p.incumbent, "ilp warm start");
  p.cost = dag_cost(g, p.incumbent);
  res.warm_start_cost = p.cost;
  spdlog::debug("ilp: [{:.4f} s] warm start {} (greedy {} in {:.3f} s, greedy-DAG {} in {:.3f} s, "
                "local search {}; in the worklist order {} in {:.3f} s{})",
                seconds_since(t0), p.cost, warm.greedy.dag_cost, warm.greedy.time_s, warm.dag.dag_cost,
                warm.dag.time_s, warm.local.dag_cost,
                std::isnan(warm.worklist) ? std::string("capped")
                                          : fmt::format("{} -> {}", warm.worklist, warm.worklist_local),
                warm.worklist_s, concurrent ? ", beside the reduction and LM-cut" : "");
  // The late hints, where LM-cut's first bound leaves the warm start open (asked above, or
  // here where landmarks are off): a cheaper one is the incumbent the elimination and the rest
  // start from (it is a start, not something the ILP found: `improved` stays as it was).
  if (bounding) p.raise(bounding->lm.bound(), "lm-cut");
  if (opts.late_hints && !p.closed()) {
    if (!hints_asked) ask_hints();
    for (const Choice& hint : hints) {
      Choice c = improved_hint(g, index, opts, hint);
      if (c.empty()) continue;
      if (opts.reduce) c = map_to_reduced(g, red, c);
      const bool was_improved = p.improved;
      if (offer(g, p, c)) {
        res.late_hint_cost = p.cost;
        spdlog::debug("ilp: [{:.4f} s] late hint {} (after the local search)", seconds_since(t0), p.cost);
      }
      p.improved = was_improved;
    }
  }
  solve(p, res, bounding ? &*bounding : nullptr, false);
  return res;
}

}  // namespace tensat::extract

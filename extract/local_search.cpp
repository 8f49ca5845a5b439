// Local search on a complete acyclic extraction (see local_search.h).
#include "extract/local_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <span>
#include <string>

#include <spdlog/spdlog.h>

namespace tensat::extract {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr ClassIdx kNoClass = std::numeric_limits<ClassIdx>::max();
// Committed ranks are heights times this gap, so that a class a move raises (by 1 above its
// highest new child) rarely has to raise its parents too.
constexpr double kRankGap = 64.0;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The search state is the extraction itself, kept exact under every change:
//   choice_[c]  the chosen node of a used class, -1 for an unused one;
//   uses_[c]    how many used classes' chosen nodes have c as a (distinct) child, plus one per
//               root entry; a class is used iff uses_[c] > 0 (the extraction is acyclic, so
//               reference counting drops exactly the classes no longer reachable);
//   rank_[c]    a topological rank of the used classes, children strictly below parents:
//               kRankGap times the height after each accepted move (recompute_ranks());
//               in a tentative move, a filled class gets 1 + its highest child and raise()
//               restores the order where a switch put a class below a new child. A cycle
//               check (reaches()) searches only the classes ranked at or above its target.
// A move changes these through save()-journalled writes, so a rejected move (or a rejected
// step of a compound move) is undone exactly.
class Search {
 public:
  Search(const ExtractGraph& g, const GraphIndex& index, const Choice& start, const LocalSearchOptions& opts,
         LocalSearchStats& st)
      : g_(g), idx_(index), opts_(opts), st_(st), choice_(start) {
    const size_t C = g.classes.size();
    cost_.resize(g.nodes.size());
    for (size_t n = 0; n < g.nodes.size(); ++n) cost_[n] = g.nodes[n].cost;
    uses_.assign(C, 0);
    rank_.assign(C, 0.0);
    for (ClassIdx r : g.roots) ++uses_[r];
    for (size_t c = 0; c < C; ++c)
      if (choice_[c] >= 0)
        for (ClassIdx k : idx_.kids(node_of(static_cast<ClassIdx>(c)))) ++uses_[k];
    for (MemoTable* t : {&shared_, &avoiding_}) {
      t->stamp.assign(C, 0);
      t->state.assign(C, 0);
      t->val.assign(C, kInf);
      t->arg.assign(C, 0);
    }
    seen_.assign(C, 0);
    unproductive_.assign(C, 0);
    reach_seen_.assign(C, 0);
    filled_stamp_.assign(C, 0);
    tried_.assign(g.nodes.size(), 0);
    total_ = dag_cost(g, choice_);
    verified_cost_ = total_;
    tol_ = 1e-12 * total_;
    recompute_ranks();
  }

  const Choice& choice() const { return choice_; }

  void run() {
    const auto t0 = Clock::now();
    std::vector<ClassIdx> order;
    for (int round = 0; round < opts_.max_rounds; ++round) {
      ++st_.rounds;
      // Roots first: a switch high up can drop whole subgraphs at once.
      order.assign(post_order_.rbegin(), post_order_.rend());
      bool improved = false;
      for (ClassIdx c : order) {
        // None of c's moves paid when the extraction was as it is now: they would not now
        // either (an evaluation reads only the committed extraction and is undone exactly),
        // so the sweep after the last accepted move re-evaluates only the classes before it.
        // Without `revisit` (the ILP's warm start) a class found so is never evaluated again
        // (NasRNN: its second, unproductive sweep, 4 of 12 ms).
        if (opts_.skip_unproductive && unproductive_[c] != 0 && (unproductive_[c] == gen_ || !opts_.revisit)) {
          ++st_.skipped;
          continue;
        }
        // Best improvement per class: every other node of c is evaluated, the best move (if
        // any lowers the cost) is made again and kept. (First improvement, keeping the first
        // move that pays, found 0.7112 instead of 0.7047 on the gym bert e-graph, the same
        // elsewhere, in the same time.)
        double best_delta = 0.0;
        NodeIdx best = 0;
        for (NodeIdx n : g_.classes[c].nodes) {
          if (choice_[c] < 0) break;  // dropped by an earlier move of this sweep
          if (static_cast<int64_t>(n) == choice_[c] || !idx_.usable(n)) continue;
          if ((++clock_tick_ & 63) == 0 &&
              (seconds_since(t0) > opts_.time_limit_s || (opts_.stop && opts_.stop->load(std::memory_order_relaxed)))) {
            st_.hit_limit = true;
            return;
          }
          const double delta = try_move(c, n, false);
          if (delta < best_delta) {
            best_delta = delta;
            best = n;
          }
        }
        if (best_delta < 0.0 && choice_[c] >= 0)
          improved = try_move(c, best, true) < 0.0 || improved;
        else if (choice_[c] >= 0)
          unproductive_[c] = gen_;
      }
      if (!improved) return;
    }
    st_.hit_limit = true;
  }

 private:
  // Fill costs (see memo()): valid while stamp[c] == id; state 1 open, 2 done.
  struct MemoTable {
    uint32_t id = 1;
    std::vector<uint32_t> stamp;
    std::vector<uint8_t> state;
    std::vector<double> val;
    std::vector<NodeIdx> arg;
  };

  struct Saved {
    ClassIdx cls;
    int64_t choice;
    uint32_t uses;
    double rank;
  };

  NodeIdx node_of(ClassIdx c) const { return static_cast<NodeIdx>(choice_[c]); }

  void save(ClassIdx c) { journal_.push_back(Saved{c, choice_[c], uses_[c], rank_[c]}); }

  void undo_to(size_t mark) {
    while (journal_.size() > mark) {
      const Saved& s = journal_.back();
      choice_[s.cls] = s.choice;
      uses_[s.cls] = s.uses;
      rank_[s.cls] = s.rank;
      journal_.pop_back();
    }
  }

  void add_ref(ClassIdx k) {
    save(k);
    ++uses_[k];
  }

  // Drops one reference to k; a class left without references leaves the extraction and
  // drops its own children's references (cascading, iteratively).
  void drop_ref(ClassIdx k) {
    drop_stack_.push_back(k);
    while (!drop_stack_.empty()) {
      const ClassIdx c = drop_stack_.back();
      drop_stack_.pop_back();
      save(c);
      if (--uses_[c] > 0) continue;
      const NodeIdx n = node_of(c);
      removed_ += cost_[n];
      choice_[c] = -1;
      for (ClassIdx j : idx_.kids(n)) drop_stack_.push_back(j);
    }
  }

  // Class c (used) switches to node n, whose child classes are all used by now.
  void set_node(ClassIdx c, NodeIdx n) {
    const NodeIdx old = node_of(c);
    for (ClassIdx k : idx_.kids(n)) add_ref(k);  // before the drops: shared children stay
    save(c);
    choice_[c] = n;
    added_ += cost_[n];
    removed_ += cost_[old];
    for (ClassIdx k : idx_.kids(old)) drop_ref(k);
  }

  // Whether `target` is reachable from `from` through the chosen nodes (true when equal).
  // Classes ranked below the target cannot reach it and are not searched (every edge that a
  // path to the target can use goes down in rank, see raise()). A search that fails leaves
  // its visited classes marked as "cannot reach the target": a move's first step (`reuse`)
  // searches the committed extraction only (the classes it fills in are reachable from
  // nothing there), so these marks are kept for every move of the same class until the
  // extraction changes (reach_gen_, reach_target_).
  bool reaches(ClassIdx from, ClassIdx target, bool reuse) {
    if (from == target) return true;
    std::vector<uint32_t>& seen = reuse ? reach_seen_ : seen_;
    uint32_t id = 0;
    if (reuse) {
      if (reach_target_ != target || reach_gen_ != gen_) {
        ++reach_id_;
        reach_target_ = target;
        reach_gen_ = gen_;
      }
      id = reach_id_;
    } else {
      id = ++seen_id_;
    }
    if (seen[from] == id) return false;
    ++st_.cycle_checks;
    const double floor = rank_[target];
    stack_.assign(1, from);
    seen[from] = id;
    while (!stack_.empty()) {
      const ClassIdx c = stack_.back();
      stack_.pop_back();
      for (ClassIdx k : idx_.kids(node_of(c))) {
        if (k == target) {
          if (reuse) reach_target_ = kNoClass;  // the marks are not all "cannot reach" now
          return true;
        }
        if (seen[k] == id || rank_[k] < floor) continue;
        seen[k] = id;
        ++st_.search_visits;
        stack_.push_back(k);
      }
    }
    return false;
  }

  // A new edge from a class to `to` (used) closes a cycle iff `to` reaches `anchor`: the
  // class itself, or for a class filled in by a move's first step, the moved class (a filled
  // class is reachable only through it). In the first step `to` is in the committed
  // extraction and the marks of earlier searches are reused.
  bool edge_ok(ClassIdx to, ClassIdx anchor, bool first) {
    return rank_[to] < rank_[anchor] || !reaches(to, anchor, first);
  }

  // The classes whose new children may rank above them (the moved class, the classes of kept
  // steps), raised when a step's cycle check needs the ranks: most moves check none (raising
  // at once took 37% of the time on nasneta).
  void raise_pending() {
    for (ClassIdx c : pending_) raise(c);
    pending_.clear();
  }

  // Keeps the ranks a topological order after class c got new children (checked acyclic):
  // c goes to 1 + its highest child if that is higher, then every used class with a chosen
  // node on c that is no longer above it, and so on up (journalled). (Tried before: leaving
  // such edges in place and searching below min(target, lowest class with an upward edge)
  // instead; a leaf class switched to an operator then un-pruned every later search of the
  // move: 1.4M classes visited on nasneta, against 0 now.)
  void raise(ClassIdx c) {
    double h = rank_[c];
    for (ClassIdx k : idx_.kids(node_of(c))) h = std::max(h, rank_[k] + 1.0);
    if (h == rank_[c]) return;
    save(c);
    rank_[c] = h;
    raise_stack_.assign(1, c);
    while (!raise_stack_.empty()) {
      const ClassIdx x = raise_stack_.back();
      raise_stack_.pop_back();
      for (NodeIdx pn : idx_.parents(x)) {
        const ClassIdx p = idx_.eclass(pn);
        if (choice_[p] != static_cast<int64_t>(pn) || rank_[p] > rank_[x]) continue;
        ++st_.raised;
        save(p);
        rank_[p] = rank_[x] + 1.0;
        raise_stack_.push_back(p);
      }
    }
  }

  // The cheapest tree cost of an unused class k given the extraction (used classes cost 0),
  // with its best node in t.arg; +inf when none is found. A depth-first search, memoised in
  // t while t.stamp[c] == t.id; a class still on the search's stack counts as +inf, which
  // makes the best nodes of the finished classes an acyclic structure.
  // shared_ (anchor kNoClass) is valid until the extraction changes (its id is gen_).
  // avoiding_ (one move's anchor) also counts +inf for the used classes that reach the
  // anchor: a fill that uses none of them cannot close a cycle. It is the second try of a
  // move whose shared fill would close one (three_cycle in the tests).
  double memo(MemoTable& t, ClassIdx k, ClassIdx anchor) {
    if (t.stamp[k] == t.id) return t.state[k] == 2 ? t.val[k] : kInf;
    frames_.clear();
    auto open = [&](ClassIdx c) {
      t.stamp[c] = t.id;
      t.state[c] = 1;
      frames_.push_back(MemoFrame{c});
    };
    open(k);
    while (!frames_.empty()) {
      MemoFrame& f = frames_.back();
      const auto& nodes = g_.classes[f.cls].nodes;
      if (f.node_i == nodes.size()) {
        t.state[f.cls] = 2;
        t.val[f.cls] = f.best;
        t.arg[f.cls] = f.best_node;
        frames_.pop_back();
        continue;
      }
      const NodeIdx n = nodes[f.node_i];
      if (f.sum < 0.0) {  // a node not started yet
        if (!idx_.usable(n) || !(cost_[n] < f.best)) {
          ++f.node_i;
          continue;
        }
        f.sum = cost_[n];
      }
      const auto kids = idx_.kids(n);
      bool dead = false, must_open = false;
      ClassIdx open_kid = 0;
      for (; f.kid_i < kids.size(); ++f.kid_i) {
        const ClassIdx j = kids[f.kid_i];
        double v = 0.0;
        if (choice_[j] >= 0) {
          v = anchor != kNoClass && !edge_ok(j, anchor, true) ? kInf : 0.0;
        } else if (t.stamp[j] == t.id) {
          v = t.state[j] == 2 ? t.val[j] : kInf;
        } else {
          must_open = true;
          open_kid = j;
          break;
        }
        f.sum += v;
        if (!(f.sum < f.best)) {
          dead = true;
          break;
        }
      }
      if (must_open) {
        open(open_kid);  // invalidates f; this frame resumes at the same child
        continue;
      }
      if (!dead) {
        f.best = f.sum;
        f.best_node = n;
      }
      ++f.node_i;
      f.kid_i = 0;
      f.sum = -1.0;
    }
    return t.state[k] == 2 ? t.val[k] : kInf;
  }

  // Fills the unused class k (memo(t, k) finite) and, recursively, its unused children with
  // their memoised best nodes (t.arg), below the moved class `anchor`. False when a filled node's
  // child is a used class that reaches the anchor (the move would close a cycle).
  bool fill(const MemoTable& t, ClassIdx k, ClassIdx anchor) {
    std::vector<FillFrame>& stack = fill_frames_;
    stack.clear();
    auto open = [&](ClassIdx c) {
      save(c);
      choice_[c] = t.arg[c];
      added_ += cost_[t.arg[c]];
      filled_stamp_[c] = move_id_;
      stack.push_back(FillFrame{c, 0});
    };
    open(k);
    while (!stack.empty()) {
      FillFrame& f = stack.back();
      const auto kids = idx_.kids(node_of(f.cls));
      if (f.kid_i == kids.size()) {
        // Finished after its children: its height.
        double h = 0.0;
        for (ClassIdx j : kids) h = std::max(h, rank_[j] + 1.0);
        rank_[f.cls] = h;
        filled_.push_back(f.cls);
        stack.pop_back();
        continue;
      }
      const ClassIdx j = kids[f.kid_i];
      if (choice_[j] < 0) {
        open(j);  // invalidates f; add_ref(j) when this frame resumes at the same child
        continue;
      }
      if (filled_stamp_[j] != move_id_ && !edge_ok(j, anchor, true)) return false;
      add_ref(j);
      ++f.kid_i;
    }
    return true;
  }

  // One re-optimisation step: class p (used) to node m (children all used); the cost change
  // when it is lower by more than the tolerance (kept when `keep`), else +inf (undone). The
  // cycle check comes last, for the steps that pay only (a path from a new child back to p
  // never uses p's own edges, so checking after the switch is the same).
  double step(ClassIdx p, NodeIdx m, bool keep) {
    ++st_.compound_steps;
    size_t mark = journal_.size();
    const double added = added_, removed = removed_;
    const auto kids = idx_.kids(m), old_kids = idx_.kids(node_of(p));
    set_node(p, m);
    const double delta = (added_ - removed_) - (added - removed);
    bool ok = delta < -tol_;
    if (ok && !pending_.empty()) {
      // The ranks must be a topological order for the check: raise the pending classes in the
      // graph before this step (acyclic, unlike this one maybe), then switch again.
      undo_to(mark);
      added_ = added;
      removed_ = removed;
      raise_pending();
      mark = journal_.size();
      set_node(p, m);
    }
    for (size_t i = 0; ok && i < kids.size(); ++i)
      ok = std::binary_search(old_kids.begin(), old_kids.end(), kids[i]) ||
           edge_ok(kids[i], p, false);
    if (ok && keep) {
      pending_.push_back(p);
      return delta;
    }
    undo_to(mark);
    added_ = added;
    removed_ = removed;
    return ok ? delta : kInf;
  }

  // Re-evaluates the used classes that have a node with a child among the filled classes and
  // all children in the extraction, and the filled classes themselves (their fill assumed
  // the extraction before the switch; a class it dropped since may have made another node
  // cheaper: inceptionv3's concat(a, b) filled with the a and b the switch then dropped,
  // where poolmax(x) of a used x costs less than a, b and their concat); keeps each step that
  // lowers the cost (first improvement: taking the best step of each pass found nothing more
  // on the benchmark e-graphs and took up to 1.8x longer). Passes until one keeps nothing (at
  // most 64). Returns the steps kept.
  int reoptimise() {
    int kept = 0;
    for (int pass = 0; pass < 64; ++pass) {
      ++tried_id_;
      bool improved = false;
      for (size_t i = 0; i < filled_.size(); ++i) {
        const ClassIdx s = filled_[i];
        if (choice_[s] < 0) continue;
        for (NodeIdx m : g_.classes[s].nodes) {
          if (choice_[s] < 0 || choice_[s] == static_cast<int64_t>(m) || !idx_.usable(m) || tried_[m] == tried_id_)
            continue;
          tried_[m] = tried_id_;
          bool ready = true;
          for (ClassIdx j : idx_.kids(m)) ready = ready && choice_[j] >= 0 && j != s;
          if (ready && step(s, m, true) < 0.0) {
            ++kept;
            improved = true;
          }
        }
        if (choice_[s] < 0) continue;
        for (NodeIdx m : idx_.parents(s)) {
          const ClassIdx p = idx_.eclass(m);
          if (choice_[p] < 0 || choice_[p] == static_cast<int64_t>(m) || tried_[m] == tried_id_)
            continue;
          tried_[m] = tried_id_;
          bool ready = true;
          for (ClassIdx j : idx_.kids(m)) ready = ready && choice_[j] >= 0;
          if (ready && step(p, m, true) < 0.0) {
            ++kept;
            improved = true;
          }
        }
      }
      if (!improved) break;
    }
    return kept;
  }

  enum class Fill { kOk, kNone, kCycle };

  // Starts the move of class c to node n: fills n's unused child classes from table t
  // (memo(t, ., anchor)). On failure the state is as before.
  Fill fill_kids(MemoTable& t, ClassIdx anchor, ClassIdx c, NodeIdx n) {
    const auto kids = idx_.kids(n);
    for (ClassIdx j : kids)
      if (choice_[j] < 0 && memo(t, j, anchor) == kInf) return Fill::kNone;
    journal_.clear();
    filled_.clear();
    added_ = removed_ = 0.0;
    ++move_id_;
    for (ClassIdx j : kids)
      if (choice_[j] < 0 && !fill(t, j, c)) {
        undo_to(0);
        return Fill::kCycle;
      }
    return Fill::kOk;
  }

  // Evaluates "class c switches to node n" (plus the re-optimisation): the change of the DAG
  // cost when it strictly decreases (kept when `keep`), else +inf (undone).
  double try_move(ClassIdx c, NodeIdx n, bool keep) {
    ++st_.moves;
    const auto kids = idx_.kids(n);
    const auto old_kids = idx_.kids(node_of(c));
    for (ClassIdx j : kids)
      if (choice_[j] >= 0 && !std::binary_search(old_kids.begin(), old_kids.end(), j) &&
          !edge_ok(j, c, true)) {
        ++st_.rejected_cycle;
        return kInf;
      }
    switch (fill_kids(shared_, kNoClass, c, n)) {
      case Fill::kOk: break;
      case Fill::kNone: ++st_.rejected_fill; return kInf;
      case Fill::kCycle:
        ++st_.refills;
        ++avoiding_.id;
        if (fill_kids(avoiding_, c, c, n) != Fill::kOk) {
          ++st_.rejected_cycle;
          return kInf;
        }
    }
    set_node(c, n);
    pending_.assign(1, c);  // filled classes have their heights (fill()), c may be below one now
    int steps = 0;
    if (opts_.compound && !filled_.empty()) {
      ++st_.compound_moves;
      steps = reoptimise();
    }
    const double delta = added_ - removed_;
    if (!(delta < -tol_) || !keep) {
      undo_to(0);
      return delta < -tol_ ? delta : kInf;
    }
    commit(delta, steps);
    return delta;
  }

  void commit(double delta, int steps) {
    journal_.clear();
    total_ += delta;
    ++st_.accepted;
    if (steps > 0) ++st_.accepted_compound;
    shared_.id = ++gen_;  // the memoised fill costs assumed the old extraction
    pending_.clear();
    recompute_ranks();
    if (opts_.verify) verify();
  }

  // Ranks: kRankGap times the height of a used class (0 for a leaf, else 1 + its children's
  // maximum), a topological order in which a class's alternative children, mostly tensors
  // of the same layers as its current ones, tend to rank below it too. (On nasneta a
  // depth-first post-order needed 98k cycle searches, heights 17k, heights with the gap and
  // raise() 16.) post_order_: the used classes, children first.
  void recompute_ranks() {
    post_order_.clear();
    ++seen_id_;
    std::vector<std::pair<ClassIdx, uint32_t>>& st = rank_stack_;
    for (ClassIdx r : g_.roots) {
      if (seen_[r] == seen_id_) continue;
      seen_[r] = seen_id_;
      st.assign(1, {r, 0});
      while (!st.empty()) {
        auto& [c, i] = st.back();
        const auto kids = idx_.kids(node_of(c));
        if (i == kids.size()) {
          double h = 0.0;
          for (ClassIdx k : kids) h = std::max(h, rank_[k] + kRankGap);
          rank_[c] = h;
          post_order_.push_back(c);
          st.pop_back();
          continue;
        }
        const ClassIdx k = kids[i++];
        if (seen_[k] != seen_id_) {
          seen_[k] = seen_id_;
          st.push_back({k, 0});
        }
      }
    }
  }

  // The extraction and its cost from scratch (LocalSearchOptions::verify).
  void verify() {
    check_extraction(g_, choice_, "local search");
    const double scratch = dag_cost(g_, choice_);
    if (!(scratch < verified_cost_))
      throw InternalError("local search: an accepted move did not lower the DAG cost (" +
                          std::to_string(verified_cost_) + " -> " + std::to_string(scratch) + ")");
    if (std::abs(scratch - total_) > 1e-9 * std::max(1.0, std::abs(scratch)))
      throw InternalError("local search: tracked cost " + std::to_string(total_) +
                          " differs from the DAG cost " + std::to_string(scratch));
    std::vector<uint32_t> uses(g_.classes.size(), 0);
    for (ClassIdx r : g_.roots) ++uses[r];
    for (ClassIdx c = 0; c < g_.classes.size(); ++c)
      if (choice_[c] >= 0)
        for (ClassIdx k : idx_.kids(node_of(c))) ++uses[k];
    if (uses != uses_) throw InternalError("local search: reference counts out of step");
    verified_cost_ = scratch;
  }

  const ExtractGraph& g_;
  const GraphIndex& idx_;
  const LocalSearchOptions& opts_;
  LocalSearchStats& st_;
  std::vector<double> cost_;
  Choice choice_;
  std::vector<uint32_t> uses_;
  std::vector<double> rank_;
  std::vector<ClassIdx> post_order_;
  double total_ = 0.0, verified_cost_ = 0.0, tol_ = 0.0;
  uint64_t clock_tick_ = 0;

  // The move being evaluated.
  std::vector<Saved> journal_;
  std::vector<ClassIdx> filled_;          // classes the move's fill added, children first
  std::vector<uint32_t> filled_stamp_;    // == move_id_: filled by this move
  uint32_t move_id_ = 0;
  double added_ = 0.0, removed_ = 0.0;
  std::vector<uint32_t> tried_;           // re-optimisation: node tried in this pass
  uint32_t tried_id_ = 0;

  uint32_t gen_ = 1;  // the committed extraction's version
  std::vector<uint32_t> unproductive_;  // per class: the gen_ at which none of its moves paid (0: none yet)
  MemoTable shared_, avoiding_;

  // Scratch.
  std::vector<uint32_t> seen_;
  uint32_t seen_id_ = 0;
  std::vector<uint32_t> reach_seen_;  // first-step searches (see reaches())
  uint32_t reach_id_ = 0, reach_gen_ = 0;
  ClassIdx reach_target_ = kNoClass;
  std::vector<ClassIdx> stack_, drop_stack_, raise_stack_;
  std::vector<ClassIdx> pending_;  // see raise_pending()
  std::vector<std::pair<ClassIdx, uint32_t>> rank_stack_;
  struct MemoFrame {
    ClassIdx cls;
    uint32_t node_i = 0, kid_i = 0;
    double sum = -1.0, best = kInf;
    NodeIdx best_node = 0;
  };
  std::vector<MemoFrame> frames_;
  struct FillFrame {
    ClassIdx cls;
    uint32_t kid_i;
  };
  std::vector<FillFrame> fill_frames_;
};

}  // namespace

ExtractResult improve_local(const ExtractGraph& g, Choice start,
                            const LocalSearchOptions& opts, LocalSearchStats* stats) {
  return improve_local(g, GraphIndex(g), std::move(start), opts, stats);
}

ExtractResult improve_local(const ExtractGraph& g, const GraphIndex& index, Choice start,
                            const LocalSearchOptions& opts, LocalSearchStats* stats) {
  const auto t0 = Clock::now();
  LocalSearchStats local_stats;
  LocalSearchStats& st = stats ? *stats : local_stats;
  st = LocalSearchStats{};
  start = prune_to_roots(g, start);
  check_extraction(g, start, "local search start");
  st.start_cost = dag_cost(g, start);

  Search search(g, index, start, opts, st);
  search.run();

  ExtractResult r;
  r.method = "local";
  r.status = "heuristic";
  r.gap = r.best_bound = std::nan("");
  r.choice = prune_to_roots(g, search.choice());
  const std::string problem = extraction_problem(g, r.choice);
  if (!problem.empty()) {
    if (opts.verify) throw InternalError("local search produced an invalid extraction: " + problem);
    spdlog::error("local search produced an invalid extraction ({}); keeping the start", problem);
    r.choice = start;
  } else if (!(dag_cost(g, r.choice) < st.start_cost)) {
    r.choice = start;
  }
  finish_result(g, r);
  st.final_cost = r.dag_cost;
  st.time_s = r.time_s = seconds_since(t0);
  spdlog::debug("local search: {} -> {} in {:.4f} s, {} rounds, {} moves ({} compound, {} "
                "steps; {} classes skipped), {} accepted ({} compound), {} cycle searches ({} classes), {} raised, "
                "{} refills, rejected {} cycle / {} fill{}",
                st.start_cost, st.final_cost, st.time_s, st.rounds, st.moves, st.compound_moves,
                st.compound_steps, st.skipped, st.accepted, st.accepted_compound, st.cycle_checks,
                st.search_visits, st.raised, st.refills, st.rejected_cycle, st.rejected_fill,
                st.hit_limit ? ", stopped by the limit" : "");
  return r;
}

}  // namespace tensat::extract

// Restriction to base nodes (see restriction.h).
#include "extract/restriction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "extract/blocks.h"

namespace tensat::extract {

namespace {

constexpr size_t kDropCap = 256;  // classes looked at per drop set

/// The class graph over the candidate nodes, given classes left out: per class its distinct
/// child classes and its distinct reader classes.
struct ClassGraph {
  std::vector<std::vector<ClassIdx>> children, readers;
};

template <class Alive, class Given>
ClassGraph class_graph(const ExtractGraph& g, const GraphIndex& index, const Alive& alive, const Given& given) {
  ClassGraph cg;
  cg.children.resize(g.classes.size());
  cg.readers.resize(g.classes.size());
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    if (!alive(n)) continue;
    for (ClassIdx k : index.kids(n))
      if (!given(k)) cg.children[index.eclass(n)].push_back(k);
  }
  for (ClassIdx c = 0; c < g.classes.size(); ++c) {
    auto& ch = cg.children[c];
    std::sort(ch.begin(), ch.end());
    ch.erase(std::unique(ch.begin(), ch.end()), ch.end());
    for (ClassIdx k : ch) cg.readers[k].push_back(c);
  }
  return cg;
}

/// Per class k: the least an extraction pays for k and for what only k reads, over the
/// candidate nodes: min over k's nodes m of cost(m) + Σ own(Y) over m's child classes Y whose
/// one reader is k. Those form a forest (each class has at most one such parent), walked
/// children first; on a cycle (a broken invariant: the class graph is acyclic) the class
/// counts 0 there, which stays a lower bound.
template <class Alive, class Given>
std::vector<double> exclusive_costs(const ExtractGraph& g, const GraphIndex& index, const Alive& alive,
                                    const Given& given, const ClassGraph& cg) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const size_t nc = g.classes.size();
  auto sole = [&](ClassIdx y, ClassIdx k) { return cg.readers[y].size() == 1 && cg.readers[y][0] == k; };
  std::vector<double> own(nc, kInf);
  std::vector<char> state(nc, 0);  // 0 new, 1 on the stack, 2 done
  auto value = [&](ClassIdx k) {
    double best = kInf;
    for (NodeIdx m : g.classes[k].nodes) {
      if (!alive(m)) continue;
      double sum = g.nodes[m].cost;
      for (ClassIdx y : index.kids(m))
        if (!given(y) && sole(y, k) && state[y] == 2) sum += own[y];
      best = std::min(best, sum);
    }
    return best;
  };
  std::vector<std::pair<ClassIdx, bool>> stack;
  for (ClassIdx start = 0; start < nc; ++start) {
    if (state[start] != 0) continue;
    stack.push_back({start, false});
    while (!stack.empty()) {
      auto [k, expanded] = stack.back();
      stack.pop_back();
      if (expanded) {
        own[k] = value(k);
        state[k] = 2;
        continue;
      }
      if (state[k] != 0) continue;
      state[k] = 1;
      stack.push_back({k, true});
      for (ClassIdx y : cg.children[k])
        if (sole(y, k) && state[y] == 0) stack.push_back({y, false});
    }
  }
  return own;
}

/// The classes that no extraction can reach once class k's node reads only given classes:
/// those all of whose readers are k or such classes (never a given class, so never a root),
/// grown from k's children; growing stops once `cap` classes were looked at (checked before
/// each member's children, so a little more; what is found by then is such a set too). Marked in `in` (cleared by the caller through the returned list).
std::vector<ClassIdx> drop_set(const ClassGraph& cg, ClassIdx k, size_t cap, std::vector<uint32_t>& count,
                               std::vector<char>& in) {
  std::vector<ClassIdx> set{k}, touched;
  in[k] = 1;
  for (size_t i = 0; i < set.size() && touched.size() < cap; ++i)
    for (ClassIdx x : cg.children[set[i]]) {
      if (in[x]) continue;
      if (count[x]++ == 0) touched.push_back(x);
      if (count[x] == cg.readers[x].size()) {
        in[x] = 1;
        set.push_back(x);
      }
    }
  for (ClassIdx x : touched) count[x] = 0;
  return set;
}

/// What an extraction that uses a node n of class c pays at least beyond what it would pay
/// with a base node of c there (restriction.h): n's cost, and for each child class of n that
/// is then gone (drop_set), its exclusive cost. Those subtrees are disjoint (a class has at
/// most one sole reader, and a child read by n is in no other child's subtree: c reads it),
/// and no other class that gives way to its base node can claim them: a class that reads
/// one of them is gone too. Over the candidate nodes as they are when it is built.
class Credits {
 public:
  template <class Alive, class Given>
  Credits(const ExtractGraph& g, const GraphIndex& index, const Alive& alive, const Given& given)
      : g_(g),
        index_(index),
        cg_(class_graph(g, index, alive, given)),
        own_(exclusive_costs(g, index, alive, given, cg_)),
        count_(g.classes.size(), 0),
        in_drop_(g.classes.size(), 0) {}

  /// Calls `f(credit)` once, with `credit(n)` the credit of a node n of class c (valid only
  /// inside `f`: the drop set of c is marked while it runs).
  template <class F>
  void for_class(ClassIdx c, F&& f) {
    const std::vector<ClassIdx> dropped = drop_set(cg_, c, kDropCap, count_, in_drop_);
    in_drop_[c] = 0;  // (c is no child of its own nodes)
    f([&](NodeIdx n) {
      double sum = g_.nodes[n].cost;
      for (ClassIdx k : index_.kids(n))
        if (in_drop_[k]) sum += own_[k];
      return sum;
    });
    for (ClassIdx x : dropped) in_drop_[x] = 0;
  }

 private:
  const ExtractGraph& g_;
  const GraphIndex& index_;
  ClassGraph cg_;
  std::vector<double> own_;
  std::vector<uint32_t> count_;
  std::vector<char> in_drop_;
};

size_t largest_block(const ExtractGraph& g, const GraphIndex& index, const Reduction& red, const Requirements& req) {
  size_t largest = 0;
  for (const auto& b : find_blocks(g, index, red, req).classes) largest = std::max(largest, b.size());
  return largest;
}

}  // namespace

Swaps find_swaps(const ExtractGraph& g, const Reduction& red, const Requirements& req) {
  if (!req.computed) return {};
  return find_swaps(g, GraphIndex(g), red, req);
}

Swaps find_swaps(const ExtractGraph& g, const GraphIndex& index, const Reduction& red, const Requirements& req) {
  Swaps sw;
  // The acyclicity the swap argument needs, and computed requirements: find_blocks checks
  // both (no blocks when either fails).
  if (!req.computed) return sw;
  sw.blocks = find_blocks(g, index, red, req);
  if (sw.blocks.count() == 0) return sw;
  for (const auto& b : sw.blocks.classes) sw.largest_block = std::max(sw.largest_block, b.size());
  sw.replacement.assign(g.nodes.size(), -1);
  auto alive = [&](NodeIdx n) { return red.node_alive[n] && sw.replacement[n] < 0; };
  auto given = [&](ClassIdx k) { return req.mandatory[k] || red.class_free[k]; };
  auto is_base = [&](NodeIdx n) { return std::all_of(g.nodes[n].children.begin(), g.nodes[n].children.end(), given); };

  // First reduce()'s dominance with mandatory classes counted as given as well (dominators()).
  for (ClassIdx c = 0; c < g.classes.size(); ++c) {
    if (!red.class_alive[c] || red.class_free[c]) continue;
    std::vector<NodeIdx> cand;
    for (NodeIdx n : g.classes[c].nodes)
      if (alive(n)) cand.push_back(n);
    if (cand.size() < 2) continue;
    const std::vector<int64_t> by = dominators(g, index, cand, given);
    for (size_t i = 0; i < cand.size(); ++i) {
      if (by[i] < 0) continue;
      sw.replacement[cand[i]] = cand[static_cast<size_t>(by[i])];
      ++sw.dominated;
    }
  }
  // Then every other node whose credit (Credits) is at least the cost of its class's cheapest
  // base node. (Over the nodes the dominance left; base nodes stay.)
  Credits credits(g, index, alive, given);
  for (ClassIdx c = 0; c < g.classes.size(); ++c) {
    if (!red.class_alive[c] || red.class_free[c]) continue;
    int64_t base = -1;
    for (NodeIdx n : g.classes[c].nodes)
      if (alive(n) && is_base(n) && (base < 0 || g.nodes[n].cost < g.nodes[static_cast<size_t>(base)].cost))
        base = static_cast<int64_t>(n);
    if (base < 0) continue;
    const double base_cost = g.nodes[static_cast<size_t>(base)].cost;
    credits.for_class(c, [&](const auto& credit) {
      for (NodeIdx n : g.classes[c].nodes)
        if (alive(n) && !is_base(n) && credit(n) >= base_cost) {
          sw.replacement[n] = base;
          ++sw.swapped;
        }
    });
  }
  // A dominator may have been swapped itself: the dominated node then gives way to that base
  // node (base nodes give way to nothing, so one more step ends every chain).
  for (int64_t& to : sw.replacement)
    if (to >= 0 && sw.replacement[static_cast<size_t>(to)] >= 0) to = sw.replacement[static_cast<size_t>(to)];
  return sw;
}

size_t largest_untouched_block(const ExtractGraph& g, const Blocks& blocks, const std::vector<int64_t>& replacement) {
  std::vector<char> touched(blocks.count(), 0);
  for (NodeIdx n = 0; n < replacement.size(); ++n)
    if (replacement[n] >= 0)
      if (const int b = blocks.of_class[g.nodes[n].eclass]; b >= 0) touched[static_cast<size_t>(b)] = 1;
  size_t largest = 0;
  for (size_t b = 0; b < blocks.count(); ++b)
    if (!touched[b]) largest = std::max(largest, blocks.classes[b].size());
  return largest;
}

Choice apply_swaps(const ExtractGraph& g, const Reduction& red, const std::vector<int64_t>& replacement,
                   const Choice& choice) {
  Choice c = choice;
  if (replacement.size() != g.nodes.size()) return c;  // (nothing swapped)
  // (A node given way to is never replaced itself, so one step suffices.)
  for (int64_t& n : c)
    if (n >= 0 && replacement[static_cast<size_t>(n)] >= 0) n = replacement[static_cast<size_t>(n)];
  // A base node may read free classes the extraction did not use; their free nodes read only
  // free classes.
  for (ClassIdx k = 0; k < c.size(); ++k)
    if (c[k] < 0 && red.class_free[k]) c[k] = red.free_node[k];
  return prune_to_roots(g, c);
}

Restriction restrict_to_base_nodes(const ExtractGraph& g, const GraphIndex& index, const Reduction& red,
                                   const Requirements& req, double max_slack, const std::vector<char>* keep_open) {
  Restriction r;
  Swaps sw = find_swaps(g, index, red, req);
  if (sw.replacement.empty()) return r;
  r.largest_block_before = sw.largest_block;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  r.graph = g;
  r.dominated = sw.dominated;
  r.swapped = sw.swapped;
  // Only the candidates of `red` (what OPT(R) <= OPT needs): R is reduced again from scratch,
  // and a node `red` found dominated by one the swaps remove would be a candidate there again
  // (on NasNet-A such nodes joined R's blocks into blocks of 760 classes instead of 264).
  for (NodeIdx n = 0; n < g.nodes.size(); ++n)
    if (!red.node_alive[n] || sw.replacement[n] >= 0) r.graph.nodes[n].filtered = true;
  r.replacement = std::move(sw.replacement);
  // Nodes that stay candidates: alive in `red`, not filtered here.
  auto alive = [&](NodeIdx n) { return red.node_alive[n] && !r.graph.nodes[n].filtered; };
  auto given = [&](ClassIdx k) { return req.mandatory[k] || red.class_free[k]; };
  auto is_base = [&](NodeIdx n) { return std::all_of(g.nodes[n].children.begin(), g.nodes[n].children.end(), given); };

  // Then the classes with base nodes and others, by their slack (over the nodes left), among
  // the classes still reachable: slack spent on a class no extraction uses is wasted.
  auto kept_nodes = [&] {
    std::vector<char> keep(g.nodes.size(), 0);
    for (NodeIdx n = 0; n < g.nodes.size(); ++n) keep[n] = alive(n);
    return restrict_nodes(g, red, keep);
  };
  const std::vector<char> reach = kept_nodes().class_alive;
  Credits credits(g, index, alive, given);
  struct Candidate {
    double slack;
    ClassIdx c;
    NodeIdx base;
    double other;  // the least credit of the other nodes
  };
  std::vector<Candidate> cands;
  for (ClassIdx c = 0; c < g.classes.size(); ++c) {
    if (!reach[c] || red.class_free[c] || (keep_open && (*keep_open)[c])) continue;
    double base_cost = kInf, other_cost = kInf;
    int64_t base = -1;
    credits.for_class(c, [&](const auto& credit) {
      for (NodeIdx n : g.classes[c].nodes) {
        if (!alive(n)) continue;
        const double cost = g.nodes[n].cost;
        if (!is_base(n)) {
          other_cost = std::min(other_cost, credit(n));
        } else if (cost < base_cost) {
          base_cost = cost;
          base = n;
        }
      }
    });
    if (base < 0 || !std::isfinite(other_cost)) continue;
    cands.push_back({std::max(0.0, base_cost - other_cost), c, static_cast<NodeIdx>(base), other_cost});
  }
  std::sort(cands.begin(), cands.end(),
            [](const Candidate& a, const Candidate& b) { return std::tie(a.slack, a.c) < std::tie(b.slack, b.c); });
  for (const Candidate& cand : cands) {
    if (r.slack + cand.slack > max_slack) break;
    r.slack += cand.slack;
    r.classes.push_back(cand.c);
    r.base.push_back(cand.base);
    r.delta.push_back(cand.slack);
    // Only the base nodes stay (the restricted problem is reduced again from scratch), each
    // lowered by the slack: the cheapest then costs min(cheapest base, least other credit)
    // (taken as that minimum, not as base - (base - other), which can round one ulp above it).
    for (NodeIdx n : g.classes[cand.c].nodes) {
      if (!(alive(n) && is_base(n)))
        r.graph.nodes[n].filtered = true;
      else if (n == cand.base)
        r.graph.nodes[n].cost = std::min(g.nodes[n].cost, cand.other);
      else
        r.graph.nodes[n].cost = std::max(0.0, g.nodes[n].cost - cand.slack);
    }
  }
  if (r.classes.empty() && r.dominated == 0 && r.swapped == 0) {
    r.graph = {};
    r.replacement.clear();  // (map_to_restricted: nothing restricted)
    return r;
  }
  // The blocks of what is left (the mandatory classes as before: the restricted problem's own
  // can only be more).
  r.largest_block_after = largest_block(g, index, kept_nodes(), req);
  return r;
}

Choice map_to_restricted(const ExtractGraph& g, const Reduction& red, const Restriction& r, const Choice& choice) {
  if (r.replacement.size() != g.nodes.size()) return {};  // (nothing was restricted)
  Choice c = choice;
  for (size_t i = 0; i < r.classes.size(); ++i)
    if (c[r.classes[i]] >= 0) c[r.classes[i]] = r.base[i];
  c = apply_swaps(g, red, r.replacement, c);
  if (!extraction_problem(r.graph, c).empty()) return {};
  return c;
}

}  // namespace tensat::extract

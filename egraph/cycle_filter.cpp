// Cycle filtering: per-match pre-filter and the post-pass (see cycle_filter.h).
#include "egraph/cycle_filter.h"

#include <algorithm>

#include "support/enum_names.h"

namespace tensat {

namespace {
// Operators of childless e-nodes (parameter leaves).
constexpr uint64_t kLeafOps = (uint64_t{1} << static_cast<unsigned>(Op::Num)) |
                              (uint64_t{1} << static_cast<unsigned>(Op::Sym));
}  // namespace

namespace {
constexpr EnumNames<CycleFilterMode, 3> kNames{{{{CycleFilterMode::None, "none"},
                                                 {CycleFilterMode::Vanilla, "vanilla"},
                                                 {CycleFilterMode::Efficient, "efficient"}}}};
}  // namespace

std::string_view cycle_filter_name(CycleFilterMode m) { return kNames.name(m); }
std::optional<CycleFilterMode> cycle_filter_from_name(std::string_view s) { return kNames.parse(s); }

void CycleFilter::begin_iteration(const EGraph& eg) {
  if (mode_ != CycleFilterMode::Efficient) return;
  eg.require_clean("CycleFilter::begin_iteration");
  const size_t n = eg.class_capacity();
  snap_classes_ = n;
  offsets_.assign(n + 1, 0);
  kids_.clear();
  // Distinct children per class, in first-seen order (the order does not matter: queries
  // only ask whether a class is reachable, and any post-order numbering prunes soundly).
  std::vector<uint32_t>& seen = tmp_;  // per class: the class whose list last took it, plus 1
  seen.assign(n, 0);
  for (uint32_t c = 0; c < n; ++c) {
    offsets_[c] = static_cast<uint32_t>(kids_.size());
    if (eg.class_ops(EClassId(c)) == 0) continue;  // merged away (a live class holds e-nodes)
    for (const EGraph::PackedNode nd : eg.class_nodes(EClassId(c))) {
      if (eg.is_filtered(nd.id)) continue;
      // A class of leaves only (parameters) reaches nothing and is never a query's target
      // (that holds a matched operator): leaving it out changes no answer. The leading
      // parameter children of an operator always are such classes (type-checked).
      const uint32_t first = std::min<uint32_t>(nd.nkids, static_cast<uint32_t>(op_info(nd.op).num_params));
      for (const EClassId* k = nd.kids + first; k != nd.kids + nd.nkids; ++k) {
        const EClassId ch = *k;
        if ((eg.class_ops(ch) & ~kLeafOps) == 0) continue;
        if (seen[ch.v] == c + 1) continue;
        seen[ch.v] = c + 1;
        kids_.push_back(ch.v);
      }
    }
  }
  offsets_[n] = static_cast<uint32_t>(kids_.size());
  // Post-order numbering by iterative DFS; detects cycles (then pruning is disabled).
  order_.assign(n, 0);
  low_.assign(n, 0);
  // Scratch buffers are members: reallocating class-sized arrays every iteration makes glibc
  // consolidate its free lists each time, which cost more than the walk itself.
  std::vector<uint8_t>& color = color_;
  color.assign(n, 0);
  auto& st = snap_stack_;  // (class, next child position)
  st.clear();
  uint32_t next = 1;
  snap_acyclic_ = true;
  for (uint32_t r = 0; r < n; ++r) {
    if (color[r] || eg.class_ops(EClassId(r)) == 0) continue;
    st.push_back({r, offsets_[r]});
    color[r] = 1;
    low_[r] = next;
    while (!st.empty()) {
      auto& [c, pos] = st.back();
      if (pos < offsets_[c + 1]) {
        uint32_t k = kids_[pos++];
        if (color[k] == 0) {
          color[k] = 1;
          low_[k] = next;
          st.push_back({k, offsets_[k]});
        } else if (color[k] == 1) {
          snap_acyclic_ = false;
        }
      } else {
        color[c] = 2;
        order_[c] = next++;
        st.pop_back();
      }
    }
  }
}

bool CycleFilter::reaches_snapshot(const EGraph&, EClassId from, EClassId to) {
  if (from == to) return true;
  const uint32_t target = to.v, limit = order_[to.v];
  if (snap_acyclic_ && order_[from.v] <= limit) return false;
  // `to` in the DFS subtree of a class the walk reaches: reachable (on a cyclic snapshot too).
  // Most refusals of the cycle guard are answered here instead of by the walk (NasRNN's
  // matmul-concat-cols-rev: 2 640 per iteration).
  auto in_subtree = [&](uint32_t k) { return order_[k] != 0 && low_[k] <= limit && limit <= order_[k]; };
  if (in_subtree(from.v)) return true;
  if (visited_.size() < snap_classes_) visited_.resize(snap_classes_, 0);
  ++epoch_;
  stack_.clear();
  stack_.push_back(from.v);
  visited_[from.v] = epoch_;
  while (!stack_.empty()) {
    uint32_t c = stack_.back();
    stack_.pop_back();
    for (uint32_t p = offsets_[c]; p < offsets_[c + 1]; ++p) {
      uint32_t k = kids_[p];
      if (k == target) return true;
      if (visited_[k] == epoch_) continue;
      if (snap_acyclic_ && order_[k] < limit) continue;  // numbered below `to`: cannot reach it
      if (in_subtree(k)) return true;
      visited_[k] = epoch_;
      stack_.push_back(k);
    }
  }
  return false;
}

bool CycleFilter::reaches_live(const EGraph& eg, EClassId from, EClassId to) {
  from = eg.find(from);
  to = eg.find(to);
  if (from == to) return true;
  return walk_live(eg, from, to, visited_, epoch_, stack_, 0);
}

bool CycleFilter::reaches_mixed(const EGraph& eg, EClassId from, EClassId to) {
  // `from` was created in this iteration, after the snapshot. Walk the live e-graph through
  // classes that are new too, and ask the snapshot at every class it already knew. (The
  // e-graph keeps the older class as root on a union, so a class of the snapshot keeps its
  // id.) The walk stays among this iteration's additions, which are few per query. It has its
  // own DFS state because reaches_snapshot uses visited_/stack_ inside it.
  return walk_live(eg, from, to, new_visited_, new_epoch_, new_stack_, snap_classes_);
}

bool CycleFilter::walk_live(const EGraph& eg, EClassId from, EClassId to, std::vector<uint32_t>& visited,
                            uint32_t& epoch, std::vector<uint32_t>& stack, uint32_t known_below) {
  if (visited.size() < eg.class_capacity()) visited.resize(eg.class_capacity(), 0);
  ++epoch;
  stack.clear();
  stack.push_back(from.v);
  visited[from.v] = epoch;
  while (!stack.empty()) {
    EClassId c(stack.back());
    stack.pop_back();
    for (ENodeId nid : eg.eclass(c).nodes) {
      if (eg.is_filtered(nid)) continue;
      for (EClassId ch : eg.node(nid).children) {
        EClassId k = eg.find(ch);
        if (k == to) return true;
        if (visited[k.v] == epoch) continue;
        visited[k.v] = epoch;
        if (k.v < known_below) {
          if (reaches_snapshot(eg, k, to)) return true;
        } else {
          stack.push_back(k.v);
        }
      }
    }
  }
  return false;
}

bool CycleFilter::reaches(const EGraph& eg, EClassId from, EClassId to) {
  ++queries_;
  if (mode_ != CycleFilterMode::Efficient) return reaches_live(eg, from, to);
  from = eg.find(from);
  to = eg.find(to);
  if (from == to) return true;
  if (to.v >= snap_classes_) return reaches_live(eg, from, to);  // not from a search: rare
  if (from.v >= snap_classes_) return reaches_mixed(eg, from, to);
  return reaches_snapshot(eg, from, to);
}

bool CycleFilter::would_cycle(const EGraph& eg, EClassId matched, const std::vector<EClassId>& pointed,
                              std::optional<EClassId> existing_root) {
  if (mode_ == CycleFilterMode::None) return false;
  // A union of two existing classes adds no e-node, so there is nothing to pre-filter (as in
  // TENSAT, which checks the new e-nodes only). Such unions are mostly collapses, where the
  // right-hand side is a subterm of the matched term (split0-concat, relu-idempotent,
  // transpose involutions: `... => ?x`): refusing them would stop those rules from ever
  // firing. A cycle they close runs through the matched (now redundant) e-nodes, and
  // remove_cycles() filters the newest e-node on it after the rebuild.
  if (existing_root) return false;
  for (EClassId c : pointed)
    if (reaches(eg, c, matched)) return true;
  return false;
}

namespace {

// DFS over classes through unfiltered e-nodes. On each back edge, `on_cycle` gets the stack
// frames from the revisited class to the top and returns the frame index to unwind to (the
// frame whose current e-node was filtered), or -1 to stop the search.
struct Frame {
  uint32_t cls;
  uint32_t node_pos;   // index into the class's node list
  uint32_t child_pos;  // index into that node's children
};

template <class OnCycle>
void cycle_dfs(const EGraph& eg, bool ignore_filtered, std::vector<uint8_t>& color,
               std::vector<uint32_t>& frame_of, OnCycle&& on_cycle) {
  const size_t n = eg.class_capacity();
  color.assign(n, 0);
  frame_of.assign(n, 0);
  std::vector<Frame> st;
  for (EClassId root : eg.class_ids()) {
    if (color[root.v]) continue;
    color[root.v] = 1;
    frame_of[root.v] = 0;
    st.push_back({root.v, 0, 0});
    while (!st.empty()) {
      Frame& f = st.back();
      const auto& nodes = eg.eclass(EClassId(f.cls)).nodes;
      if (f.node_pos >= nodes.size()) {
        color[f.cls] = 2;
        st.pop_back();
        continue;
      }
      ENodeId nid = nodes[f.node_pos];
      const ENode& nd = eg.node(nid);
      if ((ignore_filtered && eg.is_filtered(nid)) || f.child_pos >= nd.children.size()) {
        ++f.node_pos;
        f.child_pos = 0;
        continue;
      }
      uint32_t k = eg.find(nd.children[f.child_pos++]).v;
      if (color[k] == 0) {
        color[k] = 1;
        frame_of[k] = static_cast<uint32_t>(st.size());
        st.push_back({k, 0, 0});
      } else if (color[k] == 1) {
        int keep = on_cycle(st, frame_of[k]);
        if (keep < 0) return;
        // Unwind above `keep`: those classes are re-explored later (their finished
        // descendants stay black: removing edges cannot create cycles).
        while (st.size() > static_cast<size_t>(keep) + 1) {
          color[st.back().cls] = 0;
          st.pop_back();
        }
        Frame& top = st.back();
        ++top.node_pos;  // the current node of `keep` was filtered
        top.child_pos = 0;
      }
    }
  }
}

}  // namespace

size_t CycleFilter::remove_cycles(EGraph& eg) {
  if (mode_ == CycleFilterMode::None) return 0;
  eg.require_clean("CycleFilter::remove_cycles");
  size_t filtered = 0;
  cycle_dfs(eg, true, color_, frame_of_, [&](std::vector<Frame>& st, uint32_t from) -> int {
    // The newest e-node on the cycle: each frame's current node is an edge of it.
    size_t best = from;
    ENodeId best_id;
    for (size_t i = from; i < st.size(); ++i) {
      ENodeId nid = eg.eclass(EClassId(st[i].cls)).nodes[st[i].node_pos];
      if (!best_id.valid() || nid > best_id) {
        best_id = nid;
        best = i;
      }
    }
    eg.set_filtered(best_id);
    ++filtered;
    return static_cast<int>(best);
  });
  return filtered;
}

size_t CycleFilter::remove_new_cycles(EGraph& eg, const std::vector<EClassId>& touched) {
  if (mode_ == CycleFilterMode::None) return 0;
  eg.require_clean("CycleFilter::remove_new_cycles");
  // Plain DFS (through unfiltered e-nodes) from the touched classes; stop at a back edge.
  const size_t n = eg.class_capacity();
  std::vector<uint8_t>& color = color_;
  color.assign(n, 0);
  std::vector<Frame> st;
  bool cyclic = false;
  for (EClassId t : touched) {
    const uint32_t root = eg.find(t).v;
    if (color[root]) continue;
    color[root] = 1;
    st.push_back({root, 0, 0});
    while (!st.empty() && !cyclic) {
      Frame& f = st.back();
      const auto& nodes = eg.eclass_canonical(EClassId(f.cls)).nodes;
      if (f.node_pos >= nodes.size()) {
        color[f.cls] = 2;
        st.pop_back();
        continue;
      }
      ENodeId nid = nodes[f.node_pos];
      const ENode& nd = eg.node(nid);
      if (eg.is_filtered(nid) || f.child_pos >= nd.children.size()) {
        ++f.node_pos;
        f.child_pos = 0;
        continue;
      }
      uint32_t k = eg.find(nd.children[f.child_pos++]).v;
      if (color[k] == 0) {
        if ((eg.class_ops(EClassId(k)) & ~kLeafOps) == 0) {  // leaves only: on no cycle
          color[k] = 2;
          continue;
        }
        color[k] = 1;
        st.push_back({k, 0, 0});
      } else if (color[k] == 1) {
        cyclic = true;
      }
    }
    if (cyclic) break;
  }
  return cyclic ? remove_cycles(eg) : 0;
}

// Cycle check from the snapshot. The snapshot was acyclic and its post-order numbers
// decrease along every edge it had. Rank every class: a class the snapshot knew by
// (order, 0); a class created since by (the largest rank of its children, plus 1 in the
// second part), computed by DFS over the new classes. Then rank decreases along
//   - every edge of a new class, by construction;
//   - every edge of an old class that is not touched: those are its snapshot edges (its
//     e-nodes, their filtered flags and their child ids are unchanged: a merge re-points the
//     children's parents, which are touched; a merge into the class, filtering and
//     unfiltering touch it), and the children kept their numbers (a merged class keeps the
//     older id, which the snapshot knows);
// so a cycle needs an edge of a touched old class along which rank does not decrease (a
// "rising" edge). Without one the e-graph is acyclic. With some, let r be the smallest rank
// of their sources: a class ranked below r has only decreasing edges and reaches only classes
// ranked below r, so it lies on no cycle; a DFS from the rising sources that does not enter
// such classes finds a cycle iff there is one. Edges into classes of parameter leaves are
// skipped throughout, as in the snapshot: such classes have no children.
CycleFilter::Verdict CycleFilter::check_new_cycles(const EGraph& eg, const std::vector<EClassId>& touched) {
  if (mode_ != CycleFilterMode::Efficient || !snap_acyclic_ || snap_classes_ == 0) return Verdict::Unknown;
  const uint32_t snap = static_cast<uint32_t>(snap_classes_);
  const uint32_t n = static_cast<uint32_t>(eg.class_capacity());
  auto non_leaf = [&](uint32_t c) { return (eg.class_ops(EClassId(c)) & ~kLeafOps) != 0; };
  // Ranks of new classes, by iterative DFS (state: 0 new, 1 on the stack, 2 done). A frame
  // resumes at its (e-node, child) position; finished children's ranks are folded in as the
  // scan passes them.
  new_rank_.assign(n - snap, Rank{0, 0});
  new_state_.assign(n - snap, 0);
  auto rank_of = [&](uint32_t c) -> Rank { return c < snap ? Rank{order_[c], 0} : new_rank_[c - snap]; };
  auto& st = rank_stack_;
  auto frame = [&](uint32_t c) {
    const EGraph::NodeRun run = eg.class_nodes(EClassId(c));
    return RankFrame{c, run.begin(), run.end(), 0};
  };
  for (uint32_t r = snap; r < n; ++r) {
    if (new_state_[r - snap] || eg.find(EClassId(r)).v != r) continue;
    st.clear();
    st.push_back(frame(r));
    new_state_[r - snap] = 1;
    while (!st.empty()) {
      RankFrame& f = st.back();
      const uint32_t c = f.cls;
      uint32_t push = UINT32_MAX;
      for (; f.node != f.end && push == UINT32_MAX; ++f.node, f.child = 0) {
        const EGraph::PackedNode nd = *f.node;
        if (eg.is_filtered(nd.id)) continue;
        for (; f.child < nd.nkids; ++f.child) {
          const uint32_t ch = nd.kids[f.child].v;
          if (!non_leaf(ch)) continue;
          if (ch >= snap && new_state_[ch - snap] != 2) {
            if (new_state_[ch - snap] == 1) return Verdict::Cyclic;  // among new classes
            push = ch;  // descend; this child is looked at again when it is done
            break;
          }
          const Rank rk = rank_of(ch);
          Rank& mine = new_rank_[c - snap];
          if (rk.first > mine.first || (rk.first == mine.first && rk.second + 1 > mine.second))
            mine = Rank{rk.first, rk.second + 1};
        }
        if (push != UINT32_MAX) break;
      }
      if (push != UINT32_MAX) {
        new_state_[push - snap] = 1;
        st.push_back(frame(push));  // `f` is not used after this
        continue;
      }
      new_state_[c - snap] = 2;
      st.pop_back();
    }
  }
  // Rising edges: only touched classes the snapshot knew can have them.
  if (touched_mark_.size() < n) touched_mark_.resize(n, 0);
  ++touched_epoch_;
  rising_.clear();
  Rank lowest{UINT32_MAX, UINT32_MAX};
  for (EClassId t : touched) {
    const uint32_t c = eg.find(t).v;
    if (c >= snap || touched_mark_[c] == touched_epoch_) continue;
    touched_mark_[c] = touched_epoch_;
    const Rank mine{order_[c], 0};
    bool rises = false;
    for (const EGraph::PackedNode nd : eg.class_nodes(EClassId(c))) {
      if (eg.is_filtered(nd.id)) continue;
      for (uint32_t k = 0; k < nd.nkids; ++k)
        rises = rises || (non_leaf(nd.kids[k].v) && !(rank_of(nd.kids[k].v) < mine));
      if (rises) break;
    }
    if (!rises) continue;
    rising_.push_back(c);
    lowest = std::min(lowest, mine);
  }
  if (rising_.empty()) return Verdict::Acyclic;
  // DFS from the rising sources among classes ranked at least `lowest` (color: 0 white,
  // 1 on the stack, 2 done; in color_, which only remove_cycles also uses).
  std::vector<uint8_t>& color = color_;
  color.assign(n, 0);
  for (uint32_t root : rising_) {
    if (color[root]) continue;
    color[root] = 1;
    st.clear();
    st.push_back(frame(root));
    while (!st.empty()) {
      RankFrame& f = st.back();
      if (f.node == f.end) {
        color[f.cls] = 2;
        st.pop_back();
        continue;
      }
      const EGraph::PackedNode nd = *f.node;
      if (eg.is_filtered(nd.id) || f.child >= nd.nkids) {
        ++f.node;
        f.child = 0;
        continue;
      }
      const uint32_t k = nd.kids[f.child++].v;
      if (color[k] == 1) return Verdict::Cyclic;
      if (color[k] == 2 || !non_leaf(k) || rank_of(k) < lowest) continue;
      color[k] = 1;
      st.push_back(frame(k));  // `f` is not used after this
    }
  }
  return Verdict::Acyclic;
}

size_t CycleFilter::remove_new_cycles_after_iteration(EGraph& eg, const std::vector<EClassId>& touched) {
  if (mode_ == CycleFilterMode::None) return 0;
  eg.require_clean("CycleFilter::remove_new_cycles_after_iteration");
  switch (check_new_cycles(eg, touched)) {
    case Verdict::Acyclic: ++checked_; return 0;
    case Verdict::Cyclic: ++checked_; return remove_cycles(eg);
    case Verdict::Unknown: break;
  }
  ++walked_;
  return remove_new_cycles(eg, touched);
}

bool is_acyclic(const EGraph& eg, bool ignore_filtered) {
  eg.require_clean("is_acyclic");
  bool acyclic = true;
  std::vector<uint8_t> color;
  std::vector<uint32_t> frame_of;
  cycle_dfs(eg, ignore_filtered, color, frame_of, [&](std::vector<Frame>&, uint32_t) -> int {
    acyclic = false;
    return -1;
  });
  return acyclic;
}

}  // namespace tensat

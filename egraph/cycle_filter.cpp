// Cycle filtering: per-match pre-filter and the post-pass (see cycle_filter.h).
#include "egraph/cycle_filter.h"

#include <algorithm>

namespace tensat {

namespace {
// Operators of childless e-nodes (parameter leaves).
constexpr uint64_t kLeafOps = (uint64_t{1} << static_cast<unsigned>(Op::Num)) |
                              (uint64_t{1} << static_cast<unsigned>(Op::Sym));
}  // namespace

std::string_view cycle_filter_name(CycleFilterMode m) {
  switch (m) {
    case CycleFilterMode::None: return "none";
    case CycleFilterMode::Vanilla: return "vanilla";
    case CycleFilterMode::Efficient: return "efficient";
  }
  return "?";
}

std::optional<CycleFilterMode> cycle_filter_from_name(std::string_view s) {
  if (s == "none") return CycleFilterMode::None;
  if (s == "vanilla") return CycleFilterMode::Vanilla;
  if (s == "efficient") return CycleFilterMode::Efficient;
  return std::nullopt;
}

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
    if (eg.find(EClassId(c)) != EClassId(c)) continue;
    for (ENodeId nid : eg.eclass_canonical(EClassId(c)).nodes) {
      if (eg.is_filtered(nid)) continue;
      for (EClassId ch : eg.node(nid).children) {
        // A class of leaves only (parameters) reaches nothing and is never a query's target
        // (that holds a matched operator): leaving it out changes no answer.
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
  // Scratch buffers are members: reallocating class-sized arrays every iteration makes glibc
  // consolidate its free lists each time, which cost more than the walk itself.
  std::vector<uint8_t>& color = color_;
  color.assign(n, 0);
  auto& st = snap_stack_;  // (class, next child position)
  st.clear();
  uint32_t next = 1;
  snap_acyclic_ = true;
  for (uint32_t r = 0; r < n; ++r) {
    if (color[r] || eg.find(EClassId(r)) != EClassId(r)) continue;
    st.push_back({r, offsets_[r]});
    color[r] = 1;
    while (!st.empty()) {
      auto& [c, pos] = st.back();
      if (pos < offsets_[c + 1]) {
        uint32_t k = kids_[pos++];
        if (color[k] == 0) {
          color[k] = 1;
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
  if (visited_.size() < eg.class_capacity()) visited_.resize(eg.class_capacity(), 0);
  ++epoch_;
  stack_.clear();
  stack_.push_back(from.v);
  visited_[from.v] = epoch_;
  while (!stack_.empty()) {
    EClassId c(stack_.back());
    stack_.pop_back();
    for (ENodeId nid : eg.eclass(c).nodes) {
      if (eg.is_filtered(nid)) continue;
      for (EClassId ch : eg.node(nid).children) {
        EClassId k = eg.find(ch);
        if (k == to) return true;
        if (visited_[k.v] == epoch_) continue;
        visited_[k.v] = epoch_;
        stack_.push_back(k.v);
      }
    }
  }
  return false;
}

bool CycleFilter::reaches_mixed(const EGraph& eg, EClassId from, EClassId to) {
  // `from` was created in this iteration, after the snapshot. Walk the live e-graph through
  // classes that are new too, and ask the snapshot at every class it already knew. (The
  // e-graph keeps the older class as root on a union, so a class of the snapshot keeps its
  // id.) The walk stays among this iteration's additions, which are few per query.
  if (new_visited_.size() < eg.class_capacity()) new_visited_.resize(eg.class_capacity(), 0);
  ++new_epoch_;
  new_stack_.clear();
  new_stack_.push_back(from.v);
  new_visited_[from.v] = new_epoch_;
  while (!new_stack_.empty()) {
    EClassId c(new_stack_.back());
    new_stack_.pop_back();
    for (ENodeId nid : eg.eclass(c).nodes) {
      if (eg.is_filtered(nid)) continue;
      for (EClassId ch : eg.node(nid).children) {
        EClassId k = eg.find(ch);
        if (k == to) return true;
        if (new_visited_[k.v] == new_epoch_) continue;
        new_visited_[k.v] = new_epoch_;
        if (k.v < snap_classes_) {
          if (reaches_snapshot(eg, k, to)) return true;
        } else {
          new_stack_.push_back(k.v);
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

// ChangeTracker: distances to the classes changed since the last search (see change_tracker.h).
#include "egraph/change_tracker.h"

#include <algorithm>

namespace tensat {

void ChangeTracker::walk_up(const EGraph& eg, const std::vector<EClassId>& from, unsigned max_height,
                            std::vector<uint8_t>& dist) {
  dist.assign(eg.class_capacity(), 255);
  frontier_.clear();
  for (EClassId c : from) {
    EClassId r = eg.find(c);
    if (dist[r.v] == 0) continue;
    dist[r.v] = 0;
    frontier_.push_back(r.v);
  }
  for (unsigned d = 1; d <= max_height && !frontier_.empty(); ++d) {
    next_.clear();
    for (uint32_t c : frontier_) {
      for (ENodeId p : eg.eclass_canonical(EClassId(c)).parents) {
        uint32_t pc = eg.class_of(p).v;
        if (dist[pc] <= d) continue;
        dist[pc] = static_cast<uint8_t>(d);
        next_.push_back(pc);
      }
    }
    frontier_.swap(next_);
  }
}

void ChangeTracker::update(EGraph& eg, unsigned max_height) {
  eg.require_clean("ChangeTracker::update");
  max_height = std::min(max_height, 254u);
  eg.take_touched(touched_nodes_, touched_data_);
  walk_up(eg, touched_nodes_, max_height, dist_nodes_);
  walk_up(eg, touched_data_, max_height, dist_data_);
  num_touched_ = 0;
  near_.clear();
  for (size_t i = 0; i < dist_nodes_.size(); ++i) {
    num_touched_ += dist_nodes_[i] == 0 || dist_data_[i] == 0;
    if (dist_nodes_[i] != 255 || dist_data_[i] != 255) near_.push_back(EClassId(static_cast<uint32_t>(i)));
  }
  cache_used_ = 0;
}

const std::vector<EClassId>& ChangeTracker::near_roots(const EGraph& eg, Op op, int op_height, int height) {
  for (size_t i = 0; i < cache_used_; ++i) {
    const CachedRoots& c = cache_[i];
    if (c.op == op && c.op_height == op_height && c.height == height) return c.roots;
  }
  if (cache_used_ == cache_.size()) cache_.emplace_back();
  CachedRoots& c = cache_[cache_used_++];
  c.op = op;
  c.op_height = op_height;
  c.height = height;
  c.roots.clear();
  auto near = [&](EClassId k) { return dist_nodes_[k.v] <= op_height || dist_data_[k.v] <= height; };
  // Both lists are ascending: walk the shorter one. (Classes created after the update are in
  // neither: the tracker's arrays end before them, as the e-graph was clean then.)
  const std::vector<EClassId>& with_op = eg.classes_with_op(op);
  if (near_.size() < with_op.size()) {
    for (EClassId k : near_)
      if (((eg.class_ops(k) >> static_cast<unsigned>(op)) & 1u) && near(k)) c.roots.push_back(k);
  } else {
    for (EClassId k : with_op)
      if (k.v < dist_nodes_.size() && near(k)) c.roots.push_back(k);
  }
  return c.roots;
}

const std::vector<EClassId>& ChangeTracker::roots(const EGraph& eg, Op op, int op_height, int height,
                                                 const std::vector<EClassId>& extra) {
  const std::vector<EClassId>& base = near_roots(eg, op, op_height, height);
  if (extra.empty()) return base;
  std::vector<EClassId>& out = with_extra_;
  out.assign(base.begin(), base.end());
  if (mark_.size() < eg.class_capacity()) mark_.resize(eg.class_capacity(), 0);
  ++epoch_;
  for (EClassId c : extra) {
    EClassId r = eg.find(c);
    if (mark_[r.v] == epoch_ || !((eg.class_ops(r) >> static_cast<unsigned>(op)) & 1u)) continue;
    mark_[r.v] = epoch_;
    if (std::binary_search(base.begin(), base.end(), r)) continue;  // base is ascending
    out.push_back(r);
  }
  return out;
}

}  // namespace tensat

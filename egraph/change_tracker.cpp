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
  for (size_t i = 0; i < dist_nodes_.size(); ++i) num_touched_ += dist_nodes_[i] == 0 || dist_data_[i] == 0;
}

void ChangeTracker::roots(const EGraph& eg, Op op, int op_height, int height,
                          const std::vector<EClassId>& extra, std::vector<EClassId>& out) {
  out.clear();
  if (mark_.size() < eg.class_capacity()) mark_.resize(eg.class_capacity(), 0);
  ++epoch_;
  for (EClassId c : eg.classes_with_op(op)) {
    if (c.v >= dist_nodes_.size()) continue;
    if (dist_nodes_[c.v] <= op_height || dist_data_[c.v] <= height) {
      out.push_back(c);
      mark_[c.v] = epoch_;
    }
  }
  for (EClassId c : extra) {
    EClassId r = eg.find(c);
    if (mark_[r.v] == epoch_ || !eg.eclass_canonical(r).has_op(op)) continue;
    mark_[r.v] = epoch_;
    out.push_back(r);
  }
}

}  // namespace tensat

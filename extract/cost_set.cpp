// Cost sets and their bounded union (see cost_set.h).
#include "extract/cost_set.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tensat::extract {

int64_t CostSet::node_of(ClassIdx c) const {
  const auto it = std::lower_bound(items.begin(), items.end(), c,
                                   [](const CostItem& i, ClassIdx k) { return i.cls < k; });
  if (it == items.end() || it->cls != c) return -1;
  return it->node;
}

namespace {

// First position >= from whose class is >= c, by doubling steps then binary search: cheap
// when c is close to `from`, logarithmic otherwise (a child set is often much smaller than
// the first set and scattered over it).
size_t gallop(const std::vector<CostItem>& v, size_t from, ClassIdx c) {
  size_t lo = from, step = 1;
  while (lo + step < v.size() && v[lo + step].cls < c) {
    lo += step;
    step *= 2;
  }
  const size_t hi = std::min(lo + step + 1, v.size());
  const auto it = std::lower_bound(v.begin() + static_cast<std::ptrdiff_t>(lo),
                                   v.begin() + static_cast<std::ptrdiff_t>(hi), c,
                                   [](const CostItem& i, ClassIdx k) { return i.cls < k; });
  return static_cast<size_t>(it - v.begin());
}

}  // namespace

CostSetUnion::CostSetUnion(size_t num_classes, std::vector<double> node_costs)
    : cost_(std::move(node_costs)), stamp_(num_classes, 0) {
  // A recursive floating-point sum of k non-negative terms is within a relative
  // gamma_k ~ k * 2^-53 of the exact sum. The estimate (first total + new costs + own cost) and
  // the exact total of a union of at most num_classes terms then differ by less than
  // (2 * gamma + 4 * 2^-53) relative; 8 * (num_classes + 8) * 2^-53 covers that and the
  // rounding of the comparison itself (bound * (1 + margin)).
  margin_ = 8.0 * (static_cast<double>(num_classes) + 8.0) * std::ldexp(1.0, -53);
}

void CostSetUnion::next_epoch() {
  if (++epoch_ == 0) {  // wrapped around: stamps of 2^32 calls ago would look current
    std::fill(stamp_.begin(), stamp_.end(), 0);
    epoch_ = 1;
  }
}

void CostSetUnion::collect_new(std::span<const CostSet* const> sets) {
  const std::vector<CostItem>& f = sets[0]->items;
  // Locals, so the compiler need not reload members after each store into the stamps.
  uint32_t* const stamp = stamp_.data();
  const uint32_t epoch = epoch_;
  const double* const cost = cost_.data();
  double sum = 0.0;
  new_.clear();
  size_t rest = 0;
  for (size_t s = 1; s < sets.size(); ++s) rest += sets[s]->size();
  // Membership in the first set: when the other sets are not much smaller, stamp the first
  // set's classes (one store per item, no branches) and look each class up; otherwise a
  // galloping search per class. (A merge scan is slower than both: its branches are
  // unpredictable.)
  const bool stamp_first = rest * 8 >= f.size();
  if (stamp_first)
    for (const CostItem& it : f) stamp[it.cls] = epoch;
  for (size_t s = 1; s < sets.size(); ++s) {
    size_t pos = 0;
    for (const CostItem& it : sets[s]->items) {
      if (!stamp_first) {
        pos = gallop(f, pos, it.cls);
        if (pos < f.size() && f[pos].cls == it.cls) continue;  // the first set wins
      }
      if (stamp[it.cls] == epoch) continue;  // in the first set, or added by an earlier set
      stamp[it.cls] = epoch;
      new_.push_back(it);
      sum += cost[it.node];
    }
  }
  new_sum_ = sum;
}

void CostSetUnion::build(const CostSet& first, CostSet& out) {
  std::sort(new_.begin(), new_.end(),
            [](const CostItem& a, const CostItem& b) { return a.cls < b.cls; });
  const std::vector<CostItem>& f = first.items;
  out.items.resize(f.size() + new_.size());
  CostItem* o = out.items.data();
  // The same additions in the same order as summing the merged set from the start: the
  // total is bit-identical to a plain merge-then-sum.
  double sum = 0.0;
  size_t i = 0;
  for (const CostItem& add : new_) {
    for (; i < f.size() && f[i].cls < add.cls; ++i) {
      *o++ = f[i];
      sum += cost_[f[i].node];
    }
    *o++ = add;
    sum += cost_[add.node];
  }
  for (; i < f.size(); ++i) {
    *o++ = f[i];
    sum += cost_[f[i].node];
  }
  out.total = sum;
}

bool CostSetUnion::union_below(std::span<const CostSet* const> sets, ClassIdx own_class,
                               NodeIdx own_node, double bound, CostSet& out) {
  ++stats_.calls;
  const CostSet& first = *sets[0];
  const double own = cost_[own_node];
  const double limit = bound * (1.0 + margin_);
  // The union keeps the first set whole: its total is an exact lower bound (cost_set.h), and
  // with the own node's cost added a lower bound up to the rounding margin.
  if (!(first.total < bound) || first.total + own >= limit) {
    ++stats_.cut_first;
    return false;
  }
  if (first.node_of(own_class) >= 0) {
    ++stats_.cycles;
    return false;
  }
  next_epoch();
  collect_new(sets);
  if (stamp_[own_class] == epoch_) {
    ++stats_.cycles;
    return false;
  }
  if (first.total + new_sum_ + own >= limit) {
    ++stats_.cut_approx;
    return false;
  }
  ++stats_.built;
  new_.push_back({own_class, own_node});
  build(first, out);
  return out.total < bound;
}

CostSet CostSetUnion::union_of(std::span<const CostSet* const> sets) {
  CostSet out;
  next_epoch();
  collect_new(sets);
  build(*sets[0], out);
  return out;
}

}  // namespace tensat::extract

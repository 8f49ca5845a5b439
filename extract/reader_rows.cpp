// Rows over the readers of a class, separated in IlpModel::separate()'s rounds
// (formulation.h; extract/README.md, "Exclusive-reader rows", "Read-class rows, lifted
// exclusive-reader rows, used pairs"): read-class rows and exclusive-reader rows.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "extract/formulation.h"
#include "extract/separated_rows.h"

namespace tensat::extract {

// Read-class rows. Every extraction this project returns is pruned (nothing chosen that the
// roots do not reach: check_extraction()), and pruning never makes one dearer, so the optimum
// is among the pruned ones, where a class that is no root is used only where a chosen node
// reads it:
//     x(K) <= sum over the columns n reading K of x(n).
// Only for classes that are not mandatory (those are used, and their readers may be outside
// the part: blocks.h) and not roots; every reader a pruned extraction can choose is then a
// column of the part (a node of another block reading K would make K mandatory). The rows the
// LP misses without them: a cut with a ">=" side (an odd cover over the leaves of merged
// convs) met by taking a leaf that nothing reads (Inception-v3: the unrelu'd conv of a branch
// at 1/2, bought for the cut alone).
int IlpModel::separate_read_classes(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                                    std::vector<double>& rval, std::vector<double>& rlb,
                                    std::vector<double>& rub) {
  constexpr double kViolation = 1e-4;
  constexpr int kMaxCuts = 500;
  constexpr size_t kMaxUp = 64;  // rows per violated class, its own and its readers' classes'
  const Requirements& req = *req_;
  if (!req.computed || num_x() == 0) return 0;
  ensure_col_kids();
  std::vector<char> root(g_.classes.size(), 0);
  for (ClassIdx c : g_.roots) root[c] = 1;
  auto rowless = [&](ClassIdx k) {
    return class_cols_[k].empty() || !in_part(k) || root[k] || req.mandatory[k] || read_row_added_.count(k);
  };
  int added = 0;
  std::map<int, double> row;
  std::vector<ClassIdx> up;
  for (ClassIdx k = 0; k < g_.classes.size() && added < kMaxCuts; ++k) {
    if (rowless(k)) continue;
    double used = 0.0, read = 0.0;
    for (int i : class_cols_[k]) used += x[i];
    if (used <= kViolation) continue;
    for (int r : col_readers_[k]) read += x[r];
    if (used <= read + kViolation) continue;
    // The violated row, and those of the classes its free readers are in, upwards: the LP
    // would otherwise meet it by taking a free reader (a split, a noop), then that reader's
    // reader, one round each, and a round that leaves the objective where it was ends the
    // rounds.
    up.assign(1, k);
    for (size_t h = 0; h < up.size() && added < kMaxCuts; ++h) {
      if (!read_row_added_.insert(up[h]).second) continue;  // (queued twice in this walk)
      row.clear();
      for (int i : class_cols_[up[h]]) row[i] = 1.0;
      for (int r : col_readers_[up[h]]) row[r] -= 1.0;
      append_row(row, -COIN_DBL_MAX, 0.0, rstart, rind, rval, rlb, rub);
      ++added;
      for (int r : col_readers_[up[h]]) {
        const ENode& reader = g_.nodes[node_of_col_[static_cast<size_t>(r)]];
        if (reader.cost > 0.0) continue;  // (the LP pays for raising it: the next round's job)
        if (up.size() < kMaxUp && !rowless(reader.eclass)) up.push_back(reader.eclass);
      }
    }
  }
  return added;
}

// Exclusive-reader rows. For a class K and nodes n_1..n_m reading K, from classes P_1..P_m of
// which no acyclic extraction uses two (or from one class), at most one n_j is chosen, and it
// needs K, so
//     sum_j x(n_j) <= x(K).
// The per-(class, child class) rows of build() are the case of one class; this is what the LP
// misses where alternative concat trees (Inception-v3: a module's output, six branch tensors
// concatenated in some binary tree, with relu after it or pushed into it) share a subtree: each
// shape is taken at 1/16-5/16 and the shared subtree pays only the largest share, about four
// concats in all where every tree needs five.
// When do two nodes r (class P) and s (class Q != P) occur in one extraction? Let R(c) be the
// classes reachable from c over the part's columns (c included), the entries the classes of
// the part read from outside it (or roots), and R'(e) what entry e reaches without passing
// another entry. Walking up from P over chosen readers reaches an entry; let e_P be the first
// one, so P is in R'(e_P); likewise e_Q. If e_P != e_Q: two different entries. Otherwise some
// used class reaches both P and Q over chosen nodes; take a lowest one X: X = P (then Q is in R
// of one of r's child classes), X = Q (P in R of a child of s), or X's chosen node has two
// different child classes of which one reaches P and the other Q (a fork). So r and s exclude
// each other when none of these holds in the part's structure (over all columns, so it holds
// for every extraction). Needs the part's class graph acyclic and at most
// kMaxClasses classes with columns (the reach sets are bitsets); otherwise no rows.
struct IlpModel::ReachIndex {
  bool ok = false;
  std::vector<int> dense;               // per class: its index among the part's classes, or -1
  size_t words = 0;
  std::vector<uint64_t> bits;           // per dense class: R(c)
  std::vector<int> entries;             // dense
  std::vector<uint64_t> entry_bits;     // per entry: R'(e), its reach not through another entry
  std::vector<int> forks;               // columns with two or more child classes
  std::map<std::pair<ClassIdx, ClassIdx>, bool> apart;  // class pairs checked (P < Q)
  bool reaches(int from, int to) const {
    return (bits[static_cast<size_t>(from) * words + static_cast<size_t>(to) / 64] >> (to % 64)) & 1;
  }
  bool entry_reaches(size_t e, int to) const {
    return (entry_bits[e * words + static_cast<size_t>(to) / 64] >> (to % 64)) & 1;
  }
};

int IlpModel::separate_exclusive_readers(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                                         std::vector<double>& rval, std::vector<double>& rlb,
                                         std::vector<double>& rub) {
  constexpr double kEps = 1e-6, kViolation = 1e-4;
  constexpr size_t kMaxClasses = 4096;
  constexpr int kMaxCuts = 500;
  constexpr int64_t kMaxSteps = 2'000'000;  // fork children, entries and child classes visited per round
  if (num_x() == 0) return 0;
  ensure_col_kids();
  const size_t C = g_.classes.size();
  if (!reach_) {
    reach_ = std::make_shared<ReachIndex>();
    ReachIndex& r = *reach_;
    // Children before parents (part_order()); a cycle: no rows.
    const PartOrder& po = part_order();
    r.dense = po.dense;
    const std::vector<ClassIdx>& cls = po.cls;
    const size_t P = cls.size();
    if (P > kMaxClasses || !po.acyclic) return 0;
    r.words = (P + 63) / 64;
    r.bits.assign(P * r.words, 0);
    for (ClassIdx oc : po.order) {  // children first
      const int d = r.dense[oc];
      uint64_t* row = &r.bits[static_cast<size_t>(d) * r.words];
      row[static_cast<size_t>(d) / 64] |= uint64_t{1} << (d % 64);
      for (int i : class_cols_[cls[static_cast<size_t>(d)]])
        for (ClassIdx k : col_kids_[static_cast<size_t>(i)]) {
          const uint64_t* kid = &r.bits[static_cast<size_t>(r.dense[k]) * r.words];
          for (size_t w = 0; w < r.words; ++w) row[w] |= kid[w];
        }
    }
    // Entries: the part's classes read by a node outside it that may be chosen there (alive in
    // the reduced problem; only a mandatory class of this part can have one, blocks.h), and the
    // roots. Dead nodes are no readers: neither the whole problem's model nor another part's
    // has a column for them (counting them made NasNet-A's restricted blocks need CBC, 15k work
    // each, where their LP alone proves them, 2-3k).
    std::vector<char> entry(C, 0);
    for (ClassIdx c : g_.roots)
      if (r.dense[c] >= 0) entry[c] = 1;
    for (NodeIdx n = 0; n < g_.nodes.size(); ++n) {
      if (col_of_node_[n] >= 0) continue;  // a column: inside the part
      const ClassIdx pc = g_.nodes[n].eclass;
      if (in_part(pc) && !red_.class_free[pc]) continue;  // a node of the part the model dropped
      if (!red_.node_alive[n] || !red_.class_alive[pc]) continue;  // no extraction of the problem uses it
      for (ClassIdx k : g_.nodes[n].children)
        if (r.dense[k] >= 0) entry[k] = 1;
    }
    for (ClassIdx c = 0; c < C; ++c)
      if (entry[c]) r.entries.push_back(r.dense[c]);
    r.entry_bits.assign(r.entries.size() * r.words, 0);
    std::vector<ClassIdx> stack;
    for (size_t e = 0; e < r.entries.size(); ++e) {
      uint64_t* row = &r.entry_bits[e * r.words];
      auto mark = [&](ClassIdx c) {
        const auto d = static_cast<size_t>(r.dense[c]);
        if ((row[d / 64] >> (d % 64)) & 1) return;
        row[d / 64] |= uint64_t{1} << (d % 64);
        stack.push_back(c);
      };
      mark(cls[static_cast<size_t>(r.entries[e])]);
      while (!stack.empty()) {
        const ClassIdx c = stack.back();
        stack.pop_back();
        for (int i : class_cols_[c])
          for (ClassIdx k : col_kids_[static_cast<size_t>(i)])
            if (!entry[k]) mark(k);
      }
    }
    for (size_t i = 0; i < num_x(); ++i)
      if (col_kids_[i].size() >= 2) r.forks.push_back(static_cast<int>(i));
    r.ok = true;
  }
  ReachIndex& r = *reach_;
  if (!r.ok) return 0;
  int64_t steps = 0;
  // Whether no extraction can use both classes p != q through two different entries or a fork
  // (judged over the part's structure; the chain through r's or s's children is checked per
  // column below).
  auto classes_apart = [&](ClassIdx p, ClassIdx q) {
    const auto key = std::minmax(p, q);
    if (const auto it = r.apart.find(key); it != r.apart.end()) return it->second;
    const int dp = r.dense[p], dq = r.dense[q];
    auto one_side = [](const std::vector<int>& a, const std::vector<int>& b) {
      // No i in a and j in b with i != j: one of them empty, or both the same single element.
      return a.empty() || b.empty() || (a.size() == 1 && b.size() == 1 && a[0] == b[0]);
    };
    std::vector<int> a, b;
    steps += static_cast<int64_t>(r.entries.size());
    for (size_t e = 0; e < r.entries.size(); ++e) {
      if (r.entry_reaches(e, dp)) a.push_back(static_cast<int>(e));
      if (r.entry_reaches(e, dq)) b.push_back(static_cast<int>(e));
    }
    bool apart = one_side(a, b);
    for (size_t f = 0; apart && f < r.forks.size(); ++f) {
      const auto& kids = col_kids_[static_cast<size_t>(r.forks[f])];
      steps += static_cast<int64_t>(kids.size());
      a.clear();
      b.clear();
      for (size_t j = 0; j < kids.size(); ++j) {
        if (r.reaches(r.dense[kids[j]], dp)) a.push_back(static_cast<int>(j));
        if (r.reaches(r.dense[kids[j]], dq)) b.push_back(static_cast<int>(j));
      }
      apart = one_side(a, b);
    }
    r.apart.emplace(key, apart);
    return apart;
  };
  // Whether no child class of column i reaches class q.
  auto below_misses = [&](int i, ClassIdx q) {
    for (ClassIdx k : col_kids_[static_cast<size_t>(i)])
      if (r.reaches(r.dense[k], r.dense[q])) return false;
    return true;
  };
  auto cls_of = [&](int i) { return g_.nodes[node_of_col_[static_cast<size_t>(i)]].eclass; };
  int added = 0;
  std::vector<int> cand, chosen;
  // Whether column i and every column chosen so far exclude each other.
  auto excludes_chosen = [&](int i) {
    for (int j : chosen) {
      const ClassIdx p = cls_of(i), q = cls_of(j);
      if (p == q) continue;
      steps += static_cast<int64_t>(col_kids_[static_cast<size_t>(i)].size() +
                                    col_kids_[static_cast<size_t>(j)].size());
      if (!below_misses(i, q) || !below_misses(j, p) || !classes_apart(p, q)) return false;
    }
    return true;
  };
  std::map<int, double> row;
  for (ClassIdx k = 0; k < C && added < kMaxCuts && steps < kMaxSteps; ++k) {
    if (r.dense[k] < 0 || col_readers_[k].size() < 2) continue;
    double xk = 0.0;
    for (int i : class_cols_[k]) xk += x[i];
    cand.clear();
    double sum = 0.0;
    for (int i : col_readers_[k])
      if (x[i] > kEps) {
        cand.push_back(i);
        sum += x[i];
      }
    if (sum <= xk + kViolation) continue;
    std::sort(cand.begin(), cand.end(), [&](int a, int b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
    chosen.clear();
    double lhs = 0.0;
    for (int i : cand) {
      if (steps > kMaxSteps) break;
      if (!excludes_chosen(i)) continue;
      chosen.push_back(i);
      lhs += x[i];
    }
    if (lhs <= xk + kViolation) continue;
    // Lifted (IlpOptions::lift_exclusive_readers): the readers the LP leaves at 0 that exclude
    // every reader chosen join the row (valid, as every pair is checked; the same violation
    // now, a stronger row for the next rounds).
    if (opts_.lift_exclusive_readers)
      for (int i : col_readers_[k])
        if (x[i] <= kEps && steps <= kMaxSteps && excludes_chosen(i)) chosen.push_back(i);
    row.clear();
    for (int i : chosen) row[i] = 1.0;
    for (int i : class_cols_[k]) row[i] -= 1.0;
    append_row(row, -COIN_DBL_MAX, 0.0, rstart, rind, rval, rlb, rub);
    ++added;
  }
  return added;
}

}  // namespace tensat::extract

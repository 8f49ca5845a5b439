// The cutting planes IlpModel::separate()'s rounds add (formulation.h), part one: node-level
// requirement rows and path cuts, and the column/child index every separation reads; each
// appends only the rows the LP optimum violates (extract/README.md, "Requirements", "Path
// cuts"). The odd covers are in odd_covers.cpp, the rows over a class's readers in
// reader_rows.cpp.
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

// For a class C and a class D required by some of C's nodes (Req(n) = its child classes and
// what they require), the nodes of C that require D exclude each other, so
// sum_{n in C, D in Req(n)} x_n <= sum x(D). The family is quadratic: only the rows the LP
// optimum x violates are appended. Returns how many.
int IlpModel::separate_requirements(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                                    std::vector<double>& rval, std::vector<double>& rlb,
                                    std::vector<double>& rub) {
  const Requirements& req = *req_;
  if (!req.computed) return 0;
  const size_t V = req.class_of.size(), W = req.words;
  std::vector<double> sum(V, 0.0);
  std::vector<uint32_t> touched;
  std::vector<std::vector<uint64_t>> nreq;
  int added = 0;
  for (ClassIdx c = 0; c < g_.classes.size(); ++c) {
    if (req.dense[c] < 0 || req.unusable[c] || !in_part(c)) continue;
    const auto& cols = class_cols_[c];
    double total = 0.0;
    for (int i : cols) total += x[i];
    if (total < 1e-6) continue;
    nreq.assign(cols.size(), std::vector<uint64_t>(W, 0));
    touched.clear();
    for (size_t j = 0; j < cols.size(); ++j) {
      auto& b = nreq[j];
      for (ClassIdx k : g_.child_classes(node_of_col_[cols[j]])) {
        if (req.dense[k] < 0) continue;
        const uint64_t* rk = req.of(k);
        for (size_t w = 0; w < W; ++w) b[w] |= rk[w];
        const auto dk = static_cast<size_t>(req.dense[k]);
        b[dk / 64] |= uint64_t{1} << (dk % 64);
      }
      const double xv = x[cols[j]];
      if (xv < 1e-9) continue;
      for (size_t w = 0; w < W; ++w)
        for (uint64_t bits = b[w]; bits; bits &= bits - 1) {
          const auto d = static_cast<uint32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
          if (sum[d] == 0.0) touched.push_back(d);
          sum[d] += xv;
        }
    }
    for (uint32_t d : touched) {
      const ClassIdx dc = req.class_of[d];
      if (!in_part(dc)) {  // mandatory (blocks.h): always there
        sum[d] = 0.0;
        continue;
      }
      double have = 0.0;
      for (int i : class_cols_[dc]) have += x[i];
      if (sum[d] - have > 1e-4) {
        for (size_t j = 0; j < cols.size(); ++j)
          if ((nreq[j][d / 64] >> (d % 64)) & 1) {
            rind.push_back(cols[j]);
            rval.push_back(1.0);
          }
        for (int i : class_cols_[dc]) {
          rind.push_back(i);
          rval.push_back(-1.0);
        }
        rstart.push_back(static_cast<int>(rind.size()));
        rlb.push_back(-COIN_DBL_MAX);
        rub.push_back(0.0);
        ++added;
      }
      sum[d] = 0.0;
    }
  }
  return added;
}

void IlpModel::ensure_col_kids() {
  if (!col_kids_.empty() || num_x() == 0) return;
  col_kids_.resize(num_x());
  col_readers_.assign(g_.classes.size(), {});
  for (size_t i = 0; i < num_x(); ++i)
    for (ClassIdx k : g_.child_classes(node_of_col_[i]))
      if (!given(k) && !class_cols_[k].empty()) {
        col_kids_[i].push_back(k);
        col_readers_[k].push_back(static_cast<int>(i));
      }
}

const IlpModel::PartOrder& IlpModel::part_order() {
  if (part_order_) return *part_order_;
  ensure_col_kids();
  PartOrder& o = part_order_.emplace();
  const size_t C = g_.classes.size();
  o.dense.assign(C, -1);
  for (ClassIdx c = 0; c < C; ++c)
    if (!class_cols_[c].empty() && in_part(c)) {
      o.dense[c] = static_cast<int>(o.cls.size());
      o.cls.push_back(c);
    }
  // Kahn over the column-child edges (each counted once per column, as col_readers_ holds it).
  std::vector<size_t> pending(o.cls.size(), 0);
  for (size_t d = 0; d < o.cls.size(); ++d) {
    for (int i : class_cols_[o.cls[d]]) pending[d] += col_kids_[static_cast<size_t>(i)].size();
    if (pending[d] == 0) o.order.push_back(o.cls[d]);
  }
  for (size_t h = 0; h < o.order.size(); ++h)
    for (int r : col_readers_[o.order[h]]) {
      const ClassIdx q = g_.nodes[node_of_col_[static_cast<size_t>(r)]].eclass;
      if (o.dense[q] >= 0 && --pending[static_cast<size_t>(o.dense[q])] == 0) o.order.push_back(q);
    }
  o.acyclic = o.order.size() == o.cls.size();
  return o;
}

// Path cuts: for a class t, a class r0 and a set R of classes with r0 in R and t not in R,
// call a node of a class in R an exit when none of its child classes is in R or is t. In an
// acyclic extraction that uses r0, follow from r0 a chosen node's child class in R or t, as
// long as there is one: the walk ends at t or at a chosen exit. So
//   x(r0) <= x(t) + sum of the exits' x
// (x(C): the sum over C's columns). It is what the LP misses where a merged conv is reached
// along two paths: the LP takes each path at 1/2 and pays the shared conv once at 1/2
// (Inception-v3: the relu'd and the plain output of one merged conv, each split; extract/
// README.md, "Path cuts"). Separated over the LP's support: per fractional class t, the
// classes whose columns in use reach it; per such r0 (nearest first) with x(r0) > x(t), R =
// the classes on those paths from r0 to t. Only rows the LP optimum violates are appended;
// returns how many.
int IlpModel::separate_path_cuts(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                                 std::vector<double>& rval, std::vector<double>& rlb, std::vector<double>& rub) {
  constexpr double kEps = 1e-6, kViolation = 1e-4;
  constexpr int kMaxCuts = 500, kPerTarget = 2;
  constexpr int64_t kMaxSteps = 2'000'000;  // class and column visits per round
  const size_t C = g_.classes.size();
  ensure_col_kids();
  std::vector<double> xc(C, 0.0);
  std::vector<ClassIdx> used;  // classes with columns in use
  for (ClassIdx c = 0; c < C; ++c) {
    if (class_cols_[c].empty()) continue;
    for (int i : class_cols_[c]) xc[c] += x[i];
    if (xc[c] > kEps) used.push_back(c);
  }
  // Support parents: per class, the classes that have a column in use reading it.
  std::vector<std::vector<ClassIdx>> parents(C);
  for (ClassIdx c : used)
    for (int i : class_cols_[c])
      if (x[i] > kEps)
        for (ClassIdx k : col_kids_[static_cast<size_t>(i)])
          if (parents[k].empty() || parents[k].back() != c) parents[k].push_back(c);
  std::vector<uint32_t> anc_mark(C, 0), in_r(C, 0);
  uint32_t anc_stamp = 0, r_stamp = 0;
  std::vector<ClassIdx> anc, stack;
  std::vector<int> cols;
  int added = 0;
  int64_t steps = 0;
  for (ClassIdx t : used) {
    if (added >= kMaxCuts || steps > kMaxSteps) break;
    if (xc[t] > 1.0 - kEps || parents[t].empty()) continue;
    // The classes that reach t over columns in use, nearest first (breadth-first).
    ++anc_stamp;
    anc.clear();
    anc_mark[t] = anc_stamp;
    for (size_t h = 0, cur = 0;; ++h) {
      const ClassIdx c = h == 0 ? t : anc[cur++];
      for (ClassIdx p : parents[c]) {
        ++steps;
        if (anc_mark[p] == anc_stamp) continue;
        anc_mark[p] = anc_stamp;
        anc.push_back(p);
      }
      if (cur >= anc.size()) break;
    }
    int here = 0;
    for (ClassIdx r0 : anc) {
      if (here >= kPerTarget || added >= kMaxCuts || steps > kMaxSteps) break;
      if (xc[r0] <= xc[t] + kViolation) continue;
      // R: the classes on the paths (over columns in use) from r0 to t.
      ++r_stamp;
      stack.assign(1, r0);
      in_r[r0] = r_stamp;
      std::vector<ClassIdx> r{r0};
      while (!stack.empty()) {
        const ClassIdx c = stack.back();
        stack.pop_back();
        for (int i : class_cols_[c]) {
          if (x[i] <= kEps) continue;
          for (ClassIdx k : col_kids_[static_cast<size_t>(i)]) {
            ++steps;
            if (k == t || anc_mark[k] != anc_stamp || in_r[k] == r_stamp) continue;
            in_r[k] = r_stamp;
            r.push_back(k);
            stack.push_back(k);
          }
        }
      }
      // The exits and the violation x(r0) - x(t) - sum of the exits' x.
      double exits = 0.0;
      cols.clear();
      for (ClassIdx c : r)
        for (int i : class_cols_[c]) {
          bool exit = true;
          for (ClassIdx k : col_kids_[static_cast<size_t>(i)]) {
            ++steps;
            if (k == t || in_r[k] == r_stamp) {
              exit = false;
              break;
            }
          }
          if (c == r0) {
            if (!exit) cols.push_back(i);  // +1 (an exit of r0 would be +1 - 1)
          } else if (exit) {
            exits += x[i];
            cols.push_back(-1 - i);  // -1
          }
        }
      double lhs = 0.0;
      for (int i : cols)
        if (i >= 0) lhs += x[i];
      if (lhs - xc[t] - exits <= kViolation) continue;
      for (int i : class_cols_[t]) cols.push_back(-1 - i);
      std::sort(cols.begin(), cols.end());
      if (!seen_paths_.insert(cols).second) continue;
      for (int i : cols) {
        rind.push_back(i >= 0 ? i : -1 - i);
        rval.push_back(i >= 0 ? 1.0 : -1.0);
      }
      rstart.push_back(static_cast<int>(rind.size()));
      rlb.push_back(-COIN_DBL_MAX);
      rub.push_back(0.0);
      ++added;
      ++here;
    }
  }
  return added;
}

}  // namespace tensat::extract

// Odd-cover cuts and deep odd covers, separated in IlpModel::separate()'s rounds
// (formulation.h; extract/README.md, "Odd-cover cuts", "Deep odd covers").
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

namespace {

// The items linked by a shared key (`users`: key -> the items that have it, in increasing
// order; a key of more than `max_users` items links none), as sorted adjacency lists.
std::vector<std::vector<uint32_t>> shared_key_graph(const std::map<ClassIdx, std::vector<uint32_t>>& users,
                                                    size_t items, size_t max_users) {
  std::vector<std::vector<uint32_t>> adj(items);
  for (const auto& [k, u] : users)
    for (size_t a = 0; a < u.size() && u.size() <= max_users; ++a)
      for (size_t b = a + 1; b < u.size(); ++b) {
        adj[u[a]].push_back(u[b]);
        adj[u[b]].push_back(u[a]);
      }
  for (auto& a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  return adj;
}

// Calls f(a, b, c) for the triangles a < b < c of `adj` until f returns false or
// `max_examined` candidates (a, b, c) were looked at.
template <class F>
void for_each_triangle(const std::vector<std::vector<uint32_t>>& adj, int64_t max_examined, F&& f) {
  int64_t examined = 0;
  for (uint32_t a = 0; a < adj.size(); ++a)
    for (uint32_t b : adj[a]) {
      if (b <= a) continue;
      for (uint32_t c : adj[b]) {
        if (++examined > max_examined) return;
        if (c <= b || !std::binary_search(adj[a].begin(), adj[a].end(), c)) continue;
        if (!f(a, b, c)) return;
      }
    }
}

}  // namespace

// Odd-cover cuts ({0,1/2} Chvatal-Gomory cuts over the mandatory class rows). A mandatory
// class c is computed by one of its nodes n, and n needs each of its child classes, so
//     sum over the distinct providers p of c's nodes >= 1
// holds, where the provider of n is x_n or X(k) = sum x(k) for one (non-free) child class k
// of n. Three mandatory classes whose nodes share providers (Inception-v3: three 1x1 convs on
// one input, each computed alone or as one half of a pairwise-merged conv, whose split class
// the two halves share) give, summed, halved and rounded up,
//     sum_p ceil(a_p / 2) p >= 2        (a_p: how many of the three rows hold p),
// which the LP's answer "every merged pair at 1/2" (1.5) violates, while every integer choice
// pays for two providers (extract/README.md, "What the LP relaxation misses"). Triangles are
// looked for among the fractional mandatory classes linked by a shared child class; only cuts
// the LP optimum x violates are appended. Returns how many.
int IlpModel::separate_odd_covers(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                                  std::vector<double>& rval, std::vector<double>& rlb, std::vector<double>& rub) {
  const Requirements& req = *req_;
  if (!req.computed) return 0;
  constexpr double kEps = 1e-6;
  constexpr int kMaxCuts = 500;
  constexpr int64_t kMaxTriangles = 200000;  // examined per round
  auto class_value = [&](ClassIdx k) {
    double v = 0.0;
    for (int i : class_cols_[k]) v += x[i];
    return v;
  };
  // A mandatory child class (req.mandatory includes the roots) is no provider: X(k) = 1 in
  // every extraction, so a cut holding it (the shared input of the three convs) is never
  // violated.
  auto provider_class = [&](ClassIdx k) { return !given(k) && !req.mandatory[k]; };
  // The fractional mandatory classes; per such class the provider classes of each of its
  // columns (sorted) and their union; and the classes in use that share a provider class.
  std::vector<ClassIdx> frac;
  std::vector<std::vector<std::vector<ClassIdx>>> col_kids;  // per frac class, per column
  std::vector<std::vector<ClassIdx>> kids;                   // per frac class: the union
  std::map<ClassIdx, std::vector<uint32_t>> users;           // child class -> indices into frac
  for (ClassIdx c = 0; c < g_.classes.size(); ++c) {
    if (!red_.class_alive[c] || red_.class_free[c] || !in_part(c) || class_cols_[c].size() < 2 || !req.mandatory[c])
      continue;
    double top = 0.0;
    for (int i : class_cols_[c]) top = std::max(top, x[i]);
    if (top > 1.0 - kEps) continue;
    const auto f = static_cast<uint32_t>(frac.size());
    frac.push_back(c);
    auto& per_col = col_kids.emplace_back();
    auto& all = kids.emplace_back();
    for (int i : class_cols_[c]) {
      auto& ks = per_col.emplace_back();
      for (ClassIdx k : g_.child_classes(node_of_col_[static_cast<size_t>(i)]))
        if (provider_class(k)) ks.push_back(k);
      all.insert(all.end(), ks.begin(), ks.end());
      if (x[i] < kEps) continue;
      for (ClassIdx k : ks) {
        auto& u = users[k];
        if (u.empty() || u.back() != f) u.push_back(f);
      }
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
  }
  const auto adj = shared_key_graph(users, frac.size(), SIZE_MAX);
  int added = 0;
  std::map<int64_t, int> count;        // provider -> rows holding it (col i: i; class k: -1 - k)
  std::map<ClassIdx, int> kid_count;   // child class -> classes of the triple using it
  std::vector<int64_t> prov;
  std::map<int, double> row;
  for_each_triangle(adj, kMaxTriangles, [&](uint32_t a, uint32_t b, uint32_t c) {
    std::array<ClassIdx, 3> tri{frac[a], frac[b], frac[c]};
    if (seen_odd_.count(tri)) return true;
    const std::array<uint32_t, 3> members{a, b, c};
    kid_count.clear();
    for (uint32_t t : members)
      for (ClassIdx k : kids[t]) ++kid_count[k];
    count.clear();
    for (uint32_t t : members) {
      prov.clear();
      const auto& cols = class_cols_[frac[t]];
      for (size_t j = 0; j < cols.size(); ++j) {
        int64_t p = cols[j];
        for (ClassIdx k : col_kids[t][j])
          if (kid_count[k] >= 2) {
            p = -1 - static_cast<int64_t>(k);
            break;
          }
        prov.push_back(p);
      }
      std::sort(prov.begin(), prov.end());
      prov.erase(std::unique(prov.begin(), prov.end()), prov.end());
      for (int64_t p : prov) ++count[p];
    }
    double lhs = 0.0;
    for (const auto& [p, n] : count) {
      const double coef = (n + 1) / 2;
      lhs += coef * (p >= 0 ? x[p] : class_value(static_cast<ClassIdx>(-1 - p)));
    }
    if (lhs > 2.0 - 1e-4) return true;
    seen_odd_.insert(tri);
    row.clear();
    for (const auto& [p, n] : count) {
      const double coef = (n + 1) / 2;
      if (p >= 0) {
        row[static_cast<int>(p)] += coef;
      } else {
        for (int i : class_cols_[static_cast<ClassIdx>(-1 - p)]) row[i] += coef;
      }
    }
    append_row(row, 2.0, COIN_DBL_MAX, rstart, rind, rval, rlb, rub);
    return ++added < kMaxCuts;
  });
  return added;
}

// Deep odd-cover cuts: the odd-cover cut (above) with its providers further down. An item is
// a mandatory class i, or two classes {a, b} one of which every extraction of the part uses
// (neither mandatory: see below). The classes its columns reach (over all its columns) form its
// region; the region's leaves T are the classes none of whose columns reads a class with
// columns (the merged convs themselves), the rest R; an exit is a column of a class in R that
// reads no class with columns. Following the chosen nodes down from the item's used class ends
// at a leaf or at a chosen exit (as for the path cuts), so
//     sum_{t in T} x(t) + sum of the exits' x >= 1.
// Three such rows, summed, halved and rounded up ({0,1/2} Chvatal-Gomory):
//     sum_t ceil(n_t / 2) x(t) + sum_e ceil(m_e / 2) x_e >= 2   (n_t, m_e: how many of the rows hold it).
// Inception-v3: three 1x1 convs on one input, one plain and two relu'd, computed alone or as a
// pairwise-merged conv (several variants: either order, relu fused or not), split, and relu'd
// before or after the split. The LP spreads over the merged convs (each reaching two of the
// three convs along two paths: its split and the split of its relu) and pays about one conv
// where every integer choice pays two; the odd cover over direct child classes does not see it
// (the shared classes are two levels down). Where the plain conv's output is read either as it
// is (relu after the module's concat) or relu'd (relu pushed through the concat), neither class
// is mandatory, but one of the two is always used: that pair is the third item. A pair {a, b}
// (fractional, not mandatory, x(a) + x(b) >= 1 in the LP) is an item when without both no
// mandatory class of the part can be computed (bottom-up over the part's columns; the classes
// outside it are given). The regions follow all columns, not only those in use: a row over the
// columns in use only was met by the next LP with the other variants of the same merged convs
// (Inception-v3: 3 of its 5 open blocks closed by their LP with all columns, none without).
// Returns how many rows were appended (only violated ones).
int IlpModel::separate_deep_odd_covers(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                                       std::vector<double>& rval, std::vector<double>& rlb,
                                       std::vector<double>& rub) {
  const Requirements& req = *req_;
  if (!req.computed || num_x() == 0) return 0;
  constexpr double kEps = 1e-6;
  constexpr int kMaxCuts = 500;
  // Bounds on the work per round (on the whole 13k-node NasRNN problem, without them, the
  // regions of thousands of mandatory classes and the pairs of their shared leaves took 1.7 s):
  constexpr size_t kMaxRegion = 256;         // classes in one region (Inception-v3's: ~20)
  constexpr size_t kMaxUsers = 16;           // items sharing a leaf (a merged conv has two or three)
  constexpr int64_t kMaxTriangles = 200000;  // examined
  constexpr int64_t kMaxSteps = 1'000'000;   // column-child visits (regions and pair tests)
  ensure_col_kids();
  const size_t C = g_.classes.size();
  auto leaf = [&](ClassIdx c) {
    for (int i : class_cols_[c])
      if (!col_kids_[static_cast<size_t>(i)].empty()) return false;
    return true;
  };
  struct Item {
    std::vector<ClassIdx> leaves;  // sorted
    std::vector<int> exits;        // columns, sorted
    double lhs = 0.0;              // its own row's left-hand side at x
  };
  std::vector<Item> items;
  std::vector<uint32_t> mark(C, 0);
  uint32_t stamp = 0;
  std::vector<ClassIdx> region;
  std::map<ClassIdx, std::vector<uint32_t>> users;  // leaf -> items
  auto value = [&](ClassIdx k) {
    double v = 0.0;
    for (int i : class_cols_[k]) v += x[i];
    return v;
  };
  int64_t steps = 0;
  // The item of the start classes (one, or a pair), if its region is small enough and has a
  // fractional leaf.
  auto add_item = [&](std::initializer_list<ClassIdx> starts) {
    ++stamp;
    region.clear();
    for (ClassIdx s : starts) {
      region.push_back(s);
      mark[s] = stamp;
    }
    const size_t num_starts = region.size();
    for (size_t h = 0; h < region.size() && region.size() <= kMaxRegion; ++h)
      for (int i : class_cols_[region[h]])
        for (ClassIdx k : col_kids_[static_cast<size_t>(i)]) {
          ++steps;
          if (mark[k] != stamp) {
            mark[k] = stamp;
            region.push_back(k);
          }
        }
    if (region.size() > kMaxRegion) return;
    Item item{{}, {}};
    bool fractional = false;
    for (size_t h = 0; h < region.size(); ++h) {
      const ClassIdx r = region[h];
      if (h >= num_starts && leaf(r)) {
        item.leaves.push_back(r);
        if (value(r) < 1.0 - kEps) fractional = true;
        continue;
      }
      for (int i : class_cols_[r]) {
        bool exit = true;
        for (ClassIdx k : col_kids_[static_cast<size_t>(i)]) {
          ++steps;
          if (mark[k] == stamp) {
            exit = false;
            break;
          }
        }
        if (exit) item.exits.push_back(i);
      }
    }
    if (!fractional) return;
    std::sort(item.leaves.begin(), item.leaves.end());
    std::sort(item.exits.begin(), item.exits.end());
    for (ClassIdx t : item.leaves) item.lhs += value(t);
    for (int e : item.exits) item.lhs += x[e];
    const auto f = static_cast<uint32_t>(items.size());
    for (ClassIdx t : item.leaves) users[t].push_back(f);
    items.push_back(std::move(item));
  };
  // Every mandatory class (its own columns may be integral: the split is further down).
  for (ClassIdx c = 0; c < C && steps < kMaxSteps; ++c)
    if (!class_cols_[c].empty() && req.mandatory[c] && in_part(c)) add_item({c});

  // Pairs: the fractional non-mandatory classes, and the mandatory classes of the part.
  std::vector<ClassIdx> frac, part_mandatory, used;
  for (ClassIdx c = 0; c < C; ++c) {
    if (class_cols_[c].empty() || !in_part(c)) continue;
    if (req.mandatory[c]) {
      part_mandatory.push_back(c);
    } else if (const double v = value(c); v > kEps && v < 1.0 - kEps) {
      frac.push_back(c);
    } else if (v >= 1.0 - kEps) {
      used.push_back(c);
    }
  }
  if (frac.size() >= 2 && steps < kMaxSteps) {
    std::vector<size_t> missing(num_x());
    std::vector<uint32_t> ground(C, 0);
    uint32_t gstamp = 0;
    std::vector<ClassIdx> queue;
    // Whether every extraction of the part uses a or b: without them some mandatory class of
    // the part has no acyclic way to be computed.
    auto covering = [&](ClassIdx a, ClassIdx b) {
      ++gstamp;
      queue.clear();
      auto grounded = [&](size_t i) {
        const ClassIdx c = g_.nodes[node_of_col_[i]].eclass;
        if (c == a || c == b || ground[c] == gstamp) return;
        ground[c] = gstamp;
        queue.push_back(c);
      };
      for (size_t i = 0; i < num_x(); ++i) {
        missing[i] = col_kids_[i].size();
        if (missing[i] == 0) grounded(i);
      }
      steps += static_cast<int64_t>(num_x());
      for (size_t h = 0; h < queue.size(); ++h)
        for (int r : col_readers_[queue[h]]) {
          ++steps;
          if (--missing[static_cast<size_t>(r)] == 0) grounded(static_cast<size_t>(r));
        }
      for (ClassIdx m : part_mandatory)
        if (ground[m] != gstamp) return true;
      return false;
    };
    for (size_t i = 0; i < frac.size() && steps < kMaxSteps; ++i)
      for (size_t j = i + 1; j < frac.size() && steps < kMaxSteps; ++j) {
        ++steps;
        const ClassIdx a = frac[i], b = frac[j];
        if (value(a) + value(b) < 1.0 - kEps || !covering(a, b)) continue;
        add_item({a, b});
      }
  }
  // Pairs with a class the LP uses at 1: {a, b} where a is such a class (not mandatory; the
  // pairs above take fractional classes only) and b a class (not mandatory) that, with a gone,
  // every derivation of some mandatory class uses; at most kMaxPairsPerUsed per a (each pair's
  // item shares a's leaves, and a leaf shared by more than kMaxUsers items links none of
  // them), within the round's steps. Inception-v3: a 1x1 conv's output read as it is (relu
  // after the module's concat, the LP's choice) or relu'd (relu pushed through the concat);
  // the other two convs are mandatory; the three items close the LP's merged convs at 1/2
  // each. Found per a by the requirement fixpoint over the part's columns without a (children
  // first; on a cyclic part no such pairs): b is in Req_a(M) for a mandatory class M.
  if (opts_.used_pairs && !used.empty() && !part_mandatory.empty()) {
    // The part's classes with columns, children first (part_order()).
    const PartOrder& po = part_order();
    const std::vector<int>& dense = po.dense;
    const std::vector<ClassIdx>& cls = po.cls;
    const std::vector<ClassIdx>& order = po.order;
    const size_t P = cls.size(), W = (P + 63) / 64;
    if (po.acyclic) {
      constexpr int64_t kMaxPairWork = 4'000'000;  // bitset words touched, per round
      constexpr size_t kMaxPairsPerUsed = 8;
      int64_t pair_work = 0;
      std::vector<uint64_t> req_a(P * W), acc(W);
      std::vector<char> ok(P);
      std::set<std::pair<ClassIdx, ClassIdx>> pairs;
      for (ClassIdx a : used) {
        if (pair_work > kMaxPairWork) break;
        // Req_a(c) = {c} + the intersection over c's columns, all of whose child classes are
        // derivable without a, of the union of their children's Req_a.
        for (ClassIdx c : order) {
          const auto d = static_cast<size_t>(dense[c]);
          uint64_t* row = &req_a[d * W];
          ok[d] = 0;
          if (c == a) continue;
          bool first = true;
          for (int i : class_cols_[c]) {
            std::fill(acc.begin(), acc.end(), 0);
            bool alive = true;
            for (ClassIdx k : col_kids_[static_cast<size_t>(i)]) {
              const auto kd = static_cast<size_t>(dense[k]);
              if (!ok[kd]) {
                alive = false;
                break;
              }
              const uint64_t* kr = &req_a[kd * W];
              for (size_t w = 0; w < W; ++w) acc[w] |= kr[w];
              pair_work += static_cast<int64_t>(W);
            }
            if (!alive) continue;
            if (first) std::copy(acc.begin(), acc.end(), row);
            else
              for (size_t w = 0; w < W; ++w) row[w] &= acc[w];
            first = false;
          }
          if (first) continue;  // not derivable without a
          ok[d] = 1;
          row[d / 64] |= uint64_t{1} << (d % 64);
        }
        // The classes b every derivation of some mandatory class uses without a, in class order.
        std::fill(acc.begin(), acc.end(), 0);
        for (ClassIdx m : part_mandatory) {
          const auto md = static_cast<size_t>(dense[m]);
          if (!ok[md]) continue;  // (a is required: mandatory itself, then)
          const uint64_t* mr = &req_a[md * W];
          for (size_t w = 0; w < W; ++w) acc[w] |= mr[w];
        }
        size_t taken = 0;
        for (size_t w = 0; w < W && taken < kMaxPairsPerUsed; ++w)
          for (uint64_t bits = acc[w]; bits && taken < kMaxPairsPerUsed; bits &= bits - 1) {
            const ClassIdx b = cls[w * 64 + static_cast<size_t>(std::countr_zero(bits))];
            if (b == a || req.mandatory[b]) continue;
            pairs.emplace(std::min(a, b), std::max(a, b));
            ++taken;
          }
      }
      steps += pair_work / 64;
      for (const auto& [a, b] : pairs) {
        if (steps >= kMaxSteps) break;
        add_item({a, b});
      }
    }
  }

  int added = 0;
  std::map<int, double> row;
  // The rows appended this round, with their right-hand side (two items may have the same
  // region, and a triangle's row may have the columns and coefficients of an item's own row);
  // a row of an earlier round holds in this LP.
  std::set<std::pair<double, std::map<int, double>>> appended;
  auto append_if_violated = [&](double rhs) {
    double lhs = 0.0;
    for (const auto& [i, v] : row) lhs += v * x[i];
    if (lhs > rhs - 1e-4 || !appended.emplace(rhs, row).second) return false;
    append_row(row, rhs, COIN_DBL_MAX, rstart, rind, rval, rlb, rub);
    return true;
  };
  // The triangles' rows first (the stronger ones; they share the cap with the own rows).
  const auto adj = shared_key_graph(users, items.size(), kMaxUsers);
  // The three items' leaves (or exits) merged, sorted: each run of equal ones is one leaf and
  // how many of the rows hold it.
  std::vector<ClassIdx> leaves3, leaves2;
  std::vector<int> exits3, exits2;
  auto merge3 = [](const auto& p, const auto& q, const auto& r, auto& tmp, auto& out) {
    tmp.resize(p.size() + q.size());
    std::merge(p.begin(), p.end(), q.begin(), q.end(), tmp.begin());
    out.resize(tmp.size() + r.size());
    std::merge(tmp.begin(), tmp.end(), r.begin(), r.end(), out.begin());
  };
  // Calls f(element, count) per run.
  auto runs = [](const auto& v, auto&& f) {
    for (size_t i = 0, j; i < v.size(); i = j) {
      for (j = i + 1; j < v.size() && v[j] == v[i]; ++j) {
      }
      f(v[i], static_cast<int>(j - i));
    }
  };
  for_each_triangle(adj, kMaxTriangles, [&](uint32_t a, uint32_t b, uint32_t c) {
    // The row's left-hand side is at least half the three own rows' (ceil(n/2) >= n/2): most
    // triangles are met by that alone, without merging anything.
    if (items[a].lhs + items[b].lhs + items[c].lhs > 2.0 * (2.0 - 1e-4)) return true;
    merge3(items[a].leaves, items[b].leaves, items[c].leaves, leaves2, leaves3);
    merge3(items[a].exits, items[b].exits, items[c].exits, exits2, exits3);
    double lhs = 0.0;
    runs(leaves3, [&](ClassIdx t, int n) { lhs += ((n + 1) / 2) * value(t); });
    runs(exits3, [&](int e, int n) { lhs += ((n + 1) / 2) * x[e]; });
    if (lhs > 2.0 - 1e-4) return true;  // (the row below adds the same terms)
    row.clear();
    runs(leaves3, [&](ClassIdx t, int n) {
      for (int i : class_cols_[t]) row[i] += (n + 1) / 2;
    });
    runs(exits3, [&](int e, int n) { row[e] += (n + 1) / 2; });
    if (append_if_violated(2.0)) ++added;
    return added < kMaxCuts;
  });
  // An item's own row, where the LP violates it (a pair: the LP provides a through the relu
  // of b's provider, and so on).
  for (const Item& item : items) {
    if (added >= kMaxCuts) break;
    row.clear();
    for (ClassIdx t : item.leaves)
      for (int i : class_cols_[t]) row[i] = 1.0;
    for (int e : item.exits) row[e] = 1.0;
    if (append_if_violated(1.0)) ++added;
  }
  return added;
}

}  // namespace tensat::extract

// The extraction ILP: columns, rows, the separation rounds, cycle cuts (see formulation.h); the
// cuts the rounds separate are in separation.cpp, odd_covers.cpp and reader_rows.cpp.
#include "extract/formulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <ClpDualRowSteepest.hpp>
#include <ClpSimplex.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>
#include <CoinPackedVector.hpp>
#include <spdlog/spdlog.h>

#include "extract/cycle_cuts.h"
#include "extract/work_units.h"

namespace tensat::extract {

IlpModel::IlpModel(const ExtractGraph& g, const Reduction& red, const IlpOptions& opts, const Requirements* req,
                   const std::vector<char>* block, bool columns_only)
    : g_(g), red_(red), opts_(opts), block_(block), columns_only_(columns_only) {
  // A block model relies on the requirements that split the problem (blocks.h).
  if (block_ && !req) throw InternalError("ilp: a block model needs the requirements that define the block");
  if (req) req_ = req;
  build();
}

void IlpModel::build() {
  const size_t N = g_.nodes.size(), C = g_.classes.size();
  col_of_node_.assign(N, -1);
  for (NodeIdx n = 0; n < N; ++n)
    if (red_.node_alive[n] && !red_.class_free[g_.nodes[n].eclass] && in_part(g_.nodes[n].eclass)) {
      col_of_node_[n] = static_cast<int>(node_of_col_.size());
      node_of_col_.push_back(n);
    }
  order_col_.assign(C, -1);
  if (columns_only_) return;
  const int nx = static_cast<int>(node_of_col_.size());
  int ncols = nx;
  if (opts_.order != OrderConstraints::None)
    for (ClassIdx c = 0; c < C; ++c)
      if (red_.class_alive[c] && !red_.class_free[c] && in_part(c)) order_col_[c] = ncols++;
  const double M = static_cast<double>(ncols - nx);

  std::vector<double> collb(ncols, 0.0), colub(ncols, 1.0), obj(ncols, 0.0);
  for (int i = 0; i < nx; ++i) obj[i] = g_.nodes[node_of_col_[i]].cost;
  for (int i = nx; i < ncols; ++i)
    colub[i] = opts_.order == OrderConstraints::Integer ? std::max(M - 1.0, 0.0) : 1.0;

  // Rows as triplets (appending rows one by one to a CoinPackedMatrix is quadratic), each
  // built in `row` first (a CoinPackedVector per row checked its indices for duplicates with a
  // std::set: a third of the build). No row has a column twice: its columns are the nodes of
  // one class, or of two different classes.
  std::vector<int> tri_row, tri_col;
  std::vector<double> tri_val, rowlb, rowub;
  std::vector<std::pair<int, double>> row;
  auto add = [&](double lb, double ub) {
    const int r = static_cast<int>(rowlb.size());
    for (const auto& [col, val] : row) {
      tri_row.push_back(r);
      tri_col.push_back(col);
      tri_val.push_back(val);
    }
    rowlb.push_back(lb);
    rowub.push_back(ub);
    row.clear();
  };
  auto is_root = [&](ClassIdx c) {
    return std::find(g_.roots.begin(), g_.roots.end(), c) != g_.roots.end();
  };
  if (req_ == &own_req_ && opts_.requirement_rows && opts_.reduce) own_req_ = requirements(g_, red_);
  const Requirements& req = *req_;
  if (req.computed) {
    // Unusable classes, and nodes with an unusable child class, are fixed to 0.
    for (int i = 0; i < nx; ++i) {
      const NodeIdx n = node_of_col_[i];
      bool dead = req.unusable[g_.nodes[n].eclass] != 0;
      for (ClassIdx k : g_.nodes[n].children) dead = dead || req.unusable[k] != 0;
      if (dead) colub[i] = 0.0;
    }
  }
  auto mandatory = [&](ClassIdx c) { return is_root(c) || (req.computed && req.mandatory[c]); };
  // One node in each root (and mandatory) class, at most one elsewhere.
  std::vector<std::vector<int>>& class_cols = class_cols_;
  class_cols.assign(C, {});
  for (ClassIdx c = 0; c < C; ++c) {
    if (!red_.class_alive[c] || red_.class_free[c] || !in_part(c)) continue;
    for (NodeIdx n : g_.classes[c].nodes)
      if (col_of_node_[n] >= 0) {
        row.emplace_back(col_of_node_[n], 1.0);
        class_cols[c].push_back(col_of_node_[n]);
      }
    if (mandatory(c)) {
      if (row.size() == 1) collb[row[0].first] = 1.0;  // single node: fixed
      add(1.0, 1.0);
    } else if (row.size() > 1) {
      add(-COIN_DBL_MAX, 1.0);
    } else {
      row.clear();
    }
  }
  // A chosen node needs a chosen node in every (non-free) child class. Aggregated per
  // (parent class, child class): the nodes of a class exclude each other, so the sum of
  // the parent nodes that use K is at most K's sum. This dominates the per-node rows
  // x_n <= sum x(K).
  std::vector<ClassIdx> used_by_all;
  std::vector<std::pair<ClassIdx, int>> users;  // (child class, parent column), by class
  for (ClassIdx c = 0; c < C; ++c) {
    if (!red_.class_alive[c] || red_.class_free[c] || !in_part(c)) continue;
    users.clear();
    for (NodeIdx n : g_.classes[c].nodes) {
      if (col_of_node_[n] < 0) continue;
      for (ClassIdx k : g_.child_classes(n))
        if (!given(k)) users.emplace_back(k, col_of_node_[n]);
    }
    // (Stable: a child class's parent columns in node order.)
    std::stable_sort(users.begin(), users.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    used_by_all.clear();
    for (size_t i = 0; i < users.size();) {
      const ClassIdx k = users[i].first;
      size_t j = i;
      while (j < users.size() && users[j].first == k) ++j;
      const size_t ncols_k = j - i;
      if (ncols_k == class_cols[c].size()) used_by_all.push_back(k);
      if (!(mandatory(c) && mandatory(k) && ncols_k == class_cols[c].size())) {
        for (size_t u = i; u < j; ++u) row.emplace_back(users[u].second, 1.0);
        for (int col : class_cols[k]) row.emplace_back(col, -1.0);
        add(-COIN_DBL_MAX, 0.0);
      }
      i = j;
    }
    // Requirement rows: using c implies using each immediately required class D (only
    // where no child row says the same already).
    if (!req.computed || req.unusable[c]) continue;
    for (ClassIdx d : req.immediate[c]) {
      if (!in_part(d)) continue;  // mandatory (blocks.h): always there
      if (std::binary_search(used_by_all.begin(), used_by_all.end(), d)) continue;
      if (mandatory(c) && mandatory(d)) continue;
      for (int col : class_cols[c]) row.emplace_back(col, 1.0);
      for (int col : class_cols[d]) row.emplace_back(col, -1.0);
      add(-COIN_DBL_MAX, 0.0);
      ++requirement_rows_;
    }
  }
  // Topological order (TENSAT constraints 4-5): x_n = 1 => t_class(n) >= t_child + eps.
  if (opts_.order != OrderConstraints::None) {
    const bool integer = opts_.order == OrderConstraints::Integer;
    const double eps = integer ? 1.0 : 1.0 / (M + 1.0);
    const double A = integer ? M + 1.0 : 2.0;
    for (int i = 0; i < nx; ++i) {
      const NodeIdx n = node_of_col_[i];
      const ClassIdx c = g_.nodes[n].eclass;
      for (ClassIdx k : g_.child_classes(n)) {
        if (given(k)) continue;
        row.emplace_back(order_col_[c], 1.0);
        row.emplace_back(order_col_[k], -1.0);
        row.emplace_back(i, -A);
        add(eps - A, COIN_DBL_MAX);
      }
    }
  }
  CoinPackedMatrix rows(false, tri_row.data(), tri_col.data(), tri_val.data(),
                        static_cast<CoinBigIndex>(tri_val.size()));
  rows.setDimensions(static_cast<int>(rowlb.size()), ncols);
  solver_.loadProblem(rows, collb.data(), colub.data(), obj.data(), rowlb.data(), rowub.data());
  for (int i = 0; i < nx; ++i) solver_.setInteger(i);
  if (opts_.order == OrderConstraints::Integer)
    for (int i = nx; i < ncols; ++i) solver_.setInteger(i);
  solver_.messageHandler()->setLogLevel(0);
  // Dual simplex (the LP rounds' re-solves, the first solve where landmark rows go in, and
  // CBC's node LPs) prices with full steepest edge from the start (ClpDualRowSteepest mode 1)
  // instead of CLP's default (mode 3: partial, switching to full when it pays). These LPs are
  // small and degenerate (many equal costs): NasNet-A's LP rounds 22 277 -> 15 590 units, its
  // extraction 1.22 -> 1.05 s (mean of 10 runs); no cost, bound or status worse on the
  // pipeline and gym e-graphs at k_multi 0-2 (extract/README.md, "Dual pricing").
  {
    ClpDualRowSteepest pricing(1);
    solver_.getModelPtr()->setDualRowPivotAlgorithm(pricing);
  }
  // The initial LP (before the separation rounds; CBC starts from its basis): primal simplex
  // from a crash basis, with presolve. The default solve picks the "idiot" crash for large
  // models, which is very slow on these (minutes on bert). Against dual simplex from the
  // all-slack basis (the previous choice) it took 0.50 / 0.28 / 0.47 / 0.41 s instead of
  // 1.07 / 0.61 / 0.66 / 0.98 s on the 50k-node nasneta / nasrnn / bert / inceptionv3
  // e-graphs, and 0.01-0.08 s either way on the 3k-15k-node ones (extract/README.md).
  ClpSolve lp_options;
  lp_options.setSolveType(ClpSolve::usePrimal);
  lp_options.setSpecialOption(1, 1);  // "startup in primal: use crash"
  // No SIGINT handler of CLP's: initialSolve() installs one process-wide (and a static model
  // pointer), which the parallel LPs (ilp.cpp, phase 5a) would race on.
  lp_options.setSpecialOption(2, 1);
  lp_options.setPresolveType(ClpSolve::presolveOn);
  solver_.setSolveOptions(lp_options);
  // Column names: not read by anything of ours, but without them CBC's search went another
  // way (Inception-v3 at k_multi 0 and 1 ended stalled-greedy instead of optimal).
  solver_.setIntParam(OsiNameDiscipline, 1);
  for (int i = 0; i < ncols; ++i) solver_.setColName(i, "c" + std::to_string(i));
  order_eps_ = opts_.order == OrderConstraints::Integer ? 1.0 : 1.0 / (M + 1.0);

  // (A block's class graph is acyclic, blocks.h: nothing to cut.)
  if (opts_.order == OrderConstraints::None && opts_.precut_cycle_length >= 2 && !block_)
    precut_short_cycles();
  flush_cuts();
}

void IlpModel::set_landmarks(const std::vector<std::vector<NodeIdx>>& landmarks) {
  landmarks_.clear();
  for (const auto& l : landmarks) {
    std::vector<int> cols;
    // A landmark that a node of another block can hit says nothing about this block alone.
    const bool elsewhere = std::any_of(l.begin(), l.end(), [&](NodeIdx n) {
      const ClassIdx c = g_.nodes[n].eclass;
      return red_.node_alive[n] && red_.class_alive[c] && !red_.class_free[c] && !in_part(c);
    });
    if (elsewhere) continue;
    for (NodeIdx n : l)
      if (col_of_node_[n] >= 0) cols.push_back(col_of_node_[n]);
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    landmarks_.push_back(std::move(cols));
  }
}

void IlpModel::require_rows(const char* what) const {
  if (columns_only_) throw InternalError(std::string("ilp: ") + what + " on a model of columns only (a twin's)");
}

double IlpModel::separate(int64_t& work_left, Clock::time_point deadline, int max_rounds) {
  require_rows("separate");
  // The landmark rows go in before the first solve, which is then dual simplex from the
  // slack basis (dual feasible: every cost is >= 0). Against the primal solve from a crash
  // basis followed by the violated landmark rows and a dual re-solve (both to the same LP
  // optimum), the model-to-bound time was nasrnn 0.30 -> 0.17 s, inceptionv3 0.17 -> 0.07 s,
  // and on the 50k-node k_multi 2 e-graphs inceptionv3 3.3 -> 0.4 s, nasrnn 9.8 -> 2.3 s,
  // but bert 4.4 -> 19.6 s (extract/README.md; the budget's deadline caps every LP solve).
  int added = 0;
  for (auto& l : landmarks_) {
    if (l.empty()) continue;
    for (int i : l) {
      cuts_.ind.push_back(i);
      cuts_.val.push_back(1.0);
    }
    cuts_.start.push_back(static_cast<int>(cuts_.ind.size()));
    cuts_.lb.push_back(1.0);
    cuts_.ub.push_back(COIN_DBL_MAX);
    l.clear();
    ++added;
  }
  landmark_rows_ += added;
  if (added > 0) {
    ClpSolve dual;
    dual.setSolveType(ClpSolve::useDual);
    dual.setSpecialOption(2, 1);  // no process-wide SIGINT handler (see the constructor)
    dual.setPresolveType(ClpSolve::presolveOn);
    solver_.setSolveOptions(dual);
  }
  flush_cuts();
  if (base_rows_ < 0) base_rows_ = solver_.getNumRows();
  double obj = -COIN_DBL_MAX;
  // Every LP solve stops after the iterations left (CLP's iteration limit) or at the deadline
  // (its wall-clock limit); an unfinished solve gives no bound. Both limits are lifted again
  // for CBC.
  struct Unlimit {
    OsiClpSolverInterface& s;
    int max_iterations;
    ~Unlimit() {
      s.getModelPtr()->setMaximumWallSeconds(-1.0);
      s.setIntParam(OsiMaxNumIteration, max_iterations);
    }
  } unlimit{solver_, 0};
  solver_.getIntParam(OsiMaxNumIteration, unlimit.max_iterations);
  auto solve = [&](bool first) {
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    const double per_iteration = iteration_work(solver_.getNumRows());
    const double iterations = std::floor(static_cast<double>(work_left) / per_iteration);
    if (left <= 0.0 || iterations < 1.0) return false;
    solver_.getModelPtr()->setMaximumWallSeconds(left);
    solver_.setIntParam(OsiMaxNumIteration,
                        static_cast<int>(std::min(iterations, static_cast<double>(std::numeric_limits<int>::max()))));
    if (first) solver_.initialSolve(); else solver_.resolve();
    work_left -= static_cast<int64_t>(std::ceil(per_iteration * solver_.getIterationCount()));
    spdlog::debug("ilp: LP solve: {} iterations, {} work left, optimal {}", solver_.getIterationCount(), work_left,
                  solver_.isProvenOptimal());
    return solver_.isProvenOptimal();
  };
  if (!solve(true)) return -COIN_DBL_MAX;
  obj = solver_.getObjValue();
  for (int round = 0; round < max_rounds; ++round) {
    const double* x = solver_.getColSolution();
    std::vector<int> rstart{0}, rind;
    std::vector<double> rval, rlb, rub;
    const int req_rows = separate_requirements(x, rstart, rind, rval, rlb, rub);
    const int odd_rows = opts_.odd_cover_cuts ? separate_odd_covers(x, rstart, rind, rval, rlb, rub) +
                                                    separate_deep_odd_covers(x, rstart, rind, rval, rlb, rub)
                                              : 0;
    const int excl_rows = opts_.exclusive_readers ? separate_exclusive_readers(x, rstart, rind, rval, rlb, rub) : 0;
    const int read_rows = opts_.read_rows ? separate_read_classes(x, rstart, rind, rval, rlb, rub) : 0;
    // (The path cuts last: path_row_ids_ below takes them from the end.)
    const int path_rows = opts_.path_cuts && round < opts_.path_cut_rounds
                              ? separate_path_cuts(x, rstart, rind, rval, rlb, rub)
                              : 0;
    const int added = req_rows + odd_rows + excl_rows + read_rows + path_rows;
    read_rows_ += read_rows;
    odd_cover_rows_ += odd_rows;
    exclusive_rows_ += excl_rows;
    path_cut_rows_ += path_rows;
    spdlog::debug("ilp: separation round {}: LP {}, {} violated requirement rows, {} odd-cover cuts, {} "
                  "exclusive-reader rows, {} read-class rows, {} path cuts",
                  round, obj, req_rows, odd_rows, excl_rows, read_rows, path_rows);
    if (added == 0) break;
    for (int r = 0; r < path_rows; ++r) path_row_ids_.push_back(solver_.getNumRows() + added - path_rows + r);
    solver_.addRows(added, rstart.data(), rind.data(), rval.data(), rlb.data(), rub.data());
    separated_rows_ += added;
    const double prev = obj;
    if (!solve(false)) return prev;  // the rows stay (CBC needs them solved: lp_solved() is false)
    obj = std::max(prev, solver_.getObjValue());
    // A round whose rows left the LP objective where it was ends the separation (on the
    // 50k-node e-graphs the rounds after that changed the bound by 1e-16 and cost a resolve,
    // 0.05-0.3 s, each).
    if (obj <= prev + 1e-9 * std::max(1.0, std::abs(obj))) {
      spdlog::debug("ilp: separation round {}: LP {}, no better than the last round: stop", round, obj);
      break;
    }
  }
  return obj;
}

int IlpModel::drop_slack_cuts(int64_t& work_left, Clock::time_point deadline) {
  require_rows("drop_slack_cuts");
  // Called once, before CBC's first round: every row from base_rows_ on is a separated one
  // (cycle cuts come after CBC's rounds; with rows still queued the LP is not solved).
  if (base_rows_ < 0 || !cuts_.lb.empty() || !lp_solved()) return 0;
  const double* act = solver_.getRowActivity();
  const double* lo = solver_.getRowLower();
  const double* up = solver_.getRowUpper();
  std::vector<int> drop;
  std::vector<char> path(static_cast<size_t>(solver_.getNumRows()), 0);
  for (int r : path_row_ids_) path[static_cast<size_t>(r)] = 1;
  for (int r = base_rows_; r < solver_.getNumRows(); ++r) {
    const double tol = 1e-7 * std::max(1.0, std::abs(act[r]));
    if (path[static_cast<size_t>(r)] || (act[r] > lo[r] + tol && act[r] < up[r] - tol)) drop.push_back(r);
  }
  path_row_ids_.clear();
  if (drop.empty()) return 0;
  solver_.deleteRows(static_cast<int>(drop.size()), drop.data());
  // Without the path cuts the basis may no longer be optimal: resolve() (none of its
  // iterations where only slack rows went).
  const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  const double per_iteration = iteration_work(solver_.getNumRows());
  const double iterations = std::floor(static_cast<double>(work_left) / per_iteration);
  if (left > 0.0 && iterations >= 1.0) {
    int max_iterations = 0;
    solver_.getIntParam(OsiMaxNumIteration, max_iterations);
    solver_.getModelPtr()->setMaximumWallSeconds(left);
    solver_.setIntParam(OsiMaxNumIteration,
                        static_cast<int>(std::min(iterations, static_cast<double>(std::numeric_limits<int>::max()))));
    solver_.resolve();
    work_left -= static_cast<int64_t>(std::ceil(per_iteration * solver_.getIterationCount()));
    solver_.getModelPtr()->setMaximumWallSeconds(-1.0);
    solver_.setIntParam(OsiMaxNumIteration, max_iterations);
  }
  return static_cast<int>(drop.size());
}

bool IlpModel::add_cycle_cut(const std::vector<ClassIdx>& cycle) {
  require_rows("add_cycle_cut");
  std::vector<ClassIdx> key = cycle;
  std::rotate(key.begin(), std::min_element(key.begin(), key.end()), key.end());
  if (!seen_cycles_.insert(key).second) return false;
  CoinPackedVector row;
  for (size_t i = 0; i < cycle.size(); ++i) {
    const ClassIdx c = cycle[i], next = cycle[(i + 1) % cycle.size()];
    for (NodeIdx n : g_.classes[c].nodes) {
      if (col_of_node_[n] < 0) continue;
      const auto& ch = g_.nodes[n].children;
      if (std::find(ch.begin(), ch.end(), next) != ch.end()) row.insert(col_of_node_[n], 1.0);
    }
  }
  cuts_.ind.insert(cuts_.ind.end(), row.getIndices(), row.getIndices() + row.getNumElements());
  cuts_.val.insert(cuts_.val.end(), row.getElements(), row.getElements() + row.getNumElements());
  cuts_.start.push_back(static_cast<int>(cuts_.ind.size()));
  cuts_.lb.push_back(-COIN_DBL_MAX);
  cuts_.ub.push_back(static_cast<double>(cycle.size()) - 1.0);
  ++cycle_cuts_;
  return true;
}

void IlpModel::flush_cuts() {
  const int n = static_cast<int>(cuts_.lb.size());
  if (n > 0)
    solver_.addRows(n, cuts_.start.data(), cuts_.ind.data(), cuts_.val.data(), cuts_.lb.data(),
                    cuts_.ub.data());
  cuts_ = PendingRows{};
}

// Cuts every simple cycle of the class graph (edges of candidate nodes) up to
// precut_cycle_length classes.
void IlpModel::precut_short_cycles() {
  const size_t C = g_.classes.size();
  std::vector<std::vector<ClassIdx>> succ(C);
  for (NodeIdx n : node_of_col_)
    for (ClassIdx k : g_.child_classes(n))
      if (!given(k)) succ[g_.nodes[n].eclass].push_back(k);
  for (auto& s : succ) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  const bool all = short_cycles(succ, static_cast<size_t>(opts_.precut_cycle_length), [&](const auto& cycle) {
    add_cycle_cut(cycle);
    return cycle_cuts_ < opts_.max_precuts;
  });
  if (!all) spdlog::warn("ilp: stopped pre-cutting cycles at {} cuts", cycle_cuts_);
}

// Column values for a choice (x, and order levels when order constraints are on).
std::vector<double> IlpModel::start_values(const Choice& choice) const {
  std::vector<double> val(static_cast<size_t>(solver_.getNumCols()), 0.0);
  for (size_t c = 0; c < choice.size(); ++c)
    if (choice[c] >= 0 && col_of_node_[static_cast<size_t>(choice[c])] >= 0)
      val[static_cast<size_t>(col_of_node_[static_cast<size_t>(choice[c])])] = 1.0;
  if (opts_.order != OrderConstraints::None) {
    // level(c) = 1 + max level of its (non-free) child classes; the choice is acyclic.
    std::vector<int> level(choice.size(), -1);
    std::vector<std::pair<ClassIdx, size_t>> stack;
    for (ClassIdx r : g_.roots) {
      if (red_.class_free[r]) continue;
      stack.push_back({r, 0});
      while (!stack.empty()) {
        auto [c, i] = stack.back();
        const auto& kids = g_.nodes[static_cast<size_t>(choice[c])].children;
        if (level[c] >= 0) {
          stack.pop_back();
        } else if (i < kids.size()) {
          stack.back().second++;
          const ClassIdx k = kids[i];
          if (!red_.class_free[k] && level[k] < 0) stack.push_back({k, 0});
        } else {
          int l = 0;
          for (ClassIdx k : kids)
            if (!red_.class_free[k]) l = std::max(l, level[k] + 1);
          level[c] = l;
          stack.pop_back();
        }
      }
    }
    for (size_t c = 0; c < choice.size(); ++c)
      if (order_col_[c] >= 0 && level[c] >= 0)
        val[static_cast<size_t>(order_col_[c])] = level[c] * order_eps_;
  }
  return val;
}

// Chosen node per class (x > 0.5; the largest if several), free classes fixed, pruned; a
// block's classes over `base`.
Choice IlpModel::decode(const double* x, const Choice* base) const {
  Choice choice(g_.classes.size(), -1);
  if (base) {
    if (base->size() != choice.size()) throw InternalError("ilp: decode: the base choice has the wrong size");
    for (size_t c = 0; c < choice.size(); ++c)
      if (!in_part(static_cast<ClassIdx>(c))) choice[c] = (*base)[c];
  }
  std::vector<double> best(g_.classes.size(), 0.5);
  for (size_t i = 0; i < node_of_col_.size(); ++i) {
    const NodeIdx n = node_of_col_[i];
    const ClassIdx c = g_.nodes[n].eclass;
    if (x[i] > best[c]) {
      best[c] = x[i];
      choice[c] = n;
    }
  }
  for (size_t c = 0; c < choice.size(); ++c)
    if (red_.class_free[c]) choice[c] = red_.free_node[c];
  return prune_to_roots(g_, choice);
}

}  // namespace tensat::extract

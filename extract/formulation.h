// The extraction ILP (TENSAT Section 5.1, strengthened; extract/README.md, "Formulation"):
// columns, rows, the cutting-plane rounds on the LP relaxation before CBC, cycle cuts, and the
// translation between extractions and column values. Solving it is cbc_driver.h's job, the
// rounds around it ilp.h's.
//
// Columns: a binary x per candidate e-node of the reduced problem, then an order variable t
// per class when order constraints are on. Rows:
//   * per class: sum x <= 1, "= 1" for the root and mandatory classes (reduce.h, requirements);
//   * per (parent class P, child class K): sum of P's nodes that use K <= sum x(K);
//   * requirement rows: sum x(C) <= sum x(D) for the classes D immediately required by C;
//   * landmark rows "sum of x over a landmark >= 1" (lm_cut.h's LM-cut landmarks);
//   * separated in rounds (only rows the LP optimum violates): node-level requirement rows,
//     odd-cover cuts over triples of mandatory classes that share their providers (as direct
//     child classes, or as the leaves of what their columns reach: deep odd covers, whose
//     items are also pairs of classes one of which is always used), exclusive-reader rows (the
//     readers of a class from classes no extraction uses together: their sum <= its x; lifted
//     with the readers the LP leaves at 0), read-class rows (a class that is no root and not
//     mandatory is used only where a reader of it is: x(K) <= sum of its readers' x), and in
//     the first rounds path cuts (a class used => a class all its paths lead to, or an exit of
//     them); before CBC the slack separated rows and the path cuts are dropped;
//   * cycle cuts (added lazily) or the paper's topological-order constraints.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <OsiClpSolverInterface.hpp>

#include "extract/extract_graph.h"
#include "extract/ilp.h"
#include "extract/reduce.h"

namespace tensat::extract {

class IlpModel {
 public:
  using Clock = std::chrono::steady_clock;

  /// Builds the model over the alive nodes of the alive, non-free classes of `red`. All
  /// arguments must outlive the model. `req`: the requirements of `red` when the caller has
  /// them (otherwise computed here when opts.requirement_rows). `block` (blocks.h): per
  /// class, whether it belongs to the block this model is restricted to; the classes outside
  /// it are taken as given (they are mandatory classes of other blocks where a node of the
  /// block uses them). Null: the whole problem. `columns_only`: the columns and nothing else
  /// (num_x, col_of, in_part), for a part that is solved as another's twin (twins.h) and so
  /// never gets an LP; its separate(), lp(), drop_slack_cuts() and add_cycle_cut() throw.
  IlpModel(const ExtractGraph& g, const Reduction& red, const IlpOptions& opts, const Requirements* req = nullptr,
           const std::vector<char>* block = nullptr, bool columns_only = false);
  IlpModel(const IlpModel&) = delete;  // req_ may point into the object
  IlpModel& operator=(const IlpModel&) = delete;

  size_t num_x() const { return node_of_col_.size(); }
  int rows() const { return solver_.getNumRows(); }
  int cycle_cuts() const { return cycle_cuts_; }
  int requirement_rows() const { return requirement_rows_; }
  int separated_rows() const { return separated_rows_; }
  /// Odd-cover cuts among the separated rows (separate_odd_covers()).
  int odd_cover_rows() const { return odd_cover_rows_; }
  /// Path cuts among the separated rows (separate_path_cuts()).
  int path_cut_rows() const { return path_cut_rows_; }
  /// Exclusive-reader rows among the separated rows (separate_exclusive_readers()).
  int exclusive_rows() const { return exclusive_rows_; }
  /// Read-class rows among the separated rows (separate_read_classes()).
  int read_rows() const { return read_rows_; }
  int landmark_rows() const { return landmark_rows_; }
  /// The column of node n, or -1 (not a candidate).
  int col_of(NodeIdx n) const { return col_of_node_[n]; }

  /// Landmarks (sets of nodes, each hit by every extraction of the problem), added as rows
  /// by separate() before its first solve. Nodes without a column are ignored.
  void set_landmarks(const std::vector<std::vector<NodeIdx>>& landmarks);

  /// The landmark rows, then the LP relaxation and up to max_rounds cutting-plane rounds on it
  /// (see the file comment): add the violated node-level requirement rows, re-solve, until none
  /// is violated or a round does not raise the LP bound. Every LP solve is capped by the work left in
  /// `work_left` (work_units.h; deterministic: the same model gives the same result however
  /// loaded the machine is), which the work used is taken from, and by the wall-clock
  /// `deadline` (a safety net). Returns the last LP bound (-COIN_DBL_MAX when the LP was not
  /// solved to optimality).
  double separate(int64_t& work_left, Clock::time_point deadline, int max_rounds);
  /// Whether the LP as it stands (all rows added so far) was last solved to optimality: CBC
  /// then starts from its basis; otherwise CBC would solve it again from scratch, unbounded
  /// by the work budget.
  bool lp_solved() const { return solver_.isProvenOptimal(); }

  /// Before CBC: deletes the rows separate()'s rounds added that the LP optimum leaves slack
  /// (each costs CBC work at every event; the landmark rows stay) and the path cuts (CBC's
  /// search is slower with them, IlpOptions::path_cuts), and re-solves within `work_left`.
  /// Returns how many rows were dropped.
  int drop_slack_cuts(int64_t& work_left, Clock::time_point deadline);

  /// Queues "not every class of this cycle keeps its cycle edge"; false if already present.
  /// The queued rows reach the LP in one addRows() (flush_cuts(), also in lp()).
  bool add_cycle_cut(const std::vector<ClassIdx>& cycle);
  void flush_cuts();

  /// The model for CBC, with all queued rows.
  const OsiClpSolverInterface& lp() {
    require_rows("lp");
    flush_cuts();
    return solver_;
  }

  /// Column values of a choice (x, and order levels when order constraints are on).
  std::vector<double> start_values(const Choice& choice) const;
  /// Chosen node per class (x > 0.5; the largest if several), free classes fixed, pruned.
  /// For a block model: `base`'s choice outside the block, the block's classes from x.
  Choice decode(const double* x, const Choice* base = nullptr) const;
  /// Whether class c is in this model's part of the problem (the block, or everything).
  bool in_part(ClassIdx c) const { return !block_ || (*block_)[c]; }

 private:
  void build();
  // Throws InternalError for a columns-only model (a broken invariant: twins get no LP).
  void require_rows(const char* what) const;
  void precut_short_cycles();
  int separate_requirements(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                            std::vector<double>& rval, std::vector<double>& rlb, std::vector<double>& rub);
  int separate_odd_covers(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                          std::vector<double>& rval, std::vector<double>& rlb, std::vector<double>& rub);
  int separate_deep_odd_covers(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                               std::vector<double>& rval, std::vector<double>& rlb, std::vector<double>& rub);
  void ensure_col_kids();
  // The part's classes with columns (dense index per class, -1 for others) in an order with
  // every class after its columns' child classes; `acyclic` false (and `order` partial) where
  // the part's class graph has a cycle. Built once, after ensure_col_kids().
  struct PartOrder {
    std::vector<int> dense;
    std::vector<ClassIdx> cls;    // per dense index
    std::vector<ClassIdx> order;  // children first
    bool acyclic = false;
  };
  const PartOrder& part_order();
  int separate_path_cuts(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                         std::vector<double>& rval, std::vector<double>& rlb, std::vector<double>& rub);
  int separate_read_classes(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                            std::vector<double>& rval, std::vector<double>& rlb, std::vector<double>& rub);
  int separate_exclusive_readers(const double* x, std::vector<int>& rstart, std::vector<int>& rind,
                                 std::vector<double>& rval, std::vector<double>& rlb, std::vector<double>& rub);

  // A child class the model gives no variable: free, or outside the block.
  bool given(ClassIdx k) const { return red_.class_free[k] || !in_part(k); }

  const ExtractGraph& g_;
  const Reduction& red_;
  const IlpOptions& opts_;
  const std::vector<char>* block_ = nullptr;
  bool columns_only_ = false;
  OsiClpSolverInterface solver_;
  std::vector<int> col_of_node_;
  std::vector<NodeIdx> node_of_col_;
  std::vector<int> order_col_;
  double order_eps_ = 1.0;
  std::set<std::vector<ClassIdx>> seen_cycles_;
  std::set<std::array<ClassIdx, 3>> seen_odd_;  // triples already cut
  std::set<std::vector<int>> seen_paths_;        // path cuts already added (their columns)
  std::vector<std::vector<ClassIdx>> col_kids_;  // per column: its child classes with columns
  std::vector<std::vector<int>> col_readers_;    // per class: the columns reading it (ensure_col_kids)
  struct PendingRows {  // rows in addRows() form
    std::vector<int> start{0}, ind;
    std::vector<double> val, lb, ub;
  } cuts_;
  int cycle_cuts_ = 0;
  int requirement_rows_ = 0;
  int separated_rows_ = 0;
  int odd_cover_rows_ = 0;
  int path_cut_rows_ = 0;
  int exclusive_rows_ = 0;
  int read_rows_ = 0;
  std::set<ClassIdx> read_row_added_;  // classes whose read-class row was added (separate() runs once per
                                       // model; drop_slack_cuts() may have dropped it since)
  // What separate_exclusive_readers() needs of the part's structure (reader_rows.cpp), built on
  // its first call; null until then.
  struct ReachIndex;
  std::shared_ptr<ReachIndex> reach_;
  std::optional<PartOrder> part_order_;
  int base_rows_ = -1;  // rows before the first separation round (separate())
  std::vector<int> path_row_ids_;  // the path cuts' rows
  int landmark_rows_ = 0;
  Requirements own_req_;                 // when the caller passed none
  const Requirements* req_ = &own_req_;
  std::vector<std::vector<int>> class_cols_;
  std::vector<std::vector<int>> landmarks_;  // as columns; emptied once added as rows
};

}  // namespace tensat::extract

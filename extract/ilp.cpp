// ILP extraction with CBC: model building, the cycle-cut loop, time-outs (see ilp.h).
#include "extract/ilp.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>


#include <cstring>

#include <CbcEventHandler.hpp>
#include <CbcHeuristicDive.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <ClpSolve.hpp>
#include <CoinMessageHandler.hpp>
#include <CoinPackedMatrix.hpp>
#include <CoinPackedVector.hpp>
#include <OsiClpSolverInterface.hpp>
#include <spdlog/spdlog.h>

#include "extract/greedy.h"
#include "extract/isolated_call.h"
#include "extract/local_search.h"
#include "extract/reduce.h"

namespace tensat::extract {

OrderConstraints parse_order(const std::string& s) {
  if (s == "none") return OrderConstraints::None;
  if (s == "real") return OrderConstraints::Real;
  if (s == "int") return OrderConstraints::Integer;
  throw InputError("unknown order constraints \"" + s + "\" (expected none, real or int)");
}

std::string to_string(OrderConstraints o) {
  switch (o) {
    case OrderConstraints::None: return "none";
    case OrderConstraints::Real: return "real";
    case OrderConstraints::Integer: return "int";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int cbc_callback(CbcModel*, int) { return 0; }

// CBC's event handler, with two jobs (CBC takes one handler per model).
//
// Stall stop: CBC calls event() after each node, each cut pass (root included), each root
// heuristic and each new solution. From the first event on (the first LP is solved by then),
// the handler keeps CBC's own time limit at "last improvement (or first event) + stall_s",
// capped by the real limit, so every place where CBC checks its time limit honours the stall
// rule, the root cut loop included (its passes take seconds on the larger e-graphs and ignore
// `stop`).
//
// Dive cap: the root heuristics run before the cut loop and check no time limit at all. The
// diving heuristic (DiveCoefficient, on by default) fixes variables one LP at a time for up to
// 100 passes; on the pipeline e-graphs it ran 0.8-2.6 s past the stall deadline without a
// result, while its successful dives (nasrnn, k1 and k2) finished within 30 passes. At the
// first event of the model CBC actually searches (it has heuristics; it comes after the
// feasibility pump, before the dive), every dive heuristic is limited to
// IlpOptions::cbc_dive_passes passes.
//
// CBC clones the handler into the model it solves, so the state lives behind a shared pointer.
class SearchHandler : public CbcEventHandler {
 public:
  struct State {
    std::mutex mu;
    double stall_s = 0.0;        // 0: no stall stop
    int dive_passes = 0;         // 0: CBC's dive limits
    double limit_s = 0.0;        // the call's real time limit (CBC seconds)
    bool armed = false;          // the first event has been seen
    double first_event_s = -1.0; // CBC seconds at the first event
    double deadline_s = 0.0;     // the stall deadline last set (CBC seconds)
    double best = COIN_DBL_MAX;  // best objective seen (minimisation)
    int events = 0;
    int dives_capped = 0;        // dive heuristics limited
  };
  explicit SearchHandler(std::shared_ptr<State> st) : state_(std::move(st)) {}
  SearchHandler(const SearchHandler& o) = default;
  CbcEventHandler* clone() const override { return new SearchHandler(*this); }

  CbcAction event(CbcEvent e) override { return check(e); }
  CbcAction event(CbcEvent e, void*) override { return check(e); }

 private:
  CbcAction check(CbcEvent) {
    if (!model_ || !state_) return noAction;
    State& s = *state_;
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.events;
    auto* m = const_cast<CbcModel*>(model_);
    if (s.dive_passes > 0 && s.dives_capped == 0)
      for (int i = 0; i < m->numberHeuristics(); ++i)
        if (auto* dive = dynamic_cast<CbcHeuristicDive*>(m->heuristic(i))) {
          dive->setMaxIterations(s.dive_passes);
          ++s.dives_capped;
        }
    const double now = m->getCurrentSeconds();
    bool extend = false;
    if (!s.armed) {
      s.armed = true;
      s.first_event_s = now;
      extend = true;
    }
    if (s.stall_s <= 0.0) return noAction;
    if (m->getSolutionCount() > 0) {
      const double obj = m->getMinimizationObjValue();
      if (obj < s.best - 1e-9 * std::max(1.0, std::abs(obj))) {
        s.best = obj;
        extend = true;
      }
    }
    if (extend) {
      s.deadline_s = std::min(s.limit_s, now + s.stall_s);
      m->setMaximumSeconds(s.deadline_s);
    }
    return noAction;
  }

  std::shared_ptr<State> state_;
};

// The ILP over the reduced problem. Columns: x per alive node of a non-free class, then an
// order variable t per such class when order constraints are on.
class IlpModel {
 public:
  IlpModel(const ExtractGraph& g, const Reduction& red, const IlpOptions& opts)
      : g_(g), red_(red), opts_(opts) {
    build();
  }

  size_t num_x() const { return node_of_col_.size(); }
  int rows() const { return solver_.getNumRows(); }
  int cycle_cuts() const { return cycle_cuts_; }
  int requirement_rows() const { return requirement_rows_; }
  int separated_rows() const { return separated_rows_; }

  // Cutting planes on the LP relaxation before CBC: for a class C and a class D required by
  // some of C's nodes (Req(n) = its child classes and what they require), the nodes of C that
  // require D exclude each other, so sum_{n in C, D in Req(n)} x_n <= sum x(D). The family is
  // quadratic, so only rows the current LP optimum violates are added, for a few rounds, and
  // only while they raise the bound: a round whose rows left the LP objective where it was
  // ends the separation (on the 50k-node e-graphs the rounds after that changed the bound by
  // 1e-16 and cost a resolve, 0.05-0.3 s, each). Returns the LP bound reached.
  double separate_requirements(Clock::time_point deadline, int max_rounds) {
    if (!req_.computed) return -COIN_DBL_MAX;
    const size_t V = req_.class_of.size(), W = req_.words;
    std::vector<double> sum(V, 0.0);
    std::vector<uint32_t> touched;
    std::vector<std::vector<uint64_t>> nreq;
    double obj = -COIN_DBL_MAX;
    for (int round = 0; round < max_rounds && Clock::now() < deadline; ++round) {
      if (round == 0) solver_.initialSolve(); else solver_.resolve();
      if (!solver_.isProvenOptimal()) break;
      const double prev = obj;
      obj = solver_.getObjValue();
      if (round > 0 && obj <= prev + 1e-9 * std::max(1.0, std::abs(obj))) {
        spdlog::debug("ilp: separation round {}: LP {}, no better than the last round: stop",
                      round, obj);
        break;
      }
      const double* x = solver_.getColSolution();
      std::vector<int> rstart{0}, rind;
      std::vector<double> rval, rlb, rub;
      for (ClassIdx c = 0; c < g_.classes.size(); ++c) {
        if (req_.dense[c] < 0 || req_.unusable[c]) continue;
        const auto& cols = class_cols_[c];
        double total = 0.0;
        for (int i : cols) total += x[i];
        if (total < 1e-6) continue;
        nreq.assign(cols.size(), std::vector<uint64_t>(W, 0));
        touched.clear();
        for (size_t j = 0; j < cols.size(); ++j) {
          auto& b = nreq[j];
          for (ClassIdx k : g_.child_classes(node_of_col_[cols[j]])) {
            if (req_.dense[k] < 0) continue;
            const uint64_t* rk = req_.of(k);
            for (size_t w = 0; w < W; ++w) b[w] |= rk[w];
            const auto dk = static_cast<size_t>(req_.dense[k]);
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
          const ClassIdx dc = req_.class_of[d];
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
          }
          sum[d] = 0.0;
        }
      }
      const int added = static_cast<int>(rlb.size());
      spdlog::debug("ilp: separation round {}: LP {}, {} violated requirement rows, {} iterations",
                    round, obj, added, solver_.getIterationCount());
      if (added == 0) break;
      solver_.addRows(added, rstart.data(), rind.data(), rval.data(), rlb.data(), rub.data());
      separated_rows_ += added;
    }
    return obj;
  }

  // Queues "not every class of this cycle keeps its cycle edge"; false if already present.
  // The queued rows reach the LP in one addRows() (flush_cuts(), also at the start of
  // solve()): added one at a time, each row copied the whole matrix, which made the 966
  // pre-cuts of the extraction-gym bert e-graph take 1.8 s.
  bool add_cycle_cut(const std::vector<ClassIdx>& cycle) {
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

  void flush_cuts() {
    const int n = static_cast<int>(cuts_.lb.size());
    if (n > 0)
      solver_.addRows(n, cuts_.start.data(), cuts_.ind.data(), cuts_.val.data(), cuts_.lb.data(),
                      cuts_.ub.data());
    cuts_ = PendingRows{};
  }

  struct Outcome {
    bool has_solution = false;
    bool proven_optimal = false;
    bool infeasible = false;
    double objective = 0.0;
    double bound = -std::numeric_limits<double>::infinity();
    bool stalled = false;  // stopped by the stall rule
    Choice choice;  // decoded, pruned to the roots (may be cyclic)
    std::string failure;  // non-empty: the solver process crashed or hung (isolate_solver)
  };

  // One CBC run, in a child process when opts_.isolate_solver (see ilp.h, isolated_call.h).
  Outcome solve(const Choice& warm, double seconds, double stall_s) {
    flush_cuts();  // changes solver_: must happen here, not in the child
    if (!opts_.isolate_solver) return solve_here(warm, seconds, stall_s);
    // CBC overshoots its limit by the node it is in, and the dives ignore it: a generous hard
    // deadline, after which the child is killed.
    const IsolatedResult r = run_isolated([&] { return encode(solve_here(warm, seconds, stall_s)); },
                                          seconds + std::max(5.0, seconds),
                                          [](const std::string& m) { Outcome o; return decode_outcome(m, o); });
    Outcome out;
    if (r.failure.empty() && decode_outcome(r.bytes, out)) return out;
    out = Outcome{};
    out.failure = "CBC failed: " + (r.failure.empty() ? std::string("its result did not decode") : r.failure);
    return out;
  }

  Outcome solve_here(const Choice& warm, double seconds, double stall_s) {
    CbcModel model(solver_);
    auto events = std::make_shared<SearchHandler::State>();
    events->stall_s = std::max(stall_s, 0.0);
    const int passes = opts_.cbc_dive_passes;
    events->dive_passes = passes > 0 ? std::max(10, passes - passes % 10) : 0;
    events->limit_s = std::max(seconds, 0.01);
    if (events->stall_s > 0.0 || events->dive_passes > 0) {
      SearchHandler handler(events);
      model.passInEventHandler(&handler);  // cloned
    }
    CbcSolverUsefulData data;
    CbcMain0(model, data);
    data.useSignalHandler_ = false;
    const int log = opts_.cbc_log_level;
    model.setLogLevel(log);
    model.messageHandler()->setLogLevel(log);
    model.solver()->messageHandler()->setLogLevel(log);
    data.noPrinting_ = log == 0;
    if (!warm.empty()) model.setMIPStart(mip_start(warm));
    const std::string sec = std::to_string(std::max(seconds, 0.01));
    const std::string threads = std::to_string(std::max(opts_.threads, 1));
    const std::string log_s = std::to_string(log);
    std::vector<const char*> argv = {"onnx-tensat-extract", "-log", log_s.c_str(), "-timeMode", "elapsed",
                                     "-sec", sec.c_str()};
    if (opts_.threads > 1) {
      argv.push_back("-threads");
      argv.push_back(threads.c_str());
    }
    for (const auto& a : opts_.cbc_args) argv.push_back(a.c_str());
    argv.push_back("-solve");
    argv.push_back("-quit");
    CbcMain1(static_cast<int>(argv.size()), argv.data(), model, cbc_callback, data);

    Outcome out;
    // Stopped on its time limit (secondary status 4) while the stall deadline was the
    // tighter one: the stall rule ended the search.
    out.stalled = events->stall_s > 0.0 && events->armed && model.secondaryStatus() == 4 &&
                  events->deadline_s < events->limit_s;
    spdlog::debug("ilp: CBC status {} secondary {}, {} events (the first at {:.3f} s), {} dive "
                  "heuristics capped, stall {}, {:.3f} s",
                  model.status(), model.secondaryStatus(), events->events, events->first_event_s,
                  events->dives_capped, out.stalled, model.getCurrentSeconds());
    out.proven_optimal = model.isProvenOptimal();
    out.infeasible = model.isProvenInfeasible();
    out.bound = model.getBestPossibleObjValue();
    const double* x = model.bestSolution();
    if (x && model.getSolutionCount() > 0) {
      out.has_solution = true;
      out.objective = model.getObjValue();
      out.choice = decode(x);
    }
    return out;
  }

  // The Outcome as bytes for the pipe (same binary on both ends: raw fields).
  static std::string encode(const Outcome& o) {
    std::string s;
    auto put = [&](const void* p, size_t n) { s.append(static_cast<const char*>(p), n); };
    const uint8_t flags = static_cast<uint8_t>((o.has_solution ? 1 : 0) | (o.proven_optimal ? 2 : 0) |
                                               (o.infeasible ? 4 : 0) | (o.stalled ? 8 : 0));
    const uint64_t n = o.choice.size();
    put(&flags, sizeof flags);
    put(&o.objective, sizeof o.objective);
    put(&o.bound, sizeof o.bound);
    put(&n, sizeof n);
    if (n) put(o.choice.data(), n * sizeof(o.choice[0]));
    return s;
  }

  static bool decode_outcome(const std::string& s, Outcome& o) {
    size_t off = 0;
    auto get = [&](void* p, size_t n) {
      if (s.size() - off < n) return false;
      std::memcpy(p, s.data() + off, n);
      off += n;
      return true;
    };
    uint8_t flags = 0;
    uint64_t n = 0;
    if (!get(&flags, sizeof flags) || !get(&o.objective, sizeof o.objective) ||
        !get(&o.bound, sizeof o.bound) || !get(&n, sizeof n))
      return false;
    if (n > (s.size() - off) / sizeof(o.choice[0])) return false;
    o.choice.resize(n);
    if (n && !get(o.choice.data(), n * sizeof(o.choice[0]))) return false;
    o.has_solution = flags & 1;
    o.proven_optimal = flags & 2;
    o.infeasible = flags & 4;
    o.stalled = flags & 8;
    return off == s.size();
  }

 private:
  void build() {
    const size_t N = g_.nodes.size(), C = g_.classes.size();
    col_of_node_.assign(N, -1);
    for (NodeIdx n = 0; n < N; ++n)
      if (red_.node_alive[n] && !red_.class_free[g_.nodes[n].eclass]) {
        col_of_node_[n] = static_cast<int>(node_of_col_.size());
        node_of_col_.push_back(n);
      }
    const int nx = static_cast<int>(node_of_col_.size());
    order_col_.assign(C, -1);
    int ncols = nx;
    if (opts_.order != OrderConstraints::None)
      for (ClassIdx c = 0; c < C; ++c)
        if (red_.class_alive[c] && !red_.class_free[c]) order_col_[c] = ncols++;
    const double M = static_cast<double>(ncols - nx);

    std::vector<double> collb(ncols, 0.0), colub(ncols, 1.0), obj(ncols, 0.0);
    for (int i = 0; i < nx; ++i) obj[i] = g_.nodes[node_of_col_[i]].cost;
    for (int i = nx; i < ncols; ++i)
      colub[i] = opts_.order == OrderConstraints::Integer ? std::max(M - 1.0, 0.0) : 1.0;

    // Rows as triplets (appending rows one by one to a CoinPackedMatrix is quadratic).
    std::vector<int> tri_row, tri_col;
    std::vector<double> tri_val, rowlb, rowub;
    auto add = [&](const CoinPackedVector& v, double lb, double ub) {
      const int r = static_cast<int>(rowlb.size());
      for (int i = 0; i < v.getNumElements(); ++i) {
        tri_row.push_back(r);
        tri_col.push_back(v.getIndices()[i]);
        tri_val.push_back(v.getElements()[i]);
      }
      rowlb.push_back(lb);
      rowub.push_back(ub);
    };
    auto is_root = [&](ClassIdx c) {
      return std::find(g_.roots.begin(), g_.roots.end(), c) != g_.roots.end();
    };
    Requirements& req = req_;
    if (opts_.requirement_rows && opts_.reduce) {
      req = requirements(g_, red_);
      if (req.computed) {
        // Unusable classes, and nodes with an unusable child class, are fixed to 0.
        for (int i = 0; i < nx; ++i) {
          const NodeIdx n = node_of_col_[i];
          bool dead = req.unusable[g_.nodes[n].eclass] != 0;
          for (ClassIdx k : g_.nodes[n].children) dead = dead || req.unusable[k] != 0;
          if (dead) colub[i] = 0.0;
        }
      }
    }
    auto mandatory = [&](ClassIdx c) { return is_root(c) || (req.computed && req.mandatory[c]); };
    // One node in each root (and mandatory) class, at most one elsewhere.
    std::vector<std::vector<int>>& class_cols = class_cols_;
    class_cols.assign(C, {});
    for (ClassIdx c = 0; c < C; ++c) {
      if (!red_.class_alive[c] || red_.class_free[c]) continue;
      CoinPackedVector v;
      for (NodeIdx n : g_.classes[c].nodes)
        if (col_of_node_[n] >= 0) {
          v.insert(col_of_node_[n], 1.0);
          class_cols[c].push_back(col_of_node_[n]);
        }
      if (mandatory(c)) {
        if (v.getNumElements() == 1) collb[v.getIndices()[0]] = 1.0;  // single node: fixed
        add(v, 1.0, 1.0);
      } else if (v.getNumElements() > 1) {
        add(v, -COIN_DBL_MAX, 1.0);
      }
    }
    // A chosen node needs a chosen node in every (non-free) child class. Aggregated per
    // (parent class, child class): the nodes of a class exclude each other, so the sum of
    // the parent nodes that use K is at most K's sum. This dominates the per-node rows
    // x_n <= sum x(K).
    std::vector<ClassIdx> used_by_all;
    for (ClassIdx c = 0; c < C; ++c) {
      if (!red_.class_alive[c] || red_.class_free[c]) continue;
      std::map<ClassIdx, std::vector<int>> users;  // child class -> parent columns
      for (NodeIdx n : g_.classes[c].nodes) {
        if (col_of_node_[n] < 0) continue;
        for (ClassIdx k : g_.child_classes(n))
          if (!red_.class_free[k]) users[k].push_back(col_of_node_[n]);
      }
      used_by_all.clear();
      for (const auto& [k, cols] : users) {
        if (cols.size() == class_cols[c].size()) used_by_all.push_back(k);
        if (mandatory(c) && mandatory(k) && cols.size() == class_cols[c].size()) continue;
        CoinPackedVector v;
        for (int i : cols) v.insert(i, 1.0);
        for (int i : class_cols[k]) v.insert(i, -1.0);
        add(v, -COIN_DBL_MAX, 0.0);
      }
      // Requirement rows: using c implies using each immediately required class D (only
      // where no child row says the same already).
      if (!req.computed || req.unusable[c]) continue;
      for (ClassIdx d : req.immediate[c]) {
        if (std::binary_search(used_by_all.begin(), used_by_all.end(), d)) continue;
        if (mandatory(c) && mandatory(d)) continue;
        CoinPackedVector v;
        for (int i : class_cols[c]) v.insert(i, 1.0);
        for (int i : class_cols[d]) v.insert(i, -1.0);
        add(v, -COIN_DBL_MAX, 0.0);
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
          if (red_.class_free[k]) continue;
          CoinPackedVector v;
          v.insert(order_col_[c], 1.0);
          v.insert(order_col_[k], -1.0);
          v.insert(i, -A);
          add(v, eps - A, COIN_DBL_MAX);
        }
      }
    }
    const CoinPackedMatrix rows(false, tri_row.data(), tri_col.data(), tri_val.data(),
                                static_cast<CoinBigIndex>(tri_val.size()));
    CoinPackedMatrix full(rows);
    full.setDimensions(static_cast<int>(rowlb.size()), ncols);
    solver_.loadProblem(full, collb.data(), colub.data(), obj.data(), rowlb.data(), rowub.data());
    for (int i = 0; i < nx; ++i) solver_.setInteger(i);
    if (opts_.order == OrderConstraints::Integer)
      for (int i = nx; i < ncols; ++i) solver_.setInteger(i);
    solver_.messageHandler()->setLogLevel(0);
    // The initial LP (before the separation rounds; CBC starts from its basis): primal simplex
    // from a crash basis, with presolve. The default solve picks the "idiot" crash for large
    // models, which is very slow on these (minutes on bert). Against dual simplex from the
    // all-slack basis (the previous choice) it took 0.50 / 0.28 / 0.47 / 0.41 s instead of
    // 1.07 / 0.61 / 0.66 / 0.98 s on the 50k-node nasneta / nasrnn / bert / inceptionv3
    // e-graphs, and 0.01-0.08 s either way on the 3k-15k-node ones (extract/README.md).
    ClpSolve lp_options;
    lp_options.setSolveType(ClpSolve::usePrimal);
    lp_options.setSpecialOption(1, 1);  // "startup in primal: use crash"
    lp_options.setPresolveType(ClpSolve::presolveOn);
    solver_.setSolveOptions(lp_options);
    solver_.setIntParam(OsiNameDiscipline, 1);
    for (int i = 0; i < ncols; ++i) solver_.setColName(i, "c" + std::to_string(i));
    order_eps_ = opts_.order == OrderConstraints::Integer ? 1.0 : 1.0 / (M + 1.0);

    if (opts_.order == OrderConstraints::None && opts_.precut_cycle_length >= 2)
      precut_short_cycles();
    flush_cuts();
  }

  // Cuts every simple cycle of the class graph (edges of candidate nodes) up to
  // precut_cycle_length classes, enumerated from each cycle's smallest class inside its
  // strongly connected component. Most cycles of TENSAT e-graphs (Split/Concat) are short.
  void precut_short_cycles() {
    const size_t C = g_.classes.size();
    std::vector<std::vector<ClassIdx>> succ(C);
    for (NodeIdx n : node_of_col_)
      for (ClassIdx k : g_.child_classes(n))
        if (!red_.class_free[k]) succ[g_.nodes[n].eclass].push_back(k);
    for (auto& s : succ) {
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
    }
    const std::vector<uint32_t> comp = scc(succ);
    std::vector<ClassIdx> path;
    std::vector<char> on_path(C, 0);
    const size_t max_len = static_cast<size_t>(opts_.precut_cycle_length);
    // Depth-first from `start` through larger classes of the same component.
    auto dfs = [&](auto&& self, ClassIdx start, ClassIdx v) -> bool {
      for (ClassIdx w : succ[v]) {
        if (comp[w] != comp[start]) continue;
        if (w == start) {
          add_cycle_cut(path);
          if (cycle_cuts_ >= opts_.max_precuts) return false;
        } else if (w > start && !on_path[w] && path.size() < max_len) {
          path.push_back(w);
          on_path[w] = 1;
          const bool go_on = self(self, start, w);
          on_path[w] = 0;
          path.pop_back();
          if (!go_on) return false;
        }
      }
      return true;
    };
    for (ClassIdx s = 0; s < C; ++s) {
      path = {s};
      on_path[s] = 1;
      const bool go_on = dfs(dfs, s, s);
      on_path[s] = 0;
      if (!go_on) {
        spdlog::warn("ilp: stopped pre-cutting cycles at {} cuts", cycle_cuts_);
        break;
      }
    }
  }

  // Strongly connected components (iterative Tarjan); returns a component id per vertex.
  static std::vector<uint32_t> scc(const std::vector<std::vector<ClassIdx>>& succ) {
    const size_t V = succ.size();
    constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> index(V, kNone), low(V, 0), comp(V, kNone);
    std::vector<ClassIdx> stack;
    std::vector<char> on_stack(V, 0);
    std::vector<std::pair<ClassIdx, size_t>> call;
    uint32_t next = 0, ncomp = 0;
    for (ClassIdx root = 0; root < V; ++root) {
      if (index[root] != kNone) continue;
      call.push_back({root, 0});
      while (!call.empty()) {
        auto& [v, i] = call.back();
        if (i == 0 && index[v] == kNone) {
          index[v] = low[v] = next++;
          stack.push_back(v);
          on_stack[v] = 1;
        }
        if (i < succ[v].size()) {
          const ClassIdx w = succ[v][i++];
          if (index[w] == kNone) {
            call.push_back({w, 0});
          } else if (on_stack[w]) {
            low[v] = std::min(low[v], index[w]);
          }
          continue;
        }
        if (low[v] == index[v]) {
          ClassIdx w;
          do {
            w = stack.back();
            stack.pop_back();
            on_stack[w] = 0;
            comp[w] = ncomp;
          } while (w != v);
          ++ncomp;
        }
        const ClassIdx done = v;
        call.pop_back();
        if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
      }
    }
    return comp;
  }

  // Column values for a choice (x, and order levels when order constraints are on).
  std::vector<std::pair<std::string, double>> mip_start(const Choice& choice) const {
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
    std::vector<std::pair<std::string, double>> out;
    out.reserve(val.size());
    for (size_t i = 0; i < val.size(); ++i) out.emplace_back("c" + std::to_string(i), val[i]);
    return out;
  }

  // Chosen node per class (x > 0.5; the largest if several), free classes fixed, pruned.
  Choice decode(const double* x) const {
    Choice choice(g_.classes.size(), -1);
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

  const ExtractGraph& g_;
  const Reduction& red_;
  const IlpOptions& opts_;
  OsiClpSolverInterface solver_;
  std::vector<int> col_of_node_;
  std::vector<NodeIdx> node_of_col_;
  std::vector<int> order_col_;
  double order_eps_ = 1.0;
  std::set<std::vector<ClassIdx>> seen_cycles_;
  struct PendingRows {  // rows in addRows() form
    std::vector<int> start{0}, ind;
    std::vector<double> val, lb, ub;
  } cuts_;
  int cycle_cuts_ = 0;
  int requirement_rows_ = 0;
  int separated_rows_ = 0;
  Requirements req_;
  std::vector<std::vector<int>> class_cols_;
};

// A trivial reduction (everything usable kept, nothing free) for IlpOptions::reduce = false;
// unusable nodes still get no column.
Reduction no_reduction(const ExtractGraph& g) {
  Reduction r;
  r.node_alive.resize(g.nodes.size());
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) r.node_alive[n] = g.usable(n);
  r.class_alive.assign(g.classes.size(), 1);
  r.class_free.assign(g.classes.size(), 0);
  r.free_node.assign(g.classes.size(), -1);
  r.replacement.assign(g.nodes.size(), -1);
  return r;
}

// An acyclic extraction that keeps as much of a (cyclic) ILP choice as the tree greedy can:
// the ILP's nodes cost nothing, the others their cost.
Choice repair(const ExtractGraph& g, const Choice& cyclic) {
  std::vector<double> costs(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) costs[n] = g.nodes[n].cost;
  for (int64_t n : cyclic)
    if (n >= 0) costs[static_cast<size_t>(n)] = 0.0;
  return greedy_tree_choice(g, costs);
}

}  // namespace

ExtractResult extract_ilp(const ExtractGraph& g, const IlpOptions& opts) {
  const auto t0 = Clock::now();
  ExtractResult res;
  res.method = "ilp";

  // The debug lines carry the seconds since the call started, to show where the time goes.
  const Reduction red = opts.reduce ? reduce(g) : no_reduction(g);
  if (opts.reduce) spdlog::debug("ilp: [{:.3f} s] {}", seconds_since(t0), describe(red.stats));

  // Warm start: the best of greedy, greedy-DAG and greedy-DAG improved by local search (all
  // checked acyclic; the local search is never worse than greedy-DAG), mapped onto the
  // reduced problem (never more expensive).
  const ExtractResult greedy = extract_greedy(g), dag = extract_greedy_dag(g);
  const ExtractResult local = opts.local_search ? improve_local(g, dag.choice) : dag;
  Choice incumbent = local.dag_cost <= greedy.dag_cost ? local.choice : greedy.choice;
  if (opts.reduce) incumbent = map_to_reduced(g, red, incumbent);
  check_extraction(g, incumbent, "ilp warm start");
  double incumbent_cost = dag_cost(g, incumbent);
  res.warm_start_cost = incumbent_cost;
  bool improved = false;
  spdlog::debug("ilp: [{:.3f} s] warm start {} (greedy {} in {:.3f} s, greedy-DAG {} in {:.3f} s, "
                "local search {} in {:.3f} s)",
                seconds_since(t0), incumbent_cost, greedy.dag_cost, greedy.time_s, dag.dag_cost,
                dag.time_s, local.dag_cost, local.time_s);

  IlpModel model(g, red, opts);
  spdlog::debug("ilp: [{:.3f} s] model built", seconds_since(t0));
  if (opts.separation_rounds > 0)
    model.separate_requirements(t0 + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(0.3 * opts.time_limit_s)),
                                opts.separation_rounds);
  spdlog::debug("ilp: [{:.3f} s] {} columns, {} rows ({} requirement rows, {} separated), {} cycle "
                "cuts before solving",
                seconds_since(t0), model.num_x(), model.rows(), model.requirement_rows(),
                model.separated_rows(), model.cycle_cuts());

  double bound = -std::numeric_limits<double>::infinity();
  std::string status;
  const double stall_s = opts.stall_s < 0.0 ? std::max(0.3, 0.03 * opts.time_limit_s) : opts.stall_s;
  bool stalled = false;  // the last CBC round was ended by the stall rule
  if (model.num_x() == 0) {
    // Every class left is free: the mapped warm start costs nothing and is optimal (CBC
    // on an empty model reports no solution and a bound of +inf).
    status = "optimal";
    bound = incumbent_cost;
  }
  for (int round = 0; round < opts.max_rounds && model.num_x() > 0; ++round) {
    // CBC overshoots its limit a little (it finishes the node it is in): keep a margin.
    const double left = 0.9 * (opts.time_limit_s - seconds_since(t0)) - 0.1;
    if (left <= 0.0) break;
    auto out = model.solve(opts.warm_start ? incumbent : Choice{}, left, stall_s);
    if (!out.failure.empty()) {
      spdlog::warn("ilp: {}; keeping the best extraction found before it", out.failure);
      status = improved ? "ilp-failed-best-found" : "ilp-failed-greedy";
      break;
    }
    stalled = out.stalled;
    res.ilp_rounds = round + 1;
    bound = std::max(bound, out.bound);  // every round solves a relaxation: a valid bound
    if (!out.has_solution) {
      if (out.infeasible) {
        spdlog::error("ilp: CBC reports the model infeasible although the warm start is feasible");
        status = "ilp-failed-greedy";
      }
      break;
    }
    const auto cycles = find_cycles(g, out.choice);
    const bool valid = extraction_problem(g, out.choice).empty();
    spdlog::debug("ilp: [{:.3f} s] round {} objective {} bound {} optimal {} cycles {}",
                  seconds_since(t0), round, out.objective, out.bound, out.proven_optimal, cycles.size());
    if (valid) {
      const double cost = dag_cost(g, out.choice);
      if (cost <= incumbent_cost) {
        improved = improved || cost < incumbent_cost;
        incumbent = out.choice;
        incumbent_cost = cost;
      }
      if (out.proven_optimal) {
        status = "optimal";
        bound = std::max(bound, std::min(out.bound, incumbent_cost));
      }
      break;  // acyclic: optimal, or the time limit ended this round
    }
    // Cyclic (or, numerically, incomplete): cut the cycles, keep a repaired solution.
    int added = 0;
    for (const auto& cyc : cycles) added += model.add_cycle_cut(cyc) ? 1 : 0;
    const Choice fixed = repair(g, out.choice);
    const double fixed_cost = dag_cost(g, fixed);
    if (fixed_cost < incumbent_cost) {
      incumbent = opts.reduce ? map_to_reduced(g, red, fixed) : fixed;
      incumbent_cost = dag_cost(g, incumbent);
      improved = true;
    }
    if (added == 0) {
      spdlog::error("ilp: round {} gave an invalid solution and no new cycle cut", round);
      status = "ilp-failed-greedy";
      break;
    }
  }
  if (status.empty()) {
    const std::string why = stalled ? "stalled" : "timeout";
    status = why + (improved ? "-best-found" : "-greedy");
  }

  res.choice = incumbent;
  res.status = status;
  finish_result(g, res);
  res.best_bound = bound;
  if (status == "optimal") {
    res.gap = 0.0;
  } else if (std::isfinite(bound)) {
    res.gap = std::max(0.0, (res.dag_cost - bound) / std::max(std::abs(res.dag_cost), 1e-12));
  } else {
    res.gap = std::nan("");
  }
  res.cycle_cuts = model.cycle_cuts();
  res.time_s = seconds_since(t0);
  return res;
}

}  // namespace tensat::extract

// CBC run: event handler, MIP start, options, child process (see cbc_driver.h).
#include "extract/cbc_driver.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include <CbcEventHandler.hpp>
#include <CbcHeuristicDive.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <OsiClpSolverInterface.hpp>
#include <spdlog/spdlog.h>

#include "extract/isolated_call.h"

namespace tensat::extract {

namespace {

int cbc_callback(CbcModel*, int) { return 0; }

// CBC's event handler, with four jobs (CBC takes one handler per model).
//
// Work count: CBC calls event() after each node, each cut pass (root included), each root
// heuristic and each new solution, in an order that depends only on the model (one thread).
// At each event the handler adds the simplex iterations the calling model (the searching
// model, or a sub-MIP of a heuristic) did since its last event, plus event_work for the
// event itself (heuristics and cut generators do work CBC does not count as iterations). The
// count is deterministic: the same model stops at the same event on an idle or a loaded
// machine.
//
// Budget and stall stop: at the first event where the count is over work_limit, or more than
// work_stall past the last improvement of the incumbent (or the first event), the search
// stops: the event returns `stop` and CBC's time limit is set to "already over", so every
// place where CBC checks its time limit ends too, the root cut loop included (it ignores an
// event handler's `stop`; its passes took seconds on the larger e-graphs). Both conditions
// stay true, so a stop inside a sub-MIP also stops the searching model at its next event.
//
// Target: once the incumbent is at or below CbcRunOptions::stop_at_objective (a bound proven
// before CBC started), the search stops the same way.
//
// Dive cap: the root heuristics run before the cut loop and check no limit at all. The
// diving heuristic (DiveCoefficient, on by default) fixes variables one LP at a time for up to
// 100 passes; on the pipeline e-graphs it ran 0.8-2.6 s without a result, while its successful
// dives (nasrnn, k1 and k2) finished within 30 passes. At the first event of the model CBC
// actually searches (it has heuristics; it comes after the feasibility pump, before the
// dive), every dive heuristic is limited to dive_passes passes.
//
// CBC clones the handler into the model it solves (and into sub-MIPs), so the state lives
// behind a shared pointer.
class SearchHandler : public CbcEventHandler {
 public:
  struct State {
    std::mutex mu;
    double work_limit = -1.0;    // < 0: none
    double work_stall = 0.0;     // 0: no stall stop
    double iteration_work = 1.0;
    double event_work = 0.0;
    double target = -COIN_DBL_MAX;
    int dive_passes = 0;         // 0: CBC's dive limits
    bool armed = false;          // the first event has been seen
    bool reached_target = false;
    bool stalled = false;
    bool out_of_work = false;
    double work = 0.0;           // counted so far
    double work_at_best = 0.0;   // the count at the last improvement (or the first event)
    std::map<const CbcModel*, int> iterations_seen;  // per model: its iteration count at its last event
    double first_event_s = -1.0; // CBC seconds at the first event (for the log)
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
  static CbcAction end_search(CbcModel* m) {
    m->setMaximumSeconds(1e-9);  // every later time check ends the search
    return stop;
  }

  CbcAction check(CbcEvent e) {
    if (!model_ || !state_) return noAction;
    State& s = *state_;
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.events;
    auto* m = const_cast<CbcModel*>(model_);
    int& seen = s.iterations_seen[model_];
    s.work += s.event_work + s.iteration_work * std::max(0, m->getIterationCount() - seen);
    seen = m->getIterationCount();
    spdlog::trace("ilp: CBC event {} #{} at {:.3f} s: work {:.0f}, nodes {}, solutions {}, best {}, bound {}",
                  static_cast<int>(e), s.events, m->getCurrentSeconds(), s.work, m->getNodeCount(),
                  m->getSolutionCount(), m->getSolutionCount() ? m->getMinimizationObjValue() : 0.0,
                  m->getBestPossibleObjValue());
    if (s.dive_passes > 0 && s.dives_capped == 0)
      for (int i = 0; i < m->numberHeuristics(); ++i)
        if (auto* dive = dynamic_cast<CbcHeuristicDive*>(m->heuristic(i))) {
          dive->setMaxIterations(s.dive_passes);
          ++s.dives_capped;
        }
    if (m->getSolutionCount() > 0 && m->getMinimizationObjValue() <= s.target) {
      s.reached_target = true;
      return end_search(m);
    }
    if (!s.armed) {
      s.armed = true;
      s.first_event_s = m->getCurrentSeconds();
      s.work_at_best = s.work;
    }
    if (m->getSolutionCount() > 0) {
      const double obj = m->getMinimizationObjValue();
      if (obj < s.best - 1e-9 * std::max(1.0, std::abs(obj))) {
        s.best = obj;
        s.work_at_best = s.work;
      }
    }
    if (s.work_limit >= 0.0 && s.work > s.work_limit) {
      s.out_of_work = true;
      return end_search(m);
    }
    if (s.work_stall > 0.0 && s.work - s.work_at_best > s.work_stall) {
      s.stalled = true;
      return end_search(m);
    }
    return noAction;
  }

  std::shared_ptr<State> state_;
};

CbcOutcome run_here(const OsiClpSolverInterface& lp, const CbcRunOptions& opts) {
  CbcModel model(lp);
  auto events = std::make_shared<SearchHandler::State>();
  events->work_limit = static_cast<double>(opts.work_limit);
  events->work_stall = static_cast<double>(std::max<int64_t>(opts.work_stall, 0));
  events->iteration_work = std::max(opts.iteration_work, 0.0);
  events->event_work = std::max(opts.event_work, 0.0);
  events->target = std::isfinite(opts.stop_at_objective) ? opts.stop_at_objective : -COIN_DBL_MAX;
  const int passes = opts.dive_passes;
  events->dive_passes = passes > 0 ? std::max(10, passes - passes % 10) : 0;
  {
    SearchHandler handler(events);
    model.passInEventHandler(&handler);  // cloned
  }
  CbcSolverUsefulData data;
  CbcMain0(model, data);
  data.useSignalHandler_ = false;
  const int log = opts.log_level;
  model.setLogLevel(log);
  model.messageHandler()->setLogLevel(log);
  model.solver()->messageHandler()->setLogLevel(log);
  data.noPrinting_ = log == 0;
  if (!opts.mip_start.empty()) {
    // CBC 2.10 takes a MIP start by column name only.
    std::vector<std::pair<std::string, double>> start;
    start.reserve(opts.mip_start.size());
    for (size_t i = 0; i < opts.mip_start.size(); ++i) start.emplace_back("c" + std::to_string(i), opts.mip_start[i]);
    model.setMIPStart(start);
  }
  const std::string sec = std::to_string(std::max(opts.seconds, 0.01));
  const std::string threads = std::to_string(std::max(opts.threads, 1));
  const std::string log_s = std::to_string(log);
  std::vector<const char*> argv = {"onnx-tensat-extract", "-log", log_s.c_str(), "-timeMode", "elapsed",
                                   "-sec", sec.c_str()};
  if (opts.threads > 1) {
    argv.push_back("-threads");
    argv.push_back(threads.c_str());
  }
  for (const auto& a : opts.args) argv.push_back(a.c_str());
  argv.push_back("-solve");
  argv.push_back("-quit");
  CbcMain1(static_cast<int>(argv.size()), argv.data(), model, cbc_callback, data);

  CbcOutcome out;
  out.reached_target = events->reached_target;
  out.stalled = events->stalled;
  out.out_of_work = events->out_of_work;
  out.work = static_cast<int64_t>(std::ceil(events->work));
  out.seconds = model.getCurrentSeconds();
  spdlog::debug("ilp: CBC status {} secondary {}, {} events (the first at {:.3f} s), work {}, {} dive "
                "heuristics capped, stall {}, out of work {}, target {}, {:.3f} s",
                model.status(), model.secondaryStatus(), events->events, events->first_event_s, out.work,
                events->dives_capped, out.stalled, out.out_of_work, out.reached_target, out.seconds);
  out.proven_optimal = model.isProvenOptimal();
  out.infeasible = model.isProvenInfeasible();
  out.bound = model.getBestPossibleObjValue();
  const double* x = model.bestSolution();
  if (x && model.getSolutionCount() > 0) {
    out.has_solution = true;
    out.objective = model.getObjValue();
    out.x.assign(x, x + model.getNumCols());
  }
  return out;
}

}  // namespace

// The outcome as bytes for the pipe (same binary on both ends: raw fields).
std::string encode_outcome(const CbcOutcome& o) {
  std::string s;
  auto put = [&](const void* p, size_t n) { s.append(static_cast<const char*>(p), n); };
  const uint8_t flags = static_cast<uint8_t>((o.has_solution ? 1 : 0) | (o.proven_optimal ? 2 : 0) |
                                             (o.infeasible ? 4 : 0) | (o.stalled ? 8 : 0) |
                                             (o.reached_target ? 16 : 0) | (o.out_of_work ? 32 : 0));
  const uint64_t n = o.x.size();
  put(&flags, sizeof flags);
  put(&o.objective, sizeof o.objective);
  put(&o.bound, sizeof o.bound);
  put(&o.seconds, sizeof o.seconds);
  put(&o.work, sizeof o.work);
  put(&n, sizeof n);
  if (n) put(o.x.data(), n * sizeof(o.x[0]));
  return s;
}

bool decode_outcome(const std::string& s, CbcOutcome& o) {
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
      !get(&o.bound, sizeof o.bound) || !get(&o.seconds, sizeof o.seconds) || !get(&o.work, sizeof o.work) ||
      !get(&n, sizeof n))
    return false;
  if (n > (s.size() - off) / sizeof(o.x[0])) return false;
  o.x.resize(n);
  if (n && !get(o.x.data(), n * sizeof(o.x[0]))) return false;
  o.has_solution = flags & 1;
  o.proven_optimal = flags & 2;
  o.infeasible = flags & 4;
  o.stalled = flags & 8;
  o.reached_target = flags & 16;
  o.out_of_work = flags & 32;
  return off == s.size();
}

CbcOutcome run_cbc(const OsiClpSolverInterface& lp, const CbcRunOptions& opts) {
  if (!opts.isolate) return run_here(lp, opts);
  // CBC overshoots its limit by the node it is in, and the dives ignore it: a generous hard
  // deadline, after which the child is killed.
  const double seconds = opts.seconds;
  const IsolatedResult r = run_isolated([&] { return encode_outcome(run_here(lp, opts)); },
                                        seconds + std::max(5.0, seconds),
                                        [](const std::string& m) { CbcOutcome o; return decode_outcome(m, o); },
                                        opts.stop);
  CbcOutcome out;
  if (r.failure.empty() && decode_outcome(r.bytes, out)) return out;
  out = CbcOutcome{};
  out.failure = "CBC failed: " + (r.failure.empty() ? std::string("its result did not decode") : r.failure);
  return out;
}

}  // namespace tensat::extract

// The ILP's two starting extractions (ilp.h, phases 1 and 4): the warm start from the greedy
// extractors and the local search, and the start guided by LM-cut's residual costs.
#pragma once

#include <atomic>
#include <cmath>
#include <mutex>

#include "extract/extract_graph.h"
#include "extract/ilp.h"
#include "extract/lm_cut.h"
#include "extract/reduce.h"

namespace tensat::extract {

// Phase 1's warm start (see ilp.h): the best of greedy, greedy-DAG and greedy-DAG improved by
// local search (all checked acyclic; the local search is never worse than greedy-DAG), and of
// the hints after the local search; on the unreduced graph (extract_ilp maps it onto the
// reduced problem, never more expensive).
// Greedy DAG runs in both orders (greedy.h, DagOrder): the settled one, and the worklist one
// capped at four times the settled one's items (at least 10^6), each followed by the local
// search. The worklist order's sets are sometimes the better start (ts_efficientnet_v2_s:
// 5.126454 after the local search against 5.139039), but it rebuilds sets along chains: on
// NasNet-A it needs 29.6 M items against 2.2 M (0.37 s against 0.04 s), and the cap stops it
// after 0.065 s (uncapped it would have given the same 4.036455).
struct WarmStart {
  ExtractResult greedy, dag, local;
  double worklist = std::nan("");  // the worklist order's greedy DAG (NaN: capped)
  double worklist_local = std::nan("");
  double worklist_s = 0.0;
  Choice choice;
};

/// The greedy extraction (greedy.h) of g, computed once, by whichever thread asks first (the
/// others wait for it). The warm start asks for it last; extract_ilp asks when LM-cut is done,
/// so that on two cores the core LM-cut leaves idle takes it where the warm start is not
/// done yet (NasRNN: LM-cut 13 ms, the warm start 15-16 ms, of which the greedy 1 ms).
class SharedGreedy {
 public:
  SharedGreedy(const ExtractGraph& g, const GraphIndex& index) : g_(g), index_(index) {}
  const ExtractResult& get();

 private:
  const ExtractGraph& g_;
  const GraphIndex& index_;
  std::once_flag once_;
  ExtractResult result_;
};

/// A hint as the warm start takes it: improved by the local search (where opts.local_search),
/// or empty where it is no valid extraction of g.
Choice improved_hint(const ExtractGraph& g, const GraphIndex& index, const IlpOptions& opts, const Choice& hint);

/// `index` is g's (graph_index.h), shared with the reduction beside it (extract_ilp), and
/// `greedy` g's greedy extraction (shared with the caller). `stop` (if given) is polled between
/// the steps and by the local search: once it is set, what comes back is not to be used (a
/// caller that no longer needs it).
WarmStart warm_start(const ExtractGraph& g, const GraphIndex& index, const IlpOptions& opts, SharedGreedy& greedy,
                     const std::atomic<bool>* stop = nullptr);

// A second start, guided by the bound (phase 4): the extraction that is cheapest in the
// landmarks' residual costs. Every extraction S costs at least bound + residual(S) (it hits
// every landmark), so one with little residual cost is near the bound; when its real cost
// meets the bound, it is optimal and CBC does not run (NasRNN, table v1: 0.146 -> 0.029 s,
// when it was taken before the LPs; since 2026-11-26 it is taken after them, only where they
// leave the problem open).
// Greedy DAG on the residual costs, then the local search on the real costs, both without
// the eliminated nodes (greedy DAG on the real costs of that restricted graph found nothing
// better on the benchmark e-graphs). Returns its extraction whatever it costs (the caller
// keeps the cheaper part of each block), or an empty choice when there is none (or once
// `stop` is set: the caller no longer needs it).
Choice guided_start(const ExtractGraph& g, const Reduction& red, const RelaxedTask& task, const LmCut& lm,
                    const std::atomic<bool>& stop);

}  // namespace tensat::extract

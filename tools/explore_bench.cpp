// explore-bench: the exploration phase (equality saturation with the shipped rules) on real
// ONNX models, for comparison with the TENSAT paper's explore times (BENCHMARKS.md).
//
//   explore-bench [options] MODEL.onnx...
//     --k-multi 1[,2,...]          iterations with multi-pattern rules (default 1)
//     --cycle-filter efficient[,vanilla,none]   (default efficient)
//     --node-limit N               (default 50000)
//     --iter-limit N               (default 15)
//     --time-limit S               (default 60)
//     --repeat N                   runs per configuration; the median time is reported (default 1)
//     --multi-limit N              combinations per multi-pattern rule and iteration (default 100000)
//     --no-incremental             search every class every iteration (egg's behaviour)
//     --rules DIR                  rule folder (default: the shipped rules)
//     --per-rule                   per-rule totals (matches, applied, rejections, times) of the
//                                  rules that fired or took at least 1 ms
//     --iterations                 the runner's per-iteration summary
//     --check                      check_invariants(), acyclicity (minus filtered e-nodes) and that
//                                  the root still has a term of unfiltered e-nodes, after each run
//     --profile                    per iteration: search, apply, rebuild and cycle-filter times in
//                                  ms; and the 20 rules that took longest (search + apply), from
//                                  the run with the median time
//     --counts                     everything of a run that must not depend on how fast the engine
//                                  is: per iteration e-nodes, e-classes and newly filtered e-nodes,
//                                  per rule and iteration every counter (no times), and a digest
//                                  of the final e-graph (classes, their e-nodes, filtered flags).
//                                  Diff two builds' output to check an optimization changes nothing.
//
// Each model is imported once; every (k_multi, filter) combination explores a fresh e-graph.
// Times are seconds of Runner::run only (not import, not add_graph): wall clock (explore_s,
// the median), this process's CPU time (cpu_s, median: the better number on a machine shared
// with other jobs) and the fastest run's wall clock (min_s: least disturbed by other jobs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "egraph/bridge.h"
#include "egraph/cycle_filter.h"
#include "egraph/egraph.h"
#include "egraph/runner.h"
#include "importer/importer.h"
#include "rules/loader.h"
#include "support/blas_threads.h"

using namespace tensat;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
// CPU seconds of this (single-threaded) process: robust where other jobs share the cores.
double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= s.size()) {
    size_t c = s.find(',', from);
    if (c == std::string::npos) c = s.size();
    if (c > from) out.push_back(s.substr(from, c - from));
    from = c + 1;
  }
  return out;
}

std::string basename_no_ext(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string b = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = b.rfind('.');
  return dot == std::string::npos ? b : b.substr(0, dot);
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr, "explore-bench: %s\nusage: explore-bench [--k-multi 1,2] "
               "[--cycle-filter efficient,vanilla,none] [--node-limit N] [--iter-limit N] "
               "[--time-limit S] [--repeat N] [--multi-limit N] [--no-incremental] [--rules DIR] [--per-rule] [--iterations] [--check] [--counts] [--profile] "
               "MODEL.onnx...\n", msg);
  std::exit(2);
}

struct Options {
  std::vector<size_t> k_multi{1};
  std::vector<CycleFilterMode> filters{CycleFilterMode::Efficient};
  size_t node_limit = 50000, iter_limit = 15, repeat = 1;
  size_t multi_limit = RunnerConfig{}.multi_combination_limit;
  bool incremental = true;
  double time_limit = 60;
  std::string rules_dir;
  bool per_rule = false, iterations = false, check = false, counts = false, profile = false;
  std::vector<std::string> models;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--k-multi") {
      o.k_multi.clear();
      for (auto& s : split_list(value())) o.k_multi.push_back(std::strtoull(s.c_str(), nullptr, 10));
    } else if (a == "--cycle-filter") {
      o.filters.clear();
      for (auto& s : split_list(value())) {
        auto m = cycle_filter_from_name(s);
        if (!m) usage(("unknown cycle filter " + s).c_str());
        o.filters.push_back(*m);
      }
    } else if (a == "--node-limit") {
      o.node_limit = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--iter-limit") {
      o.iter_limit = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--time-limit") {
      o.time_limit = std::strtod(value().c_str(), nullptr);
    } else if (a == "--multi-limit") {
      o.multi_limit = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--no-incremental") {
      o.incremental = false;
    } else if (a == "--repeat") {
      o.repeat = std::max<size_t>(1, std::strtoull(value().c_str(), nullptr, 10));
    } else if (a == "--rules") {
      o.rules_dir = value();
    } else if (a == "--per-rule") {
      o.per_rule = true;
    } else if (a == "--iterations") {
      o.iterations = true;
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--counts") {
      o.counts = true;
    } else if (!a.empty() && a[0] == '-') {
      usage(("unknown option " + a).c_str());
    } else {
      o.models.push_back(a);
    }
  }
  if (o.models.empty()) usage("no model given");
  return o;
}

// True if the root class has a term made of unfiltered e-nodes only (what extraction needs):
// a class is extractable once one of its unfiltered e-nodes has only extractable children.
bool root_extractable(const EGraph& eg, EClassId root) {
  std::vector<uint8_t> ok(eg.class_capacity(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (EClassId c : eg.class_ids()) {
      if (ok[c.v]) continue;
      for (ENodeId n : eg.eclass(c).nodes) {
        if (eg.is_filtered(n)) continue;
        bool all = true;
        for (EClassId ch : eg.node(n).children) all = all && ok[eg.find(ch).v];
        if (all) {
          ok[c.v] = 1;
          changed = true;
          break;
        }
      }
    }
  }
  return ok[eg.find(root).v];
}

// FNV-1a style digest of the final e-graph: canonical classes in id order, each with its
// live e-nodes (operator, leaf value, canonical children) and filtered flags. Equal digests
// mean the same e-graph, ids included (the runs are deterministic).
uint64_t egraph_digest(const EGraph& eg) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto put = [&h](uint64_t v) {
    h ^= v;
    h *= 0x100000001b3ULL;
  };
  for (EClassId c : eg.class_ids()) {
    put(c.v);
    for (ENodeId n : eg.eclass(c).nodes) {
      const ENode& nd = eg.node(n);
      put(n.v);
      put(static_cast<uint64_t>(nd.op));
      put(static_cast<uint64_t>(nd.num));
      put(eg.is_filtered(n));
      for (EClassId ch : nd.children) put(eg.find(ch).v);
    }
  }
  return h;
}

// The deterministic part of a run report (see --counts).
std::string counts_text(const RunReport& rep) {
  std::string s;
  char buf[256];
  for (const auto& it : rep.iterations) {
    std::snprintf(buf, sizeof buf, "  iter %zu%s nodes %zu classes %zu filtered +%zu (%zu)\n", it.iteration,
                  it.multi ? "*" : "", it.nodes, it.classes, it.filtered_new, it.filtered_total);
    s += buf;
    for (size_t r = 0; r < it.rules.size(); ++r) {
      const RuleStats& x = it.rules[r];
      if (x.matches + x.searched == 0 && !x.banned) continue;
      std::snprintf(buf, sizeof buf, "    %-28s m %zu s %zu a %zu u %zu c %zu t %zu sp %zu cy %zu%s%s\n",
                    rep.rule_names[r].c_str(), x.matches, x.searched, x.applied, x.unchanged,
                    x.rejected_condition, x.rejected_type, x.rejected_split, x.rejected_cycle,
                    x.banned ? " banned" : "", x.truncated ? " truncated" : "");
      s += buf;
    }
  }
  return s;
}

struct Row {
  std::string model;
  size_t k = 0;
  CycleFilterMode filter{};
  size_t start_nodes = 0;
  double explore_s = 0, cpu_s = 0, min_s = 0;
  RunReport rep;
  std::string check;
  uint64_t digest = 0;
};

}  // namespace

int main(int argc, char** argv) {
  tensat::park_blas_threads();
  spdlog::set_level(spdlog::level::err);
  Options opt = parse(argc, argv);
  std::vector<Rewrite> rules;
  try {
    auto specs = opt.rules_dir.empty() ? rules::default_rules() : rules::load_rules_dir(opt.rules_dir);
    rules = compile_rewrites(specs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "explore-bench: %s\n", e.what());
    return 2;
  }
  size_t nmulti = 0;
  for (const auto& r : rules) nmulti += r.is_multi();
  std::printf("%zu rules (%zu multi-pattern); node limit %zu, iteration limit %zu, time limit %.0f s, "
              "median of %zu\n\n", rules.size(), nmulti, opt.node_limit, opt.iter_limit, opt.time_limit,
              opt.repeat);

  std::vector<Row> rows;
  for (const auto& path : opt.models) {
    ImportResult imp;
    auto t0 = Clock::now();
    try {
      imp = import_onnx_file(path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "explore-bench: %s: %s\n", path.c_str(), e.what());
      return 2;
    }
    double import_s = since(t0);
    std::string name = basename_no_ext(path);
    std::fprintf(stderr, "%s: imported in %.2f s (%d ONNX nodes, %d opaque)\n", name.c_str(), import_s,
                 imp.stats.onnx_nodes, imp.stats.opaque_nodes);
    for (size_t k : opt.k_multi) {
      for (CycleFilterMode f : opt.filters) {
        Row row;
        row.model = name;
        row.k = k;
        row.filter = f;
        std::vector<double> times, cpus;
        std::vector<RunReport> reports;  // the row keeps the median run's (for --profile)
        for (size_t rep = 0; rep < opt.repeat; ++rep) {
          EGraph eg;
          EClassId root = add_graph(eg, imp.graph);
          row.start_nodes = eg.num_nodes();
          RunnerConfig cfg;
          cfg.node_limit = opt.node_limit;
          cfg.iter_limit = opt.iter_limit;
          cfg.time_limit_s = opt.time_limit;
          cfg.k_multi = k;
          cfg.cycle_filter = f;
          cfg.multi_combination_limit = opt.multi_limit;
          cfg.incremental_search = opt.incremental;
          auto t = Clock::now();
          double c0 = cpu_now();
          reports.push_back(Runner(eg).with_config(cfg).run(rules));
          cpus.push_back(cpu_now() - c0);
          times.push_back(since(t));
          if (opt.counts && rep == 0) row.digest = egraph_digest(eg);
          if (opt.check && rep == 0) {
            row.check = eg.check_invariants();
            if (row.check.empty() && f != CycleFilterMode::None && !is_acyclic(eg))
              row.check = "cyclic after filtering";
            if (row.check.empty() && !root_extractable(eg, root)) row.check = "root not extractable";
            if (row.check.empty()) row.check = "ok";
          }
        }
        std::vector<size_t> by_time(reports.size());
        for (size_t i = 0; i < by_time.size(); ++i) by_time[i] = i;
        std::sort(by_time.begin(), by_time.end(),
                  [&](size_t a, size_t b) { return reports[a].total_s < reports[b].total_s; });
        row.rep = std::move(reports[by_time[by_time.size() / 2]]);
        std::sort(times.begin(), times.end());
        std::sort(cpus.begin(), cpus.end());
        row.explore_s = times[times.size() / 2];
        row.cpu_s = cpus[cpus.size() / 2];
        row.min_s = times.front();
        std::fprintf(stderr, "  k_multi %zu %-9s %.3f s\n", k, std::string(cycle_filter_name(f)).c_str(),
                     row.explore_s);
        rows.push_back(std::move(row));
      }
    }
  }

  std::printf("%-12s %2s %-9s %8s %10s %8s %8s %5s %-15s %8s %8s %8s%s\n", "model", "k", "filter", "nodes0",
              "explore_s", "cpu_s", "min_s", "iters", "stop", "e-nodes", "e-classes", "filtered", opt.check ? "  check" : "");
  for (const auto& r : rows) {
    std::printf("%-12s %2zu %-9s %8zu %10.4f %8.4f %8.4f %5zu %-15s %8zu %8zu %8zu%s%s\n", r.model.c_str(), r.k,
                std::string(cycle_filter_name(r.filter)).c_str(), r.start_nodes, r.explore_s, r.cpu_s, r.min_s,
                r.rep.iterations.size(), std::string(stop_reason_name(r.rep.stop_reason)).c_str(),
                r.rep.nodes, r.rep.classes, r.rep.filtered, opt.check ? "  " : "", r.check.c_str());
  }
  for (const auto& r : rows) {
    if (!opt.profile) break;
    std::printf("\n== profile %s, k_multi %zu, %s filter (ms; the median run)\n", r.model.c_str(), r.k,
                std::string(cycle_filter_name(r.filter)).c_str());
    double tot[4] = {0, 0, 0, 0};
    for (const auto& it : r.rep.iterations) {
      std::printf("  iter %2zu%s search %7.3f apply %7.3f rebuild %7.3f filter %7.3f  nodes %zu\n", it.iteration,
                  it.multi ? "*" : " ", it.search_s * 1e3, it.apply_s * 1e3, it.rebuild_s * 1e3, it.filter_s * 1e3,
                  it.nodes);
      tot[0] += it.search_s, tot[1] += it.apply_s, tot[2] += it.rebuild_s, tot[3] += it.filter_s;
    }
    std::printf("  total   search %7.3f apply %7.3f rebuild %7.3f filter %7.3f  run %.3f\n", tot[0] * 1e3,
                tot[1] * 1e3, tot[2] * 1e3, tot[3] * 1e3, r.rep.total_s * 1e3);
    auto t = r.rep.totals();
    std::vector<size_t> order(t.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return t[a].search_s + t[a].apply_s > t[b].search_s + t[b].apply_s;
    });
    double rs = 0, ra = 0;
    RuleStats all;
    for (const auto& x : t) rs += x.search_s, ra += x.apply_s, all.add(x);
    std::printf("  rules: search %.3f apply %.3f; matches %zu searched %zu applied %zu unchanged %zu (memo hits %zu) "
                "rejected %zu (condition %zu type %zu split %zu cycle %zu)\n",
                rs * 1e3, ra * 1e3, all.matches, all.searched, all.applied, all.unchanged, all.memo_hits, all.rejected(),
                all.rejected_condition, all.rejected_type, all.rejected_split, all.rejected_cycle);
    for (size_t i = 0; i < std::min<size_t>(20, order.size()); ++i) {
      const auto& x = t[order[i]];
      std::printf("    %-28s search %7.3f apply %7.3f  searched %6zu applied %5zu memo-hits %6zu\n",
                  r.rep.rule_names[order[i]].c_str(), x.search_s * 1e3, x.apply_s * 1e3, x.searched, x.applied,
                  x.memo_hits);
    }
  }
  for (const auto& r : rows) {
    if (!opt.counts) break;
    std::printf("\n== counts %s, k_multi %zu, %s filter: %zu e-nodes, %zu e-classes, %zu filtered, "
                "%zu iterations, %s, digest %016llx\n%s",
                r.model.c_str(), r.k, std::string(cycle_filter_name(r.filter)).c_str(), r.rep.nodes,
                r.rep.classes, r.rep.filtered, r.rep.iterations.size(),
                std::string(stop_reason_name(r.rep.stop_reason)).c_str(),
                static_cast<unsigned long long>(r.digest), counts_text(r.rep).c_str());
  }
  for (const auto& r : rows) {
    if (!opt.per_rule && !opt.iterations) break;
    std::printf("\n== %s, k_multi %zu, %s filter\n", r.model.c_str(), r.k,
                std::string(cycle_filter_name(r.filter)).c_str());
    if (opt.iterations) std::printf("%s", r.rep.summary().c_str());
    if (!opt.per_rule) continue;
    auto t = r.rep.totals();
    std::printf("  %-28s %9s %9s %9s %9s %9s %9s %9s %8s %8s\n", "rule", "matches", "searched", "applied",
                "unchanged", "rej-type", "rej-split", "rej-cycle", "search_s", "apply_s");
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].applied == 0 && t[i].search_s + t[i].apply_s < 1e-3) continue;
      std::printf("  %-28s %9zu %9zu %9zu %9zu %9zu %9zu %9zu %8.4f %8.4f%s\n", r.rep.rule_names[i].c_str(),
                  t[i].matches, t[i].searched, t[i].applied, t[i].unchanged, t[i].rejected_type, t[i].rejected_split,
                  t[i].rejected_cycle, t[i].search_s, t[i].apply_s,
                  t[i].banned ? " (banned)" : t[i].truncated ? " (truncated)" : "");
    }
  }
  return 0;
}

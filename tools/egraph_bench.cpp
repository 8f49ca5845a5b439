// egraph-bench: throughput of the e-graph engine on synthetic workloads.
//
//   add       e-nodes added per second (random DAG of elementwise ops over one tensor type)
//   rebuild   random unions over that DAG, then rebuild: unions and e-nodes processed per second
//   bert      the paper's BERT graph (BENCHMARKS.md) explored with the matmul-merge multi-pattern
//             rule and a few single-pattern rules, at k_multi = 1 and 2, efficient cycle filter
//
//   egraph-bench [--nodes N] [--seed S]
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "egraph/bridge.h"
#include "egraph/cycle_filter.h"
#include "egraph/egraph.h"
#include "egraph/runner.h"
#include "lang/sexpr.h"
#include "support/blas_threads.h"
#include "support/stopwatch.h"

using namespace tensat;

namespace {

// CPU seconds of this process (robust on a loaded machine).
double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

std::vector<EClassId> random_dag(EGraph& eg, size_t n, std::mt19937& rng) {
  std::vector<EClassId> ts;
  for (int i = 0; i < 16; ++i)
    ts.push_back(eg.add(ENode::make(Op::Input, {eg.add_sym("in" + std::to_string(i) + "@64")})));
  const Op ops[] = {Op::Relu, Op::Tanh, Op::Sigmoid, Op::Ewadd, Op::Ewmul};
  while (eg.num_nodes() < n) {
    auto pick = [&] { return ts[std::uniform_int_distribution<size_t>(0, ts.size() - 1)(rng)]; };
    Op op = ops[std::uniform_int_distribution<int>(0, 4)(rng)];
    if (op == Op::Ewadd || op == Op::Ewmul) ts.push_back(eg.add(ENode::make(op, {pick(), pick()})));
    else ts.push_back(eg.add(ENode::make(op, {pick()})));
  }
  return ts;
}

ir::Graph bert_graph() {
  ir::Graph g;
  auto w = [&](int i) { return g.weight("w" + std::to_string(i), TensorType{DType::F32, {1024, 1024}}); };
  auto none = g.sym("none");
  auto mm = [&](ir::NodeId a, ir::NodeId b) { return g.op(Op::Matmul, {none, a, b, none}); };
  ir::NodeId x = g.op(Op::Relu, {g.input("x", TensorType{DType::F32, {64, 1024}})});
  int wi = 0;
  std::vector<ir::NodeId> outs;
  for (int layer = 0; layer < 8; ++layer) {
    ir::NodeId qkv[3];
    for (auto& t : qkv) {
      t = mm(x, w(wi++));
      t = g.op(Op::Reshape, {g.sym("64_16_64"), t});
      t = g.op(Op::Transpose, {g.sym("1_0_2"), t});
    }
    ir::NodeId att = mm(mm(qkv[0], qkv[1]), qkv[2]);
    att = g.op(Op::Transpose, {g.sym("1_0_2"), att});
    att = g.op(Op::Reshape, {g.sym("64_1024"), att});
    x = mm(att, w(wi++));
    if (layer % 2 == 1) outs.push_back(x);
  }
  g.set_root(g.op(Op::Noop, outs));
  return g;
}

RuleSpec spec(const char* name, std::vector<const char*> lhs, std::vector<const char*> rhs) {
  RuleSpec s;
  s.name = name;
  s.file = "egraph_bench.cpp";
  for (auto l : lhs) s.lhs.push_back(parse_sexpr(l));
  for (auto r : rhs) s.rhs.push_back(parse_sexpr(r));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  tensat::park_blas_threads();
  size_t n = 200000;
  unsigned seed = 1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--nodes")) n = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--seed")) seed = static_cast<unsigned>(std::atoi(argv[++i]));
  }
  std::mt19937 rng(seed);

  {
    EGraph eg;
    tensat::Stopwatch t;
    double c0 = cpu_now();
    auto ts = random_dag(eg, n, rng);
    double add_s = t.seconds(), add_cpu = cpu_now() - c0;
    t.restart();
    eg.rebuild();
    double first_rebuild = t.seconds();
    std::printf("add:      %zu e-nodes in %.3f s wall, %.3f s cpu = %.2f M e-nodes/s (cpu) (first rebuild %.3f s)\n",
                eg.num_nodes(), add_s, add_cpu, eg.num_nodes() / add_cpu / 1e6, first_rebuild);

    size_t unions = n / 20;
    size_t nodes_before = eg.num_nodes();
    t.restart();
    for (size_t i = 0; i < unions; ++i) {
      auto pick = [&] { return ts[std::uniform_int_distribution<size_t>(0, ts.size() - 1)(rng)]; };
      eg.merge(pick(), pick());
    }
    double union_s = t.seconds();
    t.restart();
    c0 = cpu_now();
    eg.rebuild();
    double rebuild_s = t.seconds(), rebuild_cpu = cpu_now() - c0;
    std::printf("rebuild:  %zu unions in %.3f s; rebuild %.3f s wall, %.3f s cpu (%zu -> %zu e-nodes, %zu classes) = %.2f M e-nodes/s (cpu)\n",
                unions, union_s, rebuild_s, rebuild_cpu, nodes_before, eg.num_nodes(), eg.num_classes(),
                nodes_before / rebuild_cpu / 1e6);
    std::string inv = eg.check_invariants();
    if (!inv.empty()) std::printf("INVARIANT BROKEN: %s\n", inv.c_str());
  }

  std::vector<RuleSpec> specs = {
      spec("matmul-merge", {"(matmul ?act ?x ?w1 none)", "(matmul ?act ?x ?w2 none)"},
           {"(split_0 (split 1 (matmul ?act ?x (concat 1 ?w1 ?w2) none)))",
            "(split_1 (split 1 (matmul ?act ?x (concat 1 ?w1 ?w2) none)))"}),
      spec("matmul-assoc", {"(matmul none ?a (matmul none ?b ?c none) none)"},
           {"(matmul none (matmul none ?a ?b none) ?c none)"}),
      spec("matmul-assoc-rev", {"(matmul none (matmul none ?a ?b none) ?c none)"},
           {"(matmul none ?a (matmul none ?b ?c none) none)"}),
      spec("transpose-involution", {"(transpose 1_0_2 (transpose 1_0_2 ?x))"}, {"?x"}),
  };
  auto rules = compile_rewrites(specs);
  for (size_t k : {1u, 2u}) {
    for (auto mode : {CycleFilterMode::Efficient, CycleFilterMode::Vanilla}) {
      EGraph eg;
      add_graph(eg, bert_graph());
      size_t start_nodes = eg.num_nodes();
      tensat::Stopwatch t;
      RunReport rep = Runner(eg).with_k_multi(k).with_cycle_filter(mode).with_time_limit(60).run(rules);
      double s = t.seconds();
      std::printf("bert k_multi=%zu %-9s: %.3f s, %zu -> %zu e-nodes, %zu classes, %zu iterations (%s), %zu filtered, acyclic %s\n",
                  k, std::string(cycle_filter_name(mode)).c_str(), s, start_nodes, eg.num_nodes(),
                  eg.num_classes(), rep.iterations.size(), std::string(stop_reason_name(rep.stop_reason)).c_str(),
                  rep.filtered, is_acyclic(eg) ? "yes" : "NO");
      if (k == 2 && mode == CycleFilterMode::Efficient) std::printf("%s", rep.summary().c_str());
    }
  }
  return 0;
}

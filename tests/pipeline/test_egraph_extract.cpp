// The bridge from the explored e-graph to extraction (pipeline/egraph_extract.h) and the
// --dump-egraph document it gives (egraph-serialize JSON, extract/serialize_json.h).
#include <gtest/gtest.h>

#include <set>

#include "egraph/bridge.h"
#include "egraph/runner.h"
#include "extract/extract.h"
#include "extract/ilp.h"
#include "extract/serialize_json.h"
#include "lang/rule_spec.h"
#include "lang/sexpr.h"
#include "pipeline/egraph_extract.h"
#include "tests/temp_dir.h"

namespace tensat {
namespace {

Rewrite rule(const std::string& name, const std::string& lhs, const std::string& rhs) {
  RuleSpec s;
  s.name = name;
  s.file = "inline";
  s.line = 1;
  s.lhs.push_back(parse_sexpr(lhs));
  s.rhs.push_back(parse_sexpr(rhs));
  return compile_rewrite(s);
}

struct Explored {
  EGraph eg;
  EClassId root;
};

void explore(Explored& x, const std::string& term) {
  ir::Graph g;
  g.set_root(parse_term(g, term));
  x.root = add_graph(x.eg, g);
  std::vector<Rewrite> rules = {rule("ewadd-comm", "(ewadd ?a ?b)", "(ewadd ?b ?a)")};
  Runner(x.eg).run(rules);
}

TEST(EgraphExtract, DumpIsEgraphSerializeWithCosts) {
  Explored x;
  explore(x, "(ewadd (input a@4) (input b@4))");
  std::vector<double> costs(x.eg.node_capacity(), 0.0);
  for (EClassId c : x.eg.class_ids())
    for (ENodeId n : x.eg.eclass(c).nodes)
      if (x.eg.node(n).op == Op::Ewadd) costs[n.v] = 1.5;
  ExtractView v = to_extract_graph(x.eg, x.root, costs);
  nlohmann::json j = extract::egraph_to_json(v.graph);
  ASSERT_TRUE(j.contains("nodes"));
  EXPECT_EQ(j["nodes"].size(), x.eg.num_nodes());
  ASSERT_EQ(j["root_eclasses"].size(), 1u);
  const std::string root = j["root_eclasses"][0];
  int adds = 0;
  for (auto& [id, n] : j["nodes"].items()) {
    for (auto& ch : n["children"]) EXPECT_TRUE(j["nodes"].contains(ch.get<std::string>()));
    if (n["op"] == "ewadd") {
      ++adds;
      EXPECT_EQ(n["eclass"], root);
      EXPECT_DOUBLE_EQ(n["cost"].get<double>(), 1.5);
    }
  }
  EXPECT_EQ(adds, 2);  // a+b and b+a, one class
  // The document reads back as the same extraction problem.
  extract::ExtractGraph back = extract::egraph_from_json(j, "dump");
  EXPECT_EQ(back.nodes.size(), v.graph.nodes.size());
  EXPECT_EQ(back.classes.size(), v.graph.classes.size());
}

// --dump-egraph's file reads back as the pipeline's extraction problem, numbered the same, so
// onnx-tensat-extract on it gives the pipeline's extraction (ties included).
TEST(EgraphExtract, DumpFileReadsBackAsThePipelinesProblem) {
  Explored x;
  explore(x, "(relu (ewadd (ewadd (input a@4) (input b@4)) (ewadd (input c@4) (input d@4))))");
  std::vector<double> costs(x.eg.node_capacity(), 1.0);  // every alternative ties
  ExtractView v = to_extract_graph(x.eg, x.root, costs);
  ASSERT_GT(v.graph.classes.size(), 10u);  // ids "c10" and up sort before "c2" as text
  const tensat::testing::TempDir dir;
  const std::string path = dir.file("dump.json");
  extract::write_egraph_json(v.graph, path);
  const extract::ExtractGraph back = extract::read_egraph_json(path);
  ASSERT_EQ(back.nodes.size(), v.graph.nodes.size());
  for (extract::NodeIdx n = 0; n < back.nodes.size(); ++n) {
    EXPECT_EQ(back.nodes[n].eclass, v.graph.nodes[n].eclass);
    EXPECT_EQ(back.nodes[n].children, v.graph.nodes[n].children);
    EXPECT_EQ(back.nodes[n].op, v.graph.nodes[n].op);
  }
  EXPECT_EQ(back.roots, v.graph.roots);
  for (auto m : {extract::Method::Greedy, extract::Method::Dag, extract::Method::Ilp}) {
    extract::ExtractOptions eo;
    eo.method = m;
    EXPECT_EQ(extract::extract(back, eo).choice, extract::extract(v.graph, eo).choice);
  }
}

TEST(EgraphExtract, ChoiceMapsBackToATermOfTheRootClass) {
  Explored x;
  explore(x, "(relu (ewadd (input a@4) (input b@4)))");
  std::vector<double> costs(x.eg.node_capacity(), 1.0);
  ExtractView v = to_extract_graph(x.eg, x.root, costs);
  extract::ExtractOptions eo;
  eo.method = extract::Method::Dag;
  extract::ExtractResult r = extract::extract(v.graph, eo);
  ir::Graph best = choice_to_graph(x.eg, x.root, v, r.choice);
  const std::string text = print_term(best, best.root());
  EXPECT_TRUE(text == "(relu (ewadd (input a@4) (input b@4)))" || text == "(relu (ewadd (input b@4) (input a@4)))")
      << text;
}

// graph_to_choice, the reverse of choice_to_graph: a term added to an explored e-graph (as the
// pipeline adds the k_multi 1 result) comes back as the choice that picks exactly its e-nodes,
// whichever operand order the term has; the ILP then starts from it (IlpOptions::hints).
TEST(EgraphExtract, TermMapsToTheChoiceOfItsENodes) {
  for (const std::string term : {"(relu (ewadd (input a@4) (input b@4)))", "(relu (ewadd (input b@4) (input a@4)))"}) {
    Explored x;
    explore(x, "(relu (ewadd (input a@4) (input b@4)))");
    ir::Graph g;
    g.set_root(parse_term(g, term));
    std::vector<EClassId> classes;
    EXPECT_EQ(x.eg.find(add_graph(x.eg, g, &classes)), x.eg.find(x.root));  // the terms exist already
    std::vector<double> costs(x.eg.node_capacity(), 1.0);
    ExtractView v = to_extract_graph(x.eg, x.root, costs);
    const extract::Choice c = graph_to_choice(x.eg, v, g, classes);
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(extract::extraction_problem(v.graph, c), "");
    const ir::Graph back = choice_to_graph(x.eg, x.root, v, c);
    EXPECT_EQ(print_term(back, back.root()), term);
    extract::IlpOptions opts;
    opts.hints = {c};
    EXPECT_LE(extract::extract_ilp(v.graph, opts).dag_cost, extract::dag_cost(v.graph, c) + 1e-12);
  }
  // A term the e-graph does not have (not added): no choice.
  Explored x;
  explore(x, "(relu (ewadd (input a@4) (input b@4)))");
  ir::Graph other;
  other.set_root(parse_term(other, "(relu (input a@4))"));
  std::vector<double> costs(x.eg.node_capacity(), 1.0);
  ExtractView v = to_extract_graph(x.eg, x.root, costs);
  std::vector<EClassId> classes(other.size(), x.root);
  EXPECT_TRUE(graph_to_choice(x.eg, v, other, classes).empty());
}

}  // namespace
}  // namespace tensat

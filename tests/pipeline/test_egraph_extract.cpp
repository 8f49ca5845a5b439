// The bridge from the explored e-graph to extraction (pipeline/egraph_extract.h) and the
// --dump-egraph document it gives (egraph-serialize JSON, extract/serialize_json.h).
#include <gtest/gtest.h>

#include <set>

#include "egraph/bridge.h"
#include "egraph/runner.h"
#include "extract/extract.h"
#include "extract/serialize_json.h"
#include "lang/rule_spec.h"
#include "lang/sexpr.h"
#include "pipeline/egraph_extract.h"

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

}  // namespace
}  // namespace tensat

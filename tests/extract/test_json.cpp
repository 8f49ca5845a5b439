// Tests of the egraph-serialize JSON reader and writer.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "extract/extract.h"
#include "extract/serialize_json.h"
#include "tests/extract/builders.h"

namespace tensat::extract {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tensat_extract_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string write_text(const std::string& name, const std::string& text) {
  const std::string p = temp_path(name);
  std::ofstream(p) << text;
  return p;
}

TEST(Json, ReadsNodesChildrenAndRoots) {
  const auto doc = nlohmann::ordered_json::parse(R"({
    "nodes": {
      "x": {"op": "Input", "cost": 0, "eclass": "cx", "children": []},
      "r1": {"op": "Relu", "cost": 2.5, "eclass": "cr", "children": ["x"]},
      "r2": {"op": "Id", "cost": 1, "eclass": "cr", "children": ["cx"], "subsumed": true}
    },
    "root_eclasses": ["cr"]})");
  const ExtractGraph g = egraph_from_json(doc, "inline");
  ASSERT_EQ(g.classes.size(), 2u);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.classes[0].json_id, "cx");
  EXPECT_EQ(g.nodes[1].children, std::vector<ClassIdx>{0});
  EXPECT_EQ(g.nodes[2].children, std::vector<ClassIdx>{0});  // a class id as child
  EXPECT_TRUE(g.nodes[2].filtered);
  EXPECT_EQ(g.roots, std::vector<ClassIdx>{1});
  ExtractOptions o;
  o.method = Method::Greedy;
  EXPECT_NEAR(extract(g, o).dag_cost, 2.5, 1e-12);  // r2 is cheaper but subsumed
}

// `g` written to a temporary file (the name given) by write_egraph_json and read back.
ExtractGraph written_and_read(const ExtractGraph& g, const std::string& name) {
  const std::string p = temp_path(name);
  write_egraph_json(g, p);
  ExtractGraph h = read_egraph_json(p);
  std::remove(p.c_str());
  return h;
}

TEST(Json, RoundTrip) {
  ExtractGraph g = testing::matmul_merge();
  g.nodes[5].filtered = true;
  const ExtractGraph h = written_and_read(g, "roundtrip.json");
  ASSERT_EQ(h.nodes.size(), g.nodes.size());
  ASSERT_EQ(h.classes.size(), g.classes.size());
  // The same content, compared by ids (the numbering: FileKeepsTheGraphsNumberingAndItsExtraction).
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const ENode& a = g.nodes[n];
    const auto it = std::find_if(h.nodes.begin(), h.nodes.end(), [&](const ENode& b) {
      return b.json_id == g.classes[a.eclass].json_id + "__" +
                              std::to_string(std::find(g.classes[a.eclass].nodes.begin(),
                                                       g.classes[a.eclass].nodes.end(), n) -
                                             g.classes[a.eclass].nodes.begin());
    });
    ASSERT_NE(it, h.nodes.end());
    EXPECT_EQ(it->op, a.op);
    EXPECT_EQ(it->cost, a.cost);
    EXPECT_EQ(it->filtered, a.filtered);
    ASSERT_EQ(it->children.size(), a.children.size());
    for (size_t i = 0; i < a.children.size(); ++i)
      EXPECT_EQ(h.classes[it->children[i]].json_id, g.classes[a.children[i]].json_id);
  }
  EXPECT_EQ(h.classes[h.roots.at(0)].json_id, "out");
}

// The file keeps the graph's node order: a graph whose classes are numbered in the order of
// their first nodes (as the pipeline's are) reads back numbered the same, so its extractions
// are the same choices (ids "0", "1", ..., "10" sorted as text would put class 10 before 2).
TEST(Json, FileKeepsTheGraphsNumberingAndItsExtraction) {
  for (uint32_t seed : {3u, 7u, 11u}) {
    ExtractGraph g = testing::random_egraph(seed, 40, /*acyclic=*/true, /*zero_percent=*/30);
    g.nodes[4].filtered = true;
    const ExtractGraph h = written_and_read(g, "order.json");
    ASSERT_EQ(h.nodes.size(), g.nodes.size());
    ASSERT_EQ(h.classes.size(), g.classes.size());
    for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
      EXPECT_EQ(h.nodes[n].eclass, g.nodes[n].eclass) << "node " << n;
      EXPECT_EQ(h.nodes[n].children, g.nodes[n].children) << "node " << n;
      EXPECT_EQ(h.nodes[n].cost, g.nodes[n].cost) << "node " << n;
      EXPECT_EQ(h.nodes[n].op, g.nodes[n].op);
      EXPECT_EQ(h.nodes[n].filtered, g.nodes[n].filtered);
    }
    for (ClassIdx c = 0; c < g.classes.size(); ++c) EXPECT_EQ(h.classes[c].nodes, g.classes[c].nodes);
    EXPECT_EQ(h.roots, g.roots);
    for (Method m : {Method::Greedy, Method::Dag, Method::Ilp}) {
      ExtractOptions o;
      o.method = m;
      EXPECT_EQ(extract(h, o).choice, extract(g, o).choice) << "seed " << seed;
    }
  }
}

// Writing fails loudly and leaves no partial file: a full device, an op that is not UTF-8
// (nlohmann refuses it while the document is composed, before the file is opened).
TEST(Json, WriteErrorsLeaveNoPartialFile) {
  const ExtractGraph g = testing::matmul_merge();
  if (std::filesystem::exists("/dev/full")) {
    EXPECT_THROW(write_egraph_json(g, "/dev/full"), InputError);
  }
  ExtractGraph bad = g;
  bad.nodes[3].op = "\xff\xfe";
  const std::string p = temp_path("bad_utf8.json");
  std::remove(p.c_str());
  EXPECT_ANY_THROW(write_egraph_json(bad, p));
  EXPECT_FALSE(std::filesystem::exists(p));
}

TEST(Json, BadFilesNameTheFileAndTheProblem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"notjson.json", "{nodes: ", },
      {"nonodes.json", R"({"root_eclasses": ["a"]})"},
      {"child.json", R"({"nodes": {"x": {"op": "a", "cost": 1, "eclass": "c", "children": ["y"]}},
                        "root_eclasses": ["c"]})"},
      {"noroot.json", R"({"nodes": {"x": {"op": "a", "cost": 1, "eclass": "c", "children": []}},
                         "root_eclasses": []})"},
      {"badroot.json", R"({"nodes": {"x": {"op": "a", "cost": 1, "eclass": "c", "children": []}},
                          "root_eclasses": ["zz"]})"},
      {"negcost.json", R"({"nodes": {"x": {"op": "a", "cost": -1, "eclass": "c", "children": []}},
                          "root_eclasses": ["c"]})"},
      {"dupnode.json", R"({"nodes": {"x": {"op": "a", "cost": 1, "eclass": "c", "children": []},
                                     "x": {"op": "b", "cost": 2, "eclass": "c", "children": []}},
                          "root_eclasses": ["c"]})"},
  };
  for (const auto& [name, text] : cases) {
    const std::string p = write_text(name, text);
    try {
      read_egraph_json(p);
      ADD_FAILURE() << name << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
    std::remove(p.c_str());
  }
  EXPECT_THROW(read_egraph_json(temp_path("does-not-exist.json")), InputError);
  const std::string dir = temp_path("a-directory");
  std::filesystem::create_directory(dir);
  EXPECT_THROW(read_egraph_json(dir), InputError);
  std::filesystem::remove(dir);
}

// Nodes are numbered in file order (not key order), so ties break the way the file lists
// them; ids that sort differently from their position check it.
TEST(Json, ReaderKeepsTheFileOrderOfNodes) {
  const std::string p = write_text("order.json", R"({
    "nodes": {
      "z_in": {"op": "Input", "cost": 0, "eclass": "in", "children": []},
      "m_second": {"op": "B", "cost": 1, "eclass": "out", "children": ["in"]},
      "a_third": {"op": "A", "cost": 1, "eclass": "out", "children": ["in"]},
      "b_x": {"op": "C", "cost": 1, "eclass": "mid", "children": ["in"]}
    },
    "root_eclasses": ["out"]})");
  const ExtractGraph g = read_egraph_json(p);
  std::remove(p.c_str());
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[0].json_id, "z_in");
  EXPECT_EQ(g.nodes[1].json_id, "m_second");
  EXPECT_EQ(g.nodes[2].json_id, "a_third");
  EXPECT_EQ(g.nodes[3].json_id, "b_x");
  EXPECT_EQ(g.classes[0].json_id, "in");
  EXPECT_EQ(g.classes[1].json_id, "out");
  EXPECT_EQ(g.classes[2].json_id, "mid");
}

}  // namespace
}  // namespace tensat::extract

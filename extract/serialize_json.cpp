// egraph-serialize JSON reader and writer (see serialize_json.h for the format).
#include "extract/serialize_json.h"

#include <algorithm>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

namespace tensat::extract {

namespace {

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw InputError(source + ": " + what);
}

template <class Json>
ExtractGraph from_json_impl(const Json& doc, const std::string& source) {
  if (!doc.is_object()) fail(source, "top level is not a JSON object");
  if (!doc.contains("nodes") || !doc["nodes"].is_object())
    fail(source, "missing \"nodes\" object");
  const auto& jnodes = doc["nodes"];

  ExtractGraph g;
  std::unordered_map<std::string, ClassIdx> class_of_id;
  std::unordered_map<std::string, NodeIdx> node_of_id;
  auto class_index = [&](const std::string& id) {
    auto [it, fresh] = class_of_id.try_emplace(id, static_cast<ClassIdx>(g.classes.size()));
    if (fresh) g.add_class(id);
    return it->second;
  };

  // Pass 1: nodes and classes (children resolved in pass 2, they may be forward references).
  std::vector<const Json*> child_lists;
  for (auto it = jnodes.begin(); it != jnodes.end(); ++it) {
    const std::string& id = it.key();
    const auto& jn = it.value();
    const std::string where = "node \"" + id + "\"";
    if (!jn.is_object()) fail(source, where + " is not an object");
    if (!jn.contains("eclass") || !jn["eclass"].is_string())
      fail(source, where + " has no string \"eclass\"");
    if (!jn.contains("op") || !jn["op"].is_string()) fail(source, where + " has no string \"op\"");
    double cost = 1.0;
    if (jn.contains("cost")) {
      if (!jn["cost"].is_number()) fail(source, where + " has a non-numeric \"cost\"");
      cost = jn["cost"].template get<double>();
      if (!(cost >= 0)) fail(source, where + " has a negative or NaN cost");
    }
    const Json* children = nullptr;
    if (jn.contains("children")) {
      if (!jn["children"].is_array()) fail(source, where + " has non-array \"children\"");
      children = &jn["children"];
    }
    const ClassIdx c = class_index(jn["eclass"].template get<std::string>());
    const auto n = static_cast<NodeIdx>(g.nodes.size());
    ENode e;
    e.op = jn["op"].template get<std::string>();
    e.cost = cost;
    e.eclass = c;
    e.json_id = id;
    for (const char* key : {"subsumed", "filtered"})
      if (jn.contains(key) && jn[key].is_boolean() && jn[key].template get<bool>()) e.filtered = true;
    g.nodes.push_back(std::move(e));
    g.classes[c].nodes.push_back(n);
    if (!node_of_id.emplace(id, n).second) fail(source, "duplicate " + where);
    child_lists.push_back(children);
  }
  if (g.nodes.empty()) fail(source, "no nodes");

  // Pass 2: children.
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!child_lists[n]) continue;
    for (const auto& jc : *child_lists[n]) {
      if (!jc.is_string())
        fail(source, "node \"" + g.nodes[n].json_id + "\" has a non-string child");
      const std::string cid = jc.template get<std::string>();
      if (auto it = node_of_id.find(cid); it != node_of_id.end()) {
        g.nodes[n].children.push_back(g.nodes[it->second].eclass);
      } else if (auto jt = class_of_id.find(cid); jt != class_of_id.end()) {
        g.nodes[n].children.push_back(jt->second);
      } else {
        fail(source, "node \"" + g.nodes[n].json_id + "\" has unknown child \"" + cid + "\"");
      }
    }
  }

  if (!doc.contains("root_eclasses") || !doc["root_eclasses"].is_array() ||
      doc["root_eclasses"].empty())
    fail(source, "missing or empty \"root_eclasses\"");
  for (const auto& jr : doc["root_eclasses"]) {
    if (!jr.is_string()) fail(source, "non-string entry in \"root_eclasses\"");
    auto it = class_of_id.find(jr.template get<std::string>());
    if (it == class_of_id.end())
      fail(source, "root e-class \"" + jr.template get<std::string>() + "\" has no nodes");
    if (std::find(g.roots.begin(), g.roots.end(), it->second) == g.roots.end())
      g.roots.push_back(it->second);
  }
  try {
    g.validate();
  } catch (const InputError& e) {
    fail(source, e.what());
  }
  return g;
}

}  // namespace

ExtractGraph egraph_from_json(const nlohmann::json& doc, const std::string& source) {
  return from_json_impl(doc, source);
}

ExtractGraph egraph_from_json(const nlohmann::ordered_json& doc, const std::string& source) {
  return from_json_impl(doc, source);
}

ExtractGraph read_egraph_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": invalid JSON (" + e.what() + ")");
  }
  // ordered_json keeps the file's node order, so tie-breaking follows the file.
  return egraph_from_json(doc, path);
}

nlohmann::json egraph_to_json(const ExtractGraph& g) {
  std::vector<std::string> cid(g.classes.size()), nid(g.nodes.size());
  std::unordered_set<std::string> used;
  for (size_t c = 0; c < g.classes.size(); ++c) {
    cid[c] = g.classes[c].json_id.empty() ? std::to_string(c) : g.classes[c].json_id;
    for (size_t k = 0; k < g.classes[c].nodes.size(); ++k) {
      const NodeIdx n = g.classes[c].nodes[k];
      nid[n] = g.nodes[n].json_id.empty() ? cid[c] + "__" + std::to_string(k) : g.nodes[n].json_id;
      if (!used.insert(nid[n]).second)
        throw InputError("egraph_to_json: duplicate node id \"" + nid[n] + "\"");
    }
  }
  nlohmann::json nodes = nlohmann::json::object();
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const ENode& e = g.nodes[n];
    nlohmann::json children = nlohmann::json::array();
    for (ClassIdx k : e.children) children.push_back(nid[g.classes[k].nodes.front()]);
    nlohmann::json jn = {{"op", e.op}, {"cost", e.cost}, {"eclass", cid[e.eclass]},
                         {"children", std::move(children)}};
    if (e.filtered) jn["filtered"] = true;
    nodes[nid[n]] = std::move(jn);
  }
  nlohmann::json roots = nlohmann::json::array();
  for (ClassIdx r : g.roots) roots.push_back(cid[r]);
  return {{"nodes", std::move(nodes)}, {"root_eclasses", std::move(roots)}};
}

void write_egraph_json(const ExtractGraph& g, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw InputError(path + ": cannot open file for writing");
  out << egraph_to_json(g).dump(1) << '\n';
  if (!out) throw InputError(path + ": write failed");
}

}  // namespace tensat::extract

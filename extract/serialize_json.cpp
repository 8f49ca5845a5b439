// egraph-serialize JSON reader and writer (see serialize_json.h for the format).
#include "extract/serialize_json.h"

#include <algorithm>
#include <cassert>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

namespace tensat::extract {

namespace {

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw InputError(source + ": " + what);
}

// `node_order`, when given, lists the keys of "nodes" in file order (the reader records it
// while parsing; nlohmann::json objects are sorted by key). Without it, the object's order.
template <class Json>
ExtractGraph from_json_impl(const Json& doc, const std::string& source,
                            const std::vector<std::string>* node_order = nullptr) {
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
  std::vector<std::pair<const std::string*, const Json*>> entries;
  if (node_order) {
    entries.reserve(node_order->size());
    for (const std::string& id : *node_order) {
      auto it = jnodes.find(id);
      assert(it != jnodes.end());
      entries.emplace_back(&id, &it.value());
    }
  } else {
    for (auto it = jnodes.begin(); it != jnodes.end(); ++it) entries.emplace_back(&it.key(), &it.value());
  }
  for (const auto& [idp, jnp] : entries) {
    const std::string& id = *idp;
    const auto& jn = *jnp;
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

namespace {

// SAX handler that only records the keys of the top-level "nodes" object, in file order.
struct NodeOrder {
  using Json = nlohmann::json;
  std::vector<std::string> ids;
  int depth = 0;
  bool in_nodes = false;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(Json::number_integer_t) { return true; }
  bool number_unsigned(Json::number_unsigned_t) { return true; }
  bool number_float(Json::number_float_t, const Json::string_t&) { return true; }
  bool string(Json::string_t&) { return true; }
  bool binary(Json::binary_t&) { return true; }
  bool start_object(std::size_t) { ++depth; return true; }
  bool end_object() { --depth; return true; }
  bool start_array(std::size_t) { ++depth; return true; }
  bool end_array() { --depth; return true; }
  bool key(Json::string_t& k) {
    if (depth == 1) in_nodes = k == "nodes";
    else if (depth == 2 && in_nodes) ids.push_back(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};

}  // namespace

ExtractGraph read_egraph_json(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, not a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Parsed into nlohmann::json (objects are sorted std::maps); a SAX pass first records the
  // order of the node ids in the file, so tie-breaking follows the file. (ordered_json keeps
  // the order too, but its objects are vectors searched linearly on every insert, and the
  // parser-callback API rescans the enclosing object at every object end: both quadratic,
  // seconds on a 50k-node file.) A node id that appears twice is an error; a JSON object
  // would silently keep one of them.
  using Json = nlohmann::json;
  NodeOrder order;
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": invalid JSON (" + e.what() + ")");
  }
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_object())
    return egraph_from_json(doc, path);  // reports what is missing
  Json::sax_parse(text, &order);
  if (order.ids.size() != doc["nodes"].size()) {
    std::unordered_set<std::string> seen;
    for (const auto& id : order.ids)
      if (!seen.insert(id).second) throw InputError(path + ": duplicate node \"" + id + "\"");
  }
  return from_json_impl(doc, path, &order.ids);
}

namespace {

// The ids egraph_to_json and write_egraph_json give: a class's json_id or its index; a node's
// json_id or "<class id>__<position in its class>".
struct Ids {
  std::vector<std::string> cls, node;
};

Ids json_ids(const ExtractGraph& g, const char* who) {
  Ids ids;
  ids.cls.resize(g.classes.size());
  ids.node.resize(g.nodes.size());
  std::unordered_set<std::string> used;
  for (size_t c = 0; c < g.classes.size(); ++c) {
    ids.cls[c] = g.classes[c].json_id.empty() ? std::to_string(c) : g.classes[c].json_id;
    for (size_t k = 0; k < g.classes[c].nodes.size(); ++k) {
      const NodeIdx n = g.classes[c].nodes[k];
      ids.node[n] = g.nodes[n].json_id.empty() ? ids.cls[c] + "__" + std::to_string(k) : g.nodes[n].json_id;
      if (!used.insert(ids.node[n]).second)
        throw InputError(std::string(who) + ": duplicate node id \"" + ids.node[n] + "\"");
    }
  }
  return ids;
}

nlohmann::json node_json(const ExtractGraph& g, const Ids& ids, NodeIdx n) {
  const ENode& e = g.nodes[n];
  nlohmann::json children = nlohmann::json::array();
  for (ClassIdx k : e.children) children.push_back(ids.node[g.classes[k].nodes.front()]);
  nlohmann::json jn = {{"op", e.op}, {"cost", e.cost}, {"eclass", ids.cls[e.eclass]}, {"children", std::move(children)}};
  if (e.filtered) jn["filtered"] = true;
  return jn;
}

}  // namespace

nlohmann::json egraph_to_json(const ExtractGraph& g) {
  const Ids ids = json_ids(g, "egraph_to_json");
  nlohmann::json nodes = nlohmann::json::object();
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) nodes[ids.node[n]] = node_json(g, ids, n);
  nlohmann::json roots = nlohmann::json::array();
  for (ClassIdx r : g.roots) roots.push_back(ids.cls[r]);
  return {{"nodes", std::move(nodes)}, {"root_eclasses", std::move(roots)}};
}

void write_egraph_json(const ExtractGraph& g, const std::string& path) {
  // The nodes in the graph's order, one per line (not egraph_to_json's: its object is sorted by
  // id), so that read_egraph_json numbers nodes and classes as the graph does and an extraction
  // of the file is the pipeline's (a dump of its e-graph sorted by id gave EfficientNetV2-S's
  // warm start 5.1453 instead of 5.1265). Composed before the file is opened: what throws
  // (a duplicate id, an id that is not UTF-8) leaves no file behind.
  const Ids ids = json_ids(g, "write_egraph_json");
  std::string text = "{\n \"nodes\": {";
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    text += n ? ",\n  " : "\n  ";
    text += nlohmann::json(ids.node[n]).dump();
    text += ": ";
    text += node_json(g, ids, n).dump();
  }
  nlohmann::json roots = nlohmann::json::array();
  for (ClassIdx r : g.roots) roots.push_back(ids.cls[r]);
  text += "\n },\n \"root_eclasses\": " + roots.dump() + "\n}\n";
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path + ": cannot open file for writing");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();  // (a write error shows only once the buffer is flushed)
  if (!out) throw InputError(path + ": write failed");
}

}  // namespace tensat::extract

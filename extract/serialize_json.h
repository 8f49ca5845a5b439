// egraph-serialize JSON reader and writer for ExtractGraph.
//
// Format (github.com/egraphs-good/egraph-serialize):
//   {"nodes": {"<node id>": {"op": str, "cost": num, "eclass": "<class id>",
//                            "children": ["<node id>", ...], "subsumed": bool?}, ...},
//    "root_eclasses": ["<class id>", ...], "class_data": {...}?}
// A child names a node; the child class is that node's class. A child may also name a class
// id directly (accepted when no node has that id). "subsumed": true and our own
// "filtered": true mark a node that must not be extracted.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "extract/extract_graph.h"

namespace tensat::extract {

/// Reads a file; throws InputError "<path>: <what is wrong>" on any problem.
ExtractGraph read_egraph_json(const std::string& path);
/// Parses an already-loaded document; `source` names it in error messages.
ExtractGraph egraph_from_json(const nlohmann::json& doc, const std::string& source);
/// Same, keeping the document's node order (nodes and classes are numbered in that order).
ExtractGraph egraph_from_json(const nlohmann::ordered_json& doc, const std::string& source);

/// The egraph-serialize document for a graph. Empty ids are generated (class index, and
/// "<class>__<k>" for nodes); filtered nodes carry "filtered": true. (Its "nodes" object is
/// sorted by id.)
nlohmann::json egraph_to_json(const ExtractGraph& g);
/// Writes the same document to a file, its nodes in the graph's order: read_egraph_json gives
/// back the graph with the same numbering where its classes are numbered in the order of their
/// first nodes (as the pipeline's are), so its extraction is the same. Throws InputError when
/// the file cannot be written.
void write_egraph_json(const ExtractGraph& g, const std::string& path);

}  // namespace tensat::extract

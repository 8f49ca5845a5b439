// Importing inline text models (onnx_text.h) in tests, and what the tests read off the result.
#pragma once

#include <string>

#include "importer/import_error.h"
#include "importer/importer.h"
#include "lang/graph.h"
#include "lang/sexpr.h"
#include "tests/importer/onnx_text.h"

namespace tensat {

/// Parses a model in onnx's text format (a parse error fails the test) and imports it.
inline ImportResult imp(const std::string& text, const ImportOptions& o = {}) {
  return import_onnx_model(parse(text), "test.onnx", o);
}

/// The ImportError message importing `text` gives, or "(no ImportError)".
inline std::string import_error(const std::string& text, const ImportOptions& o = {}) {
  try {
    imp(text, o);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "(no ImportError)";
}

/// The term of the only output, else of the root (a noop joining the outputs).
inline std::string root_term(const ImportResult& r) {
  auto outs = r.graph.outputs();
  return outs.size() == 1 ? print_term(r.graph, outs[0]) : print_term(r.graph, r.graph.root());
}

/// How many nodes of `op` (its language name) the imported graph has.
inline int count(const ImportResult& r, const std::string& op) {
  auto c = ir::op_counts(r.graph);
  auto it = c.find(op);
  return it == c.end() ? 0 : it->second;
}

}  // namespace tensat

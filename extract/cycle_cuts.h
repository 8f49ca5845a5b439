// Cycles of the class graph for the ILP's lazy cycle cuts (formulation.h): the strongly
// connected components, and every simple cycle up to a length inside a component (cut before
// the first solve; most cycles of TENSAT e-graphs are short Split/Concat loops).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "extract/extract_graph.h"

namespace tensat::extract {

/// Strongly connected components (iterative Tarjan) of a graph given by successor lists;
/// returns a component id per vertex.
std::vector<uint32_t> strongly_connected_components(const std::vector<std::vector<ClassIdx>>& succ);

/// Calls emit(cycle) for every simple cycle c0 -> c1 -> ... -> c0 of at most max_len vertices
/// inside a strongly connected component, each once (enumerated from its smallest vertex).
/// emit returns false to stop the enumeration; short_cycles then returns false.
bool short_cycles(const std::vector<std::vector<ClassIdx>>& succ, size_t max_len,
                  const std::function<bool(const std::vector<ClassIdx>&)>& emit);

}  // namespace tensat::extract

// Labelling the constants the import computed from the input shapes that the graph reads as
// data (ModelContext::shape_values, ImportOptions::shape_values_at_run_time): an output with
// symbolic input dimensions writes such a value as its computation (a range of positions
// sliced to the sequence length, a mask), and needs the dimensions of that computation's result
// in terms of the input symbols (exporter/dim_labels.h) and of each tensor whose shape it reads.
#pragma once

#include <cstddef>

#include "importer/importer.h"

namespace tensat {

/// Labels every value of imp.ctx.shape_values:
/// - each tensor whose shape it reads, from DimLabels below it: every dimension must be fixed
///   or an input's symbol;
/// - the value itself, from its computation evaluated again (importer/const_fold.h) with the
///   input symbols at four sets of values (the fixed ones, twice them, three times plus one,
///   half of them; distinct per symbol where they can be): a dimension that is one symbol's
///   value at each of them gets that symbol, one that never changes stays fixed. The first
///   must give the imported value itself.
/// A value that cannot be labelled keeps `why_not`, and an output with symbolic dimensions
/// that reads it is not written (DimLabels stops there). Returns the number labelled.
size_t label_shape_values(ImportResult& imp);

}  // namespace tensat

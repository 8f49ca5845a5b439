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
///   input symbols at 13 sets of values (the fixed ones, twice them plus one, 1, and ten drawn
///   for each symbol on its own up to 4v + 16; distinct per set): a dimension that is one
///   symbol's value (or the product of two) at each of them gets that symbol, one that never
///   changes stays fixed. The first must give the imported value itself. A size clamped to a
///   bound beyond the drawn values (BERT's 512 positions at a sequence of 64) is taken to follow
///   the symbol: past the bound (where BERT's own shapes disagree and it fails) an output could
///   differ from its input (README, limitations).
/// A value that cannot be labelled keeps `why_not`, and an output with symbolic dimensions
/// that reads it is not written (DimLabels stops there). Returns the number labelled.
size_t label_shape_values(ImportResult& imp);

}  // namespace tensat

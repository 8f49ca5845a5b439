// Verification: the optimized model against the original on the same random inputs.
//
// Both models are imported (the optimized one from the file the exporter wrote, so the
// exporter is checked too) and run with the GPU executor or the CPU reference executor.
// Opaque nodes that both executors can run (exec/opaque_plan.h: Softmax, LayerNorm and GELU
// pieces, Clip, Pad, pooling with ceil_mode, shape computations, ...) are computed; the
// others are region boundaries: each such output gets the same random value in both runs (a
// node that either model cannot compute is a boundary in both). The inputs of every opaque
// node are compared as well as the graph outputs, so every optimizable region is checked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "importer/importer.h"

namespace tensat {

/// The executor a verification runs on.
enum class Executor : uint8_t { Cpu, Gpu };
std::string_view executor_name(Executor e);  ///< "cpu" | "gpu"

/// VerifyResult::method when the written model is the input file itself (nothing to verify).
inline constexpr const char* kVerifyUnchanged = "unchanged";

struct VerifyResult {
  std::string method;        ///< cpu | gpu | unchanged (kVerifyUnchanged: passed, nothing compared)
  bool passed = false;
  double max_abs_err = 0;    ///< over all compared tensors
  /// Over all compared tensors: the largest error divided by max(1, the tensor's scale), the
  /// largest magnitude of the reference tensor (the absolute term of Tolerance). It tells a
  /// large absolute error of large values (constant-filled weights: 1e11 on outputs of 1e17)
  /// from a real difference.
  double max_scaled_err = 0;
  int compared = 0;          ///< tensors compared (outputs + opaque inputs)
  int opaque_regions = 0;    ///< opaque values treated as region boundaries (random in both runs)
  int opaque_computed = 0;   ///< opaque nodes the executor computed (exec/opaque_plan.h)
  std::string failure;       ///< names the output and the error when !passed
  double time_s = 0;
};

/// Tolerance for float32 results: |a - b| <= atol * max(1, scale) + rtol * |a|, scale being
/// the largest magnitude of the reference tensor.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-4;
};

/// Throws exec::ExecError (or a GPU error) if a graph cannot be evaluated.
VerifyResult verify_models(const ImportResult& original, const ImportResult& optimized, Executor on, uint64_t seed,
                           Tolerance tol = {});

}  // namespace tensat

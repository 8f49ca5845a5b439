// External data (onnx's layout): tensor bytes kept in files beside the model instead of inside
// it, as every model over protobuf's 2 GB limit must. A tensor with data_location EXTERNAL
// names its file by `location`, relative to the model's folder, and its bytes by `offset`
// (default 0) and `length` (default: to the end of the file).
//
// Reading is strict about where a location may point: never an absolute path, never a `..`
// component, and, symlinks followed, never outside the model's folder (a model from elsewhere
// must not make the tool read arbitrary files). Writing puts every large tensor into one data
// file, through a caller-supplied writer (the exporter writes it atomically).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tensat {

/// A bad location, a missing or short data file: bad input. The message names the tensor and
/// the location.
class ExternalDataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// protobuf cannot serialize or parse a message of 2 GiB or more: a model above this size
/// (with its tensors inline) must be written with external data.
inline constexpr size_t kProtobufLimit = size_t{2} * 1024 * 1024 * 1024 - 1;
/// onnx's default: tensors smaller than this stay inside the model file.
inline constexpr size_t kExternalThreshold = 1024;
/// Offsets of tensors of at least kAlignFrom bytes are multiples of kAlign (page-aligned
/// tensors can be memory-mapped by a runtime).
inline constexpr size_t kAlign = 4096;
inline constexpr size_t kAlignFrom = size_t{1} << 20;

/// The file a location names, inside `model_dir`: its canonical path. Throws
/// ExternalDataError for an empty or absolute location, a `..` component, a file that does
/// not exist, or a path that leaves `model_dir` once symlinks are resolved.
std::string resolve_location(const std::string& model_dir, const std::string& location);

/// True if `t` keeps its data in an external file.
bool uses_external_data(const onnx::TensorProto& t);

/// Every tensor of the model that can hold data: graph initializers, tensor-valued attributes
/// (Constant's value, ...), sparse initializers' values and indices, in subgraphs too.
void for_each_tensor(onnx::ModelProto& model, const std::function<void(onnx::TensorProto&)>& f);

/// Reads the data of every externally stored tensor of `model` into raw_data, from files
/// relative to `model_dir` (`redirects`: location -> file read instead, for a staged output not
/// yet moved into place; not checked). Returns the canonical paths of the files read.
/// Throws ExternalDataError.
std::vector<std::string> load_external_data(onnx::ModelProto& model, const std::string& model_dir,
                                            const std::map<std::string, std::string>& redirects = {});

/// Tensor data moved out of a model by externalize_tensors, to be put back.
struct MovedTensorData {
  std::vector<std::pair<onnx::TensorProto*, std::string>> tensors;
  size_t bytes = 0;  ///< size of the data file written
};

/// Moves the raw_data of every tensor of at least `threshold` bytes into one data file, written
/// in order through `write`, and rewrites each such tensor to refer to it by `location`. The
/// bytes taken out are recorded in `moved` as each tensor is done (also when `write` throws),
/// so that restore_tensor_data can always put them back.
void externalize_tensors(onnx::ModelProto& model, const std::string& location, size_t threshold,
                         const std::function<void(std::string_view)>& write, MovedTensorData& moved);

/// Undoes externalize_tensors (the model refers to inline raw_data again).
void restore_tensor_data(MovedTensorData& moved);

}  // namespace tensat

// Writing exported models: the ONNX checker, serialization into atomic files, external data
// for models over protobuf's limit or on request (see exporter.h).
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>

#include <algorithm>
#include <filesystem>

#include "exporter/emit.h"
#include "exporter/exporter.h"

namespace tensat {

namespace {

void write_model(const onnx::ModelProto& model, AtomicFile& file) {
  bool ok = false;
  {
    google::protobuf::io::FileOutputStream out(file.fd());
    ok = model.SerializeToZeroCopyStream(&out) && out.Flush();
  }
  if (!ok) throw ExportError(file.path() + ": writing the model failed (disk full?)");
}

// True if `path` (which may not exist yet) is one of the canonical paths in `files`.
bool is_one_of(const std::string& path, const std::vector<std::string>& files) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(path, ec);
  if (ec) return false;
  return std::find(files.begin(), files.end(), p.string()) != files.end();
}

}  // namespace

std::string check_model(const onnx::ModelProto& model) {
  // Debian's onnx 1.12 knows IR versions up to 8 and default-domain opsets up to 17.
  if (model.ir_version() > 8) return "IR version " + std::to_string(model.ir_version()) + " is newer than onnx 1.12 knows";
  for (const auto& o : model.opset_import()) {
    if ((o.domain().empty() || o.domain() == "ai.onnx") && o.version() > 17)
      return "opset " + std::to_string(o.version()) + " is newer than onnx 1.12 knows";
    if (o.domain() == "ai.onnx.ml" && o.version() > 3) return "ai.onnx.ml opset is newer than onnx 1.12 knows";
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw ExportError(std::string("ONNX checker rejected the exported model: ") + e.what());
  }
  return "";
}

// ---- StagedExport ---------------------------------------------------------------------------

StagedExport::StagedExport(std::string path) : path_(std::move(path)), model_(path_) {}
StagedExport::~StagedExport() = default;

std::string StagedExport::data_location() const { return std::filesystem::path(data_path()).filename().string(); }

std::map<std::string, std::string> StagedExport::redirects() const {
  if (!data_) return {};
  return {{data_location(), data_->temp_path()}};
}

AtomicFile& StagedExport::open_data_file() {
  data_ = std::make_unique<AtomicFile>(data_path());
  return *data_;
}

void StagedExport::commit() {
  if (data_) data_->commit();  // the model refers to it: it must be in place first
  model_.commit();
}

// ---- export ---------------------------------------------------------------------------------

void write_model_atomic(const onnx::ModelProto& model, const std::string& path) {
  try {
    AtomicFile file(path);
    write_model(model, file);
    file.commit();
  } catch (const FileError& e) {
    throw ExportError(e.what());
  }
}

void export_onnx_to(const ir::Graph& g, WeightStore& weights, const ModelContext& ctx, StagedExport& out,
                    const ExportOptions& opts, ExportStats* stats) {
  ExportStats local;
  ExportStats& st = stats ? *stats : local;
  onnx::ModelProto m = detail::emit_model(g, weights, ctx, &weights, opts, st);
  MovedTensorData moved;
  // Move the initializer bytes back into the store, whatever happens next.
  auto give_back = [&] {
    restore_tensor_data(moved);
    for (auto& t : *m.mutable_graph()->mutable_initializer())
      if (weights.contains(t.name()) && weights.get(t.name()).bytes.empty() && !t.raw_data().empty())
        t.mutable_raw_data()->swap(weights.get_mut(t.name()).bytes);
  };
  try {
    if (opts.run_checker) {
      st.checker_skipped_reason = check_model(m);
      st.checker_ran = st.checker_skipped_reason.empty();
    }
    if (opts.external_data == ExternalDataMode::Always || m.ByteSizeLong() > opts.external_auto_limit) {
      if (is_one_of(out.data_path(), ctx.external_data_files))
        throw ExportError(out.data_path() + ": the source model reads its external data from this file; "
                          "choose another output name");
      AtomicFile& data = out.open_data_file();
      externalize_tensors(m, out.data_location(), opts.external_threshold,
                          [&](std::string_view b) { data.write(b); }, moved);
      if (moved.tensors.empty()) {
        out.drop_data_file();  // no tensor large enough: nothing to write beside the model
      } else {
        st.external_data = out.data_location();
        st.external_bytes = moved.bytes;
      }
      if (m.ByteSizeLong() > kProtobufLimit)
        throw ExportError(out.path() + ": the model is over 2 GB even with its tensors in external data");
    }
    write_model(m, out.model_file());
  } catch (const FileError& e) {
    give_back();
    throw ExportError(e.what());
  } catch (...) {
    give_back();
    throw;
  }
  give_back();
}

void export_onnx_file(const ir::Graph& g, WeightStore& weights, const ModelContext& ctx, const std::string& path,
                      const ExportOptions& opts, ExportStats* stats) {
  try {
    StagedExport out(path);
    export_onnx_to(g, weights, ctx, out, opts, stats);
    out.commit();
  } catch (const FileError& e) {
    throw ExportError(e.what());
  }
}

}  // namespace tensat

// External data: reading with the location check, writing into one data file (see
// external_data.h).
#include "onnx_model/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <unordered_map>

namespace tensat {

namespace fs = std::filesystem;

namespace {

void for_each_in_graph(onnx::GraphProto& g, const std::function<void(onnx::TensorProto&)>& f) {
  for (auto& t : *g.mutable_initializer()) f(t);
  for (auto& s : *g.mutable_sparse_initializer()) {
    f(*s.mutable_values());
    f(*s.mutable_indices());
  }
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t()) f(*a.mutable_t());
      for (auto& t : *a.mutable_tensors()) f(t);
      if (a.has_sparse_tensor()) {
        f(*a.mutable_sparse_tensor()->mutable_values());
        f(*a.mutable_sparse_tensor()->mutable_indices());
      }
      if (a.has_g()) for_each_in_graph(*a.mutable_g(), f);
      for (auto& sub : *a.mutable_graphs()) for_each_in_graph(sub, f);
    }
  }
}

struct Entry {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
};

std::string tensor_label(const onnx::TensorProto& t) { return "tensor '" + t.name() + "'"; }

int64_t parse_count(const std::string& v, const onnx::TensorProto& t, const std::string& key) {
  int64_t x = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || x < 0)
    throw ExternalDataError(tensor_label(t) + ": external data " + key + " '" + v + "' is not a non-negative integer");
  return x;
}

Entry entry_of(const onnx::TensorProto& t) {
  Entry e;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      e.location = kv.value();
    } else if (kv.key() == "offset") {
      e.offset = parse_count(kv.value(), t, "offset");
    } else if (kv.key() == "length") {
      e.length = parse_count(kv.value(), t, "length");
    }
  }
  if (e.location.empty()) throw ExternalDataError(tensor_label(t) + ": external data without a location");
  return e;
}

// An open data file, read with pread.
struct DataFile {
  int fd = -1;
  int64_t size = 0;
  std::string path;
};

}  // namespace

std::string resolve_location(const std::string& model_dir, const std::string& location) {
  if (location.empty()) throw ExternalDataError("external data location is empty");
  fs::path loc(location);
  if (loc.is_absolute() || location.front() == '/')
    throw ExternalDataError("external data location '" + location + "' is an absolute path; it must be relative to the model's folder");
  for (const auto& part : loc)
    if (part == "..")
      throw ExternalDataError("external data location '" + location + "' leaves the model's folder ('..')");
  std::error_code ec;
  fs::path dir = fs::canonical(model_dir.empty() ? fs::path(".") : fs::path(model_dir), ec);
  if (ec) throw ExternalDataError("cannot resolve the model's folder '" + model_dir + "': " + ec.message());
  fs::path file = fs::canonical(dir / loc, ec);
  if (ec)
    throw ExternalDataError("external data file '" + location + "' (in " + dir.string() + "): " + ec.message());
  // Inside the folder: the folder's path is a prefix of the file's, component by component.
  auto d = dir.begin(), f = file.begin();
  for (; d != dir.end(); ++d, ++f)
    if (f == file.end() || *d != *f)
      throw ExternalDataError("external data location '" + location + "' resolves to " + file.string() +
                              ", outside the model's folder " + dir.string() + " (symlink)");
  if (f == file.end()) throw ExternalDataError("external data location '" + location + "' is the model's folder");
  if (!fs::is_regular_file(file, ec))
    throw ExternalDataError("external data location '" + location + "' is not a regular file");
  return file.string();
}

bool uses_external_data(const onnx::TensorProto& t) { return t.data_location() == onnx::TensorProto::EXTERNAL; }

void for_each_tensor(onnx::ModelProto& model, const std::function<void(onnx::TensorProto&)>& f) {
  if (model.has_graph()) for_each_in_graph(*model.mutable_graph(), f);
  for (auto& fn : *model.mutable_functions())
    for (auto& n : *fn.mutable_node())
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_t()) f(*a.mutable_t());
        for (auto& t : *a.mutable_tensors()) f(t);
      }
}

std::vector<std::string> load_external_data(onnx::ModelProto& model, const std::string& model_dir,
                                            const std::map<std::string, std::string>& redirects) {
  std::unordered_map<std::string, DataFile> files;  // by location
  std::vector<std::string> read;
  auto close_all = [&] {
    for (auto& [loc, df] : files)
      if (df.fd >= 0) ::close(df.fd);
  };
  try {
    for_each_tensor(model, [&](onnx::TensorProto& t) {
      if (!uses_external_data(t)) return;
      Entry e = entry_of(t);
      auto it = files.find(e.location);
      if (it == files.end()) {
        DataFile df;
        auto red = redirects.find(e.location);
        try {
          df.path = red != redirects.end() ? red->second : resolve_location(model_dir, e.location);
        } catch (const ExternalDataError& err) {
          throw ExternalDataError(tensor_label(t) + ": " + err.what());
        }
        df.fd = ::open(df.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (df.fd < 0)
          throw ExternalDataError(tensor_label(t) + ": cannot open external data file '" + e.location +
                                  "': " + std::strerror(errno));
        struct stat st {};
        if (::fstat(df.fd, &st) != 0) {
          ::close(df.fd);
          throw ExternalDataError(tensor_label(t) + ": cannot read external data file '" + e.location + "'");
        }
        df.size = st.st_size;
        it = files.emplace(e.location, df).first;
        if (red == redirects.end()) read.push_back(df.path);
      }
      const DataFile& df = it->second;
      int64_t length = e.length >= 0 ? e.length : df.size - e.offset;
      if (e.offset > df.size || length < 0 || length > df.size - e.offset)
        throw ExternalDataError(tensor_label(t) + ": bytes " + std::to_string(e.offset) + ".." +
                                std::to_string(e.offset + std::max<int64_t>(length, 0)) + " lie outside '" +
                                e.location + "' (" + std::to_string(df.size) + " bytes)");
      std::string* raw = t.mutable_raw_data();
      raw->resize(static_cast<size_t>(length));
      size_t done = 0;
      while (done < raw->size()) {
        ssize_t n = ::pread(df.fd, raw->data() + done, raw->size() - done, static_cast<off_t>(e.offset) + static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
          throw ExternalDataError(tensor_label(t) + ": reading '" + e.location + "' failed: " +
                                  (n < 0 ? std::strerror(errno) : "unexpected end of file"));
        done += static_cast<size_t>(n);
      }
      t.clear_external_data();
      t.set_data_location(onnx::TensorProto::DEFAULT);
    });
  } catch (...) {
    close_all();
    throw;
  }
  close_all();
  return read;
}

void externalize_tensors(onnx::ModelProto& model, const std::string& location, size_t threshold,
                         const std::function<void(std::string_view)>& write, MovedTensorData& moved) {
  static const std::string zeros(kAlign, '\0');
  for_each_tensor(model, [&](onnx::TensorProto& t) {
    if (uses_external_data(t) || !t.has_raw_data() || t.raw_data().size() < threshold) return;
    size_t len = t.raw_data().size();
    if (len >= kAlignFrom && moved.bytes % kAlign != 0) {
      size_t pad = kAlign - moved.bytes % kAlign;
      write(std::string_view(zeros.data(), pad));
      moved.bytes += pad;
    }
    write(t.raw_data());
    auto add = [&](const char* k, const std::string& v) {
      auto* kv = t.add_external_data();
      kv->set_key(k);
      kv->set_value(v);
    };
    add("location", location);
    add("offset", std::to_string(moved.bytes));
    add("length", std::to_string(len));
    moved.bytes += len;
    moved.tensors.emplace_back(&t, std::string());
    moved.tensors.back().second.swap(*t.mutable_raw_data());
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
  });
}

void restore_tensor_data(MovedTensorData& moved) {
  for (auto& [t, bytes] : moved.tensors) {
    t->clear_external_data();
    t->set_data_location(onnx::TensorProto::DEFAULT);
    t->mutable_raw_data()->swap(bytes);
  }
  moved.tensors.clear();
}

}  // namespace tensat

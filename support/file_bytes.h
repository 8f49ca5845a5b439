// FileBytes: a whole file's bytes in memory, to parse from one contiguous buffer.
//
// Mapped read-only (mmap, pages read in at once) where the file system allows, else read into
// a buffer. The importer parses ONNX models from it: protobuf, reading from a file stream in
// 8 KiB pieces, grows each large string (a weight's raw data) piece by piece, and a 575 MB
// VGG-19 took 1.2 s to parse that way against 0.45 s from the mapping (2-core development
// machine, 2026-11-27).
//
//   FileBytes f(path);              // throws FileError naming the path
//   model.ParseFromArray(f.data(), int(f.size()));
//
// The mapping is private and read-only: a writer that truncates the file while it is mapped
// makes reading the lost pages fault (SIGBUS), as with any mapped input; the bytes are only
// read while parsing.
#pragma once

#include <cstddef>
#include <string>

namespace tensat {

class FileBytes {
 public:
  enum class Mode { MapOrRead, Read };
  /// Reads `path` (a regular file); throws FileError naming it if it cannot be opened, is not
  /// a regular file, or cannot be read whole.
  explicit FileBytes(const std::string& path, Mode mode = Mode::MapOrRead);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  /// Whether the bytes are a mapping of the file (false: read into a buffer).
  bool mapped() const { return mapped_; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string buffer_;
};

}  // namespace tensat

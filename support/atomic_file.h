// AtomicFile: write a file so that readers see either the old content or the complete new one.
//
// The data goes to a temporary file in the target's folder (same file system, so the final
// rename is atomic); commit() flushes it to disk and renames it over the target. An
// AtomicFile destroyed without commit() removes its temporary file, so an error or an
// exception never leaves a half-written target or a stray temporary behind.
//
//   AtomicFile f(path);                 // throws FileError naming the folder
//   write(f.fd(), ...);                 // or f.write(bytes)
//   f.commit();                         // throws FileError naming the target
//
// write_file_atomic(path, bytes) does all three for data held in memory.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace tensat {

/// A file could not be created, written or moved into place; the message names the path.
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class AtomicFile {
 public:
  /// Creates the temporary file next to `path` (mode 0644 after commit).
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  /// The temporary file's path (for tools that write by name; valid until commit/destruction).
  const std::string& temp_path() const { return tmp_; }
  /// Appends bytes; throws FileError on a short write (disk full).
  void write(std::string_view bytes);
  /// fsync, close and rename over the target. Throws FileError; the temporary is removed.
  void commit();
  bool committed() const { return committed_; }

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes `bytes` to `path` atomically (AtomicFile + write + commit).
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace tensat

// AtomicFile (see atomic_file.h).
#include "support/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace tensat {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::string tmpl = path_ + ".tmp.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0)
    throw FileError(path_ + ": cannot create a temporary file next to it: " + std::strerror(errno));
  tmp_.assign(buf.data());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::write(std::string_view bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw FileError(path_ + ": writing failed: " + std::strerror(errno));
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (committed_) return;
  bool ok = ::fsync(fd_) == 0;
  int err = errno;
  ok = ::close(fd_) == 0 && ok;
  fd_ = -1;
  if (!ok) throw FileError(path_ + ": writing failed (disk full?): " + std::strerror(err));
  ::chmod(tmp_.c_str(), 0644);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw FileError(path_ + ": cannot move the written file into place: " + std::strerror(errno));
  committed_ = true;
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

}  // namespace tensat

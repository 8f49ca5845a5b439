// FileBytes (see file_bytes.h).
#include "support/file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/atomic_file.h"  // FileError

namespace tensat {

namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail(const std::string& path, const char* what) {
  const int e = errno;
  throw FileError(path + ": " + what + ": " + std::strerror(e));
}

}  // namespace

FileBytes::FileBytes(const std::string& path, Mode mode) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) fail(path, "cannot open");
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail(path, "cannot stat");
  if (!S_ISREG(st.st_mode)) throw FileError(path + ": not a regular file");
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;
  if (mode == Mode::MapOrRead) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, f.fd, 0);
    if (p != MAP_FAILED) {
      data_ = static_cast<const char*>(p);
      mapped_ = true;
      return;
    }
  }
  buffer_.resize(size_);
  size_t got = 0;
  while (got < size_) {
    const ssize_t r = ::read(f.fd, buffer_.data() + got, size_ - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(path, "cannot read");
    if (r == 0) throw FileError(path + ": shorter than its size (" + std::to_string(got) + " of " +
                                std::to_string(size_) + " bytes read)");
    got += static_cast<size_t>(r);
  }
  data_ = buffer_.data();
}

FileBytes::~FileBytes() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace tensat

// FileBytes (support/file_bytes.h), which the importer parses ONNX files from: the same bytes
// whether mapped or read, and errors that name the path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "support/atomic_file.h"
#include "support/file_bytes.h"

namespace tensat {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path dir;
  TempDir() {
    dir = fs::temp_directory_path() / ("tensat_file_bytes_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempDir() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& bytes) const {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }
};

// Bytes of every value, over several pages and not a multiple of the page size.
std::string some_bytes(size_t n) {
  std::mt19937 rng(7);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

TEST(FileBytes, MappedAndReadGiveTheFileSBytes) {
  TempDir t;
  const std::string bytes = some_bytes(3 * 4096 + 123);
  const std::string path = t.write("model.onnx", bytes);
  const FileBytes mapped(path);
  EXPECT_TRUE(mapped.mapped());
  ASSERT_EQ(mapped.size(), bytes.size());
  EXPECT_EQ(std::string(mapped.data(), mapped.size()), bytes);
  const FileBytes read(path, FileBytes::Mode::Read);
  EXPECT_FALSE(read.mapped());
  ASSERT_EQ(read.size(), bytes.size());
  EXPECT_EQ(std::string(read.data(), read.size()), bytes);
}

TEST(FileBytes, EmptyFileHasNoBytes) {
  TempDir t;
  const std::string path = t.write("empty.onnx", "");
  for (auto mode : {FileBytes::Mode::MapOrRead, FileBytes::Mode::Read}) {
    const FileBytes f(path, mode);
    EXPECT_EQ(f.size(), 0u);
    EXPECT_FALSE(f.mapped());
  }
}

TEST(FileBytes, ErrorsNameThePath) {
  TempDir t;
  const std::string missing = (t.dir / "missing.onnx").string();
  try {
    FileBytes f(missing);
    FAIL() << "no error for a missing file";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find(missing + ": cannot open"), std::string::npos) << e.what();
  }
  try {
    FileBytes f(t.dir.string());
    FAIL() << "no error for a directory";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find(t.dir.string() + ": not a regular file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tensat

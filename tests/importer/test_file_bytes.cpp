// FileBytes (support/file_bytes.h), which the importer parses ONNX files from: the same bytes
// whether mapped or read, and errors that name the path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "support/atomic_file.h"
#include "support/file_bytes.h"
#include "tests/temp_dir.h"

namespace tensat {
namespace {

// Writes `bytes` to a file `name` in `dir`; returns its path.
std::string write(const testing::TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string p = dir.file(name);
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p;
}

// Bytes of every value, over several pages and not a multiple of the page size.
std::string some_bytes(size_t n) {
  std::mt19937 rng(7);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

TEST(FileBytes, MappedAndReadGiveTheFileSBytes) {
  const testing::TempDir t;
  const std::string bytes = some_bytes(3 * 4096 + 123);
  const std::string path = write(t, "model.onnx", bytes);
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
  const testing::TempDir t;
  const std::string path = write(t, "empty.onnx", "");
  for (auto mode : {FileBytes::Mode::MapOrRead, FileBytes::Mode::Read}) {
    const FileBytes f(path, mode);
    EXPECT_EQ(f.size(), 0u);
    EXPECT_FALSE(f.mapped());
  }
}

TEST(FileBytes, ErrorsNameThePath) {
  const testing::TempDir t;
  const std::string missing = t.file("missing.onnx");
  try {
    FileBytes f(missing);
    FAIL() << "no error for a missing file";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find(missing + ": cannot open"), std::string::npos) << e.what();
  }
  try {
    FileBytes f(t.path().string());
    FAIL() << "no error for a directory";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find(t.path().string() + ": not a regular file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tensat

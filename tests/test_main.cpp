// The main of every GoogleTest binary: gtest_main's, after parking OpenBLAS's spinning workers
// (support/blas_threads.h), which would otherwise take a core for ~0.1 s in each test process.
#include <gtest/gtest.h>

#include "support/blas_threads.h"

int main(int argc, char** argv) {
  tensat::park_blas_threads();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

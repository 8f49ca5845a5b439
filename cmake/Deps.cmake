# Third-party dependencies, all from Debian packages (see scripts/install-deps.sh).
find_package(Threads REQUIRED)
find_package(ONNX REQUIRED CONFIG)
find_package(Protobuf REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
find_package(GTest REQUIRED)
find_package(CUDAToolkit REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(CBC REQUIRED IMPORTED_TARGET cbc)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)

# cuDNN ships with the CUDA toolkit here (/usr/local/cuda/lib) or as a Python wheel on the
# GPU machine; the header is needed to compile, the library to link.
find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/local/include)
find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib /usr/local/cuda/lib64)
if(NOT CUDNN_INCLUDE_DIR OR NOT CUDNN_LIBRARY)
  message(FATAL_ERROR "cuDNN not found (looked next to the CUDA toolkit at /usr/local/cuda)")
endif()
add_library(tensat_cudnn INTERFACE)
target_include_directories(tensat_cudnn INTERFACE ${CUDNN_INCLUDE_DIR})
target_link_libraries(tensat_cudnn INTERFACE ${CUDNN_LIBRARY})

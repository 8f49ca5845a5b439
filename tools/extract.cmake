# onnx-tensat-extract: extraction from an egraph-serialize JSON file.
add_executable(onnx-tensat-extract ${CMAKE_CURRENT_LIST_DIR}/extract_main.cpp)
target_link_libraries(onnx-tensat-extract PRIVATE tensat_extract tensat_support CLI11::CLI11 spdlog::spdlog)
target_compile_options(onnx-tensat-extract PRIVATE ${TENSAT_WARNINGS})

# convolution.cmake - convolution benchmark beside the paper's Table 1 (prints figures; not a test)
add_executable(bench_conv ${CMAKE_CURRENT_SOURCE_DIR}/bench_conv.c)
target_link_libraries(bench_conv PRIVATE bb_convolution bb_trace bb_flags)
target_compile_definitions(bench_conv PRIVATE BB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# trace.cmake - trace reader/writer benchmark (prints figures; not a test)
add_executable(bench_trace ${CMAKE_CURRENT_SOURCE_DIR}/bench_trace.c)
target_link_libraries(bench_trace PRIVATE bb_trace bb_flags)

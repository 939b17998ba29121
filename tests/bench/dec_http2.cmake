# dec_http2.cmake - HTTP/2 / gRPC decoder speed alone (prints figures; not a test)
add_executable(bench_dec_http2 ${CMAKE_CURRENT_SOURCE_DIR}/bench_dec_http2.c)
target_link_libraries(bench_dec_http2 PRIVATE bb_decoders bb_trace bb_flags)

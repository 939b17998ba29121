# dec_http.cmake - decoding speed of the HTTP/1.1 decoder alone (prints figures; not a test)
add_executable(bench_dec_http ${CMAKE_CURRENT_SOURCE_DIR}/bench_dec_http.c)
target_link_libraries(bench_dec_http PRIVATE bb_decoders bb_trace bb_flags)

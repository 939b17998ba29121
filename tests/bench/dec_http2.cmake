# dec_http2.cmake - HTTP/2 / gRPC decoder speed alone (prints figures; not a test)
add_executable(bench_dec_http2 ${CMAKE_CURRENT_SOURCE_DIR}/bench_dec_http2.c)
target_link_libraries(bench_dec_http2 PRIVATE bb_decoders bb_trace bb_flags)
# dec_http2.c's own HPACK decoding against nghttp2's inflater (when libnghttp2 is found).
if(NGHTTP2_FOUND)
  add_executable(bench_hpack_nghttp2 ${CMAKE_CURRENT_SOURCE_DIR}/bench_hpack_nghttp2.c)
  target_link_libraries(bench_hpack_nghttp2 PRIVATE bb_decoders bb_trace bb_flags PkgConfig::NGHTTP2)
endif()

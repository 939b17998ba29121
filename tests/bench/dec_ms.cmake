# dec_ms.cmake - decoding speed of the ldap, dcerpc and smb2 decoders alone (prints figures; not a test)
add_executable(bench_dec_ms ${CMAKE_CURRENT_SOURCE_DIR}/bench_dec_ms.c)
target_link_libraries(bench_dec_ms PRIVATE bb_decoders bb_trace bb_flags)

# dec_sql.cmake - decoding speed of the pgsql, mysql and kafka decoders alone (prints figures; not a test)
add_executable(bench_dec_sql ${CMAKE_CURRENT_SOURCE_DIR}/bench_dec_sql.c)
target_link_libraries(bench_dec_sql PRIVATE bb_decoders bb_trace bb_flags)

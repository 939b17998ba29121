# dec_redis.cmake - decoding speed of the redis, memcache and thrift decoders alone
add_executable(bench_dec_redis ${CMAKE_CURRENT_SOURCE_DIR}/bench_dec_redis.c)
target_link_libraries(bench_dec_redis PRIVATE bb_decoders bb_trace bb_flags)
target_include_directories(bench_dec_redis PRIVATE ${PROJECT_SOURCE_DIR})

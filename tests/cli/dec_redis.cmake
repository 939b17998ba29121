# dec_redis.cmake - the redis, memcache and thrift decoders (issue 6)
# Counts on the shared corpus against tshark's (skips without ../shared).
bb_cli_test(dec_redis_counts dec_redis_counts.sh)
# Real redis-server, memcached and python3-thrift servers and clients on a
# namespace bridge, bbcap live: each request as a CALL/RET pair with its req=.
bb_cli_test(dec_redis_live dec_redis_live.sh)
set_tests_properties(cli_dec_redis_live PROPERTIES TIMEOUT 180 RUN_SERIAL ON)

# dec_pipeline.cmake - replies paired by order (http, redis, memcache, pgsql, mysql) under
# deep pipelining, and memcached picked up mid-stream (issue 18)
# A capture of real servers, checked into tests/fixtures/pipeline/ (runs everywhere).
bb_cli_test(dec_pipeline_fixture dec_pipeline_fixture.sh)
# The same traffic live: nginx, redis, memcached, PostgreSQL and MariaDB in a network
# namespace, bbcap on the bridge (root; skips otherwise).
bb_cli_test(dec_pipeline_live dec_pipeline_live.sh)
set_tests_properties(cli_dec_pipeline_live PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
# Past the queue's bound (70,000 calls waiting on one connection): counted, never mispaired.
bb_cli_test(dec_pipeline_bound dec_pipeline_bound.sh)

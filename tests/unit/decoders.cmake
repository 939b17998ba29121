# decoders.cmake - the safe reader, the registry and every decoder
# test_decoders also runs the fuzz target on mutated seeds (tests/fuzz/fuzz_decoders.c;
# the libFuzzer build and corpus replay are in tests/fuzz/decoders.cmake).
bb_unit_test(test_decoders test_decoders.c bb_decoders bb_trace)
target_sources(test_decoders PRIVATE ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_decoders.c)
target_compile_definitions(test_decoders PRIVATE BB_LIBFUZZER)
bb_unit_test(test_dec_ms test_dec_ms.c bb_decoders bb_trace)
bb_unit_test(test_dec_http2 test_dec_http2.c bb_decoders bb_trace)
bb_unit_test(test_dec_redis test_dec_redis.c bb_decoders bb_trace)
bb_unit_test(test_dec_sql test_dec_sql.c bb_decoders bb_trace)
bb_unit_test(test_dec_tok test_dec_tok.c bb_decoders bb_trace)
bb_unit_test(test_dec_ordq test_dec_ordq.c bb_decoders bb_trace)

# maketrace.cmake - unit tests of bb_maketrace: PRNG, config errors, generator, loss, skew, merge
bb_unit_test(test_maketrace test_maketrace.c bb_maketrace bb_trace)

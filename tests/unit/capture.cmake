# capture.cmake - capture on synthetic captures written by the test itself
# (the pipeline's fuzz target is in tests/fuzz/capture.cmake)
bb_unit_test(test_capture test_capture.c bb_capture bb_decoders bb_trace)

# trace.cmake - unit tests of trace/ (time parsing, interning, reader, writer)
bb_unit_test(test_trace test_trace.c bb_trace)

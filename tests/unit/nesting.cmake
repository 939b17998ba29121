# nesting.cmake - unit tests of the nesting algorithm (nesting/)
bb_unit_test(test_nesting test_nesting.c bb_nesting bb_viz bb_trace ${MATH_LIB})

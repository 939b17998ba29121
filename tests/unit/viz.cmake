# viz.cmake - unit tests of viz/: patterns and delay graphs written as dot, JSON and
# text, read back with cgraph and jansson
bb_unit_test(test_viz test_viz.c bb_viz bb_trace PkgConfig::CGRAPH PkgConfig::JANSSON ${MATH_LIB})

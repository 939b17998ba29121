# convolution.cmake - unit tests of convolution/ and of viz/'s delay-graph writers
bb_unit_test(test_convolution test_convolution.c bb_convolution bb_viz bb_trace)
target_link_libraries(test_convolution PRIVATE PkgConfig::FFTW3 ${MATH_LIB})

# maketrace.cmake - the bb_maketrace library (config, generator, loss, skew, merge) and maketrace
add_library(bb_maketrace STATIC
  ${CMAKE_CURRENT_LIST_DIR}/mt_rng.c
  ${CMAKE_CURRENT_LIST_DIR}/mt_config.c
  ${CMAKE_CURRENT_LIST_DIR}/mt_gen.c
  ${CMAKE_CURRENT_LIST_DIR}/mt_loss.c
  ${CMAKE_CURRENT_LIST_DIR}/mt_skew.c
  ${CMAKE_CURRENT_LIST_DIR}/mt_merge.c)
target_include_directories(bb_maketrace PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(bb_maketrace PUBLIC bb_trace PRIVATE PkgConfig::JANSSON ${MATH_LIB} bb_flags)

add_executable(maketrace ${CMAKE_CURRENT_LIST_DIR}/maketrace.c)
target_link_libraries(maketrace PRIVATE bb_maketrace bb_traceio bb_flags)
install(TARGETS maketrace RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

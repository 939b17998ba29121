# bbskew.cmake - bbskew: add or remove per-node clock skew, merge traces (uses bb_maketrace)
add_executable(bbskew ${CMAKE_CURRENT_LIST_DIR}/bbskew.c)
target_link_libraries(bbskew PRIVATE bb_maketrace bb_traceio bb_flags)
install(TARGETS bbskew RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# nesting.cmake - bbnest benchmark beside the paper's Table 1 (prints figures; not a test)
add_executable(bench_nesting ${CMAKE_CURRENT_SOURCE_DIR}/bench_nesting.c)
target_link_libraries(bench_nesting PRIVATE bb_flags)
target_compile_definitions(bench_nesting PRIVATE BB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/bench_instances.sh.in ${CMAKE_BINARY_DIR}/bin/bench_instances
  @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)

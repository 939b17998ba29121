# capture.cmake - bbcap offline throughput beside tcpdump and tshark (prints figures; not a test)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/bench_capture.sh.in ${CMAKE_BINARY_DIR}/bin/bench_capture
  @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)

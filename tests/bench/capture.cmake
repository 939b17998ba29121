# capture.cmake - bbcap offline throughput beside tcpdump and tshark (prints figures; not a test)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/bench_capture.sh.in ${CMAKE_BINARY_DIR}/bin/bench_capture
  @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)
# The watermark beside the fixed hold and the read floor, median of 5 (prints figures).
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/bench_capture_wm.sh.in ${CMAKE_BINARY_DIR}/bin/bench_capture_wm
  @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)
# bbcap live on the rig for 10 minutes: RSS samples, drops (prints figures; root).
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/bench_capture_soak.sh.in ${CMAKE_BINARY_DIR}/bin/bench_capture_soak
  @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)

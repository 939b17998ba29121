# FindNIDS.cmake - libnids has no pkg-config file: find its header and library
# and make the imported target NIDS::NIDS (it needs libpcap at link time).
find_path(NIDS_INCLUDE_DIR nids.h)
find_library(NIDS_LIBRARY NAMES nids)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NIDS REQUIRED_VARS NIDS_LIBRARY NIDS_INCLUDE_DIR)
if(NIDS_FOUND AND NOT TARGET NIDS::NIDS)
  add_library(NIDS::NIDS UNKNOWN IMPORTED)
  set_target_properties(NIDS::NIDS PROPERTIES
    IMPORTED_LOCATION "${NIDS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NIDS_INCLUDE_DIR}")
  if(TARGET PkgConfig::PCAP)
    set_property(TARGET NIDS::NIDS APPEND PROPERTY INTERFACE_LINK_LIBRARIES PkgConfig::PCAP)
  endif()
endif()
mark_as_advanced(NIDS_INCLUDE_DIR NIDS_LIBRARY)

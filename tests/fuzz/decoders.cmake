# decoders.cmake - fuzz targets for the decoders (fuzz_decoders.c)
#
#   fuzz_decoders        every decoder, byte 0 of the input picks which; seeds
#                        in corpus/decoders
#   fuzz_dec_NAME        decoder NAME alone (BB_FUZZ_DECODER="NAME"); seeds in
#                        corpus/dec_NAME
# A new decoder adds its name to BB_FUZZ_DECODERS and a corpus/dec_NAME folder.
bb_fuzz_target(decoders ${_fuzz_dir}/fuzz_decoders.c LIBS bb_decoders bb_trace)

set(BB_FUZZ_DECODERS
  dns
  sunrpc
  http
  ldap
  dcerpc
  smb2
  http2
  pgsql
  mysql
  kafka
  generic
  redis
  memcache
  thrift
)

foreach(_dec ${BB_FUZZ_DECODERS})
  bb_fuzz_target(dec_${_dec} ${_fuzz_dir}/fuzz_decoders.c LIBS bb_decoders bb_trace)
  target_compile_definitions(replay_dec_${_dec} PRIVATE BB_FUZZ_DECODER="${_dec}")
  if(BB_FUZZ)
    target_compile_definitions(fuzz_dec_${_dec} PRIVATE BB_FUZZ_DECODER="${_dec}")
  endif()
endforeach()

# capture.cmake - fuzz target for the whole pipeline, pcap in, trace out (fuzz_capture.c);
# seeds in corpus/capture and the dns/oncrpc/http captures of the shared corpus when present
set(_cap_seeds)
if(EXISTS ${PROJECT_SOURCE_DIR}/../shared/corpus/protocols)
  file(GLOB _cap_seeds ${PROJECT_SOURCE_DIR}/../shared/corpus/protocols/dns__*
       ${PROJECT_SOURCE_DIR}/../shared/corpus/protocols/oncrpc__*
       ${PROJECT_SOURCE_DIR}/../shared/corpus/protocols/http__*)
endif()
bb_fuzz_target(capture ${_fuzz_dir}/fuzz_capture.c LIBS bb_capture SEEDS ${_cap_seeds})

# capture.cmake - fuzz target for the whole pipeline, pcap in, trace out (fuzz_capture.c)
#
#   fuzz_replay_capture         corpus/capture (in the repository)
#   fuzz_replay_capture_shared  the dns, oncrpc and http captures of the shared
#                               protocol corpus (../shared beside the checkout),
#                               listed when the test runs; skipped (exit 77, with
#                               the reason) when that corpus is absent, so a
#                               clone without it configures and passes.
bb_fuzz_target(capture ${_fuzz_dir}/fuzz_capture.c LIBS bb_capture)
set(_cap_shared ${PROJECT_SOURCE_DIR}/../shared/corpus/protocols)
add_test(NAME fuzz_replay_capture_shared
         COMMAND replay_capture --need ${_cap_shared} ${_cap_shared}/dns__*
                 ${_cap_shared}/oncrpc__* ${_cap_shared}/http__*)
set_tests_properties(fuzz_replay_capture_shared PROPERTIES LABELS fuzz TIMEOUT 600
                     SKIP_RETURN_CODE 77)

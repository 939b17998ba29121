# decoders.cmake - fuzz target for every decoder (fuzz_decoders.c); seeds in corpus/decoders
bb_fuzz_target(decoders ${_fuzz_dir}/fuzz_decoders.c LIBS bb_decoders bb_trace)

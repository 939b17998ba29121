# bbdiff.cmake - command-line tests of bbdiff
bb_cli_test(bbdiff bbdiff.sh)
bb_cli_test(bbdiff_noise bbdiff_noise.sh)

# bbnest.cmake - command-line tests of bbnest
bb_cli_test(bbnest_cli bbnest_cli.sh)
bb_cli_test(bbnest_golden bbnest_golden.sh)
bb_cli_test(bbnest_truth bbnest_truth.sh)
bb_cli_test(bbnest_bound bbnest_bound.sh)
bb_cli_test(bbnest_instances bbnest_instances.sh)
bb_cli_test(bbnest_instances_mem bbnest_instances_mem.sh)
bb_cli_test(bbnest_otlp bbnest_otlp.sh)

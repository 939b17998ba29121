# maketrace.cmake - command-line tests of maketrace
bb_cli_test(maketrace_determinism maketrace_determinism.sh)
bb_cli_test(maketrace_errors maketrace_errors.sh)
bb_cli_test(maketrace_cli maketrace_cli.sh)
bb_cli_test(maketrace_load maketrace_load.sh)

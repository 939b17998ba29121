# trace.cmake - command-line tests of the trace format as every reader sees it
bb_cli_test(trace_errors trace_errors.sh)

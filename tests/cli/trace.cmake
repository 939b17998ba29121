# trace.cmake - command-line tests of the trace format as every reader sees it
bb_cli_test(trace_errors trace_errors.sh)
# .gz and .zst traces round-trip; pcaps and compressed stdin are named.
bb_cli_test(trace_compress trace_compress.sh)
# One meaning per short flag across the commands, and bb(7) lists them all.
bb_cli_test(flags_table flags_table.sh)

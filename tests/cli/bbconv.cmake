# bbconv.cmake - command-line and golden tests of bbconv
bb_cli_test(bbconv_usage bbconv_usage.sh)
bb_cli_test(bbconv_dot bbconv_dot.sh)
bb_cli_test(bbconv_golden bbconv_golden.sh)
bb_cli_test(bbconv_bursts bbconv_bursts.sh)

# bbskew.cmake - command-line tests of bbskew
bb_cli_test(bbskew_cli bbskew_cli.sh)

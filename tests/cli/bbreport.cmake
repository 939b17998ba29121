# bbreport.cmake - command-line and browser tests of bbreport
bb_cli_test(bbreport bbreport.sh)

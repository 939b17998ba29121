# dec_http2.cmake - the HTTP/2 and gRPC decoder against tshark's counts, and live
bb_cli_test(dec_http2_counts dec_http2_counts.sh)
bb_cli_test(dec_http2_live dec_http2_live.sh)
set_tests_properties(cli_dec_http2_live PROPERTIES TIMEOUT 120 RUN_SERIAL ON)

# dec_http2.cmake - the HTTP/2 and gRPC decoder against tshark's counts, and live
bb_cli_test(dec_http2_counts dec_http2_counts.sh)

# bbcap.cmake - command-line tests of bbcap
bb_cli_test(bbcap_usage bbcap_usage.sh)
bb_cli_test(bbcap_golden_counts bbcap_golden_counts.sh)
bb_cli_test(bbcap_golden bbcap_golden.sh)
# The own TCP reassembly and libnids give the same records on the corpus.
bb_cli_test(bbcap_engines bbcap_engines.sh)
# Classic pcap read in place (mmap) = the same bytes read by libpcap.
bb_cli_test(bbcap_reader bbcap_reader.sh)
set_tests_properties(cli_bbcap_reader PROPERTIES TIMEOUT 600)
bb_cli_test(bbcap_robustness bbcap_robustness.sh)
set_tests_properties(cli_bbcap_robustness PROPERTIES TIMEOUT 1500)
# Needs root, ip(8), curl and python3; skips (77) otherwise.
bb_cli_test(bbcap_live bbcap_live.sh)
set_tests_properties(cli_bbcap_live PROPERTIES TIMEOUT 120 RUN_SERIAL ON)
# Real dnsmasq/dig and rpcbind/rpcinfo on a namespace bridge; needs root and
# those packages (dnsmasq-base, dnsutils, rpcbind, tcpdump); skips otherwise.
bb_cli_test(bbcap_rig bbcap_rig.sh)
set_tests_properties(cli_bbcap_rig PROPERTIES TIMEOUT 120 RUN_SERIAL ON)
# Kernel drops provoked live (SIGSTOP with a 1 MB buffer): counted, gap skipped.
bb_cli_test(bbcap_drops bbcap_drops.sh)
set_tests_properties(cli_bbcap_drops PROPERTIES TIMEOUT 120 RUN_SERIAL ON)
# nginx answering curl and wrk, captured live: pairs = what the clients did.
bb_cli_test(bbcap_nginx bbcap_nginx.sh)
set_tests_properties(cli_bbcap_nginx PROPERTIES TIMEOUT 120 RUN_SERIAL ON)
# dnsmasq answers fragmented by the server's kernel (IPv6 and IPv4, MTU 1280),
# captured by tcpdump: every answer reassembled and paired (root, dnsmasq, dig).
bb_cli_test(bbcap_frag bbcap_frag.sh)
set_tests_properties(cli_bbcap_frag PROPERTIES TIMEOUT 120 RUN_SERIAL ON)
# Records written at the watermark of open messages = records held the whole
# window (--fixed-hold), on the fixtures and the corpora (late ones aside).
bb_cli_test(bbcap_watermark bbcap_watermark.sh)
set_tests_properties(cli_bbcap_watermark PROPERTIES TIMEOUT 900)
# Responses slower than the reorder window: late (counted), the rest in order.
bb_cli_test(bbcap_late bbcap_late.sh)
# A live capture ends on time with no traffic (--duration, -c) on a fresh
# namespace's loopback; needs root and ip(8).
bb_cli_test(bbcap_quiet bbcap_quiet.sh)
set_tests_properties(cli_bbcap_quiet PROPERTIES TIMEOUT 90)

# robust.cmake - bad-input and fault tests (issue 8); see docs/reliability.md
bb_cli_test(robust_bbcap_files robust_bbcap_files.sh)
set_tests_properties(cli_robust_bbcap_files PROPERTIES TIMEOUT 300)
bb_cli_test(robust_readers robust_readers.sh)
set_tests_properties(cli_robust_readers PROPERTIES TIMEOUT 600)
# 1,000,000 distinct nodes through bbnest, bbconv and bbskew (300 s each at most).
bb_cli_test(robust_million robust_million.sh)
set_tests_properties(cli_robust_million PROPERTIES TIMEOUT 1000)
bb_cli_test(robust_maketrace robust_maketrace.sh)
bb_cli_test(robust_noshell robust_noshell.sh)
# SIGTERM, SIGKILL, interface removal and -Z nobody on a live capture in
# network namespaces; needs root, ip(8) and python3; skips (77) otherwise.
bb_cli_test(robust_bbcap_live robust_bbcap_live.sh)
set_tests_properties(cli_robust_bbcap_live PROPERTIES TIMEOUT 180 RUN_SERIAL ON)
# Every writer when the disk fills part way (a file size limit; as root also
# a 64 KB tmpfs): a clear error, exit 1,
# whole lines kept in traces, no torn dot/JSON/text.
bb_cli_test(robust_fulldisk robust_fulldisk.sh)
set_tests_properties(cli_robust_fulldisk PROPERTIES TIMEOUT 600)
bb_cli_test(progress_tty progress_tty.sh)

# dec_ms.cmake - the ldap, dcerpc and smb2 decoders on the corpus and live
# Counts on ../shared/corpus agree with tshark's (skips without the corpus).
bb_cli_test(dec_ms_counts dec_ms_counts.sh)
# slapd answering ldapadd/ldapsearch/ldapmodify/... live on a namespace bridge;
# needs root, slapd and ldap-utils; skips otherwise.
bb_cli_test(dec_ms_ldap_live dec_ms_ldap_live.sh)
set_tests_properties(cli_dec_ms_ldap_live PROPERTIES TIMEOUT 120 RUN_SERIAL ON)
# smbd answering smbclient and samba-dcerpcd answering rpcclient over
# ncacn_ip_tcp, live on a namespace bridge; needs root and samba, smbclient;
# skips otherwise.
bb_cli_test(dec_ms_smb_live dec_ms_smb_live.sh)
set_tests_properties(cli_dec_ms_smb_live PROPERTIES TIMEOUT 120 RUN_SERIAL ON)

# dec_ms.cmake - the ldap, dcerpc and smb2 decoders on the corpus and live
# Counts on ../shared/corpus agree with tshark's (skips without the corpus).
bb_cli_test(dec_ms_counts dec_ms_counts.sh)

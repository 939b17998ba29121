# dec_sql.cmake - the pgsql, mysql and kafka decoders on captures and live servers
bb_cli_test(dec_sql_counts dec_sql_counts.sh)

# dec_sql.cmake - the pgsql, mysql and kafka decoders on captures and live servers
bb_cli_test(dec_sql_counts dec_sql_counts.sh)
# PostgreSQL with psql and pgbench (simple, extended, prepared), captured live.
bb_cli_test(dec_sql_pgsql_live dec_sql_pgsql_live.sh)
set_tests_properties(cli_dec_sql_pgsql_live PROPERTIES TIMEOUT 180 RUN_SERIAL ON)
# MariaDB with the mariadb client and DBD::MariaDB prepared statements, captured live.
bb_cli_test(dec_sql_mysql_live dec_sql_mysql_live.sh)
set_tests_properties(cli_dec_sql_mysql_live PROPERTIES TIMEOUT 180 RUN_SERIAL ON)

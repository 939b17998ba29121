#!/bin/sh
# install-deps.sh - install every Debian package bb needs to build, test and demo.
# Idempotent: does nothing (and needs no network) when all are present.
# The servers and clients (dnsmasq, rpcbind, nginx, redis, memcached, PostgreSQL,
# MariaDB, slapd, samba and their clients, h2load, python3-grpcio and -thrift,
# nghttpx for the h2c upgrade, DBD::MariaDB for prepared statements;
# libnghttp2-dev for the HPACK benchmark only)
# are for the tests that capture real traffic in network namespaces; tshark is
# their oracle. libcurl sends bbnest --otlp-endpoint; protoc and python3-protobuf
# are the OTLP test's independent parser; chromium (headless) loads bbreport's page;
# groff-base renders the man pages for their check. apt's policy here keeps the servers
# from starting on install.
set -eu

PKGS="build-essential cmake pkg-config clang libclang-rt-14-dev
libpcap-dev libnids-dev libfftw3-dev libgraphviz-dev graphviz libjansson-dev
zlib1g-dev libzstd-dev zstd groff-base
tcpdump
iproute2 ethtool curl dnsmasq-base dnsutils rpcbind nginx-light wrk tshark bc
redis-server redis-tools memcached libmemcached-tools postgresql postgresql-contrib
mariadb-server mariadb-client slapd ldap-utils samba smbclient nghttp2-client
python3-grpcio python3-thrift
nghttp2-proxy libdbd-mariadb-perl libnghttp2-dev
libcurl4-openssl-dev protobuf-compiler python3-protobuf chromium python3-websocket"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-deps: error: missing packages:$missing (run as root or install them)" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
APT="$SUDO apt-get -o DPkg::Lock::Timeout=600 -q"
# shellcheck disable=SC2086
if ! $APT install -y --no-install-recommends $missing >/dev/null 2>&1; then
	$APT update >/dev/null
	$APT install -y --no-install-recommends $missing
fi

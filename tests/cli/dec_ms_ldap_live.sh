#!/bin/sh
# dec_ms_ldap_live.sh - slapd (OpenLDAP, an mdb database in the test's scratch
# directory) answering ldapadd, ldapsearch, ldapmodify, ldapcompare,
# ldapdelete and ldapwhoami on a namespace bridge, bbcap live on the bridge:
# every operation the clients made is a CALL/RET pair with its req=, the
# unbinds are calls without a reply, and the search's two entries make no
# record (its RET is the searchResDone). Needs root, ip(8), slapd and
# ldap-utils; skips (77) otherwise.
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)" >&2; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
for t in ip slapd ldapadd ldapsearch ldapmodify ldapdelete ldapwhoami ldapcompare; do
	command -v $t >/dev/null 2>&1 || { echo "skipped: $t not installed" >&2; exit 77; }
done
[ -f /etc/ldap/schema/core.schema ] || { echo "skipped: no OpenLDAP schema files" >&2; exit 77; }
mkdir -p "$BB_TMP"
T=$(cd "$BB_TMP" && pwd)
. "$BB_SRC/tests/cli/netns.sh"
rig_up ld 235
srv=$net.2
# ordinary frames (no offload super-frames) in the namespaces
for ns in "$ns_c" "$ns_s"; do
	ip netns exec "$ns" ethtool -K eth0 tx off tso off gso off >/dev/null 2>&1
done
rm -rf "$T/db"
mkdir -p "$T/db"
cat >"$T/slapd.conf" <<EOF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile $T/slapd.pid
argsfile $T/slapd.args
database mdb
maxsize 10485760
suffix "dc=bb,dc=test"
rootdn "cn=admin,dc=bb,dc=test"
rootpw secret
directory $T/db
EOF
ip netns exec "$ns_s" slapd -d 0 -h "ldap://$srv/" -f "$T/slapd.conf" >"$T/slapd.log" 2>&1 &
pids="$pids $!"
i=0
until ip netns exec "$ns_c" ldapsearch -x -H "ldap://$srv/" -s base -b "" namingContexts >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: slapd did not start"; cat "$T/slapd.log"; exit 1; }; sleep 0.1
done

"$BB_BIN/bbcap" -i "$br" -w "$T/ldap.tr" tcp port 389 2>"$T/bbcap.err" &
cap=$!
pids="$pids $cap"
i=0
until grep -qs '^#bbtrace' "$T/ldap.tr".partial.* 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: bbcap did not start"; cat "$T/bbcap.err"; exit 1; }; sleep 0.1
done
sleep 0.5
cat >"$T/add.ldif" <<EOF
dn: dc=bb,dc=test
objectClass: dcObject
objectClass: organization
o: bb
dc: bb

dn: ou=people,dc=bb,dc=test
objectClass: organizationalUnit
ou: people

dn: cn=alice,ou=people,dc=bb,dc=test
objectClass: inetOrgPerson
cn: alice
sn: A

dn: cn=bob,ou=people,dc=bb,dc=test
objectClass: inetOrgPerson
cn: bob
sn: B
EOF
cat >"$T/mod.ldif" <<EOF
dn: cn=alice,ou=people,dc=bb,dc=test
changetype: modify
replace: sn
sn: Alice
EOF
c() { ip netns exec "$ns_c" "$@" -x -H "ldap://$srv/" -D "cn=admin,dc=bb,dc=test" -w secret >>"$T/clients.log" 2>&1 || { echo "FAIL: $1"; cat "$T/clients.log"; exit 1; }; }
c ldapadd -f "$T/add.ldif"
c ldapsearch -b "ou=people,dc=bb,dc=test" "(objectClass=inetOrgPerson)" cn
c ldapmodify -f "$T/mod.ldif"
ip netns exec "$ns_c" ldapcompare -x -H "ldap://$srv/" -D "cn=admin,dc=bb,dc=test" -w secret \
	"cn=alice,ou=people,dc=bb,dc=test" "sn:Alice" >>"$T/clients.log" 2>&1 # exit 6: compareTrue
c ldapdelete "cn=bob,ou=people,dc=bb,dc=test"
c ldapwhoami
sleep 0.5
kill -INT $cap
wait $cap
rc=$?
fail=0
[ $rc -eq 0 ] || { echo "FAIL: bbcap exit $rc"; fail=1; }
# What the clients did: 6 connections, each bind ... unbind.
#   req (as written in the trace)                           calls returns
cat >"$T/want" <<'EOF'
bindRequest	6	6
addRequest	4	4
searchRequest%20ou=people,dc=bb,dc=test	1	0
searchRequest	0	1
modifyRequest	1	1
compareRequest	1	1
delRequest	1	1
extendedReq%20WhoAmI	1	0
extendedReq	0	1
unbindRequest	6	0
EOF
while IFS='	' read -r req wc wr; do
	gc=$(grep -c "	CALL	$net.1	$srv	c[0-9]*\.[0-9]*	proto=ldap	req=$req	" "$T/ldap.tr")
	gr=$(grep -c "	RET	$srv	$net.1	c[0-9]*\.[0-9]*	proto=ldap	req=$req	" "$T/ldap.tr")
	if [ "$gc" != "$wc" ] || [ "$gr" != "$wr" ]; then
		echo "FAIL: req=$req: $gc calls, $gr returns; the clients made $wc/$wr"
		fail=1
	else
		echo "ok   req=$req: $gc/$gr"
	fi
done <"$T/want"
all=$(grep -c "	proto=ldap	" "$T/ldap.tr")
[ "$all" = 36 ] || { echo "FAIL: $all ldap records, want 21 + 15"; fail=1; }
grep -v '^#' "$T/ldap.tr" | awk -F'\t' '$2 == "CALL" { c[$5] = 1 } $2 == "RET" && !($5 in c) { n++ } END { exit n > 0 }' ||
	{ echo "FAIL: a return without its call"; fail=1; }
[ $fail = 0 ] || cat "$T/bbcap.err"
exit $fail

#!/bin/sh
# trace_compress.sh - compressed traces and files that are not traces.
#   .gz and .zst traces written by maketrace -o, bbskew -o and bbcap -w
#   decompress (gzip, zstd) to the plain trace, byte for byte, and read back
#   through bbskew to the same bytes; bbnest and bbconv give the same report
#   on the plain and the compressed trace; a truncated compressed trace is
#   "read error: Bad message" (exit 1); bbcap -r reads gzip and zstd pcaps.
#   A pcap, a pcapng and a gzipped pcap given to bbnest, bbconv and bbskew:
#   the message names the file as a packet capture and says to run bbcap;
#   a compressed standard input says to decompress it.
set -u
: "${BB_BIN:?}" "${BB_SRC:?}" "${BB_TMP:?}"
mkdir -p "$BB_TMP"
cd "$BB_TMP" || exit 1
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=1}"
export ASAN_OPTIONS
fail=0
no() { echo "FAIL: $*"; fail=1; }
have_zstd=1
command -v zstd >/dev/null 2>&1 || { have_zstd=0; echo "note: no zstd(1): zstd files checked by bb only"; }
zcat_of() { # FILE: its decompressed bytes through the reference tools
	case $1 in
	*.gz) gzip -dc "$1" ;;
	*.zst) zstd -qdc "$1" ;;
	esac
}

cfg="$BB_SRC/maketrace/configs/multitier.json"
"$BB_BIN/maketrace" -N 20000 -o plain.tr "$cfg" || no "maketrace plain"
"$BB_BIN/bbcap" -q -r "$BB_SRC/tests/fixtures/bbcap/dns-http.pcap" -w cap.tr || no "bbcap plain"
"$BB_BIN/bbskew" cap.tr -o capskew.tr || no "bbskew cap.tr" # (it puts #capture first)
for z in gz zst; do
	"$BB_BIN/maketrace" -N 20000 -o "mt.tr.$z" "$cfg" || no "maketrace -o mt.tr.$z"
	"$BB_BIN/bbskew" plain.tr -o "sk.tr.$z" || no "bbskew -o sk.tr.$z"
	"$BB_BIN/bbcap" -q -r "$BB_SRC/tests/fixtures/bbcap/dns-http.pcap" -w "cap.tr.$z" ||
		no "bbcap -w cap.tr.$z"
	for f in "mt.tr.$z" "sk.tr.$z"; do
		cmp -s "$f" plain.tr && no "$f is not compressed"
		if [ $z = gz ] || [ $have_zstd = 1 ]; then
			zcat_of "$f" | cmp -s - plain.tr || no "$f does not decompress to plain.tr"
		fi
		"$BB_BIN/bbskew" "$f" -o "back.$z.tr" || no "bbskew $f"
		cmp -s "back.$z.tr" plain.tr || no "$f read back is not plain.tr byte for byte"
	done
	if [ $z = gz ] || [ $have_zstd = 1 ]; then
		zcat_of "cap.tr.$z" | cmp -s - cap.tr || no "cap.tr.$z does not decompress to cap.tr"
	fi
	"$BB_BIN/bbskew" "cap.tr.$z" -o "capback.$z.tr" && cmp -s "capback.$z.tr" capskew.tr ||
		no "cap.tr.$z read back by bbskew differs from cap.tr read back"
	# the same reports from the compressed trace
	"$BB_BIN/bbnest" --text plain.tr >nest.plain 2>&1
	"$BB_BIN/bbnest" --text "mt.tr.$z" >"nest.$z" 2>&1 || no "bbnest mt.tr.$z: $(cat "nest.$z")"
	cmp -s nest.plain "nest.$z" || no "bbnest on mt.tr.$z differs from plain.tr"
	"$BB_BIN/bbconv" --text plain.tr >conv.plain 2>&1
	"$BB_BIN/bbconv" --text "mt.tr.$z" >"conv.$z" 2>&1 || no "bbconv mt.tr.$z: $(cat "conv.$z")"
	cmp -s conv.plain "conv.$z" || no "bbconv on mt.tr.$z differs from plain.tr"
	# cut in the middle: an error, not a silent short trace
	sz=$(wc -c <"mt.tr.$z")
	head -c $((sz / 2)) "mt.tr.$z" >"cut.tr.$z"
	"$BB_BIN/bbskew" "cut.tr.$z" -o /dev/null 2>cut.err
	rc=$?
	[ $rc -eq 1 ] && grep -q "^bbskew: error: cut.tr.$z: read error: Bad message$" cut.err ||
		no "truncated cut.tr.$z: exit $rc, $(cat cut.err)"
	echo "$z: plain.tr $(wc -c <plain.tr) bytes, mt.tr.$z $sz bytes"
done

# Packet captures where a trace is expected
fx="$BB_SRC/tests/fixtures/bbcap/dns-http.pcap"
cp "$fx" x.pcap
gzip -c x.pcap >x.pcap.gz
# a minimal pcapng: a Section Header Block and nothing else
printf '\n\r\r\n\034\000\000\000\115\074\053\032\001\000\000\000\377\377\377\377\377\377\377\377\034\000\000\000' >x.pcapng
for prog in bbnest bbconv bbskew; do
	for f in x.pcap x.pcapng x.pcap.gz; do
		kind=pcap
		[ $f = x.pcapng ] && kind=pcapng
		"$BB_BIN/$prog" "$f" >out.txt 2>err.txt
		rc=$?
		[ $rc -ne 0 ] || no "$prog $f: exit 0"
		grep -q "^$prog: error: $f is a packet capture ($kind), not a trace: run bbcap -r $f -w TRACE first" err.txt ||
			no "$prog $f: $(cat err.txt)"
	done
	"$BB_BIN/$prog" - <x.pcap >out.txt 2>err.txt
	grep -q "^$prog: error: <stdin> is a packet capture (pcap), not a trace: put \"bbcap -r - -w -\" before" err.txt ||
		no "$prog <x.pcap: $(cat err.txt)"
	"$BB_BIN/$prog" - <mt.tr.gz >out.txt 2>err.txt
	grep -q "^$prog: error: <stdin> is gzip-compressed: decompress it in the pipe" err.txt ||
		no "$prog <mt.tr.gz: $(cat err.txt)"
done
echo "bbnest on a pcap: $(cat err.txt | head -1)"

# bbcap reads compressed captures
"$BB_BIN/bbcap" -q -r x.pcap -w p.tr || no "bbcap -r x.pcap"
"$BB_BIN/bbcap" -q -r x.pcap.gz -w pgz.tr || no "bbcap -r x.pcap.gz"
[ "$(grep -v '^#source' p.tr)" = "$(grep -v '^#source' pgz.tr)" ] || no "bbcap -r x.pcap.gz: other records"
if [ $have_zstd = 1 ]; then
	zstd -q -c x.pcap >x.pcap.zst
	"$BB_BIN/bbcap" -q -r x.pcap.zst -w pzst.tr || no "bbcap -r x.pcap.zst"
	[ "$(grep -v '^#source' p.tr)" = "$(grep -v '^#source' pzst.tr)" ] || no "bbcap -r x.pcap.zst: other records"
fi
exit $fail

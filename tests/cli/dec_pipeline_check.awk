# dec_pipeline_check.awk - per connection of the decoders that pair replies by
# order (http, redis, memcache, pgsql, mysql), in a trace: every RET has the
# id (c<conn>.<n>) and req= of a CALL of its connection, in the order of the
# calls. Prints, per connection:
#   PROTO CONN CALLS RETS MAX_WAITING ERRORS FIRST_ERROR
# (MAX_WAITING: the most calls waiting at once, in trace order).
BEGIN { FS = "\t" }
/^#/ { next }
{
	proto = ""; req = "-"
	for (i = 6; i <= NF; i++) {
		if ($i ~ /^proto=/) proto = substr($i, 7)
		else if ($i ~ /^req=/) req = substr($i, 5)
	}
	if (proto !~ /^(http|redis|memcache|pgsql|mysql)$/) next
	id = $5
	dot = match(id, /\.[^.]*$/)
	if (!dot) next
	conn = substr(id, 1, dot - 1); ord = substr(id, dot + 1)
	if (!(conn in pr)) { pr[conn] = proto; order[++nconn] = conn }
	if ($2 == "CALL") {
		calls[conn]++
		creq[id] = req
		w = calls[conn] - rets[conn]
		if (w > maxw[conn]) maxw[conn] = w
		next
	}
	if ($2 != "RET") next
	rets[conn]++
	why = ""
	if (ord == "?") why = "unmatched"
	else if (!(id in creq)) why = "no such call"
	else if (creq[id] != req) why = "req " req " of call " creq[id]
	else if (ord + 0 <= last[conn]) why = "after " last[conn]
	if (ord != "?") last[conn] = ord + 0
	if (why != "") {
		if (!err[conn]) first[conn] = "RET " id " (reply " rets[conn] "): " why
		err[conn]++
	}
}
END {
	for (i = 1; i <= nconn; i++) {
		c = order[i]
		printf "%s %s %d %d %d %d %s\n", pr[c], c, calls[c], rets[c], maxw[c], err[c], first[c]
	}
}

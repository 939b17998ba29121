#!/usr/bin/python3
# edges.py - per call edge of a rig run, how often the true parent of a call
# (by request id: the id= of HTTP requests, or the services' logged call times;
# or the path= of every record, as in the second app's NAME.path.tr) is the
# most recent of its candidate parents (calls into the caller begun before it
# and still open at its return), and the mean number of candidates.
# A diagnostic for docs/accuracy.md: usage: edges.py DIR NAME, DIR holding
# NAME.tr and the services' logs (as kept by rig_test.sh with RIG_KEEP=DIR),
# or edges.py DIR NAME.path for a trace with path= on every record.
import sys, collections, bisect
def T(s):
    a,b=s.split("."); return int(a)*10**9+int(b)
d,l=sys.argv[1],sys.argv[2]
recs=[]
for line in open(f"{d}/{l}.tr"):
    if line.startswith("#"): continue
    f=line.rstrip("\n").split("\t")
    rid=None
    for a in f[5:]:
        if a.startswith("req=") and "id=" in a: rid=a.split("id=")[1]
        if a.startswith("path="): rid=a[5:]
    recs.append((T(f[0]),f[1],f[2],f[3],f[4],rid))
openq=collections.defaultdict(list); calls=[]
for t,op,a,b,cid,rid in recs:
    if op=="CALL":
        c={"t":t,"src":a,"dst":b,"end":None,"rid":rid}
        openq[(a,b,cid)].append(c); calls.append(c)
    else:
        q=openq[(b,a,cid)]
        if q: q.pop(0)["end"]=t
calls=[c for c in calls if c["end"] is not None]
into=collections.defaultdict(list)
for c in calls: into[c["dst"]].append(c)
# backend calls: rid from logs by nearest t0
logt=collections.defaultdict(list)
for a in ("app1","app2","auth"):
    if not __import__("os").path.exists(f"{d}/{a}.log"): continue
    for line in open(f"{d}/{a}.log"):
        f=line.rstrip("\n").split("\t")
        if f[5] in ("-","ERR"): continue
        for c in f[5].split(" "):
            n,c0,c1=c.split("@"); logt[(a,n)].append((int(c0),f[0]))
for k in logt: logt[k].sort()
for c in calls:
    if c["rid"] is None:
        L=logt.get((c["src"],c["dst"]),[])
        i=bisect.bisect_left(L,(c["t"]-200000,""))
        near=[x for x in L[max(0,i-2):i+4] if abs(x[0]-c["t"])<200000]
        if near: c["rid"]=min(near,key=lambda x:abs(x[0]-c["t"]))[1]
st=collections.defaultdict(collections.Counter)
for c in calls:
    cands=[p for p in into[c["src"]] if p["t"]<c["t"] and p["end"]>c["end"]]
    if not cands or c["rid"] is None: continue
    tp=[p for p in cands if p["rid"]==c["rid"]]
    e=c["src"]+"->"+c["dst"]
    if not tp: st[e]["true parent not a candidate"]+=1; continue
    tp=tp[0]
    ds=sorted(c["t"]-p["t"] for p in cands)
    r=ds.index(c["t"]-tp["t"])
    st[e]["most recent" if r==0 else "not most recent"]+=1
    st[e]["cands"]+=len(cands)
for e in sorted(st):
    s=st[e]; n=s["most recent"]+s["not most recent"]+s["true parent not a candidate"]
    print("%-16s n=%4d mean candidates %.1f  true parent most recent %.1f%%  not a candidate %d"%(e,n,s["cands"]/max(n,1),100*s["most recent"]/max(n,1),s["true parent not a candidate"]))
# the start lag of each node: from a call into it to its first child call
# (the same request), the time a handler took to begin its calls
lag=collections.defaultdict(list)
for c in calls:
    if c["rid"] is None: continue
    tp=[p for p in into[c["src"]] if p["rid"]==c["rid"] and p["t"]<c["t"] and p["end"]>c["end"]]
    if tp: lag[(c["src"],id(tp[0]))].append(c["t"]-tp[0]["t"])
bynode=collections.defaultdict(list)
for (node,_),v in lag.items(): bynode[node].append(min(v)/1e6)
for node in sorted(bynode):
    v=sorted(bynode[node])
    print("%-16s start lag (call into it -> its first call) ms: median %.2f, 90%% %.2f, 99%% %.2f, max %.1f"%(node,v[len(v)//2],v[int(0.9*(len(v)-1))],v[int(0.99*(len(v)-1))],v[-1]))

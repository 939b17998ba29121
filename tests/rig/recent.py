#!/usr/bin/python3
# recent.py - a baseline for the rig: nest every call under the most recent
# call into its caller that began before it and is still open at its return,
# and score the patterns against the services' logs (instance false
# positives, as score.py nest). Usage: recent.py DIR NAME... (RIG_KEEP dir).
import sys, collections
sys.path.insert(0, __import__("os").path.dirname(__file__))
import score
def T(s):
    a,b=s.split("."); return int(a)*10**9+int(b)
def run(tr, clog, slogs):
    recs=[]
    for l in open(tr):
        if l.startswith("#"): continue
        f=l.rstrip("\n").split("\t")
        recs.append((T(f[0]),f[1],f[2],f[3],f[4]))
    openq=collections.defaultdict(list); calls=[]
    for t,op,a,b,cid in recs:
        if op=="CALL":
            c={"t":t,"src":a,"dst":b,"end":None,"kids":[]}
            openq[(a,b,cid)].append(c); calls.append(c)
        else:
            q=openq[(b,a,cid)]
            if q: q.pop(0)["end"]=t
    calls=[c for c in calls if c["end"] is not None]
    into=collections.defaultdict(list)
    for c in calls: into[c["dst"]].append(c)
    roots=[]
    for c in calls:
        cands=[p for p in into[c["src"]] if p["t"]<c["t"] and p["end"]>c["end"]]
        if not cands: roots.append(c); continue
        p=max(cands,key=lambda p:p["t"])
        p["kids"].append(c)
    def key(c):
        ks=[key(k) for k in sorted(c["kids"],key=lambda k:k["t"])]
        return c["dst"]+("("+",".join(ks)+")" if ks else "")
    inf=collections.Counter(c["src"]+"("+key(c)+")" for c in roots)
    tru,_,_=score.true_trees(clog,slogs)
    ks=set(inf)|set(tru)
    fp=sum(max(0,inf[k]-tru[k]) for k in ks)
    return fp, sum(tru.values())
d=sys.argv[1]
for l in sys.argv[2:]:
    fp,n=run(f"{d}/{l}.tr",f"{d}/{l}.client.log",[f"{d}/app1.log",f"{d}/app2.log",f"{d}/auth.log"])
    print(l, "most-recent-candidate rule: instance FP", fp, "of", n, "(%.2f%%)"%(100*fp/n))

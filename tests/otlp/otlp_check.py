#!/usr/bin/python3
"""otlp_check.py - an independent consumer of bbnest --otlp: the OpenTelemetry .proto files
(tests/otlp/proto/) compiled by protoc for python3-protobuf, and bb's OTLP/JSON parsed by
google.protobuf.json_format into ExportTraceServiceRequest messages.

usage: otlp_check.py PROTO_DIR GEN_DIR INSTANCES.jsonl OTLP.json...
Each OTLP.json is one request (a file, or a body a collector received). Checks every
span has a 16-byte trace id, an 8-byte span id, a resource with service.name equal to the
callee of its call; span count = calls in INSTANCES.jsonl; every parent span id resolves
to a span of the same trace; every span with a parent says bb.parent.inferred = true.
OTLP/JSON differs from proto3's JSON mapping in one point: ids are hex, not base64
(opentelemetry-proto docs/specification.md, "JSON Protobuf Encoding"); they are
converted before parsing, as an OTLP receiver does."""
import base64
import glob
import json
import os
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def compile_protos(proto_dir, gen_dir):
    os.makedirs(gen_dir, exist_ok=True)
    files = sorted(glob.glob(os.path.join(proto_dir, "opentelemetry/proto/**/*.proto"),
                             recursive=True))
    subprocess.run(["protoc", "-I", proto_dir, "--python_out=" + gen_dir] + files, check=True)
    sys.path.insert(0, gen_dir)


def hex_to_b64(doc):
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for sp in ss.get("spans", []):
                for k in ("traceId", "spanId", "parentSpanId"):
                    if k in sp:
                        raw = bytes.fromhex(sp[k])
                        sp[k] = base64.b64encode(raw).decode()


def main():
    proto_dir, gen_dir, inst_path = sys.argv[1:4]
    compile_protos(proto_dir, gen_dir)
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    calls = 0
    want_callee = {}
    for line in open(inst_path, encoding="utf-8"):
        i = json.loads(line)
        calls += len(i["calls"])
        want_callee[i["trace_id"]] = [c["callee"] for c in i["calls"]]
    spans = {}
    nspans = inferred = 0
    for path in sys.argv[4:]:
        doc = json.load(open(path, encoding="utf-8"))
        hex_to_b64(doc)
        req = trace_service_pb2.ExportTraceServiceRequest()
        json_format.Parse(json.dumps(doc), req)  # raises on any field the schema lacks
        for rs in req.resource_spans:
            names = [a.value.string_value for a in rs.resource.attributes
                     if a.key == "service.name"]
            if len(names) != 1 or not names[0]:
                fail("%s: a resource without service.name" % path)
            for ss in rs.scope_spans:
                for sp in ss.spans:
                    nspans += 1
                    if len(sp.trace_id) != 16 or len(sp.span_id) != 8:
                        fail("%s: ids of %d and %d bytes" % (path, len(sp.trace_id),
                                                           len(sp.span_id)))
                    if sp.end_time_unix_nano < sp.start_time_unix_nano:
                        fail("%s: a span ends before it starts" % path)
                    if names[0] not in want_callee.get(sp.trace_id.hex(), []):
                        fail("%s: service %s is no callee of trace %s" %
                             (path, names[0], sp.trace_id.hex()))
                    key = (sp.trace_id, sp.span_id)
                    if key in spans:
                        fail("%s: span id %s twice in a trace" % (path, sp.span_id.hex()))
                    attrs = {a.key: a.value for a in sp.attributes}
                    spans[key] = (sp.parent_span_id, attrs)
    for (tid, sid), (parent, attrs) in spans.items():
        if parent:
            if (tid, parent) not in spans:
                fail("span %s: parent %s not found in trace %s" % (sid.hex(), parent.hex(),
                                                                  tid.hex()))
            if "bb.parent.inferred" not in attrs or not attrs["bb.parent.inferred"].bool_value:
                fail("span %s: a parent without bb.parent.inferred" % sid.hex())
            inferred += 1
    if nspans != calls:
        fail("%d spans, %d calls in the instances" % (nspans, calls))
    roots = nspans - inferred
    if roots != len(want_callee):
        fail("%d root spans, %d instances" % (roots, len(want_callee)))
    print("otlp_check: %d request(s) parsed as ExportTraceServiceRequest; %d spans = calls; "
          "%d roots = instances; %d parent ids all resolve" % (len(sys.argv) - 4, nspans, roots,
                                                               inferred))


main()

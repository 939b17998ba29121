# dec_http2_grpc.py - a gRPC server or client for dec_http2_live.sh, with no
# protoc: generic handlers and identity serializers (messages are raw bytes).
#   server ADDR PORT        serves /bb.Echo/{Unary,ServerStream,ClientStream,Bidi}
#   client ADDR PORT N      N unary calls, one of each streaming kind, one call to
#                           a method the server lacks; prints "METHOD COUNT" lines
import sys
import time
from concurrent import futures

import grpc

ident = (lambda b: b)


def serve(addr, port):
    def unary(req, ctx):
        return b"echo:" + req

    def server_stream(req, ctx):
        for i in range(3):
            yield b"part%d" % i

    def client_stream(it, ctx):
        return b"".join(it)

    def bidi(it, ctx):
        for m in it:
            yield m

    h = grpc.method_handlers_generic_handler("bb.Echo", {
        "Unary": grpc.unary_unary_rpc_method_handler(unary, ident, ident),
        "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream, ident, ident),
        "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream, ident, ident),
        "Bidi": grpc.stream_stream_rpc_method_handler(bidi, ident, ident),
    })
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    srv.add_generic_rpc_handlers((h,))
    srv.add_insecure_port("%s:%s" % (addr, port))
    srv.start()
    srv.wait_for_termination()


def client(addr, port, n):
    ch = grpc.insecure_channel("%s:%s" % (addr, port))
    grpc.channel_ready_future(ch).result(timeout=20)
    done = {}
    unary = ch.unary_unary("/bb.Echo/Unary", ident, ident)
    for i in range(n):
        assert unary(b"m%d" % i, timeout=10) == b"echo:m%d" % i
    done["/bb.Echo/Unary"] = n
    parts = list(ch.unary_stream("/bb.Echo/ServerStream", ident, ident)(b"x", timeout=10))
    assert len(parts) == 3
    done["/bb.Echo/ServerStream"] = 1
    assert ch.stream_unary("/bb.Echo/ClientStream", ident, ident)(iter([b"a", b"b"]), timeout=10) == b"ab"
    done["/bb.Echo/ClientStream"] = 1
    assert list(ch.stream_stream("/bb.Echo/Bidi", ident, ident)(iter([b"1", b"2"]), timeout=10)) == [b"1", b"2"]
    done["/bb.Echo/Bidi"] = 1
    try:
        ch.unary_unary("/bb.Echo/Missing", ident, ident)(b"?", timeout=10)
        raise SystemExit("Missing answered")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.UNIMPLEMENTED, e.code()
    done["/bb.Echo/Missing"] = 1
    time.sleep(0.2)
    ch.close()
    for m, c in done.items():
        print(m, c)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        serve(sys.argv[2], sys.argv[3])
    else:
        client(sys.argv[2], sys.argv[3], int(sys.argv[4]))

#!/usr/bin/python3
# thrift_peer.py - a tiny Apache Thrift server or client on python3-thrift with a
# hand-written processor (no generated code), for the live decoder test.
#
#   thrift_peer.py server ADDR PORT binary|compact buffered|framed
#   thrift_peer.py client ADDR PORT binary|compact buffered|framed
#
# The server answers every CALL with a REPLY holding a string, except method
# "fail", answered by a TApplicationException (mtype EXCEPTION); ONEWAY calls
# get nothing. The client makes the calls listed in CALLS on one connection
# and prints "METHOD MTYPE" for each reply.
import sys

from thrift.protocol import TBinaryProtocol, TCompactProtocol
from thrift.server import TServer
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

# (method, oneway): what the client asks, in order
CALLS = [("getUser", False), ("putUser", False), ("log", True), ("fail", False),
         ("getUser", False), ("ping", False)]


def factories(proto, framing):
    pf = (TBinaryProtocol.TBinaryProtocolFactory() if proto == "binary"
          else TCompactProtocol.TCompactProtocolFactory())
    tf = (TTransport.TFramedTransportFactory() if framing == "framed"
          else TTransport.TBufferedTransportFactory())
    return pf, tf


class Processor:
    def process(self, iprot, oprot):
        name, mtype, seqid = iprot.readMessageBegin()
        iprot.skip(TType.STRUCT)
        iprot.readMessageEnd()
        if mtype == TMessageType.ONEWAY:
            return True
        if name == "fail":
            oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
            TApplicationException(TApplicationException.INTERNAL_ERROR, "failed").write(oprot)
        else:
            oprot.writeMessageBegin(name, TMessageType.REPLY, seqid)
            oprot.writeStructBegin("result")
            oprot.writeFieldBegin("success", TType.STRING, 0)
            oprot.writeString("ok " + name)
            oprot.writeFieldEnd()
            oprot.writeFieldStop()
            oprot.writeStructEnd()
        oprot.writeMessageEnd()
        oprot.trans.flush()
        return True

    def on_message_begin(self, func):
        pass


def write_args(oprot, i):
    oprot.writeStructBegin("args")
    oprot.writeFieldBegin("id", TType.I32, 1)
    oprot.writeI32(i)
    oprot.writeFieldEnd()
    oprot.writeFieldBegin("name", TType.STRING, 2)
    oprot.writeString("user%d" % i)
    oprot.writeFieldEnd()
    oprot.writeFieldBegin("tags", TType.LIST, 3)
    oprot.writeListBegin(TType.STRING, 2)
    oprot.writeString("a")
    oprot.writeString("b")
    oprot.writeListEnd()
    oprot.writeFieldEnd()
    oprot.writeFieldStop()
    oprot.writeStructEnd()


def main():
    role, addr, port, proto, framing = sys.argv[1:6]
    pf, tf = factories(proto, framing)
    if role == "server":
        sock = TSocket.TServerSocket(host=addr, port=int(port))
        TServer.TSimpleServer(Processor(), sock, tf, pf).serve()
        return
    trans = tf.getTransport(TSocket.TSocket(addr, int(port)))
    trans.open()
    prot = pf.getProtocol(trans)
    for i, (name, oneway) in enumerate(CALLS):
        prot.writeMessageBegin(name, TMessageType.ONEWAY if oneway else TMessageType.CALL, 100 + i)
        write_args(prot, i)
        prot.writeMessageEnd()
        trans.flush()
        if oneway:
            continue
        rname, mtype, seqid = prot.readMessageBegin()
        prot.skip(TType.STRUCT)
        prot.readMessageEnd()
        print(rname, mtype, seqid)
    trans.close()


if __name__ == "__main__":
    main()

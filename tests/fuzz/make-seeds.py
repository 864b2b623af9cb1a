#!/usr/bin/env python3
"""Writes the binary seeds of frame_stream, journal_recovery and socks5_handshake (corpus/<target>/).

The frames are dockerd's: [uint32 big-endian length][protobuf LogEntry]. Run it again after
changing it; the text seeds of the other targets are written by hand.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def field_bytes(n, b):
    return varint(n << 3 | 2) + varint(len(b)) + b


def field_varint(n, v):
    return varint(n << 3) + varint(v)


def frame(line, source=b"stdout", time=1714557600000000000, partial=None):
    """partial: (id, ordinal, last) for a chunk with metadata, True for a legacy chunk."""
    body = field_bytes(1, source) + field_varint(2, time) + field_bytes(3, line)
    if partial:
        body += field_varint(4, 1)
        if partial is not True:
            pid, ordinal, last = partial
            meta = field_varint(1, 1 if last else 0) + field_bytes(2, pid) + field_varint(3, ordinal)
            body += field_bytes(5, meta)
    return struct.pack(">I", len(body)) + body


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def frame_stream():
    # The first byte picks the assembler's line bound (see frame_stream_fuzz.cc).
    write("frame_stream", "whole-lines", b"\x05" + frame(b"hello") + frame(b"err", b"stderr"))
    write("frame_stream", "partial-line", b"\x03" + frame(b"abc", partial=(b"p1", 1, False))
          + frame(b"xyz", b"stderr") + frame(b"def", partial=(b"p1", 2, True)))
    write("frame_stream", "legacy-partial", b"\x02" + frame(b"aaaa", partial=True)
          + frame(b"bbbb", partial=True) + frame(b"end"))
    write("frame_stream", "resumed-inside-a-line", b"\x00"
          + frame(b"\xc3\xa9t\xc3\xa9", partial=(b"p9", 7, False)) + frame(b"  \t"))
    write("frame_stream", "torn-tail", b"\x06" + frame(b"whole") + frame(b"torn")[:7])


def journal_recovery():
    # One byte for the limits, then files: "@name\n" and the bytes up to the next "\n@".
    def files(*pairs, limits=b"\x00"):
        out = limits
        for name, data in pairs:
            out += b"@" + name + b"\n" + data + b"\n"
        return out

    seg1 = frame(b"one") + frame(b"two", b"stderr")
    seg2 = frame(b"three", partial=(b"p", 1, False)) + frame(b"four", partial=(b"p", 2, True))
    info = (b'{"Config":{"loki-url":"http://loki:3100/loki/api/v1/push","max-size":"1k",'
            b'"max-file":"3","loki-bearer-token":"skald-secret:0123456789abcdef0123456789abcdef"},"ContainerID":"c",'
            b'"ContainerName":"/web"}')
    write("journal_recovery", "sealed-with-cursor", files(
        (b"0000000001.seg", seg1), (b"0000000002.seg", seg2),
        (b"cursor", b"00000000000000000001 00000000000000000012\n"), (b"info.json", info)))
    write("journal_recovery", "live-session", files(
        (b"0000000001.seg", seg1), (b"0000000002.seg", seg2 + frame(b"cut")[:6]),
        (b"0000000002.live", b"/run/docker/logging/abc"), (b"cursor", b"1 0\n"),
        limits=b"\x01"))
    write("journal_recovery", "interrupted-rotation", files(
        (b"0000000003.seg", seg1 + frame(b"half")[:5]), (b"0000000003.live", b"/fifo"),
        (b"0000000004.seg", frame(b"half")[:5]), (b"0000000004.live", b"/fifo"),
        (b"cursor.tmp", b"garbage"), limits=b"\x02"))
    write("journal_recovery", "secrets", files(
        (b"0000000001.seg", seg1), (b"info.json", info),
        (b"secrets", b'{"skald-secret:0123456789abcdef0123456789abcdef":"token"}'), limits=b"\x03"))
    write("journal_recovery", "corrupt-length", files(
        (b"0000000001.seg", b"\xff\xff\xff\xff" + seg1), (b"0000000002.seg", seg2),
        limits=b"\x04"))


def socks5_handshake():
    """[choice: bit 0 credentials, then name/IPv4/IPv6] then what the proxy sends."""
    ok_v4 = bytes([5, 0, 0, 1, 10, 0, 0, 1, 0x1F, 0x90])
    write("socks5_handshake", "accepted-ipv4", bytes([0, 5, 0]) + ok_v4)
    write("socks5_handshake", "accepted-name", bytes([0, 5, 0, 5, 0, 0, 3, 3]) + b"abc" + bytes([0, 80]))
    write("socks5_handshake", "accepted-ipv6", bytes([2, 5, 0, 5, 0, 0, 4]) + bytes(16) + bytes([0, 80]))
    write("socks5_handshake", "password-accepted", bytes([1, 5, 2, 1, 0]) + ok_v4)
    write("socks5_handshake", "password-refused", bytes([1, 5, 2, 1, 1]))
    write("socks5_handshake", "connect-refused", bytes([4, 5, 0, 5, 5, 0, 1]) + bytes(6))
    write("socks5_handshake", "no-method", bytes([0, 5, 0xFF]))
    write("socks5_handshake", "http-answer", b"\x00HTTP/1.1 400 Bad Request\r\n\r\n")


if __name__ == "__main__":
    frame_stream()
    journal_recovery()
    socks5_handshake()

#!/usr/bin/env python3
"""retype.py IN.gguf OUT.gguf TYPE - a shape twin with every matrix (2 or
more dimensions) stored in another ggml type (q8_0 = 8, q4_0 = 2, ...): the
tensor infos get the new type and packed offsets, the data section stays a
sparse hole.  kvplan's twin writer keeps the model's own dtype; tests that
need quantized weights (CUDA's padding of quantized rows) use this."""
import os
import struct
import sys

BLOCK = {0: (1, 4), 1: (1, 2), 2: (32, 18), 8: (32, 34), 12: (256, 144), 30: (1, 2)}


def main():
    src, dst, new_type = sys.argv[1], sys.argv[2], int(sys.argv[3])
    f = open(src, "rb").read()
    pos = 0

    def rd(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, f, pos)
        pos += struct.calcsize(fmt)
        return v

    def skip_str():
        (n,) = rd("<Q")
        nonlocal pos
        pos += n

    scalar = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def skip_val(t):
        nonlocal pos
        if t == 8:
            skip_str()
        elif t == 9:
            at, n = rd("<IQ")
            for _ in range(n):
                skip_val(at)
        else:
            pos += scalar[t]

    magic, version, n_tensors, n_kv = rd("<4sIQQ")
    alignment = 32
    for _ in range(n_kv):
        start = pos
        skip_str()
        key = f[start + 8:pos].decode()
        (t,) = rd("<I")
        vstart = pos
        skip_val(t)
        if key == "general.alignment":
            alignment = struct.unpack_from("<I", f, vstart)[0]
    head = f[:pos]
    infos, offset = [], 0
    for _ in range(n_tensors):
        nstart = pos
        skip_str()
        name = f[nstart:pos]
        (nd,) = rd("<I")
        ne = rd("<" + "Q" * nd)
        ty, _ = rd("<IQ")
        if nd >= 2 and ne[0] % BLOCK[new_type][0] == 0:
            ty = new_type
        blk, size = BLOCK[ty]
        nbytes = ne[0] // blk * size
        for d in ne[1:]:
            nbytes *= d
        infos.append(name + struct.pack("<I", nd) + struct.pack("<" + "Q" * nd, *ne) +
                     struct.pack("<IQ", ty, offset))
        offset += (nbytes + alignment - 1) // alignment * alignment
        last_end = offset - (nbytes + alignment - 1) // alignment * alignment + nbytes
    out = head + b"".join(infos)
    out += b"\0" * ((-len(out)) % alignment)
    with open(dst, "wb") as o:
        o.write(out)
        o.truncate(len(out) + last_end)


if __name__ == "__main__":
    main()

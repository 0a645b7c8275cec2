# read_safetensors.py FILE: read a safetensors file with nothing but the
# standard library and the format's published layout (an 8-byte
# little-endian header length N, N bytes of JSON, then the raw
# little-endian tensors), checking every offset; print each tensor's
# name, dtype, shape and values, in the header's order, then the
# metadata.
import json
import struct
import sys

FORMATS = {"F32": ("f", 4), "F64": ("d", 8), "I32": ("i", 4), "I64": ("q", 8), "BOOL": ("?", 1)}

data = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", data[:8])
assert 8 + n <= len(data), "header past the end"
assert (8 + n) % 8 == 0, "data not 8-byte aligned"
header = json.loads(data[8:8 + n].decode("utf-8"))
body = data[8 + n:]
spans = []
for name, info in header.items():
    if name == "__metadata__":
        continue
    fmt, size = FORMATS[info["dtype"]]
    begin, end = info["data_offsets"]
    count = 1
    for d in info["shape"]:
        count *= d
    assert 0 <= begin <= end <= len(body), name
    assert end - begin == count * size, name
    spans.append((begin, end))
    values = list(struct.unpack("<" + fmt * count, body[begin:end]))
    print(name, info["dtype"], info["shape"], [round(v, 6) if isinstance(v, float) else v for v in values])
spans.sort()
at = 0
for b, e in spans:
    assert b == at, "hole or overlap"
    at = e
assert at == len(body), "bytes after the last tensor"
print("metadata", sorted(header.get("__metadata__", {}).keys()))

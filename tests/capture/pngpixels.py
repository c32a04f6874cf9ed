"""A PNG decoded in pure Python (zlib only), enough for chromium's
screenshots: 8-bit RGB or RGBA, not interlaced."""
import struct
import zlib

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def decode(data):
    """``(width, height, channels, rows)``: ``rows`` are the unfiltered
    scanlines (``bytes``, ``width * channels`` each)."""
    assert data[:8] == _SIGNATURE, "not a PNG"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, previous = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        row = _unfilter(raw[start], bytearray(raw[start + 1:start + 1 + stride]), previous,
                        channels)
        rows.append(row)
        previous = row
    return width, height, channels, rows


def _unfilter(kind, row, up, bpp):
    if kind == 0:
        return bytes(row)
    for i in range(len(row)):
        left = row[i - bpp] if i >= bpp else 0
        if kind == 1:
            row[i] = (row[i] + left) & 0xFF
        elif kind == 2:
            row[i] = (row[i] + up[i]) & 0xFF
        elif kind == 3:
            row[i] = (row[i] + ((left + up[i]) >> 1)) & 0xFF
        elif kind == 4:
            corner = up[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + _paeth(left, up[i], corner)) & 0xFF
        else:
            raise ValueError("PNG filter %d" % kind)
    return bytes(row)


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def count_colour(png_bytes, rgb):
    """How many pixels of the PNG are exactly the colour ``rgb`` (a
    ``"#rrggbb"`` string)."""
    want = bytes.fromhex(rgb.lstrip("#"))
    width, _, channels, rows = decode(png_bytes)
    count = 0
    for row in rows:
        for x in range(0, width * channels, channels):
            if row[x:x + 3] == want:
                count += 1
    return count

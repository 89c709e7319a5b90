"""Shared by the report tests: an HTML element collector and a minimal PNG
decoder for the screenshots (8-bit RGB or RGBA, as Chromium writes them;
zlib only, no imaging library)."""
import html.parser
import struct
import zlib


class Svg(html.parser.HTMLParser):
    """Collects elements with their attributes and enclosing svg/section."""

    def __init__(self):
        super().__init__()
        self.stack, self.els = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        svg = next((e for e in reversed(self.stack) if e[0] == "svg"), None)
        sec = next((e for e in reversed(self.stack) if e[0] == "section"), None)
        g = next((e for e in reversed(self.stack) if e[0] == "g"), None)
        el = (tag, a, svg[1] if svg else None, sec[1] if sec else None, g[1] if g else None)
        self.els.append(el)
        if tag != "meta":  # self-closing tags get an end tag from the parser
            self.stack.append((tag, a))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), f"PNG depth {depth} colour type {ctype}"
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows

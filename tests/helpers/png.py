"""A small PNG reader (stdlib zlib/struct and NumPy): the pixels of an 8-bit, non-interlaced RGB or RGBA
image, as browsers' screenshots are; enough to tell a drawn chart from a blank one."""

from __future__ import annotations

import struct
import zlib

import numpy as np

_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel (grey, RGB, grey+alpha, RGBA)


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def png_pixels(data: bytes) -> np.ndarray:
    """The image as a (height, width, channels) uint8 array."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    position, idat, header = 8, [], None
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        position += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    channels = _CHANNELS[colour]
    stride = width * channels
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(height, stride + 1)
    image = np.zeros((height, stride), dtype=np.uint8)
    previous = np.zeros(stride, dtype=np.uint8)
    for row in range(height):
        kind, line = raw[row, 0], raw[row, 1:]
        if kind == 0:
            current = line.copy()
        elif kind == 2:
            current = line + previous
        elif kind == 1:  # Sub: a running sum per channel, modulo 256
            current = (np.cumsum(line.reshape(width, channels).astype(np.int64), axis=0) % 256).astype(np.uint8)
            current = current.reshape(stride)
        else:
            current = bytearray(stride)
            above = previous.tolist()
            values = line.tolist()
            for i in range(stride):
                left = current[i - channels] if i >= channels else 0
                if kind == 3:
                    current[i] = (values[i] + (left + above[i]) // 2) & 0xFF
                else:
                    upper_left = above[i - channels] if i >= channels else 0
                    current[i] = (values[i] + _paeth(left, above[i], upper_left)) & 0xFF
            current = np.frombuffer(bytes(current), dtype=np.uint8)
        image[row] = current
        previous = current
    return image.reshape(height, width, channels)


def distinct_colours(image: np.ndarray) -> int:
    """How many different pixel values the image holds."""
    flat = image.reshape(-1, image.shape[-1])
    return len(np.unique(flat, axis=0))

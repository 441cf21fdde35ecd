"""Binary content of Context Graph's store_memory (content_base64 with a modality, or a data URI): decoded, sized,
and read only as far as its header says something for certain. No model looks inside (Engram has no CLIP or
Whisper): the features are the MIME type, the byte size, an image's width and height and a WAV recording's
format and duration, each only when the bytes really carry it."""
from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass, field

from apps.cognition.limits import MEDIA_MAX_BYTES, Modality
from apps.core.exceptions import InvalidInput

# Encoded length of MEDIA_MAX_BYTES, so that an oversized payload is refused before it is decoded.
_MAX_ENCODED_CHARS = 4 * -(-MEDIA_MAX_BYTES // 3)
_MEDIA_MODALITIES = (Modality.IMAGE, Modality.AUDIO, Modality.VIDEO)


@dataclass(frozen=True)
class Binary:
    data: bytes
    modality: str
    # The declared (data URI) or recognised MIME type; None when neither says.
    mime_type: str | None
    features: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DataUriText:
    """A data URI of a text/* type: its decoded text is stored as text content."""

    text: str
    mime_type: str


def decode_base64(value: str, *, field_name: str) -> bytes:
    compact = "".join(value.split())
    if len(compact) > _MAX_ENCODED_CHARS:
        raise InvalidInput(f"{field_name} decodes to more than {MEDIA_MAX_BYTES // (1024 * 1024)} MB: store a smaller "
                           "file.", field=field_name, extra={"limit_bytes": MEDIA_MAX_BYTES})
    try:
        data = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput(f"{field_name} is not valid base64 (A-Z, a-z, 0-9, +, / and = padding).",
                           field=field_name) from None
    if not data:
        raise InvalidInput(f"{field_name} is empty: send the file's bytes, base64-encoded.", field=field_name)
    if len(data) > MEDIA_MAX_BYTES:
        raise InvalidInput(f"{field_name} decodes to {len(data)} bytes; the limit is {MEDIA_MAX_BYTES} (10 MB).",
                           field=field_name, extra={"limit_bytes": MEDIA_MAX_BYTES})
    return data


def from_base64(value: str, *, modality: str | None) -> Binary:
    """content_base64: binary content of the stated modality (image, audio or video)."""
    if modality is None:
        raise InvalidInput("content_base64 needs modality (image, audio or video): say what the bytes are.",
                           field="modality")
    if modality not in _MEDIA_MODALITIES:
        raise InvalidInput(f"modality {modality!r} does not go with content_base64: give image, audio or video, or "
                           "send text as content.", field="modality")
    data = decode_base64(value, field_name="content_base64")
    mime_type, features = read_features(data)
    _check_agrees(mime_type, modality, field_name="modality")
    return Binary(data=data, modality=modality, mime_type=mime_type, features=features)


def from_data_uri(value: str, *, modality: str | None) -> Binary | DataUriText:
    """data_uri: the modality is its MIME type's (image/*, audio/*, video/*; text/* is stored as text)."""
    header, comma, payload = value.partition(",")
    parts = header[len("data:"):].split(";") if header.startswith("data:") else []
    if not comma or len(parts) < 2 or parts[-1].lower() != "base64" or "/" not in parts[0]:
        raise InvalidInput("data_uri must look like data:<type>/<subtype>;base64,<data> (e.g. "
                           "data:image/png;base64,iVBOR...).", field="data_uri")
    mime_type = parts[0].strip().lower()
    major = mime_type.split("/", 1)[0]
    declared = {"image": Modality.IMAGE, "audio": Modality.AUDIO, "video": Modality.VIDEO,
                "text": Modality.TEXT}.get(major)
    if declared is None:
        raise InvalidInput(f"data_uri's type {mime_type} is not image/*, audio/*, video/* or text/*: Context Graph "
                           "stores those.", field="data_uri")
    if modality is not None and modality != declared:
        raise InvalidInput(f"modality {modality!r} contradicts data_uri's type {mime_type}: leave modality out, the "
                           "type sets it.", field="modality")
    data = decode_base64(payload, field_name="data_uri")
    if declared == Modality.TEXT:
        try:
            return DataUriText(text=data.decode("utf-8"), mime_type=mime_type)
        except UnicodeDecodeError:
            raise InvalidInput(f"data_uri says {mime_type} but its bytes are not UTF-8 text.",
                               field="data_uri") from None
    recognised, features = read_features(data)
    _check_agrees(recognised, declared, field_name="data_uri")
    features["mime_type"] = mime_type
    if recognised and recognised != mime_type:  # both are read: what the URI says and what the bytes are
        features["detected_mime_type"] = recognised
    return Binary(data=data, modality=declared, mime_type=mime_type, features=features)


def _check_agrees(recognised: str | None, modality: str, *, field_name: str) -> None:
    """Refuse bytes that are recognisably of another modality (a PNG sent as audio)."""
    if recognised is None:
        return
    major = recognised.split("/", 1)[0]
    if major in _MEDIA_MODALITIES and major != modality:
        raise InvalidInput(f"The bytes are {recognised}, not {modality}: give the modality they are.",
                           field=field_name)


def read_features(data: bytes) -> tuple[str | None, dict]:
    """The MIME type recognised from the bytes' signature (None if not), and what their header says for
    certain: {mime_type?, byte_size, width?, height?, channels?, sample_rate?, duration_seconds?}."""
    features: dict = {"byte_size": len(data)}
    mime_type = _signature(data)
    if mime_type:
        features["mime_type"] = mime_type
    reader = _READERS.get(mime_type)
    if reader is not None:
        try:
            features.update(reader(data))
        except (struct.error, IndexError, ZeroDivisionError):  # a truncated or odd header: nothing certain to add
            pass
    return mime_type, features


def _signature(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:2] == b"BM" and len(data) >= 26:
        return "image/bmp"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0 and data[1] & 0x06):
        return "audio/mpeg"
    if data[:4] == b"OggS":
        return "audio/ogg"
    if data[:4] == b"fLaC":
        return "audio/flac"
    if data[4:8] == b"ftyp":
        return "audio/mp4" if data[8:12] in (b"M4A ", b"M4B ") else "video/mp4"
    if data[:4] == b"\x1a\x45\xdf\xa3":
        return "video/webm"
    return None


def _png(data: bytes) -> dict:
    if data[12:16] != b"IHDR":
        return {}
    width, height = struct.unpack(">II", data[16:24])
    return {"width": width, "height": height}


def _gif(data: bytes) -> dict:
    width, height = struct.unpack("<HH", data[6:10])
    return {"width": width, "height": height}


def _bmp(data: bytes) -> dict:
    width, height = struct.unpack("<ii", data[18:26])
    return {"width": width, "height": abs(height)}


def _jpeg(data: bytes) -> dict:
    """Walk the segments to the first start-of-frame marker, which holds the height and width."""
    position = 2
    while position + 9 < len(data):
        if data[position] != 0xFF:
            return {}
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        length = struct.unpack(">H", data[position + 2:position + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[position + 5:position + 9])
            return {"width": width, "height": height}
        position += 2 + length
    return {}


def _webp(data: bytes) -> dict:
    chunk = data[12:16]
    if chunk == b"VP8X":
        return {"width": 1 + int.from_bytes(data[24:27], "little"), "height": 1 + int.from_bytes(data[27:30], "little")}
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return {"width": width & 0x3FFF, "height": height & 0x3FFF}
    if chunk == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return {"width": (bits & 0x3FFF) + 1, "height": ((bits >> 14) & 0x3FFF) + 1}
    return {}


def _wav(data: bytes) -> dict:
    """The fmt chunk's channels and rate, and the data chunk's length over the byte rate."""
    position, found = 12, {}
    byte_rate = 0
    while position + 8 <= len(data):
        chunk, size = data[position:position + 4], struct.unpack("<I", data[position + 4:position + 8])[0]
        body = position + 8
        if chunk == b"fmt ":
            channels, sample_rate, byte_rate = struct.unpack("<HII", data[body + 2:body + 12])
            found.update(channels=channels, sample_rate=sample_rate)
        elif chunk == b"data" and byte_rate:
            found["duration_seconds"] = round(min(size, len(data) - body) / byte_rate, 3)
            break
        position = body + size + (size & 1)
    return found


_READERS = {"image/png": _png, "image/gif": _gif, "image/bmp": _bmp, "image/jpeg": _jpeg, "image/webp": _webp,
            "audio/wav": _wav}

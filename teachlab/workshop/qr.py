"""The join QR code, drawn on the server as inline SVG (no script, no image request)."""

from __future__ import annotations

import io

import segno


def qr_svg(url: str, *, scale: int = 6) -> str:
    """An SVG element for `url`, sized by `scale` pixels per module, with a text alternative."""
    out = io.BytesIO()
    segno.make(url, error="m").save(
        out,
        kind="svg",
        scale=scale,
        border=2,
        xmldecl=False,
        svgns=True,
        title=f"QR code to join: {url}",
        svgclass="qr",
        lineclass=None,
        dark="#000",
        light="#fff",
    )
    # role="img" makes the <title> its accessible name for screen readers.
    return out.getvalue().decode().replace("<svg ", '<svg role="img" ', 1)

"""The join QR code, drawn on the server as inline SVG (no script, no image request)."""

from __future__ import annotations

import io

import segno


def qr_svg(url: str, *, scale: int = 6) -> str:
    """An SVG element for `url` with a viewBox and no fixed size, so the stylesheet sizes it
    (full-size on the projector: a fixed width="222" drew it at half size in its box), with a
    text alternative. `scale` only sets the viewBox's units."""
    out = io.BytesIO()
    segno.make(url, error="m").save(
        out,
        kind="svg",
        scale=scale,
        border=2,
        xmldecl=False,
        svgns=True,
        omitsize=True,
        title=f"QR code to join: {url}",
        svgclass="qr",
        lineclass=None,
        dark="#000",
        light="#fff",
    )
    # role="img" makes the <title> its accessible name for screen readers.
    return out.getvalue().decode().replace("<svg ", '<svg role="img" ', 1)

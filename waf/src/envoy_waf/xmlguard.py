"""What the WAF refuses to hand to libmodsecurity's XML body processor.

libmodsecurity v3 (3.0.15, libxml2 2.9.7 in the PyPI wheel) parses XML bodies into a document and
never loads external entities (SecXmlExternalEntity is off), but it keeps internal entity references
in the document, and every CRS rule that reads `XML:/*` expands them again: a 128 KiB body whose one
60 KB entity is referenced 20,000 times held one engine thread for minutes and grew it past 4 GB. CRS has
no rule that reads a DTD (its XML targets are element text and attributes), so an XXE aimed at the
backend passed with 200.

A request body never needs a DTD (SOAP forbids one), so a body the engine would parse as XML is
refused before the engine sees it when it declares a DTD (`<!DOCTYPE`, `<!ENTITY`), or when it is in
an encoding in which those bytes could hide (UTF-16/32, EBCDIC, an encoding declaration other than
UTF-8, US-ASCII or ISO-8859-1). Deep nesting needs no guard: libxml2 stops at depth 256 and the engine
answers 400 like any malformed body.
"""

from __future__ import annotations

import re

# The content types the engine parses as XML (rule 200000 in settings.directives uses this pattern,
# matched against the lowercased Content-Type).
XML_CONTENT_TYPE = r"^(?:application(?:/soap\+|/)|text/)xml"
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_DECLARED = re.compile(rb"""^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
_ASCII_COMPATIBLE = {b"utf-8", b"utf8", b"us-ascii", b"ascii", b"iso-8859-1", b"latin1", b"iso_8859-1"}
_UTF8_BOM = b"\xef\xbb\xbf"
_EBCDIC_XML_DECL = b"\x4c\x6f\xa7\x94"  # "<?xm" in EBCDIC, which libxml2 detects


def is_xml(content_type: bytes) -> bool:
    """Whether a Content-Type value names an XML body: every type the engine parses as XML, and any
    other type with xml in its media type (a `+xml` type a user switched the XML processor on for)."""
    media = content_type.split(b";", 1)[0].strip().lower()
    return b"xml" in media


def refusal(body: bytes) -> str | None:
    """Why an XML body must not reach the engine, or None when it may."""
    if not body:
        return None
    if b"\x00" in body or body.startswith((b"\xfe\xff", b"\xff\xfe")) or body.startswith(_EBCDIC_XML_DECL):
        return "XML bodies must be UTF-8 (UTF-16, UTF-32 and EBCDIC are not accepted)"
    declared = _DECLARED.match(body.removeprefix(_UTF8_BOM))
    if declared and declared.group(1).strip().lower() not in _ASCII_COMPATIBLE:
        return "XML bodies must be UTF-8, US-ASCII or ISO-8859-1 (declared encoding not accepted)"
    if _DTD.search(body):
        return "XML bodies with a document type declaration (DOCTYPE/ENTITY) are not accepted"
    return None

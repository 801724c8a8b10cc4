// Package xmlguard decides which XML request bodies the WAF refuses before the engine parses them.
//
// A request body never needs a DTD (SOAP forbids one), and CRS has no rule that reads one: an XXE aimed
// at the backend would pass the rules, and internal entities are how expansion bombs are built. So a body
// the engine would parse as XML is refused (400) when it declares a DTD (`<!DOCTYPE`, `<!ENTITY`), when
// it is in an encoding in which those bytes could hide (UTF-16/32, EBCDIC, a declared encoding other than
// UTF-8, US-ASCII or ISO-8859-1), when it is not well-formed (the engine's own XML reader is lenient), or
// when it nests deeper than MaxDepth (the limit libxml2 applied under the previous engine).
package xmlguard

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the deepest element nesting accepted.
const MaxDepth = 256

var (
	dtd      = regexp.MustCompile(`(?i)<!(?:DOCTYPE|ENTITY)`)
	declared = regexp.MustCompile(`(?is)^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([^"']*)["']`)
	// Encodings in which `<!DOCTYPE` is the same bytes as in UTF-8.
	asciiCompatible = map[string]bool{
		"utf-8": true, "utf8": true, "us-ascii": true, "ascii": true,
		"iso-8859-1": true, "latin1": true, "iso_8859-1": true,
	}
	utf8BOM       = []byte{0xef, 0xbb, 0xbf}
	ebcdicXMLDecl = []byte{0x4c, 0x6f, 0xa7, 0x94} // "<?xm" in EBCDIC
)

// IsXML says whether a Content-Type value names an XML body: every type the engine parses as XML, and
// any other media type naming xml (a +xml type a user switched the XML processor on for).
func IsXML(contentType string) bool {
	media, _, _ := strings.Cut(contentType, ";")
	return strings.Contains(strings.ToLower(strings.TrimSpace(media)), "xml")
}

// Refusal is why an XML body must not reach the engine, or "" when it may.
func Refusal(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	if bytes.IndexByte(body, 0) >= 0 || bytes.HasPrefix(body, []byte{0xfe, 0xff}) ||
		bytes.HasPrefix(body, []byte{0xff, 0xfe}) || bytes.HasPrefix(body, ebcdicXMLDecl) {
		return "XML bodies must be UTF-8 (UTF-16, UTF-32 and EBCDIC are not accepted)"
	}
	if m := declared.FindSubmatch(bytes.TrimPrefix(body, utf8BOM)); m != nil &&
		!asciiCompatible[strings.ToLower(strings.TrimSpace(string(m[1])))] {
		return "XML bodies must be UTF-8, US-ASCII or ISO-8859-1 (declared encoding not accepted)"
	}
	if dtd.Match(body) {
		return "XML bodies with a document type declaration (DOCTYPE/ENTITY) are not accepted"
	}
	return structure(body)
}

// structure walks the elements (no values kept): a body that is not well-formed XML, or nests deeper
// than MaxDepth, is refused here (the engine's own XML reader is lenient: it would inspect half a
// document and pass it on).
func structure(body []byte) string {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = true
	d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		if l := strings.ToLower(label); l == "iso-8859-1" || l == "latin1" || l == "iso_8859-1" {
			return &latin1{r: r}, nil
		}
		return r, nil // UTF-8 and US-ASCII (Refusal already turned every other encoding away)
	}
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			if roots == 0 {
				return "XML body is not well-formed: no root element"
			}
			return ""
		}
		if err != nil {
			return "XML body is not well-formed: " + err.Error()
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if roots++; roots > 1 {
					return "XML body is not well-formed: more than one root element"
				}
			}
			depth++
			if depth > MaxDepth {
				return "XML bodies nested deeper than 256 elements are not accepted"
			}
		case xml.EndElement:
			depth--
		}
	}
}

// latin1 decodes ISO-8859-1 into UTF-8 (each byte is the code point of the same value).
type latin1 struct {
	r       io.Reader
	pending []byte
}

func (l *latin1) Read(p []byte) (int, error) {
	if len(l.pending) == 0 {
		buf := make([]byte, max(1, len(p)/2))
		n, err := l.r.Read(buf)
		for _, b := range buf[:n] {
			l.pending = utf8.AppendRune(l.pending, rune(b))
		}
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

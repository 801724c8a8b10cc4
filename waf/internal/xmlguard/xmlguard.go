// Package xmlguard decides which XML request bodies the WAF refuses before the engine parses them.
//
// A request body never needs a DTD (SOAP forbids one), and CRS has no rule that reads one: an XXE aimed
// at the backend would pass the rules, and internal entities are how expansion bombs are built. So a body
// the engine would parse as XML is refused (400) when it declares a DTD (`<!DOCTYPE`, `<!ENTITY`), when
// it is in an encoding in which those bytes could hide (UTF-16/32, EBCDIC, a declared encoding other than
// UTF-8, US-ASCII or ISO-8859-1), or when it nests deeper than MaxDepth (a parser's stack, and the limit
// libxml2 applies, which operators already know from the previous engine).
package xmlguard

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strings"
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
	if tooDeep(body) {
		return "XML bodies nested deeper than 256 elements are not accepted"
	}
	return ""
}

// tooDeep walks the element structure only (no values kept); a malformed body is left to the engine,
// which answers 400 for it.
func tooDeep(body []byte) bool {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = false
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	depth := 0
	for {
		tok, err := d.RawToken()
		if err != nil {
			return false
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
			if depth > MaxDepth {
				return true
			}
		case xml.EndElement:
			depth--
		}
		if errors.Is(err, io.EOF) {
			return false
		}
	}
}

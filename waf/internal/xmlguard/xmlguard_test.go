package xmlguard

import (
	"strings"
	"testing"
	"unicode/utf16"
)

func utf16le(s string) []byte {
	var out []byte
	for _, r := range utf16.Encode([]rune(s)) {
		out = append(out, byte(r), byte(r>>8))
	}
	return out
}

// The guard's table. Mutation: Refusal returning "" -> every refused row red.
func TestRefusal(t *testing.T) {
	cases := []struct {
		name    string
		body    []byte
		refused bool
	}{
		{"empty", nil, false},
		{"plain", []byte("<order/>"), false},
		{"bom-utf8", []byte("\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"utf-8\"?><o/>"), false},
		{"latin1", []byte("<?xml version='1.0' encoding='ISO-8859-1'?><o>Espa\xf1a</o>"), false},
		{"escaped-text", []byte("<o>&lt;!DOCTYPE is text here&gt;</o>"), false},
		{"doctype", []byte("<!DOCTYPE o><o/>"), true},
		{"entity-in-cdata", []byte("<o><![CDATA[<!ENTITY x 'y'>]]></o>"), true}, // harmless, refused: fail closed
		{"lowercase-doctype", []byte("<!doctype o><o/>"), true},
		{"utf16", utf16le("<o/>"), true},
		{"ebcdic", []byte("\x4c\x6f\xa7\x94\x40"), true},
		{"shift-jis", []byte(`<?xml version="1.0" encoding="Shift_JIS"?><o/>`), true},
		{"depth-256", []byte(strings.Repeat("<a>", 256) + "x" + strings.Repeat("</a>", 256)), false},
		{"malformed", []byte("<order><id>5</order"), true},
		{"two-roots", []byte("<a/><b/>"), true},
		{"depth-257", []byte(strings.Repeat("<a>", 257) + "x" + strings.Repeat("</a>", 257)), true},
	}
	for _, c := range cases {
		if got := Refusal(c.body) != ""; got != c.refused {
			t.Errorf("%s: refused=%v, want %v (%q)", c.name, got, c.refused, Refusal(c.body))
		}
	}
}

// Every type the engine parses as XML is guarded (a superset: any media type naming xml).
func TestIsXML(t *testing.T) {
	cases := map[string]bool{
		"application/xml":         true,
		"Text/XML; charset=utf-8": true,
		"application/soap+xml":    true,
		"application/vnd.api+xml": true,
		"application/json":        false,
		"text/plain; note=xml":    false,
	}
	for ct, want := range cases {
		if IsXML(ct) != want {
			t.Errorf("IsXML(%q) = %v", ct, !want)
		}
	}
}

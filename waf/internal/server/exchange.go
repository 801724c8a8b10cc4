package server

import (
	"context"
	"fmt"
	"mime"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/corazawaf/coraza/v3/types"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"polycrate.local/envoy/waf/internal/xmlguard"
)

// request is what the audit line says about a request.
type request struct {
	method, path, id, client string
	xml                      bool
	boundary                 string // a multipart body's boundary
}

// exchange is one stream: the request, its transaction and the state of the body. Its methods answer one
// message each: the response to send (nil: none), or the engine's error, which ends the stream.
type exchange struct {
	srv      *Server
	ctx      context.Context // the stream's: done when Envoy gave up on it
	tx       types.Transaction
	req      *request
	body     []byte
	received int
	seen     int // matched rules already reported
	status   int // response status, between the response headers and body
	pending  bool
	done     bool
}

func (x *exchange) close() {
	if x.tx != nil {
		x.tx.ProcessLogging()
		_ = x.tx.Close() // only releases buffers; nothing to report
		x.tx = nil
	}
}

// on answers one message from Envoy.
func (x *exchange) on(msg *extproc.ProcessingRequest) (*extproc.ProcessingResponse, error) {
	switch m := msg.GetRequest().(type) {
	case *extproc.ProcessingRequest_RequestHeaders:
		if x.req != nil {
			return nil, nil // a second headers message: the first one started the transaction
		}
		return x.requestHeaders(m.RequestHeaders, attributes(msg))
	case *extproc.ProcessingRequest_RequestBody:
		return x.requestBody(m.RequestBody)
	case *extproc.ProcessingRequest_ResponseHeaders:
		return x.responseHeaders(m.ResponseHeaders)
	case *extproc.ProcessingRequest_ResponseBody:
		return x.responseBody(m.ResponseBody)
	}
	return nil, nil // trailers: never asked for
}

func (x *exchange) requestHeaders(h *extproc.HttpHeaders, attrs map[string]*structpb.Value) (*extproc.ProcessingResponse, error) {
	req := &request{method: "GET", path: "/"}
	var host string
	headers := h.GetHeaders().GetHeaders()
	for _, hv := range headers {
		switch k := hv.GetKey(); k {
		case ":method":
			req.method = headerValue(hv)
		case ":path":
			req.path = headerValue(hv)
		case ":authority":
			host = headerValue(hv)
		case "x-request-id":
			req.id = headerValue(hv)
		case "content-type":
			req.xml = req.xml || xmlguard.IsXML(headerValue(hv))
			if media, params, err := mime.ParseMediaType(headerValue(hv)); err == nil && strings.HasPrefix(media, "multipart/") {
				req.boundary = params["boundary"]
			}
		}
	}
	client, clientPort := address(attrs, "source.address", "source.port")
	server, serverPort := address(attrs, "destination.address", "destination.port")
	if client == "" {
		client = "0.0.0.0" // Envoy was not asked for source.address: the audit line says so
	}
	protocol := "HTTP/1.1"
	if v, ok := attrs["request.protocol"]; ok && v.GetStringValue() != "" {
		protocol = v.GetStringValue()
	}
	req.client = client
	x.req = req
	if req.id != "" {
		x.tx = x.srv.engine.NewTransactionWithID(req.id)
	} else {
		x.tx = x.srv.engine.NewTransaction()
	}
	tx := x.tx
	tx.ProcessConnection(client, clientPort, server, serverPort)
	// The raw request target: the engine splits path and query and decodes the arguments itself.
	tx.ProcessURI(req.path, req.method, protocol)
	if host != "" {
		tx.AddRequestHeader("Host", host)
		hostName, _, err := net.SplitHostPort(host)
		if err != nil {
			hostName = host // no port in :authority
		}
		tx.SetServerName(hostName)
	}
	for _, hv := range headers {
		if k := hv.GetKey(); !strings.HasPrefix(k, ":") {
			tx.AddRequestHeader(k, headerValue(hv))
		}
	}
	if h.GetEndOfStream() { // no body follows: decide now, one round trip
		return x.decided(x.requestVerdict(nil, continueHeaders))
	}
	return continueHeaders, nil
}

func (x *exchange) requestBody(b *extproc.HttpBody) (*extproc.ProcessingResponse, error) {
	s := x.srv.settings
	if x.tx == nil || x.req == nil {
		return continueBody, nil
	}
	chunk := b.GetBody()
	x.received += len(chunk)
	// Keep at most body_limit bytes: memory stays bounded whatever the client sends.
	if room := s.BodyLimit - len(x.body); room > 0 {
		x.body = append(x.body, chunk[:min(room, len(chunk))]...)
	}
	if !b.GetEndOfStream() {
		return continueBody, nil
	}
	if refused := x.refusedBeforeEngine(); refused != nil {
		return x.decided(refused, nil)
	}
	release, refused := x.admit()
	if refused != nil {
		return x.decided(refused, nil)
	}
	defer release()
	return x.decided(x.requestVerdict(x.body, continueBody))
}

func (x *exchange) responseHeaders(h *extproc.HttpHeaders) (*extproc.ProcessingResponse, error) {
	if x.tx == nil || x.req == nil || !x.srv.settings.InspectResponse {
		return responseHeaders, nil
	}
	code := 200
	for _, hv := range h.GetHeaders().GetHeaders() {
		if hv.GetKey() == ":status" {
			if n, err := strconv.Atoi(headerValue(hv)); err == nil {
				code = n
			}
		} else if !strings.HasPrefix(hv.GetKey(), ":") {
			x.tx.AddResponseHeader(hv.GetKey(), headerValue(hv))
		}
	}
	x.status = code
	started := time.Now()
	it := x.tx.ProcessResponseHeaders(code, "HTTP/1.1")
	if it == nil && h.GetEndOfStream() { // no body (204, 304, HEAD): phase 4 now
		var err error
		if it, err = x.tx.ProcessResponseBody(); err != nil {
			return nil, fmt.Errorf("response body phase (no body): %w", err)
		}
	}
	if it != nil || h.GetEndOfStream() {
		x.done = true
		return x.responseVerdict(it, started, responseHeaders), nil
	}
	x.pending = true
	return responseHeaders, nil
}

func (x *exchange) responseBody(b *extproc.HttpBody) (*extproc.ProcessingResponse, error) {
	if x.tx == nil || x.req == nil || !x.pending {
		return responseBody, nil
	}
	// The first body message is all Envoy sends when buffering (partially): inspect it now.
	x.pending = false
	x.done = true
	chunk := b.GetBody()
	chunk = chunk[:min(len(chunk), x.srv.settings.ResponseBodyLimit)]
	started := time.Now()
	it, _, err := x.tx.WriteResponseBody(chunk)
	if err != nil {
		return nil, fmt.Errorf("writing the response body: %w", err)
	}
	if it == nil {
		if it, err = x.tx.ProcessResponseBody(); err != nil {
			return nil, fmt.Errorf("response body phase: %w", err)
		}
	}
	return x.responseVerdict(it, started, responseBody), nil
}

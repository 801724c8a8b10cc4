// Command echo is the tenant backend and the probing client of the real-node tests.
//
//	echo serve         HTTP on $HTTP_PORT (8080) and TLS on $TLS_PORT (8443, a self-signed certificate for
//	                   $TLS_NAME): every request is answered with a JSON echo of what arrived (the pod's
//	                   name, the peer address, method, host, path, headers); /healthz is 503 until
//	                   $READY_DELAY has passed, then 200.
//	echo get URL       one GET with a 3 s timeout: prints "STATUS BODY" and exits 0, or prints the error
//	                   and exits 1 (the network-policy probes run it inside a pod).
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 2 && args[0] == "get":
		return get(args[1])
	case len(args) == 1 && args[0] == "serve":
		return serve()
	default:
		return errors.New("usage: echo serve | echo get URL")
	}
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func get(url string) error {
	client := http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return fmt.Errorf("read %s: %w", url, err)
	}
	fmt.Printf("%d %s\n", resp.StatusCode, body)
	return nil
}

type echoed struct {
	Pod     string              `json:"pod"`
	Peer    string              `json:"peer"`
	TLS     bool                `json:"tls"`
	Method  string              `json:"method"`
	Host    string              `json:"host"`
	Path    string              `json:"path"`
	Headers map[string][]string `json:"headers"`
}

func serve() error {
	delay, err := time.ParseDuration(env("READY_DELAY", "0s"))
	if err != nil {
		return fmt.Errorf("READY_DELAY: %w", err)
	}
	start := time.Now()
	pod, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if time.Since(start) < delay {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// ?delay=8s answers after that long (60 s at most): a long request to hold open across a drain.
		if d, err := time.ParseDuration(r.URL.Query().Get("delay")); err == nil && d > 0 {
			select {
			case <-time.After(min(d, time.Minute)):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(echoed{pod, r.RemoteAddr, r.TLS != nil, r.Method, r.Host, r.URL.Path, r.Header})
	})
	cert, err := selfSigned(env("TLS_NAME", "echo.test"))
	if err != nil {
		return err
	}
	tlsServer := &http.Server{
		Addr:              ":" + env("TLS_PORT", "8443"),
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	errs := make(chan error, 2)
	go func() { errs <- tlsServer.ListenAndServeTLS("", "") }()
	plain := &http.Server{Addr: ":" + env("HTTP_PORT", "8080"), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { errs <- plain.ListenAndServe() }()
	return <-errs
}

// selfSigned makes the TLS backend's certificate at start: a TLSRoute in Passthrough mode shows the client
// this certificate, which is how a test tells the backend answered and not the proxy.
func selfSigned(name string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("key: %w", err)
	}
	template := x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(48 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, &template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

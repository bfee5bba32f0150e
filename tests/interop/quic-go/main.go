// quic-go-hq: an hq-interop (HTTP/0.9 over QUIC) client and server on quic-go, the
// second foreign stack of quiclab's interop tests (tests/interop/run.sh) and of the
// lab's real-stack runs (experiments/instant-ack-foreign). It follows quic-go's own
// interop endpoint (quic-go/interop/{client,server}) and the QUIC interop runner's
// conventions, without quic-go's internal packages (an outside module cannot import
// them): everything here is quic-go's public API.
//
//	quic-go-hq client [flags] URL...   GETs each URL, writes the bodies to -out/<basename>
//	quic-go-hq server [flags]          serves -root until SIGTERM/SIGINT
//
// Flags default to the runner's environment variables: TESTCASE, REQUESTS (client URLs,
// space separated), DOWNLOADS (client output dir), SSLKEYLOGFILE, QLOGDIR (one qlog
// per connection, JSON-SEQ: <odcid>_<client|server>.sqlog). Exit status 127 is the
// runner's "unsupported test case".
//
// Test cases: handshake, transfer, multiplexing, chacha20 (nothing to do here: Go's
// TLS offers ChaCha20 and a ChaCha20-only peer gets it; forcing it needs quic-go's
// internal qtls), keyupdate (quic-go initiates its first key update after 100 packets
// by default, its interop endpoint's setting), retry (server: Retry on every
// connection), resumption and zerortt (client: the first URL on one connection, the
// rest on a second that resumes, sending its requests in 0-RTT for zerortt; server:
// tickets, and 0-RTT accepted for zerortt), v2 (both sides prefer QUIC v2; quic-go has
// no compatible version negotiation (RFC 9368): its client starts in v2, its server
// makes a v1-only-offering client switch by Version Negotiation), and quiclab's own
// datagram (RFC 9221, not a runner case: both sides enable DATAGRAM frames; the server
// echoes each one back, the client sends -datagrams of -datagram-size bytes besides
// its fetches and logs "datagrams: sent N received M" once the echoes are in or 5 s
// passed).
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
)

// alpn is the interop runner's HTTP/0.9 ALPN.
const alpn = "hq-interop"

var errUnsupported = errors.New("unsupported test case")

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func main() {
	log.SetFlags(log.Lmicroseconds)
	log.SetPrefix("quic-go-hq: ")
	if len(os.Args) < 2 || (os.Args[1] != "client" && os.Args[1] != "server") {
		fmt.Fprintln(os.Stderr, "usage: quic-go-hq client|server [flags] (-h for the flags)")
		os.Exit(2)
	}
	role := os.Args[1]
	fs := flag.NewFlagSet(role, flag.ExitOnError)
	testcase := fs.String("testcase", env("TESTCASE", "handshake"), "interop runner test case ($TESTCASE)")
	keylog := fs.String("keylog", os.Getenv("SSLKEYLOGFILE"), "TLS key log file ($SSLKEYLOGFILE)")
	qlogDir := fs.String("qlog-dir", os.Getenv("QLOGDIR"), "write a qlog per connection here ($QLOGDIR)")
	out := fs.String("out", env("DOWNLOADS", "."), "client: download directory ($DOWNLOADS)")
	listen := fs.String("listen", "127.0.0.1:4433", "server: UDP address to listen on")
	root := fs.String("root", "www", "server: directory to serve")
	cert := fs.String("cert", "cert.pem", "server: PEM certificate")
	key := fs.String("key", "key.pem", "server: PEM private key")
	datagrams := fs.Int("datagrams", 100, "client, testcase datagram: DATAGRAM frames to send")
	datagramSize := fs.Int("datagram-size", 100, "client, testcase datagram: their payload bytes")
	_ = fs.Parse(os.Args[2:])

	tlsConf := &tls.Config{}
	if *keylog != "" {
		f, err := os.OpenFile(*keylog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatalf("key log: %v", err)
		}
		defer f.Close()
		tlsConf.KeyLogWriter = f
	}
	qlogs := newQlogs(*qlogDir)
	quicConf := &quic.Config{Tracer: qlogs.tracer, EnableDatagrams: *testcase == "datagram"}

	var err error
	if role == "client" {
		urls := fs.Args()
		if len(urls) == 0 {
			urls = strings.Fields(os.Getenv("REQUESTS"))
		}
		err = runClient(*testcase, urls, *out, tlsConf, quicConf, datagramPlan{*datagrams, *datagramSize})
	} else {
		err = runServer(*testcase, *listen, *root, *cert, *key, tlsConf, quicConf)
	}
	qlogs.wait(3 * time.Second)
	if errors.Is(err, errUnsupported) {
		fmt.Fprintf(os.Stderr, "unsupported test case: %s\n", *testcase)
		os.Exit(127)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s failed: %v\n", role, err)
		os.Exit(1)
	}
}

// versions of a test case: v2 prefers QUIC v2 (RFC 9369), else quic-go's default.
func versions(testcase string) []quic.Version {
	if testcase == "v2" {
		return []quic.Version{quic.Version2, quic.Version1}
	}
	return nil
}

func runServer(testcase, listen, root, certFile, keyFile string, tlsConf *tls.Config, quicConf *quic.Config) error {
	switch testcase {
	case "handshake", "transfer", "multiplexing", "keyupdate", "chacha20", "v2", "retry",
		"resumption", "zerortt", "datagram", "ecn", "multiconnect":
	default:
		return errUnsupported
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	tlsConf.Certificates = []tls.Certificate{cert}
	tlsConf.NextProtos = []string{alpn}
	quicConf.Allow0RTT = testcase == "zerortt"
	quicConf.Versions = versions(testcase)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return serve(ctx, listen, root, testcase == "retry", tlsConf, quicConf)
}

func runClient(testcase string, urls []string, out string, tlsConf *tls.Config, quicConf *quic.Config, plan datagramPlan) error {
	switch testcase {
	// ecn: quic-go marks ECT(0) and reports ECN counts on Linux by default.
	case "handshake", "transfer", "multiplexing", "keyupdate", "chacha20", "v2", "retry", "datagram", "ecn":
	// multiconnect (the runner's handshakeloss and handshakecorruption): one connection
	// per URL, one after the other.
	case "multiconnect":
	case "resumption", "zerortt":
		if len(urls) < 2 {
			return fmt.Errorf("%s needs at least 2 URLs", testcase)
		}
	default:
		return errUnsupported
	}
	if len(urls) == 0 {
		return errors.New("no URLs")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// Certificates are not verified (the interop runner's clients do the same).
	tlsConf.InsecureSkipVerify = true
	tlsConf.NextProtos = []string{alpn}
	quicConf.Versions = versions(testcase)
	c := &client{tlsConf: tlsConf, quicConf: quicConf, out: out}
	if testcase == "datagram" {
		c.datagrams = &plan
	}
	if testcase == "multiconnect" {
		for _, u := range urls {
			if err := c.fetchAll([]string{u}, false); err != nil {
				return err
			}
		}
		return nil
	}
	if testcase != "resumption" && testcase != "zerortt" {
		return c.fetchAll(urls, false)
	}
	return c.resume(urls, testcase == "zerortt")
}

// waitFor waits for ch to close or receive, up to limit (steps that could hang).
func waitFor(limit time.Duration, what string, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-time.After(limit):
		return fmt.Errorf("no %s within %v", what, limit)
	}
}

// copyBody copies a stream into a file.
func copyBody(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/quic-go/quic-go"
)

// maxRequest bounds an HTTP/0.9 request line ("GET /path\r\n").
const maxRequest = 4096

// serve answers hq-interop GETs with the files under root until ctx ends. With
// retry, every connection is sent a Retry first (RFC 9000 §8.1.2).
func serve(ctx context.Context, listen, root string, retry bool, tlsConf *tls.Config, quicConf *quic.Config) error {
	addr, err := net.ResolveUDPAddr("udp", listen)
	if err != nil {
		return err
	}
	udp, err := net.ListenUDP("udp", addr)
	if err != nil {
		return err
	}
	tr := &quic.Transport{
		Conn:                udp,
		VerifySourceAddress: func(net.Addr) bool { return retry },
	}
	defer tr.Close()
	ln, err := tr.ListenEarly(tlsConf, quicConf)
	if err != nil {
		return err
	}
	// Test scripts and the lab wait for this line.
	log.Printf("listening on %s", udp.LocalAddr())
	for {
		conn, err := ln.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go handleConn(ctx, conn, root)
	}
}

func handleConn(ctx context.Context, conn *quic.Conn, root string) {
	if st := conn.ConnectionState().SupportsDatagrams; st.Local && st.Remote {
		go echoDatagrams(conn.Context(), conn)
	}
	for {
		str, err := conn.AcceptStream(ctx)
		if err != nil {
			return
		}
		go func() {
			if err := handleStream(str, root); err != nil {
				log.Printf("stream %d: %v", str.StreamID(), err)
			}
		}()
	}
}

// handleStream reads "GET /path" up to the stream's FIN and sends the file, or
// resets the stream (error code 0x10c, H3_REQUEST_REJECTED's value; hq has none).
func handleStream(str *quic.Stream, root string) error {
	req, err := io.ReadAll(io.LimitReader(str, maxRequest))
	if err != nil {
		return err
	}
	line := strings.TrimRight(string(req), "\r\n ")
	p, ok := strings.CutPrefix(line, "GET /")
	if !ok {
		str.CancelWrite(0x10c)
		return errors.New("not a GET: " + line)
	}
	// Clean against "/" so ".." cannot leave root.
	f, err := os.Open(filepath.Join(root, filepath.Clean("/"+p)))
	if err != nil {
		str.CancelWrite(0x10c)
		return err
	}
	defer f.Close()
	if _, err := io.Copy(str, f); err != nil {
		return err
	}
	return str.Close()
}

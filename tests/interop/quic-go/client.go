package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"net/url"
	"path"
	"path/filepath"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/sync/errgroup"
)

// client GETs URLs over hq-interop: one connection per call of fetchAll, one
// bidirectional stream per URL, all streams at once.
type client struct {
	tlsConf  *tls.Config
	quicConf *quic.Config
	out      string
	// datagrams, when set, is exchanged on the connection besides the fetches.
	datagrams *datagramPlan
}

// fetchAll GETs every URL on one new connection (all to the first URL's host:port)
// and closes it. With early, the requests go in 0-RTT when the client has a session
// that allows it (RFC 9001 §4.6.1).
func (c *client) fetchAll(urls []string, early bool) error {
	first, err := url.Parse(urls[0])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := quic.DialAddrEarly(ctx, first.Host, c.tlsConf, c.quicConf)
	if err != nil {
		return err
	}
	defer conn.CloseWithError(0, "")
	if !early {
		select {
		case <-conn.HandshakeComplete():
		case <-ctx.Done():
			return fmt.Errorf("handshake: %w", ctx.Err())
		}
	}
	var g errgroup.Group
	for _, u := range urls {
		g.Go(func() error { return c.get(ctx, conn, u) })
	}
	if c.datagrams != nil {
		g.Go(func() error { return c.datagrams.exchange(ctx, conn) })
	}
	err = g.Wait()
	state := conn.ConnectionState()
	log.Printf("connection: version %v, cipher %#x, resumed %v, 0-RTT used %v",
		state.Version, state.TLS.CipherSuite, state.TLS.DidResume, state.Used0RTT)
	return err
}

// get sends "GET /path\r\n" on a new stream, closes its send side and writes the
// response (the stream's data up to its FIN) to out/<basename of the path>.
func (c *client) get(ctx context.Context, conn *quic.Conn, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	str, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	if _, err := str.Write([]byte("GET " + u.Path + "\r\n")); err != nil {
		return err
	}
	if err := str.Close(); err != nil {
		return err
	}
	if err := copyBody(filepath.Join(c.out, path.Base(u.Path)), str); err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	return nil
}

// resume: the first URL on one connection, then (once its session ticket came) the
// others on a second connection that resumes the session, in 0-RTT when zeroRTT.
func (c *client) resume(urls []string, zeroRTT bool) error {
	cache := &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(1), put: make(chan struct{}, 16)}
	c.tlsConf.ClientSessionCache = cache
	if err := c.fetchAll(urls[:1], false); err != nil {
		return err
	}
	// quic-go's tickets arrive after the handshake; the first GET may have been faster.
	if err := waitFor(10*time.Second, "session ticket", cache.put); err != nil {
		return err
	}
	return c.fetchAll(urls[1:], zeroRTT)
}

// ticketCache signals every stored session ticket.
type ticketCache struct {
	tls.ClientSessionCache
	put chan struct{}
}

func (c *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	select {
	case c.put <- struct{}{}:
	default:
	}
}

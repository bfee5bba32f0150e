package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/quic-go/quic-go"
)

// datagramPlan is the client's RFC 9221 exchange: count DATAGRAM frames of size bytes,
// each starting with its sequence number (cut short below 8 bytes).
type datagramPlan struct {
	count, size int
}

// exchange sends the plan's datagrams and counts what the server echoes back, until
// all came back or 5 s passed after the last was sent; it fails only when the peer
// offers no DATAGRAM support.
func (p *datagramPlan) exchange(ctx context.Context, conn *quic.Conn) error {
	if !conn.ConnectionState().SupportsDatagrams.Remote {
		return errors.New("the peer does not support DATAGRAM frames")
	}
	got := make(chan int, 1)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		n := 0
		for n < p.count {
			if _, err := conn.ReceiveDatagram(rctx); err != nil {
				break
			}
			n++
		}
		got <- n
	}()
	sent := 0
	for i := 0; i < p.count; i++ {
		b := make([]byte, p.size)
		var seq [8]byte
		binary.BigEndian.PutUint64(seq[:], uint64(i))
		copy(b, seq[8-min(8, p.size):])
		// SendDatagram blocks while quic-go's send queue (32 frames) is full.
		if err := conn.SendDatagram(b); err != nil {
			return fmt.Errorf("datagram %d: %w", i, err)
		}
		sent++
	}
	var received int
	select {
	case received = <-got:
	case <-time.After(5 * time.Second):
		cancel()
		received = <-got
	}
	log.Printf("datagrams: sent %d received %d", sent, received)
	return nil
}

// echoDatagrams sends every DATAGRAM frame received on conn back, until it closes.
func echoDatagrams(ctx context.Context, conn *quic.Conn) {
	for {
		b, err := conn.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		if err := conn.SendDatagram(b); err != nil {
			log.Printf("echo: %v", err)
		}
	}
}

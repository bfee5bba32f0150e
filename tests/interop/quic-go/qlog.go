package main

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlogwriter"
)

// qlogs writes one JSON-SEQ qlog file per connection into dir (quic-go's
// qlog.DefaultConnectionTracer does the same, but its files are flushed by a goroutine
// that a process exiting right after its last connection closed would cut short:
// here the process waits for every file to be closed).
type qlogs struct {
	dir  string
	open sync.WaitGroup
}

func newQlogs(dir string) *qlogs { return &qlogs{dir: dir} }

// tracer is quic.Config.Tracer: nil (no qlog) without a directory.
func (q *qlogs) tracer(_ context.Context, isClient bool, odcid quic.ConnectionID) qlogwriter.Trace {
	if q.dir == "" {
		return nil
	}
	role := "server"
	if isClient {
		role = "client"
	}
	if err := os.MkdirAll(q.dir, 0o755); err != nil {
		log.Printf("qlog: %v", err)
		return nil
	}
	path := filepath.Join(q.dir, fmt.Sprintf("%s_%s.sqlog", odcid, role))
	f, err := os.Create(path)
	if err != nil {
		log.Printf("qlog: %v", err)
		return nil
	}
	q.open.Add(1)
	seq := qlogwriter.NewConnectionFileSeq(&qlogFile{w: bufio.NewWriter(f), f: f, done: q.open.Done}, isClient, odcid)
	go seq.Run()
	return seq
}

// wait blocks until every qlog file is closed (its connection ended), up to limit.
func (q *qlogs) wait(limit time.Duration) {
	done := make(chan struct{})
	go func() { q.open.Wait(); close(done) }()
	if err := waitFor(limit, "qlog flush", done); err != nil {
		log.Printf("qlog: %v", err)
	}
}

// qlogFile is a buffered file that reports its Close.
type qlogFile struct {
	w    *bufio.Writer
	f    *os.File
	done func()
	once sync.Once
}

func (q *qlogFile) Write(b []byte) (int, error) { return q.w.Write(b) }

func (q *qlogFile) Close() error {
	err := q.w.Flush()
	if cerr := q.f.Close(); err == nil {
		err = cerr
	}
	q.once.Do(q.done)
	return err
}

// kvtune-driver runs one Go key-value engine (pebble, badger or bbolt) for
// kvtune's trial worker, which starts it inside the trial's memory cgroup:
//
//	kvtune-driver ENGINE DIR OPTIONS_JSON
//
// Requests and replies are frames on stdin and stdout: a little-endian u32
// length, then the payload. A request's first byte says what it is; a reply's
// first byte is 0 (ok, data follows) or 1 (an error message follows). A
// chunk of calls ('C') is timed here, call by call, around the engine's own
// work only, so the pipe costs nothing that is measured.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// op is one write of a write call.
type op struct {
	kind  byte // 'p' put, 'd' delete, 'r' delete range [key, value)
	key   []byte
	value []byte
}

// read is what a read call found: entries and their value bytes.
type read struct{ entries, bytes uint64 }

// store is what every engine does for the replay.
type store interface {
	write(ops []op) error
	get(key []byte) (read, error)
	multiGet(keys [][]byte) (read, error)
	// seekForPrev: the last entry at or below key sharing its first prefix bytes.
	seekForPrev(key []byte, prefix int) (read, error)
	// scan: up to limit entries from key on sharing its first prefix bytes.
	scan(key []byte, limit, prefix int) (read, error)
	compact(start, end []byte) error
	flush() error
	// settle returns once no flush or compaction runs or is due.
	settle() error
	// stats: the engine's counters and memory by part, kvtune's names.
	stats() map[string]uint64
	close() error
}

// opener opens a store of one engine in dir with its options as JSON.
type opener func(dir string, options json.RawMessage) (store, error)

var engines = map[string]opener{
	"pebble": openPebble,
	"badger": openBadger,
	"bbolt":  openBbolt,
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: kvtune-driver ENGINE DIR OPTIONS_JSON (ENGINE: pebble, badger or bbolt)")
		os.Exit(2)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	open, ok := engines[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown engine %q: pebble, badger or bbolt\n", os.Args[1])
		os.Exit(2)
	}
	s, err := open(os.Args[2], json.RawMessage(os.Args[3]))
	if reply(out, nil, err); err != nil {
		os.Exit(1)
	}
	for {
		request, err := frame(in)
		if errors.Is(err, io.EOF) {
			_ = s.close()
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "reading a request:", err)
			os.Exit(1)
		}
		data, err, quit := serve(s, request)
		reply(out, data, err)
		if quit {
			return
		}
	}
}

// serve answers one request.
func serve(s store, request []byte) (data []byte, err error, quit bool) {
	if len(request) == 0 {
		return nil, errors.New("empty request"), false
	}
	switch request[0] {
	case 'C':
		data, err = calls(s, &decoder{buf: request[1:]})
	case 'F':
		err = s.flush()
	case 'S':
		err = s.settle()
	case 'M':
		data, err = json.Marshal(s.stats())
	case 'Q':
		return nil, s.close(), true
	default:
		err = fmt.Errorf("unknown request %q", request[0])
	}
	return data, err, false
}

// calls runs a chunk of calls in order and returns, for each, the engine's
// time in nanoseconds and what it read.
func calls(s store, d *decoder) ([]byte, error) {
	n := d.u32()
	result := make([]byte, 0, 24*n)
	var ops []op
	var keys [][]byte
	for i := uint32(0); i < n && d.err == nil; i++ {
		kind := d.byte()
		var r read
		var err error
		var start time.Time
		switch kind {
		case 'w':
			ops = ops[:0]
			for j, m := uint32(0), d.u32(); j < m && d.err == nil; j++ {
				ops = append(ops, op{kind: d.byte(), key: d.bytes(), value: d.bytes()})
			}
			start = time.Now()
			err = s.write(ops)
		case 'g':
			key := d.bytes()
			start = time.Now()
			r, err = s.get(key)
		case 'm':
			keys = keys[:0]
			for j, m := uint32(0), d.u32(); j < m && d.err == nil; j++ {
				keys = append(keys, d.bytes())
			}
			start = time.Now()
			r, err = s.multiGet(keys)
		case 'b':
			prefix := int(d.u16())
			key := d.bytes()
			start = time.Now()
			r, err = s.seekForPrev(key, prefix)
		case 's':
			limit, prefix := int(d.u32()), int(d.u16())
			key := d.bytes()
			start = time.Now()
			r, err = s.scan(key, limit, prefix)
		case 'c':
			from, to := d.bytes(), d.bytes()
			start = time.Now()
			err = s.compact(from, to)
		default:
			return nil, fmt.Errorf("unknown call %q", kind)
		}
		nanos := uint64(time.Since(start).Nanoseconds())
		if d.err != nil {
			return nil, d.err
		}
		if err != nil {
			return nil, err
		}
		result = binary.LittleEndian.AppendUint64(result, nanos)
		result = binary.LittleEndian.AppendUint64(result, r.entries)
		result = binary.LittleEndian.AppendUint64(result, r.bytes)
	}
	return result, d.err
}

func frame(in *bufio.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(in, size[:]); err != nil {
		return nil, err
	}
	buf := make([]byte, binary.LittleEndian.Uint32(size[:]))
	if _, err := io.ReadFull(in, buf); err != nil {
		return nil, fmt.Errorf("a frame cut short: %w", err)
	}
	return buf, nil
}

func reply(out *bufio.Writer, data []byte, err error) {
	payload := append([]byte{0}, data...)
	if err != nil {
		payload = append([]byte{1}, err.Error()...)
	}
	var size [4]byte
	binary.LittleEndian.PutUint32(size[:], uint32(len(payload)))
	_, _ = out.Write(size[:])
	_, _ = out.Write(payload)
	if e := out.Flush(); e != nil {
		os.Exit(1)
	}
}

// decoder reads a request's fields; the first short read sets err.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || len(d.buf) < n {
		d.err = errors.New("a request cut short")
		return make([]byte, n)
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) byte() byte    { return d.take(1)[0] }
func (d *decoder) u16() uint16   { return binary.LittleEndian.Uint16(d.take(2)) }
func (d *decoder) u32() uint32   { return binary.LittleEndian.Uint32(d.take(4)) }
func (d *decoder) bytes() []byte { return d.take(int(d.u32())) }

// withinPrefix: whether k shares the first prefix bytes of key (any k for 0).
func withinPrefix(k, key []byte, prefix int) bool {
	if prefix > len(key) {
		prefix = len(key)
	}
	return len(k) >= prefix && string(k[:prefix]) == string(key[:prefix])
}

var stderr = os.Stderr

// strictJSON decodes options, refusing a field the engine does not take.
func strictJSON(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

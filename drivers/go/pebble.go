package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// pebbleOptions: the pebble.Options kvtune sets, by kvtune's names; sizes in bytes.
type pebbleOptions struct {
	CacheSize                   int64  `json:"cache_size"`
	MemTableSize                uint64 `json:"mem_table_size"`
	MemTableStopWritesThreshold int    `json:"mem_table_stop_writes_threshold"`
	L0CompactionThreshold       int    `json:"l0_compaction_threshold"`
	L0StopWritesThreshold       int    `json:"l0_stop_writes_threshold"`
	LBaseMaxBytes               int64  `json:"lbase_max_bytes"`
	TargetFileSize              int64  `json:"target_file_size"`
	BlockSize                   int    `json:"block_size"`
	BloomBitsPerKey             int    `json:"bloom_bits_per_key"`
	Compression                 string `json:"compression"`
	CompactionConcurrency       int    `json:"compaction_concurrency"`
}

var pebbleCompressions = map[string]*sstable.CompressionProfile{
	"none":   sstable.NoCompression,
	"snappy": sstable.SnappyCompression,
	"zstd":   sstable.ZstdCompression,
	"minlz":  sstable.MinLZCompression,
}

type pebbleStore struct {
	db    *pebble.DB
	cache interface{ Unref() }
	// Time writes were stalled, summed from pebble's stall events.
	mu          sync.Mutex
	stallSince  time.Time
	stallMicros uint64
}

// quiet drops pebble's informational log; errors go to stderr.
type quiet struct{}

func (quiet) Infof(string, ...interface{}) {}
func (quiet) Errorf(format string, args ...interface{}) {
	fmt.Fprintf(stderr, format+"\n", args...)
}
func (quiet) Fatalf(format string, args ...interface{}) {
	fmt.Fprintf(stderr, format+"\n", args...)
	panic(fmt.Sprintf(format, args...))
}

func openPebble(dir string, raw json.RawMessage) (store, error) {
	var o pebbleOptions
	if err := strictJSON(raw, &o); err != nil {
		return nil, fmt.Errorf("pebble options: %w", err)
	}
	compression, ok := pebbleCompressions[o.Compression]
	if !ok {
		return nil, fmt.Errorf("pebble compression %q: none, snappy, zstd or minlz", o.Compression)
	}
	s := &pebbleStore{}
	cache := pebble.NewCache(o.CacheSize)
	s.cache = cache
	opts := &pebble.Options{
		Cache:                       cache,
		MemTableSize:                o.MemTableSize,
		MemTableStopWritesThreshold: o.MemTableStopWritesThreshold,
		L0CompactionThreshold:       o.L0CompactionThreshold,
		L0StopWritesThreshold:       o.L0StopWritesThreshold,
		LBaseMaxBytes:               o.LBaseMaxBytes,
		Logger:                      quiet{},
		FormatMajorVersion:          pebble.FormatNewest,
		CompactionConcurrencyRange:  func() (int, int) { return 1, o.CompactionConcurrency },
		EventListener: &pebble.EventListener{
			WriteStallBegin: func(pebble.WriteStallBeginInfo) {
				s.mu.Lock()
				s.stallSince = time.Now()
				s.mu.Unlock()
			},
			WriteStallEnd: func() {
				s.mu.Lock()
				s.stallMicros += uint64(time.Since(s.stallSince).Microseconds())
				s.mu.Unlock()
			},
		},
	}
	opts.TargetFileSizes[0] = o.TargetFileSize
	for i := range opts.Levels {
		opts.Levels[i].BlockSize = o.BlockSize
		opts.Levels[i].Compression = func() *sstable.CompressionProfile { return compression }
		if o.BloomBitsPerKey > 0 {
			opts.Levels[i].FilterPolicy = bloom.FilterPolicy(o.BloomBitsPerKey)
		}
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		cache.Unref()
		return nil, err
	}
	s.db = db
	return s, nil
}

func (s *pebbleStore) write(ops []op) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, o := range ops {
		var err error
		switch o.kind {
		case 'p':
			err = b.Set(o.key, o.value, nil)
		case 'd':
			err = b.Delete(o.key, nil)
		case 'r':
			err = b.DeleteRange(o.key, o.value, nil)
		}
		if err != nil {
			return err
		}
	}
	return s.db.Apply(b, pebble.NoSync)
}

func (s *pebbleStore) get(key []byte) (read, error) {
	value, closer, err := s.db.Get(key)
	if err == pebble.ErrNotFound {
		return read{}, nil
	}
	if err != nil {
		return read{}, err
	}
	r := read{1, uint64(len(value))}
	return r, closer.Close()
}

func (s *pebbleStore) multiGet(keys [][]byte) (read, error) {
	var total read
	for _, k := range keys {
		r, err := s.get(k)
		if err != nil {
			return total, err
		}
		total.entries += r.entries
		total.bytes += r.bytes
	}
	return total, nil
}

func (s *pebbleStore) seekForPrev(key []byte, prefix int) (read, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: key[:min(prefix, len(key))]})
	if err != nil {
		return read{}, err
	}
	// The last entry below key's immediate successor is the last at or below key.
	var r read
	if it.SeekLT(append(bytes.Clone(key), 0)) && withinPrefix(it.Key(), key, prefix) {
		r = read{1, uint64(len(it.Value()))}
	}
	return r, closeIter(it)
}

func (s *pebbleStore) scan(key []byte, limit, prefix int) (read, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return read{}, err
	}
	var r read
	for ok := it.SeekGE(key); ok && r.entries < uint64(limit) && withinPrefix(it.Key(), key, prefix); ok = it.Next() {
		r.entries++
		r.bytes += uint64(len(it.Value()))
	}
	return r, closeIter(it)
}

func closeIter(it *pebble.Iterator) error {
	if err := it.Error(); err != nil {
		_ = it.Close()
		return err
	}
	return it.Close()
}

func (s *pebbleStore) compact(start, end []byte) error {
	return s.db.Compact(context.Background(), start, end, true)
}

func (s *pebbleStore) flush() error { return s.db.Flush() }

// settle polls until no flush or compaction has run for two polls in a row.
func (s *pebbleStore) settle() error {
	quietPolls := 0
	for quietPolls < 2 {
		m := s.db.Metrics()
		if m.Flush.NumInProgress == 0 && m.Compact.NumInProgress == 0 {
			quietPolls++
		} else {
			quietPolls = 0
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func (s *pebbleStore) stats() map[string]uint64 {
	m := s.db.Metrics()
	total := m.Total()
	s.mu.Lock()
	stall := s.stallMicros
	s.mu.Unlock()
	return map[string]uint64{
		"flush_bytes":        total.TableBytesFlushed,
		"compaction_bytes":   total.TableBytesCompacted,
		"stall_micros":       stall,
		"block_cache_hits":   uint64(m.BlockCache.Hits),
		"block_cache_misses": uint64(m.BlockCache.Misses),
		"bloom_useful":       uint64(m.Filter.Hits),
		"bloom_checked":      uint64(m.Filter.Hits + m.Filter.Misses),
		"block_cache":        uint64(m.BlockCache.Size),
		"memtables":          m.MemTable.Size,
		"table_readers":      uint64(m.FileCache.Size),
	}
}

func (s *pebbleStore) close() error {
	err := s.db.Close()
	s.cache.Unref()
	return err
}

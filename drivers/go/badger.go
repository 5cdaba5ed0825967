package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	badgeropts "github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/ristretto/v2"
)

// badgerOptions: the badger.Options kvtune sets, by kvtune's names; sizes in bytes.
type badgerOptions struct {
	MemTableSize            int64   `json:"mem_table_size"`
	NumMemtables            int     `json:"num_memtables"`
	BaseTableSize           int64   `json:"base_table_size"`
	BaseLevelSize           int64   `json:"base_level_size"`
	LevelSizeMultiplier     int     `json:"level_size_multiplier"`
	NumLevelZeroTables      int     `json:"num_level_zero_tables"`
	NumLevelZeroTablesStall int     `json:"num_level_zero_tables_stall"`
	NumCompactors           int     `json:"num_compactors"`
	BlockCacheSize          int64   `json:"block_cache_size"`
	IndexCacheSize          int64   `json:"index_cache_size"`
	BlockSize               int     `json:"block_size"`
	BloomFalsePositive      float64 `json:"bloom_false_positive"`
	Compression             string  `json:"compression"`
	ValueThreshold          int64   `json:"value_threshold"`
	ValueLogFileSize        int64   `json:"value_log_file_size"`
}

var badgerCompressions = map[string]badgeropts.CompressionType{
	"none": badgeropts.None, "snappy": badgeropts.Snappy, "zstd": badgeropts.ZSTD,
}

type badgerStore struct {
	db *badger.DB
	l0 int // L0 tables at which compaction starts
}

func openBadger(dir string, raw json.RawMessage) (store, error) {
	var o badgerOptions
	if err := strictJSON(raw, &o); err != nil {
		return nil, fmt.Errorf("badger options: %w", err)
	}
	compression, ok := badgerCompressions[o.Compression]
	if !ok {
		return nil, fmt.Errorf("badger compression %q: none, snappy or zstd", o.Compression)
	}
	opts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithMemTableSize(o.MemTableSize).
		WithNumMemtables(o.NumMemtables).
		WithBaseTableSize(o.BaseTableSize).
		WithBaseLevelSize(o.BaseLevelSize).
		WithLevelSizeMultiplier(o.LevelSizeMultiplier).
		WithNumLevelZeroTables(o.NumLevelZeroTables).
		WithNumLevelZeroTablesStall(o.NumLevelZeroTablesStall).
		WithNumCompactors(o.NumCompactors).
		WithBlockCacheSize(o.BlockCacheSize).
		WithIndexCacheSize(o.IndexCacheSize).
		WithBlockSize(o.BlockSize).
		WithBloomFalsePositive(o.BloomFalsePositive).
		WithCompression(compression).
		WithValueThreshold(o.ValueThreshold).
		WithValueLogFileSize(o.ValueLogFileSize)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, err
	}
	return &badgerStore{db: db, l0: o.NumLevelZeroTables}, nil
}

// write: one WriteBatch (Badger splits one that outgrows a transaction); a
// range delete deletes the keys it finds in the range, in the store and
// among the batch's earlier puts.
func (s *badgerStore) write(ops []op) error {
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for i, o := range ops {
		var err error
		switch o.kind {
		case 'p':
			err = wb.Set(bytes.Clone(o.key), bytes.Clone(o.value))
		case 'd':
			err = wb.Delete(bytes.Clone(o.key))
		case 'r':
			err = s.deleteRange(wb, o.key, o.value)
			for _, earlier := range ops[:i] {
				if err == nil && earlier.kind == 'p' && bytes.Compare(earlier.key, o.key) >= 0 && bytes.Compare(earlier.key, o.value) < 0 {
					err = wb.Delete(bytes.Clone(earlier.key))
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return wb.Flush()
}

func (s *badgerStore) deleteRange(wb *badger.WriteBatch, from, to []byte) error {
	return s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Seek(from); it.Valid() && bytes.Compare(it.Item().Key(), to) < 0; it.Next() {
			if err := wb.Delete(it.Item().KeyCopy(nil)); err != nil {
				return err
			}
		}
		return nil
	})
}

// valueOf reads an item's value, from the value log where it lives there.
func valueOf(item *badger.Item) (read, error) {
	var r read
	err := item.Value(func(v []byte) error {
		r = read{1, uint64(len(v))}
		return nil
	})
	return r, err
}

func (s *badgerStore) get(key []byte) (read, error) {
	return s.multiGet([][]byte{key})
}

func (s *badgerStore) multiGet(keys [][]byte) (read, error) {
	var total read
	err := s.db.View(func(txn *badger.Txn) error {
		for _, k := range keys {
			item, err := txn.Get(k)
			if err == badger.ErrKeyNotFound {
				continue
			}
			if err != nil {
				return err
			}
			r, err := valueOf(item)
			if err != nil {
				return err
			}
			total.entries += r.entries
			total.bytes += r.bytes
		}
		return nil
	})
	return total, err
}

func (s *badgerStore) seekForPrev(key []byte, prefix int) (read, error) {
	var r read
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: key[:min(prefix, len(key))]})
		defer it.Close()
		// A reverse iterator's Seek finds the last key at or below key.
		it.Seek(key)
		if !it.Valid() || !withinPrefix(it.Item().Key(), key, prefix) {
			return nil
		}
		var err error
		r, err = valueOf(it.Item())
		return err
	})
	return r, err
}

func (s *badgerStore) scan(key []byte, limit, prefix int) (read, error) {
	var r read
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{
			PrefetchValues: true, PrefetchSize: min(limit, 100), Prefix: key[:min(prefix, len(key))],
		})
		defer it.Close()
		for it.Seek(key); it.Valid() && r.entries < uint64(limit); it.Next() {
			one, err := valueOf(it.Item())
			if err != nil {
				return err
			}
			r.entries++
			r.bytes += one.bytes
		}
		return nil
	})
	return r, err
}

// compact: Badger has no compaction of a key range; its compactors run on
// their own, so the call does nothing and takes no time.
func (s *badgerStore) compact(start, end []byte) error { return nil }

// flush: Badger has no call that flushes its memtable; Sync makes the value
// log durable.
func (s *badgerStore) flush() error { return s.db.Sync() }

// settle waits (up to a minute) until L0 holds fewer tables than start a
// compaction: Badger reports no count of compactions in flight.
func (s *badgerStore) settle() error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		levels := s.db.Levels()
		if len(levels) == 0 || levels[0].NumTables < s.l0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func (s *badgerStore) stats() map[string]uint64 {
	stats := map[string]uint64{}
	cached := uint64(0)
	// A cache of size 0 has nil metrics, whose methods read 0.
	for _, m := range []*ristretto.Metrics{s.db.BlockCacheMetrics(), s.db.IndexCacheMetrics()} {
		stats["block_cache_hits"] += m.Hits()
		stats["block_cache_misses"] += m.Misses()
		cached += m.CostAdded() - m.CostEvicted()
	}
	stats["block_cache"] = cached
	return stats
}

func (s *badgerStore) close() error { return s.db.Close() }

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// bboltOptions: the bbolt.Options kvtune sets, by kvtune's names; sizes in bytes.
type bboltOptions struct {
	PageSize        int     `json:"page_size"`
	FillPercent     float64 `json:"fill_percent"`
	FreelistType    string  `json:"freelist_type"`
	NoSync          bool    `json:"no_sync"`
	NoFreelistSync  bool    `json:"no_freelist_sync"`
	InitialMmapSize int     `json:"initial_mmap_size"`
	MmapPopulate    bool    `json:"mmap_populate"`
}

var bucket = []byte("kv")

type bboltStore struct {
	db   *bolt.DB
	fill float64
}

func openBbolt(dir string, raw json.RawMessage) (store, error) {
	var o bboltOptions
	if err := strictJSON(raw, &o); err != nil {
		return nil, fmt.Errorf("bbolt options: %w", err)
	}
	freelist := map[string]bolt.FreelistType{"array": bolt.FreelistArrayType, "hashmap": bolt.FreelistMapType}
	kind, ok := freelist[o.FreelistType]
	if !ok {
		return nil, fmt.Errorf("bbolt freelist_type %q: array or hashmap", o.FreelistType)
	}
	flags := 0
	if o.MmapPopulate {
		flags = syscall.MAP_POPULATE
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	db, err := bolt.Open(filepath.Join(dir, "data.db"), 0o600, &bolt.Options{
		PageSize: o.PageSize, FreelistType: kind, NoFreelistSync: o.NoFreelistSync,
		InitialMmapSize: o.InitialMmapSize, MmapFlags: flags,
	})
	if err != nil {
		return nil, err
	}
	db.NoSync = o.NoSync
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	})
	return &bboltStore{db: db, fill: o.FillPercent}, err
}

// write: one read-write transaction per call, as an application batches.
func (s *bboltStore) write(ops []op) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		b.FillPercent = s.fill
		for _, o := range ops {
			var err error
			switch o.kind {
			case 'p':
				err = b.Put(o.key, o.value)
			case 'd':
				err = b.Delete(o.key)
			case 'r':
				err = deleteRange(b, o.key, o.value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// deleteRange: bbolt has no range delete; the keys found are deleted one by one.
func deleteRange(b *bolt.Bucket, from, to []byte) error {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(from); k != nil && bytes.Compare(k, to) < 0; k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

func (s *bboltStore) get(key []byte) (read, error) { return s.multiGet([][]byte{key}) }

func (s *bboltStore) multiGet(keys [][]byte) (read, error) {
	var r read
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for _, k := range keys {
			if v := b.Get(k); v != nil {
				r.entries++
				r.bytes += uint64(len(v))
			}
		}
		return nil
	})
	return r, err
}

func (s *bboltStore) seekForPrev(key []byte, prefix int) (read, error) {
	var r read
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		k, v := c.Seek(key)
		if k == nil {
			k, v = c.Last()
		} else if !bytes.Equal(k, key) {
			k, v = c.Prev()
		}
		if k != nil && withinPrefix(k, key, prefix) {
			r = read{1, uint64(len(v))}
		}
		return nil
	})
	return r, err
}

func (s *bboltStore) scan(key []byte, limit, prefix int) (read, error) {
	var r read
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.Seek(key); k != nil && r.entries < uint64(limit) && withinPrefix(k, key, prefix); k, v = c.Next() {
			r.entries++
			r.bytes += uint64(len(v))
		}
		return nil
	})
	return r, err
}

// compact, flush, settle: a B+tree has no compaction and nothing in memory
// that is not on disk after a commit; they do nothing and take no time.
func (s *bboltStore) compact(start, end []byte) error { return nil }
func (s *bboltStore) flush() error                    { return s.db.Sync() }
func (s *bboltStore) settle() error                   { return nil }

// stats: bbolt keeps no cache or compaction counters; its memory is the
// mapped file, page cache that the cgroup counts.
func (s *bboltStore) stats() map[string]uint64 { return map[string]uint64{} }

func (s *bboltStore) close() error { return s.db.Close() }

// Package server exposes a tiny HTTP API.
package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

const usage = `usage: server [flags]
  -addr string   listen address ("{host}:{port}")
  -v             verbose )`

// Item is one stored record.
type Item struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Store keeps items in memory.
type Store struct {
	items map[int]Item
	next  int
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{items: map[int]Item{}, next: 1}
}

// Add stores an item and returns its id.
func (s *Store) Add(name string) int {
	id := s.next
	s.items[id] = Item{ID: id, Name: strings.TrimSpace(name)}
	s.next++
	return id
}

func (s *Store) handler(w http.ResponseWriter, r *http.Request) {
	sep := '}'
	defer func() {
		if err := recover(); err != nil {
			http.Error(w, fmt.Sprint("panic: {", err), 500)
		}
	}()
	switch r.Method {
	case http.MethodPost:
		id := s.Add(r.URL.Query().Get("name"))
		fmt.Fprintf(w, "%d%c\n", id, sep)
	default:
		_ = json.NewEncoder(w).Encode(s.items)
	}


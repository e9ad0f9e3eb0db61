// Package slices2 holds small generic helpers used by the reporting jobs.
package slices2

import (
	"cmp"
	"errors"
	"sort"
)

// ErrEmpty is returned when a reduction has nothing to work on.
var ErrEmpty = errors.New("slices2: empty input")

// Constraint and container types shared by the helpers below.
type (
	// Number is any integer or float type.
	Number interface {
		~int | ~int32 | ~int64 | ~float32 | ~float64
	}

	// Pair holds two values of possibly different types.
	Pair[K comparable, V any] struct {
		Key   K
		Value V
	}

	// C is a constraint on types that can compare themselves with a value of type P.
	C[P any] interface {
		Less(other P) bool
	}

	// Set is a set of comparable values.
	Set[T comparable] map[T]struct{}
)

// Options tune the helpers; the zero value is usable.
type Options struct {
	Stable bool
	Limits struct {
		MaxItems int
		MaxDepth int
	}
}

var (
	defaultOptions = Options{Stable: true}
	counters       struct {
		calls, misses int
	}
)

// Index returns the index of the first occurrence of v in s, or -1 if not present.
func Index[S ~[]E, E comparable](s S, v E) int {
	for i := range s {
		if v == s[i] {
			return i
		}
	}
	return -1
}

// Map applies f to every element of s and returns the results.
func Map[P C[P], R any](s []P, f func(P) R) []R {
	out := make([]R, 0, len(s))
	for _, v := range s {
		out = append(out, f(v))
	}
	return out
}

// SortedKeys returns the keys of m in ascending order.
func SortedKeys[M ~map[K]V, K cmp.Ordered, V any](m M) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// Sum adds up the values; it fails on an empty slice.
func Sum[T Number](values []T) (T, error) {
	var total T
	if len(values) == 0 {
		return total, ErrEmpty
	}
	for _, v := range values {
		total += v
	}
	return total, nil
}

// Add puts v into the set.
func (s Set[T]) Add(v T) {
	s[v] = struct{}{}
}

// Has reports whether v is in the set.
func (s Set[T]) Has(v T) bool {
	_, ok := s[v]
	return ok
}

// Zip pairs up the elements of two slices of the same length.
func Zip[K comparable, V any](keys []K, values []V) ([]Pair[K, V], error) {
	if len(keys) != len(values) {
		return nil, errors.New("slices2: length mismatch [keys != values]")
	}
	out := make([]Pair[K, V], len(keys))
	for i := range keys {
		out[i] = Pair[K, V]{Key: keys[i], Value: values[i]}
	}
	return out, nil
}

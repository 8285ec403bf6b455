// Package timestamp is the one place payd decides how a time looks on the
// wire: RFC 3339 in UTC with a Z and whole seconds, in every response, event
// and webhook body. The database keeps microseconds (ordering, schedules and
// leases need them); what a client reads is truncated here.
package timestamp

import (
	"reflect"
	"sync"
	"time"
	"unsafe"
)

// Layout is the wire layout of every timestamp.
const Layout = time.RFC3339

// Format renders t as payd's wire timestamp: UTC, whole seconds.
func Format(t time.Time) string { return t.UTC().Truncate(time.Second).Format(Layout) }

// Wire returns t as the wire shows it: UTC, truncated to the second.
func Wire(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

var timeType = reflect.TypeFor[time.Time]()

// Seconds returns a copy of v in which every time.Time it reaches (through
// struct fields, pointers, slices, arrays, maps and interfaces) is in UTC and
// truncated to the second, so that encoding/json renders it with second
// precision. v itself is never modified: what it points to may be shared
// with other goroutines (cached objects), so every level that holds a time
// is copied. A type that holds no time is returned as is, without copying;
// which types can hold one is worked out once per type.
func Seconds(v any) any {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if !mayHoldTime(rv.Type()) {
		return v
	}
	if wireAlready(v, rv.Type()) {
		// Every time it holds is already as the wire shows it (the usual
		// case: objects are read from the database in UTC and made
		// whole-second by their own views): no copy is needed.
		return v
	}
	return normalize(rv).Interface()
}

// wireAlready reports whether v, of type t, holds no time that normalize
// would change. It reads the value v holds in place: for a pointer type the
// interface holds the pointer itself; for every type that is not
// pointer-shaped (a struct or array larger than a pointer, a slice) it holds
// a pointer to a copy of the value. For the rest it answers false, and
// Seconds copies as it always did.
func wireAlready(v any, t reflect.Type) bool {
	data := (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1] // an interface is (type, data)
	switch t.Kind() {
	case reflect.Pointer:
		return data == nil || isWire(t.Elem(), data)
	case reflect.Struct, reflect.Array:
		return t.Size() > unsafe.Sizeof(uintptr(0)) && isWire(t, data)
	case reflect.Slice:
		return isWire(t, data)
	}
	return false
}

// isWire reports whether every time.Time that normalize would replace in
// the value of type t at p is already in UTC with whole seconds, so that
// normalize would change nothing. It reads the value in place, allocating
// nothing; maps and interfaces it does not look into: it answers false for
// them whenever they may hold a time, and normalize copies.
func isWire(t reflect.Type, p unsafe.Pointer) bool {
	if t == timeType {
		tm := (*time.Time)(p)
		return tm.Location() == time.UTC && tm.Nanosecond() == 0
	}
	if !mayHoldTime(t) {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer:
		q := *(*unsafe.Pointer)(p)
		return q == nil || isWire(t.Elem(), q)
	case reflect.Slice:
		h := (*struct {
			data     unsafe.Pointer
			len, cap int
		})(p)
		et := t.Elem()
		for i := range h.len {
			if !isWire(et, unsafe.Add(h.data, uintptr(i)*et.Size())) {
				return false
			}
		}
		return true
	case reflect.Array:
		et := t.Elem()
		for i := range t.Len() {
			if !isWire(et, unsafe.Add(p, uintptr(i)*et.Size())) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for _, f := range fieldsOf(t) {
			if !isWire(f.typ, unsafe.Add(p, f.offset)) {
				return false
			}
		}
		return true
	}
	return false // a map or an interface that may hold a time
}

// timeField is a struct field normalize looks into: exported or embedded,
// and of a type that may hold a time.
type timeField struct {
	typ    reflect.Type
	offset uintptr
}

// fields caches fieldsOf per struct type.
var fields sync.Map // reflect.Type -> []timeField

func fieldsOf(t reflect.Type) []timeField {
	if v, ok := fields.Load(t); ok {
		return v.([]timeField)
	}
	var fs []timeField
	for i := range t.NumField() {
		f := t.Field(i)
		if (f.IsExported() || f.Anonymous) && mayHoldTime(f.Type) {
			fs = append(fs, timeField{f.Type, f.Offset})
		}
	}
	fields.Store(t, fs)
	return fs
}

// holds caches mayHoldTime per type.
var holds sync.Map // reflect.Type -> bool

// mayHoldTime reports whether a value of t can reach a time.Time (an
// interface always may).
func mayHoldTime(t reflect.Type) bool {
	if v, ok := holds.Load(t); ok {
		return v.(bool)
	}
	// A recursive type reaches itself: assume no while it is examined, the
	// answer for the type as a whole comes from its other parts.
	holds.Store(t, false)
	r := computeHold(t)
	holds.Store(t, r)
	return r
}

func computeHold(t reflect.Type) bool {
	if t == timeType {
		return true
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return mayHoldTime(t.Elem())
	case reflect.Map:
		return mayHoldTime(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if (f.IsExported() || f.Anonymous) && mayHoldTime(f.Type) {
				return true
			}
		}
	}
	return false
}

// normalize returns a copy of v with its times truncated; v is left alone.
func normalize(v reflect.Value) reflect.Value {
	t := v.Type()
	if t == timeType {
		tm := v.Interface().(time.Time)
		return reflect.ValueOf(Wire(tm))
	}
	if !mayHoldTime(t) {
		return v
	}
	switch t.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(t).Elem()
		out.Set(normalize(v.Elem()))
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(t.Elem())
		out.Elem().Set(normalize(v.Elem()))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(normalize(v.Index(i)))
		}
		return out
	case reflect.Array:
		out := reflect.New(t).Elem()
		for i := range v.Len() {
			out.Index(i).Set(normalize(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		it := v.MapRange()
		for it.Next() {
			out.SetMapIndex(it.Key(), normalize(it.Value()))
		}
		return out
	case reflect.Struct:
		// Copy the whole struct first (unexported fields included, so a
		// type's own MarshalJSON sees all it needs), then replace the fields
		// that can hold a time with normalised copies.
		out := reflect.New(t).Elem()
		out.Set(v)
		for i := range t.NumField() {
			f := t.Field(i)
			if !mayHoldTime(f.Type) {
				continue
			}
			dst := out.Field(i)
			if !f.IsExported() {
				if !f.Anonymous {
					continue // encoding/json never sees it
				}
				// An embedded unexported struct's exported fields are
				// promoted by encoding/json; out is addressable, so its
				// field can be set through its address.
				dst = reflect.NewAt(f.Type, unsafe.Pointer(dst.UnsafeAddr())).Elem()
			}
			dst.Set(normalize(dst))
		}
		return out
	}
	return v
}

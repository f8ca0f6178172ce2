package krt

import (
	"slices"
	"unsafe"
)

// Fresh memory and the zero page. A large array the runtime takes fresh
// from the operating system is not zeroed (it is zero already) and not
// mapped: each page is mapped when first touched. When the first touch
// is a read, the kernel maps its shared zero page, and the first write
// then replaces that mapping and must flush the old one from the TLB of
// every core running the process, by an interrupt to each. Such reads
// are the rule here: a hash index probes an entry before it writes it,
// and while the garbage collector marks, storing a pointer into an array
// reads the old pointer first (the write barrier). On one core nothing
// else runs the process and the flush is local; on two it interrupts the
// other goroutine's core on every page: a build of 10k services and 100k
// pods on two cores spent about 45 ms of CPU in these faults, a tenth of
// it, most of them filling the workloads' items. touchFrom writes each
// page of a new array once, as the array is made, so that the page is
// mapped by a write and no mapping has to be flushed.

// touchMin is the smallest array worth touching: smaller ones come from
// spans the runtime has mapped already.
const touchMin = 64 << 10

// touchStride is at most a page: any smaller stride touches every page.
const touchStride = 4096

// touchFrom writes a zero byte into every page of s's array from element
// from to its capacity, elements the caller knows to hold zeros (a new
// array's), so that the values are unchanged. Stale values beyond a
// slice's length in an array in use need not be zero: a byte written
// into one could break a pointer.
func touchFrom[E any](s []E, from int) {
	var zero E
	size := unsafe.Sizeof(zero)
	n := uintptr(cap(s)-from) * size
	if n < touchMin {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(s[from:cap(s)]))
	for off := uintptr(0); off < n; off += touchStride {
		*(*byte)(unsafe.Add(p, off)) = 0
	}
}

// growTouched is slices.Grow, touching the new array's pages beyond the
// old capacity when it makes one: append leaves those zero, and a large
// new array unmapped (see touchFrom).
func growTouched[E any](s []E, n int) []E {
	old := cap(s)
	s = slices.Grow(s, n)
	if cap(s) != old {
		touchFrom(s, old)
	}
	return s
}

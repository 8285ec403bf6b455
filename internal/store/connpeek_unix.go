//go:build unix

package store

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// serverSpoke reports whether an idle pooled connection has something to
// read, or its peer closed it, without taking it from the socket: a look at
// the socket's receive queue (MSG_PEEK, non-blocking), one system call and no
// round trip. An idle PostgreSQL connection is sent nothing unless its
// backend is ending it (pg_terminate_backend, a restart, idle timeouts): the
// server writes a FATAL error and closes the socket. A connection it reports
// is pinged before reuse, and the ping's failure makes database/sql take
// another, so a request never meets a connection the server had already
// ended while it sat in the pool.
func serverSpoke(c net.Conn) bool {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	// Control, not Read: Read takes the descriptor's read lock, which the
	// driver's background reader may hold, parked until data arrives, on a
	// connection that sits idle in the pool; a peek needs no lock and takes
	// nothing from the socket.
	var buf [1]byte
	var rerr error
	if err := rc.Control(func(fd uintptr) {
		_, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	}); err != nil {
		return true
	}
	switch {
	case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK), errors.Is(rerr, syscall.EINTR):
		return false // nothing waiting: the connection is as it was left
	case rerr != nil:
		return true // reset or otherwise broken
	default:
		return true // n > 0: a message arrived; n == 0: the peer closed
	}
}

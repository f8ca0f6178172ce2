package xdstest_test

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/meshd/meshd/xds/xdstest"
)

// handshake runs a TLS handshake between server and client configs over
// a loopback TCP connection and returns the URIs of the client
// certificate the server verified, and the server's error.
func handshake(t *testing.T, server, client *tls.Config) ([]string, error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	done := make(chan error, 1)
	go func() {
		c, err := tls.Dial("tcp", lis.Addr().String(), client)
		if err == nil {
			// Read until the server closes: TLS 1.3 reports a refused
			// client certificate on the first read.
			_, err = c.Read(make([]byte, 1))
			c.Close()
		}
		done <- err
	}()
	conn, err := lis.Accept()
	if err != nil {
		t.Fatal(err)
	}
	srv := tls.Server(conn, server)
	err = srv.Handshake()
	var uris []string
	if err == nil {
		for _, c := range srv.ConnectionState().PeerCertificates {
			for _, u := range c.URIs {
				uris = append(uris, u.String())
			}
		}
	}
	conn.Close()
	<-done
	return uris, err
}

func TestCA(t *testing.T) {
	ca := xdstest.NewCA(t)
	server := ca.ServerConfig(ca.Server(t), true)
	const id = "spiffe://cluster.local/ns/a/sa/default"

	uris, err := handshake(t, server, ca.ClientConfig(ca.Client(t, id)))
	if err != nil || len(uris) != 1 || uris[0] != id {
		t.Fatalf("mTLS with a client certificate: %v, peer URIs %v", err, uris)
	}
	if _, err := handshake(t, server, ca.ClientConfig()); err == nil {
		t.Fatal("mTLS without a client certificate succeeded")
	}
	other := xdstest.NewCA(t)
	if _, err := handshake(t, server, ca.ClientConfig(other.Client(t))); err == nil {
		t.Fatal("a client certificate of another CA was accepted")
	}
	if _, err := handshake(t, ca.ServerConfig(ca.Server(t), false), ca.ClientConfig()); err != nil {
		t.Fatalf("TLS without client certificates: %v", err)
	}
}

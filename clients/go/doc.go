// Package memoryd is the Go client of memoryd. The generated messages and gRPC clients
// are in [github.com/memoryd/memoryd/clients/go/gen/memoryd/v1] (package memorydv1,
// generated from proto/ by `make clients`); this package only dials.
package memoryd

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Dial opens a client connection to a daemon at host:port or unix:/path/to.sock.
// Without options it connects insecurely: the sidecar listens on loopback or a Unix
// socket. Pass grpc.WithTransportCredentials for TLS.
func Dial(address string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	return grpc.NewClient(address, opts...)
}

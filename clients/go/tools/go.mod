// Pinned protoc plugins for generating the Go client; `make clients-deps` installs them
// into ../.bin with `go install tool`. A module of its own so the client's go.mod
// carries no tool dependencies.
module github.com/memoryd/memoryd/clients/go/tools

go 1.25.0

tool (
	google.golang.org/grpc/cmd/protoc-gen-go-grpc
	google.golang.org/protobuf/cmd/protoc-gen-go
)

require (
	google.golang.org/grpc/cmd/protoc-gen-go-grpc v1.6.2 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

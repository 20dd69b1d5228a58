// Command rememberrecall remembers two facts and recalls the one a question is about.
//
//	MEMORYD_ADDRESS=127.0.0.1:50051 go run ./examples/rememberrecall
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	memoryd "github.com/memoryd/memoryd/clients/go"
	memorydv1 "github.com/memoryd/memoryd/clients/go/gen/memoryd/v1"
)

func main() {
	address := os.Getenv("MEMORYD_ADDRESS")
	if address == "" {
		address = "127.0.0.1:50051"
	}
	conn, err := memoryd.Dial(address)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	memory := memorydv1.NewMemoryServiceClient(conn)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, content := range []string{
		"The user prefers a dark blue colour scheme for slides",
		"The weekly team meeting moved to Thursday at 10:00",
	} {
		if _, err := memory.Remember(ctx, &memorydv1.RememberRequest{AgentId: "example", Content: content}); err != nil {
			log.Fatal(err)
		}
	}
	recall, err := memory.Recall(ctx, &memorydv1.RecallRequest{
		AgentId: "example", Query: "which colours does the user like?", Limit: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, result := range recall.GetResults() {
		fmt.Printf("%.3f  %s\n", result.GetScore(), result.GetMemory().GetContent())
	}
}

// Command loadgen is make bench's closed-loop Recall load: CONCURRENCY goroutines,
// each sending its next query as soon as the previous answer arrives, for SECONDS.
// It uses the generated Go client, whose own cost per call (tens of microseconds)
// leaves the box's cores to the daemon. Prints one JSON line.
//
//	loadgen ADDRESS AGENT QUERIES.f32 CONCURRENCY SECONDS
//
// QUERIES.f32 holds the query vectors as little-endian float32, 384 per query; a
// QUERIES.txt holds query texts instead, one per line (the daemon embeds each).
// `loadgen mixed ADDRESS SPEC.json` is the mixed-load mode (mixed.go).
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	memoryd "github.com/memoryd/memoryd/clients/go"
	memorydv1 "github.com/memoryd/memoryd/clients/go/gen/memoryd/v1"
	"google.golang.org/grpc"
)

const dimension = 384

// connections spreads the clients over a few HTTP/2 connections, as load.py does.
const connections = 4

type result struct {
	Clients int     `json:"clients"`
	RPS     float64 `json:"rps"`
	P50     float64 `json:"p50"`
	P99     float64 `json:"p99"`
	Errors  int     `json:"errors"`
	Client  string  `json:"client"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "mixed" {
		runMixed(os.Args[2:])
		return
	}
	if len(os.Args) != 6 {
		fail(fmt.Errorf("usage: loadgen ADDRESS AGENT QUERIES.f32 CONCURRENCY SECONDS"))
	}
	address, agent, path := os.Args[1], os.Args[2], os.Args[3]
	concurrency, err := strconv.Atoi(os.Args[4])
	if err != nil || concurrency < 1 {
		fail(fmt.Errorf("CONCURRENCY must be a positive integer"))
	}
	seconds, err := strconv.ParseFloat(os.Args[5], 64)
	if err != nil || seconds <= 0 {
		fail(fmt.Errorf("SECONDS must be positive"))
	}
	requests, err := readQueries(path, agent)
	if err != nil {
		fail(err)
	}
	conns := make([]*grpc.ClientConn, min(connections, concurrency))
	stubs := make([]memorydv1.MemoryServiceClient, len(conns))
	for i := range conns {
		if conns[i], err = memoryd.Dial(address); err != nil {
			fail(err)
		}
		defer conns[i].Close()
		stubs[i] = memorydv1.NewMemoryServiceClient(conns[i])
		if _, err = stubs[i].Recall(context.Background(), requests[0]); err != nil {
			fail(err)
		}
	}

	latencies := make([][]time.Duration, concurrency)
	errors := make([]int, concurrency)
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for c := 0; c < concurrency; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			stub := stubs[c%len(stubs)]
			for n := c; time.Now().Before(deadline); n += concurrency {
				t0 := time.Now()
				if _, err := stub.Recall(context.Background(), requests[n%len(requests)]); err != nil {
					errors[c]++
					continue
				}
				latencies[c] = append(latencies[c], time.Since(t0))
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)

	var all []float64
	out := result{Clients: concurrency, Client: "go"}
	for c := range latencies {
		for _, d := range latencies[c] {
			all = append(all, float64(d.Microseconds())/1000)
		}
		out.Errors += errors[c]
	}
	sort.Float64s(all)
	out.RPS = round(float64(len(all))/elapsed.Seconds(), 1)
	out.P50 = round(percentile(all, 50), 3)
	out.P99 = round(percentile(all, 99), 3)
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func readQueries(path, agent string) ([]*memorydv1.RecallRequest, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".txt") {
		var requests []*memorydv1.RecallRequest
		for _, line := range strings.Split(string(raw), "\n") {
			if line != "" {
				requests = append(requests, &memorydv1.RecallRequest{AgentId: agent, Query: line, Limit: 10})
			}
		}
		if len(requests) == 0 {
			return nil, fmt.Errorf("%s: no query text", path)
		}
		return requests, nil
	}
	if len(raw) == 0 || len(raw)%(4*dimension) != 0 {
		return nil, fmt.Errorf("%s: want a multiple of %d float32 values", path, dimension)
	}
	var requests []*memorydv1.RecallRequest
	for off := 0; off < len(raw); off += 4 * dimension {
		vector := make([]float32, dimension)
		for i := range vector {
			vector[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[off+4*i:]))
		}
		requests = append(requests, &memorydv1.RecallRequest{AgentId: agent, QueryEmbedding: vector, Limit: 10})
	}
	return requests, nil
}

// percentile of sorted values, by linear interpolation (NumPy's default).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(rank-float64(lo))
}

func round(x float64, digits int) float64 {
	scale := math.Pow(10, float64(digits))
	return math.Round(x*scale) / scale
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(2)
}

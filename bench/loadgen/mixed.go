package main

// The mixed-load mode of make bench (issue 20): CLIENTS goroutines, each bound to one
// agent, each sending its next call as soon as the previous answer arrives, for
// SECONDS, the method of each call drawn from MIX (weights). Methods: Remember (text,
// embedded by the daemon), RememberBatch (BATCH texts), SetMemory (one of KEYS keys
// per client) and Recall (hybrid, a text query). Prints one JSON line with RPS,
// p50/p95/p99 and errors per method.
//
//	loadgen mixed ADDRESS SPEC.json
//
// SPEC.json: {"clients": 32, "seconds": 60, "agents": [...], "mix": {"Recall": 60, ...},
// "texts": [...], "queries": [...], "batch": 20, "keys": 50, "seed": 1}
//
// Optional: "rate" (calls per second over all clients: each client paced to its
// share, an open loop at a fixed load; 0 = closed loop) and "timeline_s" (> 0: also
// per window of that many seconds, the calls, p50, p99 and longest call of each
// method, for a soak's plot). Every method reports its longest call ("max").

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"sync"
	"time"

	memoryd "github.com/memoryd/memoryd/clients/go"
	memorydv1 "github.com/memoryd/memoryd/clients/go/gen/memoryd/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

var methods = []string{"Remember", "RememberBatch", "SetMemory", "Recall"}

type mixSpec struct {
	Clients int                `json:"clients"`
	Seconds float64            `json:"seconds"`
	Agents  []string           `json:"agents"`
	Mix     map[string]float64 `json:"mix"`
	Texts   []string           `json:"texts"`
	Queries []string           `json:"queries"`
	Batch   int                `json:"batch"`
	Keys    int                `json:"keys"`
	Seed    int64              `json:"seed"`
	Rate    float64            `json:"rate"`
	Window  float64            `json:"timeline_s"`
}

type window struct {
	Start float64  `json:"t"`
	Calls int      `json:"calls"`
	P50   *float64 `json:"p50"`
	P99   *float64 `json:"p99"`
	Max   *float64 `json:"max"`
}

type methodStats struct {
	Calls       int      `json:"calls"`
	RPS         float64  `json:"rps"`
	P50         *float64 `json:"p50"` // null when no call succeeded
	P95         *float64 `json:"p95"`
	P99         *float64 `json:"p99"`
	Max         *float64 `json:"max"`
	Errors      int      `json:"errors"`
	ErrorSample string   `json:"error_sample,omitempty"`
	Timeline    []window `json:"timeline,omitempty"`
}

type mixResult struct {
	Clients int                     `json:"clients"`
	Seconds float64                 `json:"seconds"`
	Methods map[string]*methodStats `json:"methods"`
}

type sample struct {
	method  int
	at      time.Duration // since the start, when the call began
	latency time.Duration
	err     error
}

func runMixed(args []string) {
	if len(args) != 2 {
		fail(fmt.Errorf("usage: loadgen mixed ADDRESS SPEC.json"))
	}
	raw, err := os.ReadFile(args[1])
	if err != nil {
		fail(err)
	}
	var spec mixSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		fail(err)
	}
	if spec.Clients < 1 || spec.Seconds <= 0 || len(spec.Agents) == 0 || len(spec.Texts) == 0 ||
		len(spec.Queries) == 0 || spec.Batch < 1 || spec.Keys < 1 {
		fail(fmt.Errorf("%s: clients, seconds, agents, texts, queries, batch, keys needed", args[1]))
	}
	weights := make([]float64, len(methods))
	total := 0.0
	for i, m := range methods {
		weights[i] = spec.Mix[m]
		total += weights[i]
	}
	if total <= 0 {
		fail(fmt.Errorf("%s: the mix has no weight", args[1]))
	}
	conns := make([]*grpc.ClientConn, min(connections, spec.Clients))
	stubs := make([]memorydv1.MemoryServiceClient, len(conns))
	for i := range conns {
		if conns[i], err = memoryd.Dial(args[0]); err != nil {
			fail(err)
		}
		defer conns[i].Close()
		stubs[i] = memorydv1.NewMemoryServiceClient(conns[i])
	}
	samples := make([][]sample, spec.Clients)
	start := time.Now()
	deadline := start.Add(time.Duration(spec.Seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for c := 0; c < spec.Clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(spec.Seed*1000 + int64(c)))
			stub := stubs[c%len(stubs)]
			agent := spec.Agents[c%len(spec.Agents)]
			var every time.Duration
			if spec.Rate > 0 {
				every = time.Duration(float64(spec.Clients) / spec.Rate * float64(time.Second))
			}
			next := start.Add(time.Duration(c) * every / time.Duration(max(1, spec.Clients)))
			for n := 0; time.Now().Before(deadline); n++ {
				if every > 0 {
					time.Sleep(time.Until(next))
					next = next.Add(every)
				}
				m := pick(rng, weights, total)
				t0 := time.Now()
				err := call(stub, &spec, rng, methods[m], agent, c, n)
				samples[c] = append(samples[c], sample{m, t0.Sub(start), time.Since(t0), err})
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	out := mixResult{Clients: spec.Clients, Seconds: round(elapsed, 2), Methods: map[string]*methodStats{}}
	latencies := make([][]float64, len(methods))
	windows := make([]map[int][]float64, len(methods))
	for i := range windows {
		windows[i] = map[int][]float64{}
	}
	for _, mine := range samples {
		for _, s := range mine {
			stats := out.Methods[methods[s.method]]
			if stats == nil {
				stats = &methodStats{}
				out.Methods[methods[s.method]] = stats
			}
			if s.err != nil {
				stats.Errors++
				if stats.ErrorSample == "" {
					stats.ErrorSample = s.err.Error()
				}
				continue
			}
			ms := float64(s.latency.Microseconds()) / 1000
			latencies[s.method] = append(latencies[s.method], ms)
			if spec.Window > 0 {
				w := int(s.at.Seconds() / spec.Window)
				windows[s.method][w] = append(windows[s.method][w], ms)
			}
		}
	}
	for i, m := range methods {
		stats := out.Methods[m]
		if stats == nil {
			continue
		}
		sort.Float64s(latencies[i])
		stats.Calls = len(latencies[i])
		stats.RPS = round(float64(stats.Calls)/elapsed, 1)
		if len(latencies[i]) > 0 {
			stats.P50 = ptr(round(percentile(latencies[i], 50), 3))
			stats.P95 = ptr(round(percentile(latencies[i], 95), 3))
			stats.P99 = ptr(round(percentile(latencies[i], 99), 3))
			stats.Max = ptr(latencies[i][len(latencies[i])-1])
		}
		stats.Timeline = timeline(windows[i], spec.Window)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

// timeline: each window's calls, p50, p99 and longest call, in time order.
func timeline(windows map[int][]float64, width float64) []window {
	var keys []int
	for k := range windows {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var out []window
	for _, k := range keys {
		v := windows[k]
		sort.Float64s(v)
		out = append(out, window{
			Start: round(float64(k)*width, 1), Calls: len(v),
			P50: ptr(round(percentile(v, 50), 3)), P99: ptr(round(percentile(v, 99), 3)),
			Max: ptr(v[len(v)-1]),
		})
	}
	return out
}

func pick(rng *rand.Rand, weights []float64, total float64) int {
	x := rng.Float64() * total
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// call makes one call of “method“; contents carry the client and call number so
// that no two writes are duplicates the daemon would merge.
func call(
	stub memorydv1.MemoryServiceClient, spec *mixSpec, rng *rand.Rand, method, agent string, c, n int,
) error {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	text := func(i int) string {
		return fmt.Sprintf("%s (client %d, call %d.%d)", spec.Texts[rng.Intn(len(spec.Texts))], c, n, i)
	}
	var err error
	switch method {
	case "Remember":
		_, err = stub.Remember(ctx, &memorydv1.RememberRequest{AgentId: agent, Content: text(0)})
	case "RememberBatch":
		items := make([]*memorydv1.RememberRequest, spec.Batch)
		for i := range items {
			items[i] = &memorydv1.RememberRequest{Content: text(i)}
		}
		_, err = stub.RememberBatch(ctx, &memorydv1.RememberBatchRequest{AgentId: agent, Items: items})
	case "SetMemory":
		_, err = stub.SetMemory(ctx, &memorydv1.SetMemoryRequest{
			AgentId: agent,
			Key:     fmt.Sprintf("/bench/client%d/key%d", c, rng.Intn(spec.Keys)),
			Content: structpb.NewStringValue(text(0)),
			Source:  &memorydv1.Provenance{Kind: memorydv1.ProvenanceKind_PROVENANCE_KIND_USER},
		})
	default:
		hybrid := true
		_, err = stub.Recall(ctx, &memorydv1.RecallRequest{
			AgentId: agent, Query: spec.Queries[rng.Intn(len(spec.Queries))], Limit: 10, Hybrid: &hybrid,
		})
	}
	return err
}

func ptr(v float64) *float64 { return &v }

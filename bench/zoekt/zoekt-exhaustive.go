// Command zoekt-exhaustive times Zoekt's in-process searcher on every match of one query, with each of its match
// limits lifted, for trawl's bench:exhaustive (bench/search-exhaustive.ts), which runs it beside trawl and ripgrep.
// It is built inside a Zoekt checkout (docs/benchmarks.md, "Peers"); trawl itself never builds or runs Go.
//
//	zoekt-exhaustive INDEX_DIR QUERY
//
// Prints one JSON line: the run times in milliseconds, files and matches found. Runs are timed after warm-up runs
// (for WARM_UP, at most MAX_WARM_UP of them), as trawl's are; a query slower than SLOW runs once.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/google/zoekt"
	"github.com/google/zoekt/query"
	"github.com/google/zoekt/shards"
)

const (
	warmUp    = time.Second
	maxWarmUp = 500
	runs      = 3
	slow      = 10 * time.Second
)

type outcome struct {
	Runs    []float64 `json:"runs"`
	Files   int       `json:"files"`
	Matches int       `json:"matches"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: zoekt-exhaustive INDEX_DIR QUERY")
		os.Exit(2)
	}
	searcher, err := shards.NewDirectorySearcher(os.Args[1])
	if err != nil {
		fail(err)
	}
	defer searcher.Close()
	q, err := query.Parse(os.Args[2])
	if err != nil {
		fail(err)
	}
	// Every limit lifted: zero would mean Zoekt's defaults (SetDefaults), which stop a shard early.
	options := &zoekt.SearchOptions{
		ShardMaxMatchCount:     math.MaxInt32,
		TotalMaxMatchCount:     math.MaxInt32,
		ShardMaxImportantMatch: math.MaxInt32,
		TotalMaxImportantMatch: math.MaxInt32,
	}
	var result outcome
	timed := func() time.Duration {
		started := time.Now()
		found, err := searcher.Search(context.Background(), q, options)
		if err != nil {
			fail(err)
		}
		result.Files, result.Matches = found.Stats.FileCount, found.Stats.MatchCount
		return time.Since(started)
	}
	record := func(run time.Duration) { result.Runs = append(result.Runs, float64(run.Microseconds())/1000) }
	first := timed()
	if first >= slow {
		record(first)
	} else {
		for run, spent := 1, first; run < maxWarmUp && spent < warmUp; run++ {
			spent += timed()
		}
		for run := 0; run < runs; run++ {
			record(timed())
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "zoekt-exhaustive:", err)
	os.Exit(1)
}

package harness

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/merchants"
)

// CostCurve is the command line and the run of a cost-curve program
// (bench/scale, bench/reports): a payd on a fresh database, measured at
// each of several ascending database sizes, seeded straight in SQL between
// the measurements.
type CostCurve struct {
	DB       *Database
	Duration time.Duration // of each step
	Max      int64         // requests per step at most
	Explain  bool          // print the query plans at each size
	Sizes    []int         // set by Parse
	Levels   []int         // concurrency levels, set by Parse

	sizes, clients string
}

// CostCurveDefaults are a program's own defaults for the shared flags.
type CostCurveDefaults struct {
	Sizes, SizesUsage string
	Max               int64
	Explain           bool
}

// CostCurveFlags registers -engine, -database-url, -db, -seed, -duration,
// -max, -clients and -explain on fs.
func CostCurveFlags(fs *flag.FlagSet, d CostCurveDefaults) *CostCurve {
	c := &CostCurve{DB: DatabaseFlags(fs)}
	fs.StringVar(&c.sizes, "seed", d.Sizes, d.SizesUsage)
	fs.DurationVar(&c.Duration, "duration", 2*time.Second, "duration of each step")
	fs.Int64Var(&c.Max, "max", d.Max, "at most this many requests per step")
	fs.StringVar(&c.clients, "clients", "1,16", "concurrency levels")
	fs.BoolVar(&c.Explain, "explain", d.Explain, "print the plans of the measured queries at each size")
	return c
}

// Parse checks the sizes and concurrency levels once the flags are parsed.
func (c *CostCurve) Parse() error {
	var err error
	if c.Levels, err = Levels("clients", c.clients); err != nil {
		return err
	}
	c.Sizes, err = Sizes("seed", c.sizes)
	return err
}

// Start runs payd (StartPayd) and creates n merchants named name 0..n-1.
func (c *CostCurve) Start(ctx context.Context, name string, n int, opts ...Option) (*app.Main, []merchants.Created, func(), error) {
	m, cleanup, err := c.DB.Start(ctx, opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	out := make([]merchants.Created, n)
	for i := range out {
		if out[i], err = NewMerchant(ctx, m, name+" "+strconv.Itoa(i), ""); err != nil {
			cleanup()
			return nil, nil, nil, err
		}
	}
	return m, out, cleanup, nil
}

// Header is the first line of the program's output.
func (c *CostCurve) Header() string {
	return fmt.Sprintf("engine=%s step=%s max=%d clients=%s cores=2 load=%s", c.DB.Engine, c.Duration, c.Max, c.clients, LoadAvg())
}

// Walk grows the database through each size and measures at it: seed(n)
// brings the database up to size n (returning what it did, for the output)
// unless it is there already, then measure(n) runs.
func (c *CostCurve) Walk(what string, seed func(n int) (string, error), measure func(n int) error) error {
	done := 0
	for _, n := range c.Sizes {
		if n > done {
			t := time.Now()
			said, err := seed(n)
			if err != nil {
				return fmt.Errorf("seed to %d: %w", n, err)
			}
			fmt.Printf("\n%s in %s\n", said, time.Since(t).Round(time.Millisecond))
			done = n
		}
		fmt.Printf("\n=== %d %s (load %s)\n", n, what, LoadAvg())
		if err := measure(n); err != nil {
			return err
		}
	}
	return nil
}

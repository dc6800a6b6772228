package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"
)

const mib = 1 << 20

// heapMiB is the live heap (objects) now, in MiB.
func heapMiB() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64()) / mib
}

// goMappedMiB is the memory the Go runtime holds from the OS and has not returned (every
// class of /memory/classes/ but the released heap), in MiB: what of the RSS Go accounts for.
func goMappedMiB() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64()-s[1].Value.Uint64()) / mib
}

// procStatusMiB reads a kB field of /proc/self/status (VmRSS, VmHWM) in MiB; 0 where
// there is no /proc.
func procStatusMiB(field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
		if err != nil {
			return 0
		}
		return kb / 1024
	}
	return 0
}

func rssMiB() float64     { return procStatusMiB("VmRSS") }
func rssFileMiB() float64 { return procStatusMiB("RssFile") } // mapped files: the binary's pages
func peakRSSMiB() float64 { return procStatusMiB("VmHWM") }

// heapPeak samples the live heap every 50 ms until stop, which returns the largest.
type heapPeak struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak float64
}

func startHeapPeak() *heapPeak {
	p := &heapPeak{done: make(chan struct{})}
	p.wg.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			p.peak = max(p.peak, heapMiB())
			select {
			case <-p.done:
				return
			case <-t.C:
			}
		}
	})
	return p
}

func (p *heapPeak) stop() float64 {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	p.wg.Wait()
	return p.peak
}

// startCPUProfile writes a CPU profile to path until the returned stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// finishBench prints res as indented JSON when asJSON, and turns a missed target into exit
// status 3 with missed as its message.
func finishBench(out io.Writer, asJSON bool, res any, pass bool, missed string) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	if !pass {
		return exitError{code: 3, msg: missed}
	}
	return nil
}

package scan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/source"
)

// Run works one scan job. It is idempotent: a scan that already finished is left alone,
// and a re-run after a crash skips the datasets whose result was already saved.
func (s *Service) Run(ctx context.Context, scanID string) error {
	sc, err := s.store.ScanForRun(ctx, scanID)
	if err != nil {
		if vigia.IsKind(err, vigia.KindNotFound) {
			return nil // deleted with its connection
		}
		return err
	}
	if sc.Finished() {
		return nil
	}
	sc, err = s.store.MarkRunning(ctx, scanID, s.clock.Now())
	if err != nil {
		return err
	}
	// The worker acts for the workspace as the system.
	ctx = vigia.WithPrincipal(ctx, vigia.Principal{WorkspaceID: sc.WorkspaceID, UserID: "system:scan", Role: vigia.RoleAdmin})
	code, err := s.run(ctx, sc)
	if err != nil && ctx.Err() != nil {
		// Stopped by shutdown: leave it running so a restart resumes it.
		return err
	}
	now := s.clock.Now()
	ctx = context.WithoutCancel(ctx)
	if code != "" {
		if err != nil {
			s.log.WarnContext(ctx, "scan failed", "scan_id", sc.ID, "code", code, "cause", err.Error())
		}
		return s.store.FinishScan(ctx, sc.ID, StatusFailed, &code, now)
	}
	// Succeeded: the results are committed; the after-scan steps consume the event
	// written with the status (see AfterScan).
	return s.tx.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.FinishScan(ctx, sc.ID, StatusSucceeded, nil, now); err != nil {
			return err
		}
		if err := s.store.RecordSucceeded(ctx, sc.WorkspaceID, sc.ConnectionID, sc.ID, now); err != nil {
			return err
		}
		return s.jobs.EnqueueAfterScan(ctx, sc.ID, sc.WorkspaceID)
	})
}

// run profiles every dataset; it returns a stable failure code ("" on success).
func (s *Service) run(ctx context.Context, sc Scan) (string, error) {
	c, err := s.conns.Connection(ctx, sc.ConnectionID)
	if err != nil {
		return "connection_missing", err
	}
	rec := s.conns.Recorder(c, &sc.ID)
	defer func() {
		if err := rec.Flush(context.WithoutCancel(ctx)); err != nil {
			s.log.WarnContext(ctx, "query log flush failed", "scan_id", sc.ID, "cause", err.Error())
		}
	}()
	src, err := s.conns.Open(ctx, c, rec, SessionLabel(sc.ID, sc.Attempt))
	if err != nil {
		return sourceCode("source_open_failed", err), err
	}
	defer src.Close()
	if sc.Attempt > 1 {
		// A takeover: the dead attempt's statements may still run on the source (its
		// process died, its queries did not). End them before profiling again.
		n, err := src.CancelLabelled(source.WithOperation(ctx, source.OpScan), SessionLabelPrefix(sc.ID))
		if err != nil {
			s.log.WarnContext(ctx, "cancelling the previous attempt's statements failed", "scan_id", sc.ID, "cause", err.Error())
		} else if n > 0 {
			s.log.InfoContext(ctx, "cancelled the previous attempt's statements", "scan_id", sc.ID, "statements", n)
		}
	}
	tables, err := src.Discover(source.WithOperation(ctx, source.OpDiscover))
	if err != nil {
		return sourceCode("discovery_failed", err), err
	}
	datasets, err := s.store.SyncDatasets(ctx, sc.WorkspaceID, c.ID, tables, s.clock.Now())
	if err != nil {
		return "internal", err
	}
	byName := make(map[string]source.Table, len(tables))
	for _, t := range tables {
		byName[t.Schema+"\x00"+t.Name] = t
	}
	// A re-run after a crash skips the datasets whose result was already saved: one
	// read for the whole scan, not one per dataset.
	saved, err := s.store.ProfiledDatasets(ctx, sc.ID)
	if err != nil {
		return "internal", err
	}
	// Which datasets have rules or domains at all: one read for the whole scan.
	var extras *Extras
	if de, ok := s.store.(DatasetExtras); ok {
		ex, err := de.DatasetExtras(ctx, c.ID)
		if err != nil {
			return "internal", err
		}
		extras = &ex
	}
	p := &progress{total: len(datasets), inFlight: map[int]string{}}
	for _, d := range datasets {
		if saved[d.ID] {
			p.done++
		}
	}
	// Progress and the query log are written by one writer every progressEvery (and at
	// the end), not once per dataset: a scan of 10,000 small tables would otherwise
	// spend a round trip per dataset on each.
	wctx, stopWriter := context.WithCancel(ctx)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			if err := s.writeProgress(wctx, sc.ID, p); err != nil && wctx.Err() == nil {
				s.log.WarnContext(ctx, "scan progress write failed", "scan_id", sc.ID, "cause", err.Error())
			}
			// Not cancelled midway: a flush that started writes what it took.
			if err := rec.Flush(context.WithoutCancel(ctx)); err != nil {
				s.log.WarnContext(ctx, "query log flush failed", "scan_id", sc.ID, "cause", err.Error())
			}
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	code, err := s.profileAll(ctx, sc, c.EffectiveCountry(), datasets, saved, byName, src, p, extras)
	stopWriter()
	<-writerDone
	if code != "" {
		return code, err
	}
	done, failed := p.counts()
	if err := s.store.UpdateProgress(ctx, sc.ID, len(datasets), done, failed, nil); err != nil {
		return "internal", err
	}
	if failed > 0 && done == 0 {
		return "all_datasets_failed", fmt.Errorf("%d datasets failed", failed)
	}
	return "", nil
}

// progressEvery is how often a running scan writes its progress and query log.
const progressEvery = 250 * time.Millisecond

// DefaultDatasetWorkers is how many datasets of one scan are worked at once when
// Config.DatasetWorkers is not set. The source's own connection limit
// (source.DefaultMaxConns) bounds the statements on the source; the other workers
// overlap Vigia's reads and writes of the datasets in between.
const DefaultDatasetWorkers = 4

// progress is a running scan's progress, shared by its dataset workers.
type progress struct {
	mu           sync.Mutex
	total        int
	done, failed int
	seq          int
	inFlight     map[int]string // started order -> dataset name
	written      [3]int         // done, failed, seq at the last write
	writtenName  string
	everWritten  bool
}

func (p *progress) start(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	p.inFlight[p.seq] = name
	return p.seq
}

func (p *progress) finish(id int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inFlight, id)
	p.seq++
	if ok {
		p.done++
	} else {
		p.failed++
	}
}

func (p *progress) counts() (done, failed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done, p.failed
}

// writeProgress writes the progress when it changed since the last write; the current
// dataset is the oldest one being worked.
func (s *Service) writeProgress(ctx context.Context, scanID string, p *progress) error {
	p.mu.Lock()
	oldest := 0
	for id := range p.inFlight {
		if oldest == 0 || id < oldest {
			oldest = id
		}
	}
	var current *string
	name := ""
	if oldest != 0 {
		name = p.inFlight[oldest]
		current = &name
	}
	state := [3]int{p.done, p.failed, p.seq}
	if p.everWritten && state == p.written && name == p.writtenName {
		p.mu.Unlock()
		return nil
	}
	total, done, failed := p.total, p.done, p.failed
	p.mu.Unlock()
	if err := s.store.UpdateProgress(ctx, scanID, total, done, failed, current); err != nil {
		return err
	}
	p.mu.Lock()
	p.written, p.writtenName, p.everWritten = state, name, true
	p.mu.Unlock()
	return nil
}

// profileAll works the datasets not yet saved with the scan's dataset workers; it
// returns a stable failure code ("" when every dataset was worked, failed or not).
func (s *Service) profileAll(ctx context.Context, sc Scan, country string, datasets []DatasetRef, saved map[string]bool,
	byName map[string]source.Table, src source.Source, p *progress, extras *Extras) (string, error) {
	workers := s.cfg.DatasetWorkers
	if workers <= 0 {
		workers = DefaultDatasetWorkers
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan DatasetRef)
	var mu sync.Mutex
	var code string
	var firstErr error
	fail := func(c string, err error) {
		mu.Lock()
		if code == "" {
			code, firstErr = c, err
		}
		mu.Unlock()
		cancel()
	}
	var wg sync.WaitGroup
	for range min(workers, max(1, len(datasets))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range next {
				id := p.start(d.Name())
				err := s.scanDataset(wctx, sc, country, d, byName[d.Schema+"\x00"+d.Table], src, extras)
				if err != nil {
					if ctx.Err() != nil {
						fail("interrupted", err)
						return
					}
					if wctx.Err() != nil {
						return // another worker failed
					}
					fc := failureCode(err)
					s.log.WarnContext(ctx, "dataset profile failed", "scan_id", sc.ID, "dataset_id", d.ID, "code", fc, "cause", err.Error())
					if err := s.store.RecordFailure(wctx, sc.ID, sc.WorkspaceID, d.ID, fc, s.clock.Now()); err != nil {
						if ctx.Err() != nil {
							fail("interrupted", err)
						} else {
							fail("internal", err)
						}
						return
					}
				}
				p.finish(id, err == nil)
			}
		}()
	}
feed:
	for _, d := range datasets {
		if saved[d.ID] {
			continue
		}
		select {
		case next <- d:
		case <-wctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if code != "" {
		return code, firstErr
	}
	if err := ctx.Err(); err != nil {
		return "interrupted", err
	}
	return "", nil
}

// scanDataset profiles one dataset and saves its whole result atomically. extras (nil:
// not known) says which datasets have rules, reported rules and domains to read.
func (s *Service) scanDataset(ctx context.Context, sc Scan, connCountry string, d DatasetRef, t source.Table, src source.Source, extras *Extras) error {
	country := connCountry
	if d.DataCountry != nil {
		country = *d.DataCountry
	}
	start := time.Now()
	prof, err := src.Profile(ctx, t, source.ProfileRequest{Depth: depthFor(d), Country: country, SampleSize: s.cfg.SampleSize, Operation: source.OpScan})
	if err != nil {
		return err
	}
	profiled := time.Since(start)
	prev, err := s.store.PrevState(ctx, d.ID)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	var rules []RuleResult
	switch {
	case s.rules == nil:
	case extras != nil && !extras.Rules[d.ID]:
		rules = []RuleResult{} // what evaluating no rules gives
	default:
		rules, err = s.rules.EvaluateRules(source.WithOperation(ctx, source.OpScan), src,
			RuleInput{Now: now, ScanID: sc.ID, ConnectionID: sc.ConnectionID, Dataset: d, Table: t, Profile: prof})
		if err != nil {
			return err
		}
	}
	var reported []quality.RuleOutcome
	if rr, ok := s.rules.(ReportedRules); ok {
		if extras != nil && !extras.Reported[d.ID] {
			reported = []quality.RuleOutcome{}
		} else if reported, err = rr.ReportedOutcomes(ctx, d.ID); err != nil {
			return err
		}
	}
	var weights quality.Weights
	if extras == nil || extras.Domains[d.ID] {
		if weights, err = s.domainWeights(ctx, d.ID); err != nil {
			return err
		}
	}
	res, err := Evaluate(EvaluateInput{Now: now, ScanID: sc.ID, Dataset: d, Table: t, Profile: prof, Prev: prev,
		DecayScans: s.cfg.DecayScans, FreshnessSLA: s.cfg.FreshnessSLA, Duration: profiled, Rules: rules, Weights: weights,
		Reported: reported})
	if err != nil {
		return err
	}
	return s.store.SaveDatasetResult(ctx, res)
}

// DomainWeights reads the dimension weights of the domains a dataset belongs to (nil
// entries are domains without weights): the data products feature.
type DomainWeights interface {
	DomainWeights(ctx context.Context, datasetID string) ([]quality.Weights, error)
}

// domainWeights returns the weights a dataset's score uses: its domains' when they
// agree (quality.EffectiveWeights), nil (the defaults) otherwise.
func (s *Service) domainWeights(ctx context.Context, datasetID string) (quality.Weights, error) {
	if s.weights == nil {
		return nil, nil
	}
	ws, err := s.weights.DomainWeights(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	if w, ok := quality.EffectiveWeights(ws); ok {
		return w, nil
	}
	return nil, nil
}

// failureCode is the stable code of a dataset's failure: the source's reason, else
// internal (a fault of ours, logged).
func failureCode(err error) string { return sourceCode(source.ReasonInternalError, err) }

// sourceCode keeps a source error's stable reason as the scan's error code.
func sourceCode(def string, err error) string {
	var se *source.Error
	if errors.As(err, &se) && se.Reason != "" {
		return se.Reason
	}
	return def
}

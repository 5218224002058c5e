package histo

// Metric names of SPEC §4: the keys of a Set, and the names used alike in
// tables, the results file and --fail-on. They live here, beside the Set
// they name, so that the engine (probe) and the reports (report), which
// must not import each other, share one list.
const (
	MetricConnect      = "connect"
	MetricHead         = "head"
	MetricFirstByte    = "first_byte"
	MetricTTFT         = "ttft"
	MetricGap          = "gap"
	MetricMaxGap       = "max_gap"
	MetricByteGap      = "byte_gap"
	MetricMaxByteGap   = "max_byte_gap"
	MetricTotal        = "total"
	MetricOutputTokens = "output_tokens"
	MetricTPS          = "tps"
	MetricItem         = "item"
	MetricAttempts     = "attempts"
	// MetricSchedulerLag is how far an open-loop pacer fell behind the
	// intended starts (a run's, not a path's).
	MetricSchedulerLag = "scheduler_lag"
)

// Metrics lists the SPEC §4 metric names in the order tables show them.
var Metrics = []string{
	MetricConnect, MetricHead, MetricFirstByte, MetricTTFT, MetricGap, MetricMaxGap,
	MetricByteGap, MetricMaxByteGap, MetricTotal, MetricOutputTokens, MetricTPS,
	MetricItem, MetricAttempts,
}

package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Fault is a misbehaviour the simulator injects into one call. It is chosen
// per request by the header X-Tollgate-Sim-Fault: NAME, or at a rate by
// Config.Faults. "Some content" below means the first half of the drawn
// content deltas (at least one), each sent at its scheduled time. Every
// stall ends when the client goes away or after Config.StallMax, when the
// connection is dropped without a terminal chunk.
//
//	fault             streaming call (every API)                                  non-streaming call
//	refuse            the connection is closed with SO_LINGER 0 as soon as the    same
//	                  request is read: no response byte, the client sees a reset
//	head-stall        nothing is ever sent                                        same
//	first-byte-stall  the head (200, text/event-stream) is sent and flushed at    the head (200, application/json) is sent and
//	                  the head time, then no body byte                             flushed, then no body byte
//	no-content        the stream's opening events (anthropic message_start and     as head-stall: a non-streaming body is only
//	                  ping; chat role-only chunk; responses response.created and   written at the end
//	                  response.in_progress) at the head time, then anthropic ping
//	                  events or OpenAI ": keep-alive" comments every ping interval
//	                  (the profile's, or 1s when it has none), never content
//	ping-stall        some content, then pings / keep-alive comments as above,     as head-stall
//	                  never more content
//	silent-stall      some content, then nothing at all, connection held open      as head-stall
//	truncate          some content, then the body ends cleanly (the last chunk of  the head with the full Content-Length and half
//	                  a chunked body) without the terminal event                  the body, then the connection is dropped
//	error-event       some content, then the provider's error event and the end:  anthropic: as http-529; openai and responses:
//	                  anthropic "event: error" overloaded_error; chat a data-only  as http-500
//	                  chunk {"error":{...,"type":"server_error"}}; responses
//	                  "event: error" {"type":"error","error":{...}} (the nested
//	                  shape the live API sends)
//	http-429          at the head time: status 429, retry-after: 1 and the         same
//	                  provider's rate-limit error body
//	http-529          at the head time: status 529 and anthropic's                 same
//	                  overloaded_error body; OpenAI never sends 529, the simulator
//	                  does so with an OpenAI-shaped body {"error":{"type":
//	                  "server_error","code":"overloaded",...}} so gateways can be
//	                  tested against it on every API
//	http-500          at the head time: status 500 and the provider's server       same
//	                  error body (anthropic api_error; OpenAI server_error)
//	malformed         some content, then one event whose data is not valid JSON   a 200 body that is not valid JSON
//	                  (a content delta cut mid-string), then the body ends
type Fault string

// The faults; see the table on Fault for the bytes each one sends.
const (
	FaultNone           Fault = ""
	FaultRefuse         Fault = "refuse"
	FaultHeadStall      Fault = "head-stall"
	FaultFirstByteStall Fault = "first-byte-stall"
	FaultNoContent      Fault = "no-content"
	FaultPingStall      Fault = "ping-stall"
	FaultSilentStall    Fault = "silent-stall"
	FaultTruncate       Fault = "truncate"
	FaultErrorEvent     Fault = "error-event"
	FaultHTTP429        Fault = "http-429"
	FaultHTTP529        Fault = "http-529"
	FaultHTTP500        Fault = "http-500"
	FaultMalformed      Fault = "malformed"
)

// FaultHeader is the request header that injects a fault into one call.
const FaultHeader = "X-Tollgate-Sim-Fault"

var allFaults = []Fault{
	FaultRefuse, FaultHeadStall, FaultFirstByteStall, FaultNoContent, FaultPingStall,
	FaultSilentStall, FaultTruncate, FaultErrorEvent, FaultHTTP429, FaultHTTP529,
	FaultHTTP500, FaultMalformed,
}

// Faults lists every fault name, sorted.
func Faults() []Fault {
	out := append([]Fault(nil), allFaults...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ParseFault checks a fault name.
func ParseFault(name string) (Fault, error) {
	for _, f := range allFaults {
		if string(f) == name {
			return f, nil
		}
	}
	names := make([]string, len(allFaults))
	for i, f := range Faults() {
		names[i] = string(f)
	}
	return FaultNone, fmt.Errorf("unknown fault %q (want one of %s)", name, strings.Join(names, ", "))
}

// FaultRate injects Fault into a fraction Rate (0..1) of calls.
type FaultRate struct {
	// Fault is the fault to inject.
	Fault Fault
	// Rate is the probability, 0..1, that a call gets it.
	Rate float64
}

// String gives the NAME@RATE form.
func (f FaultRate) String() string {
	return fmt.Sprintf("%s@%s", f.Fault, strconv.FormatFloat(f.Rate, 'g', -1, 64))
}

// ParseFaultRate parses NAME@RATE, where RATE is a fraction (0.05) or a
// percentage (5%).
func ParseFaultRate(s string) (FaultRate, error) {
	name, rate, ok := strings.Cut(s, "@")
	if !ok {
		return FaultRate{}, fmt.Errorf("fault %q: want NAME@RATE, e.g. http-429@0.05 or truncate@2%%", s)
	}
	f, err := ParseFault(name)
	if err != nil {
		return FaultRate{}, err
	}
	scale := 1.0
	if r, ok := strings.CutSuffix(rate, "%"); ok {
		rate, scale = r, 100
	}
	v, err := strconv.ParseFloat(rate, 64)
	if err != nil {
		return FaultRate{}, fmt.Errorf("fault %q: rate: %w", s, err)
	}
	v /= scale
	if v < 0 || v > 1 {
		return FaultRate{}, fmt.Errorf("fault %q: rate must be within 0..1 (or 0%%..100%%)", s)
	}
	return FaultRate{Fault: f, Rate: v}, nil
}

// pickFault draws at most one fault from rates with one uniform number u:
// the rates are stacked, so their sum (capped at 1) is the fault rate.
func pickFault(rates []FaultRate, u float64) Fault {
	acc := 0.0
	for _, r := range rates {
		acc += r.Rate
		if u < acc {
			return r.Fault
		}
	}
	return FaultNone
}

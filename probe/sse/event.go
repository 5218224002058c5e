// Package sse reads a server-sent event stream by the WHATWG rules and
// reports, for every event and every comment, the time its bytes arrived.
//
// It exists because no Go SSE library surfaces comment lines or arrival
// times, and the official SDK decoders lose events on a lone CR or a
// leading BOM. The engine needs both: comments are keep-alive traffic that
// re-arms the byte-level idle clock but never the content-level gap clock.
package sse

import "time"

// Kind says whether an Item is a dispatched event or a comment line.
type Kind uint8

const (
	// KindEvent is a dispatched event (a blank line ended a block with data).
	KindEvent Kind = iota + 1
	// KindComment is a comment line, one that starts with a colon.
	KindComment
)

// Item is one thing read from the stream: an event or a comment.
//
// Type, Data and ID are set for events, Comment for comments, At and Retry
// for both. The byte slices alias the Reader's internal buffers and are
// valid only until the next call to Reader.Next (or Reader.Reset); copy
// them to keep them.
type Item struct {
	// Kind tells which of the fields below are set.
	Kind Kind
	// Type is the event's "event" field, or "message" when none was given.
	Type []byte
	// Data is the event's data lines joined with LF.
	Data []byte
	// ID is the last event ID seen on the stream so far (it persists across events).
	ID []byte
	// Comment is the text of a comment line after the colon (one leading space stripped).
	Comment []byte
	// Retry is the reconnection time the stream last set with a retry
	// field (digits only, in milliseconds), or 0 when it has set none.
	Retry time.Duration
	// At is when the read that completed this item returned, from the Reader's clock.
	At time.Time
}

package sse_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/tollgate-dev/tollgate/probe/sse"
)

// A stream with a keep-alive comment, two events and a last event that the
// body cut off before its blank line.
func ExampleReader() {
	body := strings.NewReader(": keep-alive\n\n" +
		"event: content_block_delta\ndata: {\"text\":\"Hi\"}\n\n" +
		"data: [DONE]\r\n\r\n" +
		"event: message_stop\ndata: {}")
	r := sse.NewReader(body, sse.Options{})
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch it.Kind {
		case sse.KindComment:
			fmt.Printf("comment %q\n", it.Comment)
		case sse.KindEvent:
			fmt.Printf("event %s: %s\n", it.Type, it.Data)
		}
	}
	if d := r.Discarded(); d != nil {
		fmt.Printf("discarded %s: %s\n", d.Type, d.Data)
	}
	fmt.Println("bytes:", r.BytesRead())
	// Output:
	// comment "keep-alive"
	// event content_block_delta: {"text":"Hi"}
	// event message: [DONE]
	// discarded message_stop: {}
	// bytes: 106
}

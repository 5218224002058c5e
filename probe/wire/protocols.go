package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// protocols is every Protocol by its --api name, in the order Names lists them.
var protocols = []Protocol{Anthropic(), OpenAIChat(), Responses()}

// Names returns the --api names of the protocols tollgate speaks.
func Names() []string {
	names := make([]string, len(protocols))
	for i, p := range protocols {
		names[i] = p.Name()
	}
	return names
}

// Lookup returns the protocol with the given --api name.
func Lookup(name string) (Protocol, error) {
	for _, p := range protocols {
		if p.Name() == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown api %q: valid are %s", name, strings.Join(Names(), ", "))
}

// endpoint joins the protocol's path to a base URL as the official SDKs do:
// the base's own path is kept as a prefix, a trailing slash is dropped and
// the query (an Azure api-version, say) is kept. Errors never repeat the
// URL: its user-info part may hold a credential.
func endpoint(base, path string) (*url.URL, error) {
	u, err := url.Parse(base)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("parse base url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("base url %s: want http:// or https:// and a host", u.Redacted())
	}
	if u.RawPath != "" {
		u.RawPath = strings.TrimRight(u.RawPath, "/") + path
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	return u, nil
}

// newJSONRequest builds a POST of body to url with the JSON and streaming
// headers, then applies the protocol's auth headers and the user's extra
// headers, which win over both. The body is a bytes.Reader, so
// http.NewRequestWithContext sets ContentLength and GetBody: the request
// can be resent on a retry or a redirect.
func newJSONRequest(ctx context.Context, r Request, path string, body any, auth http.Header) (*http.Request, error) {
	u, err := endpoint(r.BaseURL, path)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode request body: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("build request to %s: %w", u.Redacted(), err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	for k, vs := range auth {
		req.Header[k] = vs
	}
	for k, vs := range r.Header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	return req, nil
}

// common holds what the three protocols share: the error body and the
// response head look alike enough across providers, and a gateway in front
// of one provider may answer in another's shape.
type common struct{}

// ParseError parses a non-2xx body in either provider's shape.
func (common) ParseError(body []byte) ProviderError {
	return parseError(body)
}

// ReadMeta reads the request id and retry hints from a response head.
func (common) ReadMeta(h http.Header, now time.Time) Meta {
	return readMeta(h, now)
}

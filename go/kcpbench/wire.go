package main

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
)

// exchange is one HTTP request and its response as they crossed the wire
// between client-go and kcp: headers, and the first bytes of each body.
type exchange struct {
	Method, Path        string
	RequestContentType  string
	Accept              string
	RequestBody         []byte // first bytes
	Status              int
	ResponseContentType string
	ResponseBody        []byte // first bytes
}

// sniffLen is how much of each body is kept: enough for every format's
// signature.
const sniffLen = 16

// recorder is an http.RoundTripper between client-go's transport stack and
// the connection to kcp (rest.Config.Wrap puts it innermost-but-TLS), so it
// sees exactly the requests and responses that client-go encodes and
// decodes.
type recorder struct {
	next http.RoundTripper

	mu        sync.Mutex
	exchanges []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	x := exchange{
		Method: req.Method, Path: req.URL.Path,
		RequestContentType: req.Header.Get("Content-Type"), Accept: req.Header.Get("Accept"),
	}
	if req.Body != nil && req.Body != http.NoBody {
		x.RequestBody = []byte{} // a body we cannot look at fails the check
		if req.GetBody != nil {
			if body, err := req.GetBody(); err == nil {
				x.RequestBody = head(body)
				body.Close()
			}
		}
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	x.Status = resp.StatusCode
	x.ResponseContentType = resp.Header.Get("Content-Type")
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	x.ResponseBody = data[:min(len(data), sniffLen)]
	r.mu.Lock()
	r.exchanges = append(r.exchanges, x)
	r.mu.Unlock()
	return resp, nil
}

func head(r io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, sniffLen))
	return b
}

// Exchanges returns what has been recorded so far.
func (r *recorder) Exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.exchanges...)
}

// looksLike reports whether body starts the way an object encoded as media
// does, so that a server that labels JSON as something else is caught too.
func looksLike(media string, body []byte) bool {
	if len(body) == 0 {
		return false
	}
	switch media {
	case mediaJSON:
		return body[0] == '{'
	case mediaYAML:
		// Kubernetes' YAML serializer writes a block mapping with sorted
		// keys ("apiVersion: ..."), never JSON's flow style.
		return body[0] >= 'a' && body[0] <= 'z' && bytes.IndexByte(body, ':') > 0
	case mediaProtobuf:
		return bytes.HasPrefix(body, []byte("k8s\x00")) // protobuf.serializer's magic
	case mediaCBOR:
		return bytes.HasPrefix(body, []byte{0xd9, 0xd9, 0xf7}) // the self-described CBOR tag 55799
	}
	return false
}

// checkExchange returns an error unless x used media both ways: the
// request's Content-Type (when it has a body) and Accept, and the
// response's Content-Type and body.
func checkExchange(x exchange, media string) error {
	where := fmt.Sprintf("%s %s", x.Method, x.Path)
	if x.Status < 200 || x.Status > 299 {
		return fmt.Errorf("%s: status %d", where, x.Status)
	}
	if x.RequestBody != nil {
		if got := mediaType(x.RequestContentType); got != media {
			return fmt.Errorf("%s: request Content-Type %q, want %s", where, x.RequestContentType, media)
		}
		if !looksLike(media, x.RequestBody) {
			return fmt.Errorf("%s: request body %q is not %s", where, x.RequestBody, media)
		}
	}
	if x.Accept != media {
		return fmt.Errorf("%s: Accept %q, want %s", where, x.Accept, media)
	}
	if got := mediaType(x.ResponseContentType); got != media {
		return fmt.Errorf("%s: response Content-Type %q, want %s", where, x.ResponseContentType, media)
	}
	if !looksLike(media, x.ResponseBody) {
		return fmt.Errorf("%s: response body %q is not %s", where, x.ResponseBody, media)
	}
	return nil
}

func mediaType(contentType string) string {
	m, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return contentType
	}
	return m
}

package ctl

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// getJSON fetches the debug API path (under /debug/api/) from the meshd at
// addr into v. An error answer is returned as an error with the API's own
// message; an unreachable meshd names the address and its flag.
func getJSON(addr, path string, query url.Values, v any) error {
	u := url.URL{Scheme: "http", Host: addr, Path: "/debug/api/" + path, RawQuery: query.Encode()}
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(u.String())
	if err != nil {
		return fmt.Errorf("meshd's debug server at %s (--addr) is not reachable: %w", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("reading %s: %w", u.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s", e.Error)
		}
		return fmt.Errorf("%s: %s", u.Path, resp.Status)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: not the answer of a meshd debug API: %w", u.Path, err)
	}
	return nil
}

// writeJSON writes v as indented JSON.
func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// shortType turns "type.googleapis.com/envoy.config.listener.v3.Listener"
// into "Listener".
func shortType(typeURL string) string {
	return typeURL[strings.LastIndexAny(typeURL, "./")+1:]
}

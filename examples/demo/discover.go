package demo

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"
	"time"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

//go:embed servers.yaml
var configTemplate string

// configName is the name Discover gives the configuration, in
// config.Config.File and in its problems.
const configName = "the demo's servers"

// Limits of Discover and Servers.Close.
const (
	discoverTimeout = 10 * time.Second
	closeTimeout    = 5 * time.Second
)

// Servers is the demo's servers, running on 127.0.0.1, with what a host
// makes of them: the configuration that lists them and their tools. Close
// them once, when done; the fields are safe for concurrent use as their
// types say.
type Servers struct {
	// Config lists the servers: the embedded servers.yaml, their URLs
	// filled in, parsed.
	Config *config.Config
	// Tools is every server's tools, discovered.
	Tools *toolset.Toolset
	stop  []func()
}

// Discover serves [Text] and [Notes] over Streamable HTTP on 127.0.0.1,
// reads the configuration that points at them (config.Decode, naming it
// "the demo's servers") and discovers their tools (toolset.Discover, within
// 10 s and ctx). Close stops it all.
func Discover(ctx context.Context) (*Servers, error) {
	s := &Servers{}
	urls := map[string]string{}
	for key, srv := range map[string]*Server{"TEXT_URL": Text(), "NOTES_URL": Notes()} {
		url, stop, err := Serve(srv)
		if err != nil {
			s.stopServers()
			return nil, fmt.Errorf("starting the demo servers: %w", err)
		}
		s.stop = append(s.stop, stop)
		urls[key] = url
	}
	yaml := os.Expand(configTemplate, func(key string) string { return urls[key] })
	cfg, err := config.Decode(strings.NewReader(yaml), configName)
	if err != nil {
		s.stopServers()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, discoverTimeout)
	defer cancel()
	tools, err := toolset.Discover(ctx, cfg.Servers, nil)
	if err != nil {
		s.stopServers()
		return nil, err
	}
	s.Config, s.Tools = cfg, tools
	return s, nil
}

// Close closes the tools, giving the servers at most 5 s, then
// stops the servers, closing their connections.
func (s *Servers) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = s.Tools.Shutdown(ctx)
	s.stopServers()
}

func (s *Servers) stopServers() {
	for _, stop := range s.stop {
		stop()
	}
}

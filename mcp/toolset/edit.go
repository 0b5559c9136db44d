package toolset

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// ErrUnknownServer is returned by Toolset.Remove for a name the Toolset
// has no server by.
var ErrUnknownServer = errors.New("toolset: unknown server")

// removed reports whether Remove took the server out of its Toolset.
func (s *tsServer) removed() bool {
	select {
	case <-s.gone:
		return true
	default:
		return false
	}
}

// Add connects to the server cfg describes, lists its tools and adds it
// to the Toolset, after the others; the calls already running go on
// meanwhile. ctx bounds the connection, with the server's connect timeout
// as for Discover. A server that cannot be used is not added: the error
// says why (ErrServerConfig for a name already in use, ignoring case). Its
// tools get names as in Discover, never one given before, and OnChange is
// told of them. Add, Remove and Reload run one at a time.
func (t *Toolset) Add(ctx context.Context, cfg config.Server) error {
	t.editMu.Lock()
	defer t.editMu.Unlock()
	t.mu.RLock()
	closed := t.closed
	names := make(map[string]bool, len(t.servers))
	for _, s := range t.servers {
		names[strings.ToLower(s.cfg.Name)] = true
	}
	t.mu.RUnlock()
	if closed {
		return fmt.Errorf("toolset: add server %q: %w", cfg.Name, mcp.ErrClosed)
	}
	if err := checkServer(cfg, names); err != nil {
		return fmt.Errorf("toolset: add server %q: %w", cfg.Name, err)
	}
	s := t.newServer(cfg)
	l := t.connect(ctx, s, (&progressReporter{}).server(0, cfg.Name))
	if l.err != nil {
		return fmt.Errorf("toolset: add server %q: %w", cfg.Name, l.err)
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		_ = s.client.Close()
		return fmt.Errorf("toolset: add server %q: %w", cfg.Name, mcp.ErrClosed)
	}
	t.servers = append(slices.Clone(t.servers), s)
	ch := t.apply(s, l)
	t.rebuild()
	t.applySkills(s, s.sk.first)
	t.rebuildSkills()
	promptsCap.added(t, s)
	resourcesCap.added(t, s)
	promptsCap.watchServer(t, s)
	resourcesCap.watchServer(t, s)
	t.loops.Add(1)
	go t.watch(s)
	if ok, _ := s.client.SkillsSupported(); ok && t.skillsOn() {
		t.loops.Add(1)
		go t.watchSkills(s)
	}
	t.mu.Unlock()
	t.changed(ch)
	return nil
}

// Remove takes the server named name (ignoring case) out of the Toolset:
// its tools and skills leave the catalogue at once, and new calls of them
// get ErrUnknownTool. It then waits for the server's calls in flight until
// ctx ends, and closes the server's client, which makes the calls still
// running fail with ErrClosed, within 5 s. The names its tools had are
// never given to other tools. OnChange is told of the tools removed.
func (t *Toolset) Remove(ctx context.Context, name string) error {
	t.editMu.Lock()
	defer t.editMu.Unlock()
	t.mu.Lock()
	i := slices.IndexFunc(t.servers, func(s *tsServer) bool { return strings.EqualFold(s.cfg.Name, name) })
	if i < 0 || t.closed {
		t.mu.Unlock()
		if t.closed {
			return fmt.Errorf("toolset: remove server %q: %w", name, mcp.ErrClosed)
		}
		return fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	s := t.servers[i]
	t.servers = slices.Delete(slices.Clone(t.servers), i, i+1)
	close(s.gone)
	ch := ToolsChange{Server: s.cfg.Name}
	for _, st := range s.tools {
		ch.Removed = append(ch.Removed, st.Name)
	}
	t.rebuild()
	t.rebuildSkills()
	promptsCap.rebuild(t)
	resourcesCap.rebuild(t)
	t.mu.Unlock()
	t.changed(ch)
	if s.client == nil {
		return nil // it was skipped: nothing runs
	}
	idle := make(chan struct{})
	go func() { // ends once the calls have returned, at the latest after Shutdown
		s.calls.Wait()
		close(idle)
	}()
	select {
	case <-idle:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcp.DefaultCloseTimeout)
	defer cancel()
	if ctx.Err() != nil {
		sctx = ctx // cut short: the calls were waited for long enough
	}
	err := s.client.Shutdown(sctx)
	<-idle
	if err != nil {
		return fmt.Errorf("toolset: remove server %q: %w", s.cfg.Name, err)
	}
	return nil
}

// Reload makes the Toolset's servers those of now (a configuration read
// again): a server the Toolset has that is not in now (by name, ignoring
// case) or whose entry changed is removed, and a server of now that is new
// or changed is added. Servers whose entry is the same are left alone,
// with their connection and calls. ctx bounds each step; the errors of the
// steps that failed are joined, the other steps done.
func (t *Toolset) Reload(ctx context.Context, now []config.Server) error {
	t.mu.RLock()
	old := make([]config.Server, len(t.servers))
	for i, s := range t.servers {
		old[i] = s.cfg
	}
	t.mu.RUnlock()
	find := func(list []config.Server, name string) (config.Server, bool) {
		i := slices.IndexFunc(list, func(s config.Server) bool { return strings.EqualFold(s.Name, name) })
		if i < 0 {
			return config.Server{}, false
		}
		return list[i], true
	}
	var errs []error
	for _, o := range old {
		if n, ok := find(now, o.Name); !ok || !sameServer(o, n) {
			if err := t.Remove(ctx, o.Name); err != nil && !errors.Is(err, ErrUnknownServer) {
				errs = append(errs, err)
			}
		}
	}
	for _, n := range now {
		if o, ok := find(old, n.Name); !ok || !sameServer(o, n) {
			errs = append(errs, t.Add(ctx, n))
		}
	}
	return errors.Join(errs...)
}

// sameServer reports whether two entries describe the same server, where
// they sit in their files aside.
func sameServer(a, b config.Server) bool {
	a.Line, b.Line = 0, 0
	return reflect.DeepEqual(a, b)
}

// changed tells OnChange of ch.
func (t *Toolset) changed(ch ToolsChange) {
	if t.opts.OnChange != nil {
		t.changeMu.Lock()
		defer t.changeMu.Unlock()
		t.opts.OnChange(ch)
	}
}

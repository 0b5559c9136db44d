package toolset_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// A server that lists more tools, prompts, resources and templates than
// mcp.Options.MaxListItems is used with the first ones, and a list-cut
// warning for each listing cut (issue 35 #8); the host's own OnListCut
// is still told.
func TestToolsetListCut(t *testing.T) {
	const limit = 3
	var tools []mcptest.Tool
	cat := &mcptest.Catalog{PageSize: 2}
	for i := range limit + 2 {
		tools = append(tools, mcptest.Tool{Def: json.RawMessage(fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i))})
		cat.Prompts = append(cat.Prompts, mcptest.TextPrompt(fmt.Sprintf("p%d", i)))
		cat.Resources = append(cat.Resources, mcptest.TextResource(fmt.Sprintf("file:///r%d", i), "r", "x"))
		cat.Templates = append(cat.Templates, json.RawMessage(fmt.Sprintf(`{"uriTemplate":"db://t%d/{x}","name":"t"}`, i)))
	}
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: tools, PageSize: 2, Catalog: cat}
	var told atomic.Int32
	ts := discover(t, []config.Server{{Name: "big", URL: mcptest.Start(t, s)}}, &toolset.Options{Client: mcp.Options{MaxListItems: limit,
		OnListCut: func(string, int) { told.Add(1) }}})
	assert.Len(t, ts.Tools(), limit)
	assert.Len(t, ts.Prompts(), limit)
	assert.Len(t, ts.Resources(), limit)
	assert.Len(t, ts.ResourceTemplates(), limit)
	var cut []string
	for _, w := range ts.Warnings() {
		if w.Kind == toolset.WarnListCut {
			assert.Equal(t, "big", w.Server)
			cut = append(cut, w.Message)
		}
	}
	assert.ElementsMatch(t, []string{
		"tools/list lists more than 3 items; only the first 3 are used",
		"prompts/list lists more than 3 items; only the first 3 are used",
		"resources/list lists more than 3 items; only the first 3 are used",
		"resources/templates/list lists more than 3 items; only the first 3 are used",
	}, cut)
	assert.EqualValues(t, 4, told.Load())
}

// The skills' index is cut the same way.
func TestToolsetSkillsListCut(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Skills: &mcptest.Skills{List: mcptest.SampleSkills(), PageSize: 1}}
	ts := discover(t, []config.Server{{Name: "docs", URL: mcptest.Start(t, s)}}, &toolset.Options{Client: mcp.Options{Skills: true, MaxListItems: 1}})
	assert.Len(t, ts.Skills(), 1)
	assert.Equal(t, []toolset.WarningKind{toolset.WarnListCut}, warningKinds(ts.Warnings()))
}

package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/internal/llmtest"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
)

// TestSkillCatalogueCost measures what the catalogue costs the model, in
// tokens estimated as bytes/4, against sending every SKILL.md body up
// front, for 10 and 100 skills. Each skill has a 120-byte description and
// a 4 KiB body (a mid-sized SKILL.md). Run with -v to see the figures:
//
//	go test -run TestSkillCatalogueCost -v ./agent/
func TestSkillCatalogueCost(t *testing.T) {
	body := strings.Repeat("Step: do the next thing carefully and check it.\n", 4096/48)
	desc := strings.Repeat("Describe when to use this skill in a sentence or two. ", 3)[:120]
	for _, n := range []int{10, 100} {
		k := &mcptest.Skills{}
		bodies := 0
		for i := range n {
			name := fmt.Sprintf("skill-%03d", i)
			md := "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
			bodies += len(body)
			k.List = append(k.List, mcptest.Skill{Path: "acme/" + name, Files: map[string]string{"SKILL.md": md}})
		}
		_, ts := skillsServer(t, k)
		llm, model := startLLM(t, llmtest.Turn{Text: "ok"})
		// The catalogue in full: the default limit (DefaultSkillCatalog)
		// would list about 78 of these 100.
		a := &agent.Agent{Model: model, Skills: ts, SkillLimits: agent.SkillLimits{Catalog: 1 << 20}}
		_, err := a.Run(context.Background(), user("hi"))
		require.NoError(t, err)
		tools := llm.Requests()[0].Tools
		require.Len(t, tools, 1)
		catalogue := len(tools[0].Description) + len(tools[0].Parameters) + len(tools[0].Name)
		assert.NotContains(t, tools[0].Description, "more skills are not listed", "every skill is listed")
		assert.Less(t, catalogue*10, bodies, "the catalogue costs less than a tenth of the bodies")
		assert.Empty(t, k.Reads())
		t.Logf("%3d skills: catalogue %6d bytes ≈ %5d tokens; all bodies up front %7d bytes ≈ %6d tokens; ratio %.1f%%",
			n, catalogue, catalogue/4, bodies, bodies/4, 100*float64(catalogue)/float64(bodies))
	}
}

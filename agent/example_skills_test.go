package agent_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// Skills, progressively disclosed: the model first sees only each skill's
// name and description, in the description of the load_skill tool; it
// loads the one it needs, and its instructions come back as tool output.
// The skill here is a local folder; a server's skills (SEP-2640) come the
// same way when toolset.Options.Client.Skills is set. The model is a
// scripted server on 127.0.0.1.
func ExampleAgent_skills() {
	dir, err := os.MkdirTemp("", "skills")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	skill := filepath.Join(dir, "haiku")
	if err := os.Mkdir(skill, 0o755); err != nil {
		log.Fatal(err)
	}
	md := "---\nname: haiku\ndescription: Write a haiku on a subject\n---\nThree lines of 5, 7 and 5 syllables; no title.\n"
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte(md), 0o644); err != nil {
		log.Fatal(err)
	}

	llm := &openaitest.Server{Turns: []openaitest.Turn{
		{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: agent.SkillTool, Arguments: `{"name":"haiku"}`}}},
		{Text: "Gray rain on the roof / the kettle starts to murmur / someone is coming"},
	}}
	baseURL := llm.Start()
	defer llm.Close()

	skills, err := toolset.Discover(context.Background(), nil, &toolset.Options{SkillFolders: []string{dir}})
	if err != nil {
		log.Fatal(err)
	}
	defer skills.Close()

	a := &agent.Agent{
		Model:  &openai.Model{BaseURL: baseURL, Model: "qwen3:4b"},
		Skills: skills,
		Policy: permission.NewPolicy(permission.AllowAll{}),
	}
	res, err := a.RunStream(context.Background(), []agent.Message{agent.UserMessage("A haiku about rain, please.")},
		func(e agent.Event) {
			if e, ok := e.(*agent.SkillLoaded); ok {
				fmt.Printf("loaded skill %s (%s, %s, %d bytes, err %v)\n", e.Skill, e.Server, e.File, e.Bytes, e.Err)
			}
		})
	if err != nil {
		log.Fatal(err)
	}
	_, catalogue, _ := strings.Cut(llm.Requests()[0].Tools[0].Description, "Skills:\n")
	fmt.Print("the model first saw: ", catalogue)
	fmt.Println(res.Answer)
	// Output:
	// loaded skill haiku ((local), SKILL.md, 107 bytes, err <nil>)
	// the model first saw: - haiku [(local)]: Write a haiku on a subject
	// Gray rain on the roof / the kettle starts to murmur / someone is coming
}

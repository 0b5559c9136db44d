package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRankTools(t *testing.T) {
	mk := func(name, desc, schema string) *tool {
		return &tool{name: name, description: desc, schema: compileSchema(json.RawMessage(schema))}
	}
	docs := []*tool{
		mk("github_list_issues", "List the issues of a repository.", `{"type":"object","properties":{"repo":{"type":"string"}}}`),
		mk("github_createIssue", "Open a new issue.", `{"type":"object","properties":{"title":{"type":"string"}}}`),
		mk("fs_read_file", "Read a file.", `{"type":"object","properties":{"path":{"type":"string"}}}`),
		mk("fs_write_file", "Write a file.", `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`),
		mk("slack_post", "Post a message to a channel.", `{"type":"object","properties":{"channel":{"type":"string"},"text":{"type":"string"}}}`),
	}
	names := func(ts []*tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.name)
		}
		return out
	}
	assert.Equal(t, []string{"github_createIssue", "github_list_issues"}, names(rankTools(docs, "create issue", 5)), "camelCase split; the better match first")
	assert.Equal(t, []string{"fs_read_file", "fs_write_file"}, names(rankTools(docs, "FILE", 5)), "ties keep the catalogue's order")
	assert.Equal(t, []string{"slack_post"}, names(rankTools(docs, "channel", 5)), "parameter names count")
	assert.Equal(t, []string{"fs_read_file"}, names(rankTools(docs, "file path", 1)), "bounded")
	assert.Empty(t, rankTools(docs, "the a of", 5), "stop words match nothing")
	assert.Empty(t, rankTools(nil, "file", 5))
	for range 20 {
		assert.Equal(t, names(rankTools(docs, "write read file content", 5)), names(rankTools(docs, "write read file content", 5)), "deterministic")
	}
}

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
	var x searchIndex
	rankTools := x.rankTools
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

// The index reads a tool again when its description or parameters
// change, and keeps what it read otherwise.
func TestSearchIndexFollowsChanges(t *testing.T) {
	var x searchIndex
	schema := compileSchema(json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`))
	tl := &tool{name: "fs_read", description: "Read a file.", schema: schema}
	first := x.docs([]*tool{tl})[0]
	assert.Same(t, first, x.docs([]*tool{tl})[0], "an unchanged tool is not read again")
	assert.Equal(t, []*tool{tl}, x.rankTools([]*tool{tl}, "file", 5))

	changed := &tool{name: "fs_read", description: "Read a document.", schema: schema}
	assert.Equal(t, []*tool{changed}, x.rankTools([]*tool{changed}, "document", 5), "the new description is searched")
	assert.Empty(t, x.rankTools([]*tool{changed}, "file", 5), "the old one is not")

	params := &tool{name: "fs_read", description: "Read a document.", schema: compileSchema(json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`))}
	assert.Equal(t, []*tool{params}, x.rankTools([]*tool{params}, "url", 5), "new parameters are searched")
	assert.Empty(t, x.rankTools([]*tool{params}, "path", 5))
}

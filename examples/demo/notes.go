package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Notes returns a notepad server, kept in memory, that speaks only the
// initialize-based 2025-11-25 revision, as many deployed servers still
// do. Its tools: list_notes and read_note (read-only), save_note (adds a
// note) and delete_note (destructive).
func Notes() *Server {
	var mu sync.Mutex
	notes := map[string]string{"shopping": "bread, cheese, coffee"}
	type titled struct {
		Title string `json:"title" jsonschema:"the note's title"`
	}
	return &Server{
		Name:         "demo-notes",
		Version:      "1.0.0",
		Instructions: "A notepad. Notes are identified by their title.",
		Versions:     []string{Legacy},
		tools: []tool{
			newTool("list_notes", "List notes", "Lists the titles of the saved notes.",
				reads, func(context.Context, struct{}) (string, error) {
					mu.Lock()
					defer mu.Unlock()
					if len(notes) == 0 {
						return "no notes", nil
					}
					titles := make([]string, 0, len(notes))
					for t := range notes {
						titles = append(titles, t)
					}
					slices.Sort(titles)
					return strings.Join(titles, "\n"), nil
				}),
			newTool("read_note", "Read a note", "Returns the text of a note.",
				reads, func(_ context.Context, in titled) (string, error) {
					mu.Lock()
					defer mu.Unlock()
					text, ok := notes[in.Title]
					if !ok {
						return "", fmt.Errorf("no note titled %q", in.Title)
					}
					return text, nil
				}),
			newTool("save_note", "Save a note", "Saves a new note. A note with the same title must be deleted first.",
				adds, func(_ context.Context, in struct {
					Title string `json:"title" jsonschema:"the note's title"`
					Text  string `json:"text" jsonschema:"the note's text"`
				}) (string, error) {
					if strings.TrimSpace(in.Title) == "" {
						return "", errors.New("a note needs a title")
					}
					mu.Lock()
					defer mu.Unlock()
					if _, ok := notes[in.Title]; ok {
						return "", fmt.Errorf("a note titled %q exists already", in.Title)
					}
					notes[in.Title] = in.Text
					return fmt.Sprintf("saved note %q", in.Title), nil
				}),
			newTool("delete_note", "Delete a note", "Deletes a note for good.",
				overwrites, func(_ context.Context, in titled) (string, error) {
					mu.Lock()
					defer mu.Unlock()
					if _, ok := notes[in.Title]; !ok {
						return "", fmt.Errorf("no note titled %q", in.Title)
					}
					delete(notes, in.Title)
					return fmt.Sprintf("deleted note %q", in.Title), nil
				}),
		},
	}
}

package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Finance returns a personal-finance server, speaking both protocol eras,
// in the manner of a desktop budgeting app serving its data to a local
// agent: list_profiles, select_profile (kept for the life of the server),
// list_transactions and spending_summary read the ledger of the selected
// profile; recategorize changes a transaction's category, overwriting the
// old one, so it is declared destructive.
func Finance() *Server {
	f := &ledger{profiles: map[string]*profile{
		"perso": {title: "Personal", transactions: []transaction{
			{"t1", "2026-06-02", "Boulangerie Martin", -420, "groceries"},
			{"t2", "2026-06-03", "Rent, June", -85000, "housing"},
			{"t3", "2026-06-07", "SuperMarché", -6235, "groceries"},
			{"t4", "2026-06-10", "Metro pass", -7520, "transport"},
			{"t5", "2026-06-14", "Café du Coin", -1280, "dining"},
			{"t6", "2026-06-18", "Fromagerie Durand", -1840, "other"},
			{"t7", "2026-06-25", "Salary", 245000, "income"},
		}},
		"pro": {title: "Freelance", transactions: []transaction{
			{"p1", "2026-06-05", "Invoice #42", 180000, "income"},
			{"p2", "2026-06-09", "Web hosting", -2400, "software"},
			{"p3", "2026-06-20", "Train to Lyon", -8900, "travel"},
		}},
	}}
	return &Server{
		Name:         "demo-finance",
		Version:      "1.0.0",
		Instructions: "A personal ledger. Select a profile first; amounts are in euros.",
		Versions:     []string{Modern, Legacy},
		tools: []tool{
			newTool("list_profiles", "List profiles", "Lists the profiles (ledgers) the user keeps.",
				reads, func(context.Context, struct{}) (string, error) { return f.list(), nil }),
			newTool("select_profile", "Select a profile", "Selects the profile the other tools work on.",
				sets, func(_ context.Context, in struct {
					Profile string `json:"profile" jsonschema:"the profile's name, as list_profiles gives it"`
				}) (string, error) {
					return f.selectProfile(in.Profile)
				}),
			newTool("list_transactions", "List transactions", "Lists the transactions of the selected profile, optionally of one category.",
				reads, func(_ context.Context, in struct {
					Category string `json:"category,omitempty" jsonschema:"only this category"`
				}) (string, error) {
					return f.transactions(in.Category)
				}),
			newTool("spending_summary", "Spending summary", "Totals the selected profile's spending by category, with its income and balance.",
				reads, func(context.Context, struct{}) (string, error) { return f.summary() }),
			newTool("recategorize", "Change a category", "Sets the category of a transaction, replacing the old one.",
				overwrites, func(_ context.Context, in struct {
					ID       string `json:"id" jsonschema:"the transaction's id, such as t3"`
					Category string `json:"category" jsonschema:"the new category"`
				}) (string, error) {
					return f.recategorize(in.ID, in.Category)
				}),
		},
	}
}

type ledger struct {
	mu       sync.Mutex
	profiles map[string]*profile
	selected string
}

type profile struct {
	title        string
	transactions []transaction
}

type transaction struct {
	id, date, payee string
	cents           int // negative for spending
	category        string
}

var errNoProfile = errors.New("no profile selected: call select_profile first (list_profiles names them)")

func (f *ledger) list() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for _, name := range f.names() {
		fmt.Fprintf(&b, "%s: %s", name, f.profiles[name].title)
		if name == f.selected {
			b.WriteString(" (selected)")
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (f *ledger) names() []string {
	names := make([]string, 0, len(f.profiles))
	for n := range f.profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (f *ledger) selectProfile(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.profiles[name]
	if !ok {
		return "", fmt.Errorf("unknown profile %q: the profiles are %s", name, strings.Join(f.names(), ", "))
	}
	f.selected = name
	return fmt.Sprintf("selected profile %s (%s, %d transactions)", name, p.title, len(p.transactions)), nil
}

// current returns the selected profile; the caller holds f.mu.
func (f *ledger) current() (*profile, error) {
	if f.selected == "" {
		return nil, errNoProfile
	}
	return f.profiles[f.selected], nil
}

func (f *ledger) transactions(category string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.current()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, t := range p.transactions {
		if category == "" || t.category == category {
			fmt.Fprintf(&b, "%s  %s  %-20s %10s  %s\n", t.id, t.date, t.payee, euros(t.cents), t.category)
		}
	}
	if b.Len() == 0 {
		return fmt.Sprintf("no transactions in category %q", category), nil
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func (f *ledger) summary() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.current()
	if err != nil {
		return "", err
	}
	spent := map[string]int{}
	income, total := 0, 0
	for _, t := range p.transactions {
		total += t.cents
		if t.cents > 0 {
			income += t.cents
		} else {
			spent[t.category] -= t.cents
		}
	}
	categories := make([]string, 0, len(spent))
	for c := range spent {
		categories = append(categories, c)
	}
	slices.Sort(categories)
	var b strings.Builder
	for _, c := range categories {
		fmt.Fprintf(&b, "%-10s %10s\n", c, euros(spent[c]))
	}
	fmt.Fprintf(&b, "income     %10s\nbalance    %10s", euros(income), euros(total))
	return b.String(), nil
}

func (f *ledger) recategorize(id, category string) (string, error) {
	category = strings.TrimSpace(strings.ToLower(category))
	if category == "" {
		return "", errors.New("the new category is empty")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.current()
	if err != nil {
		return "", err
	}
	for i := range p.transactions {
		if t := &p.transactions[i]; t.id == id {
			old := t.category
			t.category = category
			return fmt.Sprintf("%s (%s): category %s -> %s", id, t.payee, old, category), nil
		}
	}
	return "", fmt.Errorf("no transaction %q in profile %s", id, f.selected)
}

// euros formats cents as an amount in euros, such as "-62.35".
func euros(cents int) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

package rewrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/provider"
)

const (
	testKey   = "sk-ant-test-9d8c7b6a5f4e"
	openAIKey = "sk-openai-must-never-be-sent-1234"
	question  = "How long must I wait before leaving my job?"
)

var layers = []LayerInfo{
	{Name: "hr", Description: "Employment contracts and the staff handbook: notice periods, termination, leave."},
	{Name: "sepa", Description: "SEPA payment scheme rulebooks."},
}

// seen is one request as a fake server saw it.
type seen struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

// wire is one provider's API as a fake server speaks it.
type wire struct {
	name string
	// config points a Config at the server's base URL.
	config func(base string) Config
	// write answers with text as the model's reply.
	write func(w http.ResponseWriter, text string)
}

var wires = []wire{
	{
		name: ProviderAnthropic,
		config: func(base string) Config {
			c := DefaultConfig()
			c.Provider, c.BaseURL, c.APIKey = ProviderAnthropic, base, testKey
			return c
		},
		write: func(w http.ResponseWriter, text string) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"id": "msg_01", "type": "message", "role": "assistant", "model": DefaultAnthropicModel,
				"content": []map[string]any{
					{"type": "thinking", "thinking": "", "signature": "sig"},
					{"type": "text", "text": text},
				},
				"stop_reason": "end_turn", "usage": map[string]int{"input_tokens": 120, "output_tokens": 30},
			})
		},
	},
	{
		name: ProviderOpenAI,
		config: func(base string) Config {
			c := DefaultConfig()
			c.Provider, c.BaseURL, c.Model, c.APIKey = ProviderOpenAI, base+"/v1", "llama3.2", testKey
			return c
		},
		write: func(w http.ResponseWriter, text string) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"id": "chatcmpl-1", "object": "chat.completion", "model": "llama3.2",
				"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
					"message": map[string]any{"role": "assistant", "content": text}}},
			})
		},
	},
}

type fake struct {
	mu     sync.Mutex
	reqs   []seen
	sleeps []time.Duration
}

func (f *fake) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

// start serves respond (given the 0-based request number) and builds the
// wire's rewriter against it, with edit applied to its Config; waits
// before retries are recorded, not slept.
func start(t *testing.T, wr wire, respond func(n int, w http.ResponseWriter, r *http.Request), edit func(*Config)) (Rewriter, *fake) {
	t.Helper()
	f := &fake{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, seen{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		respond(n, w, r)
	}))
	t.Cleanup(srv.Close)
	cfg := wr.config(srv.URL)
	if edit != nil {
		edit(&cfg)
	}
	r, err := newRewriter(cfg, nil, func(pc *provider.Config) {
		pc.Sleep = func(ctx context.Context, d time.Duration) error {
			f.mu.Lock()
			f.sleeps = append(f.sleeps, d)
			f.mu.Unlock()
			return ctx.Err()
		}
	})
	if err != nil {
		t.Fatalf("new %s: %v", wr.name, err)
	}
	return r, f
}

func replying(wr wire, text string) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { wr.write(w, text) }
}

func kindOf(t *testing.T, err error) string {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *rewrite.Error", err, err)
	}
	return e.Kind
}

func TestGoodReplyAndRequestFormat(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", openAIKey)
	for _, wr := range wires {
		t.Run(wr.name, func(t *testing.T) {
			r, f := start(t, wr, replying(wr, `["employee notice period", "resignation notice termination by the employee"]`), nil)
			got, err := r.Rewrite(context.Background(), question, layers)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != "[employee notice period resignation notice termination by the employee]" {
				t.Errorf("rewrites = %q", got)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			req := reqs[0]
			for _, vs := range req.Header {
				for _, v := range vs {
					if strings.Contains(v, openAIKey) {
						t.Errorf("OPENAI_API_KEY was sent: %v", req.Header)
					}
				}
			}
			raw, _ := json.Marshal(req.Body)
			for _, want := range []string{"How long must I wait", "notice periods, termination", "SEPA payment scheme", "JSON array"} {
				if !strings.Contains(string(raw), want) {
					t.Errorf("the request does not carry %q: %s", want, raw)
				}
			}
			switch wr.name {
			case ProviderAnthropic:
				if req.Path != "/v1/messages" || req.Header.Get("x-api-key") != testKey || req.Header.Get("anthropic-version") != AnthropicVersion {
					t.Errorf("path %s, headers %v: want /v1/messages with x-api-key and anthropic-version", req.Path, req.Header)
				}
				if req.Header.Get("Authorization") != "" {
					t.Errorf("Anthropic got an Authorization header")
				}
				if req.Body["model"] != DefaultAnthropicModel || req.Body["system"] != SystemPrompt || req.Body["max_tokens"] == nil {
					t.Errorf("body = %v, want the default model, the system prompt and max_tokens", req.Body)
				}
				if th, _ := req.Body["thinking"].(map[string]any); th["type"] != "disabled" {
					t.Errorf("thinking = %v, want it turned off for a Haiku model", req.Body["thinking"])
				}
				for _, k := range []string{"temperature", "top_p", "top_k"} {
					if _, has := req.Body[k]; has {
						t.Errorf("the request sets %s, which recent Claude models refuse", k)
					}
				}
				msgs, _ := req.Body["messages"].([]any)
				if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
					t.Errorf("messages = %v, want one user message", req.Body["messages"])
				}
				if r.Name() != "anthropic:"+DefaultAnthropicModel {
					t.Errorf("Name() = %s", r.Name())
				}
			case ProviderOpenAI:
				if req.Path != "/v1/chat/completions" || req.Header.Get("Authorization") != "Bearer "+testKey {
					t.Errorf("path %s, Authorization %q: want /v1/chat/completions with the bearer key", req.Path, req.Header.Get("Authorization"))
				}
				msgs, _ := req.Body["messages"].([]any)
				if req.Body["model"] != "llama3.2" || len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
					t.Errorf("body = %v, want model llama3.2 with a system and a user message", req.Body)
				}
			}
		})
	}
}

func TestOpenAIWithoutKeySendsNoAuthorization(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", openAIKey)
	wr := wires[1]
	r, f := start(t, wr, replying(wr, `["a"]`), func(c *Config) { c.APIKey = "" })
	if _, err := r.Rewrite(context.Background(), question, layers); err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[0].Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q with QUERY_REWRITE_API_KEY unset, want none", got)
	}
}

func TestRepliesAndFailures(t *testing.T) {
	fenced := "Sure! Here are some rewrites:\n```json\n[\"notice period for resignation\", \"employee [termination] notice\"]\n```\nHope this helps."
	huge := `["` + strings.Repeat("x", MaxResponseBytes) + `"]`
	cases := []struct {
		name    string
		respond func(wr wire) func(int, http.ResponseWriter, *http.Request)
		edit    func(*Config)
		want    string // the rewrites, or "" on error
		kind    string
		reqs    int
	}{
		{name: "code fence", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) { return replying(wr, fenced) },
			want: "[notice period for resignation employee [termination] notice]", reqs: 1},
		{name: "prose without a list", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) {
			return replying(wr, "You could search for the notice period [in the handbook], or ask HR.")
		}, kind: KindJSON, reqs: 1},
		{name: "list of non-strings", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) {
			return replying(wr, `[1, 2, {"q": "notice"}]`)
		}, kind: KindJSON, reqs: 1},
		{name: "non-strings then strings", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) {
			return replying(wr, `Scores: [0.9, 0.4]. Queries: ["notice period"]`)
		}, want: "[notice period]", reqs: 1},
		{name: "slow past the timeout", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) {
			return func(_ int, w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(3 * time.Second):
				}
				wr.write(w, `["late"]`)
			}
		}, edit: func(c *Config) { c.Timeout = 100 * time.Millisecond; c.MaxRetries = 0 }, kind: KindTimeout, reqs: 1},
		{name: "429 with Retry-After then success", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) {
			return func(n int, w http.ResponseWriter, _ *http.Request) {
				if n == 0 {
					w.Header().Set("Retry-After", "2")
					w.WriteHeader(http.StatusTooManyRequests)
					_, _ = io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
					return
				}
				wr.write(w, `["notice period"]`)
			}
		}, want: "[notice period]", reqs: 2},
		{name: "429 until the retries run out", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) {
			return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTooManyRequests) }
		}, kind: KindRateLimited, reqs: 2},
		{name: "500", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) {
			return func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"error":{"message":"overloaded `+testKey+`"}}`)
			}
		}, kind: KindHTTPStatus, reqs: 2},
		{name: "huge reply", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) { return replying(wr, huge) },
			kind: KindBadResponse, reqs: 1},
		{name: "not the API's format", respond: func(wr wire) func(int, http.ResponseWriter, *http.Request) {
			return func(_ int, w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `<html>proxy</html>`) }
		}, kind: KindBadResponse, reqs: 1},
	}
	for _, wr := range wires {
		for _, tc := range cases {
			t.Run(wr.name+"/"+tc.name, func(t *testing.T) {
				r, f := start(t, wr, tc.respond(wr), tc.edit)
				startT := time.Now()
				got, err := r.Rewrite(context.Background(), question, layers)
				if n := len(f.requests()); n != tc.reqs {
					t.Errorf("%d requests, want %d", n, tc.reqs)
				}
				if tc.kind == "" {
					if err != nil || fmt.Sprint(got) != tc.want {
						t.Fatalf("Rewrite = %q, %v; want %s", got, err, tc.want)
					}
				} else {
					if err == nil {
						t.Fatalf("Rewrite = %q, want a %s error", got, tc.kind)
					}
					if k := kindOf(t, err); k != tc.kind {
						t.Fatalf("kind = %s (%v), want %s", k, err, tc.kind)
					}
					if strings.Contains(err.Error(), testKey) {
						t.Errorf("the error shows the key: %v", err)
					}
					// The fallback: the question as written, then with the synonyms.
					v, kind := Variants(context.Background(), r, question, layers, []string{"notice period"})
					if kind != tc.kind || len(v) != 2 || v[0] != question || v[1] != question+" notice period" {
						t.Errorf("Variants = %q, %q; want the question and the question with its synonym, kind %s", v, kind, tc.kind)
					}
				}
				if tc.name == "429 with Retry-After then success" && fmt.Sprint(f.sleeps) != "[2s]" {
					t.Errorf("waits = %v, want [2s] as Retry-After asked", f.sleeps)
				}
				if tc.name == "slow past the timeout" && time.Since(startT) > 2*time.Second {
					t.Errorf("the timeout took %v", time.Since(startT))
				}
			})
		}
	}
}

func TestLocalOnly(t *testing.T) {
	c := wires[1].config("http://203.0.113.5:8000")
	c.LocalOnly = true
	r0, err := New(c, nil)
	if r0 != nil {
		t.Errorf("New returned a Rewriter (%#v) with its error; a caller checking r != nil would use it", r0)
	}
	if err == nil || !strings.Contains(err.Error(), "STRATA_LOCAL_ONLY") || !strings.Contains(err.Error(), "QUERY_REWRITE_BASE_URL") {
		t.Errorf("a remote openai_compatible endpoint under STRATA_LOCAL_ONLY: err = %v, want a refusal naming both variables", err)
	}
	a := wires[0].config("")
	a.LocalOnly = true
	if _, err := New(a, nil); err == nil || !strings.Contains(err.Error(), "STRATA_LOCAL_ONLY") {
		t.Errorf("anthropic under STRATA_LOCAL_ONLY: err = %v, want a refusal naming STRATA_LOCAL_ONLY", err)
	}
	// A local endpoint is fine.
	wr := wires[1]
	r, _ := start(t, wr, replying(wr, `["x y"]`), func(c *Config) { c.LocalOnly = true })
	if got, err := r.Rewrite(context.Background(), question, nil); err != nil || len(got) != 1 {
		t.Errorf("a loopback endpoint under STRATA_LOCAL_ONLY: %q, %v", got, err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Provider = "gemini" }, "QUERY_REWRITE_PROVIDER"},
		{func(c *Config) { c.Provider = ProviderAnthropic }, "ANTHROPIC_API_KEY"},
		{func(c *Config) { c.Provider, c.BaseURL = ProviderOpenAI, "http://127.0.0.1:11434/v1" }, "QUERY_REWRITE_MODEL"},
		{func(c *Config) { c.Provider, c.Model = ProviderOpenAI, "m" }, "QUERY_REWRITE_BASE_URL: required"},
		{func(c *Config) { c.Provider, c.Model, c.BaseURL = ProviderOpenAI, "m", "http://127.0.0.1:11434" }, "must end in /v1"},
		{func(c *Config) { c.Provider, c.Model, c.BaseURL = ProviderOpenAI, "m", "ftp://host/v1" }, "QUERY_REWRITE_BASE_URL"},
		{func(c *Config) {
			c.Provider, c.Model, c.BaseURL, c.Timeout = ProviderOpenAI, "m", "http://127.0.0.1/v1", 0
		}, "QUERY_REWRITE_TIMEOUT"},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%v) = %v, want an error naming %s", c, err, tc.want)
		}
	}
	good := DefaultConfig()
	good.Provider, good.Model, good.BaseURL = ProviderOpenAI, "m", "http://127.0.0.1:11434/v1/"
	if err := good.Validate(); err != nil {
		t.Errorf("a trailing slash after /v1: %v", err)
	}
	if r, err := New(DefaultConfig(), nil); r != nil || err != nil {
		t.Errorf("no provider: New = %v, %v; want nil, nil", r, err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("a zero Config (no provider) does not validate: %v", err)
	}
	k := DefaultConfig()
	k.Provider, k.APIKey = ProviderAnthropic, testKey
	if s := fmt.Sprintf("%v %+v %#v", k, k, k); strings.Contains(s, testKey) {
		t.Errorf("Config prints its key: %s", s)
	}
}

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		reply string
		want  string
		ok    bool
	}{
		{`["a", "b"]`, `["a","b"]`, true},
		{"```json\n[\"a\"]\n```", `["a"]`, true},
		{`Here: ["with ] bracket", "and \" quote [x"] and more ["second"]`, `["with ] bracket","and \" quote [x"]`, true},
		{`[1, 2] then ["x"]`, `["x"]`, true},
		{`[["nested"], "x"] then ["y"]`, `["y"]`, true},
		{`see [1] and [note] then ["z"]`, `["z"]`, true},
		{`[not json ["inner"] ]`, `["inner"]`, true},
		{`[]`, `[]`, true},
		{`no list at all`, `null`, false},
		{`["unterminated`, `null`, false},
		{`{"queries": ["a"]}`, `["a"]`, true},
		{strings.Repeat("[", 100000), `null`, false},
	} {
		got, ok := ParseList(tc.reply)
		raw, _ := json.Marshal(got)
		if ok != tc.ok || string(raw) != tc.want {
			t.Errorf("ParseList(%.60q) = %s, %t; want %s, %t", tc.reply, raw, ok, tc.want, tc.ok)
		}
	}
}

type fixed struct {
	list []string
	err  error
}

func (f fixed) Rewrite(context.Context, string, []LayerInfo) ([]string, error) { return f.list, f.err }
func (f fixed) Name() string                                                   { return "fixed" }

func TestVariants(t *testing.T) {
	long := strings.Repeat("word ", MaxVariantBytes/5+1)
	v, kind := Variants(context.Background(), fixed{list: []string{
		"  How long must I  WAIT before leaving my job? ", "", "notice period", long, "NOTICE   period", "resignation", "garden leave", "extra",
	}}, question, layers, nil)
	if kind != "" || fmt.Sprint(v) != fmt.Sprint([]string{question, "notice period", "resignation", "garden leave"}) {
		t.Errorf("Variants = %q, %q; want the question first, then three distinct rewrites", v, kind)
	}
	v, kind = Variants(context.Background(), nil, question, layers, []string{"notice period", "wait"})
	if kind != "" || len(v) != 2 || v[1] != question+" notice period" {
		t.Errorf("no provider: Variants = %q, %q; want the question and the question with the synonym it lacks", v, kind)
	}
	v, kind = Variants(context.Background(), nil, question, layers, nil)
	if kind != "" || fmt.Sprint(v) != "["+question+"]" {
		t.Errorf("no provider, no synonyms: Variants = %q, %q", v, kind)
	}
	v, kind = Variants(context.Background(), fixed{err: context.DeadlineExceeded}, question, layers, []string{"notice"})
	if kind != KindTimeout || len(v) != 2 || v[0] != question {
		t.Errorf("a failing provider: Variants = %q, %q", v, kind)
	}
	if e := (&Error{Kind: KindJSON}); e.LogEvent() != "query_rewrite_json_error" {
		t.Errorf("LogEvent = %s", e.LogEvent())
	}
}

func TestSampling(t *testing.T) {
	var gotSystem, gotUser string
	s := NewSampling(func(_ context.Context, system, user string) (string, error) {
		gotSystem, gotUser = system, user
		return "I suggest:\n```\n[\"employee notice period\"]\n```", nil
	}, time.Second)
	v, kind := Variants(context.Background(), s, question, layers, nil)
	if kind != "" || fmt.Sprint(v) != fmt.Sprint([]string{question, "employee notice period"}) {
		t.Errorf("Variants = %q, %q", v, kind)
	}
	if gotSystem != SystemPrompt || !strings.Contains(gotUser, "How long must I wait") || !strings.Contains(gotUser, "hr: Employment contracts") {
		t.Errorf("the sampling request lacks the prompt, the question or the layers: %q", gotUser)
	}

	refused := NewSampling(func(context.Context, string, string) (string, error) {
		return "", errors.New("user declined the sampling request")
	}, time.Second)
	if _, err := refused.Rewrite(context.Background(), question, layers); kindOf(t, err) != KindSampling {
		t.Errorf("a refusal: %v, want kind %s", err, KindSampling)
	}
	slow := NewSampling(func(ctx context.Context, _, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, 50*time.Millisecond)
	if _, err := slow.Rewrite(context.Background(), question, layers); kindOf(t, err) != KindTimeout {
		t.Errorf("a slow client: %v, want kind %s", err, KindTimeout)
	}
	prose := NewSampling(func(context.Context, string, string) (string, error) { return "Sorry, I can't.", nil }, 0)
	if _, err := prose.Rewrite(context.Background(), question, layers); kindOf(t, err) != KindJSON {
		t.Errorf("prose: %v, want kind %s", err, KindJSON)
	}
}

func TestUserPromptIsBounded(t *testing.T) {
	var many []LayerInfo
	for i := range 100 {
		many = append(many, LayerInfo{Name: fmt.Sprint("layer", i), Description: strings.Repeat("d", 5000)})
	}
	p := UserPrompt(strings.Repeat("q", 10000), many)
	if len(p) > maxLayersInPrompt*(maxDescriptionBytes+40)+maxQuestionBytes+200 || !strings.Contains(p, "and 70 more") {
		t.Errorf("prompt of %d bytes for 100 long layers", len(p))
	}
}

func TestAnthropicOtherModelKeepsItsThinking(t *testing.T) {
	wr := wires[0]
	r, f := start(t, wr, replying(wr, `["x"]`), func(c *Config) { c.Model = "claude-sonnet-5-5" })
	if _, err := r.Rewrite(context.Background(), question, layers); err != nil {
		t.Fatal(err)
	}
	body := f.requests()[0].Body
	if _, has := body["thinking"]; has || body["model"] != "claude-sonnet-5-5" {
		t.Errorf("body = %v, want QUERY_REWRITE_MODEL and no thinking setting for a model that may not turn it off", body)
	}
	if r.Name() != "anthropic:claude-sonnet-5-5" {
		t.Errorf("Name() = %s", r.Name())
	}
}

// FuzzParseList: any reply is read without a panic, and a list it finds
// reads back the same once written as JSON on its own.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{`["a","b"]`, "```json\n[\"x\"]\n```", `[1,["a"]] ["b"]`, `["\"]"]`, `[[[[`, `]]]["`, `{"a":["b"]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		list, ok := ParseList(reply)
		if !ok {
			if list != nil {
				t.Fatalf("no list, yet %q", list)
			}
			return
		}
		raw, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		again, ok := ParseList(string(raw))
		if !ok || fmt.Sprintf("%q", again) != fmt.Sprintf("%q", list) {
			t.Fatalf("%s read back as %q, %t", raw, again, ok)
		}
	})
}

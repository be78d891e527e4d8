package rewrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/stratakb/stratakb/internal/provider"
)

// httpRewriter is a provider reached over HTTP: Anthropic's Messages API or
// an OpenAI chat-completions endpoint.
type httpRewriter struct {
	name   string
	pc     *provider.Client
	url    *url.URL
	header http.Header
	// encode builds the request body; decode pulls the reply's text out of
	// the answer.
	encode func(system, user string) ([]byte, error)
	decode func(body []byte) (string, error)
}

// Name is the provider and the model.
func (h *httpRewriter) Name() string { return h.name }

// Rewrite asks the model and parses its reply.
func (h *httpRewriter) Rewrite(ctx context.Context, question string, layers []LayerInfo) ([]string, error) {
	body, err := h.encode(SystemPrompt, UserPrompt(question, layers))
	if err != nil {
		return nil, &Error{Kind: KindBadResponse, Provider: h.name, Err: fmt.Errorf("encode request: %w", err)}
	}
	resp, err := h.pc.Do(ctx, provider.Request{URL: h.url, Header: h.header, Body: body})
	if err != nil {
		return nil, classify(h.name, err)
	}
	text, err := h.decode(resp.Body)
	if err != nil {
		return nil, &Error{Kind: KindBadResponse, Provider: h.name, Err: errors.New(h.pc.Redact(err.Error()))}
	}
	return parseReply(h.name, text)
}

// parseReply reads the list out of a model's reply text.
func parseReply(name, text string) ([]string, error) {
	list, ok := ParseList(text)
	if !ok {
		return nil, &Error{Kind: KindJSON, Provider: name,
			// The reply's text stays out of the message: it may repeat the
			// question, which logs must not hold unscrubbed.
			Err: fmt.Errorf("no JSON list of strings in the reply (%d bytes)", len(text))}
	}
	return list, nil
}

// endpointURL is base with path appended.
func endpointURL(base, path string) (*url.URL, error) {
	u, err := parseBase(base)
	if err != nil {
		return nil, err
	}
	u.Path += path
	return u, nil
}

// anthropicRequest is a Messages API request. It sets no sampling
// parameter (temperature, top_p, top_k): recent models refuse any but their
// defaults.
type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system"`
	Messages  []anthropicMessage `json:"messages"`
	Thinking  *anthropicThinking `json:"thinking,omitempty"`
}

type anthropicThinking struct {
	Type string `json:"type"`
}

// thinkingOff says whether to turn the model's thinking off. A rewrite needs
// none, and on the query path it only adds latency and tokens; Haiku models
// accept {"type": "disabled"}, while some larger ones cannot think less and
// would refuse the request, so those are left to their default.
func thinkingOff(model string) bool { return strings.HasPrefix(model, "claude-haiku-") }

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicResponse struct {
	Type    string `json:"type"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
}

// newAnthropic builds the Messages API provider: POST {base}/v1/messages
// with the x-api-key and anthropic-version headers.
func newAnthropic(cfg Config, logger *slog.Logger, edit func(*provider.Config)) (*httpRewriter, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultAnthropicBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultAnthropicModel
	}
	u, err := endpointURL(cfg.BaseURL, "/v1/messages")
	if err != nil {
		return nil, fmt.Errorf("QUERY_REWRITE_BASE_URL: %w", err)
	}
	pcfg := clientConfig(cfg, cfg.BaseURL, logger)
	if edit != nil {
		edit(&pcfg)
	}
	pc, err := provider.New(pcfg)
	if err != nil {
		return nil, fmt.Errorf("query rewrite: %w", err)
	}
	h := http.Header{}
	h.Set("x-api-key", cfg.APIKey)
	h.Set("anthropic-version", AnthropicVersion)
	return &httpRewriter{
		name: ProviderAnthropic + ":" + cfg.Model, pc: pc, url: u, header: h,
		encode: func(system, user string) ([]byte, error) {
			req := anthropicRequest{
				Model: cfg.Model, MaxTokens: cfg.MaxTokens, System: system,
				Messages: []anthropicMessage{{Role: "user", Content: user}},
			}
			if thinkingOff(cfg.Model) {
				req.Thinking = &anthropicThinking{Type: "disabled"}
			}
			return json.Marshal(req)
		},
		decode: func(body []byte) (string, error) {
			var r anthropicResponse
			if err := json.Unmarshal(body, &r); err != nil {
				return "", fmt.Errorf("the answer is not a Messages API response: %w", err)
			}
			// Blocks are chosen by type: a reply may open with thinking.
			var b strings.Builder
			for _, c := range r.Content {
				if c.Type == "text" {
					b.WriteString(c.Text)
				}
			}
			if b.Len() == 0 {
				return "", fmt.Errorf("the answer holds no text block (type %q, stop_reason %q)", r.Type, r.StopReason)
			}
			return b.String(), nil
		},
	}, nil
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	MaxTokens   int           `json:"max_tokens"`
	Temperature float64       `json:"temperature"`
	Stream      bool          `json:"stream"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// newOpenAI builds the chat-completions provider: POST
// {QUERY_REWRITE_BASE_URL}/chat/completions, with a bearer token only when
// QUERY_REWRITE_API_KEY is set.
func newOpenAI(cfg Config, logger *slog.Logger, edit func(*provider.Config)) (*httpRewriter, error) {
	u, err := endpointURL(cfg.BaseURL, "/chat/completions")
	if err != nil {
		return nil, fmt.Errorf("QUERY_REWRITE_BASE_URL: %w", err)
	}
	pcfg := clientConfig(cfg, cfg.BaseURL, logger)
	if edit != nil {
		edit(&pcfg)
	}
	pc, err := provider.New(pcfg)
	if err != nil {
		return nil, fmt.Errorf("query rewrite: %w", err)
	}
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return &httpRewriter{
		name: ProviderOpenAI + ":" + cfg.Model, pc: pc, url: u, header: h,
		encode: func(system, user string) ([]byte, error) {
			return json.Marshal(chatRequest{
				Model:     cfg.Model,
				Messages:  []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
				MaxTokens: cfg.MaxTokens,
			})
		},
		decode: func(body []byte) (string, error) {
			var r chatResponse
			if err := json.Unmarshal(body, &r); err != nil {
				return "", fmt.Errorf("the answer is not a chat-completions response: %w", err)
			}
			if len(r.Choices) == 0 {
				return "", errors.New("the answer has no choices")
			}
			return chatContent(r.Choices[0].Message.Content)
		},
	}, nil
}

// chatContent reads a message's content: a string, or (from some servers) a
// list of parts of which the text ones count.
func chatContent(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("the message's content is neither text nor a list of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

package rewrite

import (
	"context"
	"errors"
	"time"
)

// SampleFunc asks the connected MCP client's model for a reply to a system
// prompt and a user message (MCP's sampling/createMessage) and returns the
// reply's text. The server supplies it per session.
type SampleFunc func(ctx context.Context, systemPrompt, userPrompt string) (string, error)

// Sampling is the mcp_sampling provider: it sends the same prompt as the
// HTTP providers to the MCP client, whose user may see and refuse it.
type Sampling struct {
	sample  SampleFunc
	timeout time.Duration
}

var _ Rewriter = (*Sampling)(nil)

// NewSampling adapts sample into a Rewriter. timeout bounds each request;
// 0 means DefaultTimeout.
func NewSampling(sample SampleFunc, timeout time.Duration) *Sampling {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Sampling{sample: sample, timeout: timeout}
}

// Name is "mcp_sampling".
func (s *Sampling) Name() string { return ProviderMCPSampling }

// Rewrite asks the client's model and parses its reply.
func (s *Sampling) Rewrite(ctx context.Context, question string, layers []LayerInfo) ([]string, error) {
	if s.sample == nil {
		return nil, &Error{Kind: KindSampling, Provider: s.Name(), Err: errors.New("the session offers no sampling")}
	}
	sctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	text, err := s.sample(sctx, SystemPrompt, UserPrompt(question, layers))
	if err != nil {
		kind := KindSampling
		if errors.Is(err, context.DeadlineExceeded) || sctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			kind = KindTimeout
		}
		return nil, &Error{Kind: kind, Provider: s.Name(), Err: err}
	}
	return parseReply(s.Name(), text)
}

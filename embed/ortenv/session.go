package ortenv

import (
	"errors"
	"fmt"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ErrClosed is returned by Run after Close.
var ErrClosed = errors.New("ONNX Runtime session is closed")

// Session is an ONNX Runtime session that one goroutine may close while
// others run it: Run holds a read lock for the call, Close the write lock,
// so Close waits for the calls in flight and later calls get ErrClosed.
type Session struct {
	mu sync.RWMutex
	s  *ort.DynamicAdvancedSession
}

// NewSession wraps s; the Session owns it from now on.
func NewSession(s *ort.DynamicAdvancedSession) *Session { return &Session{s: s} }

// Run runs the session, as ort.DynamicAdvancedSession.Run does (a nil
// output is allocated by ONNX Runtime), or returns ErrClosed.
func (s *Session) Run(inputs, outputs []ort.Value) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return ErrClosed
	}
	return s.s.Run(inputs, outputs)
}

// Close releases the session. It is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.s == nil {
		return nil
	}
	err := s.s.Destroy()
	s.s = nil
	if err != nil {
		return fmt.Errorf("close ONNX Runtime session: %w", err)
	}
	return nil
}

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
	mu      sync.RWMutex
	s       *ort.DynamicAdvancedSession
	release func() error
}

// NewSession wraps s; the Session owns it from now on.
func NewSession(s *ort.DynamicAdvancedSession) *Session { return &Session{s: s} }

// NewSessionOver wraps s, whose graph and weights ONNX Runtime reads from
// memory it does not own (a mapped file): Close calls release once the
// session is destroyed.
func NewSessionOver(s *ort.DynamicAdvancedSession, release func() error) *Session {
	return &Session{s: s, release: release}
}

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
		// The graph's memory may still be in use: keep it.
		return fmt.Errorf("close ONNX Runtime session: %w", err)
	}
	if s.release != nil {
		if err := s.release(); err != nil {
			return fmt.Errorf("release the memory of a closed ONNX Runtime session: %w", err)
		}
	}
	return nil
}

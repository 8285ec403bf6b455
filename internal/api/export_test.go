package api

import "time"

// SetPausing sets how many requests may pause to run again after a lost
// connection at once, and how long after arriving one may still run again.
func (s *Server) SetPausing(most int32, patience time.Duration) {
	s.maxPausing, s.patience = most, patience
}

// Pausing is how many requests pause to run again right now.
func (s *Server) Pausing() int32 { return s.pausing.Load() }

package trust

import (
	"context"
	"fmt"
	"time"
)

// LabelSample is the stored trend point of one signal for everything (written only by package sampler).
const LabelSample = "CoverageSample"

// Point is one stored trend point.
type Point struct {
	At                     time.Time
	Numerator, Denominator int
}

// Trend returns the stored points of sig since since, oldest first, for a report whose caller may describe
// everything and that is not narrowed (the points count everything); otherwise none.
func (s *Service) Trend(ctx context.Context, r *Report, sig Signal, since time.Time) ([]Point, error) {
	if !r.Scope.Global || r.Query.Namespace != "" || r.Query.Criticality != "" || r.Query.Producer != "" {
		return nil, nil
	}
	pts, err := s.r.Samples(ctx, sig, ms(since))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return pts, nil
}

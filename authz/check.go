package authz

// Check is one question of a batch: does the principal hold Priv on Candidate.
type Check struct {
	Priv      Privilege
	Candidate Candidate
}

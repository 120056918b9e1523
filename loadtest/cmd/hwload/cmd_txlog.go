package main

import (
	"fmt"

	"github.com/headwater-data/headwater/loadtest/drive"
)

// TxLogCmd prints the write position of Neo4j's transaction log (bytes since the first log file), so a script can
// take the log bytes a step wrote as the difference of two positions (the files are preallocated: their size says
// nothing).
type TxLogCmd struct {
	Dir string `help:"Neo4j's transaction-log directory (data/transactions/neo4j)." required:""`
}

// Run prints the position.
func (c *TxLogCmd) Run(_ *env) error {
	pos, err := drive.TxLogPosition(c.Dir)
	if err != nil {
		return err
	}
	_, err = fmt.Println(pos)
	return err
}

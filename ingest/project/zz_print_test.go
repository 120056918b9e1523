package project

import (
	"fmt"
	"testing"
)

func TestZZPrint(t *testing.T) {
	s := newScen(t)
	for _, e := range richHistory(s) {
		s.apply(e)
	}
	fmt.Println(s.dump())
}

package governance

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// FileVersion is the governance file format this binary reads.
const FileVersion = 1

// ErrInvalid marks an invalid governance file; the message names the setting.
var ErrInvalid = errors.New("governance: invalid")

// Aggregation says what DIRECT/AGGREGATION does to a class's tag.
type Aggregation string

// Aggregation rules.
const (
	// AggregationCarries carries the tag as "aggregated" (the default).
	AggregationCarries Aggregation = "CARRY"
	// AggregationStops stops the tag at an aggregation.
	AggregationStops Aggregation = "STOP"
)

// Rules are the propagation rules of one class. IDENTITY and TRANSFORMATION always carry, masking always stops,
// INDIRECT is always influence only: those are what the OpenLineage transformation types mean.
type Rules struct {
	Aggregation Aggregation
}

// DefaultRules are the rules of a class the governance file does not configure (nor any class above it).
var DefaultRules = Rules{Aggregation: AggregationCarries}

// ClassConfig configures one tag class; a class below it (by the dotted hierarchy) inherits its rules unless it
// is configured itself.
type ClassConfig struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Aggregation Aggregation `yaml:"aggregation"`
}

// Config is the governance file (docs/governance.md): the tag classes and their rules.
type Config struct {
	Version int           `yaml:"version"`
	Classes []ClassConfig `yaml:"classes"`
}

// LoadFile reads and validates a governance file; an empty path gives the defaults (no class configured).
func LoadFile(path string) (Config, error) {
	if path == "" {
		return Config{Version: FileVersion}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("governance file: %w", err)
	}
	return Parse(b)
}

// Parse parses and validates a governance file's content; unknown keys are errors.
func Parse(b []byte) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%w: governance file: %w", ErrInvalid, err)
	}
	return c, c.Validate()
}

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	if c.Version != FileVersion {
		return fmt.Errorf("%w: version %d, this binary reads %d", ErrInvalid, c.Version, FileVersion)
	}
	seen := map[string]bool{}
	for i, cl := range c.Classes {
		name := CanonicalClass(cl.Name)
		switch {
		case name == "" || strings.ContainsAny(name, ":= ") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "."):
			return fmt.Errorf("%w: classes[%d].name %q: a tag key, dotted for the hierarchy (pii.email)", ErrInvalid, i, cl.Name)
		case seen[name]:
			return fmt.Errorf("%w: classes[%d].name %q: configured twice", ErrInvalid, i, cl.Name)
		case cl.Aggregation != "" && cl.Aggregation != AggregationCarries && cl.Aggregation != AggregationStops:
			return fmt.Errorf("%w: classes[%d].aggregation %q: must be CARRY or STOP", ErrInvalid, i, cl.Aggregation)
		}
		seen[name] = true
	}
	return nil
}

// RulesOf returns the rules of a class: those of the nearest configured class at or above it, else DefaultRules.
func (c Config) RulesOf(class string) Rules {
	byName := map[string]ClassConfig{}
	for _, cl := range c.Classes {
		byName[CanonicalClass(cl.Name)] = cl
	}
	for _, a := range Ancestors(CanonicalClass(class)) {
		if cl, ok := byName[a]; ok {
			r := DefaultRules
			if cl.Aggregation != "" {
				r.Aggregation = cl.Aggregation
			}
			return r
		}
	}
	return DefaultRules
}

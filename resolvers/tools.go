//go:build tools

package resolvers

import _ "github.com/99designs/gqlgen"
